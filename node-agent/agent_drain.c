/*
 * Draining a task's ring: its records, checked and with their times
 * converted (agent_clock.c), batched into TASK_RECORDS or packed into
 * TASK_PACKED frames (doc/protocol.md).
 */
#include <string.h>

#include <event2/buffer.h>

#include "agent.h"
#include "pack.h"
#include "proto.h"
#include "record.h"
#include "wire.h"

/* Rewrites t_ns (u64 at byte 12) of one record in place, as agent_clock_ns. */
static void
shift_time(struct ring *rg, uint8_t *rec)
{
	wire_put64(rec + 12, agent_clock_ns(rg, wire_get64(rec + 12)));
}

/*
 * Every record of a batch must decode: the coordinator will trust them.
 * Each record's time is converted (agent_clock_ns) once it has decoded.
 */
static int
check_records(struct ring *rg, uint8_t *p, size_t len, int *last_call,
    const char **why)
{
	struct record r;
	size_t off;

	for (off = 0; off < len; off += r.len) {
		if (record_decode(p + off, len - off, &r, why) == -1)
			return -1;
		if (agent_clock_shifts(rg))
			shift_time(rg, p + off);
		*last_call = r.call;
	}
	return 0;
}

/*
 * Packs a batch of ring records into TASK_PACKED frames on out: every
 * record must decode (the coordinator will trust them) and go forward
 * in sequence.  Each time is converted first (agent_clock_ns).
 */
static int
pack_records(struct ring *rg, struct agent_packer *pk, int32_t tid,
    struct evbuffer *out, const uint8_t *p, size_t len, int *last_call,
    const char **why)
{
	const size_t room = PROTO_MAX_PAYLOAD - TASK_PACKED_HDR_SIZE -
	    PACK_RECORD_MAX - PACK_TIME_MAX;
	struct pack_out po = { pk->buf, 0, pk->tbuf, 0 };
	struct record r;
	uint32_t count = 0;
	size_t off;

	for (off = 0; off < len; off += r.len) {
		if (record_decode(p + off, len - off, &r, why) == -1)
			return -1;
		if (pk->ps->started && r.seq <= pk->ps->seq) {
			*why = "record sequence number does not go forward";
			return -1;
		}
		r.t_ns = agent_clock_ns(rg, r.t_ns);
		if (po.nrec + po.ntime > room) {
			agent_frame_packed(out, tid, pk, &po, count);
			po.nrec = po.ntime = 0;
			count = 0;
		}
		pack_record(pk->ps, pk->mode, &po, &r);
		count++;
		*last_call = r.call;
	}
	if (count > 0)
		agent_frame_packed(out, tid, pk, &po, count);
	pk->records += count;
	return 0;
}

/*
 * Moves the ring's records onto out, oldest first, until the ring is
 * empty or about max bytes of them were moved: as TASK_RECORDS when pk
 * is NULL, else packed into TASK_PACKED against pk's state.  batch is a
 * scratch buffer of batchsize bytes (at least RECORD_MAX_SIZE, well under
 * PROTO_MAX_PAYLOAD).  When last_call is not NULL and records were moved,
 * *last_call is the call (enum pmon_call) of the last one; it is left
 * alone when the ring was empty.  Returns 0, or -1 with *why when the
 * task has corrupted its ring.
 */
static int
ring_drain(struct ring *rg, int32_t tid, struct evbuffer *out,
    uint8_t *batch, size_t batchsize, struct agent_packer *pk, size_t max,
    int *last_call, const char **why)
{
	size_t moved = 0;
	unsigned count;
	ssize_t n;
	int last = -1;

	if (rg->clock == RING_CLOCK_TSC)
		agent_clock_sample();
	while (moved < max) {
		n = ring_read(rg, batch, batchsize, &count, why);
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		if (pk != NULL) {
			if (pack_records(rg, pk, tid, out, batch, (size_t)n,
			    &last, why) == -1)
				return -1;
		} else {
			if (check_records(rg, batch, (size_t)n, &last,
			    why) == -1)
				return -1;
			agent_frame_records(out, tid, batch, (size_t)n, count);
		}
		if (last_call != NULL)
			*last_call = last;
		moved += (size_t)n;
	}
	return 0;
}

int
agent_ring_drain(struct ring *rg, int32_t tid, struct evbuffer *out,
    uint8_t *batch, size_t batchsize, size_t max, int *last_call,
    const char **why)
{
	return ring_drain(rg, tid, out, batch, batchsize, NULL, max,
	    last_call, why);
}

int
agent_ring_drain_packed(struct ring *rg, int32_t tid, struct evbuffer *out,
    uint8_t *batch, size_t batchsize, struct agent_packer *pk, size_t max,
    int *last_call, const char **why)
{
	return ring_drain(rg, tid, out, batch, batchsize, pk, max, last_call,
	    why);
}
