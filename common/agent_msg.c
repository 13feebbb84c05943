/*
 * The messages between an agent and the coordinator (agent_msg.h): each
 * one's encoder and strict decoder.
 */
#include <string.h>

#include "agent_msg.h"
#include "pack.h"
#include "record.h"
#include "wire.h"

_Static_assert(MSG_MIN_TASK_END == TASK_END_LEN &&
    MSG_MAX_TASK_END == TASK_END_LEN, "TASK_END: TASK_END_LEN");
_Static_assert(MSG_MAX_TASK_RESUME == TASK_RESUME_LEN,
    "TASK_RESUME: TASK_RESUME_LEN");
_Static_assert(MSG_MIN_TASK_RECORDS == TASK_RECORDS_HDR_SIZE &&
    MSG_MIN_CONTROL == CONTROL_HDR_SIZE &&
    MSG_MIN_CONTROL_DONE == CONTROL_DONE_HDR_SIZE,
    "the headers are the messages' least payloads");
_Static_assert(MSG_MAX_AGENT_HELLO >= AGENT_HELLO_MAX,
    "an agent's hello fits its message");

/* --- encoders ----------------------------------------------------------- */

/* Strings the agent sends are its own, cut to what the message allows. */
static uint8_t *
put_str_cut(uint8_t *p, const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	wire_put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return p + 2 + n;
}

/* payload has room for AGENT_HELLO_MAX bytes; returns the length. */
size_t
agent_hello_encode(uint8_t *payload, const struct agent_hello *h)
{
	uint8_t *p = payload;

	wire_put32(p, (uint32_t)h->host_tid);
	wire_put32(p + 4, h->pid);
	p = put_str_cut(p + 8, h->host, 255);
	p = put_str_cut(p, h->arch, 63);
	p = put_str_cut(p, h->secret, PMON_SECRET_LEN);
	return (size_t)(p - payload);
}

/* out has room for TASK_OTHER_MAX bytes; returns the length. */
size_t
task_other_encode(uint8_t *out, const struct task_other *o)
{
	wire_put32(out, (uint32_t)o->tid);
	wire_put32(out + 4, (uint32_t)o->parent_tid);
	wire_put32(out + 8, o->pid);
	put_str_cut(out + 12, o->program, TASK_OTHER_PROGRAM_MAX);
	return task_other_size(o);
}

size_t
task_other_size(const struct task_other *o)
{
	return 12 + 2 + strnlen(o->program, TASK_OTHER_PROGRAM_MAX);
}

void
task_records_hdr_encode(uint8_t *out, int32_t tid, uint32_t count)
{
	wire_put32(out, (uint32_t)tid);
	wire_put32(out + 4, count);
}

void
task_packed_hdr_encode(uint8_t *out, int32_t tid, uint8_t mode,
    uint32_t count, uint32_t ntime)
{
	wire_put32(out, (uint32_t)tid);
	out[4] = mode;
	wire_put32(out + 5, count);
	wire_put32(out + 9, ntime);
}

size_t
task_end_encode(uint8_t *out, int32_t tid, uint64_t dropped)
{
	wire_put32(out, (uint32_t)tid);
	wire_put64(out + 4, dropped);
	return TASK_END_LEN;
}

size_t
task_resume_encode(uint8_t *out, int32_t tid, uint64_t next_seq,
    uint64_t shipped)
{
	wire_put32(out, (uint32_t)tid);
	wire_put64(out + 4, next_seq);
	wire_put64(out + 12, shipped);
	return TASK_RESUME_LEN;
}

size_t
task_proc_encode(uint8_t *out, uint32_t id, const struct task_proc *pr)
{
	wire_put32(out, id);
	wire_put32(out + 4, (uint32_t)pr->tid);
	out[8] = pr->state;
	wire_put32(out + 9, pr->threads);
	wire_put64(out + 13, pr->utime_ms);
	wire_put64(out + 21, pr->stime_ms);
	wire_put64(out + 29, pr->rss_kb);
	wire_put64(out + 37, pr->vsize_kb);
	wire_put32(out + 45, (uint32_t)pr->syscall);
	return TASK_PROC_LEN;
}

void
control_hdr_encode(uint8_t *out, uint32_t id, uint8_t op, uint16_t n)
{
	wire_put32(out, id);
	out[4] = op;
	wire_put16(out + 5, n);
}

void
control_done_hdr_encode(uint8_t *out, uint32_t id, uint16_t n)
{
	wire_put32(out, id);
	wire_put16(out + 4, n);
}

void
control_done_entry_encode(uint8_t *out, const struct control_status *st)
{
	wire_put32(out, (uint32_t)st->tid);
	out[4] = st->status;
}

void
ack_entry_encode(uint8_t *out, int32_t tid, uint64_t seq, int ended)
{
	wire_put32(out, (uint32_t)tid);
	wire_put64(out + 4, seq);
	out[12] = ended != 0;
}

/* --- decoders ----------------------------------------------------------- */

static int
valid_tid(int32_t tid)
{
	return tid > 0;
}

int
agent_hello_decode(const uint8_t *p, size_t len,
    struct agent_hello *h, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	h->host_tid = (int32_t)wire_read32(&r);
	h->pid = wire_read32(&r);
	wire_readstr(&r, h->host, sizeof(h->host));
	wire_readstr(&r, h->arch, sizeof(h->arch));
	if (proto_read_secret(&r, h->secret, why) == -1 ||
	    proto_reader_done(&r, why) == -1)
		return -1;
	if (h->host[0] == '\0') {
		*why = "agent hello without a host name";
		return -1;
	}
	return 0;
}

int
task_new_decode(const uint8_t *p, size_t len, struct task_hello *t,
    const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	t->tid = (int32_t)wire_read32(&r);
	t->pid = wire_read32(&r);
	t->parent_tid = (int32_t)wire_read32(&r);
	t->spawn_seq = wire_read64(&r);
	wire_readstr(&r, t->program, sizeof(t->program));
	if (proto_reader_done(&r, why) == -1)
		return -1;
	if (!valid_tid(t->tid)) {
		*why = "new task has an invalid tid";
		return -1;
	}
	if (t->parent_tid != 0 && !valid_tid(t->parent_tid)) {
		*why = "new task has an invalid parent tid";
		return -1;
	}
	if (t->parent_tid == 0 && t->spawn_seq != 0) {
		*why = "new task has a spawn record without a parent";
		return -1;
	}
	if (t->parent_tid == t->tid) {
		*why = "new task is its own parent";
		return -1;
	}
	return 0;
}

static const char *
other_check(const struct task_other *o)
{
	if (!valid_tid(o->tid))
		return "an unmonitored task has an invalid tid";
	if (o->parent_tid != 0 && !valid_tid(o->parent_tid))
		return "an unmonitored task has an invalid parent tid";
	if (o->parent_tid == o->tid)
		return "an unmonitored task is its own parent";
	if (o->pid == 0)
		return "an unmonitored task has pid 0";
	return NULL;
}

static int
others_pass(const uint8_t *p, size_t len, task_other_cb cb, void *arg,
    const char **why)
{
	struct wire_reader r;
	struct task_other o;
	uint32_t i, count;

	wire_reader_init(&r, p, len);
	if ((count = wire_read32(&r)) > TASK_OTHERS_MAX) {
		*why = "more unmonitored tasks than TASK_OTHERS_MAX";
		return -1;
	}
	for (i = 0; i < count; i++) {
		o.tid = (int32_t)wire_read32(&r);
		o.parent_tid = (int32_t)wire_read32(&r);
		o.pid = wire_read32(&r);
		wire_readstr(&r, o.program, sizeof(o.program));
		if (r.err)
			break;
		if ((*why = other_check(&o)) != NULL)
			return -1;
		if (cb != NULL)
			cb(&o, arg);
	}
	return proto_reader_done(&r, why);
}

int
task_others_decode(const uint8_t *p, size_t len, task_other_cb cb,
    void *arg, const char **why)
{
	if (others_pass(p, len, NULL, NULL, why) == -1)
		return -1;
	return others_pass(p, len, cb, arg, why);
}

int
task_records_decode(const uint8_t *p, size_t len, task_record_cb cb,
    void *arg, const char **why)
{
	struct wire_reader r;
	struct record rec;
	int32_t tid;
	uint32_t count, i;
	size_t off;

	wire_reader_init(&r, p, len);
	tid = (int32_t)wire_read32(&r);
	count = wire_read32(&r);
	if (r.err) {
		*why = "records header truncated";
		return -1;
	}
	if (!valid_tid(tid)) {
		*why = "records for an invalid tid";
		return -1;
	}
	for (off = r.off, i = 0; i < count; i++, off += rec.len) {
		if (record_decode(p + off, len - off, &rec, why) == -1)
			return -1;
		if (cb(tid, &rec, arg, why) == -1)
			return -1;
	}
	if (off != len) {
		*why = "records payload has trailing bytes";
		return -1;
	}
	return 0;
}

void
task_below_entry_encode(uint8_t *out, uint8_t flags, int32_t match_tid,
    uint64_t match_seq)
{
	out[0] = flags;
	wire_put32(out + 1, (uint32_t)match_tid);
	wire_put64(out + 5, match_seq);
}

#define BELOW_FLAGS	(EVENT_MATCHED | EVENT_UNMATCHED | EVENT_AGAIN | \
			 EVENT_UNMONITORED | EVENT_RESUMED)

int
task_below_decode(const uint8_t *p, size_t len, task_below_cb cb, void *arg,
    const char **why)
{
	struct record rec;
	int32_t tid, match_tid;
	uint64_t match_seq;
	uint32_t count, i;
	uint8_t flags;
	size_t off;

	if (len < TASK_RECORDS_HDR_SIZE) {
		*why = "events header truncated";
		return -1;
	}
	tid = (int32_t)wire_get32(p);
	count = wire_get32(p + 4);
	if (!valid_tid(tid)) {
		*why = "events of an invalid tid";
		return -1;
	}
	for (off = TASK_RECORDS_HDR_SIZE, i = 0; i < count; i++) {
		if (len - off < TASK_BELOW_ENTRY_HDR) {
			*why = "event header truncated";
			return -1;
		}
		flags = p[off];
		match_tid = (int32_t)wire_get32(p + off + 1);
		match_seq = wire_get64(p + off + 5);
		off += TASK_BELOW_ENTRY_HDR;
		if ((flags & ~BELOW_FLAGS) != 0 ||
		    ((flags & EVENT_MATCHED) && (flags & EVENT_UNMATCHED)) ||
		    ((flags & (EVENT_UNMONITORED | EVENT_RESUMED)) &&
		    !(flags & EVENT_UNMATCHED))) {
			*why = "event flags an intermediate cannot give";
			return -1;
		}
		if ((flags & EVENT_MATCHED) ? !valid_tid(match_tid) ||
		    match_seq == 0 : match_tid != 0 || match_seq != 0) {
			*why = "event match without its flag, or no send";
			return -1;
		}
		if (record_decode(p + off, len - off, &rec, why) == -1)
			return -1;
		off += rec.len;
		if ((flags & EVENT_MATCHED) && match_tid != rec.peer) {
			*why = "event matched to a task it is not from";
			return -1;
		}
		if (cb(tid, &rec, flags, match_tid, match_seq, arg, why) == -1)
			return -1;
	}
	if (off != len) {
		*why = "events payload has trailing bytes";
		return -1;
	}
	return 0;
}

int
task_packed_tid(const uint8_t *p, size_t len, int32_t *tid,
    const char **why)
{
	if (len < TASK_PACKED_HDR_SIZE) {
		*why = "packed records header truncated";
		return -1;
	}
	*tid = (int32_t)wire_get32(p);
	if (!valid_tid(*tid)) {
		*why = "records for an invalid tid";
		return -1;
	}
	return 0;
}

int
task_packed_decode(const uint8_t *p, size_t len, struct pack_state *st,
    task_record_cb cb, void *arg, const char **why)
{
	uint8_t rec[RECORD_MAX_SIZE];
	struct wire_reader rd, td;
	struct record r;
	uint32_t count, tlen, i;
	int32_t tid;
	uint8_t mode;

	if (task_packed_tid(p, len, &tid, why) == -1)
		return -1;
	mode = p[4];
	count = wire_get32(p + 5);
	tlen = wire_get32(p + 9);
	if (mode != PACK_TIME_EXACT && mode != PACK_TIME_COMPACT) {
		*why = "packed records in an unknown time encoding";
		return -1;
	}
	if (tlen > len - TASK_PACKED_HDR_SIZE) {
		*why = "packed records' time column longer than the payload";
		return -1;
	}
	wire_reader_init(&td, p + TASK_PACKED_HDR_SIZE, tlen);
	wire_reader_init(&rd, p + TASK_PACKED_HDR_SIZE + tlen,
	    len - TASK_PACKED_HDR_SIZE - tlen);
	for (i = 0; i < count; i++) {
		if (unpack_record(st, mode, &rd, &td, rec, &r, why) == -1)
			return -1;
		if (cb(tid, &r, arg, why) == -1)
			return -1;
	}
	if (rd.off != rd.len || td.off != td.len) {
		*why = "packed records payload has trailing bytes";
		return -1;
	}
	return 0;
}

int
task_end_decode(const uint8_t *p, size_t len, int32_t *tid,
    uint64_t *dropped, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	*tid = (int32_t)wire_read32(&r);
	*dropped = wire_read64(&r);
	if (proto_reader_done(&r, why) == -1)
		return -1;
	if (!valid_tid(*tid)) {
		*why = "end of an invalid tid";
		return -1;
	}
	return 0;
}

int
task_resume_decode(const uint8_t *p, size_t len, int32_t *tid,
    uint64_t *next_seq, uint64_t *shipped, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	*tid = (int32_t)wire_read32(&r);
	*next_seq = wire_read64(&r);
	*shipped = len > 12 ? wire_read64(&r) : 0;
	if (proto_reader_done(&r, why) == -1)
		return -1;
	if (!valid_tid(*tid)) {
		*why = "resume of an invalid tid";
		return -1;
	}
	if (*next_seq == 0 || *next_seq == UINT64_MAX) {
		*why = "resume at an impossible seq";
		return -1;
	}
	return 0;
}

int
task_proc_decode(const uint8_t *p, size_t len, uint32_t *id,
    struct task_proc *pr, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	*id = wire_read32(&r);
	pr->tid = (int32_t)wire_read32(&r);
	pr->state = wire_read8(&r);
	pr->threads = wire_read32(&r);
	pr->utime_ms = wire_read64(&r);
	pr->stime_ms = wire_read64(&r);
	pr->rss_kb = wire_read64(&r);
	pr->vsize_kb = wire_read64(&r);
	pr->syscall = (int32_t)wire_read32(&r);
	if (proto_reader_done(&r, why) == -1)
		return -1;
	if (pr->state < 'A' || pr->state > 'z' ||
	    (pr->state > 'Z' && pr->state < 'a')) {
		*why = "TASK_PROC has a state that is not a letter";
		return -1;
	}
	return 0;
}

int
control_done_decode(const uint8_t *p, size_t len, uint32_t *id,
    struct control_status *out, size_t max, size_t *n,
    const char **why)
{
	struct wire_reader r;
	size_t i, count;

	*n = 0;
	wire_reader_init(&r, p, len);
	*id = wire_read32(&r);
	count = wire_read16(&r);
	if (!r.err && count > max) {
		*why = "CONTROL_DONE answers for more tasks than asked";
		return -1;
	}
	for (i = 0; i < count && !r.err; i++) {
		out[i].tid = (int32_t)wire_read32(&r);
		out[i].status = wire_read8(&r);
		if (!r.err && out[i].status > CONTROL_FAILED) {
			*why = "CONTROL_DONE has an unknown status";
			return -1;
		}
	}
	if (proto_reader_done(&r, why) == -1)
		return -1;
	*n = count;
	return 0;
}

/*
 * CONTROL: u32 id, u8 op, u16 n, n x i32 tid.  The tids stay in the
 * payload (m->tids); any tid is fine here, one the agent does not serve
 * is answered CONTROL_NO_TASK.
 */
int
control_decode(const uint8_t *payload, size_t len,
    struct control_msg *m, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, payload, len);
	m->id = wire_read32(&r);
	m->op = wire_read8(&r);
	m->n = wire_read16(&r);
	m->tids = wire_take(&r, 4 * (size_t)m->n);
	if (r.err) {
		*why = "CONTROL truncated";
		return -1;
	}
	if (r.off != len) {
		*why = "CONTROL has trailing bytes";
		return -1;
	}
	if (m->op != CONTROL_STOP && m->op != CONTROL_CONTINUE &&
	    m->op != CONTROL_KILL && m->op != CONTROL_INFO) {
		*why = "CONTROL has an unknown operation";
		return -1;
	}
	return 0;
}

/*
 * ACK (doc/protocol.md): u16 n, then n entries of i32 tid, u64 seq,
 * u8 ended.  Checks the whole payload; the entries are then read with
 * ack_entry.  Returns 0 with the count in *n, or -1 with *why.
 */
int
ack_decode(const uint8_t *payload, size_t len, unsigned *n,
    const char **why)
{
	unsigned i, count;

	if (len < 2) {
		*why = "ACK truncated";
		return -1;
	}
	count = wire_get16(payload);
	if (len != 2 + (size_t)count * ACK_ENTRY_LEN) {
		*why = "ACK length does not match its count";
		return -1;
	}
	for (i = 0; i < count; i++)
		if (payload[2 + i * ACK_ENTRY_LEN + 12] > 1) {
			*why = "ACK entry with a bad ended flag";
			return -1;
		}
	*n = count;
	return 0;
}

/* Entry i of an ACK that ack_decode accepted. */
void
ack_entry(const uint8_t *payload, unsigned i, int32_t *tid,
    uint64_t *seq, int *ended)
{
	const uint8_t *e = payload + 2 + (size_t)i * ACK_ENTRY_LEN;

	*tid = (int32_t)wire_get32(e);
	*seq = wire_get64(e + 4);
	*ended = e[12];
}
