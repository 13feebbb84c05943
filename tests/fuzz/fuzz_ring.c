/*
 * Fuzzes the agent's ring reader with ring contents and a head position
 * chosen by a hostile task: ring_read must report corruption, never read
 * outside the ring or hand out a record of impossible length.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "record.h"
#include "ring.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	while (ring_read(&rg, out, sizeof(out), &n, &why) > 0)
		;
	return 0;
}
