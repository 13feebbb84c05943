/*
 * Protects the request language (coordinator/request.c): every
 * production parses to the tree the lead's code will act on, the
 * canonical text of every tree parses back to the same tree (breakpoints
 * are listed that way), and every malformed request is refused with the
 * column of the token at fault and the exact words tools show to users.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "request.h"
#include "unit.h"

static struct req *r1, *r2;
static char *text;

static int
req_init(void)
{
	r1 = malloc(sizeof(*r1));
	r2 = malloc(sizeof(*r2));
	text = malloc(REQ_TEXT_MAX);
	return r1 == NULL || r2 == NULL || text == NULL;
}

static int
req_clean(void)
{
	free(r1);
	free(r2);
	free(text);
	return 0;
}

/* Parses s into r1, which must work. */
static struct req *
ok(const char *s)
{
	char err[256];

	if (req_parse(s, r1, err, sizeof(err)) == -1) {
		fprintf(stderr, "\n\"%s\": %s\n", s, err);
		CU_FAIL_FATAL("a valid request was refused");
	}
	return r1;
}

/* s must be refused with exactly want. */
static void
bad(const char *s, const char *want)
{
	char err[256];

	CU_ASSERT_EQUAL(req_parse(s, r1, err, sizeof(err)), -1);
	if (strcmp(err, want) != 0) {
		fprintf(stderr, "\n\"%s\":\n  got  %s\n  want %s\n", s, err,
		    want);
		CU_FAIL("wrong error");
	}
}

/* s parses, its canonical text is canon, which parses to the same. */
static void
canon(const char *s, const char *want)
{
	char err[256];
	int n;

	ok(s);
	n = req_format(r1, text, REQ_TEXT_MAX);
	CU_ASSERT_EQUAL(n, (int)strlen(want));
	if (strcmp(text, want) != 0) {
		fprintf(stderr, "\n\"%s\":\n  got  %s\n  want %s\n", s, text,
		    want);
		CU_FAIL("wrong canonical text");
	}
	CU_ASSERT_EQUAL_FATAL(req_parse(text, r2, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(req_equal(r1, r2));
}

static void
obj_is(const struct req_object *o, enum req_obj_kind kind, int32_t tid,
    const char *name, unsigned col)
{
	CU_ASSERT_EQUAL(o->kind, kind);
	if (kind == REQ_OBJ_TASK)
		CU_ASSERT_EQUAL(o->tid, tid);
	if (name != NULL)
		CU_ASSERT_STRING_EQUAL(o->name, name);
	CU_ASSERT_EQUAL(o->col, col);
}

static void
test_info(void)
{
	static const struct {
		const char	*text;
		enum req_kind	 kind;
	} simple[] = {
		{ "snapshot", REQ_SNAPSHOT }, { "ps", REQ_PS },
		{ "hosts", REQ_HOSTS }, { "groups", REQ_GROUPS },
		{ "problems", REQ_PROBLEMS }, { "queues", REQ_QUEUES },
		{ "tasks", REQ_TASKS }, { "breakpoints", REQ_BREAKPOINTS },
		{ "flush", REQ_FLUSH }, { "tools", REQ_TOOLS },
	};
	struct req *r;
	size_t i;

	for (i = 0; i < sizeof(simple) / sizeof(simple[0]); i++) {
		r = ok(simple[i].text);
		CU_ASSERT_EQUAL(r->kind, simple[i].kind);
		CU_ASSERT_EQUAL(r->objects.n, 0);
		CU_ASSERT_STRING_EQUAL(req_kind_name(r->kind), simple[i].text);
	}
	r = ok("\t ps  \t");
	CU_ASSERT_EQUAL(r->kind, REQ_PS);

	/* One task, in each of the three spellings. */
	r = ok("queues t40003");
	CU_ASSERT_EQUAL(r->kind, REQ_QUEUES);
	CU_ASSERT_EQUAL(r->objects.n, 1);
	obj_is(&r->objects.v[0], REQ_OBJ_TASK, 0x40003, NULL, 8);
	r = ok("queues 262147");
	obj_is(&r->objects.v[0], REQ_OBJ_TASK, 0x40003, NULL, 8);
	r = ok("queues  0x40003");
	obj_is(&r->objects.v[0], REQ_OBJ_TASK, 0x40003, NULL, 9);
	r = ok("queues 0X4000a");
	obj_is(&r->objects.v[0], REQ_OBJ_TASK, 0x4000a, NULL, 8);
	r = ok("queues t7fffffff");
	obj_is(&r->objects.v[0], REQ_OBJ_TASK, 0x7fffffff, NULL, 8);
	r = ok("queues *");
	CU_ASSERT_EQUAL(r->objects.n, 1);
	obj_is(&r->objects.v[0], REQ_OBJ_ALL, 0, NULL, 8);

	/* Lists: every kind of object, blanks around commas or none. */
	r = ok("tasks t1,host:node-2.lan,group:workers");
	CU_ASSERT_EQUAL(r->kind, REQ_TASKS);
	CU_ASSERT_EQUAL(r->objects.n, 3);
	obj_is(&r->objects.v[0], REQ_OBJ_TASK, 1, NULL, 7);
	obj_is(&r->objects.v[1], REQ_OBJ_HOST, 0, "node-2.lan", 10);
	obj_is(&r->objects.v[2], REQ_OBJ_GROUP, 0, "workers", 26);
	r = ok("tasks t1 , 2 ,3");
	CU_ASSERT_EQUAL(r->objects.n, 3);
	obj_is(&r->objects.v[1], REQ_OBJ_TASK, 2, NULL, 12);
	obj_is(&r->objects.v[2], REQ_OBJ_TASK, 3, NULL, 15);
	r = ok("tasks host:a:b");
	obj_is(&r->objects.v[0], REQ_OBJ_HOST, 0, "a:b", 7);

	r = ok("frontier t40003:5");
	CU_ASSERT_EQUAL(r->kind, REQ_FRONTIER);
	CU_ASSERT_EQUAL(r->tid, 0x40003);
	CU_ASSERT_EQUAL(r->seq, 5);
	r = ok("frontier 262147:18446744073709551615");
	CU_ASSERT_EQUAL(r->tid, 0x40003);
	CU_ASSERT_EQUAL(r->seq, UINT64_MAX);
	r = ok("frontier 0x40003:1");
	CU_ASSERT_EQUAL(r->seq, 1);
}

static void
test_manip(void)
{
	struct req *r;

	r = ok("stop t40003");
	CU_ASSERT_EQUAL(r->kind, REQ_STOP);
	CU_ASSERT_EQUAL(r->objects.n, 1);
	obj_is(&r->objects.v[0], REQ_OBJ_TASK, 0x40003, NULL, 6);
	r = ok("stop *");
	obj_is(&r->objects.v[0], REQ_OBJ_ALL, 0, NULL, 6);
	r = ok("stop group:g,host:h");
	CU_ASSERT_EQUAL(r->objects.n, 2);

	r = ok("continue t1,t2");
	CU_ASSERT_EQUAL(r->kind, REQ_CONTINUE);
	CU_ASSERT_EQUAL(r->force, 0);
	CU_ASSERT_EQUAL(r->objects.n, 2);
	r = ok("continue force *");
	CU_ASSERT_EQUAL(r->force, 1);
	obj_is(&r->objects.v[0], REQ_OBJ_ALL, 0, NULL, 16);

	r = ok("kill group:workers");
	CU_ASSERT_EQUAL(r->kind, REQ_KILL);
	obj_is(&r->objects.v[0], REQ_OBJ_GROUP, 0, "workers", 6);

	r = ok("stopline t40001:12");
	CU_ASSERT_EQUAL(r->kind, REQ_STOPLINE);
	CU_ASSERT_EQUAL(r->tid, 0x40001);
	CU_ASSERT_EQUAL(r->seq, 12);

	r = ok("enable 1");
	CU_ASSERT_EQUAL(r->kind, REQ_ENABLE);
	CU_ASSERT_EQUAL(r->id, 1);
	r = ok("disable 4294967295");
	CU_ASSERT_EQUAL(r->kind, REQ_DISABLE);
	CU_ASSERT_EQUAL(r->id, 4294967295U);
	r = ok("delete 07");
	CU_ASSERT_EQUAL(r->kind, REQ_DELETE);
	CU_ASSERT_EQUAL(r->id, 7);

	/* At most REQ_OBJECTS_MAX objects. */
	{
		char s[1024];
		int i, n;

		n = snprintf(s, sizeof(s), "stop 1");
		for (i = 2; i <= REQ_OBJECTS_MAX; i++)
			n += snprintf(s + n, sizeof(s) - (size_t)n, ",%d", i);
		r = ok(s);
		CU_ASSERT_EQUAL(r->objects.n, REQ_OBJECTS_MAX);
		CU_ASSERT_EQUAL(r->objects.v[REQ_OBJECTS_MAX - 1].tid,
		    REQ_OBJECTS_MAX);
		snprintf(s + n, sizeof(s) - (size_t)n, ",65");
		bad(s, "column 189: too many objects (at most 64)");
	}
}

static void
test_on(void)
{
	struct req *r;
	struct req_trigger *tr;

	r = ok("on enter pvm_send tag 7 do stop *, notify");
	tr = &r->trig;
	CU_ASSERT_EQUAL(r->kind, REQ_ON);
	CU_ASSERT_EQUAL(tr->kind, REQ_TRIG_ENTER);
	CU_ASSERT_EQUAL(tr->call, PMON_CALL_send);
	CU_ASSERT_EQUAL(tr->filters, REQ_F_TAG);
	CU_ASSERT_EQUAL(tr->tag, 7);
	CU_ASSERT_EQUAL(r->nact, 2);
	CU_ASSERT_EQUAL(r->act[0].kind, REQ_ACT_STOP);
	CU_ASSERT_EQUAL(r->act[0].objects.n, 1);
	obj_is(&r->act[0].objects.v[0], REQ_OBJ_ALL, 0, NULL, 33);
	CU_ASSERT_EQUAL(r->act[1].kind, REQ_ACT_NOTIFY);
	CU_ASSERT_EQUAL(r->act[1].objects.n, 0);

	/* Every filter; "stop" alone is the triggering task. */
	r = ok("on leave recv task t40003,t40004 peer 262149 tag 1 ctx 0x10 "
	    "group g do stop, snapshot");
	tr = &r->trig;
	CU_ASSERT_EQUAL(tr->kind, REQ_TRIG_LEAVE);
	CU_ASSERT_EQUAL(tr->call, PMON_CALL_recv);
	CU_ASSERT_EQUAL(tr->filters, REQ_F_TASKS | REQ_F_PEER | REQ_F_TAG |
	    REQ_F_CTX | REQ_F_GROUP);
	CU_ASSERT_EQUAL(tr->tasks.n, 2);
	obj_is(&tr->tasks.v[1], REQ_OBJ_TASK, 0x40004, NULL, 27);
	CU_ASSERT_EQUAL(tr->peer, 0x40005);
	CU_ASSERT_EQUAL(tr->tag, 1);
	CU_ASSERT_EQUAL(tr->ctx, 16);
	CU_ASSERT_STRING_EQUAL(tr->group, "g");
	CU_ASSERT_EQUAL(r->nact, 2);
	CU_ASSERT_EQUAL(r->act[0].objects.n, 1);
	obj_is(&r->act[0].objects.v[0], REQ_OBJ_SELF, 0, NULL, 0);
	CU_ASSERT_EQUAL(r->act[1].kind, REQ_ACT_SNAPSHOT);

	r = ok("on enter * do count");
	CU_ASSERT_EQUAL(r->trig.call, 0);
	CU_ASSERT_EQUAL(r->trig.filters, 0);
	CU_ASSERT_EQUAL(r->act[0].kind, REQ_ACT_COUNT);
	r = ok("on enter barrier do flush");
	CU_ASSERT_EQUAL(r->trig.call, PMON_CALL_barrier);
	r = ok("on leave pvm_reg_tasker do flush");
	CU_ASSERT_EQUAL(r->trig.call, PMON_CALL_reg_tasker);

	/* A comma then an object continues the list; then an action. */
	r = ok("on recv peer t5 do stop t1, 2 ,self,continue t3, flush");
	CU_ASSERT_EQUAL(r->trig.kind, REQ_TRIG_RECV);
	CU_ASSERT_EQUAL(r->trig.filters, REQ_F_PEER);
	CU_ASSERT_EQUAL(r->nact, 3);
	CU_ASSERT_EQUAL(r->act[0].objects.n, 3);
	obj_is(&r->act[0].objects.v[1], REQ_OBJ_TASK, 2, NULL, 29);
	obj_is(&r->act[0].objects.v[2], REQ_OBJ_SELF, 0, NULL, 32);
	CU_ASSERT_EQUAL(r->act[1].kind, REQ_ACT_CONTINUE);
	CU_ASSERT_EQUAL(r->act[1].objects.n, 1);
	CU_ASSERT_EQUAL(r->act[2].kind, REQ_ACT_FLUSH);
	r = ok("on exit do stop,stop");
	CU_ASSERT_EQUAL(r->nact, 2);
	CU_ASSERT_EQUAL(r->act[1].objects.v[0].kind, REQ_OBJ_SELF);

	r = ok("on spawn task host:n1,group:g do continue");
	CU_ASSERT_EQUAL(r->trig.kind, REQ_TRIG_SPAWN);
	CU_ASSERT_EQUAL(r->trig.tasks.n, 2);
	CU_ASSERT_EQUAL(r->act[0].objects.v[0].kind, REQ_OBJ_SELF);
	r = ok("on deadlock do snapshot, notify");
	CU_ASSERT_EQUAL(r->trig.kind, REQ_TRIG_DEADLOCK);
	r = ok("on race task * do stop *");
	CU_ASSERT_EQUAL(r->trig.kind, REQ_TRIG_RACE);
	CU_ASSERT_EQUAL(r->trig.tasks.v[0].kind, REQ_OBJ_ALL);
	r = ok("on problem do flush,snapshot,notify,count,flush,snapshot,"
	    "notify,count");
	CU_ASSERT_EQUAL(r->trig.kind, REQ_TRIG_PROBLEM);
	CU_ASSERT_EQUAL(r->nact, REQ_ACTIONS_MAX);
	r = ok("on exit task t1 do notify");
	CU_ASSERT_EQUAL(r->trig.kind, REQ_TRIG_EXIT);
	CU_ASSERT_EQUAL(r->trig.filters, REQ_F_TASKS);

	/* A group's name is the next word, whatever it is. */
	r = ok("on enter barrier group do do stop");
	CU_ASSERT_STRING_EQUAL(r->trig.group, "do");
	CU_ASSERT_EQUAL(r->act[0].kind, REQ_ACT_STOP);
}

/* Each valid request and its canonical text. */
static void
test_format(void)
{
	static const char *const same[] = {
		"snapshot", "ps", "hosts", "groups", "problems", "queues",
		"tasks", "breakpoints", "flush", "tools", "queues *",
		"queues t40003", "tasks t1,host:h,group:g", "stop *",
		"continue force t1", "continue group:g", "kill host:n",
		"frontier t40003:5", "stopline t1:18446744073709551615",
		"enable 1", "disable 2", "delete 4294967295",
		"on enter pvm_send do stop",
		"on leave * task * do stop *, continue self,t1",
		("on enter pvm_recv task t1 peer t2 tag 0 ctx 2147483647 "
		    "group g do notify, count"),
		"on recv peer t5 tag 3 do snapshot",
		"on spawn do flush", "on exit do stop", "on deadlock do stop *",
		"on race task group:g do notify", "on problem do count",
		"on enter pvm_barrier group do do stop",
	};
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		canon(same[i], same[i]);
	canon(" queues\t262147 ", "queues t40003");
	canon("queues 0x0040003", "queues t40003");
	canon("frontier 262147:05", "frontier t40003:5");
	canon("delete 007", "delete 7");
	canon("stop 1 , 2,3", "stop t1,t2,t3");
	canon("on enter send tag 0x10 do stop self", "on enter pvm_send "
	    "tag 16 do stop");
	canon("on leave recv group g ctx 1 tag 2 peer 3 task 4 do flush",
	    "on leave pvm_recv task t4 peer t3 tag 2 ctx 1 group g do flush");
	canon("on recv do stop self,1,flush", "on recv do stop self,t1, "
	    "flush");
}

/* The longest canonical text fits REQ_TEXT_MAX and still round-trips. */
static void
test_format_longest(void)
{
	static char s[REQ_TEXT_MAX];
	char name[REQ_NAME_MAX + 1], err[256];
	size_t n = 0;
	int i, j, len;

	memset(name, 'x', REQ_NAME_MAX);
	name[REQ_NAME_MAX] = '\0';
	n += (size_t)snprintf(s + n, sizeof(s) - n, "on enter pvm_reg_tasker "
	    "task ");
	for (i = 0; i < REQ_OBJECTS_MAX; i++)
		n += (size_t)snprintf(s + n, sizeof(s) - n, "%sgroup:%s",
		    i ? "," : "", name);
	n += (size_t)snprintf(s + n, sizeof(s) - n, " peer 2147483647 tag "
	    "2147483647 ctx 2147483647 group %s do", name);
	for (j = 0; j < REQ_ACTIONS_MAX; j++) {
		n += (size_t)snprintf(s + n, sizeof(s) - n, "%s continue",
		    j ? "," : "");
		for (i = 0; i < REQ_OBJECTS_MAX; i++)
			n += (size_t)snprintf(s + n, sizeof(s) - n,
			    "%sgroup:%s", i ? "," : " ", name);
	}
	CU_ASSERT_FATAL(n < sizeof(s));
	ok(s);
	len = req_format(r1, text, REQ_TEXT_MAX);
	CU_ASSERT(len > 40000);
	CU_ASSERT(len < REQ_TEXT_MAX);
	CU_ASSERT_EQUAL_FATAL(req_parse(text, r2, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(req_equal(r1, r2));

	/* Too small a buffer: -1 and an empty string. */
	CU_ASSERT_EQUAL(req_format(r1, text, (size_t)len), -1);
	CU_ASSERT_STRING_EQUAL(text, "");
	ok("ps");
	CU_ASSERT_EQUAL(req_format(r1, text, 3), 2);
	CU_ASSERT_EQUAL(req_format(r1, text, 2), -1);
}

/* Trees the parser cannot produce have no text. */
static void
test_format_invalid(void)
{
	struct req *r;

	r = ok("stop t1");
	r->objects.v[0].kind = REQ_OBJ_SELF;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("stop t1,t2");
	r->objects.v[1].kind = REQ_OBJ_ALL;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("stop host:a");
	strcpy(r->objects.v[0].name, "a b");
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r->objects.v[0].name[0] = '\0';
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("kill t1");
	r->objects.n = 0;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("on spawn do stop");
	r->trig.filters = REQ_F_TAG;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("on spawn do stop");
	r->nact = 0;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("on enter send do stop");
	r->trig.call = PMON_CALL_LOST;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("frontier t1:1");
	r->seq = 0;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	r = ok("ps");
	r->kind = (enum req_kind)99;
	CU_ASSERT_EQUAL(req_format(r, text, REQ_TEXT_MAX), -1);
	CU_ASSERT_STRING_EQUAL(req_kind_name((enum req_kind)99), "unknown");
}

static void
test_equal(void)
{
	char err[256];

	/* Columns and the fields of other kinds do not count. */
	ok("stop  t1");
	CU_ASSERT_EQUAL_FATAL(req_parse("stop 1", r2, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(req_equal(r1, r2));
	r2->tid = 5;
	r2->trig.tag = 3;
	CU_ASSERT_TRUE(req_equal(r1, r2));
	CU_ASSERT_EQUAL_FATAL(req_parse("stop 2", r2, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(req_equal(r1, r2));
	CU_ASSERT_EQUAL_FATAL(req_parse("kill 1", r2, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(req_equal(r1, r2));
	ok("continue 1");
	CU_ASSERT_EQUAL_FATAL(req_parse("continue force 1", r2, err,
	    sizeof(err)), 0);
	CU_ASSERT_FALSE(req_equal(r1, r2));
	ok("on enter send tag 1 do stop");
	CU_ASSERT_EQUAL_FATAL(req_parse("on enter send tag 2 do stop", r2,
	    err, sizeof(err)), 0);
	CU_ASSERT_FALSE(req_equal(r1, r2));
	CU_ASSERT_EQUAL_FATAL(req_parse("on enter send tag 1 do stop self",
	    r2, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(req_equal(r1, r2));
	CU_ASSERT_EQUAL_FATAL(req_parse("on enter recv tag 1 do stop",
	    r2, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(req_equal(r1, r2));
}

static void
test_errors(void)
{
	static const struct {
		const char	*text;
		const char	*err;
	} cases[] = {
		/* What tools relied on before the language grew. */
		{ "", "column 1: empty request" },
		{ "   ", "column 4: empty request" },
		{ "pss", "column 1: unknown request \"pss\"" },
		{ "stp t1", "column 1: unknown request \"stp\"" },
		{ "PS", "column 1: unknown request \"PS\"" },
		{ ",", "column 1: unknown request \",\"" },
		{ "queues t4000x", "column 8: \"t4000x\" is not a task id" },
		{ "ps extra", "column 4: unexpected \"extra\"" },
		{ "hosts ,", "column 7: unexpected \",\"" },
		{ "queues t1 t2", "column 11: unexpected \"t2\"" },
		{ "frontier", "column 9: frontier needs an event, TASK:SEQ" },
		{ "frontier t1", "column 10: \"t1\" is not an event "
		    "(TASK:SEQ)" },
		{ "frontier t1:0", "column 10: \"t1:0\" is not an event "
		    "(TASK:SEQ)" },
		{ "frontier t1:", "column 10: \"t1:\" is not an event "
		    "(TASK:SEQ)" },
		{ "frontier 0:1", "column 10: \"0:1\" is not an event "
		    "(TASK:SEQ)" },
		{ "frontier t1:18446744073709551616", "column 10: "
		    "\"t1:18446744073709551616\" is not an event (TASK:SEQ)" },
		{ "frontier t1:1x", "column 10: \"t1:1x\" is not an event "
		    "(TASK:SEQ)" },
		{ "stopline", "column 9: stopline needs an event, TASK:SEQ" },
		{ "ps\x01", "column 3: unexpected byte 0x01" },
		{ "ps \x7f", "column 4: unexpected byte 0x7f" },
		{ "ps\n", "column 3: unexpected byte 0x0a" },

		/* Task ids. */
		{ "stop t4000x", "column 6: \"t4000x\" is not a task id" },
		{ "stop 0", "column 6: \"0\" is not a task id" },
		{ "stop t0", "column 6: \"t0\" is not a task id" },
		{ "stop -1", "column 6: \"-1\" is not a task id" },
		{ "stop +1", "column 6: \"+1\" is not a task id" },
		{ "stop 2147483648", "column 6: \"2147483648\" is not a task "
		    "id" },
		{ "stop t80000000", "column 6: \"t80000000\" is not a task "
		    "id" },
		{ "stop 0x", "column 6: \"0x\" is not a task id" },
		{ "stop t", "column 6: \"t\" is not a task id" },
		{ "stop t0x5", "column 6: \"t0x5\" is not a task id" },
		{ "stop T5", "column 6: \"T5\" is not a task id" },
		{ "stop 99999999999999999999999", "column 6: "
		    "\"99999999999999999999999\" is not a task id" },
		{ "stop xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "column 6: "
		    "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" is not a task id" },

		/* Object lists. */
		{ "stop", "column 5: stop needs tasks: TASK, host:NAME, "
		    "group:NAME or *" },
		{ "kill ,1", "column 6: kill needs tasks: TASK, host:NAME, "
		    "group:NAME or *" },
		{ "continue force", "column 15: continue needs tasks: TASK, "
		    "host:NAME, group:NAME or *" },
		{ "continue force force", "column 16: \"force\" is not a "
		    "task id" },
		{ "stop 1,", "column 8: expected an object after \",\"" },
		{ "stop 1,,2", "column 8: expected an object after \",\"" },
		{ "stop 1,*", "column 8: \"*\" names every task: it stands "
		    "alone" },
		{ "stop *,1", "column 8: \"*\" names every task: it stands "
		    "alone" },
		{ "stop self", "column 6: \"self\" only names a task inside "
		    "an action" },
		{ "stop t1,t2,t3,self", "column 15: \"self\" only names a "
		    "task inside an action" },
		{ "stop host:", "column 6: \"host:\" needs a name" },
		{ "tasks group:", "column 7: \"group:\" needs a name" },
		{ "stop group:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxx", "column 6: name too long (at most 63 "
		    "bytes)" },

		/* Breakpoint ids. */
		{ "enable", "column 7: enable needs a breakpoint id" },
		{ "disable 0", "column 9: \"0\" is not a breakpoint id (1 to "
		    "4294967295)" },
		{ "delete 4294967296", "column 8: \"4294967296\" is not a "
		    "breakpoint id (1 to 4294967295)" },
		{ "delete t1", "column 8: \"t1\" is not a breakpoint id (1 to "
		    "4294967295)" },
		{ "delete 1 2", "column 10: unexpected \"2\"" },

		/* Triggers. */
		{ "on", "column 3: on needs a trigger: enter, leave, spawn, "
		    "exit, recv, deadlock, race or problem" },
		{ "on jump do stop", "column 4: unknown trigger \"jump\"" },
		{ "on enter", "column 9: enter needs a call: pvm_NAME, NAME "
		    "or *" },
		{ "on leave ,", "column 10: leave needs a call: pvm_NAME, "
		    "NAME or *" },
		{ "on enter pvm_foo do stop", "column 10: unknown call "
		    "\"pvm_foo\"" },
		{ "on enter lost do stop", "column 10: unknown call "
		    "\"lost\"" },
		{ "on enter break do stop", "column 10: unknown call "
		    "\"break\"" },
		{ "on enter none do stop", "column 10: unknown call "
		    "\"none\"" },
		{ "on enter pvm_ do stop", "column 10: unknown call "
		    "\"pvm_\"" },
		{ "on enter do stop", "column 10: unknown call \"do\"" },

		/* Filters. */
		{ "on enter send tag 5", "column 20: expected \"do\"" },
		{ "on enter send tga 1 do stop", "column 15: expected a "
		    "filter or \"do\", not \"tga\"" },
		{ "on enter send tag 1 stop", "column 21: expected a filter "
		    "or \"do\", not \"stop\"" },
		{ "on enter send, do stop", "column 14: expected a filter or "
		    "\"do\", not \",\"" },
		{ "on recv tag x do stop", "column 9: filter \"tag\" needs a "
		    "number" },
		{ "on recv tag do stop", "column 9: filter \"tag\" needs a "
		    "number" },
		{ "on recv ctx", "column 9: filter \"ctx\" needs a number" },
		{ "on recv tag 5x do stop", "column 13: \"5x\" is not a "
		    "number" },
		{ "on recv tag 0x do stop", "column 13: \"0x\" is not a "
		    "number" },
		{ "on recv tag -1 do stop", "column 13: \"-1\" is out of range "
		    "(0 to 2147483647)" },
		{ "on recv tag -1x do stop", "column 13: \"-1x\" is not a "
		    "number" },
		{ "on recv ctx 2147483648 do stop", "column 13: \"2147483648\" "
		    "is out of range (0 to 2147483647)" },
		{ "on recv ctx 0x80000000 do stop", "column 13: \"0x80000000\" "
		    "is out of range (0 to 2147483647)" },
		{ "on spawn group g do stop", "column 10: \"group\" does not "
		    "apply to \"spawn\"" },
		{ "on exit tag 1 do stop", "column 9: \"tag\" does not apply "
		    "to \"exit\"" },
		{ "on recv group g do stop", "column 9: \"group\" does not "
		    "apply to \"recv\"" },
		{ "on deadlock peer t1 do stop", "column 13: \"peer\" does not "
		    "apply to \"deadlock\"" },
		{ "on enter send tag 1 tag 2 do stop", "column 21: duplicate "
		    "filter \"tag\"" },
		{ "on exit task 1 task 2 do stop", "column 16: duplicate "
		    "filter \"task\"" },
		{ "on enter send task self do stop", "column 20: \"self\" only "
		    "names a task inside an action" },
		{ "on enter send peer self do stop", "column 20: \"self\" only "
		    "names a task inside an action" },
		{ "on enter send peer host:a do stop", "column 20: \"host:a\" "
		    "is not a task id" },
		{ "on enter send peer", "column 15: filter \"peer\" needs a "
		    "task" },
		{ "on enter send task", "column 15: filter \"task\" needs "
		    "tasks" },
		{ "on exit task do stop", "column 14: \"do\" is not a task "
		    "id" },
		{ "on enter send group", "column 15: filter \"group\" needs a "
		    "name" },
		{ "on enter send group ,", "column 15: filter \"group\" needs "
		    "a name" },

		/* Actions. */
		{ "on enter send do", "column 17: do needs an action: stop, "
		    "continue, flush, snapshot, notify or count" },
		{ "on enter send do stop,", "column 23: expected an action "
		    "after \",\"" },
		{ "on enter send do stop 1,", "column 25: expected an object "
		    "after \",\"" },
		{ "on enter send do jump", "column 18: unknown action "
		    "\"jump\"" },
		{ "on enter send do notify 1", "column 25: unexpected \"1\"" },
		{ "on enter send do stop 1 2", "column 25: unexpected \"2\"" },
		{ "on enter send do stop notify", "column 23: \"notify\" is "
		    "not a task id" },
		{ "on enter send do stop *,self", "column 25: \"*\" names "
		    "every task: it stands alone" },
		{ "on exit do count,count,count,count,count,count,count,count,"
		    "count", "column 60: too many actions (at most 8)" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		bad(cases[i].text, cases[i].err);
}

/* A short error buffer gets what fits; none at all is fine too. */
static void
test_error_buffer(void)
{
	char err[12];

	CU_ASSERT_EQUAL(req_parse("pss", r1, err, sizeof(err)), -1);
	CU_ASSERT_STRING_EQUAL(err, "column 1: u");
	CU_ASSERT_EQUAL(req_parse("pss", r1, NULL, 0), -1);
	CU_ASSERT_EQUAL(req_parse("ps", r1, NULL, 0), 0);
}

static CU_TestInfo request_tests[] = {
	{ "information requests", test_info },
	{ "manipulation and breakpoint control", test_manip },
	{ "conditional requests", test_on },
	{ "canonical text round-trips", test_format },
	{ "the longest canonical text", test_format_longest },
	{ "no text for invalid trees", test_format_invalid },
	{ "equality", test_equal },
	{ "errors name the column", test_errors },
	{ "short error buffer", test_error_buffer },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo request_suites[] = {
	{ "request", req_init, req_clean, NULL, NULL, request_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(request_suites)
