/*
 * Protects the agent's untrusted-input decoder (TASK_HELLO from a task),
 * the frames it sends, and the batching of ring records into TASK_RECORDS
 * frames: every record once, in order, frames well under the limit, and a
 * corrupt ring reported instead of shipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "agent.h"
#include "proto.h"
#include "record.h"
#include "ring.h"
#include "task_hello.h"
#include "unit.h"
#include "wire.h"

static void
hello_sample(struct task_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->tid = 0x40005;
	h->pid = 1234;
	h->parent_tid = 0x40002;
	h->spawn_seq = 5;
	strcpy(h->program, "slave1");
}

static void
test_hello_roundtrip(void)
{
	uint8_t buf[TASK_HELLO_FRAME_MAX];
	struct task_hello in, out;
	struct frame_hdr fh;
	const char *why = NULL;
	size_t n;

	hello_sample(&in);
	n = task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(n, FRAME_HDR_SIZE + TASK_HELLO_FIXED + 6);
	CU_ASSERT_EQUAL(frame_hdr_decode(buf, &fh, &why), 0);
	CU_ASSERT_EQUAL(fh.type, MSG_TASK_HELLO);
	CU_ASSERT_EQUAL(fh.len, n - FRAME_HDR_SIZE);
	CU_ASSERT_EQUAL(agent_parse_task_hello(buf + FRAME_HDR_SIZE, fh.len,
	    &out, &why), 0);
	CU_ASSERT_EQUAL(out.tid, in.tid);
	CU_ASSERT_EQUAL(out.pid, in.pid);
	CU_ASSERT_EQUAL(out.parent_tid, in.parent_tid);
	CU_ASSERT_EQUAL(out.spawn_seq, in.spawn_seq);
	CU_ASSERT_STRING_EQUAL(out.program, "slave1");
}

/* A name longer than TASK_PROGRAM_MAX is cut by the encoder, not sent. */
static void
test_hello_long_program(void)
{
	uint8_t buf[TASK_HELLO_FRAME_MAX];
	struct task_hello in, out;
	const char *why;
	size_t n;

	hello_sample(&in);
	memset(in.program, 'x', sizeof(in.program));
	n = task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(n, TASK_HELLO_FRAME_MAX);
	CU_ASSERT_EQUAL(agent_parse_task_hello(buf + FRAME_HDR_SIZE,
	    n - FRAME_HDR_SIZE, &out, &why), 0);
	CU_ASSERT_EQUAL(strlen(out.program), TASK_PROGRAM_MAX);
}

static int
parse_payload(const uint8_t *p, size_t len)
{
	struct task_hello h;
	const char *why = NULL;
	int rc;

	rc = agent_parse_task_hello(p, len, &h, &why);
	if (rc == -1)
		CU_ASSERT_PTR_NOT_NULL(why);
	return rc;
}

static void
test_hello_rejects(void)
{
	uint8_t buf[TASK_HELLO_FRAME_MAX + 16], *p = buf + FRAME_HDR_SIZE;
	struct task_hello in;
	size_t n, len, i;

	hello_sample(&in);
	n = task_hello_encode(buf, &in);
	len = n - FRAME_HDR_SIZE;
	for (i = 0; i < len; i++)
		CU_ASSERT_EQUAL(parse_payload(p, i), -1);
	p[len] = 0;
	CU_ASSERT_EQUAL(parse_payload(p, len + 1), -1);	/* trailing */
	CU_ASSERT_EQUAL(parse_payload(p, len), 0);

	p[TASK_HELLO_FIXED + 2] = '\0';			/* NUL in name */
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	task_hello_encode(buf, &in);
	wire_put16(p + 20, 300);			/* name too long */
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);

	in.tid = 0;
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	in.tid = -5;
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	hello_sample(&in);
	in.pid = 0;
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	hello_sample(&in);
	in.spawn_seq = 0;				/* parent without seq */
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	in.parent_tid = 0;				/* neither: fine */
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), 0);
}

/* Writes n records (seq 1..n) to the ring, every third with peers. */
static void
ring_fill(struct ring *rg, unsigned n)
{
	uint8_t buf[RECORD_MAX_SIZE];
	int32_t peers[3] = { 0x40003, 0x40004, 0x40005 };
	struct record r;
	unsigned i;

	for (i = 1; i <= n; i++) {
		memset(&r, 0, sizeof(r));
		r.call = PMON_CALL_send;
		r.phase = i % 2 ? PMON_BEGIN : PMON_END;
		r.seq = i;
		r.peer = 0x40003;
		r.tag = 22;
		r.npeers = i % 3 == 0 ? 3 : 0;
		r.group = "g";
		r.glen = i % 3 == 0;
		CU_ASSERT_EQUAL_FATAL(ring_write(rg, buf,
		    record_encode(buf, &r, peers)), 0);
	}
}

/* Reads TASK_RECORDS frames back; returns the records seen, checking the
 * tid, the order and the frame sizes. */
static unsigned
frames_check(struct evbuffer *eb, int32_t tid, size_t batch,
    uint64_t *lastseq)
{
	uint8_t hdr[FRAME_HDR_SIZE], *p;
	struct frame_hdr fh;
	struct record r;
	const char *why;
	unsigned nrec = 0, count;
	size_t off;

	while (evbuffer_copyout(eb, hdr, sizeof(hdr)) == sizeof(hdr)) {
		CU_ASSERT_EQUAL_FATAL(frame_hdr_decode(hdr, &fh, &why), 0);
		CU_ASSERT_EQUAL(fh.type, MSG_TASK_RECORDS);
		CU_ASSERT(fh.len <= batch + 8);
		evbuffer_drain(eb, sizeof(hdr));
		p = evbuffer_pullup(eb, fh.len);
		CU_ASSERT_EQUAL(wire_get32(p), (uint32_t)tid);
		count = wire_get32(p + 4);
		for (off = 8; off < fh.len; off += r.len, count--) {
			CU_ASSERT_EQUAL_FATAL(record_decode(p + off,
			    fh.len - off, &r, &why), 0);
			CU_ASSERT_EQUAL(r.seq, *lastseq + 1);
			*lastseq = r.seq;
			nrec++;
		}
		CU_ASSERT_EQUAL(count, 0);
		evbuffer_drain(eb, fh.len);
	}
	return nrec;
}

static void
test_drain_batches(void)
{
	struct evbuffer *eb = evbuffer_new();
	size_t batch = RECORD_MAX_SIZE;
	uint8_t *buf = malloc(batch);
	struct ring rg = { .fd = -1 };
	const char *why;
	uint64_t last = 0;
	unsigned got;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 64 * 1024), 0);
	ring_fill(&rg, 1000);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 0x40005, eb, buf, batch,
	    SIZE_MAX, &why), 0);
	got = frames_check(eb, 0x40005, batch, &last);
	CU_ASSERT_EQUAL(got, 1000);
	/* Empty now: nothing more, and no empty frame. */
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 0x40005, eb, buf, batch,
	    SIZE_MAX, &why), 0);
	CU_ASSERT_EQUAL(evbuffer_get_length(eb), 0);
	CU_ASSERT_EQUAL(ring_dropped(&rg), 0);
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

/* max bounds one pass; the rest stays in the ring for the next. */
static void
test_drain_max(void)
{
	struct evbuffer *eb = evbuffer_new();
	size_t batch = RECORD_MAX_SIZE;
	uint8_t *buf = malloc(batch);
	struct ring rg = { .fd = -1 };
	const char *why;
	uint64_t last = 0;
	unsigned got;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 64 * 1024), 0);
	ring_fill(&rg, 1000);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 7, eb, buf, batch, 1, &why), 0);
	got = frames_check(eb, 7, batch, &last);
	CU_ASSERT(got > 0 && got < 1000);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 7, eb, buf, batch, SIZE_MAX,
	    &why), 0);
	got += frames_check(eb, 7, batch, &last);
	CU_ASSERT_EQUAL(got, 1000);
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

/* A record the coordinator could not decode means a corrupt ring. */
static void
test_drain_corrupt(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t rec[RECORD_HDR_SIZE], *buf = malloc(RECORD_MAX_SIZE);
	struct ring rg = { .fd = -1 };
	const char *why = NULL;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 4096), 0);
	memset(rec, 0, sizeof(rec));
	wire_put16(rec, sizeof(rec));		/* call 0, seq 0 */
	CU_ASSERT_EQUAL(ring_write(&rg, rec, sizeof(rec)), 0);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 7, eb, buf, RECORD_MAX_SIZE,
	    SIZE_MAX, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(why);
	CU_ASSERT_EQUAL(evbuffer_get_length(eb), 0);
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

/* Every frame the agent builds passes the receiver's header check. */
static void
test_frames_valid(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t hdr[FRAME_HDR_SIZE], types[5];
	struct task_hello h;
	struct frame_hdr fh;
	const char *why;
	int i = 0;

	hello_sample(&h);
	agent_frame_agent_hello(eb, 0x40000, 99, "host", "LINUX64");
	agent_frame_task_new(eb, &h);
	agent_frame_task_end(eb, 0x40005, 3);
	agent_frame_flush_done(eb, 42);
	agent_frame_agent_hello(eb, 0x40000, 99, "", "");
	while (evbuffer_remove(eb, hdr, sizeof(hdr)) == sizeof(hdr)) {
		CU_ASSERT_EQUAL_FATAL(frame_hdr_decode(hdr, &fh, &why), 0);
		types[i++] = fh.type;
		evbuffer_drain(eb, fh.len);
	}
	CU_ASSERT_EQUAL(i, 5);
	CU_ASSERT_EQUAL(types[0], MSG_AGENT_HELLO);
	CU_ASSERT_EQUAL(types[1], MSG_TASK_NEW);
	CU_ASSERT_EQUAL(types[2], MSG_TASK_END);
	CU_ASSERT_EQUAL(types[3], MSG_FLUSH_DONE);
	evbuffer_free(eb);
}

static void
test_dump(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t *buf = malloc(RECORD_MAX_SIZE);
	struct ring rg = { .fd = -1 };
	struct task_hello h;
	const char *why;
	char out[8192];
	FILE *f;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 4096), 0);
	ring_fill(&rg, 3);
	hello_sample(&h);
	agent_frame_task_new(eb, &h);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, h.tid, eb, buf,
	    RECORD_MAX_SIZE, SIZE_MAX, &why), 0);
	agent_frame_task_end(eb, h.tid, 0);
	memset(out, 0, sizeof(out));
	f = fmemopen(out, sizeof(out) - 1, "w");
	CU_ASSERT_EQUAL(agent_dump_frames(eb, f), 0);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "program slave1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "t40005 1 pvm_send begin"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "group=g peers=t40003,t40004"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "# end t40005 dropped 0"));
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

static void
test_split_addr(void)
{
	char h[64], p[16];

	CU_ASSERT_EQUAL(agent_split_addr("10.1.2.3:4567", h, sizeof(h), p,
	    sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(h, "10.1.2.3");
	CU_ASSERT_STRING_EQUAL(p, "4567");
	CU_ASSERT_EQUAL(agent_split_addr("[::1]:80", h, sizeof(h), p,
	    sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(h, "::1");
	CU_ASSERT_EQUAL(agent_split_addr("host", h, sizeof(h), p,
	    sizeof(p)), -1);
	CU_ASSERT_EQUAL(agent_split_addr("host:", h, sizeof(h), p,
	    sizeof(p)), -1);
	CU_ASSERT_EQUAL(agent_split_addr(":80", h, sizeof(h), p,
	    sizeof(p)), -1);
}

static CU_TestInfo hello_tests[] = {
	{ "roundtrip", test_hello_roundtrip },
	{ "long program name", test_hello_long_program },
	{ "rejects", test_hello_rejects },
	CU_TEST_INFO_NULL
};

static CU_TestInfo drain_tests[] = {
	{ "batches", test_drain_batches },
	{ "max per pass", test_drain_max },
	{ "corrupt ring", test_drain_corrupt },
	{ "frames valid", test_frames_valid },
	{ "dump", test_dump },
	{ "split addr", test_split_addr },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo suites[] = {
	{ "agent task hello", NULL, NULL, NULL, NULL, hello_tests },
	{ "agent drain", NULL, NULL, NULL, NULL, drain_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(suites)
