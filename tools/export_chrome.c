/*
 * Chrome trace-event JSON (Perfetto, chrome://tracing): a host is a
 * process, a task a thread, a call a complete event ("X") from its begin
 * to its end, a message a flow ("s" at the send, "f" at the receive's
 * end), a spawn a flow to the child's first event, lost records an
 * instant event, and so is a stop at a breakpoint.  Times are corrected
 * times (tc) in microseconds with nanosecond decimals, from the start of
 * the trace.
 *
 * Flow events bind to the slice that encloses them: the "s" goes 1 ns
 * after the send's begin (1 ns before a pvm_bcast's end, where its
 * message leaves) and the "f" ("bp":"e") 1 ns before the receive's end,
 * inside both slices.  Corrected times put a receive's end at least
 * lmin (1 us) after its send, so an arrow never points backwards.
 * Every element is written as its event comes; nothing is kept but the
 * flow counter.
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

static int
chrome_task(struct export *x, const struct export_task *t, int new_host)
{
	char b[16], name[300];

	if (new_host && chrome_names(x, "process_name", t->host->index, 0,
	    t->host->name, t->host->index) == -1)
		return -1;
	snprintf(name, sizeof(name), "%s %s", t->program,
	    export_tidstr(t->tid, b, sizeof(b)));
	return chrome_names(x, "thread_name", t->host->index, t->tid, name,
	    t->index);
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
	p = trace_fmt_u64(p, t->host->index);
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
 * A message from the event that sent it, or a spawn to the child's first
 * event: "s" inside the first slice (after a begin, before a pvm_bcast's
 * end), "f" inside the second, never before the "s".
 */
static int
chrome_flow(struct export *x, const char *cat, const struct export_send *s,
    const struct export_task *to, int64_t to_t, int at_end)
{
	struct chrome *c = export_data(x);
	int64_t from = s->at_end ? s->t - 1 : s->t + 1;
	int64_t until = at_end ? to_t - 1 : to_t + 1;
	char *p;

	if (until < from)
		until = from;
	c->flows++;
	if ((p = chrome_head(x, s->task, "s", cat, cat, from)) == NULL)
		return -1;
	p = export_put_lit(p, ",\"id\":");
	p = trace_fmt_u64(p, c->flows);
	export_commit(x, export_put_lit(p, "}"));
	if ((p = chrome_head(x, to, "f", cat, cat, until)) == NULL)
		return -1;
	p = export_put_lit(p, ",\"bp\":\"e\",\"id\":");
	p = trace_fmt_u64(p, c->flows);
	export_commit(x, export_put_lit(p, "}"));
	return 0;
}

/* The end of a call: its complete event, from the begin. */
static int
chrome_slice(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	const char *cat = export_is_blocking(ev->call) ? "pvm,blocking" :
	    "pvm";
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

/* A marker: lost records, or a stop at a breakpoint. */
static int
chrome_instant(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	char *p;

	if (ev->flags & PMON_EV_LOST) {
		if ((p = chrome_head(x, e->task, "i", "lost", "lost",
		    e->t)) == NULL)
			return -1;
		p = export_put_lit(p, ",\"s\":\"t\",\"args\":{\"count\":");
		p = trace_fmt_u64(p, (uint32_t)ev->bytes);
	} else {
		if ((p = chrome_head(x, e->task, "i", "breakpoint", "break",
		    e->t)) == NULL)
			return -1;
		p = export_put_lit(p, ",\"s\":\"t\",\"args\":{\"id\":");
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

static int
chrome_event(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;

	if (e->spawn != NULL &&
	    chrome_flow(x, "spawn", e->spawn, e->task, e->t, 0) == -1)
		return -1;
	if ((ev->flags & PMON_EV_LOST) || ev->call == PMON_CALL_BREAK)
		return chrome_instant(x, e);
	/* A handler's begin takes its message (doc/events.md). */
	if (ev->phase == PMON_PHASE_BEGIN)
		return e->send != NULL ?
		    chrome_flow(x, "msg", e->send, e->task, e->t, 1) : 0;
	if (chrome_slice(x, e) == -1)
		return -1;
	if (e->send != NULL)
		return chrome_flow(x, "msg", e->send, e->task, e->t, 1);
	return 0;
}

static int
chrome_unfinished(struct export *x, const struct export_task *t,
    const struct export_call *call, int64_t tm)
{
	char *p;

	if ((p = chrome_head(x, t, "X", call->call_name, "pvm",
	    call->t)) == NULL)
		return -1;
	p = export_put_lit(p, ",\"dur\":");
	p = export_put_fixed(p, tm - call->t, 1000, 3);
	p = export_put_lit(p, ",\"args\":{\"begin\":");
	p = trace_fmt_id(p, t->tid, call->seq);
	export_commit(x, export_put_lit(p, ",\"unfinished\":true}}"));
	return 0;
}

static int
chrome_end(struct export *x)
{
	int rv;

	rv = export_write(x, "\n]}\n", 4);
	free(export_data(x));
	export_set_data(x, NULL);
	return rv;
}

const struct export_format export_chrome = {
	"chrome", chrome_begin, chrome_task, chrome_event, chrome_unfinished,
	NULL, chrome_end
};
