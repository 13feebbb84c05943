/*
 * bench_merge: the ordering core's throughput on one core.
 *
 * The simulator (tests/sim) generates a long execution of 64 tasks on 8
 * hosts and delivers it as the agents would; the coordinator's actions
 * are recorded once, and every record is encoded in memory ahead of
 * time.  The timed runs then replay the actions: record_decode and
 * order_add for every record, task registrations and ends, flush rounds,
 * with a CLOCK_CLC clock, as pmon-coordd does.  Generation is not timed.
 *
 * Beside it, on the same per-host streams, a plain timestamp merge (each
 * batch sorted by raw time, the smallest head of all hosts released while
 * every live host has something) shows how many messages a merge by raw
 * host clocks draws backwards.
 *
 *	bench_merge [-GPq] [-r runs] [-s scale] [-S seed] [-T budget_s]
 *
 * The recording run (untimed) has a budget (-T, 120 s by default): a
 * core that cannot order the input in that time stops the bench, which
 * reports what it did so far (and exits 1).
 * -G replaces the group application by an 11-task ring, to tell the
 * group model's cost from the rest.
 *
 * The group application's requests go to an instrumented group server,
 * pvmgs, whose records give the order the group calls took effect in.
 * The same execution is then measured again without it (the order
 * guesses from the calls' times, as with an uninstrumented pvmgs), on a
 * line of its own; -P measures only that.
 *
 * Last line: merge events_per_s=N window_mean=X window_max=Y
 *	      backward_pmon=N backward_tsmerge_pct=P
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "order.h"
#include "proto.h"
#include "record.h"
#include "sim.h"
#include "siminput.h"

#define NHOSTS		8
#define SAMPLE_EVERY	4096

static void	fatalx(const char *) __attribute__((noreturn));

static void
fatalx(const char *what)
{
	bench_fatal("bench_merge", what);
}

static void
count_cb(const struct order_event *ev, void *arg)
{
	(void)ev;
	(*(uint64_t *)arg)++;
}

/* --- the window, and pmon's backward messages (untimed) ---------------- */

struct wcheck {
	const struct sim_input *in;
	uint64_t	*released;	/* last seq released per task */
	uint64_t	 backward, messages, events;
	double		 held_sum;
	uint64_t	 samples;
	size_t		 task_max;
	size_t		 max_task;	/* the task that held the most */
	uint64_t	 max_next;	/* its first held record then */
};

static void
check_cb(const struct order_event *ev, void *arg)
{
	struct wcheck *w = arg;
	const struct sim *s = w->in->s;
	long ti = sim_task_index(s, ev->tid);
	const struct sim_rec *r;
	const struct sim_msg *m;

	w->events++;
	if (ti < 0)
		return;
	w->released[ti] = ev->rec->seq;
	if (ev->flags & EVENT_LOST)
		return;
	r = &sim_task(s, (size_t)ti)->recs[ev->rec->seq - 1];
	if (r->msg == 0 || r->call == PMON_CALL_probe)
		return;
	m = sim_msg(s, r->msg - 1);
	if (m->src == UINT32_MAX)
		return;
	w->messages++;
	if (w->released[m->src] < (uint64_t)m->send_rec + 1)
		w->backward++;
}

static void
sample_cb(struct order *o, void *arg)
{
	struct wcheck *w = arg;
	struct order_stats st;
	size_t i;

	memset(&st, 0, sizeof(st));
	order_stats(o, &st);
	if (st.tasks > 0) {
		w->held_sum += (double)st.held / (double)st.tasks;
		w->samples++;
	}
	for (i = 0; i < w->in->ntasks; i++) {
		memset(&st, 0, sizeof(st));
		if (order_task_stats(o, w->in->tids[i], &st) == 0 &&
		    st.held > w->task_max) {
			w->task_max = st.held;
			w->max_task = i;
			w->max_next = w->released[i] + 1;
		}
	}
}

/* --- the plain timestamp merge ------------------------------------------ */

struct tsrec {
	uint64_t	t_ns;
	uint32_t	task;
	uint32_t	rec;
};

struct hq {
	struct tsrec	*q;
	size_t		 head, n, cap;
	int		 live;		/* tasks registered and not ended */
};

struct tsmerge {
	const struct sim *s;
	struct hq	 hq[NHOSTS];
	uint64_t	*released;
	uint64_t	 backward, messages;
};

static int
tsrec_cmp(const void *a, const void *b)
{
	const struct tsrec *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return (x->task > y->task) - (x->task < y->task);
}

static void
ts_emit(struct tsmerge *m, const struct tsrec *r)
{
	const struct sim_rec *g = &sim_task(m->s, r->task)->recs[r->rec];
	const struct sim_msg *msg;

	m->released[r->task] = r->rec + 1;
	if (g->msg == 0 || g->call == PMON_CALL_probe)
		return;
	msg = sim_msg(m->s, g->msg - 1);
	if (msg->src == UINT32_MAX)
		return;
	m->messages++;
	if (m->released[msg->src] < (uint64_t)msg->send_rec + 1)
		m->backward++;
}

/* Releases the smallest head while every live host has one (or all). */
static void
ts_drain(struct tsmerge *m, int all)
{
	struct hq *h, *best;
	int i;

	for (;;) {
		best = NULL;
		for (i = 0; i < NHOSTS; i++) {
			h = &m->hq[i];
			if (h->n == 0) {
				if (h->live > 0 && !all)
					return;
				continue;
			}
			if (best == NULL ||
			    h->q[h->head].t_ns < best->q[best->head].t_ns)
				best = h;
		}
		if (best == NULL)
			return;
		ts_emit(m, &best->q[best->head]);
		best->head++;
		if (--best->n == 0)
			best->head = 0;
	}
}

static void
hq_push(struct hq *h, const struct tsrec *r)
{
	if (h->head + h->n == h->cap) {
		if (h->head > 0) {
			memmove(h->q, h->q + h->head, h->n * sizeof(*h->q));
			h->head = 0;
		}
		if (h->n == h->cap) {
			h->cap = h->cap ? 2 * h->cap : 4096;
			if ((h->q = realloc(h->q, h->cap * sizeof(*h->q))) ==
			    NULL)
				fatalx("out of memory");
		}
	}
	h->q[h->head + h->n++] = *r;
}

/*
 * The per-host streams as the coordinator receives them: a batch is the
 * run of records of one host shipped at one moment; it is sorted by raw
 * time (one host, one clock) before it joins its host's queue.  With
 * true_time, the merge uses perfect clocks instead: what is left is the
 * delivery's doing.
 */
static void
tsmerge_run(const struct sim *s, const struct sim_script *sc, int true_time,
    uint64_t *backward, uint64_t *messages)
{
	struct tsmerge m;
	struct tsrec *batch = NULL;
	size_t nb = 0, bcap = 0, i, j, bh = 0;
	const struct sim_act *a;
	const struct sim_task *t;
	uint64_t bt = 0;

	memset(&m, 0, sizeof(m));
	m.s = s;
	if ((m.released = calloc(sim_ntasks(s), sizeof(*m.released))) ==
	    NULL)
		fatalx("out of memory");
	for (i = 0; i <= sc->n; i++) {
		a = i < sc->n ? &sc->acts[i] : NULL;
		t = a != NULL ? sim_task(s, a->task) : NULL;
		if (nb > 0 && (a == NULL || a->type != SIM_ACT_ADD ||
		    t->host != bh || a->t != bt)) {
			qsort(batch, nb, sizeof(*batch), tsrec_cmp);
			for (j = 0; j < nb; j++)
				hq_push(&m.hq[bh], &batch[j]);
			nb = 0;
			ts_drain(&m, 0);
		}
		if (a == NULL)
			break;
		switch (a->type) {
		case SIM_ACT_NEW:
			m.hq[t->host].live++;
			break;
		case SIM_ACT_END:
			m.hq[t->host].live--;
			ts_drain(&m, 0);
			break;
		case SIM_ACT_RELEASE_ALL:
			ts_drain(&m, 1);
			break;
		case SIM_ACT_ADD:
			if (nb == bcap) {
				bcap = bcap ? 2 * bcap : 4096;
				if ((batch = realloc(batch, bcap *
				    sizeof(*batch))) == NULL)
					fatalx("out of memory");
			}
			batch[nb].t_ns = true_time ? t->recs[a->rec].t_true :
			    sim_raw(s, t, &t->recs[a->rec]);
			batch[nb].task = a->task;
			batch[nb].rec = a->rec;
			nb++;
			bh = t->host;
			bt = a->t;
			break;
		default:
			break;
		}
	}
	ts_drain(&m, 1);
	*backward = m.backward;
	*messages = m.messages;
	for (i = 0; i < NHOSTS; i++)
		free(m.hq[i].q);
	free(batch);
	free(m.released);
}

/* --- main ------------------------------------------------------------------- */

/* What the task with the largest window was waiting for. */
static void
explain_max(const struct sim *s, const struct wcheck *w)
{
	const struct sim_task *t = sim_task(s, w->max_task);
	const struct sim_rec *r;
	const struct sim_msg *m;

	if (w->task_max == 0 || w->max_next > t->nrecs)
		return;
	r = &t->recs[w->max_next - 1];
	printf("largest window: t%x held %zu, waiting at seq %" PRIu64
	    " (%s %s, %.3f ms)", (unsigned)t->tid, w->task_max, w->max_next,
	    record_call_name(r->call), r->phase ? "end" : "begin",
	    r->t_true / 1e6);
	if (r->msg != 0) {
		m = sim_msg(s, r->msg - 1);
		if (m->src != UINT32_MAX)
			printf(" for t%x seq %u (sent %.3f ms, host %u)",
			    (unsigned)m->src_tid, m->send_rec + 1,
			    m->t_depart / 1e6, sim_host_number(sim_task(s,
			    m->src)->host));
	}
	printf("\n");
}

/* The true time of the last record. */
static uint64_t
sim_duration(const struct sim *s)
{
	const struct sim_task *t;
	uint64_t end = 0;
	size_t i;

	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		if (t->nrecs > 0 && t->recs[t->nrecs - 1].t_true > end)
			end = t->recs[t->nrecs - 1].t_true;
	}
	return end;
}

static size_t
group_records(const struct sim *s)
{
	const struct sim_task *t;
	size_t i, k, n = 0;

	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		for (k = 0; k < t->nrecs; k++)
			n += t->recs[k].group != 0;
	}
	return n;
}

/* The recording run: samples the window, keeps to the time budget. */
struct recorder {
	struct order	*o;
	struct wcheck	*w;
	uint64_t	 t0, budget_ns;
	size_t		 nacts;
	int		 stopped;
};

static int
record_cb(const struct sim_act *a, void *arg)
{
	struct recorder *rc = arg;

	(void)a;
	if ((rc->nacts++ % SAMPLE_EVERY) != 0)
		return 0;
	sample_cb(rc->o, rc->w);
	if (now_ns() - rc->t0 > rc->budget_ns) {
		rc->stopped = 1;
		return -1;
	}
	return 0;
}

struct opts {
	int		 runs, quiet;
	unsigned	 budget;	/* seconds */
	uint64_t	 lmin;
};

/* What one execution measured. */
struct result {
	double		 rate;		/* released events/s, the median */
	int		 stopped;	/* the recording ran out of budget */
};

static struct sim *
generate(const struct sim_params *sp, int quiet)
{
	struct sim *s;
	uint64_t t0, t1;
	long gs;

	t0 = now_ns();
	if ((s = sim_new(sp)) == NULL || sim_generate(s) == -1)
		fatalx("out of memory generating");
	t1 = now_ns();
	gs = sim_group_server(s);
	if (!quiet)
		printf("generated %zu tasks on %d hosts, %zu records (%zu of "
		    "group calls, %zu of pvmgs), %zu messages, %.1f ms of "
		    "simulated time, in %.1f s\n", sim_ntasks(s), NHOSTS,
		    sim_total_records(s), group_records(s),
		    gs < 0 ? 0 : sim_task(s, (size_t)gs)->nrecs, sim_nmsgs(s),
		    sim_duration(s) / 1e6, (t1 - t0) / 1e9);
	return s;
}

/*
 * Records what the coordinator does (flush rounds ask the core),
 * sampling the window into w and checking pmon's order on the way.
 * Returns -1 when the core was too slow for the budget, with what it did
 * so far in w and the untimed rate in *rate.
 */
static int
record_script(struct sim *s, struct sim_script *script, const struct opts *op,
    struct wcheck *w, double *rate)
{
	struct recorder rec;
	struct sim_input in;
	struct clock *clk;
	struct order *o;
	const char *why = NULL;
	double elapsed;
	size_t i;

	memset(w, 0, sizeof(*w));
	memset(&in, 0, sizeof(in));
	w->in = &in;
	in.s = s;
	in.ntasks = sim_ntasks(s);
	if ((in.tids = calloc(in.ntasks, sizeof(*in.tids))) == NULL ||
	    (w->released = calloc(in.ntasks, sizeof(*w->released))) == NULL)
		fatalx("out of memory");
	for (i = 0; i < in.ntasks; i++)
		in.tids[i] = sim_task(s, i)->tid;
	o = sim_order_clc(check_cb, w, &clk, op->lmin);
	memset(&rec, 0, sizeof(rec));
	rec.o = o;
	rec.w = w;
	rec.budget_ns = (uint64_t)op->budget * 1000000000ULL;
	rec.t0 = now_ns();
	if (sim_deliver(s, o, script, record_cb, &rec, &why) == -1 &&
	    !rec.stopped)
		fatalx(why);
	elapsed = (now_ns() - rec.t0) / 1e9;
	order_free(o);
	clock_free(clk);
	free(in.tids);
	w->in = NULL;
	*rate = (double)w->events / elapsed;
	return rec.stopped ? -1 : 0;
}

/* Times runs of the recorded actions; the median rate. */
static double
timed_runs(const struct sim *s, const struct sim_script *script,
    const struct opts *op, uint64_t released)
{
	struct sim_input in;
	struct clock *clk;
	struct order *o;
	double rates[32];
	uint64_t t0, t1, spent = 0;
	int i, done = 0;

	sim_input_prepare(&in, s, script);
	if (!op->quiet)
		printf("script: %zu actions, %zu records (%.1f MB encoded), %"
		    PRIu64 " events released\n", in.nops, in.nrecords,
		    in.buflen / 1e6, released);
	for (i = 0; i < op->runs && (i == 0 || spent <
	    (uint64_t)op->budget * 1000000000ULL); i++) {
		uint64_t n = 0;

		o = sim_order_clc(count_cb, &n, &clk, op->lmin);
		t0 = now_ns();
		sim_input_play(&in, o, NULL);
		t1 = now_ns();
		order_free(o);
		clock_free(clk);
		spent += t1 - t0;
		rates[done++] = (double)n / ((double)(t1 - t0) / 1e9);
		if (!op->quiet)
			printf("run %d: %" PRIu64 " events in %.3f s: "
			    "%.0f events/s\n", i + 1, n, (t1 - t0) / 1e9,
			    rates[i]);
	}
	sim_input_free(&in);
	qsort(rates, (size_t)done, sizeof(*rates), cmp_double);
	return rates[done / 2];
}

/* Records, then times, one execution. */
static void
measure(struct sim *s, struct sim_script *script, const struct opts *op,
    struct wcheck *w, struct result *res)
{
	memset(res, 0, sizeof(*res));
	if (record_script(s, script, op, w, &res->rate) == -1) {
		res->stopped = 1;
		printf("bench_merge: stopped after the %u s budget: the core "
		    "released %" PRIu64 " of %zu events (%.0f events/s "
		    "recording, untimed rate)\n", op->budget, w->events,
		    sim_total_records(s), res->rate);
		return;
	}
	res->rate = timed_runs(s, script, op, w->events);
}

static double
window_mean(const struct wcheck *w)
{
	return w->samples ? w->held_sum / (double)w->samples : 0.0;
}

/*
 * The same execution with an uninstrumented pvmgs: the application
 * runs as it did (the server draws its own random numbers).
 */
static int
measure_without_server(const struct sim_params *with, const struct opts *op)
{
	struct sim_script script = { NULL, 0, 0 };
	struct sim_params sp = *with;
	struct result res;
	struct wcheck w;
	struct sim *s;

	sp.gs_server = 0;
	if (!op->quiet)
		printf("the same without pvmgs's records (-P):\n");
	s = generate(&sp, op->quiet);
	measure(s, &script, op, &w, &res);
	printf("without pvmgs: events_per_s=%.0f window_mean=%.2f "
	    "window_max=%zu backward_pmon=%" PRIu64 "\n", res.rate,
	    window_mean(&w), w.task_max, w.backward);
	free(w.released);
	sim_script_free(&script);
	sim_free(s);
	return w.backward == 0 && !res.stopped ? 0 : -1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_merge [-GPq] [-r runs] [-s scale] "
	    "[-S seed] [-T budget_s]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct sim_params sp;
	struct sim_script script = { NULL, 0, 0 };
	struct result res;
	struct opts op;
	struct wcheck w;
	struct sim *s;
	uint64_t ts_back = 0, ts_msgs = 0, seed = 1;
	int ch, no_groups = 0, no_server = 0, bad = 0;
	unsigned scale = 2000;

	memset(&op, 0, sizeof(op));
	op.runs = 5;
	op.budget = 120;
	while ((ch = getopt(argc, argv, "GPqr:s:S:T:")) != -1) {
		switch (ch) {
		case 'G':
			no_groups = 1;
			break;
		case 'P':
			no_server = 1;
			break;
		case 'q':
			op.quiet = 1;
			break;
		case 'r':
			op.runs = atoi(optarg);
			break;
		case 's':
			scale = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'T':
			op.budget = (unsigned)strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || op.runs < 1 || op.runs > 32)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	pin_one_core();
	sim_params_default(&sp);
	sp.seed = seed;
	sp.scenario = SIM_BENCH;
	sp.nhosts = NHOSTS;
	sp.scale = scale;
	sp.kills = 0;
	sp.no_groups = no_groups;
	sp.gs_server = !no_server;
	op.lmin = sp.lmin_ns;
	s = generate(&sp, op.quiet);
	measure(s, &script, &op, &w, &res);
	tsmerge_run(s, &script, 0, &ts_back, &ts_msgs);
	if (!op.quiet) {
		uint64_t b, m;

		tsmerge_run(s, &script, 1, &b, &m);
		printf("timestamp merge with perfect clocks: %" PRIu64
		    " of %" PRIu64 " messages backwards (%.2f%%)\n", b, m,
		    m ? 100.0 * (double)b / (double)m : 0.0);
		printf("pmon: %" PRIu64 " messages received, %" PRIu64
		    " drawn backwards\n", w.messages, w.backward);
		printf("timestamp merge: %" PRIu64 " messages received, %"
		    PRIu64 " drawn backwards\n", ts_msgs, ts_back);
		explain_max(s, &w);
	}
	bad = w.backward != 0 || res.stopped;
	if (sim_group_server(s) >= 0 && !res.stopped) {
		sim_script_free(&script);
		sim_free(s);
		s = NULL;
		bad |= measure_without_server(&sp, &op) == -1;
	}
	printf("merge events_per_s=%.0f window_mean=%.2f window_max=%zu "
	    "backward_pmon=%" PRIu64 " backward_tsmerge_pct=%.2f\n",
	    res.rate, window_mean(&w), w.task_max, w.backward,
	    ts_msgs ? 100.0 * (double)ts_back / (double)ts_msgs : 0.0);
	free(w.released);
	sim_script_free(&script);
	sim_free(s);
	return bad ? 1 : 0;
}
