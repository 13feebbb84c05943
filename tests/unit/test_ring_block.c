/*
 * Protects blocking mode of the record ring (doc/capture.md, "Blocking
 * mode"): a task whose ring is full waits for its agent to make room,
 * through a futex shared by two processes, and loses nothing; it never
 * waits when the agent did not ask for it, for a record the ring cannot
 * hold, past the agent's timeout (and then not again until the agent
 * made room), for an agent that left or is gone, nor for an ACK; and a
 * signal handler that records while the task waits does not corrupt
 * the ring.  And the TIMEOUT syntax of pmon start --block.
 *
 * The producer here does what the instrumentation library does
 * (preload.c, ring_put): it numbers a record under its lock, tries the
 * ring, and waits without the lock.
 */
#include <sys/time.h>
#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "record.h"
#include "ring.h"
#include "unit.h"

#define MS		1000000ULL
/*
 * The writer looks again after this long without a wake-up: so long
 * here that a lost wake-up shows as a wait of at least SLICE.
 */
#define SLICE		(5000 * MS)

/* The producer's state, as preload.c keeps it. */
static atomic_flag	put_lock = ATOMIC_FLAG_INIT;
static uint64_t		put_seq;
static atomic_uint	bells;

static void
lock(void)
{
	while (atomic_flag_test_and_set(&put_lock))
		;
}

static void
unlock(void)
{
	atomic_flag_clear(&put_lock);
}

static void
bell(void *arg)
{
	(void)arg;
	atomic_fetch_add(&bells, 1);
}

static size_t
encode(uint8_t *buf, uint64_t seq)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_send;
	r.seq = seq;
	r.peer = r.tag = r.ctx = r.bytes = r.inst = -1;
	return record_encode(buf, &r, NULL);
}

/* One record, numbered next: 0 written, -1 dropped (and counted). */
static int
put(struct ring *tx)
{
	uint8_t buf[RECORD_HDR_SIZE];
	size_t len;
	int rv;

	lock();
	len = encode(buf, put_seq + 1);
	if (ring_try_write(tx, buf, len) == 0) {
		put_seq++;
		unlock();
		return 0;
	}
	for (;;) {
		unlock();
		rv = ring_wait(tx, len, bell, NULL);
		lock();
		if (rv == -1)
			break;
		len = encode(buf, put_seq + 1);
		if (ring_try_write(tx, buf, len) == 0) {
			put_seq++;
			unlock();
			return 0;
		}
	}
	put_seq++;
	ring_drop(tx);
	unlock();
	return -1;
}

/* A new ring, its agent's view attached, in blocking mode ns. */
static void
ring_pair(struct ring *tx, struct ring *rx, uint64_t ns)
{
	const char *why;

	memset(tx, 0, sizeof(*tx));
	memset(rx, 0, sizeof(*rx));
	tx->fd = rx->fd = -1;
	CU_ASSERT_FATAL(ring_create(tx, RING_MIN_SIZE) == 0);
	CU_ASSERT_FATAL(ring_attach(rx, dup(tx->fd), &why) == 0);
	ring_set_block(rx, ns);
	tx->slice_ns = SLICE;
	put_seq = 0;
	atomic_store(&bells, 0);
}

static void
fill(struct ring *tx)
{
	uint8_t buf[RECORD_HDR_SIZE];

	while (ring_try_write(tx, buf, encode(buf, put_seq + 1)) == 0)
		put_seq++;
}

/*
 * The agent's side: reads want records, checking that they come in
 * order, pausing between reads so that the ring fills.  With hold, it
 * reads as the agent does while a coordinator acknowledges nothing:
 * only ring_relieve frees the ring.
 */
struct reader {
	struct ring	*rx;
	uint64_t	 want, got;
	int		 hold, bad;
	useconds_t	 pause;
};

static void
reader_run(struct reader *rd)
{
	uint8_t out[RING_MIN_SIZE];
	struct record r;
	const char *why;
	unsigned n, i;
	ssize_t got;
	size_t off;

	if (rd->hold)
		ring_hold(rd->rx);
	while (rd->got < rd->want && !rd->bad) {
		usleep(rd->pause);
		if ((got = ring_read(rd->rx, out, sizeof(out), &n, &why)) < 0) {
			rd->bad = 1;
			break;
		}
		for (off = 0, i = 0; i < n; i++, off += r.len)
			if (record_decode(out + off, (size_t)got - off, &r,
			    &why) == -1 || r.seq != ++rd->got)
				rd->bad = 1;
		if (rd->hold)
			ring_relieve(rd->rx);
	}
}

static void *
reader_main(void *arg)
{
	reader_run(arg);
	return NULL;
}

/* Without blocking mode, a full ring drops at once: no wait, no bell. */
static void
test_block_never(void)
{
	struct ring tx, rx;

	ring_pair(&tx, &rx, RING_BLOCK_NEVER);
	fill(&tx);
	CU_ASSERT_EQUAL(put(&tx), -1);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 1);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waits), 0);
	CU_ASSERT_EQUAL(atomic_load(&bells), 0);
	ring_close(&rx);
	ring_close(&tx);
}

/* A record larger than the whole ring would wait forever: it drops. */
static void
test_block_too_big(void)
{
	struct ring tx, rx;

	ring_pair(&tx, &rx, RING_BLOCK_FOREVER);
	CU_ASSERT_EQUAL(ring_wait(&tx, RING_MIN_SIZE + 1, bell, NULL), -1);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waits), 0);
	ring_close(&rx);
	ring_close(&tx);
}

/*
 * A slow reader, forever: the writer waits each time the ring is full,
 * rings the bell, and every record arrives in order; none is dropped.
 * The same with held reads that nobody acknowledges: a waiting task has
 * what was read freed at once (it never waits for an ACK).
 */
static void
block_reader_thread(int hold)
{
	struct reader rd = { .want = 3000, .hold = hold, .pause = 200 };
	struct ring tx, rx;
	pthread_t th;
	uint64_t i;

	ring_pair(&tx, &rx, RING_BLOCK_FOREVER);
	rd.rx = &rx;
	CU_ASSERT_FATAL(pthread_create(&th, NULL, reader_main, &rd) == 0);
	for (i = 0; i < rd.want; i++)
		CU_ASSERT_EQUAL(put(&tx), 0);
	pthread_join(th, NULL);
	CU_ASSERT_EQUAL(rd.bad, 0);
	CU_ASSERT_EQUAL(rd.got, rd.want);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 0);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->written), rd.want);
	CU_ASSERT(atomic_load(&tx.hdr->waits) > 0);
	/*
	 * A wait that sleeps rings first; one that finds room at once (the
	 * reader freed some since the write failed) counts, without a bell.
	 */
	CU_ASSERT(atomic_load(&bells) > 0);
	CU_ASSERT(atomic_load(&tx.hdr->wait_ns) >=
	    atomic_load(&tx.hdr->wait_max_ns));
	CU_ASSERT(atomic_load(&tx.hdr->wait_max_ns) < SLICE);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waiters), 0);
	ring_close(&rx);
	ring_close(&tx);
}

static void
test_block_thread(void)
{
	block_reader_thread(0);
}

static void
test_block_thread_held(void)
{
	block_reader_thread(1);
}

/*
 * The agent is another process with its own mapping of the memfd: the
 * futex must be shared, not private.  The child attaches, sets blocking
 * mode, says so, and reads slowly; it exits 0 when it read every record
 * in order.
 */
static void
test_block_process(void)
{
	struct reader rd = { .want = 2000, .pause = 300 };
	struct ring tx = { .fd = -1 }, rx = { .fd = -1 };
	const char *why;
	int p[2], status;
	uint64_t i;
	pid_t pid;
	char c;

	CU_ASSERT_FATAL(ring_create(&tx, RING_MIN_SIZE) == 0);
	CU_ASSERT_FATAL(pipe(p) == 0);
	tx.slice_ns = SLICE;
	put_seq = 0;
	if ((pid = fork()) == 0) {
		close(p[0]);
		if (ring_attach(&rx, dup(tx.fd), &why) == -1)
			_exit(2);
		ring_set_block(&rx, RING_BLOCK_FOREVER);
		if (write(p[1], "k", 1) != 1)
			_exit(2);
		rd.rx = &rx;
		reader_run(&rd);
		_exit(rd.bad || rd.got != rd.want);
	}
	CU_ASSERT_FATAL(pid > 0);
	close(p[1]);
	CU_ASSERT_FATAL(read(p[0], &c, 1) == 1);
	close(p[0]);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->agent_pid), pid);
	for (i = 0; i < rd.want; i++)
		CU_ASSERT_EQUAL(put(&tx), 0);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 0);
	CU_ASSERT(atomic_load(&tx.hdr->waits) > 0);
	CU_ASSERT(atomic_load(&tx.hdr->wait_max_ns) < SLICE);
	ring_close(&tx);
}

/*
 * A timeout: the wait gives up after it (and not before), the record
 * drops; the next full ring drops without waiting while the agent has
 * made no room, and waits again once it has.
 */
static void
test_block_timeout(void)
{
	uint8_t out[RING_MIN_SIZE];
	struct ring tx, rx;
	const char *why;
	unsigned n;

	ring_pair(&tx, &rx, 30 * MS);
	fill(&tx);
	CU_ASSERT_EQUAL(put(&tx), -1);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waits), 1);
	CU_ASSERT(atomic_load(&tx.hdr->wait_ns) >= 30 * MS);
	CU_ASSERT(atomic_load(&bells) >= 1);
	CU_ASSERT_EQUAL(put(&tx), -1);		/* stalled: no wait */
	CU_ASSERT_EQUAL(put(&tx), -1);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waits), 1);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 3);
	CU_ASSERT(ring_read(&rx, out, sizeof(out), &n, &why) > 0);
	fill(&tx);
	CU_ASSERT_EQUAL(put(&tx), -1);		/* room was made: waits */
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waits), 2);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 4);
	ring_close(&rx);
	ring_close(&tx);
}

static void *
put_main(void *arg)
{
	return (void *)(intptr_t)put(arg);
}

/* An agent that leaves releases a task waiting forever: it drops. */
static void
test_block_release(void)
{
	struct ring tx, rx;
	pthread_t th;
	void *rv;

	ring_pair(&tx, &rx, RING_BLOCK_FOREVER);
	fill(&tx);
	CU_ASSERT_FATAL(pthread_create(&th, NULL, put_main, &tx) == 0);
	while (atomic_load(&tx.hdr->waiters) == 0)
		usleep(1000);
	ring_release(&rx);
	pthread_join(th, &rv);
	CU_ASSERT_EQUAL((intptr_t)rv, -1);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 1);
	CU_ASSERT(atomic_load(&tx.hdr->wait_max_ns) < SLICE);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->block_ns), RING_BLOCK_NEVER);
	ring_close(&rx);
	ring_close(&tx);
}

/*
 * An agent that died and has no successor: a task waiting forever gives
 * up after the orphan time (shortened here), unless one adopts the ring.
 */
static void
test_block_orphan(void)
{
	struct ring tx, rx;
	pid_t dead;

	ring_pair(&tx, &rx, RING_BLOCK_FOREVER);
	if ((dead = fork()) == 0)
		_exit(0);
	CU_ASSERT_FATAL(dead > 0 && waitpid(dead, NULL, 0) == dead);
	atomic_store(&tx.hdr->agent_pid, dead);
	tx.orphan_ns = 20 * MS;
	tx.slice_ns = 5 * MS;
	fill(&tx);
	CU_ASSERT_EQUAL(put(&tx), -1);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waits), 1);
	CU_ASSERT(atomic_load(&tx.hdr->wait_ns) >= 20 * MS);
	ring_close(&rx);
	ring_close(&tx);
}

/*
 * A signal handler that records while the task waits for room: it
 * waits too (nothing holds the lock), both records arrive, numbered in
 * the order they were written, and errno survives the waits.
 */
static struct ring	*sig_ring;
static volatile sig_atomic_t sig_rv = 1;

static void
sig_handler(int sig)
{
	(void)sig;
	sig_rv = put(sig_ring);
}

struct sig_agent {
	struct ring	*rx;
	pthread_t	 task;
	struct reader	 rd;
};

/* Signals the task once it waits, then reads once two wait. */
static void *
sig_agent_main(void *arg)
{
	struct sig_agent *sa = arg;
	struct ring_hdr *h = sa->rx->hdr;

	while (atomic_load(&h->waiters) == 0)
		usleep(1000);
	pthread_kill(sa->task, SIGUSR1);
	while (atomic_load(&h->waiters) < 2)
		usleep(1000);
	reader_run(&sa->rd);
	return NULL;
}

static void
test_block_signal(void)
{
	struct sigaction sa, old;
	struct sig_agent ag;
	struct ring tx, rx;
	pthread_t th;
	uint64_t full;

	ring_pair(&tx, &rx, RING_BLOCK_FOREVER);
	fill(&tx);
	full = put_seq;
	memset(&ag, 0, sizeof(ag));
	ag.rx = &rx;
	ag.task = pthread_self();
	ag.rd = (struct reader){ .rx = &rx, .want = full + 2, .pause = 100 };
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	CU_ASSERT_FATAL(sigaction(SIGUSR1, &sa, &old) == 0);
	sig_ring = &tx;
	CU_ASSERT_FATAL(pthread_create(&th, NULL, sig_agent_main, &ag) == 0);
	errno = EDOM;
	CU_ASSERT_EQUAL(put(&tx), 0);
	CU_ASSERT_EQUAL(errno, EDOM);
	pthread_join(th, NULL);
	sigaction(SIGUSR1, &old, NULL);
	CU_ASSERT_EQUAL(sig_rv, 0);
	CU_ASSERT_EQUAL(ag.rd.bad, 0);
	CU_ASSERT_EQUAL(ag.rd.got, full + 2);
	CU_ASSERT_EQUAL(ring_dropped(&tx), 0);
	CU_ASSERT_EQUAL(atomic_load(&tx.hdr->waits), 2);
	CU_ASSERT(atomic_load(&tx.hdr->wait_max_ns) < SLICE);
	ring_close(&rx);
	ring_close(&tx);
}

/* pmon start --block=TIMEOUT, pmon-coordd and pmon-agentd -k. */
static void
test_block_syntax(void)
{
	static const char *const bad[] = {
		"", "0ms", "0s", "10", "1.5s", "-1s", "+5s", " 5s", "5 s",
		"5sec", "5m", "3601s", "3600001ms", "99999999999999999999s",
		"Forever", "forever ",
	};
	uint64_t ns;
	size_t i;

	CU_ASSERT(capture_block_parse("forever", &ns) == 0 &&
	    ns == RING_BLOCK_FOREVER);
	CU_ASSERT(capture_block_parse("500ms", &ns) == 0 && ns == 500 * MS);
	CU_ASSERT(capture_block_parse("2s", &ns) == 0 && ns == 2000 * MS);
	CU_ASSERT(capture_block_parse("1ms", &ns) == 0 && ns == MS);
	CU_ASSERT(capture_block_parse("3600s", &ns) == 0 &&
	    ns == 3600000 * MS);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(capture_block_parse(bad[i], &ns), -1);
}

static CU_TestInfo block_tests[] = {
	{ "TIMEOUT syntax", test_block_syntax },
	{ "no blocking: drops at once", test_block_never },
	{ "a record larger than the ring", test_block_too_big },
	{ "slow reader thread: nothing lost", test_block_thread },
	{ "held reads, no ACK: nothing lost", test_block_thread_held },
	{ "reader process: a shared futex", test_block_process },
	{ "timeout, then no wait until room", test_block_timeout },
	{ "the agent leaves: released", test_block_release },
	{ "the agent is gone: gives up", test_block_orphan },
	{ "a signal handler records meanwhile", test_block_signal },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo block_suites[] = {
	{ "ring blocking mode", NULL, NULL, NULL, NULL, block_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(block_suites)
