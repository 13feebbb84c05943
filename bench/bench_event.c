/*
 * bench_event: what one recorded event costs inside an instrumented
 * task, clock read included (BENCHMARKS.md, "make bench-event").
 *
 * A plain PVM program, run by bench/bench_event.sh under `pmon exec`
 * with an agent draining its ring.  It calls pvm_getsbuf(), about the
 * cheapest PVM call there is, in bursts, through the instrumentation
 * library (the normal call: the preloaded wrapper, a begin and an end
 * record) and through libpvm3 directly (the same function found in
 * libpvm3 itself, which the wrapper does not see), and times a burst of
 * clock_gettime(CLOCK_REALTIME) and of rdtsc alongside (the task's
 * clock is one or the other: doc/clock.md).  The difference between the
 * two calls is the cost of the two events the wrapper records: the
 * wrapper, the depth and breakpoint checks, two clock reads, two
 * encodings, two ring writes.
 *
 *	bench_event [-b calls] [-n bursts] [-r runs] [-v]
 *
 * -b: calls per burst (4096: 8192 records, 384 KiB, fit the default
 * 1 MiB ring); -n: bursts per run (50); -r: runs (7); -v: one line per
 * run on stderr.
 *
 * The program reads its own ring (the memfd the library made, mapped
 * read-only): before each burst it waits until the agent has drained
 * everything, so every record of the burst has room, and at the end it
 * checks that the ring dropped nothing and that it was written exactly
 * two records per instrumented call.  A task whose records were dropped
 * would be measured on the cheaper drop path: then the bench fails.
 *
 * Each run gives ns per instrumented call, per direct call and per
 * clock read; ns per event is (instrumented - direct) / 2.  The medians
 * over the runs go to stderr; the only line on stdout is
 *	event ns_per_event=N
 */
#include <sys/mman.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvm3.h>

#include "ring.h"

#define DRAIN_WAIT_S	10	/* the agent drains every 20 ms */
#define RUNS_MAX	99

typedef int	(*getsbuf_fn)(void);

struct run {
	double	 inst_ns;	/* per instrumented call */
	double	 direct_ns;	/* per direct call */
	double	 clock_ns;	/* per clock_gettime(CLOCK_REALTIME) */
	double	 tsc_ns;	/* per rdtsc (tsc_read) */
	double	 event_ns;	/* (inst - direct) / 2 */
};

static int	 verbose;

static void
die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench_event: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	pvm_exit();
	exit(1);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * The ring the instrumentation library made for this process: the memfd
 * it named "pmon-ring".  Only its header is mapped, read-only.
 */
static const struct ring_hdr *
own_ring(void)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	void *p = MAP_FAILED;
	ssize_t n;
	DIR *d;
	int fd;

	if ((d = opendir("/proc/self/fd")) == NULL)
		die("/proc/self/fd: %s", strerror(errno));
	while (p == MAP_FAILED && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:pmon-ring", 16) != 0)
			continue;
		fd = atoi(de->d_name);
		p = mmap(NULL, RING_HDR_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	}
	closedir(d);
	if (p == MAP_FAILED)
		die("no pmon ring in this process: run me under pmon exec");
	return p;
}

static uint64_t
ring_load(const _Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_acquire);
}

/* Waits until the agent consumed every record written so far. */
static void
wait_drained(const struct ring_hdr *h)
{
	uint64_t until = mono_ns() + DRAIN_WAIT_S * 1000000000ULL;
	struct timespec ms = { 0, 1000000 };

	while (ring_load(&h->tail) != ring_load(&h->head)) {
		if (mono_ns() > until)
			die("the agent did not drain the ring in %d s "
			    "(is pmon running?)", DRAIN_WAIT_S);
		nanosleep(&ms, NULL);
	}
}

/* The library registers the task at the end of its first recorded call
 * after it enrolled: its tid in the ring header says it did. */
static void
wait_registered(const struct ring_hdr *h)
{
	uint64_t until = mono_ns() + DRAIN_WAIT_S * 1000000000ULL;
	struct timespec ms = { 0, 1000000 };

	while (*(const volatile int32_t *)&h->tid == 0) {
		if (mono_ns() > until)
			die("the task did not register with an agent");
		(void)pvm_getsbuf();
		nanosleep(&ms, NULL);
	}
}

/* pvm_getsbuf of libpvm3 itself, not the preloaded wrapper. */
static getsbuf_fn
direct_getsbuf(void)
{
	void *lib, *fn;

	lib = dlopen("libpvm3.so.3", RTLD_LAZY | RTLD_NOLOAD);
	if (lib == NULL)
		die("libpvm3.so.3 is not loaded: %s", dlerror());
	if ((fn = dlsym(lib, "pvm_getsbuf")) == NULL)
		die("no pvm_getsbuf in libpvm3: %s", dlerror());
	if (fn == (void *)pvm_getsbuf)
		die("pvm_getsbuf is not interposed: run me under pmon exec");
	return (getsbuf_fn)fn;
}

/*
 * The timed loops.  The calls' results go to a volatile sink so that
 * the compiler keeps every one.
 */
static volatile int sink;

static uint64_t
time_instrumented(int calls)
{
	uint64_t t0 = mono_ns();
	int i;

	for (i = 0; i < calls; i++)
		sink = pvm_getsbuf();
	return mono_ns() - t0;
}

static uint64_t
time_direct(getsbuf_fn fn, int calls)
{
	uint64_t t0 = mono_ns();
	int i;

	for (i = 0; i < calls; i++)
		sink = fn();
	return mono_ns() - t0;
}

static uint64_t
time_clock(int calls)
{
	struct timespec ts;
	uint64_t t0 = mono_ns();
	int i;

	for (i = 0; i < calls; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		sink = (int)ts.tv_nsec;
	}
	return mono_ns() - t0;
}

static uint64_t
time_tsc(int calls)
{
	uint64_t t0 = mono_ns();
	int i;

	for (i = 0; i < calls; i++)
		sink = (int)tsc_read();
	return mono_ns() - t0;
}

static void
one_run(const struct ring_hdr *h, getsbuf_fn fn, int calls, int bursts,
    struct run *r)
{
	uint64_t inst = 0, direct = 0, clk = 0, tsc = 0;
	double n = (double)calls * bursts;
	int b;

	for (b = 0; b < bursts; b++) {
		wait_drained(h);
		/* Alternate the order: neither goes always first. */
		if (b & 1) {
			direct += time_direct(fn, calls);
			inst += time_instrumented(calls);
		} else {
			inst += time_instrumented(calls);
			direct += time_direct(fn, calls);
		}
		clk += time_clock(calls);
		tsc += time_tsc(calls);
	}
	r->inst_ns = (double)inst / n;
	r->direct_ns = (double)direct / n;
	r->clock_ns = (double)clk / n;
	r->tsc_ns = (double)tsc / n;
	r->event_ns = (r->inst_ns - r->direct_ns) / 2;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of n values (the lower middle one when n is even). */
static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(n - 1) / 2];
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_event [-v] [-b calls] [-n bursts] "
	    "[-r runs]\n");
	exit(2);
}

static int
arg_int(const char *s, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		usage();
	return (int)v;
}

int
main(int argc, char **argv)
{
	struct run runs[RUNS_MAX];
	double inst[RUNS_MAX], direct[RUNS_MAX], clk[RUNS_MAX], ev[RUNS_MAX];
	double tsc[RUNS_MAX];
	const struct ring_hdr *h;
	uint64_t written0, dropped0, written, dropped, expect;
	int calls = 4096, bursts = 50, nruns = 7, i, o;
	getsbuf_fn fn;

	while ((o = getopt(argc, argv, "b:n:r:v")) != -1) {
		switch (o) {
		case 'b': calls = arg_int(optarg, 1, 1 << 20); break;
		case 'n': bursts = arg_int(optarg, 1, 1 << 20); break;
		case 'r': nruns = arg_int(optarg, 1, RUNS_MAX); break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (pvm_mytid() < 0)
		die("cannot enrol in PVM");
	h = own_ring();
	if ((uint64_t)calls * 2 * 128 > h->size)
		die("%d calls per burst may not fit a ring of %u bytes",
		    calls, h->size);
	wait_registered(h);
	fn = direct_getsbuf();
	wait_drained(h);

	written0 = ring_load(&h->written);
	dropped0 = ring_load(&h->dropped);
	for (i = 0; i < nruns; i++) {
		one_run(h, fn, calls, bursts, &runs[i]);
		if (verbose)
			fprintf(stderr, "run %d: instrumented %.1f ns, direct "
			    "%.1f ns, clock %.1f ns, event %.1f ns\n", i + 1,
			    runs[i].inst_ns, runs[i].direct_ns,
			    runs[i].clock_ns, runs[i].event_ns);
		inst[i] = runs[i].inst_ns;
		direct[i] = runs[i].direct_ns;
		clk[i] = runs[i].clock_ns;
		tsc[i] = runs[i].tsc_ns;
		ev[i] = runs[i].event_ns;
	}
	written = ring_load(&h->written) - written0;
	dropped = ring_load(&h->dropped) - dropped0;
	expect = 2ULL * (uint64_t)calls * (uint64_t)bursts * (uint64_t)nruns;
	if (dropped != 0)
		die("the ring dropped %llu records: not the real path",
		    (unsigned long long)dropped);
	if (written != expect)
		die("%llu records written, expected %llu",
		    (unsigned long long)written, (unsigned long long)expect);

	fprintf(stderr, "bench_event: %d runs of %d x %d calls, %llu records,"
	    " 0 dropped; medians: instrumented call %.1f ns, direct call "
	    "%.1f ns, clock_gettime(CLOCK_REALTIME) %.1f ns, rdtsc %.1f ns; "
	    "the task's records carry %s\n", nruns, bursts, calls,
	    (unsigned long long)written, median(inst, nruns),
	    median(direct, nruns), median(clk, nruns), median(tsc, nruns),
	    h->clock == RING_CLOCK_TSC ? "TSC ticks" : "CLOCK_REALTIME ns");
	printf("event ns_per_event=%.1f\n", median(ev, nruns));
	pvm_exit();
	return 0;
}
