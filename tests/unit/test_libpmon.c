/*
 * libpmon's frame reader: real encoded frames (TASK_INFO, EVENT with
 * records from record_encode, FLUSH_DONE, BYE) reach the callbacks with
 * every field intact, and malformed input from the coordinator (truncated,
 * wrong version, oversized, garbage, inconsistent) is an error that says
 * what was wrong instead of a crash or a silent skip.  Connecting sends
 * the secret from the file next to the socket, and a refusal reaches
 * pmon_error() with the coordinator's words.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "coord.h"
#include "pmon-internal.h"
#include "pmon.h"
#include "proto.h"
#include "record.h"
#include "secret.h"
#include "unit.h"
#include "wire.h"

#define T_MASTER	0x40001
#define T_SLAVE		0x40002

/* What the callbacks saw, copied out of the library's buffers. */
struct seen {
	int		 ntasks;
	struct pmon_task task;
	char		 task_host[64];
	char		 task_program[64];

	int		 nevents;
	struct pmon_event ev;
	char		 ev_host[64];
	char		 ev_program[64];
	char		 ev_group[64];
	int32_t		 ev_peers[8];

	int		 nflush;
	uint32_t	 flush_id;

	int		 nbye;
	char		 bye[64];

	int		 nsnap;
	char		 snap[64];
};

static struct seen seen;
static struct pmon *p;
static int sv[2];

static void
cb_task(const struct pmon_task *t, void *arg)
{
	(void)arg;
	seen.ntasks++;
	seen.task = *t;
	snprintf(seen.task_host, sizeof(seen.task_host), "%s", t->host);
	snprintf(seen.task_program, sizeof(seen.task_program), "%s",
	    t->program);
}

static void
cb_event(const struct pmon_event *ev, void *arg)
{
	unsigned i;

	(void)arg;
	seen.nevents++;
	seen.ev = *ev;
	snprintf(seen.ev_host, sizeof(seen.ev_host), "%s", ev->task->host);
	snprintf(seen.ev_program, sizeof(seen.ev_program), "%s",
	    ev->task->program);
	snprintf(seen.ev_group, sizeof(seen.ev_group), "%s", ev->group);
	for (i = 0; i < ev->npeers && i < 8; i++)
		seen.ev_peers[i] = ev->peers[i];
}

static void
cb_flush(uint32_t id, void *arg)
{
	(void)arg;
	seen.nflush++;
	seen.flush_id = id;
}

static void
cb_bye(const char *reason, void *arg)
{
	(void)arg;
	seen.nbye++;
	snprintf(seen.bye, sizeof(seen.bye), "%s", reason);
}

static void
cb_snapshot(const char *json, size_t len, void *arg)
{
	(void)arg;
	seen.nsnap++;
	snprintf(seen.snap, sizeof(seen.snap), "%.*s", (int)len, json);
}

static const struct pmon_callbacks callbacks = {
	.task = cb_task, .event = cb_event, .flush_done = cb_flush,
	.bye = cb_bye, .snapshot = cb_snapshot
};

static void
setup(void)
{
	memset(&seen, 0, sizeof(seen));
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	p = pmon_new();
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(pmon_attach_fd(p, sv[0]) == 0);
	pmon_set_callbacks(p, &callbacks, NULL);
}

static void
teardown(void)
{
	pmon_free(p);		/* closes sv[0] */
	p = NULL;
	if (sv[1] != -1)
		close(sv[1]);
}

/* --- frame builders ---------------------------------------------------- */

/* Events carry a corrected time this far from their raw one. */
#define T_CORR_SHIFT	1234567ULL

struct frame {
	uint8_t		 buf[2048];
	size_t		 len;
};

static void
frame_finish(struct frame *f, uint8_t type, uint8_t *end)
{
	f->len = (size_t)(end - f->buf);
	frame_hdr_encode(f->buf, type, (uint32_t)(f->len - FRAME_HDR_SIZE));
}

static void
mk_task_info(struct frame *f, int32_t tid, int32_t parent, const char *host,
    const char *program)
{
	uint8_t *q = f->buf + FRAME_HDR_SIZE;

	wire_put32(q, (uint32_t)tid);
	wire_put32(q + 4, (uint32_t)parent);
	wire_put32(q + 8, 4242);
	wire_put64(q + 12, parent ? 7 : 0);
	q = wire_putstr(q + 20, host);
	q = wire_putstr(q, program);
	frame_finish(f, MSG_TASK_INFO, q);
}

static void
mk_record(struct record *r, uint8_t call, uint8_t phase, uint64_t seq)
{
	memset(r, 0, sizeof(*r));
	r->call = call;
	r->phase = phase;
	r->seq = seq;
	r->t_ns = 1700000000123456789ULL;
	r->rc = 0;
	r->peer = -1;
	r->tag = -1;
	r->inst = -1;
}

static void
mk_event(struct frame *f, int32_t tid, uint8_t flags, int32_t mtid,
    uint64_t mseq, const struct record *r, const int32_t *peers)
{
	uint8_t *q = f->buf + FRAME_HDR_SIZE;

	wire_put32(q, (uint32_t)tid);
	q[4] = flags;
	wire_put32(q + 5, (uint32_t)mtid);
	wire_put64(q + 9, mseq);
	wire_put64(q + 17, r->t_ns + T_CORR_SHIFT);
	q += EVENT_HDR_SIZE;
	q += record_encode(q, r, peers);
	frame_finish(f, MSG_EVENT, q);
}

static void
mk_u32(struct frame *f, uint8_t type, uint32_t v)
{
	wire_put32(f->buf + FRAME_HDR_SIZE, v);
	frame_finish(f, type, f->buf + FRAME_HDR_SIZE + 4);
}

static void
mk_str(struct frame *f, uint8_t type, const char *s)
{
	frame_finish(f, type, wire_putstr(f->buf + FRAME_HDR_SIZE, s));
}

/* A REPLY frame: id, status, more and a part of the body. */
static void
mk_reply(struct frame *f, uint32_t id, int more, const char *body)
{
	uint8_t *q = f->buf + FRAME_HDR_SIZE;

	wire_put32(q, id);
	q[4] = REPLY_OK;
	q[5] = (uint8_t)more;
	memcpy(q + REPLY_HDR_SIZE, body, strlen(body));
	frame_finish(f, MSG_REPLY, q + REPLY_HDR_SIZE + strlen(body));
}

/* A send begin of the master to the slave, seq 3, tag 22, 16 bytes. */
static void
mk_send(struct frame *f)
{
	struct record r;

	mk_record(&r, PMON_CALL_send, PMON_BEGIN, 3);
	r.peer = T_SLAVE;
	r.tag = 22;
	r.bytes = 16;
	mk_event(f, T_MASTER, 0, 0, 0, &r, NULL);
}

static void
put(const struct frame *f)
{
	CU_ASSERT_FATAL(write(sv[1], f->buf, f->len) == (ssize_t)f->len);
}

static void
put_raw(const void *buf, size_t len)
{
	CU_ASSERT_FATAL(write(sv[1], buf, len) == (ssize_t)len);
}

/* Dispatches until the socket is drained; returns the last result. */
static int
drain(void)
{
	int rv;

	while ((rv = pmon_wait(p, 50)) == 1)
		;
	return rv;
}

static void
put_master(void)
{
	struct frame f;

	mk_task_info(&f, T_MASTER, 0, "hosta", "master1");
	put(&f);
}

/* --- well-formed streams ------------------------------------------------ */

static void
test_task_info(void)
{
	put_master();
	CU_ASSERT(drain() == 0);
	CU_ASSERT(seen.ntasks == 1);
	CU_ASSERT(seen.task.tid == T_MASTER);
	CU_ASSERT(seen.task.parent == 0);
	CU_ASSERT(seen.task.pid == 4242);
	CU_ASSERT(seen.task.spawn_seq == 0);
	CU_ASSERT_STRING_EQUAL(seen.task_host, "hosta");
	CU_ASSERT_STRING_EQUAL(seen.task_program, "master1");
}

/* What a recorder gets: every stream frame as it came, TASK_GONE too. */
static struct {
	int		 n;
	int		 types[4];
	uint8_t		 bytes[4][2048];
	size_t		 lens[4];
} raw;

static void
cb_frame(int type, const void *payload, size_t len, void *arg)
{
	(void)arg;
	if (raw.n < 4 && len <= sizeof(raw.bytes[0])) {
		raw.types[raw.n] = type;
		memcpy(raw.bytes[raw.n], payload, len);
		raw.lens[raw.n++] = len;
	}
}

static void
test_frame_callback(void)
{
	struct pmon_callbacks cb = callbacks;
	struct frame info, ev, gone, done;

	memset(&raw, 0, sizeof(raw));
	cb.frame = cb_frame;
	pmon_set_callbacks(p, &cb, NULL);
	mk_task_info(&info, T_MASTER, 0, "hosta", "master1");
	mk_send(&ev);
	mk_u32(&gone, MSG_TASK_GONE, (uint32_t)T_MASTER);
	mk_u32(&done, MSG_FLUSH_DONE, 1);
	put(&info);
	put(&ev);
	put(&gone);
	put(&done);
	CU_ASSERT(drain() == 0);
	CU_ASSERT(seen.ntasks == 1 && seen.nevents == 1);
	CU_ASSERT_FATAL(raw.n == 3);	/* FLUSH_DONE is no stream frame */
	CU_ASSERT(raw.types[0] == MSG_TASK_INFO && raw.types[1] == MSG_EVENT &&
	    raw.types[2] == MSG_TASK_GONE);
	CU_ASSERT(raw.lens[1] == ev.len - FRAME_HDR_SIZE &&
	    memcmp(raw.bytes[1], ev.buf + FRAME_HDR_SIZE, raw.lens[1]) == 0);
	CU_ASSERT(raw.lens[2] == 4);
}

static void
test_send_event(void)
{
	struct frame f;

	put_master();
	mk_send(&f);
	put(&f);
	CU_ASSERT(drain() == 0);
	CU_ASSERT_FATAL(seen.nevents == 1);
	CU_ASSERT(seen.ev.tid == T_MASTER);
	CU_ASSERT(seen.ev.seq == 3);
	CU_ASSERT(seen.ev.t_ns == 1700000000123456789ULL);
	CU_ASSERT(seen.ev.t_corr == 1700000000123456789ULL + T_CORR_SHIFT);
	CU_ASSERT(seen.ev.call == PMON_CALL_send);
	CU_ASSERT_STRING_EQUAL(seen.ev.call_name, "pvm_send");
	CU_ASSERT(seen.ev.phase == PMON_PHASE_BEGIN);
	CU_ASSERT(seen.ev.flags == 0);
	CU_ASSERT(seen.ev.peer == T_SLAVE);
	CU_ASSERT(seen.ev.tag == 22);
	CU_ASSERT(seen.ev.bytes == 16);
	CU_ASSERT(seen.ev.inst == -1);
	CU_ASSERT(seen.ev.npeers == 0);
	CU_ASSERT_STRING_EQUAL(seen.ev_group, "");
	CU_ASSERT_STRING_EQUAL(seen.ev_host, "hosta");
	CU_ASSERT_STRING_EQUAL(seen.ev_program, "master1");
}

static void
test_bcast_peers_group(void)
{
	static const int32_t peers[3] = { 0x40002, 0x40003, 0x80004 };
	struct frame f;
	struct record r;

	put_master();
	mk_record(&r, PMON_CALL_bcast, PMON_END, 9);
	r.tag = 5;
	r.rc = 0;
	r.inst = 2;
	r.group = "workers";
	r.glen = 7;
	r.npeers = 3;
	mk_event(&f, T_MASTER, 0, 0, 0, &r, peers);
	put(&f);
	CU_ASSERT(drain() == 0);
	CU_ASSERT_FATAL(seen.nevents == 1);
	CU_ASSERT(seen.ev.phase == PMON_PHASE_END);
	CU_ASSERT(seen.ev.inst == 2);
	CU_ASSERT_STRING_EQUAL(seen.ev_group, "workers");
	CU_ASSERT(seen.ev.npeers == 3);
	CU_ASSERT(seen.ev_peers[0] == 0x40002);
	CU_ASSERT(seen.ev_peers[1] == 0x40003);
	CU_ASSERT(seen.ev_peers[2] == 0x80004);
}

static void
test_matched_recv(void)
{
	struct frame f;
	struct record r;

	mk_task_info(&f, T_SLAVE, T_MASTER, "hostb", "slave1");
	put(&f);
	mk_record(&r, PMON_CALL_recv, PMON_END, 12);
	r.peer = T_MASTER;
	r.tag = 22;
	r.bytes = 16;
	r.rc = 7;
	r.flags = RECORD_MSG;
	mk_event(&f, T_SLAVE, EVENT_MATCHED, T_MASTER, 3, &r, NULL);
	put(&f);
	CU_ASSERT(drain() == 0);
	CU_ASSERT(seen.task.parent == T_MASTER);
	CU_ASSERT(seen.task.spawn_seq == 7);
	CU_ASSERT_FATAL(seen.nevents == 1);
	CU_ASSERT(seen.ev.flags == (PMON_EV_MATCHED | PMON_EV_MSG));
	CU_ASSERT(seen.ev.match_tid == T_MASTER);
	CU_ASSERT(seen.ev.match_seq == 3);
	CU_ASSERT(seen.ev.rc == 7);
	CU_ASSERT_STRING_EQUAL(seen.ev_program, "slave1");
}

static void
test_unmatched_and_lost(void)
{
	struct frame f;
	struct record r;

	put_master();
	mk_record(&r, PMON_CALL_recv, PMON_END, 4);
	r.flags = RECORD_MSG;
	mk_event(&f, T_MASTER, EVENT_UNMATCHED, 0, 0, &r, NULL);
	put(&f);
	CU_ASSERT(drain() == 0);
	CU_ASSERT(seen.ev.flags == (PMON_EV_UNMATCHED | PMON_EV_MSG));

	mk_record(&r, PMON_CALL_LOST, PMON_BEGIN, 5);
	r.bytes = 31;
	mk_event(&f, T_MASTER, EVENT_LOST, 0, 0, &r, NULL);
	put(&f);
	CU_ASSERT(drain() == 0);
	CU_ASSERT(seen.nevents == 2);
	CU_ASSERT(seen.ev.flags == PMON_EV_LOST);
	CU_ASSERT_STRING_EQUAL(seen.ev.call_name, "lost");
	CU_ASSERT(seen.ev.bytes == 31);
}

/* A TASK_INFO for a known tid (the tid was reused) replaces its names. */
static void
test_task_info_update(void)
{
	struct frame f;

	put_master();
	mk_task_info(&f, T_MASTER, 0, "hostc", "other");
	put(&f);
	mk_send(&f);
	put(&f);
	CU_ASSERT(drain() == 0);
	CU_ASSERT(seen.ntasks == 2);
	CU_ASSERT_STRING_EQUAL(seen.ev_host, "hostc");
	CU_ASSERT_STRING_EQUAL(seen.ev_program, "other");
}

/* Frames split at every byte boundary decode the same. */
static void
test_byte_by_byte(void)
{
	struct frame a, b;
	size_t i;

	mk_task_info(&a, T_MASTER, 0, "hosta", "master1");
	mk_send(&b);
	for (i = 0; i < a.len; i++)
		CU_ASSERT_FATAL(pmon_feed(p, a.buf + i, 1) == 0);
	for (i = 0; i < b.len; i++) {
		CU_ASSERT(seen.nevents == 0);
		CU_ASSERT_FATAL(pmon_feed(p, b.buf + i, 1) == 0);
	}
	CU_ASSERT(seen.ntasks == 1);
	CU_ASSERT(seen.nevents == 1);
	CU_ASSERT(seen.ev.tag == 22);
}

/* Many tasks, announced out of order, stay findable. */
static void
test_many_tasks(void)
{
	struct frame f;
	char prog[32];
	int i;

	for (i = 0; i < 300; i++) {
		snprintf(prog, sizeof(prog), "p%d", (i * 7919) % 300);
		mk_task_info(&f, 1 + (i * 7919) % 300, 0, "h", prog);
		CU_ASSERT_FATAL(pmon_feed(p, f.buf, f.len) == 0);
	}
	for (i = 1; i <= 300; i++) {
		struct record r;

		mk_record(&r, PMON_CALL_mytid, PMON_END, 1);
		mk_event(&f, i, 0, 0, 0, &r, NULL);
		CU_ASSERT_FATAL(pmon_feed(p, f.buf, f.len) == 0);
		snprintf(prog, sizeof(prog), "p%d", i - 1);
		CU_ASSERT_STRING_EQUAL(seen.ev_program, prog);
	}
}

/* The largest record (every peer, the longest group name) fits. */
static void
test_max_record(void)
{
	static int32_t peers[RECORD_PEERS_MAX];
	static char group[RECORD_GROUP_MAX + 1];
	static uint8_t buf[FRAME_HDR_SIZE + EVENT_HDR_SIZE + RECORD_MAX_SIZE];
	struct record r;
	size_t len;
	int i;

	for (i = 0; i < RECORD_PEERS_MAX; i++)
		peers[i] = 0x40000 + i;
	memset(group, 'g', RECORD_GROUP_MAX);
	put_master();
	CU_ASSERT(drain() == 0);
	mk_record(&r, PMON_CALL_mcast, PMON_BEGIN, 8);
	r.npeers = RECORD_PEERS_MAX;
	r.glen = RECORD_GROUP_MAX;
	r.group = group;
	wire_put32(buf + FRAME_HDR_SIZE, T_MASTER);
	memset(buf + FRAME_HDR_SIZE + 4, 0, EVENT_HDR_SIZE - 4);
	len = EVENT_HDR_SIZE + record_encode(buf + FRAME_HDR_SIZE + EVENT_HDR_SIZE, &r, peers);
	frame_hdr_encode(buf, MSG_EVENT, (uint32_t)len);
	CU_ASSERT_FATAL(pmon_feed(p, buf, FRAME_HDR_SIZE + len) == 0);
	CU_ASSERT(seen.nevents == 1);
	CU_ASSERT(seen.ev.npeers == RECORD_PEERS_MAX);
	CU_ASSERT(seen.ev.peers[RECORD_PEERS_MAX - 1] ==
	    0x40000 + RECORD_PEERS_MAX - 1);
	CU_ASSERT(strlen(seen.ev.group) == RECORD_GROUP_MAX);
}

/* pmon_flush sends FLUSH(id) and returns once FLUSH_DONE(id) arrived. */
static void
test_flush(void)
{
	struct frame f;
	uint8_t got[12];
	uint32_t id;

	put_master();
	mk_send(&f);
	put(&f);
	mk_u32(&f, MSG_FLUSH_DONE, 1);	/* the answer to the first flush */
	put(&f);
	CU_ASSERT(pmon_flush(p) == 0);
	CU_ASSERT(seen.nevents == 1);	/* released before the flush done */
	CU_ASSERT(seen.nflush == 1);
	CU_ASSERT(seen.flush_id == 1);
	CU_ASSERT_FATAL(read(sv[1], got, sizeof(got)) == 12);
	CU_ASSERT(got[0] == PROTO_MAGIC && got[1] == PROTO_VERSION);
	CU_ASSERT(got[2] == MSG_FLUSH);
	CU_ASSERT(wire_get32(got + 4) == 4);
	CU_ASSERT(wire_get32(got + 8) == 1);

	CU_ASSERT(pmon_send_flush(p, &id) == 0);
	CU_ASSERT(id == 2);
}

/*
 * The snapshot (REPLY id 0) may come right behind a request's reply, in
 * the same read, or between two frames of it: each reaches its own
 * reader whole and alone, in stream order: what comes after the reply
 * waits until pmon_request has returned (pmon_pending), even when it
 * came in the same read.
 */
static void
test_reply_and_snapshot(void)
{
	struct frame f;
	uint8_t buf[64];
	char *reply;
	size_t len;

	mk_reply(&f, 1, 1, "{\"hosts\":");
	put(&f);
	mk_reply(&f, 0, 1, "{\"position\":");
	put(&f);
	mk_reply(&f, 1, 0, "[]}");
	put(&f);
	mk_reply(&f, 0, 0, "7}");
	put(&f);
	CU_ASSERT_FATAL(pmon_request(p, "hosts", PMON_JSON, &reply, &len) == 0);
	CU_ASSERT_STRING_EQUAL(reply, "{\"hosts\":[]}");
	CU_ASSERT(len == strlen(reply));
	free(reply);
	CU_ASSERT(seen.nsnap == 0);
	CU_ASSERT(pmon_pending(p));
	CU_ASSERT(pmon_dispatch(p) == 0);
	CU_ASSERT(!pmon_pending(p));
	CU_ASSERT(seen.nsnap == 1);
	CU_ASSERT_STRING_EQUAL(seen.snap, "{\"position\":7}");
	mk_reply(&f, 2, 0, "{\"ok\":1}");
	put(&f);
	mk_reply(&f, 0, 0, "{\"position\":8}");
	put(&f);
	CU_ASSERT_FATAL(pmon_request(p, "ps", PMON_JSON, &reply, &len) == 0);
	CU_ASSERT_STRING_EQUAL(reply, "{\"ok\":1}");
	free(reply);
	CU_ASSERT(drain() == 0);
	CU_ASSERT(seen.nsnap == 2);
	CU_ASSERT_STRING_EQUAL(seen.snap, "{\"position\":8}");
	while (read(sv[1], buf, sizeof(buf)) == (ssize_t)sizeof(buf))
		;
}

/*
 * pmon_set_timeout: a request with no reply in time fails, ETIMEDOUT and
 * said, and its reply coming later (in two parts) is dropped, not taken
 * for the next request's nor for a protocol error; a flush that does not
 * complete in time fails the same way.
 */
static void
test_request_timeout(void)
{
	struct frame f;
	uint8_t buf[64];
	char *reply;
	size_t len;

	pmon_set_timeout(p, 100);
	CU_ASSERT(pmon_request(p, "ps", PMON_JSON, &reply, &len) == -1);
	CU_ASSERT(errno == ETIMEDOUT);
	CU_ASSERT_STRING_EQUAL(pmon_error(p), "no reply to \"ps\" in 100 ms");
	CU_ASSERT_PTR_NULL(reply);
	mk_reply(&f, 1, 1, "{\"late\":");
	put(&f);
	mk_reply(&f, 1, 0, "1}");
	put(&f);
	mk_reply(&f, 2, 0, "{\"hosts\":[]}");
	put(&f);
	CU_ASSERT_FATAL(pmon_request(p, "hosts", PMON_JSON, &reply, &len) == 0);
	CU_ASSERT_STRING_EQUAL(reply, "{\"hosts\":[]}");
	free(reply);
	CU_ASSERT(pmon_flush(p) == -1);
	CU_ASSERT(errno == ETIMEDOUT);
	CU_ASSERT_STRING_EQUAL(pmon_error(p),
	    "the flush did not complete in 100 ms");
	CU_ASSERT(!pmon_closed(p));
	while (read(sv[1], buf, sizeof(buf)) == (ssize_t)sizeof(buf))
		;
}

static void
test_shutdown_request(void)
{
	uint8_t got[16];

	CU_ASSERT(pmon_send_shutdown(p) == 0);
	CU_ASSERT_FATAL(read(sv[1], got, sizeof(got)) == FRAME_HDR_SIZE);
	CU_ASSERT(got[2] == MSG_SHUTDOWN);
	CU_ASSERT(wire_get32(got + 4) == 0);
}

static void
test_bye(void)
{
	struct frame f;

	put_master();
	mk_str(&f, MSG_BYE, "coordinator shutting down");
	put(&f);
	mk_send(&f);		/* nothing after BYE is decoded */
	put(&f);
	CU_ASSERT(drain() == -1);
	CU_ASSERT(pmon_closed(p) == 1);
	CU_ASSERT(seen.nbye == 1);
	CU_ASSERT_STRING_EQUAL(seen.bye, "coordinator shutting down");
	CU_ASSERT(seen.nevents == 0);
	CU_ASSERT(strstr(pmon_error(p), "coordinator shutting down") != NULL);
	CU_ASSERT(pmon_dispatch(p) == -1);
}

static void
test_eof(void)
{
	put_master();
	close(sv[1]);
	sv[1] = -1;
	CU_ASSERT(drain() == -1);
	CU_ASSERT(pmon_closed(p) == 1);
	CU_ASSERT(seen.ntasks == 1);
}

/* A flush the coordinator cannot finish fails instead of hanging. */
static void
test_flush_then_close(void)
{
	struct frame f;

	mk_str(&f, MSG_BYE, "bye");
	put(&f);
	CU_ASSERT(pmon_flush(p) == -1);
	CU_ASSERT(strstr(pmon_error(p), "flush") != NULL);
}

/* --- malformed input ---------------------------------------------------- */

/* Expects the stream so far to fail with an error containing what. */
static void
expect_error(const char *what)
{
	CU_ASSERT(drain() == -1);
	CU_ASSERT(pmon_closed(p) == 0);
	if (strstr(pmon_error(p), what) == NULL) {
		fprintf(stderr, "\nerror \"%s\" lacks \"%s\"\n",
		    pmon_error(p), what);
		CU_FAIL("wrong error text");
	}
	CU_ASSERT(seen.nevents == 0);
	CU_ASSERT(pmon_dispatch(p) == -1);	/* the handle stays failed */
}

static void
test_truncated(void)
{
	struct frame f;

	put_master();
	mk_send(&f);
	put_raw(f.buf, f.len - 5);
	close(sv[1]);
	sv[1] = -1;
	expect_error("middle of a frame");
}

static void
test_wrong_version(void)
{
	struct frame f;

	put_master();
	mk_send(&f);
	f.buf[1] = PROTO_VERSION + 1;
	put(&f);
	expect_error("version");
}

/* An oversized length fails on the header alone, before the payload. */
static void
test_oversized(void)
{
	uint8_t hdr[FRAME_HDR_SIZE];

	frame_hdr_encode(hdr, MSG_EVENT, PROTO_MAX_PAYLOAD + 1);
	CU_ASSERT(pmon_feed(p, hdr, sizeof(hdr)) == -1);
	CU_ASSERT(strstr(pmon_error(p), "too long") != NULL);
}

static void
test_garbage(void)
{
	put_raw("GET / HTTP/1.0\r\n\r\n", 18);
	expect_error("bad magic");
}

static void
test_unknown_task(void)
{
	struct frame f;

	mk_send(&f);
	put(&f);
	expect_error("before its TASK_INFO");
}

static void
test_trailing_bytes(void)
{
	struct frame f;

	mk_task_info(&f, T_MASTER, 0, "hosta", "master1");
	f.buf[f.len++] = 0;		/* one byte beyond the last string */
	wire_put32(f.buf + 4, (uint32_t)(f.len - FRAME_HDR_SIZE));
	put(&f);
	expect_error("TASK_INFO");
	CU_ASSERT(seen.ntasks == 0);
}

static void
test_bad_record(void)
{
	struct frame f;

	put_master();
	mk_send(&f);
	f.buf[FRAME_HDR_SIZE + EVENT_HDR_SIZE + 2] = 0;	/* call "none" */
	put(&f);
	expect_error("unknown call");
}

static void
test_record_short(void)
{
	struct frame f;

	put_master();
	mk_send(&f);
	/* Claim one byte more than the frame holds. */
	wire_put16(f.buf + FRAME_HDR_SIZE + EVENT_HDR_SIZE, RECORD_HDR_SIZE + 1);
	put(&f);
	expect_error("EVENT");
}

static void
test_bad_event_flags(void)
{
	struct frame f;
	struct record r;

	put_master();
	mk_record(&r, PMON_CALL_recv, PMON_END, 4);
	mk_event(&f, T_MASTER, EVENT_MATCHED | EVENT_UNMATCHED, T_SLAVE, 2,
	    &r, NULL);
	put(&f);
	expect_error("both matched and unmatched");
}

static void
test_unexpected_type(void)
{
	struct frame f;

	mk_u32(&f, MSG_FLUSH, 1);
	put(&f);
	expect_error("unexpected FLUSH");
}

static void
test_error_frame(void)
{
	struct frame f;

	mk_str(&f, MSG_ERROR, "you are too slow");
	put(&f);
	expect_error("you are too slow");
}

static void
test_bad_string(void)
{
	struct frame f;

	mk_str(&f, MSG_BYE, "abc");
	f.buf[FRAME_HDR_SIZE + 3] = '\0';	/* a NUL inside the reason */
	put(&f);
	expect_error("BYE");
	CU_ASSERT(seen.nbye == 0);
}

/* --- connecting through a real socket path ----------------------------- */

static char sockdir[32];
static char sockpath[96];
static char secretpath[96];

#define SECRET "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static int
conn_setup(void)
{
	snprintf(sockdir, sizeof(sockdir), "/tmp/pmon-unit.XXXXXX");
	if (mkdtemp(sockdir) == NULL)
		return 1;
	snprintf(sockpath, sizeof(sockpath), "%s/pmon-coord.%u", sockdir,
	    (unsigned)getuid());
	snprintf(secretpath, sizeof(secretpath), "%s/pmon-secret.%u", sockdir,
	    (unsigned)getuid());
	return 0;
}

static int
conn_teardown(void)
{
	unlink(sockpath);
	unlink(secretpath);
	rmdir(sockdir);
	return 0;
}

/* A coordinator's socket at sockpath; returns the listening fd. */
static int
conn_listen(void)
{
	struct sockaddr_un sun;
	int lfd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sockpath);
	unlink(sockpath);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	CU_ASSERT_FATAL(lfd != -1);
	CU_ASSERT_FATAL(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	CU_ASSERT_FATAL(listen(lfd, 1) == 0);
	return lfd;
}

/* Accepts the tool and reads its hello as the coordinator decodes it. */
static int
conn_hello(int lfd, struct tool_hello *h)
{
	uint8_t got[256];
	const char *why = "";
	struct frame_hdr fh;
	ssize_t n;
	int afd;

	CU_ASSERT_FATAL((afd = accept(lfd, NULL, NULL)) != -1);
	n = read(afd, got, sizeof(got));
	CU_ASSERT_FATAL(n >= FRAME_HDR_SIZE);
	CU_ASSERT_FATAL(frame_hdr_decode(got, &fh, &why) == 0);
	CU_ASSERT_FATAL(fh.type == MSG_TOOL_HELLO);
	CU_ASSERT_FATAL(n == FRAME_HDR_SIZE + (ssize_t)fh.len);
	CU_ASSERT_FATAL(tool_hello_decode(got + FRAME_HDR_SIZE, fh.len,
	    h, &why) == 0);
	return afd;
}

static void
test_connect_hello(void)
{
	struct tool_hello h;
	struct pmon *c;
	int lfd, afd;

	lfd = conn_listen();
	CU_ASSERT_FATAL(pmon_secret_write(secretpath, SECRET) == 0);
	setenv("PVM_TMP", sockdir, 1);
	c = pmon_new();
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_FATAL(pmon_connect(c, NULL, "unit", PMON_SUBSCRIBE) == 0);
	afd = conn_hello(lfd, &h);
	CU_ASSERT(h.flags == TOOL_SUBSCRIBE);
	CU_ASSERT_STRING_EQUAL(h.name, "unit");
	close(afd);
	CU_ASSERT(pmon_wait(c, 1000) == -1);
	pmon_free(c);

	/* A recorder: PMON_RECORD only with a subscription. */
	c = pmon_new();
	CU_ASSERT(pmon_connect(c, NULL, "unit", PMON_RECORD) == -1);
	CU_ASSERT(strstr(pmon_error(c), "PMON_SUBSCRIBE") != NULL);
	pmon_free(c);
	c = pmon_new();
	CU_ASSERT_FATAL(pmon_connect(c, NULL, "unit", PMON_SUBSCRIBE |
	    PMON_RECORD) == 0);
	afd = conn_hello(lfd, &h);
	CU_ASSERT(h.flags == (TOOL_SUBSCRIBE | TOOL_RECORD));
	CU_ASSERT_STRING_EQUAL(h.secret, SECRET);
	close(afd);
	CU_ASSERT(pmon_wait(c, 1000) == -1);
	CU_ASSERT(pmon_closed(c) == 1);
	pmon_free(c);

	/* An explicit path: the secret next to it. */
	unsetenv("PVM_TMP");
	c = pmon_new();
	CU_ASSERT_FATAL(pmon_connect(c, sockpath, NULL, 0) == 0);
	afd = conn_hello(lfd, &h);
	CU_ASSERT_STRING_EQUAL(h.name, "libpmon");
	CU_ASSERT_STRING_EQUAL(h.secret, SECRET);
	close(afd);
	pmon_free(c);
	close(lfd);
	unlink(sockpath);
	unlink(secretpath);
}

/* No secret file: pmon_connect fails and names it. */
static void
test_connect_no_secret(void)
{
	struct pmon *c;
	int lfd;

	lfd = conn_listen();
	unlink(secretpath);
	setenv("PVM_TMP", sockdir, 1);
	c = pmon_new();
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT(pmon_connect(c, NULL, "unit", 0) == -1);
	CU_ASSERT(strstr(pmon_error(c), secretpath) != NULL);
	CU_ASSERT(strstr(pmon_error(c), "secret") != NULL);
	CU_ASSERT(strstr(pmon_error(c), strerror(ENOENT)) != NULL);
	CU_ASSERT(pmon_fd(c) == -1);
	pmon_free(c);

	/* Readable by others: refused too. */
	CU_ASSERT_FATAL(pmon_secret_write(secretpath, SECRET) == 0);
	CU_ASSERT_FATAL(chmod(secretpath, 0644) == 0);
	c = pmon_new();
	CU_ASSERT(pmon_connect(c, NULL, "unit", 0) == -1);
	CU_ASSERT(strstr(pmon_error(c), "mode 0600") != NULL);
	pmon_free(c);
	close(lfd);
	unlink(sockpath);
	unlink(secretpath);
	unsetenv("PVM_TMP");
}

/*
 * A coordinator that refuses the secret says so and closes: the tool's
 * next call reports its words, even when that call is a send that
 * finds the connection gone.
 */
static void
test_connect_refused(void)
{
	static const char *const why = "wrong secret (not the one in X)";
	struct tool_hello h;
	struct evbuffer *eb;
	struct pmon *c;
	int lfd, afd, round;

	lfd = conn_listen();
	CU_ASSERT_FATAL(pmon_secret_write(secretpath, SECRET) == 0);
	setenv("PVM_TMP", sockdir, 1);
	for (round = 0; round < 2; round++) {
		c = pmon_new();
		CU_ASSERT_FATAL(pmon_connect(c, NULL, "unit", 0) == 0);
		afd = conn_hello(lfd, &h);
		eb = evbuffer_new();
		coord_frame_text(eb, MSG_ERROR, why);
		CU_ASSERT_FATAL(evbuffer_write(eb, afd) > 0);
		evbuffer_free(eb);
		close(afd);
		if (round == 0) {
			CU_ASSERT(pmon_flush(c) == -1);
		} else {
			usleep(20000);	/* the close is in: a send fails */
			CU_ASSERT(pmon_send_flush(c, NULL) == -1);
		}
		CU_ASSERT(strstr(pmon_error(c), why) != NULL);
		CU_ASSERT(pmon_closed(c) == 0);
		pmon_free(c);
	}
	close(lfd);
	unlink(sockpath);
	unlink(secretpath);
	unsetenv("PVM_TMP");
}

static void
test_connect_missing(void)
{
	struct pmon *c;

	setenv("PVM_TMP", sockdir, 1);
	c = pmon_new();
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT(pmon_connect(c, NULL, "unit", 0) == -1);
	CU_ASSERT(strstr(pmon_error(c), "no pmon coordinator") != NULL);
	CU_ASSERT(strstr(pmon_error(c), sockdir) != NULL);
	CU_ASSERT(strstr(pmon_error(c), "pmon start") != NULL);
	pmon_free(c);
	unsetenv("PVM_TMP");
}

/* --- recordings ---------------------------------------------------------- */

static char recpath[64];

static void
rec_setup(void)
{
	int fd;

	memset(&seen, 0, sizeof(seen));
	memset(&raw, 0, sizeof(raw));
	snprintf(recpath, sizeof(recpath), "/tmp/pmon-unit-rec.XXXXXX");
	CU_ASSERT_FATAL((fd = mkstemp(recpath)) != -1);
	close(fd);
	p = pmon_new();
	CU_ASSERT_FATAL(p != NULL);
	sv[1] = -1;
}

static void
rec_teardown(void)
{
	pmon_free(p);
	p = NULL;
	unlink(recpath);
}

/*
 * The frames of a run as a recorder writes them through the public API:
 * the snapshot, a host, then the master's TASK_INFO and send.
 */
static void
rec_write(size_t block)
{
	struct pmon_recording_header h = { .created_ns = 42 };
	struct pmon_recording_counts n;
	struct pmon_recording *w;
	struct frame info, ev;
	char err[256];

	snprintf(h.writer, sizeof(h.writer), "unit");
	snprintf(h.source, sizeof(h.source), "here:/tmp");
	mk_task_info(&info, T_MASTER, 0, "hosta", "master1");
	mk_send(&ev);
	w = pmon_recording_create(recpath, &h, block, err, sizeof(err));
	CU_ASSERT_FATAL(w != NULL);
	CU_ASSERT(pmon_recording_write(w, PMON_FRAME_SNAPSHOT, "{\"s\":1}",
	    7) == 0);
	CU_ASSERT(pmon_recording_write_host(w, 0x40000, 1, "hosta",
	    "LINUX64") == 0);
	CU_ASSERT(pmon_recording_write(w, PMON_FRAME_TASK_INFO,
	    info.buf + FRAME_HDR_SIZE, info.len - FRAME_HDR_SIZE) == 0);
	CU_ASSERT(pmon_recording_write(w, PMON_FRAME_EVENT,
	    ev.buf + FRAME_HDR_SIZE, ev.len - FRAME_HDR_SIZE) == 0);
	CU_ASSERT(pmon_recording_finish(w, &n) == 0);
	CU_ASSERT(n.frames == 4 && n.events == 1 && n.tasks == 1);
	pmon_recording_free(w);
}

/* Read back: the callbacks of a live subscriber, and the header. */
static void
test_recording_round_trip(void)
{
	struct pmon_callbacks cb = callbacks;
	struct pmon_recording_header h;
	struct pmon_recording_counts n;

	rec_write(0);
	cb.frame = cb_frame;
	pmon_set_callbacks(p, &cb, NULL);
	CU_ASSERT_FATAL(pmon_open_recording(p, recpath, &h) == 0);
	CU_ASSERT(h.format == PMON_RECORDING_FORMAT && h.created_ns == 42);
	CU_ASSERT_STRING_EQUAL(h.writer, "unit");
	CU_ASSERT_STRING_EQUAL(h.source, "here:/tmp");
	CU_ASSERT(pmon_read_recording(p, &n) == 0);
	CU_ASSERT(n.frames == 4 && n.events == 1 && n.tasks == 1);
	CU_ASSERT(seen.nsnap == 1);
	CU_ASSERT_STRING_EQUAL(seen.snap, "{\"s\":1}");
	CU_ASSERT(seen.ntasks == 1 && seen.nevents == 1);
	CU_ASSERT(seen.ev.call == PMON_CALL_send && seen.ev.peer == T_SLAVE);
	CU_ASSERT_STRING_EQUAL(seen.ev_program, "master1");
	CU_ASSERT_FATAL(raw.n == 4);
	CU_ASSERT(raw.types[0] == PMON_FRAME_SNAPSHOT &&
	    raw.types[1] == PMON_FRAME_HOST &&
	    raw.types[2] == PMON_FRAME_TASK_INFO &&
	    raw.types[3] == PMON_FRAME_EVENT);
	CU_ASSERT(pmon_connect(p, NULL, "x", 0) == -1);
}

/* A file cut short: what came before, then the offset of the damage. */
static void
test_recording_truncated(void)
{
	struct pmon_recording_counts n;
	struct stat st;

	rec_write(PMON_RECORDING_BLOCK_MIN);
	CU_ASSERT_FATAL(stat(recpath, &st) == 0);
	CU_ASSERT_FATAL(truncate(recpath, st.st_size - 10) == 0);
	CU_ASSERT_FATAL(pmon_open_recording(p, recpath, NULL) == 0);
	CU_ASSERT(pmon_read_recording(p, &n) == -1);
	CU_ASSERT(strstr(pmon_error(p), "offset") != NULL);
	CU_ASSERT(n.ended_ns == 0);
}

/* Not a recording: refused at the open, saying why. */
static void
test_recording_not_one(void)
{
	FILE *fp;

	CU_ASSERT_FATAL((fp = fopen(recpath, "w")) != NULL);
	fputs("not a recording\n", fp);
	fclose(fp);
	CU_ASSERT(pmon_open_recording(p, recpath, NULL) == -1);
	CU_ASSERT(strlen(pmon_error(p)) > 0);
	CU_ASSERT(pmon_read_recording(p, NULL) == -1);
}

/* The call names are the wire's, both ways. */
static void
test_call_names(void)
{
	CU_ASSERT_STRING_EQUAL(pmon_call_name(PMON_CALL_send), "pvm_send");
	CU_ASSERT(pmon_call_lookup("pvm_mcast") == PMON_CALL_mcast);
	CU_ASSERT(pmon_call_lookup("pvm_nothing") == -1);
	CU_ASSERT_STRING_EQUAL(pmon_call_name(-1), "unknown");
	CU_ASSERT_STRING_EQUAL(pmon_call_name(PMON_CALL_MAX), "unknown");
}

static CU_TestInfo recording_tests[] = {
	{ "round trip", test_recording_round_trip },
	{ "truncated", test_recording_truncated },
	{ "not a recording", test_recording_not_one },
	{ "call names", test_call_names },
	CU_TEST_INFO_NULL
};

static CU_TestInfo stream_tests[] = {
	{ "task info", test_task_info },
	{ "frame callback", test_frame_callback },
	{ "send event", test_send_event },
	{ "bcast peers and group", test_bcast_peers_group },
	{ "matched receive", test_matched_recv },
	{ "unmatched and lost", test_unmatched_and_lost },
	{ "task info update", test_task_info_update },
	{ "byte by byte", test_byte_by_byte },
	{ "many tasks", test_many_tasks },
	{ "largest record", test_max_record },
	{ "flush", test_flush },
	{ "shutdown request", test_shutdown_request },
	{ "reply and snapshot apart", test_reply_and_snapshot },
	{ "requests and flushes with a timeout", test_request_timeout },
	{ "bye", test_bye },
	{ "eof", test_eof },
	{ "flush then close", test_flush_then_close },
	CU_TEST_INFO_NULL
};

static CU_TestInfo malformed_tests[] = {
	{ "truncated", test_truncated },
	{ "wrong version", test_wrong_version },
	{ "oversized", test_oversized },
	{ "garbage", test_garbage },
	{ "unknown task", test_unknown_task },
	{ "trailing bytes", test_trailing_bytes },
	{ "bad record", test_bad_record },
	{ "record longer than frame", test_record_short },
	{ "bad event flags", test_bad_event_flags },
	{ "unexpected type", test_unexpected_type },
	{ "error frame", test_error_frame },
	{ "bad string", test_bad_string },
	CU_TEST_INFO_NULL
};

static CU_TestInfo connect_tests[] = {
	{ "hello", test_connect_hello },
	{ "missing coordinator", test_connect_missing },
	{ "no secret file", test_connect_no_secret },
	{ "refused", test_connect_refused },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo libpmon_suites[] = {
	{ "libpmon stream", NULL, NULL, setup, teardown, stream_tests },
	{ "libpmon malformed", NULL, NULL, setup, teardown, malformed_tests },
	{ "libpmon recordings", NULL, NULL, rec_setup, rec_teardown,
	    recording_tests },
	{ "libpmon connect", conn_setup, conn_teardown, NULL, NULL,
	    connect_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(libpmon_suites)
