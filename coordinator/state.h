/*
 * The global state model of the coordinator (paper 003 sections 2-3: what
 * VISTOP shows; 002 3.4: frontiers; 004 4: harmful nondeterminism).
 *
 * The coordinator feeds it every event the order releases, in stream
 * order, and what it learns of hosts and tasks.  The model then holds,
 * at the stream's current position:
 *
 *  - hosts (name, architecture, agent up or not);
 *  - tasks: tid, host, pid, parent, program, state (running; blocked in
 *    a receive from whom with which tag; in a barrier of which group;
 *    exited with its status), and time split into computing, inside PVM
 *    calls and blocked (corrected times);
 *  - the spawn tree, groups with members and instance numbers, barriers
 *    in progress with their waiters;
 *  - receive queues: per task, the messages sent to it and not yet
 *    received (source, tag, bytes, the send event).  PVM records no
 *    enqueue: a message is queued when its send's end is released, in
 *    the order sends were released per source;
 *  - per task and per pair, messages and bytes sent and received.
 *
 * and the problems found so far: deadlocks (a set of tasks blocked in
 * receives or barriers that no queued or in-flight message and no task
 * outside the set can satisfy), message races (a wildcard receive that
 * two causally concurrent sends could match), messages never received
 * when their receiver exits, tasks exiting while others wait on them,
 * messages unpacked with other types than they were packed with.
 *
 * Every output is a JSON document written to a FILE (use open_memstream
 * for a buffer).  The module does no other I/O and never logs.
 */
#ifndef PMON_STATE_H
#define PMON_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "order.h"

struct state;

/*
 * Called once for each problem when it is first found, with its JSON
 * object (the same object `problems` lists), its kind and the tasks it
 * is about (the receiver of a message, the waiting task, every task of
 * a deadlock; at most STATE_PROBLEM_TIDS).  The coordinator forwards it
 * to the tools as a PROBLEM frame and runs the breakpoints it triggers.
 */
#define STATE_PROBLEM_TIDS	64
struct state_problem {
	const char	*json;
	const char	*kind;		/* "deadlock", "race", ... */
	const int32_t	*tids;
	size_t		 ntids;
};
typedef void (*state_problem_cb)(const struct state_problem *, void *arg);

/* state_free(NULL) is a no-op.  Out of memory is fatal (xmalloc.h). */
struct state	*state_new(state_problem_cb, void *arg);
void		 state_free(struct state *);

/* A host of the virtual machine, and whether its agent is attached. */
void	state_host_via(struct state *, int32_t host_tid, const char *via);
void	state_host(struct state *, int32_t host_tid, const char *name,
	    const char *arch, int agent_up);
/* -1 when the model knows no such host. */
int	state_host_deleted(struct state *, int32_t host_tid);
/* A task, when the coordinator learns of it (before its first event). */
void	state_task(struct state *, int32_t tid, int32_t parent_tid,
	    uint32_t pid, const char *host, const char *program);
/* The next released event, in stream order. */
void	state_event(struct state *, const struct order_event *);
/*
 * The task is gone (its agent said so) and every event of it was
 * released: exited, or killed if it never called pvm_exit.
 */
void	state_task_gone(struct state *, int32_t tid);
/*
 * A task of pvmd's that pmon does not instrument (state "unmonitored"),
 * and its leaving pvmd's tasks ("ended").  Each returns 1 when the model
 * changed, 0 when it knew already (or knows the task as monitored).
 */
int	state_task_other(struct state *, int32_t tid, int32_t parent_tid,
	    uint32_t pid, const char *host, const char *program);
int	state_task_other_end(struct state *, int32_t tid);
/* The live unmonitored tasks of a host: n tids, to free (never NULL). */
int32_t	*state_others_on(const struct state *, const char *host, size_t *n);
void	state_task_stopped(struct state *, int32_t tid, int stopped,
	    unsigned tool, uint32_t bp);
/* The members of group name now: n tids in *tids, to free. */
void	state_group_members(const struct state *, const char *name,
	    int32_t **tids, size_t *n);

/*
 * Looks for deadlocks now.  Call it when the stream is up to date (after
 * a flush round): a task's blocked state is then real.  New ones go to
 * the problem callback.  Returns the number of new problems.
 */
size_t	state_check(struct state *);

/*
 * Sets the model from a snapshot (the JSON state_write writes with
 * STATE_ALL, doc/state.md): hosts, tasks with their states, counts and
 * the calls they are blocked in, groups and barriers in progress,
 * queues, traffic and the problems found, at the snapshot's position.
 * Events after that position then apply as usual.  What a snapshot does
 * not carry is unknown from there on, and the checks that would need it
 * stay silent (doc/state.md, "Resynchronising"): the vector clocks and
 * histories before it, how queued messages were packed, the wildcard
 * receives the race checks look back on, members that ended inside a
 * group, stops.  The JSON is untrusted: -1 with the problem in err when
 * it is malformed or inconsistent (the model is then unchanged).  The
 * problems it lists are not passed to the callback again.
 */
int	state_load(struct state *, const char *json, size_t len, char *err,
	    size_t errsize);
/* Does the model know the task (running or ended)? */
int	state_has_task(const struct state *, int32_t tid);

/* Parts of the state for state_write. */
#define STATE_HOSTS	0x01
#define STATE_TASKS	0x02	/* with spawn tree (parent links) */
#define STATE_GROUPS	0x04	/* with barriers in progress */
#define STATE_QUEUES	0x08
#define STATE_TRAFFIC	0x10	/* per pair counts */
#define STATE_PROBLEMS	0x20
#define STATE_MAILBOX	0x40	/* the message mailbox */
#define STATE_ALL	0x7f

/*
 * Writes one JSON object: {"position":{"TID":SEQ,...},"hosts":[...],
 * "tasks":[...],...} with the parts asked for.  position gives, per
 * task, the last event seq the state includes: a tool that takes a
 * snapshot and then applies the events with higher seqs is exact.
 * queue_tid limits "queues" to one task (0: all).
 */
int	state_write(const struct state *, unsigned parts, int32_t queue_tid,
	    FILE *);

/*
 * The frontiers of the event (tid, seq): per task, the last event
 * causally before it (past) and the first causally after it (future),
 * as {"event":"TID:SEQ","past":{"TID":SEQ|null,...},"future":{...}}.
 * -1 with the reason in err (nothing written) when the event is unknown
 * or its frontiers are beyond the horizon.
 */
int	state_write_task(const struct state *, int32_t tid, FILE *);
int	state_frontier(const struct state *, int32_t tid, uint64_t seq,
	    FILE *, char *err, size_t errsize);

/*
 * The horizon of the frontiers (common/horizon.h): each task keeps the
 * clocks of its last `events` events and of those less than `ns` before
 * the latest corrected time of the stream, whichever is less; 0 is no
 * bound of that kind (both 0: everything).  A frontier that needs an
 * older clock is an error.  Receives, barriers, spawns and the race
 * checks never need the history.  The default is HORIZON_EVENTS_DEFAULT
 * events and no time bound.
 */
void	state_set_horizon(struct state *, uint64_t events, uint64_t ns);

#endif
