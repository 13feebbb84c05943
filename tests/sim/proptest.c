/*
 * Protects the coordinator's ordering core (and its clock correction)
 * against whole simulated PVM executions.  For every seed the generator's
 * ground truth, never the implementation, says what the released stream
 * must be:
 *
 *  - a linear extension of causal order: each task's events in sequence,
 *    a receive after the send it truly got, a child after its parent's
 *    spawn, a barrier exit after every entry of its episode, the k-th
 *    notify after k watched tasks' last events;
 *  - every record exactly once, byte for byte, and one lost marker per
 *    dropped range;
 *  - the send named by order_event the true one, whatever was lost;
 *    and every receive matched where the records the core can count on
 *    were all shipped: none of its task's records before it, none of
 *    the sender's records up to the send's end;
 *  - consistent with the group state replayed from the stream itself
 *    (VISTOP): a broadcast reaches exactly the other members, gsize says
 *    the size; nothing flagged inconsistent when nothing was lost;
 *  - with an instrumented group server (pvmgs, in 3 runs of 4 with
 *    groups) none of its records released, and, when nothing was lost
 *    and no task killed, the state exact: no inconsistency, nothing
 *    flagged (without the server pmon guesses, and those are warnings);
 *  - in corrected time, no message backwards (receive >= send + lmin),
 *    no task going back, the same order whatever the clock algorithm;
 *  - the state model's horizon (state_set_horizon): the released stream
 *    fed to a model with unlimited links and to one with a small
 *    horizon (of events in three runs of four, of time in the fourth)
 *    gives the same snapshot and problems, but for the race checks the
 *    horizon cut short (counted as races_unchecked); every event's
 *    frontiers are the same in both, or a horizon error; while no task
 *    has more events than the horizon keeps they are always answered;
 *  - a tree of coordinators (2 or 3 subtrees of hosts under a root,
 *    sim_tree_replay) fed the same delivery releases a stream that
 *    passes the same checks, with every receive matched to the send one
 *    coordinator matched it to (unless -T).
 *
 * It also measures each clock algorithm's distortion of local intervals
 * and fails if the controlled logical clock does not beat Lamport's.
 *
 *	proptest [-aNqv] [-g 0|1] [-l scale] [-n runs] [-s seed] [-S scenario]
 *	    [-d|-D] [-k] [-T] [-x prop,...] [-z every]
 *
 * -l multiplies the programs' loop lengths (default 1).
 * -z N checks the horizon in one run of N (default 16; with -s always).
 * -g 0 runs every execution without the group server, -g 1 with it
 * (where there are groups); by default the seed decides.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "clock.h"
#include "order.h"
#include "proto.h"
#include "record.h"
#include "sim.h"
#include "state.h"

#define NALGOS		5

enum prop {
	P_SIM,		/* the simulator's own sanity */
	P_API,		/* the order refused the coordinator's input */
	P_ONCE,		/* each record once, nothing else */
	P_BYTES,	/* released bytes are the record's */
	P_LOST,		/* one marker per dropped range */
	P_SEQ,		/* per-task sequence order */
	P_RECV,		/* receive after its send */
	P_SPAWN,	/* child after the spawn */
	P_BARRIER,	/* exit after its episode's entries */
	P_NOTIFY,	/* k-th notify after k watched tasks ended */
	P_MATCH,	/* match_tid/match_seq are the true send */
	P_WRONG,	/* a receive matched to a send it did not get */
	P_FLAGS,	/* no stray MATCHED/UNMATCHED/LOST flags */
	P_STATE,	/* group state consistency */
	P_INCONS,	/* EVENT_INCONSISTENT without losses */
	P_GS_STATE,	/* the same as state and inconsistent, */
	P_GS_INCONS,	/* with pvmgs, no loss, no kill: hard */
	P_STATS,	/* order_stats agrees with the stream */
	P_CLOCK_MSG,	/* receive >= send + lmin in corrected time */
	P_CLOCK_PROBE,	/* the same for a probe that saw a message */
	P_CLOCK_MONO,	/* a task's corrected times never decrease */
	P_CLOCK_PRED,	/* spawn and barrier edges + lmin */
	P_SAMEORDER,	/* the clock does not change the order */
	P_DRAIN,	/* with losses, release_all misorders (warning) */
	P_HORIZON,	/* frontiers: the same, or the error where cut */
	P_HZ_SAME,	/* the horizon changes nothing else */
	P_HOLD,		/* an event held more than HOLD_ROUNDS rounds */
	P_TREE,		/* a tree of coordinators matched otherwise */
	P_NPROPS
};

/*
 * Properties reported as warnings: they do not fail the run.  Events pmon
 * flags inconsistent (it could not place them: group calls that overlap
 * in time, doc/ordering.md) are counted, not failed; an inconsistency it
 * does not flag fails "state".
 */
#define SOFT_PROPS	(1u << P_DRAIN | 1u << P_SAMEORDER | 1u << P_INCONS)

/*
 * With an instrumented group server pmon knows the order group calls
 * took effect in: when nothing was lost and no task killed, "state" and
 * "inconsistent" become gs-state and gs-inconsistent, and fail the run.
 */

/*
 * pmon guesses the order of group calls that overlap within the clock
 * error across hosts; rarely a wrong guess leaves an unflagged broadcast
 * in a state it was not possible in.  "state" fails when that happens in
 * more than this many runs per thousand of a scenario.
 */
#define STATE_PERMILLE	2

static const char *const prop_names[P_NPROPS] = {
	"sim", "api", "once", "bytes", "lost", "seq", "recv", "spawn", "barrier",
	"notify", "match", "wrong-match", "flags", "state", "inconsistent", "gs-state",
	"gs-inconsistent", "stats",
	"clock-msg", "clock-probe", "clock-mono", "clock-pred", "same-order",
	"drain", "horizon", "horizon-same", "hold", "tree"
};

static const enum clock_algo algos[NALGOS] = {
	CLOCK_CLC, CLOCK_RAW, CLOCK_LAMPORT, CLOCK_KZ, CLOCK_TC
};

/* One released event. */
struct out {
	uint32_t	task;
	uint64_t	seq;
	uint64_t	count;		/* records a marker stands for */
	uint8_t		flags;
	int32_t		match_tid;
	uint64_t	match_seq;
	uint64_t	t_corr;
};

struct run {
	struct out	*outs;
	size_t		 n, cap;
	int		 bad_task;	/* an event of an unknown task */
	size_t		 nserver;	/* events of the group server */
};

/* Per-run window statistics. */
struct wstats {
	double		 held_sum;	/* sum of held / tasks */
	uint64_t	 samples;
	size_t		 held_max;
	size_t		 task_held_max;
	size_t		 retained_max;
	size_t		 state_waits_max;
	uint64_t	 marks;
};

struct failure {
	uint64_t	 runs;
	uint64_t	 seed;		/* the smallest failing run seen */
	size_t		 records;
	int		 drops;
	char		 what[240];
};

/* Runs of group scenarios by what pvmgs did, and the state they saw. */
enum gs_kind { GS_EXACT, GS_LOSSY, GS_NONE, GS_NKINDS };

struct gs_count {
	uint64_t	 runs;
	uint64_t	 flagged, flagged_runs;		/* EVENT_INCONSISTENT */
	uint64_t	 incons, incons_runs;		/* unflagged, "state" */
};

static struct {
	int		 verbose, quiet, primary_only, notify, kills;
	int		 no_tree;	/* -T: no tree of coordinators */
	unsigned	 scale;		/* -l: loop lengths */
	uint64_t	 hz_every;	/* -z: the horizon in one run of */
	int		 gs_server;	/* -g, or -1 */
	uint32_t	 ignore;	/* properties not counted */
	struct failure	 fail[SIM_NSCENARIOS][P_NPROPS];
	double		 dist_sum[NALGOS];
	uint64_t	 dist_n[NALGOS];
	double		 dist_worst[NALGOS];	/* the worst run's mean */
	uint64_t	 dist_worst_seed[NALGOS];
	int		 dist_worst_sc[NALGOS], dist_worst_drops[NALGOS];
	struct wstats	 w;
	double		 w_mean_sum;
	uint64_t	 w_runs;
	uint64_t	 events, lost_markers, runs, drop_runs, failed_runs;
	uint64_t	 hz_frontiers, hz_beyond;	/* compared, errors */
	uint64_t	 hz_unchecked;	/* runs with races_unchecked */
	uint64_t	 hold_max, hold_runs;	/* rounds an event waited, in
						   runs held to HOLD_ROUNDS */
	uint64_t	 scen_runs[SIM_NSCENARIOS], scen_failed[SIM_NSCENARIOS];
	struct gs_count	 gs[GS_NKINDS];
} g;

/* The run being checked. */
struct check {
	const struct sim *s;
	enum sim_scenario sc;
	uint64_t	 seed;
	int		 drops;
	int		 flagged;	/* replaying an event pmon flagged */
	uint32_t	 failed;	/* properties that failed */
	size_t		*base;		/* per task: first index in pos */
	int64_t		*pos;		/* output position of each record */
	int64_t		*first, *last;	/* first and last item of a task */
	int64_t		*endpos;	/* outputs before order_task_end */
	uint8_t		*tainted_group;
	uint64_t	*first_drop;	/* per task: its first dropped seq,
					   UINT64_MAX: none */
	uint64_t	 lmin;
	enum clock_algo	 algo;		/* of the run being checked */
	int64_t		 drain_pos;	/* outputs before order_release_all */
	uint64_t	 rounds;	/* flush rounds completed */
	uint64_t	*at_round;	/* per record: rounds when it came */
	int		 hold_check;	/* messages only: HOLD_ROUNDS holds */
	int		 asked_drops;	/* the run was asked to drop (-d) */
	long		 server;	/* the group server's index, or -1 */
	int		 exact;		/* pvmgs, nothing lost, none killed */
	uint64_t	 nflagged;	/* events flagged inconsistent */
	uint64_t	 nincons;	/* unflagged state inconsistencies */
	int		 tree;		/* checking a tree's stream */
};


static void	fail(struct check *, enum prop, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

static void
fail(struct check *c, enum prop p, const char *fmt, ...)
{
	struct failure *f;
	char buf[240];
	va_list ap;
	size_t recs = sim_total_records(c->s), n = 0;

	/* pmon said it could not place this one: only unflagged count. */
	if (p == P_STATE && c->flagged)
		return;
	if (p == P_STATE)
		c->nincons++;
	/* With the server's order pmon has no excuse. */
	if (c->exact && p == P_STATE)
		p = P_GS_STATE;
	if (c->exact && p == P_INCONS)
		p = P_GS_INCONS;
	f = &g.fail[c->sc][p];
	if (c->tree)
		n = (size_t)snprintf(buf, sizeof(buf), "tree: ");
	if (p >= P_CLOCK_MSG && p <= P_CLOCK_PRED) {
		if (c->algo == CLOCK_RAW)
			return;		/* raw times promise nothing */
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "clock %s: ",
		    clock_algo_name(c->algo));
	}
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	va_end(ap);
	if (g.verbose)
		printf("FAIL %s: %s\n", prop_names[p], buf);
	if (c->failed & (1u << p))
		return;
	c->failed |= 1u << p;
	if (g.ignore & (1u << p))
		return;
	if (f->runs++ == 0 || recs < f->records) {
		f->seed = c->seed;
		f->records = recs;
		f->drops = c->asked_drops;
		snprintf(f->what, sizeof(f->what), "%s", buf);
	}
}

/* --- collecting the stream -------------------------------------------- */

/*
 * The window stays bounded when rounds come (doc/ordering.md, "Losses"):
 * an event that only waits for messages (no group, no notify in the
 * run) waits for at most HOLD_ROUNDS completed rounds.  Its send was
 * recorded before it, so it has come, or is known lost, by the end of
 * the first round that began after the event came, and so has the send
 * of every receive the send itself waited for; the end of a send that
 * a receive waits for may be recorded after the receive, and comes by
 * the end of the next round.
 */
#define HOLD_ROUNDS	2

static void
check_hold(struct check *c, const struct order_event *ev, size_t ti)
{
	uint64_t h = c->rounds - c->at_round[c->base[ti] + ev->rec->seq - 1];

	if (c->hold_check && h > g.hold_max)
		g.hold_max = h;
	if (c->hold_check && h > HOLD_ROUNDS)
		fail(c, P_HOLD, "t%x seq %" PRIu64 " (%s) released %" PRIu64
		    " rounds after it came", (unsigned)ev->tid, ev->rec->seq,
		    record_call_name(ev->rec->call), h);
}


struct collect {
	struct run		*run;
	const struct sim	*s;
	struct check		*c;	/* check bytes and sequence, or NULL */
	uint64_t		*lastseq;
	struct state		*st[2];	/* unlimited, horizon; or NULL */
};

static void
collect_cb(const struct order_event *ev, void *arg)
{
	struct collect *co = arg;
	struct run *r = co->run;
	uint8_t buf[RECORD_MAX_SIZE], out[RECORD_MAX_SIZE];
	struct out *o;
	long ti = sim_task_index(co->s, ev->tid);
	size_t len;

	if (ti < 0) {
		r->bad_task = 1;
		return;
	}
	if (sim_task(co->s, (size_t)ti)->group_server) {
		/* The order consumes pvmgs's records. */
		if (r->nserver++ == 0 && co->c != NULL)
			fail(co->c, P_ONCE, "the group server t%x's %s "
			    "(seq %" PRIu64 ") released", (unsigned)ev->tid,
			    ev->flags & EVENT_LOST ? "lost marker" :
			    record_call_name(ev->rec->call), ev->rec->seq);
		return;
	}
	if (co->st[0] != NULL) {
		state_event(co->st[0], ev);
		state_event(co->st[1], ev);
	}
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		if ((r->outs = realloc(r->outs, r->cap * sizeof(*o))) == NULL)
			abort();
	}
	o = &r->outs[r->n++];
	o->task = (uint32_t)ti;
	o->seq = ev->rec->seq;
	o->count = ev->flags & EVENT_LOST ? (uint64_t)ev->rec->bytes : 1;
	o->flags = ev->flags;
	o->match_tid = ev->match_tid;
	o->match_seq = ev->match_seq;
	o->t_corr = ev->t_corr;
	if (co->c == NULL)
		return;
	if (g.verbose > 1)
		printf("    -> out %zu t%x seq %" PRIu64 " %s %s flags %#x\n",
		    r->n - 1, (unsigned)ev->tid, ev->rec->seq,
		    record_call_name(ev->rec->call),
		    ev->rec->phase ? "end" : "begin", ev->flags);
	if (ev->rec->seq <= co->lastseq[ti])
		fail(co->c, P_SEQ, "t%x seq %" PRIu64 " after seq %" PRIu64,
		    (unsigned)ev->tid, ev->rec->seq, co->lastseq[ti]);
	co->lastseq[ti] = ev->rec->seq + o->count - 1;
	if (ev->flags & EVENT_LOST) {
		if (ev->rec->call != PMON_CALL_LOST)
			fail(co->c, P_LOST, "t%x seq %" PRIu64 ": EVENT_LOST "
			    "on a %s", (unsigned)ev->tid, ev->rec->seq,
			    record_call_name(ev->rec->call));
		return;
	}
	if (ev->rec->seq == 0 ||
	    ev->rec->seq > sim_task(co->s, (size_t)ti)->nrecs) {
		fail(co->c, P_ONCE, "t%x: unknown seq %" PRIu64,
		    (unsigned)ev->tid, ev->rec->seq);
		return;
	}
	if ((int64_t)r->n <= co->c->drain_pos)
		check_hold(co->c, ev, (size_t)ti);
	/* What the tools get: the released record, encoded. */
	len = sim_encode(co->s, (size_t)ti, ev->rec->seq - 1, buf);
	if (len != record_encode(out, ev->rec, NULL) ||
	    memcmp(buf, out, len) != 0)
		fail(co->c, P_BYTES, "t%x seq %" PRIu64 ": released bytes "
		    "differ from the record", (unsigned)ev->tid,
		    ev->rec->seq);
}

/* --- the state model's horizon ---------------------------------------- */

/*
 * What the coordinator tells its state model besides the events: a task
 * when it registers, deadlock checks after flush rounds, the end of a
 * task once its last event is out (models_done).
 */
static void
models_act(struct state **st, const struct sim_act *a,
    const struct sim_task *t)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (a->type == SIM_ACT_NEW)
			state_task(st[i], t->tid, t->parent_tid, 0, "h",
			    t->group_server ? "pvmgs" : "prog");
		if (a->type == SIM_ACT_SYNCED)
			state_check(st[i]);
	}
}

static void
models_done(int32_t tid, void *arg)
{
	struct collect *co = arg;

	state_task_gone(co->st[0], tid);
	state_task_gone(co->st[1], tid);
}

/* A state written to a string, to free. */
static char *
model_text(struct state *st, int32_t tid, uint64_t seq, int *rv)
{
	char err[512], *buf = NULL;
	size_t len;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		abort();
	if (tid == 0)
		*rv = state_write(st, STATE_ALL, 0, fp);
	else if ((*rv = state_frontier(st, tid, seq, fp, err,
	    sizeof(err))) == -1)
		fputs(err, fp);
	if (fclose(fp) != 0)
		abort();
	return buf;
}

/*
 * The seqs of one object ("past" or "future") of a frontier, by task
 * index (0: null or not listed).
 */
static void
front_parse(const struct sim *s, const char *json, const char *key,
    uint64_t *v)
{
	const char *p = strstr(json, key);
	char *end;
	long ti, tid;

	memset(v, 0, sim_ntasks(s) * sizeof(*v));
	if (p == NULL || (p = strchr(p, '{')) == NULL)
		return;
	for (p++; *p == '"'; p = *end == ',' ? end + 1 : end) {
		tid = strtol(p + 1, &end, 10);
		if (strncmp(end, "\":", 2) != 0)
			return;
		p = end + 2;
		ti = sim_task_index(s, (int32_t)tid);
		if (strncmp(p, "null", 4) == 0)
			end = (char *)p + 4;
		else if (ti >= 0)
			v[ti] = strtoull(p, &end, 10);
		else
			strtoull(p, &end, 10);
	}
}

/*
 * What the unlimited model says of each task's events: per seq q (1 to
 * last) its frontier's text, and past and future by task index.
 */
struct hz_task {
	uint64_t	 last;		/* last seq */
	char		**json;		/* [q] */
	uint64_t	*past, *future;	/* [q * ntasks + u] */
};

static void
hz_load(const struct sim *s, struct state *all, size_t i, struct hz_task *t)
{
	size_t nt = sim_ntasks(s), n = sim_task(s, i)->nrecs + 2;
	uint64_t q;
	int rv;

	memset(t, 0, sizeof(*t));
	t->json = calloc(n, sizeof(*t->json));
	t->past = calloc(n * nt, sizeof(*t->past));
	t->future = calloc(n * nt, sizeof(*t->future));
	if (t->json == NULL || t->past == NULL || t->future == NULL)
		abort();
	for (q = 1; q < n - 1; q++) {
		t->json[q] = model_text(all, sim_task(s, i)->tid, q, &rv);
		if (rv == -1)
			break;
		t->last = q;
		front_parse(s, t->json[q], "\"past\"", &t->past[q * nt]);
		front_parse(s, t->json[q], "\"future\"", &t->future[q * nt]);
	}
}

static void
hz_unload(struct hz_task *t)
{
	uint64_t q;

	for (q = 0; q <= t->last + 1; q++)
		free(t->json[q]);
	free(t->json);
	free(t->past);
	free(t->future);
}

/*
 * One event's frontiers in the model with the horizon: those of the
 * unlimited model, or the horizon's error, which only a cut may cause.
 */
static void
hz_event(struct check *c, struct state *hz, int cut,
    const struct hz_task *ht, size_t ti, uint64_t q)
{
	int32_t tid = sim_task(c->s, ti)->tid;
	const char *x = ht[ti].json[q];
	char *y;
	int ry;

	y = model_text(hz, tid, q, &ry);
	g.hz_frontiers++;
	if (ry == 0 && strcmp(x, y) != 0)
		fail(c, P_HORIZON, "t%x:%" PRIu64 ": frontiers differ: %.80s "
		    "and %.80s", (unsigned)tid, q, x, y);
	if (ry == -1) {
		g.hz_beyond++;
		if (strstr(y, "beyond the horizon") == NULL ||
		    strstr(y, "pmon start -H") == NULL)
			fail(c, P_HORIZON, "t%x:%" PRIu64 ": not the horizon's "
			    "error: %s", (unsigned)tid, q, y);
		if (!cut)
			fail(c, P_HORIZON, "t%x:%" PRIu64 ": nothing was cut, "
			    "yet: %s", (unsigned)tid, q, y);
	}
	free(y);
}

/*
 * A snapshot's text without its races and the count of race checks not
 * made, to free.
 */
static char *
without_races(const char *text)
{
	json_t *doc, *probs, *p;
	char *out;
	size_t i;

	if ((doc = json_loads(text, 0, NULL)) == NULL)
		abort();
	json_object_del(doc, "races_unchecked");
	if ((probs = json_object_get(doc, "problems")) != NULL)
		for (i = json_array_size(probs); i-- > 0;) {
			p = json_array_get(probs, i);
			if (strcmp(json_string_value(json_object_get(p,
			    "kind")) ?: "", "race") == 0)
				json_array_remove(probs, i);
		}
	out = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(doc);
	return out;
}

/*
 * The two models after the run: the same state, and every event's
 * frontiers compared.
 */
static void
check_horizon(struct check *c, struct state **st, uint64_t h, uint64_t ns)
{
	size_t nt = sim_ntasks(c->s), i;
	struct hz_task *ht;
	uint64_t q;
	char *x, *y, *x2, *y2;
	int rv, cut = ns != 0;

	x = model_text(st[0], 0, 0, &rv);
	y = model_text(st[1], 0, 0, &rv);
	if (strcmp(x, y) != 0) {
		/* Races whose check reached beyond the horizon are not made. */
		x2 = without_races(x);
		y2 = without_races(y);
		if (strstr(y, "\"races_unchecked\"") == NULL ||
		    strcmp(x2, y2) != 0)
			fail(c, P_HZ_SAME, "the snapshots differ");
		else
			g.hz_unchecked++;
		free(x2);
		free(y2);
	}
	free(x);
	free(y);
	ht = calloc(nt + 1, sizeof(*ht));
	if (ht == NULL)
		abort();
	for (i = 0; i < nt; i++) {
		hz_load(c->s, st[0], i, &ht[i]);
		if (ht[i].last > h)
			cut = 1;
	}
	for (i = 0; i < nt; i++)
		for (q = 1; q <= ht[i].last; q++)
			hz_event(c, st[1], cut, ht, i, q);
	for (i = 0; i < nt; i++)
		hz_unload(&ht[i]);
	free(ht);
}

/* The horizon's checks cost 16 times the rest: one run in -z of them. */
static int
hz_wanted(uint64_t seed)
{
	return (g.ignore & (1u << P_HORIZON | 1u << P_HZ_SAME)) !=
	    (1u << P_HORIZON | 1u << P_HZ_SAME) && seed % g.hz_every == 0;
}

/*
 * An unlimited model and one with a horizon the seed picks: of 1 to 24
 * events, or in one run of four of a twentieth to a half of the run's
 * true duration.
 */
static void
models_new(const struct sim *s, uint64_t seed, struct state **st,
    uint64_t *events, uint64_t *ns)
{
	uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ULL, end = 0;
	size_t i;

	x ^= x >> 31;
	*events = *ns = 0;
	if ((x >> 8) % 4 != 3)
		*events = 1 + (x >> 16) % 24;
	else {
		for (i = 0; i < sim_ntasks(s); i++)
			if (sim_task(s, i)->nrecs > 0 && sim_task(s, i)->
			    recs[sim_task(s, i)->nrecs - 1].t_true > end)
				end = sim_task(s, i)->recs[sim_task(s, i)->
				    nrecs - 1].t_true;
		*ns = 1 + end / 20 * (1 + (x >> 16) % 10);
	}
	if ((st[0] = state_new(NULL, NULL)) == NULL ||
	    (st[1] = state_new(NULL, NULL)) == NULL)
		abort();
	state_set_horizon(st[0], 0, 0);
	state_set_horizon(st[1], *events, *ns);
}

/* --- window statistics and the action log ------------------------------ */

struct actlog {
	struct order	*o;
	struct run	*run;
	struct check	*c;
	const struct sim *s;
	struct wstats	*w;
	size_t		 nacts;
	struct state	**st;		/* the collector's models, or NULL */
};

static const char *const act_names[] = {
	"new", "add", "end", "mark", "synced", "release_all"
};

static int
act_cb(const struct sim_act *a, void *arg)
{
	struct actlog *l = arg;
	struct order_stats st;
	const struct sim_task *t = sim_task(l->s, a->task);

	if (g.verbose > 1 || (g.verbose && a->type != SIM_ACT_ADD))
		printf("  act %8.3f ms %-11s t%x %s%u\n", (double)a->t / 1e6,
		    act_names[a->type], (unsigned)t->tid,
		    a->type == SIM_ACT_ADD ? "seq " : "",
		    a->type == SIM_ACT_ADD ? a->rec + 1 : 0);
	if (a->type == SIM_ACT_END && l->c != NULL)
		l->c->endpos[a->task] = (int64_t)l->run->n;
	if (a->type == SIM_ACT_RELEASE_ALL && l->c != NULL)
		l->c->drain_pos = (int64_t)l->run->n;
	if (a->type == SIM_ACT_SYNCED && l->c != NULL)
		l->c->rounds++;
	if (a->type == SIM_ACT_ADD && l->c != NULL)
		l->c->at_round[l->c->base[a->task] + a->rec] = l->c->rounds;
	if (a->type == SIM_ACT_MARK)
		l->w->marks++;
	if (l->st != NULL && l->st[0] != NULL)
		models_act(l->st, a, t);
	if (l->w == NULL || (l->nacts++ & 7) != 0)
		return 0;
	memset(&st, 0, sizeof(st));
	order_stats(l->o, &st);
	if (st.tasks > 0) {
		l->w->held_sum += (double)st.held / (double)st.tasks;
		l->w->samples++;
	}
	if (st.held > l->w->held_max)
		l->w->held_max = st.held;
	if (st.retained > l->w->retained_max)
		l->w->retained_max = st.retained;
	if (st.state_waits > l->w->state_waits_max)
		l->w->state_waits_max = st.state_waits;
	memset(&st, 0, sizeof(st));
	if (a->type == SIM_ACT_ADD &&
	    order_task_stats(l->o, t->tid, &st) == 0 &&
	    st.held > l->w->task_held_max)
		l->w->task_held_max = st.held;
	return 0;
}

/* --- ground truth helpers ----------------------------------------------- */

/*
 * With records lost, the k-th receive on a channel is known to have got
 * the k-th send only where neither count can be off: a record lost
 * anywhere before them may have been a send or a receive of the same
 * channel.  A send is countable when none of its task's records up to
 * its end (which says whether it delivered anything) was lost, a
 * receive when none of its task's records up to it was.  The groups
 * whose records were lost cannot be replayed either.
 */
static void
taint(struct check *c)
{
	const struct sim *s = c->s;
	const struct sim_task *t;
	const struct sim_rec *r;
	size_t i, k;

	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		c->first_drop[i] = UINT64_MAX;
		for (k = t->nrecs; k-- > 0;) {
			r = &t->recs[k];
			if (!r->dropped)
				continue;
			c->first_drop[i] = k + 1;
			if (r->group != 0)
				c->tainted_group[r->group] = 1;
		}
	}
}

/* Can the core count the message m, received by record k of task ti? */
static int
countable(const struct check *c, const struct sim_msg *m, size_t ti,
    size_t k)
{
	const struct sim_task *st = sim_task(c->s, m->src);
	uint64_t end = m->send_rec + 1;

	if (st->recs[m->send_rec].call != PMON_CALL_bcast &&
	    end < st->nrecs)
		end++;
	return c->first_drop[m->src] > end && c->first_drop[ti] > k + 1;
}

static int64_t
pos_of(const struct check *c, size_t task, size_t rec)
{
	return c->pos[c->base[task] + rec];
}

/* --- the checks ---------------------------------------------------------- */

/* Positions of every record (markers cover their range), each once. */
static void
check_once(struct check *c, const struct run *r)
{
	const struct sim *s = c->s;
	const struct sim_task *t;
	const struct out *o;
	size_t i, k, n;

	for (i = 0; i < r->n; i++) {
		o = &r->outs[i];
		t = sim_task(s, o->task);
		if (c->first[o->task] < 0)
			c->first[o->task] = (int64_t)i;
		c->last[o->task] = (int64_t)i;
		if (o->seq == 0 || o->seq + o->count - 1 > t->nrecs ||
		    o->count == 0) {
			fail(c, o->flags & EVENT_LOST ? P_LOST : P_ONCE,
			    "t%x: item seq %" PRIu64 " count %" PRIu64
			    " outside its %zu records", (unsigned)t->tid,
			    o->seq, o->count, t->nrecs);
			continue;
		}
		for (k = o->seq - 1; k < o->seq - 1 + o->count; k++) {
			if (c->pos[c->base[o->task] + k] >= 0)
				fail(c, P_ONCE, "t%x seq %zu released twice",
				    (unsigned)t->tid, k + 1);
			c->pos[c->base[o->task] + k] = (int64_t)i;
			if ((o->flags & EVENT_LOST) && !t->recs[k].dropped)
				fail(c, P_LOST, "t%x: marker at seq %" PRIu64
				    " covers seq %zu, which was shipped",
				    (unsigned)t->tid, o->seq, k + 1);
			if (!(o->flags & EVENT_LOST) && t->recs[k].dropped)
				fail(c, P_LOST, "t%x seq %zu was dropped but "
				    "released", (unsigned)t->tid, k + 1);
		}
		if (!(o->flags & EVENT_LOST))
			continue;
		g.lost_markers++;
		/* A marker stands for a whole maximal range. */
		k = o->seq - 1;
		n = k + o->count;
		if ((k > 0 && t->recs[k - 1].dropped) ||
		    (n < t->nrecs && t->recs[n].dropped))
			fail(c, P_LOST, "t%x: marker seq %" PRIu64 " count %"
			    PRIu64 " is not a whole dropped range",
			    (unsigned)t->tid, o->seq, o->count);
	}
	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		for (k = 0; k < t->nrecs && !t->group_server; k++)
			if (pos_of(c, i, k) < 0) {
				fail(c, t->recs[k].dropped ? P_LOST : P_ONCE,
				    "t%x seq %zu (%s %s) never released",
				    (unsigned)t->tid, k + 1,
				    record_call_name(t->recs[k].call),
				    t->recs[k].phase ? "end" : "begin");
				break;
			}
	}
	if (r->bad_task)
		fail(c, P_ONCE, "an event of a task never registered");
}

static int
is_marker(const struct run *r, int64_t p)
{
	return (r->outs[p].flags & EVENT_LOST) != 0;
}

/*
 * Released by force: flagged inconsistent, or by order_release_all in a
 * run that lost records.  Its predecessors may not have been its own.
 */
static int
forced(const struct check *c, const struct run *r, int64_t p)
{
	return (r->outs[p].flags & EVENT_INCONSISTENT) ||
	    (c->drops && p >= c->drain_pos);
}

/* A receive or probe that got a task's message. */
static void
check_msg(struct check *c, const struct run *r, size_t ti, size_t k)
{
	const struct sim *s = c->s;
	const struct sim_task *t = sim_task(s, ti), *st;
	const struct sim_rec *rec = &t->recs[k];
	const struct sim_msg *m = sim_msg(s, rec->msg - 1);
	int64_t p = pos_of(c, ti, k), sp;
	const struct out *o = &r->outs[p];
	int probe = rec->call == PMON_CALL_probe;

	st = sim_task(s, m->src);
	if ((o->flags & EVENT_MATCHED) && (o->match_tid != st->tid ||
	    o->match_seq != m->send_rec + 1))
		fail(c, P_WRONG, "t%x seq %zu (%s end) got t%x seq %u, "
		    "released matched to t%x seq %" PRIu64, (unsigned)t->tid,
		    k + 1, record_call_name(rec->call), (unsigned)st->tid,
		    m->send_rec + 1, (unsigned)o->match_tid, o->match_seq);
	if (!countable(c, m, ti, k))
		return;
	sp = pos_of(c, m->src, m->send_rec);
	if (c->drops && p >= c->drain_pos &&
	    (sp >= p || o->match_tid != st->tid ||
	    o->match_seq != m->send_rec + 1)) {
		/* A wait cycle that lost records made, broken at shutdown:
		 * the core could pick the hopeless wait to break. */
		fail(c, P_DRAIN, "t%x seq %zu (%s end) forced out at shutdown "
		    "(flags %#x) though its send t%x seq %u was delivered",
		    (unsigned)t->tid, k + 1, record_call_name(rec->call),
		    o->flags, (unsigned)st->tid, m->send_rec + 1);
		return;
	}
	if (sp >= p)
		fail(c, P_RECV, "t%x seq %zu (%s end) released before its "
		    "send t%x seq %u", (unsigned)t->tid, k + 1,
		    record_call_name(rec->call), (unsigned)st->tid,
		    m->send_rec + 1);
	if (!(o->flags & EVENT_MATCHED) || (o->flags & EVENT_UNMATCHED) ||
	    o->match_tid != st->tid || o->match_seq != m->send_rec + 1)
		fail(c, P_MATCH, "t%x seq %zu (%s end) got t%x seq %u, "
		    "released with flags %#x match t%x seq %" PRIu64,
		    (unsigned)t->tid, k + 1, record_call_name(rec->call),
		    (unsigned)st->tid, m->send_rec + 1, o->flags,
		    (unsigned)o->match_tid, o->match_seq);
	if (sp < p && (o->flags & EVENT_MATCHED) && o->match_tid == st->tid &&
	    o->match_seq == m->send_rec + 1 &&
	    o->t_corr < r->outs[sp].t_corr + c->lmin)
		fail(c, probe ? P_CLOCK_PROBE : P_CLOCK_MSG, "t%x seq %zu "
		    "(%s end) at %" PRIu64 " but its send t%x seq %u at %"
		    PRIu64 " (lmin %" PRIu64 ")", (unsigned)t->tid, k + 1,
		    record_call_name(rec->call), o->t_corr,
		    (unsigned)st->tid, m->send_rec + 1, r->outs[sp].t_corr,
		    c->lmin);
}

static void
check_barrier(struct check *c, const struct run *r, size_t ti, size_t k)
{
	const struct sim *s = c->s;
	const struct sim_task *t = sim_task(s, ti);
	const struct sim_rec *rec = &t->recs[k];
	const struct sim_episode *e = sim_episode(s, rec->episode - 1);
	const struct sim_entry *en = sim_entries(s) + e->first;
	int64_t p = pos_of(c, ti, k), ep;
	uint32_t i;

	if (c->tainted_group[rec->group])
		return;
	/* A member lost records: pmon could not count the episode. */
	if (c->drops && (r->outs[p].flags & EVENT_INCONSISTENT))
		return;
	for (i = 0; i < e->nentries; i++) {
		ep = pos_of(c, en[i].task, en[i].rec);
		if (ep >= p && c->drops && p >= c->drain_pos)
			fail(c, P_DRAIN, "t%x seq %zu (barrier end) forced out "
			    "at shutdown before the entry t%x seq %u",
			    (unsigned)t->tid, k + 1,
			    (unsigned)sim_task(s, en[i].task)->tid,
			    en[i].rec + 1);
		else if (ep >= p)
			fail(c, P_BARRIER, "t%x seq %zu (barrier end) before "
			    "the entry t%x seq %u of its episode",
			    (unsigned)t->tid, k + 1,
			    (unsigned)sim_task(s, en[i].task)->tid,
			    en[i].rec + 1);
		else if (!is_marker(r, ep) && !forced(c, r, p) &&
		    r->outs[p].t_corr < r->outs[ep].t_corr + c->lmin)
			fail(c, P_CLOCK_PRED, "t%x seq %zu (barrier end) at %"
			    PRIu64 " but entry t%x seq %u at %" PRIu64,
			    (unsigned)t->tid, k + 1, r->outs[p].t_corr,
			    (unsigned)sim_task(s, en[i].task)->tid,
			    en[i].rec + 1, r->outs[ep].t_corr);
	}
}

static void
check_spawn(struct check *c, const struct run *r, size_t ti)
{
	const struct sim_task *t = sim_task(c->s, ti), *pt;
	int64_t p = c->first[ti], sp;

	if (t->parent == UINT32_MAX || p < 0)
		return;
	pt = sim_task(c->s, t->parent);
	sp = pos_of(c, t->parent, t->spawn_seq - 1);
	if (sp >= p && c->drops && p >= c->drain_pos)
		fail(c, P_DRAIN, "t%x's first event forced out at shutdown "
		    "before its parent's spawn", (unsigned)t->tid);
	else if (sp >= p)
		fail(c, P_SPAWN, "t%x's first event before its parent's spawn "
		    "t%x seq %" PRIu64, (unsigned)t->tid, (unsigned)pt->tid,
		    t->spawn_seq);
	else if (!is_marker(r, sp) && !is_marker(r, p) && !forced(c, r, p) &&
	    r->outs[p].t_corr < r->outs[sp].t_corr + c->lmin)
		fail(c, P_CLOCK_PRED, "t%x's first event at %" PRIu64 " but "
		    "the spawn t%x seq %" PRIu64 " at %" PRIu64,
		    (unsigned)t->tid, r->outs[p].t_corr, (unsigned)pt->tid,
		    t->spawn_seq, r->outs[sp].t_corr);
}

/* Flags: what a record that is not a matched message must not carry. */
static void
check_flags(struct check *c, const struct run *r, size_t ti, size_t k)
{
	const struct sim_task *t = sim_task(c->s, ti);
	const struct sim_rec *rec = &t->recs[k];
	const struct out *o = &r->outs[pos_of(c, ti, k)];
	uint8_t bad = EVENT_LOST;

	if (o->flags & EVENT_INCONSISTENT)
		c->nflagged++;
	if (!c->drops && (o->flags & EVENT_INCONSISTENT))
		fail(c, P_INCONS, "t%x seq %zu (%s %s) flagged inconsistent "
		    "with nothing lost", (unsigned)t->tid, k + 1,
		    record_call_name(rec->call), rec->phase ? "end" : "begin");
	if (rec->msg == 0)
		bad |= EVENT_MATCHED | EVENT_UNMATCHED;
	else if (sim_msg(c->s, rec->msg - 1)->src == UINT32_MAX)
		bad = EVENT_LOST;
	else if (!c->drops)
		bad |= EVENT_UNMATCHED;
	if (o->flags & bad)
		fail(c, P_FLAGS, "t%x seq %zu (%s %s) released with flags %#x",
		    (unsigned)t->tid, k + 1, record_call_name(rec->call),
		    rec->phase ? "end" : "begin", o->flags);
}

/*
 * The k-th notify a task receives for a tag comes after the last events
 * of k of the tasks it watches with that tag (the record does not say
 * which one ended, so no more can be asked).
 */
static void
check_notify(struct check *c, const struct run *r, size_t ti)
{
	const struct sim *s = c->s;
	const struct sim_task *t = sim_task(s, ti), *x;
	const int32_t *peers = sim_peers(s);
	const struct sim_rec *rec;
	const struct sim_msg *m;
	size_t k, j, n;
	unsigned p;
	long xi;
	int64_t pp;

	for (k = 0; k < t->nrecs; k++) {
		rec = &t->recs[k];
		if (rec->dropped || rec->msg == 0 || rec->call ==
		    PMON_CALL_probe ||
		    (m = sim_msg(s, rec->msg - 1))->src != UINT32_MAX)
			continue;
		/* Which notify of this tag is it, and how many ended. */
		pp = pos_of(c, ti, k);
		n = 0;
		for (j = 0; j < k; j++)
			n += !t->recs[j].dropped && t->recs[j].msg != 0 &&
			    t->recs[j].call != PMON_CALL_probe &&
			    sim_msg(s, t->recs[j].msg - 1)->src ==
			    UINT32_MAX && t->recs[j].tag == rec->tag;
		n++;
		for (j = 0; j < k && n > 0; j++) {
			if (t->recs[j].call != PMON_CALL_notify ||
			    t->recs[j].phase != PMON_BEGIN ||
			    t->recs[j].tag != rec->tag)
				continue;
			if (t->recs[j].dropped)
				break;	/* the watch itself was lost */
			for (p = 0; p < t->recs[j].npeers && n > 0; p++) {
				xi = sim_task_index(s,
				    peers[t->recs[j].peers + p]);
				if (xi < 0)
					continue;
				x = sim_task(s, (size_t)xi);
				if (x->t_end != UINT64_MAX &&
				    c->last[xi] >= 0 && c->last[xi] < pp)
					n--;
			}
		}
		if (j < k && t->recs[j].dropped)
			continue;
		if (n > 0 && c->drops && pp >= c->drain_pos)
			fail(c, P_DRAIN, "t%x seq %zu: a notify (tag %d) forced "
			    "out at shutdown before enough watched tasks ended",
			    (unsigned)t->tid, k + 1, rec->tag);
		else if (n > 0)
			fail(c, P_NOTIFY, "t%x seq %zu: a notify (tag %d) "
			    "released before enough watched tasks ended",
			    (unsigned)t->tid, k + 1, rec->tag);
	}
	(void)r;
}

/* --- group state replay ---------------------------------------------- */

enum { GM_NONE, GM_MEMBER, GM_DYING };

struct replay {
	uint8_t		*st;		/* [group][task] */
	size_t		 ntasks;
	int64_t		*gone_at;	/* when a task may leave its groups */
	size_t		*by_gone;	/* tasks sorted by gone_at */
};

static struct check *sort_ctx;

static int
gone_cmp(const void *a, const void *b)
{
	int64_t x = sort_ctx->endpos[*(const size_t *)a],
	    y = sort_ctx->endpos[*(const size_t *)b];

	return (x > y) - (x < y);
}

static size_t
count_state(const struct replay *rp, unsigned gid, int which)
{
	size_t i, n = 0;

	for (i = 0; i < rp->ntasks; i++)
		n += rp->st[gid * rp->ntasks + i] == which;
	return n;
}

static void
replay_bcast(struct check *c, struct replay *rp, size_t ti,
    const struct sim_rec *rec, size_t k)
{
	const struct sim *s = c->s;
	const int32_t *peers = sim_peers(s);
	uint8_t *st = rp->st + rec->group * rp->ntasks;
	uint8_t *in;
	size_t i;
	unsigned p;
	long xi;

	if ((in = calloc(rp->ntasks, 1)) == NULL)
		abort();
	for (p = 0; p < rec->npeers; p++)
		if ((xi = sim_task_index(s, peers[rec->peers + p])) >= 0)
			in[xi] = 1;
	for (i = 0; i < rp->ntasks; i++) {
		if (i == ti)
			continue;
		if (st[i] == GM_MEMBER && !in[i])
			fail(c, P_STATE, "t%x seq %zu: broadcast to %s missed "
			    "member t%x", (unsigned)sim_task(s, ti)->tid, k + 1,
			    sim_group_name(s, rec->group),
			    (unsigned)sim_task(s, i)->tid);
		else if (st[i] == GM_NONE && in[i])
			fail(c, P_STATE, "t%x seq %zu: broadcast to %s reached "
			    "t%x, not a member then",
			    (unsigned)sim_task(s, ti)->tid, k + 1,
			    sim_group_name(s, rec->group),
			    (unsigned)sim_task(s, i)->tid);
		else if (st[i] == GM_DYING && !in[i])
			st[i] = GM_NONE;	/* it is gone by now */
	}
	free(in);
}

static void
replay_gsize(struct check *c, struct replay *rp, size_t ti,
    const struct sim_rec *rec, size_t k)
{
	size_t def = count_state(rp, rec->group, GM_MEMBER);
	size_t dying = count_state(rp, rec->group, GM_DYING), i;

	if (rec->rc < 0)
		return;
	if ((size_t)rec->rc < def || (size_t)rec->rc > def + dying) {
		fail(c, P_STATE, "t%x seq %zu: gsize(%s) = %d but the model "
		    "has %zu members (and %zu ending)",
		    (unsigned)sim_task(c->s, ti)->tid, k + 1,
		    sim_group_name(c->s, rec->group), rec->rc, def, dying);
		return;
	}
	if ((size_t)rec->rc == def)
		for (i = 0; i < rp->ntasks; i++)
			if (rp->st[rec->group * rp->ntasks + i] == GM_DYING)
				rp->st[rec->group * rp->ntasks + i] = GM_NONE;
}

/*
 * A task that began pvm_exit is gone for pvmgs once pvmd tells it: from
 * then on it may be member or not.
 */
static void
exit_gone(struct check *c, size_t ti)
{
	const struct sim_task *t = sim_task(c->s, ti);
	int64_t p;
	size_t k;

	for (k = 0; k < t->nrecs; k++) {
		if (t->recs[k].call != PMON_CALL_exit ||
		    t->recs[k].phase != PMON_BEGIN)
			continue;
		p = c->pos[c->base[ti] + k];
		if (p >= 0 && p + 1 < c->endpos[ti])
			c->endpos[ti] = p + 1;
		return;
	}
}

/*
 * Replays the stream's own group events.  A task that ended leaves its
 * groups at some point after its pvm_exit began, or after its last event
 * and after order_task_end was called (the stream does not say where): until a broadcast or a
 * gsize pins it, it may be either member or not.
 */
static void
check_state(struct check *c, const struct run *r)
{
	const struct sim *s = c->s;
	size_t ngroups, nt = sim_ntasks(s), i, gi, next = 0;
	const struct sim_rec *rec;
	const struct out *o;
	struct replay rp;
	uint8_t *st;

	for (ngroups = 1; *sim_group_name(s, (unsigned)ngroups) != '\0';
	    ngroups++)
		;
	memset(&rp, 0, sizeof(rp));
	rp.ntasks = nt;
	rp.st = calloc(ngroups * nt + 1, 1);
	rp.by_gone = calloc(nt + 1, sizeof(*rp.by_gone));
	if (rp.st == NULL || rp.by_gone == NULL)
		abort();
	for (i = 0; i < nt; i++) {
		rp.by_gone[i] = i;
		if (c->last[i] + 1 > c->endpos[i])
			c->endpos[i] = c->last[i] + 1;
		exit_gone(c, i);
	}
	sort_ctx = c;
	qsort(rp.by_gone, nt, sizeof(*rp.by_gone), gone_cmp);
	for (i = 0; i < r->n; i++) {
		for (; next < nt && c->endpos[rp.by_gone[next]] <= (int64_t)i;
		    next++)
			for (gi = 1; gi < ngroups; gi++) {
				st = &rp.st[gi * nt + rp.by_gone[next]];
				if (*st == GM_MEMBER)
					*st = GM_DYING;
			}
		o = &r->outs[i];
		if (o->flags & EVENT_LOST)
			continue;
		rec = &sim_task(s, o->task)->recs[o->seq - 1];
		if (rec->group == 0 || rec->phase != PMON_END ||
		    c->tainted_group[rec->group])
			continue;
		st = &rp.st[rec->group * nt + o->task];
		c->flagged = (o->flags & EVENT_INCONSISTENT) != 0;
		switch (rec->call) {
		case PMON_CALL_joingroup:
			if (rec->rc >= 0)
				*st = GM_MEMBER;
			break;
		case PMON_CALL_lvgroup:
			if (rec->rc == 0 && *st != GM_MEMBER)
				fail(c, P_STATE, "t%x seq %" PRIu64 " leaves %s"
				    " but the model has it outside",
				    (unsigned)sim_task(s, o->task)->tid, o->seq,
				    sim_group_name(s, rec->group));
			if (rec->rc == 0)
				*st = GM_NONE;
			break;
		case PMON_CALL_bcast:
			replay_bcast(c, &rp, o->task, rec, o->seq - 1);
			break;
		case PMON_CALL_gsize:
			replay_gsize(c, &rp, o->task, rec, o->seq - 1);
			break;
		default:
			break;
		}
	}
	c->flagged = 0;
	free(rp.st);
	free(rp.by_gone);
}

static void
check_stats(struct check *c, struct order *o, const struct run *r)
{
	struct order_stats st;

	memset(&st, 0, sizeof(st));
	order_stats(o, &st);
	if (st.held != 0 || st.retained != 0 || st.blocked != 0)
		fail(c, P_STATS, "after release_all: held %zu retained %zu "
		    "blocked %zu", st.held, st.retained, st.blocked);
	if (st.released != r->n + r->nserver)
		fail(c, P_STATS, "released %" PRIu64 " events, stats say %"
		    PRIu64, (uint64_t)(r->n + r->nserver), st.released);
}

/* Corrected times of a task never go back. */
static void
check_mono(struct check *c, const struct run *r, uint64_t *lastc)
{
	const struct out *o;
	size_t i;

	memset(lastc, 0, sim_ntasks(c->s) * sizeof(*lastc));
	for (i = 0; i < r->n; i++) {
		o = &r->outs[i];
		if (o->t_corr < lastc[o->task])
			fail(c, P_CLOCK_MONO, "t%x seq %" PRIu64 " at %" PRIu64
			    " after %" PRIu64, (unsigned)sim_task(c->s,
			    o->task)->tid, o->seq, o->t_corr, lastc[o->task]);
		lastc[o->task] = o->t_corr;
	}
}

/* Every check of one run of the order. */
static void
check_run(struct check *c, struct order *o, const struct run *r, int full)
{
	const struct sim *s = c->s;
	const struct sim_task *t;
	const struct sim_rec *rec;
	uint64_t *lastc;
	size_t i, k, total = 0;

	for (i = 0; i < sim_ntasks(s); i++) {
		c->base[i] = total;
		total += sim_task(s, i)->nrecs;
		c->first[i] = c->last[i] = -1;
	}
	for (k = 0; k < total; k++)
		c->pos[k] = -1;
	check_once(c, r);
	if ((lastc = calloc(sim_ntasks(s) + 1, sizeof(*lastc))) == NULL)
		abort();
	check_mono(c, r, lastc);
	free(lastc);
	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		check_spawn(c, r, i);
		for (k = 0; k < t->nrecs; k++) {
			rec = &t->recs[k];
			if (rec->dropped || pos_of(c, i, k) < 0)
				continue;
			if (rec->msg != 0 &&
			    sim_msg(s, rec->msg - 1)->src != UINT32_MAX)
				check_msg(c, r, i, k);
			if (rec->episode != 0 && rec->phase == PMON_END)
				check_barrier(c, r, i, k);
			if (full)
				check_flags(c, r, i, k);
		}
		if (full)
			check_notify(c, r, i);
	}
	if (full) {
		check_state(c, r);
		check_stats(c, o, r);
	}
}

/* Mean absolute error of corrected local intervals against true ones. */
static void
distortion(const struct check *c, const struct run *r, int algo)
{
	const struct sim *s = c->s;
	const struct sim_task *t;
	size_t i, k;
	int64_t p, q;
	double e, sum = 0;
	uint64_t n = 0;

	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		for (k = 0; k + 1 < t->nrecs; k++) {
			if (t->recs[k].dropped || t->recs[k + 1].dropped)
				continue;
			p = pos_of(c, i, k);
			q = pos_of(c, i, k + 1);
			if (p < 0 || q < 0)
				continue;
			e = ((double)r->outs[q].t_corr -
			    (double)r->outs[p].t_corr) -
			    ((double)t->recs[k + 1].t_true -
			    (double)t->recs[k].t_true);
			sum += fabs(e);
			n++;
		}
	}
	g.dist_sum[algo] += sum;
	g.dist_n[algo] += n;
	if (n > 0 && sum / (double)n > g.dist_worst[algo]) {
		g.dist_worst[algo] = sum / (double)n;
		g.dist_worst_seed[algo] = c->seed;
		g.dist_worst_sc[algo] = c->sc;
		g.dist_worst_drops[algo] = c->asked_drops;
	}
}

static void
same_order(struct check *c, const struct run *a, const struct run *b,
    enum clock_algo algo)
{
	size_t i;

	if (a->n != b->n) {
		fail(c, P_SAMEORDER, "clock %s: %zu events, clock clc %zu",
		    clock_algo_name(algo), b->n, a->n);
		return;
	}
	for (i = 0; i < a->n; i++)
		if (a->outs[i].task != b->outs[i].task ||
		    a->outs[i].seq != b->outs[i].seq ||
		    a->outs[i].flags != b->outs[i].flags) {
			fail(c, P_SAMEORDER, "clock %s: event %zu is t%x seq %"
			    PRIu64 ", with clock clc t%x seq %" PRIu64,
			    clock_algo_name(algo), i,
			    (unsigned)sim_task(c->s, b->outs[i].task)->tid,
			    b->outs[i].seq,
			    (unsigned)sim_task(c->s, a->outs[i].task)->tid,
			    a->outs[i].seq);
			return;
		}
}

/* --- verbose output ---------------------------------------------------- */

static void
dump_execution(const struct sim *s)
{
	const struct sim_task *t;
	const struct sim_rec *r;
	const int32_t *peers = sim_peers(s);
	size_t i, k;
	unsigned p;

	for (i = 0; i < sim_nhosts(s); i++)
		printf("host %u: offset %+.3f ms drift %+.1f ppm\n",
		    sim_host_number(i), sim_host(s, i)->offset_ns / 1e6,
		    sim_host(s, i)->drift * 1e6);
	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		printf("task t%x%s host %u parent t%x spawn_seq %" PRIu64
		    " records %zu dropped %" PRIu64 " end %s%.3f ms\n",
		    (unsigned)t->tid, t->group_server ? " (pvmgs)" : "",
		    sim_host_number(t->host),
		    (unsigned)t->parent_tid, t->spawn_seq, t->nrecs,
		    t->ndropped, t->killed ? "killed " : "",
		    t->t_end == UINT64_MAX ? -1.0 : t->t_end / 1e6);
		for (k = 0; k < t->nrecs; k++) {
			r = &t->recs[k];
			printf("  %4zu %9.3f %s%-14s %-5s rc %d peer %x tag %d "
			    "ctx %d bytes %d inst %d", k + 1, r->t_true / 1e6,
			    r->dropped ? "X " : "",
			    record_call_name(r->call),
			    r->phase ? "end" : "begin", r->rc,
			    (unsigned)r->peer, r->tag, r->ctx, r->bytes,
			    r->inst);
			if (r->group)
				printf(" group %s", sim_group_name(s,
				    r->group));
			if (r->flags & RECORD_MSG)
				printf(" MSG");
			if (r->flags & RECORD_GS)
				printf(" GS");
			for (p = 0; p < r->npeers; p++)
				printf("%s%x", p ? "," : " peers ",
				    (unsigned)peers[r->peers + p]);
			if (r->msg) {
				const struct sim_msg *m = sim_msg(s,
				    r->msg - 1);

				if (m->src == UINT32_MAX)
					printf(" <- notify of t%x",
					    (unsigned)sim_task(s,
					    m->notify_of)->tid);
				else
					printf(" <- t%x seq %u",
					    (unsigned)m->src_tid,
					    m->send_rec + 1);
			}
			if (r->episode)
				printf(" episode %u", r->episode);
			printf("\n");
		}
	}
}

static void
dump_stream(const struct sim *s, const struct run *r)
{
	const struct out *o;
	size_t i;

	for (i = 0; i < r->n; i++) {
		o = &r->outs[i];
		printf("  out %5zu t%x seq %" PRIu64 " %s flags %#x", i,
		    (unsigned)sim_task(s, o->task)->tid, o->seq,
		    o->flags & EVENT_LOST ? "lost" : record_call_name(
		    sim_task(s, o->task)->recs[o->seq - 1].call),
		    o->flags);
		if (o->flags & EVENT_MATCHED)
			printf(" match t%x seq %" PRIu64,
			    (unsigned)o->match_tid, o->match_seq);
		printf(" t_corr %" PRIu64 "\n", o->t_corr);
	}
}

/*
 * The simulator's group server: its records in true time order, and one
 * request served for each group call whose end says it sent one, and
 * perhaps for the call a task died in or still blocks in at the end.
 */
static void
check_server(struct check *c)
{
	const struct sim *s = c->s;
	const struct sim_task *gs, *t;
	const struct sim_rec *r;
	size_t nt = sim_ntasks(s), i, k;
	uint64_t *n;
	long ti;

	if (c->server < 0)
		return;
	if ((n = calloc(nt + 1, sizeof(*n))) == NULL)
		abort();
	gs = sim_task(s, (size_t)c->server);
	for (k = 0; k < gs->nrecs; k++) {
		r = &gs->recs[k];
		if (k > 0 && r->t_true < gs->recs[k - 1].t_true)
			fail(c, P_SIM, "pvmgs seq %zu served before seq %zu",
			    k + 1, k);
		if ((ti = sim_task_index(s, r->peer)) < 0)
			continue;
		if (r->tag != PMON_GS_DEADTID)
			n[ti]++;
		else if (sim_task(s, (size_t)ti)->t_end > r->t_true)
			fail(c, P_SIM, "pvmgs told of t%x's end before it",
			    (unsigned)r->peer);
	}
	for (i = 0; i < nt; i++) {
		t = sim_task(s, i);
		for (k = 0; k < t->nrecs && !t->group_server; k++)
			n[i] -= (t->recs[k].flags & RECORD_GS) != 0;
		if (n[i] != 0 && !(n[i] == 1 && t->nrecs > 0 &&
		    t->recs[t->nrecs - 1].phase == PMON_BEGIN))
			fail(c, P_SIM, "pvmgs served t%x %+" PRId64 " requests "
			    "more than its calls sent", (unsigned)t->tid,
			    (int64_t)n[i]);
	}
	free(n);
}

/* --- running one seed ---------------------------------------------------- */

/* Do the tasks only send and receive messages (no group, no notify)? */
static int
messages_only(const struct sim *s)
{
	const struct sim_task *t;
	size_t i, k;

	for (i = 0; i < sim_ntasks(s); i++) {
		t = sim_task(s, i);
		for (k = 0; k < t->nrecs; k++)
			if (t->recs[k].group != 0 ||
			    t->recs[k].call == PMON_CALL_notify)
				return 0;
	}
	return 1;
}

/* Counts a run with groups by what pvmgs did. */
static void
gs_tally(const struct check *c)
{
	struct gs_count *k = &g.gs[c->server < 0 ? GS_NONE : c->exact ?
	    GS_EXACT : GS_LOSSY];

	k->runs++;
	k->flagged += c->nflagged;
	k->flagged_runs += c->nflagged > 0;
	k->incons += c->nincons;
	k->incons_runs += c->nincons > 0;
}

static struct order *
order_with(struct collect *co, struct clock **clkp, enum clock_algo algo,
    uint64_t lmin)
{
	struct clock_params cp;
	struct order *o;

	clock_params_default(&cp);
	cp.algo = algo;
	cp.lmin_ns = lmin;
	if ((*clkp = clock_new(&cp)) == NULL ||
	    (o = order_new(collect_cb, co)) == NULL)
		abort();
	order_set_clock(o, *clkp);
	return o;
}

/* --- a tree of coordinators ------------------------------------------- */

static int
out_cmp(const void *a, const void *b)
{
	const struct out *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * A notify names the end of the k-th watched task to end, and which one
 * that is depends on the order the ends went out in.
 */
static int
is_notify(const struct check *c, const struct out *o)
{
	const struct sim_task *t = sim_task(c->s, o->task);
	const struct sim_rec *rec;

	if ((o->flags & EVENT_LOST) || o->seq == 0 || o->seq > t->nrecs)
		return 0;
	rec = &t->recs[o->seq - 1];
	return rec->msg != 0 && sim_msg(c->s, rec->msg - 1)->src == UINT32_MAX;
}

/*
 * The tree released what one coordinator released, every receive with
 * the same send: a linearisation consistent with one coordinator's.
 * (Its order itself is checked like any stream, check_run.)
 */
static void
same_matches(struct check *c, const struct run *alone, const struct run *tree)
{
	struct out *a, *b;
	size_t i;

	if (alone->n != tree->n) {
		fail(c, P_TREE, "%zu events, one coordinator %zu", tree->n,
		    alone->n);
		return;
	}
	if ((a = malloc(alone->n * sizeof(*a) + 1)) == NULL ||
	    (b = malloc(tree->n * sizeof(*b) + 1)) == NULL)
		abort();
	memcpy(a, alone->outs, alone->n * sizeof(*a));
	memcpy(b, tree->outs, tree->n * sizeof(*b));
	qsort(a, alone->n, sizeof(*a), out_cmp);
	qsort(b, tree->n, sizeof(*b), out_cmp);
	for (i = 0; i < alone->n; i++) {
		if (a[i].task == b[i].task && a[i].seq == b[i].seq &&
		    (a[i].flags & ~EVENT_INCONSISTENT) ==
		    (b[i].flags & ~EVENT_INCONSISTENT) &&
		    ((a[i].match_tid == b[i].match_tid &&
		    a[i].match_seq == b[i].match_seq) || is_notify(c, &b[i])))
			continue;
		fail(c, P_TREE, "t%x seq %" PRIu64 " flags %#x match t%x:%"
		    PRIu64 "; one coordinator: t%x seq %" PRIu64 " flags %#x "
		    "match t%x:%" PRIu64,
		    (unsigned)sim_task(c->s, b[i].task)->tid, b[i].seq,
		    b[i].flags, (unsigned)b[i].match_tid, b[i].match_seq,
		    (unsigned)sim_task(c->s, a[i].task)->tid, a[i].seq,
		    a[i].flags, (unsigned)a[i].match_tid, a[i].match_seq);
		break;
	}
	free(a);
	free(b);
}

static uint64_t
root_matched(struct order *o)
{
	struct order_stats st;

	order_stats(o, &st);
	return st.matched;
}

/*
 * The same delivery into a tree of 2 or 3 subtrees (sim_tree_replay),
 * checked like the one coordinator's stream and against it.
 */
static void
tree_run(struct check *c, const struct sim *s, const struct sim_script *sc,
    const struct run *alone, uint64_t lmin)
{
	struct run r;
	struct collect co;
	struct clock *clk;
	struct order *root;
	struct sim_tree *tr;
	struct order *sub;
	struct order_stats st;
	const char *why = NULL;
	uint64_t matched_below = 0;
	unsigned k;

	memset(&r, 0, sizeof(r));
	memset(&co, 0, sizeof(co));
	co.run = &r;
	co.s = s;
	root = order_with(&co, &clk, CLOCK_CLC, lmin);
	if ((tr = sim_tree_new(s, 2 + (unsigned)(c->seed % 2), root)) == NULL)
		abort();
	c->tree = 1;
	c->algo = CLOCK_CLC;
	if (sim_tree_replay(tr, sc, &why) == -1)
		fail(c, P_API, "%s", why);
	else {
		check_run(c, root, &r, 1);
		same_matches(c, alone, &r);
		for (k = 0; (sub = sim_tree_sub(tr, k)) != NULL; k++) {
			order_stats(sub, &st);
			if (st.held != 0 || st.retained != 0)
				fail(c, P_STATS, "subtree %u holds %zu events "
				    "and %zu sends at the end", k, st.held,
				    st.retained);
			matched_below += st.matched;
		}
		if (g.verbose)
			printf("tree: %" PRIu64 " receives matched below, %"
			    PRIu64 " at the root, %" PRIu64 " rounds not "
			    "judged at the root\n", matched_below,
			    r.n ? root_matched(root) - matched_below : 0,
			    sim_tree_rounds_unsettled(tr));
	}
	c->tree = 0;
	sim_tree_free(tr);
	order_free(root);
	clock_free(clk);
	free(r.outs);
}

static int
run_seed(uint64_t seed, enum sim_scenario sc, int drops)
{
	struct sim_params sp;
	struct sim_script script = { NULL, 0, 0 };
	struct run runs[NALGOS];
	struct collect co;
	struct actlog log;
	struct check c;
	struct clock *clk;
	struct order *o;
	struct sim *s;
	struct wstats w;
	const char *why = NULL;
	size_t nt, total = 0, i;
	uint64_t hz_events = 0, hz_ns = 0;
	int a, f, killed = 0;

	sim_params_default(&sp);
	sp.seed = seed;
	sp.scenario = sc;
	sp.drops = drops;
	sp.scale = g.scale;
	sp.notify = g.notify;
	sp.kills = g.kills;
	sp.gs_server = g.gs_server;
	if ((s = sim_new(&sp)) == NULL || sim_generate(s) == -1) {
		fprintf(stderr, "proptest: seed %" PRIu64 ": out of memory\n",
		    seed);
		exit(2);
	}
	if (g.verbose)
		dump_execution(s);
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.sc = sc;
	c.seed = seed;
	c.asked_drops = drops;
	if (sim_stalled(s) > 0)
		fail(&c, P_SIM, "%zu tasks stalled in the generator",
		    sim_stalled(s));
	/* Without deaths every program runs to its pvm_exit. */
	for (i = 0; sc < SIM_DEATH && g.kills != 1 && i < sim_ntasks(s); i++)
		if (sim_task(s, i)->t_end == UINT64_MAX &&
		    !sim_task(s, i)->group_server) {
			fail(&c, P_SIM, "t%x never ended: the programs "
			    "deadlocked", (unsigned)sim_task(s, i)->tid);
			break;
		}
	nt = sim_ntasks(s);
	for (i = 0; i < nt; i++)
		total += sim_task(s, i)->nrecs;
	/* Loss is tolerated where records were lost, not where asked. */
	for (i = 0; i < sim_ntasks(s); i++) {
		c.drops |= sim_task(s, i)->ndropped > 0;
		killed |= sim_task(s, i)->killed;
	}
	c.server = sim_group_server(s);
	c.exact = c.server >= 0 && !c.drops && !killed;
	check_server(&c);
	c.drain_pos = INT64_MAX;
	c.lmin = sp.lmin_ns;
	c.base = calloc(nt + 1, sizeof(*c.base));
	c.at_round = calloc(total + 1, sizeof(*c.at_round));
	c.pos = calloc(total + 1, sizeof(*c.pos));
	c.first = calloc(nt + 1, sizeof(*c.first));
	c.last = calloc(nt + 1, sizeof(*c.last));
	c.endpos = calloc(nt + 1, sizeof(*c.endpos));
	c.tainted_group = calloc(256, 1);
	c.first_drop = calloc(nt + 1, sizeof(*c.first_drop));
	co.lastseq = calloc(nt + 1, sizeof(*co.lastseq));
	if (!c.base || !c.at_round || !c.pos || !c.first || !c.last ||
	    !c.endpos || !c.tainted_group || !c.first_drop || !co.lastseq)
		abort();
	for (i = 0, total = 0; i < nt; i++) {
		c.endpos[i] = INT64_MAX;
		c.base[i] = total;
		total += sim_task(s, i)->nrecs;
	}
	taint(&c);
	c.hold_check = messages_only(s);
	g.hold_runs += (uint64_t)c.hold_check;
	memset(runs, 0, sizeof(runs));
	memset(&w, 0, sizeof(w));
	for (a = 0; a < (g.primary_only ? 1 : NALGOS); a++) {
		co.run = &runs[a];
		co.s = s;
		co.c = a == 0 ? &c : NULL;
		o = order_with(&co, &clk, algos[a], sp.lmin_ns);
		memset(&log, 0, sizeof(log));
		log.o = o;
		log.run = &runs[a];
		log.s = s;
		co.st[0] = co.st[1] = NULL;
		if (a == 0 && hz_wanted(seed))
			models_new(s, seed, co.st, &hz_events, &hz_ns);
		if (a == 0 && co.st[0] != NULL)
			order_set_done_cb(o, models_done, &co);
		if (a == 0) {
			log.c = &c;
			log.w = &w;
			log.st = co.st;
			if (g.verbose)
				printf("delivery:\n");
			f = sim_deliver(s, o, &script, act_cb, &log, &why);
		} else
			f = sim_replay(s, &script, o, NULL, NULL, &why);
		if (f == -1)
			fail(&c, P_API, "clock %s: %s", clock_algo_name(algos[a]),
			    why);
		if (a == 0 && g.verbose) {
			printf("stream (clock clc):\n");
			dump_stream(s, &runs[0]);
		}
		c.algo = algos[a];
		check_run(&c, o, &runs[a], a == 0);
		if (co.st[0] != NULL) {
			check_horizon(&c, co.st, hz_events, hz_ns);
			state_free(co.st[0]);
			state_free(co.st[1]);
			co.st[0] = co.st[1] = NULL;
		}
		distortion(&c, &runs[a], a);
		if (a > 0)
			same_order(&c, &runs[0], &runs[a], algos[a]);
		order_free(o);
		clock_free(clk);
	}
	if (!g.no_tree)
		tree_run(&c, s, &script, &runs[0], sp.lmin_ns);
	g.events += runs[0].n;
	if (*sim_group_name(s, 1) != '\0')
		gs_tally(&c);
	if (w.samples > 0) {
		g.w_mean_sum += w.held_sum / (double)w.samples;
		g.w_runs++;
	}
	if (w.held_max > g.w.held_max)
		g.w.held_max = w.held_max;
	if (w.task_held_max > g.w.task_held_max)
		g.w.task_held_max = w.task_held_max;
	if (w.retained_max > g.w.retained_max)
		g.w.retained_max = w.retained_max;
	if (w.state_waits_max > g.w.state_waits_max)
		g.w.state_waits_max = w.state_waits_max;
	g.w.marks += w.marks;
	for (a = 0; a < NALGOS; a++)
		free(runs[a].outs);
	sim_script_free(&script);
	free(c.base);
	free(c.at_round);
	free(c.pos);
	free(c.first);
	free(c.last);
	free(c.endpos);
	free(c.tainted_group);
	free(c.first_drop);
	free(co.lastseq);
	sim_free(s);
	f = (c.failed & ~g.ignore & ~SOFT_PROPS) != 0;
	if (g.verbose)
		printf("seed %" PRIu64 " %s%s: %s\n", seed,
		    sim_scenario_name(sc), drops ? " drops" : "",
		    f ? "FAILED" : "ok");
	return f;
}

/* --- main ------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr, "usage: proptest [-aNqv] [-g 0|1] [-l scale] "
	    "[-n runs] [-s seed] [-S scenario] [-d | -D] [-k] [-T] "
	    "[-x prop,...] [-z every]\n");
	exit(2);
}

static uint32_t
parse_props(char *list)
{
	uint32_t m = 0;
	char *p;
	int i;

	for (p = strtok(list, ","); p != NULL; p = strtok(NULL, ",")) {
		for (i = 0; i < P_NPROPS && strcmp(p, prop_names[i]) != 0; i++)
			;
		if (i == P_NPROPS) {
			fprintf(stderr, "proptest: unknown property %s\n", p);
			exit(2);
		}
		m |= 1u << i;
	}
	return m;
}

static void
report_gs(void)
{
	static const char *const what[GS_NKINDS] = {
		"pvmgs, nothing lost or killed", "pvmgs, losses or kills",
		"no pvmgs"
	};
	const struct gs_count *k;
	int i;

	printf("group server: %" PRIu64 " runs with groups, events flagged "
	    "inconsistent and unflagged inconsistencies:\n",
	    g.gs[GS_EXACT].runs + g.gs[GS_LOSSY].runs + g.gs[GS_NONE].runs);
	for (i = 0; i < GS_NKINDS; i++) {
		k = &g.gs[i];
		printf("  %s: %" PRIu64 " runs, %" PRIu64 " flagged (%" PRIu64
		    " runs), %" PRIu64 " inconsistent (%" PRIu64 " runs)\n",
		    what[i], k->runs, k->flagged, k->flagged_runs, k->incons,
		    k->incons_runs);
	}
}

static int
report(double secs)
{
	static const char *const an[NALGOS] = {
		"clc", "raw", "lamport", "kz", "tc"
	};
	struct failure *f;
	int sc, p, a, bad = 0, soft;
	double d[NALGOS];
	char gsopt[32] = "";

	if (g.gs_server >= 0)
		snprintf(gsopt, sizeof(gsopt), " -g %d", g.gs_server);
	if (g.scale != 1)
		snprintf(gsopt + strlen(gsopt), sizeof(gsopt) - strlen(gsopt),
		    " -l %u", g.scale);

	for (sc = 0; sc < SIM_NSCENARIOS; sc++)
		for (p = 0; p < P_NPROPS; p++) {
			f = &g.fail[sc][p];
			if (f->runs == 0)
				continue;
			soft = (SOFT_PROPS & (1u << p)) || (p == P_STATE &&
			    f->runs * 1000 <= g.scen_runs[sc] * STATE_PERMILLE);
			if (!soft)
				bad = 1;
			printf("%s %s/%s: %" PRIu64 " of %" PRIu64 " runs; "
			    "smallest: seed %" PRIu64 " (%zu records): %s\n"
			    "  replay: proptest -s %" PRIu64 " -S %s%s%s%s "
			    "-v\n",
			    soft ? "WARN" : "FAIL",
			    sim_scenario_name((enum sim_scenario)sc),
			    prop_names[p], f->runs, g.scen_runs[sc], f->seed,
			    f->records, f->what, f->seed,
			    sim_scenario_name((enum sim_scenario)sc),
			    f->drops ? " -d" : " -D", g.notify ? "" : " -N",
			    gsopt);
		}
	for (a = 0; a < NALGOS; a++)
		d[a] = g.dist_n[a] ? g.dist_sum[a] / (double)g.dist_n[a] : 0;
	printf("horizon: %" PRIu64 " frontiers compared, %" PRIu64 " beyond "
	    "the horizon; %" PRIu64 " runs with race checks not made\n",
	    g.hz_frontiers, g.hz_beyond, g.hz_unchecked);
	printf("hold: in %" PRIu64 " runs of messages only, an event waited "
	    "at most %" PRIu64 " rounds (bound %d)\n", g.hold_runs,
	    g.hold_max, HOLD_ROUNDS);
	/* The horizon's error must have been seen, not only its absence. */
	if (g.hz_frontiers >= 1000 && g.hz_beyond == 0) {
		printf("FAIL horizon: no frontier was beyond the horizon\n");
		bad = 1;
	}
	printf("proptest: %" PRIu64 " runs (%" PRIu64 " with drops), %"
	    PRIu64 " failed, %" PRIu64 " events, %" PRIu64 " lost markers, "
	    "%" PRIu64 " flush rounds, window mean %.2f held/task max %zu "
	    "(one task %zu) retained max %zu state waits max %zu, %.1f s\n",
	    g.runs, g.drop_runs, g.failed_runs, g.events, g.lost_markers,
	    g.w.marks, g.w_runs ? g.w_mean_sum / (double)g.w_runs : 0,
	    g.w.held_max, g.w.task_held_max, g.w.retained_max,
	    g.w.state_waits_max, secs);
	report_gs();
	if (!g.primary_only) {
		printf("distortion (mean |corrected - true| of local "
		    "intervals, us):");
		for (a = 0; a < NALGOS; a++)
			printf(" %s %.3f", an[a], d[a] / 1e3);
		printf("\n");
		if (!g.quiet)
			for (a = 0; a < NALGOS; a++)
				printf("  %s worst run: %.3f us, proptest -s %"
				    PRIu64 " -S %s%s\n", an[a],
				    g.dist_worst[a] / 1e3,
				    g.dist_worst_seed[a], sim_scenario_name(
				    (enum sim_scenario)g.dist_worst_sc[a]),
				    g.dist_worst_drops[a] ? " -d" : " -D");
		/* One run may have no message between hosts at all. */
		if (!(d[0] < d[2]) && g.dist_n[0] > 0 && g.runs >= 100) {
			printf("FAIL distortion: clc %.3f us is not below "
			    "lamport %.3f us\n", d[0] / 1e3, d[2] / 1e3);
			bad = 1;
		}
	}
	return bad;
}

int
main(int argc, char *argv[])
{
	uint64_t seed = 0, nruns = 7000, i;
	int single = 0, ch, scen = -1, drops = -1, sc, dr;
	struct timespec t0, t1;

	g.notify = 1;
	g.kills = -1;
	g.hz_every = 16;
	g.gs_server = -1;
	g.scale = 1;
	while ((ch = getopt(argc, argv, "adDg:kl:n:Nqs:S:Tvx:z:")) != -1) {
		switch (ch) {
		case 'a':
			g.primary_only = 1;
			break;
		case 'g':
			if (strcmp(optarg, "0") != 0 &&
			    strcmp(optarg, "1") != 0)
				usage();
			g.gs_server = optarg[0] - '0';
			break;
		case 'd':
			drops = 1;
			break;
		case 'D':
			drops = 0;
			break;
		case 'k':
			g.kills = 1;
			break;
		case 'l':
			if ((g.scale = (unsigned)strtoul(optarg, NULL, 0)) == 0)
				usage();
			break;
		case 'n':
			nruns = strtoull(optarg, NULL, 0);
			break;
		case 'N':
			g.notify = 0;
			break;
		case 'q':
			g.quiet = 1;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			single = 1;
			break;
		case 'S':
			if ((scen = sim_scenario_lookup(optarg)) == -1)
				usage();
			break;
		case 'T':
			g.no_tree = 1;
			break;
		case 'v':
			g.verbose++;
			break;
		case 'x':
			g.ignore = parse_props(optarg);
			break;
		case 'z':
			if ((g.hz_every = strtoull(optarg, NULL, 0)) == 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (single)
		g.hz_every = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < (single ? 1 : nruns); i++) {
		/* The sweep cycles through the scenarios (not the bench's)
		 * and drops records in one run of four. */
		sc = scen >= 0 ? scen : (int)(i % SIM_BENCH);
		dr = drops >= 0 ? drops : (int)(i / SIM_BENCH % 4 == 3);
		if (!single)
			seed = i + 1;
		g.runs++;
		g.drop_runs += (uint64_t)dr;
		g.scen_runs[sc]++;
		if (run_seed(seed, (enum sim_scenario)sc, dr)) {
			g.failed_runs++;
			g.scen_failed[sc]++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return report((double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9) ? 1 : 0;
}
