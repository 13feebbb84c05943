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

/* The root notes a send on a subtree's channel for its receive's clock. */
void
order_below_sent(struct order_task *t, const struct record *r,
    uint64_t corr)
{
	struct order_below_send *s;
	int one = r->call == PMON_CALL_send || r->call == PMON_CALL_psend;

	if (t->below_sent == NULL)
		t->below_sent = xcalloc(ORDER_BELOW_SENT,
		    sizeof(*t->below_sent));
	s = &t->below_sent[r->seq % ORDER_BELOW_SENT];
	s->seq = r->seq;
	s->raw = r->t_ns;
	s->corr = corr;
	s->host = t->host;
	s->dst = one ? r->peer : 0;
	s->tag = r->tag;
	s->ctx = r->ctx;
	s->claimed = 0;
}

/*
 * A receive an intermediate could not match because it started after
 * the one that had the sender's earlier records (EVENT_RESUMED): its
 * send, if the root released it, is the oldest send kept to this task
 * with its tag and context that no receive named.
 */
static struct order_below_send *
below_repair(const struct order_task *s, const struct order_task *t,
    const struct record *r)
{
	struct order_below_send *bs, *best = NULL;
	size_t i;

	if (s == NULL || s->below_sent == NULL)
		return NULL;
	for (i = 0; i < ORDER_BELOW_SENT; i++) {
		bs = &s->below_sent[i];
		if (bs->seq == 0 || bs->claimed || bs->dst != t->tid ||
		    bs->tag != r->tag || bs->ctx != r->ctx ||
		    bs->seq > s->released)
			continue;
		if (best == NULL || bs->seq < best->seq)
			best = bs;
	}
	return best;
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
	struct order_below_send *bs;
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
	bs = s->below_sent == NULL ? NULL :
	    &s->below_sent[seq % ORDER_BELOW_SENT];
	if (bs != NULL && bs->seq == seq) {
		bs->claimed = 1;
		pred.raw = bs->raw;
		pred.corr = bs->corr;
		pred.host = bs->host;
		pred.message = 1;
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
