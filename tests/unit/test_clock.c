/*
 * Protects the clock correction the ordering core applies to every
 * released event: whatever the hosts' offsets and drifts, corrected times
 * of a task never decrease and an event comes at least lmin after its
 * remote predecessor; the on-line estimators find the offsets injected
 * into synthetic exchanges; and the controlled logical clock distorts the
 * intervals of a task far less than plain Lamport correction.
 *
 * Scenarios are built from a true timeline: host h reads
 * T0 + t + theta[h] + t * ppm[h] / 1e6 at true time t, so the expected
 * offsets and intervals come from the scenario, not from clock.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "unit.h"

#define T0		1700000000000000000ULL
#define MS		1000000LL
#define US		1000LL
#define ROUND		MS	/* one message per round */
#define LMIN		(20 * US)
#define MAXTASK		8
#define MAXHOST		4

static const enum clock_algo algos[] = {
	CLOCK_LAMPORT, CLOCK_KZ, CLOCK_TC, CLOCK_CLC
};
#define NALGOS	(sizeof(algos) / sizeof(algos[0]))

struct scen {
	int		 nhost;
	uint32_t	 hostid[MAXHOST];	/* the host numbers */
	int64_t		 theta[MAXHOST];	/* offset of host h, ns */
	int64_t		 ppm[MAXHOST];		/* its drift */
	int		 ntask;
	int		 host[MAXTASK];		/* host index of each task */
	int		 link[MAXHOST][MAXHOST]; /* a message h -> g allowed */
	int		 spawn;			/* children follow a spawn */
	int64_t		 lat_min, lat_max;
	int		 exact;			/* every exact-th message
						   takes lat_min exactly */
	int		 rounds;
	uint64_t	 seed;
};

struct result {
	double		 mae;		/* mean |corrected - true interval| */
	double		 mae_late;	/* the same over the second half */
	long		 bad_order;	/* a task's corrected time decreased */
	long		 bad_lmin;	/* an event before its pred + lmin */
	long		 bad_slew;	/* CLC: an interval without pred
					   changed by more than slew */
	int64_t		 est_err[MAXHOST]; /* offset estimate - truth, end */
};

struct tstate {
	struct clock_local	 l;
	uint64_t		 raw, corr;	/* last event */
	int64_t			 t;		/* its true time */
	int			 started;
};

struct run {
	const struct scen	*sc;
	struct clock		*clk;
	struct clock_params	 p;
	struct tstate		 ts[MAXTASK];
	struct result		*res;
	double			 err, err_late;
	long			 n, n_late;
	int64_t			 t_end;
};

static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t
raw_at(const struct scen *sc, int h, int64_t t)
{
	return T0 + (uint64_t)(t + sc->theta[h] + t * sc->ppm[h] / 1000000);
}

/* What must be added to host h's raw time at true time t to get the
 * reference's (host index 0) raw time. */
static int64_t
true_offset(const struct scen *sc, int h, int64_t t)
{
	return (int64_t)(raw_at(sc, 0, t) - raw_at(sc, h, t));
}

/* Corrects one event of task k at true time t; pred is the event of task
 * pk (or -1) given as its raw and corrected times. */
static void
event(struct run *r, int k, int64_t t, int pk, uint64_t praw,
    uint64_t pcorr, int message)
{
	const struct scen *sc = r->sc;
	struct tstate *ts = &r->ts[k];
	struct clock_pred pred, *pp = NULL;
	uint64_t raw = raw_at(sc, sc->host[k], t), c;
	double e;

	if (pk >= 0) {
		pred.raw = praw;
		pred.corr = pcorr;
		pred.host = sc->hostid[sc->host[pk]];
		pred.message = message;
		pp = &pred;
	}
	c = clock_correct(r->clk, sc->hostid[sc->host[k]], &ts->l, raw, pp);
	if (ts->started) {
		if (c < ts->corr)
			r->res->bad_order++;
		e = fabs((double)(c - ts->corr) - (double)(t - ts->t));
		r->err += e;
		r->n++;
		if (t > r->t_end / 2) {
			r->err_late += e;
			r->n_late++;
		}
		if (r->p.algo == CLOCK_CLC && pp == NULL && raw >= ts->raw &&
		    fabs((double)(c - ts->corr) - (double)(raw - ts->raw)) >
		    r->p.slew * (double)(raw - ts->raw) + 1.0)
			r->res->bad_slew++;
	}
	if (pp != NULL && c < pcorr + r->p.lmin_ns)
		r->res->bad_lmin++;
	ts->raw = raw;
	ts->corr = c;
	ts->t = t;
	ts->started = 1;
}

static int64_t
latency(const struct scen *sc, int nmsg)
{
	if (sc->exact != 0 && nmsg % sc->exact == 0)
		return sc->lat_min;
	return sc->lat_min + (int64_t)(rng() % (uint64_t)(sc->lat_max -
	    sc->lat_min + 1));
}

/*
 * Plays the scenario in true-time order (a causal order): optional
 * spawns of every task by task 0, then rounds of one message between two
 * tasks on linked hosts followed by a local event of every task.
 */
static void
play(const struct scen *sc, const struct clock_params *p, struct result *res)
{
	struct run r;
	int64_t t, lat;
	uint64_t sraw, scorr;
	int k, i, s, d, tries;

	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	r.sc = sc;
	r.p = *p;
	r.res = res;
	r.t_end = 10 * MS + (int64_t)sc->rounds * ROUND;
	r.clk = clock_new(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r.clk);
	rng_state = sc->seed * 0x9e3779b97f4a7c15ULL + 1;

	event(&r, 0, 0, -1, 0, 0, 0);
	for (k = 1; k < sc->ntask; k++) {
		t = k * 10 * US;
		if (!sc->spawn) {
			event(&r, k, 5 * MS + k * US, -1, 0, 0, 0);
			continue;
		}
		event(&r, 0, t, -1, 0, 0, 0);		/* the spawn */
		sraw = r.ts[0].raw;
		scorr = r.ts[0].corr;
		event(&r, k, 5 * MS + k * US, 0, sraw, scorr, 0);
	}
	for (i = 0; i < sc->rounds; i++) {
		t = 10 * MS + (int64_t)i * ROUND;
		for (tries = 0; tries < 100; tries++) {
			s = (int)(rng() % (uint64_t)sc->ntask);
			d = (int)(rng() % (uint64_t)sc->ntask);
			if (s != d && sc->link[sc->host[s]][sc->host[d]])
				break;
		}
		CU_ASSERT_FATAL(tries < 100);
		event(&r, s, t, -1, 0, 0, 0);		/* the send */
		sraw = r.ts[s].raw;
		scorr = r.ts[s].corr;
		lat = latency(sc, i);
		event(&r, d, t + lat, s, sraw, scorr, 1);
		for (k = 0; k < sc->ntask; k++)
			event(&r, k, t + 600 * US + k * 10 * US, -1, 0, 0, 0);
	}
	res->mae = r.n ? r.err / (double)r.n : 0.0;
	res->mae_late = r.n_late ? r.err_late / (double)r.n_late : 0.0;
	t = r.t_end;
	for (k = 0; k < sc->nhost; k++)
		res->est_err[k] = clock_offset(r.clk, sc->hostid[k],
		    raw_at(sc, k, t)) - true_offset(sc, k, t);
	clock_free(r.clk);
}

static void
params(struct clock_params *p, enum clock_algo a)
{
	clock_params_default(p);
	p->algo = a;
	p->lmin_ns = LMIN;
}

/* Two hosts exchanging both ways; b is ahead of a by theta_b - theta_a. */
static void
two_hosts(struct scen *sc, int64_t theta_b, int64_t ppm_a, int64_t ppm_b)
{
	memset(sc, 0, sizeof(*sc));
	sc->nhost = 2;
	sc->hostid[0] = 1;
	sc->hostid[1] = 2;
	sc->theta[1] = theta_b;
	sc->ppm[0] = ppm_a;
	sc->ppm[1] = ppm_b;
	sc->ntask = 4;
	sc->host[1] = 1;
	sc->host[2] = 0;
	sc->host[3] = 1;
	sc->link[0][0] = sc->link[0][1] = sc->link[1][0] = sc->link[1][1] = 1;
	sc->spawn = 1;
	sc->lat_min = LMIN;
	sc->lat_max = 500 * US;
	sc->rounds = 3000;
	sc->seed = 1;
}

/* Three hosts in a chain a - b - c: c is known only through b. */
static void
three_hosts(struct scen *sc)
{
	int k;

	memset(sc, 0, sizeof(*sc));
	sc->nhost = 3;
	sc->hostid[0] = 7;
	sc->hostid[1] = 3;
	sc->hostid[2] = 4095;
	sc->theta[1] = -60 * MS;
	sc->theta[2] = 95 * MS;
	sc->ppm[0] = 40;
	sc->ppm[1] = -80;
	sc->ppm[2] = 100;
	sc->ntask = 6;
	for (k = 0; k < 6; k++)
		sc->host[k] = k % 3;
	sc->link[0][1] = sc->link[1][0] = 1;
	sc->link[1][2] = sc->link[2][1] = 1;
	sc->link[0][0] = sc->link[1][1] = sc->link[2][2] = 1;
	sc->spawn = 1;
	sc->lat_min = LMIN;
	sc->lat_max = 300 * US;
	sc->rounds = 4000;
	sc->seed = 2;
}

static void
test_names(void)
{
	struct clock_params p;
	size_t i;

	clock_params_default(&p);
	CU_ASSERT_EQUAL(p.algo, CLOCK_CLC);
	CU_ASSERT_EQUAL(p.lmin_ns, 1000);
	CU_ASSERT_DOUBLE_EQUAL(p.slew, 0.1, 1e-12);
	for (i = 0; i <= CLOCK_CLC; i++)
		CU_ASSERT_EQUAL(clock_algo_lookup(
		    clock_algo_name((enum clock_algo)i)), (int)i);
	CU_ASSERT_STRING_EQUAL(clock_algo_name(CLOCK_KZ), "kz");
	CU_ASSERT_EQUAL(clock_algo_lookup("clc"), CLOCK_CLC);
	CU_ASSERT_EQUAL(clock_algo_lookup("ntp"), -1);
	CU_ASSERT_EQUAL(clock_algo_lookup(""), -1);
	clock_free(NULL);
}

/* CLOCK_RAW gives the raw time back, even out of order. */
static void
test_raw(void)
{
	struct clock_params p;
	struct clock_local l;
	struct clock_pred pred = { T0 + 500, T0 + 900, 2, 1 };
	struct clock *clk;

	params(&p, CLOCK_RAW);
	clk = clock_new(&p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(clk);
	memset(&l, 0, sizeof(l));
	CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, T0 + 100, NULL), T0 + 100);
	CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, T0 + 50, &pred), T0 + 50);
	CU_ASSERT_EQUAL(clock_offset(clk, 1, T0), 0);
	clock_free(clk);
}

/* The guarantees, for every algorithm, over many random scenarios. */
static void
test_guarantees(void)
{
	struct clock_params p;
	struct result res;
	struct scen sc;
	size_t a;
	uint64_t seed;

	for (seed = 1; seed <= 12; seed++) {
		if (seed % 2)
			two_hosts(&sc, (int64_t)(rng() % (200 * MS)) - 100 * MS,
			    (int64_t)(rng() % 201) - 100,
			    (int64_t)(rng() % 201) - 100);
		else
			three_hosts(&sc);
		sc.seed = seed;
		sc.rounds = 600;
		sc.spawn = seed % 3 != 0;
		for (a = 0; a < NALGOS; a++) {
			params(&p, algos[a]);
			play(&sc, &p, &res);
			CU_ASSERT_EQUAL(res.bad_order, 0);
			CU_ASSERT_EQUAL(res.bad_lmin, 0);
			CU_ASSERT_EQUAL(res.bad_slew, 0);
		}
	}
}

/*
 * Two hosts 80 ms apart without drift; every 8th message takes exactly
 * lmin, so each window's minimal delays pin the offset down: the
 * estimate must be within 2 us of -80 ms for TC and CLC.  KZ's shift is
 * only a bound: b, being ahead, is never shifted.
 */
static void
test_estimate_two_hosts(void)
{
	struct clock_params p;
	struct result res;
	struct scen sc;

	two_hosts(&sc, 80 * MS, 0, 0);
	sc.exact = 8;
	params(&p, CLOCK_TC);
	play(&sc, &p, &res);
	CU_ASSERT_EQUAL(res.est_err[0], 0);	/* the reference */
	CU_ASSERT(llabs(res.est_err[1]) <= 2 * US);
	params(&p, CLOCK_CLC);
	play(&sc, &p, &res);
	CU_ASSERT(llabs(res.est_err[1]) <= 2 * US);
	params(&p, CLOCK_KZ);
	play(&sc, &p, &res);
	CU_ASSERT_EQUAL(res.est_err[1], 80 * MS);
	params(&p, CLOCK_LAMPORT);
	play(&sc, &p, &res);
	CU_ASSERT_EQUAL(res.est_err[1], 80 * MS);	/* no estimate: 0 */
}

/*
 * The same with drifts of -60 and +90 ppm: the offset moves by 150 us a
 * second; after 3 s of messages the estimate at the end must be within
 * 10 us (a window's span of drift) of the truth.
 */
static void
test_estimate_drift(void)
{
	struct clock_params p;
	struct result res;
	struct scen sc;

	two_hosts(&sc, -45 * MS, -60, 90);
	sc.exact = 8;
	params(&p, CLOCK_CLC);
	play(&sc, &p, &res);
	CU_ASSERT(llabs(res.est_err[1]) <= 10 * US);
	params(&p, CLOCK_TC);
	play(&sc, &p, &res);
	CU_ASSERT(llabs(res.est_err[1]) <= 10 * US);
}

/*
 * Random latencies only (no exact minimum): the estimate is within the
 * half-difference of the two directions' excess minimal delays; with
 * 20-500 us latencies and 64 samples a window that stays well under
 * 50 us.
 */
static void
test_estimate_noisy(void)
{
	struct clock_params p;
	struct result res;
	struct scen sc;

	two_hosts(&sc, 100 * MS, 30, -30);
	params(&p, CLOCK_CLC);
	play(&sc, &p, &res);
	CU_ASSERT(llabs(res.est_err[1]) <= 50 * US);
}

/*
 * Three hosts in a chain: c exchanges messages with b only, so its
 * offset from the reference a is the sum along a - b - c; within 20 us
 * with drifts up to 100 ppm.
 */
static void
test_estimate_chain(void)
{
	struct clock_params p;
	struct result res;
	struct scen sc;

	three_hosts(&sc);
	sc.exact = 8;
	params(&p, CLOCK_CLC);
	play(&sc, &p, &res);
	CU_ASSERT_EQUAL(res.est_err[0], 0);
	CU_ASSERT(llabs(res.est_err[1]) <= 20 * US);
	CU_ASSERT(llabs(res.est_err[2]) <= 20 * US);
}

/*
 * Messages from a to b only: there is no two-way estimate, but the
 * fastest messages bound the offset; with some taking exactly lmin the
 * bound is the truth.
 */
static void
test_estimate_one_way(void)
{
	struct clock_params p;
	struct result res;
	struct scen sc;

	two_hosts(&sc, 70 * MS, 0, 0);
	memset(sc.link, 0, sizeof(sc.link));
	sc.link[0][1] = 1;
	sc.exact = 4;
	sc.rounds = 800;
	params(&p, CLOCK_TC);
	play(&sc, &p, &res);
	CU_ASSERT_EQUAL(res.bad_lmin, 0);
	CU_ASSERT(llabs(res.est_err[1]) <= 1 * US);
}

/*
 * b is 100 ms ahead: Lamport pushes every receive on a forward by
 * ~100 ms and then holds a's events still, so intervals are off by
 * ~100 ms per message; CLC, once the offset is estimated, stays within
 * microseconds.  Require CLC's mean error to be under a hundredth of
 * Lamport's (it is about a thousandth), below 20 us in absolute terms
 * and below 1 us over the second half of the run.
 */
static void
test_clc_beats_lamport(void)
{
	struct clock_params p;
	struct result lam, clc, kz, tc;
	struct scen sc;

	two_hosts(&sc, 100 * MS, 50, -50);
	params(&p, CLOCK_LAMPORT);
	play(&sc, &p, &lam);
	params(&p, CLOCK_CLC);
	play(&sc, &p, &clc);
	params(&p, CLOCK_KZ);
	play(&sc, &p, &kz);
	params(&p, CLOCK_TC);
	play(&sc, &p, &tc);
	if (getenv("PMON_TEST_VERBOSE") != NULL)
		fprintf(stderr, "clock: interval error (ns), all / second "
		    "half: lamport %.0f clc %.0f/%.0f kz %.0f/%.0f "
		    "tc %.0f/%.0f\n", lam.mae, clc.mae, clc.mae_late, kz.mae,
		    kz.mae_late, tc.mae, tc.mae_late);
	CU_ASSERT(lam.mae > 10 * US);
	CU_ASSERT(clc.mae * 100 < lam.mae);
	CU_ASSERT(clc.mae < 20 * US);
	CU_ASSERT(clc.mae_late < 1 * US);
	/*
	 * Not a guarantee, but what the design is for: KZ never takes back
	 * the ~100 ms shift it gives a after b's first message, CLC's
	 * estimate does not need it (about 11 us against 0.6 us here).
	 * TC comes close to CLC in this scenario, so it is not compared.
	 */
	CU_ASSERT(clc.mae * 4 < kz.mae);
}

/* A Lamport jump is lost at the next event; KZ keeps it. */
static void
test_kz_keeps_shift(void)
{
	struct clock_params p;
	struct clock_local la, lb;
	struct clock_pred pred;
	struct clock *clk;
	uint64_t c1, c2, cs;
	size_t i;
	const enum clock_algo two[] = { CLOCK_LAMPORT, CLOCK_KZ };

	/* b runs 50 ms behind a; a sends at true 0, b receives at 1 ms. */
	for (i = 0; i < 2; i++) {
		params(&p, two[i]);
		clk = clock_new(&p);
		CU_ASSERT_PTR_NOT_NULL_FATAL(clk);
		memset(&la, 0, sizeof(la));
		memset(&lb, 0, sizeof(lb));
		CU_ASSERT_EQUAL(clock_correct(clk, 1, &lb, T0 - 50 * MS - MS,
		    NULL), T0 - 50 * MS - MS);
		cs = clock_correct(clk, 0, &la, T0, NULL);
		CU_ASSERT_EQUAL(cs, T0);
		pred.raw = T0;
		pred.corr = cs;
		pred.host = 0;
		pred.message = 1;
		c1 = clock_correct(clk, 1, &lb, T0 - 50 * MS + MS, &pred);
		CU_ASSERT_EQUAL(c1, T0 + LMIN);
		c2 = clock_correct(clk, 1, &lb, T0 - 50 * MS + 2 * MS, NULL);
		if (two[i] == CLOCK_LAMPORT) {
			CU_ASSERT_EQUAL(c2, c1);
		} else {
			CU_ASSERT_EQUAL(c2, c1 + MS);
			CU_ASSERT_EQUAL(clock_offset(clk, 1, T0),
			    50 * MS - MS + LMIN);
		}
		clock_free(clk);
	}
}

/*
 * A spawned child's first event is put lmin after the spawn by TC and
 * CLC whether its host is ahead or behind (the estimate until messages
 * tell more); KZ only ever moves it forward.
 */
static void
test_spawn_seeds(void)
{
	struct clock_params p;
	struct clock_local lp, lc;
	struct clock_pred pred;
	struct clock *clk;
	uint64_t cs, c;
	size_t a;
	int ahead;

	for (a = 1; a < NALGOS; a++)
		for (ahead = 0; ahead < 2; ahead++) {
			params(&p, algos[a]);
			clk = clock_new(&p);
			CU_ASSERT_PTR_NOT_NULL_FATAL(clk);
			memset(&lp, 0, sizeof(lp));
			memset(&lc, 0, sizeof(lc));
			cs = clock_correct(clk, 0, &lp, T0, NULL);
			pred.raw = T0;
			pred.corr = cs;
			pred.host = 0;
			pred.message = 0;
			c = clock_correct(clk, 5, &lc, ahead ? T0 + 90 * MS :
			    T0 - 90 * MS, &pred);
			if (algos[a] == CLOCK_KZ && ahead) {
				CU_ASSERT_EQUAL(c, T0 + 90 * MS);
			} else {
				CU_ASSERT_EQUAL(c, T0 + LMIN);
			}
			/* The next event keeps the interval. */
			CU_ASSERT_EQUAL(clock_correct(clk, 5, &lc, ahead ?
			    T0 + 91 * MS : T0 - 89 * MS, NULL), c + MS);
			clock_free(clk);
		}
}

/* Raw time going backwards, or standing still, never moves an event back. */
static void
test_raw_backwards(void)
{
	struct clock_params p;
	struct clock_local l, m;
	struct clock_pred pred;
	struct clock *clk;
	uint64_t c, prev, raw;
	size_t a;
	int i;
	const int64_t steps[] = { 0, 1000, -5000, 0, 0, -1 * MS, 200, 3000,
	    -30 * MS, 10 * MS, 0 };

	for (a = 0; a < NALGOS; a++) {
		params(&p, algos[a]);
		clk = clock_new(&p);
		CU_ASSERT_PTR_NOT_NULL_FATAL(clk);
		memset(&l, 0, sizeof(l));
		memset(&m, 0, sizeof(m));
		prev = 0;
		raw = T0;
		for (i = 0; i < (int)(sizeof(steps) / sizeof(steps[0])); i++) {
			raw += (uint64_t)steps[i];
			c = clock_correct(clk, 3, &l, raw, NULL);
			CU_ASSERT(c >= prev);
			prev = c;
			/* Equal times from another host, as a message. */
			pred.raw = raw;
			pred.corr = c;
			pred.host = 3;
			pred.message = 1;
			c = clock_correct(clk, 9, &m, raw, &pred);
			CU_ASSERT(c >= pred.corr + LMIN);
		}
		clock_free(clk);
	}
}

/*
 * A predecessor on a host never seen, hosts up to 4095 and beyond the
 * module's table: the guarantees hold and offsets stay defined.
 */
static void
test_hosts(void)
{
	struct clock_params p;
	struct clock_local l[4];
	struct clock_pred pred;
	struct clock *clk;
	uint64_t c, prev[4] = { 0 };
	const uint32_t hosts[] = { 4095, 0, 2048, 100000 };
	size_t a;
	int i, k;

	for (a = 0; a < NALGOS; a++) {
		params(&p, algos[a]);
		clk = clock_new(&p);
		CU_ASSERT_PTR_NOT_NULL_FATAL(clk);
		memset(l, 0, sizeof(l));
		memset(prev, 0, sizeof(prev));
		/* The first event follows one on an unknown host. */
		pred.raw = T0 + 5 * MS;
		pred.corr = T0 + 5 * MS;
		pred.host = 1234;
		pred.message = 1;
		c = clock_correct(clk, 4095, &l[0], T0, &pred);
		CU_ASSERT(c >= T0 + 5 * MS + LMIN);
		prev[0] = c;
		for (i = 1; i < 200; i++) {
			k = i % 4;
			pred.raw = T0 + (uint64_t)i * 100 * US + (uint64_t)k *
			    7 * MS;
			pred.corr = prev[(k + 1) % 4];
			pred.host = hosts[(k + 1) % 4];
			pred.message = 1;
			c = clock_correct(clk, hosts[k], &l[k],
			    T0 + (uint64_t)i * 100 * US + (uint64_t)k * 3 * MS,
			    i % 3 ? &pred : NULL);
			CU_ASSERT(c >= prev[k]);
			if (i % 3) {
				CU_ASSERT(c >= pred.corr + LMIN);
			}
			prev[k] = c;
		}
		if (algos[a] != CLOCK_KZ) {	/* the reference */
			CU_ASSERT_EQUAL(clock_offset(clk, 4095, T0), 0);
		}
		CU_ASSERT_EQUAL(clock_offset(clk, 77, T0), 0);	/* unknown */
		CU_ASSERT_EQUAL(clock_offset(clk, 100000, T0), 0);
		(void)clock_offset(clk, 1234, T0);
		clock_free(clk);
	}
}

/* Times near the ends of the range saturate instead of wrapping. */
static void
test_extremes(void)
{
	struct clock_params p;
	struct clock_local l, m;
	struct clock_pred pred;
	struct clock *clk;
	uint64_t c;
	size_t a;

	for (a = 0; a < NALGOS; a++) {
		params(&p, algos[a]);
		clk = clock_new(&p);
		CU_ASSERT_PTR_NOT_NULL_FATAL(clk);
		memset(&l, 0, sizeof(l));
		memset(&m, 0, sizeof(m));
		/* b's first event follows a's far in its future. */
		CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, 10 * MS, NULL),
		    10 * MS);
		pred.raw = 10 * MS;
		pred.corr = 10 * MS;
		pred.host = 1;
		pred.message = 1;
		c = clock_correct(clk, 2, &m, 5 * T0, &pred);
		CU_ASSERT(c >= 10 * MS + LMIN);
		/* And a message back to a, from far in the future. */
		pred.raw = 5 * T0 + 1000;
		pred.corr = clock_correct(clk, 2, &m, 5 * T0 + 1000, NULL);
		pred.host = 2;
		c = clock_correct(clk, 1, &l, 11 * MS, &pred);
		CU_ASSERT(c >= pred.corr + LMIN);
		pred.corr = UINT64_MAX - 10;
		c = clock_correct(clk, 1, &l, 12 * MS, &pred);
		CU_ASSERT_EQUAL(c, UINT64_MAX);
		CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, 13 * MS, NULL),
		    UINT64_MAX);
		clock_free(clk);
	}
}

/*
 * An event without a time (raw 0: a lost marker) only gets the bounds,
 * and does not disturb the task's intervals or the host's shift; a
 * predecessor without a raw time only bounds.
 */
static void
test_untimed(void)
{
	struct clock_params p;
	struct clock_local l, m;
	struct clock_pred pred;
	struct clock *clk;
	uint64_t c;
	size_t a;

	for (a = 0; a < NALGOS; a++) {
		params(&p, algos[a]);
		clk = clock_new(&p);
		CU_ASSERT_PTR_NOT_NULL_FATAL(clk);
		memset(&l, 0, sizeof(l));
		memset(&m, 0, sizeof(m));
		CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, T0, NULL), T0);
		CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, T0 + MS, NULL),
		    T0 + MS);
		CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, 0, NULL), T0 + MS);
		CU_ASSERT_EQUAL(clock_correct(clk, 1, &l, T0 + 2 * MS, NULL),
		    T0 + 2 * MS);
		/* Host 2's first event is untimed but follows a spawn. */
		pred.raw = T0 + 2 * MS;
		pred.corr = T0 + 2 * MS;
		pred.host = 1;
		pred.message = 0;
		c = clock_correct(clk, 2, &m, 0, &pred);
		CU_ASSERT_EQUAL(c, T0 + 2 * MS + LMIN);
		c = clock_correct(clk, 2, &m, T0 - 40 * MS, NULL);
		CU_ASSERT(c >= T0 + 2 * MS + LMIN);
		CU_ASSERT(c < T0 + 2 * MS + LMIN + 50 * MS);
		/* A message whose send has no raw time. */
		pred.raw = 0;
		pred.corr = c + 5 * MS;
		pred.host = 2;
		pred.message = 1;
		c = clock_correct(clk, 1, &l, T0 + 3 * MS, &pred);
		CU_ASSERT_EQUAL(c, pred.corr + LMIN);
		CU_ASSERT(llabs(clock_offset(clk, 1, T0)) < 100 * MS);
		CU_ASSERT(llabs(clock_offset(clk, 2, T0)) < 100 * MS);
		clock_free(clk);
	}
}

/* Out-of-range parameters are clamped, and the guarantees still hold. */
static void
test_bad_params(void)
{
	struct clock_params p;
	struct result res;
	struct scen sc;
	const double slews[] = { -1.0, 0.0, 5.0, NAN };
	size_t i;

	two_hosts(&sc, 30 * MS, 0, 0);
	sc.rounds = 300;
	for (i = 0; i < sizeof(slews) / sizeof(slews[0]); i++) {
		params(&p, CLOCK_CLC);
		p.slew = slews[i];
		play(&sc, &p, &res);
		CU_ASSERT_EQUAL(res.bad_order, 0);
		CU_ASSERT_EQUAL(res.bad_lmin, 0);
	}
	params(&p, CLOCK_CLC);
	p.algo = (enum clock_algo)42;
	play(&sc, &p, &res);
	CU_ASSERT_EQUAL(res.bad_order, 0);
	CU_ASSERT_EQUAL(res.bad_lmin, 0);
}

static CU_TestInfo clock_tests[] = {
	{ "names and defaults", test_names },
	{ "raw is raw", test_raw },
	{ "guarantees, random scenarios", test_guarantees },
	{ "estimate, two hosts", test_estimate_two_hosts },
	{ "estimate with drift", test_estimate_drift },
	{ "estimate, noisy latencies", test_estimate_noisy },
	{ "estimate along a chain", test_estimate_chain },
	{ "estimate from one direction", test_estimate_one_way },
	{ "clc beats lamport", test_clc_beats_lamport },
	{ "kz keeps its shift", test_kz_keeps_shift },
	{ "spawn seeds a host", test_spawn_seeds },
	{ "raw time backwards or equal", test_raw_backwards },
	{ "unknown and large hosts", test_hosts },
	{ "saturation", test_extremes },
	{ "events without a time", test_untimed },
	{ "bad parameters", test_bad_params },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo clock_suites[] = {
	{ "clock", NULL, NULL, NULL, NULL, clock_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(clock_suites)
