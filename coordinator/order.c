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
 *    only), the channel (src, dst, tag, ctx) its receive reads from, the
 *    barrier episode it exits, the exits a notify reports, or the state of
 *    a group (task->wait says which);
 *  - a released send stays in the window as an entry in its channel's
 *    FIFO until the receive that is its successor consumes it.
 *
 * A release pushes the tasks it may unblock onto a worklist, so long
 * chains of dependencies never recurse.
 *
 * Groups add VISTOP's state conditions (paper 003, 3.3): a broadcast or a
 * gsize end is released only in a modelled state it could have happened
 * in, and a join or leave that would take the model away from a held one
 * waits for it.  With the group server's records, those calls go in the
 * order it took their requests instead (the chain, struct order_gsreq).  Those waits are rare, so their wake-ups are simple: any
 * change to a group wakes every task waiting on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "order.h"
#include "proto.h"
#include "record.h"
#include "xmalloc.h"

#define PVM_TASK_EXIT	1	/* pvm3.h PvmTaskExit, what pvm_notify asks */
#define PVM_NO_GROUP	(-19)	/* pvm3.h PvmNoGroup: no such group (empty) */
#define EPISODES_KEPT	8	/* closed barrier episodes remembered */

/* What kind of event a held node is, as far as ordering cares. */
enum node_kind {
	NODE_PLAIN,
	NODE_JOIN,		/* joingroup end that joined */
	NODE_LEAVE,		/* lvgroup end that left */
	NODE_BCAST,		/* bcast end: receivers must be the members */
	NODE_GSIZE,		/* gsize or freezegroup end: the size must be
				   size_target() */
	NODE_BARRIER_IN,	/* barrier begin */
	NODE_BARRIER_OUT,	/* barrier end */
	NODE_COLL_IN,		/* reduce, gather, scatter begin */
	NODE_COLL_OUT		/* their end */
};

/*
 * The group server requests whose calls change or report membership, in
 * one chain: those calls' ends are released in the order the server took
 * the requests.  Each such call sends exactly one request, of its kind,
 * and the server answers it at once.  (A freezegroup is answered when the
 * group reaches its size, as a barrier is when its count is reached: the
 * server's order does not place those.)
 */
enum gs_chain {
	GS_JOIN, GS_LEAVE, GS_BCAST, GS_GSIZE,
	GS_DEAD,		/* pvmd told the server a task exited; the
				   server dropped it from its groups */
	GS_CHAINS
};

/* What the head of a task waits for. */
enum task_wait {
	WAIT_NONE,
	WAIT_SPAWN,		/* its parent's spawn */
	WAIT_CHAN,		/* a message from wait_tid */
	WAIT_BARRIER,		/* its barrier episode to close */
	WAIT_STATE,		/* a group state that allows it */
	WAIT_CONFLICT,		/* a held broadcast it would make impossible */
	WAIT_SYNC,		/* a flush round */
	WAIT_OPEN,		/* another task's group call to end */
	WAIT_SERVER,		/* its turn in the group server's order */
	WAIT_PUT,		/* the pvm_putinfo its pvm_recvinfo read */
	WAIT_NOTIFY,		/* watched tasks to end */
	WAIT_SIGNAL		/* the pvm_sendsig (pvm_kill) of a signal */
};

struct order_task;
struct order_group;

/*
 * One held event: a copy of its decoded record, with its group name and
 * peer list (nearly always neither) in the node's own bytes.  The window
 * is often larger than the cache: release_head prefetches a node before
 * its task reaches it.
 */
struct order_node {
	struct order_node	*next;
	struct order_node	*gnext;		/* group's pending list */
	struct order_node	**gprevp;
	/* Group calls: begin and end on the reference timeline, and a bound
	   on their error (INT64_MAX: not known yet). */
	int64_t			 ref_begin, ref_end, ref_err;
	struct order_task	*task;
	struct order_group	*group;		/* kinds other than PLAIN */
	struct record		 rec;		/* group, peers: in bytes */
	uint64_t		 added;		/* arrival number */
	uint64_t		 round;		/* rounds completed at arrival */
	uint64_t		 prev_t;	/* raw time of the record before:
						   the begin of an end */
	uint64_t		 last;		/* last seq this event accounts for */
	uint64_t		 gs_k;		/* the k-th request of its kind the
						   task sent pvmgs; 0: none */
	uint8_t			 gs_chain;	/* the kind: enum gs_chain */
	uint8_t			 flags;		/* EVENT_LOST for a marker */
	uint8_t			 kind;		/* enum node_kind */
	uint8_t			 gs_fallback;	/* its request will not be seen:
						   order it by the heuristics */
	size_t			 extra;		/* bytes of group and peers */
	uint8_t			 bytes[];
};

/* A list of tasks waiting for something to change. */
struct order_tasks {
	struct order_task	**v;
	size_t			 n, cap;
};

/*
 * A released pvm_spawn begin, for the clock of the children: kept until
 * every child its end names has started.
 */
struct order_spawn {
	uint64_t		 seq, raw, corr;
	uint32_t		 children;	/* its end's tids; UINT32_MAX:
						   the end is not out yet */
	uint32_t		 started;	/* children started (or ended) */
};

/*
 * A pvm_sendsig or pvm_kill of a task, for the signal it will deliver
 * (step_signal): noted at arrival, its time kept at release.
 */
#define ORDER_SIGS_MAX	16	/* per victim; beyond, the oldest goes */
struct order_sig {
	int32_t			 from;
	int32_t			 signo;
	uint64_t		 seq;
	int			 released;
	struct clock_pred	 pred;	/* once released */
};

/* A pvm_notify(PvmTaskExit) a task made. */
struct order_notify {
	int32_t			 tag;
	uint32_t		 received;
	int32_t			*tids;
	size_t			 ntids;
};

struct order_task {
	int32_t			 tid;
	uint32_t		 host;
	int32_t			 parent_tid;
	uint64_t		 spawn_seq;
	int			 registered;
	int			 ended;
	int			 done;		/* ended, all released */
	uint64_t		 done_at;	/* then: order_task_done's count */
	int			 started;	/* an event was released */
	int			 queued;	/* on the worklist */
	int			 waiting;	/* on its parent's waiters */
	uint8_t			 wait;		/* enum task_wait */
	int32_t			 wait_tid;	/* WAIT_CHAN: the sender */
	struct order_group	*wgroup;	/* WAIT_BARRIER/STATE/CONFLICT */
	struct order_tasks	*waitq;		/* the list it is on */
	uint64_t		 visit;		/* depends_on() epoch */
	uint64_t		 next_seq;	/* next seq expected */
	uint64_t		 released;	/* last seq released */
	uint64_t		 lost;		/* records reported lost */
	uint64_t		 again_upto;	/* resumed: a coordinator before
						   may have released its
						   records up to this seq */
	/*
	 * The first seq that may be missing (UINT64_MAX: none): its sends
	 * and receives from there on cannot be counted on their channels
	 * (doc/ordering.md, "Losses").  uncounted: every record before it
	 * was released, task_uncounted ran.
	 */
	uint64_t		 lost_from;
	uint64_t		 uncount_at;	/* lost_from - 1 until uncounted */
	uint64_t		 watch_at;	/* the least of uncount_at, and 0
						   while waiters_on or
						   spawn_pending: a release at
						   or past it looks (task_watch) */
	int			 spawn_pending;	/* its parent's spawn begin is
						   kept for its first event */
	int			 uncounted;
	int			 absent;	/* unregistered when a round looked
						   for a message it sent */
	int			 unmonitored;	/* pvmd lists it, pmon does not
						   instrument it: absent */
	uint32_t		 waiters_on;	/* receives waiting for its
						   progress: the end of a send,
						   its records up to a time */
	uint64_t		 last_raw;	/* raw time of the last added */
	struct clock_local	 clock;
	struct order_node	*head;
	struct order_node	**tailp;
	size_t			 held;
	struct order_spawn	*spawns;
	size_t			 nspawns, spawncap;
	struct order_notify	*notifies;
	size_t			 nnotifies;
	struct order_sig	*sigs;		/* signals sent to it */
	size_t			 nsigs;
	struct order_group	*bar_group;	/* the barrier it last entered */
	int32_t			 bar_count;
	uint64_t		 bar_episode;
	struct order_tcoll	*tcoll;
	size_t			 ntcoll;
	struct order_group	*open_group;	/* a group call begun, not ended */
	uint64_t		 open_t;	/* its begin's raw time */
	uint64_t		 open_seq;	/* its begin's seq */
	uint8_t			 open_call;	/* and call */
	struct order_group	*coll_group;	/* the collective it is in */
	uint64_t		 coll_k;
	int			 coll_kind;
	int			 coll_root;
	/*
	 * Requests to the group server, counted per kind: the k-th join
	 * the server took from a task is the end of the task's k-th
	 * joingroup flagged RECORD_GS.
	 */
	int			 server;	/* this task is pvmgs */
	int			 exiting;	/* its pvm_exit began */
	uint64_t		 gs_sent[GS_CHAINS];	/* flagged ends added */
	uint64_t		 gs_released[GS_CHAINS]; /* the last released */
	uint64_t		 gs_served[GS_CHAINS];	/* server records */
	uint64_t		 gs_passed[GS_CHAINS];	/* the last the server's
							   order went past */
	/*
	 * The channels of its last point-to-point send and last receive: a
	 * task mostly talks to the same peer, and this saves the hash
	 * lookup.  chan_del clears them.
	 */
	struct order_chan	*out_chan;
	struct order_chan	*in_chan;
	struct order_chan	*outs;		/* every channel from it */
	struct order_chan	*ins;		/* every channel to it */
	struct order_task	*waiters;	/* children awaiting a spawn */
	struct order_task	*next_waiter;
	struct order_task	*hnext;
	struct order_task	*wnext;
};

/* A released send not yet received. */
struct order_sent {
	uint64_t		 seq, raw, corr;
	uint32_t		 host;
	uint8_t			 end;		/* SENT_* */
	uint8_t			 uncounted;	/* after its sender's lost_from:
						   only its id can match it */
};

/* Whether a send's message was delivered: its end record (seq + 1) says. */
#define SENT_DELIVERED	0	/* yes, or a bcast: the end is the send */
#define SENT_END	1	/* the end is to come */
#define SENT_UNKNOWN	2	/* its task is gone and the end was lost */

/*
 * Released sends not yet received, per (src, dst, tag, ctx), in the
 * order they were sent.  A receive that carries its message's id takes
 * the send with that number (step_recv_id); one without takes the front
 * send if its index on the channel is known (not uncounted) and its own
 * is too.  debt counts receives without an id released before their send
 * came (doc/ordering.md, "Losses"): that many counted sends still to come
 * are theirs.
 */
struct order_chan {
	int32_t			 src, dst, tag, ctx;
	struct order_sent	*sent;		/* a ring */
	size_t			 first, count, cap;
	uint64_t		 debt;
	uint64_t		 paid;		/* seq + 1 of the last send a debt
						   took; 0: none */
	struct order_task	*stask;		/* the sender */
	struct order_task	*waiter;	/* dst, blocked on this */
	struct order_chan	*hnext;
	struct order_chan	*snext, **sprevp;	/* stask->outs */
	struct order_chan	*dnext, **dprevp;	/* the receiver's ins */
};

/*
 * One instance of a reduce, gather or scatter on a group: the k-th call of
 * each member is instance k (SPMD programs call them together).
 */
struct order_coll {
	uint32_t		 arrivals;	/* begins released */
	uint32_t		 left;		/* of those, ends released */
	int			 root_in;	/* the root's begin among them */
	uint64_t		 corr;		/* latest begin's corrected time */
	uint64_t		 root_corr;
};

#define COLL_KINDS	3	/* reduce, gather, scatter */

/* How far a task got in the collectives of one group. */
struct order_tcoll {
	struct order_group	*group;
	uint64_t		 next[COLL_KINDS];
};

/* Entries and exits of the barriers with one count on a group. */
struct order_counted {
	int32_t			 count;
	uint64_t		 entries;
	uint64_t		 corr[EPISODES_KEPT];	/* latest entry of a batch */
};

/*
 * A request the group server took.  Those that change or read membership
 * (joins, leaves, broadcasts and gsize) make a chain: their
 * calls' ends are released in the order the server took them.
 */
struct order_gsreq {
	struct order_task	*client;
	uint64_t		 k;		/* the client's k-th of its kind */
	uint64_t		 round;		/* rounds completed at arrival */
	uint8_t			 chain;		/* enum gs_chain */
	uint8_t			 skipped;	/* given up waiting for its call */
};

/* A group as the modelled state knows it. */
struct order_group {
	struct order_group	*next;
	uint8_t			 len;
	char			 name[RECORD_GROUP_MAX];
	int32_t			*members;
	int32_t			*insts;		/* each member's instance */
	size_t			 nmembers, cap;
	/*
	 * Collective instances from cbase on (cn of them, room for ncoll):
	 * an instance every member entered and left is forgotten.
	 */
	struct order_coll	*coll[COLL_KINDS];
	size_t			 ncoll[COLL_KINDS], cn[COLL_KINDS];
	uint64_t		 cbase[COLL_KINDS];
	/*
	 * A member's records were lost: its barrier entries and collective
	 * calls cannot be counted any more.  Episodes before lossy_episode
	 * closed before.
	 */
	int			 lossy;
	uint64_t		 lossy_episode;
	size_t			 held_changes;	/* held joins and leaves */
	size_t			 held_joins;
	struct order_node	*pending;	/* held bcast and gsize ends */
	int32_t			*departed;	/* ended while members */
	size_t			 ndeparted;
	struct order_tasks	 waiters;
	/* Barriers: entries are counted into the open episode. */
	uint64_t		 episode;	/* the open one; all before closed */
	uint32_t		 arrivals;
	uint64_t		 ep_corr;	/* latest entry's corrected time */
	uint64_t		 closed_corr[EPISODES_KEPT];
	/*
	 * Barriers with a count c release in batches of c entries, in the
	 * order pvmgs saw them; pmon batches them in the order it releases
	 * them, which is the same when every participant takes part in
	 * every batch (a task enters the next one only after it left this
	 * one).  An exit needs every entry of its batch.
	 */
	struct order_counted	*counted;
	size_t			 ncounted;
};

struct order {
	order_release_cb	 cb;
	void			*arg;
	order_done_cb		 done_cb;
	void			*done_arg;
	struct clock		*clock;
	struct order_task	**tasks;
	size_t			 ntaskb;	/* buckets, a power of 2 */
	size_t			 ntasks;
	struct order_chan	**chans;
	size_t			 nchanb;
	size_t			 nchans;
	struct order_group	*groups;
	struct order_task	*work, **worktail;
	struct order_tasks	 syncw;		/* WAIT_SYNC */
	struct order_tasks	 notifyw;	/* WAIT_NOTIFY */
	struct order_tasks	 putw;		/* WAIT_PUT */
	struct order_tasks	 sigw;		/* WAIT_SIGNAL */
	uint64_t		 ndone;		/* tasks done so far */
	struct order_task	*server;	/* pvmgs, when it is seen */
	int			 gs_absent;	/* requests went unseen with no
						   server: do not wait for it */
	struct order_gsreq	*gs;		/* requests not yet passed */
	size_t			 gs_front, ngs, gscap;
	size_t			 nserverw;	/* tasks in WAIT_SERVER */
	size_t			 registered;
	size_t			 held;
	size_t			 retained;
	uint64_t		 nadded;
	uint64_t		 nreleased;
	uint64_t		 ninconsistent;
	uint64_t		 nmatched, nunmatched;
	uint64_t		 synced;	/* events added before it are safe */
	uint64_t		 rounds;	/* flush rounds completed */
	uint64_t		 prev_synced;
	uint64_t		 released_at_sync;
	uint64_t		 visit;
	uint64_t		 changes;	/* adds and ends */
	uint64_t		 changes_at_sync;
	size_t			 nconflicts;	/* tasks in WAIT_CONFLICT */
	int			 progress;	/* released since conflicts were
						   last looked at */
	int			 draining;	/* order_release_all runs */
	struct order_task	*add_task;	/* order_add's last task */
	struct order_node	*spare;		/* freed small nodes */
	size_t			 nspare;
};

#define ORDER_MIN_BUCKETS	64

/*
 * Every held event is a node, allocated as it arrives and freed as it is
 * released: most records are a bare header, so nodes with room for
 * NODE_SMALL bytes of group name and peers are kept on a free list (up to NODE_SPARE_MAX
 * of them) instead of going back to malloc.  A spare node is a plain
 * malloc'd block, which free() can always take.  The list stays short:
 * nodes reused from it lie scattered in memory, which slowed the walks
 * of long pending group lists by 8% when it could hold 65536.
 */
#define NODE_SMALL	128
#define NODE_SPARE_MAX	8192

static void	order_run(struct order *);
static void	order_task_done(struct order *, struct order_task *);
static void	sig_released(struct order *, struct order_task *,
		    const struct record *, uint64_t);
static void	server_gone(struct order *);

/* --- small lists ------------------------------------------------------ */

static void
set_wait(struct order *o, struct order_task *t, uint8_t what)
{
	if (t->wait == WAIT_CONFLICT)
		o->nconflicts--;
	if (what == WAIT_CONFLICT)
		o->nconflicts++;
	if (t->wait == WAIT_SERVER)
		o->nserverw--;
	if (what == WAIT_SERVER)
		o->nserverw++;
	t->wait = what;
}

static int
tasks_add(struct order_tasks *l, struct order_task *t)
{
	struct order_task **nv;
	size_t ncap;

	if (t->waitq == l)
		return 0;
	if (l->n == l->cap) {
		ncap = l->cap ? l->cap * 2 : 8;
		nv = xreallocarray(l->v, ncap, sizeof(*nv));
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n++] = t;
	t->waitq = l;
	return 0;
}

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
task_bucket(size_t nb, int32_t tid)
{
	return order_hash((uint32_t)tid, 0, 0, 0) & (nb - 1);
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

	for (t = o->tasks[task_bucket(o->ntaskb, tid)]; t != NULL;
	    t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

/* Doubles the task table when it is full. */
static void
task_grow(struct order *o)
{
	struct order_task **nt, *t, *next;
	size_t i, b, nb = o->ntaskb * 2;

	if (o->ntasks < o->ntaskb)
		return;
	nt = xcalloc(nb, sizeof(*nt));
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = next) {
			next = t->hnext;
			b = task_bucket(nb, t->tid);
			t->hnext = nt[b];
			nt[b] = t;
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
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->next_seq = 1;
	t->lost_from = t->uncount_at = t->watch_at = UINT64_MAX;
	t->tailp = &t->head;
	task_grow(o);
	b = task_bucket(o->ntaskb, tid);
	t->hnext = o->tasks[b];
	o->tasks[b] = t;
	o->ntasks++;
	return t;
}

static int
chan_is(const struct order_chan *c, int32_t src, int32_t dst, int32_t tag,
    int32_t ctx)
{
	return c != NULL && c->src == src && c->dst == dst && c->tag == tag &&
	    c->ctx == ctx;
}

static struct order_chan *
chan_find(const struct order *o, int32_t src, int32_t dst, int32_t tag,
    int32_t ctx)
{
	struct order_chan *c;

	c = o->chans[chan_bucket(o->nchanb, src, dst, tag, ctx)];
	for (; c != NULL; c = c->hnext)
		if (chan_is(c, src, dst, tag, ctx))
			return c;
	return NULL;
}

static void	chan_del(struct order *, struct order_chan *);

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
			if (c->count == 0 && c->debt == 0 && c->waiter == NULL &&
			    (c->paid == 0 || c->stask->released >= c->paid))
				chan_del(o, c);
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

static struct order_task *task_get(struct order *, int32_t);

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

static struct order_chan *
chan_get(struct order *o, int32_t src, int32_t dst, int32_t tag,
    int32_t ctx)
{
	struct order_chan *c;
	struct order_task *s, *d;
	size_t b;

	if ((c = chan_find(o, src, dst, tag, ctx)) != NULL)
		return c;
	if ((s = task_get(o, src)) == NULL || (d = task_get(o, dst)) == NULL)
		return NULL;
	c = xcalloc(1, sizeof(*c));
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
static void
chan_del(struct order *o, struct order_chan *c)
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
	pp = &o->chans[chan_bucket(o->nchanb, c->src, c->dst, c->tag, c->ctx)];
	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	o->nchans--;
	o->retained -= c->count;
	free(c->sent);
	free(c);
}

static int
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
	return 0;
}

static struct order_sent
chan_pop(struct order_chan *c)
{
	struct order_sent s = c->sent[c->first];

	c->first = (c->first + 1) % c->cap;
	c->count--;
	return s;
}

/* --- groups ----------------------------------------------------------- */

static struct order_group *
group_get(struct order *o, const char *name, uint8_t len)
{
	struct order_group *g;

	for (g = o->groups; g != NULL; g = g->next)
		if (g->len == len && memcmp(g->name, name, len) == 0)
			return g;
	g = xcalloc(1, sizeof(*g));
	g->len = len;
	memcpy(g->name, name, len);
	g->next = o->groups;
	o->groups = g;
	return g;
}

static int
group_has(const struct order_group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i] == tid)
			return 1;
	return 0;
}

/* Wakes every task waiting on the group: something in it changed. */
static void	work_push(struct order *, struct order_task *);

static void
wake_list(struct order *o, struct order_tasks *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		l->v[i]->waitq = NULL;
		work_push(o, l->v[i]);
	}
	l->n = 0;
}

static void
group_join(struct order *o, struct order_group *g, int32_t tid, int32_t inst)
{
	size_t ncap;

	if (group_has(g, tid))
		return;
	if (g->nmembers == g->cap) {
		ncap = g->cap ? g->cap * 2 : 8;
		g->members = xreallocarray(g->members, ncap,
		    sizeof(*g->members));
		g->insts = xreallocarray(g->insts, ncap, sizeof(*g->insts));
		g->cap = ncap;
	}
	g->insts[g->nmembers] = inst;
	g->members[g->nmembers++] = tid;
	wake_list(o, &g->waiters);
}

/* pvmgs gives a joining task the lowest instance number not in use. */
static int32_t
group_lowest_free(const struct order_group *g)
{
	int32_t k;
	size_t i;

	for (k = 0;; k++) {
		for (i = 0; i < g->nmembers; i++)
			if (g->insts[i] == k)
				break;
		if (i == g->nmembers)
			return k;
	}
}

/* The member with instance number inst, or 0. */
static int32_t
group_member_of(const struct order_group *g, int32_t inst)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->insts[i] == inst)
			return g->members[i];
	return 0;
}

/* The instance number of a member, or -1. */
static int32_t
group_inst(const struct order_group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i] == tid)
			return g->insts[i];
	return -1;
}

static void
group_leave(struct order *o, struct order_group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i] == tid) {
			g->members[i] = g->members[--g->nmembers];
			g->insts[i] = g->insts[g->nmembers];
			wake_list(o, &g->waiters);
			return;
		}
}

static void
group_pending_del(struct order_group *g, struct order_node *n)
{
	(void)g;
	if (n->gprevp == NULL)
		return;
	if ((*n->gprevp = n->gnext) != NULL)
		n->gnext->gprevp = n->gprevp;
	n->gprevp = NULL;
}

/* The group size a held gsize returned, or a freezegroup waited for. */
static size_t
size_target(const struct order_node *n)
{
	if (n->rec.call == PMON_CALL_gsize)
		return n->rec.rc < 0 ? 0 : (size_t)n->rec.rc;
	return (size_t)n->rec.inst;
}

/* Does the broadcast n list tid among its receivers? */
static int
bcast_lists(const struct order_node *n, int32_t tid)
{
	unsigned i;

	for (i = 0; i < n->rec.npeers; i++)
		if (record_peer(&n->rec, i) == tid)
			return 1;
	return 0;
}

/*
 * Did tid end while a member of g?  pvmgs learns of exits late, so a
 * broadcast may still reach such a task.
 */
static int
departed(const struct order_group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->ndeparted; i++)
		if (g->departed[i] == tid)
			return 1;
	return 0;
}

/*
 * Is the held broadcast, gsize or join n possible in the modelled state?
 * A broadcast reaches every member but its sender; a receiver that ended
 * as a member (pvmgs learns of exits late) is not held against it.
 */
static int
state_allows(const struct order_node *n)
{
	const struct order_group *g = n->group;
	int32_t self = n->task->tid, p;
	size_t i;
	if (n->kind == NODE_JOIN)
		return group_lowest_free(g) == n->rec.rc;
	if (n->kind == NODE_GSIZE)
		return g->nmembers == size_target(n);
	for (i = 0; i < g->nmembers; i++)
		if (g->members[i] != self && !bcast_lists(n, g->members[i]))
			return 0;
	for (i = 0; i < n->rec.npeers; i++) {
		p = record_peer(&n->rec, (unsigned)i);
		if (p != self && !group_has(g, p) && !departed(g, p))
			return 0;
	}
	return 1;
}

/* Would the join or leave x take the model further from what e saw? */
static int
moves_away(const struct order_node *x, const struct order_node *e)
{
	const struct order_group *g = e->group;
	int32_t tid = x->task->tid, inst;
	int join = x->kind == NODE_JOIN;

	/* A held join needs every lower instance taken. */
	if (e->kind == NODE_JOIN) {
		inst = group_inst(g, tid);
		return !join && inst >= 0 && inst < e->rec.rc;
	}
	if (e->kind == NODE_GSIZE)
		return join ? g->nmembers >= size_target(e) :
		    g->nmembers <= size_target(e);
	if (tid == e->task->tid)
		return 0;
	return join ? !bcast_lists(e, tid) : bcast_lists(e, tid);
}

static struct order_chan *chan_find(const struct order *, int32_t, int32_t,
		    int32_t, int32_t);

/*
 * Does a later held event of x's task undo it (a leave after a join),
 * with nothing in between that could wait for other tasks?  Receives of
 * messages already sent do not wait.
 */
static int
undone_later(const struct order *o, const struct order_node *x)
{
	const struct order_node *n;
	const struct order_chan *c;
	struct { const struct order_chan *c; size_t used; } seen[8];
	uint8_t undo = x->kind == NODE_JOIN ? NODE_LEAVE : NODE_JOIN;
	size_t nseen = 0, i;

	for (n = x->next; n != NULL; n = n->next) {
		if (n->kind == undo && n->group == x->group)
			return 1;
		if (n->kind != NODE_PLAIN)
			return 0;
		if (n->rec.call == PMON_CALL_probe && n->rec.phase == PMON_END &&
		    (n->rec.flags & RECORD_MSG))
			return 0;
		if (!record_is_recv(&n->rec))
			continue;
		if (n->rec.peer & ORDER_TID_DAEMON)
			return 0;
		c = chan_find(o, n->rec.peer, x->task->tid, n->rec.tag,
		    n->rec.ctx);
		if (c == NULL)
			return 0;
		for (i = 0; i < nseen && seen[i].c != c; i++)
			;
		if (i == nseen) {
			if (nseen == 8)
				return 0;
			seen[nseen].c = c;
			seen[nseen++].used = 0;
		}
		if (++seen[i].used > c->count)
			return 0;
	}
	return 0;
}

/*
 * Can the head of task s only go after more events of x's task?  Follows
 * what the heads wait for; a wait on a task with nothing held is a dead
 * end (its future is unknown).  A head waiting for the state of x's group
 * that x itself brings closer waits for x.  The search is bounded by the
 * tasks.
 */
static int
depends_on(struct order *o, struct order_task *s, const struct order_node *x)
{
	struct order_task *t = x->task;
	struct order_task **stack, *u, *v;
	size_t n = 0, cap = o->ntasks + 1, i;
	int found = 0;

	if (s == t)
		return 1;
	stack = xcalloc(cap, sizeof(*stack));
	o->visit++;
	stack[n++] = s;
	s->visit = o->visit;
	while (n > 0 && !found) {
		u = stack[--n];
		if (u == t) {
			found = 1;
			break;
		}
		if (u->wait == WAIT_STATE && u->wgroup == x->group &&
		    (u->head->kind == NODE_JOIN || !moves_away(x, u->head))) {
			found = 1;
			break;
		}
		v = NULL;
		if (u->wait == WAIT_CHAN)
			v = task_find(o, u->wait_tid);
		else if (u->wait == WAIT_SPAWN)
			v = task_find(o, u->parent_tid);
		if (v != NULL && v->visit != o->visit && n < cap) {
			v->visit = o->visit;
			stack[n++] = v;
		}
		/* A broadcast waits for the receivers that are no members. */
		if (u->wait == WAIT_STATE && u->head->kind == NODE_BCAST)
			for (i = 0; i < u->head->rec.npeers; i++) {
				v = task_find(o, record_peer(&u->head->rec,
				    (unsigned)i));
				if (v != NULL && v->visit != o->visit &&
				    n < cap && !group_has(u->wgroup, v->tid)) {
					v->visit = o->visit;
					stack[n++] = v;
				}
			}
		if (u->wait != WAIT_BARRIER)
			continue;
		for (i = 0; i < u->wgroup->nmembers; i++) {
			v = task_find(o, u->wgroup->members[i]);
			if (v != NULL && v->visit != o->visit && n < cap) {
				v->visit = o->visit;
				stack[n++] = v;
			}
		}
	}
	free(stack);
	return found;
}

static int	patient(const struct order *, const struct order_node *, uint64_t);

/*
 * Puts a group call on the reference timeline, once the clock can bound
 * its host's error (the estimates of that moment are kept).
 */
static int
ref_times(const struct order *o, struct order_node *n)
{
	uint32_t h = n->task->host;

	if (n->ref_err != INT64_MAX)
		return 0;
	if (o->clock == NULL ||
	    (n->ref_err = clock_error(o->clock, h)) == INT64_MAX)
		return -1;
	n->ref_begin = (int64_t)n->prev_t + clock_offset(o->clock, h,
	    n->prev_t);
	n->ref_end = (int64_t)n->rec.t_ns + clock_offset(o->clock, h,
	    n->rec.t_ns);
	return 0;
}

/*
 * Is n on the reference timeline?  The group calls held in a window are
 * compared pairwise, over and over: the check that it already is must
 * cost no call.
 */
static inline int
ref_known(const struct order *o, struct order_node *n)
{
	return n->ref_err != INT64_MAX || ref_times(o, n) == 0;
}

/*
 * Did a end before b began, on the reference timeline, whatever the
 * error of the hosts' clock estimates?
 */
static int
ended_before(const struct order *o, struct order_node *a,
    struct order_node *b)
{
	if (a->task->host == b->task->host)
		return a->rec.t_ns < b->prev_t;
	if (!ref_known(o, a) || !ref_known(o, b))
		return 0;
	return a->ref_end + a->ref_err + b->ref_err < b->ref_begin;
}

/* Did a call begin at raw time t on host h surely after x ended? */
static int
began_after(const struct order *o, uint32_t h, uint64_t t,
    struct order_node *x)
{
	int64_t eh;

	if (!ref_known(o, x) ||
	    (eh = clock_error(o->clock, h)) == INT64_MAX)
		return 0;
	return x->ref_end + x->ref_err + eh <
	    (int64_t)t + clock_offset(o->clock, h, t);
}

/*
 * The order of two group calls from the times of their begins and ends:
 * -1 when a ended before b began, 1 when b ended before a began, 0 when
 * they overlap or the clocks cannot tell.
 */
static int
call_order(const struct order *o, struct order_node *a,
    struct order_node *b)
{
	if (ended_before(o, a, b))
		return -1;
	if (ended_before(o, b, a))
		return 1;
	return 0;
}

/*
 * The held broadcast or gsize that the join or leave x must wait for, if
 * any: one x would make impossible, that no later event of x's task
 * repairs, and that does not itself wait for x's task.
 */
static struct order_node *
conflict_of(struct order *o, struct order_node *x)
{
	struct order_node *e;
	int same;

	for (e = x->group->pending; e != NULL; e = e->gnext) {
		if (e->task == x->task)
			continue;
		/* Two joins that got the same instance: one came after. */
		same = x->kind == NODE_JOIN && e->kind == NODE_JOIN &&
		    e->rec.rc == x->rec.rc;
		/*
		 * pvmgs served each call between its begin and its end: when
		 * the two calls do not overlap in time, that is their order.
		 */
		switch (call_order(o, x, e)) {
		case -1:
			continue;	/* x came first */
		case 1:
			if (same || moves_away(x, e))
				return e;
			continue;
		default:
			break;
		}
		/* Of two joins, unless x surely came first, e held it first. */
		if (same) {
			if (!ended_before(o, x, e) && !depends_on(o, e->task, x))
				return e;
			continue;
		}
		if (!moves_away(x, e))
			continue;
		/* Favour the event that is possible now. */
		if (e == e->task->head && state_allows(e))
			return e;
		/* A join taken back takes the lowest free instance again. */
		if ((e->kind != NODE_JOIN && undone_later(o, x)) ||
		    depends_on(o, e->task, x))
			continue;
		return e;
	}
	return NULL;
}

/* --- the group server's order ----------------------------------------- */

/* The chain of a server request, or -1. */
static int
gs_chain_of_tag(int32_t tag)
{
	switch (tag) {
	case PMON_GS_JOIN:		return GS_JOIN;
	case PMON_GS_LEAVE:		return GS_LEAVE;
	case PMON_GS_BCAST:		return GS_BCAST;
	case PMON_GS_GSIZE:		return GS_GSIZE;
	case PMON_GS_DEADTID:		return GS_DEAD;
	default:			return -1;
	}
}

/* The chain of a group call's request, or -1. */
static int
gs_chain_of_call(uint8_t call)
{
	switch (call) {
	case PMON_CALL_joingroup:	return GS_JOIN;
	case PMON_CALL_lvgroup:		return GS_LEAVE;
	case PMON_CALL_bcast:		return GS_BCAST;
	case PMON_CALL_gsize:		return GS_GSIZE;
	default:			return -1;
	}
}

/*
 * Does the chain have nothing more to wait for from q?  A call's request
 * waits for the call's end; a task's death for its pvm_exit, or its end.
 */
static int
gs_done(const struct order_gsreq *q)
{
	const struct order_task *c = q->client;

	if (q->skipped)
		return 1;
	if (q->chain == GS_DEAD)
		return c->exiting || c->done;
	return c->gs_released[q->chain] >= q->k ||
	    (c->done && c->gs_sent[q->chain] < q->k);
}

/*
 * Is q's client inside the call q took the request of, with nothing
 * after its begin yet?  The server answered at once, so the end will
 * come unless the task dies; a stop or a starved CPU only makes it late.
 */
static int
gs_in_call(const struct order_gsreq *q)
{
	const struct order_task *c = q->client;

	return q->chain != GS_DEAD && c->open_group != NULL && !c->ended &&
	    c->next_seq == c->open_seq + 1 &&
	    gs_chain_of_call(c->open_call) == q->chain &&
	    c->gs_sent[q->chain] + 1 == q->k;
}

/* Has what q waits for not even arrived (an unmonitored task)? */
static int
gs_missing(const struct order_gsreq *q)
{
	if (q->chain == GS_DEAD)
		return !q->client->registered;
	return q->client->gs_sent[q->chain] < q->k;
}

static void	groups_depart(struct order *, struct order_task *);

static void
gs_wake(struct order *o, struct order_task *t)
{
	if (t->wait == WAIT_SERVER)
		work_push(o, t);
}

/* Moves the front of the chain past what is done; wakes the next call. */
static void
gs_advance(struct order *o)
{
	struct order_gsreq *q;

	while (o->gs_front < o->ngs) {
		q = &o->gs[o->gs_front];
		if (!gs_done(q))
			break;
		if (q->chain == GS_DEAD)
			groups_depart(o, q->client);
		else if (q->client->gs_passed[q->chain] < q->k) {
			q->client->gs_passed[q->chain] = q->k;
			gs_wake(o, q->client);
		}
		o->gs_front++;
	}
	if (o->gs_front == o->ngs)
		o->gs_front = o->ngs = 0;
	else
		gs_wake(o, o->gs[o->gs_front].client);
}

/* A record of the group server: the request it took. */
static int
gs_add(struct order *o, const struct record *r)
{
	struct order_gsreq *q, *nv;
	struct order_task *c;
	size_t ncap;
	int chain;

	if (!(r->flags & RECORD_GS) || r->phase != PMON_END || r->peer <= 0 ||
	    (chain = gs_chain_of_tag(r->tag)) == -1)
		return 0;
	if ((c = task_get(o, r->peer)) == NULL)
		return -1;
	if (o->gs_front > 0 && o->ngs == o->gscap) {
		memmove(o->gs, o->gs + o->gs_front,
		    (o->ngs - o->gs_front) * sizeof(*o->gs));
		o->ngs -= o->gs_front;
		o->gs_front = 0;
	}
	if (o->ngs == o->gscap) {
		ncap = o->gscap ? o->gscap * 2 : 64;
		nv = xreallocarray(o->gs, ncap, sizeof(*nv));
		o->gs = nv;
		o->gscap = ncap;
	}
	q = &o->gs[o->ngs++];
	q->client = c;
	q->chain = (uint8_t)chain;
	q->k = ++c->gs_served[chain];
	q->round = o->rounds;
	q->skipped = 0;
	gs_wake(o, c);
	gs_advance(o);
	return 0;
}

/*
 * Is the join, leave, broadcast or gsize n ordered by the server's
 * records?  It is when its request was seen, or may still be.
 */
static int
gs_expected(const struct order *o, struct order_node *n)
{
	const struct order_task *t = n->task;

	if (n->gs_k == 0 || n->gs_fallback)
		return 0;
	if (t->gs_served[n->gs_chain] >= n->gs_k ||
	    t->gs_passed[n->gs_chain] >= n->gs_k)
		return 1;
	if (o->gs_absent || o->draining ||
	    (o->server != NULL && o->server->ended)) {
		n->gs_fallback = 1;
		return 0;
	}
	return 1;
}

/*
 * Has member tid of g begun to exit?  pvmgs drops it once pvmd tells it
 * (a DEADTID notify), at a moment no record shows: until an event pins
 * it, it may be in the group or not.
 */
static int
exiting(const struct order *o, int32_t tid)
{
	const struct order_task *t = task_find(o, tid);

	return t != NULL && t->exiting;
}

/* The server dropped an exiting member: the model follows. */
static void
drop_exiting(struct order *o, struct order_group *g, int32_t tid)
{
	g->departed = xreallocarray(g->departed, g->ndeparted + 1,
	    sizeof(*g->departed));
	g->departed[g->ndeparted++] = tid;
	group_leave(o, g, tid);
}

/*
 * Does the release of n in the server's order fit the model, given that
 * exiting members may be gone?  Those n shows gone are dropped.
 */
static int
served_fits(struct order *o, struct order_node *n)
{
	struct order_group *g = n->group;
	int32_t self = n->task->tid, drop[64];
	size_t i, ndrop = 0, alive = 0, target;
	int32_t k, m;

	switch (n->kind) {
	case NODE_LEAVE:
		return group_has(g, self);
	case NODE_GSIZE:
		for (i = 0; i < g->nmembers; i++)
			alive += !exiting(o, g->members[i]);
		target = size_target(n);
		if (target < alive || target > g->nmembers)
			return 0;
		for (i = 0; target == alive && i < g->nmembers; i++)
			if (exiting(o, g->members[i]) && ndrop < 64)
				drop[ndrop++] = g->members[i];
		break;
	case NODE_JOIN:
		/* Every lower instance taken, its own free or going. */
		for (k = 0; k < n->rec.rc; k++)
			if (group_member_of(g, k) == 0)
				return 0;
		if ((m = group_member_of(g, n->rec.rc)) != 0) {
			if (!exiting(o, m))
				return 0;
			drop[ndrop++] = m;
		}
		break;
	case NODE_BCAST:
		for (i = 0; i < g->nmembers; i++) {
			m = g->members[i];
			if (m == self || bcast_lists(n, m))
				continue;
			if (!exiting(o, m) || ndrop == 64)
				return 0;
			drop[ndrop++] = m;
		}
		for (i = 0; i < n->rec.npeers; i++) {
			m = record_peer(&n->rec, (unsigned)i);
			if (m != self && !group_has(g, m) && !departed(g, m))
				return 0;
		}
		break;
	default:
		return state_allows(n);
	}
	for (i = 0; i < ndrop; i++)
		drop_exiting(o, g, drop[i]);
	return 1;
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
 * is delivered.  They go to buf if it has room for nbuf, else to a new
 * array the caller frees.  Returns the count, or -1 when out of memory.
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
static inline int
chan_feed(struct order *o, struct order_chan *c, const struct order_sent *s)
{
	if (c->debt > 0 && !s->uncounted) {
		c->debt--;
		c->paid = s->seq + 1;
		return 0;
	}
	if (chan_push(c, s) == -1)
		return -1;
	o->retained++;
	wake_receiver(o, c);
	return 0;
}

/*
 * Puts a released send into the FIFO of each of its channels; uncounted
 * if a record of its task before it may be missing, so that only a
 * receive that names it by its id takes it.
 */
static int
push_sends(struct order *o, struct order_task *t, const struct record *r,
    uint64_t corr)
{
	struct order_sent s = { r->seq, r->t_ns, corr, t->host,
	    r->call == PMON_CALL_bcast ? SENT_DELIVERED : SENT_END,
	    r->seq >= t->lost_from };
	struct order_chan *c;
	int32_t buf[64], *dst;
	int i, n, rv = 0;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend) {
		if (task_gone(o, r->peer))
			return 0;
		c = t->out_chan;
		if (!chan_is(c, t->tid, r->peer, r->tag, r->ctx) &&
		    (c = t->out_chan = chan_get(o, t->tid, r->peer, r->tag,
		    r->ctx)) == NULL)
			return -1;
		return chan_feed(o, c, &s);
	}
	if ((n = send_dests(t, r, buf, sizeof(buf) / sizeof(buf[0]),
	    &dst)) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if (task_gone(o, dst[i]))
			continue;
		if ((c = chan_get(o, t->tid, dst[i], r->tag, r->ctx)) == NULL ||
		    chan_feed(o, c, &s) == -1) {
			rv = -1;
			break;
		}
	}
	if (dst != buf)
		free(dst);
	return rv;
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
 * The end of a send that failed delivered nothing: take its begin (the
 * record before) back out of the FIFOs it is still at the back of, so
 * that a later message is not matched to it.  A point-to-point send has
 * one channel; a failed multicast is rare enough to search for.
 */
static void
retract_sends(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_chan *c;

	if (r->phase != PMON_END || r->rc >= 0)
		return;
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

/* Remembers a released spawn begin for the clock of its children. */
static void
spawn_note(struct order_task *t, const struct record *r, uint64_t corr)
{
	struct order_spawn *ns;
	size_t ncap;

	if (t->nspawns == t->spawncap) {
		ncap = t->spawncap ? t->spawncap * 2 : 4;
		t->spawns = xreallocarray(t->spawns, ncap, sizeof(*ns));
		t->spawncap = ncap;
	}
	t->spawns[t->nspawns].seq = r->seq;
	t->spawns[t->nspawns].raw = r->t_ns;
	t->spawns[t->nspawns].corr = corr;
	t->spawns[t->nspawns].children = UINT32_MAX;
	t->spawns[t->nspawns].started = 0;
	t->nspawns++;
}

/* The spawn begin of t at seq, or NULL. */
static struct order_spawn *
spawn_find(struct order_task *t, uint64_t seq)
{
	size_t i;

	for (i = t->nspawns; i-- > 0;)
		if (t->spawns[i].seq == seq)
			return &t->spawns[i];
	return NULL;
}

/* Forgets a spawn once every child it made has started. */
static void
spawn_trim(struct order_task *t, struct order_spawn *sp)
{
	if (sp->children == UINT32_MAX || sp->started < sp->children)
		return;
	memmove(sp, sp + 1, (size_t)(&t->spawns[t->nspawns] - (sp + 1)) *
	    sizeof(*sp));
	t->nspawns--;
}

/* The end of a spawn: the children it made. */
static void
spawn_ended(struct order_task *t, const struct record *r)
{
	struct order_spawn *sp;
	unsigned i;

	if ((sp = spawn_find(t, r->seq - 1)) == NULL)
		return;
	sp->children = 0;
	for (i = 0; i < r->npeers; i++)
		sp->children += record_peer(r, i) > 0;
	spawn_trim(t, sp);
}

/* A child started (or ended before it could): its spawn serves less. */
static void
child_started(struct order *o, struct order_task *t)
{
	struct order_task *p;
	struct order_spawn *sp;

	if (t->parent_tid == 0 || t->spawn_seq == 0 ||
	    (p = task_find(o, t->parent_tid)) == NULL ||
	    (sp = spawn_find(p, t->spawn_seq)) == NULL)
		return;
	sp->started++;
	spawn_trim(p, sp);
}

/* Remembers a pvm_notify(PvmTaskExit) for the notifies it will bring. */
static void
notify_note(struct order_task *t, const struct record *r)
{
	struct order_notify *nn, *n;
	unsigned i;

	if (r->inst != PVM_TASK_EXIT || r->npeers == 0)
		return;
	nn = xreallocarray(t->notifies, t->nnotifies + 1, sizeof(*nn));
	t->notifies = nn;
	n = &nn[t->nnotifies];
	memset(n, 0, sizeof(*n));
	n->tids = xcalloc(r->npeers, sizeof(*n->tids));
	n->tag = r->tag;
	n->ntids = r->npeers;
	for (i = 0; i < r->npeers; i++)
		n->tids[i] = record_peer(r, i);
	t->nnotifies++;
}

/*
 * Closes the open barrier episode of g once it has its count of entries.
 * A count of -1 means every member: while joins or leaves of the group
 * are still held the model's members are not yet those pvmgs counted.
 */
static void
barrier_try_close(struct order *o, struct order_group *g)
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

/* The counters of the barriers with count c on g; NULL if out of memory. */
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
static void
barrier_enter(struct order *o, struct order_task *t, struct order_node *n,
    uint64_t corr)
{
	struct order_group *g = n->group;
	struct order_counted *k;

	t->bar_group = g;
	t->bar_count = n->rec.inst;
	if (n->rec.inst > 0) {
		if ((k = counted_get(g, n->rec.inst)) == NULL) {
			t->bar_group = NULL;	/* its exit will not wait */
			return;
		}
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
	barrier_try_close(o, g);
}

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

/* Room for instance k; NULL when out of memory. */
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

static void	coll_leave(struct order_task *);

/* The begin of a reduce, gather or scatter joins its instance. */
static void
coll_enter(struct order *o, struct order_task *t, struct order_node *n,
    uint64_t corr)
{
	struct order_group *g = n->group;
	struct order_coll *c;
	int kind = coll_kind(&n->rec);
	uint64_t *next, k;

	coll_leave(t);
	if ((next = coll_next(t, g, kind)) == NULL)
		return;		/* out of memory: its end will not wait */
	k = (*next)++;
	/* An instance forgotten (a late member) or not counted: no wait. */
	if (g->lossy || k < g->cbase[kind] ||
	    (c = coll_room(g, kind, k)) == NULL)
		return;
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
static void
coll_leave(struct order_task *t)
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

/* A broadcast that did not reach a departed task: pvmgs knows by now. */
static void
forget_departed(struct order_group *g, const struct order_node *n)
{
	size_t i = 0;

	while (i < g->ndeparted)
		if (!bcast_lists(n, g->departed[i]))
			g->departed[i] = g->departed[--g->ndeparted];
		else
			i++;
}

/*
 * t exits (or ended): pvmgs drops it from its groups once pvmd tells it,
 * so a broadcast may still list it for a while (departed).
 */
static void
groups_depart(struct order *o, struct order_task *t)
{
	struct order_group *g;
	int32_t *nd;

	for (g = o->groups; g != NULL; g = g->next) {
		if (group_has(g, t->tid)) {
			nd = xreallocarray(g->departed, g->ndeparted + 1,
			    sizeof(*nd));
			g->departed = nd;
			g->departed[g->ndeparted++] = t->tid;
		}
		group_leave(o, g, t->tid);
		/* A receiver that ended may now be excused. */
		if (g->pending != NULL)
			wake_list(o, &g->waiters);
	}
}

/*
 * A member of g lost records: its barrier entries and collective calls
 * cannot be counted any more, so the exits and ends that wait for them
 * go at once, flagged (step_barrier_out, step_coll_out), from now on.
 */
static void
group_lossy(struct order *o, struct order_group *g)
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

/* What a released event changes in the model. */
static void
model_apply(struct order *o, struct order_task *t, struct order_node *n,
    uint64_t corr)
{
	/* An entry that may not be the one its count says. */
	if ((n->kind == NODE_BARRIER_IN || n->kind == NODE_COLL_IN) &&
	    n->rec.seq >= t->lost_from)
		group_lossy(o, n->group);
	switch (n->kind) {
	case NODE_JOIN:
		n->group->held_changes--;
		n->group->held_joins--;
		group_pending_del(n->group, n);
		group_join(o, n->group, t->tid, n->rec.rc);
		barrier_try_close(o, n->group);
		break;
	case NODE_LEAVE:
		n->group->held_changes--;
		group_leave(o, n->group, t->tid);
		barrier_try_close(o, n->group);
		break;
	case NODE_BCAST:
		forget_departed(n->group, n);
		/* FALLTHROUGH */
	case NODE_GSIZE:
		group_pending_del(n->group, n);
		wake_list(o, &n->group->waiters);
		break;
	case NODE_BARRIER_IN:
		barrier_enter(o, t, n, corr);
		break;
	case NODE_COLL_IN:
		coll_enter(o, t, n, corr);
		break;
	case NODE_COLL_OUT:
		if (t->coll_group == n->group)
			coll_leave(t);
		break;
	default:
		break;
	}
	if (n->rec.call == PMON_CALL_spawn && n->rec.phase == PMON_END)
		spawn_ended(t, &n->rec);
	if (n->rec.phase != PMON_BEGIN)
		return;
	if (n->rec.call == PMON_CALL_spawn)
		spawn_note(t, &n->rec, corr);
	else if (n->rec.call == PMON_CALL_notify)
		notify_note(t, &n->rec);
	else if (record_is_signal_send(&n->rec))
		sig_released(o, t, &n->rec, corr);
	else if (n->rec.call == PMON_CALL_exit)
		t->exiting = 1;
}

/*
 * Where t's next look is due (task_watch): its first release while its
 * parent keeps the spawn for it, else once it released all it can count.
 */
static void
watch_rearm(struct order_task *t)
{
	t->watch_at = t->spawn_pending || t->waiters_on > 0 ? 0 :
	    t->uncount_at;
}

/* The receives that wait for a message from t look again. */
static void
wake_outs(struct order *o, struct order_task *t)
{
	struct order_chan *c;

	for (c = t->outs; c != NULL; c = c->snext)
		wake_receiver(o, c);
}

/* t went on: the receives that wait for its progress look again. */
static void
wake_waiters_on(struct order *o, struct order_task *t)
{
	t->waiters_on = 0;
	watch_rearm(t);
	wake_outs(o, t);
	/* Mailbox reads that wait for a put (step_mbox_read), any task's. */
	wake_list(o, &o->putw);
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
static void
task_uncounted(struct order *o, struct order_task *t)
{
	struct order_chan *c;
	struct order_group *g;

	t->uncounted = 1;
	t->uncount_at = UINT64_MAX;
	wake_waiters_on(o, t);
	for (c = t->ins; c != NULL; c = c->dnext)
		c->debt = 0;
	for (g = o->groups; g != NULL; g = g->next)
		if (group_has(g, t->tid))
			group_lossy(o, g);
}

/*
 * The first record of t that may be missing is seq (or an earlier one):
 * once every record before it is out, t counts no more.
 */
static void
lost_at(struct order *o, struct order_task *t, uint64_t seq)
{
	if (seq >= t->lost_from || t->uncounted)
		return;
	t->lost_from = seq;
	t->uncount_at = seq - 1;
	if (t->uncount_at < t->watch_at)
		t->watch_at = t->uncount_at;
	if (t->released >= t->uncount_at)
		task_uncounted(o, t);
}

/* A receive waits for t's progress: t's next release wakes it. */
static void
watch_task(struct order_task *t)
{
	t->waiters_on++;
	t->watch_at = 0;
}

/*
 * t released past its watch point: wake the receives that wait for its
 * progress, and stop counting it once it released all it can count.
 */
static void
task_watch(struct order *o, struct order_task *t)
{
	if (t->spawn_pending) {
		t->spawn_pending = 0;
		child_started(o, t);
	}
	if (t->waiters_on > 0)
		wake_waiters_on(o, t);
	if (t->released >= t->uncount_at)
		task_uncounted(o, t);
	watch_rearm(t);
}

/* Keeps a released small node for the next event. */
static void
node_free(struct order *o, struct order_node *n)
{
	if (n->extra > NODE_SMALL || o->nspare >= NODE_SPARE_MAX) {
		free(n);
		return;
	}
	n->next = o->spare;
	o->spare = n;
	o->nspare++;
}

/*
 * Releases event n of t (its head, or a record released at arrival) with
 * the given flags, match and predecessor: to the callback, then into the
 * channels and the model.
 */
static int
release_node(struct order *o, struct order_task *t, struct order_node *n,
    uint8_t flags, int32_t match_tid, uint64_t match_seq,
    const struct clock_pred *pred)
{
	struct order_event ev;
	int rv = 0;

	o->nreleased++;
	o->progress = 1;
	t->started = 1;
	t->released = n->last;
	if (t->wait != WAIT_NONE)
		set_wait(o, t, WAIT_NONE);
	ev.tid = t->tid;
	ev.flags = n->flags | flags;
	if (n->rec.seq <= t->again_upto)
		ev.flags |= EVENT_AGAIN;
	ev.match_tid = match_tid;
	ev.match_seq = match_seq;
	ev.t_corr = o->clock == NULL ? n->rec.t_ns :
	    clock_correct(o->clock, t->host, &t->clock, n->rec.t_ns, pred);
	ev.rec = &n->rec;
	if (ev.flags & EVENT_INCONSISTENT)
		o->ninconsistent++;
	o->cb(&ev, o->arg);
	if (n->flags & EVENT_LOST)
		wake_outs(o, t);	/* receives naming a lost send */
	else {
		if (record_is_send(&n->rec))
			rv = push_sends(o, t, &n->rec, ev.t_corr);
		retract_sends(o, t, &n->rec);
		model_apply(o, t, n, ev.t_corr);
		if (n->gs_k != 0) {
			t->gs_released[n->gs_chain] = n->gs_k;
			gs_advance(o);
		}
	}
	if (t->released >= t->watch_at)
		task_watch(o, t);
	wake_children(o, t, 0);
	if (t->ended && t->head == NULL)
		order_task_done(o, t);
	return rv;
}

/* Releases the head of t with the given flags, match and predecessor. */
static int
release_head(struct order *o, struct order_task *t, uint8_t flags,
    int32_t match_tid, uint64_t match_seq, const struct clock_pred *pred)
{
	struct order_node *n = t->head;
	int rv;

	/* The next head is likely cold: fetch it while this one goes out. */
	if (n->next != NULL) {
		__builtin_prefetch(n->next);
		__builtin_prefetch((const char *)n->next + 64);
		__builtin_prefetch((const char *)n->next + 128);
		__builtin_prefetch((const char *)n->next + 192);
	}
	if ((t->head = n->next) == NULL)
		t->tailp = &t->head;
	t->held--;
	o->held--;
	rv = release_node(o, t, n, flags, match_tid, match_seq, pred);
	node_free(o, n);
	return rv;
}

static int
release_plain(struct order *o, struct order_task *t, uint8_t flags)
{
	return release_head(o, t, flags, 0, 0, NULL) == -1 ? -1 : 1;
}

static int
is_probe_hit(const struct record *r)
{
	return r->call == PMON_CALL_probe && r->phase == PMON_END &&
	    (r->flags & RECORD_MSG);
}

/* The begin of a signal a task's pvmd delivered (PMON_CALL_SIGNAL). */
static int
is_pvmd_signal(const struct record *r)
{
	return r->call == PMON_CALL_SIGNAL && r->phase == PMON_BEGIN &&
	    (r->flags & RECORD_PVMD);
}

/* The end of a pvm_recvinfo that names the pvm_putinfo it read. */
static int
is_mbox_read(const struct record *r)
{
	return r->call == PMON_CALL_recvinfo && r->phase == PMON_END &&
	    (r->flags & RECORD_MSGID);
}


/*
 * May the first event of t go?  If not, t waits on its parent.  *pred is
 * set to the parent's spawn when it is known.
 */
static int
spawn_ready(struct order *o, struct order_task *t, struct clock_pred *pred,
    int *has_pred)
{
	struct order_task *p;
	size_t i;

	if (t->started || t->parent_tid == 0 || t->spawn_seq == 0)
		return 1;
	p = task_find(o, t->parent_tid);
	if (p != NULL && p->released >= t->spawn_seq) {
		for (i = p->nspawns; i-- > 0;)
			if (p->spawns[i].seq == t->spawn_seq) {
				pred->raw = p->spawns[i].raw;
				pred->corr = p->spawns[i].corr;
				pred->host = p->host;
				pred->message = 0;
				*has_pred = 1;
				break;
			}
		return 1;
	}
	if (task_exhausted(o, t->parent_tid))
		return 1;
	if (!t->waiting) {
		if ((p = task_get(o, t->parent_tid)) == NULL)
			return 1;	/* out of memory: do not wait */
		t->next_waiter = p->waiters;
		p->waiters = t;
		t->waiting = 1;
	}
	set_wait(o, t, WAIT_SPAWN);
	return 0;
}

/* Waits on a list; out of memory turns the wait into a release. */
static int
wait_on(struct order *o, struct order_task *t, struct order_tasks *l,
    uint8_t what, struct order_group *g)
{
	if (tasks_add(l, t) == -1)
		return release_plain(o, t, 0);
	set_wait(o, t, what);
	t->wgroup = g;
	return 0;
}

/*
 * A pvm_recvinfo that got a mailbox entry goes after the pvm_putinfo
 * that stored it (its begin, numbered id, of the task that put it): once
 * that task released it, matched to it.  Without it after a flush round
 * (lost, put before pmon saw the task, or by a task pmon does not
 * instrument), it goes unmatched.
 */
static int
step_mbox_read(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	uint32_t id = record_msg_id(r);
	struct order_task *s = task_find(o, r->peer);
	uint64_t seq;

	if (s != NULL && s->registered && s->released > 0 &&
	    record_msg_id_cmp(s->released, id) >= 0) {
		seq = s->released - ((uint32_t)(s->released - id) &
		    RECORD_MSGID_MASK);
		return release_head(o, t, seq > 0 ? EVENT_MATCHED : 0,
		    s->tid, seq, NULL) == -1 ? -1 : 1;
	}
	if (force || o->draining || s == NULL || !s->registered ||
	    s->absent || (s->ended && s->head == NULL) ||
	    (t->head->added < o->synced && (s->next_seq == 0 ||
	    record_msg_id_cmp(s->next_seq - 1, id) < 0)))
		return release_plain(o, t, 0);
	watch_task(s);
	return wait_on(o, t, &o->putw, WAIT_PUT, NULL);
}

/*
 * Signals (doc/ordering.md, "Signals").  A pvm_sendsig or pvm_kill
 * begin is noted at its victim when it arrives, and its time when it is
 * released; the victim's next signal of that number from its pvmd goes
 * after it, matched to it.
 */
static int
sig_arrived(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_task *v;
	struct order_sig *g;

	if (r->peer <= 0)
		return 0;	/* no task: PVM refuses it */
	if ((v = task_get(o, r->peer)) == NULL)
		return -1;
	if (v->sigs == NULL)
		v->sigs = xcalloc(ORDER_SIGS_MAX, sizeof(*v->sigs));
	if (v->nsigs == ORDER_SIGS_MAX)
		memmove(v->sigs, v->sigs + 1, --v->nsigs * sizeof(*v->sigs));
	g = &v->sigs[v->nsigs++];
	memset(g, 0, sizeof(*g));
	g->from = t->tid;
	g->signo = r->inst;
	g->seq = r->seq;
	return 0;
}

static void
sig_released(struct order *o, struct order_task *t, const struct record *r,
    uint64_t corr)
{
	struct order_task *v = task_find(o, r->peer);
	size_t i;

	for (i = 0; v != NULL && i < v->nsigs; i++)
		if (v->sigs[i].from == t->tid && v->sigs[i].seq == r->seq) {
			v->sigs[i].released = 1;
			v->sigs[i].pred.raw = r->t_ns;
			v->sigs[i].pred.corr = corr;
			v->sigs[i].pred.host = t->host;
			wake_list(o, &o->sigw);
			return;
		}
}

/*
 * A signal from t's pvmd: after the first pvm_sendsig (pvm_kill) of its
 * number to t that is still unmatched, once that is released.  With
 * none, it waits for a flush round: a signal pmon saw no sender of (a
 * pvmd's own SIGTERM as it halts, a task pmon does not instrument, a
 * lost record) then goes unmatched.
 */
static int
step_signal(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	struct order_sig g;
	size_t i;

	for (i = 0; i < t->nsigs; i++)
		if (t->sigs[i].signo == r->inst)
			break;
	if (i < t->nsigs && t->sigs[i].released) {
		g = t->sigs[i];
		memmove(&t->sigs[i], &t->sigs[i + 1], (t->nsigs - i - 1) *
		    sizeof(*t->sigs));
		t->nsigs--;
		return release_head(o, t, EVENT_MATCHED, g.from, g.seq,
		    &g.pred) == -1 ? -1 : 1;
	}
	if (force || o->draining ||
	    (i == t->nsigs && t->head->added < o->synced))
		return release_plain(o, t, 0);
	return wait_on(o, t, &o->sigw, WAIT_SIGNAL, NULL);
}

/* The exit of a barrier: after every entry of its episode. */
static int
step_barrier_out(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;
	struct order_group *g = n->group;
	struct clock_pred pred;

	if (n->rec.rc < 0)
		return release_plain(o, t, 0);
	/* Its episode may not be the one the count says, or never close. */
	if (g->lossy && !(t->bar_group == g && t->bar_count <= 0 &&
	    t->bar_episode < g->lossy_episode))
		return release_plain(o, t, EVENT_INCONSISTENT);
	if (t->bar_group == g && t->bar_count > 0) {
		struct order_counted *k = counted_get(g, t->bar_count);
		uint64_t c = (uint64_t)t->bar_count;

		if (k == NULL || force || k->entries >= c * (t->bar_episode + 1)) {
			uint8_t fl = k != NULL &&
			    k->entries < c * (t->bar_episode + 1) ?
			    EVENT_INCONSISTENT : 0;

			memset(&pred, 0, sizeof(pred));
			pred.host = t->host;
			if (k != NULL)
				pred.corr = pred.raw =
				    k->corr[t->bar_episode % EPISODES_KEPT];
			return release_head(o, t, fl, 0, 0, &pred) == -1 ?
			    -1 : 1;
		}
		return wait_on(o, t, &g->waiters, WAIT_BARRIER, g);
	}
	if (t->bar_group == g && t->bar_episode < g->episode) {
		memset(&pred, 0, sizeof(pred));
		pred.host = t->host;
		pred.corr = g->episode - t->bar_episode <= EPISODES_KEPT ?
		    g->closed_corr[t->bar_episode % EPISODES_KEPT] :
		    g->closed_corr[(g->episode - 1) % EPISODES_KEPT];
		pred.raw = pred.corr;
		return release_head(o, t, 0, 0, 0, &pred) == -1 ? -1 : 1;
	}
	if (t->bar_group != g)
		return release_plain(o, t, 0);
	if (force)
		return release_plain(o, t, EVENT_INCONSISTENT);
	return wait_on(o, t, &g->waiters, WAIT_BARRIER, g);
}

/*
 * The end of a collective: the root of a reduce or gather after every
 * member's begin of the instance, a member of a scatter after the root's.
 */
static int
step_coll_out(struct order *o, struct order_task *t, int force)
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
		return release_plain(o, t, waits ? EVENT_INCONSISTENT : 0);
	}
	if (force || n->rec.rc < 0 || t->coll_group != g)
		return release_plain(o, t, 0);
	c = coll_at(g, kind, t->coll_k);
	memset(&pred, 0, sizeof(pred));
	pred.host = t->host;
	if (kind == 2) {
		if (t->coll_root)
			return release_plain(o, t, 0);
		ready = c->root_in;
		pred.corr = c->root_corr;
	} else {
		if (!t->coll_root)
			return release_plain(o, t, 0);
		ready = c->arrivals >= g->nmembers;
		pred.corr = c->corr;
	}
	if (!ready)
		return wait_on(o, t, &g->waiters, WAIT_BARRIER, g);
	pred.raw = pred.corr;
	return release_head(o, t, 0, 0, 0, &pred) == -1 ? -1 : 1;
}

/*
 * A notify from a pvmd: after the exit it reports, matched to that
 * task's last event.  The k-th notify of a pvm_notify reports the k-th of
 * its watched tasks to end (done_at); a task pmon never saw counts as
 * ended once the notify has been patient, and is reported unmatched.
 */
static int
step_notify(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	struct order_notify *nt = NULL;
	struct order_task *u, *best = NULL;
	struct clock_pred pred;
	uint64_t key, best_key = UINT64_MAX;
	size_t i, at = SIZE_MAX;

	for (i = 0; i < t->nnotifies; i++)
		if (t->notifies[i].tag == r->tag &&
		    t->notifies[i].received < t->notifies[i].ntids) {
			nt = &t->notifies[i];
			break;
		}
	if (nt == NULL)
		return release_plain(o, t, 0);
	for (i = 0; i < nt->ntids; i++) {
		if (nt->tids[i] == 0)
			continue;	/* an earlier notify reported it */
		u = task_find(o, nt->tids[i]);
		if (u != NULL && u->registered)
			key = u->done ? u->done_at : UINT64_MAX;
		else if (o->draining || !patient(o, t->head, o->synced))
			key = UINT64_MAX - 1;	/* never seen: ended unseen */
		else
			key = UINT64_MAX;
		if (key < best_key) {
			best_key = key;
			at = i;
			best = u != NULL && u->registered ? u : NULL;
		}
	}
	if (at == SIZE_MAX && !force)
		return wait_on(o, t, &o->notifyw, WAIT_NOTIFY, NULL);
	if (at != SIZE_MAX)
		nt->tids[at] = 0;
	/* Every notify it asked for came: forget it. */
	if (++nt->received == nt->ntids) {
		free(nt->tids);
		memmove(nt, nt + 1, (size_t)(&t->notifies[t->nnotifies] -
		    (nt + 1)) * sizeof(*nt));
		t->nnotifies--;
	}
	if (best == NULL || best->released == 0)
		return release_plain(o, t, 0);
	memset(&pred, 0, sizeof(pred));
	pred.corr = best->clock.corr;
	pred.raw = best->clock.raw;
	pred.host = best->host;
	return release_head(o, t, EVENT_MATCHED, best->tid, best->released,
	    &pred) == -1 ? -1 : 1;
}

/*
 * Has another task begun a call on x's group before x ended, and not yet
 * ended it?  Its end may report a state before x.
 */
static int
open_call_before(const struct order *o, struct order_node *x)
{
	const struct order_task *u, *t = x->task;
	size_t i;

	for (i = 0; i < o->ntaskb; i++)
		for (u = o->tasks[i]; u != NULL; u = u->hnext) {
			if (u == t || u->open_group != x->group)
				continue;
			if (u->host == t->host ? u->open_t <= x->rec.t_ns :
			    !began_after(o, u->host, u->open_t, x))
				return 1;
		}
	return 0;
}

/*
 * A join or leave: once no broadcast that can still arrive may conflict
 * with it (a flush round since it came), and unless a held one would
 * become impossible.
 */
static int
step_change(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;

	if (force)
		return release_plain(o, t, n->kind == NODE_JOIN &&
		    group_lowest_free(n->group) != n->rec.rc ?
		    EVENT_INCONSISTENT : 0);
	if (n->added >= o->synced)
		return wait_on(o, t, &o->syncw, WAIT_SYNC, NULL);
	if (open_call_before(o, n))
		return wait_on(o, t, &n->group->waiters, WAIT_OPEN, n->group);
	/* The instance a join got tells where pvmgs put it among joins. */
	if (n->kind == NODE_JOIN && group_lowest_free(n->group) != n->rec.rc)
		return wait_on(o, t, &n->group->waiters, WAIT_STATE, n->group);
	if (conflict_of(o, n) != NULL)
		return wait_on(o, t, &n->group->waiters, WAIT_CONFLICT,
		    n->group);
	return release_plain(o, t, 0);
}

/*
 * A join, leave, broadcast or gsize whose request the group server took:
 * its turn comes once every call the server took before it is released,
 * and the model is then what the server saw.  A request the server's
 * order went past without it (given up on) goes at once.
 */
static int
step_served(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;
	const struct order_gsreq *front;
	int fits;

	if (!force && t->gs_passed[n->gs_chain] < n->gs_k) {
		if (t->gs_served[n->gs_chain] < n->gs_k) {
			set_wait(o, t, WAIT_SERVER);
			return 0;
		}
		front = &o->gs[o->gs_front];
		if (front->client != t || front->chain != n->gs_chain ||
		    front->k != n->gs_k) {
			set_wait(o, t, WAIT_SERVER);
			return 0;
		}
	}
	/*
	 * The model may lag behind the server where only an exit can move
	 * it: a member that exits without leaving is dropped when pvmd
	 * tells the server.  Wait for it (release_hopeless judges).
	 */
	if (!(fits = served_fits(o, n)) && !force)
		return wait_on(o, t, &n->group->waiters, WAIT_STATE, n->group);
	return release_plain(o, t, fits ? 0 : EVENT_INCONSISTENT);
}

/* A broadcast or gsize end: when the model is in a state that allows it. */
static int
step_constrained(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;

	if (state_allows(n))
		return release_plain(o, t, 0);
	if (force)
		return release_plain(o, t, EVENT_INCONSISTENT);
	return wait_on(o, t, &n->group->waiters, WAIT_STATE, n->group);
}

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
	return release_head(o, t, EVENT_MATCHED, c->src, s.seq, &pred) ==
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
static int
release_unmatched(struct order *o, struct order_task *t)
{
	const struct order_task *s = task_find(o, t->head->rec.peer);

	o->nunmatched++;
	return release_plain(o, t, EVENT_UNMATCHED |
	    (s != NULL && s->unmonitored ? EVENT_UNMONITORED : 0));
}

/*
 * The receive at t's head, which cannot be counted, goes without its
 * send; it took a message of its channel, most likely the oldest kept
 * there, which goes too, so that a channel whose receives are never
 * counted does not keep every send.  A probe takes nothing.
 */
static int
release_uncounted(struct order *o, struct order_task *t)
{
	const struct record *r = &t->head->rec;
	struct order_chan *c;

	if (!is_probe_hit(r) &&
	    (c = chan_find(o, r->peer, t->tid, r->tag, r->ctx)) != NULL &&
	    c->count > 0) {
		chan_pop(c);
		o->retained--;
	}
	return release_unmatched(o, t);
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
		if ((c = chan_get(o, r->peer, t->tid, r->tag, r->ctx)) == NULL)
			return -1;
		c->debt++;
	}
	return release_unmatched(o, t);
}

static int
wait_chan(struct order *o, struct order_task *t, struct order_chan *c)
{
	c->waiter = t;
	set_wait(o, t, WAIT_CHAN);
	t->wait_tid = c->src;
	return 0;
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
static int
recv_uncounted(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	struct order_task *s;
	struct order_chan *c;
	uint64_t before;

	if (force || (s = task_find(o, r->peer)) == NULL || !s->registered ||
	    (s->ended && s->head == NULL) ||
	    (before = surely_before(o, t, s, r->t_ns)) == 0 ||
	    sender_past(o, s, before, t->head))
		return release_uncounted(o, t);
	if ((c = chan_get(o, r->peer, t->tid, r->tag, r->ctx)) == NULL)
		return -1;
	watch_task(s);
	return wait_chan(o, t, c);
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
		while (c->count > 0 && record_msg_id_cmp(c->sent[c->first].seq, id) < 0) {
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
			return release_unmatched(o, t);
	} else if (force || o->draining || (s != NULL && s->absent))
		return release_unmatched(o, t);
	if (c == NULL &&
	    (c = t->in_chan = chan_get(o, r->peer, t->tid, r->tag, r->ctx)) ==
	    NULL)
		return -1;
	/*
	 * The send wakes it (chan_feed), and so does a lost marker of its
	 * sender (release_head); an id that names no send of the channel
	 * (one the application gave the buffer) waits for a round.
	 */
	return wait_chan(o, t, c);
}

/*
 * The end of a receive that got a message, or of a probe that saw one.
 * Only a receive whose index on its channel is known (none of its task's
 * records before it is missing) can be matched, and only to a send whose
 * index is known (push_sends): the k-th receive from S with a tag and
 * context got S's k-th send to it with them (doc/ordering.md).
 */
static int
step_recv(struct order *o, struct order_task *t, int force, int peek)
{
	const struct record *r = &t->head->rec;
	struct order_chan *c;
	struct order_task *s;
	uint32_t id;
	int ready;

	if ((id = record_msg_id(r)) != 0)
		return step_recv_id(o, t, id, force, peek);
	if (r->seq >= t->lost_from)
		return recv_uncounted(o, t, force);
	c = in_chan(o, t, r);
	if (c != NULL && c->count > 0 && c->sent[c->first].uncounted)
		return release_uncounted(o, t);
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
		return release_unmatched(o, t);
	}
	/* No counted send can come any more. */
	s = c != NULL ? c->stask : task_find(o, r->peer);
	if (force || r->peer == 0 || sender_done(o, s))
		return release_unmatched(o, t);
	/* A round found its sender unmonitored: it would not come. */
	if (s != NULL && s->absent && !s->registered)
		return release_owed(o, t, peek);
	if (c == NULL &&
	    (c = t->in_chan = chan_get(o, r->peer, t->tid, r->tag, r->ctx)) ==
	    NULL)
		return -1;
	return wait_chan(o, t, c);
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
	struct clock_pred pred;
	int peek, has_pred = 0;

	if (t->head == NULL)
		return 0;
	if (!spawn_ready(o, t, &pred, &has_pred) && !force)
		return 0;
	r = &t->head->rec;
	/* A first event is a begin (or a lost marker): nothing else waits. */
	if (has_pred && t->head->kind == NODE_PLAIN && !record_is_recv(r) &&
	    !is_probe_hit(r))
		return release_head(o, t, 0, 0, 0, &pred) == -1 ? -1 : 1;
	if (t->head->flags & EVENT_LOST)
		return release_plain(o, t, 0);
	switch (t->head->kind) {
	case NODE_JOIN:
	case NODE_LEAVE:
		if (gs_expected(o, t->head))
			return step_served(o, t, force);
		return step_change(o, t, force);
	case NODE_BCAST:
	case NODE_GSIZE:
		if (gs_expected(o, t->head))
			return step_served(o, t, force);
		return step_constrained(o, t, force);
	case NODE_BARRIER_OUT:
		return step_barrier_out(o, t, force);
	case NODE_COLL_OUT:
		return step_coll_out(o, t, force);
	default:
		break;
	}
	if (is_mbox_read(r))
		return step_mbox_read(o, t, force);
	if (is_pvmd_signal(r))
		return step_signal(o, t, force);
	peek = is_probe_hit(r);
	if (!peek && !record_is_recv(r))
		return release_plain(o, t, 0);
	if (r->peer & ORDER_TID_DAEMON)
		return step_notify(o, t, force);
	return step_recv(o, t, force, peek);
}

/*
 * Whether a join or leave must wait depends on what other tasks wait for,
 * which changes as they progress: after a release, look at those waits
 * again.
 */
static void
recheck_conflicts(struct order *o)
{
	struct order_group *g;
	size_t i;

	o->progress = 0;
	for (g = o->groups; g != NULL; g = g->next)
		for (i = 0; i < g->waiters.n; i++)
			if (g->waiters.v[i]->wait == WAIT_CONFLICT) {
				wake_list(o, &g->waiters);
				break;
			}
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

	for (;;) {
		while ((t = work_pop(o)) != NULL)
			while (task_step(o, t, 0) == 1)
				;
		if (!o->progress || o->nconflicts == 0)
			break;
		recheck_conflicts(o);
		if (o->work == NULL)
			break;
	}
}

/*
 * t is done: the ends of the sends it kept in c were released, or lost.
 * (A reused tid must not make them wait for its new records.)
 */
static void
sends_settle(const struct order_task *t, struct order_chan *c)
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

/*
 * A task that ended and holds nothing: the children and receivers that
 * waited for it may go, channels into it can never be read again, and it
 * is no longer a member of any group.
 */
static void
order_task_done(struct order *o, struct order_task *t)
{
	struct order_chan *c, *next;

	t->done = 1;
	t->done_at = ++o->ndone;
	if (t->spawn_pending) {
		t->spawn_pending = 0;
		child_started(o, t);
	}
	coll_leave(t);
	wake_children(o, t, 1);
	for (c = t->outs; c != NULL; c = next) {
		next = c->snext;
		sends_settle(t, c);
		wake_receiver(o, c);
		if (c->dst == t->tid || (c->count == 0 && c->waiter == NULL))
			chan_del(o, c);
	}
	while (t->ins != NULL)
		chan_del(o, t->ins);
	/*
	 * The server drops a task from its groups when pvmd tells it of the
	 * exit (GS_DEAD); until then, or without a server, it goes now.
	 */
	if (o->server != NULL && !o->server->ended)
		t->exiting = 1;
	else
		groups_depart(o, t);
	wake_list(o, &o->notifyw);
	/* Requests it made and never saw the end of are not waited for. */
	gs_advance(o);
	if (t == o->server)
		server_gone(o);
	if (o->done_cb != NULL)
		o->done_cb(t->tid, o->done_arg);
}

/* --- the API ---------------------------------------------------------- */

struct order *
order_new(order_release_cb cb, void *arg)
{
	struct order *o;

	o = xcalloc(1, sizeof(*o));
	o->cb = cb;
	o->arg = arg;
	o->ntaskb = o->nchanb = ORDER_MIN_BUCKETS;
	o->tasks = xcalloc(o->ntaskb, sizeof(*o->tasks));
	o->chans = xcalloc(o->nchanb, sizeof(*o->chans));
	o->worktail = &o->work;
	o->synced = 1;
	return o;
}

void
order_set_clock(struct order *o, struct clock *clk)
{
	o->clock = clk;
}

void
order_set_done_cb(struct order *o, order_done_cb cb, void *arg)
{
	o->done_cb = cb;
	o->done_arg = arg;
}

static void
notifies_free(struct order_task *t)
{
	size_t i;

	for (i = 0; i < t->nnotifies; i++)
		free(t->notifies[i].tids);
	free(t->notifies);
	t->notifies = NULL;
	t->nnotifies = 0;
}

static void
task_free(struct order_task *t)
{
	struct order_node *n, *next;

	for (n = t->head; n != NULL; n = next) {
		next = n->next;
		free(n);
	}
	free(t->spawns);
	free(t->tcoll);
	notifies_free(t);
	free(t->sigs);
	free(t);
}

void
order_free(struct order *o)
{
	struct order_task *t, *tnext;
	struct order_chan *c, *cnext;
	struct order_group *g, *gnext;
	struct order_node *n, *nnext;
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
			free(c->sent);
			free(c);
		}
	for (g = o->groups; g != NULL; g = gnext) {
		gnext = g->next;
		free(g->members);
		free(g->departed);
		free(g->insts);
		for (i = 0; i < COLL_KINDS; i++)
			free(g->coll[i]);
		free(g->counted);
		free(g->waiters.v);
		free(g);
	}
	for (n = o->spare; n != NULL; n = nnext) {
		nnext = n->next;
		free(n);
	}
	free(o->syncw.v);
	free(o->putw.v);
	free(o->sigw.v);
	free(o->notifyw.v);
	free(o->gs);
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

/* Forgets the requests of an ended incarnation of a reused tid. */
static void
gs_forget(struct order *o, struct order_task *t)
{
	size_t i;

	for (i = o->gs_front; i < o->ngs; i++)
		if (o->gs[i].client == t)
			o->gs[i].skipped = 1;
	memset(t->gs_sent, 0, sizeof(t->gs_sent));
	memset(t->gs_released, 0, sizeof(t->gs_released));
	memset(t->gs_served, 0, sizeof(t->gs_served));
	memset(t->gs_passed, 0, sizeof(t->gs_passed));
	if (t == o->server) {
		t->server = 0;
		o->server = NULL;
		o->gs_absent = 1;
	}
	gs_advance(o);
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
	t->done = 0;
	t->next_seq = 1;
	t->released = 0;
	t->lost = 0;
	t->lost_from = t->uncount_at = t->watch_at = UINT64_MAX;
	t->uncounted = 0;
	t->absent = t->unmonitored = 0;
	t->waiters_on = 0;
	t->spawn_pending = 0;
	t->nspawns = 0;
	t->bar_group = NULL;
	t->coll_group = NULL;
	t->ntcoll = 0;
	t->exiting = 0;
	memset(&t->clock, 0, sizeof(t->clock));
	notifies_free(t);
	t->nsigs = 0;
	gs_forget(o, t);
}

int
order_task_new(struct order *o, int32_t tid, uint32_t host,
    int32_t parent_tid, uint64_t spawn_seq, const char **why)
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
		t->absent = t->unmonitored = 0;
		o->registered++;
	}
	t->host = host;
	t->parent_tid = parent_tid;
	t->spawn_seq = spawn_seq;
	/* Its first release lets the parent forget the spawn (task_watch). */
	if (parent_tid != 0 && spawn_seq != 0) {
		t->spawn_pending = 1;
		t->watch_at = 0;
	}
	return 0;
}

int
order_task_resume(struct order *o, int32_t tid, uint64_t next_seq,
    uint64_t again_upto, const char **why)
{
	struct order_task *t = task_find(o, tid);

	if (t == NULL || !t->registered || t->ended) {
		*why = "resume of an unknown task";
		return -1;
	}
	if (t->head != NULL || t->next_seq > 1 || t->started) {
		*why = "resume after the task's records";
		return -1;
	}
	if (next_seq <= 1)
		return 0;
	t->next_seq = next_seq;
	t->released = next_seq - 1;
	t->again_upto = again_upto;
	t->started = 1;
	/* What it sent and received before is not known: nothing counts. */
	lost_at(o, t, 1);
	wake_children(o, t, 0);
	order_run(o);
	return 0;
}

int
order_group_server(struct order *o, int32_t tid, const char **why)
{
	struct order_task *t = task_find(o, tid);

	if (t == NULL || !t->registered || t->ended) {
		*why = "group server is not a registered task";
		return -1;
	}
	if (t->head != NULL || t->next_seq > 1) {
		*why = "group server declared after its records";
		return -1;
	}
	t->server = 1;
	o->server = t;
	o->gs_absent = 0;
	return 0;
}

/*
 * Copies a record into a new held node: the decoded fields, and the group
 * name and the encoded peer list as they are, into the node's own bytes,
 * where its record then points.
 */
static struct order_node *
node_new(struct order *o, const struct record *r, uint8_t flags,
    uint64_t last)
{
	struct order_node *n;
	size_t len = r->glen + 4 * (size_t)r->npeers;

	if (len <= NODE_SMALL && o->spare != NULL) {
		n = o->spare;
		if ((o->spare = n->next) != NULL)
			__builtin_prefetch(o->spare);
		o->nspare--;
	} else
		n = xmalloc(sizeof(*n) + (len <= NODE_SMALL ? NODE_SMALL : len));
	/* Field by field (a memset of the node costs more): set every field. */
	n->next = NULL;
	n->flags = n->kind = n->gs_chain = n->gs_fallback = 0;
	n->gs_k = 0;
	n->task = NULL;
	n->group = NULL;
	n->gnext = NULL;
	n->gprevp = NULL;
	n->ref_begin = n->ref_end = 0;
	n->ref_err = INT64_MAX;
	n->added = n->round = n->prev_t = 0;
	n->extra = len;
	n->rec = *r;
	n->rec.len = (uint16_t)record_size(r);
	n->rec.group = (const char *)n->bytes;
	n->rec.peers = n->bytes + r->glen;
	if (r->glen > 0)
		memcpy(n->bytes, r->group, r->glen);
	if (r->npeers > 0)
		memcpy(n->bytes + r->glen, r->peers, 4 * (size_t)r->npeers);
	n->flags = flags;
	n->last = last;
	return n;
}

/*
 * Group calls talk to pvmgs between their begin and their end: while one
 * is open, what it will report may predate a join or leave that another
 * task has already recorded.
 */
static int
track_open(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_group *g;

	switch (r->call) {
	case PMON_CALL_joingroup:
	case PMON_CALL_lvgroup:
	case PMON_CALL_gsize:
	case PMON_CALL_bcast:
	case PMON_CALL_barrier:
	case PMON_CALL_getinst:
	case PMON_CALL_gettid:
	case PMON_CALL_freezegroup:
	case PMON_CALL_reduce:
	case PMON_CALL_gather:
	case PMON_CALL_scatter:
		break;
	default:
		return 0;
	}
	if ((g = group_get(o, r->group, r->glen)) == NULL)
		return -1;
	if (r->phase == PMON_BEGIN) {
		t->open_group = g;
		t->open_t = r->t_ns;
		t->open_seq = r->seq;
		t->open_call = r->call;
		return 0;
	}
	t->open_group = NULL;
	wake_list(o, &g->waiters);
	return 0;
}

/* Sorts a new node for the model and files it with its group. */
static int
node_classify(struct order *o, struct order_task *t, struct order_node *n)
{
	const struct record *r = &n->rec;
	uint8_t kind = NODE_PLAIN;
	int chain;

	if (r->glen == 0)
		return 0;
	if ((r->flags & RECORD_GS) && r->phase == PMON_END &&
	    (chain = gs_chain_of_call(r->call)) != -1) {
		n->gs_chain = (uint8_t)chain;
		n->gs_k = ++t->gs_sent[chain];
	}
	if (track_open(o, t, r) == -1)
		return -1;
	switch (r->call) {
	case PMON_CALL_joingroup:
		if (r->phase == PMON_END && r->rc >= 0)
			kind = NODE_JOIN;
		break;
	case PMON_CALL_lvgroup:
		if (r->phase == PMON_END && r->rc >= 0)
			kind = NODE_LEAVE;
		break;
	/* pvmgs deletes a group when its last member leaves. */
	case PMON_CALL_bcast:
		if (r->phase == PMON_END && (r->rc >= 0 || r->rc == PVM_NO_GROUP))
			kind = NODE_BCAST;
		break;
	case PMON_CALL_gsize:
		if (r->phase == PMON_END && (r->rc >= 0 || r->rc == PVM_NO_GROUP))
			kind = NODE_GSIZE;
		break;
	case PMON_CALL_freezegroup:
		if (r->phase == PMON_END && r->rc >= 0 && r->inst > 0)
			kind = NODE_GSIZE;
		break;
	case PMON_CALL_reduce:
	case PMON_CALL_gather:
	case PMON_CALL_scatter:
		kind = r->phase == PMON_BEGIN ? NODE_COLL_IN : NODE_COLL_OUT;
		break;
	case PMON_CALL_barrier:
		kind = r->phase == PMON_BEGIN ? NODE_BARRIER_IN :
		    NODE_BARRIER_OUT;
		break;
	default:
		return 0;
	}
	if (kind == NODE_PLAIN)
		return 0;
	if ((n->group = group_get(o, r->group, r->glen)) == NULL)
		return -1;
	n->kind = kind;
	n->task = t;
	if (kind == NODE_JOIN || kind == NODE_LEAVE)
		n->group->held_changes++;
	if (kind == NODE_JOIN)
		n->group->held_joins++;
	if (kind == NODE_JOIN || kind == NODE_BCAST || kind == NODE_GSIZE) {
		if ((n->gnext = n->group->pending) != NULL)
			n->gnext->gprevp = &n->gnext;
		n->group->pending = n;
		n->gprevp = &n->group->pending;
		/* A join or leave waiting on this group may now conflict. */
		wake_list(o, &n->group->waiters);
	}
	return 0;
}

static void
node_append(struct order *o, struct order_task *t, struct order_node *n)
{
	*t->tailp = n;
	t->tailp = &n->next;
	t->held++;
	o->held++;
	n->added = ++o->nadded;
	n->round = o->rounds;
	n->task = t;
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
	if ((n = node_new(o, &r, EVENT_LOST, seq + count - 1)) == NULL)
		return -1;
	node_append(o, t, n);
	t->lost += count;
	return 0;
}

/*
 * Can r go out the moment it arrives, with no node?  Only when stepping t
 * would release it at once anyway: t holds nothing and waits for no
 * spawn, no receive waits on its progress (those would look first), and
 * r is neither a receive nor a group call, which wait for other tasks.
 */
static int
free_at_arrival(const struct order_task *t, const struct record *r)
{
	return t->head == NULL && t->waiters_on == 0 && r->glen == 0 &&
	    (t->started || t->parent_tid == 0 || t->spawn_seq == 0) &&
	    !record_is_recv(r) && !is_probe_hit(r) && !is_mbox_read(r) &&
	    !is_pvmd_signal(r);
}

/*
 * Releases r at arrival.  Its node lives on the stack and borrows r's
 * group and peers: nothing keeps it past the release.
 */
static void
release_arrival(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_node n;

	n.rec = *r;
	n.rec.len = (uint16_t)record_size(r);
	n.flags = n.kind = 0;
	n.gs_k = 0;
	n.last = r->seq;
	t->last_raw = r->t_ns;
	o->nadded++;
	o->changes++;
	/* Out of memory for a send's channel loses its matches only. */
	(void)release_node(o, t, &n, 0, 0, 0, NULL);
}

int
order_add(struct order *o, int32_t tid, const struct record *r,
    const char **why)
{
	struct order_task *t = o->add_task;
	struct order_node *n;

	/* Records come in runs of one task's: skip the hash lookup. */
	if (t == NULL || t->tid != tid)
		t = o->add_task = task_find(o, tid);

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
	if (t->server) {
		t->next_seq = r->seq + 1;
		if (gs_add(o, r) == -1)
			goto nomem;
		order_run(o);
		return 0;
	}
	if (r->seq > t->next_seq) {
		if (add_lost(o, t, t->next_seq, r->seq - t->next_seq,
		    r->t_ns) == -1)
			goto nomem;
		lost_at(o, t, t->next_seq);
	}
	t->next_seq = r->seq + 1;
	if (record_is_signal_send(r) && sig_arrived(o, t, r) == -1)
		goto nomem;
	if (free_at_arrival(t, r)) {
		release_arrival(o, t, r);
		order_run(o);
		return 0;
	}
	if ((n = node_new(o, r, 0, r->seq)) == NULL)
		goto nomem;
	n->prev_t = t->last_raw;
	t->last_raw = r->t_ns;
	node_append(o, t, n);
	o->changes++;
	if (node_classify(o, t, n) == -1)
		n->kind = NODE_PLAIN;	/* out of memory: not modelled */
	/* A receive waiting for t's progress may see its new head. */
	if (t->waiters_on > 0)
		wake_waiters_on(o, t);
	/*
	 * A receive at the head waits for its sender, never for what its
	 * own task does after it: a record behind it changes nothing.
	 */
	if (t->head == n || t->wait != WAIT_CHAN)
		work_push(o, t);
	/* Events ahead of a waiting join may change what it waits for. */
	o->progress = 1;
	order_run(o);
	return 0;
nomem:
	*why = "out of memory";
	return -1;
}

/*
 * pvmd lists tid and pmon does not instrument it: no record of it will
 * come, so a receive of its message goes at once, unmatched and flagged
 * EVENT_UNMONITORED, as if a round had found it absent.
 */
int
order_task_unmonitored(struct order *o, int32_t tid)
{
	struct order_task *t;

	if ((t = task_get(o, tid)) == NULL)
		return -1;
	if (t->registered && !t->ended)
		return 0;
	t->absent = t->unmonitored = 1;
	wake_outs(o, t);
	o->progress = 1;
	order_run(o);
	return 0;
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
	o->changes++;
	if (t->open_group != NULL) {
		wake_list(o, &t->open_group->waiters);
		t->open_group = NULL;
	}
	if (!t->server && dropped > t->lost) {
		if (add_lost(o, t, t->next_seq, dropped - t->lost,
		    t->last_raw) == -1) {
			*why = "out of memory";
			return -1;
		}
		lost_at(o, t, t->next_seq);
	}
	if (t->head == NULL)
		order_task_done(o, t);
	else
		work_push(o, t);
	order_run(o);
	return 0;
}

/* --- flush rounds ----------------------------------------------------- */

uint64_t
order_mark(struct order *o)
{
	return o->nadded + 1;
}

/* Does task tid hold a join (or leave) of g? */
static int
holds_change(const struct order *o, int32_t tid, const struct order_group *g,
    uint8_t kind)
{
	const struct order_task *t = task_find(o, tid);
	const struct order_node *n;

	for (n = t != NULL ? t->head : NULL; n != NULL; n = n->next)
		if (n->kind == kind && n->group == g)
			return 1;
	return 0;
}

/* Can member tid still leave g: a held leave, or a task that can end? */
static int
may_leave(const struct order *o, const struct order_group *g, int32_t tid)
{
	const struct order_task *u = task_find(o, tid);

	if (u != NULL && u->registered && !u->ended && !o->draining)
		return 1;
	return holds_change(o, tid, g, NODE_LEAVE);
}

/*
 * Could any held event still change the group state so that the held
 * broadcast or gsize n becomes possible?  After a flush round every event
 * that happened before n has arrived.
 */
static int
state_hopeless(const struct order *o, const struct order_node *n)
{
	const struct order_group *g = n->group;
	int32_t p;
	size_t i;

	if (n->kind == NODE_JOIN) {
		p = group_member_of(g, n->rec.rc);
		if (p == 0)	/* a lower instance is free */
			return g->held_joins <= 1;
		return !may_leave(o, g, p);
	}
	if (n->kind == NODE_GSIZE) {
		if (g->nmembers < size_target(n))
			return g->held_joins == 0;
		for (i = 0; i < g->nmembers; i++)
			if (may_leave(o, g, g->members[i]))
				return 0;
		return 1;
	}
	/* A receiver that is no member must still have a join to come... */
	for (i = 0; i < n->rec.npeers; i++) {
		p = record_peer(&n->rec, (unsigned)i);
		if (p != n->task->tid && !group_has(g, p) && !departed(g, p) &&
		    !holds_change(o, p, g, NODE_JOIN))
			return 1;
	}
	/* ...and a member it did not reach a leave or an end. */
	for (i = 0; i < g->nmembers; i++) {
		p = g->members[i];
		if (p != n->task->tid && !bcast_lists(n, p) &&
		    !may_leave(o, g, p))
			return 1;
	}
	return 0;
}

/*
 * How many flush rounds a group wait is given before it is judged: a join
 * or leave a broadcast saw may be recorded well after it (its task waits
 * for pvmgs, or for the CPU), and a round can be quick.
 */
#define PATIENCE_ROUNDS	ORDER_PATIENCE_ROUNDS

static int
patient(const struct order *o, const struct order_node *n, uint64_t mark)
{
	return n->added >= mark || o->rounds - n->round < PATIENCE_ROUNDS;
}

/* Wakes every task waiting on the group server's order. */
static void
gs_wake_all(struct order *o)
{
	struct order_task *t;
	size_t i;

	if (o->nserverw == 0)
		return;
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext)
			gs_wake(o, t);
}

/*
 * The server is gone: calls wait for its records no more, and the tasks
 * that ended waiting for it to drop them leave their groups.
 */
static void
server_gone(struct order *o)
{
	struct order_task *t;
	size_t i;

	gs_wake_all(o);
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext)
			if (t->done)
				groups_depart(o, t);
}

/*
 * Liveness of the server's order.  A call whose request the server's
 * records do not show after PATIENCE_ROUNDS rounds is ordered by the
 * heuristics (there is no instrumented server, or its records were
 * lost).  A request whose call does not come within as many rounds (its
 * task is not monitored, or died in the call) is given up, and so is the
 * front of the chain when a round moved nothing at all; but not while
 * its task is inside the call: under a busy CPU, or stopped, a client
 * can take many rounds between the server's answer and its end record.
 */
static void
gs_patience(struct order *o, uint64_t mark, uint64_t stuck)
{
	struct order_task *t;
	struct order_gsreq *q;
	size_t i;

	if (o->nserverw == 0)
		return;
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext) {
			if (t->wait != WAIT_SERVER || t->gs_served[
			    t->head->gs_chain] >= t->head->gs_k ||
			    patient(o, t->head, mark))
				continue;
			t->head->gs_fallback = 1;
			if (o->server == NULL)
				o->gs_absent = 1;
			work_push(o, t);
		}
	if (o->gs_front < o->ngs) {
		q = &o->gs[o->gs_front];
		if (!gs_in_call(q) && (stuck || (gs_missing(q) &&
		    o->rounds - q->round >= PATIENCE_ROUNDS))) {
			q->skipped = 1;
			gs_advance(o);
		}
	}
	order_run(o);
}

/* Has the group wait of t lasted past what release_hopeless allows? */
static int
overdue(const struct order *o, const struct order_task *t, uint64_t mark,
    uint64_t stuck)
{
	if (t->head == NULL)
		return 0;
	if (t->wait == WAIT_CONFLICT || t->wait == WAIT_OPEN ||
	    (t->wait == WAIT_STATE && t->head->kind == NODE_JOIN))
		return !patient(o, t->head, mark);
	if (t->wait != WAIT_STATE)
		return 0;
	/* A broadcast waits longer: going, it is flagged. */
	return t->head->added < stuck || (t->head->added < mark &&
	    o->rounds - t->head->round >= 2 * PATIENCE_ROUNDS);
}

/*
 * Releases the broadcasts and gsizes no event can make possible, flagged
 * inconsistent.  With stuck set (a round that brought nothing new and
 * released nothing), also the oldest event that waits on group state
 * since before the mark stuck.
 */
static void
release_hopeless(struct order *o, uint64_t mark, uint64_t stuck)
{
	struct order_group *g;
	struct order_task *t, *oldest = NULL;
	size_t i;
	int again = 1;

	while (again) {
		again = 0;
		for (g = o->groups; g != NULL && !again; g = g->next)
			for (i = 0; i < g->waiters.n; i++) {
				t = g->waiters.v[i];
				if (t->wait != WAIT_STATE ||
				    patient(o, t->head, mark) ||
				    !state_hopeless(o, t->head))
					continue;
				wake_list(o, &g->waiters);
				task_step(o, t, 1);
				order_run(o);
				again = 1;
				break;
			}
	}
	/*
	 * Liveness: a join or leave that waited two rounds for a broadcast
	 * that cannot go, or a join for an instance that does not free up,
	 * goes (the "no other selectable event" case of the paper); when a
	 * round brought nothing at all, also a waiting broadcast or gsize.
	 */
	for (;;) {
		oldest = NULL;
		for (g = o->groups; g != NULL; g = g->next)
			for (i = 0; i < g->waiters.n; i++) {
				t = g->waiters.v[i];
				if (!overdue(o, t, mark, stuck))
					continue;
				if (oldest == NULL ||
				    t->head->added < oldest->head->added)
					oldest = t;
			}
		if (oldest == NULL)
			return;
		wake_list(o, &oldest->wgroup->waiters);
		task_step(o, oldest, 1);
		order_run(o);
	}
}

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
	uint32_t id;

	if (t->wait != WAIT_CHAN || t->head == NULL ||
	    t->head->added >= mark)
		return 0;
	r = &t->head->rec;
	/* Its sender made everything before it by now. */
	if ((id = record_msg_id(r)) != 0) {
		s = task_find(o, r->peer);
		if (s != NULL && s->registered && s->next_seq > 0 &&
		    record_msg_id_cmp(s->next_seq - 1, id) >= 0)
			return 0;	/* it holds the send */
		return release_unmatched(o, t) == 1;
	}
	if (r->seq >= t->lost_from)
		return release_unmatched(o, t) == 1;
	if ((c = chan_find(o, r->peer, t->tid, r->tag, r->ctx)) != NULL &&
	    c->count > 0)
		return sent_midcall(c);
	if ((s = task_find(o, r->peer)) == NULL || !s->registered) {
		if ((s = task_get(o, r->peer)) == NULL)
			return 0;
		s->absent = 1;
	} else if (holds_send(s, t->tid, r->tag, r->ctx))
		return 0;
	else
		lost_at(o, s, s->next_seq);
	return release_owed(o, t, is_probe_hit(r)) == 1;
}

/*
 * Judges, after a round, the receives that wait for a send, and again
 * after what that released: a chain of receives whose sends wait
 * behind receives resolves in one round.
 */
static void
recv_judge(struct order *o, uint64_t mark)
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

void
order_synced(struct order *o, uint64_t mark)
{
	uint64_t stuck = 0;

	if (mark < o->synced)
		return;
	o->prev_synced = o->synced;
	o->synced = mark;
	o->rounds++;
	wake_list(o, &o->syncw);
	wake_list(o, &o->putw);
	wake_list(o, &o->sigw);
	order_run(o);
	recv_judge(o, mark);
	/*
	 * Stuck: since the round before, nothing arrived, nothing ended and
	 * nothing was released.  Only inconsistent data does that.
	 */
	if (o->nreleased == o->released_at_sync &&
	    o->changes == o->changes_at_sync)
		stuck = o->prev_synced;
	/*
	 * A join a broadcast saw can be recorded after the broadcast (its
	 * task waits for pvmgs's reply): judge only what two rounds saw.
	 */
	gs_patience(o, o->prev_synced, stuck);
	release_hopeless(o, o->prev_synced, stuck);
	o->released_at_sync = o->nreleased;
	o->changes_at_sync = o->changes;
}

int
order_wants_sync(const struct order *o)
{
	const struct order_group *g;
	size_t i;

	if (o->syncw.n > 0 || o->nserverw > 0)
		return ORDER_SYNC_SOON;
	/*
	 * A big window: a round judges the receives in it that wait for a
	 * send that may have been lost.
	 */
	if (o->notifyw.n > 0 || o->putw.n > 0 || o->sigw.n > 0 ||
	    o->held >= ORDER_SYNC_HELD)
		return ORDER_SYNC_LATER;
	for (g = o->groups; g != NULL; g = g->next)
		for (i = 0; i < g->waiters.n; i++)
			if (g->waiters.v[i]->wait >= WAIT_STATE &&
			    g->waiters.v[i]->wait <= WAIT_OPEN)
				return ORDER_SYNC_LATER;
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
 * The task whose head waits on a group the longest: with state, on the
 * group's state or a held broadcast; else on a barrier, a round, a call
 * or a notify.
 */
static struct order_task *
oldest_group_wait(const struct order *o, int state)
{
	struct order_task *t, *oldest = NULL;
	size_t i;

	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext) {
			if (t->head == NULL || t->wait < WAIT_BARRIER ||
			    (t->wait == WAIT_STATE ||
			    t->wait == WAIT_CONFLICT) != state)
				continue;
			if (oldest == NULL || t->head->added < oldest->head->added)
				oldest = t;
		}
	return oldest;
}

static void
push_all(struct order *o)
{
	struct order_task *t;
	size_t i;

	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext) {
			t->waitq = NULL;
			work_push(o, t);
		}
}

/*
 * Treats every task as finished: a wait on a task that holds nothing ends.
 * What still waits then waits in a cycle only inconsistent data can make;
 * break it one head at a time.
 */
void
order_release_all(struct order *o)
{
	struct order_group *g;
	struct order_task *t;

	o->draining = 1;
	o->synced = UINT64_MAX;
	for (g = o->groups; g != NULL; g = g->next)
		g->waiters.n = 0;
	o->syncw.n = 0;
	o->notifyw.n = 0;
	o->putw.n = 0;
	o->sigw.n = 0;
	push_all(o);
	order_run(o);
	/*
	 * What waits on group state rather than on data goes first, oldest
	 * first; a broadcast or gsize last, as it is then flagged.
	 */
	while ((t = oldest_group_wait(o, 1)) != NULL ||
	    (t = oldest_group_wait(o, 0)) != NULL) {
		for (g = o->groups; g != NULL; g = g->next)
			g->waiters.n = 0;
		o->notifyw.n = 0;
		if (task_step(o, t, 1) == -1)
			break;
		push_all(o);
		order_run(o);
	}
	while ((t = first_held(o)) != NULL) {
		for (g = o->groups; g != NULL; g = g->next)
			g->waiters.n = 0;
		o->syncw.n = 0;
		o->notifyw.n = 0;
		o->putw.n = 0;
		o->sigw.n = 0;
		if (task_step(o, t, 1) == -1)
			break;	/* out of memory; order_free drops the rest */
		push_all(o);
		order_run(o);
	}
}

/* After a run every task that holds an event waits for something. */
void
order_stats(const struct order *o, struct order_stats *st)
{
	const struct order_group *g;
	struct order_task *t;
	size_t i;
	int k;

	memset(st, 0, sizeof(*st));
	st->tasks = o->registered;
	st->held = o->held;
	st->retained = o->retained;
	st->released = o->nreleased;
	st->inconsistent = o->ninconsistent;
	st->matched = o->nmatched;
	st->unmatched = o->nunmatched;
	st->channels = o->nchans;
	for (g = o->groups; g != NULL; g = g->next)
		for (k = 0; k < COLL_KINDS; k++)
			st->kept += g->cn[k];
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext) {
			st->kept += t->nspawns + t->nnotifies;
			if (t->head == NULL)
				continue;
			st->blocked++;
			if (t->wait >= WAIT_STATE && t->wait <= WAIT_SERVER)
				st->state_waits++;
		}
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
	memset(st, 0, sizeof(*st));
	st->tasks = 1;
	st->held = t->held;
	for (i = 0; i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = c->hnext)
			if (c->src == tid)
				st->retained += c->count;
	st->blocked = t->head != NULL;
	st->state_waits = t->head != NULL && t->wait >= WAIT_STATE &&
	    t->wait <= WAIT_SERVER;
	return 0;
}

static const char *const wait_names[] = {
	"none", "spawn", "message", "barrier", "state", "conflict", "round",
	"group call", "group server", "mailbox put", "notify", "signal"
};

void
order_dump(const struct order *o, FILE *f)
{
	const struct order_task *t;
	const struct order_group *g;
	const struct record *r;
	size_t i;

	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext) {
			if (t->head == NULL)
				continue;
			r = &t->head->rec;
			fprintf(f, "t%x holds %zu: %s %s seq %llu rc %d "
			    "peer %x %.*s waits for %s\n", (unsigned)t->tid,
			    t->held, record_call_name(r->call),
			    r->phase == PMON_BEGIN ? "begin" : "end",
			    (unsigned long long)r->seq, r->rc,
			    (unsigned)r->peer, r->glen, r->group,
			    wait_names[t->wait]);
		}
	for (g = o->groups; g != NULL; g = g->next) {
		fprintf(f, "group %.*s:", g->len, g->name);
		for (i = 0; i < g->nmembers; i++)
			fprintf(f, " t%x/%d", (unsigned)g->members[i],
			    g->insts[i]);
		fprintf(f, "; %zu joins and leaves held, barrier episode "
		    "%llu with %u entries", g->held_changes,
		    (unsigned long long)g->episode, g->arrivals);
		for (i = 0; i < g->ncounted; i++)
			fprintf(f, "; count %d: %llu entries",
			    g->counted[i].count,
			    (unsigned long long)g->counted[i].entries);
		fprintf(f, "\n");
	}
}
