/*
 * The request language (request.h, doc/requests.md): a recursive-descent
 * parser over the words of one line, and its inverse.
 *
 * The lexer yields words and commas: a word is a run of bytes that are
 * neither blanks (space, tab) nor commas, a comma is a token of its own,
 * so blanks around commas do not matter.  Control bytes are refused
 * before anything else, so that no error quotes one.  Every error names
 * the 1-based column of the token it is about, or the column just past
 * the text when something is missing at its end.
 *
 * One place needs two tokens of lookahead: in an action, "stop 1, 2"
 * continues the object list while "stop 1, notify" starts the next
 * action.  No action keyword is an object, so the word after the comma
 * decides.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "record.h"
#include "request.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

/* At most this many bytes of a token are quoted in an error. */
#define REQ_QUOTE_MAX	32

struct tok {
	const char	*s;		/* NULL at the end of the text */
	size_t		 len;
	unsigned	 col;		/* 1-based */
};

/* printf arguments that quote a token: "%.*s". */
#define TOKQ(t)	\
	(int)((t)->len < REQ_QUOTE_MAX ? (t)->len : REQ_QUOTE_MAX), (t)->s

struct parser {
	const char	*text;
	const char	*p;		/* just past tok */
	struct tok	 tok;		/* the current token */
	char		*err;
	size_t		 errsize;
};

static const char *const kind_names[] = {
	[REQ_SNAPSHOT] = "snapshot",
	[REQ_PS] = "ps",
	[REQ_HOSTS] = "hosts",
	[REQ_GROUPS] = "groups",
	[REQ_PROBLEMS] = "problems",
	[REQ_QUEUES] = "queues",
	[REQ_FRONTIER] = "frontier",
	[REQ_TASKS] = "tasks",
	[REQ_BREAKPOINTS] = "breakpoints",
	[REQ_STOP] = "stop",
	[REQ_CONTINUE] = "continue",
	[REQ_KILL] = "kill",
	[REQ_FLUSH] = "flush",
	[REQ_STOPLINE] = "stopline",
	[REQ_ON] = "on",
	[REQ_ENABLE] = "enable",
	[REQ_DISABLE] = "disable",
	[REQ_DELETE] = "delete",
	[REQ_TOOLS] = "tools",
	[REQ_MAILBOX] = "mailbox",
};

#define F_ALL	(REQ_F_TASKS | REQ_F_PEER | REQ_F_TAG | REQ_F_CTX | REQ_F_GROUP)

/* Each trigger: its word, the filters it takes, whether a call follows. */
static const struct {
	const char	*name;
	unsigned	 filters;
	int		 call;
} triggers[] = {
	[REQ_TRIG_ENTER] =	{ "enter", F_ALL, 1 },
	[REQ_TRIG_LEAVE] =	{ "leave", F_ALL, 1 },
	[REQ_TRIG_SPAWN] =	{ "spawn", REQ_F_TASKS, 0 },
	[REQ_TRIG_EXIT] =	{ "exit", REQ_F_TASKS, 0 },
	[REQ_TRIG_RECV] =	{ "recv", REQ_F_TASKS | REQ_F_PEER | REQ_F_TAG |
				    REQ_F_CTX, 0 },
	[REQ_TRIG_DEADLOCK] =	{ "deadlock", REQ_F_TASKS, 0 },
	[REQ_TRIG_RACE] =	{ "race", REQ_F_TASKS, 0 },
	[REQ_TRIG_PROBLEM] =	{ "problem", REQ_F_TASKS, 0 },
};

/* The filters, in the order req_format() writes them. */
static const struct {
	const char	*name;
	unsigned	 flag;
} filters[] = {
	{ "task",	REQ_F_TASKS },
	{ "peer",	REQ_F_PEER },
	{ "tag",	REQ_F_TAG },
	{ "ctx",	REQ_F_CTX },
	{ "group",	REQ_F_GROUP },
};

static const char *const action_names[] = {
	[REQ_ACT_STOP] = "stop",
	[REQ_ACT_CONTINUE] = "continue",
	[REQ_ACT_FLUSH] = "flush",
	[REQ_ACT_SNAPSHOT] = "snapshot",
	[REQ_ACT_NOTIFY] = "notify",
	[REQ_ACT_COUNT] = "count",
};

/* --- the lexer --- */

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Reads the token at or after p into *t; returns where it ends. */
static const char *
scan(const char *text, const char *p, struct tok *t)
{
	while (is_blank(*p))
		p++;
	t->col = (unsigned)(p - text) + 1;
	t->s = NULL;
	t->len = 0;
	if (*p == '\0')
		return p;
	t->s = p;
	if (*p == ',')
		p++;
	else
		while (*p != '\0' && *p != ',' && !is_blank(*p))
			p++;
	t->len = (size_t)(p - t->s);
	return p;
}

static void
advance(struct parser *ps)
{
	ps->p = scan(ps->text, ps->p, &ps->tok);
}

/* The token after the current one. */
static struct tok
peek(const struct parser *ps)
{
	struct tok t;

	scan(ps->text, ps->p, &t);
	return t;
}

static int
is_word(const struct tok *t, const char *w)
{
	return t->s != NULL && t->len == strlen(w) &&
	    memcmp(t->s, w, t->len) == 0;
}

static int
is_comma(const struct tok *t)
{
	return t->s != NULL && t->s[0] == ',';
}

/* A word, not a comma or the end. */
static int
at_word(const struct tok *t)
{
	return t->s != NULL && t->s[0] != ',';
}

static int
has_prefix(const struct tok *t, const char *prefix)
{
	size_t n = strlen(prefix);

	return t->s != NULL && t->len >= n && memcmp(t->s, prefix, n) == 0;
}

/* Index of the word t in names[n], or -1. */
static int
lookup(const struct tok *t, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && is_word(t, names[i]))
			return (int)i;
	return -1;
}

static int	fail(struct parser *, unsigned col, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/* Writes "column COL: ..." into the error buffer; returns -1. */
static int
fail(struct parser *ps, unsigned col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->errsize == 0)
		return -1;
	n = snprintf(ps->err, ps->errsize, "column %u: ", col);
	if (n < 0 || (size_t)n >= ps->errsize)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ps->err + n, ps->errsize - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Refuses control bytes anywhere (a tab is a blank). */
static int
check_bytes(struct parser *ps)
{
	const unsigned char *p;

	for (p = (const unsigned char *)ps->text; *p != '\0'; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return fail(ps, (unsigned)(p -
			    (const unsigned char *)ps->text) + 1,
			    "unexpected byte 0x%02x", *p);
	return 0;
}

/* --- numbers --- */

static int
digit(char c, unsigned base)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (base == 16 && c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (base == 16 && c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The value of len digits of base: -1 when there are none or one is not
 * a digit, -2 when the value is above max.
 */
static int
digits(const char *s, size_t len, unsigned base, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;
	int d, over = 0;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if ((d = digit(s[i], base)) == -1)
			return -1;
		if (x > (max - (unsigned)d) / base)
			over = 1;
		else
			x = x * base + (unsigned)d;
	}
	if (over)
		return -2;
	*v = x;
	return 0;
}

static int
hex_prefix(const char *s, size_t len)
{
	return len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* A tid: decimal, 0x hex or t hex; positive and an int32. */
static int
parse_tid(const char *s, size_t len, int32_t *tid)
{
	uint64_t v;
	int rv;

	if (len > 1 && s[0] == 't')
		rv = digits(s + 1, len - 1, 16, INT32_MAX, &v);
	else if (hex_prefix(s, len))
		rv = digits(s + 2, len - 2, 16, INT32_MAX, &v);
	else
		rv = digits(s, len, 10, INT32_MAX, &v);
	if (rv != 0 || v == 0)
		return -1;
	*tid = (int32_t)v;
	return 0;
}

/*
 * The value of a filter that takes a number (tag, ctx): decimal or 0x
 * hex, 0 to INT32_MAX.  filter is the filter's token.
 */
static int
parse_int(struct parser *ps, const struct tok *filter, int32_t *out)
{
	const struct tok *t = &ps->tok;
	uint64_t v;
	int rv, neg;

	neg = at_word(t) && t->s[0] == '-' && t->len > 1 &&
	    digit(t->s[1], 10) != -1;
	if (!at_word(t) || (!neg && digit(t->s[0], 10) == -1))
		return fail(ps, filter->col, "filter \"%.*s\" needs a number",
		    TOKQ(filter));
	if (neg)
		rv = digits(t->s + 1, t->len - 1, 10, UINT64_MAX, &v) == -1 ?
		    -1 : -2;
	else if (hex_prefix(t->s, t->len))
		rv = digits(t->s + 2, t->len - 2, 16, INT32_MAX, &v);
	else
		rv = digits(t->s, t->len, 10, INT32_MAX, &v);
	if (rv == -1)
		return fail(ps, t->col, "\"%.*s\" is not a number", TOKQ(t));
	if (rv == -2)
		return fail(ps, t->col, "\"%.*s\" is out of range (0 to %d)",
		    TOKQ(t), INT32_MAX);
	*out = (int32_t)v;
	advance(ps);
	return 0;
}

/* TASK:SEQ, for the request what ("frontier"). */
static int
parse_event(struct parser *ps, struct req *r, const char *what)
{
	const struct tok *t = &ps->tok;
	const char *colon;

	if (!at_word(t))
		return fail(ps, t->col, "%s needs an event, TASK:SEQ", what);
	colon = memchr(t->s, ':', t->len);
	if (colon == NULL ||
	    parse_tid(t->s, (size_t)(colon - t->s), &r->tid) == -1 ||
	    digits(colon + 1, t->len - (size_t)(colon + 1 - t->s), 10,
	    UINT64_MAX, &r->seq) != 0 || r->seq == 0)
		return fail(ps, t->col, "\"%.*s\" is not an event (TASK:SEQ)",
		    TOKQ(t));
	advance(ps);
	return 0;
}

/* A breakpoint id: decimal, 1 to UINT32_MAX. */
static int
parse_id(struct parser *ps, struct req *r, const char *what)
{
	const struct tok *t = &ps->tok;
	uint64_t v;

	if (!at_word(t))
		return fail(ps, t->col, "%s needs a breakpoint id", what);
	if (digits(t->s, t->len, 10, UINT32_MAX, &v) != 0 || v == 0)
		return fail(ps, t->col, "\"%.*s\" is not a breakpoint id "
		    "(1 to %" PRIu32 ")", TOKQ(t), UINT32_MAX);
	r->id = (uint32_t)v;
	advance(ps);
	return 0;
}

/* --- objects --- */

/* A host or group name: len bytes at s, 1 to REQ_NAME_MAX of them. */
static int
parse_name(struct parser *ps, const struct tok *t, const char *s, size_t len,
    char *name)
{
	if (len == 0)
		return fail(ps, t->col, "\"%.*s\" needs a name", TOKQ(t));
	if (len > REQ_NAME_MAX)
		return fail(ps, t->col, "name too long (at most %d bytes)",
		    REQ_NAME_MAX);
	memcpy(name, s, len);
	name[len] = '\0';
	return 0;
}

static int
parse_object(struct parser *ps, struct req_object *o, int in_action)
{
	const struct tok *t = &ps->tok;

	memset(o, 0, sizeof(*o));
	o->col = t->col;
	if (is_word(t, "*"))
		o->kind = REQ_OBJ_ALL;
	else if (is_word(t, "self")) {
		if (!in_action)
			return fail(ps, t->col, "\"self\" only names a task "
			    "inside an action");
		o->kind = REQ_OBJ_SELF;
	} else if (has_prefix(t, "host:")) {
		o->kind = REQ_OBJ_HOST;
		return parse_name(ps, t, t->s + 5, t->len - 5, o->name);
	} else if (has_prefix(t, "group:")) {
		o->kind = REQ_OBJ_GROUP;
		return parse_name(ps, t, t->s + 6, t->len - 6, o->name);
	} else if (parse_tid(t->s, t->len, &o->tid) == 0)
		o->kind = REQ_OBJ_TASK;
	else
		return fail(ps, t->col, "\"%.*s\" is not a task id", TOKQ(t));
	return 0;
}

/*
 * A list of objects: object {"," object}, or "*" alone.  The current
 * token is its first word.  In an action, a comma followed by an action
 * keyword ends the list and is left for the caller.
 */
static int
parse_objects(struct parser *ps, struct req_objects *l, int in_action)
{
	struct req_object *o;
	struct tok next;

	l->n = 0;
	for (;;) {
		if (!at_word(&ps->tok))
			return fail(ps, ps->tok.col,
			    "expected an object after \",\"");
		if (l->n == REQ_OBJECTS_MAX)
			return fail(ps, ps->tok.col, "too many objects "
			    "(at most %d)", REQ_OBJECTS_MAX);
		o = &l->v[l->n];
		if (parse_object(ps, o, in_action) == -1)
			return -1;
		if (l->n > 0 && (o->kind == REQ_OBJ_ALL ||
		    l->v[0].kind == REQ_OBJ_ALL))
			return fail(ps, o->col, "\"*\" names every task: "
			    "it stands alone");
		l->n++;
		advance(ps);
		if (!is_comma(&ps->tok))
			return 0;
		if (in_action) {
			next = peek(ps);
			if (lookup(&next, action_names,
			    nitems(action_names)) != -1)
				return 0;
		}
		advance(ps);
	}
}

/* --- conditional requests --- */

/* A call name: pvm_NAME or NAME of pmon_calls.h's PMON_CALLS, or "*" (0). */
static int
parse_call(struct parser *ps, const char *trigger, int *call)
{
	const struct tok *t = &ps->tok;
	char name[4 + REQ_NAME_MAX + 1];
	size_t n = 0;
	int c = -1;

	if (!at_word(t))
		return fail(ps, t->col, "%s needs a call: pvm_NAME, NAME "
		    "or *", trigger);
	if (is_word(t, "*")) {
		*call = 0;
		advance(ps);
		return 0;
	}
	if (t->len <= REQ_NAME_MAX) {
		if (!has_prefix(t, "pvm_")) {
			memcpy(name, "pvm_", 4);
			n = 4;
		}
		memcpy(name + n, t->s, t->len);
		name[n + t->len] = '\0';
		c = record_call_lookup(name);
	}
	if (c <= PMON_CALL_NONE || c >= PMON_CALL_LOST)
		return fail(ps, t->col, "unknown call \"%.*s\"", TOKQ(t));
	*call = c;
	advance(ps);
	return 0;
}

/* One filter of the trigger tr; the current token is its keyword. */
static int
parse_filter(struct parser *ps, struct req_trigger *tr)
{
	struct tok f = ps->tok;
	const struct tok *t = &ps->tok;
	unsigned flag = 0;
	size_t i;

	for (i = 0; i < nitems(filters); i++)
		if (is_word(&f, filters[i].name))
			flag = filters[i].flag;
	if (flag == 0)
		return fail(ps, f.col, "expected a filter or \"do\", not "
		    "\"%.*s\"", TOKQ(&f));
	if ((triggers[tr->kind].filters & flag) == 0)
		return fail(ps, f.col, "\"%.*s\" does not apply to \"%s\"",
		    TOKQ(&f), triggers[tr->kind].name);
	if (tr->filters & flag)
		return fail(ps, f.col, "duplicate filter \"%.*s\"", TOKQ(&f));
	tr->filters |= flag;
	advance(ps);

	switch (flag) {
	case REQ_F_TASKS:
		if (!at_word(t))
			return fail(ps, f.col, "filter \"task\" needs tasks");
		return parse_objects(ps, &tr->tasks, 0);
	case REQ_F_PEER:
		if (!at_word(t))
			return fail(ps, f.col, "filter \"peer\" needs a task");
		if (is_word(t, "self"))
			return fail(ps, t->col, "\"self\" only names a task "
			    "inside an action");
		if (parse_tid(t->s, t->len, &tr->peer) == -1)
			return fail(ps, t->col, "\"%.*s\" is not a task id",
			    TOKQ(t));
		advance(ps);
		return 0;
	case REQ_F_TAG:
		return parse_int(ps, &f, &tr->tag);
	case REQ_F_CTX:
		return parse_int(ps, &f, &tr->ctx);
	default:
		if (!at_word(t))
			return fail(ps, f.col, "filter \"group\" needs a name");
		if (parse_name(ps, t, t->s, t->len, tr->group) == -1)
			return -1;
		advance(ps);
		return 0;
	}
}

/* action {"," action}; the current token follows "do". */
static int
parse_actions(struct parser *ps, struct req *r)
{
	struct req_action *a;
	struct tok t;
	int k;

	for (;;) {
		t = ps->tok;
		if (!at_word(&t))
			return fail(ps, t.col, r->nact == 0 ?
			    "do needs an action: stop, continue, flush, "
			    "snapshot, notify or count" :
			    "expected an action after \",\"");
		k = lookup(&t, action_names, nitems(action_names));
		if (k == -1)
			return fail(ps, t.col, "unknown action \"%.*s\"",
			    TOKQ(&t));
		if (r->nact == REQ_ACTIONS_MAX)
			return fail(ps, t.col, "too many actions (at most %d)",
			    REQ_ACTIONS_MAX);
		a = &r->act[r->nact++];
		a->kind = (enum req_act_kind)k;
		advance(ps);
		if (a->kind == REQ_ACT_STOP || a->kind == REQ_ACT_CONTINUE) {
			if (at_word(&ps->tok)) {
				if (parse_objects(ps, &a->objects, 1) == -1)
					return -1;
			} else {
				a->objects.n = 1;
				a->objects.v[0].kind = REQ_OBJ_SELF;
			}
		}
		if (!is_comma(&ps->tok))
			return 0;
		advance(ps);
	}
}

/* on trigger {filter} do action {"," action}; the token after "on". */
static int
parse_on(struct parser *ps, struct req *r)
{
	struct req_trigger *tr = &r->trig;
	const struct tok *t = &ps->tok;
	int k;

	if (!at_word(t))
		return fail(ps, t->col, "on needs a trigger: enter, leave, "
		    "spawn, exit, recv, deadlock, race or problem");
	for (k = 0; k < (int)nitems(triggers); k++)
		if (is_word(t, triggers[k].name))
			break;
	if (k == (int)nitems(triggers))
		return fail(ps, t->col, "unknown trigger \"%.*s\"", TOKQ(t));
	tr->kind = (enum req_trig_kind)k;
	advance(ps);
	if (triggers[k].call && parse_call(ps, triggers[k].name,
	    &tr->call) == -1)
		return -1;

	while (at_word(t) && !is_word(t, "do"))
		if (parse_filter(ps, tr) == -1)
			return -1;
	if (t->s == NULL)
		return fail(ps, t->col, "expected \"do\"");
	if (!is_word(t, "do"))
		return fail(ps, t->col, "expected a filter or \"do\", not "
		    "\"%.*s\"", TOKQ(t));
	advance(ps);
	return parse_actions(ps, r);
}

/* --- requests --- */

static int
parse_request(struct parser *ps, struct req *r)
{
	const struct tok *t = &ps->tok;
	const char *name;
	int k;

	if (t->s == NULL)
		return fail(ps, t->col, "empty request");
	if ((k = lookup(t, kind_names, nitems(kind_names))) == -1)
		return fail(ps, t->col, "unknown request \"%.*s\"", TOKQ(t));
	r->kind = (enum req_kind)k;
	name = kind_names[k];
	advance(ps);

	switch (r->kind) {
	case REQ_QUEUES:
	case REQ_TASKS:
		if (at_word(t))
			return parse_objects(ps, &r->objects, 0);
		return 0;
	case REQ_CONTINUE:
		if (is_word(t, "force")) {
			r->force = 1;
			advance(ps);
		}
		/* FALLTHROUGH */
	case REQ_STOP:
	case REQ_KILL:
		if (!at_word(t))
			return fail(ps, t->col, "%s needs tasks: TASK, "
			    "host:NAME, group:NAME or *", name);
		return parse_objects(ps, &r->objects, 0);
	case REQ_FRONTIER:
	case REQ_STOPLINE:
		return parse_event(ps, r, name);
	case REQ_ENABLE:
	case REQ_DISABLE:
	case REQ_DELETE:
		return parse_id(ps, r, name);
	case REQ_ON:
		return parse_on(ps, r);
	default:
		return 0;
	}
}

int
req_parse(const char *text, struct req *r, char *err, size_t errsize)
{
	struct parser ps;

	memset(r, 0, sizeof(*r));
	memset(&ps, 0, sizeof(ps));
	ps.text = ps.p = text;
	ps.err = err;
	ps.errsize = errsize;
	if (errsize > 0)
		err[0] = '\0';
	if (check_bytes(&ps) == -1)
		return -1;
	advance(&ps);
	if (parse_request(&ps, r) == -1)
		return -1;
	if (ps.tok.s != NULL)
		return fail(&ps, ps.tok.col, "unexpected \"%.*s\"",
		    TOKQ(&ps.tok));
	return 0;
}

const char *
req_kind_name(enum req_kind kind)
{
	if ((unsigned)kind >= nitems(kind_names))
		return "unknown";
	return kind_names[kind];
}

/* --- checks: what the parser could have produced --- */

/* A name the lexer reads back as one word. */
static int
valid_name(const char *name)
{
	size_t i, len = strnlen(name, REQ_NAME_MAX + 1);

	if (len == 0 || len > REQ_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)name[i] <= ' ' || name[i] == ',' ||
		    name[i] == 0x7f)
			return 0;
	return 1;
}

static int
valid_objects(const struct req_objects *l, int in_action)
{
	const struct req_object *o;
	size_t i;

	if (l->n > REQ_OBJECTS_MAX)
		return 0;
	for (i = 0; i < l->n; i++) {
		o = &l->v[i];
		switch (o->kind) {
		case REQ_OBJ_TASK:
			if (o->tid <= 0)
				return 0;
			break;
		case REQ_OBJ_SELF:
			if (!in_action)
				return 0;
			break;
		case REQ_OBJ_HOST:
		case REQ_OBJ_GROUP:
			if (!valid_name(o->name))
				return 0;
			break;
		case REQ_OBJ_ALL:
			if (l->n != 1)
				return 0;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

static int
valid_on(const struct req *r)
{
	const struct req_trigger *tr = &r->trig;
	const struct req_action *a;
	size_t i;

	if ((unsigned)tr->kind >= nitems(triggers) ||
	    (tr->filters & ~triggers[tr->kind].filters) != 0)
		return 0;
	if (triggers[tr->kind].call &&
	    (tr->call < 0 || tr->call >= PMON_CALL_LOST))
		return 0;
	if ((tr->filters & REQ_F_TASKS) &&
	    (tr->tasks.n == 0 || !valid_objects(&tr->tasks, 0)))
		return 0;
	if (((tr->filters & REQ_F_PEER) && tr->peer <= 0) ||
	    ((tr->filters & REQ_F_TAG) && tr->tag < 0) ||
	    ((tr->filters & REQ_F_CTX) && tr->ctx < 0) ||
	    ((tr->filters & REQ_F_GROUP) && !valid_name(tr->group)))
		return 0;
	if (r->nact == 0 || r->nact > REQ_ACTIONS_MAX)
		return 0;
	for (i = 0; i < r->nact; i++) {
		a = &r->act[i];
		if ((unsigned)a->kind >= nitems(action_names))
			return 0;
		if ((a->kind == REQ_ACT_STOP || a->kind == REQ_ACT_CONTINUE) &&
		    (a->objects.n == 0 || !valid_objects(&a->objects, 1)))
			return 0;
	}
	return 1;
}

static int
valid(const struct req *r)
{
	switch (r->kind) {
	case REQ_SNAPSHOT:
	case REQ_PS:
	case REQ_HOSTS:
	case REQ_GROUPS:
	case REQ_PROBLEMS:
	case REQ_BREAKPOINTS:
	case REQ_FLUSH:
	case REQ_TOOLS:
	case REQ_MAILBOX:
		return 1;
	case REQ_QUEUES:
	case REQ_TASKS:
		return valid_objects(&r->objects, 0);
	case REQ_STOP:
	case REQ_CONTINUE:
	case REQ_KILL:
		return r->objects.n > 0 && valid_objects(&r->objects, 0);
	case REQ_FRONTIER:
	case REQ_STOPLINE:
		return r->tid > 0 && r->seq > 0;
	case REQ_ENABLE:
	case REQ_DISABLE:
	case REQ_DELETE:
		return r->id > 0;
	case REQ_ON:
		return valid_on(r);
	default:
		return 0;
	}
}

/* --- the canonical text --- */

struct out {
	char	*buf;
	size_t	 size;
	size_t	 len;		/* what it would take */
};

static void	put(struct out *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (o->len < o->size)
		n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	else
		n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void
put_objects(struct out *o, const struct req_objects *l)
{
	const struct req_object *obj;
	size_t i;

	for (i = 0; i < l->n; i++) {
		obj = &l->v[i];
		if (i > 0)
			put(o, ",");
		switch (obj->kind) {
		case REQ_OBJ_TASK:
			put(o, "t%x", (unsigned)obj->tid);
			break;
		case REQ_OBJ_SELF:
			put(o, "self");
			break;
		case REQ_OBJ_HOST:
			put(o, "host:%s", obj->name);
			break;
		case REQ_OBJ_GROUP:
			put(o, "group:%s", obj->name);
			break;
		default:
			put(o, "*");
			break;
		}
	}
}

static void
put_on(struct out *o, const struct req *r)
{
	const struct req_trigger *tr = &r->trig;
	const struct req_action *a;
	size_t i;

	put(o, " %s", triggers[tr->kind].name);
	if (triggers[tr->kind].call)
		put(o, " %s", tr->call == 0 ? "*" :
		    record_call_name((unsigned)tr->call));
	for (i = 0; i < nitems(filters); i++) {
		if ((tr->filters & filters[i].flag) == 0)
			continue;
		put(o, " %s ", filters[i].name);
		switch (filters[i].flag) {
		case REQ_F_TASKS:
			put_objects(o, &tr->tasks);
			break;
		case REQ_F_PEER:
			put(o, "t%x", (unsigned)tr->peer);
			break;
		case REQ_F_TAG:
			put(o, "%" PRId32, tr->tag);
			break;
		case REQ_F_CTX:
			put(o, "%" PRId32, tr->ctx);
			break;
		default:
			put(o, "%s", tr->group);
			break;
		}
	}
	put(o, " do");
	for (i = 0; i < r->nact; i++) {
		a = &r->act[i];
		put(o, "%s %s", i > 0 ? "," : "", action_names[a->kind]);
		if ((a->kind != REQ_ACT_STOP && a->kind != REQ_ACT_CONTINUE) ||
		    (a->objects.n == 1 && a->objects.v[0].kind == REQ_OBJ_SELF))
			continue;
		put(o, " ");
		put_objects(o, &a->objects);
	}
}

int
req_format(const struct req *r, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };

	if (size > 0)
		buf[0] = '\0';
	if (!valid(r))
		return -1;
	put(&o, "%s", kind_names[r->kind]);
	switch (r->kind) {
	case REQ_QUEUES:
	case REQ_TASKS:
		if (r->objects.n == 0)
			break;
		/* FALLTHROUGH */
	case REQ_STOP:
	case REQ_KILL:
		put(&o, " ");
		put_objects(&o, &r->objects);
		break;
	case REQ_CONTINUE:
		put(&o, "%s ", r->force ? " force" : "");
		put_objects(&o, &r->objects);
		break;
	case REQ_FRONTIER:
	case REQ_STOPLINE:
		put(&o, " t%x:%" PRIu64, (unsigned)r->tid, r->seq);
		break;
	case REQ_ENABLE:
	case REQ_DISABLE:
	case REQ_DELETE:
		put(&o, " %" PRIu32, r->id);
		break;
	case REQ_ON:
		put_on(&o, r);
		break;
	default:
		break;
	}
	if (o.len >= size || o.len > INT32_MAX) {
		if (size > 0)
			buf[0] = '\0';
		return -1;
	}
	return (int)o.len;
}

/* --- equality --- */

static int
objects_equal(const struct req_objects *a, const struct req_objects *b)
{
	const struct req_object *x, *y;
	size_t i;

	if (a->n != b->n || a->n > REQ_OBJECTS_MAX)
		return 0;
	for (i = 0; i < a->n; i++) {
		x = &a->v[i];
		y = &b->v[i];
		if (x->kind != y->kind)
			return 0;
		if (x->kind == REQ_OBJ_TASK && x->tid != y->tid)
			return 0;
		if ((x->kind == REQ_OBJ_HOST || x->kind == REQ_OBJ_GROUP) &&
		    strncmp(x->name, y->name, sizeof(x->name)) != 0)
			return 0;
	}
	return 1;
}

static int
trigger_equal(const struct req_trigger *a, const struct req_trigger *b)
{
	if (a->kind != b->kind || a->filters != b->filters)
		return 0;
	if ((unsigned)a->kind < nitems(triggers) && triggers[a->kind].call &&
	    a->call != b->call)
		return 0;
	if ((a->filters & REQ_F_TASKS) && !objects_equal(&a->tasks, &b->tasks))
		return 0;
	if ((a->filters & REQ_F_PEER) && a->peer != b->peer)
		return 0;
	if ((a->filters & REQ_F_TAG) && a->tag != b->tag)
		return 0;
	if ((a->filters & REQ_F_CTX) && a->ctx != b->ctx)
		return 0;
	if ((a->filters & REQ_F_GROUP) &&
	    strncmp(a->group, b->group, sizeof(a->group)) != 0)
		return 0;
	return 1;
}

int
req_equal(const struct req *a, const struct req *b)
{
	size_t i;

	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case REQ_CONTINUE:
		if (!a->force != !b->force)
			return 0;
		/* FALLTHROUGH */
	case REQ_QUEUES:
	case REQ_TASKS:
	case REQ_STOP:
	case REQ_KILL:
		return objects_equal(&a->objects, &b->objects);
	case REQ_FRONTIER:
	case REQ_STOPLINE:
		return a->tid == b->tid && a->seq == b->seq;
	case REQ_ENABLE:
	case REQ_DISABLE:
	case REQ_DELETE:
		return a->id == b->id;
	case REQ_ON:
		if (!trigger_equal(&a->trig, &b->trig) || a->nact != b->nact ||
		    a->nact > REQ_ACTIONS_MAX)
			return 0;
		for (i = 0; i < a->nact; i++) {
			if (a->act[i].kind != b->act[i].kind)
				return 0;
			if ((a->act[i].kind == REQ_ACT_STOP ||
			    a->act[i].kind == REQ_ACT_CONTINUE) &&
			    !objects_equal(&a->act[i].objects,
			    &b->act[i].objects))
				return 0;
		}
		return 1;
	default:
		return 1;
	}
}
