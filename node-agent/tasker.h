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

#include <stdint.h>

/*
 * The contract between the starter and the tasks it starts.  A task
 * writes its output into the starter's pipe, which pvmd never sees; only
 * the task learns, once enrolled, where pvmd would have sent it (the
 * console's `spawn ->`, a parent's pvm_catchout).  So the starter puts
 * TASKER_ENV_TID=tid into the task's environment; the instrumentation,
 * enrolled as that tid, connects to the starter's socket
 * (PMON_SOCK_STARTER) and sends one struct tasker_hello, in host order.
 * At pvm_exit, before pvmd tells the collector the task's output has
 * ended, it flushes its stdio, sends TASKER_DRAIN and waits (at most
 * TASKER_DRAIN_WAIT_MS) for TASKER_DRAINED: by then the starter has
 * forwarded everything the task wrote.
 */
#define TASKER_ENV_TID		"PMON_STARTER_TID"
#define TASKER_DRAIN		'd'
#define TASKER_DRAINED		'D'
#define TASKER_DRAIN_WAIT_MS	5000

struct tasker_hello {
	int32_t		 tid;
	int32_t		 out_tid;	/* 0: no collector (the pvmd log) */
	int32_t		 out_ctx;
	int32_t		 out_code;	/* the tag */
};

/* pmon-agentd -S ...: the starter itself.  Returns the exit status. */
int	tasker_main(int argc, char *argv[]);
/*
 * Has pvmd start the starter of host (ours), unless the instrumentation
 * library cannot be found.  One that finds the host's registration
 * taken (by the starter of an agent before this one) leaves at once.
 */
void	tasker_start(const char *host, int verbose);
/* Asks the host's starter to unregister; it leaves after its tasks. */
void	tasker_stop(void);

#endif
