/*
 * What the files of the state model share, and nobody else sees
 * (doc/state.md, "Files"): state.c, the model, its set up and its
 * tasks; state_event.c, the events that change it and the send and
 * receive buffers; state_causal.c, what each event follows, Lamport
 * numbers and the searches of the past;
 * state_groups.c, groups and barriers; state_queues.c, queues and
 * races; state_problems.c, the problems; state_deadlock.c, deadlocks;
 * state_frontier.c, frontiers; state_write.c, the JSON and the tables;
 * state_restore.c and state_load.c, a snapshot read back;
 * state_mbox.c, the mailbox.
 *
 * The model's structures come first, then what each file offers the
 * others, then the helpers that every event calls, static and in line,
 * so that the boundaries between files cost the events nothing.  A
 * function that is not static is named state_* (mbox_* in
 * state_mbox.c): order.c has static functions of the same short names
 * for its own group model (group_get, barrier_enter, ...), and the two
 * must never meet at link time.
 */
#ifndef PMON_STATE_INTERNAL_H
#define PMON_STATE_INTERNAL_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonstr.h"
#include "record.h"
#include "state.h"

/*
 * Problems `pmon problems` lists: later ones still go to the tools and
 * the breakpoints as they are found, and are only counted (a racy
 * program may find one per receive).
 */
#define STATE_PROBLEMS_KEPT	4096

/* Wildcard receives per task that later sends are checked against. */
#define STATE_WILD_HISTORY	64
/* Receives one queued message may have overtaken, kept for the check. */
#define STATE_MSG_CANDS		4
/*
 * Queued-message entries kept for reuse (13 MB at most): a storm queues
 * and takes many, one per task in flight.
 */
#define STATE_QMSG_SPARE	65536
/* Runs (packs of one type in a row) a message may have and be checked. */
#define STATE_PACK_RUNS		32

/*
 * An event that another follows (state_causal.c): a task's event, by
 * task index and seq, with its Lamport number.
 */
struct cause {
	uint32_t	 task;
	uint64_t	 seq;
	uint64_t	 lam;
};

/* The entries of a barrier episode, which every exit follows. */
struct causes {
	unsigned	 refs;
	uint32_t	 n, cap;
	uint64_t	 lam;		/* the greatest of their numbers */
	struct cause	 c[];
};

/*
 * An event of a task that follows events of other tasks: the end of a
 * receive (the send), a task's first event (its parent's spawn), a
 * barrier exit (every entry of its episode: all).  Nothing else links
 * tasks, so these are the whole causal order.
 */
struct link {
	uint64_t	 seq;
	uint64_t	 lam;		/* its Lamport number */
	uint64_t	 t;		/* its corrected time (the horizon) */
	struct cause	 from;		/* unless all */
	struct causes	*all;
};

/*
 * A task's links, oldest first, in a ring of cap (a power of two).
 * Those older than the horizon are dropped: first_seq is the seq of the
 * first link ever (0: none yet), gone_seq and gone_lam those of the
 * newest dropped (0: none), gone_by what they followed.
 */
struct links {
	struct link	*e;
	size_t		 first, n, cap;
	uint64_t	 first_seq, gone_seq, gone_lam;
	/*
	 * What the dropped links followed: the latest cause on each task
	 * and the link that had it (at), a hash by task index (free slots
	 * have task UINT32_MAX).  A search past gone_seq needs only these.
	 */
	struct gone_cause {
		struct cause	 c;
		uint64_t	 at;
	}		*gone_by;
	size_t		 ngone, gonecap;
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
	uint64_t	 lam;		/* the send's Lamport number */
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

/* One pvm_barrier episode of a group, and its entries. */
struct episode {
	LIST_ENTRY(episode) entry;
	struct causes	*entries;
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
	char		*via;		/* the intermediate coordinator's
					   host its agent dials, or NULL */
	int		 up;
	int		 deleted;	/* left the virtual machine */
};

enum task_end { TASK_LIVE, TASK_EXITED, TASK_KILLED };

/*
 * A message handler (pvm_addmhf): its id and the messages it takes.  A
 * task keeps at most STATE_HANDLERS_MAX (the first ones).
 */
#define STATE_HANDLERS_MAX	256
struct handler {
	int32_t		 mhid, src, tag, ctx;
};

/*
 * Every event reads and writes its first two cache lines (state_event:
 * where the task is, its times and counts, the call it is in); what
 * only some events or the queries touch comes after.
 */
struct task {
	int32_t		 tid;
	int		 seen;
	int		 in_call;
	int		 has_outer;	/* a message handler runs inside */
	int		 has_brk;	/* its last event is a BREAK */
	int		 unknown_past;	/* first seen past its start (a new
					   coordinator took over): messages
					   and joins before are not known */
	enum task_end	 end;
	uint64_t	 last_seq, first_t, last_t;
	uint64_t	 calls, t_pvm, t_blocked;
	struct call	 cur;
	uint64_t	 sent_msgs, sent_bytes, recv_msgs, recv_bytes;
	uint64_t	 lost;		/* events of lost markers */
	/*
	 * Its last seq when the model was set from a snapshot (state_load),
	 * else 0: what its events up to there are causally after is not
	 * known, so no check compares their clocks.
	 */
	uint64_t	 base;
	int32_t		 parent;
	uint32_t	 pid;
	char		*host, *program;
	size_t		 idx;
	int		 registered;
	int		 unmonitored;	/* in pvmd's tasks, not instrumented
					   (state_task_other) */
	int		 retired;	/* its tid was reused */
	struct call	 outer;		/* the call a handler interrupted,
					   open again at the handler's end */
	struct handler	*handlers;	/* pvm_addmhf's, not deleted */
	size_t		 nhandlers;
	uint64_t	 spawn_seq;	/* parent's spawn begin, or 0 */
	int		 has_exit_rc;
	int32_t		 exit_rc;
	int32_t		 kill_tid;	/* the last pvm_kill aimed at it */
	uint64_t	 kill_seq;	/* (its begin), or 0 */
	int32_t		*kids;
	size_t		 nkids, kidcap;
	int32_t		 listed_by;	/* the parent whose kids list it */
	/*
	 * Lamport numbers: event seq has seq + lam_off, lam_off as of
	 * its last link (state_causal.c).  last_out is its last event
	 * that another may follow (a send, a spawn, a barrier entry).
	 */
	uint64_t	 lam_off, last_out;
	struct links	 links;
	size_t		 host_hint;	/* its host's index, maybe */
	/*
	 * Tasks whose receive named it (by index; some may wait on
	 * another since), and the tid its own receive named last.
	 */
	uint32_t	*waiters;
	size_t		 nwaiters, waitercap;
	int32_t		 wait_reg;
	struct qmsgs	 queue;
	size_t		 nqueue;
	struct owed	*owed;		/* unmatched receives before their
					   message came */
	size_t		 nowed, owedcap;
	struct wild	 wild[STATE_WILD_HISTORY];
	uint64_t	 nwild;
	uint64_t	 wild_same;	/* the latest ones in a row that took
					   from one sender */
	struct pair	*pairs;
	size_t		 npairs, paircap;
	uint32_t	*pairmap;	/* hash of pairs by to: index + 1 */
	size_t		 pairmapcap, pairs_indexed;
	struct episode	*ep;		/* barrier episode it is in */
	struct packing	 pack;		/* its send buffer */
	struct unpacking unpack;	/* its receive buffer */
	int		 stopped;	/* by pmon (state_task_stopped) */
	unsigned	 stop_tool;
	uint32_t	 stop_bp;
	struct call	 brk;		/* the call it stopped at */
	uint8_t		 brk_phase;
};

/*
 * A problem found: its JSON object, as the tools get it and the snapshot
 * holds it (the pmon command makes its line for people from it).
 */
struct problem {
	char		*json;
};

/* A deadlocked set already reported (sorted tids). */
struct dlset {
	int32_t		*tids;
	size_t		 n;
};

/*
 * The message mailbox (state_mbox.c): each entry pvm_putinfo stored and
 * nobody deleted, by name and index.
 */
struct mbox_entry {
	char		*name;
	int32_t		 index;
	int32_t		 owner;		/* the task that put it */
	int32_t		 flags;		/* pvm_putinfo's (PvmMbox*) */
	int32_t		 bytes;
	uint64_t	 put;		/* the seq of its put's begin */
};
struct mbox {
	struct mbox_entry *v;		/* by name, then index */
	size_t		 n, cap;
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
	/* Spare queued messages (qmsg_done), listed through their entries. */
	struct qmsg	*qspare;	/* linked by entry.tqe_next */
	size_t		 nqspare;
	struct group	*groups;
	struct problem	*problems;
	size_t		 nproblems, probcap;
	struct dlset	*dls;
	size_t		 ndls, dlcap;
	uint64_t	 problems_dropped;	/* found beyond STATE_PROBLEMS_KEPT */
	/* The horizon of the links: 0 is no bound. */
	uint64_t	 h_events, h_ns;
	/* state_reach's marks and stack, reused (state_causal.c). */
	struct walk	*walk;
	/* Waiters on a task the model does not know (state_queues.c). */
	uint32_t	*orphans;
	size_t		 norphans, orphancap;
	uint64_t	 races_unchecked;	/* causality beyond reach */
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

/* A problem being written: its JSON to fp. */
struct pbuf {
	FILE		*fp;
	char		*buf;
	size_t		 len;
	const char	*kind;
	int32_t		 tids[STATE_PROBLEM_TIDS];
	size_t		 ntids;
};

/* state.c */

/* Grows *p (of *cap elements of size sz) to hold at least n. */
void	state_grow(void *p, size_t *cap, size_t n, size_t sz);
/* qsort's comparisons of tids, and of tasks by tid. */
int	state_cmp_tid(const void *, const void *);
int	state_cmp_task_tid(const void *, const void *);
const char	*state_call_name(uint8_t call);
/* An event's id, "TID:SEQ". */
void	state_json_id(FILE *, int32_t tid, uint64_t seq);
/* Replaces *dst with a copy of src (NULL: ""). */
void	state_set_str(char **dst, const char *src);
/* A new task for tid; an older one of the same tid is retired. */
struct task	*state_task_new(struct state *, int32_t tid);
void	state_task_add_kid(struct task *, struct task *kid);

/* state_event.c */

/* How the message t sends now was packed: a new reference, or NULL. */
struct pkseq	*state_pack_share(struct task *t);
/* The receive r of t took q: its unpacks are checked against q's packs. */
void	state_unpack_start(const struct state *, struct task *t,
	    const struct record *r, struct qmsg *q);

/* state_causal.c */

/* Lamport numbers of t's event seq: exact, or bounds beyond the horizon. */
uint64_t state_lam_below(const struct task *t, uint64_t seq);
uint64_t state_lam_above(const struct task *t, uint64_t seq);
/* t's event at follows the event from of another task (state_out). */
void	state_link(struct state *, struct task *t, uint64_t at,
	    const struct cause *from);
/* t's barrier exit at follows every entry of its episode. */
void	state_link_all(struct state *, struct task *t, uint64_t at,
	    struct causes *all);
/* An event of t that others may follow (a send, a spawn, an entry). */
struct cause state_out(struct task *t, uint64_t seq);
void	state_links_free(struct links *);
/* Cuts every task's links at the horizon. */
void	state_links_sweep(struct state *);
/*
 * Is (a, x) in the causal past of (b, y), or the same event?  1 yes,
 * 0 no, -1 not known: the search reached beyond the horizon or its
 * budget.
 */
int	state_reach(const struct state *, const struct task *a, uint64_t x,
	    const struct task *b, uint64_t y);
/*
 * The last event of each task before (t, seq), and the first after it,
 * by task index (0: none); -1 when dropped links might change them, with
 * *why the task whose links were dropped.
 */
int	state_past(const struct state *, const struct task *t, uint64_t seq,
	    uint64_t *past, const struct task **why);
int	state_future(const struct state *, const struct task *t,
	    uint64_t seq, uint64_t *first, const struct task **why);
void	state_causes_unref(struct causes *);
struct walk *state_walk_new(void);
void	state_walk_free(struct walk *);
/* Adds c to *cs (a copy of it if links share it). */
void	state_causes_add(struct causes **cs, const struct cause *c);

/* state_groups.c */

struct group	*state_group_find(const struct state *, const char *name);
struct group	*state_group_get(struct state *, const char *name);
void	state_group_free(struct group *);
struct member	*state_group_member(const struct group *, int32_t tid);
void	state_group_leave(struct group *, int32_t tid);
/* Is t inside a barrier of g? */
int	state_in_barrier(const struct task *t, const struct group *g);
/* What the task is blocked in, from the begin of its open call. */
enum wait_kind	state_task_wait(const struct state *, const struct task *);
/* The end of a pvm_joingroup or a pvm_lvgroup. */
void	state_membership(struct state *, struct task *,
	    const struct record *);
/* Can the episode's count not be reached by the live members? */
int	state_barrier_short(const struct state *, const struct group *,
	    const struct episode *);
void	state_barrier_enter(struct state *, struct task *);
void	state_barrier_leave(struct state *, struct task *, uint64_t seq);
/* t ends: its groups' barriers wait on it. */
void	state_ended_barriers(struct state *, struct task *t);

/* state_queues.c */

struct qmsg	*state_qmsg_new(struct state *);
void	state_qmsg_free(struct qmsg *);
/* Would a message already queued satisfy t's open receive? */
int	state_queued_match(const struct task *t);
int	state_queued_handled(const struct task *t);
/* The messages of t's send r: counted, and queued. */
void	state_sends_apply(struct state *, struct task *t,
	    const struct record *r);
/* A failed send delivered nothing: its messages go. */
void	state_retract_sends(struct state *, struct task *t,
	    const struct record *r);
/* The end of a receive; filter is its begin when it is known. */
void	state_receive_apply(struct state *, struct task *t,
	    const struct order_event *, const struct call *filter);
/* t ends: the receives that wait on it, the messages it never took. */
void	state_ended_receives(struct state *, struct task *t);
/* t's blocking receive names a task: t is among that one's waiters. */
void	state_wait_register(struct state *, struct task *t);
void	state_ended_queue(struct state *, struct task *t);

/* state_problems.c */

/* A problem of kind being written, about the tasks state_pb_task names. */
void	state_pb_open(struct pbuf *, const char *kind);
void	state_pb_task(struct pbuf *, int32_t tid);
/* Tells the callback of the finished problem and keeps it. */
void	state_pb_emit(struct state *, struct pbuf *);
void	state_report_waits_on_exited(struct state *, const struct task *w,
	    int32_t exited);
void	state_report_unreceived(struct state *, const struct task *t,
	    const struct qmsg *q);
void	state_report_race(struct state *, const struct task *t,
	    const struct cand *c, const struct qmsg *q);
void	state_report_unpack(struct state *, const struct task *t,
	    const struct record *r, const struct pkrun *run);

/* state_deadlock.c */

/* Each task of a deadlock's JSON to fn, until fn says stop. */
int	state_deadlock_tasks(const char *json,
	    int (*fn)(int32_t, const void *), const void *arg);

/* state_write.c */

/* The tasks shown, by tid (to free). */
const struct task **state_tasks_sorted(const struct state *, size_t *n);

/* state_restore.c */

/*
 * state_load.c checks a snapshot and builds a new model from it with
 * the state_restore_* calls, which trust what they are given.
 */

/* A task as a snapshot shows it (doc/state.md), strings as bytes. */
struct restore_task {
	int32_t		 tid, parent;
	uint32_t	 pid;
	const char	*host, *program;
	int		 end;		/* RESTORE_LIVE, ... */
	int		 unmonitored;	/* "unmonitored" (live) or "ended" */
	int		 has_exit_rc;
	int32_t		 exit_rc;
	uint64_t	 calls, sent_msgs, sent_bytes, recv_msgs, recv_bytes;
	uint64_t	 computing, pvm, blocked;	/* ns */
	uint64_t	 last_seq, lost;
	int32_t		 kill_tid;	/* killed: the pvm_kill, or 0 */
	uint64_t	 kill_seq;
	/* The call it is blocked in (call 0: none), begun at event since. */
	uint8_t		 call;
	uint64_t	 since;
	int32_t		 peer, tag, ctx, inst;
	char		 group[RECORD_GROUP_MAX + 1];
	const int32_t	*kids;
	size_t		 nkids;
	const struct handler *handlers;
	size_t		 nhandlers;
};
#define RESTORE_LIVE	0
#define RESTORE_EXITED	1
#define RESTORE_KILLED	2

/*
 * An empty model with s's callback and horizon.  Then the tasks tids
 * (sorted, distinct): those old knows in the order it learnt them, the
 * others after; every other call names only these.
 */
struct state	*state_restore_new(const struct state *s);
void	state_restore_tasks(struct state *, const struct state *old,
	    const int32_t *tids, size_t n);
void	state_restore_task(struct state *, const struct restore_task *);
/* A message queued at task to, in queue order. */
void	state_restore_message(struct state *, int32_t to, int32_t from,
	    uint64_t seq, int32_t tag, int32_t ctx, int32_t bytes);
/* A group, and its members in order. */
int	state_has_group(const struct state *, const char *group);
void	state_restore_group(struct state *, const char *group);
void	state_restore_member(struct state *, const char *group, int32_t tid,
	    int32_t inst);
/* Traffic from a task, as listed (from is one of the tasks). */
void	state_restore_traffic(struct state *, int32_t from, int32_t to,
	    uint64_t msgs, uint64_t bytes);
/*
 * A problem found before, in order; a deadlock with its sorted tasks,
 * so that it is not reported again.  Not passed to the callback.  -1
 * when the model keeps STATE_PROBLEMS_KEPT already.
 */
int	state_restore_problem(struct state *, const char *json,
	    const int32_t *deadlock, size_t n);
/*
 * The barriers in progress, from the tasks blocked in them (a group
 * without members or waiters is listed for the barrier a task was
 * killed in: it keeps one); checks that every blocked task waits (its
 * groups explain a collective).  -1 with err when not.
 */
int	state_restore_finish(struct state *, uint64_t problems_not_kept,
	    char *err, size_t errsize);
void	state_restore_mbox(struct state *, const char *name, int32_t index,
	    int32_t owner, int32_t flags, int32_t bytes, uint64_t put);
/* s takes the restored model ns; ns gets what s had (to be freed). */
void	state_restore_swap(struct state *s, struct state *ns);

/* state_mbox.c */

/* Stores (or replaces) an entry. */
void	mbox_put(struct mbox *, const char *name, int32_t index,
	    int32_t owner, int32_t flags, int32_t bytes, uint64_t put);
void	mbox_del(struct mbox *, const char *name, int32_t index);
void	mbox_del_put(struct mbox *, int32_t owner, uint64_t put);
/* The owner ended: its entries go, but for the persistent ones. */
void	mbox_owner_end(struct mbox *, int32_t owner);
void	mbox_write_json(const struct mbox *, FILE *);
void	mbox_free(struct mbox *);

/* In line: what every event calls. */

static inline const struct link *
link_at(const struct links *l, size_t i)
{
	return &l->e[(l->first + i) & (l->cap - 1)];
}

static inline size_t
tid_hash(int32_t tid)
{
	return record_tid_hash(tid);
}

static inline struct task *
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

static inline struct task *
task_get(struct state *s, int32_t tid)
{
	struct task *t = task_find(s, tid);

	return t != NULL ? t : state_task_new(s, tid);
}

static inline int
task_live(const struct task *t)
{
	return t->end == TASK_LIVE && !t->retired;
}

/* Shown in tasks and position: the coordinator named it or it acted. */
static inline int
task_shown(const struct task *t)
{
	return (t->registered || t->seen || t->unmonitored) && !t->retired;
}

static inline int
is_blocking_recv(uint8_t call)
{
	return call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_precv;
}

static inline void
pkseq_unref(struct pkseq *pk)
{
	if (pk != NULL && --pk->refs == 0)
		free(pk);
}

static inline void
rec_group(const struct record *r, char *out)
{
	if (r->glen > 0)	/* no group: r->group may be NULL */
		memcpy(out, r->group, r->glen);
	out[r->glen] = '\0';
}

#endif
