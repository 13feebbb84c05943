/*
 * Protects the recording formats (common/recfile.c, common/recpack.c,
 * doc/recording.md): in format 2 (the writer's) and format 1, every
 * kind of frame comes back byte for byte, in order, with the end
 * block's counts, also EVENTs that do not pack; a file cut at any byte,
 * or with any one bit flipped, gives back a prefix of the frames and
 * then an error naming an offset, never a clean end and never a frame
 * that was not written; damage in a block loses exactly that block and
 * what follows; a file written by the format 1 writer before format 2
 * still reads; a newer format is refused by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include <CUnit/CUnit.h>

#include "proto.h"
#include "recfile.h"
#include "record.h"
#include "unit.h"
#include "wire.h"

#define NFRAMES_MAX	20000

struct frame {
	uint8_t		type;
	size_t		len;
	uint8_t		*payload;
};

/* The stream under test, and what it holds. */
static struct frame frames[NFRAMES_MAX];
static size_t nframes, nevents, ntasks;

static uint32_t lcg;

static uint32_t
rnd(void)
{
	lcg = lcg * 1103515245u + 12345u;
	return lcg >> 8;
}

static void
frames_clear(void)
{
	size_t i;

	for (i = 0; i < nframes; i++)
		free(frames[i].payload);
	nframes = nevents = ntasks = 0;
}

static void
add(uint8_t type, const void *p, size_t len)
{
	struct frame *f = &frames[nframes++];

	CU_ASSERT_FATAL(nframes <= NFRAMES_MAX);
	f->type = type;
	f->len = len;
	f->payload = malloc(len > 0 ? len : 1);
	CU_ASSERT_FATAL(f->payload != NULL);
	memcpy(f->payload, p, len);
	nevents += type == MSG_EVENT;
	ntasks += type == MSG_TASK_INFO;
}

/* One task of the made-up program. */
struct mtask {
	int32_t		tid;
	uint64_t	seq;
	uint64_t	t;
	int64_t		corr;		/* t_corr - t_ns */
	uint64_t	send_seq;
};

static void
add_task_info(const struct mtask *t)
{
	uint8_t b[64], *p;

	memset(b, 0, sizeof(b));
	wire_put32(b, (uint32_t)t->tid);
	wire_put32(b + 8, (uint32_t)(t->tid & 0xffff));
	p = wire_putstr(b + 20, "host1");
	p = wire_putstr(p, "prog");
	add(MSG_TASK_INFO, b, (size_t)(p - b));
}

/*
 * An EVENT of t as the coordinator sends it: r's record (seq and time
 * from the task), peers encoded after the group.
 */
static void
add_event(struct mtask *t, struct record *r, const int32_t *peers,
    uint8_t flags, int32_t match_tid, uint64_t match_seq)
{
	static uint8_t b[EVENT_HDR_SIZE + RECORD_MAX_SIZE];
	size_t n;

	r->seq = ++t->seq;
	r->t_ns = t->t += 200 + rnd() % 20000;
	wire_put32(b, (uint32_t)t->tid);
	b[4] = flags;
	wire_put32(b + 5, (uint32_t)match_tid);
	wire_put64(b + 9, match_seq);
	wire_put64(b + 17, r->t_ns + (uint64_t)t->corr);
	n = record_encode(b + EVENT_HDR_SIZE, r, peers);
	add(MSG_EVENT, b, EVENT_HDR_SIZE + n);
}

static void
rec_init(struct record *r, unsigned call, unsigned phase)
{
	memset(r, 0, sizeof(*r));
	r->call = (uint8_t)call;
	r->phase = (uint8_t)phase;
	r->peer = r->tag = r->inst = -1;
}

/* A round of t: pack, send to u, receive from v, a barrier, a mcast. */
static void
add_round(struct mtask *t, struct mtask *u, struct mtask *v, unsigned k)
{
	static const char grp[] = "workers";
	int32_t peers[3] = { u->tid, v->tid, t->tid };
	struct record r;

	rec_init(&r, PMON_CALL_initsend, PMON_BEGIN);
	add_event(t, &r, NULL, 0, 0, 0);
	rec_init(&r, PMON_CALL_initsend, PMON_END);
	r.rc = (int32_t)(k % 3 + 4);		/* buffer ids alternate */
	add_event(t, &r, NULL, 0, 0, 0);
	rec_init(&r, PMON_CALL_send, PMON_BEGIN);
	r.peer = u->tid;
	r.tag = 2;
	r.bytes = 4 + (int32_t)(k % 2);
	add_event(t, &r, NULL, 0, 0, 0);
	t->send_seq = t->seq;
	rec_init(&r, PMON_CALL_recv, PMON_END);
	r.peer = v->tid;
	r.tag = 2;
	r.flags = RECORD_MSG;
	r.rc = 6;
	add_event(t, &r, NULL, EVENT_MATCHED, v->tid, v->send_seq + 1);
	if (k % 4 == 0) {
		rec_init(&r, PMON_CALL_barrier, PMON_END);
		r.group = grp;
		r.glen = sizeof(grp) - 1;
		r.inst = 3;
		add_event(t, &r, NULL, 0, 0, 0);
	}
	if (k % 5 == 0) {
		rec_init(&r, PMON_CALL_mcast, PMON_BEGIN);
		r.npeers = 3;
		r.tag = 9;
		add_event(t, &r, peers, 0, 0, 0);
	}
}

/* What no packing expects, stored as it is, still exact. */
static void
add_odd_events(struct mtask *t, unsigned k)
{
	uint8_t b[200];
	struct record r;
	size_t i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)rnd();
	switch (k % 6) {
	case 0:				/* noise of the minimum length */
		add(MSG_EVENT, b, 73);
		break;
	case 1:				/* a record with bytes after it */
		rec_init(&r, PMON_CALL_send, PMON_BEGIN);
		add_event(t, &r, NULL, 0, 0, 0);
		frames[nframes - 1].payload = realloc(frames[nframes -
		    1].payload, frames[nframes - 1].len + 3);
		CU_ASSERT_FATAL(frames[nframes - 1].payload != NULL);
		frames[nframes - 1].len += 3;
		memset(frames[nframes - 1].payload + 73, 7, 3);
		break;
	case 2:				/* tid 0, a phase of 2 */
		wire_put32(b, 0);
		add(MSG_EVENT, b, 73 + (b[100] % 4));
		break;
	case 3:				/* the sequence restarts: tid reused */
		t->seq = rnd() % 3;
		break;
	case 4:				/* records lost: seq jumps */
		rec_init(&r, PMON_CALL_LOST, PMON_BEGIN);
		r.bytes = 17;
		add_event(t, &r, NULL, EVENT_LOST, 0, 0);
		t->seq += 16;
		break;
	default:			/* the clock correction moves */
		t->corr += (int64_t)(rnd() % 2000) - 1000;
		break;
	}
}

/* The frames besides TASK_INFO and EVENT: every type a recording holds. */
static void
add_others(unsigned k, int32_t tid)
{
	static char json[3000];
	uint8_t b[64], *p;
	size_t n;

	n = (size_t)snprintf(json, sizeof(json), "{\"kind\":\"x\",\"k\":%u}",
	    k);
	add(k % 2 ? MSG_PROBLEM : MSG_NOTICE, json, n);
	wire_put32(b, (uint32_t)tid);
	add(MSG_TASK_GONE, b, 4);
	wire_put32(b, 0x40000);
	b[4] = 1;
	p = wire_putstr(b + 5, "host2");
	p = wire_putstr(p, "LINUX64");
	add(REC_HOST, b, (size_t)(p - b));
	memset(json, 'a' + k % 26, sizeof(json));	/* beyond a block */
	add(REC_SNAPSHOT, json, sizeof(json));
}

/*
 * A run of three tasks: rounds of message passing, group calls, now
 * and then an event that does not pack, a restart, a loss, the other
 * frame types.
 */
static void
make_stream(unsigned rounds, int odd)
{
	struct mtask t[3];
	unsigned i, k;

	frames_clear();
	lcg = 12345;
	memset(t, 0, sizeof(t));
	for (i = 0; i < 3; i++) {
		t[i].tid = 0x40001 + (int32_t)i;
		t[i].t = 1700000000000000000ULL + i * 1000;
		t[i].corr = i == 2 ? -5000 : 0;
		add_task_info(&t[i]);
	}
	for (k = 0; k < rounds; k++) {
		for (i = 0; i < 3; i++)
			add_round(&t[i], &t[(i + 1) % 3], &t[(i + 2) % 3], k);
		if (odd && k % 7 == 3)
			add_odd_events(&t[k % 3], k / 7);
		if (odd && k % 23 == 11)
			add_others(k, t[k % 3].tid);
	}
}

static void
header_init(struct recfile_header *h, unsigned version)
{
	memset(h, 0, sizeof(*h));
	h->version = (uint16_t)version;
	h->proto = PROTO_VERSION;
	h->created_ns = 12345;
	strcpy(h->writer, "unit");
	strcpy(h->clock, "clc");
	strcpy(h->source, "here:/tmp");
}

/* Writes every frame into a malloc'ed buffer; returns its size. */
static size_t
write_file(uint8_t **buf, unsigned version, size_t block)
{
	struct recfile_header h;
	struct recfile_writer *w;
	struct recfile_end end;
	char err[256];
	size_t size = 0, i;
	FILE *fp;

	header_init(&h, version);
	*buf = NULL;
	fp = open_memstream((char **)buf, &size);
	CU_ASSERT_FATAL(fp != NULL);
	w = recfile_create_fp(fp, &h, block, err, sizeof(err));
	CU_ASSERT_FATAL(w != NULL);
	for (i = 0; i < nframes; i++)
		CU_ASSERT_FATAL(recfile_write_frame(w, frames[i].type,
		    frames[i].payload, frames[i].len) == 0);
	CU_ASSERT_FATAL(recfile_finish(w, &end) == 0);
	recfile_writer_free(w);
	CU_ASSERT(end.frames == nframes);
	CU_ASSERT(end.events == nevents);
	CU_ASSERT(end.tasks == ntasks);
	CU_ASSERT(end.file_bytes == size);
	return size;
}

/* A stream of len bytes of buf (fmemopen cannot make an empty one). */
static FILE *
open_bytes(const uint8_t *buf, size_t len)
{
	return len > 0 ? fmemopen((void *)buf, len, "r") :
	    fopen("/dev/null", "r");
}

/*
 * Reads buf[0..len): how many frames came back, each checked against
 * what was written; the result of the last recfile_next (or -2 when the
 * header was refused) and the error.  With ends, where each frame's
 * block ends (recfile_offset once it is returned).
 */
static size_t
read_file(const uint8_t *buf, size_t len, int *rv, char *err, size_t size,
    uint64_t *ends)
{
	struct recfile *r;
	const uint8_t *p;
	size_t n = 0, plen;
	uint8_t type;

	if ((r = recfile_open_fp(open_bytes(buf, len), err, size)) == NULL) {
		*rv = -2;
		return 0;
	}
	while ((*rv = recfile_next(r, &type, &p, &plen)) == 1) {
		CU_ASSERT_FATAL(n < nframes);
		CU_ASSERT_FATAL(type == frames[n].type &&
		    plen == frames[n].len &&
		    memcmp(p, frames[n].payload, plen) == 0);
		if (ends != NULL)
			ends[n] = recfile_offset(r);
		n++;
	}
	if (*rv == 0) {
		CU_ASSERT(recfile_end(r) != NULL &&
		    recfile_end(r)->frames == n);
		CU_ASSERT(recfile_end(r) != NULL &&
		    recfile_end(r)->events == nevents);
	}
	snprintf(err, size, "%s", recfile_error(r));
	recfile_close(r);
	return n;
}

static void
roundtrip(unsigned version, size_t block)
{
	uint8_t *buf;
	size_t size, n;
	char err[256];
	int rv;

	size = write_file(&buf, version, block);
	n = read_file(buf, size, &rv, err, sizeof(err), NULL);
	CU_ASSERT(rv == 0);
	CU_ASSERT(n == nframes);
	free(buf);
}

static void
test_roundtrip(void)
{
	unsigned v;

	make_stream(300, 1);
	for (v = 1; v <= 2; v++) {
		roundtrip(v, RECFILE_BLOCK_MIN);
		roundtrip(v, 4096);
		roundtrip(v, 0);		/* one block for everything */
	}
	frames_clear();
}

/*
 * Format 2 packs the EVENTs of a pattern that repeats: a round costs
 * each task a few bytes of calls and masks, deflated to almost nothing,
 * and a time delta of 2 or 3 bytes stored.  Frames stored as they are,
 * deflated at level 1, would take several times that.
 */
static void
test_packs(void)
{
	uint8_t *buf;
	size_t size;

	make_stream(1000, 0);
	size = write_file(&buf, 2, 0);
	CU_ASSERT(size < 4 * nevents);
	free(buf);
	frames_clear();
}

/*
 * A task that makes more calls and phases than it has slots: each new
 * one takes the slot given out longest ago, and one that comes back
 * starts afresh; every event still comes back exact.
 */
static void
test_many_calls(void)
{
	struct mtask t;
	struct record r;
	unsigned k, call;

	frames_clear();
	memset(&t, 0, sizeof(t));
	t.tid = 0x40001;
	t.t = 1000000;
	add_task_info(&t);
	for (k = 0; k < 4; k++)
		for (call = 1; call < 45; call += 1 + k % 2) {
			rec_init(&r, call, PMON_BEGIN);
			r.tag = (int32_t)(call + k);
			add_event(&t, &r, NULL, 0, 0, 0);
			rec_init(&r, call, PMON_END);
			r.rc = (int32_t)k;
			add_event(&t, &r, NULL, 0, 0, 0);
		}
	roundtrip(2, RECFILE_BLOCK_MIN);
	roundtrip(2, 0);
	frames_clear();
}

/* Events of more tasks than format 2 packs: the rest as they are. */
static void
test_many_tasks(void)
{
	struct mtask t;
	struct record r;
	unsigned i, k;

	frames_clear();
	memset(&t, 0, sizeof(t));
	for (k = 0; k < 2; k++)
		for (i = 0; i < RECFILE_TASKS_MAX + 10; i += 1 + (i > 100) *
		    1000) {
			t.tid = 0x40001 + (int32_t)i;
			t.seq = k;
			t.t = 1000000 + i;
			if (k == 0)
				add_task_info(&t);
			rec_init(&r, PMON_CALL_exit, PMON_BEGIN);
			add_event(&t, &r, NULL, 0, 0, 0);
		}
	roundtrip(2, 0);
	frames_clear();
}

static void
test_header(void)
{
	uint8_t *buf;
	struct recfile *r;
	char err[256];
	size_t size;
	unsigned v;

	make_stream(10, 1);
	for (v = 1; v <= 2; v++) {
		size = write_file(&buf, v, 0);
		r = recfile_open_fp(open_bytes(buf, size), err, sizeof(err));
		CU_ASSERT_FATAL(r != NULL);
		CU_ASSERT(recfile_header(r)->version == v);
		CU_ASSERT(strcmp(recfile_header(r)->writer, "unit") == 0);
		CU_ASSERT(strcmp(recfile_header(r)->clock, "clc") == 0);
		CU_ASSERT(recfile_header(r)->created_ns == 12345);
		recfile_close(r);
		memcpy(buf, "NOTAREC!", 8);
		CU_ASSERT(recfile_open_fp(open_bytes(buf, size), err,
		    sizeof(err)) == NULL);
		CU_ASSERT(strstr(err, "not a pmon recording") != NULL);
		free(buf);
	}
	frames_clear();
}

/* Sets the header's format version, with a crc that matches. */
static void
set_version(uint8_t *buf, uint16_t version)
{
	size_t flen = wire_get16(buf + 10);

	wire_put16(buf + 8, version);
	wire_put32(buf + 12 + flen, (uint32_t)crc32(crc32(0L, Z_NULL, 0),
	    buf, (uInt)(12 + flen)));
}

static void
test_newer_version(void)
{
	uint8_t *buf;
	char err[256];
	size_t size;
	int rv;

	make_stream(10, 0);
	size = write_file(&buf, 2, 0);
	set_version(buf, 3);
	read_file(buf, size, &rv, err, sizeof(err), NULL);
	CU_ASSERT(rv == -2);
	CU_ASSERT(strcmp(err, "format version 3; this pmon reads versions "
	    "1 to 2") == 0);
	set_version(buf, 0);
	read_file(buf, size, &rv, err, sizeof(err), NULL);
	CU_ASSERT(rv == -2 && strstr(err, "format version 0;") != NULL);
	set_version(buf, 2);
	CU_ASSERT(read_file(buf, size, &rv, err, sizeof(err), NULL) ==
	    nframes && rv == 0);
	free(buf);
	frames_clear();
}

/*
 * make_stream(12, 1), written by the format 1 writer of pmon before
 * format 2 (common/recfile.c of 71d750f) with 1024-byte blocks.
 */
#include "test_recfile_v1.h"

static void
test_v1_fixture(void)
{
	char err[256];
	size_t n;
	int rv;

	make_stream(12, 1);
	n = read_file(rec_v1_fixture, sizeof(rec_v1_fixture), &rv, err,
	    sizeof(err), NULL);
	CU_ASSERT(rv == 0);
	CU_ASSERT(n == nframes);
	frames_clear();
}

/* The offset an error names: "... at offset N...". */
static long
error_offset(const char *err)
{
	const char *s = strstr(err, "at offset ");

	return s != NULL ? strtol(s + 10, NULL, 10) : -1;
}

static void
truncated_everywhere(unsigned version)
{
	uint8_t *buf;
	size_t size, len, n, last = 0;
	char err[256];
	int rv;

	size = write_file(&buf, version, RECFILE_BLOCK_MIN);
	for (len = 0; len < size; len++) {
		n = read_file(buf, len, &rv, err, sizeof(err), NULL);
		CU_ASSERT_FATAL(rv == -1 || rv == -2);
		CU_ASSERT(strstr(err, "truncated at offset ") != NULL ||
		    (len < 8 && strstr(err, "truncated") != NULL));
		CU_ASSERT(error_offset(err) >= 0 &&
		    (size_t)error_offset(err) <= len);
		/* A longer prefix never gives fewer frames. */
		CU_ASSERT(n >= last);
		last = n;
	}
	CU_ASSERT(last == nframes);	/* all but the end block */
	free(buf);
}

static void
test_truncated_everywhere(void)
{
	make_stream(60, 1);
	truncated_everywhere(1);
	truncated_everywhere(2);
	frames_clear();
}

static void
flipped_bits(unsigned version)
{
	uint8_t *buf;
	size_t size, pos;
	char err[256];
	int rv, bit;

	size = write_file(&buf, version, RECFILE_BLOCK_MIN);
	for (pos = 0; pos < size; pos++)
		for (bit = 0; bit < 8; bit += 3) {
			buf[pos] ^= (uint8_t)(1 << bit);
			read_file(buf, size, &rv, err, sizeof(err), NULL);
			CU_ASSERT_FATAL(rv != 0);
			CU_ASSERT(rv == -2 || (error_offset(err) >= 0 &&
			    (size_t)error_offset(err) <= pos));
			buf[pos] ^= (uint8_t)(1 << bit);
		}
	free(buf);
}

static void
test_flipped_bits(void)
{
	make_stream(40, 1);
	flipped_bits(1);
	flipped_bits(2);
	frames_clear();
}

/*
 * Damage at the start, in the middle and at the last byte of each
 * block: exactly the frames of the blocks before it come back, and the
 * error names the block's offset.
 */
static void
block_damage(unsigned version)
{
	static uint64_t ends[NFRAMES_MAX];
	uint8_t *buf;
	uint64_t start, next;
	size_t size, n, before, blocks, where[3];
	char err[256];
	int rv, j;

	size = write_file(&buf, version, RECFILE_BLOCK_MIN);
	CU_ASSERT_FATAL(read_file(buf, size, &rv, err, sizeof(err), ends) ==
	    nframes && rv == 0);
	/* The blocks, by their headers: after the file's header. */
	for (start = wire_get16(buf + 10) + 16, blocks = 0; start < size;
	    start = next, blocks++) {
		next = start + RECFILE_BLOCK_HDR + wire_get32(buf + start + 8);
		for (before = 0; before < nframes && ends[before] <= start;
		    before++)
			continue;
		where[0] = start;
		where[1] = (start + next) / 2;
		where[2] = next - 1;
		for (j = 0; j < 3; j++) {
			buf[where[j]] ^= 0x40;
			n = read_file(buf, size, &rv, err, sizeof(err), NULL);
			CU_ASSERT(rv == -1);
			CU_ASSERT(n == before);
			CU_ASSERT((uint64_t)error_offset(err) == start);
			buf[where[j]] ^= 0x40;
		}
	}
	CU_ASSERT(blocks > 5);
	free(buf);
}

static void
test_block_damage(void)
{
	make_stream(100, 1);
	block_damage(1);
	block_damage(2);
	frames_clear();
}

/*
 * The state of a big run is more than one wire frame: a REC_SNAPSHOT of
 * 3 MiB comes back whole in both formats; one over the limit is refused.
 */
static void
test_big_snapshot(void)
{
	struct recfile_header h;
	struct recfile_writer *w;
	size_t len = 3 * 1024 * 1024 + 17;
	uint8_t *json;
	char err[256];
	unsigned v;
	FILE *fp;

	json = malloc(RECFILE_SNAPSHOT_MAX + 1);
	CU_ASSERT_FATAL(json != NULL);
	memset(json, 'x', RECFILE_SNAPSHOT_MAX + 1);
	frames_clear();
	make_stream(20, 0);
	add(REC_SNAPSHOT, json, len);
	wire_put32(json, 0x40001);
	add(MSG_TASK_GONE, json, 4);	/* what follows it comes back too */
	for (v = 1; v <= 2; v++)
		roundtrip(v, 0);
	header_init(&h, 0);
	fp = fopen("/dev/null", "w");
	CU_ASSERT_FATAL(fp != NULL);
	w = recfile_create_fp(fp, &h, 0, err, sizeof(err));
	CU_ASSERT_FATAL(w != NULL);
	CU_ASSERT(recfile_write_frame(w, REC_SNAPSHOT, json,
	    RECFILE_SNAPSHOT_MAX + 1) == -1);
	CU_ASSERT(strstr(recfile_writer_error(w), "too large") != NULL);
	recfile_writer_free(w);
	free(json);
	frames_clear();
}

static void
test_writer_limits(void)
{
	struct recfile_header h;
	char err[256];
	FILE *fp;

	header_init(&h, 0);
	fp = fopen("/dev/null", "w");
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT(recfile_create_fp(fp, &h, 10, err, sizeof(err)) == NULL);
	header_init(&h, RECFILE_VERSION + 1);
	fp = fopen("/dev/null", "w");
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT(recfile_create_fp(fp, &h, 0, err, sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "format version") != NULL);
	header_init(&h, 0);
	CU_ASSERT(recfile_create("/nonexistent/dir/x.pmr", &h, 0, err,
	    sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "/nonexistent/dir/x.pmr") != NULL);
}

static CU_TestInfo recfile_tests[] = {
	{ "round trip, formats 1 and 2", test_roundtrip },
	{ "format 2 packs a repeated pattern", test_packs },
	{ "more tasks than format 2 packs", test_many_tasks },
	{ "more calls than a task has slots", test_many_calls },
	{ "header and magic", test_header },
	{ "a newer format is refused", test_newer_version },
	{ "a format 1 file of the old writer", test_v1_fixture },
	{ "truncated at every byte", test_truncated_everywhere },
	{ "a flipped bit anywhere", test_flipped_bits },
	{ "damage in a block loses it and what follows", test_block_damage },
	{ "writer limits", test_writer_limits },
	{ "a snapshot bigger than a wire frame", test_big_snapshot },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo recfile_suites[] = {
	{ "recfile", NULL, NULL, NULL, NULL, recfile_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(recfile_suites)
