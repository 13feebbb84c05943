/*
 * Clock correction: a corrected time for every event, computed when the
 * ordering core releases it (so in a causal order), from the host's raw
 * CLOCK_REALTIME and what the messages seen so far tell about the hosts'
 * offsets and drifts.
 *
 * Every algorithm guarantees, for the events it is given:
 *  - corrected times of one task never decrease;
 *  - an event with a remote causal predecessor (the send of a receive,
 *    the spawn before a child's first event, the barrier entries before
 *    a barrier exit) is at least lmin_ns after it.
 * They differ in how much they distort the intervals between the events
 * of a task (doc/clock.md compares them):
 *
 *  CLOCK_RAW	  the raw time; no guarantee (a baseline for tests)
 *  CLOCK_LAMPORT max(raw, previous, predecessor + lmin): plain Lamport
 *		  correction
 *  CLOCK_KZ	  Kimelman & Zernik: a per-host shift, raised by the amount
 *		  a receive would precede its send and kept from then on
 *  CLOCK_TC	  Taylor & Coffin style estimation: per-host offset and
 *		  drift estimated on line from the minimal one-way delays
 *		  of messages in both directions, applied to the raw time,
 *		  then the Lamport bound where the estimate is not enough
 *  CLOCK_CLC	  a controlled logical clock over the same estimates: a jump
 *		  forced by a receive, or a change of estimate, is amortized
 *		  over the following intervals of the task instead of being
 *		  taken at once (released events cannot move back)
 *
 * The module does no I/O and keeps no per-task table: the caller owns a
 * struct clock_local per task (the ordering core keeps it in its task).
 */
#ifndef PMON_CLOCK_H
#define PMON_CLOCK_H

#include <stdint.h>

enum clock_algo {
	CLOCK_RAW,
	CLOCK_LAMPORT,
	CLOCK_KZ,
	CLOCK_TC,
	CLOCK_CLC
};

struct clock_params {
	enum clock_algo	algo;
	uint64_t	lmin_ns;	/* minimal message latency */
	double		slew;		/* CLC: at most this fraction of an
					   interval is added or removed to
					   approach the estimate (0.1) */
};

/* The per-task state, owned by the caller; zero it before the first use. */
struct clock_local {
	uint64_t	raw;		/* raw time of the last event */
	uint64_t	corr;		/* its corrected time */
	int		started;
};

/* A remote causal predecessor, already corrected. */
struct clock_pred {
	uint64_t	raw;
	uint64_t	corr;
	uint32_t	host;
	int		message;	/* 1: a message (feeds the estimator) */
};

struct clock;

/* Fills the defaults: CLOCK_CLC, lmin 1 us, slew 0.1. */
void		 clock_params_default(struct clock_params *);
const char	*clock_algo_name(enum clock_algo);
/* -1 when name is unknown. */
int		 clock_algo_lookup(const char *name);

/* Hosts are small dense numbers.  Out of memory is fatal (xmalloc.h). */
struct clock	*clock_new(const struct clock_params *);
void		 clock_free(struct clock *);

/*
 * The corrected time of the next event of a task on host, in release
 * order.  pred is its remote causal predecessor, or NULL.  For a
 * message, the pair (pred->raw on pred->host, raw on host) is a one-way
 * delay sample for the estimators.
 */
uint64_t	 clock_correct(struct clock *, uint32_t host,
		    struct clock_local *, uint64_t raw,
		    const struct clock_pred *pred);

/*
 * The current estimate of host's offset from the reference timeline
 * (the first host seen), in ns at raw time raw: corrected ~ raw + offset.
 * 0 for algorithms without estimates and for unknown hosts.
 */
int64_t		 clock_offset(const struct clock *, uint32_t host,
		    uint64_t raw);
/*
 * A bound on the error of host's clock_offset, from the widths of the
 * delay bounds along its chain of host pairs measured both ways;
 * INT64_MAX when there is none (no such chain, or an algorithm without
 * estimates).
 */
int64_t		 clock_error(const struct clock *, uint32_t host);

#endif
