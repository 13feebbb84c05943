/*
 * Clock correction (clock.h, doc/clock.md).
 *
 * Per host the module keeps an estimate of what to add to the host's raw
 * time to put it on the reference timeline (the first host seen):
 *
 *  - CLOCK_KZ uses a shift that only grows: it is raised to what an
 *    event needs to come lmin after its remote predecessor, and kept;
 *  - CLOCK_TC and CLOCK_CLC estimate, per pair of hosts that exchange
 *    messages, the difference of their offsets from the minimal one-way
 *    delays in each direction over a window of samples, and fit a line
 *    through the windows for the drift.  Host estimates are the sums
 *    along a spanning tree of the pairs rooted at the reference (pairs
 *    with both directions first), recomputed when windows complete.  A
 *    host not linked to the reference yet is put lmin after the remote
 *    predecessor of its first event (a spawn, usually) and then falls
 *    back on KZ's rule.
 *
 * CLOCK_TC applies the estimate as it is; CLOCK_CLC lets a task's clock
 * run free within a dead band around it and slews back, by at most slew
 * of each raw interval, when it is outside.  All but CLOCK_RAW then
 * enforce the Lamport bounds.
 *
 * The hot path (an event with no remote predecessor, or one on its own
 * host) reads one host slot and does a few comparisons.  Storage grows
 * only when a new host or a new pair of hosts shows up.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "xmalloc.h"

/* Hosts above this get no estimates, only the guarantees. */
#define CLOCK_HOST_MAX		65536
/* Samples in a pair's window once it has an estimate: from 2 to this. */
#define CLOCK_WINDOW_MAX	64
/* A window with both directions closes after this much raw time (ns). */
#define CLOCK_WINDOW_SPAN	1000000000ULL
/* A one-way window (bounds only) completes after this many windows. */
#define CLOCK_ONEWAY_FACTOR	4
/* A pair's line is fitted to the windows of about the last TAU s. */
#define CLOCK_FIT_TAU		1.0
/* The slope is fitted once the windows' times spread this much (s). */
#define CLOCK_FIT_SPREAD	0.1
#define CLOCK_DRIFT_MAX		1e-3
/* Up to this many hosts + pairs, recompute at every window. */
#define CLOCK_RECOMPUTE_SMALL	256
/* Delay samples beyond this (ns, about 36 years) are ignored. */
#define CLOCK_DELAY_MAX		(1LL << 60)
/* The start-up delays of the last this many children are kept... */
#define CLOCK_STARTUP_KEPT	15
/* ...if below this (ns). */
#define CLOCK_STARTUP_MAX	10000000000LL
/* CLC's dead band never exceeds this (ns). */
#define CLOCK_BAND_MAX		50000LL

struct clock_host {
	int64_t		 off;		/* estimate at raw time base */
	double		 drift;		/* its change per ns of raw time */
	uint64_t	 base;
	int64_t		 shift;		/* KZ shift, and the fallback */
	int64_t		 band;		/* CLC: tolerated deviation */
	int64_t		 err;		/* bound on off's error, or
					   INT64_MAX */
	uint32_t	 adj;		/* recompute: first edge in adjv */
	uint32_t	 nadj;
	uint8_t		 seen;
	uint8_t		 started;	/* an event was corrected */
	uint8_t		 linked;	/* estimated through the pairs */
	uint8_t		 visited;	/* recompute scratch */
};

/*
 * What the messages between hosts a < b tell about x = est(b) - est(a):
 * a message a->b with delay D = recv_raw - send_raw needs
 * x >= lmin - D, and a message b->a needs x <= D - lmin.  The minima of
 * D over a window in each direction give the tightest bounds; halfway
 * between them is the estimate (Taylor & Coffin's apportioning with
 * equal variances), half their distance its uncertainty.
 */
enum pair_state {
	PAIR_NONE,		/* no window completed */
	PAIR_BOUND,		/* one direction only: x is a bound */
	PAIR_BOTH		/* both directions: x is an estimate */
};

/* Times of a pair are raw times of host a. */
struct clock_pair {
	uint32_t	 a, b;		/* a < b */
	/* The current window, per direction: 0 is a->b, 1 is b->a. */
	int64_t		 dmin[2];
	uint64_t	 wstart, wlast;	/* receive times in the window */
	uint32_t	 n[2];
	uint32_t	 wsize;
	enum pair_state	 state;
	int64_t		 val;		/* x at raw time t */
	double		 slope;
	uint64_t	 t;
	int64_t		 unc;
	/*
	 * Weighted sums over the windows of the fit: x in s and y in ns
	 * from the newest window's (ft, fy).
	 */
	uint64_t	 ft;
	int64_t		 fy;
	double		 s0, s1, s2, sy, sty;
};

struct clock {
	struct clock_params	 p;
	int64_t			 lmin;
	struct clock_host	*hosts;
	uint32_t		 nhosts;	/* slots allocated */
	uint32_t		*ids;		/* the hosts seen */
	uint32_t		 nids, ids_cap;
	int			 have_ref;
	uint32_t		 ref;

	struct clock_pair	*pairs;
	uint32_t		 npairs, pairs_cap;
	uint32_t		*ptab;		/* pair index + 1, 0 empty */
	uint32_t		 ptab_cap;	/* a power of two */

	int			 dirty;		/* a window completed */
	uint64_t		 since;		/* samples since recompute */
	int64_t			 startup[CLOCK_STARTUP_KEPT];
	unsigned		 nstartup, startup_next;
	uint32_t		*queue;		/* recompute scratch */
	uint32_t		*adjv;
	uint32_t		 queue_cap, adjv_cap;
};

static const char *const clock_names[] = {
	"raw", "lamport", "kz", "tc", "clc"
};
#define CLOCK_NALGOS	(sizeof(clock_names) / sizeof(clock_names[0]))

static void	clock_attach(struct clock *, struct clock_pair *, uint64_t);
static void	clock_recompute(struct clock *, uint64_t);

void
clock_params_default(struct clock_params *p)
{
	memset(p, 0, sizeof(*p));
	p->algo = CLOCK_CLC;
	p->lmin_ns = 1000;
	p->slew = 0.1;
}

const char *
clock_algo_name(enum clock_algo a)
{
	if ((unsigned)a >= CLOCK_NALGOS)
		return "unknown";
	return clock_names[a];
}

int
clock_algo_lookup(const char *name)
{
	size_t i;

	if (name == NULL)
		return -1;
	for (i = 0; i < CLOCK_NALGOS; i++)
		if (strcmp(name, clock_names[i]) == 0)
			return (int)i;
	return -1;
}

struct clock *
clock_new(const struct clock_params *p)
{
	struct clock *clk;

	clk = xcalloc(1, sizeof(*clk));
	clk->p = *p;
	if ((unsigned)clk->p.algo >= CLOCK_NALGOS)
		clk->p.algo = CLOCK_CLC;
	if (!(clk->p.slew >= 0.0))	/* also NaN */
		clk->p.slew = 0.0;
	if (clk->p.slew > 1.0)
		clk->p.slew = 1.0;
	clk->lmin = clk->p.lmin_ns > INT64_MAX / 4 ? INT64_MAX / 4 :
	    (int64_t)clk->p.lmin_ns;
	return clk;
}

void
clock_free(struct clock *clk)
{
	if (clk == NULL)
		return;
	free(clk->hosts);
	free(clk->pairs);
	free(clk->ptab);
	free(clk->queue);
	free(clk->adjv);
	free(clk->ids);
	free(clk);
}

/* raw + d, kept within 0 .. UINT64_MAX. */
static uint64_t
clock_add(uint64_t raw, int64_t d)
{
	if (d >= 0)
		return raw > UINT64_MAX - (uint64_t)d ? UINT64_MAX :
		    raw + (uint64_t)d;
	if (d == INT64_MIN || raw < (uint64_t)-d)
		return 0;
	return raw - (uint64_t)-d;
}

/* a - b as a signed difference, saturated. */
static int64_t
clock_diff(uint64_t a, uint64_t b)
{
	if (a >= b)
		return a - b > (uint64_t)INT64_MAX ? INT64_MAX :
		    (int64_t)(a - b);
	return b - a > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(b - a);
}

/* a + b for estimates, saturated. */
static int64_t
clock_sadd(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < -INT64_MAX - b)
		return -INT64_MAX;
	return a + b;
}

/* Grows a uint32_t scratch array to n. */
static void
clock_scratch(uint32_t **v, uint32_t *cap, uint32_t n)
{
	if (n <= *cap)
		return;
	*v = xreallocarray(*v, n, sizeof(**v));
	*cap = n;
}

/* The slot of host, allocated on first sight; NULL past the limit. */
static struct clock_host *
clock_host_get(struct clock *clk, uint32_t host)
{
	struct clock_host *h;
	uint32_t n;

	if (host < clk->nhosts && clk->hosts[host].seen)
		return &clk->hosts[host];
	if (host >= CLOCK_HOST_MAX)
		return NULL;
	if (host >= clk->nhosts) {
		n = clk->nhosts ? clk->nhosts : 16;
		while (n <= host)
			n *= 2;
		h = xreallocarray(clk->hosts, n, sizeof(*h));
		memset(h + clk->nhosts, 0,
		    (n - clk->nhosts) * sizeof(*h));
		clk->hosts = h;
		clk->nhosts = n;
	}
	clock_scratch(&clk->ids, &clk->ids_cap, clk->nids + 1);
	clk->ids[clk->nids++] = host;
	h = &clk->hosts[host];
	h->seen = 1;
	if (!clk->have_ref) {
		clk->have_ref = 1;
		clk->ref = host;
		h->linked = 1;
	}
	return h;
}

/* The current estimate for h at raw time raw. */
static int64_t
clock_est(const struct clock *clk, const struct clock_host *h, uint64_t raw)
{
	if (clk->p.algo == CLOCK_KZ || !h->linked)
		return h->shift;
	if (h->drift == 0.0)
		return h->off;
	return clock_sadd(h->off,
	    (int64_t)(h->drift * (double)clock_diff(raw, h->base)));
}

/* Host's raw time on the reference timeline, by the current estimate. */
static uint64_t
clock_ref_time(const struct clock *clk, uint32_t host, uint64_t raw)
{
	return clock_add(raw, clock_est(clk, &clk->hosts[host], raw));
}

static uint32_t
clock_pair_hash(uint32_t a, uint32_t b)
{
	uint64_t k = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ULL;

	return (uint32_t)(k >> 32);
}

static void
clock_ptab_grow(struct clock *clk)
{
	uint32_t *tab, cap, i, j;
	struct clock_pair *pr;

	cap = clk->ptab_cap ? clk->ptab_cap * 2 : 64;
	tab = xcalloc(cap, sizeof(*tab));
	for (i = 0; i < clk->npairs; i++) {
		pr = &clk->pairs[i];
		j = clock_pair_hash(pr->a, pr->b) & (cap - 1);
		while (tab[j] != 0)
			j = (j + 1) & (cap - 1);
		tab[j] = i + 1;
	}
	free(clk->ptab);
	clk->ptab = tab;
	clk->ptab_cap = cap;
}

/* The pair of hosts a < b, created on first sight. */
static struct clock_pair *
clock_pair_get(struct clock *clk, uint32_t a, uint32_t b)
{
	struct clock_pair *pr;
	uint32_t j, n;

	if (clk->ptab_cap != 0) {
		j = clock_pair_hash(a, b) & (clk->ptab_cap - 1);
		while (clk->ptab[j] != 0) {
			pr = &clk->pairs[clk->ptab[j] - 1];
			if (pr->a == a && pr->b == b)
				return pr;
			j = (j + 1) & (clk->ptab_cap - 1);
		}
	}
	if ((clk->npairs + 1) * 2 > clk->ptab_cap)
		clock_ptab_grow(clk);
	if (clk->npairs == clk->pairs_cap) {
		n = clk->pairs_cap ? clk->pairs_cap * 2 : 16;
		pr = xreallocarray(clk->pairs, n, sizeof(*pr));
		clk->pairs = pr;
		clk->pairs_cap = n;
	}
	pr = &clk->pairs[clk->npairs];
	memset(pr, 0, sizeof(*pr));
	pr->a = a;
	pr->b = b;
	pr->wsize = 1;
	j = clock_pair_hash(a, b) & (clk->ptab_cap - 1);
	while (clk->ptab[j] != 0)
		j = (j + 1) & (clk->ptab_cap - 1);
	clk->ptab[j] = ++clk->npairs;
	return pr;
}

/*
 * Ages the fit's sums by f and moves their origin by (dx s, dy ns), so
 * that the numbers stay small however long the run.
 */
static void
clock_fit_move(struct clock_pair *pr, double f, double dx, double dy)
{
	pr->s0 *= f;
	pr->s1 *= f;
	pr->s2 *= f;
	pr->sy *= f;
	pr->sty *= f;
	pr->sty += -dy * pr->s1 - dx * pr->sy + dx * dy * pr->s0;
	pr->s2 += -2.0 * dx * pr->s1 + dx * dx * pr->s0;
	pr->s1 -= dx * pr->s0;
	pr->sy -= dy * pr->s0;
}

static double
clock_clamp_drift(double s)
{
	if (s > CLOCK_DRIFT_MAX)
		return CLOCK_DRIFT_MAX;
	if (s < -CLOCK_DRIFT_MAX)
		return -CLOCK_DRIFT_MAX;
	return s;
}

static int64_t
clock_pair_at(const struct clock_pair *pr, uint64_t t)
{
	if (pr->slope == 0.0)
		return pr->val;
	return clock_sadd(pr->val,
	    (int64_t)(pr->slope * (double)clock_diff(t, pr->t)));
}

/*
 * A window with samples in both directions: x between lo and hi, so
 * about their middle m (Taylor & Coffin's apportioning with equal
 * variances).  The middles of the windows are fitted with a line by
 * weighted least squares: a window weighs less the older it is
 * (exp(-age / TAU)) and the wider its bounds.  The slope is the drift,
 * once the windows span enough time to tell it.  The result is kept
 * within this window's bounds so that its fastest messages stay
 * consistent.
 */
static void
clock_pair_both(struct clock_pair *pr, int64_t lo, int64_t hi, uint64_t t)
{
	double f, w, mt, vt, slope;
	int64_t m;

	m = lo + (hi - lo) / 2;
	pr->unc = hi > lo ? (hi - lo) / 2 : 0;
	if (pr->state != PAIR_BOTH) {
		pr->state = PAIR_BOTH;
		pr->slope = 0.0;
		pr->s0 = pr->s1 = pr->s2 = pr->sy = pr->sty = 0.0;
	} else {
		f = t > pr->ft ? exp(-(double)(t - pr->ft) / 1e9 /
		    CLOCK_FIT_TAU) : 1.0;
		clock_fit_move(pr, f, (double)clock_diff(t, pr->ft) / 1e9,
		    (double)(m - pr->fy));
	}
	/* The sums are about the newest window: it is at (0, 0). */
	pr->t = pr->ft = t;
	pr->fy = m;
	w = (double)pr->unc / 1e3;
	pr->s0 += 1.0 / (w * w + 1.0);

	mt = pr->s1 / pr->s0;
	vt = pr->s2 / pr->s0 - mt * mt;
	slope = pr->slope * 1e9;		/* ns per s */
	if (vt >= CLOCK_FIT_SPREAD * CLOCK_FIT_SPREAD)
		slope = (pr->sty / pr->s0 - mt * pr->sy / pr->s0) / vt;
	pr->slope = clock_clamp_drift(slope / 1e9);
	f = pr->sy / pr->s0 - pr->slope * 1e9 * mt;
	pr->val = m + (int64_t)f;
	if (lo <= hi) {
		if (pr->val < lo)
			pr->val = lo;
		if (pr->val > hi)
			pr->val = hi;
	}
}

/* A window with one direction only: x >= lo (dir 0) or x <= hi (dir 1). */
static void
clock_pair_bound(struct clock_pair *pr, int dir, int64_t v, uint64_t t)
{
	int64_t cur;

	if (pr->state == PAIR_NONE) {
		pr->state = PAIR_BOUND;
		pr->val = v;
		pr->slope = 0.0;
		pr->unc = 0;
		pr->t = t;
		return;
	}
	cur = clock_pair_at(pr, t);
	if ((dir == 0 && cur < v) || (dir == 1 && cur > v)) {
		pr->val = v;
		pr->t = t;
	}
}

/* Closes the pair's window; returns 1 if the pair's state changed. */
static int
clock_pair_close(struct clock *clk, struct clock_pair *pr)
{
	enum pair_state old = pr->state;
	int64_t lo, hi, mv;
	uint64_t t;

	/* The bounds at the middle of the window. */
	t = pr->wstart + (pr->wlast - pr->wstart) / 2;
	mv = (int64_t)(pr->slope * (double)(t - pr->wstart));
	lo = clk->lmin - pr->dmin[0] + mv;
	hi = pr->dmin[1] - clk->lmin + mv;
	if (pr->n[0] != 0 && pr->n[1] != 0) {
		clock_pair_both(pr, lo, hi, t);
		if (pr->wsize < 2)
			pr->wsize = 2;
		else if (pr->wsize < CLOCK_WINDOW_MAX)
			pr->wsize *= 2;
	} else if (pr->n[0] != 0)
		clock_pair_bound(pr, 0, lo, t);
	else
		clock_pair_bound(pr, 1, hi, t);
	pr->n[0] = pr->n[1] = 0;
	return pr->state != old;
}

/*
 * A one-way delay sample from a message src -> dst.  A window completes
 * after wsize samples with both directions present (at once for the
 * first sample of a pair, at once when a bound-only pair first hears the
 * other direction), or after CLOCK_ONEWAY_FACTOR windows' worth of one
 * direction only.
 */
static void
clock_sample(struct clock *clk, uint32_t src, uint64_t send, uint32_t dst,
    uint64_t recv)
{
	struct clock_pair *pr;
	uint64_t t, size;
	uint32_t tot;
	int64_t d, mv;
	int dir, done, span;

	if (src < dst) {
		pr = clock_pair_get(clk, src, dst);
		dir = 0;
	} else {
		pr = clock_pair_get(clk, dst, src);
		dir = 1;
	}
	d = clock_diff(recv, send);
	if (d > CLOCK_DELAY_MAX || d < -CLOCK_DELAY_MAX)
		return;		/* nonsense, and would overflow below */
	/*
	 * The pair's times are a's raw times: b's are about x behind.  The
	 * delay is taken less the drift of x since the window started:
	 * a->b delays are latency - x(t), b->a ones latency + x(t).
	 */
	t = dir == 0 ? clock_add(recv, pr->val) : recv;
	tot = pr->n[0] + pr->n[1];
	if (tot == 0)
		pr->wstart = pr->wlast = t;
	else if (t < pr->wstart) {
		/* Released out of time order: start the window earlier. */
		mv = (int64_t)(pr->slope * (double)(pr->wstart - t));
		pr->dmin[0] += mv;
		pr->dmin[1] -= mv;
		pr->wstart = t;
	}
	if (t > pr->wlast)
		pr->wlast = t;
	mv = (int64_t)(pr->slope * (double)(t - pr->wstart));
	d = dir == 0 ? d + mv : d - mv;
	if (pr->n[dir] == 0 || d < pr->dmin[dir])
		pr->dmin[dir] = d;
	pr->n[dir]++;
	clk->since++;
	tot++;
	span = pr->wlast - pr->wstart >= CLOCK_WINDOW_SPAN;

	switch (pr->state) {
	case PAIR_NONE:
		done = 1;
		break;
	case PAIR_BOUND:
		done = (pr->n[0] && pr->n[1]) || tot >= pr->wsize *
		    CLOCK_ONEWAY_FACTOR;
		break;
	default:
		done = (pr->n[0] && pr->n[1] && (tot >= pr->wsize || span)) ||
		    tot >= pr->wsize * CLOCK_ONEWAY_FACTOR;
		break;
	}
	if (done) {
		clk->dirty = 1;
		if (clock_pair_close(clk, pr))
			clock_attach(clk, pr, clock_ref_time(clk, dst, recv));
	}
	/*
	 * A recomputation costs O(hosts + pairs): done at every window for
	 * a small machine, amortized over as many samples for a large one.
	 */
	size = (uint64_t)clk->npairs + clk->nids;
	if (clk->dirty && (size <= CLOCK_RECOMPUTE_SMALL || clk->since >= size))
		clock_recompute(clk, clock_ref_time(clk, dst, recv));
}


/*
 * Sets child's estimate from parent's across pair pr, at time t on the
 * reference timeline.
 */
static void
clock_link(struct clock *clk, struct clock_pair *pr, uint32_t parent,
    uint32_t child, uint64_t t)
{
	struct clock_host *hp = &clk->hosts[parent], *hc = &clk->hosts[child];
	int64_t x;

	/* The pair's times are a's raw times. */
	if (parent == pr->a) {
		x = clock_pair_at(pr, clock_add(t, -hp->off));
		hc->off = clock_sadd(hp->off, x);
		hc->drift = clock_clamp_drift(hp->drift + pr->slope);
	} else {
		x = clock_pair_at(pr, clock_add(t, clock_sadd(-hp->off,
		    pr->val)));
		hc->off = clock_sadd(hp->off, -x);
		hc->drift = clock_clamp_drift(hp->drift - pr->slope);
	}
	hc->base = clock_add(t, -hc->off);
	hc->linked = 1;
	/* The bounds of each window hold the truth: add their widths. */
	hc->err = pr->state == PAIR_BOTH && hp->err != INT64_MAX ?
	    clock_sadd(hp->err, 2 * pr->unc + clk->lmin) : INT64_MAX;
}

/*
 * A pair has just told something for the first time, or both ways for
 * the first time: a host it joins to the reference's tree takes its
 * estimate from it at once (the rest waits for the next recomputation,
 * which also finds the better trees).
 */
static void
clock_attach(struct clock *clk, struct clock_pair *pr, uint64_t t)
{
	struct clock_host *ha = &clk->hosts[pr->a], *hb = &clk->hosts[pr->b];

	if (ha->linked && !hb->linked)
		clock_link(clk, pr, pr->a, pr->b, t);
	else if (hb->linked && !ha->linked)
		clock_link(clk, pr, pr->b, pr->a, t);
}

/*
 * CLC's dead band for h: half the smallest uncertainty of its pairs
 * with both directions.  Two tasks at opposite edges of their bands then
 * still leave the fastest messages between the hosts consistent, and
 * the estimate's noise within the band costs no distortion.
 */
static int64_t
clock_band(const struct clock *clk, const struct clock_host *h)
{
	const struct clock_pair *pr;
	int64_t b = -1;
	uint32_t k;

	for (k = 0; k < h->nadj; k++) {
		pr = &clk->pairs[clk->adjv[h->adj + k]];
		if (pr->state == PAIR_BOTH && (b < 0 || pr->unc < b))
			b = pr->unc;
	}
	if (b < 0)
		return 0;
	b /= 2;
	return b > CLOCK_BAND_MAX ? CLOCK_BAND_MAX : b;
}

/*
 * Breadth-first search from reached hosts over the pairs; with both
 * set, only pairs with samples in both directions are followed.
 */
static void
clock_bfs(struct clock *clk, uint32_t head, uint32_t tail, int both,
    uint64_t t)
{
	struct clock_pair *pr;
	uint32_t u, v, k;

	while (head < tail) {
		u = clk->queue[head++];
		for (k = 0; k < clk->hosts[u].nadj; k++) {
			pr = &clk->pairs[clk->adjv[clk->hosts[u].adj + k]];
			if (both && pr->state != PAIR_BOTH)
				continue;
			v = pr->a == u ? pr->b : pr->a;
			if (clk->hosts[v].visited)
				continue;
			clk->hosts[v].visited = 1;
			clock_link(clk, pr, u, v, t);
			clk->queue[tail++] = v;
		}
	}
}

/*
 * Recomputes every host's estimate along a spanning tree of the pairs
 * rooted at the reference: first over pairs with both directions (the
 * fewest hops), then over bound-only pairs for the hosts left.  Hosts
 * not reached fall back on their shift.
 */
static void
clock_recompute(struct clock *clk, uint64_t t)
{
	struct clock_host *h;
	struct clock_pair *pr;
	uint32_t i, n, tail;

	clk->dirty = 0;
	clk->since = 0;
	clock_scratch(&clk->queue, &clk->queue_cap, clk->nids);
	clock_scratch(&clk->adjv, &clk->adjv_cap, 2 * clk->npairs);

	for (i = 0; i < clk->nids; i++) {
		h = &clk->hosts[clk->ids[i]];
		h->nadj = 0;
		h->visited = 0;
	}
	for (i = 0; i < clk->npairs; i++) {
		pr = &clk->pairs[i];
		if (pr->state == PAIR_NONE)
			continue;
		clk->hosts[pr->a].nadj++;
		clk->hosts[pr->b].nadj++;
	}
	for (n = 0, i = 0; i < clk->nids; i++) {
		h = &clk->hosts[clk->ids[i]];
		h->adj = n;
		n += h->nadj;
		h->nadj = 0;
	}
	for (i = 0; i < clk->npairs; i++) {
		pr = &clk->pairs[i];
		if (pr->state == PAIR_NONE)
			continue;
		h = &clk->hosts[pr->a];
		clk->adjv[h->adj + h->nadj++] = i;
		h = &clk->hosts[pr->b];
		clk->adjv[h->adj + h->nadj++] = i;
	}

	for (i = 0; i < clk->nids; i++)
		clk->hosts[clk->ids[i]].err = INT64_MAX;
	h = &clk->hosts[clk->ref];
	h->visited = 1;
	h->err = 0;
	h->off = 0;
	h->drift = 0.0;
	h->base = t;
	clk->queue[0] = clk->ref;
	clock_bfs(clk, 0, 1, 1, t);
	for (tail = 0, i = 0; i < clk->nids; i++)
		if (clk->hosts[clk->ids[i]].visited)
			clk->queue[tail++] = clk->ids[i];
	clock_bfs(clk, 0, tail, 0, t);
	for (i = 0; i < clk->nids; i++) {
		h = &clk->hosts[clk->ids[i]];
		h->linked = h->visited;
		h->band = h->visited ? clock_band(clk, h) : 0;
	}
}

/* The Lamport bound: never before the task's last event or pred + lmin. */
static uint64_t
clock_bound(const struct clock *clk, const struct clock_local *l,
    const struct clock_pred *pred, uint64_t c)
{
	uint64_t b;

	if (l->started && c < l->corr)
		c = l->corr;
	if (pred != NULL) {
		b = clock_add(pred->corr, clk->lmin);
		if (c < b)
			c = b;
	}
	return c;
}

/*
 * CLC: from the last corrected time, advance by the raw interval,
 * stretched or shrunk by at most slew of it to come back within the
 * host's dead band around the target.
 */
static uint64_t
clock_clc(const struct clock *clk, const struct clock_host *h,
    const struct clock_local *l, uint64_t raw, uint64_t target)
{
	uint64_t dr, run, want, lo, hi;
	int64_t adj;

	dr = raw > l->raw ? raw - l->raw : 0;
	if (dr > INT64_MAX)
		dr = INT64_MAX;
	run = clock_add(l->corr, (int64_t)dr);
	if (run > clock_add(target, h->band))
		want = clock_add(target, h->band);
	else if (run < clock_add(target, -h->band))
		want = clock_add(target, -h->band);
	else
		return run;
	adj = (int64_t)((double)dr * clk->p.slew);
	if (adj > (int64_t)dr)
		adj = (int64_t)dr;
	lo = clock_add(run, -adj);
	hi = clock_add(run, adj);
	if (want < lo)
		return lo;
	if (want > hi)
		return hi;
	return want;
}

/*
 * The delay from a spawn to the child's first event: the median of the
 * last few seen on one clock (children on their parent's host), at
 * least lmin.  (Children on other hosts would tell it too, but through
 * estimates that are the least sure at the start, and lost records make
 * first events look late: the median of exact values is safer.)
 */
static int64_t
clock_startup(const struct clock *clk)
{
	int64_t v[CLOCK_STARTUP_KEPT], x;
	unsigned i, j, n = clk->nstartup;

	if (n == 0)
		return clk->lmin;
	for (i = 0; i < n; i++) {
		x = clk->startup[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return v[n / 2] > clk->lmin ? v[n / 2] : clk->lmin;
}

static void
clock_startup_note(struct clock *clk, int64_t d)
{
	if (d < 0 || d > CLOCK_STARTUP_MAX)
		return;
	clk->startup[clk->startup_next] = d;
	clk->startup_next = (clk->startup_next + 1) % CLOCK_STARTUP_KEPT;
	if (clk->nstartup < CLOCK_STARTUP_KEPT)
		clk->nstartup++;
}

/*
 * What a remote predecessor tells the host's shift (KZ, and the fallback
 * of hosts not linked yet).  The first event on a host is put after its
 * predecessor by the usual start-up delay if that is a spawn, by lmin if
 * it is a message, whether the host's raw clock is ahead or behind,
 * until messages tell more (KZ only raises: its shift starts at 0).
 * After that the shift is raised whenever an event would come less than
 * lmin after its predecessor, and kept.
 */
static void
clock_shift(struct clock *clk, struct clock_host *h, uint64_t raw,
    const struct clock_pred *pred)
{
	int64_t need;

	if (!h->started && clk->p.algo != CLOCK_KZ) {
		h->shift = clock_diff(clock_add(pred->corr, pred->message ?
		    clk->lmin : clock_startup(clk)), raw);
		return;
	}
	need = clock_diff(clock_add(pred->corr, clk->lmin), raw);
	if (need > h->shift && (clk->p.algo == CLOCK_KZ || !h->linked))
		h->shift = need;
}

/*
 * An event with no known time (a lost marker, say: raw 0) only gets the
 * Lamport bound; the next event's interval is taken from the last time
 * known.
 */
static uint64_t
clock_untimed(const struct clock *clk, struct clock_local *l,
    const struct clock_pred *pred)
{
	l->corr = clock_bound(clk, l, pred, l->started ? l->corr : 0);
	l->started = 1;
	return l->corr;
}

/*
 * Whether the next event of a task keeps its raw time but for the
 * Lamport bound: estimates are applied (TC, CLC), the host's is 0 and
 * does not drift (the reference host; every host of a run on one
 * computer), the task's clock so far is its raw clock, which did not
 * step back, and its predecessor, if any, is on the same host.  Then the
 * estimate, the dead band and the slew all leave the raw time as it is:
 * nearly every event of a run on one host takes this path.
 */
static int
clock_keeps_raw(const struct clock *clk, uint32_t host,
    const struct clock_local *l, uint64_t raw, const struct clock_pred *pred)
{
	const struct clock_host *h;

	if (clk->p.algo < CLOCK_TC || !l->started || l->raw == 0 ||
	    l->corr != l->raw || raw < l->raw || host >= clk->nhosts ||
	    (pred != NULL && pred->host != host))
		return 0;
	h = &clk->hosts[host];
	return h->started && h->linked && h->off == 0 && h->drift == 0.0;
}

uint64_t
clock_correct(struct clock *clk, uint32_t host, struct clock_local *l,
    uint64_t raw, const struct clock_pred *pred)
{
	struct clock_host *h;
	uint64_t c, target;
	int remote, first;

	if (clk->p.algo == CLOCK_RAW) {
		c = raw;
		goto done;
	}
	if (clock_keeps_raw(clk, host, l, raw, pred)) {
		c = clock_bound(clk, l, pred, raw);
		goto done;
	}
	if (raw == 0)
		return clock_untimed(clk, l, pred);
	if (clk->p.algo == CLOCK_LAMPORT ||
	    (h = clock_host_get(clk, host)) == NULL) {
		c = clock_bound(clk, l, pred, raw);
		goto done;
	}
	/* A predecessor without a time tells nothing but its bound. */
	remote = pred != NULL && pred->host != host && pred->corr != 0 &&
	    pred->raw != 0;
	first = !l->started;
	if (remote) {
		/* The predecessor's host takes part even if never seen. */
		if (clock_host_get(clk, pred->host) != NULL) {
			if (pred->message && clk->p.algo >= CLOCK_TC)
				clock_sample(clk, pred->host, pred->raw, host,
				    raw);
			h = &clk->hosts[host];	/* the slots may move */
		}
		clock_shift(clk, h, raw, pred);
	} else if (first && pred != NULL && pred->host == host &&
	    !pred->message && pred->raw != 0)
		clock_startup_note(clk, clock_diff(raw, pred->raw));
	h->started = 1;

	target = clock_add(raw, clock_est(clk, h, raw));
	/* CLC needs the last time of the task. */
	if (clk->p.algo == CLOCK_CLC && !first && l->raw != 0)
		target = clock_clc(clk, h, l, raw, target);
	c = clock_bound(clk, l, pred, target);
done:
	l->raw = raw;
	l->corr = c;
	l->started = 1;
	return c;
}

int64_t
clock_error(const struct clock *clk, uint32_t host)
{
	const struct clock_host *h;

	if (clk->p.algo < CLOCK_TC || host >= clk->nhosts)
		return INT64_MAX;
	h = &clk->hosts[host];
	if (!h->seen)
		return INT64_MAX;
	if (clk->have_ref && host == clk->ref)
		return 0;
	return h->linked ? h->err : INT64_MAX;
}

int64_t
clock_offset(const struct clock *clk, uint32_t host, uint64_t raw)
{
	const struct clock_host *h;

	if (clk->p.algo < CLOCK_KZ || host >= clk->nhosts)
		return 0;
	h = &clk->hosts[host];
	if (!h->seen)
		return 0;
	return clock_est(clk, h, raw);
}
