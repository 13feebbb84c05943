/*
 * Releasing receives (doc/ordering.md, "Predecessors"): the end of a
 * receive, or of a probe, that got a message goes after its send, which
 * it takes from its channel by count or by the message's id; a
 * pvm_recvinfo after the pvm_putinfo it read.  After a flush round, the
 * receives whose send has not come are judged (order_recv_judge).
 */
#include <stdlib.h>

#include "order_internal.h"
#include "xmalloc.h"

/* --- receives --------------------------------------------------------- */

/*
 * Can the receive take the send s at the front of c?  1: yes.  0: not
 * yet: the send's end, which says whether it delivered anything, is not
 * out.  -1: never: its end was lost, so whether the receive got this
 * message or the next is not known.
 */
static int
sent_ready(const struct order_chan *c, const struct order_sent *s)
{
	const struct order_task *t = c->stask;

	if (s->end == SENT_DELIVERED)
		return 1;
	if (s->end == SENT_UNKNOWN || t->lost_from == s->seq + 1)
		return -1;
	/*
	 * A task that ended inside the send made no later one: the
	 * receive got this message.
	 */
	return t->released > s->seq || (t->ended && t->next_seq == s->seq + 1);
}

/* The receive at t's head gets the send at the front of c. */
static int
take_sent(struct order *o, struct order_task *t, struct order_chan *c,
    int peek)
{
	struct order_sent s = peek ? c->sent[c->first] : chan_pop(c);
	struct clock_pred pred;

	if (!peek)
		o->retained--;
	o->nmatched++;
	pred.raw = s.raw;
	pred.corr = s.corr;
	pred.host = s.host;
	pred.message = 1;
	return order_release_head(o, t, EVENT_MATCHED, c->src, s.seq, &pred) ==
	    -1 ? -1 : 1;
}

/*
 * Will no counted send come from s any more?  It ended and released all
 * it had, or released all it can count; an unknown sender may still
 * register, except at shutdown (task_exhausted).
 */
static int
sender_done(const struct order *o, const struct order_task *s)
{
	if (s == NULL || !s->registered)
		return o->draining;
	return s->uncounted || (s->head == NULL && (s->ended || o->draining));
}

/* The receive at t's head goes without its send. */
int
order_release_unmatched(struct order *o, struct order_task *t)
{
	const struct order_task *s = task_find(o, t->head->rec.peer);

	o->nunmatched++;
	return order_release_plain(o, t, EVENT_UNMATCHED |
	    (s != NULL && s->unmonitored ? EVENT_UNMONITORED : 0));
}

/*
 * Releases the receive at t's head without its send, which has not come
 * and may still: the first counted send of its channel to come is the
 * one it got (chan_feed), so the receives after it are still counted.
 * A probe takes nothing.
 */
static int
release_owed(struct order *o, struct order_task *t, int peek)
{
	const struct record *r = &t->head->rec;
	struct order_chan *c;

	if (!peek) {
		c = order_chan_get(o, r->peer, t->tid, r->tag, r->ctx);
		c->debt++;
	}
	return order_release_unmatched(o, t);
}

/* The channel receive r at t's head reads from, if there is one. */
static inline struct order_chan *
in_chan(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_chan *c = t->in_chan;

	if (!chan_is(c, r->peer, t->tid, r->tag, r->ctx) &&
	    (c = chan_find(o, r->peer, t->tid, r->tag, r->ctx)) != NULL)
		t->in_chan = c;
	return c;
}

/*
 * The end of a receive that names its message by id (record.h): it got
 * its sender's send numbered id.  The sends before that one on its
 * channel were received already, by receives this coordinator did not
 * see (lost, or before it took over), and leave.  Then the send is at
 * the front, or still to come from its sender, or will never come here
 * (a coordinator before this one released it, it was lost, or its sender
 * is not monitored): the receive goes unmatched.  A probe's message
 * stays.
 */
static int
step_recv_id(struct order *o, struct order_task *t, uint32_t id, int force,
    int peek)
{
	const struct record *r = &t->head->rec;
	struct order_chan *c = in_chan(o, t, r);
	struct order_task *s;

	if (c != NULL) {
		while (c->count > 0 &&
		    record_msg_id_cmp(c->sent[c->first].seq, id) < 0) {
			chan_pop(c);
			o->retained--;
		}
		if (c->count > 0 &&
		    (c->sent[c->first].seq & RECORD_MSGID_MASK) == id)
			return take_sent(o, t, c, peek);
	}
	s = c != NULL ? c->stask : task_find(o, r->peer);
	if (s != NULL && s->registered) {
		if (force || record_msg_id_cmp(s->released, id) >= 0)
			return order_release_unmatched(o, t);
	} else if (force || o->draining || (s != NULL && s->absent))
		return order_release_unmatched(o, t);
	if (c == NULL)
		c = t->in_chan = order_chan_get(o, r->peer, t->tid, r->tag,
		    r->ctx);
	/*
	 * The send wakes it (chan_feed), and so does a lost marker of its
	 * sender (order_release_head); an id that names no send of the channel
	 * (one the application gave the buffer) waits for a round.
	 */
	return wait_chan(o, t, c);
}

/*
 * The end of a receive that got a message, or of a probe that saw one.
 * Only a receive whose index on its channel is known (none of its task's
 * records before it is missing) can be matched, and only to a send whose
 * index is known (order_push_sends): the k-th receive from S with a tag and
 * context got S's k-th send to it with them (doc/ordering.md).
 */
int
order_step_recv(struct order *o, struct order_task *t, int force, int peek)
{
	const struct record *r = &t->head->rec;
	struct order_chan *c;
	struct order_task *s;
	uint32_t id;
	int ready;

	if ((id = record_msg_id(r)) != 0)
		return step_recv_id(o, t, id, force, peek);
	if (r->seq >= t->lost_from)
		return order_recv_uncounted(o, t, force);
	c = in_chan(o, t, r);
	if (c != NULL && c->count > 0 && c->sent[c->first].uncounted)
		return order_release_uncounted(o, t);
	if (c != NULL && c->count > 0) {
		if ((ready = sent_ready(c, &c->sent[c->first])) > 0)
			return take_sent(o, t, c, peek);
		if (ready == 0 && !force) {
			watch_task(c->stask);
			return wait_chan(o, t, c);
		}
		if (!peek) {
			chan_pop(c);
			o->retained--;
		}
		return order_release_unmatched(o, t);
	}
	/* No counted send can come any more. */
	s = c != NULL ? c->stask : task_find(o, r->peer);
	if (force || r->peer == 0 || sender_done(o, s))
		return order_release_unmatched(o, t);
	/* A round found its sender unmonitored: it would not come. */
	if (s != NULL && s->absent && !s->registered)
		return release_owed(o, t, peek);
	if (c == NULL)
		c = t->in_chan = order_chan_get(o, r->peer, t->tid, r->tag,
		    r->ctx);
	return wait_chan(o, t, c);
}

/* --- mailbox reads ---------------------------------------------------- */

/*
 * A pvm_recvinfo that got a mailbox entry goes after the pvm_putinfo
 * that stored it (its begin, numbered id, of the task that put it): once
 * that task released it, matched to it.  Without it after a flush round
 * (lost, put before pmon saw the task, or by a task pmon does not
 * instrument), it goes unmatched.
 */
int
order_step_mbox_read(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	uint32_t id = record_msg_id(r);
	struct order_task *s = task_find(o, r->peer);
	uint64_t seq;

	if (s != NULL && s->registered && s->released > 0 &&
	    record_msg_id_cmp(s->released, id) >= 0) {
		seq = s->released - ((uint32_t)(s->released - id) &
		    RECORD_MSGID_MASK);
		return order_release_head(o, t, seq > 0 ? EVENT_MATCHED : 0,
		    s->tid, seq, NULL);
	}
	if (force || o->draining || s == NULL || !s->registered ||
	    s->absent || (s->ended && s->head == NULL) ||
	    (t->head->added < o->synced && (s->next_seq == 0 ||
	    record_msg_id_cmp(s->next_seq - 1, id) < 0)))
		return order_release_plain(o, t, 0);
	watch_task(s);
	return order_wait_on(o, t, &o->putw, WAIT_PUT, NULL);
}

/* --- after a flush round ---------------------------------------------- */

/* Does t hold, unreleased and counted, a send to dst with tag and ctx? */
static int
holds_send(const struct order_task *t, int32_t dst, int32_t tag, int32_t ctx)
{
	const struct order_node *n;
	unsigned i;

	for (n = t->head; n != NULL && n->rec.seq < t->lost_from;
	    n = n->next) {
		if (!record_is_send(&n->rec) || n->rec.tag != tag ||
		    n->rec.ctx != ctx)
			continue;
		if (n->rec.call == PMON_CALL_send ||
		    n->rec.call == PMON_CALL_psend) {
			if (n->rec.peer == dst)
				return 1;
			continue;
		}
		for (i = 0; i < n->rec.npeers; i++)
			if (record_peer(&n->rec, i) == dst && dst != t->tid)
				return 1;
	}
	return 0;
}

/*
 * A receive that came before a round began, whose channel's front send
 * still waits for its end: if the sender has made nothing after that
 * send's begin by the end of the round, it was inside the send when the
 * round began (a debugger stopped it there, or it is slow), and made no
 * later send before the receive ended; the receive got this message, so
 * the send went out.  1 when that lets the receive go.
 */
static int
sent_midcall(struct order_chan *c)
{
	struct order_sent *s = &c->sent[c->first];
	const struct order_task *st = c->stask;

	if (s->end != SENT_END || st == NULL || st->next_seq != s->seq + 1 ||
	    s->seq >= st->lost_from)
		return 0;
	s->end = SENT_DELIVERED;
	return 1;
}

/*
 * A receive that came before mark was recorded before the round began,
 * and so was the send it got: that send has come by now, unless it was
 * lost.  If neither its channel nor its sender holds it, the receive
 * goes unmatched, owing its send to the channel (release_owed); the
 * sender lost records after the last that came (or is not monitored:
 * absent), and counts no more from there.  1 when released.
 */
static int
recv_unsent(struct order *o, struct order_task *t, uint64_t mark)
{
	const struct record *r;
	struct order_chan *c;
	struct order_task *s;
	uint32_t id, h;

	if (t->wait != WAIT_CHAN || t->head == NULL ||
	    t->head->added >= mark)
		return 0;
	r = &t->head->rec;
	/* The root of a tree: its send came from below before it. */
	if (!chan_mine(o, r->peer, t->tid))
		return 0;
	/* Its agent was lost: its records may come from the next. */
	h = order_tid_host(r->peer);
	if ((o->host_away[h / 8] >> (h % 8)) & 1)
		return 0;
	/* Its sender made everything before it by now. */
	if ((id = record_msg_id(r)) != 0) {
		s = task_find(o, r->peer);
		if (s != NULL && s->registered && s->next_seq > 0 &&
		    record_msg_id_cmp(s->next_seq - 1, id) >= 0 &&
		    (s->resumed_at == 0 ||
		    record_msg_id_cmp(s->resumed_at - 1, id) < 0))
			return 0;	/* it holds the send */
		return order_release_unmatched(o, t) == 1;
	}
	if (r->seq >= t->lost_from)
		return order_release_unmatched(o, t) == 1;
	if ((c = chan_find(o, r->peer, t->tid, r->tag, r->ctx)) != NULL &&
	    c->count > 0)
		return sent_midcall(c);
	if ((s = task_find(o, r->peer)) == NULL || !s->registered) {
		s = order_task_get(o, r->peer);
		s->absent = 1;
	} else if (holds_send(s, t->tid, r->tag, r->ctx))
		return 0;
	else
		order_lost_at(o, s, s->next_seq);
	return release_owed(o, t, is_probe_hit(r)) == 1;
}

/*
 * Judges, after a round, the receives that wait for a send, and again
 * after what that released: a chain of receives whose sends wait
 * behind receives resolves in one round.
 */
void
order_recv_judge(struct order *o, uint64_t mark)
{
	struct order_task *t, **v = NULL;
	size_t i, n, cap = 0;
	int again = 1;

	while (again) {
		again = 0;
		n = 0;
		for (i = 0; i < o->ntaskb; i++)
			for (t = o->tasks[i]; t != NULL; t = t->hnext) {
				if (t->wait != WAIT_CHAN || t->head == NULL ||
				    t->head->added >= mark)
					continue;
				if (n == cap) {
					cap = cap ? cap * 2 : 16;
					v = xreallocarray(v, cap, sizeof(*v));
				}
				v[n++] = t;
			}
		for (i = 0; i < n; i++)
			if (recv_unsent(o, v[i], mark)) {
				/* What came after it may go too. */
				work_push(o, v[i]);
				again = 1;
			}
		order_run(o);
	}
	free(v);
}
