/*
 * The coordinator's global state model (state.h): what the released
 * stream says about hosts, tasks, groups and queues, and the problems it
 * reveals (doc/state.md).  This file holds the model itself, its set
 * up, the hosts and tasks the coordinator names, and the stops; the
 * events that change it are in state_event.c, its other parts in the
 * state_*.c beside it (doc/state.md, "Files"), and state_internal.h is
 * what they share.
 *
 * The module does no I/O but to the FILE it is given, and never logs.
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "horizon.h"
#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* --- small helpers ----------------------------------------------------- */

/* Grows *p (of *cap elements of size sz) to hold at least n. */
void
state_grow(void *p, size_t *cap, size_t n, size_t sz)
{
	size_t ncap;

	if (n <= *cap)
		return;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < n)
		ncap *= 2;
	*(void **)p = xreallocarray(*(void **)p, ncap, sz);
	*cap = ncap;
}

int
state_cmp_tid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

int
state_cmp_task_tid(const void *a, const void *b)
{
	const struct task *x = *(const struct task * const *)a;
	const struct task *y = *(const struct task * const *)b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

const char *
state_call_name(uint8_t call)
{
	const char *n = record_call_name(call);

	return n != NULL ? n : "?";
}

void
state_json_id(FILE *fp, int32_t tid, uint64_t seq)
{
	fprintf(fp, "\"%" PRId32 ":%" PRIu64 "\"", tid, seq);
}

/* --- tasks ------------------------------------------------------------- */

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

static void
map_grow(struct state *s)
{
	size_t i, ncap = s->mapcap ? s->mapcap * 2 : 64;

	if (2 * (s->ntasks + 1) <= s->mapcap)
		return;
	free(s->map);
	s->map = xcalloc(ncap, sizeof(*s->map));
	s->mapcap = ncap;
	for (i = 0; i < s->ntasks; i++)
		map_put(s, i);
}

/* A new task for tid; an older one of the same tid is retired. */
struct task *
state_task_new(struct state *s, int32_t tid)
{
	struct task *t, *old = task_find(s, tid);

	map_grow(s);
	state_grow(&s->tasks, &s->taskcap, s->ntasks + 1, sizeof(*s->tasks));
	t = xcalloc_lines(sizeof(*t));
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

static void
task_free(struct task *t)
{
	struct qmsg *q;

	while ((q = TAILQ_FIRST(&t->queue)) != NULL) {
		TAILQ_REMOVE(&t->queue, q, entry);
		state_qmsg_free(q);
	}
	pkseq_unref(t->pack.snap);
	pkseq_unref(t->unpack.pk);
	state_links_free(&t->links);
	free(t->kids);
	free(t->handlers);
	free(t->waiters);
	free(t->pairs);
	free(t->pairmap);
	free(t->owed);
	free(t->host);
	free(t->program);
	free(t);
}

void
state_task_add_kid(struct task *t, struct task *kid)
{
	/* A spawn's end lists it, then its registration: once. */
	if (kid->listed_by == t->tid)
		return;
	kid->listed_by = t->tid;
	state_grow(&t->kids, &t->kidcap, t->nkids + 1, sizeof(*t->kids));
	t->kids[t->nkids++] = kid->tid;
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
	s->walk = state_walk_new();
	return s;
}

void
state_free(struct state *s)
{
	struct group *g;
	struct qmsg *q;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->ntasks; i++)
		task_free(s->tasks[i]);
	while ((q = s->qspare) != NULL) {
		s->qspare = TAILQ_NEXT(q, entry);
		free(q);
	}
	free(s->tasks);
	free(s->map);
	state_walk_free(s->walk);
	free(s->orphans);
	while ((g = s->groups) != NULL) {
		s->groups = g->next;
		state_group_free(g);
	}
	for (i = 0; i < s->nhosts; i++) {
		free(s->hosts[i].name);
		free(s->hosts[i].arch);
		free(s->hosts[i].via);
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
void
state_set_str(char **dst, const char *src)
{
	char *n;

	n = xstrdup(src != NULL ? src : "");
	free(*dst);
	*dst = n;
}

void
state_host(struct state *s, int32_t host_tid, const char *name,
    const char *arch, int agent_up)
{
	struct host *h = NULL;
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		if (s->hosts[i].tid == host_tid)
			h = &s->hosts[i];
	if (h == NULL) {
		state_grow(&s->hosts, &s->hostcap, s->nhosts + 1,
		    sizeof(*s->hosts));
		h = &s->hosts[s->nhosts++];
		memset(h, 0, sizeof(*h));
		h->tid = host_tid;
	}
	state_set_str(&h->name, name);
	state_set_str(&h->arch, arch);
	h->up = agent_up != 0;
}

/* In a tree, the host's agent dials the intermediate on host via. */
void
state_host_via(struct state *s, int32_t host_tid, const char *via)
{
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		if (s->hosts[i].tid == host_tid)
			state_set_str(&s->hosts[i].via, via);
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

/* Who the task is, and its parent's child. */
static void
task_identify(struct state *s, struct task *t, int32_t parent_tid,
    uint32_t pid, const char *host, const char *program)
{
	struct task *p;

	t->pid = pid;
	state_set_str(&t->host, host);
	state_set_str(&t->program, program);
	if (parent_tid != 0) {
		t->parent = parent_tid;
		if ((p = task_find(s, parent_tid)) != NULL)
			state_task_add_kid(p, t);
	}
}

void
state_task(struct state *s, int32_t tid, int32_t parent_tid, uint32_t pid,
    const char *host, const char *program)
{
	struct task *t;

	t = task_find(s, tid);
	/* PVM reuses the tids of ended tasks. */
	if (t == NULL || t->end != TASK_LIVE)
		t = state_task_new(s, tid);
	t->registered = 1;
	t->unmonitored = 0;	/* listed before its agent heard of it */
	task_identify(s, t, parent_tid, pid, host, program);
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
		t = state_task_new(s, tid);
	t->unmonitored = 1;
	task_identify(s, t, parent_tid, pid, host, program);
	return 1;
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
		state_group_leave(g, t->tid);
	return 1;
}

/* The live unmonitored tasks of a host, by tid (to free; never NULL). */
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
