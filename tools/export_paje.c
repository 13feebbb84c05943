/*
 * A Paje trace (ViTE, pajeng; checked with pj_dump, Debian's pajeng
 * having no pj_validate): the header defines the events (%EventDef),
 * then the types: containers root -> Host -> Task, a Task's State
 * (the call it is in, by name, or computing), links Message and Spawn
 * between tasks, and Lost, Breakpoint and Problem events.  Times are
 * seconds of corrected time (tc) from the trace's first event, with
 * nanoseconds.
 *
 * Paje wants its events in time order, and the causal stream is only
 * ordered per task, so the lines wait in a reordering window: a heap
 * keyed by time (in stream order at equal times).  A line is written
 * once no line still to come can be earlier: when its time is before
 * the horizon (export_horizon: the live tasks' last times, the messages
 * and spawns still waited for).  The window holds at most --window
 * lines; when it is full, its earliest line is written anyway, and a
 * line that then comes with an earlier time than one written already is
 * written at that later time (counted, and said at the end).  Until
 * then the file is the one a sort of the whole run would give.
 *
 * Viewers draw the rows in the order the containers were made, so a
 * task's container is made when the first of its lines is written,
 * and the containers of all tasks whose first lines are written
 * together (one pass of the horizon) are made together, in tid order,
 * at the time of the pass's first line: a run that fits the window
 * gets every row in tid order.  A task with no line gets no container.
 *
 * A message is a link only when its receive got it (both ends come from
 * the receive's end), so every link ends.  The coordinator's deadlocks,
 * pmon kill and the tool's lost events are Problem events; a call still
 * open at the end (blocked, killed) lasts until the end of the trace,
 * which is then put a little after the last event so that it shows.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "pmon-tool.h"

/* What may come at one time, in this order. */
enum paje_prio { PRIO_EVENT, PRIO_DESTROY, PRIO_HOST_DESTROY };
#define PRIO_SHIFT	56

enum paje_kind {
	L_HOST_CREATE, L_TASK_CREATE, L_STATE, L_LINK_START, L_LINK_END,
	L_LOST, L_BREAK, L_PROBLEM, L_TASK_DESTROY, L_HOST_DESTROY
};

enum paje_value { V_MSG = 1, V_SPAWN };

/* A Problem event's kind (its line's a). */
enum paje_problem { P_DEADLOCK, P_KILLED, P_GAP, P_ENDED_IN, P_STILL_IN,
	P_RACE, P_UNRECEIVED, P_WAITS_ON_EXITED, P_UNPACK };

/* One line of the file, waiting for its turn. */
struct paje_line {
	int64_t		 t;
	uint64_t	 order;		/* prio << PRIO_SHIFT | serial */
	uint64_t	 link;		/* a link's key */
	uint32_t	 who;		/* task index, or host index */
	uint8_t		 kind;		/* enum paje_kind */
	uint8_t		 value;		/* enum paje_value */
	int32_t		 a, b;		/* the state's call; tag and bytes;
					   count; breakpoint; problem */
};

/* The heap moves keys; the lines stay in their slots. */
struct paje_key {
	int64_t		 t;
	uint64_t	 order;
	uint32_t	 slot;
};

/* A task whose container a pass of the horizon makes. */
struct paje_new {
	uint32_t	 tid;
	uint32_t	 index;
};

struct paje {
	struct paje_key	*heap;		/* the window: a 4-ary heap */
	struct paje_line *line;		/* by slot */
	uint32_t	*idle;		/* slots not in use */
	size_t		 n, size, nidle, used;
	uint64_t	 serial;	/* stream order of event lines */
	uint64_t	 links;
	uint8_t		*created;	/* by task index: its container is */
	int32_t		*open;		/* by task index: the call left open */
	struct paje_new	*batch;		/* by task index */
	uint8_t		*host_made;	/* by host index */
	size_t		 ntasks, nhosts;
	uint64_t	 since, every;	/* events between horizon checks */
	int		 started;	/* a line is out: t0 is set */
	int64_t		 t0;		/* the first line's time: 0 */
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
/* An event makes at most this many lines (a state, two links). */
#define PAJE_EVENT_LINES	8
/* Room for one line: a name is at most 1023 bytes (PMON_STR_MAX). */
#define PAJE_LINE	2048
/*
 * A call open at the end lasts until the end of the trace, which is
 * then a tenth of the trace's length after its last event, at least
 * PAJE_TAIL_MIN ns: a deadlock is the last thing a run does, and a
 * state of no width is not drawn.
 */
#define PAJE_TAIL_MIN	1000000
#define PAJE_TAIL_DIV	10

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
    "3 PROBLEM TASK \"Problem\"\n"
    "4 computing STATE \"computing\" \"0.2 0.7 0.2\"\n";

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

/* The colour of a call's state: blocked red, sends blue, receives cyan. */
static const char *
paje_color(int call)
{
	if (export_is_blocking(call))
		return "0.9 0.2 0.2";
	if (export_is_send(call))
		return "0.3 0.5 1.0";
	if (export_is_recv(call))
		return "0.3 0.8 0.9";
	if (call == PMON_CALL_HANDLER || call == PMON_CALL_SIGNAL)
		return "0.7 0.5 0.9";
	return "0.9 0.8 0.1";
}

/* A state value per call, named as the call ("pvm_recv"). */
static int
paje_values(struct export *x)
{
	const char *name;
	char *o;
	int c;

	for (c = PMON_CALL_NONE + 1; c < PMON_CALL_MAX; c++) {
		if (c == PMON_CALL_LOST || c == PMON_CALL_BREAK)
			continue;
		name = pmon_call_name(c);
		if ((o = export_reserve(x, 128)) == NULL)
			return -1;
		o = export_put_lit(o, "4 ");
		o = export_put_str(o, name);
		o = export_put_lit(o, " STATE \"");
		o = export_put_str(o, name);
		o = export_put_lit(o, "\" \"");
		o = export_put_str(o, paje_color(c));
		o = export_put_lit(o, "\"\n");
		export_commit(x, o);
	}
	return 0;
}

static int
paje_begin(struct export *x)
{
	struct paje *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return export_fail(x, "out of memory");
	p->every = PAJE_CHECK_MIN;
	export_set_data(x, p);
	if (export_write(x, paje_header, sizeof(paje_header) - 1) == -1 ||
	    export_write(x, paje_types, sizeof(paje_types) - 1) == -1)
		return -1;
	return paje_values(x);
}

/* Grows an array of n elements of size bytes to want, zeroed. */
static int
paje_resize(void *arrp, size_t n, size_t want, size_t size)
{
	void **arr = arrp;
	char *a;

	if ((a = reallocarray(*arr, want, size)) == NULL)
		return -1;
	memset(a + n * size, 0, (want - n) * size);
	*arr = a;
	return 0;
}

static int
paje_task(struct export *x, const struct export_task *t, int new_host)
{
	struct paje *p = export_data(x);
	size_t want = export_ntasks(x), hosts = export_nhosts(x);

	(void)t;
	(void)new_host;
	if (want > p->ntasks) {
		if (paje_resize(&p->created, p->ntasks, want, 1) == -1 ||
		    paje_resize(&p->open, p->ntasks, want,
		    sizeof(*p->open)) == -1 ||
		    paje_resize(&p->batch, p->ntasks, want,
		    sizeof(*p->batch)) == -1)
			return export_fail(x, "out of memory");
		p->ntasks = want;
	}
	if (hosts > p->nhosts) {
		if (paje_resize(&p->host_made, p->nhosts, hosts, 1) == -1)
			return export_fail(x, "out of memory");
		p->nhosts = hosts;
	}
	return 0;
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

/* The call the task is in after e, or 0 (computing). */
static int32_t
paje_state(const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;

	/* A message handler's end: back in the call it interrupted. */
	if (ev->call == PMON_CALL_HANDLER && ev->phase == PMON_PHASE_END &&
	    e->task->has_outer)
		return e->task->outer.call;
	if (ev->phase == PMON_PHASE_END)
		return 0;
	return ev->call;
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
	switch (l->value) {
	case V_MSG:
		p = export_put_lit(p, " \"tag ");
		p = trace_fmt_i64(p, l->a);
		p = export_put_lit(p, ", ");
		p = trace_fmt_i64(p, l->b);
		return export_put_lit(p, " B\"");
	default:
		return export_put_lit(p, " \"spawn\"");
	}
}

/* A Problem event's value, in words. */
static char *
paje_problem(char *p, const struct paje_line *l)
{
	char tid[16];

	switch (l->a) {
	case P_DEADLOCK:
		p = export_put_lit(p, " \"deadlock of ");
		p = trace_fmt_i64(p, l->b);
		return export_put_lit(p, " tasks\"");
	case P_KILLED:
		return export_put_lit(p, " \"killed (pmon kill)\"");
	case P_GAP:
		return export_put_lit(p, " \"events lost (tool queue full)\"");
	case P_RACE:
		return export_put_lit(p, " \"message race (wildcard receive)\"");
	case P_UNRECEIVED:
		p = export_put_lit(p, " \"exited with a message from ");
		p = export_put_str(p, export_tidstr(l->b, tid, sizeof(tid)));
		return export_put_lit(p, " unreceived\"");
	case P_WAITS_ON_EXITED:
		p = export_put_lit(p, " \"waits on ");
		p = export_put_str(p, export_tidstr(l->b, tid, sizeof(tid)));
		return export_put_lit(p, ", which exited\"");
	case P_UNPACK:
		return export_put_lit(p, " \"unpack does not match the pack\"");
	case P_ENDED_IN:
		p = export_put_lit(p, " \"ended in ");
		break;
	default:
		p = export_put_lit(p, " \"still in ");
		break;
	}
	p = export_put_str(p, pmon_call_name(l->b));
	return export_put_lit(p, "\"");
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

/* What follows the time: "STATE k3 pvm_recv", "MSG 0 k3 \"tag 1, 4 B\" l9". */
static char *
paje_rest(struct export *x, char *p, const struct paje_line *l)
{
	switch (l->kind) {
	case L_STATE:
		p = export_put_lit(p, " STATE k");
		p = trace_fmt_u64(p, l->who);
		*p++ = ' ';
		return export_put_str(p, l->a == 0 ? "computing" :
		    pmon_call_name(l->a));
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
	case L_PROBLEM:
		p = export_put_lit(p, " PROBLEM k");
		p = trace_fmt_u64(p, l->who);
		return paje_problem(p, l);
	default:
		return paje_rest_container(x, p, l);
	}
}

/*
 * Writes one line.  Times never go backwards in the file: a line that
 * comes too late for its time (the window was full) takes the time of
 * the last line out.  The first line out is time 0.
 */
static int
paje_put(struct export *x, struct paje *p, struct paje_line *l)
{
	static const char *const num[] = { "5", "5", "7", "8", "9", "10",
	    "10", "10", "6", "6" };
	char *o;

	if (!p->started) {
		p->started = 1;
		p->t0 = p->written_t = l->t;
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
	o = export_put_fixed(o, l->t - p->t0, 1000000000, 9);
	o = paje_rest(x, o, l);
	*o++ = '\n';
	export_commit(x, o);
	return 0;
}

/* A container's line, written at once. */
static int
paje_put_container(struct export *x, struct paje *p, int64_t t,
    uint8_t kind, unsigned who)
{
	struct paje_line l = { .t = t, .kind = kind, .who = who };

	return paje_put(x, p, &l);
}

/* Task k's container at t, and its host's if that has none yet. */
static int
paje_make(struct export *x, struct paje *p, unsigned k, int64_t t)
{
	unsigned h = export_task_at(x, k)->host->index;

	p->created[k] = 1;
	if (!p->host_made[h]) {
		p->host_made[h] = 1;
		if (paje_put_container(x, p, t, L_HOST_CREATE, h) == -1)
			return -1;
	}
	return paje_put_container(x, p, t, L_TASK_CREATE, k);
}

static int
paje_tid_cmp(const void *a, const void *b)
{
	const struct paje_new *m = a, *n = b;

	return m->tid != n->tid ? (m->tid < n->tid ? -1 : 1) : 0;
}

/*
 * Before the lines earlier than h go out: the containers of the tasks
 * that have their first among them, in tid order, at the first one's
 * time.
 */
static int
paje_make_batch(struct export *x, struct paje *p, int64_t h)
{
	const struct paje_line *l;
	size_t i, n = 0;

	for (i = 0; i < p->n; i++) {
		if (h != INT64_MAX && p->heap[i].t >= h)
			continue;
		l = &p->line[p->heap[i].slot];
		if (l->kind < L_STATE || l->kind > L_PROBLEM ||
		    p->created[l->who])
			continue;
		p->created[l->who] = 2;		/* in the batch */
		p->batch[n].tid = (uint32_t)export_task_at(x, l->who)->tid;
		p->batch[n++].index = l->who;
	}
	qsort(p->batch, n, sizeof(*p->batch), paje_tid_cmp);
	for (i = 0; i < n; i++)
		if (paje_make(x, p, p->batch[i].index, p->heap[0].t) == -1)
			return -1;
	return 0;
}

/* A line of the window, after its task's container. */
static int
paje_write(struct export *x, struct paje *p, struct paje_line *l)
{
	if (l->kind >= L_STATE && l->kind <= L_PROBLEM &&
	    p->created[l->who] != 1 && paje_make(x, p, l->who, l->t) == -1)
		return -1;
	return paje_put(x, p, l);
}

/* Writes every line earlier than h, or all with h = INT64_MAX. */
static int
paje_flush(struct export *x, struct paje *p, int64_t h)
{
	struct paje_line l;

	if (p->n == 0 || (h != INT64_MAX && p->heap[0].t >= h))
		return 0;
	if (paje_make_batch(x, p, h) == -1)
		return -1;
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

	if (e->spawn != NULL && paje_link(x, V_SPAWN, e->spawn, e) == -1)
		return -1;
	if (ev->flags & PMON_EV_LOST)
		return paje_add(x, e->t, L_LOST, k, 0, (int32_t)ev->bytes, 0);
	if (ev->call == PMON_CALL_BREAK)
		return paje_add(x, e->t, L_BREAK, k, 0, ev->inst, 0);
	if (e->send != NULL && paje_link(x, V_MSG, e->send, e) == -1)
		return -1;
	return paje_add(x, e->t, L_STATE, k, 0, paje_state(e), 0);
}

static int
paje_event(struct export *x, const struct export_event *e)
{
	struct paje *p = export_data(x);

	p->open[e->task->index] = 0;
	if (paje_lines(x, e) == -1)
		return -1;
	return paje_window(x, p);
}

/*
 * A call with no end: remembered until the task's next event, so that
 * what is still open at the end is marked there.
 */
static int
paje_unfinished(struct export *x, const struct export_task *t,
    const struct export_call *c, int64_t tm)
{
	struct paje *p = export_data(x);

	(void)tm;
	p->open[t->index] = c->call;
	return 0;
}

/* A Problem event on each task of a JSON array of tids that had events. */
static int
paje_problem_tasks(struct export *x, json_t *tids, int64_t t, int kind,
    int32_t b)
{
	const struct export_task *task;
	size_t i;
	json_t *v;

	json_array_foreach(tids, i, v) {
		task = export_task_of(x, (int32_t)json_integer_value(v));
		if (task == NULL || task->events == 0)
			continue;
		if (paje_add(x, t, L_PROBLEM, task->index, 0, kind, b) == -1)
			return -1;
	}
	return 0;
}

/* A deadlock is there since the last of its tasks blocked. */
static int
paje_deadlock(struct export *x, json_t *tids)
{
	const struct export_task *task;
	int64_t t = 0;
	size_t i;
	json_t *v;

	json_array_foreach(tids, i, v) {
		task = export_task_of(x, (int32_t)json_integer_value(v));
		if (task != NULL && task->events > 0 && task->last_t > t)
			t = task->last_t;
	}
	return paje_problem_tasks(x, tids, t, P_DEADLOCK,
	    (int32_t)json_array_size(tids));
}

/* A lost notice: every live task may have lost events here. */
static int
paje_gap(struct export *x)
{
	const struct export_task *t;
	size_t i;

	for (i = 0; i < export_ntasks(x); i++) {
		t = export_task_at(x, i);
		if (t->events > 0 && !t->gone &&
		    paje_add(x, export_last_t(x), L_PROBLEM, t->index, 0,
		    P_GAP, 0) == -1)
			return -1;
	}
	return 0;
}

/*
 * Any other problem: an event on the task it concerns (a race: the
 * receiver; a message left unreceived: its receiver, naming the
 * sender), at the stream's time.
 */
static int
paje_other_problem(struct export *x, json_t *j, const char *kind)
{
	const struct export_task *task;
	json_int_t tid = 0, peer = 0;
	int what;

	if (strcmp(kind, "race") == 0)
		what = P_RACE;
	else if (strcmp(kind, "unreceived") == 0) {
		what = P_UNRECEIVED;
		json_unpack(j, "{s?I}", "from", &peer);
	} else if (strcmp(kind, "waits_on_exited") == 0) {
		what = P_WAITS_ON_EXITED;
		json_unpack(j, "{s?I}", "exited", &peer);
	} else if (strcmp(kind, "unpack_mismatch") == 0)
		what = P_UNPACK;
	else
		return 0;
	if (json_unpack(j, "{s:I}", "tid", &tid) != 0 ||
	    (task = export_task_of(x, (int32_t)tid)) == NULL ||
	    task->events == 0)
		return 0;
	return paje_add(x, export_last_t(x), L_PROBLEM, task->index, 0, what,
	    (int32_t)peer);
}

/*
 * What the stream says besides events: deadlocks, kills and gaps, at
 * the stream's time when they come (they carry none).
 */
static int
paje_json(struct export *x, const char *what, const char *json, size_t len)
{
	const char *kind = NULL;
	json_t *j, *tids = NULL;
	int rv = 0;

	if ((j = json_loadb(json, len, 0, NULL)) == NULL)
		return 0;
	if (strcmp(what, "problem") == 0 &&
	    json_unpack(j, "{s:s, s:o}", "kind", &kind, "tasks", &tids) == 0 &&
	    strcmp(kind, "deadlock") == 0 && json_is_array(tids))
		rv = paje_deadlock(x, tids);
	else if (strcmp(what, "problem") == 0 &&
	    json_unpack(j, "{s:s}", "kind", &kind) == 0)
		rv = paje_other_problem(x, j, kind);
	else if (strcmp(what, "notice") == 0 &&
	    json_unpack(j, "{s:s}", "notice", &kind) == 0) {
		if (strcmp(kind, "killed") == 0 &&
		    json_unpack(j, "{s:o}", "tasks", &tids) == 0 &&
		    json_is_array(tids))
			rv = paje_problem_tasks(x, tids, export_last_t(x),
			    P_KILLED, 0);
		else if (strcmp(kind, "lost") == 0)
			rv = paje_gap(x);
	}
	json_decref(j);
	return rv;
}

/*
 * The end of the trace: its last event, or after it when calls are
 * still open (pvm_exit's aside: it has no end): each is marked there.
 */
static int
paje_tail(struct export *x, struct paje *p, int64_t *end)
{
	const struct export_task *t;
	int64_t tail;
	size_t i;

	*end = export_last_t(x);
	for (i = 0; i < export_ntasks(x); i++)
		if (p->created[i] && p->open[i] != 0 &&
		    p->open[i] != PMON_CALL_exit)
			break;
	if (i == export_ntasks(x))
		return 0;
	tail = (*end - p->t0) / PAJE_TAIL_DIV;
	*end += tail > PAJE_TAIL_MIN ? tail : PAJE_TAIL_MIN;
	for (; i < export_ntasks(x); i++) {
		t = export_task_at(x, i);
		if (!p->created[i] || p->open[i] == 0 ||
		    p->open[i] == PMON_CALL_exit)
			continue;
		if (paje_add(x, *end, L_PROBLEM, t->index, 0, t->gone ?
		    P_ENDED_IN : P_STILL_IN, p->open[i]) == -1)
			return -1;
	}
	return 0;
}

static int
paje_close(struct export *x, struct paje *p)
{
	int64_t end;
	size_t i;

	if (paje_flush(x, p, INT64_MAX) == -1 || paje_tail(x, p, &end) == -1 ||
	    paje_flush(x, p, INT64_MAX) == -1)
		return -1;
	for (i = 0; i < export_ntasks(x); i++)
		if (p->created[i] && paje_put_container(x, p, end,
		    L_TASK_DESTROY, (unsigned)i) == -1)
			return -1;
	for (i = 0; i < export_nhosts(x); i++)
		if (p->host_made[i] && paje_put_container(x, p, end,
		    L_HOST_DESTROY, (unsigned)i) == -1)
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
	free(p->open);
	free(p->batch);
	free(p->host_made);
	free(p);
	export_set_data(x, NULL);
	return rv;
}

const struct export_format export_paje = {
	.name = "paje", .begin = paje_begin, .task = paje_task,
	.event = paje_event, .unfinished = paje_unfinished, .end = paje_end,
	.json = paje_json
};
