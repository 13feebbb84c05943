/*
 * The lines of pmon trace (doc/events.md): an event or a task as JSON or
 * as text, written straight into the caller's buffer.
 *
 * The JSON writer produces byte for byte what jansson's json_dumpf
 * (JSON_COMPACT) makes of trace_event_json() and trace_task_json(),
 * which stay here for pmon web and as the reference the unit tests hold
 * the writer to: keys in insertion order, integers as %lld, strings
 * escaped as jansson does (\" \\ \b \f \n \r \t, other bytes below 0x20
 * as \u00XX, everything else as it is).  A string that is not valid
 * UTF-8 is one jansson refuses (json_string returns NULL), so its key
 * is left out of the object: the writer leaves it out too.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "pmon-tool.h"
#include "pmon.h"

/*
 * Bytes of an event line besides its strings and tid lists: every key,
 * 20-digit numbers for every integer field, with room to spare.
 */
#define FMT_FIXED	640
/* The most a string byte turns into (\u00XX), and a listed tid. */
#define FMT_PER_BYTE	6
#define FMT_PER_TID	12

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
	case PMON_CALL_HANDLER:		/* it got a message to handle */
		return ROLE_RECV;
	default:
		return ROLE_NONE;
	}
}

static int
is_signal(int call)
{
	return call == PMON_CALL_SIGNAL || call == PMON_CALL_sendsig ||
	    call == PMON_CALL_kill;
}

static int
multi_dest(int call)
{
	return call == PMON_CALL_mcast || call == PMON_CALL_bcast;
}

static int
spawn_end(const struct pmon_event *ev)
{
	return ev->call == PMON_CALL_spawn && ev->phase == PMON_PHASE_END;
}

/* Calls that return a tid (or a host's), which text writes as PVM does. */
static int
returns_tid(const struct pmon_event *ev)
{
	switch (ev->call) {
	case PMON_CALL_mytid:
	case PMON_CALL_parent:
	case PMON_CALL_gettid:
	case PMON_CALL_tidtohost:
		return ev->rc > 0;
	default:
		return 0;
	}
}

size_t
trace_fmt_event_max(const struct pmon_event *ev)
{
	return FMT_FIXED + FMT_PER_BYTE * (strlen(ev->task->host) +
	    strlen(ev->task->program) + strlen(ev->call_name) +
	    strlen(ev->group)) + FMT_PER_TID * (size_t)ev->npeers;
}

size_t
trace_fmt_task_max(const struct pmon_task *t)
{
	return FMT_FIXED + FMT_PER_BYTE * (strlen(t->host) +
	    strlen(t->program));
}

/* --- the pieces ------------------------------------------------------------ */

static char *
put_str(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

/* A string literal, its length known when compiling. */
#define PUT(o, lit)	put_str((o), (lit), sizeof(lit) - 1)

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* The decimal digits of v: from its bit length, then one comparison. */
static unsigned
u64_digits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
		10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
		100000000000ULL, 1000000000000ULL, 10000000000000ULL,
		100000000000000ULL, 1000000000000000ULL,
		10000000000000000ULL, 100000000000000000ULL,
		1000000000000000000ULL, 10000000000000000000ULL
	};
	unsigned t;

	if (v < 10)
		return 1;
	/* 1233 / 4096 is log10(2) to 5 digits: v has t or t + 1 digits. */
	t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	return t + (v >= pow10[t]);
}

/* The two digits of v < 100 before t; returns where they begin. */
static char *
put_pair_before(char *t, uint32_t v)
{
	t[-2] = digit_pairs[2 * v];
	t[-1] = digit_pairs[2 * v + 1];
	return t - 2;
}

/*
 * v in decimal, written from its last digit, two at a time, in 32-bit
 * arithmetic once v fits (eight digits of the 20 at a time before).
 */
char *
trace_fmt_u64(char *o, uint64_t v)
{
	char *end = o + u64_digits(v), *t = end;
	uint32_t w;
	int i;

	while (v >= 100000000) {
		w = (uint32_t)(v % 100000000);
		v /= 100000000;
		for (i = 0; i < 4; i++, w /= 100)
			t = put_pair_before(t, w % 100);
	}
	for (w = (uint32_t)v; w >= 100; w /= 100)
		t = put_pair_before(t, w % 100);
	if (w >= 10)
		put_pair_before(t, w);
	else
		t[-1] = (char)('0' + w);
	return end;
}

/* Signed, as printf's %lld and %d write it. */
char *
trace_fmt_i64(char *o, int64_t v)
{
	if (v >= 0)
		return trace_fmt_u64(o, (uint64_t)v);
	*o++ = '-';
	return trace_fmt_u64(o, -(uint64_t)v);
}

/* PVM writes tids in hex with a t (t40001); -1 is "any". */
static char *
put_tid_text(char *o, int32_t tid)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t v = (uint32_t)tid;
	char tmp[8], *t = tmp + sizeof(tmp);

	if (tid == -1)
		return PUT(o, "any");
	*o++ = 't';
	do {
		*--t = hex[v & 0xf];
		v >>= 4;
	} while (v != 0);
	return put_str(o, t, (size_t)(tmp + sizeof(tmp) - t));
}

/* s, then spaces up to width bytes: printf's %-Ns. */
static char *
put_padded(char *o, const char *s, size_t width)
{
	size_t n = strlen(s);

	o = put_str(o, s, n);
	for (; n < width; n++)
		*o++ = ' ';
	return o;
}

/* --- JSON strings as jansson writes them ------------------------------------- */

/*
 * The length of the UTF-8 sequence at s (n bytes left), or 0 when it is
 * not one: RFC 3629, no overlong forms, no surrogates, nothing above
 * U+10FFFF (jansson's own check).
 */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0xc2 || c > 0xf4)
		return 0;	/* a continuation byte, overlong, too high */
	len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (n < len)
		return 0;
	cp = c & (0x7f >> len);
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

static int
utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, len;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((len = utf8_seq(s + i, n - i)) == 0)
			return 0;
		i += len;
	}
	return 1;
}

/* The bytes a JSON string writes as they are: ASCII from 0x20 but " \. */
static const unsigned char json_plain[256] = {
	['\x20'] = 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['0'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['@'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['P'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	['`'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['p'] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

static char *
put_escaped(char *o, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (json_plain[c] || c >= 0x80) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		default:
			o = PUT(o, "u00");
			*o++ = hex[c >> 4];
			*o++ = hex[c & 0xf];
		}
	}
	return o;
}

/*
 * ,"KEY":"S" (key with its comma and colon given as lit), S escaped, or
 * nothing when S is not UTF-8.  The plain bytes that begin S are copied
 * as they are scanned; only from the first other byte on is the rest
 * checked, then escaped.
 */
static char *
put_kstr(char *o, const char *key, size_t klen, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	char *start = o;
	size_t n;

	o = put_str(o, key, klen);
	*o++ = '"';
	while (json_plain[*u])
		*o++ = (char)*u++;
	if (*u != '\0') {
		n = strlen((const char *)u);
		if (!utf8_valid((const char *)u, n))
			return start;
		o = put_escaped(o, u, n);
	}
	*o++ = '"';
	return o;
}

#define KSTR(o, lit, s)		put_kstr((o), (lit), sizeof(lit) - 1, (s))

/* [a,b,c] */
static char *
put_tids_json(char *o, const int32_t *tids, unsigned n)
{
	unsigned i;

	*o++ = '[';
	for (i = 0; i < n; i++) {
		if (i > 0)
			*o++ = ',';
		o = trace_fmt_i64(o, tids[i]);
	}
	*o++ = ']';
	return o;
}

/* --- JSON events ------------------------------------------------------------ */

/* "TID:SEQ", an event's id as a JSON string. */
char *
trace_fmt_id(char *o, int32_t tid, uint64_t seq)
{
	*o++ = '"';
	o = trace_fmt_i64(o, tid);
	*o++ = ':';
	o = trace_fmt_u64(o, seq);
	*o++ = '"';
	return o;
}

/* The message fields: src and dst by role, tag, bytes, match. */
static char *
put_msg_json(char *o, const struct pmon_event *ev, enum msg_role role)
{
	o = PUT(o, ",\"src\":");
	o = trace_fmt_i64(o, role == ROLE_SEND ? ev->tid : ev->peer);
	o = PUT(o, ",\"dst\":");
	if (role != ROLE_SEND)
		o = trace_fmt_i64(o, ev->tid);
	else if (multi_dest(ev->call))
		o = put_tids_json(o, ev->peers, ev->npeers);
	else
		o = trace_fmt_i64(o, ev->peer);
	o = PUT(o, ",\"tag\":");
	o = trace_fmt_i64(o, ev->tag);
	o = PUT(o, ",\"ctx\":");
	o = trace_fmt_i64(o, ev->ctx);
	o = PUT(o, ",\"bytes\":");
	o = trace_fmt_i64(o, ev->bytes);
	if (ev->flags & PMON_EV_MATCHED) {
		o = PUT(o, ",\"match\":");
		o = trace_fmt_id(o, ev->match_tid, ev->match_seq);
	}
	if (ev->flags & PMON_EV_UNMATCHED)
		o = PUT(o, ",\"unmatched\":true");
	if (ev->flags & PMON_EV_UNMONITORED)
		o = PUT(o, ",\"sender\":\"unmonitored\"");
	if (ev->flags & PMON_EV_MSG)
		o = PUT(o, ",\"msg\":true");
	return o;
}

/*
 * The fields every line has, lost markers included.  TRACE_JSON_BRIEF
 * leaves out what the task's line says (host, program) and what the
 * other fields do (id is tid:seq; tc where it equals t).
 */
static char *
put_base_json(char *o, const struct pmon_event *ev, int flags)
{
	if (flags & TRACE_JSON_BRIEF)
		o = PUT(o, "{\"tid\":");
	else {
		o = PUT(o, "{\"id\":");
		o = trace_fmt_id(o, ev->tid, ev->seq);
		o = PUT(o, ",\"tid\":");
	}
	o = trace_fmt_i64(o, ev->tid);
	if (!(flags & TRACE_JSON_BRIEF)) {
		o = KSTR(o, ",\"host\":", ev->task->host);
		o = KSTR(o, ",\"program\":", ev->task->program);
	}
	o = PUT(o, ",\"seq\":");
	o = trace_fmt_i64(o, (int64_t)ev->seq);
	o = PUT(o, ",\"t\":");
	o = trace_fmt_i64(o, (int64_t)ev->t_ns);
	if (!(flags & TRACE_JSON_BRIEF) || ev->t_corr != ev->t_ns) {
		o = PUT(o, ",\"tc\":");
		o = trace_fmt_i64(o, (int64_t)ev->t_corr);
	}
	if (ev->flags & PMON_EV_INCONSISTENT)
		o = PUT(o, ",\"inconsistent\":true");
	if (ev->flags & PMON_EV_AGAIN)
		o = PUT(o, ",\"again\":true");
	return o;
}

/* The event's line; out has room for trace_fmt_event_max(ev) bytes. */
char *
trace_fmt_event_json(char *o, const struct pmon_event *ev, int flags)
{
	enum msg_role role = msg_role(ev->call);

	o = put_base_json(o, ev, flags);
	if (ev->flags & PMON_EV_LOST) {
		o = PUT(o, ",\"call\":\"lost\",\"count\":");
		o = trace_fmt_u64(o, (uint32_t)ev->bytes);
		return PUT(o, "}\n");
	}
	o = KSTR(o, ",\"call\":", ev->call_name);
	o = ev->phase == PMON_PHASE_BEGIN ? PUT(o, ",\"phase\":\"begin\"") :
	    PUT(o, ",\"phase\":\"end\"");
	if (ev->phase == PMON_PHASE_END) {
		o = PUT(o, ",\"rc\":");
		o = trace_fmt_i64(o, ev->rc);
	}
	if (role != ROLE_NONE)
		o = put_msg_json(o, ev, role);
	else if (ev->peer != -1) {
		o = PUT(o, ",\"peer\":");
		o = trace_fmt_i64(o, ev->peer);
	}
	/* A signal, and the pvm_sendsig or pvm_kill that sent one. */
	if (ev->phase == PMON_PHASE_BEGIN && is_signal(ev->call)) {
		o = PUT(o, ",\"signal\":");
		o = trace_fmt_i64(o, ev->inst);
		if (ev->flags & PMON_EV_PVMD)
			o = PUT(o, ",\"pvmd\":true");
	}
	/* The match of a pvm_recvinfo (the put it read) or a signal. */
	if (role == ROLE_NONE && (ev->flags & PMON_EV_MATCHED)) {
		o = PUT(o, ",\"match\":");
		o = trace_fmt_id(o, ev->match_tid, ev->match_seq);
	}
	if (spawn_end(ev)) {
		o = PUT(o, ",\"children\":");
		o = put_tids_json(o, ev->peers, ev->npeers);
	}
	if (ev->group[0] != '\0') {
		o = KSTR(o, ",\"group\":", ev->group);
		if (ev->inst != -1) {
			o = PUT(o, ",\"inst\":");
			o = trace_fmt_i64(o, ev->inst);
		}
	}
	return PUT(o, "}\n");
}

/* The task's line ("type":"task"); out has trace_fmt_task_max(t). */
char *
trace_fmt_task_json(char *o, const struct pmon_task *t)
{
	o = PUT(o, "{\"type\":\"task\",\"tid\":");
	o = trace_fmt_i64(o, t->tid);
	o = KSTR(o, ",\"host\":", t->host);
	o = KSTR(o, ",\"program\":", t->program);
	o = PUT(o, ",\"pid\":");
	o = trace_fmt_u64(o, t->pid);
	o = PUT(o, ",\"parent\":");
	o = trace_fmt_i64(o, t->parent);
	o = PUT(o, ",\"spawn_seq\":");
	o = trace_fmt_i64(o, (int64_t)t->spawn_seq);
	return PUT(o, "}\n");
}

/* --- text -------------------------------------------------------------------- */

/* [t1 t2 t3] */
static char *
put_tids_text(char *o, const int32_t *tids, unsigned n)
{
	unsigned i;

	*o++ = '[';
	for (i = 0; i < n; i++) {
		if (i > 0)
			*o++ = ' ';
		o = put_tid_text(o, tids[i]);
	}
	*o++ = ']';
	return o;
}

static char *
put_msg_text(char *o, const struct pmon_event *ev, enum msg_role role)
{
	*o++ = ' ';
	o = put_tid_text(o, role == ROLE_SEND ? ev->tid : ev->peer);
	if (role != ROLE_SEND) {
		o = PUT(o, " -> ");
		o = put_tid_text(o, ev->tid);
	} else if (multi_dest(ev->call) && ev->npeers > 0) {
		o = PUT(o, " -> ");
		o = put_tids_text(o, ev->peers, ev->npeers);
	} else if (!multi_dest(ev->call)) {
		o = PUT(o, " -> ");
		o = put_tid_text(o, ev->peer);
	}	/* a multicast's end: its begin lists where it went */
	o = PUT(o, " tag ");
	o = trace_fmt_i64(o, ev->tag);
	if (ev->ctx > 0) {	/* a context of pvm_newcontext */
		o = PUT(o, " ctx ");
		o = trace_fmt_i64(o, ev->ctx);
	}
	if (ev->bytes >= 0) {	/* -1 at a receive's begin */
		*o++ = ' ';
		o = trace_fmt_i64(o, ev->bytes);
		o = PUT(o, " B");
	}
	if (ev->flags & PMON_EV_MATCHED) {
		o = PUT(o, " match ");
		o = put_tid_text(o, ev->match_tid);
		*o++ = ':';
		o = trace_fmt_u64(o, ev->match_seq);
	}
	if (ev->flags & PMON_EV_UNMONITORED)
		o = PUT(o, " from an unmonitored task");
	else if (ev->flags & PMON_EV_UNMATCHED)
		o = PUT(o, " unmatched");
	return o;
}

/* n, below 10^width, in width digits with leading zeros. */
static char *
put_zeros(char *o, uint64_t n, unsigned width)
{
	char *e = o + width;

	while (e > o) {
		*--e = (char)('0' + n % 10);
		n /= 10;
	}
	return o + width;
}

/*
 * The event's time in the clock's mode: seconds since the first event
 * (rel), the local time of day (abs) or the corrected time in ns (tc),
 * all from tc, the one timeline of every host; then a blank.
 */
static char *
put_time(char *o, const struct pmon_event *ev, struct trace_clock *clk)
{
	uint64_t t = ev->t_corr;
	time_t sec;
	struct tm tm;
	char *s = o;

	switch (clk->mode) {
	case TRACE_TIME_NONE:
		return o;
	case TRACE_TIME_TC:
		o = trace_fmt_u64(o, t);
		break;
	case TRACE_TIME_ABS:
		sec = (time_t)(t / 1000000000);
		if (sec != clk->sec || clk->hms[0] == '\0') {
			clk->sec = sec;
			if (localtime_r(&sec, &tm) == NULL ||
			    strftime(clk->hms, sizeof(clk->hms), "%H:%M:%S",
			    &tm) == 0)
				memcpy(clk->hms, "??:??:??", 9);
		}
		o = put_str(o, clk->hms, strlen(clk->hms));
		*o++ = '.';
		o = put_zeros(o, t % 1000000000, 9);
		break;
	default:
		if (!clk->started) {
			clk->started = 1;
			clk->t0 = t;
		}
		t = t > clk->t0 ? t - clk->t0 : 0;
		o = trace_fmt_u64(o, t / 1000000000);
		*o++ = '.';
		o = put_zeros(o, t % 1000000000, 9);
	}
	while (o - s < 13)
		*o++ = ' ';
	*o++ = ' ';
	return o;
}

/* id, time, host and program in their columns. */
static char *
put_head_text(char *o, const struct pmon_event *ev, struct trace_clock *clk)
{
	char id[40], *e;

	e = put_tid_text(id, ev->tid);
	*e++ = ':';
	e = trace_fmt_u64(e, ev->seq);
	*e = '\0';
	o = put_padded(o, id, 14);
	*o++ = ' ';
	if (clk != NULL)
		o = put_time(o, ev, clk);
	o = put_padded(o, ev->task->host, 10);
	*o++ = ' ';
	o = put_padded(o, ev->task->program, 10);
	*o++ = ' ';
	return o;
}

/*
 * The event's line for people; out has trace_fmt_event_max(ev).  clk
 * NULL: no time column.
 */
char *
trace_fmt_event_text(char *o, const struct pmon_event *ev,
    struct trace_clock *clk)
{
	enum msg_role role = msg_role(ev->call);

	o = put_head_text(o, ev, clk);
	if (ev->flags & PMON_EV_LOST) {
		o = PUT(o, "LOST ");
		o = trace_fmt_u64(o, (uint32_t)ev->bytes);
		o = PUT(o, " events");
		if (ev->flags & PMON_EV_AGAIN)
			o = PUT(o, " again");
		*o++ = '\n';
		return o;
	}
	o = put_padded(o, ev->call_name, 13);
	*o++ = ' ';
	o = put_padded(o, ev->phase == PMON_PHASE_BEGIN ? "begin" : "end", 5);
	if (role != ROLE_NONE)
		o = put_msg_text(o, ev, role);
	else if (ev->peer != -1) {
		o = PUT(o, " peer ");
		o = put_tid_text(o, ev->peer);
	}
	if (ev->phase == PMON_PHASE_BEGIN && is_signal(ev->call)) {
		o = PUT(o, " signal ");
		o = trace_fmt_i64(o, ev->inst);
		if (ev->flags & PMON_EV_PVMD)
			o = PUT(o, " from pvmd");
	}
	if (role == ROLE_NONE && (ev->flags & PMON_EV_MATCHED)) {
		o = PUT(o, " match ");
		o = put_tid_text(o, ev->match_tid);
		*o++ = ':';
		o = trace_fmt_u64(o, ev->match_seq);
	}
	if (spawn_end(ev)) {
		o = PUT(o, " children ");
		o = put_tids_text(o, ev->peers, ev->npeers);
	}
	if (ev->group[0] != '\0') {
		o = PUT(o, " group ");
		o = put_str(o, ev->group, strlen(ev->group));
		if (ev->inst != -1) {
			o = PUT(o, " inst ");
			o = trace_fmt_i64(o, ev->inst);
		}
	}
	if (ev->phase == PMON_PHASE_END) {
		o = PUT(o, " rc ");
		o = returns_tid(ev) ? put_tid_text(o, ev->rc) :
		    trace_fmt_i64(o, ev->rc);
	}
	if (ev->flags & PMON_EV_AGAIN)
		o = PUT(o, " again");
	*o++ = '\n';
	return o;
}

char *
trace_fmt_task_text(char *o, const struct pmon_task *t)
{
	o = PUT(o, "task ");
	o = put_tid_text(o, t->tid);
	*o++ = ' ';
	o = put_str(o, t->host, strlen(t->host));
	*o++ = ' ';
	o = put_str(o, t->program, strlen(t->program));
	o = PUT(o, " pid ");
	o = trace_fmt_u64(o, t->pid);
	if (t->parent > 0) {
		o = PUT(o, " parent ");
		o = put_tid_text(o, t->parent);
		if (t->spawn_seq != 0) {
			o = PUT(o, " spawned at ");
			o = put_tid_text(o, t->parent);
			*o++ = ':';
			o = trace_fmt_u64(o, t->spawn_seq);
		}
	}
	*o++ = '\n';
	return o;
}

/* --- the same objects in jansson (pmon web, and the writer's reference) ---- */

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
	if (ev->flags & PMON_EV_UNMONITORED)
		json_set(o, "sender", json_string("unmonitored"));
	if (ev->flags & PMON_EV_MSG)
		json_set(o, "msg", json_true());
}

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
	if (ev->flags & PMON_EV_AGAIN)
		json_set(o, "again", json_true());
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
	if (ev->phase == PMON_PHASE_BEGIN && is_signal(ev->call)) {
		json_set(o, "signal", json_integer(ev->inst));
		if (ev->flags & PMON_EV_PVMD)
			json_set(o, "pvmd", json_true());
	}
	if (role == ROLE_NONE && (ev->flags & PMON_EV_MATCHED))
		json_set(o, "match", json_id(ev->match_tid, ev->match_seq));
	if (spawn_end(ev))
		json_set(o, "children", json_tids(ev->peers, ev->npeers));
	if (ev->group[0] != '\0') {
		json_set(o, "group", json_string(ev->group));
		if (ev->inst != -1)
			json_set(o, "inst", json_integer(ev->inst));
	}
	return o;
}

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
