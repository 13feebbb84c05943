/*
 * bench_scale: the coordinator's ordering and state core against the
 * number of tasks, on one core.
 *
 * The simulator (tests/sim, scenario storm) generates a message storm
 * of N tasks on H hosts: every task, round after round, sends one
 * integer to its successor in a ring and takes one message with
 * pvm_recv(-1, tag), as tests/progs/storm.c does.  Its delivery to the
 * coordinator is recorded once (untimed), every record encoded ahead of
 * time; the timed run plays it into an order whose released events go
 * to a state model, with the task registrations, ends and flush rounds
 * (state_check after each) that pmon-coordd performs.
 *
 *	bench_scale [-q] [-t tasks] [-H hosts] [-e events] [-r runs] [-S seed]
 *
 * -e is the number of events wanted (rounded to whole rounds); the
 * storm's tasks compute about 5 us per task and round, so that whatever
 * their number the run makes some 2 M events a second and the order's
 * window stays alike: what changes is the number of tasks only.  The
 * time is the median of -r runs.  Memory is the growth of the resident
 * set over the first run, sampled every 4096 actions: what the order
 * and the model hold at their peak (the encoded input is resident
 * before the run starts).
 *
 * Last line: scale tasks=N hosts=H events=E ns_per_event=C peak_mb=M
 *	      held_max=W problems=P
 * (W: the most events the order held at once, its window.)
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "order.h"
#include "scale_tree.h"
#include "sim.h"
#include "siminput.h"
#include "state.h"

/* Records a task writes per round (initsend, pkint, send, recv, upkint). */
#define RECORDS_PER_ROUND	10

struct run {
	struct state	*state;
	uint64_t	 events, problems, ns;
	size_t		 held_max;	/* the order's window */
	uint64_t	 samples;
	long		 rss_base, rss_peak;	/* pages */
	char		 hostname[32];
};

static void	fatalx(const char *) __attribute__((noreturn));

static void
fatalx(const char *what)
{
	bench_fatal("bench_scale", what);
}

static long
rss_pages(void)
{
	long size, resident;
	FILE *f;

	if ((f = fopen("/proc/self/statm", "r")) == NULL)
		fatalx("cannot read /proc/self/statm");
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident;
}

static void
count_cb(const struct order_event *ev, void *arg)
{
	(void)ev;
	(*(uint64_t *)arg)++;
}

static void
release_cb(const struct order_event *ev, void *arg)
{
	struct run *r = arg;

	r->events++;
	state_event(r->state, ev);
}

static void
done_cb(int32_t tid, void *arg)
{
	struct run *r = arg;

	state_task_gone(r->state, tid);
}

static void
problem_cb(const struct state_problem *sp, void *arg)
{
	struct run *r = arg;

	if (r->problems++ < 5)
		fprintf(stderr, "bench_scale: problem: %s\n", sp->json);
}

static void
task_new_cb(const struct sim_input *in, size_t task, void *arg)
{
	struct run *r = arg;

	snprintf(r->hostname, sizeof(r->hostname), "h%" PRIu32,
	    in->hosts[task]);
	state_task(r->state, in->tids[task], in->parents[task], 0,
	    r->hostname, "storm");
}

static void
synced_cb(void *arg)
{
	struct run *r = arg;

	state_check(r->state);
}

static void
sample_cb(struct order *o, void *arg)
{
	struct run *r = arg;
	struct order_stats st;
	long now = rss_pages();

	/* order_stats looks at every task: not each time. */
	if (r->samples++ % 16 == 0) {
		memset(&st, 0, sizeof(st));
		order_stats(o, &st);
		if (st.held > r->held_max)
			r->held_max = st.held;
	}
	if (now > r->rss_peak)
		r->rss_peak = now;
}

/* A new state model that knows the hosts. */
static void
run_state(struct run *r, unsigned hosts)
{
	unsigned h;

	memset(r, 0, sizeof(*r));
	r->state = state_new(problem_cb, r);
	for (h = 0; h < hosts; h++) {
		snprintf(r->hostname, sizeof(r->hostname), "h%" PRIu32,
		    sim_host_number(h));
		/* Its pvmd's tid: the host field, as the tasks' tids. */
		state_host(r->state, (int32_t)(sim_host_number(h) << 18),
		    r->hostname, "LINUX64", 1);
	}
}

/*
 * Plays the input into a new order and state model, as pmon-coordd
 * would; r gets the time, the events, the problems and the memory.
 */
static void
timed_run(const struct sim_input *in, unsigned hosts, uint64_t lmin,
    struct run *r)
{
	struct sim_play_hooks hooks;
	struct clock *clk;
	struct order *o;
	uint64_t t0;

	run_state(r, hosts);
	o = sim_order_clc(release_cb, r, &clk, lmin);
	order_set_done_cb(o, done_cb, r);
	memset(&hooks, 0, sizeof(hooks));
	hooks.task_new = task_new_cb;
	hooks.synced = synced_cb;
	hooks.sample = sample_cb;
	hooks.arg = r;
	r->rss_base = r->rss_peak = rss_pages();
	t0 = now_ns();
	sim_input_play(in, o, &hooks);
	r->ns = now_ns() - t0;
	sample_cb(o, r);
	order_free(o);
	clock_free(clk);
	state_free(r->state);
}

/*
 * The same into a tree of nsub intermediates and a root, each its own
 * process (scale_tree.c), the state model at the root.
 */
static void
timed_tree(const struct sim_input *in, unsigned hosts, uint64_t lmin,
    unsigned nsub, struct run *r, struct tree_result *res)
{
	struct tree_hooks h;

	run_state(r, hosts);
	memset(&h, 0, sizeof(h));
	h.release = release_cb;
	h.done = done_cb;
	h.task_new = task_new_cb;
	h.synced = synced_cb;
	h.arg = r;
	scale_tree_play(in, nsub, lmin, &h, res);
	r->ns = res->ns;
	state_free(r->state);
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_scale [-q] [-t tasks] [-H hosts] "
	    "[-e events] [-r runs] [-S seed] [-T subtrees]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct sim_script script = { NULL, 0, 0 };
	struct sim_params sp;
	struct sim_input in;
	struct clock *clk;
	struct order *o;
	struct sim *s;
	struct run r;
	const char *why = NULL;
	uint64_t events = 1000000, released = 0, seed = 1, t0;
	unsigned tasks = 8, hosts = 2, nsub = 0;
	struct tree_result tres;
	double tns[32], ratio[32];
	int ch, i, quiet = 0, runs = 1, bad = 0;
	double mb = 0, ns[32];

	while ((ch = getopt(argc, argv, "qe:H:r:S:t:T:")) != -1) {
		switch (ch) {
		case 'q':
			quiet = 1;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'e':
			events = strtoull(optarg, NULL, 0);
			break;
		case 'H':
			hosts = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'S':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			tasks = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'T':
			nsub = (unsigned)strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || tasks < 2 || tasks > RECORD_PEERS_MAX ||
	    hosts < 1 || hosts > 4000 || events == 0 || runs < 1 ||
	    runs > 32 || nsub > hosts || nsub > 64)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	sim_params_default(&sp);
	sp.seed = seed;
	sp.scenario = SIM_STORM;
	sp.ntasks = tasks;
	sp.nhosts = hosts;
	sp.kills = 0;
	sp.notify = 0;
	sp.gs_server = 0;
	sp.scale = (unsigned)(events / tasks / RECORDS_PER_ROUND);
	if (sp.scale == 0)
		sp.scale = 1;
	t0 = now_ns();
	if ((s = sim_new(&sp)) == NULL || sim_generate(s) == -1)
		fatalx("out of memory generating");
	o = sim_order_clc(count_cb, &released, &clk, sp.lmin_ns);
	if (sim_deliver(s, o, &script, NULL, NULL, &why) == -1)
		fatalx(why);
	order_free(o);
	clock_free(clk);
	sim_input_prepare(&in, s, &script);
	sim_script_free(&script);
	if (!quiet)
		printf("storm of %u tasks on %u hosts, %u rounds: %zu records, "
		    "%zu messages, %" PRIu64 " events released; generated "
		    "and recorded in %.1f s\n", tasks, hosts, sp.scale,
		    sim_total_records(s), sim_nmsgs(s), released,
		    (now_ns() - t0) / 1e9);

	sim_free(s);

	/* The first run's growth is what the order and the model hold. */
	malloc_trim(0);
	for (i = 0; i < runs; i++) {
		if (nsub > 0) {
			/* The tree, then one coordinator, alternated. */
			timed_tree(&in, hosts, sp.lmin_ns, nsub, &r, &tres);
			tns[i] = r.events ? (double)r.ns / (double)r.events : 0;
			if (r.events != released || r.problems != 0) {
				fprintf(stderr, "bench_scale: the tree released "
				    "%" PRIu64 " events (%" PRIu64 " problems), "
				    "one coordinator %" PRIu64 "\n", r.events,
				    r.problems, released);
				bad = 1;
			}
			if (!quiet)
				printf("run %d: tree of %u, %.0f ns per event; "
				    "CPU per event: root %.0f ns, busiest "
				    "intermediate %.0f, all %.0f; %" PRIu64
				    " rounds not judged at the root\n", i + 1,
				    nsub, tns[i], (double)tres.root_cpu_ns /
				    (double)r.events, (double)tres.sub_cpu_ns /
				    (double)r.events, (double)tres.subs_cpu_ns /
				    (double)r.events, tres.rounds_unsettled);
		}
		pin_one_core();
		timed_run(&in, hosts, sp.lmin_ns, &r);
		ns[i] = r.events ? (double)r.ns / (double)r.events : 0.0;
		if (r.events != released || r.problems != 0)
			bad = 1;
		if (i == 0)
			mb = (double)(r.rss_peak - r.rss_base) *
			    (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
		if (!quiet)
			printf("run %d: %" PRIu64 " events, %.0f ns each\n",
			    i + 1, r.events, ns[i]);
	}
	if (r.events != released)
		fprintf(stderr, "bench_scale: %" PRIu64 " events released, "
		    "%" PRIu64 " when recorded\n", r.events, released);
	if (nsub > 0) {
		for (i = 0; i < runs; i++)
			ratio[i] = ns[i] / tns[i];
		qsort(ratio, (size_t)runs, sizeof(ratio[0]), cmp_double);
		qsort(tns, (size_t)runs, sizeof(tns[0]), cmp_double);
		printf("scale tree tasks=%u hosts=%u subtrees=%u ns_per_event=%.0f "
		    "speedup=%.2f\n", tasks, hosts, nsub, tns[runs / 2],
		    ratio[runs / 2]);
	}
	qsort(ns, (size_t)runs, sizeof(ns[0]), cmp_double);
	printf("scale tasks=%u hosts=%u events=%" PRIu64 " ns_per_event=%.0f "
	    "peak_mb=%.0f held_max=%zu problems=%" PRIu64 "\n", tasks, hosts,
	    r.events, ns[runs / 2], mb, r.held_max, r.problems);
	sim_input_free(&in);
	return bad;
}
