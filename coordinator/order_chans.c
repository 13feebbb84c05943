/*
 * The ordering core's channels (order_internal.h): the table of (src,
 * dst, tag, ctx) channels, and the released sends they keep until the
 * receives that got them take them (order_push_sends); a send whose end
 * says it failed is taken back (order_retract_sends).
 */
#include <stdlib.h>

#include "order_internal.h"
#include "xmalloc.h"

/* --- the table -------------------------------------------------------- */

/*
 * Forgets the channels that hold nothing: made again, such a channel is
 * what it was.  A debt, a waiting receiver, or a send a debt took whose
 * end may still say it failed (retract_from) keep it.
 */
static void
chan_sweep(struct order *o)
{
	struct order_chan *c, *next;
	size_t i;

	for (i = 0; i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = next) {
			next = c->hnext;
			if (c->count == 0 && c->debt == 0 &&
			    c->waiter == NULL &&
			    (c->paid == 0 || c->stask->released >= c->paid))
				order_chan_del(o, c);
		}
}

/*
 * Doubles the table when it is full, unless at least half of it was
 * channels that hold nothing: then they go instead.
 */
static void
chan_grow(struct order *o)
{
	struct order_chan **nc, *c, *next;
	size_t i, b, nb = o->nchanb * 2;

	if (o->nchans < o->nchanb)
		return;
	chan_sweep(o);
	if (o->nchans < o->nchanb / 2)
		return;
	nc = xcalloc(nb, sizeof(*nc));
	for (i = 0; i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = next) {
			next = c->hnext;
			b = chan_bucket(nb, c->src, c->dst, c->tag, c->ctx);
			c->hnext = nc[b];
			nc[b] = c;
		}
	free(o->chans);
	o->chans = nc;
	o->nchanb = nb;
}

/* Links c into the lists of its sender's and its receiver's channels. */
static void
chan_link(struct order_chan *c, struct order_task *s, struct order_task *d)
{
	if ((c->snext = s->outs) != NULL)
		c->snext->sprevp = &c->snext;
	s->outs = c;
	c->sprevp = &s->outs;
	if ((c->dnext = d->ins) != NULL)
		c->dnext->dprevp = &c->dnext;
	d->ins = c;
	c->dprevp = &d->ins;
}

struct order_chan *
order_chan_get(struct order *o, int32_t src, int32_t dst, int32_t tag,
    int32_t ctx)
{
	struct order_chan *c;
	struct order_task *s, *d;
	size_t b;

	if ((c = chan_find(o, src, dst, tag, ctx)) != NULL)
		return c;
	s = order_task_get(o, src);
	d = order_task_get(o, dst);
	c = xcalloc_lines(sizeof(*c));
	c->src = src;
	c->dst = dst;
	c->tag = tag;
	c->ctx = ctx;
	c->stask = s;
	chan_link(c, s, d);
	chan_grow(o);
	b = chan_bucket(o->nchanb, src, dst, tag, ctx);
	c->hnext = o->chans[b];
	o->chans[b] = c;
	o->nchans++;
	return c;
}

/* Unlinks and frees a channel; its retained sends leave the window. */
void
order_chan_del(struct order *o, struct order_chan *c)
{
	struct order_chan **pp;
	struct order_task *t;

	if (c->stask->out_chan == c)
		c->stask->out_chan = NULL;
	if ((t = task_find(o, c->dst)) != NULL && t->in_chan == c)
		t->in_chan = NULL;
	if ((*c->sprevp = c->snext) != NULL)
		c->snext->sprevp = c->sprevp;
	if ((*c->dprevp = c->dnext) != NULL)
		c->dnext->dprevp = c->dprevp;
	chan_unwait(c);
	pp = &o->chans[chan_bucket(o->nchanb, c->src, c->dst, c->tag, c->ctx)];
	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	o->nchans--;
	o->retained -= c->count;
	free(c->sent);
	free(c);
}

static void
chan_push(struct order_chan *c, const struct order_sent *s)
{
	struct order_sent *ns;
	size_t i, ncap;

	if (c->count == c->cap) {
		ncap = c->cap ? c->cap * 2 : 4;
		ns = xcalloc(ncap, sizeof(*ns));
		for (i = 0; i < c->count; i++)
			ns[i] = c->sent[(c->first + i) % c->cap];
		free(c->sent);
		c->sent = ns;
		c->cap = ncap;
		c->first = 0;
	}
	c->sent[(c->first + c->count) % c->cap] = *s;
	c->count++;
}

/* --- sends ------------------------------------------------------------ */

/*
 * A task that ended and released everything will not receive again: a
 * message to it leaves the window at once.
 */
static inline int
task_gone(const struct order *o, int32_t tid)
{
	const struct order_task *t = task_find(o, tid);

	return t != NULL && t->registered && t->ended && t->head == NULL;
}

static int
cmp_tid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/*
 * The destinations of a send record.  PVM's multicast (and so broadcast)
 * drops duplicates and the sender itself; a point-to-point send to self
 * is delivered.  They go to buf if it has room for nbuf, else to a new
 * array the caller frees.  Returns the count.
 */
static int
send_dests(const struct order_task *t, const struct record *r,
    int32_t *buf, size_t nbuf, int32_t **out)
{
	int32_t *d = buf;
	unsigned i, n = 0;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend) {
		d[n++] = r->peer;
		*out = d;
		return (int)n;
	}
	if ((size_t)r->npeers + 1 > nbuf)
		d = xcalloc((size_t)r->npeers + 1, sizeof(*d));
	for (i = 0; i < r->npeers; i++)
		d[i] = record_peer(r, i);
	qsort(d, r->npeers, sizeof(*d), cmp_tid);
	for (i = 0; i < r->npeers; i++)
		if (d[i] != t->tid && (n == 0 || d[n - 1] != d[i]))
			d[n++] = d[i];
	*out = d;
	return (int)n;
}

/*
 * A send for channel c: a receive released before it came takes a
 * counted one (the debt), else it waits in the FIFO for its receive.
 */
static inline void
chan_feed(struct order *o, struct order_chan *c, const struct order_sent *s)
{
	if (c->debt > 0 && !s->uncounted) {
		c->debt--;
		c->paid = s->seq + 1;
		return;
	}
	chan_push(c, s);
	o->retained++;
	wake_receiver(o, c);
}

/*
 * Puts a released send into the FIFO of each of its channels; uncounted
 * if a record of its task before it may be missing, so that only a
 * receive that names it by its id takes it.
 */
void
order_push_sends(struct order *o, struct order_task *t, const struct record *r,
    uint64_t corr)
{
	struct order_sent s = { r->seq, r->t_ns, corr, t->host,
	    r->call == PMON_CALL_bcast ? SENT_DELIVERED : SENT_END,
	    r->seq >= t->lost_from };
	struct order_chan *c;
	int32_t buf[64], *dst;
	int i, n, below = 0;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend) {
		if (!chan_mine(o, t->tid, r->peer)) {
			if (o->level == LEVEL_ROOT)
				order_below_sent(t, r, corr);
			return;
		}
		if (task_gone(o, r->peer))
			return;
		c = t->out_chan;
		if (!chan_is(c, t->tid, r->peer, r->tag, r->ctx))
			c = t->out_chan = order_chan_get(o, t->tid, r->peer,
			    r->tag, r->ctx);
		chan_feed(o, c, &s);
		return;
	}
	n = send_dests(t, r, buf, sizeof(buf) / sizeof(buf[0]), &dst);
	for (i = 0; i < n; i++) {
		if (!chan_mine(o, t->tid, dst[i]))
			below = 1;
		else if (!task_gone(o, dst[i]))
			chan_feed(o, order_chan_get(o, t->tid, dst[i], r->tag,
			    r->ctx), &s);
	}
	if (below && o->level == LEVEL_ROOT)
		order_below_sent(t, r, corr);
	if (dst != buf)
		free(dst);
}

/*
 * Takes a send back out of channel c if it is still last there, or gives
 * back the debt it paid.  (A receive never took it: a receive waits for
 * the end of the send it would take, sent_ready.)
 */
static void
retract_from(struct order *o, struct order_chan *c, uint64_t seq)
{
	if (c == NULL)
		return;
	if (c->count > 0 &&
	    c->sent[(c->first + c->count - 1) % c->cap].seq == seq) {
		c->count--;
		o->retained--;
	} else if (c->paid == seq + 1) {
		c->debt++;
		c->paid = 0;
	}
}

/*
 * r is the end of a call that failed (release_node looks at each record
 * it releases, so that the others cost no call).  The end of a send that
 * failed delivered nothing: take its begin (the record before) back out
 * of the FIFOs it is still at the back of, so that a later message is
 * not matched to it.  A point-to-point send has one channel; a failed
 * multicast is rare enough to search for.
 */
void
order_retract_sends(struct order *o, struct order_task *t,
    const struct record *r)
{
	struct order_chan *c;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend) {
		retract_from(o, chan_find(o, t->tid, r->peer, r->tag, r->ctx),
		    r->seq - 1);
		return;
	}
	if (r->call != PMON_CALL_mcast)
		return;
	for (c = t->outs; c != NULL; c = c->snext)
		retract_from(o, c, r->seq - 1);
}

/*
 * t is done: the ends of the sends it kept in c were released, or lost.
 * (A reused tid must not make them wait for its new records.)
 */
void
order_sends_settle(const struct order_task *t, struct order_chan *c)
{
	struct order_sent *s;
	size_t i;

	for (i = 0; i < c->count; i++) {
		s = &c->sent[(c->first + i) % c->cap];
		if (s->end == SENT_END)
			s->end = t->lost_from == s->seq + 1 ? SENT_UNKNOWN :
			    SENT_DELIVERED;
	}
}
