/*
 * The state model's output (state.c): the snapshot's JSON (state_write,
 * state_write_task; doc/state.md), which also answers `pmon ps`,
 * `hosts`, `groups`, `queues`, `mailbox` and `problems`: the pmon
 * command makes its tables from it (tools/render.c).
 */
#include <sys/queue.h>

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

static const char *
host_agent(const struct host *h)
{
	if (h->deleted)
		return "deleted";
	return h->up ? "up" : "down";
}

/* --- output ------------------------------------------------------------ */

/* The tasks shown, by tid. */
const struct task **
state_tasks_sorted(const struct state *s, size_t *n)
{
	const struct task **v;
	size_t i;

	v = xcalloc(s->ntasks + 1, sizeof(*v));
	for (*n = 0, i = 0; i < s->ntasks; i++)
		if (task_shown(s->tasks[i]))
			v[(*n)++] = s->tasks[i];
	qsort(v, *n, sizeof(*v), state_cmp_task_tid);
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
	return state_task_wait(s, t) != WAIT_NONE ? "blocked" : "running";
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
		    state_call_name(t->brk.call), t->brk_phase == PMON_BEGIN ?
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
		state_json_id(fp, t->tid, t->brk.seq);
		fputc('}', fp);
	}
	fputc('}', fp);
}

static void
write_blocked(FILE *fp, const struct state *s, const struct task *t)
{
	enum wait_kind k = state_task_wait(s, t);

	if (k == WAIT_NONE)
		return;
	fprintf(fp, ",\"blocked\":{\"in\":\"%s\"",
	    state_call_name(t->cur.call));
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
	state_json_id(fp, t->tid, t->cur.seq);
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
	fputc(']', fp);
	if (t->nhandlers > 0 && t->end == TASK_LIVE) {
		fputs(",\"handlers\":[", fp);
		for (i = 0; i < t->nhandlers; i++)
			fprintf(fp, "%s{\"id\":%" PRId32 ",\"from\":%" PRId32
			    ",\"tag\":%" PRId32 ",\"ctx\":%" PRId32 "}",
			    i ? "," : "", t->handlers[i].mhid,
			    t->handlers[i].src, t->handlers[i].tag,
			    t->handlers[i].ctx);
		fputc(']', fp);
	}
	fputc('}', fp);
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
		fprintf(fp, ",\"agent\":\"%s\"", host_agent(h));
		if (h->via != NULL && h->via[0] != '\0') {
			fputs(",\"via\":", fp);
			json_str_write(fp, h->via);
		}
		fputc('}', fp);
	}
	fputc(']', fp);
}

static int
cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->inst != y->inst)
		return x->inst < y->inst ? -1 : 1;
	return state_cmp_tid(&x->tid, &y->tid);
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
		if (tv[i]->end == TASK_LIVE && state_in_barrier(tv[i], g))
			tv[n++] = tv[i];
	return n;
}

static void
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
		state_json_id(fp, q->from, q->seq);
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

/* Non-zero when tid is a live task blocked in a call. */
static int
task_waits(const struct state *s, long tid)
{
	const struct task *t = NULL;

	if (tid > 0 && tid <= INT32_MAX)
		t = task_find(s, (int32_t)tid);
	return t != NULL && t->end == TASK_LIVE &&
	    state_task_wait(s, t) != WAIT_NONE;
}

static int
task_waits_not(int32_t tid, const void *s)
{
	return !task_waits(s, tid);
}

/*
 * Whether a problem about a state, a deadlock or a wait on an exited
 * task, is over: one of its tasks waits no more (it was killed, say).
 * A problem about an event (a race, a message never received, a bad
 * unpack) is never over.  json is the problem as state_problems.c and
 * state_deadlock.c write it, its task list first.
 */
static int
problem_over(const struct state *s, const char *json)
{
	static const char we[] = "{\"kind\":\"waits_on_exited\",\"tid\":";

	if (strncmp(json, we, sizeof(we) - 1) == 0)
		return !task_waits(s, strtol(json + sizeof(we) - 1, NULL, 10));
	return state_deadlock_tasks(json, task_waits_not, s) == 1;
}

/* The problems, each with "over":true once it is over. */
static void
write_problems(FILE *fp, const struct state *s)
{
	const char *json;
	size_t i;

	fputs(",\"problems\":[", fp);
	for (i = 0; i < s->nproblems; i++) {
		json = s->problems[i].json;
		if (i > 0)
			fputc(',', fp);
		if (problem_over(s, json)) {
			fwrite(json, 1, strlen(json) - 1, fp);
			fputs(",\"over\":true}", fp);
		} else
			fputs(json, fp);
	}
	fputc(']', fp);
	if (s->problems_dropped > 0)
		fprintf(fp, ",\"problems_not_kept\":%" PRIu64,
		    s->problems_dropped);
	if (s->races_unchecked > 0)
		fprintf(fp, ",\"races_unchecked\":%" PRIu64,
		    s->races_unchecked);
}

int
state_write(const struct state *s, unsigned parts, int32_t queue_tid,
    FILE *fp)
{
	const struct task **tv;
	size_t i, nt;

	tv = state_tasks_sorted(s, &nt);
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
	if (parts & STATE_GROUPS)
		write_groups(fp, s, tv, nt);
	if (parts & STATE_QUEUES)
		write_queues(fp, s, queue_tid);
	if (parts & STATE_TRAFFIC)
		write_traffic(fp, tv, nt);
	if (parts & STATE_MAILBOX)
		mbox_write_json(&s->mbox, fp);
	if (parts & STATE_PROBLEMS)
		write_problems(fp, s);
	fputc('}', fp);
	free(tv);
	return ferror(fp) ? -1 : 0;
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
