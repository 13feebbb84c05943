/*
 * Fuzzes the packed record decoder with what a coordinator could get
 * from a hostile agent: a TASK_PACKED payload (the first byte picks the
 * time encoding and whether the task already had records), unpacked
 * against a task's state.  Every record must come out as one
 * record_decode accepts, and nothing may be read past the payload.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coord.h"
#include "pack.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
check(int32_t tid, const struct record *r, void *arg, const char **why)
{
	uint8_t buf[RECORD_MAX_SIZE];
	struct record again;
	size_t n;

	(void)tid;
	(void)arg;
	n = record_encode(buf, r, NULL);
	if (n != r->len || record_decode(buf, n, &again, why) == -1)
		__builtin_trap();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pack_state st;
	uint8_t buf[16], tbuf[16];
	struct pack_out po = { buf, 0, tbuf, 0 };
	struct record r;
	const char *why;

	if (size < 1)
		return 0;
	pack_state_init(&st);
	if (data[0] & 1) {
		/* A state that has seen a record: a send begin, seq 5. */
		memset(&r, 0, sizeof(r));
		r.call = PMON_CALL_send;
		r.seq = 5;
		r.t_ns = 1000000;
		r.peer = r.tag = r.inst = -1;
		pack_record(&st, PACK_TIME_EXACT, &po, &r);
	}
	(void)task_packed_decode(data + 1, size - 1, &st, check, NULL,
	    &why);
	return 0;
}
