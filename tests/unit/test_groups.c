/*
 * Protects the group semantics of the ordering core: the state-consistent
 * selection of VISTOP (paper 003, 3.3) for broadcasts and gsize, barrier
 * episodes, the flush round that makes a join or leave safe, notifies of
 * task exits, and the corrected times the clock gives released events.
 * Every expectation comes from the scenario each test builds.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "order.h"
#include "proto.h"
#include "record.h"
#include "unit.h"

#define A	0x40001
#define B	0x40002
#define C	0x80003
#define PVMD	((int32_t)0x80040000)

#define OUT_MAX	8192

struct gout {
	int32_t		tid;
	uint64_t	seq;
	uint8_t		flags;
	uint64_t	t_corr;
};

static struct gout gouts[OUT_MAX];
static int ngout;

static void
gcollect(const struct order_event *ev, void *arg)
{
	struct gout *o;

	(void)arg;
	CU_ASSERT_FATAL(ngout < OUT_MAX);
	o = &gouts[ngout++];
	o->tid = ev->tid;
	o->seq = ev->rec->seq;
	o->flags = ev->flags;
	o->t_corr = ev->t_corr;
}

static struct order *
grig(void)
{
	struct order *o;
	const char *why;

	ngout = 0;
	o = order_new(gcollect, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	CU_ASSERT_EQUAL(order_task_new(o, A, 1, 0, 0, &why), 0);
	CU_ASSERT_EQUAL(order_task_new(o, B, 1, 0, 0, &why), 0);
	CU_ASSERT_EQUAL(order_task_new(o, C, 2, 0, 0, &why), 0);
	return o;
}

/* One record with every field the group calls use. */
struct rspec {
	int		call, phase;
	int32_t		rc, peer, tag, inst;
	const char	*group;
	unsigned	npeers;
	const int32_t	*peers;
	uint64_t	t_ns;
};

/* Adds a record with extra flags (RECORD_GS). */
static void
gadd_flags(struct order *o, int32_t tid, uint64_t seq, const struct rspec *s,
    uint8_t flags)
{
	uint8_t buf[RECORD_MAX_SIZE];
	struct record r;
	const char *why = NULL;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.call = (uint8_t)s->call;
	r.phase = (uint8_t)s->phase;
	r.seq = seq;
	r.t_ns = s->t_ns ? s->t_ns : 1000 * seq;
	r.rc = s->rc;
	r.peer = s->peer ? s->peer : -1;
	r.tag = s->tag;
	r.inst = s->inst;
	r.group = s->group;
	r.glen = s->group ? (uint8_t)strlen(s->group) : 0;
	r.npeers = (uint16_t)s->npeers;
	if (s->call == PMON_CALL_recv && s->phase == PMON_END)
		r.flags = RECORD_MSG;
	r.flags |= flags;
	n = record_encode(buf, &r, s->peers);
	CU_ASSERT_EQUAL_FATAL(record_decode(buf, n, &r, &why), 0);
	CU_ASSERT_EQUAL(order_add(o, tid, &r, &why), 0);
}

static void
gadd(struct order *o, int32_t tid, uint64_t seq, const struct rspec *s)
{
	gadd_flags(o, tid, seq, s, 0);
}

/* The begin and end of a call on group "g". */
static void
gcall(struct order *o, int32_t tid, uint64_t seq, int call, int32_t rc)
{
	struct rspec s = { call, PMON_BEGIN, 0, 0, -1, -1, "g", 0, NULL, 0 };

	gadd(o, tid, seq, &s);
	s.phase = PMON_END;
	s.rc = rc;
	gadd(o, tid, seq + 1, &s);
}

static void
bcast(struct order *o, int32_t tid, uint64_t seq, unsigned n,
    const int32_t *to)
{
	struct rspec s = { PMON_CALL_bcast, PMON_BEGIN, 0, 0, 5, -1, "g", 0,
	    NULL, 0 };

	gadd(o, tid, seq, &s);
	s.phase = PMON_END;
	s.npeers = n;
	s.peers = to;
	gadd(o, tid, seq + 1, &s);
}

/* A flush round during which the given function delivers records. */
static void
round_with(struct order *o, void (*deliver)(struct order *))
{
	uint64_t m = order_mark(o);

	if (deliver != NULL)
		deliver(o);
	order_synced(o, m);
}

static int
gpos(int32_t tid, uint64_t seq)
{
	int i, at = -1;

	for (i = 0; i < ngout; i++)
		if (gouts[i].tid == tid && gouts[i].seq == seq) {
			CU_ASSERT_EQUAL(at, -1);
			at = i;
		}
	return at;
}

static uint64_t
ninconsistent(struct order *o)
{
	struct order_stats st;

	order_stats(o, &st);
	return st.inconsistent;
}

/*
 * VISTOP's Fig. 3: A joins and leaves; B's broadcast reached A, so it
 * lies between them.  The broadcast's host delivers late.
 */
static void
deliver_fig3_bcast(struct order *o)
{
	static const int32_t to[] = { A };

	bcast(o, B, 1, 1, to);
}

static void
test_fig3_late_broadcast(void)
{
	struct order *o = grig();

	gcall(o, A, 1, PMON_CALL_joingroup, 0);
	gcall(o, A, 3, PMON_CALL_lvgroup, 0);
	/* The join waits for a round: a broadcast may still come. */
	CU_ASSERT_EQUAL(gpos(A, 2), -1);
	CU_ASSERT(order_wants_sync(o));
	round_with(o, deliver_fig3_bcast);
	CU_ASSERT(gpos(A, 2) >= 0 && gpos(B, 2) >= 0 && gpos(A, 4) >= 0);
	CU_ASSERT(gpos(A, 2) < gpos(B, 2));
	CU_ASSERT(gpos(B, 2) < gpos(A, 4));
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	CU_ASSERT(!order_wants_sync(o));
	order_free(o);
}

/* The broadcast first: it waits for the join it saw. */
static void
test_fig3_early_broadcast(void)
{
	static const int32_t to[] = { A };
	struct order *o = grig();

	bcast(o, B, 1, 1, to);
	CU_ASSERT_EQUAL(gpos(B, 1), 0);
	CU_ASSERT_EQUAL(gpos(B, 2), -1);	/* A is no member yet */
	gcall(o, A, 1, PMON_CALL_joingroup, 0);
	gcall(o, A, 3, PMON_CALL_lvgroup, 0);
	round_with(o, NULL);
	CU_ASSERT(gpos(A, 2) < gpos(B, 2));
	CU_ASSERT(gpos(B, 2) < gpos(A, 4));
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/*
 * A broadcast that did not reach A, who is a member: A's leave must come
 * first, even though it arrives last.
 */
static void
deliver_leave(struct order *o)
{
	gcall(o, A, 3, PMON_CALL_lvgroup, 0);
}

static void
test_broadcast_after_leave(void)
{
	struct order *o = grig();

	gcall(o, A, 1, PMON_CALL_joingroup, 0);
	round_with(o, NULL);
	CU_ASSERT(gpos(A, 2) >= 0);
	bcast(o, B, 1, 0, NULL);
	CU_ASSERT_EQUAL(gpos(B, 2), -1);
	round_with(o, deliver_leave);
	/* The leave came during the round: it needs one of its own. */
	CU_ASSERT_EQUAL(gpos(B, 2), -1);
	CU_ASSERT(order_wants_sync(o));
	round_with(o, NULL);
	CU_ASSERT(gpos(A, 4) >= 0 && gpos(A, 4) < gpos(B, 2));
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/*
 * A join that would make a held broadcast impossible waits for it: the
 * broadcast did not reach C, so C's join comes after it.
 */
static void
test_join_waits_for_broadcast(void)
{
	static const int32_t to[] = { A };
	struct order *o = grig();

	gcall(o, A, 1, PMON_CALL_joingroup, 0);
	gcall(o, C, 1, PMON_CALL_joingroup, 1);
	bcast(o, B, 1, 1, to);
	round_with(o, NULL);
	CU_ASSERT(gpos(A, 2) < gpos(B, 2));
	CU_ASSERT(gpos(B, 2) < gpos(C, 2));
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/* gsize: the size it returned must be the modelled one. */
static void
test_gsize(void)
{
	struct order *o = grig();

	gcall(o, B, 1, PMON_CALL_gsize, 2);
	CU_ASSERT_EQUAL(gpos(B, 2), -1);
	gcall(o, A, 1, PMON_CALL_joingroup, 0);
	gcall(o, C, 1, PMON_CALL_joingroup, 1);
	gcall(o, C, 3, PMON_CALL_lvgroup, 0);
	round_with(o, NULL);
	CU_ASSERT(gpos(A, 2) < gpos(B, 2));
	CU_ASSERT(gpos(C, 2) < gpos(B, 2));
	CU_ASSERT(gpos(B, 2) < gpos(C, 4));
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/*
 * A join that moves away from a held gsize, where the gsize waits for a
 * message the joining task sends after its join: the join must go.
 */
static void
test_join_needed_by_held(void)
{
	struct rspec snd = { PMON_CALL_send, PMON_BEGIN, 0, B, 7, -1, NULL, 0,
	    NULL, 0 };
	struct rspec snd_end = { PMON_CALL_send, PMON_END, 0, B, 7, -1, NULL,
	    0, NULL, 0 };
	struct rspec rcv = { PMON_CALL_recv, PMON_END, 4, A, 7, -1, NULL, 0,
	    NULL, 0 };
	struct order *o = grig();

	gcall(o, C, 1, PMON_CALL_joingroup, 0);
	round_with(o, NULL);
	gcall(o, A, 1, PMON_CALL_joingroup, 1);
	gadd(o, A, 3, &snd);
	gadd(o, A, 4, &snd_end);
	gadd(o, B, 1, &rcv);
	gcall(o, B, 2, PMON_CALL_gsize, 1);
	gcall(o, C, 3, PMON_CALL_lvgroup, 0);
	round_with(o, NULL);
	CU_ASSERT(gpos(A, 2) >= 0 && gpos(A, 2) < gpos(B, 1));
	CU_ASSERT(gpos(C, 4) >= 0 && gpos(C, 4) < gpos(B, 3));
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/* No member leaves a barrier before every member has entered. */
static void
test_barrier(void)
{
	struct rspec in = { PMON_CALL_barrier, PMON_BEGIN, 0, 0, -1, 2, "g",
	    0, NULL, 0 };
	struct rspec out = in;
	struct order *o = grig();

	out.phase = PMON_END;
	gadd(o, A, 1, &in);
	gadd(o, A, 2, &out);
	gadd(o, A, 3, &in);
	gadd(o, A, 4, &out);
	CU_ASSERT_EQUAL(gpos(A, 1), 0);
	CU_ASSERT_EQUAL(gpos(A, 2), -1);
	gadd(o, B, 1, &in);
	CU_ASSERT(gpos(A, 2) > gpos(B, 1));
	CU_ASSERT_EQUAL(gpos(A, 4), -1);	/* second episode */
	gadd(o, B, 2, &out);
	gadd(o, B, 3, &in);
	CU_ASSERT(gpos(A, 4) > gpos(B, 3));
	gadd(o, B, 4, &out);
	CU_ASSERT_EQUAL(ngout, 8);
	order_free(o);
}

/* A broadcast no event in the window can explain, after a round. */
static void
test_hopeless_broadcast(void)
{
	static const int32_t to[] = { A };
	struct order *o = grig();

	bcast(o, B, 1, 1, to);
	CU_ASSERT_EQUAL(order_wants_sync(o), ORDER_SYNC_LATER);
	/* A's join may still be recorded late: one round is not enough. */
	round_with(o, NULL);
	CU_ASSERT_EQUAL(gpos(B, 2), -1);
	CU_ASSERT_EQUAL(order_wants_sync(o), ORDER_SYNC_LATER);
	round_with(o, NULL);
	CU_ASSERT(!order_wants_sync(o));
	CU_ASSERT(gpos(B, 2) >= 0);
	CU_ASSERT(gouts[gpos(B, 2)].flags & EVENT_INCONSISTENT);
	CU_ASSERT_EQUAL(ninconsistent(o), 1);
	order_free(o);
}

/* A notify of PvmTaskExit comes after the exit it reports. */
static void
test_notify_after_exit(void)
{
	static const int32_t watched[] = { C };
	struct rspec nb = { PMON_CALL_notify, PMON_BEGIN, 0, C, 99, 1, NULL,
	    1, watched, 0 };
	struct rspec ne = { PMON_CALL_notify, PMON_END, 0, C, 99, 1, NULL,
	    0, NULL, 0 };
	struct rspec rcv = { PMON_CALL_recv, PMON_END, 4, PVMD, 99, -1, NULL,
	    0, NULL, 0 };
	struct rspec mt = { PMON_CALL_mytid, PMON_BEGIN, 0, 0, -1, -1, NULL,
	    0, NULL, 0 };
	struct order *o = grig();
	const char *why;

	gadd(o, A, 1, &nb);
	gadd(o, A, 2, &ne);
	gadd(o, A, 3, &rcv);
	CU_ASSERT_EQUAL(gpos(A, 3), -1);
	gadd(o, C, 1, &mt);
	CU_ASSERT_EQUAL(gpos(A, 3), -1);
	CU_ASSERT_EQUAL(order_task_end(o, C, 0, &why), 0);
	CU_ASSERT(gpos(A, 3) > gpos(C, 1));
	order_free(o);
}

/* With a clock, a receive is never before its send in corrected time. */
/*
 * The group server, pvmgs: its records say in which order it took the
 * requests, and group calls flagged RECORD_GS are released in that order.
 */
#define S	0x40009

static struct order *
srig(void)
{
	struct order *o = grig();
	const char *why;

	CU_ASSERT_EQUAL(order_task_new(o, S, 1, 0, 0, &why), 0);
	CU_ASSERT_EQUAL(order_group_server(o, S, &why), 0);
	return o;
}

/* The server took request code req from client. */
static void
served(struct order *o, uint64_t seq, int32_t client, int32_t req)
{
	uint8_t buf[RECORD_MAX_SIZE];
	struct record r;
	const char *why;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_recv;
	r.phase = PMON_END;
	r.seq = seq;
	r.t_ns = 1000 * seq;
	r.rc = 1;
	r.peer = client;
	r.tag = req;
	r.ctx = PMON_GS_CTX;
	r.bytes = 16;
	r.inst = -1;
	r.flags = RECORD_MSG | RECORD_GS;
	n = record_encode(buf, &r, NULL);
	CU_ASSERT_EQUAL_FATAL(record_decode(buf, n, &r, &why), 0);
	CU_ASSERT_EQUAL(order_add(o, S, &r, &why), 0);
}

/* A group call on "g" that sent its request to the server. */
static void
gs_call(struct order *o, int32_t tid, uint64_t seq, int call, int32_t rc,
    unsigned npeers, const int32_t *peers)
{
	struct rspec s = { call, PMON_BEGIN, 0, 0, -1, -1, "g", 0, NULL, 0 };

	if (call == PMON_CALL_bcast)
		s.tag = 5;
	gadd(o, tid, seq, &s);
	s.phase = PMON_END;
	s.rc = rc;
	s.npeers = npeers;
	s.peers = peers;
	gadd_flags(o, tid, seq + 1, &s, RECORD_GS);
}

/*
 * A member leaves and joins again while B broadcasts to it: the state
 * allows the broadcast before the leave and after the join.  Only the
 * server knows; both of its orders are followed.
 */
static void
server_rejoin(int bcast_first)
{
	static const int32_t to[] = { A };
	struct order *o = srig();

	gs_call(o, A, 1, PMON_CALL_joingroup, 0, 0, NULL);
	served(o, 1, A, PMON_GS_JOIN);
	CU_ASSERT(gpos(A, 2) >= 0);
	gs_call(o, A, 3, PMON_CALL_lvgroup, 0, 0, NULL);
	gs_call(o, A, 5, PMON_CALL_joingroup, 0, 0, NULL);
	gs_call(o, B, 1, PMON_CALL_bcast, 0, 1, to);
	/* Nothing is known of their order yet. */
	CU_ASSERT_EQUAL(gpos(A, 4), -1);
	CU_ASSERT_EQUAL(gpos(B, 2), -1);
	CU_ASSERT_EQUAL(order_wants_sync(o), ORDER_SYNC_SOON);
	if (bcast_first)
		served(o, 2, B, PMON_GS_BCAST);
	served(o, 3, A, PMON_GS_LEAVE);
	served(o, 4, A, PMON_GS_JOIN);
	if (!bcast_first)
		served(o, 5, B, PMON_GS_BCAST);
	CU_ASSERT(gpos(A, 4) >= 0 && gpos(A, 6) >= 0 && gpos(B, 2) >= 0);
	if (bcast_first) {
		CU_ASSERT(gpos(B, 2) < gpos(A, 4));
	} else {
		CU_ASSERT(gpos(A, 6) < gpos(B, 2));
	}
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	CU_ASSERT_EQUAL(order_wants_sync(o), 0);
	order_free(o);
}

static void
test_server_bcast_first(void)
{
	server_rejoin(1);
}

static void
test_server_bcast_last(void)
{
	server_rejoin(0);
}

/*
 * The server took C's join, but C's call never comes (C is not
 * monitored): once a round moves nothing, it is given up and B's
 * broadcast, taken after it, goes.
 */
static void
test_server_gives_up(void)
{
	struct order *o = srig();

	served(o, 1, C, PMON_GS_JOIN);
	gs_call(o, B, 1, PMON_CALL_bcast, 0, 0, NULL);
	served(o, 2, B, PMON_GS_BCAST);
	round_with(o, NULL);
	CU_ASSERT_EQUAL(gpos(B, 2), -1);
	round_with(o, NULL);
	CU_ASSERT(gpos(B, 2) >= 0);
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/*
 * The server took B's broadcast (A a member), then A's leave, but B is
 * slow to end its call (a busy CPU, or a debugger stopped it): rounds
 * that move nothing do not give its request up while B is inside the
 * call, so the leave waits and the broadcast goes first, consistent.
 */
static void
test_server_call_slow(void)
{
	static const int32_t to[] = { A };
	struct rspec s = { PMON_CALL_bcast, PMON_BEGIN, 0, 0, 5, -1, "g", 0,
	    NULL, 0 };
	struct order *o = srig();
	int i;

	gs_call(o, A, 1, PMON_CALL_joingroup, 0, 0, NULL);
	served(o, 1, A, PMON_GS_JOIN);
	gadd(o, B, 1, &s);
	served(o, 2, B, PMON_GS_BCAST);
	gs_call(o, A, 3, PMON_CALL_lvgroup, 0, 0, NULL);
	served(o, 3, A, PMON_GS_LEAVE);
	for (i = 0; i < 3 * ORDER_PATIENCE_ROUNDS; i++)
		round_with(o, NULL);
	CU_ASSERT_EQUAL(gpos(A, 4), -1);
	s.phase = PMON_END;
	s.npeers = 1;
	s.peers = to;
	gadd_flags(o, B, 2, &s, RECORD_GS);
	CU_ASSERT(gpos(B, 2) >= 0 && gpos(B, 2) < gpos(A, 4));
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/*
 * A join whose request the server's records never show (they were lost):
 * after PATIENCE_ROUNDS rounds it is ordered by the heuristics.
 */
static void
test_server_record_missing(void)
{
	struct order *o = srig();
	int i;

	gs_call(o, A, 1, PMON_CALL_joingroup, 0, 0, NULL);
	round_with(o, NULL);
	CU_ASSERT_EQUAL(gpos(A, 2), -1);
	CU_ASSERT_EQUAL(order_wants_sync(o), ORDER_SYNC_SOON);
	for (i = 0; i < 6 && gpos(A, 2) == -1; i++)
		round_with(o, NULL);
	CU_ASSERT(gpos(A, 2) >= 0);
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

static void
test_corrected_receive(void)
{
	struct rspec snd = { PMON_CALL_send, PMON_BEGIN, 0, C, 7, -1, NULL, 0,
	    NULL, 5000000 };
	struct rspec snd_end = { PMON_CALL_send, PMON_END, 0, C, 7, -1, NULL,
	    0, NULL, 5001000 };
	struct rspec rcv = { PMON_CALL_recv, PMON_END, 4, A, 7, -1, NULL, 0,
	    NULL, 1000000 };
	struct clock_params cp;
	struct clock *clk;
	struct order *o;
	const char *why;

	clock_params_default(&cp);
	cp.algo = CLOCK_LAMPORT;
	CU_ASSERT_PTR_NOT_NULL_FATAL(clk = clock_new(&cp));
	ngout = 0;
	o = order_new(gcollect, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o);
	order_set_clock(o, clk);
	CU_ASSERT_EQUAL(order_task_new(o, A, 1, 0, 0, &why), 0);
	CU_ASSERT_EQUAL(order_task_new(o, C, 2, 0, 0, &why), 0);
	/* C's clock is 4 ms behind A's: its receive looks early. */
	gadd(o, C, 1, &rcv);
	gadd(o, A, 1, &snd);
	gadd(o, A, 2, &snd_end);
	CU_ASSERT_EQUAL(ngout, 3);
	CU_ASSERT(gouts[gpos(C, 1)].t_corr >=
	    gouts[gpos(A, 1)].t_corr + cp.lmin_ns);
	CU_ASSERT_EQUAL(gouts[gpos(A, 1)].t_corr, 5000000);
	order_free(o);
	clock_free(clk);
}

/*
 * Reduces that every member entered and left are forgotten: the order
 * keeps the instances still in use, not one per call of the run.
 */
static void
test_collectives_forgotten(void)
{
	struct rspec in = { PMON_CALL_reduce, PMON_BEGIN, 0, 0, -1, 0, "g",
	    0, NULL, 0 };
	struct rspec out = in;
	struct order_stats st;
	struct order *o = grig();
	uint64_t k;

	out.phase = PMON_END;
	gcall(o, A, 1, PMON_CALL_joingroup, 0);
	gcall(o, B, 1, PMON_CALL_joingroup, 1);
	round_with(o, NULL);
	CU_ASSERT_EQUAL(ngout, 4);
	for (k = 0; k < 1000; k++) {
		gadd(o, A, 3 + 2 * k, &in);
		gadd(o, A, 4 + 2 * k, &out);	/* the root waits for B */
		CU_ASSERT_EQUAL(gpos(A, 4 + 2 * k), -1);
		gadd(o, B, 3 + 2 * k, &in);
		gadd(o, B, 4 + 2 * k, &out);
		CU_ASSERT(gpos(A, 4 + 2 * k) > gpos(B, 3 + 2 * k));
	}
	CU_ASSERT_EQUAL(ngout, 4004);
	order_stats(o, &st);
	CU_ASSERT_EQUAL(st.kept, 0);
	CU_ASSERT_EQUAL(ninconsistent(o), 0);
	order_free(o);
}

/*
 * A member lost records: its barrier entries cannot be counted, so the
 * others' exits no longer wait for them, and say so.
 */
static void
test_barrier_lossy(void)
{
	struct rspec in = { PMON_CALL_barrier, PMON_BEGIN, 0, 0, -1, -1, "g",
	    0, NULL, 0 };
	struct rspec out = in;
	struct order *o = grig();

	out.phase = PMON_END;
	gcall(o, A, 1, PMON_CALL_joingroup, 0);
	gcall(o, B, 1, PMON_CALL_joingroup, 1);
	round_with(o, NULL);
	gadd(o, B, 3, &in);
	gadd(o, B, 4, &out);
	CU_ASSERT_EQUAL(gpos(B, 4), -1);	/* waits for A's entry */
	gadd(o, A, 6, &in);			/* 3 to 5 lost */
	CU_ASSERT(gpos(B, 4) >= 0);
	CU_ASSERT(gouts[gpos(B, 4)].flags & EVENT_INCONSISTENT);
	order_free(o);
}

static CU_TestInfo group_tests[] = {
	{ "Fig. 3, broadcast arrives late", test_fig3_late_broadcast },
	{ "Fig. 3, broadcast arrives early", test_fig3_early_broadcast },
	{ "broadcast after a leave", test_broadcast_after_leave },
	{ "join waits for a broadcast", test_join_waits_for_broadcast },
	{ "gsize", test_gsize },
	{ "join a held gsize depends on", test_join_needed_by_held },
	{ "barrier episodes", test_barrier },
	{ "collectives are forgotten", test_collectives_forgotten },
	{ "a barrier after lost records", test_barrier_lossy },
	{ "hopeless broadcast", test_hopeless_broadcast },
	{ "notify after exit", test_notify_after_exit },
	{ "corrected receive", test_corrected_receive },
	{ "server order, broadcast first", test_server_bcast_first },
	{ "server order, broadcast last", test_server_bcast_last },
	{ "server order, a call gone", test_server_gives_up },
	{ "server order, a call slow to end", test_server_call_slow },
	{ "server order, a request unseen", test_server_record_missing },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo group_suites[] = {
	{ "groups", NULL, NULL, NULL, NULL, group_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(group_suites)
