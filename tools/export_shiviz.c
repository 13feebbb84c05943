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
 * merges the clock of the event that sent it (a send's begin, a
 * pvm_bcast's end), and a task's first event the clock of its parent's
 * pvm_spawn begin.  The stream is causally ordered, so a clock is
 * complete when its event is written.  A task's clock goes when it
 * ends, a message's copy when its receivers took it (export.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pmon-tool.h"

/* A clock: entries by task index, n of them (later tasks are 0). */
struct vclock {
	size_t		 n;
	uint64_t	 c[];
};

/* A task's name, as a line starts with it and as a clock's key. */
struct shiviz_key {
	char		*key;		/* "\"slave1-t40004\":" */
	size_t		 len;		/* of key */
};

struct shiviz {
	struct vclock	**vc;		/* by task index; NULL once gone */
	struct shiviz_key *key;		/* by task index */
	size_t		 size;
};

/* Room for a line's fixed parts, and for one clock entry: a name is
 * at most 1023 bytes (libpmon's PMON_STR_MAX). */
#define SHIVIZ_LINE	2048

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

/* Room for task i in the tables, which grow with the tasks. */
static int
shiviz_room(struct export *x, struct shiviz *s, unsigned i)
{
	size_t n = export_ntasks(x);
	void *p;

	if (i < s->size)
		return 0;
	if ((p = reallocarray(s->vc, n, sizeof(*s->vc))) == NULL)
		return -1;
	s->vc = p;
	if ((p = reallocarray(s->key, n, sizeof(*s->key))) == NULL)
		return -1;
	s->key = p;
	memset(s->vc + s->size, 0, (n - s->size) * sizeof(*s->vc));
	memset(s->key + s->size, 0, (n - s->size) * sizeof(*s->key));
	s->size = n;
	return 0;
}

/* Gives task i a clock of ntasks entries, keeping what it had. */
static struct vclock *
shiviz_clock(struct export *x, struct shiviz *s, unsigned i)
{
	size_t n = export_ntasks(x);
	struct vclock *v;

	if (shiviz_room(x, s, i) == -1)
		return NULL;
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

/* The process name, one \S+ token of ASCII: "slave1-t40004". */
static char *
shiviz_name(char *p, const struct export_task *t)
{
	const char *c;
	size_t n;

	for (c = t->program, n = 0; *c != '\0' && n < 1024; c++, n++)
		*p++ = (unsigned char)*c <= ' ' || (unsigned char)*c >= 0x80 ||
		    *c == '"' || *c == '\\' ? '_' : *c;
	p = export_put_lit(p, "-t");
	return export_put_hex(p, (uint32_t)t->tid);
}

/*
 * A task's name as a clock's key, made once: every line names up to
 * every task.
 */
static int
shiviz_task(struct export *x, const struct export_task *t, int new_host)
{
	struct shiviz *s = export_data(x);
	char buf[1100], *p = buf;

	(void)new_host;
	if (shiviz_room(x, s, t->index) == -1)
		return export_fail(x, "out of memory");
	*p++ = '"';
	p = shiviz_name(p, t);
	p = export_put_lit(p, "\":");
	*p = '\0';
	s->key[t->index].len = (size_t)(p - buf);
	if ((s->key[t->index].key = strdup(buf)) == NULL)
		return export_fail(x, "out of memory");
	return 0;
}

/*
 * The clock: "{" then the non-zero entries, "\"name\":count" apart by
 * ", ", at p, with room until end; more is reserved when an entry (a
 * name of at most 1024 bytes and a count) might not fit.
 */
static int
shiviz_write_clock(struct export *x, const struct shiviz *s,
    const struct vclock *v, char *p, char *end)
{
	const struct shiviz_key *k;
	size_t i;
	int first = 1;

	*p++ = '{';
	for (i = 0; i < v->n; i++) {
		if (v->c[i] == 0)
			continue;
		k = &s->key[i];
		if ((size_t)(end - p) < k->len + 24) {
			export_commit(x, p);
			if ((p = export_reserve(x, SHIVIZ_LINE)) == NULL)
				return -1;
			end = p + SHIVIZ_LINE;
		}
		if (!first)
			p = export_put_lit(p, ", ");
		p = export_put(p, k->key, k->len);
		p = trace_fmt_u64(p, v->c[i]);
		first = 0;
	}
	*p++ = '}';
	*p++ = ' ';
	export_commit(x, p);
	return 0;
}

/* A tid and a seq: "t40004:17". */
static char *
shiviz_id(char *p, int32_t tid, uint64_t seq)
{
	*p++ = 't';
	p = export_put_hex(p, (uint32_t)tid);
	*p++ = ':';
	return trace_fmt_u64(p, seq);
}

/* " to A B C" of a multicast, which may be long: one at a time. */
static char *
shiviz_dsts(struct export *x, char *p, const struct pmon_event *ev)
{
	unsigned i;

	p = export_put_lit(p, " to");
	for (i = 0; i < ev->npeers; i++) {
		export_commit(x, p);
		if ((p = export_reserve(x, SHIVIZ_LINE)) == NULL)
			return NULL;
		p = export_put_lit(p, " t");
		p = export_put_hex(p, (uint32_t)ev->peers[i]);
	}
	return p;
}

/* The message an event carries: to or from whom, tag, size. */
static char *
shiviz_msg(struct export *x, char *p, const struct pmon_event *ev)
{
	int msg = export_is_send(ev->call) || (export_is_recv(ev->call) &&
	    (ev->flags & PMON_EV_MSG));

	if (export_is_send(ev->call) && ev->npeers > 0) {
		if ((p = shiviz_dsts(x, p, ev)) == NULL)
			return NULL;
	} else if (export_is_send(ev->call)) {
		p = export_put_lit(p, " to t");
		p = export_put_hex(p, (uint32_t)ev->peer);
	} else if (msg) {
		p = export_put_lit(p, " from t");
		p = export_put_hex(p, (uint32_t)ev->peer);
	}
	if (msg) {
		p = export_put_lit(p, " tag ");
		p = trace_fmt_i64(p, ev->tag);
		*p++ = ' ';
		p = trace_fmt_i64(p, ev->bytes);
		p = export_put_lit(p, " B");
	}
	return p;
}

/* The event for people: call, phase, id, and the message it carries. */
static int
shiviz_text(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	char *p;

	if ((p = export_reserve(x, SHIVIZ_LINE)) == NULL)
		return -1;
	if (ev->flags & PMON_EV_LOST) {
		p = export_put_lit(p, "lost ");
		p = trace_fmt_u64(p, (uint32_t)ev->bytes);
		p = export_put_lit(p, " events (");
		p = shiviz_id(p, ev->tid, ev->seq);
		export_commit(x, export_put_lit(p, ")\n"));
		return 0;
	}
	p = export_put_str(p, ev->call_name);
	if (ev->phase == PMON_PHASE_BEGIN)
		p = export_put_lit(p, " begin (");
	else
		p = export_put_lit(p, " end (");
	p = shiviz_id(p, ev->tid, ev->seq);
	*p++ = ')';
	if ((p = shiviz_msg(x, p, ev)) == NULL)
		return -1;
	if (ev->flags & PMON_EV_MATCHED) {
		p = export_put_lit(p, " match ");
		p = shiviz_id(p, ev->match_tid, ev->match_seq);
	}
	*p++ = '\n';
	export_commit(x, p);
	return 0;
}

static int
shiviz_event(struct export *x, const struct export_event *e)
{
	struct shiviz *s = export_data(x);
	struct vclock *v;
	char *start, *p;

	if ((v = shiviz_clock(x, s, e->task->index)) == NULL)
		return export_fail(x, "out of memory");
	if (e->spawn != NULL)
		vclock_merge(v, e->spawn->data);
	if (e->send != NULL)
		vclock_merge(v, e->send->data);
	v->c[e->task->index]++;
	if (e->self != NULL && (e->self->data = vclock_copy(v)) == NULL)
		return export_fail(x, "out of memory");
	if ((start = export_reserve(x, SHIVIZ_LINE)) == NULL)
		return -1;
	/* The key without its quotes and colon is the process's name. */
	p = export_put(start, s->key[e->task->index].key + 1,
	    s->key[e->task->index].len - 3);
	*p++ = ' ';
	if (shiviz_write_clock(x, s, v, p, start + SHIVIZ_LINE) == -1)
		return -1;
	return shiviz_text(x, e);
}

/* No event of the task follows: its clock lives on in those it reached. */
static int
shiviz_gone(struct export *x, const struct export_task *t)
{
	struct shiviz *s = export_data(x);

	if (t->index < s->size) {
		free(s->vc[t->index]);
		s->vc[t->index] = NULL;
	}
	return 0;
}

static int
shiviz_end(struct export *x)
{
	struct shiviz *s = export_data(x);
	size_t i;

	if (s == NULL)
		return -1;

	for (i = 0; i < s->size; i++) {
		free(s->vc[i]);
		free(s->key[i].key);
	}
	free(s->vc);
	free(s->key);
	free(s);
	export_set_data(x, NULL);
	return 0;
}

const struct export_format export_shiviz = {
	.name = "shiviz", .begin = shiviz_begin, .task = shiviz_task,
	.event = shiviz_event, .gone = shiviz_gone, .end = shiviz_end
};
