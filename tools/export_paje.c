/*
 * A Paje trace (ViTE, pajeng; checked with pj_dump, Debian's pajeng
 * having no pj_validate): the header defines the events (%EventDef),
 * then the types: containers root -> Host -> Task, a Task's State
 * (computing, pvm, blocked), links Message and Spawn between tasks, and
 * Lost and Breakpoint events.  Times are seconds of corrected time (tc)
 * from the start of the trace, with nanoseconds.
 *
 * Paje wants its events in time order, and the causal stream is only
 * ordered per task, so the events are kept and sorted at the end:
 * by time, containers created first and destroyed last at equal times,
 * otherwise in stream order.  A message is a link only when its receive
 * got it (both ends come from the receive's end), so every link ends.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "record.h"

enum paje_prio { PRIO_CREATE, PRIO_EVENT, PRIO_DESTROY };

struct paje_line {
	int64_t		 t;
	int		 prio;
	uint64_t	 serial;
	char		*text;		/* after the time */
};

struct paje {
	struct paje_line *lines;
	size_t		 n, size;
	uint64_t	 links;
	int64_t		*first_t;	/* by task index, -1: no event yet */
	size_t		 ntasks;
};

static const char paje_header[] =
    "%EventDef PajeDefineContainerType 0\n"
    "%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
    "%EventDef PajeDefineStateType 1\n"
    "%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
    "%EventDef PajeDefineLinkType 2\n"
    "%\tAlias string\n%\tType string\n%\tStartContainerType string\n"
    "%\tEndContainerType string\n%\tName string\n%EndEventDef\n"
    "%EventDef PajeDefineEventType 3\n"
    "%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
    "%EventDef PajeDefineEntityValue 4\n"
    "%\tAlias string\n%\tType string\n%\tName string\n%\tColor color\n"
    "%EndEventDef\n"
    "%EventDef PajeCreateContainer 5\n"
    "%\tTime date\n%\tAlias string\n%\tType string\n%\tContainer string\n"
    "%\tName string\n%EndEventDef\n"
    "%EventDef PajeDestroyContainer 6\n"
    "%\tTime date\n%\tType string\n%\tName string\n%EndEventDef\n"
    "%EventDef PajeSetState 7\n"
    "%\tTime date\n%\tType string\n%\tContainer string\n%\tValue string\n"
    "%EndEventDef\n"
    "%EventDef PajeStartLink 8\n"
    "%\tTime date\n%\tType string\n%\tContainer string\n"
    "%\tStartContainer string\n%\tValue string\n%\tKey string\n"
    "%EndEventDef\n"
    "%EventDef PajeEndLink 9\n"
    "%\tTime date\n%\tType string\n%\tContainer string\n"
    "%\tEndContainer string\n%\tValue string\n%\tKey string\n"
    "%EndEventDef\n"
    "%EventDef PajeNewEvent 10\n"
    "%\tTime date\n%\tType string\n%\tContainer string\n%\tValue string\n"
    "%EndEventDef\n";

static const char paje_types[] =
    "0 HOST 0 \"Host\"\n"
    "0 TASK HOST \"Task\"\n"
    "1 STATE TASK \"State\"\n"
    "2 MSG 0 TASK TASK \"Message\"\n"
    "2 SPAWN 0 TASK TASK \"Spawn\"\n"
    "3 LOST TASK \"Lost events\"\n"
    "3 BREAK TASK \"Breakpoint\"\n"
    "4 computing STATE \"computing\" \"0.2 0.7 0.2\"\n"
    "4 pvm STATE \"in PVM call\" \"0.9 0.8 0.1\"\n"
    "4 blocked STATE \"blocked\" \"0.9 0.2 0.2\"\n";

/* Keeps one event line: "NUM TIME" is written before text at the end. */
static int
paje_add(struct export *x, int64_t t, int prio, const char *fmt, ...)
{
	struct paje *p = export_data(x);
	struct paje_line *l;
	va_list ap;
	int len;

	if (p->n == p->size) {
		l = reallocarray(p->lines, p->size ? 2 * p->size : 1024,
		    sizeof(*l));
		if (l == NULL)
			return export_fail(x, "out of memory");
		p->lines = l;
		p->size = p->size ? 2 * p->size : 1024;
	}
	l = &p->lines[p->n];
	va_start(ap, fmt);
	len = vasprintf(&l->text, fmt, ap);
	va_end(ap);
	if (len == -1)
		return export_fail(x, "out of memory");
	l->t = t;
	l->prio = prio;
	l->serial = p->n++;
	return 0;
}

static int
paje_begin(struct export *x)
{
	struct paje *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return export_fail(x, "out of memory");
	export_set_data(x, p);
	return 0;
}

static int
paje_task(struct export *x, const struct export_task *t, int new_host)
{
	struct paje *p = export_data(x);
	int64_t *n;
	size_t want = export_ntasks(x);

	(void)new_host;
	if (t->index >= p->ntasks) {
		if ((n = reallocarray(p->first_t, want, sizeof(*n))) == NULL)
			return export_fail(x, "out of memory");
		while (p->ntasks < want)
			n[p->ntasks++] = -1;
		p->first_t = n;
	}
	return 0;
}

/* Names we did not choose (hosts, programs) lose their quotes. */
static void
paje_clean(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i] != '\0'; i++)
		dst[i] = src[i] == '"' || (unsigned char)src[i] < ' ' ?
		    '_' : src[i];
	dst[i] = '\0';
}

static int
paje_link(struct export *x, const char *type, const struct export_send *s,
    const struct export_event *e, const char *value)
{
	struct paje *p = export_data(x);

	p->links++;
	if (paje_add(x, s->t, PRIO_EVENT, "8 %%s %s 0 k%u \"%s\" l%" PRIu64,
	    type, s->task->index, value, p->links) == -1)
		return -1;
	return paje_add(x, e->t, PRIO_EVENT, "9 %%s %s 0 k%u \"%s\" l%" PRIu64,
	    type, e->task->index, value, p->links);
}

static const char *
paje_state(const struct pmon_event *ev)
{
	if (ev->phase == PMON_PHASE_END)
		return "computing";
	return export_is_blocking(ev->call) ? "blocked" : "pvm";
}

static int
paje_event(struct export *x, const struct export_event *e)
{
	struct paje *p = export_data(x);
	const struct pmon_event *ev = e->ev;
	unsigned k = e->task->index;
	char value[64];

	if (p->first_t[k] == -1)
		p->first_t[k] = e->t;
	if (e->spawn != NULL &&
	    paje_link(x, "SPAWN", e->spawn, e, "spawn") == -1)
		return -1;
	if (ev->flags & PMON_EV_LOST)
		return paje_add(x, e->t, PRIO_EVENT, "10 %%s LOST k%u "
		    "\"%u events\"", k, (uint32_t)ev->bytes);
	if (ev->call == PMON_CALL_BREAK)
		return paje_add(x, e->t, PRIO_EVENT, "10 %%s BREAK k%u "
		    "\"breakpoint %d\"", k, ev->inst);
	if (e->send != NULL) {
		snprintf(value, sizeof(value), "tag %d, %d B", ev->tag,
		    ev->bytes);
		if (paje_link(x, "MSG", e->send, e, value) == -1)
			return -1;
	}
	return paje_add(x, e->t, PRIO_EVENT, "7 %%s STATE k%u %s", k,
	    paje_state(ev));
}

/* Hosts from their first task's first event, tasks from their own. */
static int
paje_containers(struct export *x)
{
	struct paje *p = export_data(x);
	const struct export_task *t;
	int64_t end = export_last_t(x), *host_t;
	size_t i, nhosts = export_nhosts(x);
	char name[256];

	if ((host_t = calloc(nhosts ? nhosts : 1, sizeof(*host_t))) == NULL)
		return export_fail(x, "out of memory");
	for (i = 0; i < nhosts; i++)
		host_t[i] = end;
	for (i = 0; i < export_ntasks(x); i++) {
		t = export_task_at(x, i);
		if (p->first_t[i] == -1)
			p->first_t[i] = end;
		if (p->first_t[i] < host_t[t->host->index])
			host_t[t->host->index] = p->first_t[i];
		paje_clean(name, sizeof(name), t->program);
		paje_add(x, p->first_t[i], PRIO_CREATE, "5 %%s k%zu TASK h%u "
		    "\"%s t%x\"", i, t->host->index, name, (unsigned)t->tid);
		paje_add(x, end, PRIO_DESTROY, "6 %%s TASK k%zu", i);
	}
	for (i = 0; i < nhosts; i++) {
		paje_clean(name, sizeof(name), export_host_at(x, i)->name);
		/* Before its tasks: created first at an equal time. */
		paje_add(x, host_t[i], PRIO_CREATE - 1, "5 %%s h%zu HOST 0 "
		    "\"%s\"", i, name);
		paje_add(x, end, PRIO_DESTROY + 1, "6 %%s HOST h%zu", i);
	}
	free(host_t);
	return 0;
}

static int
paje_cmp(const void *a, const void *b)
{
	const struct paje_line *l = a, *m = b;

	if (l->t != m->t)
		return l->t < m->t ? -1 : 1;
	if (l->prio != m->prio)
		return l->prio < m->prio ? -1 : 1;
	return l->serial < m->serial ? -1 : l->serial > m->serial;
}

static void
paje_write(struct export *x, const struct paje_line *l)
{
	FILE *fp = export_file(x);
	uint64_t a = l->t < 0 ? (uint64_t)-l->t : (uint64_t)l->t;
	char when[40];
	const char *pct;

	snprintf(when, sizeof(when), "%s%" PRIu64 ".%09u", l->t < 0 ? "-" : "",
	    a / 1000000000, (unsigned)(a % 1000000000));
	/* The text is "NUM %s REST": the time goes where %s is. */
	pct = strstr(l->text, "%s");
	fprintf(fp, "%.*s%s%s\n", (int)(pct - l->text), l->text, when,
	    pct + 2);
}

static int
paje_end(struct export *x)
{
	struct paje *p = export_data(x);
	FILE *fp = export_file(x);
	size_t i;
	int rv = 0;

	if (p == NULL)
		return -1;

	rv = paje_containers(x);
	if (p->n > 0)
		qsort(p->lines, p->n, sizeof(*p->lines), paje_cmp);
	fputs(paje_header, fp);
	fputs(paje_types, fp);
	for (i = 0; i < p->n; i++) {
		paje_write(x, &p->lines[i]);
		free(p->lines[i].text);
	}
	free(p->lines);
	free(p->first_t);
	free(p);
	export_set_data(x, NULL);
	return rv;
}

const struct export_format export_paje = {
	"paje", paje_begin, paje_task, paje_event, NULL, paje_end
};
