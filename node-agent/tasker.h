/*
 * The task starter of one host (doc/tasker.md): a process of its own,
 * registered with pvmd as the host's tasker (pvm_reg_tasker), that starts
 * every task spawned on the host with the instrumentation library
 * preloaded.  pvmd ends the PVM life of every task a tasker started when
 * the tasker goes, so it does nothing else and outlives the agent that
 * started it.
 */
#ifndef PMON_TASKER_H
#define PMON_TASKER_H

/* pmon-agentd -S ...: the starter itself.  Returns the exit status. */
int	tasker_main(int argc, char *argv[]);
/*
 * Starts the host's starter, detached, unless the instrumentation
 * library cannot be found.  One that finds the host's registration
 * taken (by the starter of an agent before this one) leaves at once.
 */
void	tasker_start(int verbose);
/* Asks the host's starter to unregister; it leaves after its tasks. */
void	tasker_stop(void);

#endif
