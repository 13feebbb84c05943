/*
 * Protects the agent-to-coordinator data path: packed records unpack to
 * exactly what was packed (compact times within their bound), repeated
 * patterns pack to identical bytes, and the deflate stream gives back
 * the same frames however the network cuts it, or fails cleanly.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "agent.h"
#include "pack.h"
#include "proto.h"
#include "record.h"
#include "unit.h"
#include "wire.h"
#include "zstream.h"

#define NREC	64

static struct {
	struct record	 r[NREC];
	int32_t		 peers[NREC][4];
	uint8_t		 enc[NREC][RECORD_HDR_SIZE + 16 + 16];
} tc;

/* A mix: sends and receives, a group call, a multicast, seq skips, odd
 * times (zero, huge, backwards), extreme field values. */
static void
make_records(void)
{
	static const uint64_t dt[] = { 0, 1, 1000, 999, 0, 1ULL << 40,
	    3, 12345, 0, 7 };
	uint64_t t = 1700000000000000000ULL, seq = 1;
	struct record *r;
	unsigned i;

	memset(&tc, 0, sizeof(tc));
	for (i = 0; i < NREC; i++) {
		r = &tc.r[i];
		r->call = (uint8_t)(i % 3 == 0 ? PMON_CALL_send :
		    i % 3 == 1 ? PMON_CALL_recv : PMON_CALL_mcast);
		r->phase = (uint8_t)(i % 2);
		seq += i == 10 ? 1000 : i == 20 ? 1 : 1;
		r->seq = seq;
		t += dt[i % 10];
		r->t_ns = t;
		r->peer = 0x40001 + (int32_t)(i % 4);
		r->tag = (int32_t)(i % 5);
		r->ctx = i == 30 ? INT32_MIN : 0;
		r->bytes = i == 31 ? INT32_MAX : 4096;
		r->rc = i % 7 == 0 ? -2 : 0;
		r->inst = -1;
		r->flags = i % 3 == 1 && r->phase == PMON_END ? RECORD_MSG : 0;
		if (i % 9 == 4) {
			r->glen = 5;
			r->group = "grp_a";
			r->inst = (int32_t)i;
		}
		if (r->call == PMON_CALL_mcast && r->phase == PMON_BEGIN) {
			r->npeers = 3;
			tc.peers[i][0] = 0x40002;
			tc.peers[i][1] = i == 35 ? INT32_MIN : 0x80001;
			tc.peers[i][2] = INT32_MAX;
		}
		r->len = (uint16_t)record_size(r);
		record_encode(tc.enc[i], r, tc.peers[i]);
		CU_ASSERT_FATAL(record_decode(tc.enc[i], r->len, r, &(const
		    char *){ NULL }) == 0);
	}
	/* A clock that stepped back. */
	tc.r[40].t_ns = tc.r[39].t_ns - 5000;
	record_encode(tc.enc[40], &tc.r[40], tc.peers[40]);
	record_decode(tc.enc[40], tc.r[40].len, &tc.r[40], &(const char *){
	    NULL });
}

static uint8_t	tbuf[NREC * 16];

/* Packs all of tc.r: records into buf, their times into tbuf. */
static struct pack_out
pack_all(int mode, uint8_t *buf)
{
	struct pack_out po = { buf, 0, tbuf, 0 };
	struct pack_state ps;
	unsigned i;

	pack_state_init(&ps);
	for (i = 0; i < NREC; i++)
		pack_record(&ps, mode, &po, &tc.r[i]);
	return po;
}

static void
same_but_time(const struct record *a, const struct record *b)
{
	CU_ASSERT_EQUAL(a->call, b->call);
	CU_ASSERT_EQUAL(a->phase, b->phase);
	CU_ASSERT_EQUAL(a->seq, b->seq);
	CU_ASSERT_EQUAL(a->rc, b->rc);
	CU_ASSERT_EQUAL(a->peer, b->peer);
	CU_ASSERT_EQUAL(a->tag, b->tag);
	CU_ASSERT_EQUAL(a->ctx, b->ctx);
	CU_ASSERT_EQUAL(a->bytes, b->bytes);
	CU_ASSERT_EQUAL(a->inst, b->inst);
	CU_ASSERT_EQUAL(a->flags, b->flags);
	CU_ASSERT_EQUAL(a->len, b->len);
	CU_ASSERT_EQUAL(a->glen, b->glen);
	CU_ASSERT_EQUAL(a->npeers, b->npeers);
	if (a->glen == b->glen && a->glen > 0)
		CU_ASSERT(memcmp(a->group, b->group, a->glen) == 0);
	if (a->npeers == b->npeers && a->npeers > 0)
		CU_ASSERT(memcmp(a->peers, b->peers, 4 * a->npeers) == 0);
}

/* Exact: every field back, time included. */
static void
test_pack_exact(void)
{
	static uint8_t buf[NREC * 64], out[RECORD_MAX_SIZE],
	    enc[RECORD_MAX_SIZE];
	struct wire_reader rd, td;
	struct pack_state us;
	struct pack_out po;
	struct record r;
	const char *why = NULL;
	unsigned i;

	make_records();
	po = pack_all(PACK_TIME_EXACT, buf);
	wire_reader_init(&rd, po.rec, po.nrec);
	wire_reader_init(&td, po.time, po.ntime);
	pack_state_init(&us);
	for (i = 0; i < NREC; i++) {
		CU_ASSERT_FATAL(unpack_record(&us, PACK_TIME_EXACT, &rd, &td,
		    out, &r, &why) == 0);
		same_but_time(&r, &tc.r[i]);
		CU_ASSERT_EQUAL(r.t_ns, tc.r[i].t_ns);
		/* Encoded again, byte for byte the record that was packed. */
		CU_ASSERT_EQUAL(record_encode(enc, &r, NULL), r.len);
		CU_ASSERT(memcmp(enc, tc.enc[i], r.len) == 0);
	}
	CU_ASSERT_EQUAL(rd.off, po.nrec);
	CU_ASSERT_EQUAL(td.off, po.ntime);
}

/*
 * Compact: fields exact; the reconstructed time is never ahead of the
 * real one (while the clock goes forward), and its lag e obeys e_i < T
 * or 2 e_i < (t_i - t_{i-1}) + e_{i-1} + T (T the tick): the error
 * halves at each record and never accumulates.
 */
static void
test_pack_compact(void)
{
	static uint8_t buf[NREC * 64], out[RECORD_MAX_SIZE];
	struct wire_reader rd, td;
	struct pack_state us;
	struct pack_out po;
	struct record r;
	const char *why = NULL;
	const uint64_t tick = 1ULL << PACK_TICK_SHIFT;
	uint64_t e, prev_e = 0;
	unsigned i;

	make_records();
	po = pack_all(PACK_TIME_COMPACT, buf);
	CU_ASSERT_EQUAL(po.ntime, 9 + NREC - 1);	/* one byte a time */
	wire_reader_init(&rd, po.rec, po.nrec);
	wire_reader_init(&td, po.time, po.ntime);
	pack_state_init(&us);
	for (i = 0; i < NREC; i++) {
		CU_ASSERT_FATAL(unpack_record(&us, PACK_TIME_COMPACT, &rd,
		    &td, out, &r, &why) == 0);
		same_but_time(&r, &tc.r[i]);
		if (i == 0) {
			CU_ASSERT_EQUAL(r.t_ns, tc.r[0].t_ns);
			continue;
		}
		if (i == 40 || i == 41)	/* the clock stepped back */
			continue;
		CU_ASSERT_FATAL(r.t_ns <= tc.r[i].t_ns);
		e = tc.r[i].t_ns - r.t_ns;
		if (i > 41)
			CU_ASSERT(e < tick || 2 * e < tc.r[i].t_ns -
			    tc.r[i - 1].t_ns + prev_e + tick);
		prev_e = e;
	}
	CU_ASSERT_EQUAL(rd.off, po.nrec);
	CU_ASSERT_EQUAL(td.off, po.ntime);
}

/* A delta codes to the bits of its length; the advance never exceeds it. */
static void
test_pack_codes(void)
{
	int64_t d;

	CU_ASSERT_EQUAL(pack_time_code(0), 0);
	CU_ASSERT_EQUAL(pack_time_code(-5), 0);
	CU_ASSERT_EQUAL(pack_time_code(1), 1);
	CU_ASSERT_EQUAL(pack_code_advance(1), 1);
	CU_ASSERT_EQUAL(pack_time_code(1000), 10);
	CU_ASSERT_EQUAL(pack_code_advance(10), 512);
	CU_ASSERT_EQUAL(pack_time_code(INT64_MAX), 63);
	CU_ASSERT(pack_time_code(INT64_MAX >> PACK_TICK_SHIFT) <=
	    PACK_CODE_MAX);
	for (d = 1; d < (1LL << 40); d = d * 3 + 1) {
		CU_ASSERT(pack_code_advance(pack_time_code(d)) <= (uint64_t)d);
		CU_ASSERT(2 * pack_code_advance(pack_time_code(d)) >
		    (uint64_t)d);
	}
	CU_ASSERT_EQUAL(pack_time_lookup("compact"), PACK_TIME_COMPACT);
	CU_ASSERT_EQUAL(pack_time_lookup("exact"), PACK_TIME_EXACT);
	CU_ASSERT_EQUAL(pack_time_lookup("Exact"), -1);
}

/*
 * A pattern repeated packs to the same record bytes, whatever the times
 * (jittered here); the time codes take one of two values (the
 * self-correction moves between them).
 */
static void
test_pack_repeat(void)
{
	uint8_t one[3][512], times[3][16], enc[RECORD_HDR_SIZE];
	struct pack_state ps;
	struct pack_out po;
	struct record r;
	size_t n[3];
	uint64_t t = 1000000000, seq = 0;
	unsigned it, k;

	pack_state_init(&ps);
	for (it = 0; it < 3; it++) {
		po.rec = one[it];
		po.time = times[it];
		po.nrec = po.ntime = 0;
		for (k = 0; k < 6; k++) {
			memset(&r, 0, sizeof(r));
			r.call = k % 2 ? PMON_CALL_recv : PMON_CALL_send;
			r.phase = (uint8_t)(k / 2 % 2);
			r.seq = ++seq;
			/* jitter of a few percent on a 100 us rhythm */
			t += 100000 + (it * 7919 + k * 104729) % 3000;
			r.t_ns = t;
			r.peer = 0x40001 + (int32_t)(k % 3);
			r.tag = 7;
			r.bytes = 800;
			r.inst = -1;
			r.len = (uint16_t)record_encode(enc, &r, NULL);
			pack_record(&ps, PACK_TIME_COMPACT, &po, &r);
		}
		n[it] = po.nrec;
		if (it > 0)
			CU_ASSERT_EQUAL(po.ntime, 6);
		for (k = 0; it > 0 && k < 6; k++)
			CU_ASSERT(times[it][k] == 3 || times[it][k] == 4);
	}
	CU_ASSERT_EQUAL_FATAL(n[1], n[2]);
	CU_ASSERT(memcmp(one[1], one[2], n[1]) == 0);
	CU_ASSERT(n[2] <= 6 * 4);	/* at most 4 bytes a record */
}

/* Every prefix of a packed record, and garbage, fails cleanly. */
static void
test_pack_bad(void)
{
	static uint8_t buf[NREC * 64], out[RECORD_MAX_SIZE];
	struct wire_reader rd, td;
	struct pack_state us;
	struct pack_out po;
	struct record r;
	const char *why;
	size_t used, tused, k;
	uint8_t junk[16];

	make_records();
	po = pack_all(PACK_TIME_EXACT, buf);
	pack_state_init(&us);
	wire_reader_init(&rd, po.rec, po.nrec);
	wire_reader_init(&td, po.time, po.ntime);
	CU_ASSERT_FATAL(unpack_record(&us, PACK_TIME_EXACT, &rd, &td, out, &r,
	    &why) == 0);
	used = rd.off;
	tused = td.off;
	/* Every shorter record column, and every shorter time column. */
	for (k = 0; k < used + tused; k++) {
		pack_state_init(&us);
		wire_reader_init(&rd, po.rec, k < used ? k : used);
		wire_reader_init(&td, po.time, k < used ? tused : k - used);
		why = NULL;
		CU_ASSERT(unpack_record(&us, PACK_TIME_EXACT, &rd, &td, out,
		    &r, &why) == -1);
		CU_ASSERT(why != NULL);
	}
	/* A first record without its absolute time; an unknown call. */
	pack_state_init(&us);
	memcpy(junk, "\x04\x00\x00", 3);
	wire_reader_init(&rd, junk, 3);
	wire_reader_init(&td, junk, 3);
	CU_ASSERT(unpack_record(&us, PACK_TIME_EXACT, &rd, &td, out, &r,
	    &why) == -1);
	memset(junk, 0xff, sizeof(junk));
	wire_reader_init(&rd, junk, sizeof(junk));
	wire_reader_init(&td, junk, sizeof(junk));
	CU_ASSERT(unpack_record(&us, PACK_TIME_COMPACT, &rd, &td, out, &r,
	    &why) == -1);
}

/* Deflate stream: frames in, ZDATA out, frames back. */

static struct {
	uint8_t		 wire[1 << 20];	/* ZDATA payloads, back to back */
	size_t		 wlen;
	size_t		 nframes;	/* ZDATA frames */
	uint8_t		 plain[1 << 20];
	size_t		 plen;
	uint8_t		 got[1 << 20];
	size_t		 glen;
	int		 stop_after;	/* frames the callback takes; -1: all */
} tz;

static void
zt_emit(void *arg, const uint8_t *frame, size_t len)
{
	struct frame_hdr h;
	const char *why;

	(void)arg;
	CU_ASSERT_FATAL(frame_hdr_decode(frame, &h, &why) == 0);
	CU_ASSERT_EQUAL(h.type, MSG_ZDATA);
	CU_ASSERT_EQUAL(h.len, len - FRAME_HDR_SIZE);
	CU_ASSERT_FATAL(tz.wlen + h.len <= sizeof(tz.wire));
	memcpy(tz.wire + tz.wlen, frame + FRAME_HDR_SIZE, h.len);
	tz.wlen += h.len;
	tz.nframes++;
}

static int
zt_frame(void *arg, uint8_t type, const uint8_t *p, size_t len)
{
	(void)arg;
	if (tz.stop_after == 0)
		return -1;
	if (tz.stop_after > 0)
		tz.stop_after--;
	frame_hdr_encode(tz.got + tz.glen, type, (uint32_t)len);
	memcpy(tz.got + tz.glen + FRAME_HDR_SIZE, p, len);
	tz.glen += FRAME_HDR_SIZE + len;
	return 0;
}

/* Plain frames: FLUSH_DONEs and a few repetitive TASK_PACKED. */
static void
zt_frames(unsigned n)
{
	uint8_t *p;
	unsigned i, k;

	tz.plen = 0;
	for (i = 0; i < n; i++) {
		p = tz.plain + tz.plen;
		if (i % 4 == 0) {
			frame_hdr_encode(p, MSG_FLUSH_DONE, 4);
			wire_put32(p + FRAME_HDR_SIZE, i);
			tz.plen += FRAME_HDR_SIZE + 4;
			continue;
		}
		frame_hdr_encode(p, MSG_TASK_PACKED, 13 + 40);
		wire_put32(p + 8, 0x40001);
		p[12] = PACK_TIME_COMPACT;
		wire_put32(p + 13, 10);
		wire_put32(p + 17, 10);
		for (k = 0; k < 40; k++)
			p[21 + k] = (uint8_t)(k * 7 + (i % 3));
		tz.plen += FRAME_HDR_SIZE + 13 + 40;
	}
}

/* Deflates tz.plain in pieces, syncing now and then and at the end. */
static void
zt_deflate(int level)
{
	struct zs_out zo;
	size_t off, step;

	tz.wlen = tz.nframes = 0;
	CU_ASSERT_FATAL(zs_out_init(&zo, level) == 0);
	for (off = 0; off < tz.plen; off += step) {
		step = tz.plen - off < 57 ? tz.plen - off : 57;
		CU_ASSERT_FATAL(zs_out_write(&zo, tz.plain + off, step,
		    off % 570 == 0, zt_emit, NULL) == 0);
	}
	CU_ASSERT_FATAL(zs_out_write(&zo, NULL, 0, 1, zt_emit, NULL) == 0);
	CU_ASSERT_EQUAL(zo.since_sync, 0);
	CU_ASSERT_EQUAL(zo.plain, tz.plen);
	CU_ASSERT_EQUAL(zo.packed, tz.wlen + FRAME_HDR_SIZE * tz.nframes);
	/* An empty sync costs nothing. */
	CU_ASSERT_FATAL(zs_out_write(&zo, NULL, 0, 1, zt_emit, NULL) == 0);
	CU_ASSERT_EQUAL(zo.plain, tz.plen);
	zs_out_end(&zo);
}

/* The stream cut in two at every byte gives back the same frames. */
static void
test_z_split(void)
{
	struct zs_in zi;
	const char *why = NULL;
	size_t k;

	zt_frames(200);
	zt_deflate(ZS_LEVEL);
	CU_ASSERT(tz.wlen < tz.plen / 4);
	tz.stop_after = -1;
	for (k = 0; k <= tz.wlen; k++) {
		tz.glen = 0;
		CU_ASSERT_FATAL(zs_in_init(&zi) == 0);
		CU_ASSERT_EQUAL_FATAL(zs_in_feed(&zi, tz.wire, k, zt_frame,
		    NULL, &why), 0);
		CU_ASSERT_EQUAL_FATAL(zs_in_feed(&zi, tz.wire + k,
		    tz.wlen - k, zt_frame, NULL, &why), 0);
		CU_ASSERT_EQUAL_FATAL(tz.glen, tz.plen);
		CU_ASSERT_FATAL(memcmp(tz.got, tz.plain, tz.plen) == 0);
		CU_ASSERT_EQUAL(zi.len, 0);
		zs_in_end(&zi);
	}
}

/* Larger than one step of inflate and one ZDATA chunk: bounded memory. */
static void
test_z_large(void)
{
	struct zs_in zi;
	const char *why = NULL;
	uint8_t *p = tz.plain;

	/* One frame of the largest size, all zeros: a tiny stream. */
	memset(tz.plain, 0, FRAME_HDR_SIZE + PROTO_MAX_PAYLOAD / 2);
	frame_hdr_encode(p, MSG_TASK_PACKED, PROTO_MAX_PAYLOAD / 2);
	tz.plen = FRAME_HDR_SIZE + PROTO_MAX_PAYLOAD / 2;
	zt_deflate(ZS_LEVEL);
	CU_ASSERT(tz.wlen < tz.plen / 20);
	tz.glen = 0;
	tz.stop_after = -1;
	CU_ASSERT_FATAL(zs_in_init(&zi) == 0);
	CU_ASSERT_EQUAL(zs_in_feed(&zi, tz.wire, tz.wlen, zt_frame, NULL,
	    &why), 0);
	CU_ASSERT_EQUAL(tz.glen, tz.plen);
	CU_ASSERT(zi.cap <= FRAME_HDR_SIZE + PROTO_MAX_PAYLOAD + ZS_STEP);
	zs_in_end(&zi);
}

/* Corruption, a frame with a bad header, a nested ZDATA, a callback
 * that stops: each ends the feed the way the contract says. */
static void
test_z_bad(void)
{
	struct zs_in zi;
	const char *why;
	size_t k, bad = 0;

	zt_frames(50);
	zt_deflate(ZS_LEVEL);
	tz.stop_after = -1;
	for (k = 0; k < tz.wlen; k++) {
		tz.wire[k] ^= 0x55;
		CU_ASSERT_FATAL(zs_in_init(&zi) == 0);
		tz.glen = 0;
		why = NULL;
		if (zs_in_feed(&zi, tz.wire, tz.wlen, zt_frame, NULL, &why) ==
		    -1) {
			CU_ASSERT(why != NULL);
			bad++;
		}
		zs_in_end(&zi);
		tz.wire[k] ^= 0x55;
	}
	CU_ASSERT(bad > tz.wlen / 2);

	/* Plain bytes that are no frame. */
	memset(tz.plain, 0xee, 64);
	tz.plen = 64;
	zt_deflate(ZS_LEVEL);
	CU_ASSERT_FATAL(zs_in_init(&zi) == 0);
	CU_ASSERT_EQUAL(zs_in_feed(&zi, tz.wire, tz.wlen, zt_frame, NULL,
	    &why), -1);
	zs_in_end(&zi);

	/* ZDATA inside the stream. */
	frame_hdr_encode(tz.plain, MSG_ZDATA, 4);
	tz.plen = FRAME_HDR_SIZE + 4;
	zt_deflate(ZS_LEVEL);
	CU_ASSERT_FATAL(zs_in_init(&zi) == 0);
	CU_ASSERT_EQUAL(zs_in_feed(&zi, tz.wire, tz.wlen, zt_frame, NULL,
	    &why), -1);
	CU_ASSERT_STRING_EQUAL(why, "ZDATA inside the compressed stream");
	zs_in_end(&zi);

	/* The callback stops after two frames. */
	zt_frames(10);
	zt_deflate(ZS_LEVEL);
	CU_ASSERT_FATAL(zs_in_init(&zi) == 0);
	tz.glen = 0;
	tz.stop_after = 2;
	CU_ASSERT_EQUAL(zs_in_feed(&zi, tz.wire, tz.wlen, zt_frame, NULL,
	    &why), 1);
	zs_in_end(&zi);
}

/*
 * The agent's output: the hello plain, then frames that become readable
 * only at a flush point, and then all of them, in order.
 */
static void
test_agent_stream(void)
{
	struct event_base *base = event_base_new();
	struct evbuffer *wire = evbuffer_new();
	struct frame_hdr h;
	struct zs_in zi;
	struct agent a;
	const char *why;
	uint8_t *p;
	size_t n;

	CU_ASSERT_FATAL(base != NULL && wire != NULL);
	CU_ASSERT_FATAL(agent_init(&a, base) == 0);
	a.wire = wire;
	a.live_ms = UINT32_MAX;		/* no live interval here */
	agent_send_hello(&a);
	CU_ASSERT_EQUAL(a.zs_on, 1);
	p = evbuffer_pullup(wire, FRAME_HDR_SIZE);
	CU_ASSERT_FATAL(p != NULL && frame_hdr_decode(p, &h, &why) == 0);
	CU_ASSERT_EQUAL(h.type, MSG_AGENT_HELLO);
	evbuffer_drain(wire, FRAME_HDR_SIZE + h.len);

	/* Frames without a flush point: deflate keeps them. */
	zt_frames(40);
	evbuffer_add(a.out, tz.plain, tz.plen);
	agent_output(&a);
	CU_ASSERT_EQUAL(evbuffer_get_length(a.out), 0);
	CU_ASSERT_FATAL(zs_in_init(&zi) == 0);
	tz.glen = 0;
	tz.stop_after = -1;
	while (evbuffer_get_length(wire) >= FRAME_HDR_SIZE) {
		p = evbuffer_pullup(wire, FRAME_HDR_SIZE);
		CU_ASSERT_FATAL(frame_hdr_decode(p, &h, &why) == 0);
		CU_ASSERT_EQUAL_FATAL(h.type, MSG_ZDATA);
		p = evbuffer_pullup(wire, FRAME_HDR_SIZE + h.len);
		CU_ASSERT_EQUAL(zs_in_feed(&zi, p + FRAME_HDR_SIZE, h.len,
		    zt_frame, NULL, &why), 0);
		evbuffer_drain(wire, FRAME_HDR_SIZE + h.len);
	}
	CU_ASSERT(tz.glen < tz.plen);

	/* A flush point: everything, in order. */
	agent_output_sync(&a);
	n = 0;
	while (evbuffer_get_length(wire) >= FRAME_HDR_SIZE) {
		p = evbuffer_pullup(wire, FRAME_HDR_SIZE);
		CU_ASSERT_FATAL(frame_hdr_decode(p, &h, &why) == 0);
		CU_ASSERT_EQUAL_FATAL(h.type, MSG_ZDATA);
		p = evbuffer_pullup(wire, FRAME_HDR_SIZE + h.len);
		CU_ASSERT_EQUAL(zs_in_feed(&zi, p + FRAME_HDR_SIZE, h.len,
		    zt_frame, NULL, &why), 0);
		evbuffer_drain(wire, FRAME_HDR_SIZE + h.len);
		n++;
	}
	CU_ASSERT(n >= 1);
	CU_ASSERT_EQUAL_FATAL(tz.glen, tz.plen);
	CU_ASSERT(memcmp(tz.got, tz.plain, tz.plen) == 0);
	CU_ASSERT_EQUAL(a.zs.since_sync, 0);
	zs_in_end(&zi);
	a.wire = NULL;
	agent_free(&a);
	evbuffer_free(wire);
	event_base_free(base);
}

static CU_TestInfo pack_tests[] = {
	{ "exact round trip", test_pack_exact },
	{ "compact round trip and error bound", test_pack_compact },
	{ "compact codes", test_pack_codes },
	{ "repeated pattern, same bytes", test_pack_repeat },
	{ "truncated and bad input", test_pack_bad },
	CU_TEST_INFO_NULL
};

static CU_TestInfo zstream_tests[] = {
	{ "split at every byte", test_z_split },
	{ "large frame, bounded memory", test_z_large },
	{ "corrupt, bad frames, stop", test_z_bad },
	{ "agent: hello plain, frames at flush points", test_agent_stream },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo capture_suites[] = {
	{ "pack", NULL, NULL, NULL, NULL, pack_tests },
	{ "zstream", NULL, NULL, NULL, NULL, zstream_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(capture_suites)
