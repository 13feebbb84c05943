/*
 * The times of the records the agent ships: the TSC calibration that
 * converts the ticks of tasks that write them (doc/clock.md), and the
 * tests' clock offset.
 */
#include <errno.h>
#include <stdlib.h>

#include "agent.h"
#include "tsc.h"

/*
 * Test-only clock offset (PMON_TEST_CLOCK_OFFSET_NS, -O): added to the
 * t_ns of every record this agent ships, so that tests can give one host
 * of a virtual machine a clock that is off by a known amount.  It is the
 * one exception to "the agent ships the records' values unchanged".
 */
static int64_t clock_offset_ns;

/*
 * Parses a signed decimal number of nanoseconds of at most a day either
 * way.  Returns 0, or -1 with *why.
 */
int
agent_parse_clock_offset(const char *s, int64_t *ns, const char **why)
{
	const char *digits = s + (*s == '-' || *s == '+');
	long long v;
	char *end;

	/* strtoll alone would take leading blanks and an empty string. */
	if (*digits < '0' || *digits > '9') {
		*why = "not a decimal number of nanoseconds";
		return -1;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0') {
		*why = "not a decimal number of nanoseconds";
		return -1;
	}
	if (errno == ERANGE || v > AGENT_CLOCK_OFFSET_MAX ||
	    v < -AGENT_CLOCK_OFFSET_MAX) {
		*why = "more than a day (86400000000000 ns) either way";
		return -1;
	}
	*ns = (int64_t)v;
	return 0;
}

void
agent_set_clock_offset(int64_t ns)
{
	clock_offset_ns = ns;
}

/*
 * The (TSC ticks, CLOCK_REALTIME) samples that convert the times of
 * rings whose tasks write ticks (tsc.h, doc/clock.md).  The drain timer
 * adds one at every tick and a drain of such a ring adds one first, so
 * that nearly every record it reads is older than the newest sample and
 * converts by interpolation.
 */
static struct tsc_cal tsc_cal;

void
agent_clock_sample(void)
{
	struct tsc_sample s;

	if (!TSC_ARCH)
		return;
	if (tsc_cal.n == 0)
		tsc_cal_init(&tsc_cal);
	else if (tsc_sample(&s) == 0)
		tsc_cal_add(&tsc_cal, &s);
}

/* Do the times of rg's records change on the way (agent_clock_ns)? */
int
agent_clock_shifts(const struct ring *rg)
{
	return clock_offset_ns != 0 || rg->clock != RING_CLOCK_NS;
}

/*
 * A record's time as shipped: CLOCK_REALTIME ns converted from the
 * ring's clock, never earlier than the ring's previous record when its
 * ticks are not, plus the test clock offset.
 */
uint64_t
agent_clock_ns(struct ring *rg, uint64_t t)
{
	uint64_t ns;

	if (rg->clock == RING_CLOCK_TSC) {
		ns = tsc_to_ns(&tsc_cal, &rg->anchor, t);
		if (t >= rg->last_tick && ns < rg->last_ns)
			ns = rg->last_ns;
		rg->last_tick = t;
		rg->last_ns = ns;
		t = ns;
	}
	return t + (uint64_t)clock_offset_ns;
}
