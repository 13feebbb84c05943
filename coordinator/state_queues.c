/*
 * The state model's queues (state.c): the messages sent and not yet
 * received, each in its receiver's queue with its send's number, the
 * traffic between tasks, what a receive takes off a queue, the races
 * between concurrent messages that a wildcard receive reveals, and,
 * when a task ends, the receives left waiting on it and the messages it
 * never took.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* --- queued messages --------------------------------------------------- */

void
state_qmsg_free(struct qmsg *q)
{
	pkseq_unref(q->pk);
	free(q);
}

/* A cleared queued message, a spare one if there is. */
struct qmsg *
state_qmsg_new(struct state *s)
{
	struct qmsg *q;

	if ((q = s->qspare) == NULL)
		return xcalloc(1, sizeof(*q));
	s->qspare = TAILQ_NEXT(q, entry);
	s->nqspare--;
	memset(q, 0, sizeof(*q));
	return q;
}

/* A message left its queue: kept for the next one, or freed. */
static void
qmsg_done(struct state *s, struct qmsg *q)
{
	if (s->nqspare >= STATE_QMSG_SPARE) {
		state_qmsg_free(q);
		return;
	}
	pkseq_unref(q->pk);
	TAILQ_NEXT(q, entry) = s->qspare;
	s->qspare = q;
	s->nqspare++;
}

/* --- queues and races -------------------------------------------------- */

static int
filter_match(int32_t peer, int32_t tag, int32_t ctx, const struct qmsg *q)
{
	return (peer == -1 || peer == q->from) &&
	    (tag == -1 || tag == q->tag) &&
	    (ctx == -1 || q->ctx == -1 || ctx == q->ctx);
}

/* Would a message already queued satisfy t's open receive? */
int
state_queued_match(const struct task *t)
{
	const struct qmsg *q;

	TAILQ_FOREACH(q, &t->queue, entry)
		if (filter_match(t->cur.peer, t->cur.tag, t->cur.ctx, q))
			return 1;
	return 0;
}

/*
 * Would a message already queued run one of t's message handlers?  It
 * does in whatever call of t's waits (doc/events.md, "Message
 * handlers"), and the handler may answer what t's peers wait for.
 */
int
state_queued_handled(const struct task *t)
{
	const struct qmsg *q;
	size_t i;

	if (t->nhandlers == 0)
		return 0;
	TAILQ_FOREACH(q, &t->queue, entry)
		for (i = 0; i < t->nhandlers; i++)
			if (filter_match(t->handlers[i].src,
			    t->handlers[i].tag, t->handlers[i].ctx, q))
				return 1;
	return 0;
}

static void
cand_add(struct qmsg *q, const struct wild *w)
{
	struct cand *c;

	/* Beyond the bound the oldest receives are checked, not the rest. */
	if (q->ncand == STATE_MSG_CANDS)
		return;
	c = &q->cand[q->ncand++];
	c->recv_seq = w->seq;
	c->peer = -1;
	c->tag = w->tag;
	c->s1_tid = w->s1_tid;
	c->s1_seq = w->s1_seq;
}

/*
 * A message to t was just released, so it is not causally before any
 * receive t already did.  It competed with one of t's recent wildcard
 * receives when its filter matches and the receive is not causally
 * before the send (the message existed while the receive waited), nor
 * the message that receive got (the two sends were concurrent).  The
 * receives are taken newest first: once one is before the send, so are
 * the older ones.  A check whose causality lies beyond the horizon is
 * not made, and counted.
 */
static void
race_check_send(struct state *s, struct task *t, struct qmsg *q,
    struct task *snd)
{
	const struct task *a = NULL;
	const struct wild *w;
	const struct wild *found[STATE_WILD_HISTORY];
	uint64_t i, first;
	size_t n = 0;
	int r;

	first = t->nwild > STATE_WILD_HISTORY ?
	    t->nwild - STATE_WILD_HISTORY : 0;
	/* All took from this sender: its later send was sent after each. */
	if (t->nwild > 0 && t->wild_same >= t->nwild - first &&
	    t->wild[(t->nwild - 1) % STATE_WILD_HISTORY].s1_tid == snd->tid)
		return;
	for (i = t->nwild; i > first; i--) {
		w = &t->wild[(i - 1) % STATE_WILD_HISTORY];
		if (!filter_match(-1, w->tag, w->ctx, q))
			continue;
		/* Receives mostly take from one sender: look it up once. */
		if (a == NULL || a->tid != w->s1_tid)
			a = task_find(s, w->s1_tid);
		/* s1 before a resync: what the send knew of it is unknown. */
		if (a == NULL || w->s1_seq <= a->base || a == snd)
			continue;	/* or sent after s1 */
		if ((r = state_reach(s, t, w->seq, snd, q->seq)) == 1)
			break;
		if (r == 0)
			r = state_reach(s, a, w->s1_seq, snd, q->seq);
		if (r == -1)
			s->races_unchecked++;
		if (r == 0)
			found[n++] = w;
	}
	/* The oldest first, as the candidates are bounded. */
	while (n > 0)
		cand_add(q, found[--n]);
}

/*
 * The wildcard receive w took s1 from t's queue: the messages still
 * queued that its filter matches and whose send was concurrent with
 * s1 could have come first.  Only the first STATE_WILD_HISTORY that
 * match are looked at, so that a long queue drained by wildcard
 * receives costs no more than a bounded scan per receive.
 */
static void
race_check_recv(struct state *s, struct task *t, const struct wild *w)
{
	const struct task *a, *b;
	struct qmsg *q;
	unsigned seen = 0;
	int r;

	/* Sends from before a resync have no clock to compare. */
	if ((a = task_find(s, w->s1_tid)) == NULL || w->s1_seq <= a->base)
		return;
	TAILQ_FOREACH(q, &t->queue, entry) {
		if (!filter_match(-1, w->tag, w->ctx, q))
			continue;
		if (++seen > STATE_WILD_HISTORY)
			break;
		/* One sender's messages come in the order sent. */
		if ((b = task_find(s, q->from)) == NULL || q->seq <= b->base ||
		    b == a)
			continue;
		if ((r = state_reach(s, a, w->s1_seq, b, q->seq)) == 0)
			r = state_reach(s, b, q->seq, a, w->s1_seq);
		if (r == -1)
			s->races_unchecked++;
		if (r == 0)
			cand_add(q, w);
	}
}

/*
 * Paper 004 (section 4) calls a program whose path depends on the order
 * in which concurrent messages arrive harmful.  Concurrency alone is not
 * enough to say so: a master that collects results with
 * pvm_recv(-1, tag) in a loop takes every competing message with the
 * same filter, and whichever comes first, the same receives consume the
 * same set.  pmon's approximation of "the order decides the path" is
 * therefore: the message that could have overtaken a wildcard receive's
 * message was consumed by a receive with another filter (other source or
 * tag: the program treats it differently), or never at all.  This is
 * checked when the competing message leaves the queue (here) or when
 * its receiver ends.
 */
static void
race_confirm(struct state *s, const struct task *t, const struct qmsg *q,
    int32_t peer, int32_t tag)
{
	unsigned i;

	for (i = 0; i < q->ncand; i++)
		if (q->cand[i].peer != peer || q->cand[i].tag != tag)
			state_report_race(s, t, &q->cand[i], q);
}

static void
wild_note(struct task *t, const struct wild *w)
{
	if (t->nwild > 0 &&
	    t->wild[(t->nwild - 1) % STATE_WILD_HISTORY].s1_tid == w->s1_tid)
		t->wild_same++;
	else
		t->wild_same = 1;
	t->wild[t->nwild++ % STATE_WILD_HISTORY] = *w;
}

/* Pairs a task keeps in a plain list; past them, a hash too. */
#define PAIRS_LISTED	8

/* Indexes the pairs not indexed yet (new ones, restored ones). */
static void
pairs_index(struct task *t)
{
	size_t i, mask;

	if (2 * t->npairs > t->pairmapcap) {
		free(t->pairmap);
		for (t->pairmapcap = 16; t->pairmapcap < 4 * t->npairs;)
			t->pairmapcap *= 2;
		t->pairmap = xcalloc(t->pairmapcap, sizeof(*t->pairmap));
		t->pairs_indexed = 0;
	}
	mask = t->pairmapcap - 1;
	for (; t->pairs_indexed < t->npairs; t->pairs_indexed++) {
		for (i = tid_hash(t->pairs[t->pairs_indexed].to) & mask;
		    t->pairmap[i] != 0; i = (i + 1) & mask)
			;
		t->pairmap[i] = (uint32_t)t->pairs_indexed + 1;
	}
}

/* What t sent to the task to, found or added. */
static struct pair *
pair_get(struct task *t, int32_t to)
{
	size_t i, mask;

	if (t->npairs <= PAIRS_LISTED) {
		for (i = 0; i < t->npairs; i++)
			if (t->pairs[i].to == to)
				return &t->pairs[i];
	} else {
		pairs_index(t);
		mask = t->pairmapcap - 1;
		for (i = tid_hash(to) & mask; t->pairmap[i] != 0;
		    i = (i + 1) & mask)
			if (t->pairs[t->pairmap[i] - 1].to == to)
				return &t->pairs[t->pairmap[i] - 1];
	}
	state_grow(&t->pairs, &t->paircap, t->npairs + 1, sizeof(*t->pairs));
	memset(&t->pairs[t->npairs], 0, sizeof(*t->pairs));
	t->pairs[t->npairs].to = to;
	return &t->pairs[t->npairs++];
}

static uint64_t
nbytes(int32_t b)
{
	return b > 0 ? (uint64_t)b : 0;
}

/* A message for d that an earlier unmatched receive of d already took. */
static int
owe_take(struct task *d, int32_t from, int32_t tag, int32_t ctx)
{
	size_t i;

	for (i = 0; i < d->nowed; i++)
		if (d->owed[i].from == from && d->owed[i].tag == tag &&
		    d->owed[i].ctx == ctx) {
			if (--d->owed[i].n == 0)
				d->owed[i] = d->owed[--d->nowed];
			return 1;
		}
	return 0;
}

/* One message of t's send r to dst: counted, and queued if dst lives. */
static void
enqueue(struct state *s, struct task *t, const struct record *r,
    int32_t dst)
{
	struct task *d;
	struct pair *p;
	struct qmsg *q;

	if (dst <= 0 || (dst & ORDER_TID_DAEMON))
		return;
	d = task_get(s, dst);
	p = pair_get(t, dst);
	t->sent_msgs++;
	t->sent_bytes += nbytes(r->bytes);
	p->msgs++;
	p->bytes += nbytes(r->bytes);
	if (d->end != TASK_LIVE)
		return;		/* PVM drops it, and so does the order */
	if (d->unmonitored)
		return;		/* its receives are never seen */
	if (d->nowed > 0 && owe_take(d, t->tid, r->tag, r->ctx))
		return;		/* received already */
	q = state_qmsg_new(s);
	/* pvm_psend packs its own message. */
	if (r->call != PMON_CALL_psend)
		q->pk = state_pack_share(t);
	q->from = t->tid;
	q->seq = r->seq;
	q->lam = state_out(t, r->seq).lam;
	q->tag = r->tag;
	q->ctx = r->ctx;
	q->bytes = r->bytes;
	race_check_send(s, d, q, t);
	TAILQ_INSERT_TAIL(&d->queue, q, entry);
	d->nqueue++;
}

/* The destinations of r, as order_chans.c's send_dests finds them. */
void
state_sends_apply(struct state *s, struct task *t, const struct record *r)
{
	int32_t *d;
	unsigned i, n = 0;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend) {
		enqueue(s, t, r, r->peer);
		return;
	}
	if (r->npeers == 0)
		return;
	d = xcalloc(r->npeers, sizeof(*d));
	for (i = 0; i < r->npeers; i++)
		d[i] = record_peer(r, i);
	qsort(d, r->npeers, sizeof(*d), state_cmp_tid);
	for (i = 0; i < r->npeers; i++)
		if (d[i] != t->tid && (n == 0 || d[n - 1] != d[i]))
			d[n++] = d[i];
	for (i = 0; i < n; i++)
		enqueue(s, t, r, d[i]);
	free(d);
}

static struct qmsg *
queue_take(struct task *t, int32_t from, uint64_t seq)
{
	struct qmsg *q;

	TAILQ_FOREACH(q, &t->queue, entry)
		if (q->from == from && q->seq == seq) {
			TAILQ_REMOVE(&t->queue, q, entry);
			t->nqueue--;
			return q;
		}
	return NULL;
}

/* A failed send delivered nothing: take its message back out of d. */
static void
retract_from(struct state *s, struct task *t, struct task *d, uint64_t seq)
{
	struct qmsg *q;
	struct pair *p;

	if (d == NULL || (q = queue_take(d, t->tid, seq)) == NULL)
		return;
	t->sent_msgs--;
	t->sent_bytes -= nbytes(q->bytes);
	p = pair_get(t, d->tid);
	p->msgs--;
	p->bytes -= nbytes(q->bytes);
	qmsg_done(s, q);
}

void
state_retract_sends(struct state *s, struct task *t, const struct record *r)
{
	size_t i;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend)
		retract_from(s, t, task_find(s, r->peer), r->seq - 1);
	else if (r->call == PMON_CALL_mcast)
		for (i = 0; i < s->ntasks; i++)
			retract_from(s, t, s->tasks[i], r->seq - 1);
}

/* The channel (from, tag, ctx) owes t the next message that comes. */
static void
owe_add(struct task *t, int32_t from, int32_t tag, int32_t ctx)
{
	struct owed *o;
	size_t i;

	for (i = 0; i < t->nowed; i++)
		if (t->owed[i].from == from && t->owed[i].tag == tag &&
		    t->owed[i].ctx == ctx) {
			t->owed[i].n++;
			return;
		}
	if (t->nowed == t->owedcap) {
		t->owedcap = t->owedcap ? t->owedcap * 2 : 4;
		o = xreallocarray(t->owed, t->owedcap, sizeof(*o));
		t->owed = o;
	}
	t->owed[t->nowed++] = (struct owed){ from, tag, ctx, 1 };
}

/*
 * A receive released without its send (records were lost, or a new
 * coordinator took over: the order cannot tell which send it got) still
 * took a message of its channel: the oldest queued one goes, so that the
 * queue does not keep, and report at the exit as unreceived, one
 * message per such receive.  Such a receive may come before its send
 * (nothing orders them): then the channel owes it the next message that
 * comes, which is not queued (owe_take).  No clock is merged: the send
 * is not known.
 */
static void
queue_take_oldest(struct state *s, struct task *t, int32_t from, int32_t tag,
    int32_t ctx)
{
	struct qmsg *q;

	TAILQ_FOREACH(q, &t->queue, entry)
		if (q->from == from && q->tag == tag && q->ctx == ctx) {
			TAILQ_REMOVE(&t->queue, q, entry);
			t->nqueue--;
			qmsg_done(s, q);
			return;
		}
	owe_add(t, from, tag, ctx);
}

/*
 * A receive that names its message by id took it and every message of
 * its channel sent before it (PVM keeps a channel's order): those still
 * queued were received by receives the model did not see (lost, or
 * before this coordinator took over), and go.  Returns whether the
 * message itself was queued.
 */
static int
queue_take_upto(struct state *s, struct task *t, int32_t from, int32_t tag,
    int32_t ctx, uint32_t id)
{
	struct qmsg *q, *next;
	int found = 0;

	for (q = TAILQ_FIRST(&t->queue); q != NULL; q = next) {
		next = TAILQ_NEXT(q, entry);
		if (q->from != from || q->tag != tag || q->ctx != ctx ||
		    record_msg_id_cmp(q->seq, id) > 0)
			continue;
		found |= record_msg_id_cmp(q->seq, id) == 0;
		TAILQ_REMOVE(&t->queue, q, entry);
		t->nqueue--;
		qmsg_done(s, q);
	}
	return found;
}

/*
 * An unmatched receive that names its message: off the queue if it is
 * there; else, unless its sender is already past it (the send will not
 * come: a coordinator before this one had it, or it was lost), the
 * channel owes the receive the next message that comes.
 */
static void
queue_take_id(struct state *s, struct task *t, const struct record *r,
    uint32_t id)
{
	const struct task *snd;

	if (queue_take_upto(s, t, r->peer, r->tag, r->ctx, id))
		return;
	if ((snd = task_find(s, r->peer)) != NULL && snd->seen &&
	    record_msg_id_cmp(snd->last_seq, id) >= 0)
		return;
	owe_add(t, r->peer, r->tag, r->ctx);
}

/*
 * The end of a receive that got a message: the message leaves the
 * queue, the receiver's clock takes the send's, and the race checks
 * run.  filter is the receive's begin when it is known.
 */
void
state_receive_apply(struct state *s, struct task *t,
    const struct order_event *ev, const struct call *filter)
{
	const struct record *r = ev->rec;
	struct task *snd;
	struct qmsg *q;
	struct cause c;
	struct wild w;

	t->recv_msgs++;
	t->recv_bytes += nbytes(r->bytes);
	if (!(ev->flags & EVENT_MATCHED)) {
		if (!(ev->flags & EVENT_UNMATCHED))
			return;
		if (record_msg_id(r) != 0)
			queue_take_id(s, t, r, record_msg_id(r));
		else
			queue_take_oldest(s, t, r->peer, r->tag, r->ctx);
		return;
	}
	q = queue_take(t, ev->match_tid, ev->match_seq);
	if (record_msg_id(r) != 0)
		(void)queue_take_upto(s, t, ev->match_tid, r->tag, r->ctx,
		    record_msg_id(r));
	if ((snd = task_find(s, ev->match_tid)) != NULL && snd != t) {
		if (q != NULL) {
			c.task = (uint32_t)snd->idx;
			c.seq = q->seq;
			c.lam = q->lam;
		} else
			c = state_out(snd, ev->match_seq);
		state_link(s, t, r->seq, &c);
	}
	if (q != NULL && filter != NULL)
		race_confirm(s, t, q, filter->peer, filter->tag);
	/* pvm_precv unpacks itself and keeps the receive buffer. */
	if (q != NULL && r->call != PMON_CALL_precv)
		state_unpack_start(s, t, r, q);
	if (filter != NULL && filter->peer == -1) {
		w.seq = r->seq;
		w.tag = filter->tag;
		w.ctx = filter->ctx;
		w.s1_tid = ev->match_tid;
		w.s1_seq = ev->match_seq;
		race_check_recv(s, t, &w);
		wild_note(t, &w);
	}
	if (q != NULL)
		qmsg_done(s, q);
}

/* --- ends of tasks ----------------------------------------------------- */

/* Is w still in the receive that named tid, as registered? */
static int
waits_on(const struct state *s, const struct task *w, int32_t tid)
{
	return w->wait_reg == tid && state_task_wait(s, w) == WAIT_RECV &&
	    w->cur.peer == tid;
}

/* Adds w to a list of waiters on tid, dropping those gone elsewhere. */
static void
waiters_add(const struct state *s, uint32_t **v, size_t *n, size_t *cap,
    int32_t tid, const struct task *w)
{
	size_t i, kept = 0;

	if (*n == *cap) {
		for (i = 0; i < *n; i++)
			if (waits_on(s, s->tasks[(*v)[i]], tid))
				(*v)[kept++] = (*v)[i];
		*n = kept;
		/* Mostly still waiting: room for as many again. */
		if (2 * *n >= *cap)
			state_grow(v, cap, *cap + 1, sizeof(**v));
	}
	(*v)[(*n)++] = (uint32_t)w->idx;
}

void
state_wait_register(struct state *s, struct task *t)
{
	struct task *p;

	if (t->cur.peer <= 0 || t->wait_reg == t->cur.peer)
		return;
	t->wait_reg = t->cur.peer;
	if ((p = task_find(s, t->cur.peer)) != NULL)
		waiters_add(s, &p->waiters, &p->nwaiters, &p->waitercap,
		    p->tid, t);
	else
		waiters_add(s, &s->orphans, &s->norphans, &s->orphancap,
		    t->cur.peer, t);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * t ended: its waiters, and those on it among the orphans, that still
 * wait and have nothing queued to take, wait on an exited task.  They
 * are reported in the order the model learnt of them.
 */
void
state_ended_receives(struct state *s, struct task *t)
{
	struct task *w;
	uint32_t *found;
	size_t i, n = 0, kept = 0;

	found = xcalloc(t->nwaiters + s->norphans + 1, sizeof(*found));
	for (i = 0; i < t->nwaiters; i++) {
		w = s->tasks[t->waiters[i]];
		if (w != t && waits_on(s, w, t->tid)) {
			w->wait_reg = 0;	/* listed once */
			found[n++] = (uint32_t)w->idx;
		}
	}
	for (i = 0; i < s->norphans; i++) {
		w = s->tasks[s->orphans[i]];
		if (w != t && waits_on(s, w, t->tid)) {
			w->wait_reg = 0;
			found[n++] = (uint32_t)w->idx;
		} else if (w->wait_reg != 0 && waits_on(s, w, w->wait_reg))
			s->orphans[kept++] = s->orphans[i];
	}
	s->norphans = kept;
	t->nwaiters = 0;
	qsort(found, n, sizeof(*found), cmp_u32);
	for (i = 0; i < n; i++) {
		w = s->tasks[found[i]];
		if (!state_queued_match(w))
			state_report_waits_on_exited(s, w, t->tid);
	}
	free(found);
}

/* Messages t never received; those that raced a wildcard receive too. */
void
state_ended_queue(struct state *s, struct task *t)
{
	struct qmsg *q;
	unsigned i;

	while ((q = TAILQ_FIRST(&t->queue)) != NULL) {
		TAILQ_REMOVE(&t->queue, q, entry);
		t->nqueue--;
		state_report_unreceived(s, t, q);
		for (i = 0; i < q->ncand; i++)
			state_report_race(s, t, &q->cand[i], q);
		qmsg_done(s, q);
	}
}
