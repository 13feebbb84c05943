/*
 * The ordering core's group model (doc/ordering.md, "Group state
 * (VISTOP)"): the members of each group; the states that allow a held
 * join, broadcast or gsize; the held broadcast or gsize a join or leave
 * must wait for, VISTOP's heuristics for the calls the group server's
 * records do not place (order_gs.c places the others); and after a flush
 * round, the group waits that can no longer end.
 */
#include <stdlib.h>
#include <string.h>

#include "order_internal.h"
#include "xmalloc.h"

/* --- members ---------------------------------------------------------- */

struct order_group *
order_group_get(struct order *o, const char *name, uint8_t len)
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

void
order_group_join(struct order *o, struct order_group *g, int32_t tid,
    int32_t inst)
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

void
order_group_leave(struct order *o, struct order_group *g, int32_t tid)
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

/* A broadcast that did not reach a departed task: pvmgs knows by now. */
void
order_forget_departed(struct order_group *g, const struct order_node *n)
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
void
order_groups_depart(struct order *o, struct order_task *t)
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
		order_group_leave(o, g, t->tid);
		/* A receiver that ended may now be excused. */
		if (g->pending != NULL)
			wake_list(o, &g->waiters);
	}
}

/* --- what a state allows ---------------------------------------------- */

/*
 * Is the held broadcast, gsize or join n possible in the modelled state?
 * A broadcast reaches every member but its sender; a receiver that ended
 * as a member (pvmgs learns of exits late) is not held against it.
 */
int
order_state_allows(const struct order_node *n)
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
		if (n->rec.call == PMON_CALL_probe &&
		    n->rec.phase == PMON_END && (n->rec.flags & RECORD_MSG))
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

/* --- the order of calls in time --------------------------------------- */

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

/* --- joins, leaves, broadcasts and gsizes ----------------------------- */

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
			if (!ended_before(o, x, e) &&
			    !depends_on(o, e->task, x))
				return e;
			continue;
		}
		if (!moves_away(x, e))
			continue;
		/* Favour the event that is possible now. */
		if (e == e->task->head && order_state_allows(e))
			return e;
		/* A join taken back takes the lowest free instance again. */
		if ((e->kind != NODE_JOIN && undone_later(o, x)) ||
		    depends_on(o, e->task, x))
			continue;
		return e;
	}
	return NULL;
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
int
order_step_change(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;

	if (force)
		return order_release_plain(o, t, n->kind == NODE_JOIN &&
		    group_lowest_free(n->group) != n->rec.rc ?
		    EVENT_INCONSISTENT : 0);
	if (n->added >= o->synced)
		return order_wait_on(o, t, &o->syncw, WAIT_SYNC, NULL);
	if (open_call_before(o, n))
		return order_wait_on(o, t, &n->group->waiters, WAIT_OPEN,
		    n->group);
	/* The instance a join got tells where pvmgs put it among joins. */
	if (n->kind == NODE_JOIN && group_lowest_free(n->group) != n->rec.rc)
		return order_wait_on(o, t, &n->group->waiters, WAIT_STATE,
		    n->group);
	if (conflict_of(o, n) != NULL)
		return order_wait_on(o, t, &n->group->waiters, WAIT_CONFLICT,
		    n->group);
	return order_release_plain(o, t, 0);
}

/* A broadcast or gsize end: when the model is in a state that allows it. */
int
order_step_constrained(struct order *o, struct order_task *t, int force)
{
	struct order_node *n = t->head;

	if (order_state_allows(n))
		return order_release_plain(o, t, 0);
	if (force)
		return order_release_plain(o, t, EVENT_INCONSISTENT);
	return order_wait_on(o, t, &n->group->waiters, WAIT_STATE, n->group);
}

/* --- after a flush round ---------------------------------------------- */

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

/* Has the group wait of t lasted past what order_release_hopeless allows? */
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
void
order_release_hopeless(struct order *o, uint64_t mark, uint64_t stuck)
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
				order_task_step(o, t, 1);
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
		order_task_step(o, oldest, 1);
		order_run(o);
	}
}
