/*
 * Flush rounds and the end (order.h): once a round says that every record
 * made before its mark has come, the waits on what may never come are
 * judged (receives, group calls, the group server's order); at shutdown
 * order_release_all releases what is left.
 */
#include "order_internal.h"

uint64_t
order_mark(struct order *o)
{
	return o->nadded + 1;
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
	order_recv_judge(o, mark);
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
	order_gs_patience(o, o->prev_synced, stuck);
	order_release_hopeless(o, o->prev_synced, stuck);
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
			if (oldest == NULL ||
			    t->head->added < oldest->head->added)
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
		order_task_step(o, t, 1);
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
		order_task_step(o, t, 1);
		push_all(o);
		order_run(o);
	}
}
