/*
 * The message table, the frame header codec, and what every payload
 * decoder uses (common/task_msg.c, agent_msg.c, tool_msg.c, breakpoint.c
 * hold the messages' codecs).
 */
#include <stddef.h>
#include <string.h>

#include "proto.h"
#include "record.h"
#include "secret.h"
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

/* The reader consumed exactly the payload, without running past it. */
int
proto_reader_done(const struct wire_reader *r, const char **why)
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
int
proto_read_secret(struct wire_reader *r, char *dst, const char **why)
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

/* FLUSH, FLUSH_DONE and TASK_GONE: one u32. */
int
proto_u32_decode(const uint8_t *p, size_t len, uint32_t *v, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	*v = wire_read32(&r);
	return proto_reader_done(&r, why);
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
