/*
 * bench_stop: how fast a breakpoint stops the task that hits it, and the
 * other tasks its "stop" action names (doc/control.md).
 *
 * A libpmon tool, run by bench/bench_stop.sh against a program running
 * under `pmon exec` (pingpong).  It subscribes, sets one conditional
 * request (by default "on enter pvm_send tag 3 do stop *": every pong),
 * and for every hit:
 *
 *  - t_hit is the t_ns of the BREAK event (CLOCK_REALTIME, taken by the
 *    task in bp_stop() before it writes the record);
 *  - a poller thread reads /proc/PID/stat of every task of the stream
 *    in a loop (pread on open files) and notes, for each task, the
 *    CLOCK_REALTIME of the first sample that shows it stopped ('T' or
 *    't') after it last ran, and of the sample before (the bracket: the
 *    stop happened in between, so the times are upper bounds by at most
 *    one pass over the tasks).  It runs from before the continue until
 *    every task ran and stopped again, and sleeps while they wait;
 *  - once the "stopped" notice of the breakpoint came (the coordinator
 *    saw every target stopped), own_us is the hitting task's first
 *    stopped sample minus t_hit, and others_us the same for each other
 *    task the notice names;
 *  - then "continue *" (the stops belong to this tool) and the next hit.
 *
 *	bench_stop [-Iv] [-n hits] [-w warmup] [-T tasks] [-t secs]
 *	    [-r request] [-R readyfile]
 *
 * -n: hits to measure (200); -w: hits to skip first (5); -T: a hit counts
 * only when the stop notice names this many tasks (the hitting one too;
 * 0: any); -t: give up when no hit comes for this long (10 s); -R: a file
 * created once the breakpoint is set; -I: the poller runs SCHED_IDLE
 * instead of at normal priority; -v: one line per hit on stderr.
 *
 * The stream tasks' pids are the kernel's (the agent's SO_PEERCRED), so
 * the program must run on this host.  Only the thread group leader's
 * state is read: right for single-threaded PVM programs.
 *
 * The details go to stderr: besides own and others, when the last other
 * task stopped, when the "stopped" notice and the BREAK event reached
 * this tool, the brackets and the continue's round trip, each as p50,
 * p90, p99 and max (nearest rank).  The only line on stdout is
 *	stop own_us_p50=A others_us_p50=B others_us_p99=C
 * Leaving (or dying) disconnects: the coordinator then deletes the
 * breakpoint and continues the tasks this tool stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "pmon.h"

#define MAXSLOTS	64
#define FLUSH_AFTER_MS	20	/* BREAK event not there yet: flush */
#define SETTLE_MS	1000	/* the poller must see every stop by then */

/*
 * One task, polled.  The main thread fills tid and pid, then publishes
 * the slot by raising nslots; the poller owns fd, last and t_last, and
 * publishes every stop by raising nstops after t_stop and t_lo.
 */
struct slot {
	int32_t			tid;
	pid_t			pid;
	int			fd;		/* -1: not open yet, -2: gone */
	char			last;
	int			ran;		/* seen running since armed */
	uint64_t		t_last;
	_Atomic uint64_t	t_stop;		/* first stopped sample */
	_Atomic uint64_t	t_lo;		/* the running sample before */
	_Atomic uint64_t	nstops;
};

static struct slot	 slots[MAXSLOTS];
static _Atomic unsigned	 nslots;
/* The poller waits on poll_cond while every task is stopped. */
static pthread_mutex_t	 poll_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 poll_cond = PTHREAD_COND_INITIALIZER;
static atomic_int	 poll_quit;
static atomic_int	 poll_armed = 1;	/* poll (else wait) */
static atomic_int	 poll_awake = 1;	/* it polls now */
static atomic_uint	 poll_epoch;	/* one more at every arming */
static _Atomic uint64_t	 poll_reads;	/* /proc reads... */
static _Atomic uint64_t	 poll_ns;	/* ...and their time */

/* What arrived for the current hit. */
struct cycle {
	int		 brk;		/* the BREAK event */
	int32_t		 brk_tid;
	uint64_t	 t_hit;
	uint64_t	 t_brk_seen;
	int		 stopped;	/* the "stopped" notice */
	int32_t		 tids[MAXSLOTS];
	unsigned	 ntids;
	uint64_t	 t_notice;
	int		 extra_brk;	/* BREAKs beyond the first */
};

static struct cycle	 cy;
static uint32_t		 bp_id;
static int		 closed;

/* Samples, in microseconds. */
struct series {
	double		*v;
	size_t		 n, cap;
};

static uint64_t
now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void	fatalx(const char *, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

static void
fatalx(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench_stop: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
series_add(struct series *s, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		if ((s->v = reallocarray(s->v, s->cap, sizeof(*s->v))) == NULL)
			fatalx("out of memory");
	}
	s->v[s->n++] = v;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p of them at or below. */
static double
pct(struct series *s, double p)
{
	size_t k;

	if (s->n == 0)
		return NAN;
	qsort(s->v, s->n, sizeof(*s->v), cmp_double);
	k = (size_t)ceil(p * (double)s->n);
	return s->v[k == 0 ? 0 : k - 1];
}

static void
series_print(const char *name, struct series *s)
{
	fprintf(stderr, "bench_stop: %-14s n=%-5zu p50 %8.1f  p90 %8.1f  "
	    "p99 %8.1f  max %8.1f us\n", name, s->n, pct(s, 0.5),
	    pct(s, 0.9), pct(s, 0.99), pct(s, 1.0));
}

/* --- the poller ------------------------------------------------------------ */

/* The state letter of a /proc/PID/stat read into buf; 0 if none. */
static char
stat_letter(char *buf, ssize_t n)
{
	char *p;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2];
}

static int
is_stopped(char c)
{
	return c == 'T' || c == 't';
}

static void
poll_slot(struct slot *s)
{
	char path[64], buf[1024], c;
	uint64_t t0, t;
	ssize_t n;

	if (s->fd == -2)
		return;
	if (s->fd == -1) {
		snprintf(path, sizeof(path), "/proc/%ld/stat", (long)s->pid);
		if ((s->fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
			s->fd = -2;
			return;
		}
	}
	t0 = now_real();
	n = pread(s->fd, buf, sizeof(buf) - 1, 0);
	t = now_real();
	atomic_fetch_add_explicit(&poll_ns, t - t0, memory_order_relaxed);
	atomic_fetch_add_explicit(&poll_reads, 1, memory_order_relaxed);
	if ((c = stat_letter(buf, n)) == 0 || c == 'Z' || c == 'X') {
		close(s->fd);
		s->fd = -2;
		return;
	}
	if (is_stopped(c) && s->last != 0 && !is_stopped(s->last)) {
		atomic_store_explicit(&s->t_stop, t, memory_order_relaxed);
		atomic_store_explicit(&s->t_lo, s->t_last,
		    memory_order_relaxed);
		atomic_fetch_add_explicit(&s->nstops, 1, memory_order_release);
	}
	if (!is_stopped(c))
		s->ran = 1;
	s->last = c;
	s->t_last = t;
}

/*
 * Once every task ran and stopped again since the arming of epoch, the
 * hit is complete as far as polling goes: the poller disarms itself, so
 * that it does not take a core from the agent and the coordinator while
 * they finish the stop.  Under the mutex: a new arming wins.
 */
static void
poll_done(unsigned n, unsigned epoch)
{
	unsigned i, live = 0;

	for (i = 0; i < n; i++) {
		if (slots[i].fd == -2)
			continue;
		if (!slots[i].ran || !is_stopped(slots[i].last))
			return;
		live++;
	}
	if (live == 0)
		return;
	pthread_mutex_lock(&poll_mtx);
	if (atomic_load(&poll_epoch) == epoch)
		atomic_store(&poll_armed, 0);
	pthread_mutex_unlock(&poll_mtx);
}

static void *
poller(void *arg)
{
	struct sched_param sp = { .sched_priority = 0 };
	unsigned i, n, epoch = 0;

	if (*(int *)arg &&
	    pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
		fprintf(stderr, "bench_stop: SCHED_IDLE refused; normal "
		    "priority\n");
	while (!atomic_load_explicit(&poll_quit, memory_order_relaxed)) {
		if (!atomic_load_explicit(&poll_armed, memory_order_relaxed)) {
			/* No core burnt while every task waits. */
			pthread_mutex_lock(&poll_mtx);
			atomic_store(&poll_awake, 0);
			while (!atomic_load(&poll_armed) &&
			    !atomic_load(&poll_quit))
				pthread_cond_wait(&poll_cond, &poll_mtx);
			atomic_store(&poll_awake, 1);
			pthread_mutex_unlock(&poll_mtx);
			continue;
		}
		n = atomic_load_explicit(&nslots, memory_order_acquire);
		if (atomic_load(&poll_epoch) != epoch) {
			epoch = atomic_load(&poll_epoch);
			for (i = 0; i < n; i++)
				slots[i].ran = 0;
		}
		for (i = 0; i < n; i++)
			poll_slot(&slots[i]);
		poll_done(n, epoch);
	}
	return NULL;
}

static struct slot *
slot_of(int32_t tid)
{
	unsigned i, n = atomic_load_explicit(&nslots, memory_order_acquire);

	for (i = 0; i < n; i++)
		if (slots[i].tid == tid)
			return &slots[i];
	return NULL;
}

/* Where every task is, for a hit that does not come. */
static void
dump_tasks(const uint64_t *base)
{
	char path[64], buf[1024];
	unsigned i, n = atomic_load(&nslots);
	ssize_t len;
	int fd;

	fprintf(stderr, "bench_stop: this hit: BREAK event %s, stopped "
	    "notice %s\n", cy.brk ? "seen" : "not seen",
	    cy.stopped ? "seen" : "not seen");
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%ld/stat",
		    (long)slots[i].pid);
		len = -1;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
			len = read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		fprintf(stderr, "bench_stop: t%x pid %ld: state %c, %llu "
		    "stops seen, %llu since the continue\n",
		    (unsigned)slots[i].tid, (long)slots[i].pid,
		    len > 0 ? stat_letter(buf, len) : '-',
		    (unsigned long long)atomic_load(&slots[i].nstops),
		    (unsigned long long)(atomic_load(&slots[i].nstops) -
		    base[i]));
	}
}

/* --- libpmon callbacks ------------------------------------------------------- */

static void
on_task(const struct pmon_task *t, void *arg)
{
	unsigned n = atomic_load_explicit(&nslots, memory_order_relaxed);

	(void)arg;
	if (t->pid == 0 || strcmp(t->program, "pvmgs") == 0 ||
	    slot_of(t->tid) != NULL)
		return;
	if (n == MAXSLOTS) {
		fprintf(stderr, "bench_stop: more than %d tasks; t%x not "
		    "polled\n", MAXSLOTS, (unsigned)t->tid);
		return;
	}
	slots[n].tid = t->tid;
	slots[n].pid = (pid_t)t->pid;
	slots[n].fd = -1;
	atomic_store_explicit(&nslots, n + 1, memory_order_release);
}

static void
on_event(const struct pmon_event *ev, void *arg)
{
	(void)arg;
	if (strcmp(ev->call_name, "break") != 0 || (uint32_t)ev->inst != bp_id)
		return;
	if (cy.brk) {
		cy.extra_brk++;
		return;
	}
	cy.brk = 1;
	cy.brk_tid = ev->tid;
	cy.t_hit = ev->t_ns;
	cy.t_brk_seen = now_real();
}

static void
on_notice(const char *json, size_t len, void *arg)
{
	json_t *o, *tasks, *v;
	json_error_t err;
	const char *kind;
	size_t i;

	(void)arg;
	if ((o = json_loadb(json, len, 0, &err)) == NULL) {
		fprintf(stderr, "bench_stop: bad notice: %s\n", err.text);
		return;
	}
	kind = json_string_value(json_object_get(o, "notice"));
	if (kind != NULL && strcmp(kind, "stopped") == 0 && !cy.stopped &&
	    json_integer_value(json_object_get(o, "breakpoint")) ==
	    (json_int_t)bp_id) {
		tasks = json_object_get(o, "tasks");
		cy.ntids = 0;
		json_array_foreach(tasks, i, v)
			if (cy.ntids < MAXSLOTS)
				cy.tids[cy.ntids++] =
				    (int32_t)json_integer_value(v);
		cy.t_notice = now_real();
		cy.stopped = 1;
	}
	json_decref(o);
}

static void
on_bye(const char *reason, void *arg)
{
	(void)arg;
	closed = 1;
	fprintf(stderr, "bench_stop: the coordinator said bye: %s\n", reason);
}

/* --- main ---------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: bench_stop [-Iv] [-n hits] [-w warmup] "
	    "[-T tasks] [-t secs] [-r request] [-R readyfile]\n");
	exit(2);
}

static long
num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0' || end == s || v < lo || v > hi)
		usage();
	return v;
}

static double
us(uint64_t later, uint64_t earlier)
{
	return ((double)later - (double)earlier) / 1000.0;
}

/* Continues everything this tool stopped; the reply must say so. */
static uint64_t
cont(struct pmon *p)
{
	uint64_t t0 = now_real();
	json_t *o, *v;
	json_error_t err;
	const char *st;
	char *reply;
	size_t len, i;

	if (pmon_request(p, "continue *", PMON_JSON, &reply, &len) == -1)
		fatalx("continue: %s", pmon_error(p));
	if ((o = json_loadb(reply, len, 0, &err)) == NULL)
		fatalx("continue: bad reply: %s", reply);
	json_array_foreach(json_object_get(o, "results"), i, v) {
		st = json_string_value(json_object_get(v, "status"));
		if (st == NULL || strcmp(st, "continued") != 0)
			fprintf(stderr, "bench_stop: continue: %s\n", reply);
	}
	json_decref(o);
	free(reply);
	return now_real() - t0;
}

/* Every series this tool measures, in microseconds. */
struct results {
	struct series	 own;		/* the hitting task stopped */
	struct series	 others;	/* each other task stopped */
	struct series	 last;		/* the last of them */
	struct series	 notice;	/* the "stopped" notice came */
	struct series	 seen;		/* the BREAK event came */
	struct series	 bracket;	/* first stopped sample - the one before */
	struct series	 cont;		/* "continue *" round trip */
	long		 hits, skipped, discarded, flushes, extra;
	const char	*why[8];	/* why hits were discarded... */
	long		 nwhy[8];	/* ...and how often */
};

/* Waits for the BREAK event and the "stopped" notice of the next hit. */
static void
wait_hit(struct pmon *p, struct results *r, const uint64_t *base, long secs)
{
	uint64_t deadline = now_real() + (uint64_t)secs * 1000000000ULL;
	int flushed = 0;

	while (!(cy.brk && cy.stopped)) {
		if (closed || pmon_wait(p, 5) == -1)
			fatalx("%s", pmon_error(p));
		if (now_real() > deadline) {
			dump_tasks(base);
			fatalx("no hit for %ld s after %ld measured (did the "
			    "program end?)", secs, r->hits);
		}
		if (cy.stopped && !cy.brk && !flushed &&
		    now_real() - cy.t_notice > FLUSH_AFTER_MS * 1000000ULL) {
			/* The stream would release it later: make it go. */
			if (pmon_flush(p) == -1)
				fatalx("flush: %s", pmon_error(p));
			flushed = 1;
			r->flushes++;
		}
	}
}

/*
 * Has the poller seen each task the notice names stop since the
 * continue (base: the counts then)?  Waits for it a while: the
 * coordinator may have seen a stop before the poller did.
 */
static int
stops_seen(const uint64_t *base)
{
	uint64_t deadline = now_real() + SETTLE_MS * 1000000ULL;
	struct slot *s;
	unsigned i;

	for (;;) {
		for (i = 0; i < cy.ntids; i++)
			if ((s = slot_of(cy.tids[i])) == NULL ||
			    atomic_load_explicit(&s->nstops,
			    memory_order_acquire) == base[s - slots])
				break;
		if (i == cy.ntids)
			return 1;
		if (now_real() > deadline)
			return 0;
		usleep(100);
	}
}

/* Why this hit cannot be measured, or NULL. */
static const char *
hit_unusable(const uint64_t *base, unsigned ntasks)
{
	struct slot *h = slot_of(cy.brk_tid);
	unsigned i;

	if (h == NULL)
		return "the hitting task is not known";
	if (ntasks != 0 && cy.ntids != ntasks)
		return "the notice names another number of tasks";
	for (i = 0; i < cy.ntids; i++)
		if (slot_of(cy.tids[i]) == h)
			break;
	if (i == cy.ntids)
		return "the notice does not name the hitting task";
	if (!stops_seen(base))
		return "the poller did not see every stop";
	for (i = 0; i < cy.ntids; i++)
		if (atomic_load(&slot_of(cy.tids[i])->t_stop) < cy.t_hit)
			return "a stop seen before the hit";
	return NULL;
}

static void
hit_record(struct results *r, int verbose)
{
	struct slot *h = slot_of(cy.brk_tid), *s;
	uint64_t t, tmax = 0;
	unsigned i;

	if (verbose)
		fprintf(stderr, "bench_stop: hit %ld t%x own %.1f others",
		    r->hits, (unsigned)cy.brk_tid,
		    us(atomic_load(&h->t_stop), cy.t_hit));
	for (i = 0; i < cy.ntids; i++) {
		s = slot_of(cy.tids[i]);
		t = atomic_load(&s->t_stop);
		series_add(&r->bracket, us(t, atomic_load(&s->t_lo)));
		if (s == h) {
			series_add(&r->own, us(t, cy.t_hit));
			continue;
		}
		series_add(&r->others, us(t, cy.t_hit));
		if (t > tmax)
			tmax = t;
		if (verbose)
			fprintf(stderr, " %.1f", us(t, cy.t_hit));
	}
	if (tmax != 0)
		series_add(&r->last, us(tmax, cy.t_hit));
	series_add(&r->notice, us(cy.t_notice, cy.t_hit));
	series_add(&r->seen, us(cy.t_brk_seen, cy.t_hit));
	if (verbose)
		fprintf(stderr, " notice %.1f us\n", us(cy.t_notice, cy.t_hit));
	r->hits++;
}

/* Wakes the poller (1) or lets it wait (0). */
static void
poll_arm(int on)
{
	pthread_mutex_lock(&poll_mtx);
	if (on)
		atomic_fetch_add(&poll_epoch, 1);
	atomic_store(&poll_armed, on);
	pthread_cond_signal(&poll_cond);
	pthread_mutex_unlock(&poll_mtx);
}

/*
 * Notes the stop counts, has the poller running and continues every
 * task: the poller must see each task run before it stops again.
 */
static void
next_hit(struct pmon *p, struct results *r, uint64_t *base)
{
	uint64_t deadline;
	unsigned i, n;

	memset(&cy, 0, sizeof(cy));
	n = atomic_load(&nslots);
	for (i = 0; i < MAXSLOTS; i++)
		base[i] = i < n ? atomic_load(&slots[i].nstops) : 0;
	poll_arm(1);
	deadline = now_real() + SETTLE_MS * 1000000ULL;
	while (!atomic_load(&poll_awake))
		if (now_real() > deadline)
			fatalx("the poller does not wake up");
		else
			sched_yield();
	series_add(&r->cont, (double)cont(p) / 1000.0);
}

static void
report(struct results *r, int idle)
{
	uint64_t reads = atomic_load(&poll_reads);
	unsigned i;

	fprintf(stderr, "bench_stop: %ld hits measured, %ld warm-up, %ld "
	    "discarded, %ld extra BREAKs; %ld flushes for a BREAK event\n",
	    r->hits, r->skipped, r->discarded, r->extra, r->flushes);
	for (i = 0; i < 8 && r->why[i] != NULL; i++)
		fprintf(stderr, "bench_stop: discarded %ld: %s\n", r->nwhy[i],
		    r->why[i]);
	fprintf(stderr, "bench_stop: poller (%s): %u tasks, %.2f us per "
	    "/proc/PID/stat read\n", idle ? "SCHED_IDLE" : "normal priority",
	    atomic_load(&nslots), reads ? (double)atomic_load(&poll_ns) /
	    1000.0 / (double)reads : 0.0);
	series_print("own_us", &r->own);
	series_print("others_us", &r->others);
	series_print("all_stopped_us", &r->last);
	series_print("notice_us", &r->notice);
	series_print("break_event_us", &r->seen);
	series_print("bracket_us", &r->bracket);
	series_print("continue_us", &r->cont);
	printf("stop own_us_p50=%.1f others_us_p50=%.1f others_us_p99=%.1f\n",
	    pct(&r->own, 0.5), pct(&r->others, 0.5), pct(&r->others, 0.99));
	fflush(stdout);
}

int
main(int argc, char *argv[])
{
	struct pmon_callbacks cb = { .task = on_task, .event = on_event,
	    .notice = on_notice, .bye = on_bye };
	struct results r;
	const char *request = "on enter pvm_send tag 3 do stop *";
	const char *ready = NULL, *why;
	uint64_t base[MAXSLOTS] = { 0 };
	unsigned i, ntasks = 0;
	long hits = 200, warmup = 5, secs = 10;
	int ch, fd, idle = 0, verbose = 0;
	pthread_t th;
	struct pmon *p;
	json_t *o;
	json_error_t err;
	char *reply;
	size_t len;

	while ((ch = getopt(argc, argv, "In:r:R:t:T:vw:")) != -1) {
		switch (ch) {
		case 'I':
			idle = 1;
			break;
		case 'n':
			hits = num(optarg, 1, 1000000);
			break;
		case 'r':
			request = optarg;
			break;
		case 'R':
			ready = optarg;
			break;
		case 't':
			secs = num(optarg, 1, 3600);
			break;
		case 'T':
			ntasks = (unsigned)num(optarg, 0, MAXSLOTS);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'w':
			warmup = num(optarg, 0, 1000000);
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	memset(&r, 0, sizeof(r));

	if ((p = pmon_new()) == NULL)
		fatalx("out of memory");
	pmon_set_callbacks(p, &cb, NULL);
	if (pmon_connect(p, NULL, "bench-stop", PMON_SUBSCRIBE) == -1)
		fatalx("connect: %s", pmon_error(p));
	if (pmon_request(p, request, PMON_JSON, &reply, &len) == -1)
		fatalx("%s: %s", request, pmon_error(p));
	if ((o = json_loadb(reply, len, 0, &err)) == NULL ||
	    (bp_id = (uint32_t)json_integer_value(json_object_get(o,
	    "id"))) == 0)
		fatalx("%s: unexpected reply %s", request, reply);
	json_decref(o);
	free(reply);
	fprintf(stderr, "bench_stop: breakpoint %u: %s\n", bp_id, request);
	if (pthread_create(&th, NULL, poller, &idle) != 0)
		fatalx("pthread_create failed");
	if (ready != NULL) {
		if ((fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0644)) == -1)
			fatalx("%s: %s", ready, strerror(errno));
		close(fd);
	}

	for (;;) {
		wait_hit(p, &r, base, secs);
		why = r.skipped < warmup ? "warm-up" :
		    hit_unusable(base, ntasks);
		poll_arm(0);
		r.extra += cy.extra_brk;
		if (why == NULL)
			hit_record(&r, verbose);
		else if (r.skipped < warmup)
			r.skipped++;
		else {
			r.discarded++;
			for (i = 0; i < 8 && r.why[i] != NULL &&
			    r.why[i] != why; i++)
				;
			if (i < 8) {
				r.why[i] = why;
				r.nwhy[i]++;
			}
			if (verbose) {
				fprintf(stderr, "bench_stop: hit of t%x "
				    "discarded: %s\n", (unsigned)cy.brk_tid,
				    why);
				dump_tasks(base);
			}
		}
		if (r.hits == hits)
			break;
		next_hit(p, &r, base);
	}
	atomic_store(&poll_quit, 1);
	poll_arm(0);
	pthread_join(th, NULL);
	report(&r, idle);
	/* Disconnecting deletes the breakpoint and continues the tasks. */
	pmon_free(p);
	free(r.own.v);
	free(r.others.v);
	free(r.last.v);
	free(r.notice.v);
	free(r.seen.v);
	free(r.bracket.v);
	free(r.cont.v);
	return 0;
}
