/*
 * The task-agent contract (task_msg.h): the frames between a task and
 * its agent, encoded and decoded here for both.
 */
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "task_msg.h"
#include "wire.h"

/*
 * Writes the whole frame (header and payload) into out, which has room for
 * TASK_HELLO_FRAME_MAX bytes; a longer program name is cut.  Returns the
 * frame's size.
 */
size_t
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
int
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

/* Writes the whole TASK_STOPPED frame into out (TASK_STOPPED_FRAME bytes). */
size_t
task_stopped_encode(uint8_t *out, uint32_t bp_id, uint64_t seq)
{
	frame_hdr_encode(out, MSG_TASK_STOPPED, TASK_STOPPED_LEN);
	wire_put32(out + FRAME_HDR_SIZE, bp_id);
	wire_put64(out + FRAME_HDR_SIZE + 4, seq);
	return TASK_STOPPED_FRAME;
}

/* Writes the whole TASK_FULL frame into out (TASK_FULL_FRAME bytes). */
size_t
task_full_encode(uint8_t *out)
{
	frame_hdr_encode(out, MSG_TASK_FULL, 0);
	return TASK_FULL_FRAME;
}

/* Writes the whole TASK_READY frame into out (TASK_READY_FRAME bytes). */
size_t
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
int
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

/*
 * Decodes a TASK_HELLO payload of len bytes.  Returns 0, or -1 with *why
 * naming the problem.
 */
int
task_hello_decode(const uint8_t *payload, size_t len, struct task_hello *h,
    const char **why)
{
	struct wire_reader r;

	memset(h, 0, sizeof(*h));
	wire_reader_init(&r, payload, len);
	h->tid = (int32_t)wire_read32(&r);
	h->pid = wire_read32(&r);
	h->parent_tid = (int32_t)wire_read32(&r);
	h->spawn_seq = wire_read64(&r);
	wire_readstr(&r, h->program, sizeof(h->program));
	if (r.err) {
		*why = "TASK_HELLO truncated or program name invalid";
		return -1;
	}
	if (r.off != len) {
		*why = "TASK_HELLO has trailing bytes";
		return -1;
	}
	if (h->tid <= 0) {
		*why = "TASK_HELLO tid is not a task id";
		return -1;
	}
	if (h->pid == 0 || h->pid > INT32_MAX) {
		*why = "TASK_HELLO pid out of range";
		return -1;
	}
	if (h->parent_tid < 0 || (h->parent_tid == 0) != (h->spawn_seq == 0)) {
		*why = "TASK_HELLO parent_tid and spawn_seq disagree";
		return -1;
	}
	return 0;
}

/* TASK_STOPPED: the task stopped itself at breakpoint bp_id. */
int
task_stopped_decode(const uint8_t *payload, size_t len, uint32_t *bp_id,
    uint64_t *seq, const char **why)
{
	if (len != TASK_STOPPED_LEN) {
		*why = "TASK_STOPPED has the wrong length";
		return -1;
	}
	*bp_id = wire_get32(payload);
	*seq = wire_get64(payload + 4);
	if (*bp_id == 0 || *seq == 0) {
		*why = "TASK_STOPPED names breakpoint 0 or record 0";
		return -1;
	}
	return 0;
}
