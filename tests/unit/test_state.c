/*
 * Protects the coordinator's global state model: what it makes of a
 * released event stream (queues in arrival order, blocked states, time
 * split, groups), the problems it reports exactly once (deadlock cycles
 * and chains, waits on exited tasks, unreceived messages, harmful
 * wildcard races but not the benign master/worker collection, messages
 * unpacked with other types than they were packed with), the
 * frontiers of an event and the snapshot position, the horizon of the
 * frontiers (answers inside it unchanged, a clear error beyond it, and
 * receives that merge the clock of their send however old it is), and
 * the bound on the problems kept.  Every expectation comes from the
 * scenario each test builds.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>

#include <jansson.h>

#include "jsonstr.h"
#include "order.h"
#include "pmon-tool.h"
#include "proto.h"
#include "record.h"
#include "state.h"
#include "unit.h"

/* Decimal forms are what the JSON must show. */
#define A	0x40001		/* 262145 */
#define B	0x40002		/* 262146 */
#define C	0x40003		/* 262147 */
#define M	0x40004		/* 262148 */

#define PROB_MAX	32

static char *probs[PROB_MAX];
static int nprob;
static uint64_t clock_ns;

/* The next seq of each test task, by the low bits of its tid. */
static uint64_t seqs[16];

static void
pcollect(const struct state_problem *sp, void *arg)
{
	(void)arg;
	CU_ASSERT_FATAL(nprob < PROB_MAX);
	/* Every problem is about at least one task, the kind's own. */
	CU_ASSERT(sp->ntids >= 1);
	CU_ASSERT(strstr(sp->json, sp->kind) != NULL);
	probs[nprob] = strdup(sp->json);
	CU_ASSERT_PTR_NOT_NULL_FATAL(probs[nprob]);
	nprob++;
}

static void
pclear(void)
{
	while (nprob > 0)
		free(probs[--nprob]);
}

static struct state *
srig(void)
{
	struct state *s;

	pclear();
	clock_ns = 0;
	memset(seqs, 0, sizeof(seqs));
	s = state_new(pcollect, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	state_task(s, A, 0, 101, "vm", "a");
	state_task(s, B, 0, 102, "vm", "b");
	state_task(s, C, 0, 103, "vm", "c");
	return s;
}

static void
sdone(struct state *s)
{
	state_free(s);
	pclear();
}

/* One event as the order would release it. */
struct espec {
	int		 call, phase;
	int32_t		 peer, tag, rc, inst, bytes;
	const char	*group;
	unsigned	 npeers;
	const int32_t	*peers;
	int32_t		 mtid;		/* the matched send, if any */
	uint64_t	 mseq;
	uint64_t	 t;		/* 0: the next tick */
};

/* Encodes and decodes the record as the agent path does; returns seq. */
static uint64_t
feed(struct state *s, int32_t tid, const struct espec *e)
{
	uint8_t buf[RECORD_MAX_SIZE];
	struct order_event ev;
	struct record r;
	const char *why = NULL;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.call = (uint8_t)e->call;
	r.phase = (uint8_t)e->phase;
	r.seq = ++seqs[tid & 0xf];
	clock_ns = e->t ? e->t : clock_ns + 1000;
	r.t_ns = clock_ns;
	r.rc = e->rc;
	r.peer = e->peer;
	r.tag = e->tag;
	r.bytes = e->bytes;
	r.inst = e->inst;
	r.group = e->group;
	r.glen = e->group ? (uint8_t)strlen(e->group) : 0;
	r.npeers = (uint16_t)e->npeers;
	if (e->mtid != 0)
		r.flags = RECORD_MSG;
	n = record_encode(buf, &r, e->peers);
	CU_ASSERT_EQUAL_FATAL(record_decode(buf, n, &r, &why), 0);
	memset(&ev, 0, sizeof(ev));
	ev.tid = tid;
	ev.flags = e->mtid != 0 ? EVENT_MATCHED : 0;
	ev.match_tid = e->mtid;
	ev.match_seq = e->mseq;
	ev.t_corr = clock_ns;
	ev.rec = &r;
	state_event(s, &ev);
	return r.seq;
}

/* r of tid as the order releases it, with the event's flags, now. */
static void
release(struct state *s, int32_t tid, const struct record *r, uint8_t flags)
{
	struct order_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.tid = tid;
	ev.flags = flags;
	ev.t_corr = clock_ns;
	ev.rec = r;
	state_event(s, &ev);
}

/* pvm_send: returns the seq of its begin, the event that carries it. */
static uint64_t
ssend(struct state *s, int32_t tid, int32_t to, int32_t tag, int32_t bytes)
{
	struct espec e = { PMON_CALL_send, PMON_BEGIN, to, tag, 0, -1, bytes,
	    NULL, 0, NULL, 0, 0, 0 };
	uint64_t seq = feed(s, tid, &e);

	e.phase = PMON_END;
	feed(s, tid, &e);
	return seq;
}

static uint64_t
smcast(struct state *s, int32_t tid, unsigned n, const int32_t *to,
    int32_t tag, int32_t bytes)
{
	struct espec e = { PMON_CALL_mcast, PMON_BEGIN, -1, tag, 0, -1, bytes,
	    NULL, n, to, 0, 0, 0 };
	uint64_t seq = feed(s, tid, &e);

	e.phase = PMON_END;
	e.npeers = 0;
	feed(s, tid, &e);
	return seq;
}

static uint64_t
srecv_begin(struct state *s, int32_t tid, int32_t from, int32_t tag)
{
	struct espec e = { PMON_CALL_recv, PMON_BEGIN, from, tag, 0, -1, -1,
	    NULL, 0, NULL, 0, 0, 0 };

	return feed(s, tid, &e);
}

/* The end of a receive that got send (sender, sseq). */
static uint64_t
srecv_end(struct state *s, int32_t tid, int32_t sender, uint64_t sseq,
    int32_t tag, int32_t bytes)
{
	struct espec e = { PMON_CALL_recv, PMON_END, sender, tag, 1, -1, bytes,
	    NULL, 0, NULL, sender, sseq, 0 };

	return feed(s, tid, &e);
}

static uint64_t
srecv(struct state *s, int32_t tid, int32_t from, int32_t tag,
    int32_t sender, uint64_t sseq)
{
	srecv_begin(s, tid, from, tag);
	return srecv_end(s, tid, sender, sseq, tag, 4);
}

static void
scall(struct state *s, int32_t tid, int call, int phase, const char *group,
    int32_t rc, int32_t inst)
{
	struct espec e = { call, phase, -1, -1, rc, inst, -1, group, 0, NULL,
	    0, 0, 0 };

	feed(s, tid, &e);
}

static void
sjoin(struct state *s, int32_t tid, const char *group, int32_t inst)
{
	scall(s, tid, PMON_CALL_joingroup, PMON_BEGIN, group, 0, -1);
	scall(s, tid, PMON_CALL_joingroup, PMON_END, group, inst, inst);
}

static void
sexit(struct state *s, int32_t tid)
{
	scall(s, tid, PMON_CALL_exit, PMON_BEGIN, NULL, 0, -1);
	scall(s, tid, PMON_CALL_exit, PMON_END, NULL, 0, -1);
}

/* A call that packs or unpacks bytes; returns the seq of its end. */
static uint64_t
sbytes(struct state *s, int32_t tid, int call, int32_t bytes, int32_t rc)
{
	struct espec e = { call, PMON_BEGIN, -1, -1, 0, -1, bytes, NULL, 0,
	    NULL, 0, 0, 0 };

	feed(s, tid, &e);
	e.phase = PMON_END;
	e.rc = rc;
	return feed(s, tid, &e);
}

#define spk(s, tid, n, bytes)	sbytes(s, tid, PMON_CALL_##n, bytes, 0)
#define sinit(s, tid)		sbytes(s, tid, PMON_CALL_initsend, -1, 1)

/* The state's JSON with the given parts, in a buffer to free. */
static char *
sjson(struct state *s, unsigned parts, int32_t queue_tid)
{
	char *buf = NULL;
	size_t len;
	FILE *fp;

	fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_EQUAL(state_write(s, parts, queue_tid, fp), 0);
	fclose(fp);
	return buf;
}

/* The same parts as pmon prints them: tables made from the JSON. */
static char *
stable(struct state *s, unsigned parts)
{
	char *json = sjson(s, parts, 0), *buf = NULL;
	size_t len;
	FILE *fp;

	fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_EQUAL(render_reply(fp, "snapshot", json, strlen(json)),
	    RENDER_OK);
	fclose(fp);
	free(json);
	return buf;
}

static int
has(const char *hay, const char *needle)
{
	return hay != NULL && strstr(hay, needle) != NULL;
}

static int
nkind(const char *kind)
{
	char k[64];
	int i, n = 0;

	snprintf(k, sizeof(k), "{\"kind\":\"%s\"", kind);
	for (i = 0; i < nprob; i++)
		n += strncmp(probs[i], k, strlen(k)) == 0;
	return n;
}

/* Each blocked in a receive from the other: one deadlock, once. */
static void
test_deadlock_pair(void)
{
	struct state *s = srig();
	char *j;

	srecv_begin(s, A, B, 1);
	srecv_begin(s, B, A, 2);
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT_STRING_EQUAL(probs[0], "{\"kind\":\"deadlock\","
	    "\"tasks\":[262145,262146],\"cycle\":[262145,262146],"
	    "\"waits\":[{\"tid\":262145,\"in\":\"pvm_recv\",\"from\":262146,"
	    "\"tag\":1},{\"tid\":262146,\"in\":\"pvm_recv\",\"from\":262145,"
	    "\"tag\":2}]}");
	/* Not again: the same set. */
	CU_ASSERT_EQUAL(state_check(s), 0);
	CU_ASSERT_EQUAL(nprob, 1);
	j = sjson(s, STATE_TASKS | STATE_PROBLEMS, 0);
	CU_ASSERT(has(j, "\"state\":\"blocked\",\"blocked\":{\"in\":"
	    "\"pvm_recv\",\"from\":262146,\"tag\":1,\"ctx\":0,"
	    "\"since\":\"262145:1\"}"));
	CU_ASSERT(has(j, "\"problems\":[{\"kind\":\"deadlock\""));
	free(j);
	/*
	 * A set that grew is sent again, and replaces the one listed
	 * (test_deadlock_grows).
	 */
	srecv_begin(s, C, A, 3);
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL_FATAL(nprob, 2);
	CU_ASSERT(has(probs[1], "\"tasks\":[262145,262146,262147],"
	    "\"cycle\":[262145,262146]"));
	sdone(s);
}

/* A waits for B, B for C, C for A. */
static void
test_deadlock_cycle3(void)
{
	struct state *s = srig();

	srecv_begin(s, B, C, 0);
	srecv_begin(s, C, A, 0);
	/* Not yet: A runs and may send. */
	CU_ASSERT_EQUAL(state_check(s), 0);
	srecv_begin(s, A, B, 0);
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT(has(probs[0], "\"tasks\":[262145,262146,262147],"
	    "\"cycle\":[262145,262146,262147]"));
	sdone(s);
}

/* A message queued for a blocked receive: no deadlock. */
static void
test_deadlock_queued(void)
{
	struct state *s = srig();

	ssend(s, B, A, 1, 8);
	srecv_begin(s, A, B, 1);
	srecv_begin(s, B, A, 2);
	CU_ASSERT_EQUAL(state_check(s), 0);
	/* A wildcard receive waits for every live task, C runs. */
	sdone(s);
	s = srig();
	srecv_begin(s, A, -1, -1);
	srecv_begin(s, B, A, -1);
	CU_ASSERT_EQUAL(state_check(s), 0);
	srecv_begin(s, C, B, -1);
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL(nprob, 1);
	sdone(s);
}

static struct state *sreload(struct state *);
static void scontinue(struct state *, struct state *,
    void (*)(struct state *));

/* pvm_addmhf(src, tag) of tid, handler id mhid; pvm_delmhf of it. */
static void
shandler(struct state *s, int32_t tid, int call, int32_t src, int32_t tag,
    int32_t mhid)
{
	struct espec e = { call, PMON_BEGIN, src, tag, 0, -1, -1, NULL, 0,
	    NULL, 0, 0, 0 };

	if (call == PMON_CALL_delmhf)
		e.inst = mhid;
	feed(s, tid, &e);
	e.phase = PMON_END;
	e.rc = call == PMON_CALL_addmhf ? mhid : 0;
	feed(s, tid, &e);
}

/*
 * A waits for its workers' last words (tag 7) in a wildcard receive, B
 * and C for A's answers (tag 6): the deadlocks state_check finds.
 */
static int
sawait_answers(struct state *s)
{
	srecv_begin(s, A, -1, 7);
	srecv_begin(s, B, A, 6);
	srecv_begin(s, C, A, 6);
	return state_check(s);
}

/*
 * A's message handler takes B's and C's requests (tag 5) inside A's
 * wildcard receive, and answers them: while a request waits in A's
 * queue, A is not blocked (tests/progs/handlers, which was once
 * reported deadlocked in that window).  Without the handler, or once
 * it is deleted, it is a deadlock.
 */
static void
test_deadlock_handler(void)
{
	struct state *s = srig(), *n;
	char *j;

	shandler(s, A, PMON_CALL_addmhf, -1, 5, 3);
	ssend(s, B, A, 5, 4);
	ssend(s, C, A, 5, 4);
	CU_ASSERT_EQUAL(sawait_answers(s), 0);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
	/* The snapshot keeps the handler (a replay after a loss). */
	s = srig();
	shandler(s, A, PMON_CALL_addmhf, -1, 5, 3);
	ssend(s, B, A, 5, 4);
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"children\":[],\"handlers\":[{\"id\":3,"
	    "\"from\":-1,\"tag\":5,\"ctx\":0}]}"));
	free(j);
	n = sreload(s);
	sdone(s);
	s = n;
	CU_ASSERT_EQUAL(sawait_answers(s), 0);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
	/* A handler of another tag takes none of them. */
	s = srig();
	shandler(s, A, PMON_CALL_addmhf, -1, 8, 3);
	ssend(s, B, A, 5, 4);
	CU_ASSERT_EQUAL(sawait_answers(s), 1);
	CU_ASSERT_EQUAL(nprob, 1);
	sdone(s);
	/* Deleted (its id in pvm_delmhf's inst): none either. */
	s = srig();
	shandler(s, A, PMON_CALL_addmhf, -1, 5, 3);
	shandler(s, A, PMON_CALL_addmhf, B, 5, 4);
	shandler(s, A, PMON_CALL_delmhf, 0, 0, 3);
	ssend(s, C, A, 5, 4);
	CU_ASSERT_EQUAL(sawait_answers(s), 1);
	CU_ASSERT_EQUAL(nprob, 1);
	sdone(s);
}

static void
a_waits_b(struct state *s)
{
	srecv_begin(s, A, B, 2);
}

/*
 * The deadlocks the model lists (pmon problems, the snapshot): how many,
 * and the tasks of the last one as a JSON array in tasks.
 */
static int
sdeadlocks(struct state *s, char *tasks, size_t size)
{
	char *j = sjson(s, STATE_PROBLEMS, 0), *t;
	json_t *doc = json_loads(j, 0, NULL), *p;
	size_t i;
	int n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	tasks[0] = '\0';
	json_array_foreach(json_object_get(doc, "problems"), i, p) {
		if (strcmp(json_string_value(json_object_get(p, "kind")),
		    "deadlock") != 0)
			continue;
		n++;
		t = json_dumps(json_object_get(p, "tasks"), JSON_COMPACT);
		snprintf(tasks, size, "%s", t);
		free(t);
	}
	json_decref(doc);
	free(j);
	return n;
}

/*
 * barrierexit as the check may see it: A reaches the barrier once the
 * quitter C has left and is reported alone; then M comes and enters it
 * too.  The deadlock that grew is sent again, with both, and replaces
 * the first in the list; what is left of it once A is killed is no new
 * deadlock.  A chain that grows does the same in a model set from a
 * snapshot (which does not carry who left a group).
 */
static void
test_deadlock_grows(void)
{
	struct state *s = srig(), *n;
	char tasks[64], *j, *at;

	sjoin(s, A, "g", 0);
	sjoin(s, C, "g", 1);
	sexit(s, B);
	sexit(s, C);
	scall(s, A, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 3);
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL(nkind("deadlock"), 1);
	CU_ASSERT_EQUAL(sdeadlocks(s, tasks, sizeof(tasks)), 1);
	CU_ASSERT_STRING_EQUAL(tasks, "[262145]");
	/* M may still join: A is not stuck while it runs. */
	state_task(s, M, 0, 104, "vm", "m");
	CU_ASSERT_EQUAL(state_check(s), 0);
	sjoin(s, M, "g", 2);
	scall(s, M, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 3);
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL(state_check(s), 0);
	CU_ASSERT_EQUAL_FATAL(nkind("deadlock"), 2);
	CU_ASSERT(has(probs[nprob - 1], "{\"kind\":\"deadlock\",\"tasks\":"
	    "[262145,262148],\"chain\":[262145,262147]"));
	CU_ASSERT_EQUAL(sdeadlocks(s, tasks, sizeof(tasks)), 1);
	CU_ASSERT_STRING_EQUAL(tasks, "[262145,262148]");
	/* In the place of the first: before M's wait on the exited. */
	j = sjson(s, STATE_PROBLEMS, 0);
	CU_ASSERT_PTR_NOT_NULL(at = strstr(j, "\"tid\":262148,\"exited\""));
	CU_ASSERT(at != NULL && has(at, "\"kind\":\"deadlock\"") == 0);
	free(j);
	state_task_gone(s, A);
	CU_ASSERT_EQUAL(state_check(s), 0);
	CU_ASSERT_EQUAL(sdeadlocks(s, tasks, sizeof(tasks)), 1);
	CU_ASSERT_STRING_EQUAL(tasks, "[262145,262148]");
	sdone(s);

	/* B waits for C, which exited; then A for B: as above, once reloaded. */
	s = srig();
	sexit(s, C);
	srecv_begin(s, B, C, 1);
	CU_ASSERT_EQUAL(state_check(s), 1);
	n = sreload(s);
	scontinue(s, n, a_waits_b);
	CU_ASSERT_EQUAL(sdeadlocks(n, tasks, sizeof(tasks)), 1);
	CU_ASSERT_STRING_EQUAL(tasks, "[262145,262146]");
	state_free(n);
	sdone(s);
}

/*
 * A deadlock a kill ended is over: "over":true in the JSON (worked out
 * as it is written, so a model loaded from the snapshot says the same),
 * "deadlock (over)" in pmon problems, after the problems of now.
 */
static void
test_problem_over(void)
{
	struct state *s = srig(), *n;
	char *j, *t;

	srecv_begin(s, A, B, 1);
	srecv_begin(s, B, A, 2);
	CU_ASSERT_EQUAL(state_check(s), 1);
	j = sjson(s, STATE_PROBLEMS, 0);
	CU_ASSERT(has(j, "\"kind\":\"deadlock\"") && !has(j, "\"over\""));
	free(j);
	state_task_gone(s, A);
	CU_ASSERT_EQUAL(state_check(s), 0);
	j = sjson(s, STATE_PROBLEMS, 0);
	CU_ASSERT(has(j, "{\"kind\":\"deadlock\",\"tasks\":[262145,262146],"));
	CU_ASSERT(has(j, ",\"over\":true}"));
	/* B still waits, on an exited task: a problem of now, first. */
	t = stable(s, STATE_PROBLEMS);
	CU_ASSERT(strncmp(t, "waits_on_exited t40002 waits in pvm_recv on "
	    "t40001, which exited\ndeadlock (over) t40001 t40002: ", 96) == 0);
	free(t);
	n = sreload(s);
	t = sjson(n, STATE_PROBLEMS, 0);
	CU_ASSERT_STRING_EQUAL(t, j);
	free(t);
	free(j);
	state_free(n);
	sdone(s);
}

/* A request and a reply, then both exit: nothing to report. */
static void
test_clean_exchange(void)
{
	struct state *s = srig();
	uint64_t req, rep;
	char *j;

	req = ssend(s, A, B, 1, 40);
	srecv(s, B, A, 1, A, req);
	rep = ssend(s, B, A, 2, 80);
	srecv(s, A, B, 2, B, rep);
	CU_ASSERT_EQUAL(state_check(s), 0);
	j = sjson(s, STATE_QUEUES | STATE_TRAFFIC, 0);
	CU_ASSERT(has(j, "\"queues\":[]"));
	CU_ASSERT(has(j, "{\"from\":262145,\"to\":262146,\"msgs\":1,"
	    "\"bytes\":40}"));
	CU_ASSERT(has(j, "{\"from\":262146,\"to\":262145,\"msgs\":1,"
	    "\"bytes\":80}"));
	free(j);
	sexit(s, A);
	sexit(s, B);
	CU_ASSERT_EQUAL(state_check(s), 0);
	CU_ASSERT_EQUAL(nprob, 0);
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"tid\":262145,\"host\":\"vm\",\"pid\":101,"
	    "\"parent\":0,\"program\":\"a\",\"state\":\"exited\","
	    "\"exit_status\":0,\"calls\":3,\"sent\":{\"msgs\":1,\"bytes\":40},"
	    "\"received\":{\"msgs\":1,\"bytes\":4}"));
	free(j);
	sdone(s);
}

/*
 * B and C send concurrently to A; A's wildcard receive gets B's, then a
 * receive from C alone takes C's: the arrival order chose the path.
 */
static void
test_race(void)
{
	struct state *s = srig();
	uint64_t sb, sc, r;

	sb = ssend(s, B, A, 5, 4);
	sc = ssend(s, C, A, 5, 4);
	r = srecv(s, A, -1, 5, B, sb);
	CU_ASSERT_EQUAL(nprob, 0);
	srecv(s, A, C, 5, C, sc);
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT_EQUAL(r, 2);
	CU_ASSERT_STRING_EQUAL(probs[0], "{\"kind\":\"race\",\"tid\":262145,"
	    "\"recv\":\"262145:2\",\"tag\":5,\"sends\":[\"262146:1\","
	    "\"262147:1\"]}");
	sdone(s);

	/* The same when C's send is released after A's receive. */
	s = srig();
	sb = ssend(s, B, A, 5, 4);
	srecv(s, A, -1, 5, B, sb);
	sc = ssend(s, C, A, 5, 4);
	srecv(s, A, C, 5, C, sc);
	CU_ASSERT_EQUAL(nkind("race"), 1);
	sdone(s);
}

/* C sent only after it heard of A's receive: no race. */
static void
test_race_causal(void)
{
	struct state *s = srig();
	uint64_t sb, sc, sa;

	sb = ssend(s, B, A, 5, 4);
	srecv(s, A, -1, 5, B, sb);
	sa = ssend(s, A, C, 9, 4);
	srecv(s, C, A, 9, A, sa);
	sc = ssend(s, C, A, 5, 4);
	srecv(s, A, C, 5, C, sc);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
}

/*
 * master1: the master multicasts work, every worker sends a result and
 * the master collects them with pvm_recv(-1, tag).  Whatever order they
 * come in, the same receives take them: no race.
 */
static void
test_master_collect(void)
{
	struct state *s = srig();
	const int32_t w[3] = { A, B, C };
	uint64_t work, res[3];
	int i;

	state_task(s, M, 0, 104, "vm", "master1");
	work = smcast(s, M, 3, w, 1, 100);
	for (i = 0; i < 3; i++) {
		srecv(s, w[i], M, 1, M, work);
		res[i] = ssend(s, w[i], M, 5, 8);
	}
	srecv(s, M, -1, 5, B, res[1]);
	srecv(s, M, -1, 5, C, res[2]);
	srecv(s, M, -1, 5, A, res[0]);
	for (i = 0; i < 3; i++)
		sexit(s, w[i]);
	sexit(s, M);
	CU_ASSERT_EQUAL(state_check(s), 0);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
}

/* The message that lost a wildcard race is never received. */
static void
test_race_unreceived(void)
{
	struct state *s = srig();
	uint64_t sb;

	sb = ssend(s, B, A, 5, 4);
	ssend(s, C, A, 5, 12);
	srecv(s, A, -1, 5, B, sb);
	sexit(s, A);
	CU_ASSERT_EQUAL(nkind("unreceived"), 1);
	CU_ASSERT_EQUAL(nkind("race"), 1);
	CU_ASSERT_EQUAL(nprob, 2);
	sdone(s);
}

/* A and B wait in a barrier for C, which exits instead. */
static void
test_barrier_exit(void)
{
	struct state *s = srig();
	char *j;

	sjoin(s, A, "g", 0);
	sjoin(s, B, "g", 1);
	sjoin(s, C, "g", 2);
	scall(s, A, PMON_CALL_barrier, PMON_BEGIN, "g", 0, -1);
	scall(s, B, PMON_CALL_barrier, PMON_BEGIN, "g", 0, -1);
	j = sjson(s, STATE_GROUPS, 0);
	CU_ASSERT(has(j, "\"groups\":[{\"name\":\"g\",\"members\":["
	    "{\"tid\":262145,\"inst\":0},{\"tid\":262146,\"inst\":1},"
	    "{\"tid\":262147,\"inst\":2}],\"barrier\":{\"waiting\":"
	    "[262145,262146]}}]"));
	free(j);
	CU_ASSERT_EQUAL(state_check(s), 0);
	sexit(s, C);
	CU_ASSERT_EQUAL_FATAL(nprob, 2);
	CU_ASSERT_STRING_EQUAL(probs[0], "{\"kind\":\"waits_on_exited\","
	    "\"tid\":262145,\"exited\":262147,\"in\":\"pvm_barrier\"}");
	CU_ASSERT_STRING_EQUAL(probs[1], "{\"kind\":\"waits_on_exited\","
	    "\"tid\":262146,\"exited\":262147,\"in\":\"pvm_barrier\"}");
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL_FATAL(nprob, 3);
	CU_ASSERT_STRING_EQUAL(probs[2], "{\"kind\":\"deadlock\","
	    "\"tasks\":[262145,262146],\"chain\":[262145,262147],"
	    "\"waits\":[{\"tid\":262145,\"in\":\"pvm_barrier\",\"group\":\"g\"},"
	    "{\"tid\":262146,\"in\":\"pvm_barrier\",\"group\":\"g\"}]}");
	j = sjson(s, STATE_GROUPS, 0);
	CU_ASSERT(has(j, "\"members\":[{\"tid\":262145,\"inst\":0},"
	    "{\"tid\":262146,\"inst\":1}]"));
	free(j);
	sdone(s);
}

/*
 * The same, but C's exit is released before the barrier entries (they
 * are concurrent): each entry finds the count out of reach.
 */
static void
test_barrier_exit_first(void)
{
	struct state *s = srig();

	sjoin(s, A, "g", 0);
	sjoin(s, B, "g", 1);
	sjoin(s, C, "g", 2);
	sexit(s, C);
	CU_ASSERT_EQUAL(nprob, 0);
	scall(s, A, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 3);
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT_STRING_EQUAL(probs[0], "{\"kind\":\"waits_on_exited\","
	    "\"tid\":262145,\"exited\":262147,\"in\":\"pvm_barrier\"}");
	/* A waits for B, which runs. */
	CU_ASSERT_EQUAL(state_check(s), 0);
	scall(s, B, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 3);
	CU_ASSERT_EQUAL_FATAL(nprob, 2);
	CU_ASSERT(has(probs[1], "\"tid\":262146,\"exited\":262147"));
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL_FATAL(nprob, 3);
	CU_ASSERT(has(probs[2], "\"tasks\":[262145,262146],"
	    "\"chain\":[262145,262147]"));
	sdone(s);
}

/*
 * C exited, A and B run a barrier of 2: once both entered it is
 * complete even before its exits are released.  Nothing to report.
 */
static void
test_barrier_count_reached(void)
{
	struct state *s = srig();

	sjoin(s, A, "g", 0);
	sjoin(s, B, "g", 1);
	sjoin(s, C, "g", 2);
	sexit(s, C);
	scall(s, A, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 2);
	scall(s, B, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 2);
	CU_ASSERT_EQUAL(state_check(s), 0);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
}

/* A barrier everybody reaches ends, and orders its members' events. */
static void
test_barrier_clean(void)
{
	struct state *s = srig();

	sjoin(s, A, "g", 0);
	sjoin(s, B, "g", 1);
	scall(s, A, PMON_CALL_barrier, PMON_BEGIN, "g", 0, -1);	/* A:3 */
	scall(s, B, PMON_CALL_barrier, PMON_BEGIN, "g", 0, -1);	/* B:3 */
	scall(s, A, PMON_CALL_barrier, PMON_END, "g", 0, -1);	/* A:4 */
	scall(s, B, PMON_CALL_barrier, PMON_END, "g", 0, -1);	/* B:4 */
	CU_ASSERT_EQUAL(state_check(s), 0);
	sexit(s, A);
	sexit(s, B);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
}

/* A waits for B, which is killed: a wait on the exited, then a chain. */
static void
test_recv_killed(void)
{
	struct state *s = srig();
	char *j;

	srecv_begin(s, A, B, 3);
	state_task_gone(s, B);
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT_STRING_EQUAL(probs[0], "{\"kind\":\"waits_on_exited\","
	    "\"tid\":262145,\"exited\":262146,\"in\":\"pvm_recv\"}");
	CU_ASSERT_EQUAL(state_check(s), 1);
	CU_ASSERT_EQUAL_FATAL(nprob, 2);
	CU_ASSERT(has(probs[1], "\"tasks\":[262145],\"chain\":[262145,"
	    "262146]"));
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"tid\":262146,\"host\":\"vm\",\"pid\":102,"
	    "\"parent\":0,\"program\":\"b\",\"state\":\"killed\""));
	free(j);
	sdone(s);
}

static void
test_unreceived(void)
{
	struct state *s = srig();

	ssend(s, A, B, 7, 100);
	sexit(s, B);
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT_STRING_EQUAL(probs[0], "{\"kind\":\"unreceived\","
	    "\"tid\":262146,\"from\":262145,\"tag\":7,\"ctx\":0,"
	    "\"bytes\":100,\"send\":\"262145:1\"}");
	sdone(s);
}

/*
 * The end of tid's receive of message id from `from` that the order
 * released unmatched (EVENT_UNMATCHED): its send was lost, came before
 * the model began, or is still to come.
 */
static void
srecv_id_unmatched(struct state *s, int32_t tid, int32_t from, int32_t tag,
    uint32_t id)
{
	uint8_t buf[RECORD_MAX_SIZE];
	struct record r;
	const char *why = NULL;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_recv;
	r.phase = PMON_END;
	r.seq = ++seqs[tid & 0xf];
	r.t_ns = clock_ns += 1000;
	r.rc = 1;
	r.peer = from;
	r.tag = tag;
	r.bytes = 4;
	r.inst = (int32_t)id;
	r.flags = RECORD_MSG | RECORD_MSGID;
	n = record_encode(buf, &r, NULL);
	CU_ASSERT_EQUAL_FATAL(record_decode(buf, n, &r, &why), 0);
	release(s, tid, &r, EVENT_UNMATCHED);
}

/*
 * An unmatched receive that names its message takes that message and
 * no other.  When its sender is past the id (the send is not in the
 * model: lost, or before it), A's next message to B stays queued and is
 * unreceived at B's exit; when the send is still to come, it is the
 * receive's and nothing is left.
 */
static void
test_recv_id_unmatched(void)
{
	struct state *s = srig();

	seqs[A & 0xf] = 10;		/* A:1-10 not in the model */
	sinit(s, A);			/* A:11, 12 */
	srecv_id_unmatched(s, B, A, 7, 5);
	ssend(s, A, B, 7, 100);		/* A:13, not the one B took */
	sexit(s, B);
	CU_ASSERT_EQUAL_FATAL(nkind("unreceived"), 1);
	CU_ASSERT(has(probs[0], "\"send\":\"262145:13\""));
	sdone(s);

	s = srig();
	sinit(s, A);			/* A:1, 2 */
	srecv_id_unmatched(s, B, A, 7, 3);
	ssend(s, A, B, 7, 100);		/* A:3, the one B took */
	sexit(s, B);
	CU_ASSERT_EQUAL(nkind("unreceived"), 0);
	sdone(s);
}

/*
 * A message handler runs inside A's pvm_recv: its begin receives B's
 * message (off A's queue, no unreceived at A's exit), its send is A's,
 * and at its end A is blocked in the receive again.
 */
static void
test_handler(void)
{
	struct state *s = srig();
	uint64_t b1;
	char *j;

	b1 = ssend(s, B, A, 5, 4);
	srecv_begin(s, A, C, 7);
	{
		struct espec h = { PMON_CALL_HANDLER, PMON_BEGIN, B, 5, 0, -1,
		    4, NULL, 0, NULL, B, b1, 0 };

		feed(s, A, &h);
		j = sjson(s, STATE_TASKS | STATE_QUEUES, A);
		CU_ASSERT(has(j, "\"program\":\"a\",\"state\":\"running\""));
		CU_ASSERT(has(j, "\"queues\":[{\"tid\":262145,\"messages\":[]}]"));
		free(j);
		ssend(s, A, B, 6, 4);
		h.phase = PMON_END;
		h.mtid = 0;
		feed(s, A, &h);
	}
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"program\":\"a\",\"state\":\"blocked\","
	    "\"blocked\":{\"in\":\"pvm_recv\",\"from\":262147,\"tag\":7"));
	CU_ASSERT(has(j, "\"tid\":262145,\"host\":\"vm\",\"pid\":101,"));
	free(j);
	srecv(s, B, A, 6, A, seqs[A & 0xf] - 2);	/* A:3, in the handler */
	sexit(s, A);
	sexit(s, B);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
}

/* Messages wait in their receiver's queue in the order sent. */
static void
test_queue_order(void)
{
	struct state *s = srig();
	uint64_t b1;
	char *j;

	ssend(s, A, C, 1, 10);		/* A:1 */
	b1 = ssend(s, B, C, 2, 20);	/* B:1 */
	ssend(s, A, C, 3, 30);		/* A:3 */
	ssend(s, A, B, 4, 40);		/* A:5 */
	j = sjson(s, STATE_QUEUES, C);
	CU_ASSERT_STRING_EQUAL(j, "{\"position\":{\"262145\":6,"
	    "\"262146\":2,\"262147\":0},\"queues\":[{\"tid\":262147,"
	    "\"messages\":[{\"from\":262145,\"tag\":1,\"ctx\":0,\"bytes\":10,"
	    "\"send\":\"262145:1\"},{\"from\":262146,\"tag\":2,\"ctx\":0,"
	    "\"bytes\":20,\"send\":\"262146:1\"},{\"from\":262145,\"tag\":3,"
	    "\"ctx\":0,\"bytes\":30,\"send\":\"262145:3\"}]}]}");
	free(j);
	srecv(s, C, B, 2, B, b1);
	j = sjson(s, STATE_QUEUES, 0);
	CU_ASSERT(has(j, "\"queues\":[{\"tid\":262146,\"messages\":["
	    "{\"from\":262145,\"tag\":4,\"ctx\":0,\"bytes\":40,"
	    "\"send\":\"262145:5\"}]},{\"tid\":262147,\"messages\":["
	    "{\"from\":262145,\"tag\":1,\"ctx\":0,\"bytes\":10,"
	    "\"send\":\"262145:1\"},{\"from\":262145,\"tag\":3,\"ctx\":0,"
	    "\"bytes\":30,\"send\":\"262145:3\"}]}]"));
	free(j);
	sdone(s);
}

/*
 * A -> B -> C: A:1 sends, B:2 receives it, B:3 sends, C:2 receives.
 */
static void
chain3(struct state *s)
{
	uint64_t a, b;

	a = ssend(s, A, B, 1, 4);	/* A:1, A:2 */
	srecv(s, B, A, 1, A, a);	/* B:1, B:2 */
	b = ssend(s, B, C, 1, 4);	/* B:3, B:4 */
	srecv(s, C, B, 1, B, b);	/* C:1, C:2 */
}

static char *
sfrontier(struct state *s, int32_t tid, uint64_t seq)
{
	char why[256] = "", *buf = NULL;
	size_t len;
	FILE *fp;

	fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_EQUAL(state_frontier(s, tid, seq, fp, why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(why, "");
	fclose(fp);
	return buf;
}

/* The frontier's error, "" when it answers. */
static const char *
sfrontier_err(struct state *s, int32_t tid, uint64_t seq)
{
	static char why[256];
	char *buf = NULL;
	size_t len;
	FILE *fp;

	why[0] = '\0';
	fp = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	if (state_frontier(s, tid, seq, fp, why, sizeof(why)) == 0)
		CU_ASSERT_STRING_EQUAL(why, "");
	fclose(fp);
	/* Nothing is written when it fails. */
	CU_ASSERT(why[0] == '\0' || len == 0);
	free(buf);
	return why;
}

static void
test_frontier(void)
{
	struct state *s = srig();
	char why[256];
	char *j;

	chain3(s);
	/* B's send: after A's send only, before B's end and C's receive. */
	j = sfrontier(s, B, 3);
	CU_ASSERT_STRING_EQUAL(j, "{\"event\":\"262146:3\",\"past\":{"
	    "\"262145\":1,\"262146\":2,\"262147\":null},\"future\":{"
	    "\"262145\":null,\"262146\":4,\"262147\":2}}");
	free(j);
	/* A's send reaches C through B. */
	j = sfrontier(s, A, 1);
	CU_ASSERT_STRING_EQUAL(j, "{\"event\":\"262145:1\",\"past\":{"
	    "\"262145\":null,\"262146\":null,\"262147\":null},\"future\":{"
	    "\"262145\":2,\"262146\":2,\"262147\":2}}");
	free(j);
	/* A's send end is concurrent with everything of B and C. */
	j = sfrontier(s, A, 2);
	CU_ASSERT(has(j, "\"future\":{\"262145\":null,\"262146\":null,"
	    "\"262147\":null}"));
	free(j);
	CU_ASSERT_EQUAL(state_frontier(s, C, 3, stdout, why, sizeof(why)),
	    -1);
	CU_ASSERT_STRING_EQUAL(why, "event not seen yet");
	CU_ASSERT_EQUAL(state_frontier(s, M, 1, stdout, why, sizeof(why)),
	    -1);
	CU_ASSERT_STRING_EQUAL(why, "unknown task");
	sdone(s);
}

/* The position names the last event of each task the state includes. */
static void
test_position(void)
{
	struct state *s = srig();
	char *j;

	j = sjson(s, 0, 0);
	CU_ASSERT_STRING_EQUAL(j, "{\"position\":{\"262145\":0,"
	    "\"262146\":0,\"262147\":0}}");
	free(j);
	chain3(s);
	j = sjson(s, 0, 0);
	CU_ASSERT_STRING_EQUAL(j, "{\"position\":{\"262145\":2,"
	    "\"262146\":4,\"262147\":2}}");
	free(j);
	sdone(s);
}

/* Inside PVM, blocked (part of it) and computing, from corrected times. */
static void
test_times(void)
{
	struct state *s = srig();
	struct espec e = { PMON_CALL_recv, PMON_BEGIN, B, 1, 0, -1, -1, NULL,
	    0, NULL, 0, 0, 1000 };
	uint64_t sb;
	char *j;

	sb = ssend(s, B, A, 1, 4);			/* t 1000, 2000 */
	feed(s, A, &e);					/* recv at 1000 */
	e.phase = PMON_END;
	e.mtid = B;
	e.mseq = sb;
	e.t = 5000;
	feed(s, A, &e);
	e = (struct espec){ PMON_CALL_send, PMON_BEGIN, B, 2, 0, -1, 4, NULL,
	    0, NULL, 0, 0, 6000 };
	feed(s, A, &e);
	e.phase = PMON_END;
	e.t = 7000;
	feed(s, A, &e);
	e = (struct espec){ PMON_CALL_exit, PMON_BEGIN, -1, -1, 0, -1, -1,
	    NULL, 0, NULL, 0, 0, 10000 };
	feed(s, A, &e);
	j = sjson(s, STATE_TASKS, 0);
	/* Life 9000: 4000 in recv, 1000 in send, the rest computing. */
	CU_ASSERT(has(j, "\"time_ns\":{\"computing\":4000,\"pvm\":5000,"
	    "\"blocked\":4000},\"last_seq\":5"));
	free(j);
	sdone(s);
}

/* The spawn tree: children by the spawn's end and by registration. */
static void
test_spawn_tree(void)
{
	struct state *s = srig();
	struct espec e = { PMON_CALL_spawn, PMON_BEGIN, -1, -1, 0, -1, -1,
	    NULL, 0, NULL, 0, 0, 0 };
	const int32_t kids[2] = { 0x40005, 0x40006 };
	char *j;

	feed(s, A, &e);					/* A:1 */
	state_task(s, 0x40005, A, 105, "vm", "kid");
	scall(s, 0x40005, PMON_CALL_mytid, PMON_BEGIN, NULL, 0, -1);
	e.phase = PMON_END;
	e.rc = 2;
	e.npeers = 2;
	e.peers = kids;
	feed(s, A, &e);					/* A:2 */
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"children\":[262149,262150]"));
	CU_ASSERT(has(j, "\"tid\":262149,\"host\":\"vm\",\"pid\":105,"
	    "\"parent\":262145"));
	free(j);
	/* The child's first event follows the spawn begin. */
	j = sfrontier(s, A, 1);
	CU_ASSERT(has(j, "\"262149\":1"));
	free(j);
	sdone(s);
}

/* A lost marker for count events of tid, as order's add_lost makes it. */
static void
flost(struct state *s, int32_t tid, uint64_t count)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_LOST;
	r.phase = PMON_BEGIN;
	r.seq = seqs[tid & 0xf] + 1;
	seqs[tid & 0xf] += count;
	r.t_ns = clock_ns;
	r.peer = -1;
	r.tag = -1;
	r.inst = -1;
	r.bytes = (int32_t)count;
	r.len = RECORD_HDR_SIZE;
	release(s, tid, &r, EVENT_LOST);
}

/* Lost markers add up per task, in the snapshot and in pmon ps. */
static void
test_lost(void)
{
	struct state *s = srig();
	char *buf, *j;

	ssend(s, A, B, 1, 4);
	flost(s, A, 40);
	ssend(s, A, B, 1, 4);
	flost(s, A, 3);
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"last_seq\":47,\"lost\":43,"));
	CU_ASSERT(has(j, "\"tid\":262146,") && has(j, "\"lost\":0,"));
	free(j);
	buf = stable(s, STATE_TASKS);
	CU_ASSERT(has(buf, "LOST\n"));
	CU_ASSERT(has(buf, " 43\n"));
	free(buf);
	sdone(s);
}

static void
test_text(void)
{
	struct state *s = srig();
	char *buf;

	state_host(s, 0x40000, "vm", "LINUX64", 1);
	srecv_begin(s, A, B, 1);
	srecv_begin(s, B, A, 2);
	state_check(s);
	buf = stable(s, STATE_ALL);
	CU_ASSERT(has(buf, "TID       HOST"));
	CU_ASSERT(has(buf, "t40001    vm           a              blocked     "
	    "pvm_recv(t40002,1)"));
	CU_ASSERT(has(buf, "LINUX64"));
	CU_ASSERT(has(buf, "deadlock        t40001 t40002:"));
	free(buf);
	buf = sjson(s, STATE_HOSTS, 0);
	CU_ASSERT(has(buf, "\"hosts\":[{\"host_tid\":262144,\"name\":\"vm\","
	    "\"arch\":\"LINUX64\",\"agent\":\"up\"}]"));
	free(buf);
	sdone(s);
}

/*
 * What was packed, unpacked in other chunks: 10 ints as 4 + 6, doubles
 * one by one, strings one by one.  Packs after a send make the next
 * send of the same buffer longer; the receiver's own initsend and packs
 * do not touch what it unpacks.
 */
static void
test_unpack_clean(void)
{
	struct state *s = srig();
	uint64_t s1, s2;

	sinit(s, A);
	spk(s, A, pkint, 40);
	spk(s, A, pkdouble, 16);
	spk(s, A, pkstr, 5);
	spk(s, A, pkstr, 0);
	s1 = ssend(s, A, B, 1, 80);
	spk(s, A, pkbyte, 3);
	s2 = ssend(s, A, B, 2, 84);
	srecv(s, B, A, 1, A, s1);
	sinit(s, B);
	spk(s, B, pkdouble, 8);
	spk(s, B, upkint, 16);
	spk(s, B, upkint, 24);
	spk(s, B, upkdouble, 8);
	spk(s, B, upkdouble, 8);
	spk(s, B, upkstr, 5);
	spk(s, B, upkstr, 0);
	srecv(s, B, A, 2, A, s2);
	spk(s, B, upkint, 40);
	spk(s, B, upkdouble, 16);
	spk(s, B, upkstr, 5);
	spk(s, B, upkstr, 0);
	spk(s, B, upkbyte, 1);
	spk(s, B, upkbyte, 2);
	/* Unpacking only a part is no mistake. */
	s1 = ssend(s, A, C, 3, 84);
	srecv(s, C, A, 3, A, s1);
	spk(s, C, upkint, 4);
	sexit(s, A);
	sexit(s, B);
	sexit(s, C);
	CU_ASSERT_EQUAL(state_check(s), 0);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
}

/* Two ints and a double packed, three ints unpacked: reported once. */
static void
test_unpack_type(void)
{
	struct state *s = srig();
	char *buf = NULL;
	uint64_t sa;

	sinit(s, A);				/* A:1, A:2 */
	spk(s, A, pkint, 4);			/* A:3, A:4 */
	spk(s, A, pkint, 4);			/* A:5, A:6 */
	spk(s, A, pkdouble, 8);			/* A:7, A:8 */
	sa = ssend(s, A, B, 1, 16);		/* A:9, A:10 */
	srecv(s, B, A, 1, A, sa);		/* B:1, B:2 */
	spk(s, B, upkint, 4);			/* B:3, B:4 */
	spk(s, B, upkint, 4);			/* B:5, B:6 */
	spk(s, B, upkint, 4);			/* B:7, B:8 */
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT_STRING_EQUAL(probs[0], "{\"kind\":\"unpack_mismatch\","
	    "\"tid\":262146,\"recv\":\"262146:2\",\"send\":\"262145:9\","
	    "\"from\":262145,\"tag\":1,\"at\":\"262146:8\","
	    "\"packed\":\"pvm_pkdouble\",\"unpacked\":\"pvm_upkint\","
	    "\"offset\":8}");
	/* Once per message. */
	spk(s, B, upkint, 4);
	spk(s, B, upkdouble, 8);
	CU_ASSERT_EQUAL(nprob, 1);
	buf = stable(s, STATE_PROBLEMS);
	CU_ASSERT_STRING_EQUAL(buf, "unpack_mismatch t40002: pvm_upkint at "
	    "t40002:8, 8 B into the message of send t40001:9 (tag 1), where "
	    "pvm_pkdouble was packed\n");
	free(buf);

	/* The type must be the same, not only its size. */
	sinit(s, A);
	spk(s, A, pkint, 4);
	sa = ssend(s, A, B, 2, 4);
	srecv(s, B, A, 2, A, sa);
	spk(s, B, upkuint, 4);
	CU_ASSERT_EQUAL_FATAL(nprob, 2);
	CU_ASSERT(has(probs[1], "\"packed\":\"pvm_pkint\","
	    "\"unpacked\":\"pvm_upkuint\",\"offset\":0}"));

	/* A string is no bytes. */
	sinit(s, A);
	spk(s, A, pkstr, 3);
	sa = ssend(s, A, B, 3, 8);
	srecv(s, B, A, 3, A, sa);
	spk(s, B, upkbyte, 3);
	CU_ASSERT_EQUAL_FATAL(nprob, 3);
	CU_ASSERT(has(probs[2], "\"packed\":\"pvm_pkstr\","
	    "\"unpacked\":\"pvm_upkbyte\",\"offset\":0}"));
	CU_ASSERT_EQUAL(nkind("unpack_mismatch"), 3);
	sdone(s);
}

/* More unpacked than packed, by the model or by PVM's own answer. */
static void
test_unpack_past_end(void)
{
	struct state *s = srig();
	uint64_t sa, at;
	char want[128];

	sinit(s, A);
	spk(s, A, pkint, 4);
	sa = ssend(s, A, B, 1, 4);
	srecv(s, B, A, 1, A, sa);
	spk(s, B, upkint, 4);
	at = sbytes(s, B, PMON_CALL_upkint, 4, -5);	/* PvmNoData */
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	snprintf(want, sizeof(want), "\"at\":\"262146:%" PRIu64 "\","
	    "\"packed\":null,\"unpacked\":\"pvm_upkint\",\"offset\":4}",
	    at);
	CU_ASSERT(has(probs[0], want));

	/* More ints in a row than were packed, with a double after them. */
	sinit(s, A);
	spk(s, A, pkint, 8);
	spk(s, A, pkdouble, 8);
	sa = ssend(s, A, B, 2, 16);
	srecv(s, B, A, 2, A, sa);
	spk(s, B, upkint, 12);
	CU_ASSERT_EQUAL_FATAL(nprob, 2);
	CU_ASSERT(has(probs[1], "\"packed\":\"pvm_pkint\","
	    "\"unpacked\":\"pvm_upkint\",\"offset\":0}"));

	/* One string more than packed; PVM said so too. */
	sinit(s, A);
	spk(s, A, pkstr, 2);
	sa = ssend(s, A, B, 3, 8);
	srecv(s, B, A, 3, A, sa);
	sbytes(s, B, PMON_CALL_upkstr, 2, 0);
	sbytes(s, B, PMON_CALL_upkstr, -1, -5);
	CU_ASSERT_EQUAL_FATAL(nprob, 3);
	CU_ASSERT(has(probs[2], "\"packed\":null,\"unpacked\":"
	    "\"pvm_upkstr\",\"offset\":2}"));

	/* An empty message has nothing to unpack. */
	sinit(s, A);
	sa = ssend(s, A, B, 4, 0);
	srecv(s, B, A, 4, A, sa);
	spk(s, B, upkint, 4);
	CU_ASSERT_EQUAL(nkind("unpack_mismatch"), 4);

	/* PVM found the end where the model did not: PVM is right. */
	sinit(s, A);
	spk(s, A, pkint, 8);
	sa = ssend(s, A, B, 5, 8);
	srecv(s, B, A, 5, A, sa);
	sbytes(s, B, PMON_CALL_upkint, 4, -5);
	CU_ASSERT_EQUAL_FATAL(nprob, 5);
	CU_ASSERT(has(probs[4], "\"packed\":\"pvm_pkint\","
	    "\"unpacked\":\"pvm_upkint\",\"offset\":0}"));
	sdone(s);
}

/* Checks the message of (from, tag) unpacked as a double: not reported. */
static void
unpack_unchecked(struct state *s, int32_t tag)
{
	srecv(s, B, A, tag, A, ssend(s, A, B, tag, 4));
	spk(s, B, upkdouble, 8);
}

/*
 * Senders whose packs cannot be followed, and receive buffers that
 * change in ways the model does not follow: nothing is reported.
 */
static void
test_unpack_unchecked(void)
{
	struct state *s = srig();
	struct espec ps = { PMON_CALL_psend, PMON_BEGIN, B, 7, 0, -1, 8,
	    NULL, 0, NULL, 0, 0, 0 };
	uint64_t sa;
	int i;

	/* No pvm_initsend seen. */
	spk(s, A, pkint, 4);
	unpack_unchecked(s, 1);
	/* Packed by calls that do not say what. */
	sinit(s, A);
	spk(s, A, pkint, 4);
	sbytes(s, A, PMON_CALL_pkmesg, 4, 0);
	unpack_unchecked(s, 2);
	sinit(s, A);
	sbytes(s, A, PMON_CALL_packf, 4, 0);
	unpack_unchecked(s, 3);
	/* A buffer of its own making. */
	sinit(s, A);
	sbytes(s, A, PMON_CALL_setsbuf, -1, 1);
	spk(s, A, pkint, 4);
	unpack_unchecked(s, 4);
	/* A pack that failed. */
	sinit(s, A);
	sbytes(s, A, PMON_CALL_pkint, 4, -15);
	unpack_unchecked(s, 5);
	/* Too many runs to keep. */
	sinit(s, A);
	for (i = 0; i < 40; i++)
		sbytes(s, A, i % 2 ? PMON_CALL_pkint : PMON_CALL_pkdouble,
		    i % 2 ? 4 : 8, 0);
	unpack_unchecked(s, 6);
	/* pvm_psend packs itself. */
	sinit(s, A);
	spk(s, A, pkint, 4);
	sa = feed(s, A, &ps);
	ps.phase = PMON_END;
	feed(s, A, &ps);
	srecv(s, B, A, 7, A, sa);
	spk(s, B, upkdouble, 8);
	CU_ASSERT_EQUAL(nprob, 0);

	/* The receive buffer changed: set, freed, or lost records. */
	sinit(s, A);
	spk(s, A, pkint, 4);
	sa = ssend(s, A, B, 8, 4);
	srecv(s, B, A, 8, A, sa);
	sbytes(s, B, PMON_CALL_setrbuf, -1, 1);
	spk(s, B, upkdouble, 8);
	sa = ssend(s, A, B, 9, 4);
	srecv(s, B, A, 9, A, sa);
	sbytes(s, B, PMON_CALL_freebuf, -1, 0);
	spk(s, B, upkdouble, 8);
	/* A receive that got nothing, or a message not matched. */
	sa = ssend(s, A, B, 10, 4);
	srecv(s, B, A, 10, A, sa);
	srecv_begin(s, B, A, 11);
	srecv_end(s, B, 0, 0, 11, -1);
	spk(s, B, upkdouble, 8);
	/* PVM found no receive buffer: the model lost track. */
	sa = ssend(s, A, B, 12, 4);
	srecv(s, B, A, 12, A, sa);
	sbytes(s, B, PMON_CALL_upkint, 4, -15);
	spk(s, B, upkint, 4);
	CU_ASSERT_EQUAL(nprob, 0);
	sdone(s);
}

/*
 * One multicast (and one broadcast) to A and B: each receiver is
 * checked on its own against the same packs.
 */
static void
test_unpack_mcast(void)
{
	struct state *s = srig();
	const int32_t to[2] = { A, B };
	struct espec e = { PMON_CALL_bcast, PMON_BEGIN, -1, 3, 0, -1, 12,
	    "g", 0, NULL, 0, 0, 0 };
	uint64_t sm, sb;

	state_task(s, M, 0, 104, "vm", "m");
	sinit(s, M);
	spk(s, M, pkint, 4);
	spk(s, M, pkdouble, 8);
	sm = smcast(s, M, 2, to, 2, 12);
	srecv(s, A, M, 2, M, sm);
	spk(s, A, upkint, 4);
	spk(s, A, upkdouble, 8);
	srecv(s, B, M, 2, M, sm);
	spk(s, B, upkint, 4);
	spk(s, B, upkint, 4);
	CU_ASSERT_EQUAL_FATAL(nprob, 1);
	CU_ASSERT(has(probs[0], "\"tid\":262146,"));
	CU_ASSERT(has(probs[0], "\"from\":262148,\"tag\":2,"));

	/* The destinations of a broadcast are on its end. */
	feed(s, M, &e);
	e.phase = PMON_END;
	e.npeers = 2;
	e.peers = to;
	sb = feed(s, M, &e);
	srecv(s, A, M, 3, M, sb);
	spk(s, A, upkdouble, 8);
	srecv(s, B, M, 3, M, sb);
	spk(s, B, upkint, 4);
	spk(s, B, upkdouble, 8);
	CU_ASSERT_EQUAL_FATAL(nprob, 2);
	CU_ASSERT(has(probs[1], "\"tid\":262145,"));
	CU_ASSERT(has(probs[1], "\"packed\":\"pvm_pkint\","
	    "\"unpacked\":\"pvm_upkdouble\",\"offset\":0}"));
	/* Messages still queued go with their receiver. */
	smcast(s, M, 2, to, 4, 12);
	sexit(s, A);
	CU_ASSERT_EQUAL(nkind("unreceived"), 1);
	sdone(s);
}

/* Hosts of different architectures: item sizes may differ, no check. */
static void
test_unpack_arch(void)
{
	struct state *s = srig();
	uint64_t sa;

	state_host(s, 0x40000, "vm", "LINUX64", 1);
	state_host(s, 0x80000, "old", "LINUX", 1);
	state_task(s, 0x80001, 0, 201, "old", "d");
	sinit(s, A);
	spk(s, A, pklong, 16);
	sa = ssend(s, A, 0x80001, 1, 16);
	srecv(s, 0x80001, A, 1, A, sa);
	spk(s, 0x80001, upklong, 8);
	spk(s, 0x80001, upklong, 8);
	spk(s, 0x80001, upkint, 4);
	CU_ASSERT_EQUAL(nprob, 0);
	/* The same host: checked. */
	sa = ssend(s, A, B, 1, 16);
	srecv(s, B, A, 1, A, sa);
	spk(s, B, upkint, 4);
	CU_ASSERT_EQUAL(nkind("unpack_mismatch"), 1);
	sdone(s);
}


/* --- the horizon of the frontiers ------------------------------------ */

/* rounds of A -> B, B -> A on tag 1: each task merges every 4 events. */
static void
spingpong(struct state *s, int32_t a, int32_t b, int rounds)
{
	uint64_t m;
	int i;

	for (i = 0; i < rounds; i++) {
		m = ssend(s, a, b, 1, 4);
		srecv(s, b, a, 1, a, m);
		m = ssend(s, b, a, 1, 4);
		srecv(s, a, b, 1, b, m);
	}
}

/* The frontier's JSON, or its error; to free. */
static char *
sfrontier_any(struct state *s, int32_t tid, uint64_t seq)
{
	const char *why = sfrontier_err(s, tid, seq);

	return why[0] != '\0' ? strdup(why) : sfrontier(s, tid, seq);
}

/* C sends A one message (C:1, 2; A:1, 2), then A and B play 20 rounds. */
static struct state *
shorizon_run(uint64_t events)
{
	struct state *s = srig();
	uint64_t m;

	state_set_horizon(s, events, 0);
	m = ssend(s, C, A, 3, 4);
	srecv(s, A, C, 3, C, m);
	spingpong(s, A, B, 20);
	return s;
}

/*
 * Unlimited and with a horizon of 8 events: every event among the last
 * 8 of A and of B (whose future frontiers are recent too) has the same
 * frontiers; older ones the same or an error that says how to keep
 * more.  C merged nothing, so the past of its events is known, but the
 * future on A of its send is long gone.
 */
static void
test_horizon_events(void)
{
	static const uint64_t last[3] = { 82, 80, 2 };
	struct state *all, *hz;
	char *x, *y;
	uint64_t q;
	int i;

	all = shorizon_run(0);
	hz = shorizon_run(8);
	for (i = 0; i < 3; i++)
		for (q = 1; q <= last[i]; q++) {
			x = sfrontier(all, A + i, q);
			y = sfrontier_any(hz, A + i, q);
			/* A's and B's futures are recent too; C's not. */
			if (i < 2 && q + 8 > last[i])
				CU_ASSERT_STRING_EQUAL(x, y);
			CU_ASSERT(strcmp(x, y) == 0 ||
			    has(y, "beyond the horizon"));
			free(x);
			free(y);
		}
	CU_ASSERT_STRING_EQUAL(sfrontier_err(hz, A, 1), "t40001:1 is beyond "
	    "the horizon of the frontiers, the last 8 events of each task "
	    "(pmon start -H EVENTS[,DURATION] keeps more, -H unlimited all)");
	CU_ASSERT(has(sfrontier_err(hz, C, 1), "t40003:1: its future on "
	    "t40001 is beyond the horizon"));
	state_free(all);
	sdone(hz);

	/* The default: each task's last 16384 events, 4 a round here. */
	hz = srig();
	spingpong(hz, A, B, 16384 / 4 + 2);
	CU_ASSERT(has(sfrontier_err(hz, A, 1), "beyond the horizon of the "
	    "frontiers, the last 16384 events of each task ("));
	CU_ASSERT_STRING_EQUAL(sfrontier_err(hz, A, 10), "");
	sdone(hz);
}

/*
 * A message sent early and received after 20 rounds in which its sender
 * received 20 times: the receive follows the send, not what its sender
 * did later.  With a horizon of 4 events the sender's links before the
 * send are gone, and the past of the receive that reaches there says
 * so; with none it is exact.
 */
static struct state *
slate_receive(uint64_t events)
{
	struct state *s = srig();
	uint64_t b, a;

	state_set_horizon(s, events, 0);
	b = ssend(s, B, A, 1, 4);		/* B:1, B:2 */
	srecv(s, A, B, 1, B, b);		/* A:1, A:2 */
	a = ssend(s, A, C, 7, 4);		/* A:3, A:4 */
	spingpong(s, A, B, 20);
	srecv(s, C, A, 7, A, a);		/* C:1, C:2 */
	return s;
}

static void
test_horizon_late_receive(void)
{
	struct state *s = slate_receive(0);
	char *j;

	j = sfrontier(s, C, 2);
	CU_ASSERT_STRING_EQUAL(j, "{\"event\":\"262147:2\",\"past\":{"
	    "\"262145\":3,\"262146\":1,\"262147\":1},\"future\":{"
	    "\"262145\":null,\"262146\":null,\"262147\":null}}");
	free(j);
	sdone(s);
	s = slate_receive(4);
	CU_ASSERT(has(sfrontier_err(s, C, 2), "t40003:2: its past on t40001 "
	    "is beyond the horizon of the frontiers, the last 4 events"));
	/* C's receive is recent: what follows it is known. */
	CU_ASSERT_STRING_EQUAL(sfrontier_err(s, C, 1), "");
	sdone(s);
}

/*
 * A race between two sends made before 10 rounds that cut both senders'
 * links is still found: nothing links the senders before their sends,
 * so nothing dropped is needed (the causal case: test_horizon_unchecked).
 */
static void
test_horizon_race(void)
{
	struct state *s = srig();
	uint64_t sb, sc;

	state_set_horizon(s, 2, 0);
	sb = ssend(s, B, A, 5, 4);
	sc = ssend(s, C, A, 5, 4);
	spingpong(s, B, C, 10);
	srecv(s, A, -1, 5, B, sb);
	CU_ASSERT_EQUAL(nprob, 0);
	srecv(s, A, C, 5, C, sc);
	CU_ASSERT_EQUAL(nkind("race"), 1);
	sdone(s);
}

/*
 * A race check that needs dropped links is not made, and counted: B
 * sends A a message and tells C, which then sends A one; ten rounds
 * between B and C drop their links.  Whether C's send knew B's lies in
 * the dropped links, so the check of A's wildcard receive is not made;
 * with every link kept it is made, and finds no race.  The count is in
 * the JSON and under pmon problems, and a snapshot carries it.
 */
static void
test_horizon_unchecked(void)
{
	struct state *s, *t;
	uint64_t sb, sc, m;
	char *j, *tab, err[256];
	int h;

	for (h = 0; h < 2; h++) {
		s = srig();
		state_set_horizon(s, h == 0 ? 0 : 2, 0);
		sb = ssend(s, B, A, 5, 4);
		m = ssend(s, B, C, 9, 4);
		srecv(s, C, B, 9, B, m);
		sc = ssend(s, C, A, 5, 4);
		spingpong(s, B, C, 10);
		srecv(s, A, -1, 5, B, sb);
		srecv(s, A, C, 5, C, sc);
		CU_ASSERT_EQUAL(nprob, 0);
		j = sjson(s, STATE_ALL, 0);
		CU_ASSERT_EQUAL(strstr(j, "\"races_unchecked\":1") != NULL, h);
		tab = stable(s, STATE_PROBLEMS);
		CU_ASSERT_EQUAL(has(tab, "1 race check not made: the causality "
		    "they needed was beyond the horizon (pmon start -H)"), h);
		t = state_new(NULL, NULL);
		CU_ASSERT_EQUAL(state_load(t, j, strlen(j), err, sizeof(err)), 0);
		free(j);
		j = sjson(t, STATE_ALL, 0);
		CU_ASSERT_EQUAL(strstr(j, "\"races_unchecked\":1") != NULL, h);
		state_free(t);
		free(j);
		free(tab);
		sdone(s);
	}
}

/*
 * A horizon of 20 us of the stream (an event every 1 us): recent events
 * answer, old ones not; C, which stopped merging early, loses its old
 * clocks at the sweep every 65536 events.
 */
static void
test_horizon_time(void)
{
	struct state *s = srig();
	uint64_t m;

	state_set_horizon(s, 0, 20000);
	m = ssend(s, A, C, 2, 4);
	srecv(s, C, A, 2, A, m);		/* C:1, C:2 */
	m = ssend(s, B, C, 2, 4);
	srecv(s, C, B, 2, B, m);		/* C:3, C:4 */
	spingpong(s, A, B, 10);			/* 80 us */
	CU_ASSERT(has(sfrontier_err(s, A, 2), "beyond the horizon of the "
	    "frontiers, the last 20 us of the stream"));
	CU_ASSERT_STRING_EQUAL(sfrontier_err(s, A, 42), "");
	/* C's past of C:2 is still known: nothing pruned it. */
	CU_ASSERT_STRING_EQUAL(sfrontier_err(s, C, 2), "");
	spingpong(s, A, B, 65536 / 8);
	CU_ASSERT(has(sfrontier_err(s, C, 2), "beyond the horizon"));
	CU_ASSERT_STRING_EQUAL(sfrontier_err(s, C, 4), "");
	sdone(s);
}

static uint64_t nproblems;

static void
pcount(const struct state_problem *sp, void *arg)
{
	(void)sp;
	(void)arg;
	nproblems++;
}

/* 4100 messages left unreceived: 4096 problems kept, all reported. */
static void
test_problems_kept(void)
{
	struct state *s;
	char *j;
	int i;

	memset(seqs, 0, sizeof(seqs));
	nproblems = 0;
	s = state_new(pcount, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	for (i = 0; i < 4100; i++)
		ssend(s, A, B, 1, 4);
	sexit(s, B);
	CU_ASSERT_EQUAL(nproblems, 4100);
	j = sjson(s, STATE_PROBLEMS, 0);
	CU_ASSERT(has(j, "}],\"problems_not_kept\":4}"));
	free(j);
	state_free(s);
}

/* --- resynchronising from a snapshot (state_load) -------------------- */

static char *
stext(struct state *s)
{
	return stable(s, STATE_ALL);
}

/*
 * s's snapshot loaded into a new model, which writes the same JSON and
 * tables and reports none of its problems again.
 */
static struct state *
sreload(struct state *s)
{
	struct state *n = state_new(pcollect, NULL);
	char err[256] = "", *j1, *j2, *t1, *t2;
	int before = nprob;

	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	j1 = sjson(s, STATE_ALL, 0);
	CU_ASSERT_EQUAL(state_load(n, j1, strlen(j1), err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(nprob, before);
	j2 = sjson(n, STATE_ALL, 0);
	CU_ASSERT_STRING_EQUAL(j1, j2);
	t1 = stext(s);
	t2 = stext(n);
	CU_ASSERT_STRING_EQUAL(t1, t2);
	free(j1);
	free(j2);
	free(t1);
	free(t2);
	return n;
}

/*
 * A task pvmd lists that pmon does not instrument (an agent's
 * TASK_OTHERS): shown "unmonitored", a task the model knows as
 * monitored stays so; what is sent to it is counted, never queued, so
 * its end reports nothing unreceived, nor the receive that waited for
 * it; then it is "ended".  A snapshot loads back the same.
 */
#define U	0x40009		/* 262153 */
static void
test_unmonitored(void)
{
	struct state *s = srig(), *n;
	char *j;

	CU_ASSERT_EQUAL(state_task_other(s, U, A, 109, "vm", "outsider"), 1);
	CU_ASSERT_EQUAL(state_task_other(s, U, A, 109, "vm", "outsider"), 0);
	CU_ASSERT_EQUAL(state_task_other(s, B, 0, 102, "vm", "b"), 0);
	ssend(s, A, U, 1, 8);
	srecv_begin(s, C, U, 2);
	j = sjson(s, STATE_TASKS | STATE_QUEUES, U);
	CU_ASSERT(has(j, "{\"tid\":262153,\"host\":\"vm\",\"pid\":109,"
	    "\"parent\":262145,\"program\":\"outsider\",\"state\":"
	    "\"unmonitored\",\"calls\":0"));
	CU_ASSERT(has(j, "\"tid\":262146,\"host\":\"vm\",\"pid\":102,"
	    "\"parent\":0,\"program\":\"b\",\"state\":\"running\""));
	CU_ASSERT(has(j, "\"queues\":[{\"tid\":262153,\"messages\":[]}]"));
	CU_ASSERT(has(j, "\"children\":[262153]"));
	free(j);
	n = sreload(s);
	state_free(n);
	CU_ASSERT_EQUAL(state_task_other_end(s, U), 1);
	CU_ASSERT_EQUAL(state_task_other_end(s, U), 0);
	CU_ASSERT_EQUAL(state_task_other_end(s, A), 0);
	sexit(s, A);
	CU_ASSERT_EQUAL(nprob, 0);
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"program\":\"outsider\",\"state\":\"ended\""));
	free(j);
	n = sreload(s);
	state_free(n);
	/* Its tid again, for a task pmon instruments. */
	state_task(s, U, 0, 110, "vm", "inside");
	j = sjson(s, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"program\":\"inside\",\"state\":\"running\""));
	free(j);
	sdone(s);
}

/*
 * Names in JSON (common/jsonstr.c): UTF-8 as it is, so a reader sees
 * the characters; control characters escaped; a byte that is no part of
 * UTF-8 (Latin-1 "é", a cut sequence) as U+EF00 plus the byte, so the
 * string is valid JSON and json_str_bytes gives the bytes back.
 */
static void
test_json_names(void)
{
	static const struct {
		const char	*name, *json;
	} cases[] = {
		{ "slave1", "\"slave1\"" },
		{ "r\xc3\xa9seau", "\"r\xc3\xa9seau\"" },
		{ "\xe6\x97\xa5\xf0\x9f\x98\x80", "\"\xe6\x97\xa5\xf0\x9f\x98\x80\"" },
		{ "r\xe9seau", "\"r\\uefe9seau\"" },
		{ "cut\xe6\x97", "\"cut\\uefe6\\uef97\"" },
		{ "\xed\xa0\x80", "\"\\uefed\\uefa0\\uef80\"" },
		{ "a\"b\\c\n\x01\x7f", "\"a\\\"b\\\\c\\n\\u0001\\u007f\"" },
	};
	char *buf, back[64];
	json_error_t err;
	json_t *v;
	size_t i, len;
	FILE *fp;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fp = open_memstream(&buf, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
		json_str_write(fp, cases[i].name);
		fclose(fp);
		CU_ASSERT_STRING_EQUAL(buf, cases[i].json);
		v = json_loads(buf, JSON_DECODE_ANY, &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(v);
		CU_ASSERT_EQUAL(json_str_bytes(json_string_value(v), back,
		    sizeof(back)), 0);
		CU_ASSERT_STRING_EQUAL(back, cases[i].name);
		CU_ASSERT_EQUAL(json_str_bytes(json_string_value(v), back,
		    strlen(cases[i].name)), -1);
		json_decref(v);
		free(buf);
	}
}

/*
 * A host that left the virtual machine: "deleted" in its agent field,
 * whatever its agent did after; a snapshot loads back the same; an
 * unknown host is refused.
 */
static void
test_host_deleted(void)
{
	struct state *s = srig(), *n;
	char *j;

	state_host(s, 0x80000, "h2", "LINUX64", 1);
	CU_ASSERT_EQUAL(state_host_deleted(s, 0x90000), -1);
	CU_ASSERT_EQUAL(state_host_deleted(s, 0x80000), 0);
	state_host(s, 0x80000, "h2", "", 0);
	j = sjson(s, STATE_HOSTS, 0);
	CU_ASSERT(has(j, "{\"host_tid\":524288,\"name\":\"h2\","
	    "\"arch\":\"\",\"agent\":\"deleted\"}"));
	free(j);
	j = stext(s);
	CU_ASSERT(has(j, "t80000    h2                              deleted"));
	free(j);
	n = sreload(s);
	state_free(n);
	sdone(s);
}

/* tid's pvm_kill (signal 15) or pvm_sendsig of victim: its begin's seq. */
static uint64_t
skill(struct state *s, int32_t tid, int call, int32_t victim, int32_t sig)
{
	struct espec e = { call, PMON_BEGIN, victim, -1, 0, sig, -1, NULL, 0,
	    NULL, 0, 0, 0 };
	uint64_t seq = feed(s, tid, &e);

	e.phase = PMON_END;
	feed(s, tid, &e);
	return seq;
}

/*
 * A task killed: "killed_by" names the last pvm_kill (or pvm_sendsig of
 * SIGTERM or SIGKILL) aimed at it, whether it comes before its end or
 * after; a harmless signal, or a kill of a task that exited, names
 * nothing.  A snapshot loads back the same.
 */
static void
test_killed_by(void)
{
	struct state *s = srig(), *n;
	char want[64], *j;
	uint64_t k;

	skill(s, A, PMON_CALL_sendsig, B, 10);
	k = skill(s, A, PMON_CALL_kill, B, 15);
	skill(s, A, PMON_CALL_sendsig, B, 12);
	state_task_gone(s, B);
	sexit(s, C);
	skill(s, A, PMON_CALL_sendsig, C, 9);
	j = sjson(s, STATE_TASKS, 0);
	snprintf(want, sizeof(want), "\"state\":\"killed\",\"killed_by\":"
	    "\"262145:%llu\"", (unsigned long long)k);
	CU_ASSERT(has(j, want));
	CU_ASSERT_PTR_NULL(strstr(strstr(j, "\"tid\":262147"), "killed_by"));
	free(j);
	j = stext(s);
	CU_ASSERT(has(j, "killed      by t40001"));
	free(j);
	n = sreload(s);
	state_free(n);
	sdone(s);
	/* The kill after the end. */
	s = srig();
	state_task_gone(s, B);
	k = skill(s, A, PMON_CALL_sendsig, B, 9);
	j = sjson(s, STATE_TASKS, 0);
	snprintf(want, sizeof(want), "\"state\":\"killed\",\"killed_by\":"
	    "\"262145:%llu\"", (unsigned long long)k);
	CU_ASSERT(has(j, want));
	free(j);
	sdone(s);
}

/* A's pvm_putinfo of name with flags, stored at index. */
static uint64_t
sput(struct state *s, int32_t tid, const char *name, int32_t flags,
    int32_t index)
{
	struct espec e = { PMON_CALL_putinfo, PMON_BEGIN, -1, flags, 0, -1, 4,
	    name, 0, NULL, 0, 0, 0 };
	uint64_t seq = feed(s, tid, &e);

	e.phase = PMON_END;
	e.rc = index;
	feed(s, tid, &e);
	return seq;
}

/*
 * The mailbox: entries by name and index with their owner and put; a
 * delete and a read-and-delete take one out, the owner's end the others
 * but the persistent one; a snapshot loads back the same.
 */
static void
test_mailbox(void)
{
	struct state *s = srig(), *n;
	struct espec d = { PMON_CALL_delinfo, PMON_END, -1, 0, 0, 1, -1,
	    "box", 0, NULL, 0, 0, 0 };
	uint64_t p0, p2;
	char *j;

	p0 = sput(s, A, "box", PvmMboxMultiInstance, 0);
	sput(s, A, "box", PvmMboxMultiInstance, 1);
	p2 = sput(s, A, "box", PvmMboxMultiInstance, 2);
	sput(s, A, "keep", PvmMboxPersistent, 0);
	j = sjson(s, STATE_MAILBOX, 0);
	CU_ASSERT(has(j, "\"mailbox\":[{\"name\":\"box\",\"index\":0,"
	    "\"owner\":262145,\"flags\":2,\"bytes\":4,\"put\":\"262145:1\"},"));
	CU_ASSERT(has(j, "{\"name\":\"keep\",\"index\":0,\"owner\":262145,"
	    "\"flags\":1,\"bytes\":4,\"put\":\"262145:7\"}]"));
	free(j);
	n = sreload(s);
	state_free(n);
	feed(s, A, &d);				/* pvm_delinfo("box", 1) */
	{
		struct espec r = { PMON_CALL_recvinfo, PMON_END, A,
		    PvmMboxReadAndDelete, 7, (int32_t)p2, 4, "box", 0, NULL,
		    A, p2, 0 };

		feed(s, B, &r);			/* read and delete box 2 */
	}
	j = sjson(s, STATE_MAILBOX, 0);
	CU_ASSERT(has(j, "\"put\":\"262145:1\"}"));
	CU_ASSERT(!has(j, "\"index\":1,"));
	CU_ASSERT(!has(j, "\"index\":2,"));
	free(j);
	sexit(s, A);
	j = sjson(s, STATE_MAILBOX, 0);
	CU_ASSERT(has(j, "},\"mailbox\":[{\"name\":\"keep\","
	    "\"index\":0,\"owner\":262145,\"flags\":1,\"bytes\":4,"
	    "\"put\":\"262145:7\"}]}"));
	free(j);
	(void)p0;
	sdone(s);
}

/* The snapshot without the tasks' times, as jansson sees it. */
static json_t *
suntimed(struct state *s)
{
	char *j = sjson(s, STATE_ALL, 0);
	json_t *doc = json_loads(j, 0, NULL), *t;
	size_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	json_array_foreach(json_object_get(doc, "tasks"), i, t)
		json_object_del(t, "time_ns");
	free(j);
	return doc;
}

/*
 * The live model s and the model n set from its snapshot go on with the
 * same events (cont, run on each from the same seqs and clock): they end
 * in the same state, times apart, and find the same new problems.
 */
static void
scontinue(struct state *s, struct state *n, void (*cont)(struct state *))
{
	uint64_t saved[16], saved_clock = clock_ns;
	char *t1, *t2, *p1[PROB_MAX];
	json_t *d1, *d2;
	int i, first = nprob, n1;

	memcpy(saved, seqs, sizeof(saved));
	cont(s);
	state_check(s);
	n1 = nprob - first;
	for (i = 0; i < n1; i++)
		p1[i] = probs[first + i];
	memcpy(seqs, saved, sizeof(saved));
	clock_ns = saved_clock;
	nprob = first;
	cont(n);
	state_check(n);
	CU_ASSERT_EQUAL(nprob - first, n1);
	for (i = 0; i < n1 && first + i < nprob; i++) {
		CU_ASSERT_STRING_EQUAL(p1[i], probs[first + i]);
		free(p1[i]);
	}
	d1 = suntimed(s);
	d2 = suntimed(n);
	CU_ASSERT(json_equal(d1, d2));
	if (!json_equal(d1, d2)) {
		char *a = json_dumps(d1, JSON_COMPACT | JSON_SORT_KEYS);
		char *b = json_dumps(d2, JSON_COMPACT | JSON_SORT_KEYS);

		fprintf(stderr, "\nlive:   %s\nloaded: %s\n", a, b);
		free(a);
		free(b);
	}
	t1 = stext(s);
	t2 = stext(n);
	CU_ASSERT_STRING_EQUAL(t1, t2);
	free(t1);
	free(t2);
	json_decref(d1);
	json_decref(d2);
}

/* A spawns M, which exits with status 3; a message from A is queued. */
static void
busy_start(struct state *s)
{
	struct espec e = { PMON_CALL_spawn, PMON_BEGIN, -1, -1, 0, -1, -1,
	    NULL, 0, NULL, 0, 0, 0 };
	const int32_t kid = M;

	state_host(s, 0x40000, "vm", "LINUX64", 1);
	feed(s, A, &e);
	state_task(s, M, A, 104, "vm", "m");
	e.phase = PMON_END;
	e.rc = 1;
	e.npeers = 1;
	e.peers = &kid;
	feed(s, A, &e);
	scall(s, M, PMON_CALL_exit, PMON_BEGIN, NULL, 0, -1);
	scall(s, M, PMON_CALL_exit, PMON_END, NULL, 3, -1);
	sjoin(s, A, "g", 0);
	sjoin(s, B, "g", 1);
	sjoin(s, C, "g", 2);
	ssend(s, A, C, 4, 24);
	ssend(s, B, C, 5, 8);
	flost(s, B, 7);
	srecv_begin(s, C, A, 9);
	scall(s, A, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 2);
}

/*
 * On from busy_start: C takes A's message with a wildcard receive after
 * its receive from A got it, B completes the barrier, A sends C one more,
 * B exits, C exits with B's message and the last one unreceived.
 */
static void
busy_end(struct state *s)
{
	const struct espec end = { PMON_CALL_recv, PMON_END, A, 9, 1, -1, 24,
	    NULL, 0, NULL, A, 5, 0 };

	feed(s, C, &end);
	scall(s, B, PMON_CALL_barrier, PMON_BEGIN, "g", 0, 2);
	scall(s, A, PMON_CALL_barrier, PMON_END, "g", 0, 2);
	scall(s, B, PMON_CALL_barrier, PMON_END, "g", 0, 2);
	ssend(s, A, C, 6, 16);
	sexit(s, B);
	sexit(s, C);
}

/*
 * Everything a snapshot shows comes back, and the events after it give
 * what the live model has: states, counts, queues, groups, problems.
 */
static void
test_load_roundtrip(void)
{
	struct state *s = srig(), *n;
	char *j;

	busy_start(s);
	j = sjson(s, STATE_ALL, 0);
	/* The scenario has what the test is about. */
	CU_ASSERT(has(j, "\"state\":\"blocked\",\"blocked\":{\"in\":"
	    "\"pvm_recv\""));
	CU_ASSERT(has(j, "\"barrier\":{\"waiting\":[262145]}"));
	CU_ASSERT(has(j, "\"exit_status\":3"));
	CU_ASSERT(has(j, "\"lost\":7"));
	CU_ASSERT(has(j, "\"children\":[262148]"));
	CU_ASSERT(has(j, "\"queues\":[{\"tid\":262147,\"messages\":["));
	free(j);
	n = sreload(s);
	scontinue(s, n, busy_end);
	CU_ASSERT_EQUAL(nkind("unreceived"), 2);
	j = sjson(n, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"tid\":262147,") && has(j, "\"state\":\"exited\""));
	free(j);
	state_free(n);
	sdone(s);
}

/* Problems of every kind come back, with their lines. */
static void
test_load_problems(void)
{
	struct state *s = srig(), *n;
	uint64_t sb, sa;

	sjoin(s, A, "g\xe9", 0);
	sjoin(s, B, "g\xe9", 1);
	sjoin(s, C, "g\xe9", 2);
	scall(s, A, PMON_CALL_barrier, PMON_BEGIN, "g\xe9", 0, -1);
	scall(s, B, PMON_CALL_barrier, PMON_BEGIN, "g\xe9", 0, -1);
	sexit(s, C);
	state_check(s);
	CU_ASSERT_EQUAL(nkind("deadlock"), 1);
	CU_ASSERT_EQUAL(nkind("waits_on_exited"), 2);
	state_task(s, M, 0, 104, "vm", "m");
	sb = ssend(s, M, 0x40005, 5, 4);
	state_task(s, 0x40005, 0, 105, "vm", "r");
	state_task(s, 0x40006, 0, 106, "vm", "p");
	ssend(s, 0x40006, 0x40005, 5, 4);
	srecv(s, 0x40005, -1, 5, M, sb);
	sexit(s, 0x40005);
	CU_ASSERT_EQUAL(nkind("race"), 1);
	sinit(s, M);
	spk(s, M, pkdouble, 8);
	sa = ssend(s, M, 0x40006, 1, 8);
	srecv(s, 0x40006, M, 1, M, sa);
	spk(s, 0x40006, upkint, 4);
	CU_ASSERT_EQUAL(nkind("unpack_mismatch"), 1);
	n = sreload(s);
	/* A deadlock found before is not found again. */
	CU_ASSERT_EQUAL(state_check(n), 0);
	state_free(n);
	sdone(s);
}

/*
 * The new model keeps the order in which the old one learnt its tasks:
 * queues are listed in it, as they were before.
 */
static void
test_load_order(void)
{
	struct state *s = srig(), *n;
	char err[256], *j, *want;

	ssend(s, B, C, 1, 4);
	ssend(s, C, A, 1, 4);
	want = sjson(s, STATE_QUEUES, 0);
	CU_ASSERT(has(want, "\"queues\":[{\"tid\":262145,"));
	j = sjson(s, STATE_ALL, 0);
	n = state_new(pcollect, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	state_task(n, C, 0, 103, "vm", "c");
	CU_ASSERT_EQUAL(state_load(n, j, strlen(j), err, sizeof(err)), 0);
	free(j);
	j = sjson(n, STATE_QUEUES, 0);
	CU_ASSERT(has(j, "\"queues\":[{\"tid\":262147,"));
	free(j);
	free(want);
	state_free(n);
	sdone(s);
}

/*
 * A sent m1 to C and then, through B, caused B's send m2 to C: C's
 * wildcard receive that takes m2 before m1 is no race.  A model set from
 * a snapshot taken before (m2 sent or not) has no clocks for that past
 * and must not call it one either.
 */
static void
race_past_m2(struct state *s)
{
	uint64_t m2;

	m2 = ssend(s, B, C, 5, 4);		/* B:3 */
	srecv(s, C, -1, 5, B, m2);
	sexit(s, C);
}

static void
race_past(struct state *s)
{
	uint64_t x;

	ssend(s, A, C, 5, 4);			/* A:1, m1 */
	x = ssend(s, A, B, 9, 4);		/* A:3 */
	srecv(s, B, A, 9, A, x);		/* B:1, B:2 */
}

static void
race_past_all(struct state *s)
{
	race_past(s);
	race_past_m2(s);
}

static void
sexit_c(struct state *s)
{
	uint64_t m2 = 3;

	srecv(s, C, -1, 5, B, m2);
	sexit(s, C);
}

static void
test_load_no_false_race(void)
{
	struct state *s = srig(), *n;

	/* The live model: no race, m1 unreceived. */
	race_past_all(s);
	CU_ASSERT_EQUAL(nkind("race"), 0);
	CU_ASSERT_EQUAL(nkind("unreceived"), 1);
	sdone(s);
	/* A snapshot before m2's send, one after it. */
	s = srig();
	race_past(s);
	n = sreload(s);
	scontinue(s, n, race_past_m2);
	CU_ASSERT_EQUAL(nkind("race"), 0);
	state_free(n);
	sdone(s);
	s = srig();
	race_past(s);
	ssend(s, B, C, 5, 4);
	n = sreload(s);
	scontinue(s, n, sexit_c);
	CU_ASSERT_EQUAL(nkind("race"), 0);
	state_free(n);
	sdone(s);
}

/* Frontiers that need a clock from before the snapshot are errors. */
static void
test_load_frontier(void)
{
	struct state *s = srig(), *n;
	uint64_t a;
	char *j;

	ssend(s, A, B, 1, 4);			/* A:1, A:2 */
	n = sreload(s);
	CU_ASSERT(has(sfrontier_err(n, A, 1), "older than the snapshot"));
	/* B's events after it: its past on A is not known. */
	a = ssend(n, A, B, 1, 4);		/* A:3, A:4 */
	srecv(n, B, A, 1, A, a);		/* B:1, B:2 */
	j = sfrontier(n, B, 2);
	CU_ASSERT(has(j, "\"past\":{\"262145\":3,\"262146\":1,"
	    "\"262147\":null}"));
	free(j);
	CU_ASSERT(has(sfrontier_err(n, B, 1), "its past on t40001 reaches "
	    "before the snapshot"));
	state_free(n);
	sdone(s);
}

/* The times a snapshot gives go on from the next event. */
static void
test_load_times(void)
{
	struct state *s = srig(), *n;
	struct espec e = { PMON_CALL_mytid, PMON_BEGIN, -1, -1, 0, -1, -1,
	    NULL, 0, NULL, 0, 0, 1000 };
	char *j;

	feed(s, A, &e);
	e.phase = PMON_END;
	e.t = 1500;
	feed(s, A, &e);
	e.phase = PMON_BEGIN;
	e.t = 4000;
	feed(s, A, &e);				/* computing 2500, pvm 500 */
	n = sreload(s);
	e.phase = PMON_END;
	e.t = 1000000;
	feed(n, A, &e);				/* resumes here */
	e.phase = PMON_BEGIN;
	e.t = 1002000;
	feed(n, A, &e);
	j = sjson(n, STATE_TASKS, 0);
	CU_ASSERT(has(j, "\"time_ns\":{\"computing\":4500,\"pvm\":500,"));
	free(j);
	state_free(n);
	sdone(s);
}

/* A snapshot of one task, A, with what the cases below change. */
#define LOAD_TASK_LOST(state, extra, lost)				\
	"{\"tid\":262145,\"host\":\"vm\",\"pid\":1,\"parent\":0,"	\
	"\"program\":\"a\",\"state\":\"" state "\"" extra ",\"calls\":1," \
	"\"sent\":{\"msgs\":0,\"bytes\":0},\"received\":{\"msgs\":0,"	\
	"\"bytes\":0},\"time_ns\":{\"computing\":0,\"pvm\":0,"		\
	"\"blocked\":0},\"last_seq\":2,\"lost\":" lost ",\"children\":[]}"
#define LOAD_TASK(state, extra)	LOAD_TASK_LOST(state, extra, "0")
#define LOAD_DOC(pos, task, groups, queues, problems)			\
	"{\"position\":{" pos "},\"hosts\":[],\"tasks\":[" task "],"	\
	"\"groups\":[" groups "],\"queues\":[" queues "],"		\
	"\"traffic\":[],\"problems\":[" problems "]}"
#define LOAD_ONE(task)	LOAD_DOC("\"262145\":2", task, "", "", "")
#define LOAD_BLOCKED(in)						\
	LOAD_ONE(LOAD_TASK("blocked", ",\"blocked\":{" in		\
	    ",\"since\":\"262145:1\"}"))

/*
 * Snapshots that are not what the model writes: each is an error that
 * names the problem, and the model stays as it was.
 */
static void
test_load_bad(void)
{
	static const struct {
		const char	*json, *err;
	} cases[] = {
		{ "{\"position\":", "not JSON" },
		{ "[]", "not a JSON object" },
		{ "{\"position\":{}}", "\"hosts\" is missing" },
		{ LOAD_DOC("\"262145\":3", LOAD_TASK("running", ""), "", "", ""),
		    "task 262145 is not at its last_seq" },
		{ LOAD_DOC("", LOAD_TASK("running", ""), "", "", ""),
		    "0 tasks for 1" },
		{ LOAD_ONE(LOAD_TASK("flying", "")), "unknown state" },
		{ LOAD_ONE(LOAD_TASK("blocked", "")),
		    "blocked, without \"blocked\"" },
		{ LOAD_BLOCKED("\"in\":\"pvm_send\""), "which does not block" },
		{ LOAD_ONE(LOAD_TASK("blocked", ",\"blocked\":{\"in\":"
		    "\"pvm_recv\",\"from\":1,\"tag\":1,\"ctx\":0,\"since\":"
		    "\"262146:1\"}")), "not one of its own" },
		{ LOAD_ONE(LOAD_TASK("running", ",\"exit_status\":0")),
		    "running, with an exit status" },
		{ LOAD_DOC("\"262145\":2", LOAD_TASK("running", "") ","
		    LOAD_TASK("running", ""), "", "", ""), "listed twice" },
		{ LOAD_ONE(LOAD_TASK("running", ",\"calls\":-1")),
		    "duplicate object key" },
		{ LOAD_ONE(LOAD_TASK_LOST("running", "", "-1")),
		    "tasks[0]: \"lost\" is not an integer from 0" },
		{ LOAD_ONE(LOAD_TASK_LOST("running", "", "{}")),
		    "\"lost\" is not an integer" },
		{ LOAD_DOC("\"262145\":2", LOAD_TASK("running", ""),
		    "{\"name\":\"g\",\"members\":[],\"barrier\":{\"waiting\":"
		    "[262145]}}", "", ""), "waiting[0] is not a task blocked" },
		{ LOAD_BLOCKED("\"in\":\"pvm_barrier\",\"group\":\"g\","
		    "\"count\":2"), "no group lists" },
		{ LOAD_BLOCKED("\"in\":\"pvm_reduce\",\"group\":\"g\","
		    "\"root\":0"), "which its groups do not explain" },
		{ LOAD_DOC("\"262145\":2", LOAD_TASK("exited", ""), "",
		    "{\"tid\":262145,\"messages\":[]}", ""),
		    "queued at a task that ended" },
		{ LOAD_DOC("\"262145\":2", LOAD_TASK("running", ""), "", "",
		    "{\"kind\":\"race\",\"x\":1.5}"), "never writes" },
		{ LOAD_DOC("\"262145\":2", LOAD_TASK("running", ""), "", "",
		    "{\"kind\":\"deadlock\",\"tasks\":[2,1]}"), "increasing" },
		{ LOAD_DOC("\"262145\":2", LOAD_TASK("running", ""),
		    "{\"name\":5,\"members\":[],\"barrier\":null}",
		    "", ""), "\"name\" is not a string" },
	};
	struct state *s = srig(), *n;
	char err[256], *before, *after;
	size_t i;

	ssend(s, A, B, 1, 4);
	before = sjson(s, STATE_ALL, 0);
	/* The cases change a snapshot that loads. */
	n = state_new(NULL, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_EQUAL(state_load(n, LOAD_ONE(LOAD_TASK("running", "")),
	    strlen(LOAD_ONE(LOAD_TASK("running", ""))), err, sizeof(err)), 0);
	state_free(n);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(state_load(s, cases[i].json,
		    strlen(cases[i].json), err, sizeof(err)), -1);
		if (!has(err, cases[i].err))
			fprintf(stderr, "\ncase %zu: %s\n", i, err);
		CU_ASSERT(has(err, cases[i].err));
		after = sjson(s, STATE_ALL, 0);
		CU_ASSERT_STRING_EQUAL(before, after);
		free(after);
	}
	free(before);
	sdone(s);
}

static CU_TestInfo state_tests[] = {
	{ "deadlock of a pair", test_deadlock_pair },
	{ "a problem that is over", test_problem_over },
	{ "deadlock of a 3-cycle", test_deadlock_cycle3 },
	{ "a deadlock that grows is one problem", test_deadlock_grows },
	{ "no deadlock while a message or task can help",
	    test_deadlock_queued },
	{ "a message a handler takes: no deadlock",
	    test_deadlock_handler },
	{ "clean exchange", test_clean_exchange },
	{ "wildcard race", test_race },
	{ "no race when causally ordered", test_race_causal },
	{ "master1 collection is no race", test_master_collect },
	{ "race with an unreceived message", test_race_unreceived },
	{ "barrier member exits", test_barrier_exit },
	{ "barrier member exits first", test_barrier_exit_first },
	{ "barrier count reached", test_barrier_count_reached },
	{ "barrier completes", test_barrier_clean },
	{ "receive from a killed task", test_recv_killed },
	{ "unreceived at exit", test_unreceived },
	{ "an unmatched receive names its message", test_recv_id_unmatched },
	{ "a task pmon does not instrument", test_unmonitored },
	{ "a host deleted", test_host_deleted },
	{ "names in JSON", test_json_names },
	{ "a task killed by another", test_killed_by },
	{ "a message handler inside a receive", test_handler },
	{ "the mailbox", test_mailbox },
	{ "queue contents and order", test_queue_order },
	{ "frontiers of a message chain", test_frontier },
	{ "snapshot position", test_position },
	{ "time split", test_times },
	{ "spawn tree", test_spawn_tree },
	{ "text tables", test_text },
	{ "lost markers counted per task", test_lost },
	{ "unpacks in other chunks", test_unpack_clean },
	{ "unpack of another type", test_unpack_type },
	{ "unpack past the end", test_unpack_past_end },
	{ "unpacks not checked", test_unpack_unchecked },
	{ "multicast unpacked by each", test_unpack_mcast },
	{ "hosts of other architectures", test_unpack_arch },
	{ "horizon of events: inside the same", test_horizon_events },
	{ "horizon: a late receive merges its send", test_horizon_late_receive },
	{ "horizon: a race between old sends", test_horizon_race },
	{ "horizon of time, and the sweep", test_horizon_time },
	{ "horizon: race checks it cuts are counted", test_horizon_unchecked },
	{ "problems kept are bounded", test_problems_kept },
	{ "snapshot loaded: the same state, the same after", test_load_roundtrip },
	{ "snapshot loaded: problems and their lines", test_load_problems },
	{ "snapshot loaded: the old model's order", test_load_order },
	{ "snapshot loaded: no race from a past it lacks",
	    test_load_no_false_race },
	{ "snapshot loaded: frontiers before it", test_load_frontier },
	{ "snapshot loaded: times go on", test_load_times },
	{ "snapshots that are not the model's", test_load_bad },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo state_suites[] = {
	{ "state", NULL, NULL, NULL, NULL, state_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(state_suites)
