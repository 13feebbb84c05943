/*
 * reqtool: a libpmon tool that a shell test drives one line at a time,
 * to play the debugger and the visualizer of issue 5 against a real
 * coordinator and check what each of them is told.
 *
 *	reqtool [-s] NAME
 *
 * Connects to the coordinator of $PVM_TMP as tool NAME (-s: subscribed
 * to the event stream, whose events it counts) and reads lines from
 * stdin:
 *
 *	REQUEST			any request (doc/requests.md), sent with
 *				PMON_JSON; waits for its reply (a "flush"
 *				adds the events, as "events" does, counted
 *				as soon as its reply came)
 *	wait-notice KIND	takes the next notice {"notice":KIND}: the
 *				first such wait takes the first such
 *				notice since the start (or since clear),
 *				the second the second...; waits for it
 *				if it has not come yet
 *	wait-snapshot		the same for snapshots (REPLY id 0: what a
 *				breakpoint's snapshot action sends)
 *	clear			counts every notice and snapshot so far
 *				as taken
 *	sleep MS		reads and prints what comes for MS ms
 *	events			the events seen so far, per task
 *	quit			disconnects and exits (as the end of stdin)
 *
 * A wait gives up after 10 s (-w MS to change).  Everything goes to
 * stdout as one JSON object per line, flushed at once, so a test can
 * wait for a line and read it:
 *
 *	{"line":N,"request":TEXT,"status":"ok","reply":BODY}
 *	    (a flush: and "events", "last", "total" as below)
 *	{"line":N,"request":TEXT,"status":"error","error":TEXT}
 *	{"line":N,"waited":KIND,"notice":JSON} (or "snapshot":JSON)
 *	{"line":N,"timeout":KIND}
 *	{"line":N,"cleared":true}
 *	{"line":N,"slept":MS}
 *	{"line":N,"events":{TID:COUNT,...},"last":{TID:SEQ,...},"total":N}
 *	{"notice":...}			every notice, as the coordinator
 *					sent it (one line)
 *	{"problem":JSON}  {"snapshot":JSON}  {"bye":REASON}
 *	{"fatal":TEXT}			the connection failed
 *
 * N is the number of the input line (from 1); BODY is the reply as JSON,
 * or as a string when it is not JSON (a flush replies ""); TID is the
 * tid in decimal.  Exit status: 0 at quit or the end of stdin, 1 when a
 * wait timed out or the connection failed, 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "pmon.h"
#include "xalloc.h"

#define LINE_MAX_BYTES	4096
#define KINDS_MAX	32

/* Notices (or snapshots) of one kind: those that came, those taken. */
struct kind {
	char		 name[32];
	json_t		**seen;
	size_t		 nseen;
	size_t		 taken;
};

struct task_count {
	int32_t		 tid;
	uint64_t	 events;
	uint64_t	 last;		/* highest seq seen */
};

static struct kind	 kinds[KINDS_MAX];
static size_t		 nkinds;
static struct task_count *counts;
static size_t		 ncounts;
static int		 wait_ms = 10000;

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: reqtool [-s] [-w MS] NAME\n");
	exit(2);
}

/* Prints o as one line and drops the reference. */
static void
emit(json_t *o)
{
	char *s;

	if (o == NULL || (s = json_dumps(o, JSON_COMPACT)) == NULL) {
		fprintf(stderr, "reqtool: out of memory\n");
		exit(2);
	}
	printf("%s\n", s);
	fflush(stdout);
	free(s);
	json_decref(o);
}

/* The text as JSON if it is JSON, else as a string. */
static json_t *
as_json(const char *text, size_t len)
{
	json_t *j;

	if ((j = json_loadb(text, len, JSON_DECODE_ANY, NULL)) != NULL)
		return j;
	return json_stringn(text, len);
}

static struct kind *
kind_get(const char *name)
{
	size_t i;

	for (i = 0; i < nkinds; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	if (nkinds == KINDS_MAX || strlen(name) >= sizeof(kinds[0].name))
		return NULL;
	snprintf(kinds[nkinds].name, sizeof(kinds[0].name), "%s", name);
	return &kinds[nkinds++];
}

/* Keeps j for a wait on its kind. */
static void
kind_add(const char *name, json_t *j)
{
	struct kind *kd;

	if (name == NULL || (kd = kind_get(name)) == NULL)
		return;
	kd->seen = xreallocarray(kd->seen, kd->nseen + 1, sizeof(*kd->seen));
	kd->seen[kd->nseen++] = json_incref(j);
}

static void
on_notice(const char *json, size_t len, void *arg)
{
	json_t *j = as_json(json, len);

	(void)arg;
	if (!json_is_object(j))
		j = json_pack("{so}", "bad_notice", j);
	kind_add(json_string_value(json_object_get(j, "notice")), j);
	emit(j);
}

static void
on_problem(const char *json, size_t len, void *arg)
{
	(void)arg;
	emit(json_pack("{so}", "problem", as_json(json, len)));
}

static void
on_snapshot(const char *json, size_t len, void *arg)
{
	json_t *j = as_json(json, len);

	(void)arg;
	kind_add("snapshot", j);
	emit(json_pack("{so}", "snapshot", j));
}

static void
on_bye(const char *reason, void *arg)
{
	(void)arg;
	emit(json_pack("{ss}", "bye", reason));
}

static void
on_event(const struct pmon_event *ev, void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < ncounts; i++)
		if (counts[i].tid == ev->tid)
			break;
	if (i == ncounts) {
		counts = xreallocarray(counts, ncounts + 1, sizeof(*counts));
		memset(&counts[ncounts++], 0, sizeof(*counts));
		counts[i].tid = ev->tid;
	}
	counts[i].events++;
	if (ev->seq > counts[i].last)
		counts[i].last = ev->seq;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Dispatches what comes until done(arg) says so (0) or ms pass (1; 0
 * without done); -1 when the connection failed.
 */
static int
dispatch_for(struct pmon *p, int ms, int (*done)(void *), void *arg)
{
	int64_t end = now_ms() + ms, left;

	while (done == NULL || !done(arg)) {
		if ((left = end - now_ms()) <= 0)
			return done == NULL ? 0 : 1;
		if (pmon_wait(p, (int)left) == -1)
			return -1;
	}
	return 0;
}

static int
kind_ready(void *arg)
{
	const struct kind *kd = arg;

	return kd->nseen > kd->taken;
}

static json_t *
line_obj(unsigned line)
{
	return json_pack("{sI}", "line", (json_int_t)line);
}

static int
do_wait(struct pmon *p, unsigned line, const char *name)
{
	struct kind *kd = kind_get(name);
	json_t *o = line_obj(line);
	int rv;

	if (kd == NULL) {
		json_object_set_new(o, "error", json_string("bad kind"));
		emit(o);
		return 0;
	}
	if ((rv = dispatch_for(p, wait_ms, kind_ready, kd)) == -1) {
		json_decref(o);
		return -1;
	}
	json_object_set_new(o, rv == 0 ? "waited" : "timeout",
	    json_string(name));
	if (rv == 0)
		json_object_set(o, strcmp(name, "snapshot") == 0 ? "snapshot" :
		    "notice", kd->seen[kd->taken++]);
	emit(o);
	return rv;
}

/* Adds the events seen so far, per task, to o. */
static void
add_events(json_t *o)
{
	json_t *ev = json_object(), *last = json_object();
	uint64_t total = 0;
	char key[16];
	size_t i;

	for (i = 0; i < ncounts; i++) {
		snprintf(key, sizeof(key), "%d", counts[i].tid);
		json_object_set_new(ev, key,
		    json_integer((json_int_t)counts[i].events));
		json_object_set_new(last, key,
		    json_integer((json_int_t)counts[i].last));
		total += counts[i].events;
	}
	json_object_set_new(o, "events", ev);
	json_object_set_new(o, "last", last);
	json_object_set_new(o, "total", json_integer((json_int_t)total));
}

static int
do_request(struct pmon *p, unsigned line, const char *text)
{
	json_t *o = line_obj(line);
	char *reply;
	size_t len;

	json_object_set_new(o, "request", json_string(text));
	if (pmon_request(p, text, PMON_JSON, &reply, &len) == -1) {
		if (pmon_closed(p)) {
			json_decref(o);
			return -1;
		}
		json_object_set_new(o, "status", json_string("error"));
		json_object_set_new(o, "error", json_string(pmon_error(p)));
	} else {
		json_object_set_new(o, "status", json_string("ok"));
		json_object_set_new(o, "reply", as_json(reply, len));
		free(reply);
	}
	/*
	 * What a flush must have delivered, counted when its reply came
	 * (and frames that came with the reply, in the same read).
	 */
	if (strcmp(text, "flush") == 0)
		add_events(o);
	emit(o);
	return 0;
}

/* What run_line says. */
#define LINE_NEXT	0
#define LINE_QUIT	1
#define LINE_TIMEOUT	2
#define LINE_FAILED	(-1)	/* the connection */

static int
run_line(struct pmon *p, unsigned line, char *text)
{
	json_t *o;
	char *arg;
	long ms;
	size_t i;
	int rv;

	if ((arg = strchr(text, ' ')) != NULL)
		arg++;
	if (strcmp(text, "quit") == 0)
		return LINE_QUIT;
	if (strcmp(text, "events") == 0) {
		o = line_obj(line);
		add_events(o);
		emit(o);
		return LINE_NEXT;
	}
	if (strcmp(text, "clear") == 0) {
		for (i = 0; i < nkinds; i++)
			kinds[i].taken = kinds[i].nseen;
		emit(json_pack("{sIsb}", "line", (json_int_t)line, "cleared",
		    1));
		return LINE_NEXT;
	}
	if (strcmp(text, "wait-snapshot") == 0 ||
	    strncmp(text, "wait-notice ", 12) == 0) {
		rv = do_wait(p, line, arg != NULL ? arg : "snapshot");
		return rv == -1 ? LINE_FAILED : rv ? LINE_TIMEOUT : LINE_NEXT;
	}
	if (strncmp(text, "sleep ", 6) == 0) {
		ms = strtol(arg, NULL, 10);
		if (ms < 0 || ms > 60000)
			ms = 0;
		if (dispatch_for(p, (int)ms, NULL, NULL) == -1)
			return LINE_FAILED;
		o = line_obj(line);
		json_object_set_new(o, "slept", json_integer(ms));
		emit(o);
		return LINE_NEXT;
	}
	return do_request(p, line, text) == -1 ? LINE_FAILED : LINE_NEXT;
}

static int
failed(struct pmon *p)
{
	emit(json_pack("{ss}", "fatal", pmon_error(p)));
	return 1;
}

/*
 * Reads stdin and the coordinator at once; runs each complete line.
 * Returns the exit status.
 */
static int
loop(struct pmon *p)
{
	static char buf[LINE_MAX_BYTES];
	struct pollfd pfd[2];
	size_t have = 0;
	unsigned line = 0;
	char *nl;
	ssize_t n;
	int eof = 0, rv;

	pfd[0].fd = STDIN_FILENO;
	pfd[0].events = POLLIN;
	pfd[1].fd = pmon_fd(p);
	pfd[1].events = POLLIN;
	for (;;) {
		while ((nl = memchr(buf, '\n', have)) != NULL ||
		    (eof && have > 0)) {
			if (nl == NULL)
				nl = buf + have++;
			*nl = '\0';
			rv = run_line(p, ++line, buf);
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
			if (rv == LINE_QUIT)
				return 0;
			if (rv == LINE_TIMEOUT)
				return 1;
			if (rv == LINE_FAILED)
				return failed(p);
		}
		if (eof)
			return 0;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pfd[1].revents && pmon_dispatch(p) == -1)
			return failed(p);
		if (!pfd[0].revents)
			continue;
		if (have == sizeof(buf) - 1) {
			fprintf(stderr, "reqtool: line %u too long\n", line + 1);
			return 2;
		}
		if ((n = read(STDIN_FILENO, buf + have,
		    sizeof(buf) - 1 - have)) == -1 && errno != EINTR)
			return 1;
		if (n == 0)
			eof = 1;
		else if (n > 0)
			have += (size_t)n;
	}
}

int
main(int argc, char **argv)
{
	struct pmon_callbacks cb = { .event = on_event, .notice = on_notice,
	    .problem = on_problem, .snapshot = on_snapshot, .bye = on_bye };
	unsigned flags = 0;
	struct pmon *p;
	size_t i;
	int ch, rv;

	while ((ch = getopt(argc, argv, "sw:")) != -1) {
		switch (ch) {
		case 's':
			flags |= PMON_SUBSCRIBE;
			break;
		case 'w':
			wait_ms = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1 || wait_ms <= 0)
		usage();
	if ((p = pmon_new()) == NULL) {
		fprintf(stderr, "reqtool: out of memory\n");
		return 2;
	}
	pmon_set_callbacks(p, &cb, NULL);
	if (pmon_connect(p, NULL, argv[optind], flags) == -1)
		rv = failed(p);
	else
		rv = loop(p);
	pmon_free(p);
	free(counts);
	for (i = 0; i < nkinds; i++) {
		while (kinds[i].nseen > 0)
			json_decref(kinds[i].seen[--kinds[i].nseen]);
		free(kinds[i].seen);
	}
	return rv;
}
