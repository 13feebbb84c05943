/*
 * pmon top: a live view of the application, refreshed every -d seconds:
 * per host, its tasks with their state (running, blocked in what, stopped,
 * exited, killed), receive queues and message rates over the last
 * interval.  Each refresh flushes and asks the coordinator for its state
 * model ("snapshot", doc/state.md), so what it shows is what pmon ps and
 * pmon queues would show at that moment; rates are the differences of
 * the model's counters over the wall-clock time between two refreshes.
 *
 * On a terminal it redraws the screen (plain ANSI); with -b, or when
 * stdout is not a terminal, it prints every refresh as plain text.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "pmon-tool.h"
#include "pmon.h"

#define TOP_DELAY_MIN	0.05
#define TOP_DELAY_MAX	3600.0

static int	cmd_top(const struct cmd_args *);

static const struct option top_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "batch", no_argument, NULL, 'b' },
	{ "count", required_argument, NULL, 'n' },
	{ "delay", required_argument, NULL, 'd' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_top_entry = {
	"top", "[-b] [-n COUNT] [-d SECONDS]",
	"a live view of the tasks per host: states, queues, message rates",
	"  -b, --batch    plain text, every refresh after the other (the\n"
	"                 default when stdout is not a terminal)\n"
	"  -n, --count N  stop after N refreshes (default: until SIGINT,\n"
	"                 SIGTERM or the coordinator's shutdown)\n"
	"  -d, --delay S  seconds between refreshes (default 1, from 0.05)\n"
	"\nColumns: STATE is running, blocked, stopped, exited or killed;\n"
	"WHERE the call a blocked task waits in, as pmon ps writes it\n"
	"(pvm_recv(t40004,5): from t40004, tag 5), or who killed it; QUEUE and\n"
	"QBYTES the messages sent to the task and not yet received; SENT,\n"
	"RECV their totals; OUT/s, IN/s and their B/s the rates over the\n"
	"last interval (\"-\" at the first refresh).\n",
	"+hbn:d:", top_longopts, 0, 0, cmd_top
};

/* A task's counters at the previous refresh. */
struct top_prev {
	long long	 tid;
	long long	 sent, sent_b, recv, recv_b;
};

struct top {
	int		 batch;
	unsigned	 refresh;
	double		 interval;	/* since the last refresh, s */
	struct timespec	 last;
	struct top_prev	*prev, *cur;
	size_t		 nprev, ncur;
};


static long long
jint(json_t *o, const char *k1, const char *k2)
{
	json_t *v = json_object_get(o, k1);

	if (k2 != NULL)
		v = json_object_get(v, k2);
	return json_is_integer(v) ? json_integer_value(v) : 0;
}

static const char *
jstr(json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : dflt;
}

static const struct top_prev *
top_prev_of(const struct top *t, long long tid)
{
	size_t i;

	for (i = 0; i < t->nprev; i++)
		if (t->prev[i].tid == tid)
			return &t->prev[i];
	return NULL;
}

/* The receive queue of tid: messages and bytes. */
static void
top_queue(json_t *doc, long long tid, long long *n, long long *bytes)
{
	json_t *qs = json_object_get(doc, "queues"), *q, *m;
	size_t i, j;

	*n = *bytes = 0;
	json_array_foreach(qs, i, q) {
		if (jint(q, "tid", NULL) != tid)
			continue;
		json_array_foreach(json_object_get(q, "messages"), j, m) {
			(*n)++;
			*bytes += jint(m, "bytes", NULL);
		}
	}
}

static void
top_rate(char *buf, size_t size, const struct top *t, long long now,
    long long before, int have)
{
	if (!have || t->interval <= 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f", (double)(now - before) /
		    t->interval);
}

/* One task line; its counters go to t->cur for the next refresh. */
static void
top_task(struct top *t, json_t *doc, json_t *task, double *out, double *in)
{
	struct top_prev c = { jint(task, "tid", NULL),
	    jint(task, "sent", "msgs"), jint(task, "sent", "bytes"),
	    jint(task, "received", "msgs"), jint(task, "received", "bytes") };
	const struct top_prev *p = top_prev_of(t, c.tid);
	char where[64], r[4][32];
	long long qn, qb;

	render_where(task, where, sizeof(where));
	top_queue(doc, c.tid, &qn, &qb);
	top_rate(r[0], sizeof(r[0]), t, c.sent, p ? p->sent : 0, p != NULL);
	top_rate(r[1], sizeof(r[1]), t, c.sent_b, p ? p->sent_b : 0,
	    p != NULL);
	top_rate(r[2], sizeof(r[2]), t, c.recv, p ? p->recv : 0, p != NULL);
	top_rate(r[3], sizeof(r[3]), t, c.recv_b, p ? p->recv_b : 0,
	    p != NULL);
	if (p != NULL && t->interval > 0) {
		*out += (double)(c.sent - p->sent) / t->interval;
		*in += (double)(c.recv - p->recv) / t->interval;
	}
	printf("  t%-7llx %-12.12s %-11s %-24s %5lld %7lld %7lld %9lld "
	    "%7lld %9lld %8s %10s %8s %10s\n", (unsigned long long)c.tid,
	    jstr(task, "program", "?"), jstr(task, "state", "?"), where, qn,
	    qb, c.sent, c.sent_b, c.recv, c.recv_b, r[0], r[1], r[2], r[3]);
	t->cur[t->ncur++] = c;
}

static void
top_host(struct top *t, json_t *doc, json_t *host)
{
	const char *name = jstr(host, "name", "?");
	json_t *tasks = json_object_get(doc, "tasks"), *task;
	double out = 0, in = 0;
	size_t i, n = 0;

	json_array_foreach(tasks, i, task)
		if (strcmp(jstr(task, "host", ""), name) == 0)
			n++;
	printf("host %s (%s, agent %s): %zu tasks\n", name,
	    jstr(host, "arch", "?"), jstr(host, "agent", "?"), n);
	if (n == 0)
		return;
	printf("  %-8s %-12s %-11s %-24s %5s %7s %7s %9s %7s %9s %8s %10s "
	    "%8s %10s\n", "TID", "PROGRAM", "STATE", "WHERE", "QUEUE",
	    "QBYTES", "SENT", "SENT_B", "RECV", "RECV_B", "OUT/s", "OUT_B/s",
	    "IN/s", "IN_B/s");
	json_array_foreach(tasks, i, task)
		if (strcmp(jstr(task, "host", ""), name) == 0)
			top_task(t, doc, task, &out, &in);
	if (t->refresh > 1)
		printf("  host total: %.1f msgs/s out, %.1f msgs/s in\n", out,
		    in);
}

/* Counts of the states, for the header line. */
static void
top_header(const struct top *t, json_t *doc)
{
	json_t *tasks = json_object_get(doc, "tasks"), *task;
	size_t i, run = 0, blk = 0, stp = 0, ended = 0;
	const char *s;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	json_array_foreach(tasks, i, task) {
		s = jstr(task, "state", "");
		if (strcmp(s, "running") == 0)
			run++;
		else if (strcmp(s, "blocked") == 0)
			blk++;
		else if (strcmp(s, "stopped") == 0)
			stp++;
		else
			ended++;
	}
	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&now, &tm));
	if (!t->batch)
		fputs("\033[H\033[2J\033[1m", stdout);
	printf("pmon top %s refresh %u interval %.2f s: %zu tasks, %zu "
	    "running, %zu blocked, %zu stopped, %zu ended\n", when,
	    t->refresh, t->interval, json_array_size(tasks), run, blk, stp,
	    ended);
	if (!t->batch)
		fputs("\033[0m", stdout);
}

static int
top_show(struct top *t, json_t *doc)
{
	json_t *hosts = json_object_get(doc, "hosts"), *host;
	size_t i, n = json_array_size(json_object_get(doc, "tasks"));
	struct top_prev *c;

	if ((c = calloc(n ? n : 1, sizeof(*c))) == NULL)
		return tool_error("out of memory");
	t->cur = c;
	t->ncur = 0;
	top_header(t, doc);
	json_array_foreach(hosts, i, host)
		top_host(t, doc, host);
	if (t->batch)
		putchar('\n');
	free(t->prev);
	t->prev = t->cur;
	t->nprev = t->ncur;
	t->cur = NULL;
	if (fflush(stdout) == EOF)
		return tool_error("writing: %s", strerror(errno));
	return 0;
}

static double
elapsed(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* One refresh: the state now, against the one before. */
static int
top_refresh(struct pmon *p, struct top *t)
{
	struct timespec now;
	char *reply;
	size_t len;
	json_t *doc;
	json_error_t jerr;
	int rv;

	if (pmon_flush(p) == -1 ||
	    pmon_request(p, "snapshot", PMON_JSON, &reply, &len) == -1)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	t->refresh++;
	t->interval = t->refresh > 1 ? elapsed(&t->last, &now) : 0;
	t->last = now;
	doc = json_loadb(reply, len, 0, &jerr);
	free(reply);
	if (doc == NULL)
		return tool_error("the coordinator's snapshot is not JSON: %s",
		    jerr.text);
	rv = top_show(t, doc);
	json_decref(doc);
	return rv == 0 ? 0 : 1;
}

/* Waits for the next refresh; -1 when the coordinator went away. */
static int
top_sleep(struct pmon *p, double delay)
{
	struct timespec start, now;
	double left;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!tool_stop) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((left = delay - elapsed(&start, &now)) <= 0)
			return 0;
		if (pmon_wait(p, (int)ceil(left * 1000)) == -1)
			return -1;
	}
	return 0;
}

/* Refreshes until COUNT, a signal, or the coordinator's shutdown. */
static int
top_run(struct pmon *p, struct top *t, long count, double delay)
{
	int rv;

	for (;;) {
		if ((rv = top_refresh(p, t)) == -1)
			break;
		if (rv != 0)
			return rv;
		if (tool_stop ||
		    (count > 0 && t->refresh >= (unsigned long)count))
			return 0;
		if (top_sleep(p, delay) == -1)
			break;
	}
	if (pmon_closed(p) || tool_stop)
		return 0;	/* the coordinator shut down */
	return tool_error("%s", pmon_error(p));
}

static int
cmd_top(const struct cmd_args *a)
{
	struct top t;
	struct pmon *p;
	long count = 0;
	double delay = 1.0;
	char *end;
	int rv;

	memset(&t, 0, sizeof(t));
	t.batch = a->seen['b'] || !isatty(STDOUT_FILENO);
	if (a->arg['n'] != NULL) {
		errno = 0;
		count = strtol(a->arg['n'], &end, 10);
		if (errno != 0 || *end != '\0' || count < 1)
			return tool_usage_error("bad count '%s'", a->arg['n']);
	}
	if (a->arg['d'] != NULL) {
		delay = strtod(a->arg['d'], &end);
		if (*end != '\0' || !(delay >= TOP_DELAY_MIN &&
		    delay <= TOP_DELAY_MAX))
			return tool_usage_error("bad delay '%s' (%.2f to %.0f "
			    "seconds)", a->arg['d'], TOP_DELAY_MIN,
			    TOP_DELAY_MAX);
	}
	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	if (pmon_connect(p, NULL, "pmon-top", 0) == -1) {
		rv = tool_error("%s", pmon_error(p));
		goto out;
	}
	tool_catch_stop();
	rv = top_run(p, &t, count, delay);
out:
	free(t.prev);
	pmon_free(p);
	return rv;
}
