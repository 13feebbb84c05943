/*
 * The state model's deadlocks (state.c): after each flush round,
 * state_check looks for the greatest set of blocked tasks that wait only
 * on each other or on ended tasks, and reports each connected part of it
 * once, with a cycle of waits or the chain to the ended task; again, in
 * place of the first report, when more tasks join it.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonstr.h"
#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

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
		    state_group_member(g, u->tid) == NULL &&
		    (rv = fn(s, u, arg)) != 0)
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

	if (state_task_wait(s, w) == WAIT_RECV && w->cur.peer != -1)
		return fn(s, task_find(s, w->cur.peer), arg);
	if (state_task_wait(s, w) == WAIT_RECV) {
		for (i = 0; i < s->ntasks; i++) {
			u = s->tasks[i];
			if (u != w && task_live(u) && !task_is_group_server(u) &&
			    (rv = fn(s, u, arg)) != 0)
				return rv;
		}
		return 0;
	}
	if ((g = state_group_find(s, w->cur.group)) == NULL ||
	    (w->ep != NULL && w->ep->closed))
		return 0;	/* complete: its exits are on their way */
	for (i = 0; i < g->n; i++) {
		u = task_find(s, g->m[i].tid);
		if (u != w && (u == NULL || !state_in_barrier(u, g)) &&
		    (rv = fn(s, u, arg)) != 0)
			return rv;
	}
	return state_barrier_short(s, g, w->ep) ?
	    wait_short(s, w, g, fn, arg) : 0;
}

/*
 * Deadlock candidates: receives that cannot time out, and barriers; not
 * of a task whose past the model did not see, whose queue may hold
 * messages it does not know (a deadlock must be one).
 */
static int
dl_candidate(const struct state *s, const struct task *t)
{
	if (t->unknown_past || state_queued_handled(t))
		return 0;
	switch (state_task_wait(s, t)) {
	case WAIT_RECV:
		return t->cur.call != PMON_CALL_trecv && !state_queued_match(t);
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

/* A task a wildcard receive waits on: live, and not the group server. */
static int
dl_any_target(const struct task *u)
{
	return task_live(u) && !task_is_group_server(u);
}

/*
 * Counts of the tasks a wildcard receive waits on, in all and outside
 * the set, so that its check costs nothing per task.
 */
struct dl_count {
	size_t		 targets, free;
};

static int
dl_stuck(const struct state *s, const struct task *t, const uint8_t *in,
    const struct dl_count *n)
{
	struct dl_scan sc = { in, 0 };

	/* It waits on any other; it is itself in the set. */
	if (state_task_wait(s, t) == WAIT_RECV && t->cur.peer == -1)
		return n->free == 0 && n->targets - dl_any_target(t) > 0;
	return wait_each(s, t, dl_free, &sc) == 0 && sc.targets > 0;
}

/* The greatest set of candidates that wait only on it or on the ended. */
static void
dl_fixpoint(const struct state *s, uint8_t *in)
{
	struct dl_count n = { 0, 0 };
	const struct task *t;
	size_t i;
	int changed = 1;

	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		in[i] = dl_candidate(s, t);
		if (dl_any_target(t)) {
			n.targets++;
			n.free += !in[i];
		}
	}
	while (changed) {
		changed = 0;
		for (i = 0; i < s->ntasks; i++)
			if (in[i] && !dl_stuck(s, s->tasks[i], in, &n)) {
				in[i] = 0;
				n.free += dl_any_target(s->tasks[i]);
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

/* Non-zero when every tid of a is in b (both increasing). */
static int
dl_within(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
	size_t i, j = 0;

	for (i = 0; i < na; i++) {
		while (j < nb && b[j] < a[i])
			j++;
		if (j == nb || b[j] != a[i])
			return 0;
	}
	return 1;
}

/*
 * Non-zero when a reported deadlock holds every task of this one: the
 * same, or what is left of it once some of its tasks were killed.
 */
static int
dl_seen(const struct state *s, const int32_t *tids, size_t n)
{
	size_t i;

	for (i = 0; i < s->ndls; i++)
		if (dl_within(tids, n, s->dls[i].tids, s->dls[i].n))
			return 1;
	return 0;
}

/*
 * Remembers the deadlock tids (taken), in place of the reported ones it
 * grew from: those whose tasks are all in it.
 */
static void
dl_remember(struct state *s, int32_t *tids, size_t n)
{
	size_t i, kept = 0;

	for (i = 0; i < s->ndls; i++) {
		if (dl_within(s->dls[i].tids, s->dls[i].n, tids, n))
			free(s->dls[i].tids);
		else
			s->dls[kept++] = s->dls[i];
	}
	s->ndls = kept;
	state_grow(&s->dls, &s->dlcap, s->ndls + 1, sizeof(*s->dls));
	s->dls[s->ndls].tids = tids;
	s->dls[s->ndls++].n = n;
}

/*
 * Calls fn for each task of a deadlock as this file writes it (and a
 * snapshot brings it back: its task list first) until fn returns
 * non-zero, and returns that; 0 when fn never did, -1 when json is no
 * such deadlock.
 */
int
state_deadlock_tasks(const char *json, int (*fn)(int32_t, const void *),
    const void *arg)
{
	static const char pre[] = "{\"kind\":\"deadlock\",\"tasks\":[";
	const char *p;
	char *end;
	long v;
	int rv;

	if (strncmp(json, pre, sizeof(pre) - 1) != 0)
		return -1;
	p = json + sizeof(pre) - 1;
	do {
		v = strtol(p, &end, 10);
		if (end == p || v <= 0 || v > INT32_MAX)
			return -1;
		if ((rv = fn((int32_t)v, arg)) != 0)
			return rv;
		p = end;
	} while (*p++ == ',');
	return p[-1] == ']' ? 0 : -1;
}

struct dl_set {
	const int32_t	*tids;		/* increasing */
	size_t		 n;
};

static int
dl_outside(int32_t tid, const void *arg)
{
	const struct dl_set *set = arg;

	return bsearch(&tid, set->tids, set->n, sizeof(*set->tids),
	    state_cmp_tid) == NULL;
}

/* Non-zero when json is a deadlock whose tasks are all in tids. */
static int
dl_problem_within(const char *json, const int32_t *tids, size_t n)
{
	struct dl_set set = { tids, n };

	return state_deadlock_tasks(json, dl_outside, &set) == 0;
}

static char *
problem_take(struct state *s, size_t k)
{
	char *json = s->problems[k].json;

	memmove(&s->problems[k], &s->problems[k + 1],
	    (s->nproblems - k - 1) * sizeof(*s->problems));
	s->nproblems--;
	return json;
}

/* Into slot k of the kept problems; there is room for one more. */
static void
problem_put(struct state *s, size_t k, char *json)
{
	memmove(&s->problems[k + 1], &s->problems[k],
	    (s->nproblems - k) * sizeof(*s->problems));
	s->problems[k].json = json;
	s->nproblems++;
}

/*
 * Sends the deadlock pb and keeps it.  One that grew from deadlocks
 * reported before takes the place of the first of them kept, and the
 * others leave the list: pmon problems shows it once, with all its
 * tasks.  state_pb_emit appends, so the old one leaves its slot first.
 */
static void
dl_emit(struct state *s, struct pbuf *pb, const int32_t *tids, size_t n)
{
	char *old = NULL;
	size_t k, at = 0;

	for (k = s->nproblems; k-- > 0;)
		if (dl_problem_within(s->problems[k].json, tids, n)) {
			free(old);
			old = problem_take(s, at = k);
		}
	state_pb_emit(s, pb);
	if (old == NULL)
		return;
	problem_put(s, at, problem_take(s, s->nproblems - 1));
	free(old);
}

static void
write_wait(FILE *fp, const struct state *s, const struct task *t)
{
	fprintf(fp, "{\"tid\":%" PRId32 ",\"in\":\"%s\"", t->tid,
	    state_call_name(t->cur.call));
	if (state_task_wait(s, t) == WAIT_RECV)
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

static void
dl_write(struct pbuf *pb, const struct state *s, const struct task **comp,
    size_t n, const uint8_t *in, const struct task **walk, long *pos)
{
	size_t i;

	fputs(",\"tasks\":[", pb->fp);
	for (i = 0; i < n; i++) {
		fprintf(pb->fp, "%s%" PRId32, i ? "," : "", comp[i]->tid);
		state_pb_task(pb, comp[i]->tid);
	}
	fputc(']', pb->fp);
	dl_explain(pb->fp, s, comp, n, in, walk, pos);
	fputs(",\"waits\":[", pb->fp);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(',', pb->fp);
		write_wait(pb->fp, s, comp[i]);
	}
	fputc(']', pb->fp);
}

/*
 * Reports one weakly connected part of the set (its tasks increasing),
 * unless a reported deadlock holds all of them.  A part that grew from
 * reported ones (barrierexit: the check ran when one waiter had reached
 * the barrier, before the other) is sent again, with all its tasks, and
 * replaces them.  Returns 1 when it reported the part, else 0.
 */
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
	state_pb_open(&pb, "deadlock");
	dl_write(&pb, s, comp, n, in, walk, pos);
	dl_emit(s, &pb, tids, n);
	dl_remember(s, tids, n);
	return 1;
}

/* Gathers the set by union-find root and reports each part. */
static size_t
dl_parts(struct state *s, const uint8_t *in, size_t *up)
{
	const struct task **comp, **walk;
	size_t i, j, n, root, found = 0, nt = s->ntasks;
	uint8_t *done;
	long *pos;

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
		qsort(comp, n, sizeof(*comp), state_cmp_task_tid);
		found += (size_t)dl_report(s, comp, n, in, walk, pos);
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
	const struct task *t;
	uint8_t *in;
	size_t *up, i, found = 0, wild = SIZE_MAX;

	if (s->ntasks == 0)
		return 0;
	in = xcalloc(s->ntasks, sizeof(*in));
	up = xcalloc(s->ntasks, sizeof(*up));
	dl_fixpoint(s, in);
	for (i = 0; i < s->ntasks; i++)
		up[i] = i;
	du.up = up;
	du.in = in;
	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (!in[i])
			continue;
		du.from = i;
		/*
		 * A wildcard receive waits on every live task, all in the
		 * set: one part with the first of them, which joins the
		 * others once.
		 */
		if (state_task_wait(s, t) == WAIT_RECV && t->cur.peer == -1) {
			if (wild == SIZE_MAX)
				wild = i;
			dl_link(s, s->tasks[wild], &du);
			continue;
		}
		wait_each(s, t, dl_link, &du);
	}
	for (i = 0; wild != SIZE_MAX && i < s->ntasks; i++) {
		du.from = wild;
		if (i != wild && dl_any_target(s->tasks[i]))
			dl_link(s, s->tasks[i], &du);
	}
	found = dl_parts(s, in, up);
	free(in);
	free(up);
	return found;
}
