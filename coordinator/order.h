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
 * A sequence gap (records dropped by a full ring) is released as one
 * synthetic PMON_CALL_LOST event (EVENT_LOST; seq = first missing, bytes =
 * number missing) and ordering goes on.
 *
 * The core does no I/O and never logs: errors come back as -1 with a
 * static string naming the problem.
 */
#ifndef PMON_ORDER_H
#define PMON_ORDER_H

#include <stddef.h>
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
	const struct record	*rec;		/* points into bytes */
	const uint8_t		*bytes;		/* the encoded record */
	size_t			 len;
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
};

/* NULL only when out of memory. */
struct order	*order_new(order_release_cb, void *arg);
/* Frees everything still held without releasing it.  NULL is a no-op. */
void		 order_free(struct order *);

/*
 * Registers a task before its records.  parent_tid and spawn_seq name the
 * parent's spawn begin record (0 when none).  A tid may be registered
 * again only after order_task_end (PVM reuses tids).
 */
int	order_task_new(struct order *, int32_t tid, int32_t parent_tid,
	    uint64_t spawn_seq, const char **why);

/*
 * Adds the next record of a registered task; releases whatever it makes
 * releasable.  The record is copied.  Fails on a sequence number that does
 * not go forward, an unknown or ended task, or out of memory.
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
 * Shutdown: releases every held event in an order as valid as the data
 * allows.  A receive whose send never arrived is flagged EVENT_UNMATCHED.
 */
void	order_release_all(struct order *);

void	order_stats(const struct order *, struct order_stats *);
/* The window of one task (tasks is 1); -1 if the tid is unknown. */
int	order_task_stats(const struct order *, int32_t tid,
	    struct order_stats *);

#endif
