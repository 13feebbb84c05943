/*
 * On-the-fly topological sort of PVM events (order.h): the API and the
 * release loop.
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
 * order it took their requests instead (the chain, struct order_gsreq).
 * Those waits are rare, so their wake-ups are simple: any change to a
 * group wakes every task waiting on it.
 *
 * This file takes the records in (order_add), steps the head of each
 * task (order_task_step) and releases it (order_release_head).  The other
 * order_*.c files say what a head of each kind waits for and what its
 * release changes (doc/ordering.md, "Files"); order_internal.h is what
 * they share.
 */
#include <stdlib.h>
#include <string.h>

#include "order_internal.h"
#include "xmalloc.h"

#define PVM_NO_GROUP	(-19)	/* pvm3.h PvmNoGroup: no such group (empty) */
#define ORDER_MIN_BUCKETS	64

/*
 * Every held event is a node, allocated as it arrives and freed as it is
 * released: most records are a bare header, so nodes with room for
 * NODE_SMALL bytes of group name and peers are kept on a free list (up to
 * NODE_SPARE_MAX of them) instead of going back to malloc.  A spare node
 * is a plain malloc'd block, which free() can always take.  The list
 * stays short: nodes reused from it lie scattered in memory, which slowed
 * the walks of long pending group lists by 8% when it could hold 65536.
 */
#define NODE_SMALL	128
#define NODE_SPARE_MAX	8192

/* --- waiting ---------------------------------------------------------- */

static void
tasks_add(struct order_tasks *l, struct order_task *t)
{
	struct order_task **nv;
	size_t ncap;

	if (t->waitq == l)
		return;
	if (l->n == l->cap) {
		ncap = l->cap ? l->cap * 2 : 8;
		nv = xreallocarray(l->v, ncap, sizeof(*nv));
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n++] = t;
	t->waitq = l;
}

/* Waits on a list; returns 0, what a step that waits returns. */
int
order_wait_on(struct order *o, struct order_task *t, struct order_tasks *l,
    uint8_t what, struct order_group *g)
{
	tasks_add(l, t);
	set_wait(o, t, what);
	t->wgroup = g;
	return 0;
}

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
		p = order_task_get(o, t->parent_tid);
		t->next_waiter = p->waiters;
		p->waiters = t;
		t->waiting = 1;
	}
	set_wait(o, t, WAIT_SPAWN);
	return 0;
}

/* --- releasing -------------------------------------------------------- */

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

/* What a released event changes in the model. */
static void
model_apply(struct order *o, struct order_task *t, struct order_node *n,
    uint64_t corr)
{
	/* An entry that may not be the one its count says. */
	if ((n->kind == NODE_BARRIER_IN || n->kind == NODE_COLL_IN) &&
	    n->rec.seq >= t->lost_from)
		order_group_lossy(o, n->group);
	switch (n->kind) {
	case NODE_JOIN:
		n->group->held_changes--;
		n->group->held_joins--;
		group_pending_del(n->group, n);
		order_group_join(o, n->group, t->tid, n->rec.rc);
		order_barrier_try_close(o, n->group);
		break;
	case NODE_LEAVE:
		n->group->held_changes--;
		order_group_leave(o, n->group, t->tid);
		order_barrier_try_close(o, n->group);
		break;
	case NODE_BCAST:
		order_forget_departed(n->group, n);
		/* FALLTHROUGH */
	case NODE_GSIZE:
		group_pending_del(n->group, n);
		wake_list(o, &n->group->waiters);
		break;
	case NODE_BARRIER_IN:
		order_barrier_enter(o, t, n, corr);
		break;
	case NODE_COLL_IN:
		order_coll_enter(o, t, n, corr);
		break;
	case NODE_COLL_OUT:
		if (t->coll_group == n->group)
			order_coll_leave(t);
		break;
	default:
		break;
	}
	if (n->rec.call == PMON_CALL_spawn && n->rec.phase == PMON_END)
		order_spawn_ended(t, &n->rec);
	if (n->rec.phase != PMON_BEGIN)
		return;
	if (n->rec.call == PMON_CALL_spawn)
		order_spawn_note(t, &n->rec, corr);
	else if (n->rec.call == PMON_CALL_notify)
		order_notify_note(t, &n->rec);
	else if (record_is_signal_send(&n->rec))
		order_sig_released(o, t, &n->rec, corr);
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
	while (t->waited != NULL)
		wake_receiver(o, t->waited);
}

/* t went on: the receives that wait for its progress look again. */
void
order_wake_waiters_on(struct order *o, struct order_task *t)
{
	t->waiters_on = 0;
	watch_rearm(t);
	wake_outs(o, t);
	/*
	 * Mailbox reads that wait for a put (order_step_mbox_read), any
	 * task's.
	 */
	wake_list(o, &o->putw);
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
		order_child_started(o, t);
	}
	if (t->waiters_on > 0)
		order_wake_waiters_on(o, t);
	if (t->released >= t->uncount_at)
		order_task_uncounted(o, t);
	watch_rearm(t);
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
		order_child_started(o, t);
	}
	order_coll_leave(t);
	wake_children(o, t, 1);
	for (c = t->outs; c != NULL; c = next) {
		next = c->snext;
		order_sends_settle(t, c);
		wake_receiver(o, c);
		if (c->dst == t->tid || (c->count == 0 && c->waiter == NULL))
			order_chan_del(o, c);
	}
	while (t->ins != NULL)
		order_chan_del(o, t->ins);
	/*
	 * The server drops a task from its groups when pvmd tells it of the
	 * exit (GS_DEAD); until then, or without a server, it goes now.
	 */
	if (o->server != NULL && !o->server->ended)
		t->exiting = 1;
	else
		order_groups_depart(o, t);
	wake_list(o, &o->notifyw);
	/* Requests it made and never saw the end of are not waited for. */
	order_gs_advance(o);
	if (t == o->server)
		order_server_gone(o);
	if (o->done_cb != NULL)
		o->done_cb(t->tid, o->done_arg);
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
static void
release_node(struct order *o, struct order_task *t, struct order_node *n,
    uint8_t flags, int32_t match_tid, uint64_t match_seq,
    const struct clock_pred *pred)
{
	struct order_event ev;

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
			order_push_sends(o, t, &n->rec, ev.t_corr);
		if (n->rec.phase == PMON_END && n->rec.rc < 0)
			order_retract_sends(o, t, &n->rec);
		/* An intermediate of a tree leaves the model to the root. */
		if (o->level != LEVEL_SUBTREE)
			model_apply(o, t, n, ev.t_corr);
		if (n->gs_k != 0) {
			t->gs_released[n->gs_chain] = n->gs_k;
			order_gs_advance(o);
		}
	}
	if (t->released >= t->watch_at)
		task_watch(o, t);
	wake_children(o, t, 0);
	if (t->ended && t->head == NULL)
		order_task_done(o, t);
}

/*
 * Releases the head of t with the given flags, match and predecessor.
 * Returns 1, what a step that released one returns.
 */
int
order_release_head(struct order *o, struct order_task *t, uint8_t flags,
    int32_t match_tid, uint64_t match_seq, const struct clock_pred *pred)
{
	struct order_node *n = t->head;

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
	release_node(o, t, n, flags, match_tid, match_seq, pred);
	node_free(o, n);
	return 1;
}

int
order_release_plain(struct order *o, struct order_task *t, uint8_t flags)
{
	return order_release_head(o, t, flags, 0, 0, NULL);
}

/* --- the release loop ------------------------------------------------- */

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
 * Tries to release the head of t; force releases it whatever it waits
 * for.  Returns 1 if it released one, 0 if the head waits or there is
 * none.
 */
int
order_task_step(struct order *o, struct order_task *t, int force)
{
	const struct record *r;
	struct clock_pred pred;
	int peek, has_pred = 0;

	if (t->head == NULL)
		return 0;
	if (o->level == LEVEL_SUBTREE)
		return order_subtree_step(o, t, force);
	if (!spawn_ready(o, t, &pred, &has_pred) && !force)
		return 0;
	r = &t->head->rec;
	/* A first event is a begin (or a lost marker): nothing else waits. */
	if (has_pred && t->head->kind == NODE_PLAIN && !record_is_recv(r) &&
	    !is_probe_hit(r))
		return order_release_head(o, t, 0, 0, 0, &pred);
	if (t->head->flags & EVENT_LOST)
		return order_release_plain(o, t, 0);
	switch (t->head->kind) {
	case NODE_JOIN:
	case NODE_LEAVE:
		if (order_gs_expected(o, t->head))
			return order_step_served(o, t, force);
		return order_step_change(o, t, force);
	case NODE_BCAST:
	case NODE_GSIZE:
		if (order_gs_expected(o, t->head))
			return order_step_served(o, t, force);
		return order_step_constrained(o, t, force);
	case NODE_BARRIER_OUT:
		return order_step_barrier_out(o, t, force);
	case NODE_COLL_OUT:
		return order_step_coll_out(o, t, force);
	default:
		break;
	}
	if (is_mbox_read(r))
		return order_step_mbox_read(o, t, force);
	if (is_pvmd_signal(r))
		return order_step_signal(o, t, force);
	peek = is_probe_hit(r);
	if (!peek && !record_is_recv(r))
		return order_release_plain(o, t, 0);
	if (r->peer & ORDER_TID_DAEMON)
		return order_step_notify(o, t, force);
	if (!chan_mine(o, r->peer, t->tid))
		return order_step_below(o, t, force);
	return order_step_recv(o, t, force, peek);
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

/* Runs the worklist dry. */
void
order_run(struct order *o)
{
	struct order_task *t;

	for (;;) {
		while ((t = work_pop(o)) != NULL)
			while (order_task_step(o, t, 0) == 1)
				;
		if (!o->progress || o->nconflicts == 0)
			break;
		recheck_conflicts(o);
		if (o->work == NULL)
			break;
	}
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
task_free(struct order_task *t)
{
	struct order_node *n, *next;

	for (n = t->head; n != NULL; n = next) {
		next = n->next;
		free(n);
	}
	free(t->spawns);
	free(t->tcoll);
	order_notifies_free(t);
	free(t->sigs);
	order_below_free(t);
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

/* --- tasks ------------------------------------------------------------ */

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
struct order_task *
order_task_get(struct order *o, int32_t tid)
{
	struct order_task *t;
	size_t b;

	if ((t = task_find(o, tid)) != NULL)
		return t;
	t = xcalloc_lines(sizeof(*t));
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
		order_task_step(o, t, 1);
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
	order_notifies_free(t);
	t->nsigs = 0;
	order_below_free(t);
	order_gs_forget(o, t);
}

int
order_task_new(struct order *o, int32_t tid, uint32_t host,
    int32_t parent_tid, uint64_t spawn_seq, const char **why)
{
	struct order_task *t = order_task_get(o, tid);

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
	/* In a tree, the root orders spawns. */
	if (o->level == LEVEL_SUBTREE)
		parent_tid = 0;
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
	t->resumed_at = next_seq;
	t->again_upto = again_upto;
	t->started = 1;
	/* What it sent and received before is not known: nothing counts. */
	order_lost_at(o, t, 1);
	wake_children(o, t, 0);
	order_run(o);
	return 0;
}

void
order_host_away(struct order *o, uint32_t host, int away)
{
	uint8_t bit = (uint8_t)(1u << (host % 8));

	host %= ORDER_HOSTS;	/* a tid's host field: no more bits */
	if (away)
		o->host_away[host / 8] |= bit;
	else
		o->host_away[host / 8] &= (uint8_t)~bit;
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

/* --- arrival ---------------------------------------------------------- */

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
		n = xcalloc_lines(sizeof(*n) +
		    (len <= NODE_SMALL ? NODE_SMALL : len));
	/* Field by field (a memset of the node costs more): set every field. */
	n->next = NULL;
	n->flags = n->kind = n->gs_chain = n->gs_fallback = n->below = 0;
	n->gs_k = n->below_seq = 0;
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
static void
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
		return;
	}
	g = order_group_get(o, r->group, r->glen);
	if (r->phase == PMON_BEGIN) {
		t->open_group = g;
		t->open_t = r->t_ns;
		t->open_seq = r->seq;
		t->open_call = r->call;
		return;
	}
	t->open_group = NULL;
	wake_list(o, &g->waiters);
}

/* Sorts a new node for the model and files it with its group. */
static void
node_classify(struct order *o, struct order_task *t, struct order_node *n)
{
	const struct record *r = &n->rec;
	uint8_t kind = NODE_PLAIN;
	int chain;

	if (r->glen == 0)
		return;
	if ((r->flags & RECORD_GS) && r->phase == PMON_END &&
	    (chain = order_gs_chain_of_call(r->call)) != -1) {
		n->gs_chain = (uint8_t)chain;
		n->gs_k = ++t->gs_sent[chain];
	}
	track_open(o, t, r);
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
		if (r->phase == PMON_END &&
		    (r->rc >= 0 || r->rc == PVM_NO_GROUP))
			kind = NODE_BCAST;
		break;
	case PMON_CALL_gsize:
		if (r->phase == PMON_END &&
		    (r->rc >= 0 || r->rc == PVM_NO_GROUP))
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
		return;
	}
	if (kind == NODE_PLAIN)
		return;
	n->group = order_group_get(o, r->group, r->glen);
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
static void
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
	n = node_new(o, &r, EVENT_LOST, seq + count - 1);
	node_append(o, t, n);
	t->lost += count;
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
	n.flags = n.kind = n.below = 0;
	n.gs_k = n.below_seq = 0;
	n.last = r->seq;
	t->last_raw = r->t_ns;
	o->nadded++;
	o->changes++;
	release_node(o, t, &n, 0, 0, 0, NULL);
}

/* order_add, and order_add_below with what below gave the event. */
static int
add_record(struct order *o, int32_t tid, const struct record *r,
    uint8_t below, uint64_t below_seq, const char **why)
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
		order_gs_add(o, r);
		order_run(o);
		return 0;
	}
	if (r->seq > t->next_seq) {
		add_lost(o, t, t->next_seq, r->seq - t->next_seq, r->t_ns);
		order_lost_at(o, t, t->next_seq);
	}
	t->next_seq = r->seq + 1;
	if (record_is_signal_send(r) && o->level != LEVEL_SUBTREE)
		order_sig_arrived(o, t, r);
	if (free_at_arrival(t, r)) {
		release_arrival(o, t, r);
		order_run(o);
		return 0;
	}
	n = node_new(o, r, 0, r->seq);
	n->below = below;
	n->below_seq = below_seq;
	n->prev_t = t->last_raw;
	t->last_raw = r->t_ns;
	node_append(o, t, n);
	o->changes++;
	if (o->level != LEVEL_SUBTREE)
		node_classify(o, t, n);
	/* A receive waiting for t's progress may see its new head. */
	if (t->waiters_on > 0)
		order_wake_waiters_on(o, t);
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
}

int
order_add(struct order *o, int32_t tid, const struct record *r,
    const char **why)
{
	return add_record(o, tid, r, 0, 0, why);
}

int
order_add_below(struct order *o, int32_t tid, const struct record *r,
    uint8_t flags, int32_t match_tid, uint64_t match_seq, const char **why)
{
	if (o->level != LEVEL_ROOT) {
		*why = "an event from below at an order that is no root";
		return -1;
	}
	if ((flags & EVENT_MATCHED) && (match_tid != r->peer ||
	    match_seq == 0)) {
		*why = "a match from below names no send of the receive's peer";
		return -1;
	}
	return add_record(o, tid, r, flags & (EVENT_MATCHED |
	    EVENT_UNMATCHED | EVENT_UNMONITORED | EVENT_RESUMED), match_seq,
	    why);
}

/*
 * pvmd lists tid and pmon does not instrument it: no record of it will
 * come, so a receive of its message goes at once, unmatched and flagged
 * EVENT_UNMONITORED, as if a round had found it absent.
 */
int
order_task_unmonitored(struct order *o, int32_t tid)
{
	struct order_task *t = order_task_get(o, tid);

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
		add_lost(o, t, t->next_seq, dropped - t->lost, t->last_raw);
		order_lost_at(o, t, t->next_seq);
	}
	if (t->head == NULL)
		order_task_done(o, t);
	else
		work_push(o, t);
	order_run(o);
	return 0;
}
