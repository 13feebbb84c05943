/*
 * Chrome trace-event JSON (Chromium DevTools' Performance panel,
 * Perfetto): a host is a process, a task a thread, a call a complete
 * event ("X") from its begin to its end, a message a flow from the
 * sending call to a marker where it was received, a spawn a flow from
 * pvm_spawn to a marker at the child's first event; lost records, stops
 * at breakpoints, kills and problems (deadlocks, message races, messages
 * left unreceived, ...) are instant events named in words.
 * Times are corrected times (tc) in microseconds with nanosecond
 * decimals, from the start of the trace.
 *
 * A flow event binds as DevTools binds it (its FlowsHandler): to the
 * first event that has its ts, pid, tid and cat, and its "s" and "f"
 * belong together by cat, name and id.  So the "s" has the ts and cat
 * of the sending call's slice (cat "msg" for the calls that send,
 * "spawn" for pvm_spawn), and the "f" those of an instant marker that
 * pmon writes at the receiving point (1 ns before a receive's end, at a
 * handler's begin, at a child's first event).  Not the receive's slice:
 * a blocking receive begins before the send, and DevTools (Perfetto
 * too) orders a flow's events by their start, so the arrow would point
 * from the receive to the send.  Corrected times put a receive's end at
 * least lmin (1 us) after its send, so the marker is always later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "pmon-tool.h"

struct chrome {
	int		 first;		/* no event written yet */
	uint64_t	 flows;		/* flow ids */
	int64_t		*gone_t;	/* by task index: when it ended */
	size_t		 ngone;
};

/* Room for one element but its variable lists. */
#define CHROME_LINE	512

/* Starts one element of traceEvents: NULL after a write error. */
static char *
chrome_next(struct export *x)
{
	struct chrome *c = export_data(x);
	char *p;

	if ((p = export_reserve(x, CHROME_LINE)) == NULL)
		return NULL;
	if (!c->first)
		*p++ = ',';
	*p++ = '\n';
	c->first = 0;
	return p;
}

/*
 * A JSON string of a name we did not choose (host, program): escaped by
 * jansson; bytes that are not UTF-8 become '?'.  Once per task.
 */
static int
chrome_str(struct export *x, const char *s)
{
	json_t *j;
	char *c, *p, *dump = NULL;
	int rv;

	if ((j = json_string(s)) == NULL && (c = strdup(s)) != NULL) {
		for (p = c; *p != '\0'; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		j = json_string(c);
		free(c);
	}
	if (j != NULL)
		dump = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	if (dump == NULL)
		return export_write(x, "\"?\"", 3);
	rv = export_write(x, dump, strlen(dump));
	free(dump);
	return rv;
}

static int
chrome_begin(struct export *x)
{
	static const char head[] = "{\"displayTimeUnit\":\"ns\","
	    "\"otherData\":{\"source\":\"pmon export\",\"time\":\"corrected "
	    "(tc), from the start of the trace\"},\"traceEvents\":[";
	struct chrome *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return export_fail(x, "out of memory");
	c->first = 1;
	export_set_data(x, c);
	return export_write(x, head, sizeof(head) - 1);
}

/* A metadata element: name, pid, tid (0: none), then the args' start. */
static int
chrome_meta(struct export *x, const char *name, unsigned pid, int32_t tid,
    const char *arg)
{
	char *p;

	if ((p = chrome_next(x)) == NULL)
		return -1;
	p = export_put_lit(p, "{\"ph\":\"M\",\"name\":\"");
	p = export_put_str(p, name);
	p = export_put_lit(p, "\",\"pid\":");
	p = trace_fmt_u64(p, pid);
	if (tid != 0) {
		p = export_put_lit(p, ",\"tid\":");
		p = trace_fmt_i64(p, tid);
	}
	p = export_put_lit(p, ",\"args\":{\"");
	p = export_put_str(p, arg);
	p = export_put_lit(p, "\":");
	export_commit(x, p);
	return 0;
}

/* A name's element and its sort index's. */
static int
chrome_names(struct export *x, const char *what, unsigned pid, int32_t tid,
    const char *name, unsigned sort)
{
	char key[32], *p;

	if (chrome_meta(x, what, pid, tid, "name") == -1 ||
	    chrome_str(x, name) == -1 || export_write(x, "}}", 2) == -1)
		return -1;
	snprintf(key, sizeof(key), "%s_sort_index",
	    strcmp(what, "process_name") == 0 ? "process" : "thread");
	if (chrome_meta(x, key, pid, tid, "sort_index") == -1 ||
	    (p = export_reserve(x, 32)) == NULL)
		return -1;
	p = trace_fmt_u64(p, sort);
	export_commit(x, export_put_lit(p, "}}"));
	return 0;
}

/* Hosts are processes from 1: DevTools takes pid 0 for none. */
static unsigned
chrome_pid(const struct export_task *t)
{
	return t->host->index + 1;
}

/* Room to note when each task ended. */
static int
chrome_grow(struct export *x, size_t n)
{
	struct chrome *c = export_data(x);
	int64_t *g;
	size_t size = c->ngone;

	if (n <= size)
		return 0;
	while (size < n)
		size = size == 0 ? 64 : size * 2;
	if ((g = reallocarray(c->gone_t, size, sizeof(*g))) == NULL)
		return export_fail(x, "out of memory");
	memset(g + c->ngone, 0, (size - c->ngone) * sizeof(*g));
	c->gone_t = g;
	c->ngone = size;
	return 0;
}

static int
chrome_task(struct export *x, const struct export_task *t, int new_host)
{
	char b[16], name[300];

	if (chrome_grow(x, (size_t)t->index + 1) == -1)
		return -1;
	if (new_host && chrome_names(x, "process_name", chrome_pid(t), 0,
	    t->host->name, t->host->index) == -1)
		return -1;
	snprintf(name, sizeof(name), "%s %s", t->program,
	    export_tidstr(t->tid, b, sizeof(b)));
	return chrome_names(x, "thread_name", chrome_pid(t), t->tid, name,
	    t->index);
}

/*
 * A call's category: a flow binds to the slice whose cat it has, so the
 * calls that send get their flows' ("msg", "spawn").
 */
static const char *
chrome_cat(int call)
{
	if (export_is_send(call))
		return "msg";
	if (call == PMON_CALL_spawn)
		return "spawn";
	return export_is_blocking(call) ? "pvm,blocking" : "pvm";
}

/* The fields of a slice or an instant: where and when. */
static char *
chrome_head(struct export *x, const struct export_task *t, const char *ph,
    const char *name, const char *cat, int64_t ts)
{
	char *p;

	if ((p = chrome_next(x)) == NULL)
		return NULL;
	p = export_put_lit(p, "{\"ph\":\"");
	p = export_put_str(p, ph);
	p = export_put_lit(p, "\",\"name\":\"");
	p = export_put_str(p, name);
	p = export_put_lit(p, "\",\"cat\":\"");
	p = export_put_str(p, cat);
	p = export_put_lit(p, "\",\"ts\":");
	p = export_put_fixed(p, ts, 1000, 3);
	p = export_put_lit(p, ",\"pid\":");
	p = trace_fmt_u64(p, chrome_pid(t));
	p = export_put_lit(p, ",\"tid\":");
	return trace_fmt_i64(p, t->tid);
}

/* A multicast's destinations, which may be many: one at a time. */
static char *
chrome_dsts(struct export *x, char *p, const struct pmon_event *ev)
{
	unsigned i;

	p = export_put_lit(p, ",\"dst\":[");
	for (i = 0; i < ev->npeers; i++) {
		export_commit(x, p);
		if ((p = export_reserve(x, CHROME_LINE)) == NULL)
			return NULL;
		if (i > 0)
			*p++ = ',';
		p = trace_fmt_i64(p, ev->peers[i]);
	}
	*p++ = ']';
	return p;
}

static char *
chrome_msg_args(struct export *x, char *p, const struct pmon_event *ev)
{
	if (export_is_send(ev->call)) {
		if (ev->call == PMON_CALL_mcast ||
		    ev->call == PMON_CALL_bcast) {
			if ((p = chrome_dsts(x, p, ev)) == NULL)
				return NULL;
		} else {
			p = export_put_lit(p, ",\"dst\":");
			p = trace_fmt_i64(p, ev->peer);
		}
	} else if (export_is_recv(ev->call)) {
		p = export_put_lit(p, ",\"src\":");
		p = trace_fmt_i64(p, ev->peer);
	} else
		return p;
	p = export_put_lit(p, ",\"tag\":");
	p = trace_fmt_i64(p, ev->tag);
	p = export_put_lit(p, ",\"ctx\":");
	p = trace_fmt_i64(p, ev->ctx);
	p = export_put_lit(p, ",\"bytes\":");
	p = trace_fmt_i64(p, ev->bytes);
	if (ev->flags & PMON_EV_MATCHED) {
		p = export_put_lit(p, ",\"match\":");
		p = trace_fmt_id(p, ev->match_tid, ev->match_seq);
	}
	return p;
}

/*
 * Where a message's or a spawn's flow starts: the begin of the call that
 * sent it, whose slice the "s" binds to.  A pvm_bcast's message leaves
 * at its end, which noted its begin (chrome_event).
 */
static int64_t
chrome_from(const struct export_send *s)
{
	if (s->at_end && s->data != NULL)
		return *(const int64_t *)s->data;
	return s->t;
}

/* One flow event: "s" or "f", named and categorised as its flow. */
static int
chrome_flow_event(struct export *x, const struct export_task *t,
    const char *ph, const char *cat, int64_t ts, uint64_t id)
{
	char *p;

	if ((p = chrome_head(x, t, ph, cat, cat, ts)) == NULL)
		return -1;
	if (*ph == 'f')
		p = export_put_lit(p, ",\"bp\":\"e\"");
	p = export_put_lit(p, ",\"id\":");
	p = trace_fmt_u64(p, id);
	export_commit(x, export_put_lit(p, "}"));
	return 0;
}

/*
 * A message from the event that sent it, or a spawn to the child's first
 * event: the "s" at the sending call's begin, then in the receiving task
 * a marker at `at` and the "f" on it (the marker first: Perfetto binds
 * an "f" with "bp":"e" to the slice open where it is, the marker).
 */
static int
chrome_flow(struct export *x, const struct export_send *s,
    const struct export_task *to, int64_t at)
{
	struct chrome *c = export_data(x);
	const char *cat = s->spawn ? "spawn" : "msg";
	int64_t from = chrome_from(s);
	char name[64], b[16], *p;

	if (at <= from)
		at = from + 1;		/* DevTools keys a flow by time */
	c->flows++;
	if (chrome_flow_event(x, s->task, "s", cat, from, c->flows) == -1)
		return -1;
	snprintf(name, sizeof(name), "%s %s", s->spawn ? "spawned by" :
	    "message from", export_tidstr(s->tid, b, sizeof(b)));
	if ((p = chrome_head(x, to, "i", name, cat, at)) == NULL)
		return -1;
	p = export_put_lit(p, ",\"s\":\"t\",\"args\":{\"from\":");
	p = trace_fmt_id(p, s->tid, s->seq);
	export_commit(x, export_put_lit(p, "}}"));
	return chrome_flow_event(x, to, "f", cat, at, c->flows);
}

/* The end of a call: its complete event, from the begin. */
static int
chrome_slice(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	const char *cat = chrome_cat(ev->call);
	char *p;

	if (e->begin == NULL) {
		if ((p = chrome_head(x, e->task, "i", ev->call_name, cat,
		    e->t)) == NULL)
			return -1;
		p = export_put_lit(p, ",\"s\":\"t\",\"args\":{\"end\":");
		p = trace_fmt_id(p, ev->tid, ev->seq);
		p = export_put_lit(p, ",\"begin_lost\":true");
	} else {
		if ((p = chrome_head(x, e->task, "X", ev->call_name, cat,
		    e->begin->t)) == NULL)
			return -1;
		p = export_put_lit(p, ",\"dur\":");
		p = export_put_fixed(p, e->t - e->begin->t, 1000, 3);
		p = export_put_lit(p, ",\"args\":{\"begin\":");
		p = trace_fmt_id(p, ev->tid, e->begin->seq);
		p = export_put_lit(p, ",\"end\":");
		p = trace_fmt_id(p, ev->tid, ev->seq);
	}
	p = export_put_lit(p, ",\"rc\":");
	p = trace_fmt_i64(p, ev->rc);
	if ((p = chrome_msg_args(x, p, ev)) == NULL)
		return -1;
	export_commit(x, export_put_lit(p, "}}"));
	return 0;
}

/* An instant of a task named in words, with args still open. */
static char *
chrome_mark(struct export *x, const struct export_task *t, const char *name,
    const char *cat, int64_t ts)
{
	char *p;

	if ((p = chrome_head(x, t, "i", name, cat, ts)) == NULL)
		return NULL;
	return export_put_lit(p, ",\"s\":\"t\",\"args\":{");
}

/* A marker: lost records, or a stop at a breakpoint. */
static int
chrome_instant(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	char name[64], *p;

	if (ev->flags & PMON_EV_LOST) {
		snprintf(name, sizeof(name), "lost %u events",
		    (unsigned)(uint32_t)ev->bytes);
		if ((p = chrome_mark(x, e->task, name, "lost", e->t)) == NULL)
			return -1;
		p = export_put_lit(p, "\"count\":");
		p = trace_fmt_u64(p, (uint32_t)ev->bytes);
	} else {
		snprintf(name, sizeof(name), "stopped at breakpoint %d %s %s",
		    (int)ev->inst, ev->phase == PMON_PHASE_BEGIN ? "before" :
		    "after", pmon_call_name(ev->rc));
		if ((p = chrome_mark(x, e->task, name, "break", e->t)) == NULL)
			return -1;
		p = export_put_lit(p, "\"id\":");
		p = trace_fmt_i64(p, ev->inst);
		p = export_put_lit(p, ",\"at\":\"");
		p = export_put_str(p, pmon_call_name(ev->rc));
		p = export_put_lit(p, "\",\"before\":");
		if (ev->phase == PMON_PHASE_BEGIN)
			p = export_put_lit(p, "true");
		else
			p = export_put_lit(p, "false");
	}
	export_commit(x, export_put_lit(p, "}}"));
	return 0;
}

/* A pvm_kill that worked: the victim's thread says who killed it. */
static int
chrome_killed(struct export *x, const struct export_event *e)
{
	const struct export_task *v = export_task_of(x, e->ev->peer);
	char name[64], b[16], *p;

	if (v == NULL)
		return 0;
	snprintf(name, sizeof(name), "killed by %s (pvm_kill)",
	    export_tidstr(e->ev->tid, b, sizeof(b)));
	if ((p = chrome_mark(x, v, name, "kill", e->t)) == NULL)
		return -1;
	p = export_put_lit(p, "\"by\":");
	p = trace_fmt_id(p, e->ev->tid, e->ev->seq);
	export_commit(x, export_put_lit(p, "}}"));
	return 0;
}

/* A pvm_bcast's end keeps its begin: its flows start there. */
static int
chrome_note_begin(struct export *x, const struct export_event *e)
{
	int64_t *b;

	if (e->self == NULL || !e->self->at_end || e->self->data != NULL)
		return 0;
	if ((b = malloc(sizeof(*b))) == NULL)
		return export_fail(x, "out of memory");
	*b = e->begin != NULL ? e->begin->t : e->t;
	e->self->data = b;
	return 0;
}

/* Where a receive's marker goes: 1 ns before its end, inside it. */
static int64_t
chrome_recv_at(const struct export_event *e)
{
	int64_t at = e->t - 1;

	if (e->begin == NULL || at < e->begin->t)
		return e->t;
	return at;
}

static int
chrome_event(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;

	if (e->spawn != NULL && chrome_flow(x, e->spawn, e->task, e->t) == -1)
		return -1;
	if ((ev->flags & PMON_EV_LOST) || ev->call == PMON_CALL_BREAK)
		return chrome_instant(x, e);
	/* A handler's begin takes its message (doc/events.md). */
	if (ev->phase == PMON_PHASE_BEGIN)
		return e->send != NULL ?
		    chrome_flow(x, e->send, e->task, e->t) : 0;
	if (chrome_note_begin(x, e) == -1 || chrome_slice(x, e) == -1)
		return -1;
	if (ev->call == PMON_CALL_kill && ev->rc >= 0 &&
	    chrome_killed(x, e) == -1)
		return -1;
	if (e->send != NULL)
		return chrome_flow(x, e->send, e->task, chrome_recv_at(e));
	return 0;
}

/*
 * A call that got no end.  At the end of the export, one still open
 * lasts until the end of the trace (a deadlock: blocked for good), or
 * until its task was known to have ended (killed); pvm_exit never
 * returns and ends where it began.  Before, another event of its task
 * came first (its end was lost): it lasts until that event, tm.
 */
static int
chrome_unfinished(struct export *x, const struct export_task *t,
    const struct export_call *call, int64_t tm)
{
	struct chrome *c = export_data(x);
	char *p;

	if (export_finishing(x) && call->call != PMON_CALL_exit) {
		if (!t->gone)
			tm = export_last_t(x);
		else if (t->index < c->ngone && c->gone_t[t->index] > tm)
			tm = c->gone_t[t->index];
	}
	if ((p = chrome_head(x, t, "X", call->call_name, chrome_cat(call->call),
	    call->t)) == NULL)
		return -1;
	p = export_put_lit(p, ",\"dur\":");
	p = export_put_fixed(p, tm - call->t, 1000, 3);
	p = export_put_lit(p, ",\"args\":{\"begin\":");
	p = trace_fmt_id(p, t->tid, call->seq);
	export_commit(x, export_put_lit(p, ",\"unfinished\":true}}"));
	return 0;
}

/* The task ended: the point of the stream where that was known. */
static int
chrome_gone(struct export *x, const struct export_task *t)
{
	struct chrome *c = export_data(x);

	if (t->index < c->ngone)
		c->gone_t[t->index] = export_last_t(x);
	return 0;
}

/* The time of a notice or a problem for task t: where the stream is. */
static int64_t
chrome_now(struct export *x, const struct export_task *t)
{
	int64_t now = export_last_t(x);

	return now > t->last_t ? now : t->last_t;
}

/* A call's name from the coordinator's JSON: pvm_ and letters only. */
static const char *
chrome_callname(const char *s)
{
	size_t n;

	if (s == NULL || strncmp(s, "pvm_", 4) != 0 ||
	    (n = strspn(s, "abcdefghijklmnopqrstuvwxyz_")) != strlen(s) ||
	    n > 24)
		return "a PVM call";
	return s;
}

/* One deadlocked task's instant: what it waits for, in words. */
static int
chrome_deadlock_wait(struct export *x, const json_t *wait, size_t ntasks)
{
	const struct export_task *t;
	json_int_t tid = 0, from = -1, tag = -1;
	const char *in = NULL;
	char name[160], b[16], *p;

	if (json_unpack((json_t *)wait, "{s:I,s?s,s?I,s?I}", "tid", &tid,
	    "in", &in, "from", &from, "tag", &tag) != 0 ||
	    (t = export_task_of(x, (int32_t)tid)) == NULL)
		return 0;	/* not one of ours: nothing written */
	in = chrome_callname(in);
	if (from > 0)
		snprintf(name, sizeof(name), "deadlock of %zu tasks: waits in "
		    "%s for %s, tag %lld", ntasks, in, export_tidstr(
		    (int32_t)from, b, sizeof(b)), (long long)tag);
	else
		snprintf(name, sizeof(name), "deadlock of %zu tasks: waits in "
		    "%s", ntasks, in);
	if ((p = chrome_mark(x, t, name, "problem", chrome_now(x, t))) == NULL)
		return -1;
	export_commit(x, export_put_lit(p, "\"problem\":"));
	return 1;	/* the caller writes the problem and the end */
}

/* A deadlock: an instant in each of its tasks, with the problem. */
static int
chrome_deadlock(struct export *x, json_t *j)
{
	json_t *waits, *tasks, *w;
	size_t i;
	char *dump;
	int rv = 0;

	waits = json_object_get(j, "waits");
	tasks = json_object_get(j, "tasks");
	if (!json_is_array(waits) || !json_is_array(tasks) ||
	    (dump = json_dumps(j, JSON_COMPACT)) == NULL)
		return 0;
	json_array_foreach(waits, i, w) {
		if ((rv = chrome_deadlock_wait(x, w,
		    json_array_size(tasks))) == 1 &&
		    (export_write(x, dump, strlen(dump)) == -1 ||
		    export_write(x, "}}", 2) == -1))
			rv = -1;
		if (rv == -1)
			break;
	}
	free(dump);
	return rv;
}

/* An event id "TID:SEQ" as pmon writes it in words: t40004:33. */
static const char *
chrome_idtext(const char *id, char *buf, size_t size)
{
	char tid[16];
	long long t, q;

	if (id == NULL || sscanf(id, "%lld:%lld", &t, &q) != 2)
		return "a send";
	snprintf(buf, size, "%s:%lld", export_tidstr((int32_t)t, tid,
	    sizeof(tid)), q);
	return buf;
}

/*
 * Any other problem: an instant in its task's thread, named in words as
 * pmon problems writes it, with the problem itself in args.
 */
static int
chrome_problem(struct export *x, json_t *j, const char *kind)
{
	const struct export_task *t;
	json_int_t tid = 0, peer = -1, tag = -1, bytes = -1;
	const char *in = NULL, *what = NULL, *s1 = NULL, *s2 = NULL;
	char name[200], b[32], b2[32], *p, *dump;

	if (json_unpack(j, "{s:I}", "tid", &tid) != 0 ||
	    (t = export_task_of(x, (int32_t)tid)) == NULL)
		return 0;
	if (strcmp(kind, "race") == 0) {
		json_unpack(j, "{s?[ss]}", "sends", &s1, &s2);
		snprintf(name, sizeof(name), "message race: a wildcard "
		    "receive got the message of %s; that of %s could have "
		    "come first", chrome_idtext(s1, b, sizeof(b)),
		    chrome_idtext(s2, b2, sizeof(b2)));
	} else if (strcmp(kind, "unreceived") == 0) {
		json_unpack(j, "{s?I,s?I,s?I}", "from", &peer, "tag", &tag,
		    "bytes", &bytes);
		snprintf(name, sizeof(name), "exited with a message from %s "
		    "unreceived: tag %lld, %lld B", export_tidstr(
		    (int32_t)peer, b, sizeof(b)), (long long)tag,
		    (long long)bytes);
	} else if (strcmp(kind, "waits_on_exited") == 0) {
		json_unpack(j, "{s?s,s?I}", "in", &in, "exited", &peer);
		snprintf(name, sizeof(name), "waits in %s on %s, which exited",
		    chrome_callname(in), export_tidstr((int32_t)peer, b,
		    sizeof(b)));
	} else if (strcmp(kind, "unpack_mismatch") == 0) {
		json_unpack(j, "{s?s}", "unpacked", &what);
		snprintf(name, sizeof(name), "%s does not match what was "
		    "packed", chrome_callname(what));
	} else
		snprintf(name, sizeof(name), "problem: %.40s", kind);
	if ((dump = json_dumps(j, JSON_COMPACT)) == NULL)
		return 0;
	if ((p = chrome_mark(x, t, name, "problem", chrome_now(x, t))) ==
	    NULL) {
		free(dump);
		return -1;
	}
	export_commit(x, export_put_lit(p, "\"problem\":"));
	if (export_write(x, dump, strlen(dump)) == -1 ||
	    export_write(x, "}}", 2) == -1) {
		free(dump);
		return -1;
	}
	free(dump);
	return 0;
}

/* pmon kill (a tool's): each task's thread says so. */
static int
chrome_tool_kill(struct export *x, json_t *j)
{
	const struct export_task *t;
	json_t *tasks, *v;
	size_t i;
	char *p;

	if (!json_is_array(tasks = json_object_get(j, "tasks")))
		return 0;
	json_array_foreach(tasks, i, v) {
		if (!json_is_integer(v) || (t = export_task_of(x,
		    (int32_t)json_integer_value(v))) == NULL)
			continue;
		if ((p = chrome_mark(x, t, "killed by pmon kill", "kill",
		    chrome_now(x, t))) == NULL)
			return -1;
		export_commit(x, export_put_lit(p, "}}"));
	}
	return 0;
}

/*
 * The export's own queue was full and the coordinator dropped events
 * for it: a global instant, as the gap is in every task.
 */
static int
chrome_gap(struct export *x, json_t *j)
{
	json_int_t n = 0;
	char name[96], *p;

	json_unpack(j, "{s?I}", "events", &n);
	snprintf(name, sizeof(name), "lost %lld events of every task "
	    "(the export's queue was full)", (long long)n);
	if ((p = chrome_next(x)) == NULL)
		return -1;
	p = export_put_lit(p, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"");
	p = export_put_str(p, name);
	p = export_put_lit(p, "\",\"cat\":\"lost\",\"ts\":");
	p = export_put_fixed(p, export_last_t(x), 1000, 3);
	p = export_put_lit(p, ",\"pid\":1,\"tid\":0,\"args\":{\"count\":");
	p = trace_fmt_i64(p, n);
	export_commit(x, export_put_lit(p, "}}"));
	return 0;
}

/* A problem or a notice of the stream (export_format's json). */
static int
chrome_json(struct export *x, const char *what, const char *json,
    size_t len)
{
	const char *kind = NULL;
	json_t *j;
	int rv = 0;

	if ((j = json_loadb(json, len, 0, NULL)) == NULL)
		return 0;
	if (strcmp(what, "problem") == 0) {
		if (json_unpack(j, "{s:s}", "kind", &kind) != 0)
			rv = 0;
		else if (strcmp(kind, "deadlock") == 0)
			rv = chrome_deadlock(x, j);
		else
			rv = chrome_problem(x, j, kind);
	} else if (json_unpack(j, "{s:s}", "notice", &kind) == 0) {
		if (strcmp(kind, "killed") == 0)
			rv = chrome_tool_kill(x, j);
		else if (strcmp(kind, "lost") == 0)
			rv = chrome_gap(x, j);
	}
	json_decref(j);
	return rv;
}

static int
chrome_end(struct export *x)
{
	struct chrome *c = export_data(x);
	int rv;

	rv = export_write(x, "\n]}\n", 4);
	free(c->gone_t);
	free(c);
	export_set_data(x, NULL);
	return rv;
}

const struct export_format export_chrome = {
	.name = "chrome", .begin = chrome_begin, .task = chrome_task,
	.event = chrome_event, .unfinished = chrome_unfinished,
	.gone = chrome_gone, .end = chrome_end, .json = chrome_json
};
