/*
 * The ordering core of pmon-coordd: an on-the-fly topological sort of the
 * records of every task (Kimelman & Zernik), specialised to PVM.
 *
 * Records of one task arrive in sequence order and are released in that
 * order.  Across tasks an event waits for its causal predecessors:
 *
 *  - the first event of a task waits for its parent's spawn begin record;
 *  - a receive end that consumed a message waits for the matching send.
 *    PVM keeps messages in order per (source, destination, tag, context),
 *    so the n-th message D receives from S with tag T in context C is the
 *    n-th one S sent to D with T and C.  A probe end that saw a message
 *    waits for the same send without consuming it.
 *
 *  - the exit of a barrier waits for the entries of every task of its
 *    episode (the count given to pvm_barrier, or the group's size);
 *  - the receive of a notify (a message from a pvmd with a tag a task
 *    asked pvm_notify for, PvmTaskExit) waits for the end of the k-th of
 *    the watched tasks to end.
 *
 * Groups are also a state the events must be possible in (VISTOP, paper
 * 003 section 3.3).  The core models each group's members (joingroup and
 * lvgroup ends, and task ends) and releases a pvm_bcast end only when the
 * members other than the sender are exactly its receivers, a pvm_gsize
 * end only when the group has the size it returned.  When the group
 * server pvmgs is instrumented (order_group_server), its records give the
 * order in which it took the joins, leaves, broadcasts and gsizes, and
 * those calls' ends are released in that order; what follows is the
 * fallback for calls the server's records do not show.  A join or leave that
 * would move the model away from what a held broadcast or gsize saw waits
 * for it, unless a later event of the same task undoes it (look-ahead).
 * Because a broadcast on another host may not have arrived yet, a join or
 * leave is released only once no such broadcast can still come: after a
 * flush round that began after it arrived (order_mark, order_synced), or
 * when no other task is alive.  A broadcast that no event in the window
 * can make possible after such a round (records were lost) is released
 * with EVENT_INCONSISTENT.
 *
 * A sequence gap (records dropped by a full ring) is released as one
 * synthetic PMON_CALL_LOST event (EVENT_LOST; seq = first missing, bytes =
 * number missing) and ordering goes on.  From its first missing record
 * on, a task's sends and receives cannot be counted on their channels:
 * its receives are released unmatched, its sends match no receive, and
 * its groups' barrier and collective counts are given up.  A match is
 * never wrong (doc/ordering.md, "Losses").
 *
 * Every released event gets a corrected time from the clock set with
 * order_set_clock (clock.h), or its raw time when there is none.
 *
 * The core does no I/O and never logs: errors come back as -1 with a
 * static string naming the problem.
 */
#ifndef PMON_ORDER_H
#define PMON_ORDER_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "record.h"

/* The daemon bit of a tid: the message came from a pvmd (a notify). */
#define ORDER_TID_DAEMON	((int32_t)0x80000000)

struct order;

/* One released event, valid only during the release callback. */
struct order_event {
	int32_t			 tid;
	uint8_t			 flags;		/* EVENT_* (proto.h) */
	int32_t			 match_tid;	/* the send (EVENT_MATCHED) */
	uint64_t		 match_seq;
	uint64_t		 t_corr;	/* corrected time, ns */
	/*
	 * The record, decoded: the tools get it encoded (record.h) from
	 * these fields, once, straight into their batch.
	 */
	const struct record	*rec;
};

/*
 * Called once per event, in a linear extension of causal order.  The
 * callback must not call back into the order it was called from.
 */
typedef void (*order_release_cb)(const struct order_event *, void *arg);

/* The size of the sliding window. */
struct order_stats {
	size_t	tasks;		/* registered tasks */
	size_t	held;		/* observed, not yet released */
	size_t	retained;	/* sends released, not yet received */
	size_t	blocked;	/* tasks whose next event waits */
	size_t	state_waits;	/* of those, waiting on group state or
				   on a flush round */
	uint64_t released;	/* events released so far */
	uint64_t inconsistent;	/* released with EVENT_INCONSISTENT */
	uint64_t matched;	/* receives and probes with their send */
	uint64_t unmatched;	/* and without (EVENT_UNMATCHED) */
	size_t	channels;	/* (src, dst, tag, ctx) channels kept */
	size_t	kept;		/* spawn begins, collective instances and
				   notifies kept for events still to come */
	uint64_t estimated;	/* root of a tree: receives matched below
				   whose send's corrected time was no longer
				   kept (order_add_below) */
	uint64_t repaired;	/* ...and receives an intermediate could not
				   match (EVENT_RESUMED) matched here */
};

struct clock;

/* Out of memory is fatal (xmalloc.h), here as everywhere in the daemon. */
struct order	*order_new(order_release_cb, void *arg);
/* Frees everything still held without releasing it.  NULL is a no-op. */
void		 order_free(struct order *);

/*
 * Corrects released events' times with clk (not owned; NULL: raw times).
 * Set it before the first task.
 */
void	order_set_clock(struct order *, struct clock *clk);

/*
 * Called when a task that ended (order_task_end) has had its last event
 * released: nothing more of it will come.
 */
typedef void (*order_done_cb)(int32_t tid, void *arg);
void	order_set_done_cb(struct order *, order_done_cb, void *arg);

/*
 * Registers a task before its records.  host is a small number naming
 * its host (for the clock).  parent_tid and spawn_seq name the parent's
 * spawn begin record (0 when none).  A tid may be registered again only
 * after order_task_end (PVM reuses tids).
 */
int	order_task_new(struct order *, int32_t tid, uint32_t host,
	    int32_t parent_tid, uint64_t spawn_seq, const char **why);

/*
 * The registered task tid, before any of its records, goes on at
 * next_seq: what came before was released by a coordinator that is
 * gone.  Its first event is then not its first (its spawn was before),
 * and no lost marker stands for the records before next_seq.  Its
 * events up to again_upto go out with EVENT_AGAIN: that one may have
 * released them too.
 */
int	order_task_resume(struct order *, int32_t tid, uint64_t next_seq,
	    uint64_t again_upto, const char **why);
/*
 * The records of a host's tasks cannot come for now (away 1: its agent
 * was lost, and the next may bring them), or can again (0).  A round
 * judges no receive from a task of a host away, known or not yet: its
 * send may still come.  host is a tid's host field.
 */
void	order_host_away(struct order *, uint32_t host, int away);

/*
 * Declares the registered task tid to be the group server, pvmgs.  Its
 * records (receive ends flagged RECORD_GS: peer = the client, tag = the
 * request code) tell the order in which it served group requests; the
 * order consumes them and never releases them.  Group calls whose end is
 * flagged RECORD_GS then change the modelled groups in that order.
 */
int	order_group_server(struct order *, int32_t tid, const char **why);

/*
 * Adds the next record of a registered task; releases whatever it makes
 * releasable.  The record is copied.  Fails on a sequence number that does
 * not go forward, or an unknown or ended task.
 */
int	order_add(struct order *, int32_t tid, const struct record *,
	    const char **why);

/*
 * The task is gone and its ring was drained for the last time.  dropped
 * is the total number of its records lost to a full ring: those not yet
 * accounted for by a gap are released as a final lost marker.
 */
int	order_task_end(struct order *, int32_t tid, uint64_t dropped,
	    const char **why);
/*
 * pvmd lists the task and pmon does not instrument it (an agent's
 * TASK_OTHERS): receives of its messages go at once, flagged
 * EVENT_UNMONITORED.  Returns 0: it cannot fail.
 */
int	order_task_unmonitored(struct order *, int32_t tid);

/*
 * Shutdown: releases every held event in an order as valid as the data
 * allows.  A receive whose send never arrived is flagged EVENT_UNMATCHED.
 */
void	order_release_all(struct order *);

/*
 * Flush rounds.  Take a mark before asking every agent to ship what it
 * has; once all have answered, order_synced says that every record made
 * before the mark was taken has been added.  A receive that came before
 * the mark and whose send has not come is then released unmatched.
 * order_wants_sync is not 0 while events wait for rounds:
 * ORDER_SYNC_SOON when joins or leaves wait for one, ORDER_SYNC_LATER
 * when only a broadcast or gsize waits for the two rounds after which it
 * may be judged impossible (the caller may space those out: a join the
 * broadcast saw can be recorded after it), or a notify, or when the
 * window holds ORDER_SYNC_HELD events or more.
 */
#define ORDER_SYNC_LATER	1
#define ORDER_SYNC_SOON		2
/*
 * A window of this many held events asks for rounds (ORDER_SYNC_LATER):
 * after one, a receive whose send has not come is released
 * (doc/ordering.md, "Losses").
 */
#define ORDER_SYNC_HELD		16384
/*
 * The rounds a call served by pvmgs waits for pvmgs's records before it
 * is ordered without them (pvmgs not instrumented, or its records lost).
 */
#define ORDER_PATIENCE_ROUNDS	4

uint64_t order_mark(struct order *);
void	order_synced(struct order *, uint64_t mark);
int	order_wants_sync(const struct order *);

/*
 * A tree of coordinators (doc/ordering.md, "A tree of coordinators").
 * The hosts are split into subtrees; subtree_of names the subtree of a
 * tid's host, or -1 (a pvmd, tid 0, a host in no subtree).  A channel
 * whose two ends lie in one subtree is that subtree's; every other
 * channel, and all that ties tasks together otherwise (spawns, groups,
 * barriers, collectives, notifies, signals, the mailbox), is the root's.
 *
 * An intermediate (self >= 0) is given the records of its subtree's
 * tasks.  It matches the receives on its own channels, as one
 * coordinator would, and releases every other event at once in its
 * task's order, without waiting for any other task: its stream is a
 * linear extension of what its subtree alone orders, each receive on
 * its channels matched (EVENT_MATCHED and the send) or not
 * (EVENT_UNMATCHED).  It keeps no group model, no spawn and no clock.
 *
 * The root (self is ORDER_ROOT) is given its children's streams with
 * order_add_below, each forwarded event with the flags and match below
 * gave it (a lost marker is not forwarded: the gap in seq says it).  A
 * receive on a subtree's channel waits only for the send it names; a
 * send goes on no subtree's channel; the rest is ordered as one
 * coordinator orders it.  Set it before the first task.
 */
#define ORDER_ROOT	(-1)
typedef int (*order_subtree_cb)(int32_t tid, void *arg);
void	order_set_subtree(struct order *, int self, order_subtree_cb,
	    void *arg);
int	order_add_below(struct order *, int32_t tid, const struct record *,
	    uint8_t flags, int32_t match_tid, uint64_t match_seq,
	    const char **why);
/*
 * Has every event added before mark been released?  An intermediate
 * answers its parent's flush round only then: the root may judge a
 * receive whose send has not come only once nothing made before the
 * round is still held below.
 */
int	order_settled(const struct order *, uint64_t mark);

void	order_stats(const struct order *, struct order_stats *);
/* Writes every held task's head and what it waits for, for debugging. */
void	order_dump(const struct order *, FILE *);
/* The window of one task (tasks is 1); -1 if the tid is unknown. */
int	order_task_stats(const struct order *, int32_t tid,
	    struct order_stats *);

#endif
