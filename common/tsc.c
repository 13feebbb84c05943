/*
 * Task times from the TSC: the safety check, calibration samples and the
 * conversion of ticks to CLOCK_REALTIME nanoseconds (tsc.h,
 * doc/clock.md).
 */
#include <ctype.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tsc.h"

#define NSEC		1000000000ULL
#define SAMPLE_TRIES	5

#define CLOCKSOURCE_PATH \
	"/sys/devices/system/clocksource/clocksource0/current_clocksource"

/* Reads up to size - 1 bytes of a file into buf, NUL-terminated. */
static int
read_text(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while (len < size - 1 &&
	    (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return len > 0 ? 0 : -1;
}

/* Whether the blank-separated list of words in [p, end) holds word. */
static int
has_word(const char *p, const char *end, const char *word)
{
	size_t wlen = strlen(word), len;

	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		for (len = 0; p + len < end &&
		    !isspace((unsigned char)p[len]); len++)
			;
		if (len == wlen && memcmp(p, word, len) == 0)
			return 1;
		p += len;
	}
	return 0;
}

/*
 * Whether the TSC is a safe clock, from the texts of the kernel's current
 * clocksource and of /proc/cpuinfo: the kernel keeps time with it (so it
 * trusts it to be synchronised across CPUs), and the first "flags" line
 * says it runs at a constant rate and through idle states.
 */
int
tsc_safe_text(const char *clocksource, const char *cpuinfo)
{
	const char *line, *colon, *end;
	size_t len;

	if (!TSC_ARCH || clocksource == NULL || cpuinfo == NULL)
		return 0;
	len = strcspn(clocksource, " \t\n");
	if (len != 3 || memcmp(clocksource, "tsc", 3) != 0)
		return 0;
	for (line = cpuinfo; *line != '\0'; line = end + (*end == '\n')) {
		end = line + strcspn(line, "\n");
		if (strncmp(line, "flags", 5) != 0 ||
		    (colon = memchr(line, ':', (size_t)(end - line))) == NULL)
			continue;
		return has_word(colon + 1, end, "constant_tsc") &&
		    has_word(colon + 1, end, "nonstop_tsc");
	}
	return 0;
}

/* Whether this machine's TSC is safe (tsc_safe_text); reads two files. */
int
tsc_safe(void)
{
	char cs[64], cpuinfo[8192];

	if (!TSC_ARCH || read_text(CLOCKSOURCE_PATH, cs, sizeof(cs)) == -1 ||
	    read_text("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo)) == -1)
		return 0;
	return tsc_safe_text(cs, cpuinfo);
}

/*
 * Reads ticks and CLOCK_REALTIME together: of a few tries, the one whose
 * clock read the two tick reads bracket most tightly, with its ticks in
 * the middle of the bracket.  Returns 0, or -1 without a TSC.
 */
int
tsc_sample(struct tsc_sample *out)
{
	struct timespec ts;
	uint64_t t0, t1, best = UINT64_MAX;
	int i;

	if (!TSC_ARCH)
		return -1;
	for (i = 0; i < SAMPLE_TRIES; i++) {
		t0 = tsc_read();
		clock_gettime(CLOCK_REALTIME, &ts);
		t1 = tsc_read();
		if (t1 < t0 || t1 - t0 >= best)
			continue;
		best = t1 - t0;
		out->tick = t0 + (t1 - t0) / 2;
		out->ns = (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
	}
	return best == UINT64_MAX ? -1 : 0;
}

/*
 * An empty history, then two samples a couple of milliseconds apart: a
 * first rate, good to some ppm, until the timer adds better ones.
 */
void
tsc_cal_init(struct tsc_cal *cal)
{
	struct timespec pause = { 0, 2000000 };
	struct tsc_sample s;

	memset(cal, 0, sizeof(*cal));
	if (tsc_sample(&s) == -1)
		return;
	tsc_cal_add(cal, &s);
	nanosleep(&pause, NULL);
	if (tsc_sample(&s) == 0)
		tsc_cal_add(cal, &s);
}

/*
 * The rate of the segment from s[i] to s[i + 1], so that interpolating
 * is a multiplication, not a 128-bit division: 32 fractional bits are
 * well under a ns over a segment.  0 when it does not fit.
 */
static void
cal_rate(struct tsc_cal *cal, unsigned i)
{
	const struct tsc_sample *a = &cal->s[i], *b = &cal->s[i + 1];
	unsigned __int128 r;

	r = ((unsigned __int128)(b->ns - a->ns) << 32) / (b->tick - a->tick);
	cal->rate[i] = r > UINT64_MAX ? 0 : (uint64_t)r;
}

/* Drops every other sample of the older half of a full history. */
static void
cal_thin(struct tsc_cal *cal)
{
	unsigned half = cal->n / 2, i, n = 0;

	for (i = 0; i < half; i += 2)
		cal->s[n++] = cal->s[i];
	for (i = half; i < cal->n; i++)
		cal->s[n++] = cal->s[i];
	cal->n = n;
	for (i = 0; i + 1 < n; i++)
		cal_rate(cal, i);
}

/*
 * Adds a sample.  One that does not go forward in both ticks and ns is
 * ignored: CLOCK_REALTIME stepped back (settimeofday), and the history
 * goes on at the TSC's rate until the clock has passed its newest sample
 * again, so that converted times never go backwards.
 */
void
tsc_cal_add(struct tsc_cal *cal, const struct tsc_sample *s)
{
	const struct tsc_sample *last;

	if (cal->n > 0) {
		last = &cal->s[cal->n - 1];
		if (s->tick <= last->tick || s->ns <= last->ns)
			return;
	}
	if (cal->n >= 2 &&
	    s->ns - cal->s[cal->n - 2].ns < TSC_SPACING_NS) {
		cal->s[cal->n - 1] = *s;
		cal_rate(cal, cal->n - 2);
		return;
	}
	if (cal->n == TSC_CAL_MAX)
		cal_thin(cal);
	cal->s[cal->n++] = *s;
	if (cal->n >= 2)
		cal_rate(cal, cal->n - 2);
}

/*
 * The points a conversion uses: the ring's anchor (the task's own sample
 * from when it made the ring, older than all its records), if it comes
 * before the history, then the history.
 */
struct points {
	const struct tsc_sample	*anchor;
	const struct tsc_cal	*cal;
	unsigned		 n;
};

static const struct tsc_sample *
point(const struct points *p, unsigned i)
{
	if (p->anchor != NULL)
		return i == 0 ? p->anchor : &p->cal->s[i - 1];
	return &p->cal->s[i];
}

/* ns at tick on the line through a and b (a->tick < b->tick). */
static uint64_t
on_line(const struct tsc_sample *a, const struct tsc_sample *b,
    uint64_t tick)
{
	unsigned __int128 d;
	uint64_t dtick = b->tick - a->tick, dns = b->ns - a->ns, q;

	if (tick >= a->tick) {
		d = (unsigned __int128)(tick - a->tick) * dns / dtick;
		q = d > UINT64_MAX ? UINT64_MAX : (uint64_t)d;
		return q > UINT64_MAX - a->ns ? UINT64_MAX : a->ns + q;
	}
	d = (unsigned __int128)(a->tick - tick) * dns / dtick;
	q = d > UINT64_MAX ? UINT64_MAX : (uint64_t)d;
	return q > a->ns ? 0 : a->ns - q;
}

/* ns at tick, between points i and i + 1. */
static uint64_t
between(const struct points *p, unsigned i, uint64_t tick)
{
	const struct tsc_sample *a = point(p, i);
	unsigned k = p->anchor != NULL ? i - 1 : i;	/* in cal->s */
	uint64_t rate;

	if (p->anchor != NULL && i == 0)
		return on_line(a, point(p, 1), tick);
	if ((rate = p->cal->rate[k]) == 0)
		return on_line(a, point(p, i + 1), tick);
	return a->ns + (uint64_t)(((unsigned __int128)(tick - a->tick) *
	    rate) >> 32);
}

/*
 * Converts ticks to CLOCK_REALTIME ns: by interpolating between the two
 * points that bracket them; before the first point, on the line through
 * the first and the last (the long-run rate); after the last point, on
 * the line through it and one at least TSC_SPACING_NS older, if any.
 * anchor may be NULL, and is ignored unless it comes before the history
 * in both ticks and ns (a task's ring is untrusted).  Returns 0 with no
 * history.
 */
uint64_t
tsc_to_ns(const struct tsc_cal *cal, const struct tsc_sample *anchor,
    uint64_t tick)
{
	struct points p = { NULL, cal, cal->n };
	unsigned lo, hi, mid;

	if (anchor != NULL && cal->n > 0 && anchor->tick < cal->s[0].tick &&
	    anchor->ns < cal->s[0].ns) {
		p.anchor = anchor;
		p.n++;
	}
	if (p.n == 0)
		return 0;
	if (p.n == 1)
		return point(&p, 0)->ns;
	if (tick < point(&p, 0)->tick)
		return on_line(point(&p, 0), point(&p, p.n - 1), tick);
	if (tick >= point(&p, p.n - 1)->tick) {
		for (lo = p.n - 1; lo > 0; lo--)
			if (point(&p, p.n - 1)->ns - point(&p, lo - 1)->ns >=
			    TSC_SPACING_NS)
				break;
		lo = lo > 0 ? lo - 1 : 0;
		return on_line(point(&p, lo), point(&p, p.n - 1), tick);
	}
	/* The last point whose ticks are at most tick: most often the
	 * newest but one, as the agent samples before it drains. */
	lo = p.n - 2;
	if (tick < point(&p, lo)->tick) {
		lo = 0;
		hi = p.n - 2;
		while (hi - lo > 1) {
			mid = lo + (hi - lo) / 2;
			if (point(&p, mid)->tick <= tick)
				lo = mid;
			else
				hi = mid;
		}
	}
	return between(&p, lo, tick);
}
