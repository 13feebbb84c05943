/*
 * The per-task record ring: a memfd shared between one instrumented task
 * (the only producer) and its host's agent (the only consumer).  Because
 * the agent maps the same memory, it can read a task's records while the
 * task is stopped and after it died.
 *
 * The header lives in the first page (native byte order: both sides are on
 * one host); records follow, encoded as in record.h, wrapping around the
 * end of the data area.  head and tail count bytes ever written and
 * consumed.  A full ring drops the new record and counts it, unless the
 * agent asked for blocking mode in the header (pmon start --block): then
 * the task waits for room, up to the agent's timeout (ring_wait;
 * doc/capture.md, "Blocking mode").
 */
#ifndef PMON_RING_H
#define PMON_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "breakpoint.h"
#include "tsc.h"

#define RING_MAGIC	0x706d6f6eU	/* "pmon" */
#define RING_VERSION	4	/* 4: the blocking line */
#define RING_HDR_SIZE	4096
#define RING_MIN_SIZE	4096
#define RING_MAX_SIZE	(64U * 1024 * 1024)
#define RING_DEFAULT_SIZE	(1024U * 1024)

/* ring_hdr.block_ns: how long a task waits for room in its full ring. */
#define RING_BLOCK_NEVER	0		/* it drops at once */
#define RING_BLOCK_FOREVER	UINT64_MAX	/* while its agent lives */

/*
 * A waiting task looks at its agent at least this often (ns), and gives
 * up when no agent has held its ring for RING_ORPHAN_NS: one that was
 * killed and has no successor (a coordinator starts one within about a
 * second; it adopts the ring and writes its pid).
 */
#define RING_WAIT_SLICE_NS	(100ULL * 1000 * 1000)
#define RING_ORPHAN_NS		(10ULL * 1000 * 1000 * 1000)

/* ring_hdr.clock: what the t_ns of the ring's records hold. */
#define RING_CLOCK_NS	0	/* CLOCK_REALTIME nanoseconds */
#define RING_CLOCK_TSC	1	/* raw TSC ticks (tsc.h) */

/*
 * Breakpoints a task checks itself, before a call runs or after it
 * returned (doc/control.md).  The agent writes the table into the
 * task's control page; the task reads it at every recorded call, and
 * costs one relaxed load while the table is empty.
 */
#define RING_BP_MAX		BREAKPOINTS_MAX
#define RING_BP_GROUP_MAX	63

/* A breakpoint in the control page: struct breakpoint, laid out here. */
struct ring_bp {
	uint32_t	id;		/* the coordinator's; never 0 */
	int32_t		tid;		/* only this task; 0: every task */
	uint8_t		call;		/* enum pmon_call; 0: any call */
	uint8_t		phase;		/* PMON_BEGIN: before the call runs;
					   PMON_END: after it returned */
	uint16_t	match;		/* BP_* (breakpoint.h) */
	int32_t		peer;
	int32_t		tag;
	int32_t		ctx;
	uint64_t	seq;		/* BP_SEQ: stop before this record */
	char		group[RING_BP_GROUP_MAX + 1];	/* NUL-terminated */
};

/*
 * Written by the agent only, as a seqlock: gen is odd while it writes,
 * and a reader retries if gen changed under it.
 */
struct ring_ctl {
	_Atomic uint32_t gen;
	_Atomic uint32_t nbp;		/* entries of bp in use */
	struct ring_bp	bp[RING_BP_MAX];
};

struct ring_hdr {
	uint32_t		magic;
	uint32_t		version;
	uint32_t		size;		/* data bytes, a power of two */
	int32_t			tid;		/* the task's PVM tid, once known */
	uint32_t		clock;		/* RING_CLOCK_*, set before the
						   first record */
	uint64_t		anchor_tick;	/* with RING_CLOCK_TSC: the task's */
	uint64_t		anchor_ns;	/* tsc_sample when it made the ring */
	_Alignas(64) _Atomic uint64_t head;	/* written by the task */
	_Atomic uint64_t	dropped;	/* records lost to a full ring */
	_Atomic uint64_t	written;	/* records written */
	_Alignas(64) _Atomic uint64_t tail;	/* written by the agent */
	_Alignas(64) struct ring_ctl ctl;	/* written by the agent */
	/*
	 * Blocking mode.  The task reads this line only when its ring is
	 * full; the agent reads waiters after it moved the tail.
	 */
	_Alignas(64) _Atomic uint64_t block_ns; /* agent: RING_BLOCK_* or
						   the timeout */
	_Atomic int32_t		agent_pid;	/* agent: the one draining */
	_Atomic uint32_t	wake;		/* agent: a futex word, bumped
						   after it made room while
						   the task waited */
	_Atomic uint32_t	waiters;	/* task: threads waiting */
	_Atomic uint64_t	waits;		/* task: waits for room */
	_Atomic uint64_t	wait_ns;	/* task: ...their total */
	_Atomic uint64_t	wait_max_ns;	/* task: ...the longest */
};

/*
 * The agent's view of a ring.  By default a read frees what it read
 * (tail follows the read).  With hold set, reads move only rd, the
 * agent's private read cursor, and the records between tail and rd stay
 * in the ring until ring_ack frees them: what the coordinator has not
 * acknowledged can be read again after ring_rewind (doc/capture.md).
 */
struct ring {
	struct ring_hdr	*hdr;
	uint8_t		*data;
	uint32_t	 size;		/* our own copy: never trust the peer's */
	size_t		 maplen;
	int		 fd;
	int		 hold;		/* tail moves on ring_ack only */
	uint64_t	 rd;		/* with hold: the next byte to read */
	uint32_t	 clock;		/* RING_CLOCK_*, our copy */
	struct tsc_sample anchor;	/* with RING_CLOCK_TSC, our copy */
	uint64_t	 last_tick;	/* the agent's last conversion, to */
	uint64_t	 last_ns;	/* keep times from going backwards */
	/* The task's, in blocking mode: */
	_Atomic uint64_t stall;		/* 0, or 1 + the tail at which it
					   gave up waiting */
	uint64_t	 slice_ns;	/* RING_WAIT_SLICE_NS, and */
	uint64_t	 orphan_ns;	/* RING_ORPHAN_NS; the tests change them */
};

/*
 * ring_wait's bell: tells the agent that the task waits (its
 * registration socket, TASK_FULL), so that it need not wait for the
 * agent's next drain.
 */
typedef void	(*ring_bell_fn)(void *);

int	ring_create(struct ring *, uint32_t size);
int	ring_attach(struct ring *, int fd, const char **why);
void	ring_set_tsc(struct ring *, const struct tsc_sample *anchor);
void	ring_close(struct ring *);
int	ring_write(struct ring *, const void *rec, size_t len);
int	ring_try_write(struct ring *, const void *rec, size_t len);
void	ring_drop(struct ring *);
int	ring_wait(struct ring *, size_t len, ring_bell_fn, void *);

/* Task: has the agent asked it to wait for room (ring_wait)? */
static inline int
ring_blocking(const struct ring *rg)
{
	return atomic_load_explicit(&rg->hdr->block_ns,
	    memory_order_relaxed) != RING_BLOCK_NEVER;
}

void	ring_set_block(struct ring *, uint64_t ns);
void	ring_release(struct ring *);
ssize_t	ring_read(struct ring *, uint8_t *out, size_t outsize,
	    unsigned *nrecords, const char **why);
uint64_t ring_dropped(const struct ring *);
void	ring_hold(struct ring *);
int	ring_ack(struct ring *, uint64_t seq);
void	ring_rewind(struct ring *);
int	ring_relieve(struct ring *);

/* Breakpoints: the task's check, the agent's writer. */
struct record;
int	ring_bp_match(const struct ring_hdr *, int32_t tid,
	    const struct record *, uint64_t seq, uint8_t phase,
	    struct breakpoint *hit);
void	ring_ctl_write(struct ring_hdr *, const struct breakpoint *,
	    unsigned n);

#endif
