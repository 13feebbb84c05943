/*
 * Protects the coordinator's ordering core: whatever order the agents
 * deliver the tasks' records in, the stream it releases must be a linear
 * extension of causal order (a task's events in sequence, a spawned task
 * after its parent's spawn, a receive after its send), carry every event
 * exactly once, name the right send for every receive, and release each
 * event as soon as its predecessors are out.
 */
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "proto.h"
#include "record.h"
#include "unit.h"

#define A	0x40001
#define B	0x40002
#define C	0x40003
#define D	0x40004

#define OUT_MAX	40000

struct out {
	int32_t		tid;
	uint64_t	seq;
	uint8_t		call;
	uint8_t		phase;
	uint8_t		flags;
	int32_t		bytes;
	int32_t		match_tid;
	uint64_t	match_seq;
};

static struct out outs[OUT_MAX];
static int nout;

static void
collect(const struct order_event *ev, void *arg)
{
	struct out *o;

	(void)arg;
	CU_ASSERT_FATAL(nout < OUT_MAX);
	CU_ASSERT_EQUAL(ev->rec->len, record_size(ev->rec));
	o = &outs[nout++];
	o->tid = ev->tid;
	o->seq = ev->rec->seq;
	o->call = ev->rec->call;
	o->phase = ev->rec->phase;
	o->flags = ev->flags;
	o->bytes = ev->rec->bytes;
	o->match_tid = ev->match_tid;
	o->match_seq = ev->match_seq;
}

static struct order *
rig(void)
{
	struct order *o;

	nout = 0;
	o = order_new(collect, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	return o;
}

static void
task(struct order *o, int32_t tid, int32_t parent, uint64_t spawn_seq)
{
	const char *why = NULL;

	CU_ASSERT_EQUAL(order_task_new(o, tid, 0, parent, spawn_seq, &why), 0);
}

/* Encodes and decodes r as the agent path does, then adds it. */
static int
add_record(struct order *o, int32_t tid, struct record *r,
    const int32_t *peers)
{
	uint8_t buf[RECORD_MAX_SIZE];
	const char *why = NULL;
	size_t n;

	n = record_encode(buf, r, peers);
	CU_ASSERT_EQUAL_FATAL(record_decode(buf, n, r, &why), 0);
	return order_add(o, tid, r, &why);
}

static int
add_full(struct order *o, int32_t tid, uint64_t seq, int call, int phase,
    int32_t peer, int32_t tag, int32_t ctx, int32_t rc, int npeers,
    const int32_t *peers)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = call;
	r.phase = phase;
	r.seq = seq;
	r.t_ns = 1000 * seq;
	r.rc = rc;
	r.peer = peer;
	r.tag = tag;
	r.ctx = ctx;
	r.inst = -1;
	r.npeers = npeers;
	if ((call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_nrecv || call == PMON_CALL_precv ||
	    call == PMON_CALL_probe) && phase == PMON_END && peer != -1)
		r.flags = RECORD_MSG;
	return add_record(o, tid, &r, peers);
}

static void
add(struct order *o, int32_t tid, uint64_t seq, int call, int phase,
    int32_t peer, int32_t tag)
{
	CU_ASSERT_EQUAL(add_full(o, tid, seq, call, phase, peer, tag, 0, 0,
	    0, NULL), 0);
}

/* Where (tid, seq) came out, or -1; each event must come out once. */
static int
pos(int32_t tid, uint64_t seq)
{
	int i, at = -1;

	for (i = 0; i < nout; i++)
		if (outs[i].tid == tid && outs[i].seq == seq) {
			CU_ASSERT_EQUAL(at, -1);
			at = i;
		}
	return at;
}

static size_t
held(struct order *o)
{
	struct order_stats st;

	order_stats(o, &st);
	return st.held;
}

static void
test_recv_before_send(void)
{
	struct order *o = rig();
	int p;

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	add(o, B, 1, PMON_CALL_recv, PMON_BEGIN, A, 5);
	add(o, B, 2, PMON_CALL_recv, PMON_END, A, 5);
	add(o, B, 3, PMON_CALL_exit, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(nout, 1);
	CU_ASSERT_EQUAL(pos(B, 1), 0);
	CU_ASSERT_EQUAL(held(o), 2);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, B, 5);
	/* The send's end says whether it delivered anything. */
	CU_ASSERT_EQUAL(nout, 2);
	add(o, A, 2, PMON_CALL_send, PMON_END, B, 5);
	CU_ASSERT_EQUAL(nout, 5);
	CU_ASSERT(pos(A, 1) < pos(B, 2));
	CU_ASSERT(pos(B, 2) < pos(B, 3));
	p = pos(B, 2);
	CU_ASSERT_EQUAL(outs[p].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[p].match_tid, A);
	CU_ASSERT_EQUAL(outs[p].match_seq, 1);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

static void
test_child_before_spawn(void)
{
	struct order *o = rig();

	/* The child and its records arrive before the parent is known. */
	task(o, C, A, 3);
	add(o, C, 1, PMON_CALL_mytid, PMON_BEGIN, -1, -1);
	add(o, C, 2, PMON_CALL_mytid, PMON_END, -1, -1);
	CU_ASSERT_EQUAL(nout, 0);
	task(o, A, 0, 0);
	add(o, A, 1, PMON_CALL_mytid, PMON_BEGIN, -1, -1);
	add(o, A, 2, PMON_CALL_mytid, PMON_END, -1, -1);
	CU_ASSERT_EQUAL(nout, 2);
	add(o, A, 3, PMON_CALL_spawn, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(nout, 5);
	CU_ASSERT(pos(A, 3) < pos(C, 1));
	CU_ASSERT(pos(C, 1) < pos(C, 2));
	order_free(o);
}

static void
test_mcast(void)
{
	static const int32_t peers[] = { B, C, A, B };
	struct order *o = rig();
	struct order_stats st;

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	task(o, C, 0, 0);
	add(o, B, 1, PMON_CALL_recv, PMON_END, A, 7);
	add(o, B, 2, PMON_CALL_recv, PMON_END, A, 7);
	add(o, C, 1, PMON_CALL_recv, PMON_END, A, 7);
	CU_ASSERT_EQUAL(nout, 0);
	/* Duplicates and the sender itself get no copy (PVM's pvmmcast). */
	CU_ASSERT_EQUAL(add_full(o, A, 1, PMON_CALL_mcast, PMON_BEGIN, -1, 7,
	    0, 0, 4, peers), 0);
	CU_ASSERT_EQUAL(nout, 1);
	add(o, A, 2, PMON_CALL_mcast, PMON_END, -1, 7);
	CU_ASSERT_EQUAL(nout, 4);
	CU_ASSERT_EQUAL(outs[pos(B, 1)].match_seq, 1);
	CU_ASSERT_EQUAL(outs[pos(C, 1)].match_seq, 1);
	CU_ASSERT_EQUAL(pos(B, 2), -1);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.retained, 0);
	CU_ASSERT_EQUAL(st.blocked, 1);
	add(o, A, 3, PMON_CALL_send, PMON_BEGIN, B, 7);
	add(o, A, 4, PMON_CALL_send, PMON_END, B, 7);
	CU_ASSERT_EQUAL(outs[pos(B, 2)].match_tid, A);
	CU_ASSERT_EQUAL(outs[pos(B, 2)].match_seq, 3);
	CU_ASSERT(pos(A, 3) < pos(B, 2));
	order_free(o);
}

static void
test_bcast(void)
{
	static const int32_t peers[] = { B, C };
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	add(o, B, 1, PMON_CALL_recv, PMON_END, A, 9);
	add(o, A, 1, PMON_CALL_bcast, PMON_BEGIN, -1, 9);
	CU_ASSERT_EQUAL(nout, 1);
	/* The destinations are known at the end of the broadcast. */
	CU_ASSERT_EQUAL(add_full(o, A, 2, PMON_CALL_bcast, PMON_END, -1, 9,
	    0, 0, 2, peers), 0);
	CU_ASSERT_EQUAL(nout, 3);
	CU_ASSERT(pos(A, 2) < pos(B, 1));
	CU_ASSERT_EQUAL(outs[pos(B, 1)].match_seq, 2);
	order_free(o);
}

static void
test_wildcard_two_senders(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	task(o, D, 0, 0);
	/* D asked for any source and got B's message first, then A's. */
	add(o, D, 1, PMON_CALL_recv, PMON_BEGIN, -1, 4);
	add(o, D, 2, PMON_CALL_recv, PMON_END, B, 4);
	add(o, D, 3, PMON_CALL_recv, PMON_BEGIN, -1, 4);
	add(o, D, 4, PMON_CALL_recv, PMON_END, A, 4);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, D, 4);
	add(o, A, 2, PMON_CALL_send, PMON_END, D, 4);
	CU_ASSERT_EQUAL(pos(D, 2), -1);
	add(o, B, 1, PMON_CALL_send, PMON_BEGIN, D, 4);
	add(o, B, 2, PMON_CALL_send, PMON_END, D, 4);
	CU_ASSERT(pos(B, 1) < pos(D, 2));
	CU_ASSERT(pos(A, 1) < pos(D, 4));
	CU_ASSERT_EQUAL(outs[pos(D, 2)].match_tid, B);
	CU_ASSERT_EQUAL(outs[pos(D, 4)].match_tid, A);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

static void
test_self_send(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, A, 1);
	add(o, A, 2, PMON_CALL_send, PMON_END, A, 1);
	add(o, A, 3, PMON_CALL_recv, PMON_BEGIN, A, 1);
	add(o, A, 4, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(nout, 4);
	CU_ASSERT_EQUAL(outs[3].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[3].match_tid, A);
	CU_ASSERT_EQUAL(outs[3].match_seq, 1);
	order_free(o);
}

static void
test_gap_lost_marker(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, A, 0, 0);
	add(o, A, 1, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	add(o, A, 2, PMON_CALL_pkint, PMON_END, -1, -1);
	add(o, A, 5, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL_FATAL(nout, 4);
	CU_ASSERT_EQUAL(outs[2].call, PMON_CALL_LOST);
	CU_ASSERT_EQUAL(outs[2].seq, 3);
	CU_ASSERT_EQUAL(outs[2].bytes, 2);
	CU_ASSERT_EQUAL(outs[2].flags, EVENT_LOST);
	CU_ASSERT_EQUAL(outs[3].seq, 5);
	/* Two more went missing at the end: only the TASK_END count says so. */
	CU_ASSERT_EQUAL(order_task_end(o, A, 4, &why), 0);
	CU_ASSERT_EQUAL_FATAL(nout, 5);
	CU_ASSERT_EQUAL(outs[4].call, PMON_CALL_LOST);
	CU_ASSERT_EQUAL(outs[4].seq, 6);
	CU_ASSERT_EQUAL(outs[4].bytes, 2);
	order_free(o);
}

/*
 * A task resumed at seq 10 (a dead coordinator released 1-9, and may
 * have released 10: flagged again): no lost marker for those, a gap
 * after 10 still is one; its child, spawned at the parent's seq 3, goes
 * at once.  A resume after records fails.
 */
/*
 * The tasks of a host whose agent was lost may be adopted by the next
 * with their records, or be announced by it: a round does not judge a
 * receive from such a host meanwhile, whether the sender is known (A)
 * or not yet (E).
 */
#define E	0x80005
static void
test_away_not_judged(void)
{
	struct order *o = rig();
	int p;

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	add(o, B, 1, PMON_CALL_recv, PMON_BEGIN, A, 5);
	add(o, B, 2, PMON_CALL_recv, PMON_END, A, 5);
	task(o, C, 0, 0);
	add(o, C, 1, PMON_CALL_recv, PMON_BEGIN, E, 5);
	add(o, C, 2, PMON_CALL_recv, PMON_END, E, 5);
	order_host_away(o, 1, 1);		/* A's */
	order_host_away(o, 2, 1);		/* E's */
	order_synced(o, order_mark(o));
	order_synced(o, order_mark(o));
	CU_ASSERT_EQUAL(nout, 2);		/* the receives wait */
	task(o, E, 0, 0);
	add(o, E, 1, PMON_CALL_send, PMON_BEGIN, C, 5);
	add(o, E, 2, PMON_CALL_send, PMON_END, C, 5);
	order_host_away(o, 2, 0);
	p = pos(C, 2);
	CU_ASSERT_FATAL(p >= 0);
	CU_ASSERT_EQUAL(outs[p].flags, EVENT_MATCHED);
	order_host_away(o, 1, 0);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, B, 5);
	add(o, A, 2, PMON_CALL_send, PMON_END, B, 5);
	p = pos(B, 2);
	CU_ASSERT_FATAL(p >= 0);
	CU_ASSERT_EQUAL(outs[p].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[p].match_seq, 1);
	/* Back, and the send does not come: judged as ever. */
	add(o, B, 3, PMON_CALL_recv, PMON_BEGIN, A, 5);
	add(o, B, 4, PMON_CALL_recv, PMON_END, A, 5);
	order_synced(o, order_mark(o));
	p = pos(B, 4);
	CU_ASSERT_FATAL(p >= 0);
	CU_ASSERT_EQUAL(outs[p].flags, EVENT_UNMATCHED);
	order_free(o);
}

/* The root of a tree: A and B (host 1) are subtree 0's, C (host 2) not. */
static int
subtree_of_host1(int32_t tid, void *arg)
{
	(void)arg;
	return ((uint32_t)tid >> 18) == 1 ? 0 : -1;
}

static void
add_below(struct order *o, int32_t tid, uint64_t seq, int call, int phase,
    int32_t peer, uint8_t flags, uint64_t match_seq)
{
	uint8_t buf[RECORD_MAX_SIZE];
	const char *why = NULL;
	struct record r;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.call = call;
	r.phase = phase;
	r.seq = seq;
	r.t_ns = 1000 * seq;
	r.peer = peer;
	r.tag = 5;
	r.inst = -1;
	if (call == PMON_CALL_recv && phase == PMON_END)
		r.flags = RECORD_MSG;
	n = record_encode(buf, &r, NULL);
	CU_ASSERT_EQUAL_FATAL(record_decode(buf, n, &r, &why), 0);
	CU_ASSERT_EQUAL(order_add_below(o, tid, &r, flags,
	    (flags & EVENT_MATCHED) ? peer : 0, match_seq, &why), 0);
}

/*
 * An intermediate started again does not have the sends the one before
 * it forwarded: a receive of such a send comes up unmatched with
 * EVENT_RESUMED, and the root matches it to the oldest send to it that
 * no receive named.  Without the flag, or with no such send, it goes
 * unmatched.
 */
static void
test_root_matches_resumed(void)
{
	struct order *o = rig();
	int p;

	order_set_subtree(o, ORDER_ROOT, subtree_of_host1, NULL);
	task(o, A, 0, 0);
	task(o, B, 0, 0);
	add_below(o, A, 1, PMON_CALL_send, PMON_BEGIN, B, 0, 0);
	add_below(o, A, 2, PMON_CALL_send, PMON_END, B, 0, 0);
	add_below(o, A, 3, PMON_CALL_send, PMON_BEGIN, B, 0, 0);
	add_below(o, A, 4, PMON_CALL_send, PMON_END, B, 0, 0);
	CU_ASSERT_EQUAL(nout, 4);
	add_below(o, B, 1, PMON_CALL_recv, PMON_BEGIN, A, 0, 0);
	add_below(o, B, 2, PMON_CALL_recv, PMON_END, A,
	    EVENT_UNMATCHED | EVENT_RESUMED, 0);
	p = pos(B, 2);
	CU_ASSERT_FATAL(p >= 0);
	CU_ASSERT_EQUAL(outs[p].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[p].match_tid, A);
	CU_ASSERT_EQUAL(outs[p].match_seq, 1);
	/* Matched below to A's second send: it is claimed. */
	add_below(o, B, 3, PMON_CALL_recv, PMON_BEGIN, A, 0, 0);
	add_below(o, B, 4, PMON_CALL_recv, PMON_END, A, EVENT_MATCHED, 3);
	CU_ASSERT_EQUAL(outs[pos(B, 4)].match_seq, 3);
	add_below(o, B, 5, PMON_CALL_recv, PMON_BEGIN, A, 0, 0);
	add_below(o, B, 6, PMON_CALL_recv, PMON_END, A,
	    EVENT_UNMATCHED | EVENT_RESUMED, 0);
	CU_ASSERT_EQUAL(outs[pos(B, 6)].flags, EVENT_UNMATCHED);
	add_below(o, A, 5, PMON_CALL_send, PMON_BEGIN, B, 0, 0);
	add_below(o, A, 6, PMON_CALL_send, PMON_END, B, 0, 0);
	add_below(o, B, 7, PMON_CALL_recv, PMON_BEGIN, A, 0, 0);
	add_below(o, B, 8, PMON_CALL_recv, PMON_END, A, EVENT_UNMATCHED, 0);
	CU_ASSERT_EQUAL(outs[pos(B, 8)].flags, EVENT_UNMATCHED);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

static void
test_resume(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, C, A, 3);
	add(o, C, 1, PMON_CALL_mytid, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(nout, 0);		/* waits for A's spawn */
	task(o, A, 0, 0);
	/* Its agent had sent a coordinator before records up to 10. */
	CU_ASSERT_EQUAL(order_task_resume(o, A, 10, 10, &why), 0);
	CU_ASSERT_EQUAL_FATAL(nout, 1);		/* the spawn counts as seen */
	CU_ASSERT_EQUAL(outs[0].tid, C);
	add(o, A, 10, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL_FATAL(nout, 2);
	CU_ASSERT_EQUAL(outs[1].seq, 10);
	CU_ASSERT_EQUAL(outs[1].flags, EVENT_AGAIN);
	add(o, A, 12, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL_FATAL(nout, 4);
	CU_ASSERT_EQUAL(outs[2].call, PMON_CALL_LOST);
	CU_ASSERT_EQUAL(outs[2].seq, 11);
	CU_ASSERT_EQUAL(outs[2].bytes, 1);
	CU_ASSERT_EQUAL(outs[2].flags, EVENT_LOST);
	CU_ASSERT_EQUAL(outs[3].flags, 0);
	CU_ASSERT_EQUAL(order_task_resume(o, A, 20, 0, &why), -1);
	CU_ASSERT_EQUAL(order_task_resume(o, D, 20, 0, &why), -1);
	order_free(o);
}

static void
test_probe_peeks(void)
{
	struct order *o = rig();
	struct order_stats st;

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	add(o, D, 1, PMON_CALL_probe, PMON_END, A, 3);
	add(o, D, 2, PMON_CALL_recv, PMON_END, A, 3);
	CU_ASSERT_EQUAL(nout, 0);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, D, 3);
	add(o, A, 2, PMON_CALL_send, PMON_END, D, 3);
	CU_ASSERT_EQUAL(nout, 4);
	CU_ASSERT(pos(A, 1) < pos(D, 1));
	CU_ASSERT_EQUAL(outs[pos(D, 1)].match_seq, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].match_seq, 1);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.retained, 0);
	order_free(o);
}

static void
test_notify_from_pvmd(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	add(o, A, 1, PMON_CALL_recv, PMON_END, (int32_t)0x80040000, 100);
	CU_ASSERT_EQUAL_FATAL(nout, 1);
	CU_ASSERT_EQUAL(outs[0].flags, 0);
	order_free(o);
}

/*
 * A's pvm_notify(PvmTaskExit) of B and C: each notify goes after an exit
 * and names the last event of the task that ended, in the order they
 * ended (C first here), whichever order the tids were listed in.
 */
static void
test_notify_matches_exit(void)
{
	struct order *o = rig();
	const int32_t watched[2] = { B, C };
	const char *why = NULL;
	struct record r;

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	task(o, C, 0, 0);
	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_notify;
	r.phase = PMON_BEGIN;
	r.seq = 1;
	r.peer = -1;
	r.tag = 100;
	r.inst = 1;		/* PvmTaskExit */
	r.npeers = 2;
	CU_ASSERT_EQUAL(add_record(o, A, &r, watched), 0);
	add(o, A, 2, PMON_CALL_notify, PMON_END, -1, 100);
	add(o, A, 3, PMON_CALL_recv, PMON_END, (int32_t)0x80040000, 100);
	add(o, A, 4, PMON_CALL_recv, PMON_END, (int32_t)0x80040000, 100);
	CU_ASSERT_EQUAL(pos(A, 3), -1);
	add(o, B, 1, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	add(o, C, 1, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	add(o, C, 2, PMON_CALL_pkint, PMON_END, -1, -1);
	CU_ASSERT_EQUAL(order_task_end(o, C, 0, &why), 0);
	CU_ASSERT_FATAL(pos(A, 3) > pos(C, 2));
	CU_ASSERT_EQUAL(pos(A, 4), -1);
	CU_ASSERT_EQUAL(outs[pos(A, 3)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(A, 3)].match_tid, C);
	CU_ASSERT_EQUAL(outs[pos(A, 3)].match_seq, 2);
	CU_ASSERT_EQUAL(order_task_end(o, B, 0, &why), 0);
	CU_ASSERT_FATAL(pos(A, 4) >= 0);
	CU_ASSERT_EQUAL(outs[pos(A, 4)].match_tid, B);
	CU_ASSERT_EQUAL(outs[pos(A, 4)].match_seq, 1);
	order_free(o);
}

static void
test_context_separates(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	CU_ASSERT_EQUAL(add_full(o, D, 1, PMON_CALL_recv, PMON_END, A, 1, 5,
	    0, 0, NULL), 0);
	CU_ASSERT_EQUAL(add_full(o, A, 1, PMON_CALL_send, PMON_BEGIN, D, 1, 0,
	    0, 0, NULL), 0);
	CU_ASSERT_EQUAL(add_full(o, A, 2, PMON_CALL_send, PMON_END, D, 1, 0,
	    0, 0, NULL), 0);
	CU_ASSERT_EQUAL(nout, 2);
	CU_ASSERT_EQUAL(add_full(o, A, 3, PMON_CALL_send, PMON_BEGIN, D, 1, 5,
	    0, 0, NULL), 0);
	CU_ASSERT_EQUAL(add_full(o, A, 4, PMON_CALL_send, PMON_END, D, 1, 5,
	    0, 0, NULL), 0);
	CU_ASSERT_EQUAL(outs[pos(D, 1)].match_seq, 3);
	order_free(o);
}

static void
test_failed_send_retracted(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, D, 1);
	CU_ASSERT_EQUAL(add_full(o, A, 2, PMON_CALL_send, PMON_END, D, 1, 0,
	    -2, 0, NULL), 0);
	add(o, A, 3, PMON_CALL_send, PMON_BEGIN, D, 1);
	add(o, D, 1, PMON_CALL_recv, PMON_END, A, 1);
	/* Until the end of A's second send says it delivered, D waits. */
	CU_ASSERT_EQUAL(pos(D, 1), -1);
	add(o, A, 4, PMON_CALL_send, PMON_END, D, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 1)].match_seq, 3);
	order_free(o);
}

static void
test_source_ended(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	add(o, A, 1, PMON_CALL_exit, PMON_BEGIN, -1, -1);
	add(o, D, 1, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(nout, 1);
	/* A is gone and sent nothing: D's receive cannot ever be matched. */
	CU_ASSERT_EQUAL(order_task_end(o, A, 0, &why), 0);
	CU_ASSERT_EQUAL_FATAL(nout, 2);
	CU_ASSERT_EQUAL(outs[1].flags, EVENT_UNMATCHED);
	order_free(o);
}

static void
test_release_all(void)
{
	struct order *o = rig();
	struct order_stats st;

	task(o, D, 0, 0);
	task(o, C, B, 7);	/* B never shows up */
	add(o, C, 1, PMON_CALL_mytid, PMON_BEGIN, -1, -1);
	add(o, D, 1, PMON_CALL_recv, PMON_BEGIN, A, 1);
	add(o, D, 2, PMON_CALL_recv, PMON_END, A, 1);
	add(o, D, 3, PMON_CALL_exit, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(nout, 1);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.held, 3);
	CU_ASSERT_EQUAL(st.blocked, 2);
	CU_ASSERT_EQUAL(st.tasks, 2);
	CU_ASSERT_EQUAL(order_task_stats(o, D, &st), 0);
	CU_ASSERT_EQUAL(st.held, 2);
	CU_ASSERT_EQUAL(order_task_stats(o, A, &st), -1);
	order_release_all(o);
	CU_ASSERT_EQUAL(nout, 4);
	CU_ASSERT(pos(D, 2) < pos(D, 3));
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags, EVENT_UNMATCHED);
	CU_ASSERT(pos(C, 1) >= 0);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

static void
test_release_all_keeps_sends_first(void)
{
	struct order *o = rig();

	/* B's send waits behind B's spawn wait; D must not overtake it. */
	task(o, B, C, 2);
	task(o, D, 0, 0);
	add(o, D, 1, PMON_CALL_recv, PMON_END, B, 1);
	add(o, B, 1, PMON_CALL_send, PMON_BEGIN, D, 1);
	add(o, B, 2, PMON_CALL_send, PMON_END, D, 1);
	order_release_all(o);
	CU_ASSERT_EQUAL(nout, 3);
	CU_ASSERT(pos(B, 1) < pos(D, 1));
	CU_ASSERT_EQUAL(outs[pos(D, 1)].flags, EVENT_MATCHED);
	order_free(o);
}

static void
test_rejects(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, A, 0, 0);
	CU_ASSERT_EQUAL(order_task_new(o, A, 0, 0, 0, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(why);
	add(o, A, 1, PMON_CALL_mytid, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(add_full(o, A, 1, PMON_CALL_mytid, PMON_END, -1, -1,
	    0, 0, 0, NULL), -1);
	CU_ASSERT_EQUAL(add_full(o, B, 1, PMON_CALL_mytid, PMON_END, -1, -1,
	    0, 0, 0, NULL), -1);
	CU_ASSERT_EQUAL(order_task_end(o, B, 0, &why), -1);
	CU_ASSERT_EQUAL(order_task_end(o, A, 0, &why), 0);
	CU_ASSERT_EQUAL(add_full(o, A, 2, PMON_CALL_mytid, PMON_END, -1, -1,
	    0, 0, 0, NULL), -1);
	/* PVM reuses tids: a new incarnation starts from seq 1 again. */
	task(o, A, 0, 0);
	add(o, A, 1, PMON_CALL_mytid, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(nout, 2);
	order_free(o);
	order_free(NULL);
}

/* --- lost records (doc/ordering.md, "Losses") -------------------------- */

/* A send and its end, to dst with tag, at seq and seq + 1. */
static void
send2(struct order *o, int32_t tid, uint64_t seq, int32_t dst, int32_t tag)
{
	add(o, tid, seq, PMON_CALL_send, PMON_BEGIN, dst, tag);
	add(o, tid, seq + 1, PMON_CALL_send, PMON_END, dst, tag);
}

static void
round_now(struct order *o)
{
	order_synced(o, order_mark(o));
}

/*
 * A's second send to D is in a gap: D's second receive got it, not A's
 * third send, and goes unmatched at once (A's third send is after the
 * gap, so its index is not known either).
 */
static void
test_lost_send(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	send2(o, A, 1, D, 1);
	send2(o, A, 5, D, 1);		/* 3 and 4 lost: a send */
	add(o, D, 1, PMON_CALL_recv, PMON_END, A, 1);
	add(o, D, 2, PMON_CALL_recv, PMON_END, A, 1);
	add(o, D, 3, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 1)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 1)].match_seq, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags, EVENT_UNMATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 3)].flags, EVENT_UNMATCHED);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

/* The last send to D was lost: D does not wait for A to end. */
static void
test_lost_send_no_stall(void)
{
	struct order *o = rig();
	struct order_stats st;

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	send2(o, A, 1, D, 1);
	add(o, D, 1, PMON_CALL_recv, PMON_END, A, 1);
	add(o, D, 2, PMON_CALL_recv, PMON_END, A, 1);
	add(o, D, 3, PMON_CALL_exit, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(pos(D, 2), -1);
	/* 3 and 4 (the send) lost, then A goes on computing. */
	add(o, A, 5, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	CU_ASSERT(pos(D, 2) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags, EVENT_UNMATCHED);
	CU_ASSERT_EQUAL(held(o), 0);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.matched, 1);
	CU_ASSERT_EQUAL(st.unmatched, 1);
	order_free(o);
}

/*
 * D lost records before its receive: it may have taken other messages.
 * It is not matched, but still goes after what its sender did before it
 * where the clocks tell.
 */
static void
test_lost_recv(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	add(o, D, 3, PMON_CALL_recv, PMON_END, A, 1);	/* 1, 2 lost */
	/* It still waits for what A did before it (one host, times 1 us
	 * apart here). */
	CU_ASSERT_EQUAL(pos(D, 3), -1);
	send2(o, A, 1, D, 1);
	CU_ASSERT_EQUAL(pos(D, 3), -1);
	send2(o, A, 3, D, 1);
	CU_ASSERT(pos(D, 3) > pos(A, 2));
	CU_ASSERT_EQUAL(outs[pos(D, 3)].flags, EVENT_UNMATCHED);
	add(o, D, 4, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 4)].flags, EVENT_UNMATCHED);
	CU_ASSERT_EQUAL(held(o), 0);
	/* From another host, without a clock that bounds the error: at once. */
	CU_ASSERT_EQUAL(order_task_new(o, C, 1, 0, 0, &why), 0);
	add(o, D, 5, PMON_CALL_recv, PMON_END, C, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 5)].flags, EVENT_UNMATCHED);
	order_free(o);
}

/*
 * A's second send was lost and nothing of A came since: after a round
 * that began after D's receive came, that receive goes, and A counts no
 * more from there.
 */
static void
test_round_unsent(void)
{
	struct order *o = rig();
	int i;

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	send2(o, A, 1, D, 1);
	add(o, D, 1, PMON_CALL_recv, PMON_END, A, 1);
	add(o, D, 2, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(pos(D, 2), -1);
	/* A window this big asks for rounds. */
	for (i = 0; i < ORDER_SYNC_HELD; i++)
		add(o, D, 3 + (uint64_t)i, PMON_CALL_pkint, i % 2, -1, -1);
	CU_ASSERT_EQUAL(order_wants_sync(o), ORDER_SYNC_LATER);
	round_now(o);
	CU_ASSERT(pos(D, 2) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags, EVENT_UNMATCHED);
	CU_ASSERT_EQUAL(held(o), 0);
	CU_ASSERT(!order_wants_sync(o));
	/* A's later records (after its gap) are not counted. */
	send2(o, A, 5, D, 1);
	add(o, D, 3 + ORDER_SYNC_HELD, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 3 + ORDER_SYNC_HELD)].flags,
	    EVENT_UNMATCHED);
	order_free(o);
}

/*
 * B is not monitored when a round looks for its message: D's receive
 * goes and owes the channel B's first counted send; a later receive from
 * B goes at once and owes the second.  When B shows up after all, its
 * third send is D's third receive's, and a failed send gives back what
 * it took.
 */
static void
test_round_absent(void)
{
	struct order *o = rig();

	task(o, D, 0, 0);
	add(o, D, 1, PMON_CALL_recv, PMON_END, B, 1);
	round_now(o);
	CU_ASSERT_EQUAL(outs[pos(D, 1)].flags, EVENT_UNMATCHED);
	add(o, D, 2, PMON_CALL_recv, PMON_END, B, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags, EVENT_UNMATCHED);
	task(o, B, 0, 0);
	add(o, B, 1, PMON_CALL_send, PMON_BEGIN, D, 1);
	CU_ASSERT_EQUAL(add_full(o, B, 2, PMON_CALL_send, PMON_END, D, 1, 0,
	    -2, 0, NULL), 0);		/* failed: delivered nothing */
	send2(o, B, 3, D, 1);
	send2(o, B, 5, D, 1);
	send2(o, B, 7, D, 1);
	add(o, D, 3, PMON_CALL_recv, PMON_END, B, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 3)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 3)].match_seq, 7);
	order_free(o);
}

/*
 * pvmd lists B, which pmon does not instrument: D's receive of B's
 * message, waiting, goes at once, unmatched and flagged unmonitored,
 * and so does a later one, without a round.  A receive from a monitored
 * task is not flagged.  When B's tid comes back instrumented, its send
 * is matched again.
 */
static void
test_unmonitored_sender(void)
{
	struct order *o = rig();

	task(o, D, 0, 0);
	task(o, C, 0, 0);
	add(o, D, 1, PMON_CALL_recv, PMON_END, B, 1);
	CU_ASSERT_EQUAL(pos(D, 1), -1);
	CU_ASSERT_EQUAL(order_task_unmonitored(o, B), 0);
	CU_ASSERT_EQUAL_FATAL(pos(D, 1), 0);
	CU_ASSERT_EQUAL(outs[0].flags, EVENT_UNMATCHED | EVENT_UNMONITORED);
	add(o, D, 2, PMON_CALL_recv, PMON_END, B, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags,
	    EVENT_UNMATCHED | EVENT_UNMONITORED);
	/* A monitored task is not made unmonitored. */
	CU_ASSERT_EQUAL(order_task_unmonitored(o, C), 0);
	send2(o, C, 1, D, 1);
	add(o, D, 3, PMON_CALL_recv, PMON_END, C, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 3)].flags, EVENT_MATCHED);
	task(o, B, 0, 0);
	send2(o, B, 1, D, 1);
	send2(o, B, 3, D, 1);
	send2(o, B, 5, D, 1);
	add(o, D, 4, PMON_CALL_recv, PMON_END, B, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 4)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 4)].match_seq, 5);
	order_free(o);
}

/* B's pvm_recvinfo end that read the entry A's put (begin A:put) stored. */
static void
mbox_read(struct order *o, uint64_t seq, uint64_t put)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_recvinfo;
	r.phase = PMON_END;
	r.seq = seq;
	r.t_ns = 1000 * seq;
	r.rc = 5;
	r.peer = A;
	r.inst = (int32_t)put;
	r.flags = RECORD_MSG | RECORD_MSGID;
	CU_ASSERT_EQUAL(add_record(o, B, &r, NULL), 0);
}

/*
 * A pvm_recvinfo goes after the pvm_putinfo that stored what it read,
 * matched to it, however late the put's records come; one whose put
 * never comes (lost, or put before pmon) goes unmatched after a round.
 */
static void
test_mbox_edge(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	add(o, B, 1, PMON_CALL_recvinfo, PMON_BEGIN, -1, 0);
	mbox_read(o, 2, 3);
	CU_ASSERT_EQUAL(pos(B, 2), -1);
	add(o, A, 1, PMON_CALL_initsend, PMON_BEGIN, -1, -1);
	add(o, A, 2, PMON_CALL_initsend, PMON_END, -1, -1);
	CU_ASSERT_EQUAL(pos(B, 2), -1);
	add(o, A, 3, PMON_CALL_putinfo, PMON_BEGIN, -1, 0);
	CU_ASSERT_FATAL(pos(B, 2) > pos(A, 3));
	CU_ASSERT_EQUAL(outs[pos(B, 2)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(B, 2)].match_tid, A);
	CU_ASSERT_EQUAL(outs[pos(B, 2)].match_seq, 3);
	/* A put that never comes: B's next read waits for a round. */
	mbox_read(o, 3, 40);
	CU_ASSERT_EQUAL(pos(B, 3), -1);
	round_now(o);
	round_now(o);
	CU_ASSERT_FATAL(pos(B, 3) >= 0);
	CU_ASSERT_EQUAL(outs[pos(B, 3)].flags, 0);
	order_free(o);
}

/* One record of tid: call, phase, peer, inst and flags. */
static void
add_inst(struct order *o, int32_t tid, uint64_t seq, int call, int phase,
    int32_t peer, int32_t inst, uint8_t flags)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = (uint8_t)call;
	r.phase = (uint8_t)phase;
	r.seq = seq;
	r.t_ns = 1000 * seq;
	r.peer = peer;
	r.tag = -1;
	r.inst = inst;
	r.flags = flags;
	CU_ASSERT_EQUAL(add_record(o, tid, &r, NULL), 0);
}

/*
 * A signal B's pvmd delivered goes after the first pvm_sendsig (or
 * pvm_kill, SIGTERM) of its number to B, matched to it, however late
 * that comes; a signal of another number does not take it; one nobody
 * sent (a raise: not from the pvmd) goes at once; one from the pvmd
 * with no sender goes unmatched after a round.
 */
static void
test_signal_edge(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	add_inst(o, B, 1, PMON_CALL_SIGNAL, PMON_BEGIN, -1, 10, 0);
	CU_ASSERT_FATAL(pos(B, 1) >= 0);
	CU_ASSERT_EQUAL(outs[pos(B, 1)].flags, 0);
	add_inst(o, B, 2, PMON_CALL_SIGNAL, PMON_END, -1, 10, 0);
	add_inst(o, B, 3, PMON_CALL_SIGNAL, PMON_BEGIN, -1, 12, RECORD_PVMD);
	add_inst(o, B, 4, PMON_CALL_SIGNAL, PMON_END, -1, 12, 0);
	CU_ASSERT_EQUAL(pos(B, 3), -1);
	add_inst(o, A, 1, PMON_CALL_sendsig, PMON_BEGIN, B, 10, 0);
	add_inst(o, A, 2, PMON_CALL_sendsig, PMON_END, B, 10, 0);
	CU_ASSERT_EQUAL(pos(B, 3), -1);
	add_inst(o, A, 3, PMON_CALL_sendsig, PMON_BEGIN, B, 12, 0);
	CU_ASSERT_FATAL(pos(B, 3) > pos(A, 3));
	CU_ASSERT_EQUAL(outs[pos(B, 3)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(B, 3)].match_tid, A);
	CU_ASSERT_EQUAL(outs[pos(B, 3)].match_seq, 3);
	CU_ASSERT(pos(B, 4) > pos(B, 3));
	/* The earlier SIGUSR1 (10) is still there for B's next one. */
	add_inst(o, A, 4, PMON_CALL_sendsig, PMON_END, B, 12, 0);
	add_inst(o, B, 5, PMON_CALL_SIGNAL, PMON_BEGIN, -1, 10, RECORD_PVMD);
	CU_ASSERT_FATAL(pos(B, 5) >= 0);
	CU_ASSERT_EQUAL(outs[pos(B, 5)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(B, 5)].match_seq, 1);
	add_inst(o, B, 6, PMON_CALL_SIGNAL, PMON_END, -1, 10, 0);
	/* A pvm_kill is a SIGTERM (15), as the instrumentation writes it. */
	add_inst(o, A, 5, PMON_CALL_kill, PMON_BEGIN, B, 15, 0);
	add_inst(o, B, 7, PMON_CALL_SIGNAL, PMON_BEGIN, -1, 15, RECORD_PVMD);
	CU_ASSERT_FATAL(pos(B, 7) > pos(A, 5));
	CU_ASSERT_EQUAL(outs[pos(B, 7)].match_seq, 5);
	add_inst(o, B, 8, PMON_CALL_SIGNAL, PMON_END, -1, 15, 0);
	/* From the pvmd, sent by nobody pmon saw: a round, then unmatched. */
	add_inst(o, B, 9, PMON_CALL_SIGNAL, PMON_BEGIN, -1, 15, RECORD_PVMD);
	CU_ASSERT_EQUAL(pos(B, 9), -1);
	round_now(o);
	round_now(o);
	CU_ASSERT_FATAL(pos(B, 9) >= 0);
	CU_ASSERT_EQUAL(outs[pos(B, 9)].flags, 0);
	order_free(o);
}

/*
 * The end of A's send was lost: whether it delivered anything is not
 * known, so D's receive is not matched to it.  A task that ended inside
 * its send made no other: the receive got that one.
 */
static void
test_lost_send_end(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	task(o, D, 0, 0);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, D, 1);
	add(o, D, 1, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(pos(D, 1), -1);
	add(o, A, 3, PMON_CALL_pkint, PMON_BEGIN, -1, -1);	/* 2 lost */
	CU_ASSERT_EQUAL(outs[pos(D, 1)].flags, EVENT_UNMATCHED);
	add(o, B, 1, PMON_CALL_send, PMON_BEGIN, D, 2);
	add(o, D, 2, PMON_CALL_recv, PMON_END, B, 2);
	CU_ASSERT_EQUAL(pos(D, 2), -1);
	CU_ASSERT_EQUAL(order_task_end(o, B, 0, &why), 0);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].match_seq, 1);
	order_free(o);
}

/*
 * A debugger stopped A inside its send to D, after the message went out:
 * D's receive waits for the send's end, which will not come while A is
 * stopped.  After a round that began once the receive came, A has made
 * nothing after the send's begin: the receive got that message.  The end
 * coming later changes nothing, and the channel counts on.
 */
static void
test_round_midsend(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	add(o, A, 1, PMON_CALL_send, PMON_BEGIN, D, 1);
	round_now(o);				/* before the receive came */
	add(o, D, 1, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(pos(D, 1), -1);
	round_now(o);
	CU_ASSERT_FATAL(pos(D, 1) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 1)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 1)].match_seq, 1);
	add(o, A, 2, PMON_CALL_send, PMON_END, D, 1);
	send2(o, A, 3, D, 1);
	add(o, D, 2, PMON_CALL_recv, PMON_END, A, 1);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 2)].match_seq, 3);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

/* The end of D's receive of message id (record.h, RECORD_MSGID). */
static void
recv_id(struct order *o, int32_t tid, uint64_t seq, int32_t peer,
    int32_t tag, uint32_t id)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_recv;
	r.phase = PMON_END;
	r.seq = seq;
	r.t_ns = 1000 * seq;
	r.peer = peer;
	r.tag = tag;
	r.inst = (int32_t)id;
	r.flags = RECORD_MSG | RECORD_MSGID;
	CU_ASSERT_EQUAL(add_record(o, tid, &r, NULL), 0);
	CU_ASSERT_EQUAL(record_msg_id(&r), id);
}

/*
 * After a coordinator restart (A resumed at 10, D at 20): D's receive of
 * A's send 5, which the dead coordinator released, goes unmatched at
 * once; A's send 10 was received before D's resume point, so D's
 * receive of 12 skips it and takes 12; a receive of a send still to
 * come waits for it.
 */
static void
test_msgid_resume(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	CU_ASSERT_EQUAL(order_task_resume(o, A, 10, 0, &why), 0);
	CU_ASSERT_EQUAL(order_task_resume(o, D, 20, 0, &why), 0);
	recv_id(o, D, 20, A, 1, 5);
	CU_ASSERT_FATAL(pos(D, 20) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 20)].flags, EVENT_UNMATCHED);
	send2(o, A, 10, D, 1);
	send2(o, A, 12, D, 1);
	recv_id(o, D, 21, A, 1, 12);
	CU_ASSERT_FATAL(pos(D, 21) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 21)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 21)].match_seq, 12);
	recv_id(o, D, 22, A, 1, 14);
	CU_ASSERT_EQUAL(pos(D, 22), -1);	/* A's send 14 is to come */
	add(o, A, 14, PMON_CALL_send, PMON_BEGIN, D, 1);
	CU_ASSERT_FATAL(pos(D, 22) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 22)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 22)].match_seq, 14);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

/*
 * The same, but D's receive of A's send 5 comes before A is known, and
 * A then resumes at 10 (another agent brought them): the next round
 * judges the receive unmatched; it does not wait for a send A will
 * never bring again.
 */
static void
test_msgid_resume_later(void)
{
	struct order *o = rig();
	const char *why = NULL;

	task(o, D, 0, 0);
	CU_ASSERT_EQUAL(order_task_resume(o, D, 20, 0, &why), 0);
	recv_id(o, D, 20, A, 1, 5);
	CU_ASSERT_EQUAL(pos(D, 20), -1);	/* A may send 5 yet */
	task(o, A, 0, 0);
	CU_ASSERT_EQUAL(order_task_resume(o, A, 10, 0, &why), 0);
	send2(o, A, 10, D, 1);
	order_synced(o, order_mark(o));
	CU_ASSERT_FATAL(pos(D, 20) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 20)].flags, EVENT_UNMATCHED);
	order_free(o);
}

/*
 * A's send 3 is lost, and so is D's record 2: D's receive of 3 goes
 * unmatched once A is past it, and the receives after the gaps, which
 * could not be counted, are matched by their ids.
 */
static void
test_msgid_lost(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	send2(o, A, 1, D, 1);
	add(o, D, 1, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	recv_id(o, D, 3, A, 1, 3);		/* D's 2 lost */
	CU_ASSERT_EQUAL(pos(D, 3), -1);		/* A may still send 3 */
	send2(o, A, 5, D, 1);			/* A's 3, 4 lost */
	CU_ASSERT_FATAL(pos(D, 3) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 3)].flags, EVENT_UNMATCHED);
	recv_id(o, D, 4, A, 1, 5);
	CU_ASSERT_FATAL(pos(D, 4) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 4)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(outs[pos(D, 4)].match_seq, 5);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

/*
 * D lost records before its receive from A; A released all it had, made
 * before the receive.  A's next record comes, made as late, and waits
 * (for B's send): D's receive need not wait for it, nor for a round.
 */
static void
test_lost_recv_sender_held(void)
{
	struct order *o = rig();

	task(o, A, 0, 0);
	task(o, B, 0, 0);
	task(o, D, 0, 0);
	add(o, A, 1, PMON_CALL_pkint, PMON_BEGIN, -1, -1);
	add(o, A, 2, PMON_CALL_pkint, PMON_END, -1, -1);
	add(o, D, 3, PMON_CALL_recv, PMON_END, A, 1);	/* 1, 2 lost */
	CU_ASSERT_EQUAL(pos(D, 3), -1);
	add(o, A, 3, PMON_CALL_recv, PMON_END, B, 7);
	CU_ASSERT_EQUAL(pos(A, 3), -1);
	CU_ASSERT_FATAL(pos(D, 3) >= 0);
	CU_ASSERT_EQUAL(outs[pos(D, 3)].flags, EVENT_UNMATCHED);
	send2(o, B, 1, A, 7);
	CU_ASSERT_EQUAL(outs[pos(A, 3)].flags, EVENT_MATCHED);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

/* --- what the order keeps ---------------------------------------------- */

/* Channels used once are forgotten: the table follows the live ones. */
static void
test_channels_forgotten(void)
{
	struct order *o = rig();
	struct order_stats st;
	int32_t tag;

	task(o, A, 0, 0);
	task(o, D, 0, 0);
	for (tag = 1; tag <= 2000; tag++) {
		send2(o, A, 2 * (uint64_t)tag - 1, D, tag);
		add(o, D, (uint64_t)tag, PMON_CALL_recv, PMON_END, A, tag);
	}
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.matched, 2000);
	CU_ASSERT(st.channels <= 128);
	order_free(o);
}

/* A spawn is forgotten once its children started. */
static void
test_spawns_forgotten(void)
{
	struct order *o = rig();
	struct order_stats st;
	int32_t child[1];
	uint64_t k;

	task(o, A, 0, 0);
	for (k = 0; k < 500; k++) {
		child[0] = (int32_t)(0x80001 + k);
		add(o, A, 2 * k + 1, PMON_CALL_spawn, PMON_BEGIN, -1, -1);
		CU_ASSERT_EQUAL(add_full(o, A, 2 * k + 2, PMON_CALL_spawn,
		    PMON_END, -1, -1, 0, 1, 1, child), 0);
		task(o, child[0], A, 2 * k + 1);
		add(o, child[0], 1, PMON_CALL_mytid, PMON_BEGIN, -1, -1);
	}
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.kept, 0);
	CU_ASSERT_EQUAL(held(o), 0);
	order_free(o);
}

/*
 * A child whose first records were lost counts no more from its start:
 * its first event still lets its parent forget the spawn.
 */
static void
test_spawn_forgotten_lossy_child(void)
{
	struct order *o = rig();
	struct order_stats st;
	int32_t child[1] = { A };

	task(o, C, 0, 0);
	add(o, C, 1, PMON_CALL_spawn, PMON_BEGIN, -1, -1);
	CU_ASSERT_EQUAL(add_full(o, C, 2, PMON_CALL_spawn, PMON_END, -1, -1,
	    0, 1, 1, child), 0);
	task(o, A, C, 1);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.kept, 1);
	add(o, A, 3, PMON_CALL_pkint, PMON_BEGIN, -1, -1);	/* 1, 2 lost */
	CU_ASSERT(pos(A, 3) >= 0);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.kept, 0);
	order_free(o);
}

/* --- randomized executions -------------------------------------------- */

#define RT_TASKS	6
#define RT_RECS		1024
#define RT_MSGS		4096

/* One generated record, with what the execution says about it. */
struct rrec {
	uint8_t		call, phase, flags;
	int32_t		peer, tag, ctx, rc;
	int		npeers;
	int32_t		peers[6];
	int32_t		dep_tid;	/* its send, or 0 */
	uint64_t	dep_seq;
	uint64_t	dep_upto;	/* the seq of the send's end */
	int		dropped;	/* lost to a full ring */
};

struct rtask {
	int32_t		tid, parent;
	uint64_t	spawn_seq;
	int		n;
	struct rrec	r[RT_RECS];
	/* delivery */
	int		registered, cursor, ended;
	/* the model of what may be out */
	int		mitems;		/* items released */
	uint64_t	mseq;		/* last seq they cover */
};

struct rmsg {
	int32_t		src, dst, tag, ctx;
	uint64_t	seq;
	uint64_t	upto;		/* the send's end: what says it
					   delivered */
	int		taken;
};

static struct rtask rt[RT_TASKS];
static int nrt;
static struct rmsg rmsgs[RT_MSGS];
static int nrmsgs;
static uint64_t rstate;

static uint32_t
rnd(uint32_t n)
{
	rstate ^= rstate << 13;
	rstate ^= rstate >> 7;
	rstate ^= rstate << 17;
	return (uint32_t)(rstate >> 11) % n;
}

static struct rrec *
emit(struct rtask *t, int call, int phase)
{
	struct rrec *r = &t->r[t->n++];

	memset(r, 0, sizeof(*r));
	r->call = call;
	r->phase = phase;
	r->peer = -1;
	r->tag = -1;
	return r;
}

static void
post(struct rtask *t, int32_t dst, int tag, int ctx)
{
	struct rmsg *m = &rmsgs[nrmsgs++];

	m->src = t->tid;
	m->dst = dst;
	m->tag = tag;
	m->ctx = ctx;
	m->seq = (uint64_t)t->n;	/* the record just emitted */
	/* A send's end follows its begin; a bcast's end is the send. */
	m->upto = m->seq + (t->r[t->n - 1].phase == PMON_BEGIN);
	m->taken = 0;
}

static void
gen_spawn(struct rtask *t)
{
	struct rtask *c = &rt[nrt];

	emit(t, PMON_CALL_spawn, PMON_BEGIN);
	memset(c, 0, sizeof(*c));
	c->tid = 0x40001 + nrt;
	c->parent = t->tid;
	c->spawn_seq = (uint64_t)t->n;
	nrt++;
	emit(t, PMON_CALL_spawn, PMON_END);
}

static void
gen_send(struct rtask *t)
{
	struct rrec *r = emit(t, PMON_CALL_send, PMON_BEGIN);

	r->peer = rt[rnd(nrt)].tid;
	r->tag = 1 + rnd(3);
	r->ctx = rnd(2);
	post(t, r->peer, r->tag, r->ctx);
	emit(t, PMON_CALL_send, PMON_END);
}

/* A multicast or broadcast: duplicates and self get no copy. */
static void
gen_mcast(struct rtask *t, int bcast)
{
	int call = bcast ? PMON_CALL_bcast : PMON_CALL_mcast;
	struct rrec *r, *b = emit(t, call, PMON_BEGIN);
	int i, j, dup;

	r = bcast ? emit(t, call, PMON_END) : b;
	r->tag = b->tag = 1 + rnd(3);
	r->ctx = b->ctx = rnd(2);
	r->npeers = 1 + rnd(6);
	for (i = 0; i < r->npeers; i++) {
		r->peers[i] = rt[rnd(nrt)].tid;
		for (dup = 0, j = 0; j < i; j++)
			dup |= r->peers[j] == r->peers[i];
		if (!dup && r->peers[i] != t->tid)
			post(t, r->peers[i], r->tag, r->ctx);
	}
	if (!bcast)
		emit(t, call, PMON_END);
}

/* The first waiting message a receive with these filters gets. */
static struct rmsg *
first_match(int32_t dst, int32_t src, int tag, int ctx)
{
	int i;

	for (i = 0; i < nrmsgs; i++) {
		struct rmsg *m = &rmsgs[i];

		if (!m->taken && m->dst == dst && m->ctx == ctx &&
		    (src == -1 || m->src == src) &&
		    (tag == -1 || m->tag == tag))
			return m;
	}
	return NULL;
}

/* A receive (or probe) of a waiting message, maybe with wildcards. */
static void
gen_recv(struct rtask *t, int probe)
{
	int call = probe ? PMON_CALL_probe : PMON_CALL_recv;
	struct rmsg *m, *pick = NULL;
	struct rrec *r;
	int32_t src;
	int i, tag, n = 0;

	for (i = 0; i < nrmsgs; i++)
		if (!rmsgs[i].taken && rmsgs[i].dst == t->tid &&
		    rnd(++n) == 0)
			pick = &rmsgs[i];
	if (pick == NULL)
		return;
	src = rnd(3) == 0 ? -1 : pick->src;
	tag = rnd(3) == 0 ? -1 : pick->tag;
	m = first_match(t->tid, src, tag, pick->ctx);
	r = emit(t, call, PMON_BEGIN);
	r->peer = src;
	r->tag = tag;
	r->ctx = pick->ctx;
	r = emit(t, call, PMON_END);
	r->peer = m->src;
	r->tag = m->tag;
	r->ctx = m->ctx;
	r->flags = RECORD_MSG;
	r->dep_tid = m->src;
	r->dep_seq = m->seq;
	r->dep_upto = m->upto;
	if (!probe)
		m->taken = 1;
}

static void
gen_other(struct rtask *t)
{
	struct rrec *r;

	switch (rnd(3)) {
	case 0:		/* a notify message from the pvmd */
		r = emit(t, PMON_CALL_recv, PMON_END);
		r->peer = (int32_t)0x80040000;
		r->tag = 99;
		r->flags = RECORD_MSG;
		break;
	case 1:		/* a non-blocking receive that found nothing */
		emit(t, PMON_CALL_nrecv, PMON_BEGIN);
		emit(t, PMON_CALL_nrecv, PMON_END);
		break;
	default:	/* packing: the records a full ring may drop */
		emit(t, PMON_CALL_pkint, PMON_BEGIN)->dropped = rnd(3) == 0;
		emit(t, PMON_CALL_pkint, PMON_END)->dropped = rnd(3) == 0;
		break;
	}
}

static void
generate(void)
{
	int step, k;

	nrt = 1;
	nrmsgs = 0;
	memset(&rt[0], 0, sizeof(rt[0]));
	rt[0].tid = 0x40001;
	for (step = 0; step < 300; step++) {
		struct rtask *t = &rt[rnd(nrt)];

		if (t->n + 4 > RT_RECS || nrmsgs + 8 > RT_MSGS)
			break;
		k = rnd(12);
		if (k == 0 && nrt < RT_TASKS)
			gen_spawn(t);
		else if (k <= 3)
			gen_send(t);
		else if (k == 4)
			gen_mcast(t, rnd(2));
		else if (k <= 8)
			gen_recv(t, k == 8);
		else
			gen_other(t);
	}
}

/* The items the stream must hold for a task: records and lost markers. */
struct ritem {
	int		first, last;	/* record indexes covered */
	int		lost;
};

static int
items(const struct rtask *t, struct ritem *it)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++) {
		if (t->r[i].dropped && n > 0 && it[n - 1].lost &&
		    it[n - 1].last == i - 1) {
			it[n - 1].last = i;
			continue;
		}
		it[n].first = it[n].last = i;
		it[n].lost = t->r[i].dropped;
		n++;
	}
	return n;
}

/* Has the agent shipped what the coordinator needs to see item it? */
static int
available(const struct rtask *t, const struct ritem *it)
{
	if (!it->lost)
		return t->cursor > it->first;
	if (it->last + 1 < t->n)
		return t->cursor > it->last + 1;
	return t->ended;
}

static struct rtask *
rtask_of(int32_t tid)
{
	int i;

	for (i = 0; i < nrt; i++)
		if (rt[i].tid == tid)
			return &rt[i];
	return NULL;
}

/* The seq of a task's first dropped record, or UINT64_MAX. */
static uint64_t
first_drop(const struct rtask *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->r[i].dropped)
			return (uint64_t)i + 1;
	return UINT64_MAX;
}

static int	available(const struct rtask *, const struct ritem *);

/* Has the coordinator seen that t lost records? */
static int
loss_known(const struct rtask *t)
{
	struct ritem it;
	int i = (int)first_drop(t) - 1;

	it.first = it.last = i;
	it.lost = 1;
	while (it.last + 1 < t->n && t->r[it.last + 1].dropped)
		it.last++;
	return available(t, &it);
}

/*
 * Can the core count the message item it of t got?  A record dropped
 * before the receive, or before the send's end, may have been another
 * message of the same channel (doc/ordering.md, "Losses").
 */
static int
countable(const struct rtask *t, const struct ritem *it)
{
	const struct rrec *r = &t->r[it->first];

	return first_drop(t) > (uint64_t)it->first + 1 &&
	    first_drop(rtask_of(r->dep_tid)) > r->dep_upto;
}

static int
model_ready(const struct rtask *t, const struct ritem *it, int k)
{
	const struct rrec *r = &t->r[it->first];
	const struct rtask *p, *s;

	if (k == 0 && t->parent != 0) {
		p = rtask_of(t->parent);
		if (p->mseq < t->spawn_seq)
			return 0;
	}
	if (it->lost || r->dep_tid == 0)
		return 1;
	s = rtask_of(r->dep_tid);
	/* A counted message waits for its send's end. */
	if (countable(t, it))
		return s->mseq >= r->dep_upto;
	/*
	 * A receive of its own uncounted goes; else once no counted send
	 * can come: its sender released all before its first loss, and
	 * the loss shows (a record after it came, or the task ended).
	 */
	return first_drop(t) <= (uint64_t)it->first + 1 ||
	    (s->mseq + 1 >= first_drop(s) && loss_known(s));
}

/* How many events may be out now: the closure the sort must reach. */
static int
model_closure(struct ritem its[][RT_RECS], const int *nits)
{
	int i, changed, total = 0;

	do {
		changed = 0;
		for (i = 0; i < nrt; i++) {
			struct rtask *t = &rt[i];
			struct ritem *it;

			while (t->mitems < nits[i] &&
			    available(t, it = &its[i][t->mitems]) &&
			    model_ready(t, it, t->mitems)) {
				t->mseq = (uint64_t)it->last + 1;
				t->mitems++;
				changed = 1;
			}
		}
	} while (changed);
	for (i = 0; i < nrt; i++)
		total += rt[i].mitems;
	return total;
}

static void
deliver_one(struct order *o, struct rtask *t)
{
	const struct rrec *g;

	while (t->cursor < t->n && t->r[t->cursor].dropped)
		t->cursor++;
	if (t->cursor == t->n)
		return;
	g = &t->r[t->cursor];
	t->cursor++;
	CU_ASSERT_EQUAL(add_full(o, t->tid, (uint64_t)t->cursor, g->call,
	    g->phase, g->peer, g->tag, g->ctx, g->rc, g->npeers, g->peers), 0);
}

static int
dropped_count(const struct rtask *t)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += t->r[i].dropped;
	return n;
}

/* One step of an adversarial delivery; returns 0 when all is delivered. */
static int
deliver_step(struct order *o)
{
	const char *why = NULL;
	struct rtask *t;
	int i, k, left = 0;

	for (i = 0; i < nrt; i++)
		left += !rt[i].ended;
	if (left == 0)
		return 0;
	do
		t = &rt[rnd(nrt)];
	while (t->ended);
	if (!t->registered) {
		/* A host each: without a clock, no times compare. */
		CU_ASSERT_EQUAL(order_task_new(o, t->tid,
		    (uint32_t)(t - rt) + 1, t->parent, t->spawn_seq, &why), 0);
		t->registered = 1;
	} else if (t->cursor < t->n) {
		for (k = 1 + rnd(4); k > 0; k--)
			deliver_one(o, t);
	} else {
		CU_ASSERT_EQUAL(order_task_end(o, t->tid,
		    (uint64_t)dropped_count(t), &why), 0);
		t->ended = 1;
	}
	return 1;
}

/* Where item k of task i came out, from the output log. */
static int
out_index(int i, int k)
{
	int j, seen = 0;

	for (j = 0; j < nout; j++)
		if (outs[j].tid == rt[i].tid && seen++ == k)
			return j;
	return -1;
}

/* Where (tid, seq) came out; sends and spawns are never lost. */
static int
out_index_seq(int32_t tid, uint64_t seq)
{
	int j;

	for (j = 0; j < nout; j++)
		if (outs[j].tid == tid && outs[j].seq == seq)
			return j;
	return -1;
}

/* The stream against the execution: each item once, in causal order. */
static void
check_item(int i, int k, const struct ritem *it)
{
	const struct rtask *t = &rt[i];
	const struct rrec *r = &t->r[it->first];
	const struct out *ev;
	int j = out_index(i, k);

	CU_ASSERT_FATAL(j >= 0);
	ev = &outs[j];
	CU_ASSERT_EQUAL(ev->seq, (uint64_t)it->first + 1);
	if (it->lost) {
		CU_ASSERT_EQUAL(ev->call, PMON_CALL_LOST);
		CU_ASSERT_EQUAL(ev->flags, EVENT_LOST);
		CU_ASSERT_EQUAL(ev->bytes, it->last - it->first + 1);
	} else {
		CU_ASSERT_EQUAL(ev->call, r->call);
		CU_ASSERT_EQUAL(ev->phase, r->phase);
	}
	if (!it->lost && r->dep_tid != 0 && countable(t, it)) {
		CU_ASSERT_EQUAL(ev->flags, EVENT_MATCHED);
		CU_ASSERT_EQUAL(ev->match_tid, r->dep_tid);
		CU_ASSERT_EQUAL(ev->match_seq, r->dep_seq);
		CU_ASSERT(out_index_seq(r->dep_tid, r->dep_seq) < j);
	} else if (!it->lost && r->dep_tid != 0) {
		CU_ASSERT_EQUAL(ev->flags, EVENT_UNMATCHED);
	} else if (!it->lost)
		CU_ASSERT_EQUAL(ev->flags, 0);
	if (k == 0 && t->parent != 0)
		CU_ASSERT(out_index_seq(t->parent, t->spawn_seq) < j);
	if (k > 0)
		CU_ASSERT(out_index(i, k - 1) < j);
}

static struct ritem rits[RT_TASKS][RT_RECS];

static void
run_seed(uint64_t seed)
{
	struct order_stats st;
	struct order *o;
	int nits[RT_TASKS], i, k, total = 0;

	rstate = seed * 0x9e3779b97f4a7c15ULL + 1;
	generate();
	for (i = 0; i < nrt; i++) {
		nits[i] = items(&rt[i], rits[i]);
		total += nits[i];
	}
	o = rig();
	while (deliver_step(o))
		CU_ASSERT_EQUAL_FATAL(nout, model_closure(rits, nits));
	CU_ASSERT_EQUAL(nout, total);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.held, 0);
	CU_ASSERT_EQUAL(st.retained, 0);
	for (i = 0; i < nrt; i++)
		for (k = 0; k < nits[i]; k++)
			check_item(i, k, &rits[i][k]);
	order_free(o);
}

static void
test_random_executions(void)
{
	uint64_t seed;

	for (seed = 1; seed <= 400; seed++)
		run_seed(seed);
}

static CU_TestInfo order_tests[] = {
	{ "receive before its send", test_recv_before_send },
	{ "child before its parent's spawn", test_child_before_spawn },
	{ "a task resumed at a later seq", test_resume },
	{ "multicast", test_mcast },
	{ "broadcast lists peers at its end", test_bcast },
	{ "wildcard source, two senders", test_wildcard_two_senders },
	{ "send to self", test_self_send },
	{ "gap becomes a lost marker", test_gap_lost_marker },
	{ "probe peeks at the send", test_probe_peeks },
	{ "notify from the pvmd", test_notify_from_pvmd },
	{ "a notify names the exit it reports", test_notify_matches_exit },
	{ "contexts are separate channels", test_context_separates },
	{ "failed send is retracted", test_failed_send_retracted },
	{ "receive from an ended task", test_source_ended },
	{ "release all at shutdown", test_release_all },
	{ "release all keeps sends first", test_release_all_keeps_sends_first },
	{ "rejects bad input", test_rejects },
	{ "a lost send", test_lost_send },
	{ "a lost send does not stall", test_lost_send_no_stall },
	{ "a lost receive", test_lost_recv },
	{ "a round releases a receive of a lost send", test_round_unsent },
	{ "a round finds a sender absent", test_round_absent },
	{ "a sender pmon does not instrument", test_unmonitored_sender },
	{ "a mailbox read after its put", test_mbox_edge },
	{ "a signal after its pvm_sendsig", test_signal_edge },
	{ "the end of a send lost", test_lost_send_end },
	{ "a round: the receive got the send its sender is inside",
	    test_round_midsend },
	{ "a receive names its message after a coordinator restart",
	    test_msgid_resume },
	{ "a receive names its message after losses", test_msgid_lost },
	{ "a lost receive, its sender's next held",
	    test_lost_recv_sender_held },
	{ "channels are forgotten", test_channels_forgotten },
	{ "a receive of a send from before its sender resumed, first",
	    test_msgid_resume_later },
	{ "a round does not judge a receive from a task away",
	    test_away_not_judged },
	{ "the root matches what a restarted intermediate could not",
	    test_root_matches_resumed },
	{ "spawns are forgotten", test_spawns_forgotten },
	{ "a lossy child's spawn is forgotten",
	    test_spawn_forgotten_lossy_child },
	{ "randomized executions", test_random_executions },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo order_suites[] = {
	{ "order", NULL, NULL, NULL, NULL, order_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(order_suites)
