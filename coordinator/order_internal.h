/*
 * Between the files of the ordering core (order.h), nobody else: the held
 * events, tasks, channels and groups; the small helpers that every file
 * calls for every event, static inline here so that the split into files
 * costs the hot path no call; and what each file offers the others.
 * doc/ordering.md ("Files") says which file holds what.  A function
 * shared here is named order_*: the state model (state.c) has static
 * functions of the same short names for its own groups.
 */
#ifndef PMON_ORDER_INTERNAL_H
#define PMON_ORDER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "order.h"
#include "proto.h"
#include "record.h"

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
 * is often larger than the cache: order_release_head prefetches a node
 * before its task reaches it.
 */
struct order_node {
	/* The first cache line: what stepping and releasing it read. */
	struct order_node	*next;
	uint8_t			 flags;		/* EVENT_LOST for a marker */
	uint8_t			 kind;		/* enum node_kind */
	uint8_t			 below;		/* root of a tree: the flags
						   below gave it */
	uint8_t			 gs_chain;	/* the kind: enum gs_chain */
	uint8_t			 gs_fallback;	/* its request will not be seen:
						   order it by the heuristics */
	struct record		 rec;		/* group, peers: in bytes */
	uint64_t		 last;		/* last seq this event
						   accounts for */
	size_t			 extra;		/* bytes of group and peers */
	uint64_t		 below_seq;	/* and the send it matched */
	uint64_t		 added;		/* arrival number */
	uint64_t		 round;		/* rounds completed at
						   arrival */
	uint64_t		 prev_t;	/* raw time of the record
						   before: the begin of an
						   end */
	uint64_t		 gs_k;		/* the k-th request of its
						   kind the task sent pvmgs;
						   0: none */
	struct order_task	*task;
	struct order_group	*group;		/* kinds other than PLAIN */
	struct order_node	*gnext;		/* group's pending list */
	struct order_node	**gprevp;
	/* Group calls: begin and end on the reference timeline, and a bound
	   on their error (INT64_MAX: not known yet). */
	int64_t			 ref_begin, ref_end, ref_err;
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
	uint32_t		 started;	/* children started (or
						   ended) */
};

/*
 * A pvm_sendsig or pvm_kill of a task, for the signal it will deliver
 * (order_step_signal): noted at arrival, its time kept at release.
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

/*
 * A task.  Its first two cache lines (the structure is allocated on a
 * line, order_task_get) hold what the path of every event reads: the
 * lookup, its held events, where its sequence and its releases stand,
 * its channels and its clock; what groups, spawns, signals and losses
 * need comes after.  With thousands of tasks an event's task is rarely
 * in the cache (BENCHMARKS.md, "Scale").
 */
struct order_task {
	/* --- the path of every event --------------------------------- */
	int32_t			 tid;
	uint32_t		 host;
	struct order_task	*hnext;
	struct order_node	*head;
	struct order_node	**tailp;
	struct order_task	*wnext;
	uint64_t		 next_seq;	/* next seq expected */
	uint64_t		 released;	/* last seq released */
	/*
	 * The first seq that may be missing (UINT64_MAX: none): its sends
	 * and receives from there on cannot be counted on their channels
	 * (doc/ordering.md, "Losses").  uncounted: every record before it
	 * was released, order_task_uncounted ran.
	 */
	uint64_t		 lost_from;
	uint64_t		 watch_at;	/* the least of uncount_at,
						   and 0 while waiters_on or
						   spawn_pending: a release
						   at or past it looks
						   (task_watch) */
	uint64_t		 again_upto;	/* resumed: a coordinator before
						   may have released its
						   records up to this seq */
	/*
	 * The channels of its last point-to-point send and last receive: a
	 * task mostly talks to the same peer, and this saves the hash
	 * lookup.  order_chan_del clears them.
	 */
	struct order_chan	*out_chan;
	struct order_chan	*in_chan;
	struct order_chan	*waited;	/* those a receive waits on */
	struct clock_local	 clock;
	uint64_t		 last_raw;	/* raw time of the last added */
	size_t			 held;
	uint32_t		 waiters_on;	/* receives waiting for its
						   progress: the end of a send,
						   its records up to a time */
	int32_t			 wait_tid;	/* WAIT_CHAN: the sender */
	uint8_t			 wait;		/* enum task_wait */
	uint8_t			 queued;	/* on the worklist */
	uint8_t			 started;	/* an event was released */
	uint8_t			 registered;
	uint8_t			 ended;
	uint8_t			 server;	/* this task is pvmgs */
	uint8_t			 spawn_pending;	/* its parent's spawn begin is
						   kept for its first event */
	uint8_t			 waiting;	/* on its parent's waiters */
	int32_t			 parent_tid;
	uint64_t		 spawn_seq;

	/* --- the rest ------------------------------------------------- */
	int			 done;		/* ended, all released */
	uint64_t		 done_at;	/* then: order_task_done's
						   count */
	struct order_group	*wgroup;	/* WAIT_BARRIER, WAIT_STATE,
						   WAIT_CONFLICT */
	struct order_tasks	*waitq;		/* the list it is on */
	uint64_t		 visit;		/* depends_on() epoch */
	uint64_t		 lost;		/* records reported lost */
	uint64_t		 uncount_at;	/* lost_from - 1 until
						   uncounted */
	int			 uncounted;
	int			 absent;	/* unregistered when a round
						   looked for a message it
						   sent */
	uint64_t		 resumed_at;	/* order_task_resume's next_seq:
						   what it sent before went out
						   from another coordinator */
	int			 unmonitored;	/* pvmd lists it, pmon does not
						   instrument it: absent */
	struct order_spawn	*spawns;
	size_t			 nspawns, spawncap;
	struct order_notify	*notifies;
	size_t			 nnotifies;
	struct order_sig	*sigs;		/* signals sent to it */
	size_t			 nsigs;
	struct order_group	*bar_group;	/* the barrier it last
						   entered */
	int32_t			 bar_count;
	uint64_t		 bar_episode;
	struct order_tcoll	*tcoll;
	size_t			 ntcoll;
	struct order_group	*open_group;	/* a group call begun, not
						   ended */
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
	int			 exiting;	/* its pvm_exit began */
	uint64_t		 gs_sent[GS_CHAINS];	/* flagged ends added */
	uint64_t		 gs_released[GS_CHAINS]; /* the last released */
	uint64_t		 gs_served[GS_CHAINS];	/* server records */
	uint64_t		 gs_passed[GS_CHAINS];	/* the last the server's
							   order went past */
	struct order_chan	*outs;		/* every channel from it */
	struct order_chan	*ins;		/* every channel to it */
	struct order_below_sends *below_sent;	/* root of a tree: its sends
						   on subtree channels no
						   receive named yet */
	struct order_task	*waiters;	/* children awaiting a spawn */
	struct order_task	*next_waiter;
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
	/* The first cache line: the lookup, a send in, a receive's take. */
	int32_t			 src, dst, tag, ctx;
	struct order_chan	*hnext;
	struct order_task	*stask;		/* the sender */
	struct order_task	*waiter;	/* dst, blocked on this */
	struct order_sent	*sent;		/* a ring */
	size_t			 first, count;
	size_t			 cap;
	uint64_t		 debt;
	uint64_t		 paid;		/* seq + 1 of the last send a
						   debt took; 0: none */
	struct order_chan	*wnext, **wprevp;	/* stask->waited, while
							   waiter is set */
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
	int			 root_in;	/* the root's begin among
						   them */
	uint64_t		 corr;		/* latest begin's corrected
						   time */
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
	uint64_t		 corr[EPISODES_KEPT];	/* latest entry of a
							   batch */
};

/*
 * A request the group server took.  Those that change or read membership
 * (joins, leaves, broadcasts and gsize) make a chain: their
 * calls' ends are released in the order the server took them.
 */
struct order_gsreq {
	struct order_task	*client;
	uint64_t		 k;		/* the client's k-th of its
						   kind */
	uint64_t		 round;		/* rounds completed at
						   arrival */
	uint8_t			 chain;		/* enum gs_chain */
	uint8_t			 skipped;	/* given up waiting for its
						   call */
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
	uint64_t		 episode;	/* the open one; all before
						   closed */
	uint32_t		 arrivals;
	uint64_t		 ep_corr;	/* latest entry's corrected
						   time */
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

/* A tid's host field (PVM: 12 bits above the task's 18). */
#define ORDER_HOSTS		4096
#define order_tid_host(tid)	(((uint32_t)(tid) >> 18) & (ORDER_HOSTS - 1))

/*
 * The sends on subtree channels that the root of a tree released and no
 * receive has named yet, per sender, oldest first (order_tree.c): a
 * receive matched below takes its send's corrected time for its clock
 * from here, and a receive that an intermediate started after another
 * could not match (EVENT_RESUMED) is matched to the oldest send here to
 * its task, tag and context.  At most ORDER_BELOW_SENT of them: when
 * more wait, the oldest goes (its receive takes the sender's latest
 * time, `estimated'), and from then on the sender's sends are matched
 * here no more.
 */
#define ORDER_BELOW_SENT	256
struct order_below_send {
	uint64_t		 seq, raw, corr;
	uint32_t		 host;
	int32_t			 dst;		/* 0: a multicast */
	int32_t			 tag, ctx;
	uint8_t			 claimed;	/* a receive named it */
};
struct order_below_sends {
	struct order_below_send	*v;		/* a ring, grown to at most
						   ORDER_BELOW_SENT */
	size_t			 first, n, cap;
	int			 gap;		/* an unnamed one went */
};

/* Where an order stands in a tree of coordinators (order_set_subtree). */
enum order_level {
	LEVEL_ALONE,		/* one coordinator: everything */
	LEVEL_ROOT,		/* all but its subtrees' channels */
	LEVEL_SUBTREE		/* only its subtree's channels */
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
	uint64_t		 synced;	/* events added before it are
						   safe */
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
	uint8_t			 level;		/* enum order_level */
	int			 subtree;	/* LEVEL_SUBTREE: its number */
	order_subtree_cb	 subtree_of;
	void			*subtree_arg;
	uint64_t		 nestimated;	/* order_stats' estimated */
	uint64_t		 nrepaired;	/* ...and repaired */
	uint8_t			 host_away[ORDER_HOSTS / 8];	/* order_host_away */
};

/* --- helpers of every event ------------------------------------------- */

static inline void
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

static inline size_t
order_hash(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	h = (h ^ a) * 0xff51afd7ed558ccdULL;
	h = (h ^ b) * 0xc4ceb9fe1a85ec53ULL;
	h = (h ^ c) * 0xff51afd7ed558ccdULL;
	h = (h ^ d) * 0xc4ceb9fe1a85ec53ULL;
	return (size_t)(h ^ h >> 29);
}

static inline size_t
task_bucket(size_t nb, int32_t tid)
{
	return order_hash((uint32_t)tid, 0, 0, 0) & (nb - 1);
}

static inline size_t
chan_bucket(size_t nb, int32_t src, int32_t dst, int32_t tag, int32_t ctx)
{
	return order_hash((uint32_t)src, (uint32_t)dst, (uint32_t)tag,
	    (uint32_t)ctx) & (nb - 1);
}

static inline struct order_task *
task_find(const struct order *o, int32_t tid)
{
	struct order_task *t;

	for (t = o->tasks[task_bucket(o->ntaskb, tid)]; t != NULL;
	    t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

static inline int
chan_is(const struct order_chan *c, int32_t src, int32_t dst, int32_t tag,
    int32_t ctx)
{
	return c != NULL && c->src == src && c->dst == dst && c->tag == tag &&
	    c->ctx == ctx;
}

/*
 * Is the channel src -> dst this order's to match?  In a tree, a
 * subtree's own channels are its, all others the root's.
 */
static inline int
chan_mine(const struct order *o, int32_t src, int32_t dst)
{
	int k;

	if (o->level == LEVEL_ALONE)
		return 1;
	k = o->subtree_of(src, o->subtree_arg);
	if (o->level == LEVEL_SUBTREE)
		return k == o->subtree && k == o->subtree_of(dst,
		    o->subtree_arg);
	return k < 0 || k != o->subtree_of(dst, o->subtree_arg);
}

static inline struct order_chan *
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

static inline struct order_sent
chan_pop(struct order_chan *c)
{
	struct order_sent s = c->sent[c->first];

	c->first = (c->first + 1) % c->cap;
	c->count--;
	return s;
}

static inline void
work_push(struct order *o, struct order_task *t)
{
	if (t->queued || t->head == NULL)
		return;
	t->queued = 1;
	t->wnext = NULL;
	*o->worktail = t;
	o->worktail = &t->wnext;
}

static inline struct order_task *
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

/* Wakes every task waiting on the list: what they wait for changed. */
static inline void
wake_list(struct order *o, struct order_tasks *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		l->v[i]->waitq = NULL;
		work_push(o, l->v[i]);
	}
	l->n = 0;
}

/*
 * The sender's list of its channels that a receive waits on: waking
 * them looks at those, not at every channel it ever sent on (a master
 * that sent to 4096 workers).
 */
static inline void
chan_unwait(struct order_chan *c)
{
	if (c->wprevp == NULL)
		return;
	if ((*c->wprevp = c->wnext) != NULL)
		c->wnext->wprevp = c->wprevp;
	c->wprevp = NULL;
}

static inline void
wake_receiver(struct order *o, struct order_chan *c)
{
	struct order_task *t = c->waiter;

	if (t == NULL)
		return;
	c->waiter = NULL;
	chan_unwait(c);
	work_push(o, t);
}

/* A receive waits for t's progress: t's next release wakes it. */
static inline void
watch_task(struct order_task *t)
{
	t->waiters_on++;
	t->watch_at = 0;
}

static inline int
wait_chan(struct order *o, struct order_task *t, struct order_chan *c)
{
	/* On the sender's list exactly while a receiver waits. */
	if (c->waiter == NULL) {
		if ((c->wnext = c->stask->waited) != NULL)
			c->wnext->wprevp = &c->wnext;
		c->stask->waited = c;
		c->wprevp = &c->stask->waited;
	}
	c->waiter = t;
	set_wait(o, t, WAIT_CHAN);
	t->wait_tid = c->src;
	return 0;
}

static inline int
is_probe_hit(const struct record *r)
{
	return r->call == PMON_CALL_probe && r->phase == PMON_END &&
	    (r->flags & RECORD_MSG);
}

/* --- the group model's lookups ---------------------------------------- */

static inline int
group_has(const struct order_group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i] == tid)
			return 1;
	return 0;
}

/* The member with instance number inst, or 0. */
static inline int32_t
group_member_of(const struct order_group *g, int32_t inst)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->insts[i] == inst)
			return g->members[i];
	return 0;
}

/* The instance number of a member, or -1. */
static inline int32_t
group_inst(const struct order_group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i] == tid)
			return g->insts[i];
	return -1;
}

/* The group size a held gsize returned, or a freezegroup waited for. */
static inline size_t
size_target(const struct order_node *n)
{
	if (n->rec.call == PMON_CALL_gsize)
		return n->rec.rc < 0 ? 0 : (size_t)n->rec.rc;
	return (size_t)n->rec.inst;
}

/* Does the broadcast n list tid among its receivers? */
static inline int
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
static inline int
departed(const struct order_group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->ndeparted; i++)
		if (g->departed[i] == tid)
			return 1;
	return 0;
}

/*
 * How many flush rounds a group wait is given before it is judged: a join
 * or leave a broadcast saw may be recorded well after it (its task waits
 * for pvmgs, or for the CPU), and a round can be quick.
 */
#define PATIENCE_ROUNDS	ORDER_PATIENCE_ROUNDS

static inline int
patient(const struct order *o, const struct order_node *n, uint64_t mark)
{
	return n->added >= mark || o->rounds - n->round < PATIENCE_ROUNDS;
}

/* --- between the files ------------------------------------------------ */

/*
 * What the files call in each other, by file.  The order_step_*
 * functions try to release the head of a task, each of its kind, as
 * order_task_step does: 1 when they released it, 0 when it waits; force
 * releases it whatever it waits for.
 *
 * They are hidden: they are no interface of pmon, and under -fPIC the
 * compiler neither inlines a function that other objects see into the
 * callers in its own file nor calls it directly, since another object
 * might interpose it.  Hidden, they cost what they did when static.
 */
#pragma GCC visibility push(hidden)

/* order.c */
int	order_wait_on(struct order *, struct order_task *,
    struct order_tasks *, uint8_t what, struct order_group *);
void	order_wake_waiters_on(struct order *, struct order_task *);
int	order_release_head(struct order *, struct order_task *, uint8_t flags,
    int32_t match_tid, uint64_t match_seq, const struct clock_pred *pred);
int	order_release_plain(struct order *, struct order_task *,
    uint8_t flags);
int	order_task_step(struct order *, struct order_task *, int force);
void	order_run(struct order *);
struct order_task *order_task_get(struct order *, int32_t tid);

/* order_chans.c */
struct order_chan *order_chan_get(struct order *, int32_t src, int32_t dst,
    int32_t tag, int32_t ctx);
void	order_chan_del(struct order *, struct order_chan *);
void	order_push_sends(struct order *, struct order_task *,
    const struct record *, uint64_t corr);
void	order_retract_sends(struct order *, struct order_task *,
    const struct record *);
void	order_sends_settle(const struct order_task *, struct order_chan *);

/* order_recv.c */
int	order_release_unmatched(struct order *, struct order_task *);
int	order_step_recv(struct order *, struct order_task *, int force,
    int peek);
int	order_step_mbox_read(struct order *, struct order_task *, int force);
void	order_recv_judge(struct order *, uint64_t mark);

/* order_lost.c */
void	order_group_lossy(struct order *, struct order_group *);
void	order_task_uncounted(struct order *, struct order_task *);
void	order_lost_at(struct order *, struct order_task *, uint64_t seq);
int	order_recv_uncounted(struct order *, struct order_task *, int force);
int	order_release_uncounted(struct order *, struct order_task *);

/* order_groups.c */
struct order_group *order_group_get(struct order *, const char *name,
    uint8_t len);
void	order_group_join(struct order *, struct order_group *, int32_t tid,
    int32_t inst);
void	order_group_leave(struct order *, struct order_group *, int32_t tid);
int	order_state_allows(const struct order_node *);
void	order_forget_departed(struct order_group *,
    const struct order_node *);
void	order_groups_depart(struct order *, struct order_task *);
int	order_step_change(struct order *, struct order_task *, int force);
int	order_step_constrained(struct order *, struct order_task *, int force);
void	order_release_hopeless(struct order *, uint64_t mark, uint64_t stuck);

/* order_gs.c */
int	order_gs_chain_of_call(uint8_t call);
void	order_gs_advance(struct order *);
void	order_gs_add(struct order *, const struct record *);
int	order_gs_expected(const struct order *, struct order_node *);
int	order_step_served(struct order *, struct order_task *, int force);
void	order_gs_forget(struct order *, struct order_task *);
void	order_server_gone(struct order *);
void	order_gs_patience(struct order *, uint64_t mark, uint64_t stuck);

/* order_tree.c */
int	order_step_below(struct order *, struct order_task *, int force);
void	order_below_free(struct order_task *);
void	order_below_sent(struct order_task *, const struct record *,
    uint64_t corr);
int	order_subtree_step(struct order *, struct order_task *, int force);

/* order_coll.c */
void	order_barrier_try_close(struct order *, struct order_group *);
void	order_barrier_enter(struct order *, struct order_task *,
    struct order_node *, uint64_t corr);
void	order_coll_enter(struct order *, struct order_task *,
    struct order_node *, uint64_t corr);
void	order_coll_leave(struct order_task *);
int	order_step_barrier_out(struct order *, struct order_task *, int force);
int	order_step_coll_out(struct order *, struct order_task *, int force);

/* order_spawn.c */
void	order_spawn_note(struct order_task *, const struct record *,
    uint64_t corr);
void	order_spawn_ended(struct order_task *, const struct record *);
void	order_child_started(struct order *, struct order_task *);
void	order_notify_note(struct order_task *, const struct record *);
void	order_notifies_free(struct order_task *);
int	order_step_notify(struct order *, struct order_task *, int force);

/* order_signals.c */
void	order_sig_arrived(struct order *, struct order_task *,
    const struct record *);
void	order_sig_released(struct order *, struct order_task *,
    const struct record *, uint64_t corr);
int	order_step_signal(struct order *, struct order_task *, int force);

#pragma GCC visibility pop

#endif
