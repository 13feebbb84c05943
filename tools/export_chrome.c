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
 * after the send's begin and the "f" ("bp":"e") 1 ns before the
 * receive's end, inside both slices.  Corrected times put a receive's
 * end at least lmin (1 us) after its send's begin, so an arrow never
 * points backwards.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "record.h"

struct chrome {
	int		 first;		/* no event written yet */
	uint64_t	 flows;		/* flow ids */
};

/* t (ns) as microseconds with three decimals, exactly. */
static const char *
chrome_ts(int64_t t, char *buf, size_t size)
{
	uint64_t a = t < 0 ? (uint64_t)-t : (uint64_t)t;

	snprintf(buf, size, "%s%" PRIu64 ".%03u", t < 0 ? "-" : "",
	    a / 1000, (unsigned)(a % 1000));
	return buf;
}

/* Starts one element of traceEvents. */
static FILE *
chrome_next(struct export *x)
{
	struct chrome *c = export_data(x);
	FILE *fp = export_file(x);

	fputs(c->first ? "\n" : ",\n", fp);
	c->first = 0;
	return fp;
}

/*
 * A JSON string of a name we did not choose (host, program): escaped by
 * jansson; bytes that are not UTF-8 become '?'.
 */
static void
chrome_str(FILE *fp, const char *s)
{
	json_t *j;
	char *c, *p;

	if ((j = json_string(s)) == NULL && (c = strdup(s)) != NULL) {
		for (p = c; *p != '\0'; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		j = json_string(c);
		free(c);
	}
	if (j == NULL || json_dumpf(j, fp, JSON_ENCODE_ANY) == -1)
		fputs("\"?\"", fp);
	json_decref(j);
}

static int
chrome_begin(struct export *x)
{
	struct chrome *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return export_fail(x, "out of memory");
	c->first = 1;
	export_set_data(x, c);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":"
	    "\"pmon export\",\"time\":\"corrected (tc), from the start of "
	    "the trace\"},\"traceEvents\":[", export_file(x));
	return 0;
}

static int
chrome_task(struct export *x, const struct export_task *t, int new_host)
{
	FILE *fp;
	char b[16], name[300];

	if (new_host) {
		fp = chrome_next(x);
		fprintf(fp, "{\"ph\":\"M\",\"name\":\"process_name\","
		    "\"pid\":%u,\"args\":{\"name\":", t->host->index);
		chrome_str(fp, t->host->name);
		fputs("}}", fp);
		fp = chrome_next(x);
		fprintf(fp, "{\"ph\":\"M\",\"name\":\"process_sort_index\","
		    "\"pid\":%u,\"args\":{\"sort_index\":%u}}",
		    t->host->index, t->host->index);
	}
	snprintf(name, sizeof(name), "%s %s", t->program,
	    export_tidstr(t->tid, b, sizeof(b)));
	fp = chrome_next(x);
	fprintf(fp, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,"
	    "\"tid\":%d,\"args\":{\"name\":", t->host->index, t->tid);
	chrome_str(fp, name);
	fputs("}}", fp);
	fp = chrome_next(x);
	fprintf(fp, "{\"ph\":\"M\",\"name\":\"thread_sort_index\","
	    "\"pid\":%u,\"tid\":%d,\"args\":{\"sort_index\":%u}}",
	    t->host->index, t->tid, t->index);
	return 0;
}

/* The fields of a slice or an instant: where and when. */
static FILE *
chrome_head(struct export *x, const struct export_task *t, const char *ph,
    const char *name, const char *cat, int64_t ts)
{
	FILE *fp = chrome_next(x);
	char b[32];

	fprintf(fp, "{\"ph\":\"%s\",\"name\":\"%s\",\"cat\":\"%s\","
	    "\"ts\":%s,\"pid\":%u,\"tid\":%d", ph, name, cat,
	    chrome_ts(ts, b, sizeof(b)), t->host->index, t->tid);
	return fp;
}

static void
chrome_msg_args(FILE *fp, const struct pmon_event *ev)
{
	unsigned i;

	if (export_is_send(ev->call)) {
		if (ev->call == PMON_CALL_mcast ||
		    ev->call == PMON_CALL_bcast) {
			fputs(",\"dst\":[", fp);
			for (i = 0; i < ev->npeers; i++)
				fprintf(fp, "%s%d", i ? "," : "", ev->peers[i]);
			putc(']', fp);
		} else
			fprintf(fp, ",\"dst\":%d", ev->peer);
	} else if (export_is_recv(ev->call))
		fprintf(fp, ",\"src\":%d", ev->peer);
	else
		return;
	fprintf(fp, ",\"tag\":%d,\"bytes\":%d", ev->tag, ev->bytes);
	if (ev->flags & PMON_EV_MATCHED)
		fprintf(fp, ",\"match\":\"%d:%" PRIu64 "\"", ev->match_tid,
		    ev->match_seq);
}

/*
 * A message from its send, or a spawn to the child's first event:
 * "s" inside the first slice, "f" inside the second, never before it.
 */
static void
chrome_flow(struct export *x, const char *cat, const struct export_send *s,
    const struct export_task *to, int64_t to_t, int at_end)
{
	struct chrome *c = export_data(x);
	int64_t from = s->t + 1, until = at_end ? to_t - 1 : to_t + 1;
	FILE *fp;

	if (until < from)
		until = from;
	c->flows++;
	fp = chrome_head(x, s->task, "s", cat, cat, from);
	fprintf(fp, ",\"id\":%" PRIu64 "}", c->flows);
	fp = chrome_head(x, to, "f", cat, cat, until);
	fprintf(fp, ",\"bp\":\"e\",\"id\":%" PRIu64 "}", c->flows);
}

/* The end of a call: its complete event, from the begin. */
static void
chrome_slice(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	const char *cat = export_is_blocking(ev->call) ? "pvm,blocking" :
	    "pvm";
	char b[32];
	FILE *fp;

	if (e->begin == NULL) {
		fp = chrome_head(x, e->task, "i", ev->call_name, cat, e->t);
		fprintf(fp, ",\"s\":\"t\",\"args\":{\"end\":\"%d:%" PRIu64
		    "\",\"begin_lost\":true,\"rc\":%d", ev->tid, ev->seq,
		    ev->rc);
	} else {
		fp = chrome_head(x, e->task, "X", ev->call_name, cat,
		    e->begin->t);
		fprintf(fp, ",\"dur\":%s,\"args\":{\"begin\":\"%d:%" PRIu64
		    "\",\"end\":\"%d:%" PRIu64 "\",\"rc\":%d",
		    chrome_ts(e->t - e->begin->t, b, sizeof(b)), ev->tid,
		    e->begin->seq, ev->tid, ev->seq, ev->rc);
	}
	chrome_msg_args(fp, ev);
	fputs("}}", fp);
}

static int
chrome_event(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	FILE *fp;

	if (e->spawn != NULL)
		chrome_flow(x, "spawn", e->spawn, e->task, e->t, 0);
	if (ev->flags & PMON_EV_LOST) {
		fp = chrome_head(x, e->task, "i", "lost", "lost", e->t);
		fprintf(fp, ",\"s\":\"t\",\"args\":{\"count\":%u}}",
		    (uint32_t)ev->bytes);
		return 0;
	}
	if (ev->call == PMON_CALL_BREAK) {
		fp = chrome_head(x, e->task, "i", "breakpoint", "break", e->t);
		fprintf(fp, ",\"s\":\"t\",\"args\":{\"id\":%d,\"at\":\"%s\","
		    "\"before\":%s}}", ev->inst,
		    record_call_name((unsigned)ev->rc),
		    ev->phase == PMON_PHASE_BEGIN ? "true" : "false");
		return 0;
	}
	if (ev->phase == PMON_PHASE_BEGIN)
		return 0;
	chrome_slice(x, e);
	if (e->send != NULL)
		chrome_flow(x, "msg", e->send, e->task, e->t, 1);
	return 0;
}

static int
chrome_unfinished(struct export *x, const struct export_task *t,
    const struct export_call *call, int64_t tm)
{
	char b[32];
	FILE *fp;

	fp = chrome_head(x, t, "X", call->call_name, "pvm", call->t);
	fprintf(fp, ",\"dur\":%s,\"args\":{\"begin\":\"%d:%" PRIu64 "\","
	    "\"unfinished\":true}}", chrome_ts(tm - call->t, b, sizeof(b)),
	    t->tid, call->seq);
	return 0;
}

static int
chrome_end(struct export *x)
{
	fputs("\n]}\n", export_file(x));
	free(export_data(x));
	export_set_data(x, NULL);
	return 0;
}

const struct export_format export_chrome = {
	"chrome", chrome_begin, chrome_task, chrome_event, chrome_unfinished,
	chrome_end
};
