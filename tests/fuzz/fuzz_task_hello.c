/*
 * Fuzzes the agent's TASK_HELLO decoder: the first bytes a task (any local
 * process that can reach the agent's socket) sends.  The frame header is
 * checked as the agent checks it, then the payload is decoded strictly.
 */
#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_hello th;
	struct frame_hdr h;
	const char *why;

	if (size < FRAME_HDR_SIZE ||
	    frame_hdr_decode(data, &h, &why) == -1 ||
	    h.type != MSG_TASK_HELLO || h.len != size - FRAME_HDR_SIZE)
		return 0;
	if (task_hello_decode(data + FRAME_HDR_SIZE, h.len, &th,
	    &why) == 0 && th.program[TASK_PROGRAM_MAX] != '\0')
		__builtin_trap();
	return 0;
}
