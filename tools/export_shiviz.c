/*
 * A ShiViz log: one line per event, "PROCESS CLOCK EVENT", where PROCESS
 * names the task ("slave1-t40004"), CLOCK is its vector clock as a JSON
 * object of the non-zero entries, and EVENT is the event for people.
 * ShiViz parses it with the regular expression
 *
 *	(?<host>\S+) (?<clock>\{[^}]*\}) (?<event>.*)
 *
 * Vector clocks are computed from the causal stream: every event ticks
 * its task's own entry; a receive's end that got a matched message first
 * merges the clock of the send's begin, and a task's first event the
 * clock of its parent's pvm_spawn begin.  The stream is causally ordered,
 * so a clock is complete when its event is written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* A clock: entries by task index, n of them (later tasks are 0). */
struct vclock {
	size_t		 n;
	uint64_t	 c[];
};

struct shiviz {
	struct vclock	**vc;		/* by task index */
	size_t		 size;
};

static int
shiviz_begin(struct export *x)
{
	struct shiviz *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return export_fail(x, "out of memory");
	export_set_data(x, s);
	return 0;
}

static struct vclock *
vclock_new(size_t n)
{
	struct vclock *v;

	if ((v = calloc(1, sizeof(*v) + n * sizeof(v->c[0]))) != NULL)
		v->n = n;
	return v;
}

/* Gives task i a clock of ntasks entries, keeping what it had. */
static struct vclock *
shiviz_clock(struct export *x, struct shiviz *s, unsigned i)
{
	size_t n = export_ntasks(x);
	struct vclock *v;
	void *p;

	if (i >= s->size) {
		if ((p = reallocarray(s->vc, n, sizeof(*s->vc))) == NULL)
			return NULL;
		s->vc = p;
		memset(s->vc + s->size, 0, (n - s->size) * sizeof(*s->vc));
		s->size = n;
	}
	if (s->vc[i] != NULL && s->vc[i]->n == n)
		return s->vc[i];
	if ((v = vclock_new(n)) == NULL)
		return NULL;
	if (s->vc[i] != NULL)
		memcpy(v->c, s->vc[i]->c, s->vc[i]->n * sizeof(v->c[0]));
	free(s->vc[i]);
	return s->vc[i] = v;
}

static void
vclock_merge(struct vclock *v, const struct vclock *o)
{
	size_t i;

	for (i = 0; o != NULL && i < o->n && i < v->n; i++)
		if (o->c[i] > v->c[i])
			v->c[i] = o->c[i];
}

static struct vclock *
vclock_copy(const struct vclock *v)
{
	struct vclock *c;

	if ((c = vclock_new(v->n)) != NULL)
		memcpy(c->c, v->c, v->n * sizeof(v->c[0]));
	return c;
}

static void
shiviz_name(FILE *fp, const struct export_task *t)
{
	char b[16];
	const char *p;

	/* The process name is one \S+ token of ASCII. */
	for (p = t->program; *p != '\0'; p++)
		putc((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x80 ||
		    *p == '"' || *p == '\\' ?
		    '_' : *p, fp);
	fprintf(fp, "-%s", export_tidstr(t->tid, b, sizeof(b)));
}

static void
shiviz_write_clock(struct export *x, FILE *fp, const struct vclock *v)
{
	size_t i;
	int first = 1;

	putc('{', fp);
	for (i = 0; i < v->n; i++) {
		if (v->c[i] == 0)
			continue;
		fputs(first ? "\"" : ", \"", fp);
		shiviz_name(fp, export_task_at(x, i));
		fprintf(fp, "\":%" PRIu64, v->c[i]);
		first = 0;
	}
	putc('}', fp);
}

/* The event for people: call, phase, id, and the message it carries. */
static void
shiviz_text(FILE *fp, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	char a[16], b[16];
	unsigned i;

	if (ev->flags & PMON_EV_LOST) {
		fprintf(fp, "lost %u events (%s:%" PRIu64 ")",
		    (uint32_t)ev->bytes, export_tidstr(ev->tid, a, sizeof(a)),
		    ev->seq);
		return;
	}
	fprintf(fp, "%s %s (%s:%" PRIu64 ")", ev->call_name,
	    ev->phase == PMON_PHASE_BEGIN ? "begin" : "end",
	    export_tidstr(ev->tid, a, sizeof(a)), ev->seq);
	if (export_is_send(ev->call) && ev->npeers > 0) {
		fputs(" to", fp);
		for (i = 0; i < ev->npeers; i++)
			fprintf(fp, " %s", export_tidstr(ev->peers[i], b,
			    sizeof(b)));
	} else if (export_is_send(ev->call))
		fprintf(fp, " to %s", export_tidstr(ev->peer, b, sizeof(b)));
	else if (export_is_recv(ev->call) && (ev->flags & PMON_EV_MSG))
		fprintf(fp, " from %s", export_tidstr(ev->peer, b, sizeof(b)));
	if (export_is_send(ev->call) || (export_is_recv(ev->call) &&
	    (ev->flags & PMON_EV_MSG)))
		fprintf(fp, " tag %d %d B", ev->tag, ev->bytes);
	if (ev->flags & PMON_EV_MATCHED)
		fprintf(fp, " match %s:%" PRIu64, export_tidstr(ev->match_tid,
		    b, sizeof(b)), ev->match_seq);
}

static int
shiviz_task(struct export *x, const struct export_task *t, int new_host)
{
	(void)x;
	(void)t;
	(void)new_host;
	return 0;
}

static int
shiviz_event(struct export *x, const struct export_event *e)
{
	struct shiviz *s = export_data(x);
	FILE *fp = export_file(x);
	struct vclock *v;

	if ((v = shiviz_clock(x, s, e->task->index)) == NULL)
		return export_fail(x, "out of memory");
	if (e->spawn != NULL)
		vclock_merge(v, e->spawn->data);
	if (e->send != NULL)
		vclock_merge(v, e->send->data);
	v->c[e->task->index]++;
	if (e->self != NULL && (e->self->data = vclock_copy(v)) == NULL)
		return export_fail(x, "out of memory");
	shiviz_name(fp, e->task);
	putc(' ', fp);
	shiviz_write_clock(x, fp, v);
	putc(' ', fp);
	shiviz_text(fp, e);
	putc('\n', fp);
	return 0;
}

static int
shiviz_end(struct export *x)
{
	struct shiviz *s = export_data(x);
	size_t i;

	if (s == NULL)
		return -1;

	for (i = 0; i < s->size; i++)
		free(s->vc[i]);
	free(s->vc);
	free(s);
	export_set_data(x, NULL);
	return 0;
}

const struct export_format export_shiviz = {
	"shiviz", shiviz_begin, shiviz_task, shiviz_event, NULL, shiviz_end
};
