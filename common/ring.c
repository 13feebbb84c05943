/*
 * The shared-memory record ring (ring.h).
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/futex.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "record.h"
#include "ring.h"
#include "wire.h"

#define RING_SEALS	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/*
 * Reads of the control page a task tries before it gives up: an agent
 * killed in the middle of a write leaves gen odd for good, and a task
 * never waits for pmon.
 */
#define RING_CTL_TRIES	64

static_assert(sizeof(struct ring_hdr) <= RING_HDR_SIZE,
    "the ring header, control page included, must fit its page");
static_assert(PMON_CALL_MAX <= 256, "ring_bp.call is a u8");
static_assert(RING_BP_GROUP_MAX == BREAKPOINT_GROUP_MAX,
    "a control page holds every group name a breakpoint can have");

static int
ring_map(struct ring *rg, int fd, uint32_t size)
{
	void *p;

	rg->maplen = RING_HDR_SIZE + (size_t)size;
	p = mmap(NULL, rg->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	rg->hdr = p;
	rg->data = (uint8_t *)p + RING_HDR_SIZE;
	rg->size = size;
	rg->fd = fd;
	rg->hold = 0;
	rg->rd = 0;
	rg->clock = RING_CLOCK_NS;
	memset(&rg->anchor, 0, sizeof(rg->anchor));
	rg->last_tick = rg->last_ns = 0;
	atomic_store_explicit(&rg->stall, 0, memory_order_relaxed);
	rg->slice_ns = RING_WAIT_SLICE_NS;
	rg->orphan_ns = RING_ORPHAN_NS;
	return 0;
}

/*
 * Task side: creates a sealed memfd of size data bytes (a power of two)
 * and maps it.  The fd is close-on-exec: an exec'd program starts afresh.
 */
int
ring_create(struct ring *rg, uint32_t size)
{
	int fd, saved;

	if (size < RING_MIN_SIZE || size > RING_MAX_SIZE ||
	    (size & (size - 1)) != 0) {
		errno = EINVAL;
		return -1;
	}
	fd = memfd_create("pmon-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	if (ftruncate(fd, RING_HDR_SIZE + (off_t)size) == -1 ||
	    fcntl(fd, F_ADD_SEALS, RING_SEALS) == -1 ||
	    ring_map(rg, fd, size) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	rg->hdr->magic = RING_MAGIC;
	rg->hdr->version = RING_VERSION;
	rg->hdr->size = size;
	rg->hdr->tid = 0;
	rg->hdr->clock = RING_CLOCK_NS;
	return 0;
}

/*
 * Task side, before the first record: the ring's times are TSC ticks,
 * and anchor is a sample older than all of them.
 */
void
ring_set_tsc(struct ring *rg, const struct tsc_sample *anchor)
{
	rg->hdr->clock = rg->clock = RING_CLOCK_TSC;
	rg->hdr->anchor_tick = anchor->tick;
	rg->hdr->anchor_ns = anchor->ns;
	rg->anchor = *anchor;
}

/*
 * Agent side: maps a ring received from a task.  The task is not trusted:
 * the memfd must be sealed against shrinking (or a later read would fault)
 * and its header must agree with the file's size.
 */
int
ring_attach(struct ring *rg, int fd, const char **why)
{
	struct ring_hdr hdr;
	struct stat st;
	int seals;

	seals = fcntl(fd, F_GET_SEALS);
	if (seals == -1 || (seals & F_SEAL_SHRINK) == 0) {
		*why = "ring is not a memfd sealed against shrinking";
		return -1;
	}
	if (fstat(fd, &st) == -1 || st.st_size < RING_HDR_SIZE) {
		*why = "ring file too small";
		return -1;
	}
	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		*why = "ring header unreadable";
		return -1;
	}
	if (hdr.magic != RING_MAGIC || hdr.version != RING_VERSION) {
		*why = "ring has a bad magic or version";
		return -1;
	}
	if (hdr.size < RING_MIN_SIZE || hdr.size > RING_MAX_SIZE ||
	    (hdr.size & (hdr.size - 1)) != 0 ||
	    st.st_size != RING_HDR_SIZE + (off_t)hdr.size) {
		*why = "ring size does not match its file";
		return -1;
	}
	if (hdr.clock != RING_CLOCK_NS && hdr.clock != RING_CLOCK_TSC) {
		*why = "ring has an unknown clock";
		return -1;
	}
	if (ring_map(rg, fd, hdr.size) == -1) {
		*why = "cannot map ring";
		return -1;
	}
	rg->clock = hdr.clock;
	rg->anchor.tick = hdr.anchor_tick;
	rg->anchor.ns = hdr.anchor_ns;
	return 0;
}

/* Unmaps the ring and closes its fd.  Safe on a ring never mapped. */
void
ring_close(struct ring *rg)
{
	if (rg->hdr != NULL)
		munmap(rg->hdr, rg->maplen);
	if (rg->fd != -1)
		close(rg->fd);
	rg->hdr = NULL;
	rg->data = NULL;
	rg->fd = -1;
}

static void
ring_copy_in(struct ring *rg, uint64_t pos, const void *src, size_t len)
{
	size_t off = pos & (rg->size - 1), first = rg->size - off;

	if (first >= len)
		memcpy(rg->data + off, src, len);
	else {
		memcpy(rg->data + off, src, first);
		memcpy(rg->data, (const uint8_t *)src + first, len - first);
	}
}

static void
ring_copy_out(const struct ring *rg, uint64_t pos, void *dst, size_t len)
{
	size_t off = pos & (rg->size - 1), first = rg->size - off;

	if (first >= len)
		memcpy(dst, rg->data + off, len);
	else {
		memcpy(dst, rg->data + off, first);
		memcpy((uint8_t *)dst + first, rg->data, len - first);
	}
}

/*
 * Producer: appends one encoded record if the ring has room for it.
 * Returns 0, or -1 when it has not; then nothing is counted: the caller
 * waits (ring_wait) or drops (ring_drop).  The task's hot path.
 */
int
ring_try_write(struct ring *rg, const void *rec, size_t len)
{
	struct ring_hdr *h = rg->hdr;
	uint64_t head, tail;

	head = atomic_load_explicit(&h->head, memory_order_relaxed);
	tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	if (head - tail > rg->size || rg->size - (head - tail) < len)
		return -1;
	ring_copy_in(rg, head, rec, len);
	atomic_store_explicit(&h->head, head + len, memory_order_release);
	atomic_fetch_add_explicit(&h->written, 1, memory_order_relaxed);
	return 0;
}

/* Producer: counts one record lost to a full ring. */
void
ring_drop(struct ring *rg)
{
	atomic_fetch_add_explicit(&rg->hdr->dropped, 1, memory_order_relaxed);
}

/*
 * Producer: appends one encoded record.  Never blocks: when the agent has
 * not made room, the record is dropped and counted, and -1 is returned.
 */
int
ring_write(struct ring *rg, const void *rec, size_t len)
{
	if (ring_try_write(rg, rec, len) == 0)
		return 0;
	ring_drop(rg);
	return -1;
}

static void	tail_move(struct ring *, uint64_t pos);

/*
 * Consumer: copies whole records, oldest first, into out (outsize bytes,
 * at least RECORD_MAX_SIZE to be sure of progress) and frees their room.
 * Returns the bytes copied (0 when empty) and their count in *nrecords,
 * or -1 with *why when the task corrupted its ring.
 */
ssize_t
ring_read(struct ring *rg, uint8_t *out, size_t outsize, unsigned *nrecords,
    const char **why)
{
	struct ring_hdr *h = rg->hdr;
	uint64_t head, tail, pos;
	uint8_t lenbuf[2];
	size_t n = 0, len;

	*nrecords = 0;
	tail = rg->hold ? rg->rd :
	    atomic_load_explicit(&h->tail, memory_order_relaxed);
	head = atomic_load_explicit(&h->head, memory_order_acquire);
	if (head - tail > rg->size) {
		*why = "ring head is out of range";
		return -1;
	}
	for (pos = tail; pos < head; pos += len) {
		ring_copy_out(rg, pos, lenbuf, sizeof(lenbuf));
		len = wire_get16(lenbuf);
		if (len < RECORD_HDR_SIZE || len > head - pos) {
			*why = "ring holds a record of impossible length";
			return -1;
		}
		if (len > outsize - n)
			break;
		ring_copy_out(rg, pos, out + n, len);
		n += len;
		(*nrecords)++;
	}
	if (rg->hold)
		rg->rd = pos;
	else
		tail_move(rg, pos);
	return (ssize_t)n;
}

/* From now on, reads keep what they read until it is acknowledged. */
void
ring_hold(struct ring *rg)
{
	rg->hold = 1;
	rg->rd = atomic_load_explicit(&rg->hdr->tail, memory_order_relaxed);
}

/*
 * Frees the records read so far whose seq is at most seq (they were
 * acknowledged).  The bytes between tail and rd are the task's memory,
 * which it may have changed since we read them: a length that makes no
 * sense frees everything read (the task loses only its own records),
 * and -1 says so.
 */
int
ring_ack(struct ring *rg, uint64_t seq)
{
	struct ring_hdr *h = rg->hdr;
	uint8_t rec[RECORD_HDR_SIZE];
	uint64_t pos;
	size_t len;
	int rv = 0;

	if (!rg->hold)
		return 0;
	pos = atomic_load_explicit(&h->tail, memory_order_relaxed);
	while (pos < rg->rd) {
		if (rg->rd - pos < RECORD_HDR_SIZE) {
			rv = -1;
			pos = rg->rd;
			break;
		}
		ring_copy_out(rg, pos, rec, sizeof(rec));
		len = wire_get16(rec);
		if (len < RECORD_HDR_SIZE || len > rg->rd - pos) {
			rv = -1;
			pos = rg->rd;
			break;
		}
		if (wire_get64(rec + 4) > seq)
			break;
		pos += len;
	}
	tail_move(rg, pos);
	return rv;
}

/*
 * The task must never drop records for the sake of a slow ACK: when
 * held records fill more than three quarters of the ring, everything
 * read so far is freed, acknowledged or not.  Nor wait for one: in
 * blocking mode, a waiting task has everything read freed at once.
 * Returns 1 when it did.  (Should the coordinator then die, those
 * records are a gap for its successor, which reports them lost.)
 */
int
ring_relieve(struct ring *rg)
{
	uint64_t head, tail;

	if (!rg->hold)
		return 0;
	tail = atomic_load_explicit(&rg->hdr->tail, memory_order_relaxed);
	head = atomic_load_explicit(&rg->hdr->head, memory_order_acquire);
	if (rg->rd == tail || (head - tail <= rg->size / 4 * 3 &&
	    atomic_load_explicit(&rg->hdr->waiters, memory_order_relaxed) ==
	    0))
		return 0;
	tail_move(rg, rg->rd);
	return 1;
}

/* Reads again from the oldest record not acknowledged. */
void
ring_rewind(struct ring *rg)
{
	if (rg->hold)
		rg->rd = atomic_load_explicit(&rg->hdr->tail,
		    memory_order_relaxed);
}

uint64_t
ring_dropped(const struct ring *rg)
{
	return atomic_load_explicit(&rg->hdr->dropped, memory_order_relaxed);
}

/*
 * Blocking mode (doc/capture.md).
 *
 * The agent writes block_ns and its pid into the ring's header when it
 * takes the ring; the task reads them only when its ring is full.  A
 * waiting task counts itself in waiters and sleeps on the futex word
 * wake (the ring is a memfd shared by two processes: not a private
 * futex); the agent, after each move of the tail, bumps wake and wakes
 * it when waiters says someone waits.  The task's increment of waiters
 * and its look at the tail, and the agent's store of the tail and its
 * look at waiters, are each ordered by a full fence: one of the two
 * sees the other's write, so a wake-up is never lost.
 */

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static long
futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

/* Agent: the ring changed for a waiting task; wake it. */
static void
wake_waiters(struct ring_hdr *h)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&h->waiters, memory_order_relaxed) == 0)
		return;
	atomic_fetch_add_explicit(&h->wake, 1, memory_order_seq_cst);
	(void)futex(&h->wake, FUTEX_WAKE, INT_MAX, NULL);
}

/* Agent: frees the ring up to pos, and wakes a task waiting for room. */
static void
tail_move(struct ring *rg, uint64_t pos)
{
	struct ring_hdr *h = rg->hdr;

	if (atomic_load_explicit(&h->tail, memory_order_relaxed) == pos)
		return;
	atomic_store_explicit(&h->tail, pos, memory_order_release);
	wake_waiters(h);
}

/*
 * Agent: from now on this ring's task waits for room up to ns
 * (RING_BLOCK_NEVER: it drops at once; RING_BLOCK_FOREVER), and we are
 * the agent it waits for.
 */
void
ring_set_block(struct ring *rg, uint64_t ns)
{
	atomic_store_explicit(&rg->hdr->agent_pid, (int32_t)getpid(),
	    memory_order_relaxed);
	atomic_store_explicit(&rg->hdr->block_ns, ns, memory_order_release);
}

/*
 * Agent, leaving: nobody will make room any more, so the task must not
 * wait: it drops as without blocking mode, and stops a wait under way.
 */
void
ring_release(struct ring *rg)
{
	atomic_store_explicit(&rg->hdr->block_ns, RING_BLOCK_NEVER,
	    memory_order_release);
	wake_waiters(rg->hdr);
}

/* Task: has the ring room for len bytes? */
static int
room(const struct ring *rg, size_t len)
{
	uint64_t head, tail;

	atomic_thread_fence(memory_order_seq_cst);
	head = atomic_load_explicit(&rg->hdr->head, memory_order_relaxed);
	tail = atomic_load_explicit(&rg->hdr->tail, memory_order_acquire);
	return head - tail <= rg->size && rg->size - (head - tail) >= len;
}

/*
 * Task: is there still an agent to wait for?  One that is gone (killed)
 * may have a successor, which writes its own pid when it adopts the
 * ring; after orphan ns without one, there is none.  *since is when we
 * first saw it gone, 0 while it lives.
 */
static int
agent_gone(const struct ring *rg, uint64_t now, uint64_t *since)
{
	int32_t pid = atomic_load_explicit(&rg->hdr->agent_pid,
	    memory_order_relaxed);

	if (pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH)) {
		*since = 0;
		return 0;
	}
	if (*since == 0)
		*since = now;
	return now - *since >= rg->orphan_ns;
}

/* Task: the ns left of a wait of block ns begun at start, at most a slice. */
static uint64_t
slice_left(const struct ring *rg, uint64_t block, uint64_t start,
    uint64_t now)
{
	uint64_t left = rg->slice_ns;

	if (block != RING_BLOCK_FOREVER && block - (now - start) < left)
		left = block - (now - start);
	return left;
}

/*
 * Task: sleeps until there is room for len bytes (0), or until the
 * agent says not to wait, the timeout passes or the agent is gone (-1).
 * The bell rings at once and after every slice without room.
 */
static int
wait_room(struct ring *rg, size_t len, uint64_t start, ring_bell_fn bell,
    void *arg)
{
	struct ring_hdr *h = rg->hdr;
	struct timespec ts;
	uint64_t block, now = start, gone = 0, left;
	uint32_t gen;

	for (;;) {
		gen = atomic_load_explicit(&h->wake, memory_order_seq_cst);
		if (room(rg, len))
			return 0;
		block = atomic_load_explicit(&h->block_ns,
		    memory_order_acquire);
		if (block == RING_BLOCK_NEVER || (block != RING_BLOCK_FOREVER &&
		    now - start >= block) || agent_gone(rg, now, &gone))
			return -1;
		if (bell != NULL)
			bell(arg);
		left = slice_left(rg, block, start, now);
		ts.tv_sec = (time_t)(left / 1000000000ULL);
		ts.tv_nsec = (long)(left % 1000000000ULL);
		(void)futex(&h->wake, FUTEX_WAIT, gen, &ts);
		now = mono_ns();
	}
}

/* Task: what blocking cost it, in its ring's header. */
static void
wait_count(struct ring_hdr *h, uint64_t ns)
{
	uint64_t max = atomic_load_explicit(&h->wait_max_ns,
	    memory_order_relaxed);

	atomic_fetch_add_explicit(&h->waits, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->wait_ns, ns, memory_order_relaxed);
	while (ns > max && !atomic_compare_exchange_weak_explicit(
	    &h->wait_max_ns, &max, ns, memory_order_relaxed,
	    memory_order_relaxed))
		;
}

/*
 * Producer, when ring_try_write found no room for len bytes: waits for
 * room as the agent's block_ns says.  Returns 0 when there may be room
 * now (the caller tries again), -1 when the record is to be dropped: no
 * blocking mode, a record the ring can never hold, the timeout passed or
 * the agent is gone.  After a wait that failed, the task does not wait
 * again until the agent has made room (moved the tail): an agent that
 * is stuck costs the task one timeout, not one per record.
 *
 * The caller holds no lock the rest of the task needs: a signal handler
 * may record (and wait) while the code it interrupted waits, and other
 * threads go on.  errno is kept.
 */
int
ring_wait(struct ring *rg, size_t len, ring_bell_fn bell, void *arg)
{
	struct ring_hdr *h = rg->hdr;
	uint64_t tail, stall, start;
	int rv, saved = errno;

	tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	stall = atomic_load_explicit(&rg->stall, memory_order_relaxed);
	if (atomic_load_explicit(&h->block_ns, memory_order_acquire) ==
	    RING_BLOCK_NEVER || len > rg->size || stall == tail + 1)
		return -1;
	start = mono_ns();
	atomic_fetch_add_explicit(&h->waiters, 1, memory_order_seq_cst);
	rv = wait_room(rg, len, start, bell, arg);
	atomic_fetch_sub_explicit(&h->waiters, 1, memory_order_seq_cst);
	wait_count(h, mono_ns() - start);
	atomic_store_explicit(&rg->stall, rv == -1 ? 1 + atomic_load_explicit(
	    &h->tail, memory_order_acquire) : 0, memory_order_relaxed);
	errno = saved;
	return rv;
}

/*
 * Breakpoints (doc/control.md).
 *
 * The control page is a seqlock written by the agent: gen odd while it
 * writes.  The task copies the table out and keeps the copy only if gen
 * was even and unchanged around the copy.
 */

/*
 * A breakpoint as it travels into the control page's layout, and back:
 * the two have the same fields and group size (asserted above), copied
 * one by one since the page's layout is its own.
 */
#define RING_BP_COPY(to, from) do {					\
	(to)->id = (from)->id;						\
	(to)->tid = (from)->tid;					\
	(to)->call = (from)->call;					\
	(to)->phase = (from)->phase;					\
	(to)->match = (from)->match;					\
	(to)->peer = (from)->peer;					\
	(to)->tag = (from)->tag;					\
	(to)->ctx = (from)->ctx;					\
	(to)->seq = (from)->seq;					\
	memcpy((to)->group, (from)->group, sizeof((to)->group));	\
	(to)->group[sizeof((to)->group) - 1] = '\0';			\
} while (0)

static void
ring_bp_from(struct ring_bp *to, const struct breakpoint *bp)
{
	RING_BP_COPY(to, bp);
}

static void
ring_bp_to(struct breakpoint *to, const struct ring_bp *bp)
{
	RING_BP_COPY(to, bp);
}

/*
 * Agent: replaces the table of the task's control page with n entries
 * (at most RING_BP_MAX).  Starting from an odd gen (a writer that died
 * mid-write) is fine: the page is odd while we write and even after.
 */
void
ring_ctl_write(struct ring_hdr *h, const struct breakpoint *bps, unsigned n)
{
	struct ring_ctl *ctl = &h->ctl;
	uint32_t gen;
	unsigned i;

	if (n > RING_BP_MAX)
		n = RING_BP_MAX;
	gen = atomic_load_explicit(&ctl->gen, memory_order_relaxed) | 1;
	atomic_store_explicit(&ctl->gen, gen, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (i = 0; i < n; i++)
		ring_bp_from(&ctl->bp[i], &bps[i]);
	atomic_store_explicit(&ctl->nbp, n, memory_order_relaxed);
	atomic_store_explicit(&ctl->gen, gen + 1, memory_order_release);
}

/*
 * Task: copies the table into bps (RING_BP_MAX entries).  Returns the
 * entries copied; 0 when no consistent copy could be had in
 * RING_CTL_TRIES tries.
 */
static unsigned
ctl_read(const struct ring_ctl *ctl, struct ring_bp *bps)
{
	uint32_t gen, n;
	int i;

	for (i = 0; i < RING_CTL_TRIES; i++) {
		gen = atomic_load_explicit(&ctl->gen, memory_order_acquire);
		if (gen & 1)
			continue;
		n = atomic_load_explicit(&ctl->nbp, memory_order_relaxed);
		if (n > RING_BP_MAX)
			n = RING_BP_MAX;
		memcpy(bps, ctl->bp, n * sizeof(*bps));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&ctl->gen, memory_order_relaxed) ==
		    gen)
			return n;
	}
	return 0;
}

/* The record's group (glen bytes) is the entry's, NUL-terminated or not. */
static int
group_equal(const struct ring_bp *bp, const struct record *r)
{
	size_t n = strnlen(bp->group, sizeof(bp->group));

	return n == r->glen && (n == 0 || memcmp(bp->group, r->group, n) == 0);
}

static int
bp_hit(const struct ring_bp *bp, int32_t tid, const struct record *r,
    uint64_t seq, uint8_t phase)
{
	if (bp->id == 0 || bp->phase != phase || (bp->match & ~BP_ALL) != 0)
		return 0;
	if ((bp->tid != 0 && bp->tid != tid) ||
	    (bp->call != 0 && bp->call != r->call))
		return 0;
	if (((bp->match & BP_PEER) && bp->peer != r->peer) ||
	    ((bp->match & BP_TAG) && bp->tag != r->tag) ||
	    ((bp->match & BP_CTX) && bp->ctx != r->ctx) ||
	    ((bp->match & BP_SEQ) && bp->seq != seq))
		return 0;
	return (bp->match & BP_GROUP) == 0 || group_equal(bp, r);
}

/*
 * Task: does the call r of task tid, at phase (PMON_BEGIN before it
 * runs, PMON_END after its end record), hit a breakpoint?  seq is the
 * number the task's next record will get.  Returns 1 and the first
 * matching entry in *hit (its group NUL-terminated), or 0.  With an
 * empty table this is one relaxed load.  The table is the agent's,
 * but read defensively: an entry with id 0 (never written) or with
 * match bits we do not know never matches.
 */
int
ring_bp_match(const struct ring_hdr *h, int32_t tid, const struct record *r,
    uint64_t seq, uint8_t phase, struct breakpoint *hit)
{
	struct ring_bp bps[RING_BP_MAX];
	unsigned i, n;

	if (atomic_load_explicit(&h->ctl.nbp, memory_order_relaxed) == 0)
		return 0;
	n = ctl_read(&h->ctl, bps);
	for (i = 0; i < n; i++)
		if (bp_hit(&bps[i], tid, r, seq, phase)) {
			ring_bp_to(hit, &bps[i]);
			return 1;
		}
	return 0;
}
