/*
 * Task times from the TSC (doc/clock.md).  Where the TSC is a safe clock
 * (x86-64, invariant, the kernel's own clocksource), an instrumented task
 * stamps its records with raw rdtsc ticks, about half the cost of
 * clock_gettime(CLOCK_REALTIME), and marks its ring so.  Its agent keeps a
 * history of (ticks, CLOCK_REALTIME) samples and converts every record's
 * ticks to nanoseconds when it drains the ring, before anything leaves
 * the host: downstream, times are CLOCK_REALTIME nanoseconds as always.
 */
#ifndef PMON_TSC_H
#define PMON_TSC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define TSC_ARCH	1
#else
#define TSC_ARCH	0
#endif

/* One calibration point: ticks and CLOCK_REALTIME ns read together. */
struct tsc_sample {
	uint64_t	tick;
	uint64_t	ns;
};

/*
 * The agent's samples, oldest first, ticks and ns strictly increasing.
 * Samples at least TSC_SPACING_NS apart are kept; a newer one replaces
 * the newest until it is that far from the one before.  A full history
 * drops every other sample of its older half, so it covers everything
 * since the agent started, ever more coarsely the older it is.
 */
#define TSC_CAL_MAX	512
#define TSC_SPACING_NS	50000000ULL		/* 50 ms */

struct tsc_cal {
	struct tsc_sample	s[TSC_CAL_MAX];
	uint64_t		rate[TSC_CAL_MAX];	/* ns per tick from s[i]
							   to s[i + 1], 32.32
							   fixed point; 0:
							   divide instead */
	unsigned		n;
};

/* Raw ticks: the task's one instruction per record. */
static inline uint64_t
tsc_read(void)
{
#if TSC_ARCH
	return __rdtsc();
#else
	return 0;
#endif
}

int	tsc_safe(void);
int	tsc_safe_text(const char *clocksource, const char *cpuinfo);
int	tsc_sample(struct tsc_sample *);
void	tsc_cal_init(struct tsc_cal *);
void	tsc_cal_add(struct tsc_cal *, const struct tsc_sample *);
uint64_t tsc_to_ns(const struct tsc_cal *, const struct tsc_sample *anchor,
	    uint64_t tick);

#endif
