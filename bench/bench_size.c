/*
 * bench_size: bytes per event the agents ship for a trace shaped like
 * NAS SP's (002 §2.2, §5.2), in both time encodings (BENCHMARKS.md,
 * "make bench-size").
 *
 *	bench_size [-s steps] [-H hosts] [-T tasks-per-host] [-l level]
 *	    [-y drains-per-sync]
 *
 * 16 tasks (4 hosts x 4 by default) on a 4 x 4 torus.  Each time step a
 * task exchanges with its four neighbours, then sweeps in x, y and z
 * (three stages forward, three back, as SP's multipartition does with
 * 16 processes), computing in between; every message is pvm_initsend,
 * pvm_pkdouble and pvm_send on one side, pvm_recv and pvm_upkdouble on
 * the other, each call a begin and an end record.  Times come from a
 * simulated clock with jitter on every call and computation (uniform,
 * +-20 % on calls, +-5 % on computations, receive waits of 1-40 us).
 *
 * The records go through the agent's own code: written into real rings
 * with ring_write, drained and packed by agent_ring_drain_packed every
 * 20 ms of simulated time (AGENT_DRAIN_MS), deflated by agent_output
 * with a sync flush after each (-y 1: the default live interval, 20 ms;
 * -y 5: 100 ms), one agent and one
 * stream per host.  The last line is
 *	size compact_B_per_event=X exact_B_per_event=Y
 * where an event is one record (a call is two).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "agent.h"
#include "pack.h"
#include "record.h"
#include "ring.h"

#define SIDE		4		/* the torus: SIDE x SIDE tasks */
#define NTASKS		(SIDE * SIDE)
#define STEP_DRAIN	10		/* steps between drains (~20 ms) */

struct task {
	struct ring		 ring;
	struct pack_state	 ps;
	int32_t			 tid;
	int			 x, y;
	uint64_t		 t;		/* simulated CLOCK_REALTIME */
	uint64_t		 seq;
	uint64_t		 rng;
	int			 rbuf;		/* receive buffer ids alternate */
};

static struct task	 tasks[NTASKS];
static int		 drain_sync = 1;
static uint64_t		 nrecords;

static uint64_t
rnd(struct task *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng;
}

/* ns with +-pct % of uniform jitter. */
static uint64_t
jitter(struct task *t, uint64_t ns, unsigned pct)
{
	uint64_t span = ns * pct / 100;

	return ns - span + rnd(t) % (2 * span + 1);
}

static void
put(struct task *t, unsigned call, unsigned phase, int32_t peer,
    int32_t tag, int32_t bytes, int32_t rc, uint8_t flags)
{
	uint8_t buf[RECORD_HDR_SIZE];
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = (uint8_t)call;
	r.phase = (uint8_t)phase;
	r.seq = ++t->seq;
	r.t_ns = t->t;
	r.peer = peer;
	r.tag = tag;
	r.bytes = bytes;
	r.rc = rc;
	r.inst = -1;
	r.flags = flags;
	if (ring_write(&t->ring, buf, record_encode(buf, &r, NULL)) == -1)
		errx(1, "ring full: drain more often");
	nrecords++;
}

/* One call: its begin, dur ns, its end. */
static void
call(struct task *t, unsigned c, int32_t peer, int32_t tag, int32_t bytes,
    int32_t rc, uint8_t flags, uint64_t dur)
{
	put(t, c, PMON_BEGIN, peer, tag, c == PMON_CALL_recv ? 0 : bytes, 0,
	    0);
	t->t += dur;
	put(t, c, PMON_END, peer, tag, bytes, rc, flags);
	t->t += jitter(t, 150, 20);		/* back in the program */
}

static void
send_msg(struct task *t, int32_t to, int32_t tag, int32_t bytes)
{
	call(t, PMON_CALL_initsend, -1, -1, 0, 1, 0, jitter(t, 400, 20));
	call(t, PMON_CALL_pkdouble, -1, -1, bytes, 0, 0,
	    jitter(t, 100 + (uint64_t)bytes / 8, 20));
	call(t, PMON_CALL_send, to, tag, bytes, 0, 0, jitter(t, 6000, 20));
}

static void
recv_msg(struct task *t, int32_t from, int32_t tag, int32_t bytes)
{
	t->rbuf = t->rbuf == 2 ? 3 : 2;
	call(t, PMON_CALL_recv, from, tag, bytes, t->rbuf, RECORD_MSG,
	    1000 + rnd(t) % 39000);
	call(t, PMON_CALL_upkdouble, -1, -1, bytes, 0, 0,
	    jitter(t, 100 + (uint64_t)bytes / 8, 20));
}

static int32_t
tid_at(int x, int y)
{
	x = (x + SIDE) % SIDE;
	y = (y + SIDE) % SIDE;
	return tasks[y * SIDE + x].tid;
}

/* A sweep along (dx, dy): three stages forward, three back. */
static void
sweep(struct task *t, int dx, int dy, int32_t tag)
{
	int32_t fwd = tid_at(t->x + dx, t->y + dy);
	int32_t back = tid_at(t->x - dx, t->y - dy);
	int s;

	for (s = 0; s < SIDE - 1; s++) {
		t->t += jitter(t, 60000, 5);
		send_msg(t, fwd, tag + s, 4000);
		recv_msg(t, back, tag + s, 4000);
	}
	for (s = 0; s < SIDE - 1; s++) {
		t->t += jitter(t, 60000, 5);
		send_msg(t, back, tag + 10 + s, 4000);
		recv_msg(t, fwd, tag + 10 + s, 4000);
	}
}

static void
step(struct task *t)
{
	static const int d[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 },
	    { 0, -1 } };
	int i;

	for (i = 0; i < 4; i++)
		send_msg(t, tid_at(t->x + d[i][0], t->y + d[i][1]), 10 + i,
		    12000);
	for (i = 0; i < 4; i++)
		recv_msg(t, tid_at(t->x - d[i][0], t->y - d[i][1]), 10 + i,
		    12000);
	t->t += jitter(t, 300000, 5);
	sweep(t, 1, 0, 100);
	sweep(t, 0, 1, 200);
	sweep(t, 1, 1, 300);
}

/* The wire: only counted. */
struct host {
	struct agent		 a;
	struct evbuffer		*wire;
	uint64_t		 wire_bytes;
};

static void
host_ship(struct host *h, int sync)
{
	if (sync)
		agent_output_sync(&h->a);
	else
		agent_output(&h->a);
	h->wire_bytes += evbuffer_get_length(h->wire);
	evbuffer_drain(h->wire, evbuffer_get_length(h->wire));
}

static void
host_drain(struct host *h, int first, int n, int mode)
{
	struct agent_packer pk;
	const char *why;
	int i;

	for (i = first; i < first + n; i++) {
		pk.buf = h->a.pack;
		pk.tbuf = h->a.packt;
		pk.ps = &tasks[i].ps;
		pk.mode = mode;
		pk.records = 0;
		if (agent_ring_drain_packed(&tasks[i].ring, tasks[i].tid,
		    h->a.out, h->a.batch, AGENT_BATCH, &pk, SIZE_MAX, NULL,
		    &why) == -1)
			errx(1, "drain: %s", why);
		h->a.nrecords += pk.records;
	}
}

struct result {
	uint64_t	 records;
	uint64_t	 plain;		/* packed frames before deflate */
	uint64_t	 wire;		/* ZDATA bytes */
	double		 secs;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
run(int mode, int nsteps, int nhosts, int per_host, int level,
    struct result *res)
{
	struct event_base *base = event_base_new();
	struct host *hosts = calloc((size_t)nhosts, sizeof(*hosts));
	double t0 = now();
	int i, s, hn, drains = 0;

	if (base == NULL || hosts == NULL)
		errx(1, "out of memory");
	nrecords = 0;
	for (i = 0; i < NTASKS; i++) {
		memset(&tasks[i], 0, sizeof(tasks[i]));
		if (ring_create(&tasks[i].ring, 4U << 20) == -1)
			err(1, "ring_create");
		tasks[i].tid = 0x40001 + (i / per_host) * 0x40000 + i;
		tasks[i].x = i % SIDE;
		tasks[i].y = i / SIDE;
		tasks[i].t = 1700000000000000000ULL + (uint64_t)i * 1000;
		tasks[i].rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		pack_state_init(&tasks[i].ps);
	}
	for (hn = 0; hn < nhosts; hn++) {
		if (agent_init(&hosts[hn].a, base) == -1 ||
		    (hosts[hn].wire = evbuffer_new()) == NULL)
			errx(1, "agent_init");
		hosts[hn].a.wire = hosts[hn].wire;
		hosts[hn].a.zs_on = 1;
		hosts[hn].a.live_ms = 1000000;	/* syncs: simulated time */
		if (level != ZS_LEVEL) {
			zs_out_end(&hosts[hn].a.zs);
			if (zs_out_init(&hosts[hn].a.zs, level) == -1)
				errx(1, "zs_out_init");
		}
	}
	for (s = 1; s <= nsteps; s++) {
		for (i = 0; i < NTASKS; i++)
			step(&tasks[i]);
		if (s % STEP_DRAIN != 0 && s != nsteps)
			continue;
		drains++;
		for (hn = 0; hn < nhosts; hn++) {
			host_drain(&hosts[hn], hn * per_host, per_host, mode);
			host_ship(&hosts[hn], drains % drain_sync == 0 ||
			    s == nsteps);
		}
	}
	memset(res, 0, sizeof(*res));
	for (hn = 0; hn < nhosts; hn++) {
		res->records += hosts[hn].a.nrecords;
		res->plain += hosts[hn].a.zs.plain;
		res->wire += hosts[hn].wire_bytes;
		evbuffer_free(hosts[hn].wire);
		hosts[hn].a.wire = NULL;
		agent_free(&hosts[hn].a);
	}
	if (res->records != nrecords)
		errx(1, "%llu records written, %llu shipped",
		    (unsigned long long)nrecords,
		    (unsigned long long)res->records);
	for (i = 0; i < NTASKS; i++)
		ring_close(&tasks[i].ring);
	free(hosts);
	event_base_free(base);
	res->secs = now() - t0;
}

static void
report(const char *name, const struct result *r)
{
	printf("%-8s %llu records: %llu B ring encoding, %llu B packed "
	    "(%.2f B/record), %llu B compressed: %.4f B/record, "
	    "%.4f B/call (%.1f s)\n", name,
	    (unsigned long long)r->records,
	    (unsigned long long)r->records * RECORD_HDR_SIZE,
	    (unsigned long long)r->plain,
	    (double)r->plain / (double)r->records,
	    (unsigned long long)r->wire,
	    (double)r->wire / (double)r->records,
	    2 * (double)r->wire / (double)r->records, r->secs);
}

int
main(int argc, char *argv[])
{
	struct result ex, co;
	int ch, nsteps = 10000, nhosts = 4, per_host = 4, level = ZS_LEVEL;

	while ((ch = getopt(argc, argv, "H:l:s:T:y:")) != -1) {
		switch (ch) {
		case 'y':
			drain_sync = atoi(optarg);
			break;
		case 'H':
			nhosts = atoi(optarg);
			break;
		case 'l':
			level = atoi(optarg);
			break;
		case 's':
			nsteps = atoi(optarg);
			break;
		case 'T':
			per_host = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_size [-s steps] "
			    "[-H hosts] [-T tasks-per-host] [-l level] "
			    "[-y drains-per-sync]\n");
			return 2;
		}
	}
	if (nhosts * per_host != NTASKS || nsteps < 1 || level < 1 ||
	    level > 9 || drain_sync < 1)
		errx(2, "hosts x tasks per host must be %d, steps >= 1, "
		    "level 1-9", NTASKS);
	printf("bench_size: NAS SP shape, %d tasks (%d hosts x %d), %d steps,"
	    " deflate level %d\n", NTASKS, nhosts, per_host, nsteps, level);
	run(PACK_TIME_EXACT, nsteps, nhosts, per_host, level, &ex);
	report("exact", &ex);
	run(PACK_TIME_COMPACT, nsteps, nhosts, per_host, level, &co);
	report("compact", &co);
	printf("size compact_B_per_event=%.4f exact_B_per_event=%.4f\n",
	    (double)co.wire / (double)co.records,
	    (double)ex.wire / (double)ex.records);
	return 0;
}
