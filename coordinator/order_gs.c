/*
 * The group server's order (doc/ordering.md, "The group server's
 * order"): pvmgs's records say in which order it took the joins, leaves,
 * broadcasts and gsizes, and those calls' ends are released in that
 * order, one chain.  A call whose request its records do not show is
 * left to the heuristics of order_groups.c.
 */
#include <string.h>

#include "order_internal.h"
#include "xmalloc.h"

/* --- the chain -------------------------------------------------------- */

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
int
order_gs_chain_of_call(uint8_t call)
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
	    order_gs_chain_of_call(c->open_call) == q->chain &&
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

static void
gs_wake(struct order *o, struct order_task *t)
{
	if (t->wait == WAIT_SERVER)
		work_push(o, t);
}

/* Moves the front of the chain past what is done; wakes the next call. */
void
order_gs_advance(struct order *o)
{
	struct order_gsreq *q;

	while (o->gs_front < o->ngs) {
		q = &o->gs[o->gs_front];
		if (!gs_done(q))
			break;
		if (q->chain == GS_DEAD)
			order_groups_depart(o, q->client);
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
void
order_gs_add(struct order *o, const struct record *r)
{
	struct order_gsreq *q, *nv;
	struct order_task *c;
	size_t ncap;
	int chain;

	if (!(r->flags & RECORD_GS) || r->phase != PMON_END || r->peer <= 0 ||
	    (chain = gs_chain_of_tag(r->tag)) == -1)
		return;
	c = order_task_get(o, r->peer);
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
	order_gs_advance(o);
}

/*
 * Is the join, leave, broadcast or gsize n ordered by the server's
 * records?  It is when its request was seen, or may still be.
 */
int
order_gs_expected(const struct order *o, struct order_node *n)
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

/* --- releasing in the server's order ---------------------------------- */

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
	order_group_leave(o, g, tid);
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
		return order_state_allows(n);
	}
	for (i = 0; i < ndrop; i++)
		drop_exiting(o, g, drop[i]);
	return 1;
}

/*
 * A join, leave, broadcast or gsize whose request the group server took:
 * its turn comes once every call the server took before it is released,
 * and the model is then what the server saw.  A request the server's
 * order went past without it (given up on) goes at once.
 */
int
order_step_served(struct order *o, struct order_task *t, int force)
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
	 * tells the server.  Wait for it (order_release_hopeless judges).
	 */
	if (!(fits = served_fits(o, n)) && !force)
		return order_wait_on(o, t, &n->group->waiters, WAIT_STATE,
		    n->group);
	return order_release_plain(o, t, fits ? 0 : EVENT_INCONSISTENT);
}

/* --- reused tids, the server's end, flush rounds ---------------------- */

/* Forgets the requests of an ended incarnation of a reused tid. */
void
order_gs_forget(struct order *o, struct order_task *t)
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
	order_gs_advance(o);
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
void
order_server_gone(struct order *o)
{
	struct order_task *t;
	size_t i;

	gs_wake_all(o);
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext)
			if (t->done)
				order_groups_depart(o, t);
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
void
order_gs_patience(struct order *o, uint64_t mark, uint64_t stuck)
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
			order_gs_advance(o);
		}
	}
	order_run(o);
}
