/*
 * Protects the codecs every part shares: the record encoding (task ring,
 * agent frames and coordinator all rely on it), the frame header checks
 * that stand between a daemon and an untrusted peer, and the record ring
 * that lets an agent read a task's records without the task's help.
 */
#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static CU_TestInfo record_tests[] = {
	{ "round trip", test_record_roundtrip },
	{ "rejects malformed records", test_record_rejects },
	{ "call names", test_call_names },
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
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo common_suites[] = {
	{ "record", NULL, NULL, NULL, NULL, record_tests },
	{ "frame", NULL, NULL, NULL, NULL, frame_tests },
	{ "ring", NULL, NULL, NULL, NULL, ring_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(common_suites)
