/*
 * Fuzzes the agent's ring reader with ring contents and a head position
 * chosen by a hostile task: ring_read must report corruption, never read
 * outside the ring or hand out a record of impossible length; nor may
 * held reads, their ACK and the relief of a full ring, whatever the
 * task claims of its waiting threads (blocking mode).  The same
 * bytes, as a control page, go through the task's breakpoint check,
 * which must stay inside the page whatever it holds.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "record.h"
#include "ring.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Any control page: a hit is an entry of the page, its group ended. */
static void
check_ctl(struct ring *rg, const uint8_t *data, size_t size)
{
	struct ring_ctl *ctl = &rg->hdr->ctl;
	struct breakpoint hit;
	struct record r;
	size_t n = size < sizeof(ctl->bp) ? size : sizeof(ctl->bp);

	memset(ctl->bp, 0, sizeof(ctl->bp));
	memcpy(ctl->bp, data, n);
	atomic_store(&ctl->gen, size > 0 ? data[0] & 2 : 0);
	atomic_store(&ctl->nbp, size > 4 ? wire_get32(data + size - 4) : 1);
	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_send;
	r.group = (const char *)data;
	r.glen = (uint8_t)(size > 255 ? 255 : size);
	if (ring_bp_match(rg->hdr, 0x40005, &r, 7, PMON_BEGIN, &hit) == 1 &&
	    (hit.id == 0 || hit.group[BREAKPOINT_GROUP_MAX] != '\0'))
		__builtin_trap();
}

/*
 * The same ring read as the agent reads it while a coordinator holds
 * the records: the tail moves only by an ACK or a relief, never past
 * what was read.
 */
static void
check_held(struct ring *rg, uint64_t head, uint64_t tail, uint64_t seq)
{
	static uint8_t out[RECORD_MAX_SIZE];
	const char *why;
	unsigned n;

	atomic_store(&rg->hdr->tail, tail);
	atomic_store(&rg->hdr->head, head);
	ring_hold(rg);
	while (ring_read(rg, out, sizeof(out), &n, &why) > 0)
		;
	(void)ring_ack(rg, seq);
	if (atomic_load(&rg->hdr->tail) - tail > rg->rd - tail)
		__builtin_trap();
	(void)ring_relieve(rg);
	if (atomic_load(&rg->hdr->tail) - tail > rg->rd - tail)
		__builtin_trap();
	ring_rewind(rg);
	rg->hold = 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ring rg = { .fd = -1 };
	static uint8_t out[RECORD_MAX_SIZE];
	const char *why;
	unsigned n;
	uint64_t head, tail;

	if (size < 16)
		return 0;
	if (rg.hdr == NULL && ring_create(&rg, RING_MIN_SIZE) == -1)
		return 0;
	head = wire_get64(data);
	tail = wire_get64(data + 8);
	data += 16;
	size -= 16;
	if (size > rg.size)
		size = rg.size;
	memset(rg.data, 0, rg.size);
	memcpy(rg.data, data, size);
	atomic_store(&rg.hdr->tail, tail);
	atomic_store(&rg.hdr->head, head);
	atomic_store(&rg.hdr->waiters, size > 0 ? data[size - 1] & 3 : 0);
	while (ring_read(&rg, out, sizeof(out), &n, &why) > 0)
		;
	check_held(&rg, head, tail, size > 8 ? wire_get64(data) : 0);
	check_ctl(&rg, data, size);
	return 0;
}
