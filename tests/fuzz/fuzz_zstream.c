/*
 * Fuzzes the coordinator's inflating frame reader with what a hostile
 * agent could send as ZDATA: the input, cut into pieces at the lengths
 * its first bytes give, is fed as consecutive ZDATA payloads.  The
 * reader must never hold more than one frame of the largest size plus
 * one inflate step, never hand over a frame with a bad header, and fail
 * cleanly on anything that does not inflate.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "proto.h"
#include "zstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
frame(void *arg, uint8_t type, const uint8_t *p, size_t len)
{
	const struct msg_info *mi = proto_msg(type);
	volatile uint8_t sink;

	(void)arg;
	if (mi == NULL || type == MSG_ZDATA || len > PROTO_MAX_PAYLOAD)
		__builtin_trap();
	if (len > 0)
		sink = p[0] ^ p[len - 1];
	(void)sink;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zs_in zi;
	const char *why;
	size_t off, n, cut;
	int rc = 0;

	if (size < 2 || zs_in_init(&zi) == -1)
		return 0;
	cut = (size_t)data[0] * 4 + 1;
	for (off = 1; off < size && rc == 0; off += n) {
		n = size - off < cut ? size - off : cut;
		rc = zs_in_feed(&zi, data + off, n, frame, NULL, &why);
		if (zi.cap > FRAME_HDR_SIZE + PROTO_MAX_PAYLOAD + ZS_STEP)
			__builtin_trap();
	}
	zs_in_end(&zi);
	return 0;
}
