/*
 * A Paje trace (ViTE, pajeng; checked with pj_dump, Debian's pajeng
 * having no pj_validate): the header defines the events (%EventDef),
 * then the types: containers root -> Host -> Task, a Task's State
 * (computing, pvm, blocked), links Message and Spawn between tasks, and
 * Lost and Breakpoint events.  Times are seconds of corrected time (tc)
 * from the start of the trace, with nanoseconds.
 *
 * Paje wants its events in time order, and the causal stream is only
 * ordered per task, so the lines wait in a reordering window: a heap
 * keyed by time (containers created first and destroyed last at equal
 * times, otherwise in stream order).  A line is written once no line
 * still to come can be earlier: when its time is before the horizon
 * (export_horizon: the live tasks' last times, the messages and spawns
 * still waited for).  The window holds at most --window lines; when it
 * is full, its earliest line is written anyway, and a line that then
 * comes with an earlier time than one written already is written at
 * that later time (counted, and said at the end).  Until then the file
 * is the one a sort of the whole run would give.
 *
 * A message is a link only when its receive got it (both ends come from
 * the receive's end), so every link ends.  A task's container is created
 * at its first event, a host's with its earliest task.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pmon-tool.h"

/* What may come at one time, in this order. */
enum paje_prio {
	PRIO_HOST, PRIO_CREATE, PRIO_EVENT, PRIO_DESTROY, PRIO_HOST_DESTROY
};
#define PRIO_SHIFT	56

enum paje_kind {
	L_HOST_CREATE, L_TASK_CREATE, L_STATE, L_LINK_START, L_LINK_END,
	L_LOST, L_BREAK, L_TASK_DESTROY, L_HOST_DESTROY
};

enum paje_value { V_COMPUTING, V_PVM, V_BLOCKED, V_MSG, V_SPAWN };

/* One line of the file, waiting for its turn. */
struct paje_line {
	int64_t		 t;
	uint64_t	 order;		/* prio << PRIO_SHIFT | index or serial */
	uint64_t	 link;		/* a link's key */
	uint32_t	 who;		/* task index, or host index */
	uint8_t		 kind;		/* enum paje_kind */
	uint8_t		 value;		/* enum paje_value */
	int32_t		 a, b;		/* tag and bytes, count, breakpoint */
};

/* The heap moves keys; the lines stay in their slots. */
struct paje_key {
	int64_t		 t;
	uint64_t	 order;
	uint32_t	 slot;
};

struct paje {
	struct paje_key	*heap;		/* the window: a 4-ary heap */
	struct paje_line *line;		/* by slot */
	uint32_t	*idle;		/* slots not in use */
	size_t		 n, size, nidle, used;
	uint64_t	 serial;	/* stream order of event lines */
	uint64_t	 links;
	uint8_t		*created;	/* by task index */
	uint8_t		*host_done;	/* by host index: its line is out */
	size_t		 ntasks, nhosts;
	uint64_t	 since, every;	/* events between horizon checks */
	int64_t		 written_t;	/* time of the last line out */
	uint64_t	 forced;	/* lines out because the window was full */
	uint64_t	 late;		/* lines out after their time */
	int64_t		 late_max;
};

/*
 * The horizon is checked every this many events, or as many as the
 * slots of tasks and messages it scans: a small window is a shallow
 * heap, and the scan costs about one slot per event.
 */
#define PAJE_CHECK_MIN	256
/* An event makes at most this many lines (a state, two links, the
 * containers). */
#define PAJE_EVENT_LINES	8
/* Room for one line: a name is at most 1023 bytes (PMON_STR_MAX). */
#define PAJE_LINE	2048

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


static int
paje_before(const struct paje_key *k, const struct paje_key *m)
{
	return k->t != m->t ? k->t < m->t : k->order < m->order;
}

/*
 * Room for one more line: the heap, the slots and the free list.  They
 * never grow past the window and the lines of one event.
 */
static int
paje_grow(struct export *x, struct paje *p)
{
	size_t size = p->size ? 2 * p->size : 1024;
	void *h, *l, *f;

	if (p->n < p->size)
		return 0;
	if (size > (size_t)export_window(x) + PAJE_EVENT_LINES &&
	    p->size < (size_t)export_window(x) + PAJE_EVENT_LINES)
		size = (size_t)export_window(x) + PAJE_EVENT_LINES;
	h = reallocarray(p->heap, size, sizeof(*p->heap));
	if (h != NULL)
		p->heap = h;
	l = reallocarray(p->line, size, sizeof(*p->line));
	if (l != NULL)
		p->line = l;
	f = reallocarray(p->idle, size, sizeof(*p->idle));
	if (f != NULL)
		p->idle = f;
	if (h == NULL || l == NULL || f == NULL)
		return export_fail(x, "out of memory");
	p->size = size;
	return 0;
}

/*
 * A 4-ary heap: half the levels of a binary one, and the four children
 * of a key share a cache line or two.
 */
static int
paje_push(struct export *x, struct paje *p, const struct paje_line *l)
{
	struct paje_key k, *h;
	size_t i, up;

	if (paje_grow(x, p) == -1)
		return -1;
	k.t = l->t;
	k.order = l->order;
	k.slot = p->nidle > 0 ? p->idle[--p->nidle] : (uint32_t)p->used++;
	p->line[k.slot] = *l;
	/* The hole moves up to where k belongs. */
	h = p->heap;
	for (i = p->n++; i > 0; i = up) {
		up = (i - 1) / 4;
		if (!paje_before(&k, &h[up]))
			break;
		h[i] = h[up];
	}
	h[i] = k;
	return 0;
}

/* Takes the earliest line out of the window. */
static struct paje_line
paje_pop(struct paje *p)
{
	struct paje_key *h = p->heap, *last;
	uint32_t slot = h[0].slot;
	size_t i = 0, c, j, end;

	last = &h[--p->n];
	/* The hole at the root moves down to where the last key belongs. */
	for (;;) {
		c = 4 * i + 1;
		if (c >= p->n)
			break;
		end = c + 4 < p->n ? c + 4 : p->n;
		for (j = c + 1; j < end; j++)
			if (paje_before(&h[j], &h[c]))
				c = j;
		if (!paje_before(&h[c], last))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = *last;
	p->idle[p->nidle++] = slot;
	return p->line[slot];
}

/* An event's line (in stream order at equal times). */
static int
paje_add(struct export *x, int64_t t, uint8_t kind, unsigned who,
    uint8_t value, int32_t a, int32_t b)
{
	struct paje *p = export_data(x);
	struct paje_line l = { .t = t, .kind = kind, .who = who,
	    .value = value, .a = a, .b = b, .link = p->links };

	l.order = (uint64_t)PRIO_EVENT << PRIO_SHIFT | p->serial++;
	return paje_push(x, p, &l);
}

/* A container's line: at equal times, by index. */
static int
paje_container(struct export *x, int64_t t, uint8_t kind, unsigned who,
    enum paje_prio prio)
{
	struct paje_line l = { .t = t, .kind = kind, .who = who };

	l.order = (uint64_t)prio << PRIO_SHIFT | who;
	return paje_push(x, export_data(x), &l);
}

static int
paje_begin(struct export *x)
{
	struct paje *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return export_fail(x, "out of memory");
	p->every = PAJE_CHECK_MIN;
	export_set_data(x, p);
	if (export_write(x, paje_header, sizeof(paje_header) - 1) == -1)
		return -1;
	return export_write(x, paje_types, sizeof(paje_types) - 1);
}

static int
paje_task(struct export *x, const struct export_task *t, int new_host)
{
	struct paje *p = export_data(x);
	size_t want = export_ntasks(x), hosts = export_nhosts(x);
	uint8_t *n;

	(void)new_host;
	if (want > p->ntasks) {
		if ((n = realloc(p->created, want)) == NULL)
			return export_fail(x, "out of memory");
		memset(n + p->ntasks, 0, want - p->ntasks);
		p->created = n;
		p->ntasks = want;
	}
	if (hosts > p->nhosts) {
		if ((n = realloc(p->host_done, hosts)) == NULL)
			return export_fail(x, "out of memory");
		memset(n + p->nhosts, 0, hosts - p->nhosts);
		p->host_done = n;
		p->nhosts = hosts;
	}
	(void)t;
	return 0;
}

/*
 * A task's container at its first event, and its host's: the host's
 * line is offered with each of its tasks, and the earliest one is
 * written.
 */
static int
paje_create(struct export *x, const struct export_task *t, int64_t tm)
{
	struct paje *p = export_data(x);

	if (p->created[t->index])
		return 0;
	p->created[t->index] = 1;
	if (paje_container(x, tm, L_HOST_CREATE, t->host->index,
	    PRIO_HOST) == -1)
		return -1;
	return paje_container(x, tm, L_TASK_CREATE, t->index, PRIO_CREATE);
}

/* A link from the event that started it to e's task. */
static int
paje_link(struct export *x, uint8_t value, const struct export_send *s,
    const struct export_event *e)
{
	struct paje *p = export_data(x);
	int32_t tag = value == V_MSG ? e->ev->tag : 0;
	int32_t bytes = value == V_MSG ? e->ev->bytes : 0;

	p->links++;
	if (paje_add(x, s->t, L_LINK_START, s->task->index, value, tag,
	    bytes) == -1)
		return -1;
	return paje_add(x, e->t, L_LINK_END, e->task->index, value, tag,
	    bytes);
}

static uint8_t
paje_state(const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	int call = ev->call;

	/* A message handler's end: back in the call it interrupted. */
	if (call == PMON_CALL_HANDLER && ev->phase == PMON_PHASE_END &&
	    e->task->has_outer)
		call = e->task->outer.call;
	else if (ev->phase == PMON_PHASE_END)
		return V_COMPUTING;
	return export_is_blocking(call) ? V_BLOCKED : V_PVM;
}

/* Names we did not choose (hosts, programs) lose their quotes. */
static char *
paje_clean(char *dst, const char *src)
{
	size_t i;

	for (i = 0; i < 1024 && src[i] != '\0'; i++)
		*dst++ = src[i] == '"' || (unsigned char)src[i] < ' ' ?
		    '_' : src[i];
	return dst;
}

static char *
paje_value(char *p, const struct paje_line *l)
{
	static const char *const states[] = { "computing", "pvm",
	    "blocked" };

	switch (l->value) {
	case V_MSG:
		p = export_put_lit(p, " \"tag ");
		p = trace_fmt_i64(p, l->a);
		p = export_put_lit(p, ", ");
		p = trace_fmt_i64(p, l->b);
		return export_put_lit(p, " B\"");
	case V_SPAWN:
		return export_put_lit(p, " \"spawn\"");
	default:
		*p++ = ' ';
		return export_put_str(p, states[l->value]);
	}
}

/* What follows the time in a container's line: "k3 TASK h0 \"...\"". */
static char *
paje_rest_container(struct export *x, char *p, const struct paje_line *l)
{
	const struct export_task *t;

	switch (l->kind) {
	case L_HOST_CREATE:
		p = export_put_lit(p, " h");
		p = trace_fmt_u64(p, l->who);
		p = export_put_lit(p, " HOST 0 \"");
		p = paje_clean(p, export_host_at(x, l->who)->name);
		return export_put_lit(p, "\"");
	case L_TASK_CREATE:
		t = export_task_at(x, l->who);
		p = export_put_lit(p, " k");
		p = trace_fmt_u64(p, l->who);
		p = export_put_lit(p, " TASK h");
		p = trace_fmt_u64(p, t->host->index);
		p = export_put_lit(p, " \"");
		p = paje_clean(p, t->program);
		p = export_put_lit(p, " t");
		p = export_put_hex(p, (uint32_t)t->tid);
		return export_put_lit(p, "\"");
	case L_TASK_DESTROY:
		p = export_put_lit(p, " TASK k");
		return trace_fmt_u64(p, l->who);
	default:
		p = export_put_lit(p, " HOST h");
		return trace_fmt_u64(p, l->who);
	}
}

/* What follows the time: "STATE k3 pvm", "MSG 0 k3 \"tag 1, 4 B\" l9"... */
static char *
paje_rest(struct export *x, char *p, const struct paje_line *l)
{
	switch (l->kind) {
	case L_STATE:
		p = export_put_lit(p, " STATE k");
		p = trace_fmt_u64(p, l->who);
		return paje_value(p, l);
	case L_LINK_START:
	case L_LINK_END:
		if (l->value == V_MSG)
			p = export_put_lit(p, " MSG 0 k");
		else
			p = export_put_lit(p, " SPAWN 0 k");
		p = trace_fmt_u64(p, l->who);
		p = paje_value(p, l);
		p = export_put_lit(p, " l");
		return trace_fmt_u64(p, l->link);
	case L_LOST:
		p = export_put_lit(p, " LOST k");
		p = trace_fmt_u64(p, l->who);
		p = export_put_lit(p, " \"");
		p = trace_fmt_u64(p, (uint32_t)l->a);
		return export_put_lit(p, " events\"");
	case L_BREAK:
		p = export_put_lit(p, " BREAK k");
		p = trace_fmt_u64(p, l->who);
		p = export_put_lit(p, " \"breakpoint ");
		p = trace_fmt_i64(p, l->a);
		return export_put_lit(p, "\"");
	default:
		return paje_rest_container(x, p, l);
	}
}

/*
 * Writes one line.  Times never go backwards in the file: a line that
 * comes too late for its time (the window was full) takes the time of
 * the last line out.
 */
static int
paje_write(struct export *x, struct paje *p, struct paje_line *l)
{
	static const char *const num[] = { "5", "5", "7", "8", "9", "10",
	    "10", "6", "6" };
	char *o;

	if (l->kind == L_HOST_CREATE) {
		if (p->host_done[l->who])
			return 0;
		p->host_done[l->who] = 1;
	}
	if (l->t < p->written_t) {
		p->late++;
		if (p->written_t - l->t > p->late_max)
			p->late_max = p->written_t - l->t;
		l->t = p->written_t;
	}
	p->written_t = l->t;
	if ((o = export_reserve(x, PAJE_LINE)) == NULL)
		return -1;
	o = export_put_str(o, num[l->kind]);
	*o++ = ' ';
	o = export_put_fixed(o, l->t, 1000000000, 9);
	o = paje_rest(x, o, l);
	*o++ = '\n';
	export_commit(x, o);
	return 0;
}

/* Writes every line earlier than h, or all with h = INT64_MAX. */
static int
paje_flush(struct export *x, struct paje *p, int64_t h)
{
	struct paje_line l;

	while (p->n > 0 && (h == INT64_MAX || p->heap[0].t < h)) {
		l = paje_pop(p);
		if (paje_write(x, p, &l) == -1)
			return -1;
	}
	return 0;
}

/*
 * After each event: now and then, what the horizon lets out; always,
 * what does not fit the window.
 */
static int
paje_window(struct export *x, struct paje *p)
{
	struct paje_line l;
	size_t work;

	if (++p->since >= p->every) {
		p->since = 0;
		if (paje_flush(x, p, export_horizon(x)) == -1)
			return -1;
		work = export_ntasks(x) + export_inflight(x);
		p->every = work > PAJE_CHECK_MIN ? work : PAJE_CHECK_MIN;
	}
	while (p->n > export_window(x)) {
		p->forced++;
		l = paje_pop(p);
		if (paje_write(x, p, &l) == -1)
			return -1;
	}
	return 0;
}

static int
paje_lines(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	unsigned k = e->task->index;

	if (paje_create(x, e->task, e->t) == -1)
		return -1;
	if (e->spawn != NULL && paje_link(x, V_SPAWN, e->spawn, e) == -1)
		return -1;
	if (ev->flags & PMON_EV_LOST)
		return paje_add(x, e->t, L_LOST, k, 0, (int32_t)ev->bytes, 0);
	if (ev->call == PMON_CALL_BREAK)
		return paje_add(x, e->t, L_BREAK, k, 0, ev->inst, 0);
	if (e->send != NULL && paje_link(x, V_MSG, e->send, e) == -1)
		return -1;
	return paje_add(x, e->t, L_STATE, k, paje_state(e), 0, 0);
}

static int
paje_event(struct export *x, const struct export_event *e)
{
	if (paje_lines(x, e) == -1)
		return -1;
	return paje_window(x, export_data(x));
}

/*
 * The end: tasks that had no event are created at the last time, every
 * container is destroyed then, and the window is written out.
 */
static int
paje_close(struct export *x, struct paje *p)
{
	int64_t end = export_last_t(x);
	size_t i;

	for (i = 0; i < export_ntasks(x); i++)
		if (paje_create(x, export_task_at(x, i), end) == -1)
			return -1;
	for (i = 0; i < export_ntasks(x); i++)
		if (paje_container(x, end, L_TASK_DESTROY, (unsigned)i,
		    PRIO_DESTROY) == -1)
			return -1;
	for (i = 0; i < export_nhosts(x); i++)
		if (paje_container(x, end, L_HOST_DESTROY, (unsigned)i,
		    PRIO_HOST_DESTROY) == -1)
			return -1;
	if (paje_flush(x, p, INT64_MAX) == -1)
		return -1;
	if (p->late > 0 && p->forced > 0)
		export_warn(x, "the reordering window (%u lines) was full "
		    "%" PRIu64 " times: %" PRIu64 " lines came after later "
		    "ones were written, and have their time moved forward by "
		    "up to %.3f ms (a larger --window keeps them exact)",
		    export_window(x), p->forced, p->late,
		    p->late_max / 1e6);
	else if (p->late > 0)
		export_warn(x, "%" PRIu64 " lines (of tasks the stream "
		    "announced late) came after later ones were written, and "
		    "have their time moved forward by up to %.3f ms", p->late,
		    p->late_max / 1e6);
	return 0;
}

static int
paje_end(struct export *x)
{
	struct paje *p = export_data(x);
	int rv;

	if (p == NULL)
		return -1;

	rv = paje_close(x, p);
	free(p->heap);
	free(p->line);
	free(p->idle);
	free(p->created);
	free(p->host_done);
	free(p);
	export_set_data(x, NULL);
	return rv;
}

const struct export_format export_paje = {
	"paje", paje_begin, paje_task, paje_event, NULL, NULL, paje_end
};
