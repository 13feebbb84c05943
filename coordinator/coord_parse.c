/*
 * Strict decoders of the payloads agents and tools send the coordinator
 * (doc/protocol.md).  Every field is read with a bounds-checked
 * wire_reader, and a payload longer or shorter than its fields is an
 * error.  No allocation, no I/O: the fuzz target drives these directly.
 */
#include <stddef.h>

#include "coord.h"
#include "record.h"
#include "wire.h"

/* The reader consumed exactly the payload, without running past it. */
static int
reader_done(const struct wire_reader *r, const char **why)
{
	if (r->err) {
		*why = "payload truncated or string invalid";
		return -1;
	}
	if (r->off != r->len) {
		*why = "payload has trailing bytes";
		return -1;
	}
	return 0;
}

/*
 * The secret that ends both hellos: empty (none sent) or at most
 * PMON_SECRET_LEN bytes; whether it is the right one is the caller's
 * question (coord_secret_check).
 */
static int
read_secret(struct wire_reader *r, char *dst, const char **why)
{
	dst[0] = '\0';
	if (!r->err && r->len - r->off >= 2 &&
	    wire_get16(r->p + r->off) > PMON_SECRET_LEN) {
		*why = "secret longer than 64 bytes";
		return -1;
	}
	wire_readstr(r, dst, PMON_SECRET_LEN + 1);
	return 0;
}

/* A task tid: neither 0 nor a daemon tid. */
static int
valid_tid(int32_t tid)
{
	return tid > 0;
}

int
coord_parse_agent_hello(const uint8_t *p, size_t len,
    struct coord_agent_hello *h, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	h->host_tid = (int32_t)wire_read32(&r);
	h->pid = wire_read32(&r);
	wire_readstr(&r, h->host, sizeof(h->host));
	wire_readstr(&r, h->arch, sizeof(h->arch));
	if (read_secret(&r, h->secret, why) == -1 ||
	    reader_done(&r, why) == -1)
		return -1;
	if (h->host[0] == '\0') {
		*why = "agent hello without a host name";
		return -1;
	}
	return 0;
}

static const char *
other_check(const struct coord_other *o)
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

/* One pass over TASK_OTHERS, each task to cb if there is one. */
static int
others_pass(const uint8_t *p, size_t len, coord_other_cb cb, void *arg,
    const char **why)
{
	struct wire_reader r;
	struct coord_other o;
	uint32_t i, count;

	wire_reader_init(&r, p, len);
	if ((count = wire_read32(&r)) > COORD_OTHERS_MAX) {
		*why = "more unmonitored tasks than COORD_OTHERS_MAX";
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
	return reader_done(&r, why);
}

/* The whole payload is checked before cb sees the first task. */
int
coord_parse_task_others(const uint8_t *p, size_t len, coord_other_cb cb,
    void *arg, const char **why)
{
	if (others_pass(p, len, NULL, NULL, why) == -1)
		return -1;
	return others_pass(p, len, cb, arg, why);
}

int
coord_parse_task_new(const uint8_t *p, size_t len, struct coord_task_new *t,
    const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	t->tid = (int32_t)wire_read32(&r);
	t->pid = wire_read32(&r);
	t->parent_tid = (int32_t)wire_read32(&r);
	t->spawn_seq = wire_read64(&r);
	wire_readstr(&r, t->program, sizeof(t->program));
	if (reader_done(&r, why) == -1)
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

/*
 * Walks the records of a TASK_RECORDS payload, calling cb for each after
 * record_decode checked it.  The count must match the records exactly.
 */
int
coord_parse_task_records(const uint8_t *p, size_t len, coord_record_cb cb,
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

/* TASK_PACKED's tid, so that the caller can find the task's state. */
int
coord_parse_packed_hdr(const uint8_t *p, size_t len, int32_t *tid,
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

/*
 * Unpacks the records of a TASK_PACKED payload against the task's state
 * st, calling cb for each with the record in record.h's encoding.  The
 * count must match the records exactly.
 */
int
coord_parse_task_packed(const uint8_t *p, size_t len, struct pack_state *st,
    coord_record_cb cb, void *arg, const char **why)
{
	uint8_t rec[RECORD_MAX_SIZE];
	struct wire_reader rd, td;
	struct record r;
	uint32_t count, tlen, i;
	int32_t tid;
	uint8_t mode;

	if (coord_parse_packed_hdr(p, len, &tid, why) == -1)
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
coord_parse_task_end(const uint8_t *p, size_t len, int32_t *tid,
    uint64_t *dropped, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	*tid = (int32_t)wire_read32(&r);
	*dropped = wire_read64(&r);
	if (reader_done(&r, why) == -1)
		return -1;
	if (!valid_tid(*tid)) {
		*why = "end of an invalid tid";
		return -1;
	}
	return 0;
}

/*
 * TASK_RESUME: i32 tid, u64 next_seq (at least 1), then u64 shipped,
 * which agents before it did not send (0: not known).
 */
int
coord_parse_task_resume(const uint8_t *p, size_t len, int32_t *tid,
    uint64_t *next_seq, uint64_t *shipped, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	*tid = (int32_t)wire_read32(&r);
	*next_seq = wire_read64(&r);
	*shipped = len > 12 ? wire_read64(&r) : 0;
	if (reader_done(&r, why) == -1)
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

/* FLUSH and FLUSH_DONE: one u32 id. */
int
coord_parse_u32(const uint8_t *p, size_t len, uint32_t *v, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	*v = wire_read32(&r);
	return reader_done(&r, why);
}

int
coord_parse_tool_hello(const uint8_t *p, size_t len,
    struct coord_tool_hello *h, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	h->flags = wire_read32(&r);
	wire_readstr(&r, h->name, sizeof(h->name));
	if (read_secret(&r, h->secret, why) == -1 ||
	    reader_done(&r, why) == -1)
		return -1;
	if (h->flags & ~(uint32_t)(TOOL_SUBSCRIBE | TOOL_SNAPSHOT |
	    TOOL_RECORD | TOOL_LOSSLESS)) {
		*why = "tool hello has unknown flags";
		return -1;
	}
	return 0;
}

int
coord_parse_request(const uint8_t *p, size_t len, struct coord_request *req,
    const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	req->id = wire_read32(&r);
	req->flags = wire_read32(&r);
	wire_readstr(&r, req->text, sizeof(req->text));
	if (reader_done(&r, why) == -1)
		return -1;
	if (req->id == 0) {
		*why = "request id 0 (REPLY id 0 is the snapshot)";
		return -1;
	}
	if (req->flags & ~(uint32_t)(REQUEST_JSON | REQUEST_UNOWNED)) {
		*why = "request has unknown flags";
		return -1;
	}
	return 0;
}

/*
 * TASK_PROC: what /proc says of one task, for CONTROL_INFO id.  The
 * state is the letter of /proc/PID/stat.
 */
int
coord_parse_task_proc(const uint8_t *p, size_t len, uint32_t *id,
    struct coord_proc *pr, const char **why)
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
	if (reader_done(&r, why) == -1)
		return -1;
	if (pr->state < 'A' || pr->state > 'z' ||
	    (pr->state > 'Z' && pr->state < 'a')) {
		*why = "TASK_PROC has a state that is not a letter";
		return -1;
	}
	return 0;
}

/*
 * CONTROL_DONE: u32 id, u16 n, n x (i32 tid, u8 status), into out (room
 * for max).  The tids are the agent's echo of our CONTROL's, checked
 * against it by the caller, not here.
 */
int
coord_parse_control_done(const uint8_t *p, size_t len, uint32_t *id,
    struct coord_control_status *out, size_t max, size_t *n,
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
	if (reader_done(&r, why) == -1)
		return -1;
	*n = count;
	return 0;
}
