/*
 * The state model's groups (state.c): their members, as pvm_joingroup
 * and pvm_lvgroup tell them, and their barriers, one episode per round
 * of pvm_barrier whose exits take the join of its entries' clocks; what
 * a task blocked in a group call waits for, and what a member's end
 * leaves its group's barriers waiting on.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* --- groups ------------------------------------------------------------ */

struct group *
state_group_find(const struct state *s, const char *name)
{
	struct group *g;

	for (g = s->groups; g != NULL; g = g->next)
		if (strcmp(g->name, name) == 0)
			return g;
	return NULL;
}

struct group *
state_group_get(struct state *s, const char *name)
{
	struct group *g;

	if ((g = state_group_find(s, name)) != NULL)
		return g;
	g = xcalloc(1, sizeof(*g));
	g->name = xstrdup(name);
	LIST_INIT(&g->eps);
	g->next = s->groups;
	s->groups = g;
	return g;
}

void
state_group_free(struct group *g)
{
	struct episode *ep;

	while ((ep = LIST_FIRST(&g->eps)) != NULL) {
		LIST_REMOVE(ep, entry);
		state_causes_unref(ep->entries);
		free(ep);
	}
	free(g->m);
	free(g->gone);
	free(g->name);
	free(g);
}

struct member *
state_group_member(const struct group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->m[i].tid == tid)
			return &g->m[i];
	return NULL;
}

static void
group_join(struct group *g, int32_t tid, int32_t inst)
{
	struct member *m;

	if ((m = state_group_member(g, tid)) == NULL) {
		state_grow(&g->m, &g->cap, g->n + 1, sizeof(*g->m));
		m = &g->m[g->n++];
	}
	m->tid = tid;
	m->inst = inst;
}

void
state_group_leave(struct group *g, int32_t tid)
{
	struct member *m;

	if ((m = state_group_member(g, tid)) != NULL)
		*m = g->m[--g->n];
}

static void
group_add_gone(struct group *g, int32_t tid)
{
	size_t i;

	for (i = 0; i < g->ngone; i++)
		if (g->gone[i] == tid)
			return;
	state_grow(&g->gone, &g->gonecap, g->ngone + 1, sizeof(*g->gone));
	g->gone[g->ngone++] = tid;
}

/* Is t inside a barrier of g? */
int
state_in_barrier(const struct task *t, const struct group *g)
{
	return t->in_call && t->cur.call == PMON_CALL_barrier &&
	    strcmp(t->cur.group, g->name) == 0;
}

/* What the task is blocked in, from the begin of its open call. */
enum wait_kind
state_task_wait(const struct state *s, const struct task *t)
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
	if ((g = state_group_find(s, t->cur.group)) == NULL ||
	    (m = state_group_member(g, t->tid)) == NULL)
		return WAIT_NONE;
	if ((m->inst == t->cur.inst) != (t->cur.call == PMON_CALL_scatter))
		return WAIT_COLL;
	return WAIT_NONE;
}

void
state_membership(struct state *s, struct task *t, const struct record *r)
{
	char name[RECORD_GROUP_MAX + 1];
	struct group *g;

	if (r->rc < 0)
		return;
	rec_group(r, name);
	if (r->call == PMON_CALL_joingroup)
		group_join(state_group_get(s, name), t->tid, r->rc);
	else if ((g = state_group_find(s, name)) != NULL)
		state_group_leave(g, t->tid);
}

/* The members of group name now (*tids is malloc'd; free it). */
void
state_group_members(const struct state *s, const char *name, int32_t **tids,
    size_t *n)
{
	struct group *g = state_group_find(s, name);
	size_t i;

	*n = 0;
	*tids = xcalloc(g != NULL ? g->n + 1 : 1, sizeof(**tids));
	for (i = 0; g != NULL && i < g->n; i++)
		(*tids)[(*n)++] = g->m[i].tid;
}

/* --- barriers ---------------------------------------------------------- */

/*
 * Can the episode's count not be reached by the live members outside
 * the barrier?  Then it waits for members that exited, or for joins.
 */
int
state_barrier_short(const struct state *s, const struct group *g,
    const struct episode *ep)
{
	const struct task *u;
	size_t i;
	int left = 0;

	if (ep == NULL || ep->closed || ep->need <= 0)
		return 0;
	for (i = 0; i < g->n; i++)
		if ((u = task_find(s, g->m[i].tid)) == NULL ||
		    (task_live(u) && !state_in_barrier(u, g)))
			left++;
	return ep->need - ep->entered > left;
}

void
state_barrier_enter(struct state *s, struct task *t)
{
	struct group *g;
	struct episode *ep;
	struct cause c;
	size_t i;

	g = state_group_get(s, t->cur.group);
	if ((ep = g->open) == NULL) {
		ep = xcalloc(1, sizeof(*ep));
		ep->need = t->cur.inst > 0 ? t->cur.inst : (int)g->n;
		LIST_INSERT_HEAD(&g->eps, ep, entry);
		g->open = ep;
	}
	c = state_out(t, t->cur.seq);
	state_causes_add(&ep->entries, &c);
	ep->entered++;
	t->ep = ep;
	if (ep->need > 0 && ep->entered >= ep->need) {
		ep->closed = 1;
		g->open = NULL;
	}
	/* Its exit and this entry are concurrent: either may come first. */
	if (state_barrier_short(s, g, ep))
		for (i = 0; i < g->ngone; i++)
			state_report_waits_on_exited(s, t, g->gone[i]);
}

/*
 * The order releases a barrier exit only after every entry of its
 * episode: the first exit closes the episode.
 */
void
state_barrier_leave(struct state *s, struct task *t, uint64_t seq)
{
	struct episode *ep = t->ep;
	struct group *g;

	if (ep == NULL)
		return;
	t->ep = NULL;
	if (ep->exited == 0 &&
	    (g = state_group_find(s, t->cur.group)) != NULL && g->open == ep)
		g->open = NULL;
	ep->closed = 1;
	ep->exited++;
	if (ep->entries != NULL)
		state_link_all(s, t, seq, ep->entries);
	if (ep->exited >= ep->entered) {
		LIST_REMOVE(ep, entry);
		state_causes_unref(ep->entries);
		free(ep);
	}
}

/*
 * t exits while a member of groups: tasks in their barriers that t had
 * not entered wait on it, and a barrier that cannot reach its count
 * without it will.
 */
void
state_ended_barriers(struct state *s, struct task *t)
{
	struct group *g;
	size_t i;

	for (g = s->groups; g != NULL; g = g->next) {
		if (state_group_member(g, t->tid) == NULL ||
		    state_in_barrier(t, g))
			continue;
		for (i = 0; i < s->ntasks; i++) {
			struct task *w = s->tasks[i];

			if (w != t && state_task_wait(s, w) == WAIT_BARRIER &&
			    state_in_barrier(w, g))
				state_report_waits_on_exited(s, w, t->tid);
		}
		group_add_gone(g, t->tid);
	}
}
