/*
 * The message table and the frame header codec.
 */
#include <stddef.h>

#include "proto.h"
#include "wire.h"

static const struct msg_info msg_table[] = {
#define PROTO_ROW(name, num, min, max) [num] = { #name, min, max },
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

const char *
proto_msg_name(uint8_t type)
{
	const struct msg_info *mi = proto_msg(type);

	return mi ? mi->name : "unknown";
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
