/*
 * Fuzzes the record decoder with what an agent could receive from a
 * hostile task and a coordinator from a hostile agent: a run of records
 * as in a TASK_RECORDS payload.  Every field a consumer indexes must be
 * checked; the decoder must never read past the buffer.
 */
#include <stddef.h>
#include <stdint.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct record r;
	const char *why;
	volatile int32_t sink = 0;
	size_t off = 0;
	unsigned i;

	while (off < size && record_decode(data + off, size - off, &r,
	    &why) == 0) {
		for (i = 0; i < r.npeers; i++)
			sink += record_peer(&r, i);
		if (r.glen > 0)
			sink += r.group[r.glen - 1];
		sink += record_is_send(&r) + record_is_recv(&r);
		(void)record_call_name(r.call);
		off += r.len;
	}
	(void)sink;
	return 0;
}
