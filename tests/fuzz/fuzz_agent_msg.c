/*
 * Fuzzes the agent's decoders of what reaches it after a task's hello:
 * TASK_STOPPED from a task (untrusted), CONTROL and BREAKPOINTS from the
 * coordinator (trusted, but checked), ACK among them.  A stream of
 * frames goes through them as the agent takes them; a table the decoder accepts is written
 * into a real ring's control page, and the task's check must then find
 * a breakpoint for a call made to match its first entry.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent.h"
#include "proto.h"
#include "record.h"
#include "ring.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The call that entry bp is about, as the task would record it. */
static void
check_table(struct ring *rg, const struct breakpoint *bps, unsigned n)
{
	const struct breakpoint *bp = &bps[0];
	struct breakpoint hit;
	struct record r;
	unsigned i;

	ring_ctl_write(rg->hdr, bps, n);
	if (atomic_load(&rg->hdr->ctl.nbp) != n)
		__builtin_trap();
	if (n == 0)
		return;
	memset(&r, 0, sizeof(r));
	r.call = bp->call != 0 ? bp->call : PMON_CALL_send;
	r.peer = bp->peer;
	r.tag = bp->tag;
	r.ctx = bp->ctx;
	r.group = bp->group;
	r.glen = (uint8_t)strlen(bp->group);
	if (ring_bp_match(rg->hdr, bp->tid != 0 ? bp->tid : 1, &r, bp->seq,
	    bp->phase, &hit) != 1)
		__builtin_trap();
	for (i = 0; i < n && bps[i].id != hit.id; i++)
		;
	if (i == n || hit.group[BREAKPOINT_GROUP_MAX] != '\0')
		__builtin_trap();
}

static void
one_frame(struct ring *rg, uint8_t type, const uint8_t *p, size_t len)
{
	struct control_msg m;
	struct breakpoint bps[BREAKPOINTS_MAX];
	const char *why;
	uint32_t bp_id;
	uint64_t seq;
	unsigned n, i;

	switch (type) {
	case MSG_TASK_STOPPED:
		if (task_stopped_decode(p, len, &bp_id, &seq, &why) == 0 &&
		    (bp_id == 0 || seq == 0))
			__builtin_trap();
		break;
	case MSG_CONTROL:
		if (control_decode(p, len, &m, &why) == -1)
			break;
		if (len != 7 + 4 * (size_t)m.n || m.op < CONTROL_STOP ||
		    m.op > CONTROL_INFO)
			__builtin_trap();
		for (i = 0; i < m.n; i++)
			(void)wire_get32(m.tids + 4 * (size_t)i);
		break;
	case MSG_ACK:
		if (ack_decode(p, len, &n, &why) == -1)
			break;
		if (len != 2 + (size_t)n * ACK_ENTRY_LEN)
			__builtin_trap();
		for (i = 0; i < n; i++) {
			int32_t tid;
			int ended;

			ack_entry(p, i, &tid, &seq, &ended);
			if (ended != 0 && ended != 1)
				__builtin_trap();
			/* An ACK frees the fuzzer's ring as it would a task's. */
			ring_ack(rg, seq);
		}
		break;
	case MSG_BREAKPOINTS:
		if (breakpoints_decode(p, len, bps, &n, &why) == 0) {
			if (n > BREAKPOINTS_MAX)
				__builtin_trap();
			check_table(rg, bps, n);
		}
		break;
	default:
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ring rg = { .fd = -1 };
	struct frame_hdr h;
	const char *why;
	size_t off = 0;

	if (rg.hdr == NULL && ring_create(&rg, RING_MIN_SIZE) == -1)
		return 0;
	while (size - off >= FRAME_HDR_SIZE) {
		if (frame_hdr_decode(data + off, &h, &why) == -1)
			break;
		off += FRAME_HDR_SIZE;
		if (size - off < h.len)
			break;
		one_frame(&rg, h.type, data + off, h.len);
		off += h.len;
	}
	return 0;
}
