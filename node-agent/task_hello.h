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
 * The encoders, the task's send of its hello and its wait for
 * TASK_READY are inline so that the instrumentation library (which
 * links no agent object), the agent's tests and bench_agent use the same
 * code; the agent's validating decoders are
 * agent_parse_task_hello() and agent_parse_task_stopped() (agent.h).
 */
#ifndef PMON_TASK_HELLO_H
#define PMON_TASK_HELLO_H

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

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

/*
 * Sends h as TASK_HELLO on fd, the task's connection to its agent, with
 * ring_fd (the ring's memfd) attached; never blocks.  Returns 0, or -1
 * when the frame did not go out whole.
 */
static inline int
task_hello_send(int fd, const struct task_hello *h, int ring_fd)
{
	uint8_t frame[TASK_HELLO_FRAME_MAX];
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} cm;
	struct msghdr msg;
	struct iovec iov;
	struct cmsghdr *c;

	iov.iov_base = frame;
	iov.iov_len = task_hello_encode(frame, h);
	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &ring_fd, sizeof(int));
	return sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) ==
	    (ssize_t)iov.iov_len ? 0 : -1;
}

#define TASK_STOPPED_LEN	12
#define TASK_STOPPED_FRAME	(FRAME_HDR_SIZE + TASK_STOPPED_LEN)

/* Writes the whole TASK_STOPPED frame into out (TASK_STOPPED_FRAME bytes). */
static inline size_t
task_stopped_encode(uint8_t *out, uint32_t bp_id, uint64_t seq)
{
	frame_hdr_encode(out, MSG_TASK_STOPPED, TASK_STOPPED_LEN);
	wire_put32(out + FRAME_HDR_SIZE, bp_id);
	wire_put64(out + FRAME_HDR_SIZE + 4, seq);
	return TASK_STOPPED_FRAME;
}

#define TASK_FULL_FRAME		FRAME_HDR_SIZE

/* Writes the whole TASK_FULL frame into out (TASK_FULL_FRAME bytes). */
static inline size_t
task_full_encode(uint8_t *out)
{
	frame_hdr_encode(out, MSG_TASK_FULL, 0);
	return TASK_FULL_FRAME;
}

#define TASK_READY_LEN		4
#define TASK_READY_FRAME	(FRAME_HDR_SIZE + TASK_READY_LEN)
#define TASK_READY_WAIT_MS	1000	/* the longest a task waits for it */

/* Writes the whole TASK_READY frame into out (TASK_READY_FRAME bytes). */
static inline size_t
task_ready_encode(uint8_t *out, uint32_t nbp)
{
	frame_hdr_encode(out, MSG_TASK_READY, TASK_READY_LEN);
	wire_put32(out + FRAME_HDR_SIZE, nbp);
	return TASK_READY_FRAME;
}

/*
 * The task, after its TASK_HELLO: waits at most ms for the agent's
 * TASK_READY on fd (non-blocking or not) and reads it, and nothing past
 * it.  Returns 0 and the number of entries in *nbp, or -1 when ms passed,
 * the agent closed, or it sent anything but a well-formed TASK_READY
 * (a bad header is not waited out).  Signals do not stretch the wait.
 */
static inline int
task_ready_wait(int fd, int ms, uint32_t *nbp)
{
	uint8_t frame[TASK_READY_FRAME];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct frame_hdr h;
	struct timespec ts;
	const char *why;
	size_t got = 0, want = FRAME_HDR_SIZE;
	int64_t end, left;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec +
	    (int64_t)ms * 1000000;
	while (got < sizeof(frame)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		left = end - ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
		if (left <= 0)
			return -1;
		n = poll(&pfd, 1, (int)((left + 999999) / 1000000));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		n = recv(fd, frame + got, want - got, MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
		if (got == FRAME_HDR_SIZE) {
			if (frame_hdr_decode(frame, &h, &why) == -1 ||
			    h.type != MSG_TASK_READY)
				return -1;
			want = sizeof(frame);
		}
	}
	*nbp = wire_get32(frame + FRAME_HDR_SIZE);
	return 0;
}

#endif
