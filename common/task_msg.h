/*
 * The frames a task sends its agent (doc/protocol.md): TASK_HELLO first,
 *
 *	i32 tid, u32 pid, i32 parent_tid, u64 spawn_seq, str program
 *
 * and afterwards only TASK_STOPPED, when it stops at a breakpoint
 * (doc/control.md),
 *
 *	u32 bp_id, u64 seq
 *
 * and TASK_FULL (no payload), when it waits for room in its full ring in
 * blocking mode (doc/capture.md),
 *
 * and the one frame the agent sends back, TASK_READY, once the task's
 * control page holds the breakpoint table (the task waits for it),
 *
 *	u32 nbp
 *
 * The contract between a task and its agent, compiled into both the
 * instrumentation library and the agent: each frame's encoder and
 * decoder, the task's send of its hello and its wait for TASK_READY.
 * A task is not trusted: the decoders check every field.
 */
#ifndef PMON_TASK_MSG_H
#define PMON_TASK_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

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

#define TASK_STOPPED_LEN	12
#define TASK_STOPPED_FRAME	(FRAME_HDR_SIZE + TASK_STOPPED_LEN)
#define TASK_FULL_FRAME		FRAME_HDR_SIZE
#define TASK_READY_LEN		4
#define TASK_READY_FRAME	(FRAME_HDR_SIZE + TASK_READY_LEN)
#define TASK_READY_WAIT_MS	1000	/* the longest a task waits for it */

size_t	task_hello_encode(uint8_t *out, const struct task_hello *);
int	task_hello_decode(const uint8_t *payload, size_t len,
	    struct task_hello *, const char **why);
int	task_hello_send(int fd, const struct task_hello *, int ring_fd);
size_t	task_stopped_encode(uint8_t *out, uint32_t bp_id, uint64_t seq);
int	task_stopped_decode(const uint8_t *payload, size_t len,
	    uint32_t *bp_id, uint64_t *seq, const char **why);
size_t	task_full_encode(uint8_t *out);
size_t	task_ready_encode(uint8_t *out, uint32_t nbp);
int	task_ready_wait(int fd, int ms, uint32_t *nbp);

#endif
