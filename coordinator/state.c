/*
 * The coordinator's global state model (state.h): what the released
 * stream says about hosts, tasks, groups and queues, and the problems it
 * reveals.
 *
 * Causality is tracked with vector clocks indexed by task (in the order
 * the model learnt of them), one component per task holding the last seq
 * of that task known to precede.  A task's clock changes in the others'
 * components only where it merges: the end of a receive (the clock of
 * the send, which the queued message holds), a barrier exit (the join of
 * its episode's entries) and its first event (its parent's at the
 * spawn).  Its own component is implicit: the clock of its event seq
 * has seq there.  Clocks are shared and reference counted: a task's
 * current clock is also the clock of every message it sent since the
 * clock last changed and of the last entry of its history, and is copied
 * before it changes (vc_own).  So what a receive, a barrier or a spawn
 * merges never depends on the history.
 *
 * The history, one entry per merge with the clock from then on, serves
 * frontiers only.  It is bounded by the horizon (state_set_horizon): the
 * clocks of each task's last events, and of the last seconds of the
 * stream; older entries are dropped and a frontier that needs one is an
 * error that says so.
 *
 * The module does no I/O but to the FILE it is given, and never logs.
 */
#include <sys/queue.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>

#include "horizon.h"
#include "proto.h"
#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* Wildcard receives per task that later sends are checked against. */
#define STATE_WILD_HISTORY	64
/* Receives one queued message may have overtaken, kept for the check. */
#define STATE_MSG_CANDS		4
/* Queued-message entries kept for reuse: a storm queues and takes many. */
#define STATE_QMSG_SPARE	256
/* Runs (packs of one type in a row) a message may have and be checked. */
#define STATE_PACK_RUNS		32

/* pvm3.h error codes of the unpack calls (the coordinator has no pvm3.h). */
#define PVM_BAD_PARAM		(-2)	/* PvmBadParam */
#define PVM_NO_BUF		(-15)	/* PvmNoBuf: no receive buffer */

/*
 * A vector clock (NULL stands for all zeros).  Shared (refs > 1) it
 * never changes.
 */
struct vclock {
	unsigned	 refs;
	uint32_t	 n;
	uint64_t	 c[];
};

/* The clock of a task from event seq (at time t) on, until the next. */
struct hent {
	uint64_t	 seq;
	uint64_t	 t;
	struct vclock	*vc;
};

/*
 * A task's clock history, oldest first, in a ring of cap (a power of
 * two) entries.  cut: older entries were dropped at the horizon; gone
 * is the clock of the newest of them (what the task knew before the
 * first entry kept, for future frontiers).
 */
struct history {
	struct hent	*e;
	size_t		 first, n, cap;
	int		 cut;
	struct vclock	*gone;
};

/*
 * A wildcard receive (recv_seq, filter peer/tag) of the queue's owner
 * got s1, while the message holding this could have come first.
 */
struct cand {
	uint64_t	 recv_seq;
	int32_t		 peer, tag;
	int32_t		 s1_tid;
	uint64_t	 s1_seq;
};

/*
 * Consecutive pack calls of one type (pvm_pkint, ...): bytes in all and,
 * for pvm_pkstr, how many strings.
 */
struct pkrun {
	uint8_t		 call;
	uint32_t	 nstr;
	uint64_t	 bytes;
};

/*
 * What a message was packed with, shared (reference counted) by every
 * message its send buffer became: all destinations of a multicast, and
 * repeated sends of the same buffer.
 */
struct pkseq {
	unsigned	 refs;
	unsigned	 n;
	struct pkrun	 run[];
};

/*
 * A task's send buffer as far as its packs were followed: on from
 * pvm_initsend until something the model cannot follow (pvm_mkbuf,
 * pvm_setsbuf, pvm_pkmesg, pvm_packf, a failed pack, too many runs).
 * snap is a shared copy of run[] made by the first send since the last
 * change.
 */
struct packing {
	int		 on;
	unsigned	 n;
	struct pkrun	 run[STATE_PACK_RUNS];
	struct pkseq	*snap;
};

/*
 * The message in a task's receive buffer while its unpacks are checked
 * against the sender's packs: the cursor is at byte in_run (and string
 * nstr) of run, offset bytes from the start.
 */
struct unpacking {
	struct pkseq	*pk;		/* NULL: nothing checked */
	int32_t		 from, tag;
	uint64_t	 send_seq, recv_seq;
	unsigned	 run;
	uint32_t	 nstr;
	uint64_t	 in_run, offset;
};

/* A message sent and not yet received, in its receiver's queue. */
struct qmsg {
	TAILQ_ENTRY(qmsg) entry;
	int32_t		 from;
	uint64_t	 seq;		/* the send's event */
	int32_t		 tag, ctx, bytes;
	struct cand	 cand[STATE_MSG_CANDS];
	unsigned	 ncand;
	struct pkseq	*pk;		/* how it was packed, NULL: unknown */
	struct vclock	*vc;		/* the sender's clock at the send */
};
TAILQ_HEAD(qmsgs, qmsg);

/* A wildcard receive that later released sends may have overtaken. */
struct wild {
	uint64_t	 seq;		/* the receive's end */
	int32_t		 tag, ctx;
	int32_t		 s1_tid;
	uint64_t	 s1_seq;
};

/* Messages a channel owes a task: unmatched receives that came first. */
struct owed {
	int32_t		 from, tag, ctx;
	uint64_t	 n;
};

/* Messages and bytes from a task to one destination. */
struct pair {
	int32_t		 to;
	uint64_t	 msgs, bytes;
};

/* The begin record of the call a task is in. */
struct call {
	uint8_t		 call;
	uint64_t	 seq, t;
	int32_t		 peer, tag, ctx, inst;
	char		 group[RECORD_GROUP_MAX + 1];
};

/* One pvm_barrier episode of a group: the join of its entries' clocks. */
struct episode {
	LIST_ENTRY(episode) entry;
	struct vclock	*vc;		/* its own, never shared */
	int		 need, entered, exited, closed;
};

struct member {
	int32_t		 tid, inst;
};

struct group {
	struct group	*next;
	char		*name;
	struct member	*m;
	size_t		 n, cap;
	LIST_HEAD(, episode) eps;
	struct episode	*open;		/* accepting entries */
	/*
	 * Members that exited without leaving: a barrier whose count the
	 * live members cannot reach waits for them.
	 */
	int32_t		*gone;
	size_t		 ngone, gonecap;
};

struct host {
	int32_t		 tid;
	char		*name, *arch;
	int		 up;
	int		 deleted;	/* left the virtual machine */
};

enum task_end { TASK_LIVE, TASK_EXITED, TASK_KILLED };

struct task {
	int32_t		 tid, parent;
	uint32_t	 pid;
	char		*host, *program;
	size_t		 idx;
	int		 registered, seen;
	int		 unmonitored;	/* in pvmd's tasks, not instrumented
					   (state_task_other) */
	int		 retired;	/* its tid was reused */
	enum task_end	 end;
	int		 in_call;
	struct call	 cur;
	int		 has_outer;	/* a message handler runs inside */
	struct call	 outer;		/* ...this call, open again at the
					   handler's end */
	uint64_t	 spawn_seq;	/* parent's spawn begin, or 0 */
	struct vclock	*spawn_vc;	/* the parent's clock there, until
					   its first event */
	uint64_t	 last_seq, first_t, last_t;
	uint64_t	 calls, sent_msgs, sent_bytes, recv_msgs, recv_bytes;
	uint64_t	 lost;		/* events of lost markers */
	/*
	 * Its last seq when the model was set from a snapshot (state_load),
	 * else 0: what its events up to there are causally after is not
	 * known, so no check compares their clocks.
	 */
	uint64_t	 base;
	uint64_t	 t_pvm, t_blocked;
	int		 has_exit_rc;
	int32_t		 exit_rc;
	int32_t		 kill_tid;	/* the last pvm_kill aimed at it */
	uint64_t	 kill_seq;	/* (its begin), or 0 */
	int32_t		*kids;
	size_t		 nkids, kidcap;
	struct vclock	*vc;		/* its clock now */
	struct history	 hist;
	struct qmsgs	 queue;
	size_t		 nqueue;
	struct owed	*owed;		/* unmatched receives before their
					   message came */
	int		 unknown_past;	/* first seen past its start (a new
					   coordinator took over): messages
					   and joins before are not known */
	size_t		 nowed, owedcap;
	struct wild	 wild[STATE_WILD_HISTORY];
	uint64_t	 nwild;
	struct pair	*pairs;
	size_t		 npairs, paircap;
	struct episode	*ep;		/* barrier episode it is in */
	struct packing	 pack;		/* its send buffer */
	struct unpacking unpack;	/* its receive buffer */
	int		 stopped;	/* by pmon (state_task_stopped) */
	unsigned	 stop_tool;
	uint32_t	 stop_bp;
	int		 has_brk;	/* its last event is a BREAK */
	struct call	 brk;		/* the call it stopped at */
	uint8_t		 brk_phase;
};

/*
 * A problem found: its JSON object.  The line for people is made from it
 * when asked for (state_load_problem_text), so that problems a snapshot
 * brings back read the same.
 */
struct problem {
	char		*json;
};

/* A deadlocked set already reported (sorted tids). */
struct dlset {
	int32_t		*tids;
	size_t		 n;
};

struct state {
	state_problem_cb cb;
	void		*arg;
	struct host	*hosts;
	size_t		 nhosts, hostcap;
	struct task	**tasks;
	size_t		 ntasks, taskcap;
	size_t		*map;		/* tid hash: task idx + 1, 0 empty */
	size_t		 mapcap;
	struct task	*last;		/* state_event's last task, if current */
	/* Spare queued messages (qmsg_done), a plain array: swapped whole. */
	struct qmsg	*qspare[STATE_QMSG_SPARE];
	size_t		 nqspare;
	struct group	*groups;
	struct problem	*problems;
	size_t		 nproblems, probcap;
	struct dlset	*dls;
	size_t		 ndls, dlcap;
	uint64_t	 problems_dropped;	/* found beyond STATE_PROBLEMS_KEPT */
	/* The horizon of the clock histories: 0 is no bound. */
	uint64_t	 h_events, h_ns;
	uint64_t	 now;		/* the latest corrected time seen */
	uint64_t	 nevents;	/* events seen */
	/*
	 * Set from a snapshot, whose times are durations: the next event's
	 * time places them (retime).
	 */
	int		 retime;
	struct mbox	 mbox;		/* state_mbox.c */
};

/* What a blocked task waits in. */
enum wait_kind { WAIT_NONE, WAIT_RECV, WAIT_BARRIER, WAIT_COLL };

static int	task_end(struct state *, struct task *, enum task_end);
static void	vc_unref(struct vclock *);

/* --- small helpers ----------------------------------------------------- */

/* Grows *p (of *cap elements of size sz) to hold at least n. */
static int
grow(void *p, size_t *cap, size_t n, size_t sz)
{
	void *np;
	size_t ncap;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < n)
		ncap *= 2;
	np = xreallocarray(*(void **)p, ncap, sz);
	*(void **)p = np;
	*cap = ncap;
	return 0;
}

static int
cmp_tid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

static const char *
call_name(uint8_t call)
{
	const char *n = record_call_name(call);

	return n != NULL ? n : "?";
}

static void
json_id(FILE *fp, int32_t tid, uint64_t seq)
{
	fprintf(fp, "\"%" PRId32 ":%" PRIu64 "\"", tid, seq);
}

static int
is_blocking_recv(uint8_t call)
{
	return call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_precv;
}

static void
pkseq_unref(struct pkseq *pk)
{
	if (pk != NULL && --pk->refs == 0)
		free(pk);
}

static void
qmsg_free(struct qmsg *q)
{
	pkseq_unref(q->pk);
	vc_unref(q->vc);
	free(q);
}

/* A cleared queued message, a spare one if there is. */
static struct qmsg *
qmsg_new(struct state *s)
{
	struct qmsg *q;

	if (s->nqspare == 0)
		return xcalloc(1, sizeof(*q));
	q = s->qspare[--s->nqspare];
	memset(q, 0, sizeof(*q));
	return q;
}

/* A message left its queue: kept for the next one, or freed. */
static void
qmsg_done(struct state *s, struct qmsg *q)
{
	if (s->nqspare >= STATE_QMSG_SPARE) {
		qmsg_free(q);
		return;
	}
	pkseq_unref(q->pk);
	vc_unref(q->vc);
	s->qspare[s->nqspare++] = q;
}

/* --- vector clocks ----------------------------------------------------- */

static uint64_t
vc_get(const struct vclock *v, size_t i)
{
	return v != NULL && i < v->n ? v->c[i] : 0;
}

static struct vclock *
vc_ref(struct vclock *v)
{
	if (v != NULL)
		v->refs++;
	return v;
}

static void
vc_unref(struct vclock *v)
{
	if (v != NULL && --v->refs == 0)
		free(v);
}

/*
 * Makes *vp a clock of at least n components that only the caller
 * holds, copying it if it is shared: then it may change.
 */
static int
vc_own(struct vclock **vp, size_t n)
{
	struct vclock *v = *vp, *nv;
	size_t have = v != NULL ? v->n : 0;

	if (v != NULL && v->refs == 1 && n <= have)
		return 0;
	if (n < have)
		n = have;
	if (n > UINT32_MAX)
		return -1;
	nv = xmalloc(sizeof(*nv) + n * sizeof(nv->c[0]));
	nv->refs = 1;
	nv->n = (uint32_t)n;
	if (have > 0)
		memcpy(nv->c, v->c, have * sizeof(nv->c[0]));
	memset(nv->c + have, 0, (n - have) * sizeof(nv->c[0]));
	vc_unref(v);
	*vp = nv;
	return 0;
}

/* Raises component i of *vp to at least x; 1 if it changed. */
static int
vc_raise(struct vclock **vp, size_t i, uint64_t x)
{
	if (x <= vc_get(*vp, i))
		return 0;
	if (vc_own(vp, i + 1) == -1)
		return -1;
	(*vp)->c[i] = x;
	return 1;
}

/*
 * *dst = max(*dst, src) but in component skip (the owner's own, which
 * is implicit); 1 if *dst changed.  An unchanged clock stays shared.
 */
static int
vc_join(struct vclock **dst, const struct vclock *src, size_t skip)
{
	size_t i;

	if (src == NULL)
		return 0;
	for (i = 0; i < src->n; i++)
		if (i != skip && src->c[i] > vc_get(*dst, i))
			break;
	if (i == src->n)
		return 0;
	if (vc_own(dst, src->n) == -1)
		return -1;
	for (; i < src->n; i++)
		if (i != skip && src->c[i] > (*dst)->c[i])
			(*dst)->c[i] = src->c[i];
	return 1;
}

/* Component u of t's clock now. */
static uint64_t
task_comp(const struct task *t, size_t u)
{
	return u == t->idx ? t->last_seq : vc_get(t->vc, u);
}

/* Component u of the clock of q's send (from task snd). */
static uint64_t
msg_comp(const struct qmsg *q, const struct task *snd, size_t u)
{
	return u == snd->idx ? q->seq : vc_get(q->vc, u);
}

/* --- clock histories --------------------------------------------------- */

/*
 * With a time horizon, every 2^16 events the histories of tasks that no
 * longer merge (ended, or only sending) are cut at the horizon too.
 */
#define STATE_SWEEP_MASK	0xffff

static struct hent *
hist_at(const struct history *h, size_t i)
{
	return &h->e[(h->first + i) & (h->cap - 1)];
}

static void
hist_drop_first(struct history *h)
{
	vc_unref(h->gone);
	h->gone = hist_at(h, 0)->vc;
	h->first = (h->first + 1) & (h->cap - 1);
	h->n--;
	h->cut = 1;
}

static void
hist_free(struct history *h)
{
	while (h->n > 0)
		hist_drop_first(h);
	vc_unref(h->gone);
	free(h->e);
}

/* Doubles the ring, keeping the entries in order. */
static int
hist_grow(struct history *h)
{
	struct hent *ne;
	size_t i, ncap = h->cap ? h->cap * 2 : 8;

	ne = xreallocarray(NULL, ncap, sizeof(*ne));
	for (i = 0; i < h->n; i++)
		ne[i] = *hist_at(h, i);
	free(h->e);
	h->e = ne;
	h->first = 0;
	h->cap = ncap;
	return 0;
}

/*
 * Drops t's oldest entries that the horizon no longer needs: the next
 * entry already covers every event of t's last h_events, and every
 * event later than h_ns before the latest time.  The last entry (the
 * clock now) stays.
 */
static void
hist_prune(const struct state *s, struct task *t)
{
	struct history *h = &t->hist;
	const struct hent *next;

	while (h->n >= 2) {
		next = hist_at(h, 1);
		if ((s->h_events == 0 ||
		    next->seq + s->h_events > t->last_seq + 1) &&
		    (s->h_ns == 0 || next->t + s->h_ns > s->now))
			break;
		hist_drop_first(h);
	}
}

static void
hist_sweep(struct state *s)
{
	size_t i;

	for (i = 0; i < s->ntasks; i++)
		hist_prune(s, s->tasks[i]);
}

/* t's clock changed at event seq: the history gets it. */
static int
hist_push(struct state *s, struct task *t, uint64_t seq)
{
	struct history *h = &t->hist;
	struct hent *e;

	if (h->n > 0 && (e = hist_at(h, h->n - 1))->seq == seq) {
		vc_unref(e->vc);
		e->vc = vc_ref(t->vc);
		return 0;
	}
	if (h->n == h->cap && hist_grow(h) == -1)
		return -1;
	e = hist_at(h, h->n++);
	e->seq = seq;
	e->t = s->now;
	e->vc = vc_ref(t->vc);
	hist_prune(s, t);
	return 0;
}

/*
 * The index + 1 of t's last entry at or before seq, 0 if none; -1 when
 * the history was cut there.
 */
static long
hist_find(const struct task *t, uint64_t seq)
{
	const struct history *h = &t->hist;
	size_t lo = 0, hi = h->n;

	/* Mostly the latest: skip the search of a long history. */
	if (hi > 0 && hist_at(h, hi - 1)->seq <= seq)
		return (long)hi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hist_at(h, mid)->seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 && h->cut ? -1 : (long)lo;
}

/*
 * The clock of t's event seq from the history (NULL: zeros); -1 when it
 * is beyond the horizon.
 */
static int
event_vc(const struct task *t, uint64_t seq, const struct vclock **out)
{
	long i = hist_find(t, seq);

	*out = i > 0 ? hist_at(&t->hist, (size_t)i - 1)->vc : NULL;
	return i < 0 ? -1 : 0;
}

/*
 * The send (from, seq) happened before t's event at: t's clock takes
 * the send's clock vc and the send itself.
 */
static int
merge_event(struct state *s, struct task *t, const struct vclock *vc,
    const struct task *from, uint64_t seq, uint64_t at)
{
	int a, b = 0;

	if ((a = vc_join(&t->vc, vc, t->idx)) == -1 || (from != t &&
	    (b = vc_raise(&t->vc, from->idx, seq)) == -1))
		return -1;
	return a || b ? hist_push(s, t, at) : 0;
}

/*
 * The clock of the send (from, seq) when its message is not queued (the
 * model missed the send): from the history, or none beyond the horizon
 * (then only the send itself is merged).
 */
static const struct vclock *
send_vc(const struct task *from, uint64_t seq)
{
	const struct vclock *vc;

	return event_vc(from, seq, &vc) == 0 ? vc : NULL;
}

/* --- tasks ------------------------------------------------------------- */

static size_t
tid_hash(int32_t tid)
{
	return (size_t)((uint32_t)tid * 2654435761u);
}

/* Points the tid's slot at task idx; the newest task of a tid wins. */
static void
map_put(struct state *s, size_t idx)
{
	int32_t tid = s->tasks[idx]->tid;
	size_t i, mask = s->mapcap - 1;

	for (i = tid_hash(tid) & mask; s->map[i] != 0; i = (i + 1) & mask)
		if (s->tasks[s->map[i] - 1]->tid == tid)
			break;
	s->map[i] = idx + 1;
}

static int
map_grow(struct state *s)
{
	size_t i, ncap = s->mapcap ? s->mapcap * 2 : 64;

	if (2 * (s->ntasks + 1) <= s->mapcap)
		return 0;
	free(s->map);
	s->map = xcalloc(ncap, sizeof(*s->map));
	s->mapcap = ncap;
	for (i = 0; i < s->ntasks; i++)
		map_put(s, i);
	return 0;
}

static struct task *
task_find(const struct state *s, int32_t tid)
{
	size_t i, mask;

	if (s->mapcap == 0)
		return NULL;
	mask = s->mapcap - 1;
	for (i = tid_hash(tid) & mask; s->map[i] != 0; i = (i + 1) & mask)
		if (s->tasks[s->map[i] - 1]->tid == tid)
			return s->tasks[s->map[i] - 1];
	return NULL;
}

/* A new task for tid; an older one of the same tid is retired. */
static struct task *
task_new(struct state *s, int32_t tid)
{
	struct task *t, *old = task_find(s, tid);

	if (map_grow(s) == -1 || grow(&s->tasks, &s->taskcap, s->ntasks + 1,
	    sizeof(*s->tasks)) == -1)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->idx = s->ntasks;
	TAILQ_INIT(&t->queue);
	s->tasks[s->ntasks++] = t;
	map_put(s, t->idx);
	if (old != NULL)
		old->retired = 1;
	if (s->last != NULL && s->last->tid == tid)
		s->last = t;
	return t;
}

static struct task *
task_get(struct state *s, int32_t tid)
{
	struct task *t = task_find(s, tid);

	return t != NULL ? t : task_new(s, tid);
}

static void
task_free(struct task *t)
{
	struct qmsg *q;

	while ((q = TAILQ_FIRST(&t->queue)) != NULL) {
		TAILQ_REMOVE(&t->queue, q, entry);
		qmsg_free(q);
	}
	pkseq_unref(t->pack.snap);
	pkseq_unref(t->unpack.pk);
	hist_free(&t->hist);
	vc_unref(t->vc);
	vc_unref(t->spawn_vc);
	free(t->kids);
	free(t->pairs);
	free(t->owed);
	free(t->host);
	free(t->program);
	free(t);
}

static int
task_live(const struct task *t)
{
	return t->end == TASK_LIVE && !t->retired;
}

/* Shown in tasks and position: the coordinator named it or it acted. */
static int
task_shown(const struct task *t)
{
	return (t->registered || t->seen || t->unmonitored) && !t->retired;
}

/*
 * The group server answers only group requests, in its own context: a
 * wildcard receive of a program cannot be waiting for it.
 */
static int
task_is_group_server(const struct task *t)
{
	const char *p, *slash;

	if ((p = t->program) == NULL)
		return 0;
	if ((slash = strrchr(p, '/')) != NULL)
		p = slash + 1;
	return strcmp(p, "pvmgs") == 0;
}

static int
task_add_kid(struct task *t, int32_t kid)
{
	size_t i;

	for (i = 0; i < t->nkids; i++)
		if (t->kids[i] == kid)
			return 0;
	if (grow(&t->kids, &t->kidcap, t->nkids + 1, sizeof(*t->kids)) == -1)
		return -1;
	t->kids[t->nkids++] = kid;
	return 0;
}

/* --- groups ------------------------------------------------------------ */

static struct group *
group_find(const struct state *s, const char *name)
{
	struct group *g;

	for (g = s->groups; g != NULL; g = g->next)
		if (strcmp(g->name, name) == 0)
			return g;
	return NULL;
}

static struct group *
group_get(struct state *s, const char *name)
{
	struct group *g;

	if ((g = group_find(s, name)) != NULL)
		return g;
	g = xcalloc(1, sizeof(*g));
	g->name = xstrdup(name);
	LIST_INIT(&g->eps);
	g->next = s->groups;
	s->groups = g;
	return g;
}

static void
group_free(struct group *g)
{
	struct episode *ep;

	while ((ep = LIST_FIRST(&g->eps)) != NULL) {
		LIST_REMOVE(ep, entry);
		vc_unref(ep->vc);
		free(ep);
	}
	free(g->m);
	free(g->gone);
	free(g->name);
	free(g);
}

static struct member *
group_member(const struct group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->m[i].tid == tid)
			return &g->m[i];
	return NULL;
}

static int
group_join(struct group *g, int32_t tid, int32_t inst)
{
	struct member *m;

	if ((m = group_member(g, tid)) == NULL) {
		if (grow(&g->m, &g->cap, g->n + 1, sizeof(*g->m)) == -1)
			return -1;
		m = &g->m[g->n++];
	}
	m->tid = tid;
	m->inst = inst;
	return 0;
}

static void
group_leave(struct group *g, int32_t tid)
{
	struct member *m;

	if ((m = group_member(g, tid)) != NULL)
		*m = g->m[--g->n];
}

static int
group_add_gone(struct group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->ngone; i++)
		if (g->gone[i] == tid)
			return 0;
	if (grow(&g->gone, &g->gonecap, g->ngone + 1, sizeof(*g->gone)) == -1)
		return -1;
	g->gone[g->ngone++] = tid;
	return 0;
}

/* Is t inside a barrier of g? */
static int
in_barrier(const struct task *t, const struct group *g)
{
	return t->in_call && t->cur.call == PMON_CALL_barrier &&
	    strcmp(t->cur.group, g->name) == 0;
}

static void
rec_group(const struct record *r, char *out)
{
	if (r->glen > 0)	/* no group: r->group may be NULL */
		memcpy(out, r->group, r->glen);
	out[r->glen] = '\0';
}

/* What the task is blocked in, from the begin of its open call. */
static enum wait_kind
task_wait(const struct state *s, const struct task *t)
{
	const struct group *g;
	const struct member *m;

	if (!t->in_call || t->end != TASK_LIVE)
		return WAIT_NONE;
	if (is_blocking_recv(t->cur.call))
		return WAIT_RECV;
	if (t->cur.call == PMON_CALL_barrier)
		return WAIT_BARRIER;
	if (t->cur.call != PMON_CALL_reduce &&
	    t->cur.call != PMON_CALL_gather &&
	    t->cur.call != PMON_CALL_scatter)
		return WAIT_NONE;
	/*
	 * The root of a reduce or gather waits for the members; the members
	 * of a scatter wait for the root.  The others only send.
	 */
	if ((g = group_find(s, t->cur.group)) == NULL ||
	    (m = group_member(g, t->tid)) == NULL)
		return WAIT_NONE;
	if ((m->inst == t->cur.inst) != (t->cur.call == PMON_CALL_scatter))
		return WAIT_COLL;
	return WAIT_NONE;
}

/* --- problems ---------------------------------------------------------- */

/* A problem being written: its JSON to fp. */
struct pbuf {
	FILE		*fp;
	char		*buf;
	size_t		 len;
	const char	*kind;
	int32_t		 tids[STATE_PROBLEM_TIDS];
	size_t		 ntids;
};

/* A task the problem is about (for the callback). */
static void
pb_task(struct pbuf *pb, int32_t tid)
{
	if (pb->ntids < STATE_PROBLEM_TIDS)
		pb->tids[pb->ntids++] = tid;
}

static void
pb_discard(struct pbuf *pb)
{
	if (pb->fp != NULL)
		fclose(pb->fp);
	free(pb->buf);
}

static int
pb_open(struct pbuf *pb, const char *kind)
{
	memset(pb, 0, sizeof(*pb));
	if ((pb->fp = open_memstream(&pb->buf, &pb->len)) == NULL)
		return -1;
	fprintf(pb->fp, "{\"kind\":\"%s\"", kind);
	pb->kind = kind;
	return 0;
}

/* Tells the callback of the finished problem and keeps it. */
static int
pb_emit(struct state *s, struct pbuf *pb)
{
	struct problem *p;
	int bad;

	fputc('}', pb->fp);
	bad = ferror(pb->fp);
	bad |= fclose(pb->fp) != 0;
	pb->fp = NULL;
	if (bad || (s->nproblems < STATE_PROBLEMS_KEPT &&
	    grow(&s->problems, &s->probcap, s->nproblems + 1,
	    sizeof(*s->problems)) == -1)) {
		pb_discard(pb);
		errno = ENOMEM;
		return -1;
	}
	if (s->cb != NULL) {
		struct state_problem sp = { pb->buf, pb->kind, pb->tids,
		    pb->ntids };

		s->cb(&sp, s->arg);
	}
	if (s->nproblems == STATE_PROBLEMS_KEPT) {
		s->problems_dropped++;
		pb_discard(pb);
		return 0;
	}
	p = &s->problems[s->nproblems++];
	p->json = pb->buf;
	return 0;
}

static int
report_waits_on_exited(struct state *s, const struct task *w,
    int32_t exited)
{
	struct pbuf pb;

	if (pb_open(&pb, "waits_on_exited") == -1)
		return -1;
	pb_task(&pb, w->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"exited\":%" PRId32
	    ",\"in\":\"%s\"", w->tid, exited, call_name(w->cur.call));
	return pb_emit(s, &pb);
}

static int
report_unreceived(struct state *s, const struct task *t,
    const struct qmsg *q)
{
	struct pbuf pb;

	if (pb_open(&pb, "unreceived") == -1)
		return -1;
	pb_task(&pb, t->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"from\":%" PRId32
	    ",\"tag\":%" PRId32 ",\"ctx\":%" PRId32 ",\"bytes\":%" PRId32
	    ",\"send\":", t->tid, q->from, q->tag, q->ctx, q->bytes);
	json_id(pb.fp, q->from, q->seq);
	return pb_emit(s, &pb);
}

/* The receive c got c->s1 though q (its filter matched) could have come. */
static int
report_race(struct state *s, const struct task *t, const struct cand *c,
    const struct qmsg *q)
{
	struct pbuf pb;

	if (pb_open(&pb, "race") == -1)
		return -1;
	pb_task(&pb, t->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"recv\":", t->tid);
	json_id(pb.fp, t->tid, c->recv_seq);
	fprintf(pb.fp, ",\"tag\":%" PRId32 ",\"sends\":[", c->tag);
	json_id(pb.fp, c->s1_tid, c->s1_seq);
	fputc(',', pb.fp);
	json_id(pb.fp, q->from, q->seq);
	fputc(']', pb.fp);
	return pb_emit(s, &pb);
}

/*
 * t's unpack r does not read what was packed at the cursor: run (NULL
 * past the end of the message).
 */
static int
report_unpack(struct state *s, const struct task *t, const struct record *r,
    const struct pkrun *run)
{
	const struct unpacking *u = &t->unpack;
	struct pbuf pb;

	if (pb_open(&pb, "unpack_mismatch") == -1)
		return -1;
	pb_task(&pb, t->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"recv\":", t->tid);
	json_id(pb.fp, t->tid, u->recv_seq);
	fputs(",\"send\":", pb.fp);
	json_id(pb.fp, u->from, u->send_seq);
	fprintf(pb.fp, ",\"from\":%" PRId32 ",\"tag\":%" PRId32 ",\"at\":",
	    u->from, u->tag);
	json_id(pb.fp, t->tid, r->seq);
	if (run != NULL)
		fprintf(pb.fp, ",\"packed\":\"%s\"", call_name(run->call));
	else
		fputs(",\"packed\":null", pb.fp);
	fprintf(pb.fp, ",\"unpacked\":\"%s\",\"offset\":%" PRIu64,
	    call_name(r->call), u->offset);
	return pb_emit(s, &pb);
}

/* --- packs and unpacks ------------------------------------------------- */

/*
 * VISTOP's "message unpacked incorrectly": a receiver must unpack the
 * types its sender packed, in the same order and no more.  PVM messages
 * carry no types, so only the instrumented calls tell: every pack call
 * of a task's send buffer since pvm_initsend is kept (consecutive ones
 * of one type as one run), a message sent gets a shared copy, and the
 * unpack calls after the receive that took it consume the runs.  The
 * same type in any chunking is right (pvm_pkint of 10 items, then
 * pvm_upkint of 4 and of 6); another type at the cursor (pvm_upkuint of
 * a pvm_pkint: the types must be the same, not only their sizes) or more
 * than is left is wrong.  Whatever the model cannot follow stops the
 * check: nothing is reported then.
 */

/* The pack call whose data an unpack call reads; 0 if none is known. */
static uint8_t
packed_by(uint8_t call)
{
	switch (call) {
	case PMON_CALL_upkbyte:		return PMON_CALL_pkbyte;
	case PMON_CALL_upkcplx:		return PMON_CALL_pkcplx;
	case PMON_CALL_upkdcplx:	return PMON_CALL_pkdcplx;
	case PMON_CALL_upkdouble:	return PMON_CALL_pkdouble;
	case PMON_CALL_upkfloat:	return PMON_CALL_pkfloat;
	case PMON_CALL_upkint:		return PMON_CALL_pkint;
	case PMON_CALL_upklong:		return PMON_CALL_pklong;
	case PMON_CALL_upkshort:	return PMON_CALL_pkshort;
	case PMON_CALL_upkstr:		return PMON_CALL_pkstr;
	case PMON_CALL_upkuint:		return PMON_CALL_pkuint;
	case PMON_CALL_upkulong:	return PMON_CALL_pkulong;
	case PMON_CALL_upkushort:	return PMON_CALL_pkushort;
	default:			return 0;
	}
}

/* The send buffer cannot be followed (any more). */
static void
pack_off(struct task *t)
{
	pkseq_unref(t->pack.snap);
	t->pack.snap = NULL;
	t->pack.on = 0;
	t->pack.n = 0;
}

/* pvm_initsend: a new, empty send buffer. */
static void
pack_init(struct task *t)
{
	pack_off(t);
	t->pack.on = 1;
}

/* The end of a typed pack call (pvm_pkint, ..., pvm_pkstr). */
static void
pack_add(struct task *t, const struct record *r)
{
	struct packing *p = &t->pack;
	struct pkrun *last;
	int str = r->call == PMON_CALL_pkstr;

	if (!p->on)
		return;
	if (r->rc < 0 || r->bytes < 0) {
		pack_off(t);		/* what it packed is unknown */
		return;
	}
	if (r->bytes == 0 && !str)
		return;
	pkseq_unref(p->snap);
	p->snap = NULL;
	last = p->n > 0 ? &p->run[p->n - 1] : NULL;
	if (last == NULL || last->call != r->call) {
		if (p->n == STATE_PACK_RUNS) {
			pack_off(t);
			return;
		}
		last = &p->run[p->n++];
		memset(last, 0, sizeof(*last));
		last->call = r->call;
	}
	last->bytes += (uint64_t)r->bytes;
	last->nstr += str;
}

/*
 * How the message t sends now was packed: a new reference in *out, or
 * NULL when not known.  -1 when out of memory.
 */
static int
pack_share(struct task *t, struct pkseq **out)
{
	struct packing *p = &t->pack;
	struct pkseq *pk;

	*out = NULL;
	if (!p->on)
		return 0;
	if (p->snap == NULL) {
		pk = xmalloc(sizeof(*pk) + p->n * sizeof(pk->run[0]));
		pk->refs = 1;
		pk->n = p->n;
		memcpy(pk->run, p->run, p->n * sizeof(pk->run[0]));
		p->snap = pk;
	}
	p->snap->refs++;
	*out = p->snap;
	return 0;
}

static void
unpack_stop(struct task *t)
{
	pkseq_unref(t->unpack.pk);
	memset(&t->unpack, 0, sizeof(t->unpack));
}

/* The architecture of t's host; NULL if not known. */
static const char *
task_arch(const struct state *s, const struct task *t)
{
	size_t i;

	if (t == NULL || t->host == NULL)
		return NULL;
	for (i = 0; i < s->nhosts; i++)
		if (strcmp(s->hosts[i].name, t->host) == 0)
			return s->hosts[i].arch[0] != '\0' ?
			    s->hosts[i].arch : NULL;
	return NULL;
}

/*
 * Are the architectures of a's and b's hosts known and different?  Tasks
 * of one host, the common case, need not look their hosts up.
 */
static int
arch_differs(const struct state *s, const struct task *a,
    const struct task *b)
{
	const char *x, *y;

	if (a != NULL && b != NULL && a->host != NULL && b->host != NULL &&
	    strcmp(a->host, b->host) == 0)
		return 0;
	return (x = task_arch(s, a)) != NULL && (y = task_arch(s, b)) != NULL &&
	    strcmp(x, y) != 0;
}

/*
 * The receive r of t took q: its receive buffer is q's message now, to
 * be unpacked from the start.  The bytes of an item (a long) may differ
 * between architectures, so messages between them are not checked.
 */
static void
unpack_start(const struct state *s, struct task *t, const struct record *r,
    struct qmsg *q)
{
	struct unpacking *u = &t->unpack;

	unpack_stop(t);
	if (q->pk == NULL)
		return;
	if (arch_differs(s, task_find(s, q->from), t))
		return;
	u->pk = q->pk;
	q->pk = NULL;
	u->from = q->from;
	u->tag = q->tag;
	u->send_seq = q->seq;
	u->recv_seq = r->seq;
}

/* Reports the unpack r and stops checking the message. */
static int
unpack_bad(struct state *s, struct task *t, const struct record *r,
    const struct pkrun *run)
{
	int rv = report_unpack(s, t, r, run);

	unpack_stop(t);
	return rv;
}

/*
 * The end of an unpack call of t: it must read the type packed at the
 * cursor, and no more than is left of its run.  A string is read whole
 * by pvm_upkstr.  An unpack that failed (past the end of the message,
 * for PVM) is wrong, unless it failed for want of a receive buffer or
 * for its arguments: then the model has lost track.
 */
static int
unpack_step(struct state *s, struct task *t, const struct record *r)
{
	struct unpacking *u = &t->unpack;
	const struct pkrun *run;
	uint8_t want = packed_by(r->call);
	int str = r->call == PMON_CALL_upkstr, done;
	uint64_t n;

	if (u->pk == NULL)
		return 0;
	if (want == 0 || r->rc == PVM_NO_BUF || r->rc == PVM_BAD_PARAM ||
	    (!str && r->bytes < 0)) {
		unpack_stop(t);
		return 0;
	}
	if (!str && r->bytes == 0 && r->rc >= 0)
		return 0;
	if (u->run >= u->pk->n)
		return unpack_bad(s, t, r, NULL);
	run = &u->pk->run[u->run];
	if (run->call != want || r->rc < 0)
		return unpack_bad(s, t, r, run);
	if (str) {
		n = r->bytes > 0 ? (uint64_t)r->bytes : 0;
		done = ++u->nstr >= run->nstr;
	} else {
		n = (uint64_t)r->bytes;
		if (n > run->bytes - u->in_run)
			return unpack_bad(s, t, r, run);
		done = u->in_run + n == run->bytes;
	}
	u->in_run += n;
	u->offset += n;
	if (done) {
		u->run++;
		u->in_run = 0;
		u->nstr = 0;
	}
	return 0;
}

/* The end of a call that packs, unpacks or changes t's buffers. */
static int
buffers_end(struct state *s, struct task *t, const struct record *r)
{
	switch (r->call) {
	case PMON_CALL_initsend:
		if (r->rc < 0)
			pack_off(t);
		else
			pack_init(t);
		return 0;
	case PMON_CALL_pkbyte:
	case PMON_CALL_pkcplx:
	case PMON_CALL_pkdcplx:
	case PMON_CALL_pkdouble:
	case PMON_CALL_pkfloat:
	case PMON_CALL_pkint:
	case PMON_CALL_pklong:
	case PMON_CALL_pkshort:
	case PMON_CALL_pkstr:
	case PMON_CALL_pkuint:
	case PMON_CALL_pkulong:
	case PMON_CALL_pkushort:
		pack_add(t, r);
		return 0;
	case PMON_CALL_mkbuf:
	case PMON_CALL_setsbuf:
	case PMON_CALL_pkmesg:
	case PMON_CALL_pkmesgbody:
	case PMON_CALL_packf:
	case PMON_CALL_vpackf:
		pack_off(t);
		return 0;
	case PMON_CALL_reduce:
	case PMON_CALL_gather:
	case PMON_CALL_scatter:
		/* They send and receive in between: not followed. */
		pack_off(t);
		unpack_stop(t);
		return 0;
	case PMON_CALL_setrbuf:
	case PMON_CALL_freebuf:		/* maybe of the receive buffer */
	case PMON_CALL_recvinfo:
		unpack_stop(t);
		return 0;
	case PMON_CALL_upkmesg:
	case PMON_CALL_unpackf:
	case PMON_CALL_vunpackf:
	case PMON_CALL_upkbyte:
	case PMON_CALL_upkcplx:
	case PMON_CALL_upkdcplx:
	case PMON_CALL_upkdouble:
	case PMON_CALL_upkfloat:
	case PMON_CALL_upkint:
	case PMON_CALL_upklong:
	case PMON_CALL_upkshort:
	case PMON_CALL_upkstr:
	case PMON_CALL_upkuint:
	case PMON_CALL_upkulong:
	case PMON_CALL_upkushort:
		return unpack_step(s, t, r);
	default:
		return 0;
	}
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
static int
queued_match(const struct task *t)
{
	const struct qmsg *q;

	TAILQ_FOREACH(q, &t->queue, entry)
		if (filter_match(t->cur.peer, t->cur.tag, t->cur.ctx, q))
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
 * the message that receive got (the two sends were concurrent).
 */
static void
race_check_send(const struct state *s, struct task *t, struct qmsg *q,
    const struct task *snd)
{
	const struct task *a = NULL;
	const struct wild *w;
	uint64_t i, first, known = task_comp(snd, t->idx);

	first = t->nwild > STATE_WILD_HISTORY ?
	    t->nwild - STATE_WILD_HISTORY : 0;
	/* The receives the send is causally after are the oldest ones. */
	for (i = t->nwild; i > first &&
	    t->wild[(i - 1) % STATE_WILD_HISTORY].seq > known; i--)
		;
	for (; i < t->nwild; i++) {
		w = &t->wild[i % STATE_WILD_HISTORY];
		if (!filter_match(-1, w->tag, w->ctx, q))
			continue;
		/* Receives mostly take from one sender: look it up once. */
		if (a == NULL || a->tid != w->s1_tid)
			a = task_find(s, w->s1_tid);
		/* s1 before a resync: what the send knew of it is unknown. */
		if (a == NULL || w->s1_seq <= a->base ||
		    task_comp(snd, a->idx) >= w->s1_seq)
			continue;	/* sent after s1 */
		cand_add(q, w);
	}
}

/*
 * The wildcard receive w took s1 (whose send had the clock s1vc) from
 * t's queue: the messages still queued that its filter matches and
 * whose send was concurrent with s1 could have come first.  Only the
 * first STATE_WILD_HISTORY that match are looked at, so that a long
 * queue drained by wildcard receives costs no more than a bounded scan
 * per receive.
 */
static void
race_check_recv(const struct state *s, struct task *t, const struct wild *w,
    const struct vclock *s1vc)
{
	const struct task *a, *b;
	struct qmsg *q;
	unsigned seen = 0;

	/* Sends from before a resync have no clock to compare. */
	if ((a = task_find(s, w->s1_tid)) == NULL || w->s1_seq <= a->base)
		return;
	TAILQ_FOREACH(q, &t->queue, entry) {
		if (!filter_match(-1, w->tag, w->ctx, q))
			continue;
		if (++seen > STATE_WILD_HISTORY)
			break;
		if ((b = task_find(s, q->from)) == NULL || q->seq <= b->base)
			continue;
		if (msg_comp(q, b, a->idx) >= w->s1_seq ||
		    (b == a ? w->s1_seq : vc_get(s1vc, b->idx)) >= q->seq)
			continue;
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
static int
race_confirm(struct state *s, const struct task *t, const struct qmsg *q,
    int32_t peer, int32_t tag)
{
	unsigned i;

	for (i = 0; i < q->ncand; i++)
		if (q->cand[i].peer != peer || q->cand[i].tag != tag)
			if (report_race(s, t, &q->cand[i], q) == -1)
				return -1;
	return 0;
}

static void
wild_note(struct task *t, const struct wild *w)
{
	t->wild[t->nwild++ % STATE_WILD_HISTORY] = *w;
}

static struct pair *
pair_get(struct task *t, int32_t to)
{
	size_t i;

	for (i = 0; i < t->npairs; i++)
		if (t->pairs[i].to == to)
			return &t->pairs[i];
	if (grow(&t->pairs, &t->paircap, t->npairs + 1,
	    sizeof(*t->pairs)) == -1)
		return NULL;
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
static int
enqueue(struct state *s, struct task *t, const struct record *r,
    int32_t dst)
{
	struct task *d;
	struct pair *p;
	struct qmsg *q;

	if (dst <= 0 || (dst & ORDER_TID_DAEMON))
		return 0;
	if ((d = task_get(s, dst)) == NULL || (p = pair_get(t, dst)) == NULL)
		return -1;
	t->sent_msgs++;
	t->sent_bytes += nbytes(r->bytes);
	p->msgs++;
	p->bytes += nbytes(r->bytes);
	if (d->end != TASK_LIVE)
		return 0;	/* PVM drops it, and so does the order */
	if (d->unmonitored)
		return 0;	/* its receives are never seen */
	if (d->nowed > 0 && owe_take(d, t->tid, r->tag, r->ctx))
		return 0;	/* received already */
	if ((q = qmsg_new(s)) == NULL)
		return -1;
	/* pvm_psend packs its own message. */
	if (r->call != PMON_CALL_psend && pack_share(t, &q->pk) == -1) {
		qmsg_done(s, q);
		return -1;
	}
	q->from = t->tid;
	q->seq = r->seq;
	q->vc = vc_ref(t->vc);
	q->tag = r->tag;
	q->ctx = r->ctx;
	q->bytes = r->bytes;
	race_check_send(s, d, q, t);
	TAILQ_INSERT_TAIL(&d->queue, q, entry);
	d->nqueue++;
	return 0;
}

/* The destinations of r, as order.c's send_dests finds them. */
static int
sends_apply(struct state *s, struct task *t, const struct record *r)
{
	int32_t *d;
	unsigned i, n = 0;
	int rv = 0;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend)
		return enqueue(s, t, r, r->peer);
	if (r->npeers == 0)
		return 0;
	d = xcalloc(r->npeers, sizeof(*d));
	for (i = 0; i < r->npeers; i++)
		d[i] = record_peer(r, i);
	qsort(d, r->npeers, sizeof(*d), cmp_tid);
	for (i = 0; i < r->npeers; i++)
		if (d[i] != t->tid && (n == 0 || d[n - 1] != d[i]))
			d[n++] = d[i];
	for (i = 0; i < n && rv == 0; i++)
		rv = enqueue(s, t, r, d[i]);
	free(d);
	return rv;
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
	if ((p = pair_get(t, d->tid)) != NULL) {
		p->msgs--;
		p->bytes -= nbytes(q->bytes);
	}
	qmsg_done(s, q);
}

static void
retract_sends(struct state *s, struct task *t, const struct record *r)
{
	size_t i;

	if (r->call == PMON_CALL_send || r->call == PMON_CALL_psend)
		retract_from(s, t, task_find(s, r->peer), r->seq - 1);
	else if (r->call == PMON_CALL_mcast)
		for (i = 0; i < s->ntasks; i++)
			retract_from(s, t, s->tasks[i], r->seq - 1);
}

/* The channel (from, tag, ctx) owes t the next message that comes. */
static int
owe_add(struct task *t, int32_t from, int32_t tag, int32_t ctx)
{
	struct owed *o;
	size_t i;

	for (i = 0; i < t->nowed; i++)
		if (t->owed[i].from == from && t->owed[i].tag == tag &&
		    t->owed[i].ctx == ctx) {
			t->owed[i].n++;
			return 0;
		}
	if (t->nowed == t->owedcap) {
		t->owedcap = t->owedcap ? t->owedcap * 2 : 4;
		o = xreallocarray(t->owed, t->owedcap, sizeof(*o));
		t->owed = o;
	}
	t->owed[t->nowed++] = (struct owed){ from, tag, ctx, 1 };
	return 0;
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
static int
queue_take_oldest(struct state *s, struct task *t, int32_t from, int32_t tag,
    int32_t ctx)
{
	struct qmsg *q;

	TAILQ_FOREACH(q, &t->queue, entry)
		if (q->from == from && q->tag == tag && q->ctx == ctx) {
			TAILQ_REMOVE(&t->queue, q, entry);
			t->nqueue--;
			qmsg_done(s, q);
			return 0;
		}
	return owe_add(t, from, tag, ctx);
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
static int
queue_take_id(struct state *s, struct task *t, const struct record *r,
    uint32_t id)
{
	const struct task *snd;

	if (queue_take_upto(s, t, r->peer, r->tag, r->ctx, id))
		return 0;
	if ((snd = task_find(s, r->peer)) != NULL && snd->seen &&
	    record_msg_id_cmp(snd->last_seq, id) >= 0)
		return 0;
	return owe_add(t, r->peer, r->tag, r->ctx);
}


/*
 * The end of a receive that got a message: the message leaves the
 * queue, the receiver's clock takes the send's, and the race checks
 * run.  filter is the receive's begin when it is known.
 */
static int
receive_apply(struct state *s, struct task *t, const struct order_event *ev,
    const struct call *filter)
{
	const struct record *r = ev->rec;
	const struct vclock *vc = NULL;
	struct task *snd;
	struct qmsg *q;
	struct wild w;
	int rv = 0;

	t->recv_msgs++;
	t->recv_bytes += nbytes(r->bytes);
	if (!(ev->flags & EVENT_MATCHED)) {
		if (!(ev->flags & EVENT_UNMATCHED))
			return 0;
		return record_msg_id(r) != 0 ?
		    queue_take_id(s, t, r, record_msg_id(r)) :
		    queue_take_oldest(s, t, r->peer, r->tag, r->ctx);
	}
	q = queue_take(t, ev->match_tid, ev->match_seq);
	if (record_msg_id(r) != 0)
		(void)queue_take_upto(s, t, ev->match_tid, r->tag, r->ctx,
		    record_msg_id(r));
	snd = task_find(s, ev->match_tid);
	if (q != NULL)
		vc = q->vc;
	else if (snd != NULL)
		vc = send_vc(snd, ev->match_seq);
	if (snd != NULL && merge_event(s, t, vc, snd, ev->match_seq,
	    r->seq) == -1)
		rv = -1;
	if (rv == 0 && q != NULL && filter != NULL)
		rv = race_confirm(s, t, q, filter->peer, filter->tag);
	/* pvm_precv unpacks itself and keeps the receive buffer. */
	if (q != NULL && r->call != PMON_CALL_precv)
		unpack_start(s, t, r, q);
	if (rv == 0 && filter != NULL && filter->peer == -1) {
		w.seq = r->seq;
		w.tag = filter->tag;
		w.ctx = filter->ctx;
		w.s1_tid = ev->match_tid;
		w.s1_seq = ev->match_seq;
		race_check_recv(s, t, &w, vc);
		wild_note(t, &w);
	}
	if (q != NULL)
		qmsg_done(s, q);
	return rv;
}

/* --- barriers ---------------------------------------------------------- */

/*
 * Can the episode's count not be reached by the live members outside
 * the barrier?  Then it waits for members that exited, or for joins.
 */
static int
barrier_short(const struct state *s, const struct group *g,
    const struct episode *ep)
{
	const struct task *u;
	size_t i;
	int left = 0;

	if (ep == NULL || ep->closed || ep->need <= 0)
		return 0;
	for (i = 0; i < g->n; i++)
		if ((u = task_find(s, g->m[i].tid)) == NULL ||
		    (task_live(u) && !in_barrier(u, g)))
			left++;
	return ep->need - ep->entered > left;
}

static int
barrier_enter(struct state *s, struct task *t)
{
	struct group *g;
	struct episode *ep;
	size_t i;

	if ((g = group_get(s, t->cur.group)) == NULL)
		return -1;
	if ((ep = g->open) == NULL) {
		ep = xcalloc(1, sizeof(*ep));
		ep->need = t->cur.inst > 0 ? t->cur.inst : (int)g->n;
		LIST_INSERT_HEAD(&g->eps, ep, entry);
		g->open = ep;
	}
	if (vc_join(&ep->vc, t->vc, SIZE_MAX) == -1 ||
	    vc_raise(&ep->vc, t->idx, t->cur.seq) == -1)
		return -1;
	ep->entered++;
	t->ep = ep;
	if (ep->need > 0 && ep->entered >= ep->need) {
		ep->closed = 1;
		g->open = NULL;
	}
	/* Its exit and this entry are concurrent: either may come first. */
	if (barrier_short(s, g, ep))
		for (i = 0; i < g->ngone; i++)
			if (report_waits_on_exited(s, t, g->gone[i]) == -1)
				return -1;
	return 0;
}

/*
 * The order releases a barrier exit only after every entry of its
 * episode: the first exit closes the episode.
 */
static int
barrier_leave(struct state *s, struct task *t, uint64_t seq)
{
	struct episode *ep = t->ep;
	struct group *g;
	int changed;

	if (ep == NULL)
		return 0;
	t->ep = NULL;
	if (ep->exited == 0 && (g = group_find(s, t->cur.group)) != NULL &&
	    g->open == ep)
		g->open = NULL;
	ep->closed = 1;
	ep->exited++;
	if ((changed = vc_join(&t->vc, ep->vc, t->idx)) == -1 ||
	    (changed && hist_push(s, t, seq) == -1))
		return -1;
	if (ep->exited >= ep->entered) {
		LIST_REMOVE(ep, entry);
		vc_unref(ep->vc);
		free(ep);
	}
	return 0;
}

/* --- events ------------------------------------------------------------ */

/*
 * A task's first event follows its parent's spawn begin: the clock
 * there is the one the spawn's end kept for it, or the parent's now if
 * the parent is still in the spawn (nothing changes a clock inside it).
 */
static int
first_event(struct state *s, struct task *t, uint64_t seq)
{
	struct task *p;
	const struct vclock *vc;
	uint64_t at = t->spawn_seq;
	int rv;

	if (t->parent == 0 || (p = task_find(s, t->parent)) == NULL)
		return 0;
	if (at != 0 && t->spawn_vc != NULL)
		vc = t->spawn_vc;
	else if (at == 0 && p->in_call && p->cur.call == PMON_CALL_spawn) {
		at = p->cur.seq;
		vc = p->vc;
	} else
		vc = send_vc(p, at);
	rv = at != 0 ? merge_event(s, t, vc, p, at, seq) : 0;
	vc_unref(t->spawn_vc);
	t->spawn_vc = NULL;
	return rv;
}

static void
advance(struct task *t, uint64_t last, uint64_t tc)
{
	if (!t->seen)
		t->first_t = tc;
	t->seen = 1;
	if (tc > t->last_t)
		t->last_t = tc;
	if (last > t->last_seq)
		t->last_seq = last;
}

/* Report a receive from a task that has already ended, if it must wait. */
static int
recv_from_ended(struct state *s, struct task *t)
{
	struct task *p;

	if (t->cur.peer == -1 || (p = task_find(s, t->cur.peer)) == NULL ||
	    p->end == TASK_LIVE || queued_match(t))
		return 0;
	return report_waits_on_exited(s, t, p->tid);
}

/*
 * A pvm_kill, or a pvm_sendsig of SIGTERM or SIGKILL: if its victim is,
 * or will be, killed, this is what killed it (the edge to its last
 * event).  Which comes first in the stream, the kill or the victim's
 * end, depends on the order's other constraints.
 */
static void
kill_note(struct state *s, const struct task *t, const struct record *r)
{
	struct task *v;

	if (!record_is_fatal_signal(r))
		return;
	if ((v = task_find(s, r->peer)) == NULL || v->end == TASK_EXITED)
		return;
	v->kill_tid = t->tid;
	v->kill_seq = r->seq;
}

static int
event_begin(struct state *s, struct task *t, const struct order_event *ev)
{
	const struct record *r = ev->rec;
	uint64_t tc = ev->t_corr;

	if (r->call == PMON_CALL_HANDLER && t->in_call && !t->has_outer) {
		t->outer = t->cur;
		t->has_outer = 1;
	}
	t->calls++;
	t->in_call = 1;
	t->cur.call = r->call;
	t->cur.seq = r->seq;
	t->cur.t = tc;
	t->cur.peer = r->peer;
	t->cur.tag = r->tag;
	t->cur.ctx = r->ctx;
	t->cur.inst = r->inst;
	rec_group(r, t->cur.group);
	switch (r->call) {
	case PMON_CALL_send:
	case PMON_CALL_psend:
	case PMON_CALL_mcast:
		return sends_apply(s, t, r);
	case PMON_CALL_recv:
	case PMON_CALL_precv:
		return recv_from_ended(s, t);
	case PMON_CALL_barrier:
		return barrier_enter(s, t);
	case PMON_CALL_exit:
		return task_end(s, t, TASK_EXITED);
	case PMON_CALL_kill:
	case PMON_CALL_sendsig:
		kill_note(s, t, r);
		return 0;
	case PMON_CALL_HANDLER:
		/* It took its message: a receive, as at a receive's end. */
		return record_is_recv(r) ? receive_apply(s, t, ev, NULL) : 0;
	default:
		return 0;
	}
}

static int
spawn_end(struct state *s, struct task *t, const struct record *r,
    uint64_t begin)
{
	struct task *k;
	unsigned i;

	for (i = 0; i < r->npeers; i++) {
		int32_t kid = record_peer(r, i);

		if (kid <= 0 || (k = task_get(s, kid)) == NULL ||
		    task_add_kid(t, kid) == -1)
			return -1;
		if (k->parent == 0)
			k->parent = t->tid;
		if (k->spawn_seq != 0)
			continue;
		k->spawn_seq = begin;
		/* Its clock at the begin: none changed since. */
		if (begin != 0 && !k->seen) {
			vc_unref(k->spawn_vc);
			k->spawn_vc = vc_ref(t->vc);
		}
	}
	return 0;
}

static int
membership(struct state *s, struct task *t, const struct record *r)
{
	char name[RECORD_GROUP_MAX + 1];
	struct group *g;

	if (r->rc < 0)
		return 0;
	rec_group(r, name);
	if (r->call == PMON_CALL_joingroup)
		return (g = group_get(s, name)) == NULL ? -1 :
		    group_join(g, t->tid, r->rc);
	if ((g = group_find(s, name)) != NULL)
		group_leave(g, t->tid);
	return 0;
}

/*
 * The mailbox calls that changed it: a put stored an entry (at the index
 * it returned), a delete or a read with PvmMboxReadAndDelete removed
 * one.  A read names the put it got (the order matched it) or, without
 * an id, the index it asked for.
 */
static int
mbox_end(struct state *s, struct task *t, const struct order_event *ev,
    const struct call *open)
{
	const struct record *r = ev->rec;
	char name[RECORD_GROUP_MAX + 1];

	if (r->rc < 0)
		return 0;
	rec_group(r, name);
	switch (r->call) {
	case PMON_CALL_putinfo:
		return mbox_put(&s->mbox, name, r->rc, t->tid, r->tag,
		    r->bytes, open != NULL ? open->seq : 0);
	case PMON_CALL_delinfo:
		mbox_del(&s->mbox, name, r->inst);
		return 0;
	default:
		if (!(r->tag & PvmMboxReadAndDelete) || r->rc == 0)
			return 0;
		if (ev->flags & EVENT_MATCHED)
			mbox_del_put(&s->mbox, ev->match_tid, ev->match_seq);
		else if (!(r->flags & RECORD_MSGID))
			mbox_del(&s->mbox, name, r->inst);
		return 0;
	}
}

static int
event_end(struct state *s, struct task *t, const struct order_event *ev)
{
	const struct record *r = ev->rec;
	const struct call *open = NULL;
	int rv = 0;

	if (t->in_call && t->cur.call == r->call) {
		uint64_t dt = ev->t_corr > t->cur.t ? ev->t_corr - t->cur.t : 0;

		open = &t->cur;
		t->t_pvm += dt;
		if (is_blocking_recv(r->call) || r->call == PMON_CALL_barrier)
			t->t_blocked += dt;
	}
	/* A receive replaces the receive buffer, with or without message. */
	if (r->call == PMON_CALL_recv || r->call == PMON_CALL_nrecv ||
	    r->call == PMON_CALL_trecv)
		unpack_stop(t);
	if (record_is_send(r))
		rv = sends_apply(s, t, r);
	else if (r->rc < 0 && (r->call == PMON_CALL_send ||
	    r->call == PMON_CALL_psend || r->call == PMON_CALL_mcast))
		retract_sends(s, t, r);
	else if (record_is_recv(r))
		rv = receive_apply(s, t, ev, open);
	else if (r->call == PMON_CALL_barrier)
		rv = barrier_leave(s, t, r->seq);
	else if (r->call == PMON_CALL_joingroup ||
	    r->call == PMON_CALL_lvgroup)
		rv = membership(s, t, r);
	else if (r->call == PMON_CALL_spawn)
		rv = spawn_end(s, t, r, open != NULL ? open->seq : 0);
	else if (r->call == PMON_CALL_putinfo || r->call == PMON_CALL_recvinfo ||
	    r->call == PMON_CALL_delinfo)
		rv = mbox_end(s, t, ev, open);
	else if (r->call == PMON_CALL_exit) {
		t->has_exit_rc = 1;
		t->exit_rc = r->rc;
		rv = task_end(s, t, TASK_EXITED);
	}
	if (rv == 0)
		rv = buffers_end(s, t, r);
	t->in_call = 0;
	if (r->call == PMON_CALL_HANDLER && t->has_outer) {
		t->cur = t->outer;	/* back in the call it interrupted */
		t->in_call = 1;
		t->has_outer = 0;
	}
	return rv;
}

/*
 * After state_load, a task's times are durations (first_t 0, last_t its
 * life so far): they go on from the first event after the snapshot, as
 * if the task's last event before it and the begin of the call it is in
 * had happened then.
 */
static void
retime(struct state *s, uint64_t tc)
{
	struct task *t;
	size_t i;

	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (t->in_call)
			t->cur.t = tc;
		if (t->seen && t->end == TASK_LIVE && t->last_t <= tc) {
			t->first_t = tc - t->last_t;
			t->last_t = tc;
		}
	}
	s->retime = 0;
}

int
state_event(struct state *s, const struct order_event *ev)
{
	const struct record *r = ev->rec;
	struct task *t;
	uint64_t last = r->seq;
	int first;

	if (s->retime)
		retime(s, ev->t_corr);

	/* Runs of events come from one task: skip the hash lookup. */
	if ((t = s->last) == NULL || t->tid != ev->tid) {
		if ((t = task_get(s, ev->tid)) == NULL)
			return -1;
		s->last = t;
	}
	if (ev->t_corr > s->now)
		s->now = ev->t_corr;
	if (s->h_ns != 0 && (++s->nevents & STATE_SWEEP_MASK) == 0)
		hist_sweep(s);
	if (ev->flags & EVENT_LOST) {
		/* What the task was in is unknown now. */
		if (r->bytes > 0) {
			last = r->seq + (uint64_t)r->bytes - 1;
			t->lost += (uint64_t)r->bytes;
		}
		t->in_call = t->has_outer = 0;
		pack_off(t);
		unpack_stop(t);
		advance(t, last, ev->t_corr);
		return 0;
	}
	first = !t->seen;
	if (first && r->seq > 1)
		t->unknown_past = 1;
	advance(t, last, ev->t_corr);
	if (first && first_event(s, t, r->seq) == -1)
		return -1;
	t->has_brk = 0;
	if (r->call == PMON_CALL_SIGNAL)
		return 0;	/* between calls: changes no state */
	if (r->call == PMON_CALL_BREAK) {
		/* Not a call: where the task stopped itself. */
		t->has_brk = 1;
		t->brk_phase = r->phase;
		t->brk.call = (uint8_t)(r->rc > 0 && r->rc < PMON_CALL_MAX ?
		    r->rc : 0);
		t->brk.seq = r->seq;
		t->brk.peer = r->peer;
		t->brk.tag = r->tag;
		t->brk.ctx = r->ctx;
		t->brk.inst = r->inst;
		rec_group(r, t->brk.group);
		return 0;
	}
	if (r->phase == PMON_BEGIN)
		return event_begin(s, t, ev);
	return event_end(s, t, ev);
}

/* --- ends of tasks ----------------------------------------------------- */

/*
 * t exits while a member of groups: tasks in their barriers that t had
 * not entered wait on it, and a barrier that cannot reach its count
 * without it will.
 */
static int
ended_barriers(struct state *s, struct task *t)
{
	struct group *g;
	size_t i;

	for (g = s->groups; g != NULL; g = g->next) {
		if (group_member(g, t->tid) == NULL || in_barrier(t, g))
			continue;
		for (i = 0; i < s->ntasks; i++) {
			struct task *w = s->tasks[i];

			if (w != t && task_wait(s, w) == WAIT_BARRIER &&
			    in_barrier(w, g) &&
			    report_waits_on_exited(s, w, t->tid) == -1)
				return -1;
		}
		if (group_add_gone(g, t->tid) == -1)
			return -1;
	}
	return 0;
}

static int
ended_receives(struct state *s, struct task *t)
{
	size_t i;

	for (i = 0; i < s->ntasks; i++) {
		struct task *w = s->tasks[i];

		if (w != t && task_wait(s, w) == WAIT_RECV &&
		    w->cur.peer == t->tid && !queued_match(w) &&
		    report_waits_on_exited(s, w, t->tid) == -1)
			return -1;
	}
	return 0;
}

/* Messages t never received; those that raced a wildcard receive too. */
static int
ended_queue(struct state *s, struct task *t)
{
	struct qmsg *q;
	unsigned i;
	int rv = 0;

	while ((q = TAILQ_FIRST(&t->queue)) != NULL) {
		TAILQ_REMOVE(&t->queue, q, entry);
		t->nqueue--;
		if (rv == 0)
			rv = report_unreceived(s, t, q);
		for (i = 0; i < q->ncand && rv == 0; i++)
			rv = report_race(s, t, &q->cand[i], q);
		qmsg_done(s, q);
	}
	return rv;
}

static int
task_end(struct state *s, struct task *t, enum task_end how)
{
	struct group *g;

	if (t->end != TASK_LIVE)
		return 0;
	if (ended_receives(s, t) == -1 || ended_barriers(s, t) == -1)
		return -1;
	t->end = how;
	pack_off(t);
	unpack_stop(t);
	for (g = s->groups; g != NULL; g = g->next)
		group_leave(g, t->tid);
	mbox_owner_end(&s->mbox, t->tid);
	return ended_queue(s, t);
}

int
state_task_gone(struct state *s, int32_t tid)
{
	struct task *t;

	if ((t = task_find(s, tid)) == NULL)
		return 0;
	return task_end(s, t, TASK_KILLED);
}

/* --- set up ------------------------------------------------------------ */

struct state *
state_new(state_problem_cb cb, void *arg)
{
	struct state *s;

	s = xcalloc(1, sizeof(*s));
	s->cb = cb;
	s->arg = arg;
	s->h_events = HORIZON_EVENTS_DEFAULT;
	return s;
}

void
state_free(struct state *s)
{
	struct group *g;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ntasks; i++)
		task_free(s->tasks[i]);
	for (i = 0; i < s->nqspare; i++)
		free(s->qspare[i]);
	free(s->tasks);
	free(s->map);
	while ((g = s->groups) != NULL) {
		s->groups = g->next;
		group_free(g);
	}
	for (i = 0; i < s->nhosts; i++) {
		free(s->hosts[i].name);
		free(s->hosts[i].arch);
	}
	free(s->hosts);
	for (i = 0; i < s->nproblems; i++)
		free(s->problems[i].json);
	free(s->problems);
	mbox_free(&s->mbox);
	for (i = 0; i < s->ndls; i++)
		free(s->dls[i].tids);
	free(s->dls);
	free(s);
}

/* Replaces *dst with a copy of src (NULL: ""). */
static int
set_str(char **dst, const char *src)
{
	char *n;

	n = xstrdup(src != NULL ? src : "");
	free(*dst);
	*dst = n;
	return 0;
}

int
state_host(struct state *s, int32_t host_tid, const char *name,
    const char *arch, int agent_up)
{
	struct host *h = NULL;
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		if (s->hosts[i].tid == host_tid)
			h = &s->hosts[i];
	if (h == NULL) {
		if (grow(&s->hosts, &s->hostcap, s->nhosts + 1,
		    sizeof(*s->hosts)) == -1)
			return -1;
		h = &s->hosts[s->nhosts++];
		memset(h, 0, sizeof(*h));
		h->tid = host_tid;
	}
	if (set_str(&h->name, name) == -1 || set_str(&h->arch, arch) == -1)
		return -1;
	h->up = agent_up != 0;
	return 0;
}

/* The host left the virtual machine (pvm_delhosts, console delete). */
int
state_host_deleted(struct state *s, int32_t host_tid)
{
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		if (s->hosts[i].tid == host_tid) {
			s->hosts[i].up = 0;
			s->hosts[i].deleted = 1;
			return 0;
		}
	return -1;
}

static const char *
host_agent(const struct host *h)
{
	if (h->deleted)
		return "deleted";
	return h->up ? "up" : "down";
}

/* Who the task is, and its parent's child. */
static int
task_identify(struct state *s, struct task *t, int32_t parent_tid,
    uint32_t pid, const char *host, const char *program)
{
	struct task *p;

	t->pid = pid;
	if (set_str(&t->host, host) == -1 ||
	    set_str(&t->program, program) == -1)
		return -1;
	if (parent_tid != 0) {
		t->parent = parent_tid;
		if ((p = task_find(s, parent_tid)) != NULL &&
		    task_add_kid(p, t->tid) == -1)
			return -1;
	}
	return 0;
}

int
state_task(struct state *s, int32_t tid, int32_t parent_tid, uint32_t pid,
    const char *host, const char *program)
{
	struct task *t;

	t = task_find(s, tid);
	/* PVM reuses the tids of ended tasks. */
	if (t == NULL || t->end != TASK_LIVE)
		t = task_new(s, tid);
	if (t == NULL)
		return -1;
	t->registered = 1;
	t->unmonitored = 0;	/* listed before its agent heard of it */
	return task_identify(s, t, parent_tid, pid, host, program);
}

/*
 * A task pvmd lists that pmon does not instrument.  A task that acted
 * or registered under that tid and still lives is the one pvmd lists
 * (its agent had not heard of it yet), and stays as it is.
 */
int
state_task_other(struct state *s, int32_t tid, int32_t parent_tid,
    uint32_t pid, const char *host, const char *program)
{
	struct task *t = task_find(s, tid);

	if (t != NULL && t->end == TASK_LIVE &&
	    (t->registered || t->seen || t->unmonitored))
		return 0;
	if (t == NULL || t->end != TASK_LIVE)
		t = task_new(s, tid);
	if (t == NULL)
		return -1;
	t->unmonitored = 1;
	return task_identify(s, t, parent_tid, pid, host, program) == -1 ?
	    -1 : 1;
}

/*
 * It left pvmd's tasks.  Nothing of it was seen, so nothing is said of
 * who waited for it or what it did not receive: the model does not know.
 */
int
state_task_other_end(struct state *s, int32_t tid)
{
	struct task *t = task_find(s, tid);
	struct group *g;

	if (t == NULL || !t->unmonitored || t->end != TASK_LIVE)
		return 0;
	t->end = TASK_EXITED;
	for (g = s->groups; g != NULL; g = g->next)
		group_leave(g, t->tid);
	return 1;
}

/* The live unmonitored tasks of a host, by tid; NULL when out of memory. */
int32_t *
state_others_on(const struct state *s, const char *host, size_t *n)
{
	int32_t *v;
	size_t i;

	v = xcalloc(s->ntasks + 1, sizeof(*v));
	*n = 0;
	for (i = 0; i < s->ntasks; i++) {
		const struct task *t = s->tasks[i];

		if (t->unmonitored && t->end == TASK_LIVE && !t->retired &&
		    t->host != NULL && strcmp(t->host, host) == 0)
			v[(*n)++] = t->tid;
	}
	return v;
}

/* Where a blocked task waits, for people: pvm_recv(t40002, 5). */
static const char *
where(const struct state *s, const struct task *t, char *buf, size_t len)
{
	char from[16], tag[16];

	switch (task_wait(s, t)) {
	case WAIT_RECV:
		if (t->cur.peer == -1)
			snprintf(from, sizeof(from), "any");
		else
			snprintf(from, sizeof(from), "t%x",
			    (unsigned)t->cur.peer);
		if (t->cur.tag == -1)
			snprintf(tag, sizeof(tag), "any");
		else
			snprintf(tag, sizeof(tag), "%" PRId32, t->cur.tag);
		snprintf(buf, len, "%s(%s, %s)", call_name(t->cur.call),
		    from, tag);
		break;
	case WAIT_BARRIER:
	case WAIT_COLL:
		snprintf(buf, len, "%s(%.32s)", call_name(t->cur.call),
		    t->cur.group);
		break;
	default:
		if (t->end == TASK_KILLED && t->kill_seq != 0)
			snprintf(buf, len, "by t%x", (unsigned)t->kill_tid);
		else
			snprintf(buf, len, "-");
	}
	return buf;
}

/* --- deadlocks --------------------------------------------------------- */

/*
 * Calls fn for every task w waits for: its source, every live task for
 * a wildcard receive, the members of its barrier's group not in the
 * barrier (and more when they cannot complete it: wait_short).  u is NULL for a
 * task the model does not know.  Stops when fn returns non-zero.
 */
typedef int (*wait_fn)(const struct state *, const struct task *u,
    void *arg);

/*
 * A barrier the live members cannot complete waits for the members that
 * exited, and for any live task that might still join.
 */
static int
wait_short(const struct state *s, const struct task *w,
    const struct group *g, wait_fn fn, void *arg)
{
	const struct task *u;
	size_t i;
	int rv;

	for (i = 0; i < g->ngone; i++)
		if ((rv = fn(s, task_find(s, g->gone[i]), arg)) != 0)
			return rv;
	for (i = 0; i < s->ntasks; i++) {
		u = s->tasks[i];
		if (u != w && task_live(u) && !task_is_group_server(u) &&
		    group_member(g, u->tid) == NULL && (rv = fn(s, u, arg)) != 0)
			return rv;
	}
	return 0;
}

static int
wait_each(const struct state *s, const struct task *w, wait_fn fn,
    void *arg)
{
	const struct group *g;
	const struct task *u;
	size_t i;
	int rv;

	if (task_wait(s, w) == WAIT_RECV && w->cur.peer != -1)
		return fn(s, task_find(s, w->cur.peer), arg);
	if (task_wait(s, w) == WAIT_RECV) {
		for (i = 0; i < s->ntasks; i++) {
			u = s->tasks[i];
			if (u != w && task_live(u) && !task_is_group_server(u) &&
			    (rv = fn(s, u, arg)) != 0)
				return rv;
		}
		return 0;
	}
	if ((g = group_find(s, w->cur.group)) == NULL ||
	    (w->ep != NULL && w->ep->closed))
		return 0;	/* complete: its exits are on their way */
	for (i = 0; i < g->n; i++) {
		u = task_find(s, g->m[i].tid);
		if (u != w && (u == NULL || !in_barrier(u, g)) &&
		    (rv = fn(s, u, arg)) != 0)
			return rv;
	}
	return barrier_short(s, g, w->ep) ? wait_short(s, w, g, fn, arg) : 0;
}

/*
 * Deadlock candidates: receives that cannot time out, and barriers; not
 * of a task whose past the model did not see, whose queue may hold
 * messages it does not know (a deadlock must be one).
 */
static int
dl_candidate(const struct state *s, const struct task *t)
{
	if (t->unknown_past)
		return 0;
	switch (task_wait(s, t)) {
	case WAIT_RECV:
		return t->cur.call != PMON_CALL_trecv && !queued_match(t);
	case WAIT_BARRIER:
		return 1;
	default:
		return 0;
	}
}

struct dl_scan {
	const uint8_t	*in;
	int		 targets;
};

/* Non-zero when u may still act: unknown, or live outside the set. */
static int
dl_free(const struct state *s, const struct task *u, void *arg)
{
	struct dl_scan *sc = arg;

	(void)s;
	sc->targets++;
	return u == NULL || (task_live(u) && !sc->in[u->idx]);
}

static int
dl_stuck(const struct state *s, const struct task *t, const uint8_t *in)
{
	struct dl_scan sc = { in, 0 };

	return wait_each(s, t, dl_free, &sc) == 0 && sc.targets > 0;
}

/* The greatest set of candidates that wait only on it or on the ended. */
static void
dl_fixpoint(const struct state *s, uint8_t *in)
{
	size_t i;
	int changed = 1;

	for (i = 0; i < s->ntasks; i++)
		in[i] = dl_candidate(s, s->tasks[i]);
	while (changed) {
		changed = 0;
		for (i = 0; i < s->ntasks; i++)
			if (in[i] && !dl_stuck(s, s->tasks[i], in)) {
				in[i] = 0;
				changed = 1;
			}
	}
}

static size_t
uf_find(size_t *up, size_t i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

struct dl_union {
	size_t		*up;
	const uint8_t	*in;
	size_t		 from;
};

static int
dl_link(const struct state *s, const struct task *u, void *arg)
{
	struct dl_union *du = arg;

	(void)s;
	if (u != NULL && (du->in[u->idx] || u->end != TASK_LIVE))
		du->up[uf_find(du->up, u->idx)] = uf_find(du->up, du->from);
	return 0;
}

/* The first task w waits for that is in the set, or NULL. */
struct dl_next {
	const uint8_t	*in;
	const struct task *found;
	int		 ended;		/* look for an ended one instead */
};

static int
dl_pick(const struct state *s, const struct task *u, void *arg)
{
	struct dl_next *dn = arg;

	(void)s;
	if (u == NULL)
		return 0;
	if (dn->ended ? u->end != TASK_LIVE : dn->in[u->idx] != 0) {
		dn->found = u;
		return 1;
	}
	return 0;
}

static const struct task *
dl_next(const struct state *s, const struct task *w, const uint8_t *in,
    int ended)
{
	struct dl_next dn = { in, NULL, ended };

	wait_each(s, w, dl_pick, &dn);
	return dn.found;
}

static int
dl_seen(const struct state *s, const int32_t *tids, size_t n)
{
	size_t i;

	for (i = 0; i < s->ndls; i++)
		if (s->dls[i].n == n &&
		    memcmp(s->dls[i].tids, tids, n * sizeof(*tids)) == 0)
			return 1;
	return 0;
}

static void
write_wait(FILE *fp, const struct state *s, const struct task *t)
{
	fprintf(fp, "{\"tid\":%" PRId32 ",\"in\":\"%s\"", t->tid,
	    call_name(t->cur.call));
	if (task_wait(s, t) == WAIT_RECV)
		fprintf(fp, ",\"from\":%" PRId32 ",\"tag\":%" PRId32,
		    t->cur.peer, t->cur.tag);
	else {
		fputs(",\"group\":", fp);
		json_str_write(fp, t->cur.group);
	}
	fputc('}', fp);
}

/*
 * Follows each task's first wait inside the set from start, into walk.
 * Returns the walk's length; *cycle is the index where it looped back,
 * or -1 when it ended on a task that waits only on ended ones.  pos is
 * scratch of ntasks entries, all -1, and left so.
 */
static size_t
dl_walk(const struct state *s, const struct task *start, const uint8_t *in,
    const struct task **walk, long *pos, long *cycle)
{
	const struct task *cur;
	size_t j, len = 0;

	for (cur = start; cur != NULL && pos[cur->idx] == -1;
	    cur = dl_next(s, cur, in, 0)) {
		pos[cur->idx] = (long)len;
		walk[len++] = cur;
	}
	*cycle = cur != NULL ? pos[cur->idx] : -1;
	for (j = 0; j < len; j++)
		pos[walk[j]->idx] = -1;
	return len;
}

static void
dl_write_cycle(FILE *fp, const struct task **walk, size_t first, size_t len)
{
	size_t j, min = first, n = len - first;

	/* Start the cycle at its lowest tid. */
	for (j = first; j < len; j++)
		if (walk[j]->tid < walk[min]->tid)
			min = j;
	fputs(",\"cycle\":[", fp);
	for (j = 0; j < n; j++)
		fprintf(fp, "%s%" PRId32, j ? "," : "",
		    walk[first + (min - first + j) % n]->tid);
	fputc(']', fp);
}

/*
 * Explains one deadlocked part: a cycle of waits if the walk from some
 * member comes back on itself, else the chain from the lowest member to
 * the ended task its walk ends on.
 */
static void
dl_explain(FILE *fp, const struct state *s, const struct task **comp,
    size_t n, const uint8_t *in, const struct task **walk, long *pos)
{
	const struct task *end;
	size_t i, j, len;
	long cycle;

	for (i = 0; i < n; i++) {
		len = dl_walk(s, comp[i], in, walk, pos, &cycle);
		if (cycle >= 0) {
			dl_write_cycle(fp, walk, (size_t)cycle, len);
			return;
		}
	}
	len = dl_walk(s, comp[0], in, walk, pos, &cycle);
	fputs(",\"chain\":[", fp);
	for (j = 0; j < len; j++)
		fprintf(fp, "%s%" PRId32, j ? "," : "", walk[j]->tid);
	if ((end = dl_next(s, walk[len - 1], in, 1)) != NULL)
		fprintf(fp, ",%" PRId32, end->tid);
	fputc(']', fp);
}

/* Reports one weakly connected part of the set, unless already done. */
static int
dl_report(struct state *s, const struct task **comp, size_t n,
    const uint8_t *in, const struct task **walk, long *pos)
{
	struct pbuf pb;
	int32_t *tids;
	size_t i;

	tids = xcalloc(n, sizeof(*tids));
	for (i = 0; i < n; i++)
		tids[i] = comp[i]->tid;
	if (dl_seen(s, tids, n)) {
		free(tids);
		return 0;
	}
	if (grow(&s->dls, &s->dlcap, s->ndls + 1, sizeof(*s->dls)) == -1 ||
	    pb_open(&pb, "deadlock") == -1) {
		free(tids);
		return -1;
	}
	s->dls[s->ndls].tids = tids;
	s->dls[s->ndls++].n = n;
	fputs(",\"tasks\":[", pb.fp);
	for (i = 0; i < n; i++) {
		fprintf(pb.fp, "%s%" PRId32, i ? "," : "", tids[i]);
		pb_task(&pb, tids[i]);
	}
	fputc(']', pb.fp);
	dl_explain(pb.fp, s, comp, n, in, walk, pos);
	fputs(",\"waits\":[", pb.fp);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', pb.fp);
		write_wait(pb.fp, s, comp[i]);
	}
	fputc(']', pb.fp);
	return pb_emit(s, &pb) == -1 ? -1 : 1;
}

static int
cmp_task_tid(const void *a, const void *b)
{
	const struct task *x = *(const struct task * const *)a;
	const struct task *y = *(const struct task * const *)b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Gathers the set by union-find root and reports each part. */
static size_t
dl_parts(struct state *s, const uint8_t *in, size_t *up)
{
	const struct task **comp, **walk;
	size_t i, j, n, root, found = 0, nt = s->ntasks;
	uint8_t *done;
	long *pos;
	int rv;

	comp = xcalloc(nt, sizeof(*comp));
	walk = xcalloc(nt, sizeof(*walk));
	pos = xcalloc(nt, sizeof(*pos));
	done = xcalloc(nt, sizeof(*done));
	for (i = 0; i < nt; i++)
		pos[i] = -1;
	for (i = 0; i < nt; i++) {
		if (!in[i] || done[root = uf_find(up, i)])
			continue;
		done[root] = 1;
		for (n = 0, j = i; j < nt; j++)
			if (in[j] && uf_find(up, j) == root)
				comp[n++] = s->tasks[j];
		qsort(comp, n, sizeof(*comp), cmp_task_tid);
		if ((rv = dl_report(s, comp, n, in, walk, pos)) == -1)
			break;
		found += (size_t)rv;
	}
	free(comp);
	free(walk);
	free(pos);
	free(done);
	return found;
}

size_t
state_check(struct state *s)
{
	struct dl_union du;
	uint8_t *in;
	size_t *up, i, found = 0;

	if (s->ntasks == 0)
		return 0;
	in = xcalloc(s->ntasks, sizeof(*in));
	up = xcalloc(s->ntasks, sizeof(*up));
	dl_fixpoint(s, in);
	for (i = 0; i < s->ntasks; i++)
		up[i] = i;
	du.up = up;
	du.in = in;
	for (i = 0; i < s->ntasks; i++)
		if (in[i]) {
			du.from = i;
			wait_each(s, s->tasks[i], dl_link, &du);
		}
	found = dl_parts(s, in, up);
	free(in);
	free(up);
	return found;
}

/* --- output ------------------------------------------------------------ */

/* The tasks shown, by tid. */
static const struct task **
tasks_sorted(const struct state *s, size_t *n)
{
	const struct task **v;
	size_t i;

	v = xcalloc(s->ntasks + 1, sizeof(*v));
	for (*n = 0, i = 0; i < s->ntasks; i++)
		if (task_shown(s->tasks[i]))
			v[(*n)++] = s->tasks[i];
	qsort(v, *n, sizeof(*v), cmp_task_tid);
	return v;
}

static const char *
task_state(const struct state *s, const struct task *t)
{
	if (t->unmonitored)
		return t->end == TASK_LIVE ? "unmonitored" : "ended";
	if (t->end == TASK_EXITED)
		return "exited";
	if (t->end == TASK_KILLED)
		return "killed";
	if (t->stopped)
		return "stopped";
	return task_wait(s, t) != WAIT_NONE ? "blocked" : "running";
}

/* Who stopped the task, and where, if it stopped at a breakpoint. */
static void
write_stopped(FILE *fp, const struct task *t)
{
	if (!t->stopped || t->end != TASK_LIVE)
		return;
	fprintf(fp, ",\"stopped\":{\"tool\":%u", t->stop_tool);
	if (t->stop_bp != 0)
		fprintf(fp, ",\"breakpoint\":%" PRIu32, t->stop_bp);
	if (t->has_brk) {
		fprintf(fp, ",\"at\":{\"call\":\"%s\",\"phase\":\"%s\"",
		    call_name(t->brk.call), t->brk_phase == PMON_BEGIN ?
		    "before" : "after");
		if (t->brk.peer != -1)
			fprintf(fp, ",\"peer\":%" PRId32, t->brk.peer);
		if (t->brk.tag != -1)
			fprintf(fp, ",\"tag\":%" PRId32, t->brk.tag);
		if (t->brk.group[0] != '\0') {
			fputs(",\"group\":", fp);
			json_str_write(fp, t->brk.group);
		}
		fputs(",\"event\":", fp);
		json_id(fp, t->tid, t->brk.seq);
		fputc('}', fp);
	}
	fputc('}', fp);
}

static void
write_blocked(FILE *fp, const struct state *s, const struct task *t)
{
	enum wait_kind k = task_wait(s, t);

	if (k == WAIT_NONE)
		return;
	fprintf(fp, ",\"blocked\":{\"in\":\"%s\"", call_name(t->cur.call));
	if (k == WAIT_RECV)
		fprintf(fp, ",\"from\":%" PRId32 ",\"tag\":%" PRId32
		    ",\"ctx\":%" PRId32, t->cur.peer, t->cur.tag, t->cur.ctx);
	else {
		fputs(",\"group\":", fp);
		json_str_write(fp, t->cur.group);
		fprintf(fp, ",\"%s\":%" PRId32, k == WAIT_BARRIER ?
		    "count" : "root", t->cur.inst);
	}
	fputs(",\"since\":", fp);
	json_id(fp, t->tid, t->cur.seq);
	fputc('}', fp);
}

/* Computing: the task's life so far less its time inside PVM. */
static uint64_t
task_computing(const struct task *t)
{
	uint64_t life = t->last_t - t->first_t;

	return life > t->t_pvm ? life - t->t_pvm : 0;
}

static void
write_task(FILE *fp, const struct state *s, const struct task *t)
{
	size_t i;

	fprintf(fp, "{\"tid\":%" PRId32 ",\"host\":", t->tid);
	json_str_write(fp, t->host);
	fprintf(fp, ",\"pid\":%" PRIu32 ",\"parent\":%" PRId32
	    ",\"program\":", t->pid, t->parent);
	json_str_write(fp, t->program);
	fprintf(fp, ",\"state\":\"%s\"", task_state(s, t));
	write_stopped(fp, t);
	write_blocked(fp, s, t);
	if (t->has_exit_rc)
		fprintf(fp, ",\"exit_status\":%" PRId32, t->exit_rc);
	if (t->end == TASK_KILLED && t->kill_seq != 0)
		fprintf(fp, ",\"killed_by\":\"%" PRId32 ":%" PRIu64 "\"",
		    t->kill_tid, t->kill_seq);
	fprintf(fp, ",\"calls\":%" PRIu64 ",\"sent\":{\"msgs\":%" PRIu64
	    ",\"bytes\":%" PRIu64 "},\"received\":{\"msgs\":%" PRIu64
	    ",\"bytes\":%" PRIu64 "}", t->calls, t->sent_msgs, t->sent_bytes,
	    t->recv_msgs, t->recv_bytes);
	fprintf(fp, ",\"time_ns\":{\"computing\":%" PRIu64 ",\"pvm\":%" PRIu64
	    ",\"blocked\":%" PRIu64 "},\"last_seq\":%" PRIu64 ",",
	    task_computing(t), t->t_pvm, t->t_blocked, t->last_seq);
	fprintf(fp, "\"lost\":%" PRIu64 ",\"children\":[", t->lost);
	for (i = 0; i < t->nkids; i++)
		fprintf(fp, "%s%" PRId32, i ? "," : "", t->kids[i]);
	fputs("]}", fp);
}

static void
write_hosts(FILE *fp, const struct state *s)
{
	const struct host *h;
	size_t i;

	fputs(",\"hosts\":[", fp);
	for (i = 0; i < s->nhosts; i++) {
		h = &s->hosts[i];
		fprintf(fp, "%s{\"host_tid\":%" PRId32 ",\"name\":",
		    i ? "," : "", h->tid);
		json_str_write(fp, h->name);
		fputs(",\"arch\":", fp);
		json_str_write(fp, h->arch);
		fprintf(fp, ",\"agent\":\"%s\"}", host_agent(h));
	}
	fputc(']', fp);
}

static int
cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->inst != y->inst)
		return x->inst < y->inst ? -1 : 1;
	return cmp_tid(&x->tid, &y->tid);
}

static int
cmp_group(const void *a, const void *b)
{
	return strcmp((*(const struct group * const *)a)->name,
	    (*(const struct group * const *)b)->name);
}

/* The groups with members or waiters, by name; members by instance. */
static const struct group **
groups_sorted(const struct state *s, size_t *n)
{
	const struct group **v;
	struct group *g;
	size_t ng = 0;

	for (g = s->groups; g != NULL; g = g->next)
		ng++;
	v = xcalloc(ng + 1, sizeof(*v));
	*n = 0;
	for (g = s->groups; g != NULL; g = g->next) {
		if (g->n > 1)	/* g->m is NULL while it never had one */
			qsort(g->m, g->n, sizeof(*g->m), cmp_member);
		if (g->n > 0 || !LIST_EMPTY(&g->eps))
			v[(*n)++] = g;
	}
	qsort(v, *n, sizeof(*v), cmp_group);
	return v;
}

/* Keeps, of the tasks tv, the live ones inside a barrier of g. */
static size_t
barrier_waiters(const struct group *g, const struct task **tv, size_t nt)
{
	size_t i, n = 0;

	for (i = 0; i < nt; i++)
		if (tv[i]->end == TASK_LIVE && in_barrier(tv[i], g))
			tv[n++] = tv[i];
	return n;
}

static int
write_groups(FILE *fp, const struct state *s, const struct task **tv,
    size_t nt)
{
	const struct group **gv;
	const struct task **w;
	size_t i, j, ng, nw;

	gv = groups_sorted(s, &ng);
	w = xcalloc(nt + 1, sizeof(*w));
	fputs(",\"groups\":[", fp);
	for (i = 0; i < ng; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", fp);
		json_str_write(fp, gv[i]->name);
		fputs(",\"members\":[", fp);
		for (j = 0; j < gv[i]->n; j++)
			fprintf(fp, "%s{\"tid\":%" PRId32 ",\"inst\":%" PRId32
			    "}", j ? "," : "", gv[i]->m[j].tid,
			    gv[i]->m[j].inst);
		memcpy(w, tv, nt * sizeof(*w));
		if ((nw = barrier_waiters(gv[i], w, nt)) == 0)
			fputs("],\"barrier\":null}", fp);
		else {
			fputs("],\"barrier\":{\"waiting\":[", fp);
			for (j = 0; j < nw; j++)
				fprintf(fp, "%s%" PRId32, j ? "," : "",
				    w[j]->tid);
			fputs("]}}", fp);
		}
	}
	fputc(']', fp);
	free(w);
	free(gv);
	return 0;
}

static void
write_queue(FILE *fp, const struct task *t)
{
	const struct qmsg *q;
	int first = 1;

	fprintf(fp, "{\"tid\":%" PRId32 ",\"messages\":[", t->tid);
	TAILQ_FOREACH(q, &t->queue, entry) {
		fprintf(fp, "%s{\"from\":%" PRId32 ",\"tag\":%" PRId32
		    ",\"ctx\":%" PRId32 ",\"bytes\":%" PRId32 ",\"send\":",
		    first ? "" : ",", q->from, q->tag, q->ctx, q->bytes);
		json_id(fp, q->from, q->seq);
		fputc('}', fp);
		first = 0;
	}
	fputs("]}", fp);
}

/* Queues of every task that has messages, or of queue_tid alone. */
static void
write_queues(FILE *fp, const struct state *s, int32_t queue_tid)
{
	const struct task *t;
	size_t i;
	int first = 1;

	fputs(",\"queues\":[", fp);
	if (queue_tid != 0) {
		if ((t = task_find(s, queue_tid)) != NULL)
			write_queue(fp, t);
		fputc(']', fp);
		return;
	}
	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (t->nqueue == 0 || t->retired)
			continue;
		if (!first)
			fputc(',', fp);
		write_queue(fp, t);
		first = 0;
	}
	fputc(']', fp);
}

static void
write_traffic(FILE *fp, const struct task **tv, size_t nt)
{
	const struct pair *p;
	size_t i, j;
	int first = 1;

	fputs(",\"traffic\":[", fp);
	for (i = 0; i < nt; i++)
		for (j = 0; j < tv[i]->npairs; j++) {
			p = &tv[i]->pairs[j];
			fprintf(fp, "%s{\"from\":%" PRId32 ",\"to\":%" PRId32
			    ",\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
			    first ? "" : ",", tv[i]->tid, p->to, p->msgs,
			    p->bytes);
			first = 0;
		}
	fputc(']', fp);
}

int
state_write(const struct state *s, unsigned parts, int32_t queue_tid,
    FILE *fp)
{
	const struct task **tv;
	size_t i, nt;
	int rv = 0;

	tv = tasks_sorted(s, &nt);
	fputs("{\"position\":{", fp);
	for (i = 0; i < nt; i++)
		fprintf(fp, "%s\"%" PRId32 "\":%" PRIu64, i ? "," : "",
		    tv[i]->tid, tv[i]->last_seq);
	fputc('}', fp);
	if (parts & STATE_HOSTS)
		write_hosts(fp, s);
	if (parts & STATE_TASKS) {
		fputs(",\"tasks\":[", fp);
		for (i = 0; i < nt; i++) {
			if (i)
				fputc(',', fp);
			write_task(fp, s, tv[i]);
		}
		fputc(']', fp);
	}
	if ((parts & STATE_GROUPS) && write_groups(fp, s, tv, nt) == -1)
		rv = -1;
	if (parts & STATE_QUEUES)
		write_queues(fp, s, queue_tid);
	if (parts & STATE_TRAFFIC)
		write_traffic(fp, tv, nt);
	if (parts & STATE_MAILBOX)
		mbox_write_json(&s->mbox, fp);
	if (parts & STATE_PROBLEMS) {
		fputs(",\"problems\":[", fp);
		for (i = 0; i < s->nproblems; i++)
			fprintf(fp, "%s%s", i ? "," : "", s->problems[i].json);
		fputc(']', fp);
		if (s->problems_dropped > 0)
			fprintf(fp, ",\"problems_not_kept\":%" PRIu64,
			    s->problems_dropped);
	}
	fputc('}', fp);
	free(tv);
	return rv == -1 || ferror(fp) ? -1 : 0;
}

/* --- text output ------------------------------------------------------- */

static void
text_tasks(FILE *fp, const struct state *s, const struct task **tv,
    size_t nt)
{
	char w[64], sent[32], recv[32];
	size_t i;

	fprintf(fp, "%-9s %-12s %-14s %-11s %-24s %-14s %-14s %s\n", "TID",
	    "HOST", "PROGRAM", "STATE", "WHERE", "SENT", "RECV", "LOST");
	for (i = 0; i < nt; i++) {
		const struct task *t = tv[i];

		snprintf(sent, sizeof(sent), "%" PRIu64 "/%" PRIu64 "B",
		    t->sent_msgs, t->sent_bytes);
		snprintf(recv, sizeof(recv), "%" PRIu64 "/%" PRIu64 "B",
		    t->recv_msgs, t->recv_bytes);
		if (t->unmonitored)	/* nothing of it is seen */
			strcpy(sent, "-"), strcpy(recv, "-");
		fprintf(fp, "t%-8x %-12s %-14s %-11s %-24s %-14s %-14s %"
		    PRIu64 "\n", (unsigned)t->tid, t->host != NULL ? t->host :
		    "-", t->program != NULL ? t->program : "-",
		    task_state(s, t), where(s, t, w, sizeof(w)), sent, recv,
		    t->lost);
	}
}

static void
text_hosts(FILE *fp, const struct state *s)
{
	size_t i;

	fprintf(fp, "%-9s %-20s %-10s %s\n", "HOST", "NAME", "ARCH", "AGENT");
	for (i = 0; i < s->nhosts; i++)
		fprintf(fp, "t%-8x %-20s %-10s %s\n",
		    (unsigned)s->hosts[i].tid, s->hosts[i].name,
		    s->hosts[i].arch, host_agent(&s->hosts[i]));
}

static int
text_groups(FILE *fp, const struct state *s, const struct task **tv,
    size_t nt)
{
	const struct group **gv;
	const struct task **w;
	size_t i, j, ng, nw;

	gv = groups_sorted(s, &ng);
	w = xcalloc(nt + 1, sizeof(*w));
	fprintf(fp, "%-16s %s\n", "GROUP", "MEMBERS (TID:INST) / BARRIER");
	for (i = 0; i < ng; i++) {
		fprintf(fp, "%-16s", gv[i]->name);
		for (j = 0; j < gv[i]->n; j++)
			fprintf(fp, " t%x:%" PRId32, (unsigned)gv[i]->m[j].tid,
			    gv[i]->m[j].inst);
		memcpy(w, tv, nt * sizeof(*w));
		if ((nw = barrier_waiters(gv[i], w, nt)) > 0) {
			fputs(" / barrier:", fp);
			for (j = 0; j < nw; j++)
				fprintf(fp, " t%x", (unsigned)w[j]->tid);
		}
		fputc('\n', fp);
	}
	free(w);
	free(gv);
	return 0;
}

static void
text_queue(FILE *fp, const struct task *t)
{
	const struct qmsg *q;

	TAILQ_FOREACH(q, &t->queue, entry)
		fprintf(fp, "t%-8x t%-8x %-6" PRId32 " %-8" PRId32 " t%x:%"
		    PRIu64 "\n", (unsigned)t->tid, (unsigned)q->from,
		    q->tag, q->bytes, (unsigned)q->from, q->seq);
}

static void
text_queues(FILE *fp, const struct state *s, int32_t queue_tid)
{
	const struct task *t;
	size_t i;

	fprintf(fp, "%-9s %-9s %-6s %-8s %s\n", "TID", "FROM", "TAG", "BYTES",
	    "SEND");
	if (queue_tid != 0) {
		if ((t = task_find(s, queue_tid)) != NULL)
			text_queue(fp, t);
		return;
	}
	for (i = 0; i < s->ntasks; i++)
		if (!s->tasks[i]->retired)
			text_queue(fp, s->tasks[i]);
}

static void
text_traffic(FILE *fp, const struct task **tv, size_t nt)
{
	size_t i, j;

	fprintf(fp, "%-9s %-9s %-8s %s\n", "FROM", "TO", "MSGS", "BYTES");
	for (i = 0; i < nt; i++)
		for (j = 0; j < tv[i]->npairs; j++)
			fprintf(fp, "t%-8x t%-8x %-8" PRIu64 " %" PRIu64 "\n",
			    (unsigned)tv[i]->tid, (unsigned)tv[i]->pairs[j].to,
			    tv[i]->pairs[j].msgs, tv[i]->pairs[j].bytes);
}

/* Each part asked for as a table, a blank line between parts. */
int
state_write_text(const struct state *s, unsigned parts, int32_t queue_tid,
    FILE *fp)
{
	const struct task **tv;
	size_t i, nt;
	int rv = 0, sep = 0;

	tv = tasks_sorted(s, &nt);
#define STATE_SEP() do { if (sep++) fputc('\n', fp); } while (0)
	if (parts & STATE_HOSTS) {
		STATE_SEP();
		text_hosts(fp, s);
	}
	if (parts & STATE_TASKS) {
		STATE_SEP();
		text_tasks(fp, s, tv, nt);
	}
	if (parts & STATE_GROUPS) {
		STATE_SEP();
		rv = text_groups(fp, s, tv, nt);
	}
	if (parts & STATE_QUEUES) {
		STATE_SEP();
		text_queues(fp, s, queue_tid);
	}
	if (parts & STATE_TRAFFIC) {
		STATE_SEP();
		text_traffic(fp, tv, nt);
	}
	if (parts & STATE_MAILBOX) {
		STATE_SEP();
		mbox_write_text(&s->mbox, fp);
	}
	if (parts & STATE_PROBLEMS) {
		STATE_SEP();
		for (i = 0; i < s->nproblems; i++)
			state_load_problem_text(fp, s->problems[i].json);
		if (s->problems_dropped > 0)
			fprintf(fp, "... and %" PRIu64 " more, not kept (each "
			    "was sent to the tools when found)\n",
			    s->problems_dropped);
	}
#undef STATE_SEP
	free(tv);
	return rv == -1 || ferror(fp) ? -1 : 0;
}

/* One task, as the snapshot shows it; -1 if the model does not know it. */
int
state_write_task(const struct state *s, int32_t tid, FILE *fp)
{
	const struct task *t = task_find(s, tid);

	if (t == NULL)
		return -1;
	write_task(fp, s, t);
	return ferror(fp) ? -1 : 0;
}

/* --- stops ------------------------------------------------------------- */

/*
 * pmon stopped the task for tool (0: nobody's) at breakpoint bp (0:
 * none), or continued it.  The model does not see stops in the stream:
 * the coordinator says so when the task's agent confirmed.
 */
void
state_task_stopped(struct state *s, int32_t tid, int stopped, unsigned tool,
    uint32_t bp)
{
	struct task *t;

	if ((t = task_find(s, tid)) == NULL)
		return;
	t->stopped = stopped;
	t->stop_tool = tool;
	t->stop_bp = bp;
}

/* The members of group name now (*tids is malloc'd; free it). */
int
state_group_members(const struct state *s, const char *name, int32_t **tids,
    size_t *n)
{
	struct group *g = group_find(s, name);
	size_t i;

	*n = 0;
	*tids = xcalloc(g != NULL ? g->n + 1 : 1, sizeof(**tids));
	for (i = 0; g != NULL && i < g->n; i++)
		(*tids)[(*n)++] = g->m[i].tid;
	return 0;
}

/* --- frontiers --------------------------------------------------------- */

/*
 * The first event of u whose clock has seq of t or later, 0 if none yet;
 * -1 when u's history was cut before it.
 */
static int
future_of(const struct task *u, const struct task *t, uint64_t seq,
    uint64_t *out)
{
	const struct history *h = &u->hist;
	size_t lo = 0, hi = h->n;

	*out = 0;
	if (u == t) {
		*out = seq < t->last_seq ? seq + 1 : 0;
		return 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (vc_get(hist_at(h, mid)->vc, t->idx) >= seq)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0 && h->cut && vc_get(h->gone, t->idx) >= seq)
		return -1;	/* it knew before its first entry kept */
	if (lo < h->n)
		*out = hist_at(h, lo)->seq;
	return 0;
}

static void
write_seq_or_null(FILE *fp, uint64_t seq)
{
	if (seq == 0)
		fputs("null", fp);
	else
		fprintf(fp, "%" PRIu64, seq);
}

/* The horizon, for people: "the last 16384 events of each task". */
static void
horizon_text(const struct state *s, char *buf, size_t size)
{
	const char *unit = "s";
	uint64_t d = s->h_ns;
	int n = 0;

	if (s->h_events != 0)
		n = snprintf(buf, size, "the last %" PRIu64 " events of each "
		    "task", s->h_events);
	if (d == 0)
		return;
	if (d % 1000000000 == 0)
		d /= 1000000000;
	else if (d % 1000 == 0) {
		d /= 1000;
		unit = "us";
	} else
		unit = "ns";
	snprintf(buf + n, size - (size_t)n, "%sthe last %" PRIu64 " %s of "
	    "the stream", n > 0 ? " and " : "", d, unit);
}

/* Says why (t, seq)'s frontier on u is not known: beyond the horizon. */
static void
beyond_horizon(const struct state *s, const struct task *t, uint64_t seq,
    const struct task *u, char *err, size_t size)
{
	char hz[96];

	horizon_text(s, hz, sizeof(hz));
	if (u == t)
		snprintf(err, size, "t%x:%" PRIu64 " is beyond the horizon "
		    "of the frontiers, ", (unsigned)t->tid, seq);
	else
		snprintf(err, size, "t%x:%" PRIu64 ": its future on t%x is "
		    "beyond the horizon of the frontiers, ", (unsigned)t->tid,
		    seq, (unsigned)u->tid);
	snprintf(err + strlen(err), size - strlen(err), "%s (pmon start -H "
	    "EVENTS[,DURATION] keeps more, -H unlimited all)", hz);
}

/*
 * Says why (t, seq)'s frontier on u is not known: the model was set from
 * a snapshot after it (state_load), and knows no clock from before.
 */
static void
before_resync(const struct task *t, uint64_t seq, const struct task *u,
    char *err, size_t size)
{
	if (u == t)
		snprintf(err, size, "t%x:%" PRIu64 " is older than the snapshot "
		    "the state was set from after a loss: its frontiers are not "
		    "known", (unsigned)t->tid, seq);
	else
		snprintf(err, size, "t%x:%" PRIu64 ": its past on t%x reaches "
		    "before the snapshot the state was set from after a loss, "
		    "where the clocks are not known", (unsigned)t->tid, seq,
		    (unsigned)u->tid);
}

/*
 * The frontiers of (t, seq) on the tasks tv into past and future; -1
 * with err when the history does not reach back far enough.
 */
static int
frontier_of(const struct state *s, const struct task *t, uint64_t seq,
    const struct task **tv, size_t nt, uint64_t *past, uint64_t *future,
    char *err, size_t size)
{
	const struct vclock *vc;
	size_t i;

	if (seq <= t->base) {
		before_resync(t, seq, t, err, size);
		return -1;
	}
	if (event_vc(t, seq, &vc) == -1) {
		beyond_horizon(s, t, seq, t, err, size);
		return -1;
	}
	for (i = 0; i < nt; i++) {
		past[i] = tv[i] == t ? seq - 1 : vc_get(vc, tv[i]->idx);
		if (past[i] < tv[i]->base) {
			before_resync(t, seq, tv[i], err, size);
			return -1;
		}
		if (future_of(tv[i], t, seq, &future[i]) == -1) {
			beyond_horizon(s, t, seq, tv[i], err, size);
			return -1;
		}
	}
	return 0;
}

static void
write_frontier(FILE *fp, const struct task *t, uint64_t seq,
    const struct task **tv, size_t nt, const uint64_t *past,
    const uint64_t *future)
{
	size_t i;

	fputs("{\"event\":", fp);
	json_id(fp, t->tid, seq);
	fputs(",\"past\":{", fp);
	for (i = 0; i < nt; i++) {
		fprintf(fp, "%s\"%" PRId32 "\":", i ? "," : "", tv[i]->tid);
		write_seq_or_null(fp, past[i]);
	}
	fputs("},\"future\":{", fp);
	for (i = 0; i < nt; i++) {
		fprintf(fp, "%s\"%" PRId32 "\":", i ? "," : "", tv[i]->tid);
		write_seq_or_null(fp, future[i]);
	}
	fputs("}}", fp);
}

int
state_frontier(const struct state *s, int32_t tid, uint64_t seq, FILE *fp,
    char *err, size_t size)
{
	const struct task **tv, *t;
	uint64_t *past = NULL, *future = NULL;
	size_t nt;
	int rv = -1;

	if ((t = task_find(s, tid)) == NULL || !t->seen) {
		snprintf(err, size, "unknown task");
		return -1;
	}
	if (seq == 0 || seq > t->last_seq) {
		snprintf(err, size, "event not seen yet");
		return -1;
	}
	tv = tasks_sorted(s, &nt);
	past = xcalloc(nt + 1, sizeof(*past));
	future = xcalloc(nt + 1, sizeof(*future));
	if (frontier_of(s, t, seq, tv, nt, past, future, err, size) == 0) {
		write_frontier(fp, t, seq, tv, nt, past, future);
		rv = 0;
		if (ferror(fp)) {
			snprintf(err, size, "write error");
			rv = -1;
		}
	}
	free(tv);
	free(past);
	free(future);
	return rv;
}

/* --- the horizon ------------------------------------------------------- */

void
state_set_horizon(struct state *s, uint64_t events, uint64_t ns)
{
	size_t i;

	s->h_events = events;
	s->h_ns = ns;
	for (i = 0; i < s->ntasks; i++)
		hist_prune(s, s->tasks[i]);
}

/* --- restoring a snapshot (state_load.c) ------------------------------- */

int
state_has_task(const struct state *s, int32_t tid)
{
	const struct task *t = task_find(s, tid);

	return t != NULL && task_shown(t);
}

struct state *
state_restore_new(const struct state *s)
{
	struct state *ns;

	if ((ns = state_new(s->cb, s->arg)) == NULL)
		return NULL;
	ns->h_events = s->h_events;
	ns->h_ns = s->h_ns;
	return ns;
}

/*
 * The tasks in the order old learnt them, so that what is listed or
 * looked for in that order (queues, the waits of a deadlock) comes out
 * as it did before the resync.
 */
int
state_restore_tasks(struct state *s, const struct state *old,
    const int32_t *tids, size_t n)
{
	const struct task *o;
	size_t i;

	for (i = 0; i < old->ntasks; i++) {
		o = old->tasks[i];
		if (!o->retired && bsearch(&o->tid, tids, n, sizeof(*tids),
		    cmp_tid) != NULL && task_new(s, o->tid) == NULL)
			return -1;
	}
	for (i = 0; i < n; i++)
		if (task_find(s, tids[i]) == NULL &&
		    task_new(s, tids[i]) == NULL)
			return -1;
	return 0;
}

/* Where it waits: the begin of its call, at a time retime sets. */
static void
restore_call(struct task *t, const struct restore_task *rt)
{
	t->in_call = 1;
	t->cur.call = rt->call;
	t->cur.seq = rt->since;
	t->cur.peer = rt->peer;
	t->cur.tag = rt->tag;
	t->cur.ctx = rt->ctx;
	t->cur.inst = rt->inst;
	memcpy(t->cur.group, rt->group, sizeof(t->cur.group));
}

int
state_restore_task(struct state *s, const struct restore_task *rt)
{
	struct task *t = task_find(s, rt->tid);
	size_t i;

	if (t == NULL || set_str(&t->host, rt->host) == -1 ||
	    set_str(&t->program, rt->program) == -1)
		return -1;
	t->registered = !rt->unmonitored;
	t->unmonitored = rt->unmonitored;
	t->seen = rt->last_seq > 0;
	t->parent = rt->parent;
	t->pid = rt->pid;
	t->end = rt->end == RESTORE_EXITED ? TASK_EXITED :
	    rt->end == RESTORE_KILLED ? TASK_KILLED : TASK_LIVE;
	t->has_exit_rc = rt->has_exit_rc;
	t->exit_rc = rt->exit_rc;
	t->kill_tid = rt->kill_tid;
	t->kill_seq = rt->kill_seq;
	t->calls = rt->calls;
	t->sent_msgs = rt->sent_msgs;
	t->sent_bytes = rt->sent_bytes;
	t->recv_msgs = rt->recv_msgs;
	t->recv_bytes = rt->recv_bytes;
	t->last_seq = t->base = rt->last_seq;
	t->lost = rt->lost;
	t->t_pvm = rt->pvm;
	t->t_blocked = rt->blocked;
	/* Its life so far: computing is last_t - first_t - t_pvm. */
	t->last_t = rt->computing + rt->pvm;
	if (rt->call != 0)
		restore_call(t, rt);
	/* As listed: a search per child would make a long list quadratic. */
	if (grow(&t->kids, &t->kidcap, rt->nkids, sizeof(*t->kids)) == -1)
		return -1;
	for (i = 0; i < rt->nkids; i++)
		t->kids[t->nkids++] = rt->kids[i];
	return 0;
}

int
state_restore_message(struct state *s, int32_t to, int32_t from,
    uint64_t seq, int32_t tag, int32_t ctx, int32_t bytes)
{
	struct task *d = task_find(s, to);
	struct qmsg *q;

	if (d == NULL || (q = qmsg_new(s)) == NULL)
		return -1;
	q->from = from;
	q->seq = seq;
	q->tag = tag;
	q->ctx = ctx;
	q->bytes = bytes;
	TAILQ_INSERT_TAIL(&d->queue, q, entry);
	d->nqueue++;
	return 0;
}

int
state_has_group(const struct state *s, const char *group)
{
	return group_find(s, group) != NULL;
}

int
state_restore_group(struct state *s, const char *group)
{
	return group_get(s, group) != NULL ? 0 : -1;
}

int
state_restore_member(struct state *s, const char *group, int32_t tid,
    int32_t inst)
{
	struct group *g;

	/* state_load lists each member once: no search. */
	if ((g = group_get(s, group)) == NULL ||
	    grow(&g->m, &g->cap, g->n + 1, sizeof(*g->m)) == -1)
		return -1;
	g->m[g->n].tid = tid;
	g->m[g->n++].inst = inst;
	return 0;
}

int
state_restore_traffic(struct state *s, int32_t from, int32_t to,
    uint64_t msgs, uint64_t bytes)
{
	struct task *t = task_find(s, from);
	struct pair *p;

	/* As listed, without a search per pair. */
	if (t == NULL || grow(&t->pairs, &t->paircap, t->npairs + 1,
	    sizeof(*t->pairs)) == -1)
		return -1;
	p = &t->pairs[t->npairs++];
	p->to = to;
	p->msgs = msgs;
	p->bytes = bytes;
	return 0;
}

int
state_restore_problem(struct state *s, const char *json,
    const int32_t *deadlock, size_t n)
{
	int32_t *tids = NULL;

	if (s->nproblems == STATE_PROBLEMS_KEPT ||
	    grow(&s->problems, &s->probcap, s->nproblems + 1,
	    sizeof(*s->problems)) == -1 ||
	    (n > 0 && grow(&s->dls, &s->dlcap, s->ndls + 1,
	    sizeof(*s->dls)) == -1))
		return -1;
	if (n > 0) {
		tids = xcalloc(n, sizeof(*tids));
		memcpy(tids, deadlock, n * sizeof(*tids));
	}
	s->problems[s->nproblems].json = xstrdup(json);
	s->nproblems++;
	if (n > 0) {
		s->dls[s->ndls].tids = tids;
		s->dls[s->ndls++].n = n;
	}
	return 0;
}

/*
 * One episode per group for the tasks blocked in its barrier.  The
 * snapshot shows who waits, not how many have left already: an episode
 * whose count the waiters reach is complete (its exits are on their
 * way), else it still takes entries.  A group listed with neither
 * members nor waiters has an episode that a task killed inside keeps.
 */
static int
restore_barriers(struct state *s)
{
	struct episode *ep;
	struct group *g;
	struct task *t;
	size_t i;

	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (!t->in_call || t->cur.call != PMON_CALL_barrier)
			continue;
		if ((g = group_get(s, t->cur.group)) == NULL)
			return -1;
		if ((ep = LIST_FIRST(&g->eps)) == NULL) {
			ep = xcalloc(1, sizeof(*ep));
			ep->need = t->cur.inst > 0 ? t->cur.inst : (int)g->n;
			LIST_INSERT_HEAD(&g->eps, ep, entry);
		}
		ep->entered++;
		t->ep = ep;
	}
	for (g = s->groups; g != NULL; g = g->next) {
		if ((ep = LIST_FIRST(&g->eps)) != NULL) {
			ep->closed = ep->need > 0 && ep->entered >= ep->need;
			g->open = ep->closed ? NULL : ep;
		} else if (g->n == 0) {
			/* Listed for an episode a killed task keeps. */
			ep = xcalloc(1, sizeof(*ep));
			ep->closed = 1;
			LIST_INSERT_HEAD(&g->eps, ep, entry);
		}
	}
	return 0;
}

int
state_restore_finish(struct state *s, uint64_t problems_not_kept,
    char *err, size_t errsize)
{
	const struct task *t;
	size_t i;

	s->problems_dropped = problems_not_kept;
	if (restore_barriers(s) == -1) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (t->in_call && task_wait(s, t) == WAIT_NONE) {
			snprintf(err, errsize, "task %" PRId32 " is blocked in "
			    "%s, which its groups do not explain", t->tid,
			    call_name(t->cur.call));
			return -1;
		}
	}
	return 0;
}

int
state_restore_mbox(struct state *s, const char *name, int32_t index,
    int32_t owner, int32_t flags, int32_t bytes, uint64_t put)
{
	return mbox_put(&s->mbox, name, index, owner, flags, bytes, put);
}

void
state_restore_swap(struct state *s, struct state *ns)
{
	struct state tmp = *s;

	*s = *ns;
	*ns = tmp;
	s->retime = 1;
}
