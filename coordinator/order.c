/*
 * On-the-fly topological sort of PVM events (order.h).
 *
 * Kimelman & Zernik keep a graph node per event with counts of reported
 * predecessors and seen successors.  For PVM the graph is thin enough to
 * keep implicitly:
 *
 *  - the local predecessor is the previous record of the same task, so a
 *    task is a FIFO of held events and only its head can be next;
 *  - the head waits on at most one thing: the parent's spawn (first event
 *    only) or the channel (src, dst, tag, ctx) its receive reads from;
 *  - a released send stays in the window as a sequence number in its
 *    channel's FIFO until the receive that is its successor consumes it.
 *
 * A release pushes the tasks it may unblock onto a worklist, so long
 * chains of dependencies never recurse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "proto.h"
#include "record.h"

/* One held event: a copy of its encoded record. */
struct order_node {
	struct order_node	*next;
	struct record		 rec;	/* points into bytes */
	uint8_t			 flags;	/* EVENT_LOST for a marker */
	uint64_t		 last;	/* last seq this event accounts for */
	size_t			 len;
	uint8_t			 bytes[];
};

struct order_task {
	int32_t			 tid;
	int32_t			 parent_tid;
	uint64_t		 spawn_seq;
	int			 registered;
	int			 ended;
	int			 started;	/* an event was released */
	int			 queued;	/* on the worklist */
	int			 waiting;	/* on its parent's waiters */
	uint64_t		 next_seq;	/* next seq expected */
	uint64_t		 released;	/* last seq released */
	uint64_t		 lost;		/* records reported lost */
	struct order_node	*head;
	struct order_node	**tailp;
	size_t			 held;
	struct order_task	*waiters;	/* children awaiting a spawn */
	struct order_task	*next_waiter;
	struct order_task	*hnext;
	struct order_task	*wnext;
};

/* Released sends not yet received, per (src, dst, tag, ctx). */
struct order_chan {
	int32_t			 src, dst, tag, ctx;
	uint64_t		*seqs;		/* ring of send seqs */
	size_t			 first, count, cap;
	struct order_task	*waiter;	/* dst, blocked on this */
	struct order_chan	*hnext;
};

struct order {
	order_release_cb	 cb;
	void			*arg;
	struct order_task	**tasks;
	size_t			 ntaskb;	/* buckets, a power of 2 */
	size_t			 ntasks;
	struct order_chan	**chans;
	size_t			 nchanb;
	size_t			 nchans;
	struct order_task	*work, **worktail;
	size_t			 registered;
	size_t			 held;
	size_t			 retained;
	int			 draining;	/* order_release_all runs */
};

#define ORDER_MIN_BUCKETS	64

static void	order_run(struct order *);
static void	order_task_done(struct order *, struct order_task *);

/* --- hash tables ------------------------------------------------------ */

static size_t
order_hash(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	h = (h ^ a) * 0xff51afd7ed558ccdULL;
	h = (h ^ b) * 0xc4ceb9fe1a85ec53ULL;
	h = (h ^ c) * 0xff51afd7ed558ccdULL;
	h = (h ^ d) * 0xc4ceb9fe1a85ec53ULL;
	return (size_t)(h ^ h >> 29);
}

static size_t
task_bucket(const struct order *o, int32_t tid)
{
	return order_hash((uint32_t)tid, 0, 0, 0) & (o->ntaskb - 1);
}

static size_t
chan_bucket(size_t nb, int32_t src, int32_t dst, int32_t tag, int32_t ctx)
{
	return order_hash((uint32_t)src, (uint32_t)dst, (uint32_t)tag,
	    (uint32_t)ctx) & (nb - 1);
}

static struct order_task *
task_find(const struct order *o, int32_t tid)
{
	struct order_task *t;

	for (t = o->tasks[task_bucket(o, tid)]; t != NULL; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

/* Doubles the task table when it is full; a failure only costs speed. */
static void
task_grow(struct order *o)
{
	struct order_task **nt, *t, *next;
	size_t i, nb = o->ntaskb * 2;

	if (o->ntasks < o->ntaskb || (nt = calloc(nb, sizeof(*nt))) == NULL)
		return;
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = next) {
			next = t->hnext;
			t->hnext = nt[order_hash((uint32_t)t->tid, 0, 0, 0) &
			    (nb - 1)];
			nt[order_hash((uint32_t)t->tid, 0, 0, 0) & (nb - 1)] =
			    t;
		}
	free(o->tasks);
	o->tasks = nt;
	o->ntaskb = nb;
}

/* Finds a task, or adds an unregistered one (a parent not yet seen). */
static struct order_task *
task_get(struct order *o, int32_t tid)
{
	struct order_task *t;
	size_t b;

	if ((t = task_find(o, tid)) != NULL)
		return t;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->tid = tid;
	t->next_seq = 1;
	t->tailp = &t->head;
	task_grow(o);
	b = task_bucket(o, tid);
	t->hnext = o->tasks[b];
	o->tasks[b] = t;
	o->ntasks++;
	return t;
}

static struct order_chan *
chan_find(const struct order *o, int32_t src, int32_t dst, int32_t tag,
    int32_t ctx)
{
	struct order_chan *c;

	c = o->chans[chan_bucket(o->nchanb, src, dst, tag, ctx)];
	for (; c != NULL; c = c->hnext)
		if (c->src == src && c->dst == dst && c->tag == tag &&
		    c->ctx == ctx)
			return c;
	return NULL;
}

static void
chan_grow(struct order *o)
{
	struct order_chan **nc, *c, *next;
	size_t i, b, nb = o->nchanb * 2;

	if (o->nchans < o->nchanb || (nc = calloc(nb, sizeof(*nc))) == NULL)
		return;
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

static struct order_chan *
chan_get(struct order *o, int32_t src, int32_t dst, int32_t tag,
    int32_t ctx)
{
	struct order_chan *c;
	size_t b;

	if ((c = chan_find(o, src, dst, tag, ctx)) != NULL)
		return c;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->src = src;
	c->dst = dst;
	c->tag = tag;
	c->ctx = ctx;
	chan_grow(o);
	b = chan_bucket(o->nchanb, src, dst, tag, ctx);
	c->hnext = o->chans[b];
	o->chans[b] = c;
	o->nchans++;
	return c;
}

/* Unlinks and frees a channel; its retained sends leave the window. */
static void
chan_del(struct order *o, struct order_chan *c)
{
	struct order_chan **pp;

	pp = &o->chans[chan_bucket(o->nchanb, c->src, c->dst, c->tag, c->ctx)];
	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	o->nchans--;
	o->retained -= c->count;
	free(c->seqs);
	free(c);
}

static int
chan_push(struct order_chan *c, uint64_t seq)
{
	uint64_t *ns;
	size_t i, ncap;

	if (c->count == c->cap) {
		ncap = c->cap ? c->cap * 2 : 4;
		if ((ns = calloc(ncap, sizeof(*ns))) == NULL)
			return -1;
		for (i = 0; i < c->count; i++)
			ns[i] = c->seqs[(c->first + i) % c->cap];
		free(c->seqs);
		c->seqs = ns;
		c->cap = ncap;
		c->first = 0;
	}
	c->seqs[(c->first + c->count) % c->cap] = seq;
	c->count++;
	return 0;
}

static uint64_t
chan_pop(struct order_chan *c)
{
	uint64_t seq = c->seqs[c->first];

	c->first = (c->first + 1) % c->cap;
	c->count--;
	return seq;
}

/* --- worklist --------------------------------------------------------- */

static void
work_push(struct order *o, struct order_task *t)
{
	if (t->queued || t->head == NULL)
		return;
	t->queued = 1;
	t->wnext = NULL;
	*o->worktail = t;
	o->worktail = &t->wnext;
}

static struct order_task *
work_pop(struct order *o)
{
	struct order_task *t = o->work;

	if (t == NULL)
		return NULL;
	if ((o->work = t->wnext) == NULL)
		o->worktail = &o->work;
	t->queued = 0;
	return t;
}

/* --- releasing -------------------------------------------------------- */

/*
 * A task that has nothing more to give: it ended and everything it sent
 * was released, or we are shutting down and it holds nothing.  Unknown
 * tasks may still register, except at shutdown.
 */
static int
task_exhausted(const struct order *o, int32_t tid)
{
	const struct order_task *t = task_find(o, tid);

	if (t == NULL || !t->registered)
		return o->draining;
	return t->head == NULL && (t->ended || o->draining);
}

/*
 * A task that ended and released everything will not receive again: a
 * message to it leaves the window at once.
 */
static int
task_gone(const struct order *o, int32_t tid)
{
	const struct order_task *t = task_find(o, tid);

	return t != NULL && t->registered && t->ended && t->head == NULL;
}

/* Wakes the children whose spawn record the parent has now released. */
static void
wake_children(struct order *o, struct order_task *p, int all)
{
	struct order_task **pp = &p->waiters, *c;

	while ((c = *pp) != NULL) {
		if (all || c->spawn_seq <= p->released) {
			*pp = c->next_waiter;
			c->waiting = 0;
			work_push(o, c);
		} else
			pp = &c->next_waiter;
	}
}

static void
wake_receiver(struct order *o, struct order_chan *c)
{
	struct order_task *t = c->waiter;

	if (t == NULL)
		return;
	c->waiter = NULL;
	work_push(o, t);
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
 * is delivered.  Returns the count, or -1 when out of memory.
 */
static int
send_dests(const struct order_task *t, const struct record *r,
    int32_t **out)
{
	int32_t *d;
	unsigned i, n = 0;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend) {
		if ((d = malloc(sizeof(*d))) == NULL)
			return -1;
		d[n++] = r->peer;
		*out = d;
		return (int)n;
	}
	if ((d = malloc(sizeof(*d) * (r->npeers + 1))) == NULL)
		return -1;
	for (i = 0; i < r->npeers; i++)
		d[i] = record_peer(r, i);
	qsort(d, r->npeers, sizeof(*d), cmp_tid);
	for (i = 0; i < r->npeers; i++)
		if (d[i] != t->tid && (n == 0 || d[n - 1] != d[i]))
			d[n++] = d[i];
	*out = d;
	return (int)n;
}

/* Puts a released send into the FIFO of each of its channels. */
static int
push_sends(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_chan *c;
	int32_t *dst;
	int i, n;

	if ((n = send_dests(t, r, &dst)) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (task_gone(o, dst[i]))
			continue;
		if ((c = chan_get(o, t->tid, dst[i], r->tag, r->ctx)) == NULL ||
		    chan_push(c, r->seq) == -1) {
			free(dst);
			return -1;
		}
		o->retained++;
		wake_receiver(o, c);
	}
	free(dst);
	return 0;
}

/* Takes a send back out of channel c if it is still last there. */
static void
retract_from(struct order *o, struct order_chan *c, uint64_t seq)
{
	if (c != NULL && c->count > 0 &&
	    c->seqs[(c->first + c->count - 1) % c->cap] == seq) {
		c->count--;
		o->retained--;
	}
}

/*
 * The end of a send that failed delivered nothing: take its begin (the
 * record before) back out of the FIFOs it is still at the back of, so
 * that a later message is not matched to it.  A point-to-point send has
 * one channel; a failed multicast is rare enough to search for.
 */
static void
retract_sends(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_chan *c;
	size_t i;

	if (r->phase != PMON_END || r->rc >= 0)
		return;
	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend) {
		retract_from(o, chan_find(o, t->tid, r->peer, r->tag, r->ctx),
		    r->seq - 1);
		return;
	}
	if (r->call != PMON_CALL_mcast)
		return;
	for (i = 0; i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = c->hnext)
			if (c->src == t->tid)
				retract_from(o, c, r->seq - 1);
}

/* Releases the head of t with the given flags and match. */
static int
release_head(struct order *o, struct order_task *t, uint8_t flags,
    int32_t match_tid, uint64_t match_seq)
{
	struct order_node *n = t->head;
	struct order_event ev;
	int rv = 0;

	if ((t->head = n->next) == NULL)
		t->tailp = &t->head;
	t->held--;
	o->held--;
	t->started = 1;
	t->released = n->last;
	ev.tid = t->tid;
	ev.flags = n->flags | flags;
	ev.match_tid = match_tid;
	ev.match_seq = match_seq;
	ev.rec = &n->rec;
	ev.bytes = n->bytes;
	ev.len = n->len;
	o->cb(&ev, o->arg);
	if (!(n->flags & EVENT_LOST)) {
		if (record_is_send(&n->rec))
			rv = push_sends(o, t, &n->rec);
		retract_sends(o, t, &n->rec);
	}
	free(n);
	wake_children(o, t, 0);
	if (t->ended && t->head == NULL)
		order_task_done(o, t);
	return rv;
}

static int
is_probe_hit(const struct record *r)
{
	return r->call == PMON_CALL_probe && r->phase == PMON_END &&
	    (r->flags & RECORD_MSG);
}

/* May the first event of t go?  If not, t waits on its parent. */
static int
spawn_ready(struct order *o, struct order_task *t)
{
	struct order_task *p;

	if (t->started || t->parent_tid == 0 || t->spawn_seq == 0)
		return 1;
	p = task_find(o, t->parent_tid);
	if (p != NULL && p->released >= t->spawn_seq)
		return 1;
	if (task_exhausted(o, t->parent_tid))
		return 1;
	if (!t->waiting) {
		if ((p = task_get(o, t->parent_tid)) == NULL)
			return 1;	/* out of memory: do not wait */
		t->next_waiter = p->waiters;
		p->waiters = t;
		t->waiting = 1;
	}
	return 0;
}

/*
 * Tries to release the head of t; force releases it whatever it waits
 * for.  Returns 1 if it released one, 0 if the head waits or there is
 * none, -1 when out of memory.
 */
static int
task_step(struct order *o, struct order_task *t, int force)
{
	const struct record *r;
	struct order_chan *c;
	int peek;

	if (t->head == NULL)
		return 0;
	if (!force && !spawn_ready(o, t))
		return 0;
	r = &t->head->rec;
	peek = is_probe_hit(r);
	if ((t->head->flags & EVENT_LOST) || (!peek && !record_is_recv(r)))
		return release_head(o, t, 0, 0, 0) == -1 ? -1 : 1;
	if (r->peer & ORDER_TID_DAEMON)
		return release_head(o, t, 0, 0, 0) == -1 ? -1 : 1;
	c = chan_find(o, r->peer, t->tid, r->tag, r->ctx);
	if (c != NULL && c->count > 0) {
		uint64_t seq = peek ? c->seqs[c->first] : chan_pop(c);

		if (!peek)
			o->retained--;
		return release_head(o, t, EVENT_MATCHED, r->peer, seq) == -1 ?
		    -1 : 1;
	}
	if (force || r->peer == 0 || task_exhausted(o, r->peer))
		return release_head(o, t, EVENT_UNMATCHED, 0, 0) == -1 ?
		    -1 : 1;
	if ((c = chan_get(o, r->peer, t->tid, r->tag, r->ctx)) == NULL)
		return -1;
	c->waiter = t;
	return 0;
}

/*
 * Runs the worklist dry.  Out of memory while recording a send loses
 * that send's matches (its receives come out unmatched at the end); the
 * order stays valid, so this is not an error for the caller.
 */
static void
order_run(struct order *o)
{
	struct order_task *t;

	while ((t = work_pop(o)) != NULL)
		while (task_step(o, t, 0) == 1)
			;
}

/*
 * A task that ended and holds nothing: the children and receivers that
 * waited for it may go, and channels into it can never be read again.
 */
static void
order_task_done(struct order *o, struct order_task *t)
{
	struct order_chan *c, *next;
	size_t i;

	wake_children(o, t, 1);
	for (i = 0; i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = next) {
			next = c->hnext;
			if (c->src == t->tid)
				wake_receiver(o, c);
			if (c->dst == t->tid ||
			    (c->src == t->tid && c->count == 0 &&
			    c->waiter == NULL))
				chan_del(o, c);
		}
}

/* --- the API ---------------------------------------------------------- */

struct order *
order_new(order_release_cb cb, void *arg)
{
	struct order *o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return NULL;
	o->cb = cb;
	o->arg = arg;
	o->ntaskb = o->nchanb = ORDER_MIN_BUCKETS;
	o->tasks = calloc(o->ntaskb, sizeof(*o->tasks));
	o->chans = calloc(o->nchanb, sizeof(*o->chans));
	o->worktail = &o->work;
	if (o->tasks == NULL || o->chans == NULL) {
		order_free(o);
		return NULL;
	}
	return o;
}

static void
task_free(struct order_task *t)
{
	struct order_node *n, *next;

	for (n = t->head; n != NULL; n = next) {
		next = n->next;
		free(n);
	}
	free(t);
}

void
order_free(struct order *o)
{
	struct order_task *t, *tnext;
	struct order_chan *c, *cnext;
	size_t i;

	if (o == NULL)
		return;
	for (i = 0; o->tasks != NULL && i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = tnext) {
			tnext = t->hnext;
			task_free(t);
		}
	for (i = 0; o->chans != NULL && i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = cnext) {
			cnext = c->hnext;
			free(c->seqs);
			free(c);
		}
	free(o->tasks);
	free(o->chans);
	free(o);
}

/* Takes t off its parent's list of waiting children. */
static void
task_unwait(struct order *o, struct order_task *t)
{
	struct order_task *p, **pp;

	if (!t->waiting || (p = task_find(o, t->parent_tid)) == NULL)
		return;
	for (pp = &p->waiters; *pp != NULL; pp = &(*pp)->next_waiter)
		if (*pp == t) {
			*pp = t->next_waiter;
			break;
		}
	t->waiting = 0;
}

/* Forgets an ended incarnation of a reused tid, releasing what it held. */
static void
task_reset(struct order *o, struct order_task *t)
{
	task_unwait(o, t);
	while (t->head != NULL)
		if (task_step(o, t, 1) == -1)
			break;
	order_run(o);
	t->started = 0;
	t->ended = 0;
	t->next_seq = 1;
	t->released = 0;
	t->lost = 0;
}

int
order_task_new(struct order *o, int32_t tid, int32_t parent_tid,
    uint64_t spawn_seq, const char **why)
{
	struct order_task *t;

	if ((t = task_get(o, tid)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	if (t->registered && !t->ended) {
		*why = "task registered twice";
		return -1;
	}
	if (t->registered)
		task_reset(o, t);
	else {
		t->registered = 1;
		o->registered++;
	}
	t->parent_tid = parent_tid;
	t->spawn_seq = spawn_seq;
	return 0;
}

/* Copies a record (and its variable parts) into a new held node. */
static struct order_node *
node_new(const struct record *r, uint8_t flags, uint64_t last)
{
	struct order_node *n;
	int32_t *peers = NULL;
	size_t len = record_size(r);
	const char *why;
	unsigned i;

	if (r->npeers > 0) {
		if ((peers = calloc(r->npeers, sizeof(*peers))) == NULL)
			return NULL;
		for (i = 0; i < r->npeers; i++)
			peers[i] = record_peer(r, i);
	}
	if ((n = calloc(1, sizeof(*n) + len)) != NULL) {
		n->len = record_encode(n->bytes, r, peers);
		n->flags = flags;
		n->last = last;
		if (record_decode(n->bytes, n->len, &n->rec, &why) == -1) {
			free(n);
			n = NULL;
		}
	}
	free(peers);
	return n;
}

static void
node_append(struct order *o, struct order_task *t, struct order_node *n)
{
	*t->tailp = n;
	t->tailp = &n->next;
	t->held++;
	o->held++;
}

/* Holds a lost marker for count records from seq on. */
static int
add_lost(struct order *o, struct order_task *t, uint64_t seq,
    uint64_t count, uint64_t t_ns)
{
	struct order_node *n;
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_LOST;
	r.phase = PMON_BEGIN;
	r.seq = seq;
	r.t_ns = t_ns;
	r.peer = -1;
	r.tag = -1;
	r.inst = -1;
	r.bytes = count > INT32_MAX ? INT32_MAX : (int32_t)count;
	if ((n = node_new(&r, EVENT_LOST, seq + count - 1)) == NULL)
		return -1;
	node_append(o, t, n);
	t->lost += count;
	return 0;
}

int
order_add(struct order *o, int32_t tid, const struct record *r,
    const char **why)
{
	struct order_task *t = task_find(o, tid);
	struct order_node *n;

	if (t == NULL || !t->registered) {
		*why = "records for an unknown task";
		return -1;
	}
	if (t->ended) {
		*why = "records for a task that ended";
		return -1;
	}
	if (r->seq < t->next_seq || r->seq == UINT64_MAX) {
		*why = "record sequence number does not go forward";
		return -1;
	}
	if (r->seq > t->next_seq &&
	    add_lost(o, t, t->next_seq, r->seq - t->next_seq, r->t_ns) == -1)
		goto nomem;
	t->next_seq = r->seq + 1;
	if ((n = node_new(r, 0, r->seq)) == NULL)
		goto nomem;
	node_append(o, t, n);
	work_push(o, t);
	order_run(o);
	return 0;
nomem:
	*why = "out of memory";
	return -1;
}

int
order_task_end(struct order *o, int32_t tid, uint64_t dropped,
    const char **why)
{
	struct order_task *t = task_find(o, tid);

	if (t == NULL || !t->registered || t->ended) {
		*why = "end of an unknown task";
		return -1;
	}
	t->ended = 1;
	if (dropped > t->lost &&
	    add_lost(o, t, t->next_seq, dropped - t->lost, 0) == -1) {
		*why = "out of memory";
		return -1;
	}
	if (t->head == NULL)
		order_task_done(o, t);
	else
		work_push(o, t);
	order_run(o);
	return 0;
}

static struct order_task *
first_held(const struct order *o)
{
	struct order_task *t;
	size_t i;

	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext)
			if (t->head != NULL)
				return t;
	return NULL;
}

/*
 * Treats every task as finished: a wait on a task that holds nothing ends.
 * What still waits then waits in a cycle only inconsistent data can make;
 * break it one head at a time.
 */
void
order_release_all(struct order *o)
{
	struct order_task *t;
	size_t i;

	o->draining = 1;
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext)
			work_push(o, t);
	order_run(o);
	while ((t = first_held(o)) != NULL) {
		if (task_step(o, t, 1) == -1)
			break;	/* out of memory; order_free drops the rest */
		work_push(o, t);
		for (i = 0; i < o->ntaskb; i++) {
			struct order_task *u;

			for (u = o->tasks[i]; u != NULL; u = u->hnext)
				work_push(o, u);
		}
		order_run(o);
	}
}

/* After a run every task that holds an event waits for something. */
static size_t
count_blocked(const struct order *o)
{
	struct order_task *t;
	size_t i, n = 0;

	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext)
			if (t->head != NULL)
				n++;
	return n;
}

void
order_stats(const struct order *o, struct order_stats *st)
{
	st->tasks = o->registered;
	st->held = o->held;
	st->retained = o->retained;
	st->blocked = count_blocked(o);
}

int
order_task_stats(const struct order *o, int32_t tid, struct order_stats *st)
{
	const struct order_task *t = task_find(o, tid);
	struct order_chan *c;
	size_t i;

	if (t == NULL || !t->registered) {
		errno = ENOENT;
		return -1;
	}
	st->tasks = 1;
	st->held = t->held;
	st->retained = 0;
	for (i = 0; i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = c->hnext)
			if (c->src == tid)
				st->retained += c->count;
	st->blocked = t->head != NULL;
	return 0;
}
