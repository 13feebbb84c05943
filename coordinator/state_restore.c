/*
 * Restoring a snapshot into the state model (state.c): state_load.c
 * checks a snapshot and builds a new model with these state_restore_*
 * calls, which trust what they are given, then swaps it in.
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

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

	ns = state_new(s->cb, s->arg);
	ns->h_events = s->h_events;
	ns->h_ns = s->h_ns;
	return ns;
}

/*
 * The tasks in the order old learnt them, so that what is listed or
 * looked for in that order (queues, the waits of a deadlock) comes out
 * as it did before the resync.
 */
void
state_restore_tasks(struct state *s, const struct state *old,
    const int32_t *tids, size_t n)
{
	const struct task *o;
	size_t i;

	for (i = 0; i < old->ntasks; i++) {
		o = old->tasks[i];
		if (!o->retired && bsearch(&o->tid, tids, n, sizeof(*tids),
		    state_cmp_tid) != NULL)
			state_task_new(s, o->tid);
	}
	for (i = 0; i < n; i++)
		if (task_find(s, tids[i]) == NULL)
			state_task_new(s, tids[i]);
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

void
state_restore_task(struct state *s, const struct restore_task *rt)
{
	struct task *t = task_find(s, rt->tid);
	size_t i;

	state_set_str(&t->host, rt->host);
	state_set_str(&t->program, rt->program);
	t->registered = !rt->unmonitored;
	t->unmonitored = rt->unmonitored;
	t->seen = rt->last_seq > 0;
	t->parent = rt->parent;
	t->listed_by = rt->parent;	/* its parent's kids, restored too */
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
	state_grow(&t->kids, &t->kidcap, rt->nkids, sizeof(*t->kids));
	for (i = 0; i < rt->nkids; i++)
		t->kids[t->nkids++] = rt->kids[i];
	if (rt->nhandlers > 0) {
		t->handlers = xreallocarray(NULL, rt->nhandlers,
		    sizeof(*t->handlers));
		memcpy(t->handlers, rt->handlers,
		    rt->nhandlers * sizeof(*t->handlers));
		t->nhandlers = rt->nhandlers;
	}
}

void
state_restore_message(struct state *s, int32_t to, int32_t from,
    uint64_t seq, int32_t tag, int32_t ctx, int32_t bytes)
{
	struct task *d = task_find(s, to);
	struct qmsg *q;

	q = state_qmsg_new(s);
	q->from = from;
	q->seq = seq;
	q->tag = tag;
	q->ctx = ctx;
	q->bytes = bytes;
	TAILQ_INSERT_TAIL(&d->queue, q, entry);
	d->nqueue++;
}

int
state_has_group(const struct state *s, const char *group)
{
	return state_group_find(s, group) != NULL;
}

void
state_restore_group(struct state *s, const char *group)
{
	state_group_get(s, group);
}

void
state_restore_member(struct state *s, const char *group, int32_t tid,
    int32_t inst)
{
	struct group *g = state_group_get(s, group);

	/* state_load lists each member once: no search. */
	state_grow(&g->m, &g->cap, g->n + 1, sizeof(*g->m));
	g->m[g->n].tid = tid;
	g->m[g->n++].inst = inst;
}

void
state_restore_traffic(struct state *s, int32_t from, int32_t to,
    uint64_t msgs, uint64_t bytes)
{
	struct task *t = task_find(s, from);
	struct pair *p;

	/* As listed, without a search per pair. */
	state_grow(&t->pairs, &t->paircap, t->npairs + 1, sizeof(*t->pairs));
	p = &t->pairs[t->npairs++];
	p->to = to;
	p->msgs = msgs;
	p->bytes = bytes;
}

int
state_restore_problem(struct state *s, const char *json,
    const int32_t *deadlock, size_t n)
{
	int32_t *tids;

	if (s->nproblems == STATE_PROBLEMS_KEPT)
		return -1;
	state_grow(&s->problems, &s->probcap, s->nproblems + 1,
	    sizeof(*s->problems));
	s->problems[s->nproblems++].json = xstrdup(json);
	if (n > 0) {
		state_grow(&s->dls, &s->dlcap, s->ndls + 1, sizeof(*s->dls));
		tids = xcalloc(n, sizeof(*tids));
		memcpy(tids, deadlock, n * sizeof(*tids));
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
static void
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
		g = state_group_get(s, t->cur.group);
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
}

int
state_restore_finish(struct state *s, uint64_t problems_not_kept,
    char *err, size_t errsize)
{
	struct task *t;
	size_t i;

	s->problems_dropped = problems_not_kept;
	restore_barriers(s);
	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (t->in_call && is_blocking_recv(t->cur.call))
			state_wait_register(s, t);
		if (t->in_call && state_task_wait(s, t) == WAIT_NONE) {
			snprintf(err, errsize, "task %" PRId32 " is blocked in "
			    "%s, which its groups do not explain", t->tid,
			    state_call_name(t->cur.call));
			return -1;
		}
	}
	return 0;
}

void
state_restore_mbox(struct state *s, const char *name, int32_t index,
    int32_t owner, int32_t flags, int32_t bytes, uint64_t put)
{
	mbox_put(&s->mbox, name, index, owner, flags, bytes, put);
}

void
state_restore_swap(struct state *s, struct state *ns)
{
	struct state tmp = *s;

	*s = *ns;
	*ns = tmp;
	s->retime = 1;
}
