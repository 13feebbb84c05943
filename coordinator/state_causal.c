/*
 * The state model's causality (state.c): what each event follows,
 * Lamport numbers, and searches of the past.
 *
 * Tasks are linked only where one follows another: the end of a receive
 * follows its send, a task's first event its parent's spawn, a barrier
 * exit every entry of its episode.  Each such event is a link in its
 * task's ring (struct link), with the cause it follows; nothing else is
 * kept per event.  So an event costs the same whatever the number of
 * tasks, where a vector clock costs one component per task at every
 * receive (doc/state.md, "Causality").
 *
 * Every event has a Lamport number: one more than its task's previous
 * event, or than its cause if that is greater.  (a, x) is in the past of
 * (b, y) only if its number is smaller, which bounds the searches: from
 * (b, y) back through the links, never below the number of (a, x).  A
 * race check compares two sends of nearby numbers and walks a few links.
 *
 * The links are cut at the horizon (state_set_horizon): each task keeps
 * those of its last events and of the last seconds of the stream, and
 * what the dropped ones followed (gone_by).  A search that goes past all
 * of a task's dropped links takes that instead; one that would need some
 * of them but not all says it does not know.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* Links one race check may walk before it gives up. */
#define REACH_BUDGET	65536

/* A stretch (lo, hi] of a task's events still to search. */
struct stretch {
	uint32_t	 task;
	uint64_t	 lo, hi;
	uint64_t	 hi_lam;	/* the number of hi, or more */
};

/* state_reach's marks by task index, and its stack; reused. */
struct walk {
	uint32_t	 epoch;
	uint32_t	*mark;		/* epoch when top is valid */
	uint64_t	*top;		/* highest seq searched from */
	uint64_t	*top_lam;	/* its number, or more */
	size_t		 cap;
	struct stretch	*stack;
	size_t		 n, stackcap;
};

/* --- Lamport numbers ---------------------------------------------------- */

/* Index + 1 of t's last link at or before seq, 0 if none kept. */
static size_t
links_find(const struct links *l, uint64_t seq)
{
	size_t lo = 0, hi = l->n;

	if (hi > 0 && link_at(l, hi - 1)->seq <= seq)
		return hi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (link_at(l, mid)->seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The Lamport number of t's event seq when it is known: after a kept
 * link, or after the newest dropped one, or with no link ever before.
 * Each event has at least one more than the one before it, which bounds
 * the others.
 */
static int
lam_known(const struct task *t, uint64_t seq, uint64_t *lam)
{
	const struct links *l = &t->links;
	const struct link *k;
	size_t i;

	if (seq == t->last_seq) {
		*lam = seq + t->lam_off;
		return 1;
	}
	if ((i = links_find(l, seq)) > 0) {
		k = link_at(l, i - 1);
		*lam = k->lam + (seq - k->seq);
		return 1;
	}
	if (l->gone_seq != 0 && seq >= l->gone_seq) {
		*lam = l->gone_lam + (seq - l->gone_seq);
		return 1;
	}
	if (l->first_seq == 0 || seq < l->first_seq) {
		*lam = seq;
		return 1;
	}
	*lam = l->gone_lam - (l->gone_seq - seq);	/* an upper bound */
	return 0;
}

uint64_t
state_lam_below(const struct task *t, uint64_t seq)
{
	uint64_t lam;

	return lam_known(t, seq, &lam) ? lam : seq;
}

uint64_t
state_lam_above(const struct task *t, uint64_t seq)
{
	uint64_t lam;

	(void)lam_known(t, seq, &lam);
	return lam;
}

/* --- links --------------------------------------------------------------- */

void
state_causes_unref(struct causes *cs)
{
	if (cs != NULL && --cs->refs == 0)
		free(cs);
}

void
state_causes_add(struct causes **csp, const struct cause *c)
{
	struct causes *cs = *csp;
	uint32_t cap;

	if (cs != NULL && cs->refs > 1) {	/* links share it: a copy */
		cs = xmalloc(sizeof(*cs) + (*csp)->cap * sizeof(cs->c[0]));
		memcpy(cs, *csp, sizeof(*cs) + (*csp)->n * sizeof(cs->c[0]));
		cs->refs = 1;
		(*csp)->refs--;
		*csp = cs;
	}
	if (cs == NULL || cs->n == cs->cap) {
		cap = cs != NULL ? 2 * cs->cap : 4;
		cs = xreallocarray(cs, 1, sizeof(*cs) + cap * sizeof(cs->c[0]));
		if (*csp == NULL) {
			cs->refs = 1;
			cs->n = 0;
			cs->lam = 0;
		}
		cs->cap = cap;
		*csp = cs;
	}
	cs->c[cs->n++] = *c;
	if (c->lam > cs->lam)
		cs->lam = c->lam;
}

struct cause
state_out(struct task *t, uint64_t seq)
{
	struct cause c;

	c.task = (uint32_t)t->idx;
	c.seq = seq;
	c.lam = state_lam_above(t, seq);
	if (seq > t->last_out)
		t->last_out = seq;
	return c;
}

/* The slot of task in the hash of what dropped links followed. */
static struct gone_cause *
gone_slot(const struct links *l, uint32_t task)
{
	size_t i, mask = l->gonecap - 1;

	for (i = (task * 2654435761u) & mask; l->gone_by[i].c.task != task &&
	    l->gone_by[i].c.task != UINT32_MAX; i = (i + 1) & mask)
		;
	return &l->gone_by[i];
}

static void
gone_note(struct links *l, const struct cause *c, uint64_t at)
{
	struct gone_cause *old, *slot;
	size_t i, oldcap = l->gonecap;

	if (2 * (l->ngone + 1) > l->gonecap) {
		old = l->gone_by;
		l->gonecap = oldcap ? 2 * oldcap : 8;
		l->gone_by = xreallocarray(NULL, l->gonecap, sizeof(*old));
		for (i = 0; i < l->gonecap; i++)
			l->gone_by[i].c.task = UINT32_MAX;
		for (i = 0; i < oldcap; i++)
			if (old[i].c.task != UINT32_MAX)
				*gone_slot(l, old[i].c.task) = old[i];
		free(old);
	}
	slot = gone_slot(l, c->task);
	if (slot->c.task == UINT32_MAX)
		l->ngone++;
	else if (c->seq <= slot->c.seq)
		return;
	slot->c = *c;
	slot->at = at;
}

static void
links_drop_first(struct links *l)
{
	struct link *k = &l->e[l->first];
	uint32_t j;

	l->gone_seq = k->seq;
	l->gone_lam = k->lam;
	if (k->all == NULL)
		gone_note(l, &k->from, k->seq);
	else
		for (j = 0; j < k->all->n; j++)
			gone_note(l, &k->all->c[j], k->seq);
	state_causes_unref(k->all);
	l->first = (l->first + 1) & (l->cap - 1);
	l->n--;
}

void
state_links_free(struct links *l)
{
	while (l->n > 0)
		links_drop_first(l);
	free(l->e);
	free(l->gone_by);
}

/* Doubles the ring, keeping the links in order. */
static void
links_grow(struct links *l)
{
	struct link *ne;
	size_t i, ncap = l->cap ? l->cap * 2 : 8;

	ne = xreallocarray(NULL, ncap, sizeof(*ne));
	for (i = 0; i < l->n; i++)
		ne[i] = *link_at(l, i);
	free(l->e);
	l->e = ne;
	l->first = 0;
	l->cap = ncap;
}

/*
 * Drops t's oldest links that the horizon no longer needs: older than
 * its last h_events events and than h_ns before the latest time.  The
 * last one stays: what t knows now.
 */
static void
links_prune(const struct state *s, struct task *t)
{
	struct links *l = &t->links;
	const struct link *k;

	while (l->n > 1) {
		k = link_at(l, 0);
		if ((s->h_events == 0 || k->seq + s->h_events > t->last_seq) &&
		    (s->h_ns == 0 || k->t + s->h_ns > s->now))
			break;
		links_drop_first(l);
	}
}

void
state_links_sweep(struct state *s)
{
	size_t i;

	for (i = 0; i < s->ntasks; i++)
		links_prune(s, s->tasks[i]);
}

/* A new link of t at event at, after from or all. */
static void
link_new(struct state *s, struct task *t, uint64_t at,
    const struct cause *from, struct causes *all)
{
	struct links *l = &t->links;
	struct link *k;
	uint64_t lam = all != NULL ? all->lam : from->lam;

	if (lam + 1 > at + t->lam_off)
		t->lam_off = lam + 1 - at;
	if (l->n == l->cap)
		links_grow(l);
	k = &l->e[(l->first + l->n++) & (l->cap - 1)];
	k->seq = at;
	k->lam = at + t->lam_off;
	k->t = s->now;
	if ((k->all = all) != NULL)
		all->refs++;
	else
		k->from = *from;
	if (l->first_seq == 0)
		l->first_seq = at;
	links_prune(s, t);
}

void
state_link(struct state *s, struct task *t, uint64_t at,
    const struct cause *from)
{
	link_new(s, t, at, from, NULL);
}

void
state_link_all(struct state *s, struct task *t, uint64_t at,
    struct causes *all)
{
	link_new(s, t, at, NULL, all);
}

/* --- searches ------------------------------------------------------------ */

static struct walk *
walk_start(const struct state *s)
{
	struct walk *w = s->walk;
	size_t n = s->ntasks;

	if (w->cap < n) {
		free(w->mark);
		free(w->top);
		free(w->top_lam);
		w->mark = xcalloc(n, sizeof(*w->mark));
		w->top = xcalloc(n, sizeof(*w->top));
		w->top_lam = xcalloc(n, sizeof(*w->top_lam));
		w->cap = n;
		w->epoch = 0;
	}
	if (++w->epoch == 0) {
		memset(w->mark, 0, w->cap * sizeof(*w->mark));
		w->epoch = 1;
	}
	w->n = 0;
	return w;
}

/* Pushes the stretch of task up to hi not searched yet, if any. */
static void
walk_push(struct walk *w, uint32_t task, uint64_t hi, uint64_t hi_lam)
{
	struct stretch *st;
	uint64_t lo = w->mark[task] == w->epoch ? w->top[task] : 0;

	if (w->mark[task] == w->epoch && hi <= lo)
		return;
	w->mark[task] = w->epoch;
	w->top[task] = hi;
	w->top_lam[task] = hi_lam;
	if (w->n == w->stackcap) {
		w->stackcap = w->stackcap ? 2 * w->stackcap : 64;
		w->stack = xreallocarray(w->stack, w->stackcap,
		    sizeof(*w->stack));
	}
	st = &w->stack[w->n++];
	st->task = task;
	st->lo = lo;
	st->hi = hi;
	st->hi_lam = hi_lam;
}

/* One cause: 1 when it is (a, x) or after it, else pushed when it may be. */
static int
reach_cause(struct walk *w, const struct cause *c, const struct task *a,
    uint64_t x, uint64_t la)
{
	if (c->task == a->idx)
		return c->seq >= x;
	if (c->lam > la)
		walk_push(w, c->task, c->seq, c->lam);
	return 0;
}

/* The causes of link k: 1 when one is (a, x) or after it. */
static int
reach_link(struct walk *w, const struct link *k, const struct task *a,
    uint64_t x, uint64_t la)
{
	uint32_t j;

	if (k->all == NULL)
		return reach_cause(w, &k->from, a, x, la);
	for (j = 0; j < k->all->n; j++)
		if (reach_cause(w, &k->all->c[j], a, x, la))
			return 1;
	return 0;
}

/*
 * The search of the stretch st ran below the kept links.  The dropped
 * links in it followed the causes in gone_by noted at or before st.hi:
 * each is pushed (or is (a, x) or after it: 1).  When st.hi is before
 * the newest dropped link, those of the others noted later are not
 * known: *unknown is then set if they may be numbered above la.
 */
static int
reach_gone(struct walk *w, const struct links *l, const struct stretch *st,
    const struct task *a, uint64_t x, uint64_t la, int *unknown)
{
	const struct gone_cause *g;
	size_t i;

	if (l->gone_seq <= st->lo || l->first_seq > st->hi)
		return 0;	/* none dropped in the stretch */
	for (i = 0; i < l->gonecap; i++) {
		g = &l->gone_by[i];
		if (g->c.task != UINT32_MAX && g->at <= st->hi &&
		    reach_cause(w, &g->c, a, x, la))
			return 1;
	}
	if (st->hi < l->gone_seq && st->hi_lam > la)
		*unknown = 1;
	return 0;
}

int
state_reach(const struct state *s, const struct task *a, uint64_t x,
    const struct task *b, uint64_t y)
{
	const struct links *l;
	const struct link *k;
	struct stretch st;
	struct walk *w;
	uint64_t la;
	size_t i, steps = 0;
	int unknown = 0;

	if (a == b)
		return x <= y;
	if (x > a->last_out)
		return 0;	/* nothing of a from x on was followed yet */
	la = state_lam_below(a, x);
	w = walk_start(s);
	walk_push(w, (uint32_t)b->idx, y, state_lam_above(b, y));
	while (w->n > 0) {
		st = w->stack[--w->n];
		l = &s->tasks[st.task]->links;
		for (i = links_find(l, st.hi); i > 0; i--) {
			k = link_at(l, i - 1);
			if (k->seq <= st.lo || k->lam <= la)
				break;
			if (++steps > REACH_BUDGET)
				return -1;
			if (reach_link(w, k, a, x, la))
				return 1;
		}
		if (i == 0 && reach_gone(w, l, &st, a, x, la, &unknown))
			return 1;
	}
	return unknown ? -1 : 0;
}

/*
 * The past of (t, seq): past[u] is the last event of task u (by index)
 * before it, 0 if none; past[t] is seq - 1.  -1 when the links kept do
 * not settle it, with *why the task whose dropped links might change it.
 *
 * The search walks every kept link in the past.  Where it needs some
 * dropped links of a task but not all, it notes the greatest number
 * they may have.  In the end, an event of u after past[u] could be in
 * the past only through links numbered above L(u, past[u] + 1), and
 * only if u did something after past[u] that another may follow: below
 * the least such number (limit), the dropped links change nothing.
 */
int
state_past(const struct state *s, const struct task *t, uint64_t seq,
    uint64_t *past, const struct task **why)
{
	const struct links *l;
	const struct task *u;
	struct stretch st;
	struct walk *w;
	uint64_t lam, limit = UINT64_MAX, worst = 0;
	size_t i;
	const struct task *worst_task = NULL;
	int unknown;

	w = walk_start(s);
	walk_push(w, (uint32_t)t->idx, seq, state_lam_above(t, seq));
	while (w->n > 0) {
		st = w->stack[--w->n];
		l = &s->tasks[st.task]->links;
		for (i = links_find(l, st.hi); i > 0; i--) {
			const struct link *k = link_at(l, i - 1);

			if (k->seq <= st.lo)
				break;
			(void)reach_link(w, k, t, UINT64_MAX, 0);
		}
		unknown = 0;
		if (i == 0)
			(void)reach_gone(w, l, &st, t, UINT64_MAX, 0, &unknown);
		if (unknown && st.hi_lam > worst) {
			worst = st.hi_lam;
			worst_task = s->tasks[st.task];
		}
	}
	for (i = 0; i < s->ntasks; i++) {
		u = s->tasks[i];
		if (u == t) {
			past[i] = seq - 1;
			continue;
		}
		if (w->mark[i] == w->epoch) {
			past[i] = w->top[i];
			lam = w->top_lam[i] + 1;
		} else {
			past[i] = 0;
			lam = state_lam_below(u, 1);
		}
		if (u->last_out > past[i] && lam < limit)
			limit = lam;
	}
	if (worst > limit) {
		*why = worst_task;
		return -1;
	}
	return 0;
}

/* A min-heap of tasks by the number of their next link. */
struct lheap {
	struct { uint64_t lam; uint32_t task; } *v;
	size_t		 n;
};

static void
lheap_push(struct lheap *h, uint64_t lam, uint32_t task)
{
	size_t i = h->n++, up;

	while (i > 0 && h->v[up = (i - 1) / 2].lam > lam) {
		h->v[i] = h->v[up];
		i = up;
	}
	h->v[i].lam = lam;
	h->v[i].task = task;
}

static uint32_t
lheap_pop(struct lheap *h)
{
	uint32_t top = h->v[0].task;
	size_t i = 0, c;

	h->n--;
	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && h->v[c + 1].lam < h->v[c].lam)
			c++;
		if (h->v[c].lam >= h->v[h->n].lam)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	h->v[i] = h->v[h->n];
	return top;
}

/* Index of l's first kept link numbered above lam (l->n if none). */
static size_t
links_after(const struct links *l, uint64_t lam)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (link_at(l, mid)->lam <= lam)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does c follow (t, seq), given the first such event of each task? */
static int
knows(const struct cause *c, const struct task *t, uint64_t seq,
    const uint64_t *first)
{
	if (c->task == t->idx)
		return c->seq >= seq;
	return first[c->task] != 0 && c->seq >= first[c->task];
}

/*
 * The future of (t, seq): first[u] is the first event of task u (by
 * index) after it, 0 if none yet; first[t] is seq + 1 if t went on.
 * The tasks' kept links are taken in the order of their numbers, from
 * that of (t, seq) on: a link follows the event when one of its causes
 * does, and its causes are numbered below it, so already settled.  -1
 * when a task dropped links numbered after it (*why).
 */
int
state_future(const struct state *s, const struct task *t, uint64_t seq,
    uint64_t *first, const struct task **why)
{
	const struct links *l;
	const struct link *k;
	struct lheap h;
	uint64_t le;
	size_t i, *pos;
	uint32_t u, j;
	int rv = 0, hit;

	memset(first, 0, s->ntasks * sizeof(*first));
	first[t->idx] = seq < t->last_seq ? seq + 1 : 0;
	if (t->last_out < seq)
		return 0;	/* nothing of t from seq on was followed */
	if (!lam_known(t, seq, &le)) {
		*why = t;
		return -1;
	}
	pos = xcalloc(s->ntasks, sizeof(*pos));
	h.v = xcalloc(s->ntasks, sizeof(*h.v));
	h.n = 0;
	for (i = 0; i < s->ntasks; i++) {
		l = &s->tasks[i]->links;
		pos[i] = links_after(l, le);
		if (i != t->idx && pos[i] < l->n)
			lheap_push(&h, link_at(l, pos[i])->lam, (uint32_t)i);
	}
	while (h.n > 0) {
		u = lheap_pop(&h);
		l = &s->tasks[u]->links;
		k = link_at(l, pos[u]);
		if (k->all == NULL)
			hit = knows(&k->from, t, seq, first);
		else
			for (hit = 0, j = 0; !hit && j < k->all->n; j++)
				hit = knows(&k->all->c[j], t, seq, first);
		if (hit) {
			first[u] = k->seq;
			continue;
		}
		if (++pos[u] < l->n)
			lheap_push(&h, link_at(l, pos[u])->lam, u);
	}
	/*
	 * A task that dropped a link numbered above the event may have
	 * followed it there, and the kept links after it, whose causes
	 * do not, would not say.
	 */
	for (i = 0; i < s->ntasks && rv == 0; i++)
		if (i != t->idx && s->tasks[i]->links.gone_lam > le) {
			*why = s->tasks[i];
			rv = -1;
		}
	free(pos);
	free(h.v);
	return rv;
}

void
state_walk_free(struct walk *w)
{
	if (w == NULL)
		return;
	free(w->mark);
	free(w->top);
	free(w->top_lam);
	free(w->stack);
	free(w);
}

struct walk *
state_walk_new(void)
{
	return xcalloc(1, sizeof(struct walk));
}

/* --- the horizon --------------------------------------------------------- */

void
state_set_horizon(struct state *s, uint64_t events, uint64_t ns)
{
	s->h_events = events;
	s->h_ns = ns;
	state_links_sweep(s);
}
