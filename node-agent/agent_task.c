/*
 * Tasks: the unix socket instrumented tasks register on, their TASK_HELLO
 * with the ring's memfd, and the rings' lifetimes.
 *
 * A task's socket carries TASK_HELLO, then nothing but TASK_STOPPED (the
 * task stopped itself at a breakpoint: its ring is drained at once) and
 * TASK_FULL (in blocking mode, it waits for room in its ring: drained at
 * once too, if the coordinator keeps up); by closing, it tells us that
 * the task is gone.  We send one frame back,
 * TASK_READY, once the task's control page holds the breakpoint table:
 * the task waits for it before it goes on.  A task that misbehaves is
 * logged and dropped (its ring drained a last time); the agent keeps
 * serving the others.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "agent.h"
#include "log.h"
#include "paths.h"
#include "proto.h"
#include "record.h"
#include "xmalloc.h"

static void	task_read_cb(int, short, void *);

static time_t
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void
task_free(struct agent_task *t)
{
	struct agent *a = t->agent;

	TAILQ_REMOVE(&a->tasks, t, entry);
	a->ntasks--;
	if (t->ev != NULL)
		event_free(t->ev);
	if (t->fd != -1)
		close(t->fd);
	if (t->ringfd != -1)
		close(t->ringfd);
	ring_close(&t->ring);
	free(t);
}

/* Keeps an ended task's ring, and nothing else, until its end is acked. */
static void
task_hold_ended(struct agent_task *t)
{
	if (t->ev != NULL)
		event_free(t->ev);
	t->ev = NULL;
	if (t->fd != -1)
		close(t->fd);
	t->fd = -1;
	t->state = TASK_S_ENDED;
}

/* A task that never became active: nothing was sent about it. */
static void
task_reject(struct agent_task *t, const char *why)
{
	/* Before its hello: a local flood must not flood the log. */
	if (log_rate_ok(&t->agent->conn_log))
		log_warnx("task (pid %ld): %s; dropped", (long)t->peer_pid,
		    why);
	task_free(t);
}

/*
 * Every drain of a task's ring: at most max bytes into TASK_RECORDS.
 * Notes whether the last record moved is a BREAK (the task is then on
 * its way to raise(SIGSTOP), or stopped there: agent_control.c waits
 * for that stop before it continues the task); a drain that moves
 * nothing changes nothing.  A ring that unacknowledged records fill
 * is relieved (ring_relieve): the task must not drop for a slow ACK.
 */
static int
task_ring_drain(struct agent_task *t, size_t max, const char **why)
{
	struct agent *a = t->agent;
	struct agent_packer pk = { a->pack, a->packt, &t->pack, a->time_mode,
	    0 };
	int last = -1;

	/* Dump mode prints the records as they are: TASK_RECORDS. */
	if (agent_ring_drain_packed(&t->ring, t->hello.tid, a->out, a->batch,
	    AGENT_BATCH, a->dump ? NULL : &pk, max, &last, why) == -1)
		return -1;
	a->nrecords += pk.records;
	if (last != -1)
		t->at_break = last == PMON_CALL_BREAK;
	/* A breakpoint is a flush point: the coordinator acts on it. */
	if (last == PMON_CALL_BREAK)
		a->want_sync = 1;
	if (ring_relieve(&t->ring))
		t->relieved++;
	return 0;
}

/*
 * What blocking mode cost the task, from its ring (doc/capture.md): at
 * its end, like the records it lost.
 */
static void
task_log_waits(const struct agent_task *t)
{
	const struct ring_hdr *h = t->ring.hdr;
	uint64_t n = atomic_load_explicit(&h->waits, memory_order_relaxed);

	if (n == 0)
		return;
	log_warnx("task t%x (%s) waited %llu times for room in its ring: "
	    "%.1f ms in all, %.1f ms at most", (unsigned)t->hello.tid,
	    t->hello.program, (unsigned long long)n,
	    (double)atomic_load_explicit(&h->wait_ns, memory_order_relaxed) /
	    1e6, (double)atomic_load_explicit(&h->wait_max_ns,
	    memory_order_relaxed) / 1e6);
}

/*
 * The end of an active task: the last records, then TASK_END.  why is
 * NULL for a normal end (the task closed its socket).  Talking to a
 * coordinator, the task is kept, its ring mapped, until the coordinator
 * acknowledges its end (agent_ack): if the coordinator goes away first,
 * its successor gets all of it again (agent_tasks_resume).
 */
static void
task_end(struct agent_task *t, const char *why)
{
	struct agent *a = t->agent;
	const char *rwhy;
	int connected = a->dump || a->coord != NULL;

	if (connected && task_ring_drain(t, SIZE_MAX, &rwhy) == -1) {
		log_warnx("task t%x: %s", (unsigned)t->hello.tid, rwhy);
		why = why ? why : "corrupt ring";
	}
	if (why != NULL)
		log_warnx("task t%x (%s): %s; dropped",
		    (unsigned)t->hello.tid, t->hello.program, why);
	else
		log_debug("task t%x (%s) ended", (unsigned)t->hello.tid,
		    t->hello.program);
	t->end_dropped = ring_dropped(&t->ring);
	task_log_waits(t);
	if (connected)
		agent_frame_task_end(a->out, t->hello.tid, t->end_dropped);
	if (a->dump)
		task_free(t);
	else
		task_hold_ended(t);
	agent_output(a);
}

struct agent_task *
agent_task_find(struct agent *a, int32_t tid)
{
	struct agent_task *t;

	TAILQ_FOREACH(t, &a->tasks, entry)
		if (t->state == TASK_S_ACTIVE && t->hello.tid == tid)
			return t;
	return NULL;
}

/*
 * TASK_READY: the control page holds the table, the task may go on.  A
 * fresh socket has room for it; if it cannot be written (the task is
 * gone), the task, if any, goes on after its wait.  A task that never
 * reads it (it gave up waiting) leaves it in its socket: its close then
 * shows as ECONNRESET, an end like any other.
 */
static void
task_ready(struct agent_task *t, unsigned nbp)
{
	uint8_t frame[TASK_READY_FRAME];

	task_ready_encode(frame, nbp);
	if (send(t->fd, frame, sizeof(frame), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(frame))
		log_debug("task t%x: TASK_READY not sent",
		    (unsigned)t->hello.tid);
}

/*
 * The hello is complete: check it, attach the ring, write the breakpoint
 * table into it, announce the task, and let the task go on.
 */
static void
task_activate(struct agent_task *t)
{
	struct agent *a = t->agent;
	struct frame_hdr h;
	const char *why;

	if (frame_hdr_decode(t->hbuf, &h, &why) == -1)
		return task_reject(t, why);
	if (h.type != MSG_TASK_HELLO)
		return task_reject(t, "first frame is not TASK_HELLO");
	if (task_hello_decode(t->hbuf + FRAME_HDR_SIZE, h.len,
	    &t->hello, &why) == -1)
		return task_reject(t, why);
	if (t->ringfd == -1)
		return task_reject(t, "TASK_HELLO came without a ring");
	if ((pid_t)t->hello.pid != t->peer_pid)
		return task_reject(t, "TASK_HELLO pid is not the peer's");
	if (agent_task_find(a, t->hello.tid) != NULL)
		return task_reject(t, "a task with this tid is registered");
	if (ring_attach(&t->ring, t->ringfd, &why) == -1)
		return task_reject(t, why);
	t->ringfd = -1;		/* now owned by the ring */
	if (!a->dump)
		ring_hold(&t->ring);	/* until the coordinator acks */
	t->state = TASK_S_ACTIVE;
	t->hlen = 0;		/* hbuf now takes TASK_STOPPED frames */
	pack_state_init(&t->pack);
	ring_set_block(&t->ring, a->block_ns);
	ring_ctl_write(t->ring.hdr, a->bps, a->nbp);
	log_debug("task t%x (%s, pid %u) registered",
	    (unsigned)t->hello.tid, t->hello.program, t->hello.pid);
	agent_frame_task_new(a->out, &t->hello);
	task_ready(t, a->nbp > BREAKPOINTS_MAX ? BREAKPOINTS_MAX : a->nbp);
}

/* Takes the fds a recvmsg carried; more than one ring in all is an error. */
static int
take_fds(struct agent_task *t, struct msghdr *msg)
{
	struct cmsghdr *c;
	int fds[4], i, n, bad = 0;

	if (msg->msg_flags & MSG_CTRUNC)
		bad = 1;
	for (c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(fds, CMSG_DATA(c), (size_t)n * sizeof(int));
		for (i = 0; i < n; i++) {
			if (t->ringfd == -1 && !bad)
				t->ringfd = fds[i];
			else {
				close(fds[i]);
				bad = 1;
			}
		}
	}
	return bad ? -1 : 0;
}

/* Bytes of the hello frame still to read: the header, then its payload. */
static size_t
hello_want(const struct agent_task *t)
{
	struct frame_hdr h;
	const char *why;

	if (t->hlen < FRAME_HDR_SIZE)
		return FRAME_HDR_SIZE - t->hlen;
	if (frame_hdr_decode(t->hbuf, &h, &why) == -1 ||
	    h.len > sizeof(t->hbuf) - FRAME_HDR_SIZE)
		return 0;
	return FRAME_HDR_SIZE + h.len - t->hlen;
}

/*
 * Reads what has arrived of the hello.  Returns 0 when the task became
 * active or is still incomplete, -1 when it was dropped.
 */
static int
task_read_hello(struct agent_task *t)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct msghdr msg;
	struct iovec iov;
	ssize_t n;

	for (;;) {
		iov.iov_base = t->hbuf + t->hlen;
		iov.iov_len = hello_want(t);
		if (iov.iov_len == 0)
			break;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cm.buf;
		msg.msg_controllen = sizeof(cm.buf);
		n = recvmsg(t->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0) {
			task_reject(t, n == 0 ? "closed before TASK_HELLO" :
			    strerror(errno));
			return -1;
		}
		t->hlen += (size_t)n;
		if (take_fds(t, &msg) == -1) {
			task_reject(t, "TASK_HELLO carried more than one fd");
			return -1;
		}
	}
	task_activate(t);
	return t->state == TASK_S_ACTIVE ? 0 : -1;
}

/*
 * Moves all of an active task's ring into TASK_RECORDS now.  Returns 0,
 * or -1 when the ring was corrupt and the task has been ended (freed).
 */
int
agent_task_drain(struct agent_task *t)
{
	const char *why;

	if (task_ring_drain(t, SIZE_MAX, &why) == -1) {
		task_end(t, why);
		return -1;
	}
	return 0;
}

/*
 * The task closed its socket (it exited or was killed), whether or not
 * we have read that yet.  Its pid cannot have been reused while the
 * socket is open: a process closes its files before it can be reaped.
 */
int
agent_task_gone(const struct agent_task *t)
{
	struct pollfd pfd = { .fd = t->fd, .events = POLLRDHUP };

	/* An adopted task's fd is a pidfd: readable once it exited. */
	if (t->adopted)
		pfd.events = POLLIN;
	return poll(&pfd, 1, 0) == 1 &&
	    (pfd.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/*
 * TASK_FULL: the task waits for room in its ring (blocking mode).  The
 * ring is drained now rather than at the next tick, unless the
 * coordinator is behind (agent_may_drain): then the records wait in the
 * ring, and the task with them, but what we have read already is freed
 * (a waiting task never waits for an ACK).  Returns 0, or -1 when the
 * task has been ended.
 */
static int
task_full(struct agent_task *t)
{
	const char *why;

	if (!agent_may_drain(t->agent)) {
		if (ring_relieve(&t->ring))
			t->relieved++;
		return 0;
	}
	if (task_ring_drain(t, AGENT_PASS_MAX, &why) == -1) {
		task_end(t, why);
		return -1;
	}
	agent_output(t->agent);
	return 0;
}

/*
 * A complete frame in hbuf after the hello: TASK_STOPPED or TASK_FULL.
 * Returns 0, or -1 when the task has been ended.
 */
static int
task_frame(struct agent_task *t)
{
	struct frame_hdr h;
	uint32_t bp_id;
	uint64_t seq;
	const char *why;

	if (frame_hdr_decode(t->hbuf, &h, &why) == -1) {
		task_end(t, why);
		return -1;
	}
	if (h.type == MSG_TASK_FULL) {
		t->hlen = 0;
		return task_full(t);
	}
	if (task_stopped_decode(t->hbuf + FRAME_HDR_SIZE, h.len, &bp_id,
	    &seq, &why) == -1) {
		task_end(t, why);
		return -1;
	}
	t->hlen = 0;
	log_debug("task t%x (%s) stopped at breakpoint %u, record %llu",
	    (unsigned)t->hello.tid, t->hello.program, bp_id,
	    (unsigned long long)seq);
	if (agent_task_drain(t) == -1)
		return -1;
	agent_output_sync(t->agent);
	return 0;
}

/*
 * Bytes of the frame after the hello still to read: 0 when it is
 * complete, -1 when its header is bad or neither TASK_STOPPED's nor
 * TASK_FULL's.
 */
static ssize_t
frame_want(const struct agent_task *t)
{
	struct frame_hdr h;
	const char *why;

	if (t->hlen < FRAME_HDR_SIZE)
		return (ssize_t)(FRAME_HDR_SIZE - t->hlen);
	if (frame_hdr_decode(t->hbuf, &h, &why) == -1 ||
	    (h.type != MSG_TASK_STOPPED && h.type != MSG_TASK_FULL))
		return -1;
	return (ssize_t)(FRAME_HDR_SIZE + h.len - t->hlen);
}

/*
 * After the hello: TASK_STOPPED and TASK_FULL frames, and the end.  Anything else is a
 * task that misbehaves; like one that is gone, it is ended.  A task that
 * sends frames without end gets a few per turn, as everyone else.
 */
static void
task_read_frames(struct agent_task *t)
{
	ssize_t want, n;
	int frames = 0;

	for (;;) {
		if ((want = frame_want(t)) == -1) {
			task_end(t, "sent a frame other than TASK_STOPPED "
			    "or TASK_FULL");
			return;
		}
		if (want == 0) {
			if (task_frame(t) == -1 || ++frames == 16)
				return;
			continue;
		}
		n = recv(t->fd, t->hbuf + t->hlen, (size_t)want, MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n == 0 || (n == -1 && errno == ECONNRESET)) {
			task_end(t, t->hlen == 0 ? NULL :
			    "closed in the middle of a frame");
			return;
		}
		if (n == -1) {
			task_end(t, strerror(errno));
			return;
		}
		t->hlen += (size_t)n;
	}
}

static void
task_read_cb(int fd, short what, void *arg)
{
	struct agent_task *t = arg;

	(void)fd;
	(void)what;
	if (t->state == TASK_S_HELLO)
		task_read_hello(t);
	else if (t->adopted)
		task_end(t, NULL);	/* its pidfd: the process exited */
	else
		task_read_frames(t);
}

static void
task_new(struct agent *a, int fd)
{
	struct agent_task *t;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    cred.uid != geteuid()) {
		if (log_rate_ok(&a->conn_log))
			log_warnx("task connection from another user refused");
		close(fd);
		return;
	}
	if (a->ntasks >= AGENT_MAX_TASKS) {
		if (log_rate_ok(&a->conn_log))
			log_warnx("task (pid %ld) refused: too many tasks",
			    (long)cred.pid);
		close(fd);
		return;
	}
	t = xcalloc(1, sizeof(*t));
	t->agent = a;
	t->fd = fd;
	t->ringfd = -1;
	t->ring.fd = -1;
	t->peer_pid = cred.pid;
	t->since = mono_now();
	t->state = TASK_S_HELLO;
	TAILQ_INSERT_TAIL(&a->tasks, t, entry);
	a->ntasks++;
	t->ev = event_new(a->base, fd, EV_READ | EV_PERSIST, task_read_cb, t);
	if (t->ev == NULL || event_add(t->ev, NULL) == -1)
		task_reject(t, "cannot watch its socket");
}

/*
 * A task registered with an agent before us (agent_adopt.c): its ring
 * rg (now ours) is read on from its tail, and pidfd tells us when the
 * process exits, as its socket would have.  The coordinator gets
 * TASK_NEW again, which for a task it knows means "re-attached".  The
 * task is not told: it never hears from its agent after TASK_READY.
 * Takes pidfd and rg, also when it fails.
 */
int
agent_task_adopt(struct agent *a, int pidfd, struct ring *rg,
    const struct task_hello *h)
{
	struct agent_task *t;

	if (a->ntasks >= AGENT_MAX_TASKS ||
	    agent_task_find(a, h->tid) != NULL) {
		ring_close(rg);
		close(pidfd);
		return -1;
	}
	t = xcalloc(1, sizeof(*t));
	t->agent = a;
	t->fd = pidfd;
	t->ringfd = -1;
	t->ring = *rg;
	if (!a->dump)
		ring_hold(&t->ring);
	t->peer_pid = (pid_t)h->pid;
	t->since = mono_now();
	t->state = TASK_S_ACTIVE;
	t->adopted = 1;
	t->hello = *h;
	pack_state_init(&t->pack);
	TAILQ_INSERT_TAIL(&a->tasks, t, entry);
	a->ntasks++;
	t->ev = event_new(a->base, pidfd, EV_READ | EV_PERSIST, task_read_cb,
	    t);
	if (t->ev == NULL || event_add(t->ev, NULL) == -1) {
		task_free(t);
		return -1;
	}
	ring_set_block(&t->ring, a->block_ns);
	ring_ctl_write(t->ring.hdr, a->bps, a->nbp);
	log_info("task t%x (%s, pid %u) adopted: its ring is read on from "
	    "byte %llu", (unsigned)h->tid, h->program, h->pid,
	    (unsigned long long)atomic_load(&t->ring.hdr->tail));
	agent_frame_task_new(a->out, &t->hello);
	agent_output(a);
	return 0;
}

/*
 * The task an ACK entry is about: with ended, the ended one of that tid;
 * else the active one, or else an ended one (PVM reuses tids, so both
 * may be here; the older comes first).
 */
static struct agent_task *
ack_task(struct agent *a, int32_t tid, int ended)
{
	struct agent_task *t, *found = NULL;

	TAILQ_FOREACH(t, &a->tasks, entry) {
		if (t->hello.tid != tid || t->state == TASK_S_HELLO)
			continue;
		if (t->state == TASK_S_ENDED && found == NULL)
			found = t;
		if (t->state == TASK_S_ACTIVE && !ended)
			return t;
	}
	return found;
}

/*
 * ACK: the coordinator has released each task's records up to seq (and,
 * with ended, its end): their room in the ring is freed, and an ended
 * task is forgotten.  A bad ACK is logged and ignored.
 */
void
agent_ack(struct agent *a, const uint8_t *p, size_t len)
{
	struct agent_task *t;
	const char *why;
	unsigned i, n;
	uint64_t seq;
	int32_t tid;
	int ended;

	if (ack_decode(p, len, &n, &why) == -1) {
		log_warnx("bad ACK from the coordinator: %s", why);
		return;
	}
	for (i = 0; i < n; i++) {
		ack_entry(p, i, &tid, &seq, &ended);
		if ((t = ack_task(a, tid, ended)) == NULL)
			continue;
		if (ring_ack(&t->ring, seq) == -1)
			log_warnx("task t%x rewrote records it had written",
			    (unsigned)tid);
		if (seq > t->acked)
			t->acked = seq;
		if (ended && t->state == TASK_S_ENDED)
			task_free(t);
	}
}

/*
 * Connected to a coordinator again: every task is announced again with
 * where its records go on (the last ACK + 1) and the last record a
 * coordinator may have had, and everything not acknowledged is sent
 * again, ends included.
 */
void
agent_tasks_resume(struct agent *a)
{
	struct agent_task *t;
	const char *why;

	TAILQ_FOREACH(t, &a->tasks, entry) {
		if (t->state == TASK_S_HELLO)
			continue;
		if (t->pack.started && t->pack.seq > t->shipped)
			t->shipped = t->pack.seq;
		pack_state_init(&t->pack);	/* a new connection */
		agent_frame_task_new(a->out, &t->hello);
		agent_frame_task_resume(a->out, t->hello.tid, t->acked + 1,
		    t->shipped);
		ring_rewind(&t->ring);
		if (task_ring_drain(t, SIZE_MAX, &why) == -1)
			log_warnx("task t%x: %s", (unsigned)t->hello.tid, why);
		if (t->state == TASK_S_ENDED)
			agent_frame_task_end(a->out, t->hello.tid,
			    t->end_dropped);
	}
	agent_output(a);
}

/*
 * Out of descriptors or memory, the next accept would fail too and the
 * listening socket stays readable: the agent stops watching it for
 * AGENT_ACCEPT_PAUSE_MS instead of spinning (tasks that connect
 * meanwhile wait in the backlog, or go on unmonitored as when no agent
 * runs).
 */
static void
accept_failed(struct agent *a)
{
	struct timeval tv = { AGENT_ACCEPT_PAUSE_MS / 1000,
	    AGENT_ACCEPT_PAUSE_MS % 1000 * 1000 };
	int err = errno;
	int pause = err == EMFILE || err == ENFILE || err == ENOBUFS ||
	    err == ENOMEM;

	if (log_rate_ok(&a->conn_log))
		log_warnx("accepting a task: %s%s", strerror(err), pause ?
		    "; not accepting for a second" : "");
	if (!pause)
		return;
	event_del(a->ev_listen);
	evtimer_add(a->ev_listen_again, &tv);
}

/* Accepts every pending connection (the listener is non-blocking). */
void
agent_accept_all(struct agent *a)
{
	int fd;

	for (;;) {
		fd = accept4(a->listen_fd, NULL, NULL,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				accept_failed(a);
			return;
		}
		task_new(a, fd);
	}
}

static void
listen_again_cb(int fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	event_add(a->ev_listen, NULL);
	agent_accept_all(a);
}

static void
listen_cb(int fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	agent_accept_all(arg);
}

/* Reads whatever hellos have arrived (before a FLUSH is answered). */
void
agent_tasks_hello_pending(struct agent *a)
{
	struct agent_task *t, *next;

	TAILQ_FOREACH_SAFE(t, &a->tasks, entry, next)
		if (t->state == TASK_S_HELLO)
			task_read_hello(t);
}

/*
 * Drains every active ring, at most max bytes each.  A corrupt ring ends
 * its task.
 */
void
agent_drain_all(struct agent *a, size_t max)
{
	struct agent_task *t, *next;
	const char *why;

	TAILQ_FOREACH_SAFE(t, &a->tasks, entry, next) {
		if (t->state != TASK_S_ACTIVE)
			continue;
		if (task_ring_drain(t, max, &why) == -1)
			task_end(t, why);
	}
}

/*
 * BREAKPOINTS came: the new table goes into every active task's control
 * page (a task still in its hello gets it when it becomes active).
 */
void
agent_tasks_set_breakpoints(struct agent *a)
{
	struct agent_task *t;

	TAILQ_FOREACH(t, &a->tasks, entry)
		if (t->state == TASK_S_ACTIVE)
			ring_ctl_write(t->ring.hdr, a->bps, a->nbp);
}

/*
 * The agent leaves: every ring it holds goes back to dropping when
 * full, and a task waiting for room goes on (ring_release).
 */
void
agent_tasks_release(struct agent *a)
{
	struct agent_task *t;

	TAILQ_FOREACH(t, &a->tasks, entry)
		if (t->ring.hdr != NULL)
			ring_release(&t->ring);
}

/* Forgets every task without a word to the coordinator (agent_free). */
void
agent_tasks_free(struct agent *a)
{
	while (!TAILQ_EMPTY(&a->tasks))
		task_free(TAILQ_FIRST(&a->tasks));
}

/* Drops tasks that connected but never finished their hello. */
void
agent_tasks_tick(struct agent *a)
{
	struct agent_task *t, *next;
	time_t now = mono_now();

	TAILQ_FOREACH_SAFE(t, &a->tasks, entry, next)
		if (t->state == TASK_S_HELLO &&
		    now - t->since > AGENT_HELLO_TIMEOUT)
			task_reject(t, "no TASK_HELLO in time");
}

/*
 * Another agent may be serving this socket; a socket nobody answers on
 * was left behind by one that died.
 */
static int
sock_in_use(const struct sockaddr_un *sun)
{
	int fd, rc;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	close(fd);
	return rc == 0;
}

int
agent_listen(struct agent *a)
{
	static const struct log_rate conn_log =
	    LOG_RATE_INIT("task connections refused or not accepted");
	struct sockaddr_un sun;
	mode_t old;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (pmon_runtime_path(sun.sun_path, sizeof(sun.sun_path),
	    PMON_SOCK_AGENT) == -1) {
		log_warn("agent socket path");
		return -1;
	}
	if (sock_in_use(&sun)) {
		log_warnx("another agent is listening on %s", sun.sun_path);
		return -1;
	}
	if (unlink(sun.sun_path) == -1 && errno != ENOENT) {
		log_warn("unlink %s", sun.sun_path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		log_warn("socket");
		return -1;
	}
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, 128) == -1) {
		umask(old);
		log_warn("listen on %s", sun.sun_path);
		close(fd);
		return -1;
	}
	umask(old);
	memcpy(a->sock_path, sun.sun_path, sizeof(a->sock_path));
	a->listen_fd = fd;
	a->ev_listen = event_new(a->base, fd, EV_READ | EV_PERSIST,
	    listen_cb, a);
	a->ev_listen_again = evtimer_new(a->base, listen_again_cb, a);
	a->conn_log = conn_log;
	if (a->ev_listen == NULL || a->ev_listen_again == NULL ||
	    event_add(a->ev_listen, NULL) == -1) {
		log_warnx("cannot watch the agent socket");
		return -1;
	}
	log_debug("listening on %s", a->sock_path);
	return 0;
}

void
agent_unlisten(struct agent *a)
{
	if (a->ev_listen != NULL)
		event_free(a->ev_listen);
	if (a->ev_listen_again != NULL)
		event_free(a->ev_listen_again);
	a->ev_listen = NULL;
	a->ev_listen_again = NULL;
	if (a->listen_fd != -1) {
		close(a->listen_fd);
		unlink(a->sock_path);
	}
	a->listen_fd = -1;
}
