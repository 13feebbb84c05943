/*
 * libpmon-pvm.so: the task side of pmon.  Preloaded into unmodified PVM
 * programs, it records the begin and end of every application call to
 * libpvm3/libgpvm3 (the wrappers are in preload_calls.c) into a shared
 * memory ring, and hands that ring to the host's agent once the task has
 * enrolled.
 *
 * Rules that shape this file:
 * - A task never fails because of pmon: no agent means the ring fills
 *   and drops are counted.  It waits for pmon once, when it registers:
 *   for the agent's TASK_READY (its breakpoint table is in place), at
 *   most TASK_READY_WAIT_MS; and, in blocking mode (pmon start --block),
 *   whenever its ring is full, for as long as its agent's ring header
 *   says (ring_wait), without holding the record lock.
 * - Only depth-0 calls are recorded: libpvm3 calls its own public API
 *   through the PLT, and those inner calls are not the application's.
 * - The record path makes no system call (but to wait for room in
 *   blocking mode) and does not allocate: records are encoded on the
 *   stack straight into the ring.  Their times are raw TSC ticks where
 *   that is safe (tsc.h; the agent converts them), else
 *   clock_gettime(CLOCK_REALTIME).
 * - The library is inert in pmon's own programs and in any process that
 *   never calls pvm_*.
 * - In the group server, pvmgs, it records nothing but the requests the
 *   server takes (one receive end each, flagged RECORD_GS): their order
 *   is the order of every group's membership changes.
 * - Breakpoints (doc/control.md) are checked before a call runs and
 *   after its end record; while the agent has set none, the check is
 *   one relaxed load.  pvmgs never stops.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "preload.h"
#include "ring.h"
#include "task_msg.h"
#include "wire.h"

#define NSEC		1000000000ULL
#define RETRY_NS	NSEC		/* between tries to reach the agent */

/* libpvm3's data symbols we read (pvm_data()). */
#define PVM_MYTID	0
#define PVM_MYPTID	1

/* Per-thread state: how deep inside libpvm3 this thread is. */
static __thread int depth __attribute__((tls_model("initial-exec")));
static __thread struct bcast_capture *capture
    __attribute__((tls_model("initial-exec")));
/* The call being recorded at depth 0, for what its inner calls tell. */
static __thread struct pcall *outer __attribute__((tls_model("initial-exec")));
/* Inside a message handler's run (call_nest_enter). */
static __thread int nested __attribute__((tls_model("initial-exec")));

/* Real functions, found on first use. */
static _Atomic(void *) reals[PMON_CALL_MAX];

/* Per-process state; reset in a forked child. */
static struct {
	atomic_flag	 lock;		/* orders seq with ring writes */
	int		 inert;
	int		 server;	/* this is pvmgs */
	int		 ring_failed;
	int		 tsc;		/* records carry TSC ticks; set
					   before ring_ok */
	atomic_int	 ring_ok;	/* the ring exists: no lock needed */
	uint32_t	 ring_size;
	struct ring	 ring;		/* hdr == NULL until the first call */
	uint64_t	 seq;
	int		 registered;
	atomic_int	 registering;
	int32_t		 tid;		/* registered as; under lock */
	int		 sock;		/* to the agent, under lock; after
					   the hello, read once for
					   TASK_READY, written only for
					   TASK_STOPPED */
	uint64_t	 last_try_ns;
	int		 stale_tid;	/* the parent's tid, in a forked child */
	int32_t		 spawn_parent;	/* from PMON_SPAWN */
	uint64_t	 spawn_seq;
	char		 program[TASK_PROGRAM_MAX + 1];
} st = {
	.lock = ATOMIC_FLAG_INIT,
	.ring_size = RING_DEFAULT_SIZE,
	.ring = { .fd = -1 },
	.sock = -1,
};

static void
lock(void)
{
	while (atomic_flag_test_and_set_explicit(&st.lock,
	    memory_order_acquire))
		;
}

static void
unlock(void)
{
	atomic_flag_clear_explicit(&st.lock, memory_order_release);
}

void *
preload_real(unsigned call, const char *name)
{
	void *p = atomic_load_explicit(&reals[call], memory_order_relaxed);

	if (p == NULL) {
		p = dlsym(RTLD_NEXT, name);
		atomic_store_explicit(&reals[call], p, memory_order_relaxed);
	}
	return p;
}

/*
 * libpvm3's own idea of the task's tids, read without calling into it:
 * pvm_mytid() would enrol the task as a side effect.
 */
static int *
pvm_data(unsigned which)
{
	static const char *const names[] = { "pvmmytid", "pvmmyptid" };
	static _Atomic(int *) ptrs[2];
	int *p = atomic_load_explicit(&ptrs[which], memory_order_relaxed);

	if (p == NULL) {
		p = dlsym(RTLD_DEFAULT, names[which]);
		atomic_store_explicit(&ptrs[which], p, memory_order_relaxed);
	}
	return p;
}

static int
pvm_data_int(unsigned which, int dflt)
{
	int *p = pvm_data(which);

	return p != NULL ? *p : dflt;
}

int
preload_enrolled_tid(void)
{
	int tid = pvm_data_int(PVM_MYTID, -1);

	if (tid <= 0 || tid == st.stale_tid)
		return -1;
	return tid;
}

/* The task's tid, enrolling it if needed (for a pvm_spawn, which enrols
 * the task anyway). */
int
preload_mytid(void)
{
	__typeof__(&pvm_mytid) real;
	int tid = preload_enrolled_tid();

	if (tid > 0)
		return tid;
	if ((real = REAL(mytid)) == NULL)
		return -1;
	return real();
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

/* A record's time, in the ring's clock. */
static uint64_t
record_time(void)
{
	return st.tsc ? tsc_read() : now_ns();
}

/*
 * Makes a new ring's times TSC ticks when that is safe, unless
 * PMON_TASK_CLOCK=realtime.  Checked once per ring: two small reads.
 */
static void
ring_clock(void)
{
	const char *v = getenv("PMON_TASK_CLOCK");
	struct tsc_sample anchor;

	st.tsc = 0;
	if (v != NULL && strcmp(v, "realtime") == 0)
		return;
	if (tsc_safe() && tsc_sample(&anchor) == 0) {
		ring_set_tsc(&st.ring, &anchor);
		st.tsc = 1;
	}
}

/* Creates the ring at the first recorded call.  Returns 0 when usable. */
static int
ring_ready(void)
{
	int ok;

	if (atomic_load_explicit(&st.ring_ok, memory_order_acquire))
		return 0;
	lock();
	if (st.ring.hdr == NULL && !st.ring_failed) {
		if (ring_create(&st.ring, st.ring_size) == -1)
			st.ring_failed = 1;
		else
			ring_clock();
	}
	ok = st.ring.hdr != NULL;
	atomic_store_explicit(&st.ring_ok, ok, memory_order_release);
	unlock();
	return ok ? 0 : -1;
}

/*
 * ring_wait's bell: TASK_FULL on our socket to the agent, so that it
 * drains us now.  A frame that does not go out (a full socket, an agent
 * that is gone) is no loss: the agent drains on its timer anyway.
 */
static void
ring_bell(void *arg)
{
	uint8_t frame[TASK_FULL_FRAME];
	int fd = *(int *)arg;

	if (fd == -1)
		return;
	task_full_encode(frame);
	(void)send(fd, frame, sizeof(frame), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * A full ring, under the lock; r took the number st.seq and is encoded
 * in buf.  Without blocking mode the record is dropped and counted, and
 * its number is not reused.  In blocking mode (ring_wait) we give the
 * number back and wait for room without the lock, so that a signal
 * handler that records meanwhile (or another thread) neither deadlocks
 * nor spins: its record takes the next number, and ours is numbered
 * again.  A wait that gives up drops too.
 */
static void __attribute__((noinline, cold))
ring_put_full(struct record *r, const int32_t *peers, uint8_t *buf)
{
	size_t len;
	int fd, rv;

	if (!ring_blocking(&st.ring)) {
		ring_drop(&st.ring);
		return;
	}
	st.seq--;
	len = wire_get16(buf);		/* a record starts with its length */
	for (;;) {
		fd = st.sock;
		unlock();
		rv = ring_wait(&st.ring, len, ring_bell, &fd);
		lock();
		if (rv == -1 || st.ring.hdr == NULL)
			break;
		r->seq = st.seq + 1;
		len = record_encode(buf, r, peers);
		if (ring_try_write(&st.ring, buf, len) == 0) {
			st.seq++;
			return;
		}
	}
	r->seq = ++st.seq;
	if (st.ring.hdr != NULL)
		ring_drop(&st.ring);
}

/*
 * Under the lock: r, with the next number, into the ring; buf has room
 * for its encoding.  r->seq is the number it took.
 */
static inline void
ring_put(struct record *r, const int32_t *peers, uint8_t *buf)
{
	r->seq = ++st.seq;
	if (ring_try_write(&st.ring, buf, record_encode(buf, r, peers)) != 0)
		ring_put_full(r, peers, buf);
}

static void
emit(struct pcall *c, uint8_t phase, const int32_t *peers, unsigned npeers)
{
	uint8_t buf[RECORD_MAX_SIZE];

	c->r.phase = phase;
	c->r.t_ns = record_time();
	c->r.npeers = (uint16_t)(npeers > RECORD_PEERS_MAX ?
	    RECORD_PEERS_MAX : npeers);
	if (c->r.npeers == 0)
		peers = NULL;
	lock();
	/* No ring: a call that began before a fork ends in the child. */
	if (st.ring.hdr != NULL)
		ring_put(&c->r, peers, buf);
	unlock();
}

static void
record_blank(struct pcall *c, unsigned call)
{
	memset(&c->r, 0, sizeof(c->r));
	c->r.call = (uint8_t)call;
	c->r.peer = -1;
	c->r.tag = -1;
	c->r.ctx = -1;
	c->r.bytes = -1;
	c->r.inst = -1;
	c->active = 1;
}

static void	try_register(uint64_t now);

/*
 * A message handler runs inside the PVM call that got its message: what
 * it does is the application's, recorded as if at depth 0.
 */
void
call_nest_enter(struct call_nest *n)
{
	n->depth = depth;
	n->outer = outer;
	depth = 0;
	outer = NULL;
	nested++;
}

void
call_nest_leave(const struct call_nest *n)
{
	depth = n->depth;
	outer = n->outer;
	nested--;
}

/*
 * The signals that arrived since the task's last record, between two
 * calls (preload_signals.c): a begin and an end per signal number.  Not
 * inside a message handler's run, which is inside a call.
 */
static void __attribute__((noinline, cold))
signals_record(void)
{
	struct pcall s;
	int signo = 1, pvmd = 0;
	unsigned n;

	if (nested > 0)
		return;
	atomic_store_explicit(&signals_pending, 0, memory_order_relaxed);
	while ((n = signals_take(&signo, &pvmd)) > 0) {
		record_blank(&s, PMON_CALL_SIGNAL);
		s.r.inst = signo++;
		s.r.flags = pvmd ? RECORD_PVMD : 0;
		emit(&s, PMON_BEGIN, NULL, 0);
		s.r.rc = (int32_t)n;
		emit(&s, PMON_END, NULL, 0);
	}
}

/* The hot path: one relaxed load while no signal came. */
static inline void
signals_check(void)
{
	if (__builtin_expect(atomic_load_explicit(&signals_pending,
	    memory_order_relaxed), 0))
		signals_record();
}

/*
 * Enrols now, unrecorded, if libpvm3 is in the process: a task the
 * host's starter started is known to pvmd by a placeholder pid until it
 * enrols (PVM's tasker protocol), so a pvm_kill or pvm_sendsig that
 * comes before its first PVM call would reach nobody; one pvmd forked
 * itself is known at once.  A process without libpvm3 (a script the
 * starter ran) does not enrol, as without pmon.
 */
void
preload_enrol_early(void)
{
	__typeof__(&pvm_mytid) real = REAL(mytid);

	if (real == NULL)
		return;
	depth++;
	(void)real();
	depth--;
}

/* libpvm3's own pvm_exit, unrecorded (preload_starter.c). */
int
preload_real_exit(void)
{
	__typeof__(&pvm_exit) real = REAL(exit);
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	depth++;
	rc = real();
	depth--;
	return rc;
}

int
call_enter(struct pcall *c, unsigned call)
{
	c->active = 0;
	if (starter_exit_pending && depth == 0)
		starter_exit(0);	/* a PVM call after pvm_exit */
	if (depth++ > 0 || st.inert || st.server || ring_ready() == -1)
		return 0;
	signals_check();
	record_blank(c, call);
	outer = c;
	return 1;
}

/* The call being recorded, when a call below depth 0 runs; or NULL. */
struct pcall *
call_outer(void)
{
	return outer;
}

/*
 * In the group server, at depth 0 (after the wrapper left its call):
 * prepares the record of a request the server took.
 */
int
server_enter(struct pcall *c)
{
	c->active = 0;
	if (!st.server || depth > 0 || ring_ready() == -1)
		return 0;
	record_blank(c, PMON_CALL_recv);
	return 1;
}

void
server_emit(struct pcall *c, int rc)
{
	c->r.rc = rc;
	c->r.flags |= RECORD_GS;
	emit(c, PMON_END, NULL, 0);
	if (!st.registered)
		try_register(now_ns());
}

/*
 * A breakpoint hit: the BREAK record (record.h), then TASK_STOPPED so
 * that the agent drains the ring at once, then the stop.  A failed or
 * short write of the frame is ignored: the agent drains at its next
 * tick anyway.  After SIGCONT the call goes on.
 *
 * The match runs under the lock, so the BP_SEQ stopline compares the
 * number the next record really gets and the BREAK record takes it;
 * but in a task whose threads call PVM concurrently, another thread's
 * record may still come between the BREAK record and this call's.
 */
static void
bp_stop(struct pcall *c, uint8_t phase)
{
	uint8_t buf[RECORD_HDR_SIZE + RECORD_GROUP_MAX];
	uint8_t frame[TASK_STOPPED_FRAME];
	struct breakpoint hit;
	struct record b;
	uint64_t t = record_time();
	int fd = -1, hitp = 0, saved = errno;

	lock();
	if (st.ring.hdr != NULL && ring_bp_match(st.ring.hdr, st.tid, &c->r,
	    st.seq + 1, phase, &hit)) {
		hitp = 1;
		b = c->r;
		b.call = PMON_CALL_BREAK;
		b.phase = phase;
		b.t_ns = t;
		b.rc = c->r.call;
		b.inst = (int32_t)hit.id;
		b.npeers = 0;
		b.flags = 0;
		ring_put(&b, NULL, buf);
		fd = st.sock;
		task_stopped_encode(frame, hit.id, b.seq);
	}
	unlock();
	if (!hitp)
		return;
	if (fd != -1)
		(void)send(fd, frame, sizeof(frame), MSG_DONTWAIT |
		    MSG_NOSIGNAL);
	raise(SIGSTOP);
	errno = saved;
}

/*
 * The hot path: an active call's ring exists and stays (call_enter saw
 * ring_ok; only a forked child drops it, in call_end of a call that
 * forked), so while the table is empty this is one relaxed load.
 */
static inline void
bp_check(struct pcall *c, uint8_t phase)
{
	struct ring_hdr *h = st.ring.hdr;

	if (h != NULL && atomic_load_explicit(&h->ctl.nbp,
	    memory_order_relaxed) != 0)
		bp_stop(c, phase);
}

void
call_begin(struct pcall *c, const int32_t *peers, unsigned npeers)
{
	if (c->active) {
		bp_check(c, PMON_BEGIN);
		emit(c, PMON_BEGIN, peers, npeers);
	}
}

/* Sets the record's group name, cut to what a record can carry. */
void
call_group(struct pcall *c, const char *group)
{
	if (group == NULL) {
		c->r.glen = 0;
		return;
	}
	c->r.group = group;
	c->r.glen = (uint8_t)strnlen(group, RECORD_GROUP_MAX);
}

void
call_end(struct pcall *c, int rc, const int32_t *peers, unsigned npeers)
{
	if (c->active) {
		c->r.rc = rc;
		emit(c, PMON_END, peers, npeers);
		signals_check();
		bp_check(c, PMON_END);
		outer = NULL;
	}
	if (--depth > 0)
		return;
	if (c->active && !st.registered)
		try_register(now_ns());
	if (starter_pending)
		starter_tell();
}

void
bcast_capture_set(struct bcast_capture *bc)
{
	capture = bc;
}

/* Called by the pvm_mcast wrapper below depth 0: inside a pvm_bcast,
 * these are the members the broadcast reached. */
void
bcast_capture_mcast(const int *tids, int count)
{
	struct bcast_capture *bc = capture;
	int i;

	if (bc == NULL || tids == NULL)
		return;
	for (i = 0; i < count && bc->n < RECORD_PEERS_MAX; i++)
		bc->tids[bc->n++] = tids[i];
}

/*
 * Registration: one TASK_HELLO with the ring's memfd attached, then the
 * wait for TASK_READY.  Any failure before the hello is sent leaves the
 * task unregistered; the next try is a second later.
 */
static int
agent_connect(void)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (pmon_runtime_path(sun.sun_path, sizeof(sun.sun_path),
	    PMON_SOCK_AGENT) == -1)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A PMON_SPAWN that does not name our PVM parent was inherited through
 * something other than a monitored pvm_spawn: ignore it. */
static void
hello_fill(struct task_hello *h, int tid)
{
	int ptid = pvm_data_int(PVM_MYPTID, st.spawn_parent);

	memset(h, 0, sizeof(*h));
	h->tid = tid;
	h->pid = (uint32_t)getpid();
	if (st.spawn_parent != 0 && ptid == st.spawn_parent) {
		h->parent_tid = st.spawn_parent;
		h->spawn_seq = st.spawn_seq;
	}
	memcpy(h->program, st.program, sizeof(h->program));
}

static void
try_register(uint64_t now)
{
	struct task_hello h;
	uint32_t nbp;
	int tid, fd, saved = errno;

	if (st.ring.hdr == NULL || (tid = preload_enrolled_tid()) <= 0)
		return;
	if (st.last_try_ns != 0 && now - st.last_try_ns < RETRY_NS)
		return;
	/* One thread registers; the others go on with their calls. */
	if (atomic_exchange(&st.registering, 1))
		return;
	st.last_try_ns = now;
	if (st.registered || (fd = agent_connect()) == -1)
		goto out;
	st.ring.hdr->tid = tid;
	hello_fill(&h, tid);
	/* The agent may set breakpoints as soon as it has the hello. */
	lock();
	st.tid = tid;
	st.sock = fd;
	unlock();
	if (task_hello_send(fd, &h, st.ring.fd) == -1) {
		lock();
		st.sock = -1;
		unlock();
		close(fd);
		goto out;
	}
	st.registered = 1;
	/*
	 * Our calls are checked against the breakpoints only once the agent
	 * has written its table into our control page: wait until it says
	 * so.  A task that has been waiting TASK_READY_WAIT_MS, or that gets
	 * anything else, goes on registered (the table may come later).
	 * Other threads go on meanwhile, unchecked until then.
	 */
	(void)task_ready_wait(fd, TASK_READY_WAIT_MS, &nbp);
out:
	atomic_store(&st.registering, 0);
	errno = saved;
}

/*
 * PMON_SPAWN: the causal edge from a pvm_spawn to the tasks it creates,
 * "tid:seq" of its begin record, exported to the children for the real
 * pvm_spawn only.  Out of memory, the children just lack the edge.
 */
void
spawn_edge_set(struct spawn_env *se, uint64_t seq)
{
	char val[64];
	int tid;

	memset(se, 0, sizeof(*se));
	if ((tid = preload_mytid()) <= 0)
		return;
	snprintf(val, sizeof(val), "%d:%llu", tid, (unsigned long long)seq);
	spawn_env_set(se, "PMON_SPAWN", val);
}

/* Reads "tid:seq" as the parent's pvm_spawn left it, then forgets it so
 * that nothing this process starts inherits it. */
static void
read_spawn_env(void)
{
	const char *v = getenv("PMON_SPAWN");
	char *end;
	long tid;
	unsigned long long seq;

	if (v == NULL)
		return;
	errno = 0;
	tid = strtol(v, &end, 10);
	if (errno == 0 && *end == ':' && tid > 0 && tid <= INT32_MAX) {
		seq = strtoull(end + 1, &end, 10);
		if (errno == 0 && *end == '\0' && seq > 0) {
			st.spawn_parent = (int32_t)tid;
			st.spawn_seq = seq;
		}
	}
	unsetenv("PMON_SPAWN");
}

static void
read_program(void)
{
	char path[PATH_MAX], *base;
	ssize_t n;

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n > 0) {
		path[n] = '\0';
		base = strrchr(path, '/');
		base = base != NULL ? base + 1 : path;
	} else
		base = program_invocation_short_name;
	n = (ssize_t)strnlen(base, sizeof(st.program) - 1);
	memcpy(st.program, base, (size_t)n);
	st.program[n] = '\0';
}

/*
 * The ring size this host's agent publishes (pmon start -R), for a task
 * whose environment does not say: at most a few digits, or nothing.
 */
static const char *
published_ring_size(char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n = -1;
	int fd;

	if (pmon_runtime_path(path, sizeof(path), PMON_FILE_RING) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void
read_ring_size(void)
{
	const char *v = getenv("PMON_RING_SIZE");
	char buf[32];
	unsigned long n;
	char *end;

	if (v == NULL || *v == '\0')
		v = published_ring_size(buf, sizeof(buf));
	if (v == NULL || *v == '\0')
		return;
	errno = 0;
	n = strtoul(v, &end, 0);
	if (errno == 0 && *end == '\0' && n >= RING_MIN_SIZE &&
	    n <= RING_MAX_SIZE && (n & (n - 1)) == 0)
		st.ring_size = (uint32_t)n;
}

/*
 * A forked child is a new task (libpvm3 re-enrols it on its next call):
 * it gets its own ring, lazily, and must not hold the parent's agent
 * socket open or write into the parent's ring.
 */
static void
atfork_child(void)
{
	int saved = errno;

	atomic_flag_clear(&st.lock);
	if (st.sock != -1)
		close(st.sock);
	ring_close(&st.ring);
	atomic_store(&st.ring_ok, 0);
	st.sock = -1;
	st.tid = 0;
	st.ring_failed = 0;
	st.seq = 0;
	st.registered = 0;
	atomic_store(&st.registering, 0);
	st.last_try_ns = 0;
	st.stale_tid = pvm_data_int(PVM_MYTID, -1);
	st.spawn_parent = 0;
	st.spawn_seq = 0;
	starter_atfork();
	errno = saved;
}

/* A put-off pvm_exit is done when the process ends. */
__attribute__((destructor)) static void
preload_fini(void)
{
	starter_exit(depth > 0);
}

__attribute__((constructor)) static void
preload_init(void)
{
	int saved = errno;

	read_program();
	st.server = strcmp(st.program, "pvmgs") == 0;
	st.inert = strcmp(st.program, "pmon") == 0 ||
	    strncmp(st.program, "pmon-", 5) == 0;
	read_spawn_env();
	starter_init();
	read_ring_size();
	pthread_atfork(NULL, NULL, atfork_child);
	if (starter_pending)
		preload_enrol_early();
	errno = saved;
}
