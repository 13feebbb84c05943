/*
 * pmon trace's direct line writers (tools/trace_fmt.c) write byte for
 * byte what the trace printed before them: each JSON line is what
 * jansson's json_dumps(JSON_COMPACT) makes of the same object
 * (trace_event_json, trace_task_json), each text line what the former
 * printf calls (copied below as the reference) made.  Every call, phase
 * and event flag, the lost marker, matched and unmatched receives,
 * multicast destinations, spawn children, groups, the integer limits,
 * and strings that need escaping: control bytes, quotes, backslashes,
 * UTF-8, and bytes from 0x80 that are not UTF-8, which jansson refuses
 * (json_string returns NULL, so the key is left out of the object).  No
 * line goes past trace_fmt_*_max.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmon-tool.h"
#include "pmon.h"
#include "record.h"
#include "unit.h"

/* Past a line's end, the writer must leave these bytes alone. */
#define CANARY		0xa5
#define CANARY_LEN	64

static int failures_shown;

/* Prints the first few differences in full: a count alone says little. */
static void
show_diff(const char *what, const char *want, size_t wlen, const char *got,
    size_t glen)
{
	if (failures_shown++ >= 5)
		return;
	fprintf(stderr, "\n%s differs:\n want %zu: %.*s got  %zu: %.*s", what,
	    wlen, (int)wlen, want, glen, (int)glen, got);
}

/* The writer's line into a buffer of exactly max bytes and a canary. */
static size_t
write_line(char **buf, size_t max, char *(*fn)(char *, const void *),
    const void *obj)
{
	char *end;
	size_t i, n;
	int intact = 1;

	*buf = malloc(max + CANARY_LEN);
	CU_ASSERT_FATAL(*buf != NULL);
	memset(*buf, CANARY, max + CANARY_LEN);
	end = fn(*buf, obj);
	n = (size_t)(end - *buf);
	CU_ASSERT(n <= max);
	for (i = 0; i < CANARY_LEN; i++)
		intact &= (unsigned char)(*buf)[max + i] == CANARY;
	CU_ASSERT(intact);
	return n;
}

/* Adapters: the writers take typed objects. */
static char *
w_event_json(char *o, const void *ev)
{
	return trace_fmt_event_json(o, ev, 0);
}

static char *
w_event_brief(char *o, const void *ev)
{
	return trace_fmt_event_json(o, ev, TRACE_JSON_BRIEF);
}

static char *
w_event_text(char *o, const void *ev)
{
	return trace_fmt_event_text(o, ev, NULL);
}

static char *
w_task_json(char *o, const void *t)
{
	return trace_fmt_task_json(o, t);
}

static char *
w_task_text(char *o, const void *t)
{
	return trace_fmt_task_text(o, t);
}

/* Compares a written line with the reference; returns 1 when equal. */
static int
expect_line(const char *what, const char *want, size_t wlen, const char *got,
    size_t glen)
{
	if (wlen == glen && memcmp(want, got, wlen) == 0)
		return 1;
	show_diff(what, want, wlen, got, glen);
	CU_FAIL("line differs from the reference");
	return 0;
}

/* jansson's line: the object dumped compact, then a newline. */
static char *
jansson_line(json_t *o, size_t *len)
{
	char *s = json_dumps(o, JSON_COMPACT), *line;

	json_decref(o);
	CU_ASSERT_FATAL(s != NULL);
	*len = strlen(s) + 1;
	line = malloc(*len + 1);
	CU_ASSERT_FATAL(line != NULL);
	memcpy(line, s, *len - 1);
	line[*len - 1] = '\n';
	line[*len] = '\0';
	free(s);
	return line;
}

/* --- the reference text lines: the printf calls pmon trace made ---------- */

static const char *
ref_tidstr(int32_t tid, char *buf, size_t size)
{
	if (tid == -1)
		snprintf(buf, size, "any");
	else
		snprintf(buf, size, "t%x", (unsigned)tid);
	return buf;
}

static void
ref_tids(FILE *f, const int32_t *tids, unsigned n)
{
	char b[16];
	unsigned i;

	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? " " : "", ref_tidstr(tids[i], b,
		    sizeof(b)));
	fputc(']', f);
}

static int
ref_role(int call)
{
	switch (call) {
	case PMON_CALL_send: case PMON_CALL_psend: case PMON_CALL_mcast:
	case PMON_CALL_bcast:
		return 1;
	case PMON_CALL_recv: case PMON_CALL_trecv: case PMON_CALL_nrecv:
	case PMON_CALL_precv: case PMON_CALL_probe: case PMON_CALL_HANDLER:
		return 2;
	default:
		return 0;
	}
}

static void
ref_msg_text(FILE *f, const struct pmon_event *ev, int role)
{
	char a[16], b[16];

	if (role == 1) {
		fprintf(f, " %s", ref_tidstr(ev->tid, a, sizeof(a)));
		if (ev->call != PMON_CALL_mcast && ev->call != PMON_CALL_bcast)
			fprintf(f, " -> %s", ref_tidstr(ev->peer, b,
			    sizeof(b)));
		else if (ev->npeers > 0) {
			fputs(" -> ", f);
			ref_tids(f, ev->peers, ev->npeers);
		}
	} else
		fprintf(f, " %s -> %s", ref_tidstr(ev->peer, a, sizeof(a)),
		    ref_tidstr(ev->tid, b, sizeof(b)));
	fprintf(f, " tag %d", ev->tag);
	if (ev->ctx > 0)
		fprintf(f, " ctx %d", ev->ctx);
	if (ev->bytes >= 0)
		fprintf(f, " %d B", ev->bytes);
	if (ev->flags & PMON_EV_MATCHED)
		fprintf(f, " match %s:%llu", ref_tidstr(ev->match_tid, a,
		    sizeof(a)), (unsigned long long)ev->match_seq);
	if (ev->flags & PMON_EV_UNMONITORED)
		fprintf(f, " from an unmonitored task");
	else if (ev->flags & PMON_EV_UNMATCHED)
		fprintf(f, " unmatched");
}

static char *
ref_event_text(const struct pmon_event *ev, size_t *len)
{
	int role = ref_role(ev->call);
	char id[40], b[16], *s;
	FILE *f = open_memstream(&s, len);

	CU_ASSERT_FATAL(f != NULL);
	snprintf(id, sizeof(id), "%s:%llu", ref_tidstr(ev->tid, b, sizeof(b)),
	    (unsigned long long)ev->seq);
	fprintf(f, "%-14s %-10s %-10s ", id, ev->task->host,
	    ev->task->program);
	if (ev->flags & PMON_EV_LOST)
		fprintf(f, "LOST %u events", (uint32_t)ev->bytes);
	else {
		fprintf(f, "%-13s %-5s", ev->call_name,
		    ev->phase == PMON_PHASE_BEGIN ? "begin" : "end");
		if (role != 0)
			ref_msg_text(f, ev, role);
		else if (ev->peer != -1)
			fprintf(f, " peer %s", ref_tidstr(ev->peer, b,
			    sizeof(b)));
		if (ev->phase == PMON_PHASE_BEGIN &&
		    (ev->call == PMON_CALL_SIGNAL ||
		    ev->call == PMON_CALL_sendsig ||
		    ev->call == PMON_CALL_kill))
			fprintf(f, " signal %d%s", ev->inst,
			    ev->flags & PMON_EV_PVMD ? " from pvmd" : "");
		if (role == 0 && (ev->flags & PMON_EV_MATCHED))
			fprintf(f, " match %s:%llu", ref_tidstr(ev->match_tid,
			    b, sizeof(b)), (unsigned long long)ev->match_seq);
		if (ev->call == PMON_CALL_spawn &&
		    ev->phase == PMON_PHASE_END) {
			fprintf(f, " children ");
			ref_tids(f, ev->peers, ev->npeers);
		}
		if (ev->group[0] != '\0')
			fprintf(f, " group %s", ev->group);
		if (ev->group[0] != '\0' && ev->inst != -1)
			fprintf(f, " inst %d", ev->inst);
		if (ev->phase == PMON_PHASE_END && ev->rc > 0 &&
		    (ev->call == PMON_CALL_mytid ||
		    ev->call == PMON_CALL_parent ||
		    ev->call == PMON_CALL_gettid ||
		    ev->call == PMON_CALL_tidtohost))
			fprintf(f, " rc t%x", (unsigned)ev->rc);
		else if (ev->phase == PMON_PHASE_END)
			fprintf(f, " rc %d", ev->rc);
	}
	fputc('\n', f);
	fclose(f);
	return s;
}

static char *
ref_task_text(const struct pmon_task *t, size_t *len)
{
	char a[16], b[16], *s;
	FILE *f = open_memstream(&s, len);

	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "task %s %s %s pid %u", ref_tidstr(t->tid, a, sizeof(a)),
	    t->host, t->program, t->pid);
	if (t->parent > 0)
		fprintf(f, " parent %s", ref_tidstr(t->parent, b, sizeof(b)));
	if (t->parent > 0 && t->spawn_seq != 0)
		fprintf(f, " spawned at %s:%llu", b,
		    (unsigned long long)t->spawn_seq);
	fputc('\n', f);
	fclose(f);
	return s;
}

/* --- checking one event or task, both forms ------------------------------ */

/*
 * Holds both writers of one object to their references: jansson's dump
 * of the JSON object (which it owns), the printf line (which it frees).
 */
static int
check_both(const char *what, const void *obj, size_t max, json_t *json,
    char *text, size_t tlen, char *(*wjson)(char *, const void *),
    char *(*wtext)(char *, const void *))
{
	size_t wlen, glen;
	char *want, *got;
	int ok;

	want = jansson_line(json, &wlen);
	glen = write_line(&got, max, wjson, obj);
	ok = expect_line(what, want, wlen, got, glen);
	free(want);
	free(got);
	glen = write_line(&got, max, wtext, obj);
	ok &= expect_line(what, text, tlen, got, glen);
	free(text);
	free(got);
	return ok;
}

static int
check_event(const struct pmon_event *ev)
{
	size_t tlen;
	char *text = ref_event_text(ev, &tlen);

	json_t *brief = trace_event_json(ev);
	size_t wlen, glen;
	char *want, *got;
	int ok;

	/* pmon web's line: the same without what the task's line says. */
	json_object_del(brief, "id");
	json_object_del(brief, "host");
	json_object_del(brief, "program");
	if (ev->t_corr == ev->t_ns)
		json_object_del(brief, "tc");
	want = jansson_line(brief, &wlen);
	glen = write_line(&got, trace_fmt_event_max(ev), w_event_brief, ev);
	ok = expect_line("brief event", want, wlen, got, glen);
	free(want);
	free(got);
	return check_both("event", ev, trace_fmt_event_max(ev),
	    trace_event_json(ev), text, tlen, w_event_json, w_event_text) && ok;
}

static int
check_task(const struct pmon_task *t)
{
	size_t tlen;
	char *text = ref_task_text(t, &tlen);

	return check_both("task", t, trace_fmt_task_max(t),
	    trace_task_json(t), text, tlen, w_task_json, w_task_text);
}

static struct pmon_task task0 = {
	.tid = 0x40001, .parent = 0, .pid = 4242, .spawn_seq = 0,
	.host = "vm", .program = "master1"
};

static void
event_init(struct pmon_event *ev, int call, int phase)
{
	memset(ev, 0, sizeof(*ev));
	ev->tid = 0x40001;
	ev->seq = 17;
	ev->t_ns = 1700000000123456789ULL;
	ev->t_corr = 1700000000123459999ULL;
	ev->call = call;
	ev->call_name = record_call_name((unsigned)call);
	ev->phase = phase;
	ev->rc = phase == PMON_PHASE_END ? 5 : 0;
	ev->peer = -1;
	ev->tag = -1;
	ev->bytes = -1;
	ev->inst = -1;
	ev->group = "";
	ev->task = &task0;
}

/* --- the tests ---------------------------------------------------------- */

/* Every call in both phases, with and without partners, lists, groups. */
static void
test_every_call(void)
{
	static const int32_t peers[3] = { 0x40002, 0x80003, -1 };
	static const int flags[] = { 0, PMON_EV_MATCHED | PMON_EV_MSG,
	    PMON_EV_UNMATCHED, PMON_EV_MSG, PMON_EV_INCONSISTENT,
	    PMON_EV_UNMATCHED | PMON_EV_MSG | PMON_EV_INCONSISTENT,
	    PMON_EV_MATCHED | PMON_EV_PVMD, PMON_EV_PVMD };
	struct pmon_event ev;
	unsigned call, f;
	int phase, variant, bad = 0;

	for (call = 1; call < PMON_CALL_MAX; call++)
		for (phase = 0; phase < 2; phase++)
			for (f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
				for (variant = 0; variant < 4; variant++) {
					event_init(&ev, (int)call, phase);
					ev.flags = flags[f];
					ev.match_tid = 0x40002;
					ev.match_seq = 3;
					if (variant & 1) {
						ev.peer = 0x40002;
						ev.tag = 7;
						ev.ctx = 3;
						ev.bytes = 420;
						ev.npeers = 3;
						ev.peers = peers;
					}
					if (variant & 2) {
						ev.group = "workers";
						ev.inst = variant & 1 ? 2 : -1;
					}
					bad += !check_event(&ev);
				}
	CU_ASSERT(bad == 0);
}

/* Lost markers: the count is the record's bytes, unsigned. */
static void
test_lost(void)
{
	static const int32_t counts[] = { 0, 1, 31, 0x7fffffff, -1, -2 };
	struct pmon_event ev;
	size_t i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		event_init(&ev, PMON_CALL_LOST, PMON_PHASE_BEGIN);
		ev.flags = PMON_EV_LOST | (i & 1 ? PMON_EV_INCONSISTENT : 0);
		ev.bytes = counts[i];
		CU_ASSERT(check_event(&ev));
	}
}

/* The line of ev with the clock, as a string to free. */
static char *
timed_line(const struct pmon_event *ev, struct trace_clock *clk)
{
	char *buf = malloc(trace_fmt_event_max(ev) + 1), *e;

	CU_ASSERT_FATAL(buf != NULL);
	e = trace_fmt_event_text(buf, ev, clk);
	*e = '\0';
	return buf;
}

/*
 * The time column after the id: seconds since the first event (rel),
 * the time of day (abs), tc in ns, or none; all from tc, never the
 * host's own t.
 */
static void
test_time(void)
{
	struct trace_clock rel = { .mode = TRACE_TIME_REL };
	struct trace_clock tc = { .mode = TRACE_TIME_TC };
	struct trace_clock abs = { .mode = TRACE_TIME_ABS };
	struct trace_clock none = { .mode = TRACE_TIME_NONE };
	uint64_t t0 = 1795000000123456789ULL;	/* 2026-11-19 */
	struct pmon_event ev;
	char want[64], hms[16], *l, *plain;
	time_t sec = (time_t)(t0 / 1000000000);
	struct tm tm;

	event_init(&ev, PMON_CALL_mytid, PMON_PHASE_BEGIN);
	ev.t_ns = 7;
	ev.t_corr = t0;
	l = timed_line(&ev, &rel);
	CU_ASSERT(strstr(l, " 0.000000000   ") == l + 14);
	free(l);
	ev.t_corr = t0 + 12 * 1000000000ULL + 5;
	l = timed_line(&ev, &rel);
	CU_ASSERT(strstr(l, " 12.000000005  ") == l + 14);
	free(l);
	l = timed_line(&ev, &tc);
	snprintf(want, sizeof(want), " %llu ",
	    (unsigned long long)ev.t_corr);
	CU_ASSERT(strstr(l, want) == l + 14);
	free(l);
	ev.t_corr = t0;
	localtime_r(&sec, &tm);
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	snprintf(want, sizeof(want), " %s.123456789 ", hms);
	l = timed_line(&ev, &abs);
	CU_ASSERT(strstr(l, want) == l + 14);
	free(l);
	/* Without a column, the line is the one without a clock. */
	l = timed_line(&ev, &none);
	plain = timed_line(&ev, NULL);
	CU_ASSERT_STRING_EQUAL(l, plain);
	free(l);
	free(plain);
}

/*
 * Problems and notices in words (render.c), as pmon trace and pmon
 * watch print them: each notice of doc/control.md, a deadlock over.
 */
static void
test_words(void)
{
	static const struct {
		const char	*json;
		const char	*line;
	} cases[] = {
		{ "{\"notice\":\"attached\",\"tool\":3,\"name\":\"pmon-gdb\"}",
		    "notice: tool 3 (pmon-gdb) attached\n" },
		{ "{\"notice\":\"stopped\",\"tool\":3,\"tasks\":[262146],"
		    "\"breakpoint\":2}",
		    "notice: task t40002 stopped by tool 3 at breakpoint 2\n" },
		{ "{\"notice\":\"killed\",\"tool\":0,\"tasks\":[262146,"
		    "262147]}", "notice: tasks t40002 t40003 killed\n" },
		{ "{\"notice\":\"breakpoint\",\"tool\":3,\"id\":2,\"what\":"
		    "\"added\",\"text\":\"on enter pvm_send tag 3 do stop *\"}",
		    "notice: breakpoint 2 added by tool 3: on enter pvm_send "
		    "tag 3 do stop *\n" },
		{ "{\"notice\":\"hit\",\"breakpoint\":2,\"tid\":262146,"
		    "\"hits\":1}", "notice: breakpoint 2 hit by t40002 (1 hits)\n" },
		{ "{\"notice\":\"unmonitored\",\"tid\":262145,\"parent\":0,"
		    "\"pid\":4711,\"host\":\"vm\",\"program\":\"outsider\"}",
		    "notice: t40001 runs unmonitored: outsider, pid 4711 on vm\n" },
		{ "{\"notice\":\"host_deleted\",\"host_tid\":524288,"
		    "\"host\":\"node2\"}",
		    "notice: host node2 (t80000) left the virtual machine\n" },
		{ "{\"notice\":\"degraded\",\"tool\":5,\"name\":\"pmon-trace\"}",
		    "notice: tool 5 (pmon-trace) did not keep up and is now "
		    "lossy\n" },
		{ "{\"notice\":\"lost\",\"tool\":5,\"events\":67172,"
		    "\"problems\":0,\"tasks\":[{\"tid\":262147,\"first\":4100,"
		    "\"last\":40020,\"events\":35921}]}",
		    "notice: tool 5 lost 67172 events and 0 problems: t40003 "
		    "4100-40020 (35921)\n" },
		{ "{\"notice\":\"new\",\"x\":1}", "notice: {\"notice\":\"new\","
		    "\"x\":1}\n" },
	};
	char *buf;
	size_t len, i;
	FILE *fp;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf = NULL;
		fp = open_memstream(&buf, &len);
		CU_ASSERT_FATAL(fp != NULL);
		render_stream_object(fp, "notice", cases[i].json,
		    strlen(cases[i].json));
		fclose(fp);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].line);
		free(buf);
	}
}

/* Spawn children and multicast lists, empty, long, with odd tids. */
static void
test_lists(void)
{
	static int32_t peers[RECORD_PEERS_MAX];
	static const int calls[] = { PMON_CALL_spawn, PMON_CALL_mcast,
	    PMON_CALL_bcast };
	static const unsigned lens[] = { 0, 1, 2, 17, RECORD_PEERS_MAX };
	struct pmon_event ev;
	size_t c, l;
	unsigned i;

	for (i = 0; i < RECORD_PEERS_MAX; i++)
		peers[i] = i % 3 == 0 ? INT32_MIN + (int32_t)i :
		    i % 3 == 1 ? INT32_MAX - (int32_t)i : 0x40000 + (int32_t)i;
	for (c = 0; c < sizeof(calls) / sizeof(calls[0]); c++)
		for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			event_init(&ev, calls[c], PMON_PHASE_END);
			ev.npeers = lens[l];
			ev.peers = peers;
			CU_ASSERT(check_event(&ev));
			ev.phase = PMON_PHASE_BEGIN;
			CU_ASSERT(check_event(&ev));
		}
}

/* Every power of ten and its neighbours, the limits of every type. */
static void
test_integers(void)
{
	struct pmon_event ev;
	struct pmon_task t = task0;
	uint64_t v = 1, vals[3];
	int k, j, bad = 0;

	for (k = 0; k < 20; k++, v *= 10) {
		vals[0] = v - 1;
		vals[1] = v;
		vals[2] = v + 1;
		for (j = 0; j < 3; j++) {
			event_init(&ev, PMON_CALL_recv, PMON_PHASE_END);
			ev.flags = PMON_EV_MATCHED | PMON_EV_MSG;
			ev.seq = vals[j];
			ev.t_ns = ~vals[j];
			ev.t_corr = vals[j] * 7;
			ev.match_seq = vals[j];
			ev.tid = ev.peer = ev.match_tid = (int32_t)vals[j];
			ev.rc = ev.tag = ev.bytes = -(int32_t)vals[j];
			ev.ctx = ev.inst = (int32_t)(vals[j] >> 3);
			ev.group = "g";
			bad += !check_event(&ev);
			t.tid = t.parent = (int32_t)vals[j];
			t.pid = (uint32_t)vals[j];
			t.spawn_seq = vals[j];
			bad += !check_task(&t);
		}
	}
	event_init(&ev, PMON_CALL_send, PMON_PHASE_END);
	ev.seq = ev.t_ns = ev.t_corr = UINT64_MAX;	/* negative in JSON */
	ev.tid = ev.peer = INT32_MIN;
	ev.rc = ev.tag = ev.ctx = ev.bytes = INT32_MAX;
	bad += !check_event(&ev);
	ev.seq = (uint64_t)INT64_MAX + 1;
	ev.tid = ev.peer = -1;
	ev.rc = ev.tag = ev.ctx = ev.bytes = INT32_MIN;
	bad += !check_event(&ev);
	CU_ASSERT(bad == 0);
}

/* A string in every place one goes: host, program, group. */
static int
check_string(const char *s)
{
	struct pmon_task t = task0;
	struct pmon_event ev;
	int ok;

	t.host = s;
	t.program = s;
	ok = check_task(&t);
	t.host = "h";
	ok &= check_task(&t);
	event_init(&ev, PMON_CALL_joingroup, PMON_PHASE_END);
	ev.task = &t;
	ev.group = s;
	ev.inst = 1;
	ok &= check_event(&ev);
	return ok;
}

/* Each byte alone and amid plain text; the escapes jansson writes. */
static void
test_escapes(void)
{
	static const char *const strings[] = {
		"", "plain", "quote\"d", "back\\slash", "slash/",
		"tab\there", "nl\n", "\r\b\f\x01\x1f\x7f", "caf\xc3\xa9",
		"\xe2\x82\xac euro", "\xf0\x9d\x84\x9e clef", "\xef\xbf\xbf",
		"\xf4\x8f\xbf\xbf", "\x80", "a\xc0\x80", "\xc1\xbf",
		"\xed\xa0\x80", "\xed\x9f\xbf", "\xf4\x90\x80\x80",
		"\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xe2\x82", "\xff",
		"\xf5\x80\x80\x80", "ok\xc3", "\"\\\x1b[0m\xc3\xa9\x80"
	};
	char s[8];
	size_t i;
	int c, bad = 0;

	for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		bad += !check_string(strings[i]);
	for (c = 1; c < 256; c++) {
		snprintf(s, sizeof(s), "a%cb", c);
		bad += !check_string(s);
		snprintf(s, sizeof(s), "%c", c);
		bad += !check_string(s);
	}
	CU_ASSERT(bad == 0);
}

/*
 * Which byte sequences are UTF-8 decides whether a key is written: all
 * two-byte strings, and three- and four-byte ones over the bytes where
 * the rules change, from every byte that may begin a longer sequence.
 */
static void
test_utf8_decisions(void)
{
	static const unsigned char edge[] = { 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
	    0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x41, 0x7f, 0x80, 0x8f, 0x90,
	    0x9f, 0xa0, 0xbf };
	const size_t ne = sizeof(edge), nlead = 11;
	struct pmon_task t = task0;
	char s[5];
	size_t a, b, c, d;
	int bad = 0;

	for (a = 1; a < 256; a++)
		for (b = 1; b < 256; b++) {
			s[0] = (char)a;
			s[1] = (char)b;
			s[2] = '\0';
			t.host = s;
			bad += !check_task(&t);
		}
	for (a = 0; a < nlead; a++)
		for (b = 0; b < ne; b++)
			for (c = 0; c < ne; c++)
				for (d = 0; d < ne; d++) {
					s[0] = (char)edge[a];
					s[1] = (char)edge[b];
					s[2] = (char)edge[c];
					s[3] = (char)edge[d];
					s[4] = '\0';
					t.program = s;
					bad += !check_task(&t);
					s[3] = '\0';
					bad += !check_task(&t);
				}
	CU_ASSERT(bad == 0);
}

/* xorshift: the same pseudo-random events on every run. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Mostly short plain names, sometimes any bytes. */
static void
rnd_string(char *s, size_t size)
{
	size_t n = rnd() % (size - 1), i;
	int wild = rnd() % 4 == 0;

	for (i = 0; i < n; i++)
		s[i] = wild ? (char)(1 + rnd() % 255) : (char)('a' + rnd() % 26);
	s[n] = '\0';
}

static void
test_random(void)
{
	static int32_t peers[64];
	char host[16], prog[16], group[16];
	struct pmon_task t;
	struct pmon_event ev;
	int i, bad = 0;
	unsigned k;

	for (i = 0; i < 20000 && bad < 5; i++) {
		rnd_string(host, sizeof(host));
		rnd_string(prog, sizeof(prog));
		rnd_string(group, sizeof(group));
		t = task0;
		t.host = host;
		t.program = prog;
		t.tid = (int32_t)rnd();
		t.parent = rnd() % 2 ? (int32_t)rnd() : 0;
		t.spawn_seq = rnd() % 2 ? rnd() : rnd() % 100;
		bad += !check_task(&t);
		event_init(&ev, 1 + (int)(rnd() % (PMON_CALL_MAX - 1)),
		    (int)(rnd() % 2));
		ev.task = &t;
		ev.tid = (int32_t)rnd();
		ev.seq = rnd() >> (rnd() % 64);
		ev.t_ns = rnd();
		ev.t_corr = rnd() % 2 ? rnd() : ev.t_ns;
		ev.flags = (int)(rnd() % 32);
		ev.rc = (int32_t)rnd();
		ev.peer = rnd() % 3 ? (int32_t)rnd() : -1;
		ev.tag = (int32_t)(rnd() >> (rnd() % 32));
		ev.ctx = (int32_t)rnd();
		ev.bytes = (int32_t)(rnd() >> (rnd() % 32));
		ev.inst = rnd() % 3 ? (int32_t)rnd() : -1;
		ev.match_tid = (int32_t)rnd();
		ev.match_seq = rnd();
		ev.group = group;
		ev.npeers = (unsigned)(rnd() % 65);
		for (k = 0; k < ev.npeers; k++)
			peers[k] = (int32_t)rnd();
		ev.peers = peers;
		bad += !check_event(&ev);
	}
	CU_ASSERT(bad == 0);
}

static CU_TestInfo trace_fmt_tests[] = {
	{ "every call, phase and flag", test_every_call },
	{ "lost markers", test_lost },
	{ "the time column", test_time },
	{ "notices in words", test_words },
	{ "destination and children lists", test_lists },
	{ "integers at every width and limit", test_integers },
	{ "escaped strings", test_escapes },
	{ "UTF-8 decides which keys are written", test_utf8_decisions },
	{ "random events and tasks", test_random },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo trace_fmt_suites[] = {
	{ "trace_fmt", NULL, NULL, NULL, NULL, trace_fmt_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(trace_fmt_suites)
