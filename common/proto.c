/*
 * The message table, the frame header codec and the payload codecs
 * shared by more than one side.
 */
#include <stddef.h>
#include <string.h>

#include "proto.h"
#include "record.h"
#include "wire.h"

/* The fixed sizes the codecs use are those of the table. */
_Static_assert(MSG_MIN_EVENT == EVENT_HDR_SIZE + RECORD_HDR_SIZE,
    "EVENT: its header and an empty record");
_Static_assert(MSG_MIN_TASK_INFO == TASK_INFO_FIXED + 2 + 2,
    "TASK_INFO: the fixed part and two empty strings");
_Static_assert(MSG_MIN_TASK_PROC == TASK_PROC_LEN &&
    MSG_MAX_TASK_PROC == TASK_PROC_LEN, "TASK_PROC: TASK_PROC_LEN");
_Static_assert(MSG_MIN_TASK_PACKED == TASK_PACKED_HDR_SIZE,
    "TASK_PACKED: its header");
_Static_assert(MSG_MIN_REPLY == REPLY_HDR_SIZE, "REPLY: its header");
_Static_assert(MSG_MIN_ACK == 2 && MSG_MIN_BREAKPOINTS == 2,
    "ACK and BREAKPOINTS: a u16 count");

static const struct msg_info msg_table[] = {
#define PROTO_ROW(name, num, min, max, stream) \
	[num] = { #name, min, max, stream },
	PROTO_MESSAGES(PROTO_ROW)
#undef PROTO_ROW
};

const struct msg_info *
proto_msg(uint8_t type)
{
	if (type >= sizeof(msg_table) / sizeof(msg_table[0]) ||
	    msg_table[type].name == NULL)
		return NULL;
	return &msg_table[type];
}

/* Is type a frame of the tools' stream (and of recordings)? */
int
proto_msg_stream(uint8_t type)
{
	const struct msg_info *mi = proto_msg(type);

	return mi != NULL && mi->stream;
}

const char *
proto_msg_name(uint8_t type)
{
	const struct msg_info *mi = proto_msg(type);

	return mi ? mi->name : "unknown";
}

/* A string cut to max bytes. */
static uint8_t *
put_str_cut(uint8_t *p, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max)
		n = max;
	wire_put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return p + 2 + n;
}

/*
 * Encodes ti into payload, which has room for MSG_MAX_TASK_INFO bytes:
 * a host name longer than TASK_INFO_HOST_MAX, and a program name longer
 * than the rest of the room, are cut.  Returns the payload's length.
 */
size_t
task_info_encode(uint8_t *payload, const struct task_info *ti)
{
	uint8_t *p = payload;

	wire_put32(p, (uint32_t)ti->tid);
	wire_put32(p + 4, (uint32_t)ti->parent);
	wire_put32(p + 8, ti->pid);
	wire_put64(p + 12, ti->spawn_seq);
	p = put_str_cut(p + TASK_INFO_FIXED, ti->host, TASK_INFO_HOST_MAX);
	p = put_str_cut(p, ti->program,
	    MSG_MAX_TASK_INFO - (size_t)(p - payload) - 2);
	return (size_t)(p - payload);
}

/* Decodes a TASK_INFO payload; -1 with *why when it is not one. */
int
task_info_decode(const uint8_t *payload, size_t len, struct task_info *ti,
    const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, payload, len);
	ti->tid = (int32_t)wire_read32(&r);
	ti->parent = (int32_t)wire_read32(&r);
	ti->pid = wire_read32(&r);
	ti->spawn_seq = wire_read64(&r);
	wire_readstr(&r, ti->host, sizeof(ti->host));
	wire_readstr(&r, ti->program, sizeof(ti->program));
	if (r.err || r.off != len) {
		*why = "fields do not match the payload length";
		return -1;
	}
	if (ti->tid <= 0) {
		*why = "invalid tid";
		return -1;
	}
	return 0;
}

void
frame_hdr_encode(uint8_t *out, uint8_t type, uint32_t len)
{
	out[0] = PROTO_MAGIC;
	out[1] = PROTO_VERSION;
	out[2] = type;
	out[3] = 0;
	wire_put32(out + 4, len);
}

/*
 * Checks a received header before anything is allocated for the payload.
 * Returns 0, or -1 with *why naming the problem.
 */
int
frame_hdr_decode(const uint8_t *in, struct frame_hdr *h, const char **why)
{
	const struct msg_info *mi;

	if (in[0] != PROTO_MAGIC) {
		*why = "bad magic (not a pmon peer)";
		return -1;
	}
	if (in[1] != PROTO_VERSION) {
		*why = "unsupported protocol version";
		return -1;
	}
	if ((mi = proto_msg(in[2])) == NULL) {
		*why = "unknown message type";
		return -1;
	}
	if (in[3] != 0) {
		*why = "unknown frame flags";
		return -1;
	}
	h->type = in[2];
	h->len = wire_get32(in + 4);
	if (h->len < mi->min_len) {
		*why = "payload too short for its message type";
		return -1;
	}
	if (h->len > mi->max_len) {
		*why = "payload too long for its message type";
		return -1;
	}
	return 0;
}
