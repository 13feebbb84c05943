/*
 * Barriers and collectives (doc/ordering.md, "Barriers and
 * collectives"): the entries of a barrier are counted into its episodes
 * and the begins of a reduce, gather or scatter into its instances as
 * they are released; an exit goes after every entry of its episode, the
 * end of a collective after the begins it needs.
 */
#include <string.h>

#include "order_internal.h"
#include "xmalloc.h"

/* --- barriers --------------------------------------------------------- */

/*
 * Closes the open barrier episode of g once it has its count of entries.
 * A count of -1 means every member: while joins or leaves of the group
 * are still held the model's members are not yet those pvmgs counted.
 */
void
order_barrier_try_close(struct order *o, struct order_group *g)
{
	size_t need;

	if (g->arrivals == 0)
		return;
	need = g->nmembers > 0 ? g->nmembers : 1;
	if (g->arrivals < need)
		return;
	g->closed_corr[g->episode % EPISODES_KEPT] = g->ep_corr;
	g->episode++;
	g->arrivals = 0;
	g->ep_corr = 0;
	wake_list(o, &g->waiters);
}

/* The counters of the barriers with count c on g. */
static struct order_counted *
counted_get(struct order_group *g, int32_t c)
{
	struct order_counted *nc;
	size_t i;

	for (i = 0; i < g->ncounted; i++)
		if (g->counted[i].count == c)
			return &g->counted[i];
	nc = xreallocarray(g->counted, g->ncounted + 1, sizeof(*nc));
	g->counted = nc;
	memset(&nc[g->ncounted], 0, sizeof(*nc));
	nc[g->ncounted].count = c;
	return &nc[g->ncounted++];
}

/*
 * A barrier entry: one more for its count, or into the group's open
 * episode when the barrier waits for every member (count -1).
 */
void
order_barrier_enter(struct order *o, struct order_task *t, struct order_node *n,
    uint64_t corr)
{
	struct order_group *g = n->group;
	struct order_counted *k;

	t->bar_group = g;
	t->bar_count = n->rec.inst;
	if (n->rec.inst > 0) {
		k = counted_get(g, n->rec.inst);
		t->bar_episode = k->entries / (uint64_t)n->rec.inst;
		if (k->entries % (uint64_t)n->rec.inst == 0)
			k->corr[t->bar_episode % EPISODES_KEPT] = 0;
		k->entries++;
		if (corr > k->corr[t->bar_episode % EPISODES_KEPT])
			k->corr[t->bar_episode % EPISODES_KEPT] = corr;
		wake_list(o, &g->waiters);
		return;
	}
	g->arrivals++;
	if (corr > g->ep_corr)
		g->ep_corr = corr;
	t->bar_group = g;
	t->bar_episode = g->episode;
	order_barrier_try_close(o, g);
}

/* --- collectives ------------------------------------------------------ */

static int
coll_kind(const struct record *r)
{
	return r->call == PMON_CALL_reduce ? 0 :
	    r->call == PMON_CALL_gather ? 1 : 2;
}

/* The instance a task's next collective of this kind on g belongs to. */
static uint64_t *
coll_next(struct order_task *t, struct order_group *g, int kind)
{
	struct order_tcoll *nt;
	size_t i;

	for (i = 0; i < t->ntcoll; i++)
		if (t->tcoll[i].group == g)
			return &t->tcoll[i].next[kind];
	nt = xreallocarray(t->tcoll, t->ntcoll + 1, sizeof(*nt));
	t->tcoll = nt;
	memset(&nt[t->ntcoll], 0, sizeof(*nt));
	nt[t->ntcoll].group = g;
	return &nt[t->ntcoll++].next[kind];
}

/* The instance k of a collective kind on g, kept from cbase on. */
static struct order_coll *
coll_at(struct order_group *g, int kind, uint64_t k)
{
	return &g->coll[kind][k - g->cbase[kind]];
}

/*
 * Forgets the oldest instances that every member entered and left: no
 * end waits for them, and a member's next call is a later instance.
 */
static void
coll_trim(struct order_group *g, int kind)
{
	struct order_coll *c = g->coll[kind];
	size_t n = 0;

	while (n < g->cn[kind] && c[n].arrivals >= g->nmembers &&
	    c[n].left >= c[n].arrivals)
		n++;
	if (n == 0)
		return;
	memmove(c, c + n, (g->cn[kind] - n) * sizeof(*c));
	memset(c + g->cn[kind] - n, 0, n * sizeof(*c));
	g->cn[kind] -= n;
	g->cbase[kind] += n;
}

/* Room for instance k. */
static struct order_coll *
coll_room(struct order_group *g, int kind, uint64_t k)
{
	struct order_coll *c;
	size_t need = (size_t)(k - g->cbase[kind]) + 1, ncap;

	if (need > g->ncoll[kind]) {
		ncap = g->ncoll[kind] ? g->ncoll[kind] * 2 : 16;
		while (ncap < need)
			ncap *= 2;
		c = xreallocarray(g->coll[kind], ncap, sizeof(*c));
		memset(c + g->ncoll[kind], 0,
		    (ncap - g->ncoll[kind]) * sizeof(*c));
		g->coll[kind] = c;
		g->ncoll[kind] = ncap;
	}
	if (need > g->cn[kind])
		g->cn[kind] = need;
	return coll_at(g, kind, k);
}

/* The begin of a reduce, gather or scatter joins its instance. */
void
order_coll_enter(struct order *o, struct order_task *t, struct order_node *n,
    uint64_t corr)
{
	struct order_group *g = n->group;
	struct order_coll *c;
	int kind = coll_kind(&n->rec);
	uint64_t *next, k;

	order_coll_leave(t);
	next = coll_next(t, g, kind);
	k = (*next)++;
	/* An instance forgotten (a late member) or not counted: no wait. */
	if (g->lossy || k < g->cbase[kind])
		return;
	c = coll_room(g, kind, k);
	c->arrivals++;
	if (corr > c->corr)
		c->corr = corr;
	t->coll_root = group_inst(g, t->tid) == n->rec.inst;
	if (t->coll_root) {
		c->root_in = 1;
		c->root_corr = corr;
	}
	t->coll_group = g;
	t->coll_k = k;
	t->coll_kind = kind;
	wake_list(o, &g->waiters);
}

/*
 * t leaves the instance it entered (its end was released, or it ended):
 * once all have, the instance may go.
 */
void
order_coll_leave(struct order_task *t)
{
	struct order_group *g = t->coll_group;

	if (g == NULL)
		return;
	t->coll_group = NULL;
	if (g->lossy)
		return;
	coll_at(g, t->coll_kind, t->coll_k)->left++;
	coll_trim(g, t->coll_kind);
}

/* --- releasing -------------------------------------------------------- */

/* The exit of a barrier: after every entry of its episode. */
int
order_step_barrier_out(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;
	struct order_group *g = n->group;
	struct clock_pred pred;

	if (n->rec.rc < 0)
		return order_release_plain(o, t, 0);
	/* Its episode may not be the one the count says, or never close. */
	if (g->lossy && !(t->bar_group == g && t->bar_count <= 0 &&
	    t->bar_episode < g->lossy_episode))
		return order_release_plain(o, t, EVENT_INCONSISTENT);
	if (t->bar_group == g && t->bar_count > 0) {
		struct order_counted *k = counted_get(g, t->bar_count);
		uint64_t c = (uint64_t)t->bar_count;

		if (force || k->entries >= c * (t->bar_episode + 1)) {
			uint8_t fl = k->entries < c * (t->bar_episode + 1) ?
			    EVENT_INCONSISTENT : 0;

			memset(&pred, 0, sizeof(pred));
			pred.host = t->host;
			pred.corr = pred.raw =
			    k->corr[t->bar_episode % EPISODES_KEPT];
			return order_release_head(o, t, fl, 0, 0, &pred);
		}
		return order_wait_on(o, t, &g->waiters, WAIT_BARRIER, g);
	}
	if (t->bar_group == g && t->bar_episode < g->episode) {
		memset(&pred, 0, sizeof(pred));
		pred.host = t->host;
		pred.corr = g->episode - t->bar_episode <= EPISODES_KEPT ?
		    g->closed_corr[t->bar_episode % EPISODES_KEPT] :
		    g->closed_corr[(g->episode - 1) % EPISODES_KEPT];
		pred.raw = pred.corr;
		return order_release_head(o, t, 0, 0, 0, &pred);
	}
	if (t->bar_group != g)
		return order_release_plain(o, t, 0);
	if (force)
		return order_release_plain(o, t, EVENT_INCONSISTENT);
	return order_wait_on(o, t, &g->waiters, WAIT_BARRIER, g);
}

/*
 * The end of a collective: the root of a reduce or gather after every
 * member's begin of the instance, a member of a scatter after the root's.
 */
int
order_step_coll_out(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;
	struct order_group *g = n->group;
	int kind = coll_kind(&n->rec);
	const struct order_coll *c;
	struct clock_pred pred;
	int ready, waits;

	/* The root of a reduce or gather, a member of a scatter, would wait. */
	if (g->lossy && n->rec.rc >= 0) {
		waits = (kind == 2) != (group_inst(g, t->tid) == n->rec.inst);
		return order_release_plain(o, t,
		    waits ? EVENT_INCONSISTENT : 0);
	}
	if (force || n->rec.rc < 0 || t->coll_group != g)
		return order_release_plain(o, t, 0);
	c = coll_at(g, kind, t->coll_k);
	memset(&pred, 0, sizeof(pred));
	pred.host = t->host;
	if (kind == 2) {
		if (t->coll_root)
			return order_release_plain(o, t, 0);
		ready = c->root_in;
		pred.corr = c->root_corr;
	} else {
		if (!t->coll_root)
			return order_release_plain(o, t, 0);
		ready = c->arrivals >= g->nmembers;
		pred.corr = c->corr;
	}
	if (!ready)
		return order_wait_on(o, t, &g->waiters, WAIT_BARRIER, g);
	pred.raw = pred.corr;
	return order_release_head(o, t, 0, 0, 0, &pred);
}
