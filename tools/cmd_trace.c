/*
 * pmon trace: subscribes to the coordinator's ordered event stream and
 * prints every event as it arrives, as a readable line or as one JSON
 * object per line (the format other tools rely on: doc/events.md).  It
 * ends when the coordinator says BYE or closes, or on SIGINT/SIGTERM,
 * always after printing everything that arrived.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmon-tool.h"
#include "pmon.h"
#include "record.h"

/* How often the wait loop looks at the stop flag. */
#define TRACE_POLL_MS	200
/* At most this many reads after a stop signal, against a flood. */
#define TRACE_DRAIN_MAX	1000

static int	cmd_trace(const struct cmd_args *);

static const struct option trace_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'j' },
	{ "lossless", no_argument, NULL, 'L' },
	{ "summary", no_argument, NULL, 's' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "tasks", no_argument, NULL, 't' },
	{ "snapshot", no_argument, NULL, 'S' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_trace_entry = {
	"trace", "[--json] [--lossless] [--summary] [--quiet] [--tasks] "
	"[--snapshot]",
	"print the ordered event stream until the coordinator stops",
	"  -j, --json     one JSON object per event and line (doc/events.md)\n"
	"  -L, --lossless never lose an event: while this trace lags, the\n"
	"                 coordinator holds the application's records back\n"
	"                 (doc/capture.md); without it a lagging trace loses\n"
	"                 events and is told how many\n"
	"  -s, --summary  at the end, a summary per task (on stderr with\n"
	"                 --json, so stdout stays pure JSON)\n"
	"  -q, --quiet    no line per event (with --summary: only the "
	"summary)\n"
	"  -t, --tasks    also a line per task as the coordinator announces "
	"it\n"
	"                 (\"type\":\"task\" in JSON)\n"
	"  -S, --snapshot first the state where the stream starts, as one\n"
	"                 line {\"type\":\"snapshot\",\"state\":{...}}\n"
	"\nProblems the coordinator finds (deadlocks, races...) are lines\n"
	"{\"type\":\"problem\",...} in JSON, \"problem: {...}\" in text; what\n"
	"tools do (stops, breakpoints) and the events this trace lost while\n"
	"it lagged (doc/control.md) are \"notice\" lines.\n"
	"\nEnds with status 0 when the coordinator shuts down or on SIGINT "
	"or\nSIGTERM, after printing every event that arrived.\n",
	"+hjLsqtS", trace_longopts, 0, 0, cmd_trace
};

struct trace {
	int		 json;
	int		 quiet;
	int		 tasks;
	struct summary	*sum;
	int		 failed;
};


enum msg_role { ROLE_NONE, ROLE_SEND, ROLE_RECV };

/* Which message calls send and which receive (src/dst in doc/events.md). */
static enum msg_role
msg_role(int call)
{
	switch (call) {
	case PMON_CALL_send:
	case PMON_CALL_psend:
	case PMON_CALL_mcast:
	case PMON_CALL_bcast:
		return ROLE_SEND;
	case PMON_CALL_recv:
	case PMON_CALL_trecv:
	case PMON_CALL_nrecv:
	case PMON_CALL_precv:
	case PMON_CALL_probe:
		return ROLE_RECV;
	default:
		return ROLE_NONE;
	}
}

static int
multi_dest(int call)
{
	return call == PMON_CALL_mcast || call == PMON_CALL_bcast;
}

/* --- JSON ------------------------------------------------------------------ */

static void
json_set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static json_t *
json_id(int32_t tid, uint64_t seq)
{
	return json_sprintf("%d:%llu", tid, (unsigned long long)seq);
}

static json_t *
json_tids(const int32_t *tids, unsigned n)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(tids[i]));
	return a;
}

/* The message fields: src and dst by role, tag, bytes, match. */
static void
json_msg(json_t *o, const struct pmon_event *ev, enum msg_role role)
{
	if (role == ROLE_SEND) {
		json_set(o, "src", json_integer(ev->tid));
		if (multi_dest(ev->call))
			json_set(o, "dst", json_tids(ev->peers, ev->npeers));
		else
			json_set(o, "dst", json_integer(ev->peer));
	} else {
		json_set(o, "src", json_integer(ev->peer));
		json_set(o, "dst", json_integer(ev->tid));
	}
	json_set(o, "tag", json_integer(ev->tag));
	json_set(o, "ctx", json_integer(ev->ctx));
	json_set(o, "bytes", json_integer(ev->bytes));
	if (ev->flags & PMON_EV_MATCHED)
		json_set(o, "match", json_id(ev->match_tid, ev->match_seq));
	if (ev->flags & PMON_EV_UNMATCHED)
		json_set(o, "unmatched", json_true());
	if (ev->flags & PMON_EV_MSG)
		json_set(o, "msg", json_true());
}

/* The fields every line has, lost markers included. */
static json_t *
json_base(const struct pmon_event *ev)
{
	json_t *o = json_object();

	json_set(o, "id", json_id(ev->tid, ev->seq));
	json_set(o, "tid", json_integer(ev->tid));
	json_set(o, "host", json_string(ev->task->host));
	json_set(o, "program", json_string(ev->task->program));
	json_set(o, "seq", json_integer((json_int_t)ev->seq));
	json_set(o, "t", json_integer((json_int_t)ev->t_ns));
	json_set(o, "tc", json_integer((json_int_t)ev->t_corr));
	if (ev->flags & PMON_EV_INCONSISTENT)
		json_set(o, "inconsistent", json_true());
	return o;
}

/* The event as doc/events.md describes it; the caller owns it. */
json_t *
trace_event_json(const struct pmon_event *ev)
{
	enum msg_role role = msg_role(ev->call);
	json_t *o = json_base(ev);

	if (ev->flags & PMON_EV_LOST) {
		json_set(o, "call", json_string("lost"));
		json_set(o, "count", json_integer((uint32_t)ev->bytes));
		return o;
	}
	json_set(o, "call", json_string(ev->call_name));
	json_set(o, "phase", json_string(ev->phase == PMON_PHASE_BEGIN ?
	    "begin" : "end"));
	if (ev->phase == PMON_PHASE_END)
		json_set(o, "rc", json_integer(ev->rc));
	if (role != ROLE_NONE)
		json_msg(o, ev, role);
	else if (ev->peer != -1)
		json_set(o, "peer", json_integer(ev->peer));
	if (ev->call == PMON_CALL_spawn && ev->phase == PMON_PHASE_END)
		json_set(o, "children", json_tids(ev->peers, ev->npeers));
	if (ev->group[0] != '\0') {
		json_set(o, "group", json_string(ev->group));
		if (ev->inst != -1)
			json_set(o, "inst", json_integer(ev->inst));
	}
	return o;
}

static int
print_json(const struct pmon_event *ev)
{
	json_t *o = trace_event_json(ev);
	int rv;

	rv = json_dumpf(o, stdout, JSON_COMPACT);
	json_decref(o);
	if (rv == -1 || putchar('\n') == EOF || fflush(stdout) == EOF)
		return -1;
	return 0;
}

/* --- text ------------------------------------------------------------------ */

/* PVM writes tids in hex with a t: t40001. */
static const char *
tidstr(int32_t tid, char *buf, size_t size)
{
	if (tid == -1)
		snprintf(buf, size, "any");
	else
		snprintf(buf, size, "t%x", (unsigned)tid);
	return buf;
}

static void
print_tids(const int32_t *tids, unsigned n)
{
	char b[16];
	unsigned i;

	putchar('[');
	for (i = 0; i < n; i++)
		printf("%s%s", i ? " " : "", tidstr(tids[i], b, sizeof(b)));
	putchar(']');
}

static void
print_msg_text(const struct pmon_event *ev, enum msg_role role)
{
	char a[16], b[16];

	if (role == ROLE_SEND) {
		printf(" %s -> ", tidstr(ev->tid, a, sizeof(a)));
		if (multi_dest(ev->call))
			print_tids(ev->peers, ev->npeers);
		else
			printf("%s", tidstr(ev->peer, b, sizeof(b)));
	} else
		printf(" %s -> %s", tidstr(ev->peer, a, sizeof(a)),
		    tidstr(ev->tid, b, sizeof(b)));
	printf(" tag %d", ev->tag);
	if (ev->bytes >= 0)	/* -1 at a receive's begin */
		printf(" %d B", ev->bytes);
	if (ev->flags & PMON_EV_MATCHED)
		printf(" match %s:%llu", tidstr(ev->match_tid, a, sizeof(a)),
		    (unsigned long long)ev->match_seq);
	if (ev->flags & PMON_EV_UNMATCHED)
		printf(" unmatched");
}

static int
print_text(const struct pmon_event *ev)
{
	enum msg_role role = msg_role(ev->call);
	char id[40], b[16];

	snprintf(id, sizeof(id), "%s:%llu", tidstr(ev->tid, b, sizeof(b)),
	    (unsigned long long)ev->seq);
	printf("%-14s %-10s %-10s ", id, ev->task->host, ev->task->program);
	if (ev->flags & PMON_EV_LOST)
		printf("LOST %u events", (uint32_t)ev->bytes);
	else {
		printf("%-13s %-5s", ev->call_name,
		    ev->phase == PMON_PHASE_BEGIN ? "begin" : "end");
		if (role != ROLE_NONE)
			print_msg_text(ev, role);
		else if (ev->peer != -1)
			printf(" peer %s", tidstr(ev->peer, b, sizeof(b)));
		if (ev->call == PMON_CALL_spawn &&
		    ev->phase == PMON_PHASE_END) {
			printf(" children ");
			print_tids(ev->peers, ev->npeers);
		}
		if (ev->group[0] != '\0')
			printf(" group %s inst %d", ev->group, ev->inst);
		if (ev->phase == PMON_PHASE_END)
			printf(" rc %d", ev->rc);
	}
	return putchar('\n') == EOF ? -1 : 0;
}

/* --- tasks ------------------------------------------------------------------ */

/* A task line ("type":"task"); the caller owns it. */
json_t *
trace_task_json(const struct pmon_task *t)
{
	json_t *o = json_object();

	json_set(o, "type", json_string("task"));
	json_set(o, "tid", json_integer(t->tid));
	json_set(o, "host", json_string(t->host));
	json_set(o, "program", json_string(t->program));
	json_set(o, "pid", json_integer(t->pid));
	json_set(o, "parent", json_integer(t->parent));
	json_set(o, "spawn_seq", json_integer((json_int_t)t->spawn_seq));
	return o;
}

static int
print_task_json(const struct pmon_task *t)
{
	json_t *o = trace_task_json(t);
	int rv;

	rv = json_dumpf(o, stdout, JSON_COMPACT);
	json_decref(o);
	if (rv == -1 || putchar('\n') == EOF || fflush(stdout) == EOF)
		return -1;
	return 0;
}

static int
print_task_text(const struct pmon_task *t)
{
	char a[16], b[16];

	printf("task %s %s %s pid %u", tidstr(t->tid, a, sizeof(a)), t->host,
	    t->program, t->pid);
	if (t->parent > 0)
		printf(" parent %s", tidstr(t->parent, b, sizeof(b)));
	if (t->parent > 0 && t->spawn_seq != 0)
		printf(" spawned at %s:%llu", b,
		    (unsigned long long)t->spawn_seq);
	return putchar('\n') == EOF ? -1 : 0;
}

static void
trace_task(const struct pmon_task *task, void *arg)
{
	struct trace *t = arg;
	int rv;

	if (!t->tasks || t->quiet)
		return;
	rv = t->json ? print_task_json(task) : print_task_text(task);
	if (rv == -1)
		t->failed = 1;
}

/* A problem or a notice: a line {"type":TYPE,...} or "TYPE: {...}". */
static void
trace_object(struct trace *t, const char *type, const char *json, size_t len)
{
	int rv;

	if (t->quiet || len < 2 || json[0] != '{')
		return;
	if (t->json)
		rv = printf("{\"type\":\"%s\"%s%s\n", type,
		    len > 2 ? "," : "", json + 1);
	else
		rv = printf("%s: %s\n", type, json);
	if (rv < 0)
		t->failed = 1;
}

static void
trace_problem(const char *json, size_t len, void *arg)
{
	trace_object(arg, "problem", json, len);
}

/*
 * What tools did (stops, breakpoints) and what this one lost while it
 * lagged; tools coming and going are left out.
 */
static void
trace_notice(const char *json, size_t len, void *arg)
{
	if (strstr(json, "\"notice\":\"attached\"") == NULL &&
	    strstr(json, "\"notice\":\"detached\"") == NULL)
		trace_object(arg, "notice", json, len);
}

static void
trace_snapshot(const char *json, size_t len, void *arg)
{
	struct trace *t = arg;
	int rv;

	(void)len;
	if (t->quiet)
		return;
	if (t->json)
		rv = printf("{\"type\":\"snapshot\",\"state\":%s}\n", json);
	else
		rv = printf("snapshot: %s\n", json);
	if (rv < 0)
		t->failed = 1;
}

/* --- the loop -------------------------------------------------------------- */

static void
trace_event(const struct pmon_event *ev, void *arg)
{
	struct trace *t = arg;
	int rv = 0;

	if (t->sum != NULL && summary_event(t->sum, ev) == -1)
		t->failed = 1;
	if (t->quiet)
		return;
	rv = t->json ? print_json(ev) : print_text(ev);
	if (rv == -1)
		t->failed = 1;
}

/* Runs until BYE, close, error or a signal; returns the exit status. */
static int
trace_loop(struct pmon *p, struct trace *t)
{
	int rv = 0, i;

	while (!tool_stop && !t->failed)
		if ((rv = pmon_wait(p, TRACE_POLL_MS)) == -1)
			break;
	/* Stopped by a signal: what already arrived is still printed. */
	for (i = 0; rv != -1 && i < TRACE_DRAIN_MAX && !t->failed; i++)
		if ((rv = pmon_wait(p, 0)) == 0)
			break;
	if (t->failed)
		return tool_error("writing the trace: %s", strerror(errno));
	if (!tool_stop && !pmon_closed(p))
		return tool_error("%s", pmon_error(p));
	return 0;
}

static int
cmd_trace(const struct cmd_args *a)
{
	struct pmon_callbacks cb = { .task = trace_task, .event = trace_event,
	    .problem = trace_problem, .snapshot = trace_snapshot,
	    .notice = trace_notice };
	struct trace t = { .json = a->seen['j'] > 0, .quiet = a->seen['q'] > 0,
	    .tasks = a->seen['t'] > 0 };
	struct pmon *p;
	int rv;

	if (a->seen['s'] && (t.sum = summary_new()) == NULL)
		return tool_error("out of memory");
	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	if (pmon_connect(p, NULL, "pmon-trace", PMON_SUBSCRIBE |
	    (a->seen['S'] ? PMON_SNAPSHOT : 0) |
	    (a->seen['L'] ? PMON_LOSSLESS : 0)) == -1) {
		rv = tool_error("%s", pmon_error(p));
		goto out;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pmon_set_callbacks(p, &cb, &t);
	tool_catch_stop();
	rv = trace_loop(p, &t);
	if (t.sum != NULL) {
		if (!t.quiet && !t.json)
			putchar('\n');
		summary_print(t.sum, t.json && !t.quiet ? stderr : stdout);
	}
out:
	summary_free(t.sum);
	pmon_free(p);
	return rv;
}
