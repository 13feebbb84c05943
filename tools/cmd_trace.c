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

#include "pmon-tool.h"
#include "pmon.h"

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
	{ "time", required_argument, NULL, 'T' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_trace_entry = {
	"trace", "[--json] [--lossless] [--summary] [--quiet] [--tasks] "
	"[--snapshot] [--time=rel|abs|tc|none]",
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
	"  -T, --time=M   the time column of the text lines, from the\n"
	"                 corrected time tc: rel (the default) seconds since\n"
	"                 the first event shown, abs the time of day, tc in\n"
	"                 ns as the JSON has it, none\n"
	"\nProblems the coordinator finds (deadlocks, races...) are lines\n"
	"{\"type\":\"problem\",...} in JSON, \"problem: KIND ...\" in words; what\n"
	"tools do (stops, breakpoints) and the events this trace lost while\n"
	"it lagged (doc/control.md) are \"notice\" lines.\n"
	"\nEnds with status 0 when the coordinator shuts down or on SIGINT "
	"or\nSIGTERM, after printing every event that arrived.\n",
	"+hjLsqtST:", trace_longopts, 0, 0, cmd_trace
};

/* The lines written at once; an event line needs far less. */
#define TRACE_OUT_SIZE	(256 * 1024)

struct trace {
	int		 json;
	int		 quiet;
	int		 tasks;
	struct trace_clock clock;	/* of the text lines */
	struct summary	*sum;
	int		 failed;
	int		 write_errno;	/* why writing failed */

	/*
	 * Lines not yet written.  They go out when the buffer fills and
	 * whenever the input is drained, before the trace waits for more:
	 * a live trace shows each event as soon as nothing else is coming.
	 */
	char		*out;
	size_t		 outlen;
	size_t		 outsize;
};

static int
trace_write_failed(struct trace *t)
{
	t->write_errno = errno;
	t->failed = 1;
	return -1;
}

/* Writes the buffered lines to stdout; -1 (and failed) on an error. */
static int
trace_flush(struct trace *t)
{
	if (t->failed)
		return -1;
	if ((t->outlen > 0 &&
	    fwrite(t->out, 1, t->outlen, stdout) != t->outlen) ||
	    fflush(stdout) == EOF)
		return trace_write_failed(t);
	t->outlen = 0;
	return 0;
}

/* Room for need more bytes at the end of the buffer, or NULL. */
static char *
trace_room(struct trace *t, size_t need)
{
	char *n;

	if (t->outsize - t->outlen < need && trace_flush(t) == -1)
		return NULL;
	if (t->outsize < need) {
		if ((n = realloc(t->out, need)) == NULL) {
			trace_write_failed(t);
			return NULL;
		}
		t->out = n;
		t->outsize = need;
	}
	return t->out + t->outlen;
}

/* Appends len bytes; what does not fit the buffer goes out directly. */
static void
trace_put(struct trace *t, const char *s, size_t len)
{
	char *o;

	if (len >= t->outsize) {
		if (trace_flush(t) == 0 && fwrite(s, 1, len, stdout) != len)
			trace_write_failed(t);
		return;
	}
	if ((o = trace_room(t, len)) == NULL)
		return;
	memcpy(o, s, len);
	t->outlen += len;
}

static void
trace_puts(struct trace *t, const char *s)
{
	trace_put(t, s, strlen(s));
}

/* --- the lines ------------------------------------------------------------ */

static void
trace_task(const struct pmon_task *task, void *arg)
{
	struct trace *t = arg;
	char *o;

	if (!t->tasks || t->quiet)
		return;
	if ((o = trace_room(t, trace_fmt_task_max(task))) == NULL)
		return;
	o = t->json ? trace_fmt_task_json(o, task) :
	    trace_fmt_task_text(o, task);
	t->outlen = (size_t)(o - t->out);
}

static void
trace_event(const struct pmon_event *ev, void *arg)
{
	struct trace *t = arg;
	char *o;

	if (t->sum != NULL && summary_event(t->sum, ev) == -1)
		trace_write_failed(t);	/* out of memory */
	if (t->quiet)
		return;
	if ((o = trace_room(t, trace_fmt_event_max(ev))) == NULL)
		return;
	o = t->json ? trace_fmt_event_json(o, ev, 0) :
	    trace_fmt_event_text(o, ev, &t->clock);
	t->outlen = (size_t)(o - t->out);
}

/*
 * A problem or a notice: a line {"type":TYPE,...} (the object written as
 * far as its first NUL, as printf's %s did), or in words (render.c).
 */
static void
trace_object(struct trace *t, const char *type, const char *json, size_t len)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *fp;

	if (t->quiet || len < 2 || json[0] != '{')
		return;
	if (t->json) {
		trace_puts(t, "{\"type\":\"");
		trace_puts(t, type);
		trace_puts(t, len > 2 ? "\"," : "\"");
		trace_puts(t, json + 1);
		trace_put(t, "\n", 1);
		return;
	}
	if ((fp = open_memstream(&buf, &blen)) == NULL) {
		tool_error("out of memory");
		return;
	}
	render_stream_object(fp, type, json, len);
	if (fclose(fp) == 0)
		trace_put(t, buf, blen);
	free(buf);
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

	(void)len;
	if (t->quiet)
		return;
	trace_puts(t, t->json ? "{\"type\":\"snapshot\",\"state\":" :
	    "snapshot: ");
	trace_puts(t, json);
	trace_puts(t, t->json ? "}\n" : "\n");
}

/* --- the loop -------------------------------------------------------------- */

/*
 * Dispatches what the socket has; once it has nothing, writes the lines
 * and waits.  Returns pmon_wait's result.
 */
static int
trace_step(struct pmon *p, struct trace *t)
{
	int rv;

	if ((rv = pmon_wait(p, 0)) != 0)
		return rv;
	if (tool_stop || trace_flush(t) == -1)
		return 0;
	return pmon_wait(p, TRACE_POLL_MS);
}

/* Runs until BYE, close, error or a signal; returns the exit status. */
static int
trace_loop(struct pmon *p, struct trace *t)
{
	int rv = 0, i;

	while (!tool_stop && !t->failed)
		if ((rv = trace_step(p, t)) == -1)
			break;
	/* Stopped by a signal: what already arrived is still printed. */
	for (i = 0; rv != -1 && i < TRACE_DRAIN_MAX && !t->failed; i++)
		if ((rv = pmon_wait(p, 0)) == 0)
			break;
	trace_flush(t);
	if (t->failed)
		return tool_error("writing the trace: %s",
		    strerror(t->write_errno));
	return tool_stream_end(p);
}

static int
cmd_trace(const struct cmd_args *a)
{
	struct pmon_callbacks cb = { .task = trace_task, .event = trace_event,
	    .problem = trace_problem, .snapshot = trace_snapshot,
	    .notice = trace_notice };
	struct trace t = { .json = a->seen['j'] > 0, .quiet = a->seen['q'] > 0,
	    .tasks = a->seen['t'] > 0 };
	static const char *const modes[] = { [TRACE_TIME_REL] = "rel",
	    [TRACE_TIME_ABS] = "abs", [TRACE_TIME_TC] = "tc",
	    [TRACE_TIME_NONE] = "none" };
	struct pmon *p;
	size_t i;
	int rv;

	for (i = 0; a->seen['T'] && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(a->arg['T'], modes[i]) == 0)
			break;
	if (i == sizeof(modes) / sizeof(modes[0]))
		return tool_usage_error("--time %s: rel, abs, tc or none",
		    a->arg['T']);
	t.clock.mode = a->seen['T'] ? (enum trace_time)i : TRACE_TIME_REL;
	if (a->seen['s'] && (t.sum = summary_new()) == NULL)
		return tool_error("out of memory");
	if ((p = pmon_new()) == NULL ||
	    (t.out = malloc(TRACE_OUT_SIZE)) == NULL) {
		pmon_free(p);
		summary_free(t.sum);
		return tool_error("out of memory");
	}
	t.outsize = TRACE_OUT_SIZE;
	if (pmon_connect(p, NULL, "pmon-trace", PMON_SUBSCRIBE |
	    (a->seen['S'] ? PMON_SNAPSHOT : 0) |
	    (a->seen['L'] ? PMON_LOSSLESS : 0)) == -1) {
		rv = tool_error("%s", pmon_error(p));
		goto out;
	}
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
	free(t.out);
	return rv;
}
