/*
 * The ordering core in a tree of coordinators (order.h,
 * order_set_subtree; doc/ordering.md, "A tree of coordinators"): what an
 * intermediate releases at once, how the root takes a receive that a
 * subtree matched, and the sends the root keeps for those receives'
 * clock.
 */
#include <stdlib.h>

#include "order_internal.h"
#include "xmalloc.h"

void
order_set_subtree(struct order *o, int self, order_subtree_cb cb, void *arg)
{
	o->level = self == ORDER_ROOT ? LEVEL_ROOT : LEVEL_SUBTREE;
	o->subtree = self;
	o->subtree_of = cb;
	o->subtree_arg = arg;
}

/*
 * An intermediate's step: a receive or a probe on one of its channels is
 * matched as one coordinator would match it; everything else goes at
 * once, for the root to order.  (pvmgs's records are receives flagged
 * RECORD_GS that the root consumes.)
 */
int
order_subtree_step(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	int peek = is_probe_hit(r);

	if ((t->head->flags & EVENT_LOST) || (!peek && !record_is_recv(r)) ||
	    (r->flags & RECORD_GS) || r->peer == 0 ||
	    (r->peer & ORDER_TID_DAEMON) || !chan_mine(o, r->peer, t->tid))
		return order_release_plain(o, t, 0);
	return order_step_recv(o, t, force, peek);
}

static void
below_grow(struct order_below_sends *q)
{
	struct order_below_send *v;
	size_t cap = q->cap == 0 ? 8 : q->cap * 2, i;

	v = xreallocarray(NULL, cap, sizeof(*v));
	for (i = 0; i < q->n; i++)
		v[i] = q->v[(q->first + i) % q->cap];
	free(q->v);
	q->v = v;
	q->first = 0;
	q->cap = cap;
}

void
order_below_free(struct order_task *t)
{
	if (t->below_sent != NULL)
		free(t->below_sent->v);
	free(t->below_sent);
	t->below_sent = NULL;
}

/* The root notes a send on a subtree's channel, for its receive. */
void
order_below_sent(struct order_task *t, const struct record *r,
    uint64_t corr)
{
	struct order_below_sends *q = t->below_sent;
	struct order_below_send *s;
	int one = r->call == PMON_CALL_send || r->call == PMON_CALL_psend;

	if (q == NULL)
		q = t->below_sent = xcalloc(1, sizeof(*q));
	if (q->n == q->cap && q->cap < ORDER_BELOW_SENT)
		below_grow(q);
	if (q->n == q->cap) {
		if (!q->v[q->first].claimed)
			q->gap = 1;
		q->first = (q->first + 1) % q->cap;
		q->n--;
	}
	s = &q->v[(q->first + q->n++) % q->cap];
	s->seq = r->seq;
	s->raw = r->t_ns;
	s->corr = corr;
	s->host = t->host;
	s->dst = one ? r->peer : 0;
	s->tag = r->tag;
	s->ctx = r->ctx;
	/* Many receivers may name a multicast: none claims it. */
	s->claimed = !one;
}

/* The send seq of q, or NULL. */
static struct order_below_send *
below_find(struct order_below_sends *q, uint64_t seq)
{
	struct order_below_send *s;
	size_t i;

	for (i = 0; q != NULL && i < q->n; i++) {
		s = &q->v[(q->first + i) % q->cap];
		if (s->seq == seq)
			return s;
		if (s->seq > seq)
			break;
	}
	return NULL;
}

/*
 * A receive an intermediate could not match because it started after
 * the one that had the sender's earlier records (EVENT_RESUMED): PVM
 * delivers a sender's messages to a receiver in order, so its send, if
 * the root released it, is the oldest here to this task with its tag
 * and context that no receive named, unless some went unnamed
 * (q->gap) or the sender lost records.
 */
static struct order_below_send *
below_repair(const struct order_task *s, const struct order_task *t,
    const struct record *r)
{
	struct order_below_sends *q;
	struct order_below_send *bs;
	size_t i;

	if (s == NULL || (q = s->below_sent) == NULL || q->gap ||
	    s->lost_from != UINT64_MAX)
		return NULL;
	for (i = 0; i < q->n; i++) {
		bs = &q->v[(q->first + i) % q->cap];
		if (!bs->claimed && bs->dst == t->tid && bs->tag == r->tag &&
		    bs->ctx == r->ctx)
			return bs->seq <= s->released ? bs : NULL;
	}
	return NULL;
}

/* A receive named bs: the named ones at the front go. */
static void
below_claim(struct order_below_sends *q, struct order_below_send *bs)
{
	bs->claimed = 1;
	while (q->n > 0 && q->v[q->first].claimed) {
		q->first = (q->first + 1) % q->cap;
		q->n--;
	}
}

/*
 * The root: a receive or probe at t's head that a subtree matched goes
 * once its send is out, with the send's time as its clock's predecessor;
 * one the subtree released unmatched goes at once.  The send came
 * before it from the same subtree, so the wait is only for what holds
 * the sender here.
 */
int
order_step_below(struct order *o, struct order_task *t, int force)
{
	const struct order_node *n = t->head;
	const struct record *r = &n->rec;
	struct order_below_send *bs = NULL;
	struct order_task *s;
	struct clock_pred pred;
	uint64_t seq = n->below_seq;

	if ((n->below & EVENT_RESUMED) &&
	    (bs = below_repair(task_find(o, r->peer), t, r)) != NULL) {
		o->nrepaired++;
		seq = bs->seq;
	} else if (!(n->below & EVENT_MATCHED)) {
		if (n->below & EVENT_UNMATCHED)
			o->nunmatched++;
		return order_release_plain(o, t,
		    n->below & (EVENT_UNMATCHED | EVENT_UNMONITORED));
	}
	s = task_find(o, r->peer);
	if (s == NULL || s->released < seq) {
		if (force) {
			o->nunmatched++;
			return order_release_plain(o, t, EVENT_UNMATCHED);
		}
		if (s == NULL)
			s = order_task_get(o, r->peer);
		watch_task(s);
		return wait_chan(o, t, order_chan_get(o, r->peer, t->tid,
		    r->tag, r->ctx));
	}
	o->nmatched++;
	if (bs == NULL)
		bs = below_find(s->below_sent, seq);
	if (bs != NULL) {
		pred.raw = bs->raw;
		pred.corr = bs->corr;
		pred.host = bs->host;
		pred.message = 1;
		below_claim(s->below_sent, bs);
	} else {
		/* Sent long before: its task's latest time bounds it. */
		pred.raw = s->clock.raw;
		pred.corr = s->clock.corr;
		pred.host = s->host;
		pred.message = 0;
		o->nestimated++;
	}
	return order_release_head(o, t, EVENT_MATCHED, r->peer, seq, &pred);
}

int
order_settled(const struct order *o, uint64_t mark)
{
	const struct order_task *t;
	size_t i;

	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext)
			if (t->head != NULL && t->head->added < mark)
				return 0;
	return 1;
}
