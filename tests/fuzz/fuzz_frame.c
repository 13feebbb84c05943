/*
 * Fuzzes the frame header check that every daemon runs before it
 * allocates anything for a peer's payload, then walks a stream of frames
 * as the daemons do.
 */
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_hdr h;
	const char *why;
	size_t off = 0;

	while (size - off >= FRAME_HDR_SIZE) {
		if (frame_hdr_decode(data + off, &h, &why) == -1)
			break;
		if (h.len > PROTO_MAX_PAYLOAD || h.len < proto_msg(h.type)->min_len)
			__builtin_trap();
		off += FRAME_HDR_SIZE;
		if (size - off < h.len)
			break;
		off += h.len;
	}
	return 0;
}
