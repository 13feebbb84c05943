/*
 * The PVM execution simulator (sim.h).
 *
 * Generation is a discrete event simulation in true time.  Every task
 * runs a small program (a state machine per application kind) that
 * queues PVM calls; the engine carries each call out as PVM would:
 *
 *  - a message leaves at the begin of a send or multicast (at the end of
 *    a broadcast, whose members libgpvm3 learns during the call) and
 *    arrives after a random latency >= lmin, in FIFO order per (source,
 *    destination, tag, context);
 *  - a receive takes the earliest arrived message that matches its
 *    source, tag (-1 matches any) and context, or blocks until one comes;
 *  - joingroup, lvgroup, gsize and the membership a broadcast sees take
 *    effect at one instant inside the call (the group server serializes
 *    them); a task that exits or dies leaves its groups at that moment;
 *  - a barrier releases its members once count of them entered;
 *  - the group server, pvmgs, serves each of those calls and each barrier
 *    entry at that instant: the call's end says it sent a request
 *    (RECORD_GS), and an instrumented pvmgs writes a record then;
 *  - a notified task ending makes its pvmd send a message to the watcher.
 *
 * Records are stamped with the true time and turned into raw host clock
 * readings only when they are encoded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "sim.h"

#define NONE		UINT32_MAX
#define US		1000ULL
#define MS		1000000ULL
#define CLOCK_BASE	1700000000000000000ULL	/* raw clocks start here */
#define QMAX		64		/* queued calls of one task */
#define MAX_RECORDS	(64UL * 1024 * 1024)
#define PVM_NOPARENT	(-23)		/* PvmNoParent */

/* --- random numbers ----------------------------------------------------- */

struct rng {
	uint64_t	s;
};

static uint64_t
rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
rng_below(struct rng *r, uint64_t n)
{
	return n == 0 ? 0 : rng_next(r) % n;
}

/* Uniform in [lo, hi]. */
static uint64_t
rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

static double
rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

static int
rng_chance(struct rng *r, double p)
{
	return rng_unit(r) < p;
}

/* --- the execution's state -------------------------------------------- */

enum op_kind {
	OP_COMPUTE, OP_LOCAL, OP_SEND, OP_PSEND, OP_MCAST, OP_RECV,
	OP_PRECV, OP_TRECV, OP_NRECV, OP_PROBE, OP_SPAWN, OP_NOTIFY,
	OP_JOIN, OP_LEAVE, OP_BCAST, OP_GSIZE, OP_BARRIER, OP_EXIT
};

/* One PVM call a program asked for. */
struct op {
	uint8_t		kind;
	uint8_t		call;		/* OP_LOCAL: which */
	int32_t		peer;		/* destination, or source filter */
	int32_t		tag;
	int32_t		bytes;
	int32_t		count;		/* barrier count, spawn count */
	unsigned	gid;		/* group index */
	uint64_t	dur;		/* compute time, trecv timeout */
	uint32_t	list;		/* mcast/notify tids in the peers pool */
	uint16_t	nlist;
};

enum task_state {
	TS_NEW,		/* spawned, not started */
	TS_IDLE,	/* between calls */
	TS_CALL,	/* inside a call that will end by itself */
	TS_BLOCKED,	/* in a receive or a barrier */
	TS_EXITING,	/* pvm_exit ended, the process ends soon */
	TS_GONE		/* exited or killed */
};

enum app_kind { APP_RING, APP_MW, APP_TREE, APP_MCAST, APP_GROUP, APP_STORM };

struct app;

struct watch {
	uint32_t	watcher;
	int32_t		tag;
	int32_t		ctx;
};

struct stask {
	struct sim_task	 pub;
	size_t		 reccap;
	struct app	*app;
	uint32_t	 self;
	int		 role;		/* 0: the application's root */
	int		 slot;		/* index among the app's members */
	int		 level;		/* depth in a spawn tree */
	int		 pc, a, b, c;	/* program state */
	int		 mode;
	int		 in_g;		/* member of the app's group */
	enum task_state	 state;
	uint32_t	 token;		/* events carrying another are stale */
	struct op	 q[QMAX];
	int		 qhead, qn;
	struct op	 cur;
	uint32_t	 cur_begin;	/* record index of cur's begin */
	int		 gs_sent;	/* cur sent pvmgs a request */
	uint64_t	 cur_end;	/* group calls: when cur ends */
	int		 kill_pending;
	int32_t		 ctx;
	int32_t		 bufids;
	/* What the last call got. */
	int		 last_got;	/* a message (or a probe hit) */
	uint32_t	 last_msg;
	int32_t		 last_rc;
	uint32_t	*inbox;		/* arrived messages, in order */
	size_t		 ninbox, inboxcap;
	uint32_t	*kids;
	size_t		 nkids, kidcap;
	struct watch	*watchers;
	size_t		 nwatchers, watchcap;
};

struct app {
	enum app_kind	 kind;
	int		 id;
	int32_t		 tagbase;
	int32_t		 ctx;
	double		 kill_p;
	uint64_t	 kill_window;
	int		 n;		/* members wanted */
	uint32_t	*members;	/* task indexes by slot */
	int		 nmembers;
	size_t		 membercap;
	int		 rounds, tokens, use_p;
	double		 wild;
	/* master/worker */
	int		 items_left;
	int		*outstanding;
	uint8_t		*stopped, *gone;
	/* spawn tree */
	int		 depth, fanout, fixed;
	/* multicast plan: sender slot and a list of slots per round */
	int		*mc_sender;
	int		*mc_list;	/* rounds x mc_max */
	int		*mc_nlist;
	int		 mc_max;
	/* groups */
	unsigned	 g, bar;
	int		 iters, bar_every;
	struct app	*next;
};

struct sgroup {
	char		 name[16];
	uint32_t	*members;
	int32_t		*inst;
	size_t		 n, cap;
	/* The open barrier episode. */
	int		 open;
	size_t		 ep;
	int32_t		 count;
	struct sim_entry *entries;
	size_t		 nentries, entcap;
};

enum ev_type {
	EV_STEP, EV_END, EV_LIN, EV_ARRIVE, EV_TIMEOUT, EV_KILL, EV_GONE
};

struct sev {
	uint64_t	t;
	uint64_t	ord;
	uint8_t		type;
	uint32_t	a, b;
};

struct chanlast {
	int32_t		src, dst, tag, ctx;
	uint64_t	last;
	int		used;
};

/* Delivery state per task and per host. */
struct dtask {
	size_t		cursor;
	int		announced, ended;
	uint64_t	detect;
};

struct batch {
	uint64_t	arrive;
	size_t		first, n;
	int		round;		/* answers the flush round */
};

struct dhost {
	uint64_t	next_drain;
	struct batch	*q;
	size_t		qhead, qn, qcap;
	uint64_t	last_arrival;
	uint64_t	flush_at;	/* UINT64_MAX: no flush asked */
};

struct sim {
	struct sim_params p;
	struct rng	 rng;
	struct stask	*tasks;
	size_t		 ntasks, taskcap;
	uint32_t	**bytid;	/* per host: local tid part -> task */
	size_t		*nbytid, *bytidcap;
	struct sim_host	*hosts;
	size_t		 nhosts;
	struct sim_msg	*msgs;
	uint8_t		*mstate;	/* 1 arrived, 2 taken, 3 discarded */
	size_t		 nmsgs, msgcap, mstatecap;
	int32_t		*peers;
	size_t		 npeers, peercap;
	struct sim_episode *eps;
	size_t		 neps, epcap;
	struct sim_entry *entries;
	size_t		 nentries, entrycap;
	struct sgroup	*groups;
	size_t		 ngroups;
	struct app	*apps;
	int		 napps;
	struct sev	*heap;
	size_t		 nheap, heapcap;
	uint64_t	 ord;
	uint64_t	 now;
	uint64_t	 t_last;	/* last record's true time */
	struct chanlast	*chans;
	size_t		 nchans, chancap;
	size_t		 nrecords;
	size_t		 nstalled;	/* tasks neither blocked nor gone */
	uint32_t	 gs;		/* the group server, NONE: none */
	int		 nomem;
	/* delivery */
	struct rng	 drng;
	struct dtask	*dt;
	struct dhost	*dh;
	struct sim_act	*pool;
	size_t		 npool, poolcap;
};

static void	*xgrow(struct sim *, void *, size_t *, size_t, size_t);

/*
 * Makes room for one more element in a growing array.  Out of memory is
 * remembered and the caller's array stays as it was.
 */
#define GROW(s, arr, n, cap)						\
	((n) < (cap) || ((arr) = xgrow((s), (arr), &(cap), (n) + 1,	\
	    sizeof(*(arr)))) != NULL)

static void *
xgrow(struct sim *s, void *arr, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	while (ncap < need)
		ncap *= 2;
	if ((p = realloc(arr, ncap * size)) == NULL) {
		s->nomem = 1;
		free(arr);
		*cap = 0;
		return NULL;
	}
	*cap = ncap;
	return p;
}

/* --- names -------------------------------------------------------------- */

static const char *const scenario_names[SIM_NSCENARIOS] = {
	"ring", "mw", "spawn", "mcast", "group", "death", "mixed", "bench",
	"storm"
};

const char *
sim_scenario_name(enum sim_scenario sc)
{
	return (unsigned)sc < SIM_NSCENARIOS ? scenario_names[sc] : "unknown";
}

int
sim_scenario_lookup(const char *name)
{
	int i;

	for (i = 0; i < SIM_NSCENARIOS; i++)
		if (strcmp(name, scenario_names[i]) == 0)
			return i;
	return -1;
}

void
sim_params_default(struct sim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->seed = 1;
	p->scenario = SIM_MIXED;
	p->scale = 1;
	p->notify = 1;
	p->kills = -1;
	p->gs_server = -1;
	p->lmin_ns = 20 * US;
}

/* --- the event heap ----------------------------------------------------- */

static int
ev_less(const struct sev *x, const struct sev *y)
{
	return x->t < y->t || (x->t == y->t && x->ord < y->ord);
}

static void
ev_push(struct sim *s, uint64_t t, int type, uint32_t a, uint32_t b)
{
	struct sev e = { t, s->ord++, (uint8_t)type, a, b }, tmp;
	size_t i;

	if (!GROW(s, s->heap, s->nheap, s->heapcap))
		return;
	i = s->nheap++;
	s->heap[i] = e;
	while (i > 0 && ev_less(&s->heap[i], &s->heap[(i - 1) / 2])) {
		tmp = s->heap[i];
		s->heap[i] = s->heap[(i - 1) / 2];
		s->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct sev
ev_pop(struct sim *s)
{
	struct sev top = s->heap[0], tmp;
	size_t i = 0, l, m;

	s->heap[0] = s->heap[--s->nheap];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < s->nheap && ev_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && ev_less(&s->heap[l + 1], &s->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		tmp = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = tmp;
		i = m;
	}
	return top;
}

/* Schedules an event the task waits for; a newer token makes it stale. */
static void
task_at(struct sim *s, struct stask *t, uint64_t when, int type)
{
	ev_push(s, when, type, t->self, t->token);
}

/* --- tasks and records -------------------------------------------------- */

static uint32_t
host_of_tid(int32_t tid)
{
	return (((uint32_t)tid >> 18) & 0xfff) - 1;
}

uint32_t
sim_host_number(size_t h)
{
	return (uint32_t)h + 1;
}

/* A new task on host with the next tid there, zeroed; NONE: no memory. */
static uint32_t
task_slot(struct sim *s, uint32_t host)
{
	struct stask *t;
	uint32_t idx;
	size_t local;

	if (!GROW(s, s->tasks, s->ntasks, s->taskcap) ||
	    !GROW(s, s->bytid[host], s->nbytid[host], s->bytidcap[host]))
		return NONE;
	local = s->nbytid[host]++;
	idx = (uint32_t)s->ntasks++;
	s->bytid[host][local] = idx;
	t = &s->tasks[idx];
	memset(t, 0, sizeof(*t));
	t->self = idx;
	t->pub.tid = (int32_t)((host + 1) << 18 | (uint32_t)(local + 1));
	t->pub.host = host;
	return idx;
}

static uint32_t
task_new(struct sim *s, uint32_t host, uint32_t parent, uint64_t spawn_seq,
    struct app *app, int role)
{
	struct stask *t;
	uint32_t idx;

	if (!GROW(s, app->members, (size_t)app->nmembers, app->membercap) ||
	    (idx = task_slot(s, host)) == NONE)
		return NONE;
	t = &s->tasks[idx];
	t->pub.parent = parent;
	t->pub.parent_tid = parent == NONE ? 0 : s->tasks[parent].pub.tid;
	t->pub.spawn_seq = spawn_seq;
	t->pub.t_end = UINT64_MAX;
	t->app = app;
	t->role = role;
	t->ctx = app->ctx;
	t->state = TS_NEW;
	t->slot = app->nmembers;
	app->members[app->nmembers++] = idx;
	return idx;
}

/*
 * A new record of t with the fields call_enter() starts from.  Returns
 * its index, or NONE when out of memory.
 */
static uint32_t
rec_new(struct sim *s, struct stask *t, uint8_t call, uint8_t phase)
{
	struct sim_rec *r;

	if (s->nrecords >= MAX_RECORDS ||
	    !GROW(s, t->pub.recs, t->pub.nrecs, t->reccap)) {
		s->nomem = 1;
		return NONE;
	}
	r = &t->pub.recs[t->pub.nrecs];
	memset(r, 0, sizeof(*r));
	r->t_true = s->now;
	r->call = call;
	r->phase = phase;
	r->peer = r->tag = r->ctx = r->bytes = r->inst = -1;
	s->nrecords++;
	if (s->now > s->t_last)
		s->t_last = s->now;
	return (uint32_t)t->pub.nrecs++;
}

/* The end record of the current call: the begin's fields, then rc. */
static struct sim_rec *
rec_end(struct sim *s, struct stask *t, int32_t rc)
{
	struct sim_rec *r;
	uint32_t i;

	if ((i = rec_new(s, t, t->cur.call, PMON_END)) == NONE)
		return NULL;
	r = &t->pub.recs[i];
	*r = t->pub.recs[t->cur_begin];
	r->phase = PMON_END;
	r->t_true = s->now;
	r->npeers = 0;
	r->peers = 0;
	r->msg = 0;
	r->rc = rc;
	return r;
}

static uint32_t
peers_add(struct sim *s, const int32_t *tids, size_t n)
{
	uint32_t first = (uint32_t)s->npeers;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!GROW(s, s->peers, s->npeers, s->peercap))
			return 0;
		s->peers[s->npeers++] = tids[i];
	}
	return first;
}

static uint64_t
latency(struct sim *s)
{
	double u = rng_unit(&s->rng);

	/* Mostly near the minimum, some up to lmin + 480 us. */
	return s->p.lmin_ns + (uint64_t)(u * u * u * 480.0 * US) +
	    rng_below(&s->rng, 2 * US);
}

static struct chanlast *
chan_last(struct sim *s, int32_t src, int32_t dst, int32_t tag, int32_t ctx)
{
	size_t i, h;
	struct chanlast *c;

	if (s->nchans * 2 >= s->chancap) {
		struct chanlast *old = s->chans;
		size_t ocap = s->chancap, ncap = ocap ? ocap * 2 : 256;

		if ((s->chans = calloc(ncap, sizeof(*s->chans))) == NULL) {
			s->nomem = 1;
			s->chans = old;
			return NULL;
		}
		s->chancap = ncap;
		s->nchans = 0;
		for (i = 0; i < ocap; i++)
			if (old[i].used) {
				c = chan_last(s, old[i].src, old[i].dst,
				    old[i].tag, old[i].ctx);
				c->last = old[i].last;
			}
		free(old);
	}
	h = ((uint64_t)(uint32_t)src * 0x9e3779b97f4a7c15ULL ^
	    (uint64_t)(uint32_t)dst * 0xc2b2ae3d27d4eb4fULL ^
	    (uint64_t)(uint32_t)tag * 0x165667b19e3779f9ULL ^
	    (uint64_t)(uint32_t)ctx) % s->chancap;
	for (;; h = (h + 1) % s->chancap) {
		c = &s->chans[h];
		if (!c->used) {
			c->used = 1;
			c->src = src;
			c->dst = dst;
			c->tag = tag;
			c->ctx = ctx;
			c->last = 0;
			s->nchans++;
			return c;
		}
		if (c->src == src && c->dst == dst && c->tag == tag &&
		    c->ctx == ctx)
			return c;
	}
}

/*
 * Sends a message that leaves now.  src is a task index, or NONE for a
 * pvmd (src_tid names it).  The channel stays FIFO.
 */
static void
msg_send(struct sim *s, uint32_t src, int32_t src_tid, uint32_t dst,
    int32_t tag, int32_t ctx, uint32_t send_rec, uint32_t notify_of)
{
	struct sim_msg *m;
	struct chanlast *c;
	uint64_t arrive = s->now + latency(s);

	if ((c = chan_last(s, src_tid, s->tasks[dst].pub.tid, tag, ctx)) ==
	    NULL)
		return;
	if (arrive <= c->last)
		arrive = c->last + 1;
	c->last = arrive;
	if (!GROW(s, s->msgs, s->nmsgs, s->msgcap) ||
	    !GROW(s, s->mstate, s->nmsgs, s->mstatecap))
		return;
	m = &s->msgs[s->nmsgs];
	m->src = src;
	m->dst = dst;
	m->src_tid = src_tid;
	m->tag = tag;
	m->ctx = ctx;
	m->send_rec = send_rec;
	m->notify_of = notify_of;
	m->t_depart = s->now;
	m->t_arrive = arrive;
	s->mstate[s->nmsgs] = 0;
	ev_push(s, arrive, EV_ARRIVE, (uint32_t)s->nmsgs, 0);
	s->nmsgs++;
}

static int
msg_matches(const struct sim *s, uint32_t mi, int32_t src, int32_t tag,
    int32_t ctx)
{
	const struct sim_msg *m = &s->msgs[mi];

	return (src == -1 || m->src_tid == src) &&
	    (tag == -1 || m->tag == tag) && m->ctx == ctx;
}

/* The position in t's inbox of the first message cur can take, or -1. */
static long
inbox_find(const struct sim *s, const struct stask *t)
{
	size_t i;

	for (i = 0; i < t->ninbox; i++)
		if (msg_matches(s, t->inbox[i], t->cur.peer, t->cur.tag,
		    t->ctx))
			return (long)i;
	return -1;
}

static uint32_t
inbox_take(struct sim *s, struct stask *t, long at)
{
	uint32_t mi = t->inbox[at];

	memmove(&t->inbox[at], &t->inbox[at + 1],
	    (t->ninbox - (size_t)at - 1) * sizeof(*t->inbox));
	t->ninbox--;
	s->mstate[mi] = 2;
	return mi;
}

/* --- groups ------------------------------------------------------------- */

static unsigned
group_new(struct sim *s, const char *prefix, int id)
{
	struct sgroup *g;
	struct sgroup *ng;

	if ((ng = realloc(s->groups, (s->ngroups + 1) * sizeof(*ng))) ==
	    NULL) {
		s->nomem = 1;
		return 0;
	}
	s->groups = ng;
	g = &s->groups[s->ngroups];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s%d", prefix, id);
	return (unsigned)s->ngroups++;
}

static long
group_find(const struct sgroup *g, uint32_t task)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->members[i] == task)
			return (long)i;
	return -1;
}

/* Joins with the lowest free instance number, as the group server does. */
static int32_t
group_join(struct sim *s, struct sgroup *g, uint32_t task)
{
	int32_t inst;
	size_t i;

	if (group_find(g, task) >= 0)
		return -18;		/* PvmDupGroup */
	for (inst = 0;; inst++) {
		for (i = 0; i < g->n && g->inst[i] != inst; i++)
			;
		if (i == g->n)
			break;
	}
	if (g->n == g->cap) {
		size_t ncap = g->cap ? 2 * g->cap : 8;
		uint32_t *m = realloc(g->members, ncap * sizeof(*m));
		int32_t *in;

		if (m == NULL) {
			s->nomem = 1;
			return -10;
		}
		g->members = m;
		if ((in = realloc(g->inst, ncap * sizeof(*in))) == NULL) {
			s->nomem = 1;
			return -10;
		}
		g->inst = in;
		g->cap = ncap;
	}
	g->members[g->n] = task;
	g->inst[g->n] = inst;
	g->n++;
	return inst;
}

static int
group_leave(struct sgroup *g, uint32_t task)
{
	long at = group_find(g, task);

	if (at < 0)
		return -19;		/* PvmNotInGroup */
	g->members[at] = g->members[g->n - 1];
	g->inst[at] = g->inst[g->n - 1];
	g->n--;
	return 0;
}

/* The members but one, in instance order (libgpvm3's tid list). */
static size_t
group_others(const struct sim *s, const struct sgroup *g, uint32_t except,
    int32_t *out)
{
	size_t i, n = 0;
	int32_t inst, best;
	long pick;

	for (inst = -1;;) {
		pick = -1;
		best = INT32_MAX;
		for (i = 0; i < g->n; i++)
			if (g->inst[i] > inst && g->inst[i] < best) {
				best = g->inst[i];
				pick = (long)i;
			}
		if (pick < 0)
			break;
		inst = best;
		if (g->members[pick] != except)
			out[n++] = s->tasks[g->members[pick]].pub.tid;
	}
	return n;
}

/* Opens a barrier episode of a group at its first entry. */
static int
episode_open(struct sim *s, struct sgroup *g, unsigned gid, int32_t count)
{
	struct sim_episode *e;

	if (!GROW(s, s->eps, s->neps, s->epcap))
		return -1;
	e = &s->eps[s->neps];
	memset(e, 0, sizeof(*e));
	e->group = (uint8_t)(gid + 1);
	e->count = count;
	g->ep = s->neps++;
	g->open = 1;
	g->count = count;
	g->nentries = 0;
	return 0;
}

/* Files the entries of the released (or, at the end, the open) episode. */
static void
episode_close(struct sim *s, struct sgroup *g)
{
	struct sim_episode *e;
	size_t i;

	if (!g->open)
		return;
	e = &s->eps[g->ep];
	e->nentries = (uint32_t)g->nentries;
	e->first = (uint32_t)s->nentries;
	for (i = 0; i < g->nentries; i++) {
		if (!GROW(s, s->entries, s->nentries, s->entrycap))
			return;
		s->entries[s->nentries++] = g->entries[i];
	}
	g->open = 0;
	g->nentries = 0;
}

/* --- the group server ---------------------------------------------------- */

/*
 * Starts an instrumented pvmgs on a random host when the execution uses
 * groups and the parameters (or the seed) want one.  It draws from its
 * own random numbers: the applications run as they would without it.
 * It waits for requests until the end, and never ends.
 */
static void
server_new(struct sim *s)
{
	struct rng r = { s->p.seed ^ 0x6a09e667f3bcc909ULL };
	struct stask *t;
	uint32_t host, idx;
	int on;

	on = s->p.gs_server == -1 ? rng_below(&r, 4) != 0 : s->p.gs_server;
	host = (uint32_t)rng_below(&r, s->nhosts);
	if (!on || s->ngroups == 0 || (idx = task_slot(s, host)) == NONE)
		return;
	t = &s->tasks[idx];
	t->slot = -1;
	t->pub.parent = NONE;
	t->pub.t_end = UINT64_MAX;
	t->pub.group_server = 1;
	t->state = TS_BLOCKED;
	s->gs = idx;
}

/*
 * The current call of t sent pvmgs a request, which pvmgs serves now:
 * the server's record of it, when the server is instrumented.
 */
static void
gs_record(struct sim *s, struct stask *t, int32_t code, int32_t bytes)
{
	struct sim_rec *r;
	uint32_t i;

	if (s->gs == NONE ||
	    (i = rec_new(s, &s->tasks[s->gs], PMON_CALL_recv, PMON_END)) ==
	    NONE)
		return;
	r = &s->tasks[s->gs].pub.recs[i];
	r->flags = RECORD_MSG | RECORD_GS;
	r->rc = 1;		/* pvmgs frees each request's buffer */
	r->peer = t->pub.tid;
	r->tag = code;
	r->ctx = PMON_GS_CTX;
	r->bytes = bytes;
}

static void
gs_request(struct sim *s, struct stask *t, int32_t code)
{
	t->gs_sent = 1;
	gs_record(s, t, code, 16);
}

/*
 * pvmgs hears from pvmd (a DEADTID notify) that a task it had in a group
 * is gone, and drops it: its record names the dead task.
 */
static void
gs_dead(struct sim *s, struct stask *t)
{
	gs_record(s, t, PMON_GS_DEADTID, 4);
}

/* --- running calls -------------------------------------------------------- */

static void	task_gone(struct sim *, struct stask *);
static void	program(struct sim *, struct stask *);

static uint64_t
gap(struct sim *s)
{
	return rng_range(&s->rng, 200, 5 * US);
}

static int32_t
bufid(struct stask *t)
{
	return ++t->bufids;
}

/* A message reached its destination. */
static void
arrive(struct sim *s, uint32_t mi)
{
	struct stask *t = &s->tasks[s->msgs[mi].dst];
	long at;

	if (t->state == TS_GONE || t->state == TS_EXITING) {
		s->mstate[mi] = 3;
		return;
	}
	s->mstate[mi] = 1;
	if (!GROW(s, t->inbox, t->ninbox, t->inboxcap))
		return;
	t->inbox[t->ninbox++] = mi;
	if (t->state != TS_BLOCKED || t->cur.kind == OP_BARRIER)
		return;
	if ((at = inbox_find(s, t)) < 0)
		return;
	t->last_msg = inbox_take(s, t, at);
	t->last_got = 1;
	t->token++;
	t->state = TS_CALL;
	task_at(s, t, s->now + rng_range(&s->rng, 2 * US, 10 * US), EV_END);
}

static void
fill_msg_end(struct sim *s, struct stask *t, struct sim_rec *r)
{
	const struct sim_msg *m = &s->msgs[t->last_msg];

	r->flags |= RECORD_MSG;
	r->peer = m->src_tid;
	r->tag = m->tag;
	r->ctx = m->ctx;
	r->bytes = m->src == NONE ? 4 :
	    s->tasks[m->src].pub.recs[m->send_rec].bytes;
	r->msg = t->last_msg + 1;
}

/* Starts a receive-like call: takes or peeks at a message if one is in. */
static void
start_recv(struct sim *s, struct stask *t)
{
	long at = inbox_find(s, t);
	uint64_t d = rng_range(&s->rng, 2 * US, 10 * US);

	t->last_got = 0;
	if (at >= 0) {
		t->last_got = 1;
		if (t->cur.kind == OP_PROBE)
			t->last_msg = t->inbox[at];
		else
			t->last_msg = inbox_take(s, t, at);
		task_at(s, t, s->now + d, EV_END);
		return;
	}
	switch (t->cur.kind) {
	case OP_NRECV:
	case OP_PROBE:
		task_at(s, t, s->now + d, EV_END);
		return;
	case OP_TRECV:
		t->state = TS_BLOCKED;
		task_at(s, t, s->now + t->cur.dur, EV_TIMEOUT);
		return;
	default:
		t->state = TS_BLOCKED;
		return;
	}
}

/* Spawns the children of t's current spawn call on random hosts. */
static void
start_spawn(struct sim *s, uint32_t self)
{
	uint64_t last = s->now, start;
	struct stask *t = &s->tasks[self];
	uint32_t kid;
	int i;

	for (i = 0; i < t->cur.count; i++) {
		kid = task_new(s, (uint32_t)rng_below(&s->rng, s->nhosts),
		    self, t->cur_begin + 1, t->app, 1);
		t = &s->tasks[self];	/* the task array may have moved */
		if (kid == NONE ||
		    !GROW(s, t->kids, t->nkids, t->kidcap))
			return;
		t->kids[t->nkids++] = kid;
		s->tasks[kid].level = t->level + 1;
		start = s->now + rng_range(&s->rng, 500 * US, 3 * MS);
		if (start > last)
			last = start;
		task_at(s, &s->tasks[kid], start, EV_STEP);
		if (rng_chance(&s->rng, t->app->kill_p))
			ev_push(s, start + rng_below(&s->rng,
			    t->app->kill_window), EV_KILL, kid, 0);
	}
	task_at(s, t, last + rng_range(&s->rng, 20 * US, 200 * US), EV_END);
}

/* pvm_notify(PvmTaskExit): a task already gone is reported at once. */
static void
start_notify(struct sim *s, struct stask *t)
{
	struct stask *x;
	uint32_t xi;
	unsigned i;

	for (i = 0; i < t->cur.nlist; i++) {
		xi = (uint32_t)sim_task_index(s, s->peers[t->cur.list + i]);
		x = &s->tasks[xi];
		if (x->state == TS_GONE) {
			msg_send(s, NONE, (int32_t)(0x80000000u |
			    (x->pub.host + 1) << 18), t->self, t->cur.tag,
			    t->ctx, 0, xi);
			continue;
		}
		if (!GROW(s, x->watchers, x->nwatchers, x->watchcap))
			return;
		x->watchers[x->nwatchers].watcher = t->self;
		x->watchers[x->nwatchers].tag = t->cur.tag;
		x->watchers[x->nwatchers].ctx = t->ctx;
		x->nwatchers++;
	}
	task_at(s, t, s->now + rng_range(&s->rng, 5 * US, 30 * US), EV_END);
}

/* Sends a message to each distinct destination of a list but self. */
static void
send_list(struct sim *s, struct stask *t, uint32_t list, size_t n,
    uint32_t rec)
{
	size_t i, j;
	int32_t d;

	for (i = 0; i < n; i++) {
		d = s->peers[list + i];
		for (j = 0; j < i && s->peers[list + j] != d; j++)
			;
		if (j < i || d == t->pub.tid)
			continue;
		msg_send(s, t->self, t->pub.tid,
		    (uint32_t)sim_task_index(s, d), t->cur.tag, t->ctx, rec,
		    NONE);
	}
}

/* Begins the current call of t at s->now. */
static void
start_op(struct sim *s, struct stask *t)
{
	struct op *op = &t->cur;
	struct sim_rec *r;
	uint32_t i;

	t->gs_sent = 0;
	if (op->kind == OP_COMPUTE) {
		t->state = TS_IDLE;
		task_at(s, t, s->now + op->dur, EV_STEP);
		return;
	}
	if ((i = rec_new(s, t, op->call, PMON_BEGIN)) == NONE)
		return;
	t->cur_begin = i;
	r = &t->pub.recs[i];
	t->state = TS_CALL;
	switch (op->kind) {
	case OP_LOCAL:
		r->bytes = op->bytes;
		task_at(s, t, s->now + rng_range(&s->rng, 300, 3 * US),
		    EV_END);
		break;
	case OP_SEND:
	case OP_PSEND:
		r->peer = op->peer;
		r->tag = op->tag;
		r->ctx = t->ctx;
		r->bytes = op->bytes;
		msg_send(s, t->self, t->pub.tid,
		    (uint32_t)sim_task_index(s, op->peer), op->tag, t->ctx, i,
		    NONE);
		task_at(s, t, s->now + rng_range(&s->rng, 2 * US, 20 * US),
		    EV_END);
		break;
	case OP_MCAST:
		r->tag = op->tag;
		r->ctx = t->ctx;
		r->bytes = op->bytes;
		r->peers = op->list;
		r->npeers = op->nlist;
		send_list(s, t, op->list, op->nlist, i);
		task_at(s, t, s->now + rng_range(&s->rng, 5 * US, 40 * US),
		    EV_END);
		break;
	case OP_RECV:
	case OP_PRECV:
	case OP_TRECV:
	case OP_NRECV:
	case OP_PROBE:
		r->peer = op->peer;
		r->tag = op->tag;
		r->ctx = t->ctx;
		start_recv(s, t);
		break;
	case OP_SPAWN:
		start_spawn(s, t->self);
		return;
	case OP_NOTIFY:
		r->tag = op->tag;
		r->inst = 1;	/* PvmTaskExit: what the preload records */
		r->peer = op->nlist > 0 ? s->peers[op->list] : -1;
		r->peers = op->list;
		r->npeers = op->nlist;
		start_notify(s, t);
		break;
	case OP_JOIN:
	case OP_LEAVE:
	case OP_GSIZE:
	case OP_BCAST:
		r->group = (uint8_t)(op->gid + 1);
		if (op->kind == OP_BCAST) {
			r->tag = op->tag;
			r->ctx = t->ctx;
			r->bytes = op->bytes;
		}
		/* The group server acts at one instant inside the call. */
		t->cur_end = s->now + rng_range(&s->rng, 50 * US, 400 * US);
		task_at(s, t, s->now + 1 + rng_below(&s->rng,
		    t->cur_end - s->now - 1), EV_LIN);
		break;
	case OP_BARRIER:
		r->group = (uint8_t)(op->gid + 1);
		r->inst = op->count;
		task_at(s, t, s->now + rng_range(&s->rng, 5 * US, 50 * US),
		    EV_LIN);
		break;
	case OP_EXIT:
		task_at(s, t, s->now + rng_range(&s->rng, 5 * US, 50 * US),
		    EV_END);
		break;
	}
}

/*
 * The instant a group call takes effect: pvmgs serves its request (a
 * barrier's: the entry).  Requests are served in the order of these
 * instants, which is the order of the server's records.
 */
static void
lin_point(struct sim *s, struct stask *t)
{
	static const int32_t codes[] = {
		[OP_JOIN] = PMON_GS_JOIN, [OP_LEAVE] = PMON_GS_LEAVE,
		[OP_BCAST] = PMON_GS_BCAST, [OP_GSIZE] = PMON_GS_GSIZE,
		[OP_BARRIER] = PMON_GS_BARRIER
	};
	struct sgroup *g = &s->groups[t->cur.gid];
	struct sim_entry *e;
	int32_t tids[RECORD_PEERS_MAX];
	size_t i, n;

	if (t->cur.kind >= OP_JOIN && t->cur.kind <= OP_BARRIER)
		gs_request(s, t, codes[t->cur.kind]);
	switch (t->cur.kind) {
	case OP_JOIN:
		t->last_rc = group_join(s, g, t->self);
		break;
	case OP_LEAVE:
		t->last_rc = group_leave(g, t->self);
		break;
	case OP_GSIZE:
		t->last_rc = (int32_t)g->n;
		break;
	case OP_BCAST:
		n = group_others(s, g, t->self, tids);
		t->cur.list = peers_add(s, tids, n);
		t->cur.nlist = (uint16_t)n;
		t->last_rc = 0;
		break;
	case OP_BARRIER:
		if (!g->open &&
		    episode_open(s, g, t->cur.gid, t->cur.count) == -1)
			return;
		if (!GROW(s, g->entries, g->nentries, g->entcap))
			return;
		e = &g->entries[g->nentries++];
		e->task = t->self;
		e->rec = t->cur_begin;
		t->pub.recs[t->cur_begin].episode = (uint32_t)g->ep + 1;
		t->state = TS_BLOCKED;
		if ((int32_t)g->nentries < g->count) {
			if (t->kill_pending) {
				task_gone(s, t);
				t->pub.killed = 1;
			}
			return;
		}
		/* Released: every member waiting here leaves. */
		for (i = 0; i < g->nentries; i++) {
			struct stask *m = &s->tasks[g->entries[i].task];

			if (m->state != TS_BLOCKED)
				continue;
			m->state = TS_CALL;
			task_at(s, m, s->now + latency(s), EV_END);
		}
		episode_close(s, g);
		return;
	default:
		return;
	}
	task_at(s, t, t->cur_end, EV_END);
}

/* The current call of t ends now: its end record, then what follows. */
static int32_t	tid_of(const struct sim *, uint32_t);

static void
end_op(struct sim *s, struct stask *t, int timeout)
{
	struct op *op = &t->cur;
	int32_t kids[RECORD_PEERS_MAX];
	struct sim_rec *r;
	int32_t rc = 0;
	size_t k;

	switch (op->kind) {
	case OP_LOCAL:
		rc = op->call == PMON_CALL_mytid ? t->pub.tid :
		    op->call == PMON_CALL_parent ? (t->pub.parent_tid ?
		    t->pub.parent_tid : PVM_NOPARENT) :
		    op->call == PMON_CALL_initsend ? bufid(t) : 0;
		break;
	case OP_RECV:
	case OP_TRECV:
	case OP_NRECV:
	case OP_PROBE:
		if (timeout)
			t->last_got = 0;
		rc = t->last_got ? bufid(t) : 0;
		break;
	case OP_SPAWN:
		rc = (int32_t)op->count;
		break;
	case OP_JOIN:
	case OP_LEAVE:
	case OP_GSIZE:
	case OP_BCAST:
		rc = t->last_rc;
		break;
	default:
		break;
	}
	t->last_rc = rc;
	if ((r = rec_end(s, t, rc)) == NULL)
		return;
	if (t->gs_sent)
		r->flags |= RECORD_GS;
	switch (op->kind) {
	case OP_RECV:
	case OP_TRECV:
	case OP_NRECV:
	case OP_PROBE:
	case OP_PRECV:
		if (t->last_got)
			fill_msg_end(s, t, r);
		break;
	case OP_SPAWN:
		for (k = 0; k < (size_t)op->count; k++)
			kids[k] = tid_of(s, t->kids[t->nkids -
			    (size_t)op->count + k]);
		r->peers = peers_add(s, kids, k);
		r->npeers = (uint16_t)k;
		break;
	case OP_JOIN:
		r->inst = rc;
		break;
	case OP_BCAST:
		r->peers = op->list;
		r->npeers = op->nlist;
		send_list(s, t, op->list, op->nlist,
		    (uint32_t)t->pub.nrecs - 1);
		break;
	case OP_BARRIER:
		r->episode = t->pub.recs[t->cur_begin].episode;
		break;
	case OP_EXIT:
		t->state = TS_EXITING;
		t->token++;
		task_at(s, t, s->now + rng_range(&s->rng, 5 * US, 50 * US),
		    EV_GONE);
		return;
	default:
		break;
	}
	t->state = TS_IDLE;
	if (t->kill_pending) {
		task_gone(s, t);
		t->pub.killed = 1;
		return;
	}
	task_at(s, t, s->now + gap(s), EV_STEP);
}

/* The task is no more: it leaves its groups, its watchers hear of it. */
static void
task_gone(struct sim *s, struct stask *t)
{
	struct watch *w;
	size_t i;
	int member = 0;

	t->state = TS_GONE;
	t->token++;
	t->pub.t_end = s->now;
	for (i = 0; i < s->ngroups; i++)
		member |= group_leave(&s->groups[i], t->self) == 0;
	if (member)
		gs_dead(s, t);
	for (i = 0; i < t->ninbox; i++)
		s->mstate[t->inbox[i]] = 3;
	t->ninbox = 0;
	for (i = 0; i < t->nwatchers; i++) {
		w = &t->watchers[i];
		msg_send(s, NONE, (int32_t)(0x80000000u |
		    (t->pub.host + 1) << 18), w->watcher, w->tag, w->ctx, 0,
		    t->self);
	}
}

/* A kill: at once between calls or in a blocking call, else at its end. */
static void
kill_task(struct sim *s, struct stask *t)
{
	switch (t->state) {
	case TS_IDLE:
	case TS_BLOCKED:
		task_gone(s, t);
		t->pub.killed = 1;
		break;
	case TS_NEW:
	case TS_CALL:
		t->kill_pending = 1;
		break;
	default:
		break;
	}
}

static void
step(struct sim *s, struct stask *t)
{
	int tries;

	if (t->kill_pending && t->pub.nrecs > 0) {
		task_gone(s, t);
		t->pub.killed = 1;
		return;
	}
	/* A program may move between states without queueing a call. */
	for (tries = 0; t->qn == 0 && t->pc != 1000 && tries < 8; tries++)
		program(s, t);
	if (t->qn == 0)
		return;		/* the program is done */
	t->cur = t->q[t->qhead];
	t->qhead = (t->qhead + 1) % QMAX;
	t->qn--;
	start_op(s, t);
}

static void
dispatch(struct sim *s, const struct sev *e)
{
	struct stask *t;

	if (e->type == EV_ARRIVE) {
		arrive(s, e->a);
		return;
	}
	t = &s->tasks[e->a];
	if (e->type == EV_KILL) {
		kill_task(s, t);
		return;
	}
	if (e->b != t->token || t->state == TS_GONE)
		return;
	switch (e->type) {
	case EV_STEP:
		step(s, t);
		break;
	case EV_END:
		end_op(s, t, 0);
		break;
	case EV_TIMEOUT:
		if (t->state == TS_BLOCKED)
			end_op(s, t, 1);
		break;
	case EV_LIN:
		lin_point(s, t);
		break;
	case EV_GONE:
		task_gone(s, t);
		break;
	}
}

/* --- programs ------------------------------------------------------------ */

/* Tags of an application: its base plus one of these. */
enum {
	TAG_INIT, TAG_TOK, TAG_WORK, TAG_RESULT, TAG_STOP, TAG_EXIT,
	TAG_DOWN, TAG_UP, TAG_MC, TAG_BC
};

static struct op *
push(struct stask *t, int kind, uint8_t call)
{
	struct op *op;

	if (t->qn == QMAX)
		abort();	/* a program queued too much: a bug here */
	op = &t->q[(t->qhead + t->qn++) % QMAX];
	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)kind;
	op->call = call;
	op->peer = -1;
	op->tag = -1;
	return op;
}

static void
push_compute(struct stask *t, uint64_t dur)
{
	push(t, OP_COMPUTE, 0)->dur = dur;
}

static void
push_local(struct stask *t, uint8_t call, int32_t bytes)
{
	push(t, OP_LOCAL, call)->bytes = bytes;
}

static int32_t
tag(const struct stask *t, int which)
{
	return t->app->tagbase + which;
}

static int32_t
tid_of(const struct sim *s, uint32_t task)
{
	return s->tasks[task].pub.tid;
}

/* Packs nint integers and sends them (or psends, in some apps). */
static void
push_send(struct sim *s, struct stask *t, int32_t dst, int which, int nint)
{
	struct op *op;

	(void)s;
	if (t->app->use_p && which == TAG_TOK) {
		op = push(t, OP_PSEND, PMON_CALL_psend);
	} else {
		push_local(t, PMON_CALL_initsend, -1);
		if (nint > 0)
			push_local(t, PMON_CALL_pkint, 4 * nint);
		op = push(t, OP_SEND, PMON_CALL_send);
	}
	op->peer = dst;
	op->tag = tag(t, which);
	op->bytes = 4 * nint;
}

static void
push_recv(struct stask *t, int kind, int32_t src, int32_t tg)
{
	static const uint8_t calls[] = {
		[OP_RECV] = PMON_CALL_recv, [OP_PRECV] = PMON_CALL_precv,
		[OP_TRECV] = PMON_CALL_trecv, [OP_NRECV] = PMON_CALL_nrecv,
		[OP_PROBE] = PMON_CALL_probe
	};
	struct op *op = push(t, kind, calls[kind]);

	op->peer = src;
	op->tag = tg;
}

static void
push_mcast(struct sim *s, struct stask *t, const int32_t *tids, size_t n,
    int which, int nint)
{
	struct op *op;

	push_local(t, PMON_CALL_initsend, -1);
	push_local(t, PMON_CALL_pkint, 4 * nint);
	op = push(t, OP_MCAST, PMON_CALL_mcast);
	op->tag = tag(t, which);
	op->bytes = 4 * nint;
	op->list = peers_add(s, tids, n);
	op->nlist = (uint16_t)n;
}

static void
push_group(struct stask *t, int kind, uint8_t call, unsigned gid)
{
	push(t, kind, call)->gid = gid;
}

/* Spawns n children of the task's app, in one or two pvm_spawn calls. */
static void
push_spawns(struct sim *s, struct stask *t, int n)
{
	int first = n > 1 && rng_chance(&s->rng, 0.4) ?
	    1 + (int)rng_below(&s->rng, (uint64_t)n - 1) : n;

	push(t, OP_SPAWN, PMON_CALL_spawn)->count = first;
	if (first < n)
		push(t, OP_SPAWN, PMON_CALL_spawn)->count = n - first;
}

static void
push_notify_kids(struct sim *s, struct stask *t)
{
	struct op *op;
	int32_t tids[RECORD_PEERS_MAX];
	size_t i;

	if (!s->p.notify || t->nkids == 0)
		return;
	for (i = 0; i < t->nkids; i++)
		tids[i] = tid_of(s, t->kids[i]);
	op = push(t, OP_NOTIFY, PMON_CALL_notify);
	op->tag = tag(t, TAG_EXIT);
	op->list = peers_add(s, tids, t->nkids);
	op->nlist = (uint16_t)t->nkids;
}

static void
push_exit(struct stask *t)
{
	push(t, OP_EXIT, PMON_CALL_exit);
	t->pc = 1000;
}

static const struct sim_msg *
last_msg(const struct sim *s, const struct stask *t)
{
	return t->last_got ? &s->msgs[t->last_msg] : NULL;
}

/* The ring: the root injects tokens that make rounds laps. */
static void
prog_ring(struct sim *s, struct stask *t)
{
	struct app *a = t->app;
	int32_t kids[RECORD_PEERS_MAX];
	int n = a->nmembers, i, k, left;

	switch (t->pc) {
	case 0:
		push_local(t, PMON_CALL_mytid, -1);
		if (t->role == 0)
			push_spawns(s, t, a->n - 1);
		else
			push_recv(t, OP_RECV, rng_chance(&s->rng, a->wild) ?
			    -1 : t->pub.parent_tid, tag(t, TAG_INIT));
		t->pc = 1;
		return;
	case 1:
		t->pc = 3;
		t->b = 0;
		if (t->role != 0) {
			push_local(t, PMON_CALL_upkint, 4 * n);
			return;
		}
		t->pc = 2;
		t->a = 1;
		if (rng_chance(&s->rng, 0.5)) {
			for (i = 1; i < n; i++)
				kids[i - 1] = tid_of(s, a->members[i]);
			push_mcast(s, t, kids, (size_t)n - 1, TAG_INIT, n);
			t->a = n;
		}
		/* FALLTHROUGH */
	case 2:		/* the ring's layout to each member, then tokens */
		for (k = 0; t->a < n && k < 5; t->a++, k++)
			push_send(s, t, tid_of(s, a->members[t->a]), TAG_INIT,
			    n);
		if (t->a < n)
			return;
		for (i = 0; i < a->tokens; i++)
			push_send(s, t, tid_of(s, a->members[1]), TAG_TOK, 1);
		t->pc = 3;
		t->b = 0;
		return;
	case 3:
		if (t->b == a->rounds * a->tokens) {
			push_exit(t);
			return;
		}
		left = tid_of(s, a->members[(t->slot + n - 1) % n]);
		if (rng_chance(&s->rng, a->wild))
			left = -1;
		if (a->use_p)
			push_recv(t, OP_PRECV, left, tag(t, TAG_TOK));
		else {
			push_recv(t, OP_RECV, left, tag(t, TAG_TOK));
			push_local(t, PMON_CALL_upkint, 4);
		}
		push_compute(t, rng_range(&s->rng, 1 * US, 100 * US));
		t->b++;
		/* The root lets each token make rounds laps. */
		if (t->role != 0 || t->b <= (a->rounds - 1) * a->tokens)
			push_send(s, t, tid_of(s, a->members[(t->slot + 1) %
			    n]), TAG_TOK, 1);
		return;
	}
}

/* Hands out work to an idle worker, or stops it when none is left. */
static void
mw_feed(struct sim *s, struct stask *t, int w)
{
	struct app *a = t->app;
	int32_t tid = tid_of(s, a->members[w]);

	if (a->gone[w] || a->stopped[w] || a->outstanding[w] > 0)
		return;
	if (a->items_left > 0) {
		a->items_left--;
		a->outstanding[w]++;
		push_send(s, t, tid, TAG_WORK, 2);
	} else {
		a->stopped[w] = 1;
		push_send(s, t, tid, TAG_STOP, 0);
	}
}

static int
mw_finished(const struct sim *s, const struct app *a)
{
	int w;

	for (w = 1; w < a->nmembers; w++)
		if (s->p.notify ? !a->gone[w] : !a->stopped[w] && !a->gone[w])
			return 0;
	return 1;
}

/* The master's view of what its last receive brought. */
static void
mw_got(struct sim *s, struct stask *t, const struct sim_msg *m)
{
	struct app *a = t->app;
	int w, i;

	if (m->src == NONE) {		/* a worker ended */
		w = s->tasks[m->notify_of].slot;
		a->gone[w] = 1;
		a->items_left += a->outstanding[w];
		a->outstanding[w] = 0;
		for (i = 1; i < a->nmembers; i++)
			mw_feed(s, t, i);
		return;
	}
	w = s->tasks[m->src].slot;
	push_local(t, PMON_CALL_upkint, 8);
	if (a->outstanding[w] > 0)
		a->outstanding[w]--;
	mw_feed(s, t, w);
}

static void
prog_master(struct sim *s, struct stask *t)
{
	struct app *a = t->app;
	const struct sim_msg *m;
	int k;

	switch (t->pc) {
	case 0:
		push_local(t, PMON_CALL_mytid, -1);
		push_spawns(s, t, a->n - 1);
		t->pc = 1;
		return;
	case 1:
		push_notify_kids(s, t);
		t->a = 1;
		t->pc = 2;
		/* FALLTHROUGH */
	case 2:		/* the first items, a few workers at a time */
		for (k = 0; t->a < a->nmembers && k < 4; t->a++, k++) {
			mw_feed(s, t, t->a);
			if (a->items_left > 0 && rng_chance(&s->rng, 0.3)) {
				a->items_left--;
				a->outstanding[t->a]++;
				push_send(s, t, tid_of(s, a->members[t->a]),
				    TAG_WORK, 2);
			}
		}
		if (t->a == a->nmembers)
			t->pc = 3;
		if (t->qn > 0)
			return;
		/* FALLTHROUGH */
	case 3:
		if (mw_finished(s, a)) {
			push_exit(t);
			return;
		}
		k = (int)rng_below(&s->rng, 10);
		if (k < 4)
			push_recv(t, OP_RECV, -1, s->p.notify ? -1 :
			    tag(t, TAG_RESULT));
		else if (k < 6)
			push_recv(t, OP_PROBE, -1, tag(t, TAG_RESULT));
		else if (k < 8)
			push_recv(t, OP_NRECV, -1, tag(t, TAG_RESULT));
		else {
			push_recv(t, OP_TRECV, -1, s->p.notify ? -1 :
			    tag(t, TAG_RESULT));
			t->q[(t->qhead + t->qn - 1) % QMAX].dur =
			    rng_range(&s->rng, 50 * US, 1 * MS);
		}
		t->pc = 4;
		return;
	case 4:
		m = last_msg(s, t);
		t->pc = 3;
		if (m == NULL)
			push_compute(t, rng_range(&s->rng, 20 * US, 300 * US));
		else if (t->cur.kind == OP_PROBE) {
			/* A probe saw it: now receive it. */
			push_recv(t, OP_RECV, m->src_tid, m->tag);
			t->pc = 4;
		} else
			mw_got(s, t, m);
		if (t->qn == 0)
			push_compute(t, rng_range(&s->rng, 1 * US, 20 * US));
		return;
	}
}

static void
prog_worker(struct sim *s, struct stask *t)
{
	const struct sim_msg *m;

	switch (t->pc) {
	case 0:
		push_local(t, PMON_CALL_mytid, -1);
		push_local(t, PMON_CALL_parent, -1);
		t->pc = 1;
		return;
	case 1:
		push_recv(t, OP_RECV, rng_chance(&s->rng, 0.3) ? -1 :
		    t->pub.parent_tid, -1);
		t->pc = 2;
		return;
	case 2:
		m = last_msg(s, t);
		if (m == NULL || m->tag == tag(t, TAG_STOP)) {
			push_exit(t);
			return;
		}
		push_local(t, PMON_CALL_upkint, 8);
		push_compute(t, rng_range(&s->rng, 20 * US, 2 * MS));
		push_send(s, t, t->pub.parent_tid, TAG_RESULT, 2);
		t->pc = 1;
		return;
	}
}

/* A spawn tree: rounds of work going down and results coming up. */
static void
prog_tree(struct sim *s, struct stask *t)
{
	struct app *a = t->app;
	const struct sim_msg *m;
	size_t i;

	switch (t->pc) {
	case 0:
		push_local(t, PMON_CALL_mytid, -1);
		if (t->role != 0)
			push_local(t, PMON_CALL_parent, -1);
		if (t->level < a->depth)
			push_spawns(s, t, a->fixed ? a->fanout : 1 +
			    (int)rng_below(&s->rng, (uint64_t)a->fanout));
		t->pc = 1;
		return;
	case 1:
		push_notify_kids(s, t);
		t->a = 0;
		t->pc = 2;
		return;
	case 2:
		if (t->a == a->rounds) {
			t->pc = 5;
			t->b = 0;
			prog_tree(s, t);
			return;
		}
		if (t->role != 0) {
			push_recv(t, OP_RECV, t->pub.parent_tid,
			    tag(t, TAG_DOWN));
			push_local(t, PMON_CALL_upkint, 4);
		}
		t->pc = 3;
		return;
	case 3:
		for (i = 0; i < t->nkids && t->qn < QMAX - 4; i++)
			push_send(s, t, tid_of(s, t->kids[i]), TAG_DOWN, 1);
		push_compute(t, rng_range(&s->rng, 10 * US, 500 * US));
		t->b = 0;
		t->c = 0;	/* children heard from this round, a bitmask */
		t->mode = 0;
		t->pc = 4;
		return;
	case 4:
		if (t->mode && (m = last_msg(s, t)) != NULL) {
			for (i = 0; i < t->nkids; i++)
				if (t->kids[i] == m->src)
					t->c |= 1 << i;
			push_local(t, PMON_CALL_upkint, 4);
			t->b++;
		}
		if ((size_t)t->b == t->nkids) {
			if (t->role != 0)
				push_send(s, t, t->pub.parent_tid, TAG_UP, 1);
			t->a++;
			t->pc = 2;
			return;
		}
		/* Any child, or one not heard from yet this round. */
		for (i = 0; t->c & 1 << i; i++)
			;
		push_recv(t, OP_RECV, rng_chance(&s->rng, 0.5) ? -1 :
		    tid_of(s, t->kids[i]), tag(t, TAG_UP));
		t->mode = 1;
		return;
	case 5:		/* hear every child end, then go */
		if (!s->p.notify || (size_t)t->b == t->nkids) {
			push_exit(t);
			return;
		}
		push_recv(t, OP_RECV, -1, tag(t, TAG_EXIT));
		t->b++;
		return;
	}
}

/* Is slot listed as a destination of round r (not as its sender)? */
static int
mc_receives(const struct app *a, int r, int slot)
{
	int i;

	if (a->mc_sender[r] == slot)
		return 0;
	for (i = 0; i < a->mc_nlist[r]; i++)
		if (a->mc_list[r * a->mc_max + i] == slot)
			return 1;
	return 0;
}

/* Multicast rounds: in round r the planned sender multicasts. */
static void
prog_mcast(struct sim *s, struct stask *t)
{
	struct app *a = t->app;
	int32_t tids[RECORD_PEERS_MAX];
	int i, n, r;

	switch (t->pc) {
	case 0:
		push_local(t, PMON_CALL_mytid, -1);
		if (t->role == 0)
			push_spawns(s, t, a->n - 1);
		else {
			push_recv(t, OP_RECV, t->pub.parent_tid,
			    tag(t, TAG_INIT));
			push_local(t, PMON_CALL_upkint, 4);
		}
		t->pc = 1;
		return;
	case 1:
		if (t->role == 0) {
			for (i = 1; i < a->nmembers; i++)
				tids[i - 1] = tid_of(s, a->members[i]);
			push_mcast(s, t, tids, (size_t)a->nmembers - 1,
			    TAG_INIT, 1);
		}
		t->a = 0;
		t->pc = 2;
		/* FALLTHROUGH */
	case 2:
		for (; t->qn == 0 && t->a < a->rounds; t->a++) {
			r = t->a;
			n = a->mc_nlist[r];
			if (a->mc_sender[r] == t->slot) {
				for (i = 0; i < n; i++)
					tids[i] = tid_of(s, a->members[
					    a->mc_list[r * a->mc_max + i]]);
				push_mcast(s, t, tids, (size_t)n, TAG_MC, 1 +
				    (int)rng_below(&s->rng, 64));
			}
			if (mc_receives(a, r, t->slot)) {
				t->mode = (int)rng_below(&s->rng, 3);
				t->c = 0;
				t->pc = 3;
				t->a++;
				break;
			}
		}
		if (t->pc == 2 && t->a == a->rounds && t->qn == 0) {
			push_exit(t);
			return;
		}
		if (t->pc == 2)
			return;
		/* FALLTHROUGH */
	case 3:
		if (t->mode == 0 || t->c > 20)
			push_recv(t, OP_RECV, -1, tag(t, TAG_MC));
		else
			push_recv(t, t->mode == 1 ? OP_NRECV : OP_PROBE, -1,
			    tag(t, TAG_MC));
		t->pc = 4;
		return;
	case 4:
		if (t->last_got && t->cur.kind == OP_PROBE) {
			push_recv(t, OP_RECV, s->msgs[t->last_msg].src_tid,
			    tag(t, TAG_MC));
			return;
		}
		if (!t->last_got) {
			push_compute(t, rng_range(&s->rng, 10 * US, 200 * US));
			t->c++;
			t->pc = 3;
			return;
		}
		push_local(t, PMON_CALL_upkint, 4);
		t->pc = 2;
		return;
	}
}

/* Groups: joins and leaves racing with broadcasts, gsize, barriers. */
static void
prog_group(struct sim *s, struct stask *t)
{
	struct app *a = t->app;
	struct op *op;
	uint64_t k;

	switch (t->pc) {
	case 0:
		push_local(t, PMON_CALL_mytid, -1);
		if (t->role == 0)
			push_spawns(s, t, a->n - 1);
		push_group(t, OP_JOIN, PMON_CALL_joingroup, a->bar);
		op = push(t, OP_BARRIER, PMON_CALL_barrier);
		op->gid = a->bar;
		op->count = a->n;
		t->a = 0;
		t->pc = 1;
		return;
	case 1:
		if (t->a == a->iters) {
			t->pc = 3;
			t->c = 0;
			prog_group(s, t);
			return;
		}
		t->a++;
		k = rng_below(&s->rng, 100);
		if (k < 25 && !t->in_g) {
			push_group(t, OP_JOIN, PMON_CALL_joingroup, a->g);
			t->in_g = 1;
			if (rng_chance(&s->rng, 0.3)) {
				push_compute(t, rng_range(&s->rng, 1 * US,
				    50 * US));
				push_group(t, OP_LEAVE, PMON_CALL_lvgroup,
				    a->g);
				t->in_g = 0;
			}
		} else if (k < 40 && t->in_g) {
			push_group(t, OP_LEAVE, PMON_CALL_lvgroup, a->g);
			t->in_g = 0;
		} else if (k < 65) {
			push_local(t, PMON_CALL_initsend, -1);
			push_local(t, PMON_CALL_pkint, 4);
			op = push(t, OP_BCAST, PMON_CALL_bcast);
			op->gid = a->g;
			op->tag = tag(t, TAG_BC);
			op->bytes = 4;
		} else if (k < 75) {
			push_group(t, OP_GSIZE, PMON_CALL_gsize, a->g);
		} else if (k < 90) {
			push_recv(t, OP_NRECV, -1, tag(t, TAG_BC));
			t->pc = 2;
		} else {
			push_recv(t, OP_TRECV, -1, tag(t, TAG_BC));
			t->q[(t->qhead + t->qn - 1) % QMAX].dur =
			    rng_range(&s->rng, 10 * US, 300 * US);
			t->pc = 2;
		}
		push_compute(t, rng_range(&s->rng, 1 * US, 200 * US));
		if (a->bar_every > 0 && t->a % a->bar_every == 0) {
			op = push(t, OP_BARRIER, PMON_CALL_barrier);
			op->gid = a->bar;
			op->count = a->n;
		}
		return;
	case 2:		/* a poll for broadcasts: drain what came */
		t->pc = 1;
		if (t->last_got) {
			push_local(t, PMON_CALL_upkint, 4);
			push_recv(t, OP_NRECV, -1, tag(t, TAG_BC));
			t->pc = 2;
		}
		return;
	case 3:		/* the end: drain, maybe leave, exit */
		if (t->c == 0 || t->last_got) {
			if (t->c > 0)
				push_local(t, PMON_CALL_upkint, 4);
			push_recv(t, OP_NRECV, -1, tag(t, TAG_BC));
			t->c++;
			return;
		}
		if (t->in_g && rng_chance(&s->rng, 0.7))
			push_group(t, OP_LEAVE, PMON_CALL_lvgroup, a->g);
		if (rng_chance(&s->rng, 0.5))
			push_group(t, OP_LEAVE, PMON_CALL_lvgroup, a->bar);
		push_exit(t);
		return;
	}
}

/*
 * The message storm (tests/progs/storm.c): the root spawns the others
 * and tells each the ring; then every task, rounds times, sends one
 * integer to its successor and takes one message with a wildcard
 * receive, and computes a little.
 */
static void
prog_storm(struct sim *s, struct stask *t)
{
	struct app *a = t->app;
	int n = a->nmembers, k;

	switch (t->pc) {
	case 0:
		push_local(t, PMON_CALL_mytid, -1);
		if (t->role == 0)
			push_spawns(s, t, a->n - 1);
		else
			push_recv(t, OP_RECV, t->pub.parent_tid,
			    tag(t, TAG_INIT));
		t->pc = t->role == 0 ? 1 : 2;
		t->a = 1;
		t->b = 0;
		return;
	case 1:		/* the ring's size to each member */
		for (k = 0; t->a < n && k < 5; t->a++, k++)
			push_send(s, t, tid_of(s, a->members[t->a]), TAG_INIT,
			    1);
		if (t->a == n)
			t->pc = 3;
		return;
	case 2:
		push_local(t, PMON_CALL_upkint, 4);
		t->pc = 3;
		return;
	case 3:
		if (t->b == a->rounds) {
			push_exit(t);
			return;
		}
		push_send(s, t, tid_of(s, a->members[(t->slot + 1) % n]),
		    TAG_TOK, 1);
		push_recv(t, OP_RECV, -1, tag(t, TAG_TOK));
		push_local(t, PMON_CALL_upkint, 4);
		/*
		 * About 5 us of each round per task: whatever the number of
		 * tasks, the run makes some 2 M events a second.
		 */
		push_compute(t, rng_range(&s->rng, 1 * US, 9 * US) *
		    (uint64_t)n);
		t->b++;
		return;
	}
}

static void
program(struct sim *s, struct stask *t)
{
	if (t->pc == 1000)
		return;
	switch (t->app->kind) {
	case APP_RING:
		prog_ring(s, t);
		break;
	case APP_MW:
		if (t->role == 0)
			prog_master(s, t);
		else
			prog_worker(s, t);
		break;
	case APP_TREE:
		prog_tree(s, t);
		break;
	case APP_MCAST:
		prog_mcast(s, t);
		break;
	case APP_GROUP:
		prog_group(s, t);
		break;
	case APP_STORM:
		prog_storm(s, t);
		break;
	}
}

/* --- applications ---------------------------------------------------------- */

static struct app *
app_new(struct sim *s, enum app_kind kind, int n, double kill_p)
{
	struct app *a;

	if ((a = calloc(1, sizeof(*a))) == NULL) {
		s->nomem = 1;
		return NULL;
	}
	a->kind = kind;
	a->id = s->napps++;
	a->tagbase = 100 * (a->id + 1);
	a->ctx = a->id & 1;
	a->n = n;
	a->kill_p = kill_p;
	a->kill_window = 30 * MS * s->p.scale;
	a->next = s->apps;
	s->apps = a;
	return a;
}

/* Starts an application's root task at a random time near the start. */
static void
app_start(struct sim *s, struct app *a)
{
	uint32_t root;

	root = task_new(s, (uint32_t)rng_below(&s->rng, s->nhosts), NONE, 0,
	    a, 0);
	if (root == NONE)
		return;
	task_at(s, &s->tasks[root], rng_below(&s->rng, 2 * MS), EV_STEP);
	if (rng_chance(&s->rng, a->kill_p / 4))
		ev_push(s, rng_below(&s->rng, a->kill_window), EV_KILL, root,
		    0);
}

static int
apps_arrays(struct sim *s, struct app *a)
{
	int r, i;

	switch (a->kind) {
	case APP_MW:
		a->outstanding = calloc((size_t)a->n, sizeof(int));
		a->stopped = calloc((size_t)a->n, 1);
		a->gone = calloc((size_t)a->n, 1);
		return a->outstanding && a->stopped && a->gone ? 0 : -1;
	case APP_MCAST:
		a->mc_max = 2 * a->n;
		a->mc_sender = calloc((size_t)a->rounds, sizeof(int));
		a->mc_nlist = calloc((size_t)a->rounds, sizeof(int));
		a->mc_list = calloc((size_t)a->rounds * (size_t)a->mc_max,
		    sizeof(int));
		if (!a->mc_sender || !a->mc_nlist || !a->mc_list)
			return -1;
		for (r = 0; r < a->rounds; r++) {
			a->mc_sender[r] = (int)rng_below(&s->rng,
			    (uint64_t)a->n);
			a->mc_nlist[r] = 1 + (int)rng_below(&s->rng,
			    (uint64_t)a->mc_max);
			/* Duplicates and the sender itself may be listed. */
			for (i = 0; i < a->mc_nlist[r]; i++)
				a->mc_list[r * a->mc_max + i] =
				    (int)rng_below(&s->rng, (uint64_t)a->n);
		}
		return 0;
	case APP_GROUP:
		a->g = group_new(s, "g", a->id);
		a->bar = group_new(s, "bar", a->id);
		return s->nomem ? -1 : 0;
	default:
		return 0;
	}
}

/*
 * Adds one application of a kind, sized for a test (big 0) or for the
 * bench (big: a ring's size, else any non-zero).
 */
static void
add_app(struct sim *s, enum app_kind kind, double kill_p, int big)
{
	struct rng *r = &s->rng;
	unsigned sc = s->p.scale;
	struct app *a;

	switch (kind) {
	case APP_RING:
		a = app_new(s, kind, big ? big : (int)rng_range(r, 2, 7),
		    kill_p);
		if (a == NULL)
			return;
		a->rounds = (int)((big ? 3 : rng_range(r, 1, 5)) * sc);
		a->tokens = big ? 2 : (int)rng_range(r, 1, 3);
		a->use_p = rng_chance(r, 0.3);
		a->wild = rng_unit(r) * 0.5;
		break;
	case APP_MW:
		a = app_new(s, kind, big ? 16 : (int)rng_range(r, 2, 7),
		    kill_p);
		if (a == NULL)
			return;
		a->items_left = (int)((big ? 10 : rng_range(r, 3, 20)) * sc);
		break;
	case APP_TREE:
		a = app_new(s, kind, 0, kill_p);
		if (a == NULL)
			return;
		a->depth = big ? 2 : (int)rng_range(r, 1, 3);
		a->fanout = big ? 3 : (int)rng_range(r, 1, 3);
		a->fixed = big;
		a->rounds = (int)((big ? 2 : rng_range(r, 1, 3)) * sc);
		a->n = 64;
		break;
	case APP_MCAST:
		a = app_new(s, kind, big ? 8 : (int)rng_range(r, 2, 6),
		    kill_p);
		if (a == NULL)
			return;
		a->rounds = (int)((big ? 8 : rng_range(r, 3, 12)) * sc);
		break;
	case APP_STORM:
		if ((a = app_new(s, kind, big, kill_p)) == NULL)
			return;
		a->rounds = (int)sc;
		break;
	case APP_GROUP:
	default:
		a = app_new(s, kind, big ? 11 : (int)rng_range(r, 2, 6),
		    kill_p);
		if (a == NULL)
			return;
		a->iters = (int)((big ? 2 : rng_range(r, 5, 30)) * sc);
		a->bar_every = big ? 40 : rng_chance(r, 0.7) ?
		    (int)rng_range(r, 3, 10) : 0;
		break;
	}
	if (apps_arrays(s, a) == -1) {
		s->nomem = 1;
		return;
	}
	app_start(s, a);
}

static void
setup(struct sim *s)
{
	double kp = 0;
	int i, k;

	switch (s->p.scenario) {
	case SIM_RING:
		add_app(s, APP_RING, 0, 0);
		if (rng_chance(&s->rng, 0.5))
			add_app(s, APP_RING, 0, 0);
		break;
	case SIM_MW:
		add_app(s, APP_MW, 0, 0);
		break;
	case SIM_SPAWN:
		add_app(s, APP_TREE, 0, 0);
		break;
	case SIM_MCAST:
		add_app(s, APP_MCAST, 0, 0);
		break;
	case SIM_GROUP:
		add_app(s, APP_GROUP, 0, 0);
		if (rng_chance(&s->rng, 0.3))
			add_app(s, APP_GROUP, 0, 0);
		break;
	case SIM_DEATH:
		kp = s->p.kills == 0 ? 0 : 0.3;
		k = 1 + (int)rng_below(&s->rng, 3);
		for (i = 0; i < k; i++)
			add_app(s, (enum app_kind)rng_below(&s->rng, 4), kp,
			    0);
		return;
	case SIM_MIXED:
		kp = s->p.kills == 0 ? 0 : 0.1;
		for (i = APP_RING; i <= APP_GROUP; i++)
			add_app(s, (enum app_kind)i, kp, 0);
		return;
	case SIM_STORM:
		add_app(s, APP_STORM, 0, s->p.ntasks ? (int)s->p.ntasks : 8);
		return;
	case SIM_BENCH:
	default:
		/* 8 + 8 + 16 + 13 + 8 + 11 tasks. */
		add_app(s, APP_RING, 0, 8);
		add_app(s, APP_RING, 0, 8);
		add_app(s, APP_MW, 0, 1);
		add_app(s, APP_TREE, 0, 1);
		add_app(s, APP_MCAST, 0, 1);
		add_app(s, s->p.no_groups ? APP_RING : APP_GROUP, 0, 11);
		return;
	}
	if (s->p.kills == 1)
		for (struct app *a = s->apps; a != NULL; a = a->next)
			a->kill_p = 0.3;
}

/*
 * pvmgs writes one small record per request, and its ring rarely fills:
 * one run with drops of twenty loses a few of its records.
 */
static void
mark_server_drops(struct sim *s)
{
	struct rng r = { s->p.seed ^ 0x3c6ef372fe94f82bULL };
	struct sim_task *t;
	size_t at, len;

	if (s->gs == NONE)
		return;
	t = &s->tasks[s->gs].pub;
	if (t->nrecs == 0 || !rng_chance(&r, 0.05))
		return;
	len = 1 + rng_below(&r, 3);
	for (at = rng_below(&r, t->nrecs); len > 0 && at < t->nrecs;
	    len--, at++)
		t->recs[at].dropped = 1;
}

/* Marks ranges of records as lost to a full ring. */
static void
mark_drops(struct sim *s)
{
	struct rng r = { s->p.seed ^ 0xd1b54a32d192ed03ULL };
	struct sim_task *t;
	size_t i, k, n, at, len;

	for (i = 0; i < s->ntasks; i++) {
		t = &s->tasks[i].pub;
		if (t->group_server || t->nrecs == 0 || !rng_chance(&r, 0.4))
			continue;
		n = 1 + rng_below(&r, 3);
		for (k = 0; k < n; k++) {
			len = 1 + rng_below(&r, 8);
			at = rng_chance(&r, 0.15) && t->nrecs > len ?
			    t->nrecs - len : rng_below(&r, t->nrecs);
			for (; len > 0 && at < t->nrecs; len--, at++)
				t->recs[at].dropped = 1;
		}
	}
	mark_server_drops(s);
	for (i = 0; i < s->ntasks; i++) {
		t = &s->tasks[i].pub;
		for (k = 0; k < t->nrecs; k++)
			t->ndropped += t->recs[k].dropped;
	}
}

/* --- the public interface -------------------------------------------------- */

struct sim *
sim_new(const struct sim_params *p)
{
	struct sim *s;
	struct rng hr;
	size_t h;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->p = *p;
	s->gs = NONE;
	if (s->p.scale == 0)
		s->p.scale = 1;
	s->rng.s = p->seed * 0x2545f4914f6cdd1dULL + 0x1234567;
	s->drng.s = p->seed * 0x9e3779b97f4a7c15ULL + 0x7654321;
	hr.s = p->seed ^ 0x5851f42d4c957f2dULL;
	s->nhosts = p->nhosts ? p->nhosts : 2 + rng_below(&hr, 4);
	if (s->nhosts > 4000)
		s->nhosts = 4000;
	s->hosts = calloc(s->nhosts, sizeof(*s->hosts));
	s->bytid = calloc(s->nhosts, sizeof(*s->bytid));
	s->nbytid = calloc(s->nhosts, sizeof(*s->nbytid));
	s->bytidcap = calloc(s->nhosts, sizeof(*s->bytidcap));
	if (s->hosts == NULL || s->bytid == NULL || s->nbytid == NULL ||
	    s->bytidcap == NULL) {
		sim_free(s);
		return NULL;
	}
	for (h = 0; h < s->nhosts; h++) {
		s->hosts[h].offset_ns = (int64_t)rng_below(&hr, 200 * MS + 1) -
		    (int64_t)(100 * MS);
		s->hosts[h].drift = (rng_unit(&hr) * 2 - 1) * 100e-6;
	}
	return s;
}

/* Forgets the state of a previous delivery. */
static void
delivery_free(struct sim *s)
{
	size_t h;

	for (h = 0; s->dh != NULL && h < s->nhosts; h++)
		free(s->dh[h].q);
	free(s->dt);
	free(s->dh);
	free(s->pool);
	s->dt = NULL;
	s->dh = NULL;
	s->pool = NULL;
	s->npool = s->poolcap = 0;
}

static void
app_free(struct app *a)
{
	free(a->members);
	free(a->outstanding);
	free(a->stopped);
	free(a->gone);
	free(a->mc_sender);
	free(a->mc_list);
	free(a->mc_nlist);
	free(a);
}

void
sim_free(struct sim *s)
{
	struct app *a, *next;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ntasks; i++) {
		free(s->tasks[i].pub.recs);
		free(s->tasks[i].inbox);
		free(s->tasks[i].kids);
		free(s->tasks[i].watchers);
	}
	for (i = 0; i < s->ngroups; i++) {
		free(s->groups[i].members);
		free(s->groups[i].inst);
		free(s->groups[i].entries);
	}
	for (i = 0; s->bytid != NULL && i < s->nhosts; i++)
		free(s->bytid[i]);
	for (a = s->apps; a != NULL; a = next) {
		next = a->next;
		app_free(a);
	}
	free(s->tasks);
	free(s->bytid);
	free(s->nbytid);
	free(s->bytidcap);
	free(s->hosts);
	free(s->msgs);
	free(s->mstate);
	free(s->peers);
	free(s->eps);
	free(s->entries);
	free(s->groups);
	free(s->heap);
	free(s->chans);
	delivery_free(s);
	free(s);
}

int
sim_generate(struct sim *s)
{
	struct sev e;
	size_t i;

	setup(s);
	server_new(s);
	while (!s->nomem && s->nheap > 0) {
		e = ev_pop(s);
		s->now = e.t;
		dispatch(s, &e);
	}
	for (i = 0; i < s->ngroups; i++)
		episode_close(s, &s->groups[i]);
	for (i = 0; i < s->ntasks; i++)
		if (s->tasks[i].state != TS_BLOCKED &&
		    s->tasks[i].state != TS_GONE)
			s->nstalled++;
	if (s->p.drops)
		mark_drops(s);
	return s->nomem ? -1 : 0;
}

size_t
sim_ntasks(const struct sim *s)
{
	return s->ntasks;
}

const struct sim_task *
sim_task(const struct sim *s, size_t i)
{
	return &s->tasks[i].pub;
}

long
sim_group_server(const struct sim *s)
{
	return s->gs == NONE ? -1 : (long)s->gs;
}

long
sim_task_index(const struct sim *s, int32_t tid)
{
	uint32_t h = host_of_tid(tid), local = (uint32_t)tid & 0x3ffff;

	if (tid <= 0 || h >= s->nhosts || local == 0 ||
	    local > s->nbytid[h])
		return -1;
	return (long)s->bytid[h][local - 1];
}

size_t
sim_nhosts(const struct sim *s)
{
	return s->nhosts;
}

const struct sim_host *
sim_host(const struct sim *s, size_t h)
{
	return &s->hosts[h];
}

size_t
sim_nmsgs(const struct sim *s)
{
	return s->nmsgs;
}

const struct sim_msg *
sim_msg(const struct sim *s, size_t i)
{
	return &s->msgs[i];
}

size_t
sim_nepisodes(const struct sim *s)
{
	return s->neps;
}

const struct sim_episode *
sim_episode(const struct sim *s, size_t i)
{
	return &s->eps[i];
}

const struct sim_entry *
sim_entries(const struct sim *s)
{
	return s->entries;
}

const int32_t *
sim_peers(const struct sim *s)
{
	return s->peers;
}

const char *
sim_group_name(const struct sim *s, unsigned gid1)
{
	return gid1 == 0 || gid1 > s->ngroups ? "" : s->groups[gid1 - 1].name;
}

size_t
sim_stalled(const struct sim *s)
{
	return s->nstalled;
}

size_t
sim_total_records(const struct sim *s)
{
	return s->nrecords;
}

uint64_t
sim_raw(const struct sim *s, const struct sim_task *t,
    const struct sim_rec *r)
{
	const struct sim_host *h = &s->hosts[t->host];

	return (uint64_t)((int64_t)CLOCK_BASE + h->offset_ns +
	    (int64_t)r->t_true + (int64_t)llround(h->drift *
	    (double)r->t_true));
}

void
sim_record(const struct sim *s, size_t task, size_t rec, struct record *r,
    int32_t *peers)
{
	const struct sim_task *t = &s->tasks[task].pub;
	const struct sim_rec *g = &t->recs[rec];
	const char *name = sim_group_name(s, g->group);

	memset(r, 0, sizeof(*r));
	r->call = g->call;
	r->phase = g->phase;
	r->flags = g->flags;
	r->seq = rec + 1;
	r->t_ns = sim_raw(s, t, g);
	r->rc = g->rc;
	r->peer = g->peer;
	r->tag = g->tag;
	r->ctx = g->ctx;
	r->bytes = g->bytes;
	r->inst = g->inst;
	r->npeers = g->npeers;
	r->glen = (uint8_t)strlen(name);
	r->group = name;
	if (g->npeers > 0)
		memcpy(peers, &s->peers[g->peers], g->npeers * sizeof(*peers));
}

size_t
sim_encode(const struct sim *s, size_t task, size_t rec, uint8_t *out)
{
	int32_t peers[RECORD_PEERS_MAX];
	struct record r;

	sim_record(s, task, rec, &r, peers);
	return record_encode(out, &r, peers);
}

/* --- delivery ---------------------------------------------------------- */

static int
pool_add(struct sim *s, int type, uint32_t task, uint32_t rec)
{
	struct sim_act *a;

	if (!GROW(s, s->pool, s->npool, s->poolcap))
		return -1;
	a = &s->pool[s->npool++];
	a->type = (uint8_t)type;
	a->task = task;
	a->rec = rec;
	a->t = 0;
	return 0;
}

/*
 * The agent of host h drains its tasks' rings at time now (UINT64_MAX:
 * everything) into a batch that reaches the coordinator later.
 */
static void
drain(struct sim *s, size_t h, uint64_t now, int round)
{
	struct dhost *d = &s->dh[h];
	struct dtask *dt;
	struct sim_task *t;
	struct batch *b;
	uint32_t order[4096], tmp;
	size_t i, j, n = s->nbytid[h], first = s->npool;
	uint64_t delay;

	if (n > 4096)
		n = 4096;
	for (i = 0; i < n; i++)
		order[i] = s->bytid[h][i];
	for (i = n; i > 1; i--) {
		j = rng_below(&s->drng, i);
		tmp = order[i - 1];
		order[i - 1] = order[j];
		order[j] = tmp;
	}
	for (i = 0; i < n; i++) {
		t = &s->tasks[order[i]].pub;
		dt = &s->dt[order[i]];
		if (t->nrecs == 0 || t->recs[0].t_true > now)
			continue;
		if (!dt->announced) {
			pool_add(s, SIM_ACT_NEW, order[i], 0);
			dt->announced = 1;
		}
		for (; dt->cursor < t->nrecs &&
		    t->recs[dt->cursor].t_true <= now; dt->cursor++)
			if (!t->recs[dt->cursor].dropped)
				pool_add(s, SIM_ACT_ADD, order[i],
				    (uint32_t)dt->cursor);
		if (!dt->ended && dt->cursor == t->nrecs &&
		    t->t_end != UINT64_MAX &&
		    (now == UINT64_MAX || t->t_end + dt->detect <= now)) {
			pool_add(s, SIM_ACT_END, order[i], 0);
			dt->ended = 1;
		}
	}
	if (!GROW(s, d->q, d->qhead + d->qn, d->qcap))
		return;
	b = &d->q[d->qhead + d->qn++];
	b->first = first;
	b->n = s->npool - first;
	b->round = round;
	if (now == UINT64_MAX)
		delay = 0;
	else if (rng_chance(&s->drng, 0.05))
		delay = rng_range(&s->drng, 5 * MS, 40 * MS);
	else
		delay = rng_range(&s->drng, 100 * US, 3 * MS);
	b->arrive = now == UINT64_MAX ? d->last_arrival + 1 : now + delay;
	if (b->arrive <= d->last_arrival)
		b->arrive = d->last_arrival + 1;
	d->last_arrival = b->arrive;
}

/* The coordinator side: carries out one action on o. */
static int
act(const struct sim *s, struct order *o, const struct sim_act *a,
    uint64_t *mark, const char **why)
{
	uint8_t buf[RECORD_MAX_SIZE];
	const struct sim_task *t = &s->tasks[a->task].pub;
	struct record r;
	size_t len;

	switch (a->type) {
	case SIM_ACT_NEW:
		if (order_task_new(o, t->tid, sim_host_number(t->host),
		    t->parent_tid, t->spawn_seq, why) == -1)
			return -1;
		return t->group_server ? order_group_server(o, t->tid, why) :
		    0;
	case SIM_ACT_ADD:
		len = sim_encode(s, a->task, a->rec, buf);
		if (record_decode(buf, len, &r, why) == -1)
			return -1;
		return order_add(o, t->tid, &r, why);
	case SIM_ACT_END:
		return order_task_end(o, t->tid, t->ndropped, why);
	case SIM_ACT_MARK:
		*mark = order_mark(o);
		return 0;
	case SIM_ACT_SYNCED:
		order_synced(o, *mark);
		return 0;
	case SIM_ACT_RELEASE_ALL:
		order_release_all(o);
		return 0;
	}
	return 0;
}

struct dstate {
	struct sim	*s;
	struct order	*o;
	struct sim_script *sc;
	sim_act_cb	 cb;
	void		*arg;
	uint64_t	 mark;
	uint64_t	 now;
	int		 round;		/* the active round, 0: none */
	int		 rounds;
	size_t		 waiting;	/* hosts yet to answer it */
	uint64_t	 round_at;	/* the next round, UINT64_MAX: none */
	uint64_t	 period;
	const char	*why;
};

static int
perform(struct dstate *ds, int type, uint32_t task, uint32_t rec)
{
	struct sim_act a = { (uint8_t)type, task, rec, ds->now };
	struct sim_script *sc = ds->sc;

	if (!GROW(ds->s, sc->acts, sc->n, sc->cap)) {
		ds->why = "out of memory";
		return -1;
	}
	sc->acts[sc->n++] = a;
	if (ds->cb != NULL && ds->cb(&a, ds->arg) == -1) {
		ds->why = "stopped";
		return -1;
	}
	return act(ds->s, ds->o, &a, &ds->mark, &ds->why);
}

static int
round_start(struct dstate *ds)
{
	struct sim *s = ds->s;
	size_t h;

	ds->round = ++ds->rounds;
	ds->waiting = s->nhosts;
	for (h = 0; h < s->nhosts; h++)
		s->dh[h].flush_at = ds->now + rng_range(&s->drng, 50 * US,
		    1 * MS);
	return perform(ds, SIM_ACT_MARK, 0, 0);
}

/* Delivers the batch at the head of host h's queue. */
static int
batch_arrive(struct dstate *ds, size_t h)
{
	struct dhost *d = &ds->s->dh[h];
	struct batch b = d->q[d->qhead];
	size_t i;

	d->qhead++;
	if (--d->qn == 0)
		d->qhead = 0;
	for (i = 0; i < b.n; i++) {
		const struct sim_act *a = &ds->s->pool[b.first + i];

		if (perform(ds, a->type, a->task, a->rec) == -1)
			return -1;
	}
	if (b.round != 0 && b.round == ds->round && --ds->waiting == 0) {
		ds->round = 0;
		if (perform(ds, SIM_ACT_SYNCED, 0, 0) == -1)
			return -1;
	}
	/* The coordinator asks for a round a little after the need. */
	if (ds->round == 0 && order_wants_sync(ds->o) &&
	    ds->round_at > ds->now + 2 * MS)
		ds->round_at = ds->now + 2 * MS;
	return 0;
}

static int
all_shipped(const struct sim *s)
{
	size_t i;

	for (i = 0; i < s->ntasks; i++)
		if (s->dt[i].cursor < s->tasks[i].pub.nrecs ||
		    (s->tasks[i].pub.t_end != UINT64_MAX && !s->dt[i].ended &&
		    s->tasks[i].pub.nrecs > 0))
			return 0;
	for (i = 0; i < s->nhosts; i++)
		if (s->dh[i].qn > 0)
			return 0;
	return 1;
}

/* The next thing to happen: 0 drain, 1 arrival, 2 flush drain, 3 round. */
static int
next_thing(struct dstate *ds, size_t *host, uint64_t *when)
{
	struct sim *s = ds->s;
	struct dhost *d;
	uint64_t best = UINT64_MAX;
	int what = -1;
	size_t h;

	for (h = 0; h < s->nhosts; h++) {
		d = &s->dh[h];
		if (d->next_drain < best) {
			best = d->next_drain;
			what = 0;
			*host = h;
		}
		if (d->qn > 0 && d->q[d->qhead].arrive < best) {
			best = d->q[d->qhead].arrive;
			what = 1;
			*host = h;
		}
		if (d->flush_at < best) {
			best = d->flush_at;
			what = 2;
			*host = h;
		}
	}
	if (ds->round_at < best) {
		best = ds->round_at;
		what = 3;
	}
	*when = best;
	return what;
}

static int
deliver_loop(struct dstate *ds, uint64_t drain_ns)
{
	struct sim *s = ds->s;
	struct dhost *d;
	uint64_t when;
	size_t h = 0;

	while (!all_shipped(s)) {
		switch (next_thing(ds, &h, &when)) {
		case 0:
			ds->now = when;
			drain(s, h, when, 0);
			d = &s->dh[h];
			d->next_drain = when + drain_ns / 2 +
			    rng_below(&s->drng, drain_ns);
			break;
		case 1:
			ds->now = when;
			if (batch_arrive(ds, h) == -1)
				return -1;
			break;
		case 2:
			ds->now = when;
			s->dh[h].flush_at = UINT64_MAX;
			drain(s, h, when, ds->round);
			break;
		case 3:
			ds->now = when;
			if (ds->round != 0) {
				ds->round_at = when + ds->period;
				break;
			}
			ds->round_at = when + ds->period / 2 +
			    rng_below(&s->drng, ds->period);
			if (round_start(ds) == -1)
				return -1;
			break;
		default:
			return 0;
		}
		if (s->nomem) {
			ds->why = "out of memory";
			return -1;
		}
	}
	return 0;
}

/* The final round, every task's end, then release_all. */
static int
deliver_final(struct dstate *ds)
{
	struct sim *s = ds->s;
	size_t h, i, left;
	uint32_t hosts[4096];

	while (ds->round != 0) {	/* let a running round finish */
		for (h = 0; h < s->nhosts; h++)
			if (s->dh[h].flush_at != UINT64_MAX) {
				s->dh[h].flush_at = UINT64_MAX;
				drain(s, h, ds->now, ds->round);
			}
		for (h = 0; h < s->nhosts && ds->round != 0; h++)
			while (s->dh[h].qn > 0 && ds->round != 0)
				if (batch_arrive(ds, h) == -1)
					return -1;
	}
	if (round_start(ds) == -1)
		return -1;
	for (h = 0; h < s->nhosts; h++) {
		s->dh[h].flush_at = UINT64_MAX;
		drain(s, h, UINT64_MAX, ds->round);
	}
	/* Hosts answer in a random order, each in FIFO order. */
	for (left = s->nhosts; left > 0;) {
		size_t n = 0;

		for (h = 0; h < s->nhosts && n < 4096; h++)
			if (s->dh[h].qn > 0)
				hosts[n++] = (uint32_t)h;
		if (n == 0)
			break;
		h = hosts[rng_below(&s->drng, n)];
		if (batch_arrive(ds, h) == -1)
			return -1;
		left = n;
	}
	for (i = 0; i < s->ntasks; i++) {
		if (!s->dt[i].announced && s->tasks[i].pub.nrecs > 0) {
			/* Every record was dropped: the task still said
			 * hello and goodbye. */
			s->dt[i].announced = 1;
			if (perform(ds, SIM_ACT_NEW, (uint32_t)i, 0) == -1)
				return -1;
		}
		if (s->dt[i].announced && !s->dt[i].ended) {
			s->dt[i].ended = 1;
			if (perform(ds, SIM_ACT_END, (uint32_t)i, 0) == -1)
				return -1;
		}
	}
	return perform(ds, SIM_ACT_RELEASE_ALL, 0, 0);
}

int
sim_deliver(struct sim *s, struct order *o, struct sim_script *sc,
    sim_act_cb cb, void *arg, const char **why)
{
	struct dstate ds;
	uint64_t drain_ns;
	size_t h, i;
	int big;

	memset(&ds, 0, sizeof(ds));
	ds.s = s;
	ds.o = o;
	ds.sc = sc;
	ds.cb = cb;
	ds.arg = arg;
	delivery_free(s);
	s->dt = calloc(s->ntasks + 1, sizeof(*s->dt));
	s->dh = calloc(s->nhosts, sizeof(*s->dh));
	if (s->dt == NULL || s->dh == NULL) {
		*why = "out of memory";
		return -1;
	}
	big = s->p.scenario == SIM_BENCH || s->p.scenario == SIM_STORM;
	drain_ns = big ? 20 * MS : rng_range(&s->drng, 2 * MS, 30 * MS);
	/* One delivery in four has rounds every few milliseconds. */
	if (big)
		ds.period = 200 * MS;
	else if (rng_chance(&s->drng, 0.25))
		ds.period = rng_range(&s->drng, 1 * MS, 4 * MS);
	else
		ds.period = rng_range(&s->drng, 10 * MS, 200 * MS);
	ds.round_at = rng_below(&s->drng, ds.period);
	for (i = 0; i < s->ntasks; i++)
		s->dt[i].detect = rng_below(&s->drng, 5 * MS);
	for (h = 0; h < s->nhosts; h++) {
		s->dh[h].next_drain = rng_below(&s->drng, drain_ns);
		s->dh[h].flush_at = UINT64_MAX;
	}
	if (deliver_loop(&ds, drain_ns) == -1 || deliver_final(&ds) == -1) {
		*why = ds.why != NULL ? ds.why : "out of memory";
		return -1;
	}
	return 0;
}

int
sim_replay(const struct sim *s, const struct sim_script *sc,
    struct order *o, sim_act_cb cb, void *arg, const char **why)
{
	uint64_t mark = 0;
	size_t i;

	for (i = 0; i < sc->n; i++) {
		if (cb != NULL && cb(&sc->acts[i], arg) == -1) {
			*why = "stopped";
			return -1;
		}
		if (act(s, o, &sc->acts[i], &mark, why) == -1)
			return -1;
	}
	return 0;
}

void
sim_script_free(struct sim_script *sc)
{
	free(sc->acts);
	sc->acts = NULL;
	sc->n = sc->cap = 0;
}
