/*
 * The BREAKPOINTS message (breakpoint.h): the coordinator's encoder and
 * the agent's decoder, which checks every entry.
 */
#include <string.h>

#include "breakpoint.h"
#include "record.h"
#include "wire.h"

/*
 * One entry of BREAKPOINTS (doc/protocol.md): BP_WIRE_FIXED bytes, then
 * the group as a str.  out has room for BP_WIRE_MAX bytes; a group
 * longer than BREAKPOINT_GROUP_MAX is cut.  Returns the bytes written.
 */
size_t
breakpoint_encode(uint8_t *out, const struct breakpoint *bp)
{
	size_t n = strnlen(bp->group, BREAKPOINT_GROUP_MAX);

	wire_put32(out, bp->id);
	wire_put32(out + 4, (uint32_t)bp->tid);
	out[8] = bp->call;
	out[9] = bp->phase;
	wire_put16(out + 10, bp->match);
	wire_put32(out + 12, (uint32_t)bp->peer);
	wire_put32(out + 16, (uint32_t)bp->tag);
	wire_put32(out + 20, (uint32_t)bp->ctx);
	wire_put64(out + 24, bp->seq);
	wire_put16(out + BP_WIRE_FIXED, (uint16_t)n);
	memcpy(out + BP_WIRE_FIXED + 2, bp->group, n);
	return BP_WIRE_FIXED + 2 + n;
}

/*
 * Decodes one entry from in (avail bytes).  Returns 0 with the bytes it
 * took in *used, or -1 with *why.
 */
int
breakpoint_decode(const uint8_t *in, size_t avail, struct breakpoint *bp,
    size_t *used, const char **why)
{
	size_t glen;

	memset(bp, 0, sizeof(*bp));
	if (avail < BP_WIRE_FIXED + 2) {
		*why = "breakpoint truncated";
		return -1;
	}
	bp->id = wire_get32(in);
	bp->tid = (int32_t)wire_get32(in + 4);
	bp->call = in[8];
	bp->phase = in[9];
	bp->match = wire_get16(in + 10);
	bp->peer = (int32_t)wire_get32(in + 12);
	bp->tag = (int32_t)wire_get32(in + 16);
	bp->ctx = (int32_t)wire_get32(in + 20);
	bp->seq = wire_get64(in + 24);
	glen = wire_get16(in + BP_WIRE_FIXED);
	if (glen > BREAKPOINT_GROUP_MAX) {
		*why = "breakpoint group name too long";
		return -1;
	}
	if (avail - (BP_WIRE_FIXED + 2) < glen) {
		*why = "breakpoint truncated";
		return -1;
	}
	memcpy(bp->group, in + BP_WIRE_FIXED + 2, glen);
	if (memchr(bp->group, '\0', glen) != NULL) {
		*why = "breakpoint group name holds a NUL";
		return -1;
	}
	if (bp->id == 0) {
		*why = "breakpoint id 0";
		return -1;
	}
	if (bp->match & ~BP_ALL) {
		*why = "breakpoint matches unknown fields";
		return -1;
	}
	if (bp->phase != PMON_BEGIN && bp->phase != PMON_END) {
		*why = "breakpoint has an unknown phase";
		return -1;
	}
	if (bp->call >= PMON_CALL_MAX) {
		*why = "breakpoint names an unknown call";
		return -1;
	}
	*used = BP_WIRE_FIXED + 2 + glen;
	return 0;
}

/*
 * The whole table into payload (BREAKPOINTS_PAYLOAD_MAX bytes), at most
 * BREAKPOINTS_MAX entries (a task could not hold more: they are cut).
 * Returns the payload's length.
 */
size_t
breakpoints_encode(uint8_t *payload, const struct breakpoint *bps, size_t n)
{
	size_t i, len = 2;

	if (n > BREAKPOINTS_MAX)
		n = BREAKPOINTS_MAX;
	wire_put16(payload, (uint16_t)n);
	for (i = 0; i < n; i++)
		len += breakpoint_encode(payload + len, &bps[i]);
	return len;
}

/*
 * BREAKPOINTS: u16 n, then n entries, at most BREAKPOINTS_MAX, into bps.
 * One bad entry rejects the whole table.
 */
int
breakpoints_decode(const uint8_t *payload, size_t len,
    struct breakpoint *bps, unsigned *n, const char **why)
{
	size_t off = 2, used;
	unsigned i, count;

	*n = 0;
	if (len < 2) {
		*why = "BREAKPOINTS truncated";
		return -1;
	}
	count = wire_get16(payload);
	if (count > BREAKPOINTS_MAX) {
		*why = "BREAKPOINTS has more entries than a task can hold";
		return -1;
	}
	for (i = 0; i < count; i++, off += used)
		if (breakpoint_decode(payload + off, len - off, &bps[i], &used,
		    why) == -1)
			return -1;
	if (off != len) {
		*why = "BREAKPOINTS has trailing bytes";
		return -1;
	}
	*n = count;
	return 0;
}
