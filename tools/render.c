/*
 * The words pmon prints for what the coordinator says in JSON (it
 * answers in JSON only, doc/requests.md): the tables of pmon ps, hosts,
 * groups, queues, mailbox, snapshot, problems, tools and tasks, the
 * results of stop, continue and kill, the breakpoint requests' answers,
 * and the problems and notices of the stream as pmon trace and pmon
 * watch print them.  A wait is written one way everywhere
 * (render_wait).
 *
 * Each renderer reads the reply with jansson and writes its lines to a
 * buffer first: a reply it cannot read (a coordinator of another
 * version, say) prints nothing but an error, never half a table.
 */
#include <sys/syscall.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <pvm3.h>

#include "pmon-tool.h"

/* --- fields -------------------------------------------------------- */

static long long
num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static unsigned long long
unum(const json_t *o, const char *key)
{
	return (unsigned long long)num(o, key);
}

/* A string field; "" when missing. */
static const char *
str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* A name for a table: "-" when the model has none. */
static const char *
name(const json_t *o, const char *key)
{
	const char *s = str(o, key);

	return s[0] != '\0' ? s : "-";
}

/* An event's id "TID:SEQ"; -1 if s is not one. */
static int
parse_id(const char *s, unsigned *tid, unsigned long long *seq)
{
	long long t;
	char *end;

	if (s == NULL)
		return -1;
	t = strtoll(s, &end, 10);
	if (end == s || *end != ':')
		return -1;
	s = end + 1;
	*seq = strtoull(s, &end, 10);
	if (end == s || *end != '\0')
		return -1;
	*tid = (unsigned)t;
	return 0;
}

/* An id field as t40001:5; -1 if it is not one. */
static int
put_id(FILE *fp, const json_t *o, const char *key)
{
	unsigned long long seq;
	unsigned tid;

	if (parse_id(json_string_value(json_object_get(o, key)), &tid,
	    &seq) == -1)
		return -1;
	fprintf(fp, "t%x:%llu", tid, seq);
	return 0;
}

/* --- problems ------------------------------------------------------ */

static int
problem_waits_on_exited(FILE *fp, const json_t *p)
{
	if (!json_is_integer(json_object_get(p, "exited")))
		return -1;
	fprintf(fp, "t%x waits in %s on t%x, which exited",
	    (unsigned)num(p, "tid"), str(p, "in"), (unsigned)num(p, "exited"));
	return 0;
}

static int
problem_unreceived(FILE *fp, const json_t *p)
{
	fprintf(fp, "t%x exited with a message from t%x unreceived: tag %lld, "
	    "%lld B, send ", (unsigned)num(p, "tid"), (unsigned)num(p, "from"),
	    num(p, "tag"), num(p, "bytes"));
	return put_id(fp, p, "send");
}

static int
problem_race(FILE *fp, const json_t *p)
{
	const json_t *sends = json_object_get(p, "sends");
	unsigned long long s1, s2;
	unsigned t1, t2;

	if (json_array_size(sends) != 2 ||
	    parse_id(json_string_value(json_array_get(sends, 0)), &t1,
	    &s1) == -1 ||
	    parse_id(json_string_value(json_array_get(sends, 1)), &t2,
	    &s2) == -1)
		return -1;
	fprintf(fp, "t%x: wildcard receive ", (unsigned)num(p, "tid"));
	if (put_id(fp, p, "recv") == -1)
		return -1;
	fprintf(fp, " got t%x:%llu, t%x:%llu could have come first", t1, s1,
	    t2, s2);
	return 0;
}

static int
problem_unpack(FILE *fp, const json_t *p)
{
	const json_t *packed = json_object_get(p, "packed");

	fprintf(fp, "t%x: %s at ", (unsigned)num(p, "tid"),
	    str(p, "unpacked"));
	if (put_id(fp, p, "at") == -1)
		return -1;
	fprintf(fp, ", %llu B into the message of send ", unum(p, "offset"));
	if (put_id(fp, p, "send") == -1)
		return -1;
	fprintf(fp, " (tag %lld), ", num(p, "tag"));
	if (json_is_string(packed))
		fprintf(fp, "where %s was packed", json_string_value(packed));
	else
		fputs("past its end", fp);
	return 0;
}

/*
 * Where a task waits, the one notation of every view (pmon ps, top,
 * problems, trace): the call with what it waits for, as a program
 * would write it but without blanks, so that a table stays columns:
 * pvm_recv(t40002,any), pvm_recv(any,5), pvm_barrier(grp).  w is a
 * task's "blocked" object or a deadlock's wait.
 */
void
render_wait(FILE *fp, const json_t *w)
{
	long long from = num(w, "from"), tag = num(w, "tag");

	if (json_object_get(w, "from") == NULL) {
		fprintf(fp, "%s(%.32s)", str(w, "in"), str(w, "group"));
		return;
	}
	fprintf(fp, "%s(", str(w, "in"));
	if (from == -1)
		fputs("any,", fp);
	else
		fprintf(fp, "t%x,", (unsigned)from);
	if (tag == -1)
		fputs("any)", fp);
	else
		fprintf(fp, "%lld)", tag);
}

static int
problem_deadlock(FILE *fp, const json_t *p)
{
	const json_t *tasks = json_object_get(p, "tasks");
	const json_t *waits = json_object_get(p, "waits"), *v;
	size_t i;

	if (!json_is_array(tasks) || !json_is_array(waits))
		return -1;
	json_array_foreach(tasks, i, v)
		fprintf(fp, "%st%x", i ? " " : "",
		    (unsigned)json_integer_value(v));
	fputc(':', fp);
	json_array_foreach(waits, i, v) {
		fprintf(fp, " t%x in ", (unsigned)num(v, "tid"));
		render_wait(fp, v);
	}
	return 0;
}

/*
 * One problem's line: its kind (in a column width wide; "deadlock
 * (over)" once no longer the case), then what it is in words.  A problem
 * of a kind this pmon does not know shows its JSON instead.
 */
void
render_problem(FILE *fp, const json_t *p, int width)
{
	static const struct {
		const char	*kind;
		int		(*text)(FILE *, const json_t *);
	} kinds[] = {
		{ "deadlock", problem_deadlock },
		{ "waits_on_exited", problem_waits_on_exited },
		{ "unreceived", problem_unreceived },
		{ "race", problem_race },
		{ "unpack_mismatch", problem_unpack },
	};
	const char *kind = str(p, "kind");
	char *buf = NULL, *js, col[64];
	size_t len = 0, i;
	int rv = -1;
	FILE *tx;

	snprintf(col, sizeof(col), "%s%s", kind[0] != '\0' ? kind : "?",
	    json_is_true(json_object_get(p, "over")) ? " (over)" : "");

	if ((tx = open_memstream(&buf, &len)) != NULL) {
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (strcmp(kind, kinds[i].kind) == 0)
				rv = kinds[i].text(tx, p);
		if (fclose(tx) != 0)
			rv = -1;
	}
	if (rv == 0)
		fprintf(fp, "%-*s %s\n", width, col, buf);
	else if ((js = json_dumps(p, JSON_COMPACT)) != NULL) {
		fprintf(fp, "%-*s %s\n", width, col, js);
		free(js);
	}
	free(buf);
}

/* --- the state's tables --------------------------------------------- */

/* A task's state is "unmonitored", or "ended" once such a task ended. */
static int
task_unmonitored(const json_t *t)
{
	return strcmp(str(t, "state"), "unmonitored") == 0 ||
	    strcmp(str(t, "state"), "ended") == 0;
}

/*
 * Where a task is, for the WHERE column of pmon ps and top: blocked in
 * a call (render_wait), killed by another task (by t40002), or "-".
 */
void
render_where(const json_t *t, char *buf, size_t len)
{
	const json_t *b = json_object_get(t, "blocked");
	unsigned long long seq;
	char *w = NULL;
	size_t wlen = 0;
	unsigned tid;
	FILE *fp;

	snprintf(buf, len, "-");
	if (b != NULL) {
		if ((fp = open_memstream(&w, &wlen)) == NULL)
			return;
		render_wait(fp, b);
		if (fclose(fp) == 0)
			snprintf(buf, len, "%s", w);
		free(w);
	} else if (strcmp(str(t, "state"), "killed") == 0 &&
	    parse_id(json_string_value(json_object_get(t, "killed_by")), &tid,
	    &seq) == 0)
		snprintf(buf, len, "by t%x", tid);
}

static void
table_tasks(FILE *fp, const json_t *tasks)
{
	char where[64], sent[48], recv[48];
	const json_t *t, *s, *r;
	size_t i;

	if (json_array_size(tasks) == 0) {
		fputs("no tasks\n", fp);
		return;
	}
	fprintf(fp, "%-9s %-12s %-14s %-11s %-24s %-14s %-14s %s\n", "TID",
	    "HOST", "PROGRAM", "STATE", "WHERE", "SENT", "RECV", "LOST");
	json_array_foreach(tasks, i, t) {
		s = json_object_get(t, "sent");
		r = json_object_get(t, "received");
		snprintf(sent, sizeof(sent), "%llu/%lluB", unum(s, "msgs"),
		    unum(s, "bytes"));
		snprintf(recv, sizeof(recv), "%llu/%lluB", unum(r, "msgs"),
		    unum(r, "bytes"));
		if (task_unmonitored(t))	/* nothing of it is seen */
			strcpy(sent, "-"), strcpy(recv, "-");
		render_where(t, where, sizeof(where));
		fprintf(fp, "t%-8x %-12s %-14s %-11s %-24s %-14s %-14s %llu\n",
		    (unsigned)num(t, "tid"), name(t, "host"), name(t, "program"),
		    str(t, "state"), where, sent, recv, unum(t, "lost"));
	}
}

static void
table_hosts(FILE *fp, const json_t *hosts)
{
	const json_t *h;
	size_t i;

	if (json_array_size(hosts) == 0) {
		fputs("no hosts\n", fp);
		return;
	}
	fprintf(fp, "%-9s %-20s %-10s %s\n", "HOST", "NAME", "ARCH", "AGENT");
	json_array_foreach(hosts, i, h)
		fprintf(fp, "t%-8x %-20s %-10s %s%s%s\n",
		    (unsigned)num(h, "host_tid"), str(h, "name"),
		    str(h, "arch"), str(h, "agent"),
		    str(h, "via")[0] != '\0' ? " via " : "", str(h, "via"));
}

static void
table_groups(FILE *fp, const json_t *groups)
{
	const json_t *g, *m, *waiting;
	size_t i, j;

	if (json_array_size(groups) == 0) {
		fputs("no groups\n", fp);
		return;
	}
	fprintf(fp, "%-16s %s\n", "GROUP", "MEMBERS (TID:INST) / BARRIER");
	json_array_foreach(groups, i, g) {
		fprintf(fp, "%-16s", str(g, "name"));
		json_array_foreach(json_object_get(g, "members"), j, m)
			fprintf(fp, " t%x:%lld", (unsigned)num(m, "tid"),
			    num(m, "inst"));
		waiting = json_object_get(json_object_get(g, "barrier"),
		    "waiting");
		if (json_array_size(waiting) > 0) {
			fputs(" / barrier:", fp);
			json_array_foreach(waiting, j, m)
				fprintf(fp, " t%x",
				    (unsigned)json_integer_value(m));
		}
		fputc('\n', fp);
	}
}

static int
table_queues(FILE *fp, const json_t *queues)
{
	const json_t *q, *m;
	size_t i, j, n = 0;

	json_array_foreach(queues, i, q)
		n += json_array_size(json_object_get(q, "messages"));
	if (n == 0) {
		fputs("no messages queued\n", fp);
		return 0;
	}
	fprintf(fp, "%-9s %-9s %-6s %-8s %s\n", "TID", "FROM", "TAG", "BYTES",
	    "SEND");
	json_array_foreach(queues, i, q)
		json_array_foreach(json_object_get(q, "messages"), j, m) {
			fprintf(fp, "t%-8x t%-8x %-6lld %-8lld ",
			    (unsigned)num(q, "tid"), (unsigned)num(m, "from"),
			    num(m, "tag"), num(m, "bytes"));
			if (put_id(fp, m, "send") == -1)
				return -1;
			fputc('\n', fp);
		}
	return 0;
}

static void
table_traffic(FILE *fp, const json_t *traffic)
{
	const json_t *p;
	size_t i;

	if (json_array_size(traffic) == 0) {
		fputs("no messages sent\n", fp);
		return;
	}
	fprintf(fp, "%-9s %-9s %-8s %s\n", "FROM", "TO", "MSGS", "BYTES");
	json_array_foreach(traffic, i, p)
		fprintf(fp, "t%-8x t%-8x %-8llu %llu\n", (unsigned)num(p, "from"),
		    (unsigned)num(p, "to"), unum(p, "msgs"), unum(p, "bytes"));
}

static void
table_mailbox(FILE *fp, const json_t *mailbox)
{
	const json_t *e;
	long long flags;
	size_t i;

	if (json_array_size(mailbox) == 0) {
		fputs("the mailbox is empty\n", fp);
		return;
	}
	fprintf(fp, "%-16s %-6s %-9s %-10s %s\n", "NAME", "INDEX", "OWNER",
	    "BYTES", "FLAGS");
	json_array_foreach(mailbox, i, e) {
		flags = num(e, "flags");
		fprintf(fp, "%-16s %-6lld t%-8x %-10lld %s%s%s\n",
		    str(e, "name"), num(e, "index"), (unsigned)num(e, "owner"),
		    num(e, "bytes"), flags & PvmMboxPersistent ? "persistent " :
		    "", flags & PvmMboxMultiInstance ? "multi " : "",
		    flags & PvmMboxOverWritable ? "overwritable" : "");
	}
}

static void
table_problems(FILE *fp, const json_t *doc, const json_t *problems)
{
	const json_t *p;
	size_t i;
	int over;

	if (json_array_size(problems) == 0 &&
	    unum(doc, "problems_not_kept") == 0)
		fputs("no problems\n", fp);
	if (unum(doc, "races_unchecked") > 0)
		fprintf(fp, "%llu race check%s not made: the causality they "
		    "needed was beyond the horizon (pmon start -H)\n",
		    unum(doc, "races_unchecked"),
		    unum(doc, "races_unchecked") == 1 ? "" : "s");
	/* The problems of now first, then those over, each in order. */
	for (over = 0; over < 2; over++)
		json_array_foreach(problems, i, p)
			if (json_is_true(json_object_get(p, "over")) == over)
				render_problem(fp, p, 15);
	if (unum(doc, "problems_not_kept") > 0)
		fprintf(fp, "... and %llu more, not kept (each was sent to the "
		    "tools when found)\n", unum(doc, "problems_not_kept"));
}

/*
 * A state reply (ps, hosts, groups, queues, mailbox, problems,
 * snapshot): each part it holds as a table, a blank line between parts.
 */
static int
render_state(FILE *fp, const json_t *doc)
{
	static const char *const parts[] = { "hosts", "tasks", "groups",
	    "queues", "traffic", "mailbox", "problems" };
	const json_t *v;
	size_t i;
	int n = 0;

	if (!json_is_object(json_object_get(doc, "position")))
		return -1;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if ((v = json_object_get(doc, parts[i])) == NULL)
			continue;
		if (!json_is_array(v))
			return -1;
		if (n++ > 0)
			fputc('\n', fp);
		switch (i) {
		case 0: table_hosts(fp, v); break;
		case 1: table_tasks(fp, v); break;
		case 2: table_groups(fp, v); break;
		case 3: if (table_queues(fp, v) == -1) return -1; break;
		case 4: table_traffic(fp, v); break;
		case 5: table_mailbox(fp, v); break;
		default: table_problems(fp, doc, v); break;
		}
	}
	return 0;
}

/* --- notices ----------------------------------------------------------- */

/* " t40002 t40003" */
static void
put_tids(FILE *fp, const json_t *tids)
{
	const json_t *v;
	size_t i;

	json_array_foreach(tids, i, v)
		fprintf(fp, " t%x", (unsigned)json_integer_value(v));
}

/* "tool 3 (pmon-gdb)", "tool 3", or "no tool" (tool 0). */
static void
put_tool(FILE *fp, const json_t *n)
{
	if (num(n, "tool") == 0)
		fputs("no tool", fp);
	else if (str(n, "name")[0] != '\0')
		fprintf(fp, "tool %u (%s)", (unsigned)num(n, "tool"),
		    str(n, "name"));
	else
		fprintf(fp, "tool %u", (unsigned)num(n, "tool"));
}

/* stopped, continued, killed: the tasks, who did it, and why. */
static void
notice_tasks(FILE *fp, const json_t *n, const char *what)
{
	fputs("task", fp);
	if (json_array_size(json_object_get(n, "tasks")) != 1)
		fputc('s', fp);
	put_tids(fp, json_object_get(n, "tasks"));
	fprintf(fp, " %s", what);
	if (num(n, "tool") != 0) {	/* 0: a command's, nobody's */
		fputs(" by ", fp);
		put_tool(fp, n);
	}
	if (num(n, "breakpoint") != 0)
		fprintf(fp, " at breakpoint %u", (unsigned)num(n, "breakpoint"));
}

/* A lost notice: how many events, and each task's gap. */
static void
notice_lost(FILE *fp, const json_t *n)
{
	const json_t *t;
	size_t i;

	put_tool(fp, n);
	fprintf(fp, " lost %llu events and %llu problems", unum(n, "events"),
	    unum(n, "problems"));
	json_array_foreach(json_object_get(n, "tasks"), i, t)
		fprintf(fp, "%s t%x %llu-%llu (%llu)", i ? "," : ":",
		    (unsigned)num(t, "tid"), unum(t, "first"), unum(t, "last"),
		    unum(t, "events"));
}

/*
 * A notice (doc/control.md) in words, one line: what a tool did, a
 * breakpoint that fired, a task pmon does not instrument, a host that
 * left, what this tool lost.  One this pmon does not know shows its
 * JSON.
 */
void
render_notice(FILE *fp, const json_t *n)
{
	const char *what = str(n, "notice");
	char *js;

	if (strcmp(what, "attached") == 0 || strcmp(what, "detached") == 0 ||
	    strcmp(what, "degraded") == 0) {
		put_tool(fp, n);
		fprintf(fp, " %s", strcmp(what, "degraded") == 0 ?
		    "did not keep up and is now lossy" : what);
	} else if (strcmp(what, "stopped") == 0 ||
	    strcmp(what, "continued") == 0 || strcmp(what, "killed") == 0)
		notice_tasks(fp, n, what);
	else if (strcmp(what, "breakpoint") == 0) {
		fprintf(fp, "breakpoint %u %s by ", (unsigned)num(n, "id"),
		    str(n, "what"));
		put_tool(fp, n);
		fprintf(fp, ": %s", str(n, "text"));
	} else if (strcmp(what, "hit") == 0)
		fprintf(fp, "breakpoint %u hit by t%x (%llu hits)",
		    (unsigned)num(n, "breakpoint"), (unsigned)num(n, "tid"),
		    unum(n, "hits"));
	else if (strcmp(what, "unmonitored") == 0)
		fprintf(fp, "t%x runs unmonitored: %s, pid %llu on %s",
		    (unsigned)num(n, "tid"), name(n, "program"), unum(n, "pid"),
		    name(n, "host"));
	else if (strcmp(what, "unmonitored_ended") == 0)
		fprintf(fp, "unmonitored t%x ended", (unsigned)num(n, "tid"));
	else if (strcmp(what, "host_deleted") == 0)
		fprintf(fp, "host %s (t%x) left the virtual machine",
		    str(n, "host"), (unsigned)num(n, "host_tid"));
	else if (strcmp(what, "lost") == 0)
		notice_lost(fp, n);
	else if ((js = json_dumps(n, JSON_COMPACT)) != NULL) {
		fputs(js, fp);
		free(js);
	}
	fputc('\n', fp);
}

/*
 * A problem or a notice as it comes in the stream (JSON, len bytes), as
 * pmon trace and pmon watch print it: "problem: KIND WORDS" or "notice:
 * WORDS", one line.
 */
void
render_stream_object(FILE *fp, const char *type, const char *json,
    size_t len)
{
	json_t *o = json_loadb(json, len, 0, NULL);

	fprintf(fp, "%s: ", type);
	if (!json_is_object(o)) {
		fwrite(json, 1, len, fp);
		fputc('\n', fp);
	} else if (strcmp(type, "problem") == 0)
		render_problem(fp, o, 0);
	else
		render_notice(fp, o);
	json_decref(o);
}

/* --- the other replies ----------------------------------------------- */

static int
render_tools(FILE *fp, const json_t *doc)
{
	const json_t *tools = json_object_get(doc, "tools"), *t;
	size_t i;

	if (!json_is_array(tools))
		return -1;
	fprintf(fp, "%4s %-16s %-9s %10s %10s %6s %9s\n", "TOOL", "NAME",
	    "STREAM", "QUEUED", "LOST", "HOLDS", "HELD_MS");
	json_array_foreach(tools, i, t)
		fprintf(fp, "%4u %-16.16s %-9s %10llu %10llu %6llu %9llu\n",
		    (unsigned)num(t, "tool"), str(t, "name"), str(t, "stream"),
		    unum(t, "queued"), unum(t, "lost"), unum(t, "holds"),
		    unum(t, "held_ms"));
	return 0;
}

/* A process state letter of /proc/PID/stat, in words. */
static const char *
proc_state(const char *letter)
{
	static const struct {
		char		 c;
		const char	*word;
	} states[] = {
		{ 'R', "running" }, { 'S', "sleeping" }, { 'D', "disk" },
		{ 'T', "stopped" }, { 't', "traced" }, { 'Z', "zombie" },
		{ 'X', "dead" }, { 'I', "idle" },
	};
	size_t i;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (letter[0] == states[i].c)
			return states[i].word;
	return letter[0] != '\0' ? letter : "?";
}

/*
 * The system call a task sleeps in (/proc/PID/syscall), by name: the
 * ones a PVM task waits in, and the number for the others.
 */
static const char *
syscall_name(long long nr, char *buf, size_t size)
{
#define SC(name)	{ SYS_##name, #name }
	static const struct {
		long		 nr;
		const char	*name;
	} calls[] = {
		SC(read), SC(write), SC(readv), SC(writev), SC(ppoll),
		SC(pselect6), SC(epoll_pwait), SC(nanosleep),
		SC(clock_nanosleep), SC(wait4), SC(waitid), SC(futex),
		SC(accept4), SC(connect), SC(recvfrom), SC(recvmsg),
		SC(sendto), SC(sendmsg), SC(rt_sigsuspend),
		SC(rt_sigtimedwait), SC(msgrcv), SC(semtimedop),
#ifdef SYS_select
		SC(select), SC(poll), SC(epoll_wait), SC(accept), SC(pause),
#endif
	};
#undef SC
	size_t i;

	if (nr < 0)
		return "-";		/* running, or not readable */
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (calls[i].nr == nr)
			return calls[i].name;
	snprintf(buf, size, "syscall %lld", nr);
	return buf;
}

/*
 * "tasks": what the model and /proc say of each task, a row each; a
 * target without one says why.
 */
static int
render_proc(FILE *fp, const json_t *doc)
{
	const json_t *tasks = json_object_get(doc, "tasks"), *t, *pr;
	char cpu[48], sc[32];
	size_t i;
	int head = 0;

	if (!json_is_array(tasks))
		return -1;
	if (json_array_size(tasks) == 0)
		fputs("no tasks\n", fp);
	json_array_foreach(tasks, i, t) {
		if ((pr = json_object_get(t, "proc")) == NULL) {
			fprintf(fp, "%s: %s\n", str(t, "object"),
			    str(t, "error"));
			continue;
		}
		if (!head++)
			fprintf(fp, "%-9s %-14s %-11s %-9s %7s %-13s %9s %s\n",
			    "TID", "PROGRAM", "STATE", "PROCESS", "THREADS",
			    "CPU_MS(U+S)", "RSS_KB", "SLEEPS_IN");
		snprintf(cpu, sizeof(cpu), "%llu+%llu", unum(pr, "utime_ms"),
		    unum(pr, "stime_ms"));
		fprintf(fp, "t%-8x %-14s %-11s %-9s %7llu %-13s %9llu %s\n",
		    (unsigned)num(t, "tid"), name(t, "program"),
		    str(t, "state"), proc_state(str(pr, "state")),
		    unum(pr, "threads"), cpu, unum(pr, "rss_kb"),
		    syscall_name(num(pr, "syscall"), sc, sizeof(sc)));
	}
	return 0;
}

/*
 * Stop, continue, kill: a line per target, "OBJECT: stopped" or
 * "OBJECT: error" (a task of a host, a group or * as "OBJECT tTID:
 * ..."); RENDER_FAILED if any target failed.
 */
static int
render_results(FILE *fp, const json_t *doc)
{
	const json_t *results = json_object_get(doc, "results"), *r;
	const char *obj, *err;
	int rv = RENDER_OK;
	size_t i;

	if (!json_is_array(results))
		return -1;
	json_array_foreach(results, i, r) {
		obj = str(r, "object");
		err = json_string_value(json_object_get(r, "error"));
		if (err != NULL)
			rv = RENDER_FAILED;
		if (json_is_integer(json_object_get(r, "tid")) && obj[0] != 't')
			fprintf(fp, "%s t%x: ", obj, (unsigned)num(r, "tid"));
		else
			fprintf(fp, "%s: ", obj);
		fprintf(fp, "%s\n", err != NULL ? err : str(r, "status"));
	}
	return rv;
}

static int
render_breakpoints(FILE *fp, const json_t *doc)
{
	const json_t *bps = json_object_get(doc, "breakpoints"), *b;
	size_t i;

	if (!json_is_array(bps))
		return -1;
	if (json_array_size(bps) == 0)
		fputs("no breakpoints\n", fp);
	json_array_foreach(bps, i, b)
		fprintf(fp, "%u\t%s\ttool %u\t%llu hits\t%s\n",
		    (unsigned)num(b, "id"), json_is_true(json_object_get(b,
		    "enabled")) ? "on" : "off", (unsigned)num(b, "tool"),
		    unum(b, "hits"), str(b, "text"));
	return 0;
}

/* on, stopline: the new breakpoint's number. */
static int
render_added(FILE *fp, const json_t *doc)
{
	if (!json_is_integer(json_object_get(doc, "id")))
		return -1;
	fprintf(fp, "breakpoint %u\n", (unsigned)num(doc, "id"));
	return 0;
}

/* enable, disable, delete. */
static int
render_done(FILE *fp, const json_t *doc)
{
	(void)doc;
	fputs("ok\n", fp);
	return 0;
}

/* flush: nothing to say once it is done. */
static int
render_nothing(FILE *fp, const json_t *doc)
{
	(void)fp;
	(void)doc;
	return 0;
}

static const struct {
	const char	*kind;		/* the request's first word */
	int		(*render)(FILE *, const json_t *);
} renderers[] = {
	{ "snapshot", render_state },
	{ "ps", render_state },
	{ "hosts", render_state },
	{ "groups", render_state },
	{ "problems", render_state },
	{ "queues", render_state },
	{ "mailbox", render_state },
	{ "tools", render_tools },
	{ "tasks", render_proc },
	{ "stop", render_results },
	{ "continue", render_results },
	{ "kill", render_results },
	{ "breakpoints", render_breakpoints },
	{ "on", render_added },
	{ "stopline", render_added },
	{ "enable", render_done },
	{ "disable", render_done },
	{ "delete", render_done },
	{ "flush", render_nothing },
};

/*
 * Writes the text for the reply to request (its JSON, len bytes) to fp
 * (NULL: only judges it): RENDER_OK, RENDER_FAILED when it says that
 * some target failed, or -1 (with nothing written) when the reply is
 * not one the request has.
 * The reply to a request without a table (frontier, and any this pmon
 * does not know) is written as it came.
 */
int
render_reply(FILE *fp, const char *request, const char *reply, size_t len)
{
	int (*render)(FILE *, const json_t *) = NULL;
	char *buf = NULL;
	size_t n, blen = 0, i;
	json_t *doc;
	FILE *tx;
	int rv = -1;

	request += strspn(request, " \t\n");
	n = strcspn(request, " \t\n");
	for (i = 0; i < sizeof(renderers) / sizeof(renderers[0]); i++)
		if (strlen(renderers[i].kind) == n &&
		    strncmp(request, renderers[i].kind, n) == 0)
			render = renderers[i].render;
	if (render == NULL) {
		if (fp != NULL && len > 0) {
			fwrite(reply, 1, len, fp);
			if (reply[len - 1] != '\n')
				fputc('\n', fp);
		}
		return RENDER_OK;
	}
	if ((doc = json_loadb(reply, len, 0, NULL)) == NULL ||
	    !json_is_object(doc) || (tx = open_memstream(&buf, &blen)) == NULL) {
		json_decref(doc);
		return -1;
	}
	rv = render(tx, doc);
	if (fclose(tx) != 0)
		rv = -1;
	if (rv != -1 && fp != NULL)
		fwrite(buf, 1, blen, fp);
	free(buf);
	json_decref(doc);
	return rv;
}
