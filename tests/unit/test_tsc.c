/*
 * Protects task times taken from the TSC (tsc.h, doc/clock.md): the
 * safety check, the agent's calibration history, the conversion of ticks
 * to CLOCK_REALTIME (accuracy against clock_gettime read around rdtsc,
 * interpolation, extrapolation, the ring's anchor, monotonicity), and the
 * agent's drain, which converts a TSC ring's times and leaves a
 * CLOCK_REALTIME ring's alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "agent.h"
#include "proto.h"
#include "record.h"
#include "ring.h"
#include "tsc.h"
#include "unit.h"
#include "wire.h"

#define NSEC		1000000000ULL
#define MS		1000000ULL
#define US		1000ULL
#define ACCURACY_NS	1000	/* the promise: well under a microsecond */
#define T0		(3 * 1000 * NSEC)	/* made-up ticks: 1000 s at 3 GHz */

/* Interpolation multiplies by a 32.32 fixed-point rate: within 1 ns. */
#define NEAR(a, b)	CU_ASSERT((a) <= (b) + 1 && (b) <= (a) + 1)

static uint64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

/*
 * Ticks with CLOCK_REALTIME read just before and just after them: of a
 * few tries, the tightest bracket (a preempted try is useless).
 */
static void
bracket(uint64_t *before, uint64_t *tick, uint64_t *after)
{
	uint64_t b, t, a;
	int i;

	*after = UINT64_MAX;
	*before = 0;
	for (i = 0; i < 20; i++) {
		b = realtime_ns();
		t = tsc_read();
		a = realtime_ns();
		if (a - b < *after - *before) {
			*before = b;
			*tick = t;
			*after = a;
		}
	}
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	nanosleep(&ts, NULL);
}

static const char cpuinfo_ok[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
    "flags\t\t: fpu vme tsc constant_tsc arch_perfmon nonstop_tsc cpuid\n"
    "bogomips\t: 4000.00\n\nprocessor\t: 1\n"
    "flags\t\t: fpu vme tsc\n";

static void
test_safe_text(void)
{
	CU_ASSERT_EQUAL(tsc_safe_text("tsc\n", cpuinfo_ok), TSC_ARCH);
	CU_ASSERT_EQUAL(tsc_safe_text("hpet\n", cpuinfo_ok), 0);
	CU_ASSERT_EQUAL(tsc_safe_text("tsc_early\n", cpuinfo_ok), 0);
	CU_ASSERT_EQUAL(tsc_safe_text("", cpuinfo_ok), 0);
	/* Only the first flags line counts, by whole words. */
	CU_ASSERT_EQUAL(tsc_safe_text("tsc\n",
	    "flags\t: fpu constant_tsc\nflags\t: constant_tsc nonstop_tsc\n"),
	    0);
	CU_ASSERT_EQUAL(tsc_safe_text("tsc\n",
	    "flags\t: constant_tsc nonstop_tsc_x\n"), 0);
	CU_ASSERT_EQUAL(tsc_safe_text("tsc\n",
	    "flags\t: nonstop_tsc constant_tsc"), TSC_ARCH);
	CU_ASSERT_EQUAL(tsc_safe_text("tsc\n", "processor\t: 0\n"), 0);
	CU_ASSERT_EQUAL(tsc_safe_text("tsc\n", ""), 0);
	CU_ASSERT_EQUAL(tsc_safe_text(NULL, cpuinfo_ok), 0);
}

/* A made-up history: ticks at 3 GHz from T0, ns from 1e18. */
static void
cal_line(struct tsc_cal *cal, unsigned n, uint64_t step_ns)
{
	struct tsc_sample s;
	unsigned i;

	memset(cal, 0, sizeof(*cal));
	for (i = 0; i < n; i++) {
		s.tick = T0 + 3 * step_ns * i;
		s.ns = 1000000000000000000ULL + step_ns * i;
		tsc_cal_add(cal, &s);
	}
}

static void
test_interpolate(void)
{
	struct tsc_cal cal;
	struct tsc_sample s;
	const uint64_t ns0 = 1000000000000000000ULL;
	unsigned i;

	cal_line(&cal, 10, 100 * MS);
	CU_ASSERT_EQUAL_FATAL(cal.n, 10);
	/* At samples, between them, before the first, after the last. */
	for (i = 0; i < cal.n; i++)
		CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, cal.s[i].tick),
		    cal.s[i].ns);
	NEAR(tsc_to_ns(&cal, NULL, T0 + 3 * 150 * MS), ns0 + 150 * MS);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, T0 - 3 * 5 * MS),
	    ns0 - 5 * MS);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, T0 + 3 * 1234 * MS),
	    ns0 + 1234 * MS);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, 0), ns0 - T0 / 3);

	/* A slewed segment is followed inside it. */
	cal.n = 5;
	s.tick = cal.s[4].tick + 3 * 100 * MS;
	s.ns = cal.s[4].ns + 100 * MS + 40 * US;
	tsc_cal_add(&cal, &s);
	NEAR(tsc_to_ns(&cal, NULL, (cal.s[4].tick + cal.s[5].tick) / 2),
	    (cal.s[4].ns + cal.s[5].ns) / 2);

	/* A forward step too steep for the fixed-point rate divides. */
	cal.n = 2;
	s.tick = cal.s[1].tick + 10;
	s.ns = cal.s[1].ns + 100 * NSEC;
	tsc_cal_add(&cal, &s);
	CU_ASSERT_EQUAL_FATAL(cal.n, 3);
	CU_ASSERT_EQUAL(cal.rate[1], 0);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, s.tick - 5), s.ns - 50 * NSEC);

	/* No history: 0; one sample: its time. */
	memset(&cal, 0, sizeof(cal));
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, 12345), 0);
	cal_line(&cal, 1, MS);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, 12345), ns0);
}

/*
 * Past the newest sample, the rate comes from a sample at least
 * TSC_SPACING_NS older, not from a newest pair a few ns apart whose
 * bracket errors would dominate.
 */
static void
test_extrapolate(void)
{
	struct tsc_cal cal;
	struct tsc_sample s;
	const uint64_t ns0 = 1000000000000000000ULL;

	cal_line(&cal, 3, 100 * MS);
	/* 1 ms later, 300 ns off the line: replaces nothing (spacing). */
	s.tick = cal.s[2].tick + 3 * MS;
	s.ns = cal.s[2].ns + MS + 300;
	tsc_cal_add(&cal, &s);
	CU_ASSERT_EQUAL_FATAL(cal.n, 4);
	/* On the line from s[1] (101 ms older), not from s[2], whose rate
	 * is 300 ppm off: 300 us a second later. */
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, s.tick + 3 * NSEC),
	    cal.s[1].ns + (uint64_t)((unsigned __int128)(s.tick + 3 * NSEC -
	    cal.s[1].tick) * (s.ns - cal.s[1].ns) / (s.tick - cal.s[1].tick)));
	CU_ASSERT(tsc_to_ns(&cal, NULL, s.tick + 3 * NSEC) < s.ns + NSEC +
	    10 * US);
	/* A newer sample within the spacing replaces the newest. */
	s.tick += 3 * MS;
	s.ns += MS;
	tsc_cal_add(&cal, &s);
	CU_ASSERT_EQUAL(cal.n, 4);
	CU_ASSERT_EQUAL(cal.s[3].ns, s.ns);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, cal.s[2].tick), ns0 + 200 * MS);
}

/* Samples that do not go forward (a stepped-back clock) are ignored. */
static void
test_step_back(void)
{
	struct tsc_cal cal;
	struct tsc_sample s;

	cal_line(&cal, 3, 100 * MS);
	s.tick = cal.s[2].tick + 300 * MS;
	s.ns = cal.s[2].ns - NSEC;
	tsc_cal_add(&cal, &s);
	CU_ASSERT_EQUAL(cal.n, 3);
	s.tick = cal.s[2].tick;
	s.ns = cal.s[2].ns + NSEC;
	tsc_cal_add(&cal, &s);
	CU_ASSERT_EQUAL(cal.n, 3);
}

/* The ring's anchor covers records older than the agent's history. */
static void
test_anchor(void)
{
	struct tsc_cal cal;
	struct tsc_sample a;
	const uint64_t ns0 = 1000000000000000000ULL;

	cal_line(&cal, 3, 100 * MS);
	/* The task made its ring 10 s before, and its TSC ran 10 ppm slow
	 * against CLOCK_REALTIME meanwhile: the anchor follows that. */
	a.tick = T0 - 3 * 10 * NSEC;
	a.ns = ns0 - 10 * NSEC - 100 * US;
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, &a, a.tick), a.ns);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, &a, T0 - 3 * 5 * NSEC),
	    ns0 - 5 * NSEC - 50 * US);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, T0 - 3 * 5 * NSEC),
	    ns0 - 5 * NSEC);
	/* Inside the history the anchor changes nothing. */
	NEAR(tsc_to_ns(&cal, &a, T0 + 3 * 50 * MS), ns0 + 50 * MS);
	/* An anchor that is not older in both is a lie: ignored. */
	a.ns = ns0 + 1;
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, &a, T0 - 3 * 5 * NSEC),
	    ns0 - 5 * NSEC);
	a.tick = UINT64_MAX;
	a.ns = 0;
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, &a, T0 - 3 * 5 * NSEC),
	    ns0 - 5 * NSEC);
	/* Extreme ticks do not wrap. */
	CU_ASSERT(tsc_to_ns(&cal, NULL, UINT64_MAX) > cal.s[2].ns);
	CU_ASSERT_EQUAL(tsc_to_ns(&cal, NULL, 0), ns0 - T0 / 3);
}

/* A full history thins its older half and keeps covering its start. */
static void
test_thin(void)
{
	struct tsc_cal cal;
	struct tsc_sample first;
	unsigned i;

	cal_line(&cal, 5 * TSC_CAL_MAX, 60 * MS);
	first.tick = T0;
	first.ns = 1000000000000000000ULL;
	CU_ASSERT(cal.n <= TSC_CAL_MAX && cal.n > TSC_CAL_MAX / 2);
	CU_ASSERT_EQUAL(cal.s[0].tick, first.tick);
	CU_ASSERT_EQUAL(cal.s[cal.n - 1].tick,
	    T0 + 3 * 60 * MS * (5 * TSC_CAL_MAX - 1));
	for (i = 1; i < cal.n; i++) {
		CU_ASSERT(cal.s[i].tick > cal.s[i - 1].tick);
		CU_ASSERT(cal.s[i].ns > cal.s[i - 1].ns);
	}
	NEAR(tsc_to_ns(&cal, NULL, T0 + 3 * 7 * MS), first.ns + 7 * MS);
}

/*
 * Piecewise-linear conversion over a history with slewed segments
 * never goes backwards as ticks go forward.
 */
static void
test_monotonic(void)
{
	struct tsc_cal cal;
	struct tsc_sample s = { T0, NSEC };
	uint64_t t, prev = 0, ns;
	unsigned i;

	memset(&cal, 0, sizeof(cal));
	srandom(6);
	for (i = 0; i < 100; i++) {
		s.tick += 3 * 60 * MS;
		/* +-500 ppm of slew, as ntpd may apply. */
		s.ns += 60 * MS + (uint64_t)(random() % 60000) - 30000;
		tsc_cal_add(&cal, &s);
	}
	for (t = 0; t < s.tick + 3 * NSEC; t += 1 + (uint64_t)random() %
	    (3 * MS)) {
		ns = tsc_to_ns(&cal, NULL, t);
		CU_ASSERT(ns >= prev);
		if (ns < prev)
			break;
		prev = ns;
	}
}

/*
 * Against the real clocks: ticks read between two clock_gettime calls
 * convert to a time between them, give or take ACCURACY_NS, both when
 * newer samples bracket them and when they are newer than every sample.
 */
static void
test_accuracy(void)
{
	struct tsc_cal cal;
	struct tsc_sample s;
	uint64_t b[8], t[8], a[8], ns;
	unsigned i;

	if (!TSC_ARCH)
		return;
	tsc_cal_init(&cal);
	CU_ASSERT_EQUAL_FATAL(cal.n, 2);
	for (i = 0; i < 8; i++) {
		bracket(&b[i], &t[i], &a[i]);
		sleep_ms(15);
		CU_ASSERT_EQUAL_FATAL(tsc_sample(&s), 0);
		tsc_cal_add(&cal, &s);
	}
	/* Extrapolated: newer than every sample. */
	bracket(&b[0], &t[0], &a[0]);
	ns = tsc_to_ns(&cal, NULL, t[0]);
	CU_ASSERT(ns + ACCURACY_NS >= b[0] && ns <= a[0] + ACCURACY_NS);
	/* Interpolated, after more samples. */
	for (i = 1; i < 8; i++) {
		ns = tsc_to_ns(&cal, NULL, t[i]);
		CU_ASSERT(ns + ACCURACY_NS >= b[i] && ns <= a[i] + ACCURACY_NS);
	}
}

/* Writes n records stamped with ticks; remembers their brackets. */
static void
write_ticks(struct ring *rg, unsigned n, uint64_t *b, uint64_t *a)
{
	uint8_t buf[RECORD_MAX_SIZE];
	struct record r;
	unsigned i;

	for (i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		r.call = PMON_CALL_send;
		r.phase = i % 2 ? PMON_END : PMON_BEGIN;
		r.seq = i + 1;
		r.peer = 0x40003;
		bracket(&b[i], &r.t_ns, &a[i]);
		CU_ASSERT_EQUAL_FATAL(ring_write(rg, buf,
		    record_encode(buf, &r, NULL)), 0);
		sleep_ms(1);
	}
}

/* The times of the TASK_RECORDS frames on eb, in order. */
static unsigned
frame_times(struct evbuffer *eb, uint64_t *t, unsigned max)
{
	uint8_t hdr[FRAME_HDR_SIZE], *p;
	struct frame_hdr fh;
	struct record r;
	const char *why;
	unsigned n = 0;
	size_t off;

	while (evbuffer_copyout(eb, hdr, sizeof(hdr)) == sizeof(hdr)) {
		CU_ASSERT_EQUAL_FATAL(frame_hdr_decode(hdr, &fh, &why), 0);
		evbuffer_drain(eb, sizeof(hdr));
		p = evbuffer_pullup(eb, fh.len);
		for (off = 8; off < fh.len && n < max; off += r.len) {
			CU_ASSERT_EQUAL_FATAL(record_decode(p + off,
			    fh.len - off, &r, &why), 0);
			t[n++] = r.t_ns;
		}
		evbuffer_drain(eb, fh.len);
	}
	return n;
}

/*
 * The agent's drain converts a TSC ring's ticks, records written before
 * the agent ever sampled included (the ring's anchor), and keeps them in
 * order; an attached copy of the ring carries the clock and anchor.
 */
static void
test_drain_converts(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t *buf = malloc(RECORD_MAX_SIZE);
	struct ring rg = { .fd = -1 }, rx = { .fd = -1 };
	struct tsc_sample anchor;
	uint64_t b[16], a[16], t[16];
	const char *why;
	unsigned i;

	if (!TSC_ARCH)
		goto out;
	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 64 * 1024), 0);
	CU_ASSERT_EQUAL_FATAL(tsc_sample(&anchor), 0);
	ring_set_tsc(&rg, &anchor);
	write_ticks(&rg, 16, b, a);
	CU_ASSERT_EQUAL_FATAL(ring_attach(&rx, dup(rg.fd), &why), 0);
	CU_ASSERT_EQUAL(rx.clock, RING_CLOCK_TSC);
	CU_ASSERT_EQUAL(rx.anchor.tick, anchor.tick);
	CU_ASSERT_EQUAL(rx.anchor.ns, anchor.ns);
	agent_clock_sample();
	CU_ASSERT_EQUAL(agent_ring_drain(&rx, 7, eb, buf, RECORD_MAX_SIZE,
	    SIZE_MAX, NULL, &why), 0);
	CU_ASSERT_EQUAL_FATAL(frame_times(eb, t, 16), 16);
	for (i = 0; i < 16; i++) {
		CU_ASSERT(t[i] + ACCURACY_NS >= b[i] &&
		    t[i] <= a[i] + ACCURACY_NS);
		CU_ASSERT(i == 0 || t[i] >= t[i - 1]);
	}
	/* A bad clock in the header is refused at attach. */
	rg.hdr->clock = 7;
	ring_close(&rx);
	CU_ASSERT_EQUAL(ring_attach(&rx, dup(rg.fd), &why), -1);
	ring_close(&rg);
out:
	evbuffer_free(eb);
	free(buf);
}

/* Without ring_set_tsc (the fallback), times ship unchanged. */
static void
test_drain_realtime(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t *buf = malloc(RECORD_MAX_SIZE), rec[RECORD_MAX_SIZE];
	struct ring rg = { .fd = -1 };
	struct record r;
	uint64_t t[4];
	const char *why;
	unsigned i;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 4096), 0);
	CU_ASSERT_EQUAL(rg.clock, RING_CLOCK_NS);
	for (i = 0; i < 4; i++) {
		memset(&r, 0, sizeof(r));
		r.call = PMON_CALL_send;
		r.seq = i + 1;
		r.t_ns = 5 - i;		/* even backwards: not ours to fix */
		CU_ASSERT_EQUAL_FATAL(ring_write(&rg, rec,
		    record_encode(rec, &r, NULL)), 0);
	}
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 7, eb, buf, RECORD_MAX_SIZE,
	    SIZE_MAX, NULL, &why), 0);
	CU_ASSERT_EQUAL_FATAL(frame_times(eb, t, 4), 4);
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(t[i], 5 - i);
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

static CU_TestInfo tsc_tests[] = {
	{ "safety check", test_safe_text },
	{ "interpolation", test_interpolate },
	{ "extrapolation and spacing", test_extrapolate },
	{ "clock stepped back", test_step_back },
	{ "the ring's anchor", test_anchor },
	{ "full history thins", test_thin },
	{ "monotonic under slew", test_monotonic },
	{ "accuracy against clock_gettime", test_accuracy },
	{ "agent drain converts ticks", test_drain_converts },
	{ "agent drain keeps realtime", test_drain_realtime },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo tsc_suites[] = {
	{ "tsc", NULL, NULL, NULL, NULL, tsc_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(tsc_suites)
