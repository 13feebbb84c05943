/*
 * Protects the codecs every part shares: the record encoding (task ring,
 * agent frames and coordinator all rely on it), the frame header checks
 * that stand between a daemon and an untrusted peer, the record ring
 * that lets an agent read a task's records without the task's help, and
 * the breakpoint table in the ring's control page that a task checks at
 * every call (doc/control.md), with its wire encoding.
 */
#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "log.h"
#include "proto.h"
#include "record.h"
#include "ring.h"
#include "unit.h"
#include "wire.h"

static struct record
sample_record(uint64_t seq)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_mcast;
	r.phase = PMON_BEGIN;
	r.seq = seq;
	r.t_ns = 1700000000123456789ULL + seq;
	r.rc = -7;
	r.peer = -1;
	r.tag = 22;
	r.ctx = 3;
	r.bytes = 412;
	r.inst = -1;
	r.group = "matrix";
	r.glen = 6;
	return r;
}

static void
test_record_roundtrip(void)
{
	static const int32_t peers[] = { 0x40001, 0x40002, -3, 0x7fffffff };
	uint8_t buf[RECORD_MAX_SIZE];
	struct record in = sample_record(42), out;
	const char *why = NULL;
	size_t n;

	in.npeers = 4;
	n = record_encode(buf, &in, peers);
	CU_ASSERT_EQUAL(n, RECORD_HDR_SIZE + 6 + 16);
	CU_ASSERT_EQUAL(record_decode(buf, n, &out, &why), 0);
	CU_ASSERT_EQUAL(out.len, n);
	CU_ASSERT_EQUAL(out.call, PMON_CALL_mcast);
	CU_ASSERT_EQUAL(out.seq, 42);
	CU_ASSERT_EQUAL(out.t_ns, in.t_ns);
	CU_ASSERT_EQUAL(out.rc, -7);
	CU_ASSERT_EQUAL(out.peer, -1);
	CU_ASSERT_EQUAL(out.tag, 22);
	CU_ASSERT_EQUAL(out.ctx, 3);
	CU_ASSERT_EQUAL(out.bytes, 412);
	CU_ASSERT_EQUAL(out.glen, 6);
	CU_ASSERT_NSTRING_EQUAL(out.group, "matrix", 6);
	CU_ASSERT_EQUAL(out.npeers, 4);
	CU_ASSERT_EQUAL(record_peer(&out, 0), 0x40001);
	CU_ASSERT_EQUAL(record_peer(&out, 2), -3);
	CU_ASSERT_EQUAL(record_peer(&out, 3), 0x7fffffff);
	/* The layout is the documented one: big-endian seq at offset 4. */
	CU_ASSERT_EQUAL(wire_get64(buf + 4), 42);
	CU_ASSERT_EQUAL(buf[2], PMON_CALL_mcast);
}

static void
test_record_rejects(void)
{
	uint8_t buf[RECORD_MAX_SIZE], bad[RECORD_MAX_SIZE];
	struct record in = sample_record(1), out;
	const char *why = NULL;
	size_t n;

	n = record_encode(buf, &in, NULL);
	CU_ASSERT_EQUAL(record_decode(buf, n - 1, &out, &why), -1);
	CU_ASSERT_EQUAL(record_decode(buf, 10, &out, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "truncated"));

	memcpy(bad, buf, n);
	bad[2] = PMON_CALL_MAX;			/* unknown call */
	CU_ASSERT_EQUAL(record_decode(bad, n, &out, &why), -1);
	memcpy(bad, buf, n);
	bad[3] = 2;				/* unknown phase */
	CU_ASSERT_EQUAL(record_decode(bad, n, &out, &why), -1);
	memcpy(bad, buf, n);
	wire_put64(bad + 4, 0);			/* seq 0 */
	CU_ASSERT_EQUAL(record_decode(bad, n, &out, &why), -1);
	memcpy(bad, buf, n);
	wire_put16(bad, (uint16_t)(n + 4));	/* len disagrees */
	CU_ASSERT_EQUAL(record_decode(bad, n + 4, &out, &why), -1);
	memcpy(bad, buf, n);
	wire_put16(bad + 44, RECORD_PEERS_MAX + 1);
	CU_ASSERT_EQUAL(record_decode(bad, sizeof(bad), &out, &why), -1);
	memcpy(bad, buf, n);
	bad[RECORD_HDR_SIZE + 2] = '\0';	/* NUL inside the group */
	CU_ASSERT_EQUAL(record_decode(bad, n, &out, &why), -1);
}

static void
test_call_names(void)
{
	CU_ASSERT_STRING_EQUAL(record_call_name(PMON_CALL_send), "pvm_send");
	CU_ASSERT_STRING_EQUAL(record_call_name(PMON_CALL_joingroup),
	    "pvm_joingroup");
	CU_ASSERT_STRING_EQUAL(record_call_name(PMON_CALL_LOST), "lost");
	CU_ASSERT_STRING_EQUAL(record_call_name(250), "unknown");
	CU_ASSERT_EQUAL(record_call_lookup("pvm_recv"), PMON_CALL_recv);
	CU_ASSERT_EQUAL(record_call_lookup("pvm_nosuch"), -1);
}

/*
 * Tables of tasks hash tids: PVM puts the host in bits 18 and up and the
 * task's number on its host in the low bits, so 64 hosts of 64 tasks
 * must spread over a table as well as random keys do (a hash that keeps
 * the low bits gave them 64 slots).
 */
static void
test_tid_hash_spreads_hosts(void)
{
	enum { SLOTS = 8192 };
	static int32_t slot[SLOTS];
	unsigned long probes = 0, most = 0, n;
	int32_t host, task;
	size_t i;

	memset(slot, 0, sizeof(slot));
	for (host = 1; host <= 64; host++)
		for (task = 1; task <= 64; task++) {
			int32_t tid = host << 18 | task;

			n = 1;
			for (i = record_tid_hash(tid) & (SLOTS - 1);
			    slot[i] != 0; i = (i + 1) & (SLOTS - 1))
				n++;
			slot[i] = tid;
			probes += n;
			most = n > most ? n : most;
		}
	/* Random keys at half load: about 1.5 probes, rarely over 20. */
	CU_ASSERT(probes <= 2 * 4096);
	CU_ASSERT(most <= 32);
}

static void
test_frame_header(void)
{
	struct frame_hdr h;
	const char *why = NULL;
	uint8_t b[FRAME_HDR_SIZE];

	frame_hdr_encode(b, MSG_FLUSH, 4);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), 0);
	CU_ASSERT_EQUAL(h.type, MSG_FLUSH);
	CU_ASSERT_EQUAL(h.len, 4);

	frame_hdr_encode(b, MSG_FLUSH, 5);	/* longer than FLUSH allows */
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "too long"));
	frame_hdr_encode(b, MSG_TASK_RECORDS, PROTO_MAX_PAYLOAD + 1);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	frame_hdr_encode(b, MSG_TASK_END, 3);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "too short"));

	frame_hdr_encode(b, MSG_FLUSH, 4);
	b[1] = PROTO_VERSION + 1;
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "version"));
	frame_hdr_encode(b, MSG_FLUSH, 4);
	b[0] = 'G';
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "magic"));
	frame_hdr_encode(b, 200, 4);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown message"));
	CU_ASSERT_STRING_EQUAL(proto_msg_name(MSG_TASK_RECORDS),
	    "TASK_RECORDS");
}

static void
test_wire_reader(void)
{
	uint8_t b[32], *p;
	struct wire_reader r;
	char s[8];

	wire_put32(b, 0xdeadbeef);
	p = wire_putstr(b + 4, "host1");
	wire_reader_init(&r, b, (size_t)(p - b));
	CU_ASSERT_EQUAL(wire_read32(&r), 0xdeadbeef);
	wire_readstr(&r, s, sizeof(s));
	CU_ASSERT_STRING_EQUAL(s, "host1");
	CU_ASSERT_EQUAL(r.err, 0);
	CU_ASSERT_EQUAL(r.off, r.len);
	wire_read8(&r);
	CU_ASSERT_EQUAL(r.err, 1);

	/* A string that does not fit is an error, not a truncation. */
	wire_reader_init(&r, b + 4, 7);
	wire_readstr(&r, s, 4);
	CU_ASSERT_EQUAL(r.err, 1);
	CU_ASSERT_STRING_EQUAL(s, "");
}

static size_t
encode_seq(uint8_t *buf, uint64_t seq, uint16_t npeers)
{
	static int32_t peers[RECORD_PEERS_MAX];
	struct record r = sample_record(seq);

	r.npeers = npeers;
	return record_encode(buf, &r, peers);
}

/* Write and read across the wrap point many times; nothing reordered. */
static void
test_ring_wraps_in_order(void)
{
	struct ring tx = { .fd = -1 }, rx = { .fd = -1 };
	uint8_t rec[RECORD_MAX_SIZE], out[RECORD_MAX_SIZE * 2];
	uint64_t next_write = 1, next_read = 1;
	const char *why = NULL;
	unsigned n, i, round;
	struct record r;
	ssize_t got;
	size_t off, len;

	CU_ASSERT_FATAL(ring_create(&tx, RING_MIN_SIZE) == 0);
	CU_ASSERT_FATAL(ring_attach(&rx, dup(tx.fd), &why) == 0);
	for (round = 0; round < 200; round++) {
		for (i = 0; i < 1 + round % 7; i++) {
			len = encode_seq(rec, next_write, round % 5);
			if (ring_write(&tx, rec, len) == 0)
				next_write++;
		}
		got = ring_read(&rx, out, sizeof(out), &n, &why);
		CU_ASSERT_FATAL(got >= 0);
		for (off = 0, i = 0; i < n; i++, off += r.len) {
			CU_ASSERT_FATAL(record_decode(out + off,
			    (size_t)got - off, &r, &why) == 0);
			CU_ASSERT_EQUAL(r.seq, next_read);
			next_read++;
		}
		CU_ASSERT_EQUAL(off, (size_t)got);
	}
	CU_ASSERT_EQUAL(next_read, next_write);
	CU_ASSERT(next_write > 500);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 0);
	ring_close(&rx);
	ring_close(&tx);
}

/* A full ring drops and counts; the writer never waits. */
static void
test_ring_full_drops(void)
{
	struct ring tx = { .fd = -1 };
	uint8_t rec[RECORD_MAX_SIZE];
	unsigned ok = 0, i;
	size_t len = encode_seq(rec, 1, 0);

	CU_ASSERT_FATAL(ring_create(&tx, RING_MIN_SIZE) == 0);
	for (i = 0; i < 1000; i++)
		if (ring_write(&tx, rec, len) == 0)
			ok++;
	CU_ASSERT_EQUAL(ok, RING_MIN_SIZE / len);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 1000 - ok);
	ring_close(&tx);
}

/* The agent does not trust the task's ring. */
static void
test_ring_attach_checks(void)
{
	struct ring tx = { .fd = -1 }, rx = { .fd = -1 };
	uint8_t rec[RECORD_MAX_SIZE], out[RECORD_MAX_SIZE];
	const char *why = NULL;
	unsigned n;
	int fd;

	fd = memfd_create("plain", 0);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT_EQUAL(ftruncate(fd, RING_HDR_SIZE + RING_MIN_SIZE), 0);
	CU_ASSERT_EQUAL(ring_attach(&rx, fd, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "sealed"));
	close(fd);

	CU_ASSERT_FATAL(ring_create(&tx, RING_MIN_SIZE) == 0);
	tx.hdr->size = RING_MIN_SIZE * 2;	/* lies about its size */
	CU_ASSERT_EQUAL(ring_attach(&rx, tx.fd, &why), -1);
	tx.hdr->size = RING_MIN_SIZE;

	CU_ASSERT_FATAL(ring_attach(&rx, dup(tx.fd), &why) == 0);
	ring_write(&tx, rec, encode_seq(rec, 1, 0));
	wire_put16(tx.data, 3);			/* impossible length */
	CU_ASSERT_EQUAL(ring_read(&rx, out, sizeof(out), &n, &why), -1);
	atomic_store(&tx.hdr->head, 1ULL << 40);	/* head out of range */
	CU_ASSERT_EQUAL(ring_read(&rx, out, sizeof(out), &n, &why), -1);
	ring_close(&rx);
	ring_close(&tx);
}

/*
 * Held reads: what was read stays until acknowledged, can be read again
 * after a rewind, takes the task's room meanwhile, and a corrupt length
 * frees what was read.
 */
static void
test_ring_hold(void)
{
	struct ring tx = { .fd = -1 }, rx = { .fd = -1 };
	uint8_t rec[RECORD_MAX_SIZE], out[RECORD_MAX_SIZE * 8];
	struct record r;
	const char *why;
	unsigned n;
	uint64_t s;
	ssize_t got;

	CU_ASSERT_FATAL(ring_create(&tx, RING_MIN_SIZE) == 0);
	CU_ASSERT_FATAL(ring_attach(&rx, dup(tx.fd), &why) == 0);
	for (s = 1; s <= 5; s++)
		CU_ASSERT_EQUAL(ring_write(&tx, rec, encode_seq(rec, s, 0)), 0);
	ring_hold(&rx);
	got = ring_read(&rx, out, sizeof(out), &n, &why);
	CU_ASSERT_EQUAL(n, 5);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->tail), 0);
	CU_ASSERT_EQUAL(ring_read(&rx, out, sizeof(out), &n, &why), 0);
	CU_ASSERT_EQUAL(ring_ack(&rx, 2), 0);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->tail), 2 * (uint64_t)got / 5);
	ring_rewind(&rx);
	CU_ASSERT_EQUAL(ring_read(&rx, out, sizeof(out), &n, &why), got / 5 * 3);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(record_decode(out, RECORD_MAX_SIZE, &r, &why), 0);
	CU_ASSERT_EQUAL(r.seq, 3);
	/* Unacknowledged records take the task's room. */
	while (ring_write(&tx, rec, encode_seq(rec, ++s, 0)) == 0)
		;
	CU_ASSERT_EQUAL(ring_dropped(&tx), 1);
	/* Full of held records: what was read is freed, acked or not. */
	s = atomic_load(&tx.hdr->tail);
	CU_ASSERT_EQUAL(ring_relieve(&rx), 1);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->tail), rx.rd);
	CU_ASSERT(atomic_load(&tx.hdr->tail) > s);
	CU_ASSERT_EQUAL(ring_relieve(&rx), 0);		/* nothing more read */
	CU_ASSERT_EQUAL(ring_ack(&rx, 1000), 0);	/* only what was read */
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->tail), rx.rd);
	CU_ASSERT(atomic_load(&tx.hdr->tail) < atomic_load(&tx.hdr->head));
	/* The task rewrote a record it had written: all read is freed. */
	got = ring_read(&rx, out, sizeof(out), &n, &why);
	CU_ASSERT(got > 0);
	wire_put16(tx.data + (atomic_load(&tx.hdr->tail) & (RING_MIN_SIZE - 1)),
	    3);
	CU_ASSERT_EQUAL(ring_ack(&rx, 0), -1);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->tail), rx.rd);
	ring_close(&rx);
	ring_close(&tx);
}

/* --- breakpoints ------------------------------------------------------ */

static struct breakpoint
bp_sample(uint32_t id)
{
	struct breakpoint bp;

	memset(&bp, 0, sizeof(bp));
	bp.id = id;
	bp.phase = PMON_BEGIN;
	return bp;
}

/* The begin of a pvm_send to t40003, tag 22, ctx 3, in group "matrix". */
static struct record
bp_call(void)
{
	struct record r = sample_record(9);

	r.call = PMON_CALL_send;
	r.peer = 0x40003;
	return r;
}

/* Does the table bps (n entries, written into a real ring) stop r? */
static int
bp_check(const struct breakpoint *bps, unsigned n, int32_t tid,
    const struct record *r, uint64_t seq, uint8_t phase, uint32_t *id)
{
	static struct ring rg = { .fd = -1 };
	struct breakpoint hit;
	int rc;

	if (rg.hdr == NULL)
		CU_ASSERT_FATAL(ring_create(&rg, RING_MIN_SIZE) == 0);
	ring_ctl_write(rg.hdr, bps, n);
	memset(&hit, 0xa5, sizeof(hit));
	rc = ring_bp_match(rg.hdr, tid, r, seq, phase, &hit);
	if (rc == 1) {
		*id = hit.id;
		CU_ASSERT(memchr(hit.group, '\0', sizeof(hit.group)) != NULL);
	}
	return rc;
}

static void
test_bp_empty(void)
{
	struct ring rg = { .fd = -1 };
	struct record r = bp_call();
	struct breakpoint bp = bp_sample(1), hit;
	uint32_t id;

	/* A fresh ring: nothing set, nothing hits. */
	CU_ASSERT_FATAL(ring_create(&rg, RING_MIN_SIZE) == 0);
	CU_ASSERT_EQUAL(atomic_load(&rg.hdr->ctl.nbp), 0);
	CU_ASSERT_EQUAL(ring_bp_match(rg.hdr, 0x40005, &r, 9, PMON_BEGIN,
	    &hit), 0);
	ring_close(&rg);
	/* An empty table written over a full one. */
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 0x40005, &r, 9, PMON_BEGIN, &id), 1);
	CU_ASSERT_EQUAL(bp_check(&bp, 0, 0x40005, &r, 9, PMON_BEGIN, &id), 0);
	CU_ASSERT_EQUAL(bp_check(NULL, 0, 0x40005, &r, 9, PMON_END, &id), 0);
}

/* Each field named by match must equal the call's; others do not count. */
static void
test_bp_fields(void)
{
	struct record r = bp_call();
	struct breakpoint bp;
	uint32_t id;

	bp = bp_sample(1);
	bp.match = BP_PEER;
	bp.peer = 0x40003;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);
	bp.peer = 0x40004;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);
	bp.match = 0;				/* peer not asked for */
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);

	bp = bp_sample(2);
	bp.match = BP_TAG;
	bp.tag = 22;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);
	bp.tag = 23;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);

	bp = bp_sample(3);
	bp.match = BP_CTX;
	bp.ctx = 3;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);
	bp.ctx = 0;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);

	/* All of them at once: one wrong field is enough to miss. */
	bp = bp_sample(4);
	bp.match = BP_PEER | BP_TAG | BP_CTX;
	bp.peer = 0x40003;
	bp.tag = 22;
	bp.ctx = 3;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);
	r.tag = 1;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);

	/* The call: 0 is any. */
	r = bp_call();
	bp = bp_sample(5);
	bp.call = PMON_CALL_recv;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);
	bp.call = PMON_CALL_send;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);
	CU_ASSERT_EQUAL(id, 5);

	/* Match bits the task does not know never match. */
	bp.match = 0x80;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);
}

static void
test_bp_tid_phase(void)
{
	struct record r = bp_call();
	struct breakpoint bp = bp_sample(7);
	uint32_t id;

	bp.tid = 0x40005;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 0x40005, &r, 9, PMON_BEGIN, &id), 1);
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 0x40006, &r, 9, PMON_BEGIN, &id), 0);
	bp.tid = 0;				/* every task */
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 0x40006, &r, 9, PMON_BEGIN, &id), 1);
	/* Before the call is not after it. */
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 0x40006, &r, 9, PMON_END, &id), 0);
	bp.phase = PMON_END;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 0x40006, &r, 9, PMON_END, &id), 1);
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 0x40006, &r, 9, PMON_BEGIN, &id), 0);
}

/* A stopline: the record about to be written has that number. */
static void
test_bp_seq(void)
{
	struct record r = bp_call();
	struct breakpoint bp = bp_sample(8);
	uint32_t id;

	bp.match = BP_SEQ;
	bp.seq = 41;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 40, PMON_BEGIN, &id), 0);
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 41, PMON_BEGIN, &id), 1);
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 42, PMON_BEGIN, &id), 0);
	/* The record's own seq does not count: the next one's does. */
	r.seq = 41;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 42, PMON_BEGIN, &id), 0);
}

static void
test_bp_group(void)
{
	struct record r = bp_call();
	struct breakpoint bp = bp_sample(9), hit;
	struct ring rg = { .fd = -1 };
	uint32_t id;

	bp.match = BP_GROUP;
	strcpy(bp.group, "matrix");
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);
	strcpy(bp.group, "matri");		/* a prefix is not it */
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);
	strcpy(bp.group, "matrixx");
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);
	strcpy(bp.group, "");			/* no group */
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 0);
	r.glen = 0;
	r.group = NULL;
	CU_ASSERT_EQUAL(bp_check(&bp, 1, 5, &r, 9, PMON_BEGIN, &id), 1);

	/*
	 * A page whose group lacks its NUL (the agent never writes one) is
	 * compared within bounds, and the hit's group is NUL-terminated.
	 */
	CU_ASSERT_FATAL(ring_create(&rg, RING_MIN_SIZE) == 0);
	ring_ctl_write(rg.hdr, &bp, 1);
	memset(rg.hdr->ctl.bp[0].group, 'g', sizeof(rg.hdr->ctl.bp[0].group));
	r.group = (const char *)rg.hdr->ctl.bp[0].group;
	r.glen = sizeof(rg.hdr->ctl.bp[0].group);
	CU_ASSERT_EQUAL(ring_bp_match(rg.hdr, 5, &r, 9, PMON_BEGIN, &hit), 1);
	CU_ASSERT(memchr(hit.group, '\0', sizeof(hit.group)) != NULL);
	r.glen++;
	CU_ASSERT_EQUAL(ring_bp_match(rg.hdr, 5, &r, 9, PMON_BEGIN, &hit), 0);
	ring_close(&rg);
}

/* The first entry that matches wins; a hostile nbp is bounded. */
static void
test_bp_table(void)
{
	struct breakpoint bps[BREAKPOINTS_MAX], hit;
	struct ring rg = { .fd = -1 }, rx = { .fd = -1 };
	struct record r = bp_call();
	const char *why;
	uint32_t id;
	unsigned i;

	for (i = 0; i < BREAKPOINTS_MAX; i++) {
		bps[i] = bp_sample(100 + i);
		bps[i].match = BP_TAG;
		bps[i].tag = (int32_t)i;
	}
	r.tag = RING_BP_MAX - 1;
	CU_ASSERT_EQUAL(bp_check(bps, RING_BP_MAX, 5, &r, 9, PMON_BEGIN,
	    &id), 1);
	CU_ASSERT_EQUAL(id, 100 + RING_BP_MAX - 1);
	bps[3].tag = RING_BP_MAX - 1;
	CU_ASSERT_EQUAL(bp_check(bps, RING_BP_MAX, 5, &r, 9, PMON_BEGIN,
	    &id), 1);
	CU_ASSERT_EQUAL(id, 103);
	/* Only the n entries written count. */
	CU_ASSERT_EQUAL(bp_check(bps, 3, 5, &r, 9, PMON_BEGIN, &id), 0);

	/* The agent writes through its own mapping; the task sees it. */
	CU_ASSERT_FATAL(ring_create(&rg, RING_MIN_SIZE) == 0);
	CU_ASSERT_FATAL(ring_attach(&rx, dup(rg.fd), &why) == 0);
	ring_ctl_write(rx.hdr, bps, 5);
	CU_ASSERT_EQUAL(atomic_load(&rg.hdr->ctl.nbp), 5);
	CU_ASSERT_EQUAL(atomic_load(&rg.hdr->ctl.gen) % 2, 0);
	CU_ASSERT_EQUAL(ring_bp_match(rg.hdr, 5, &r, 9, PMON_BEGIN, &hit), 1);
	CU_ASSERT_EQUAL(hit.id, 103);
	/* A writer that died mid-write: the task gives up, and a new
	 * write makes the page good again. */
	atomic_store(&rg.hdr->ctl.gen, 7);
	CU_ASSERT_EQUAL(ring_bp_match(rg.hdr, 5, &r, 9, PMON_BEGIN, &hit), 0);
	ring_ctl_write(rx.hdr, bps, 5);
	CU_ASSERT_EQUAL(atomic_load(&rg.hdr->ctl.gen) % 2, 0);
	CU_ASSERT_EQUAL(ring_bp_match(rg.hdr, 5, &r, 9, PMON_BEGIN, &hit), 1);
	/* An nbp beyond the table is read as a full table. */
	atomic_store(&rg.hdr->ctl.nbp, 1000000);
	r.tag = 1000;
	CU_ASSERT_EQUAL(ring_bp_match(rg.hdr, 5, &r, 9, PMON_BEGIN, &hit), 0);
	ring_close(&rx);
	ring_close(&rg);
}

static void
test_bp_wire(void)
{
	uint8_t buf[BP_WIRE_MAX + 8], bad[BP_WIRE_MAX + 8];
	struct breakpoint in = bp_sample(0xdeadbeef), out;
	const char *why = NULL;
	size_t n, used, i;

	in.tid = 0x40005;
	in.call = PMON_CALL_recv;
	in.phase = PMON_END;
	in.match = BP_ALL;
	in.peer = -1;
	in.tag = 77;
	in.ctx = -5;
	in.seq = 0x123456789aULL;
	strcpy(in.group, "workers");
	n = breakpoint_encode(buf, &in);
	CU_ASSERT_EQUAL(n, BP_WIRE_FIXED + 2 + 7);
	CU_ASSERT_EQUAL(breakpoint_decode(buf, n, &out, &used, &why), 0);
	CU_ASSERT_EQUAL(used, n);
	CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof(in)), 0);
	/* The documented layout: id first, the group's length at 32. */
	CU_ASSERT_EQUAL(wire_get32(buf), 0xdeadbeef);
	CU_ASSERT_EQUAL(wire_get64(buf + 24), in.seq);
	CU_ASSERT_EQUAL(wire_get16(buf + BP_WIRE_FIXED), 7);
	/* Trailing bytes are the next entry's: used says where it ends. */
	CU_ASSERT_EQUAL(breakpoint_decode(buf, n + 8, &out, &used, &why), 0);
	CU_ASSERT_EQUAL(used, n);

	/* The longest group fits BP_WIRE_MAX. */
	memset(in.group, 'x', BREAKPOINT_GROUP_MAX);
	in.group[BREAKPOINT_GROUP_MAX] = '\0';
	CU_ASSERT_EQUAL(breakpoint_encode(buf, &in), BP_WIRE_MAX);
	CU_ASSERT_EQUAL(breakpoint_decode(buf, BP_WIRE_MAX, &out, &used, &why), 0);
	CU_ASSERT_STRING_EQUAL(out.group, in.group);
	strcpy(in.group, "workers");
	n = breakpoint_encode(buf, &in);

	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL(breakpoint_decode(buf, i, &out, &used, &why), -1);
	memcpy(bad, buf, n);
	wire_put32(bad, 0);				/* id 0 */
	CU_ASSERT_EQUAL(breakpoint_decode(bad, n, &out, &used, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "id 0"));
	memcpy(bad, buf, n);
	wire_put16(bad + 10, BP_ALL + 1);		/* unknown match bit */
	CU_ASSERT_EQUAL(breakpoint_decode(bad, n, &out, &used, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown fields"));
	memcpy(bad, buf, n);
	bad[9] = 2;					/* phase */
	CU_ASSERT_EQUAL(breakpoint_decode(bad, n, &out, &used, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "phase"));
	memcpy(bad, buf, n);
	bad[8] = PMON_CALL_MAX;				/* call */
	CU_ASSERT_EQUAL(breakpoint_decode(bad, n, &out, &used, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "call"));
	memcpy(bad, buf, n);
	bad[BP_WIRE_FIXED + 4] = '\0';			/* NUL in group */
	CU_ASSERT_EQUAL(breakpoint_decode(bad, n, &out, &used, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "NUL"));
	memcpy(bad, buf, n);
	wire_put16(bad + BP_WIRE_FIXED, BREAKPOINT_GROUP_MAX + 1);
	memset(bad + n, 'y', sizeof(bad) - n);
	CU_ASSERT_EQUAL(breakpoint_decode(bad, sizeof(bad), &out, &used, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "too long"));
	memcpy(bad, buf, n);
	bad[8] = PMON_CALL_MAX - 1;			/* the last call is fine */
	bad[9] = PMON_BEGIN;
	wire_put16(bad + 10, 0);
	CU_ASSERT_EQUAL(breakpoint_decode(bad, n, &out, &used, &why), 0);
}

/* A flood of one kind of line: a burst, then counted, then a new window. */
static void
test_log_rate(void)
{
	struct log_rate r = LOG_RATE_INIT("test lines");
	unsigned i, logged = 0;

	for (i = 0; i < 3 * LOG_RATE_BURST; i++)
		logged += log_rate_ok(&r);
	CU_ASSERT_EQUAL(logged, LOG_RATE_BURST);
	CU_ASSERT_EQUAL(r.suppressed, 2 * LOG_RATE_BURST);
	r.window -= LOG_RATE_WINDOW;	/* as if the window had passed */
	CU_ASSERT_EQUAL(log_rate_ok(&r), 1);
	CU_ASSERT_EQUAL(r.suppressed, 0);
	CU_ASSERT_EQUAL(r.n, 1);
}

static void
test_addr_split(void)
{
	char h[64], p[16];

	strcpy(p, "keep");
	CU_ASSERT_EQUAL(addr_split("10.1.2.3:4567", h, sizeof(h), p,
	    sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(h, "10.1.2.3");
	CU_ASSERT_STRING_EQUAL(p, "4567");
	CU_ASSERT_EQUAL(addr_split("[::1]:80", h, sizeof(h), p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(h, "::1");
	CU_ASSERT_STRING_EQUAL(p, "80");
	/* No port: it stays as it was. */
	strcpy(p, "keep");
	CU_ASSERT_EQUAL(addr_split("host", h, sizeof(h), p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(h, "host");
	CU_ASSERT_STRING_EQUAL(p, "keep");
	CU_ASSERT_EQUAL(addr_split("fe80::1", h, sizeof(h), p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(h, "fe80::1");
	CU_ASSERT_STRING_EQUAL(p, "keep");
	CU_ASSERT_EQUAL(addr_split("[::1]", h, sizeof(h), p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(h, "::1");
	/* Empty parts, a part too long, brackets not closed. */
	CU_ASSERT_EQUAL(addr_split("host:", h, sizeof(h), p, sizeof(p)), -1);
	CU_ASSERT_EQUAL(addr_split(":80", h, sizeof(h), p, sizeof(p)), -1);
	CU_ASSERT_EQUAL(addr_split("", h, sizeof(h), p, sizeof(p)), -1);
	CU_ASSERT_EQUAL(addr_split("[]:80", h, sizeof(h), p, sizeof(p)), -1);
	CU_ASSERT_EQUAL(addr_split("[::1:80", h, sizeof(h), p, sizeof(p)), -1);
	CU_ASSERT_EQUAL(addr_split("[::1]80", h, sizeof(h), p, sizeof(p)), -1);
	CU_ASSERT_EQUAL(addr_split("h:12345678901234567", h, sizeof(h), p,
	    sizeof(p)), -1);
}

static CU_TestInfo addr_tests[] = {
	{ "split", test_addr_split },
	CU_TEST_INFO_NULL
};

static CU_TestInfo log_tests[] = {
	{ "rate limit", test_log_rate },
	CU_TEST_INFO_NULL
};

static CU_TestInfo record_tests[] = {
	{ "round trip", test_record_roundtrip },
	{ "rejects malformed records", test_record_rejects },
	{ "call names", test_call_names },
	{ "tid hash spreads the hosts", test_tid_hash_spreads_hosts },
	CU_TEST_INFO_NULL
};

static CU_TestInfo frame_tests[] = {
	{ "header checks", test_frame_header },
	{ "wire reader bounds", test_wire_reader },
	CU_TEST_INFO_NULL
};

static CU_TestInfo ring_tests[] = {
	{ "wraps in order", test_ring_wraps_in_order },
	{ "full ring drops and counts", test_ring_full_drops },
	{ "attach and read check the task", test_ring_attach_checks },
	{ "held reads until acknowledged", test_ring_hold },
	CU_TEST_INFO_NULL
};

static CU_TestInfo bp_tests[] = {
	{ "empty table", test_bp_empty },
	{ "peer, tag, ctx, call", test_bp_fields },
	{ "tid and phase", test_bp_tid_phase },
	{ "stopline (seq)", test_bp_seq },
	{ "group", test_bp_group },
	{ "table written by the agent", test_bp_table },
	{ "wire round trip and rejects", test_bp_wire },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo common_suites[] = {
	{ "record", NULL, NULL, NULL, NULL, record_tests },
	{ "frame", NULL, NULL, NULL, NULL, frame_tests },
	{ "ring", NULL, NULL, NULL, NULL, ring_tests },
	{ "breakpoints", NULL, NULL, NULL, NULL, bp_tests },
	{ "log", NULL, NULL, NULL, NULL, log_tests },
	{ "addr", NULL, NULL, NULL, NULL, addr_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(common_suites)
