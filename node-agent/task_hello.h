/*
 * TASK_HELLO, the one frame a task sends its agent (doc/protocol.md):
 *
 *	i32 tid, u32 pid, i32 parent_tid, u64 spawn_seq, str program
 *
 * The encoder is inline so that both the instrumentation library (which
 * links no agent object) and the agent's tests use the same code; the
 * agent's validating decoder is agent_parse_task_hello() (agent.h).
 */
#ifndef PMON_TASK_HELLO_H
#define PMON_TASK_HELLO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto.h"
#include "wire.h"

#define TASK_HELLO_FIXED	22	/* payload without the program name */
#define TASK_PROGRAM_MAX	255	/* longest program name we send */
#define TASK_HELLO_FRAME_MAX	\
	(FRAME_HDR_SIZE + TASK_HELLO_FIXED + TASK_PROGRAM_MAX)

struct task_hello {
	int32_t		tid;
	uint32_t	pid;
	int32_t		parent_tid;	/* 0: not spawned by a monitored task */
	uint64_t	spawn_seq;
	char		program[TASK_PROGRAM_MAX + 1];
};

/*
 * Writes the whole frame (header and payload) into out, which has room for
 * TASK_HELLO_FRAME_MAX bytes; a longer program name is cut.  Returns the
 * frame's size.
 */
static inline size_t
task_hello_encode(uint8_t *out, const struct task_hello *h)
{
	size_t n = strnlen(h->program, TASK_PROGRAM_MAX);
	uint8_t *p = out + FRAME_HDR_SIZE;

	wire_put32(p, (uint32_t)h->tid);
	wire_put32(p + 4, h->pid);
	wire_put32(p + 8, (uint32_t)h->parent_tid);
	wire_put64(p + 12, h->spawn_seq);
	wire_put16(p + 20, (uint16_t)n);
	memcpy(p + TASK_HELLO_FIXED, h->program, n);
	frame_hdr_encode(out, MSG_TASK_HELLO, (uint32_t)(TASK_HELLO_FIXED + n));
	return FRAME_HDR_SIZE + TASK_HELLO_FIXED + n;
}

#endif
