/*
 * Frames the agent sends (doc/protocol.md), and the dump mode's printer,
 * which decodes those very frames so that -D shows exactly what a
 * coordinator would receive.
 */
#include <inttypes.h>
#include <string.h>

#include <event2/buffer.h>

#include "agent.h"
#include "pack.h"
#include "proto.h"
#include "record.h"
#include "wire.h"

static void
frame_start(struct evbuffer *out, uint8_t type, size_t len)
{
	uint8_t hdr[FRAME_HDR_SIZE];

	frame_hdr_encode(hdr, type, (uint32_t)len);
	evbuffer_add(out, hdr, sizeof(hdr));
}

/* The frame of a payload an encoder of agent_msg.h made. */
static void
frame_add(struct evbuffer *out, uint8_t type, const uint8_t *p, size_t len)
{
	frame_start(out, type, len);
	evbuffer_add(out, p, len);
}

/* AGENT_HELLO ends with the secret ("" for none: the coordinator says
 * what it wants). */
void
agent_frame_agent_hello(struct evbuffer *out, int32_t host_tid, uint32_t pid,
    const char *host, const char *arch, const char *secret)
{
	struct agent_hello h = { .host_tid = host_tid, .pid = pid };
	uint8_t buf[AGENT_HELLO_MAX];

	snprintf(h.host, sizeof(h.host), "%s", host);
	snprintf(h.arch, sizeof(h.arch), "%s", arch);
	snprintf(h.secret, sizeof(h.secret), "%s", secret);
	frame_add(out, MSG_AGENT_HELLO, buf, agent_hello_encode(buf, &h));
	explicit_bzero(&h, sizeof(h));
	explicit_bzero(buf, sizeof(buf));
}

void
agent_frame_task_new(struct evbuffer *out, const struct task_hello *h)
{
	uint8_t buf[TASK_HELLO_FRAME_MAX];
	size_t n;

	/* TASK_NEW's payload is TASK_HELLO's, field for field. */
	n = task_hello_encode(buf, h);
	frame_add(out, MSG_TASK_NEW, buf + FRAME_HDR_SIZE, n - FRAME_HDR_SIZE);
}

void
agent_frame_records(struct evbuffer *out, int32_t tid, const uint8_t *recs,
    size_t len, unsigned count)
{
	uint8_t hdr[TASK_RECORDS_HDR_SIZE];

	task_records_hdr_encode(hdr, tid, count);
	frame_start(out, MSG_TASK_RECORDS, sizeof(hdr) + len);
	evbuffer_add(out, hdr, sizeof(hdr));
	evbuffer_add(out, recs, len);
}

/* TASK_PACKED: the header, the time column, the records. */
void
agent_frame_packed(struct evbuffer *out, int32_t tid, struct agent_packer *pk,
    const struct pack_out *po, uint32_t count)
{
	uint8_t hdr[TASK_PACKED_HDR_SIZE];

	task_packed_hdr_encode(hdr, tid, (uint8_t)pk->mode, count,
	    (uint32_t)po->ntime);
	frame_start(out, MSG_TASK_PACKED, sizeof(hdr) + po->ntime + po->nrec);
	evbuffer_add(out, hdr, sizeof(hdr));
	evbuffer_add(out, po->time, po->ntime);
	evbuffer_add(out, po->rec, po->nrec);
}

static void
other_entry(struct task_other *o, const struct agent_other *v)
{
	o->tid = v->tid;
	o->parent_tid = v->parent;
	o->pid = v->pid;
	memcpy(o->program, v->program, sizeof(o->program));
}

/* TASK_OTHERS: the tasks seen in two readings of pvmd's list. */
void
agent_frame_task_others(struct evbuffer *out, const struct agent_other *v,
    size_t n)
{
	struct task_other o;
	uint8_t buf[TASK_OTHER_MAX], cnt[4];
	size_t i, k = 0, len = 4;

	for (i = 0; i < n; i++)
		if (v[i].reported) {
			other_entry(&o, &v[i]);
			k++;
			len += task_other_size(&o);
		}
	frame_start(out, MSG_TASK_OTHERS, len);
	wire_put32(cnt, (uint32_t)k);
	evbuffer_add(out, cnt, sizeof(cnt));
	for (i = 0; i < n; i++) {
		if (!v[i].reported)
			continue;
		other_entry(&o, &v[i]);
		evbuffer_add(out, buf, task_other_encode(buf, &o));
	}
}

void
agent_frame_task_end(struct evbuffer *out, int32_t tid, uint64_t dropped)
{
	uint8_t buf[TASK_END_LEN];

	frame_add(out, MSG_TASK_END, buf, task_end_encode(buf, tid, dropped));
}

/*
 * TASK_RESUME: after a reconnection, the task's records go on at
 * next_seq; a coordinator before may have had them up to shipped.
 */
void
agent_frame_task_resume(struct evbuffer *out, int32_t tid, uint64_t next_seq,
    uint64_t shipped)
{
	uint8_t buf[TASK_RESUME_LEN];

	frame_add(out, MSG_TASK_RESUME, buf, task_resume_encode(buf, tid,
	    next_seq, shipped));
}

void
agent_frame_flush_done(struct evbuffer *out, uint32_t id)
{
	uint8_t buf[4];

	wire_put32(buf, id);
	frame_add(out, MSG_FLUSH_DONE, buf, sizeof(buf));
}

/* CONTROL_DONE: every task of the CONTROL, in its order. */
void
agent_frame_control_done(struct evbuffer *out, uint32_t id,
    const struct agent_control_task *t, size_t n)
{
	uint8_t hdr[CONTROL_DONE_HDR_SIZE], one[CONTROL_DONE_ENTRY];
	struct control_status st;
	size_t i;

	control_done_hdr_encode(hdr, id, (uint16_t)n);
	frame_start(out, MSG_CONTROL_DONE, sizeof(hdr) + n * sizeof(one));
	evbuffer_add(out, hdr, sizeof(hdr));
	for (i = 0; i < n; i++) {
		st.tid = t[i].tid;
		st.status = t[i].status;
		control_done_entry_encode(one, &st);
		evbuffer_add(out, one, sizeof(one));
	}
}

void
agent_frame_task_proc(struct evbuffer *out, uint32_t id,
    const struct task_proc *pr)
{
	uint8_t buf[TASK_PROC_LEN];

	frame_add(out, MSG_TASK_PROC, buf, task_proc_encode(buf, id, pr));
}

/* Dump mode. */

static void
print_tid(FILE *f, int32_t tid)
{
	if (tid > 0)
		fprintf(f, "t%x", (unsigned)tid);
	else
		fprintf(f, "%d", tid);
}

static void
dump_record(FILE *f, int32_t tid, const struct record *r)
{
	unsigned i;

	print_tid(f, tid);
	fprintf(f, " %" PRIu64 " %s %s peer=", r->seq,
	    record_call_name(r->call), r->phase == PMON_BEGIN ? "begin" :
	    "end");
	print_tid(f, r->peer);
	fprintf(f, " tag=%d ctx=%d bytes=%d rc=%d inst=%d flags=%#x",
	    r->tag, r->ctx, r->bytes, r->rc, r->inst, r->flags);
	if (r->glen > 0)
		fprintf(f, " group=%.*s", (int)r->glen, r->group);
	if (r->npeers > 0) {
		fprintf(f, " peers=");
		for (i = 0; i < r->npeers; i++) {
			if (i > 0)
				fputc(',', f);
			print_tid(f, record_peer(r, i));
		}
	}
	fputc('\n', f);
}

static int
dump_records(FILE *f, const uint8_t *p, size_t len)
{
	struct record r;
	const char *why;
	int32_t tid;
	size_t off;

	tid = (int32_t)wire_get32(p);
	for (off = 8; off < len; off += r.len) {
		if (record_decode(p + off, len - off, &r, &why) == -1) {
			fprintf(f, "# bad record: %s\n", why);
			return -1;
		}
		dump_record(f, tid, &r);
	}
	return 0;
}

static int
dump_task_new(FILE *f, const uint8_t *p, size_t len)
{
	struct task_hello h;
	const char *why;

	if (task_hello_decode(p, len, &h, &why) == -1) {
		fprintf(f, "# bad TASK_NEW: %s\n", why);
		return -1;
	}
	fprintf(f, "# task ");
	print_tid(f, h.tid);
	fprintf(f, " pid %u parent ", h.pid);
	print_tid(f, h.parent_tid);
	fprintf(f, " spawn_seq %" PRIu64 " program %s\n", h.spawn_seq,
	    h.program);
	return 0;
}

static void
dump_control_done(FILE *f, const uint8_t *p, size_t len)
{
	static const char *const names[] = { "ok", "no_task", "failed" };
	size_t i, n = wire_get16(p + 4);

	fprintf(f, "# control_done %u", wire_get32(p));
	for (i = 0; i < n && 6 + 5 * i + 5 <= len; i++) {
		fputc(' ', f);
		print_tid(f, (int32_t)wire_get32(p + 6 + 5 * i));
		fprintf(f, "=%s", p[10 + 5 * i] < 3 ? names[p[10 + 5 * i]] :
		    "?");
	}
	fputc('\n', f);
}

static int
dump_frame(FILE *f, uint8_t type, const uint8_t *p, size_t len)
{
	switch (type) {
	case MSG_TASK_NEW:
		return dump_task_new(f, p, len);
	case MSG_TASK_RECORDS:
		return dump_records(f, p, len);
	case MSG_TASK_END:
		fprintf(f, "# end ");
		print_tid(f, (int32_t)wire_get32(p));
		fprintf(f, " dropped %" PRIu64 "\n", wire_get64(p + 4));
		return 0;
	case MSG_FLUSH_DONE:
		fprintf(f, "# flush_done %u\n", wire_get32(p));
		return 0;
	case MSG_CONTROL_DONE:
		dump_control_done(f, p, len);
		return 0;
	case MSG_AGENT_HELLO:
		fprintf(f, "# agent host_tid ");
		print_tid(f, (int32_t)wire_get32(p));
		fprintf(f, " pid %u\n", wire_get32(p + 4));
		return 0;
	default:
		fprintf(f, "# frame %s (%zu bytes)\n", proto_msg_name(type),
		    len);
		return 0;
	}
}

/*
 * Prints and consumes every complete frame in buf.  Returns 0, or -1 when
 * a frame does not decode (the agent's own output: a bug).
 */
int
agent_dump_frames(struct evbuffer *buf, FILE *f)
{
	uint8_t hdr[FRAME_HDR_SIZE], *p;
	struct frame_hdr h;
	const char *why;
	int rc = 0;

	while (evbuffer_copyout(buf, hdr, sizeof(hdr)) == sizeof(hdr)) {
		if (frame_hdr_decode(hdr, &h, &why) == -1) {
			fprintf(f, "# bad frame: %s\n", why);
			evbuffer_drain(buf, evbuffer_get_length(buf));
			return -1;
		}
		if (evbuffer_get_length(buf) < sizeof(hdr) + h.len)
			break;
		evbuffer_drain(buf, sizeof(hdr));
		p = evbuffer_pullup(buf, h.len);
		if (dump_frame(f, h.type, p, h.len) == -1)
			rc = -1;
		evbuffer_drain(buf, h.len);
	}
	fflush(f);
	return rc;
}
