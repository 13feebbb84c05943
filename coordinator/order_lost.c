/*
 * Losses (doc/ordering.md, "Losses and the end of a run"): from the first
 * record of a task that may be missing on, its sends and receives cannot
 * be counted on their channels, nor the barriers and collectives of its
 * groups.  Its receives go unmatched then, after their sends where the
 * clocks can tell.
 */
#include <stdlib.h>

#include "order_internal.h"

/*
 * A member of g lost records: its barrier entries and collective calls
 * cannot be counted any more, so the exits and ends that wait for them
 * go at once, flagged (order_step_barrier_out, order_step_coll_out),
 * from now on.
 */
void
order_group_lossy(struct order *o, struct order_group *g)
{
	int kind;

	if (g->lossy)
		return;
	g->lossy = 1;
	g->lossy_episode = g->episode;
	for (kind = 0; kind < COLL_KINDS; kind++) {
		free(g->coll[kind]);
		g->coll[kind] = NULL;
		g->ncoll[kind] = g->cn[kind] = 0;
	}
	wake_list(o, &g->waiters);
}

/*
 * t released every record before the first that may be missing: from
 * now on its sends and receives cannot be counted on their channels.
 * The receives that wait for its messages are judged again (a send
 * still to come from it cannot be counted), its channels forget the
 * receives they owed (the sends kept for it stay: a receive that names
 * its message's id still takes one), and the groups it is in lose their
 * barrier counts.
 */
void
order_task_uncounted(struct order *o, struct order_task *t)
{
	struct order_chan *c;
	struct order_group *g;

	t->uncounted = 1;
	t->uncount_at = UINT64_MAX;
	order_wake_waiters_on(o, t);
	for (c = t->ins; c != NULL; c = c->dnext)
		c->debt = 0;
	for (g = o->groups; g != NULL; g = g->next)
		if (group_has(g, t->tid))
			order_group_lossy(o, g);
}

/*
 * The first record of t that may be missing is seq (or an earlier one):
 * once every record before it is out, t counts no more.
 */
void
order_lost_at(struct order *o, struct order_task *t, uint64_t seq)
{
	if (seq >= t->lost_from || t->uncounted)
		return;
	t->lost_from = seq;
	t->uncount_at = seq - 1;
	if (t->uncount_at < t->watch_at)
		t->watch_at = t->uncount_at;
	if (t->released >= t->uncount_at)
		order_task_uncounted(o, t);
}

/*
 * The raw time of s's host before which s's records surely came before
 * raw on t's host: the same time on one host; across hosts, when the
 * clock bounds both estimates, less both errors.  0 when not known.
 */
static uint64_t
surely_before(const struct order *o, const struct order_task *t,
    const struct order_task *s, uint64_t raw)
{
	int64_t et, es, b;

	if (t->host == s->host)
		return raw;
	if (o->clock == NULL ||
	    (et = clock_error(o->clock, t->host)) == INT64_MAX ||
	    (es = clock_error(o->clock, s->host)) == INT64_MAX)
		return 0;
	b = (int64_t)raw + clock_offset(o->clock, t->host, raw) -
	    clock_offset(o->clock, s->host, raw) - et - es;
	return b > 0 ? (uint64_t)b : 0;
}

/*
 * Has s released every record it made before raw time before?  Its
 * next record, or its last one, is at or after it, or a round that
 * began after the waiting receive came brought all that s made before.
 */
static int
sender_past(const struct order *o, const struct order_task *s,
    uint64_t before, const struct order_node *n)
{
	if (s->head != NULL)
		return s->head->rec.t_ns >= before;
	return s->last_raw >= before || n->added < o->synced;
}

/*
 * A receive that cannot be matched (its task lost records before it)
 * still goes after its send where the clocks can tell: after every
 * record its sender made surely before the receive ended.  None of
 * those can wait for the receive, and a round ends the wait.
 */
int
order_recv_uncounted(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	struct order_task *s;
	struct order_chan *c;
	uint64_t before;

	if (force || (s = task_find(o, r->peer)) == NULL || !s->registered ||
	    (s->ended && s->head == NULL) ||
	    (before = surely_before(o, t, s, r->t_ns)) == 0 ||
	    sender_past(o, s, before, t->head))
		return order_release_uncounted(o, t);
	c = order_chan_get(o, r->peer, t->tid, r->tag, r->ctx);
	watch_task(s);
	return wait_chan(o, t, c);
}

/*
 * The receive at t's head, which cannot be counted, goes without its
 * send; it took a message of its channel, most likely the oldest kept
 * there, which goes too, so that a channel whose receives are never
 * counted does not keep every send.  A probe takes nothing.
 */
int
order_release_uncounted(struct order *o, struct order_task *t)
{
	const struct record *r = &t->head->rec;
	struct order_chan *c;

	if (!is_probe_hit(r) &&
	    (c = chan_find(o, r->peer, t->tid, r->tag, r->ctx)) != NULL &&
	    c->count > 0) {
		chan_pop(c);
		o->retained--;
	}
	return order_release_unmatched(o, t);
}
