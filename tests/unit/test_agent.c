/*
 * Protects the agent's untrusted-input decoder (TASK_HELLO from a task),
 * the frames it sends, and the batching of ring records into TASK_RECORDS
 * frames: every record once, in order, frames well under the limit, and a
 * corrupt ring reported instead of shipped.
 *
 * And stopping tasks (doc/control.md) with a real agent: its event loop,
 * its task socket, forked processes registering real rings like tasks do,
 * and the test as its coordinator on a socketpair, speaking with the
 * coordinator's own encoders and decoder.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <pvm3.h>

#include "agent.h"
#include "coord.h"
#include "proto.h"
#include "record.h"
#include "ring.h"
#include "task_msg.h"
#include "unit.h"
#include "wire.h"
#include "xmalloc.h"

static void
hello_sample(struct task_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->tid = 0x40005;
	h->pid = 1234;
	h->parent_tid = 0x40002;
	h->spawn_seq = 5;
	strcpy(h->program, "slave1");
}

static void
test_hello_roundtrip(void)
{
	uint8_t buf[TASK_HELLO_FRAME_MAX];
	struct task_hello in, out;
	struct frame_hdr fh;
	const char *why = NULL;
	size_t n;

	hello_sample(&in);
	n = task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(n, FRAME_HDR_SIZE + TASK_HELLO_FIXED + 6);
	CU_ASSERT_EQUAL(frame_hdr_decode(buf, &fh, &why), 0);
	CU_ASSERT_EQUAL(fh.type, MSG_TASK_HELLO);
	CU_ASSERT_EQUAL(fh.len, n - FRAME_HDR_SIZE);
	CU_ASSERT_EQUAL(task_hello_decode(buf + FRAME_HDR_SIZE, fh.len,
	    &out, &why), 0);
	CU_ASSERT_EQUAL(out.tid, in.tid);
	CU_ASSERT_EQUAL(out.pid, in.pid);
	CU_ASSERT_EQUAL(out.parent_tid, in.parent_tid);
	CU_ASSERT_EQUAL(out.spawn_seq, in.spawn_seq);
	CU_ASSERT_STRING_EQUAL(out.program, "slave1");
}

/* A name longer than TASK_PROGRAM_MAX is cut by the encoder, not sent. */
static void
test_hello_long_program(void)
{
	uint8_t buf[TASK_HELLO_FRAME_MAX];
	struct task_hello in, out;
	const char *why;
	size_t n;

	hello_sample(&in);
	memset(in.program, 'x', sizeof(in.program));
	n = task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(n, TASK_HELLO_FRAME_MAX);
	CU_ASSERT_EQUAL(task_hello_decode(buf + FRAME_HDR_SIZE,
	    n - FRAME_HDR_SIZE, &out, &why), 0);
	CU_ASSERT_EQUAL(strlen(out.program), TASK_PROGRAM_MAX);
}

static int
parse_payload(const uint8_t *p, size_t len)
{
	struct task_hello h;
	const char *why = NULL;
	int rc;

	rc = task_hello_decode(p, len, &h, &why);
	if (rc == -1)
		CU_ASSERT_PTR_NOT_NULL(why);
	return rc;
}

static void
test_hello_rejects(void)
{
	uint8_t buf[TASK_HELLO_FRAME_MAX + 16], *p = buf + FRAME_HDR_SIZE;
	struct task_hello in;
	size_t n, len, i;

	hello_sample(&in);
	n = task_hello_encode(buf, &in);
	len = n - FRAME_HDR_SIZE;
	for (i = 0; i < len; i++)
		CU_ASSERT_EQUAL(parse_payload(p, i), -1);
	p[len] = 0;
	CU_ASSERT_EQUAL(parse_payload(p, len + 1), -1);	/* trailing */
	CU_ASSERT_EQUAL(parse_payload(p, len), 0);

	p[TASK_HELLO_FIXED + 2] = '\0';			/* NUL in name */
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	task_hello_encode(buf, &in);
	wire_put16(p + 20, 300);			/* name too long */
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);

	in.tid = 0;
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	in.tid = -5;
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	hello_sample(&in);
	in.pid = 0;
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	hello_sample(&in);
	in.spawn_seq = 0;				/* parent without seq */
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), -1);
	in.parent_tid = 0;				/* neither: fine */
	task_hello_encode(buf, &in);
	CU_ASSERT_EQUAL(parse_payload(p, len), 0);
}

static long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
on_alarm(int sig)
{
	(void)sig;
}

/*
 * A task's wait for TASK_READY on its socket (sv[0]; we are the agent on
 * sv[1]): what it takes, and everything that ends the wait early or on
 * time.  Returns the wait's result; *ms how long it took.
 */
static int
ready_wait(int fd, int wait_ms, uint32_t *nbp, long *ms)
{
	long start = mono_ms();
	int rc;

	*nbp = 12345;
	rc = task_ready_wait(fd, wait_ms, nbp);
	*ms = mono_ms() - start;
	return rc;
}

static void
test_ready_wait(void)
{
	uint8_t frame[TASK_READY_FRAME + 1], stopped[TASK_STOPPED_FRAME];
	struct sigaction sa, old;
	struct itimerval it;
	uint32_t nbp;
	pid_t pid;
	long ms;
	int sv[2], st;
	char c;

	CU_ASSERT_EQUAL(task_ready_encode(frame, 7), TASK_READY_FRAME);
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
	    sv) == 0);

	/* There already: taken at once, and nothing after it. */
	frame[TASK_READY_FRAME] = 'x';
	CU_ASSERT_FATAL(write(sv[1], frame, sizeof(frame)) ==
	    (ssize_t)sizeof(frame));
	CU_ASSERT_EQUAL(ready_wait(sv[0], TASK_READY_WAIT_MS, &nbp, &ms), 0);
	CU_ASSERT_EQUAL(nbp, 7);
	CU_ASSERT(ms < TASK_READY_WAIT_MS / 2);
	CU_ASSERT_EQUAL(read(sv[0], &c, 1), 1);
	CU_ASSERT_EQUAL(c, 'x');

	/* An agent that never answers: the task goes on after the wait. */
	CU_ASSERT_EQUAL(ready_wait(sv[0], 100, &nbp, &ms), -1);
	CU_ASSERT(ms >= 99 && ms < 100 + TASK_READY_WAIT_MS / 2);
	CU_ASSERT_EQUAL(nbp, 12345);

	/* ...nor do signals stretch it. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;		/* no SA_RESTART */
	CU_ASSERT_FATAL(sigaction(SIGALRM, &sa, &old) == 0);
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 10000;
	it.it_value.tv_usec = 10000;
	CU_ASSERT_FATAL(setitimer(ITIMER_REAL, &it, NULL) == 0);
	CU_ASSERT_EQUAL(ready_wait(sv[0], 100, &nbp, &ms), -1);
	CU_ASSERT(ms >= 99 && ms < 100 + TASK_READY_WAIT_MS / 2);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sigaction(SIGALRM, &old, NULL);

	/* Half a frame is waited out as well. */
	CU_ASSERT_FATAL(write(sv[1], frame, FRAME_HDR_SIZE) ==
	    FRAME_HDR_SIZE);
	CU_ASSERT_EQUAL(ready_wait(sv[0], 100, &nbp, &ms), -1);
	CU_ASSERT(ms >= 99);
	CU_ASSERT_EQUAL(read(sv[0], &c, 1), -1);	/* nothing left */

	/* A frame in pieces, the second one later. */
	task_ready_encode(frame, BREAKPOINTS_MAX);
	pid = fork();
	CU_ASSERT_FATAL(pid != -1);
	if (pid == 0) {
		(void)write(sv[1], frame, 5);
		usleep(30000);
		(void)write(sv[1], frame + 5, TASK_READY_FRAME - 5);
		_exit(0);
	}
	CU_ASSERT_EQUAL(ready_wait(sv[0], TASK_READY_WAIT_MS, &nbp, &ms), 0);
	CU_ASSERT_EQUAL(nbp, BREAKPOINTS_MAX);
	CU_ASSERT(ms >= 25 && ms < TASK_READY_WAIT_MS / 2);
	CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);

	/* Anything else ends the wait at once: another message... */
	task_stopped_encode(stopped, 5, 9);
	CU_ASSERT_FATAL(write(sv[1], stopped, sizeof(stopped)) ==
	    (ssize_t)sizeof(stopped));
	CU_ASSERT_EQUAL(ready_wait(sv[0], TASK_READY_WAIT_MS, &nbp, &ms), -1);
	CU_ASSERT(ms < TASK_READY_WAIT_MS / 2);
	while (read(sv[0], stopped, sizeof(stopped)) > 0)
		;
	/* ...a bad header (another version, a wrong length)... */
	task_ready_encode(frame, 1);
	frame[1] = PROTO_VERSION + 1;
	CU_ASSERT_FATAL(write(sv[1], frame, TASK_READY_FRAME) ==
	    TASK_READY_FRAME);
	CU_ASSERT_EQUAL(ready_wait(sv[0], TASK_READY_WAIT_MS, &nbp, &ms), -1);
	CU_ASSERT(ms < TASK_READY_WAIT_MS / 2);
	while (read(sv[0], stopped, sizeof(stopped)) > 0)
		;
	frame_hdr_encode(frame, MSG_TASK_READY, TASK_READY_LEN + 1);
	CU_ASSERT_FATAL(write(sv[1], frame, TASK_READY_FRAME) ==
	    TASK_READY_FRAME);
	CU_ASSERT_EQUAL(ready_wait(sv[0], TASK_READY_WAIT_MS, &nbp, &ms), -1);
	CU_ASSERT(ms < TASK_READY_WAIT_MS / 2);
	while (read(sv[0], stopped, sizeof(stopped)) > 0)
		;
	/* ...or an agent that closes. */
	close(sv[1]);
	CU_ASSERT_EQUAL(ready_wait(sv[0], TASK_READY_WAIT_MS, &nbp, &ms), -1);
	CU_ASSERT(ms < TASK_READY_WAIT_MS / 2);
	CU_ASSERT_EQUAL(nbp, 12345);
	close(sv[0]);
}

/* Writes n records (seq 1..n) to the ring, every third with peers. */
static void
ring_fill(struct ring *rg, unsigned n)
{
	uint8_t buf[RECORD_MAX_SIZE];
	int32_t peers[3] = { 0x40003, 0x40004, 0x40005 };
	struct record r;
	unsigned i;

	for (i = 1; i <= n; i++) {
		memset(&r, 0, sizeof(r));
		r.call = PMON_CALL_send;
		r.phase = i % 2 ? PMON_BEGIN : PMON_END;
		r.seq = i;
		r.peer = 0x40003;
		r.tag = 22;
		r.npeers = i % 3 == 0 ? 3 : 0;
		r.group = "g";
		r.glen = i % 3 == 0;
		CU_ASSERT_EQUAL_FATAL(ring_write(rg, buf,
		    record_encode(buf, &r, peers)), 0);
	}
}

/* Reads TASK_RECORDS frames back; returns the records seen, checking the
 * tid, the order and the frame sizes. */
static unsigned
frames_check(struct evbuffer *eb, int32_t tid, size_t batch,
    uint64_t *lastseq)
{
	uint8_t hdr[FRAME_HDR_SIZE], *p;
	struct frame_hdr fh;
	struct record r;
	const char *why;
	unsigned nrec = 0, count;
	size_t off;

	while (evbuffer_copyout(eb, hdr, sizeof(hdr)) == sizeof(hdr)) {
		CU_ASSERT_EQUAL_FATAL(frame_hdr_decode(hdr, &fh, &why), 0);
		CU_ASSERT_EQUAL(fh.type, MSG_TASK_RECORDS);
		CU_ASSERT(fh.len <= batch + 8);
		evbuffer_drain(eb, sizeof(hdr));
		p = evbuffer_pullup(eb, fh.len);
		CU_ASSERT_EQUAL(wire_get32(p), (uint32_t)tid);
		count = wire_get32(p + 4);
		for (off = 8; off < fh.len; off += r.len, count--) {
			CU_ASSERT_EQUAL_FATAL(record_decode(p + off,
			    fh.len - off, &r, &why), 0);
			CU_ASSERT_EQUAL(r.seq, *lastseq + 1);
			*lastseq = r.seq;
			nrec++;
		}
		CU_ASSERT_EQUAL(count, 0);
		evbuffer_drain(eb, fh.len);
	}
	return nrec;
}

static void
test_drain_batches(void)
{
	struct evbuffer *eb = evbuffer_new();
	size_t batch = RECORD_MAX_SIZE;
	uint8_t *buf = malloc(batch);
	struct ring rg = { .fd = -1 };
	const char *why;
	uint64_t last = 0;
	unsigned got;
	int call = -1;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 64 * 1024), 0);
	ring_fill(&rg, 1000);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 0x40005, eb, buf, batch,
	    SIZE_MAX, &call, &why), 0);
	got = frames_check(eb, 0x40005, batch, &last);
	CU_ASSERT_EQUAL(got, 1000);
	CU_ASSERT_EQUAL(call, PMON_CALL_send);	/* the last record's */
	/* Empty now: nothing more, and no empty frame; call untouched. */
	call = PMON_CALL_BREAK;
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 0x40005, eb, buf, batch,
	    SIZE_MAX, &call, &why), 0);
	CU_ASSERT_EQUAL(evbuffer_get_length(eb), 0);
	CU_ASSERT_EQUAL(call, PMON_CALL_BREAK);
	CU_ASSERT_EQUAL(ring_dropped(&rg), 0);
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

/* max bounds one pass; the rest stays in the ring for the next. */
static void
test_drain_max(void)
{
	struct evbuffer *eb = evbuffer_new();
	size_t batch = RECORD_MAX_SIZE;
	uint8_t *buf = malloc(batch);
	struct ring rg = { .fd = -1 };
	const char *why;
	uint64_t last = 0;
	unsigned got;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 64 * 1024), 0);
	ring_fill(&rg, 1000);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 7, eb, buf, batch, 1, NULL,
	    &why), 0);
	got = frames_check(eb, 7, batch, &last);
	CU_ASSERT(got > 0 && got < 1000);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 7, eb, buf, batch, SIZE_MAX,
	    NULL, &why), 0);
	got += frames_check(eb, 7, batch, &last);
	CU_ASSERT_EQUAL(got, 1000);
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

/* A record the coordinator could not decode means a corrupt ring. */
static void
test_drain_corrupt(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t rec[RECORD_HDR_SIZE], *buf = malloc(RECORD_MAX_SIZE);
	struct ring rg = { .fd = -1 };
	const char *why = NULL;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 4096), 0);
	memset(rec, 0, sizeof(rec));
	wire_put16(rec, sizeof(rec));		/* call 0, seq 0 */
	CU_ASSERT_EQUAL(ring_write(&rg, rec, sizeof(rec)), 0);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, 7, eb, buf, RECORD_MAX_SIZE,
	    SIZE_MAX, NULL, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(why);
	CU_ASSERT_EQUAL(evbuffer_get_length(eb), 0);
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

/* Every frame the agent builds passes the receiver's header check. */
static void
test_frames_valid(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t hdr[FRAME_HDR_SIZE], types[5];
	struct task_hello h;
	struct frame_hdr fh;
	const char *why;
	int i = 0;

	hello_sample(&h);
	agent_frame_agent_hello(eb, 0x40000, 99, "host", "LINUX64",
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	agent_frame_task_new(eb, &h);
	agent_frame_task_end(eb, 0x40005, 3);
	agent_frame_flush_done(eb, 42);
	agent_frame_agent_hello(eb, 0x40000, 99, "", "", "");
	while (evbuffer_remove(eb, hdr, sizeof(hdr)) == sizeof(hdr)) {
		CU_ASSERT_EQUAL_FATAL(frame_hdr_decode(hdr, &fh, &why), 0);
		types[i++] = fh.type;
		evbuffer_drain(eb, fh.len);
	}
	CU_ASSERT_EQUAL(i, 5);
	CU_ASSERT_EQUAL(types[0], MSG_AGENT_HELLO);
	CU_ASSERT_EQUAL(types[1], MSG_TASK_NEW);
	CU_ASSERT_EQUAL(types[2], MSG_TASK_END);
	CU_ASSERT_EQUAL(types[3], MSG_FLUSH_DONE);
	evbuffer_free(eb);
}

static void
test_dump(void)
{
	struct evbuffer *eb = evbuffer_new();
	uint8_t *buf = malloc(RECORD_MAX_SIZE);
	struct ring rg = { .fd = -1 };
	struct task_hello h;
	const char *why;
	char out[8192];
	FILE *f;

	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, 4096), 0);
	ring_fill(&rg, 3);
	hello_sample(&h);
	agent_frame_task_new(eb, &h);
	CU_ASSERT_EQUAL(agent_ring_drain(&rg, h.tid, eb, buf,
	    RECORD_MAX_SIZE, SIZE_MAX, NULL, &why), 0);
	agent_frame_task_end(eb, h.tid, 0);
	memset(out, 0, sizeof(out));
	f = fmemopen(out, sizeof(out) - 1, "w");
	CU_ASSERT_EQUAL(agent_dump_frames(eb, f), 0);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "program slave1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "t40005 1 pvm_send begin"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "group=g peers=t40003,t40004"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "# end t40005 dropped 0"));
	ring_close(&rg);
	evbuffer_free(eb);
	free(buf);
}

/*
 * A TCP connection from 127.0.0.1 to a listener on dst: the client's
 * fd in *cfd, the accepted one in *afd.
 */
static void
tcp_pair(const char *dst, int *cfd, int *afd)
{
	struct sockaddr_in sin, me;
	socklen_t len = sizeof(sin);
	int lfd;

	memset(&me, 0, sizeof(me));
	me.sin_family = AF_INET;
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	CU_ASSERT_FATAL(inet_pton(AF_INET, dst, &sin.sin_addr) == 1);
	CU_ASSERT_FATAL((lfd = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	CU_ASSERT_FATAL(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CU_ASSERT_FATAL(listen(lfd, 1) == 0);
	CU_ASSERT_FATAL(getsockname(lfd, (struct sockaddr *)&sin, &len) == 0);
	CU_ASSERT_FATAL((*cfd = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	CU_ASSERT_FATAL(bind(*cfd, (struct sockaddr *)&me, sizeof(me)) == 0);
	CU_ASSERT_FATAL(connect(*cfd, (struct sockaddr *)&sin,
	    sizeof(sin)) == 0);
	CU_ASSERT_FATAL((*afd = accept(lfd, NULL, NULL)) != -1);
	close(lfd);
}

/*
 * --compress=remote decides by the connection: a Unix socket and a TCP
 * connection whose ends share an address are local; ends on two
 * addresses (127.0.0.2 is loopback too, but another address, as another
 * host's would be) are not; a socket that is not connected is not.
 */
static void
test_peer_is_local(void)
{
	int sv[2], cfd, afd;

	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CU_ASSERT_EQUAL(agent_peer_is_local(sv[0]), 1);
	close(sv[0]);
	close(sv[1]);

	tcp_pair("127.0.0.1", &cfd, &afd);
	CU_ASSERT_EQUAL(agent_peer_is_local(cfd), 1);
	CU_ASSERT_EQUAL(agent_peer_is_local(afd), 1);
	close(cfd);
	close(afd);

	tcp_pair("127.0.0.2", &cfd, &afd);
	CU_ASSERT_EQUAL(agent_peer_is_local(cfd), 0);
	CU_ASSERT_EQUAL(agent_peer_is_local(afd), 0);
	close(cfd);
	close(afd);

	CU_ASSERT_FATAL((cfd = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	CU_ASSERT_EQUAL(agent_peer_is_local(cfd), 0);
	close(cfd);
	CU_ASSERT_EQUAL(agent_peer_is_local(-1), 0);
}

/* --- stopping tasks: a real agent, real processes ---------------------- */

#define CT_WAIT_MS	5000		/* for anything that must happen */
#define CT_TID_A	0x40011
#define CT_TID_B	0x40012
#define CT_TID_C	0x40013
#define CT_TID_D	0x40014
#define CT_TID_E	0x40015
#define CT_TID_F	0x40016
#define CT_NTASKS	6
#define CT_TID_NONE	0x4ffff		/* no such task */
#define CT_BP_ID	77

/* What a forked task does once registered. */
enum ct_mode {
	CT_RUN,		/* one record per millisecond, counting */
	CT_BREAK,	/* on "go": as the preload at a breakpoint, then run */
	CT_BAD,		/* on "go": a frame other than TASK_STOPPED */
	CT_VFORK,	/* on "go": blocks where SIGSTOP cannot stop it */
	CT_WINDOW,	/* runs; at each "go" as CT_BREAK, but sleeps
			   hold_ms between TASK_STOPPED and its SIGSTOP */
	CT_QUIET,	/* never reads TASK_READY; on "go": exits */
};

/* Shared with the forked tasks (MAP_SHARED | MAP_ANONYMOUS). */
struct ct_shared {
	volatile uint64_t	count[CT_NTASKS];	/* records written */
	volatile int		go[CT_NTASKS];
	volatile int		hold_ms[CT_NTASKS];	/* CT_WINDOW */
	volatile int		stopping[CT_NTASKS];	/* its raise()s */
	volatile int		conts[CT_NTASKS];	/* SIGCONTs got */
	/* Its wait for TASK_READY: 1 it came, -1 it did not (0: not yet);
	 * then what it said, and what the control page held then. */
	volatile int		ready[CT_NTASKS];
	volatile uint32_t	ready_nbp[CT_NTASKS];
	volatile uint32_t	ready_ctl_nbp[CT_NTASKS];
	volatile uint32_t	ready_bp0[CT_NTASKS];
	volatile int		unread[CT_NTASKS];	/* CT_QUIET: bytes
							   left in its socket */
};

struct ct_task {
	pid_t		 pid;
	int32_t		 tid;
	struct ring	 ring;		/* our mapping of the task's ring */
};

static struct {
	struct event_base	*base;
	struct agent		 a;
	char			 dir[64];
	int			 coord;		/* our end: we are the coordinator */
	struct evbuffer		*in;		/* frames from the agent */
	struct ct_shared	*sh;
	struct ct_task		 task[CT_NTASKS];
	uint64_t		 lastseq[CT_NTASKS]; /* from TASK_PACKED */
	struct pack_state	 unpack[CT_NTASKS];
	unsigned		 nrec[CT_NTASKS];
	int			 ended[CT_NTASKS]; /* TASK_END seen */
	int			 breaks;	/* BREAK records seen */
	uint8_t			 payload[PROTO_MAX_PAYLOAD];
} ct;

static long
ct_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
ct_index(int32_t tid)
{
	return tid >= CT_TID_A && tid < CT_TID_A + CT_NTASKS ?
	    tid - CT_TID_A : -1;
}

/* Our own reading of /proc/PID/stat's state letter, or 0. */
static char
ct_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' ? p[2] : 0;
}

/* The task side: one record into the ring, numbered from 1. */
static void
ct_task_record(struct ring *rg, unsigned call, uint64_t seq, int32_t inst)
{
	uint8_t buf[RECORD_HDR_SIZE];
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = (uint8_t)call;
	r.phase = PMON_BEGIN;
	r.seq = seq;
	r.peer = -1;
	r.rc = call == PMON_CALL_BREAK ? PMON_CALL_send : 0;
	r.inst = inst;
	ring_write(rg, buf, record_encode(buf, &r, NULL));
}

/* The task side of registration: TASK_HELLO with the ring's memfd. */
static int
ct_task_hello(int fd, struct ring *rg, int32_t tid)
{
	struct task_hello h;

	memset(&h, 0, sizeof(h));
	h.tid = tid;
	h.pid = (uint32_t)getpid();
	strcpy(h.program, "ctltask");
	return task_hello_send(fd, &h, rg->fd);
}

/*
 * The child of CT_VFORK: shares the task's memory, on a stack of its
 * own, and keeps the task in its vfork wait (uninterruptible to
 * SIGSTOP) until it dies, with the task at the latest.
 */
static int
ct_vfork_child(void *arg)
{
	(void)arg;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

static int ct_self = -1;		/* in a forked task: its index */

static void
ct_on_cont(int sig)
{
	(void)sig;
	ct.sh->conts[ct_self]++;
}

/*
 * CT_WINDOW: records as CT_RUN, and at each "go" what the preload does
 * at a breakpoint, with hold_ms between its TASK_STOPPED and its
 * raise(SIGSTOP): the window a continue must not fall into.
 */
static void __attribute__((noreturn))
ct_task_window(int i, int fd, struct ring *rg, uint64_t seq)
{
	uint8_t frame[TASK_STOPPED_FRAME];
	struct sigaction sa;
	int rounds = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ct_on_cont;
	sa.sa_flags = SA_RESTART;
	ct_self = i;
	sigaction(SIGCONT, &sa, NULL);
	for (;;) {
		if (ct.sh->go[i] > rounds) {
			rounds++;
			ct_task_record(rg, PMON_CALL_BREAK, ++seq, CT_BP_ID);
			ct.sh->count[i] = seq;
			task_stopped_encode(frame, CT_BP_ID, seq);
			(void)write(fd, frame, sizeof(frame));
			usleep((useconds_t)ct.sh->hold_ms[i] * 1000);
			ct.sh->stopping[i] = rounds;
			raise(SIGSTOP);
		}
		ct_task_record(rg, PMON_CALL_send, ++seq, -1);
		ct.sh->count[i] = seq;
		usleep(1000);
	}
}

/*
 * As the preload after its hello: waits for TASK_READY, and notes what
 * it said and what the control page held when it came.
 */
static void
ct_task_ready(int i, int fd, struct ring *rg)
{
	uint32_t nbp = 0;
	int rc;

	rc = task_ready_wait(fd, TASK_READY_WAIT_MS, &nbp);
	ct.sh->ready_ctl_nbp[i] = atomic_load(&rg->hdr->ctl.nbp);
	ct.sh->ready_bp0[i] = rg->hdr->ctl.bp[0].id;
	ct.sh->ready_nbp[i] = nbp;
	ct.sh->ready[i] = rc == 0 ? 1 : -1;
}

/* A forked task: registers, then does what mode says; never returns. */
static void __attribute__((noreturn))
ct_task_main(int i, enum ct_mode mode)
{
	struct ring *rg = &ct.task[i].ring;
	struct sockaddr_un sun;
	uint8_t frame[TASK_STOPPED_FRAME];
	uint64_t seq = 0;
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", ct.a.sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sun,
	    sizeof(sun)) == -1 || ct_task_hello(fd, rg, ct.task[i].tid) == -1)
		_exit(1);
	if (mode != CT_QUIET)
		ct_task_ready(i, fd, rg);
	while (seq < 3)
		ct_task_record(rg, PMON_CALL_pkint, ++seq, -1);
	ct.sh->count[i] = seq;
	if (mode == CT_WINDOW)
		ct_task_window(i, fd, rg, seq);
	if (mode != CT_RUN) {
		while (!ct.sh->go[i])
			usleep(1000);
		if (mode == CT_QUIET) {
			int n = -1;

			(void)ioctl(fd, FIONREAD, &n);
			ct.sh->unread[i] = n;
			_exit(0);
		}
		if (mode == CT_BAD) {
			frame_hdr_encode(frame, MSG_FLUSH, 4);
			(void)write(fd, frame, FRAME_HDR_SIZE + 4);
			for (;;)
				pause();
		}
		if (mode == CT_VFORK) {
			static char stack[64 * 1024];

			clone(ct_vfork_child, stack + sizeof(stack),
			    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
			_exit(1);
		}
		/* What the preload does at a breakpoint. */
		ct_task_record(rg, PMON_CALL_BREAK, ++seq, CT_BP_ID);
		ct.sh->count[i] = seq;
		task_stopped_encode(frame, CT_BP_ID, seq);
		(void)write(fd, frame, sizeof(frame));
		raise(SIGSTOP);
	}
	for (;;) {
		ct_task_record(rg, PMON_CALL_send, ++seq, -1);
		ct.sh->count[i] = seq;
		usleep(1000);
	}
}

/* Takes in what the agent sent and runs its loop once, without waiting. */
static void
ct_turn(void)
{
	event_base_loop(ct.base, EVLOOP_NONBLOCK);
	while (evbuffer_read(ct.in, ct.coord, 65536) > 0)
		;
}

/* One record the agent shipped: in sequence, and noted. */
static int
ct_record(int32_t tid, const struct record *r, void *arg, const char **why)
{
	int i = ct_index(tid);

	(void)arg;
	(void)why;
	CU_ASSERT_EQUAL(r->seq, ct.lastseq[i] + 1);
	ct.lastseq[i] = r->seq;
	ct.nrec[i]++;
	if (r->call == PMON_CALL_BREAK && r->inst == CT_BP_ID)
		ct.breaks++;
	return 0;
}

/* What a coordinator says once it has released records (or an end). */
static void
ct_ack(int32_t tid, uint64_t seq, int ended)
{
	uint8_t f[FRAME_HDR_SIZE + 2 + ACK_ENTRY_LEN];

	frame_hdr_encode(f, MSG_ACK, 2 + ACK_ENTRY_LEN);
	wire_put16(f + FRAME_HDR_SIZE, 1);
	wire_put32(f + FRAME_HDR_SIZE + 2, (uint32_t)tid);
	wire_put64(f + FRAME_HDR_SIZE + 6, seq);
	f[FRAME_HDR_SIZE + 14] = (uint8_t)ended;
	CU_ASSERT_EQUAL(write(ct.coord, f, sizeof(f)), (ssize_t)sizeof(f));
}

/* Bookkeeping of the frames we do not wait for by type. */
static void
ct_note(uint8_t type, const uint8_t *p, size_t len)
{
	const char *why;
	int i;

	if (type == MSG_TASK_END && (i = ct_index((int32_t)wire_get32(p))) !=
	    -1) {
		ct.ended[i] = 1;
		ct_ack((int32_t)wire_get32(p), ct.lastseq[i], 1);
	}
	if (type != MSG_TASK_PACKED ||
	    (i = ct_index((int32_t)wire_get32(p))) == -1)
		return;
	CU_ASSERT_EQUAL(p[4], PACK_TIME_EXACT);
	CU_ASSERT_FATAL(task_packed_decode(p, len, &ct.unpack[i],
	    ct_record, NULL, &why) == 0);
	ct_ack((int32_t)wire_get32(p), ct.lastseq[i], 0);
}

/*
 * The next frame from the agent, within ms: its type, its payload in
 * ct.payload; -1 when none came.  Every frame is noted on the way.
 */
static int
ct_next(int ms, size_t *len)
{
	uint8_t hdr[FRAME_HDR_SIZE];
	struct frame_hdr h;
	const char *why;
	long end = ct_now_ms() + ms;

	for (;;) {
		if (evbuffer_copyout(ct.in, hdr, sizeof(hdr)) ==
		    sizeof(hdr)) {
			CU_ASSERT_FATAL(frame_hdr_decode(hdr, &h, &why) == 0);
			if (evbuffer_get_length(ct.in) >= sizeof(hdr) + h.len) {
				evbuffer_drain(ct.in, sizeof(hdr));
				evbuffer_remove(ct.in, ct.payload, h.len);
				*len = h.len;
				ct_note(h.type, ct.payload, h.len);
				return h.type;
			}
		}
		if (ct_now_ms() > end)
			return -1;
		ct_turn();
		if (evbuffer_get_length(ct.in) < FRAME_HDR_SIZE)
			usleep(200);
	}
}

/* Skips frames until one of type; returns its payload length, or -1. */
static ssize_t
ct_wait(uint8_t type)
{
	long end = ct_now_ms() + CT_WAIT_MS;
	size_t len;
	int t;

	while ((t = ct_next((int)(end - ct_now_ms()), &len)) != -1)
		if (t == type)
			return (ssize_t)len;
	return -1;
}

/* Runs the agent for ms, noting what it sends. */
static void
ct_run(int ms)
{
	long end = ct_now_ms() + ms;
	size_t len;

	while (ct_now_ms() < end)
		(void)ct_next((int)(end - ct_now_ms()), &len);
}

static void
ct_send(struct evbuffer *eb)
{
	size_t n = evbuffer_get_length(eb);

	CU_ASSERT_FATAL(evbuffer_write(eb, ct.coord) == (int)n);
}

static void
ct_control(uint32_t id, uint8_t op, const int32_t *tids, size_t n)
{
	struct evbuffer *eb = evbuffer_new();

	coord_frame_control(eb, id, op, tids, n);
	ct_send(eb);
	evbuffer_free(eb);
}

/*
 * Waits for CONTROL_DONE id (skipping others) and decodes it as the
 * coordinator does.  Returns the tasks it answers for in st, or -1.
 */
static ssize_t
ct_done(uint32_t id, struct control_status *st, size_t max)
{
	const char *why;
	uint32_t got;
	ssize_t len;
	size_t n;

	while ((len = ct_wait(MSG_CONTROL_DONE)) != -1) {
		CU_ASSERT_FATAL(control_done_decode(ct.payload,
		    (size_t)len, &got, st, max, &n, &why) == 0);
		if (got == id)
			return (ssize_t)n;
	}
	return -1;
}

/* One task, its ring made here so that we see its shared memory. */
static void
ct_spawn(int i, int32_t tid, enum ct_mode mode)
{
	struct ct_task *t = &ct.task[i];
	ssize_t len;

	t->tid = tid;
	t->ring.fd = -1;
	CU_ASSERT_FATAL(ring_create(&t->ring, 64 * 1024) == 0);
	t->pid = fork();
	CU_ASSERT_FATAL(t->pid != -1);
	if (t->pid == 0)
		ct_task_main(i, mode);
	do {
		len = ct_wait(MSG_TASK_NEW);
		CU_ASSERT_FATAL(len != -1);
	} while ((int32_t)wire_get32(ct.payload) != tid);
}

/* Task i's wait for TASK_READY, once it is over: 1 it came, -1 not. */
static int
ct_ready(int i)
{
	long end = ct_now_ms() + CT_WAIT_MS;

	while (ct.sh->ready[i] == 0 && ct_now_ms() < end)
		ct_run(1);
	return ct.sh->ready[i];
}

static int
ct_init(void)
{
	int sv[2];

	snprintf(ct.dir, sizeof(ct.dir), "/tmp/pmon-unit-ctl.XXXXXX");
	if (mkdtemp(ct.dir) == NULL)
		return -1;
	setenv("PVM_TMP", ct.dir, 1);
	ct.sh = mmap(NULL, sizeof(*ct.sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ct.sh == MAP_FAILED ||
	    (ct.base = event_base_new()) == NULL ||
	    agent_init(&ct.a, ct.base) == -1 || agent_listen(&ct.a) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	unsetenv("PVM_TMP");
	if (agent_coord_attach(&ct.a, sv[0]) == -1)
		return -1;
	ct.coord = sv[1];
	fcntl(ct.coord, F_SETFL, O_NONBLOCK);
	ct.in = evbuffer_new();
	return ct.in == NULL ? -1 : 0;
}

static int
ct_cleanup(void)
{
	int i;

	for (i = 0; i < CT_NTASKS; i++)
		if (ct.task[i].pid > 0) {
			kill(ct.task[i].pid, SIGKILL);
			waitpid(ct.task[i].pid, NULL, 0);
			ring_close(&ct.task[i].ring);
		}
	agent_free(&ct.a);		/* closes the agent's end */
	close(ct.coord);
	evbuffer_free(ct.in);
	event_base_free(ct.base);
	munmap(ct.sh, sizeof(*ct.sh));
	rmdir(ct.dir);
	return 0;
}

static void
ct_breakpoints(const struct breakpoint *bps, size_t n)
{
	struct evbuffer *eb = evbuffer_new();

	coord_frame_breakpoints(eb, bps, n);
	ct_send(eb);
	evbuffer_free(eb);
}

/* Waits until task i's control page holds n entries. */
static int
ct_wait_nbp(int i, unsigned n)
{
	long end = ct_now_ms() + CT_WAIT_MS;

	while (atomic_load(&ct.task[i].ring.hdr->ctl.nbp) != n)
		if (ct_now_ms() > end)
			return -1;
		else
			ct_run(1);
	return 0;
}

/* A registered task's records come; BREAKPOINTS lands in its ring. */
static void
test_ctl_breakpoints(void)
{
	struct breakpoint bps[2];
	struct ring_hdr *h;
	uint32_t gen;

	ct_spawn(0, CT_TID_A, CT_RUN);
	/* Registered while there is no table: TASK_READY says so. */
	CU_ASSERT_EQUAL(ct_ready(0), 1);
	CU_ASSERT_EQUAL(ct.sh->ready_nbp[0], 0);
	CU_ASSERT_EQUAL(ct.sh->ready_ctl_nbp[0], 0);
	memset(bps, 0, sizeof(bps));
	bps[0].id = CT_BP_ID;
	bps[0].call = PMON_CALL_send;
	bps[0].match = BP_TAG | BP_GROUP;
	bps[0].tag = 5;
	strcpy(bps[0].group, "workers");
	bps[1].id = 78;
	bps[1].tid = CT_TID_A;
	bps[1].phase = PMON_END;
	bps[1].match = BP_SEQ;
	bps[1].seq = 1000000;
	ct_breakpoints(bps, 2);
	CU_ASSERT_FATAL(ct_wait_nbp(0, 2) == 0);
	h = ct.task[0].ring.hdr;
	CU_ASSERT_EQUAL(memcmp(h->ctl.bp, bps, sizeof(bps)), 0);
	gen = atomic_load(&h->ctl.gen);
	CU_ASSERT_EQUAL(gen % 2, 0);

	/* One bad entry (id 0) rejects the whole table: nothing changes. */
	bps[1].id = 0;
	ct_breakpoints(bps, 2);
	ct_run(50);
	CU_ASSERT_EQUAL(atomic_load(&h->ctl.gen), gen);
	CU_ASSERT_EQUAL(atomic_load(&h->ctl.nbp), 2);

	/* The records flow. */
	CU_ASSERT(ct.nrec[0] >= 3);
}

/* Stop: the task is stopped, its ring drained ahead of CONTROL_DONE. */
static void
test_ctl_stop(void)
{
	int32_t tids[2] = { CT_TID_A, CT_TID_NONE };
	struct control_status st[4];
	struct ring_hdr *h = ct.task[0].ring.hdr;
	uint64_t count, seq;

	ct_run(30);			/* it writes meanwhile */
	ct_control(1, CONTROL_STOP, tids, 2);
	CU_ASSERT_FATAL(ct_done(1, st, 4) == 2);
	CU_ASSERT_EQUAL(st[0].tid, CT_TID_A);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	CU_ASSERT_EQUAL(st[1].tid, CT_TID_NONE);
	CU_ASSERT_EQUAL(st[1].status, CONTROL_NO_TASK);
	CU_ASSERT_EQUAL(ct_state(ct.task[0].pid), 'T');
	/*
	 * Every record it wrote came before the answer (it counts after
	 * each write: it may have stopped in between), and none after.
	 */
	count = ct.sh->count[0];
	CU_ASSERT(ct.lastseq[0] == count || ct.lastseq[0] == count + 1);
	/* All read (the shared tail follows our ACK, a turn later). */
	CU_ASSERT_PTR_NOT_NULL_FATAL(agent_task_find(&ct.a, CT_TID_A));
	CU_ASSERT_EQUAL(atomic_load(&h->head),
	    agent_task_find(&ct.a, CT_TID_A)->ring.rd);
	seq = ct.lastseq[0];
	ct_run(50);
	CU_ASSERT_EQUAL(ct.sh->count[0], count);	/* it stays stopped */
	CU_ASSERT_EQUAL(ct.lastseq[0], seq);

	/* A stopped task counts as stopped at once; two in flight. */
	ct_control(2, CONTROL_STOP, tids, 1);
	ct_control(3, CONTROL_STOP, tids, 2);
	CU_ASSERT_FATAL(ct_done(2, st, 4) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	CU_ASSERT_FATAL(ct_done(3, st, 4) == 2);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	CU_ASSERT_EQUAL(st[1].status, CONTROL_NO_TASK);
}

/* Continue: it runs again. */
static void
test_ctl_continue(void)
{
	int32_t tid = CT_TID_A;
	struct control_status st[1];
	uint64_t count = ct.sh->count[0];
	long end;

	ct_control(4, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(4, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	end = ct_now_ms() + CT_WAIT_MS;
	while (ct.sh->count[0] < count + 5 && ct_now_ms() < end)
		ct_run(5);
	CU_ASSERT(ct.sh->count[0] >= count + 5);
	CU_ASSERT_NOT_EQUAL(ct_state(ct.task[0].pid), 'T');
	/* Its new records are shipped as before. */
	while (ct.lastseq[0] < count + 5 && ct_now_ms() < end)
		ct_run(5);
	CU_ASSERT(ct.lastseq[0] >= count + 5);
}

/*
 * A task that stops itself at a breakpoint: it got the table when it
 * registered (its control page held it when TASK_READY came, and
 * TASK_READY counts its entries), and its TASK_STOPPED makes the agent
 * drain its ring at once (the drain timer is off meanwhile).
 */
static void
test_ctl_task_stopped(void)
{
	int32_t tid = CT_TID_B;
	struct control_status st[1];
	long end;

	ct_spawn(1, CT_TID_B, CT_BREAK);
	CU_ASSERT_EQUAL(atomic_load(&ct.task[1].ring.hdr->ctl.nbp), 2);
	CU_ASSERT_EQUAL(ct.task[1].ring.hdr->ctl.bp[0].id, CT_BP_ID);
	CU_ASSERT_EQUAL(ct_ready(1), 1);
	CU_ASSERT_EQUAL(ct.sh->ready_nbp[1], 2);
	CU_ASSERT_EQUAL(ct.sh->ready_ctl_nbp[1], 2);
	CU_ASSERT_EQUAL(ct.sh->ready_bp0[1], CT_BP_ID);
	end = ct_now_ms() + CT_WAIT_MS;
	while (ct.lastseq[1] < 3 && ct_now_ms() < end)
		ct_run(1);		/* its first records, by the timer */
	CU_ASSERT_EQUAL(ct.lastseq[1], 3);
	event_del(ct.a.ev_timer);
	ct.sh->go[1] = 1;
	end = ct_now_ms() + CT_WAIT_MS;
	while (ct.breaks == 0 && ct_now_ms() < end)
		ct_run(1);
	CU_ASSERT_EQUAL(ct.breaks, 1);
	CU_ASSERT_EQUAL(ct.lastseq[1], 4);
	while (ct_state(ct.task[1].pid) != 'T' && ct_now_ms() < end)
		usleep(1000);
	CU_ASSERT_EQUAL(ct_state(ct.task[1].pid), 'T');

	ct_control(5, CONTROL_STOP, &tid, 1);
	CU_ASSERT_FATAL(ct_done(5, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	ct_control(6, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(6, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	while (ct.sh->count[1] < 6 && ct_now_ms() < end)
		ct_run(1);
	CU_ASSERT(ct.sh->count[1] >= 6);
	event_add(ct.a.ev_timer, &(struct timeval){ 0,
	    AGENT_DRAIN_MS * 1000 });
}

/*
 * Sets task i (CT_WINDOW) on its way to a breakpoint, hold_ms before it
 * stops itself, and returns once its BREAK record came: the coordinator
 * may act on it now, before the task stopped.  Returns the BREAK's seq.
 */
static uint64_t
ct_window_break(int i, int hold_ms)
{
	int breaks = ct.breaks;
	long end = ct_now_ms() + CT_WAIT_MS;

	ct.sh->hold_ms[i] = hold_ms;
	ct.sh->go[i]++;
	while (ct.breaks == breaks && ct_now_ms() < end)
		ct_run(1);
	CU_ASSERT_EQUAL_FATAL(ct.breaks, breaks + 1);
	return ct.lastseq[i];
}

/* Task i runs past seq, and is not stopped. */
static void
ct_check_runs(int i, uint64_t seq)
{
	long end = ct_now_ms() + CT_WAIT_MS;

	while (ct.sh->count[i] < seq + 5 && ct_now_ms() < end)
		ct_run(5);
	CU_ASSERT(ct.sh->count[i] >= seq + 5);
	CU_ASSERT_NOT_EQUAL(ct_state(ct.task[i].pid), 'T');
}

/*
 * A continue that comes after the BREAK record but before the task's
 * own raise(SIGSTOP): a SIGCONT now would be lost and the task would
 * stay stopped.  The agent holds it back until the task shows stopped,
 * then continues it; a second continue is answered at once.
 */
static void
test_ctl_continue_window(void)
{
	int32_t tid = CT_TID_E;
	struct control_status st[1];
	uint64_t seq;
	long start;
	int conts;

	ct_spawn(4, CT_TID_E, CT_WINDOW);
	seq = ct_window_break(4, 50);
	CU_ASSERT_EQUAL(ct.sh->stopping[4], 0);	/* in the window */
	conts = ct.sh->conts[4];
	ct_control(60, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(60, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].tid, CT_TID_E);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	/* The answer waited for its stop: one SIGCONT, after it. */
	CU_ASSERT_EQUAL(ct.sh->stopping[4], 1);
	ct_check_runs(4, seq);
	CU_ASSERT_EQUAL(ct.sh->conts[4], conts + 1);

	/* Continued already: a second continue does not wait. */
	start = ct_now_ms();
	ct_control(61, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(61, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	CU_ASSERT(ct_now_ms() - start < AGENT_STOP_TIMEOUT_MS / 2);
	ct_check_runs(4, seq);
}

/* A continue of a task with no BREAK pending is answered at once. */
static void
test_ctl_continue_no_break(void)
{
	int32_t tids[2] = { CT_TID_A, CT_TID_E };
	struct control_status st[2];
	uint64_t seq = ct.sh->count[0];
	long start;

	CU_ASSERT_NOT_EQUAL(ct_state(ct.task[0].pid), 'T');
	start = ct_now_ms();
	ct_control(62, CONTROL_CONTINUE, tids, 2);
	CU_ASSERT_FATAL(ct_done(62, st, 2) == 2);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	CU_ASSERT_EQUAL(st[1].status, CONTROL_OK);
	CU_ASSERT(ct_now_ms() - start < AGENT_STOP_TIMEOUT_MS / 2);
	ct_check_runs(0, seq);
}

/*
 * A stop in the same window sends no SIGSTOP: one would stop the task
 * short of its own, and that one would stop it again once continued.
 * The stop is done when the task stopped itself; a continue then lets
 * it run.
 */
static void
test_ctl_stop_window(void)
{
	int32_t tid = CT_TID_E;
	struct control_status st[1];
	uint64_t seq;

	seq = ct_window_break(4, 50);
	CU_ASSERT_EQUAL(ct.sh->stopping[4], 1);	/* in the window */
	ct_control(63, CONTROL_STOP, &tid, 1);
	CU_ASSERT_FATAL(ct_done(63, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	CU_ASSERT_EQUAL(ct.sh->stopping[4], 2);	/* by its own SIGSTOP */
	CU_ASSERT_EQUAL(ct_state(ct.task[4].pid), 'T');
	ct_control(64, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(64, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	ct_check_runs(4, seq);
}

/*
 * Waits, without running the agent, until task i has stopped itself:
 * the agent's timers are due then, but have not seen it stopped yet.
 */
static void
ct_wait_own_stop(int i, int round)
{
	long end = ct_now_ms() + CT_WAIT_MS;

	while ((ct.sh->stopping[i] != round ||
	    ct_state(ct.task[i].pid) != 'T') && ct_now_ms() < end)
		usleep(1000);
	CU_ASSERT_EQUAL_FATAL(ct_state(ct.task[i].pid), 'T');
}

/*
 * A stop and a continue for a task in the window take effect in the
 * order they came, even when the second comes after the task stopped
 * itself but before the agent saw it (its request is read before its
 * timer runs): stop then continue leaves the task running, continue
 * then stop leaves it stopped.
 */
static void
test_ctl_window_order(void)
{
	int32_t tid = CT_TID_E;
	struct control_status st[1];
	uint64_t seq;
	long end;

	seq = ct_window_break(4, 50);
	CU_ASSERT_EQUAL(ct.sh->stopping[4], 2);	/* in the window */
	ct_control(70, CONTROL_STOP, &tid, 1);
	ct_run(5);				/* the stop is held */
	ct_wait_own_stop(4, 3);
	ct_control(71, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_wait(MSG_CONTROL_DONE) != -1);
	CU_ASSERT_EQUAL(wire_get32(ct.payload), 70);
	CU_ASSERT_FATAL(ct_done(71, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	ct_check_runs(4, seq);

	seq = ct_window_break(4, 50);
	CU_ASSERT_EQUAL(ct.sh->stopping[4], 3);	/* in the window */
	ct_control(72, CONTROL_CONTINUE, &tid, 1);
	ct_run(5);				/* the continue is held */
	ct_wait_own_stop(4, 4);
	ct_control(73, CONTROL_STOP, &tid, 1);
	CU_ASSERT_FATAL(ct_wait(MSG_CONTROL_DONE) != -1);
	CU_ASSERT_EQUAL(wire_get32(ct.payload), 72);
	CU_ASSERT_FATAL(ct_done(73, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	CU_ASSERT(ct.sh->count[4] > seq);	/* it ran in between */
	end = ct_now_ms() + 50;			/* and stays stopped */
	while (ct_now_ms() < end)
		ct_run(5);
	CU_ASSERT_EQUAL(ct_state(ct.task[4].pid), 'T');
	ct_control(74, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(74, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	ct_check_runs(4, ct.sh->count[4]);
}

/*
 * A task that does not stop within AGENT_STOP_TIMEOUT_MS of its BREAK:
 * the continue is CONTROL_FAILED and no SIGCONT is sent.  Once it has
 * stopped itself, a continue works.
 */
static void
test_ctl_continue_window_timeout(void)
{
	int32_t tid = CT_TID_E;
	struct control_status st[1];
	uint64_t seq;
	long start, end;
	int conts;

	seq = ct_window_break(4, AGENT_STOP_TIMEOUT_MS + 500);
	conts = ct.sh->conts[4];
	start = ct_now_ms();
	ct_control(65, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(65, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_FAILED);
	CU_ASSERT(ct_now_ms() - start >= AGENT_STOP_TIMEOUT_MS);
	CU_ASSERT_EQUAL(ct.sh->stopping[4], 4);	/* still in the window */
	end = ct_now_ms() + CT_WAIT_MS;
	while (ct_state(ct.task[4].pid) != 'T' && ct_now_ms() < end)
		ct_run(5);
	CU_ASSERT_EQUAL_FATAL(ct_state(ct.task[4].pid), 'T');
	CU_ASSERT_EQUAL(ct.sh->conts[4], conts);	/* never signalled */
	ct_control(66, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_done(66, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_OK);
	ct_check_runs(4, seq);
}

/*
 * Bad input: a malformed CONTROL is dropped (no answer, the agent goes
 * on); a task that sends anything but TASK_STOPPED is ended, its ring
 * drained first.
 */
static void
test_ctl_bad(void)
{
	uint8_t frame[FRAME_HDR_SIZE + 7];
	int32_t tid = CT_TID_NONE;
	struct control_status st[1];
	struct evbuffer *eb = evbuffer_new();
	long end;

	frame_hdr_encode(frame, MSG_CONTROL, 7);
	wire_put32(frame + FRAME_HDR_SIZE, 30);
	frame[FRAME_HDR_SIZE + 4] = 9;			/* unknown op */
	wire_put16(frame + FRAME_HDR_SIZE + 5, 0);
	evbuffer_add(eb, frame, sizeof(frame));
	ct_send(eb);
	evbuffer_free(eb);
	ct_control(31, CONTROL_CONTINUE, &tid, 1);
	CU_ASSERT_FATAL(ct_wait(MSG_CONTROL_DONE) != -1);
	CU_ASSERT_EQUAL(wire_get32(ct.payload), 31);

	ct_spawn(2, CT_TID_C, CT_BAD);
	ct.sh->go[2] = 1;
	end = ct_now_ms() + CT_WAIT_MS;
	while (!ct.ended[2] && ct_now_ms() < end)
		ct_run(1);
	CU_ASSERT(ct.ended[2]);
	CU_ASSERT_EQUAL(ct.lastseq[2], 3);
	CU_ASSERT_PTR_NULL(agent_task_find(&ct.a, CT_TID_C));
	/* It is not the agent's any more. */
	tid = CT_TID_C;
	ct_control(32, CONTROL_STOP, &tid, 1);
	CU_ASSERT_FATAL(ct_done(32, st, 1) == 1);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_NO_TASK);
}

/*
 * A task that cannot stop (a vfork parent waits uninterruptibly for its
 * child): after AGENT_STOP_TIMEOUT_MS the answer is CONTROL_FAILED.
 */
static void
test_ctl_timeout(void)
{
	int32_t tids[2] = { CT_TID_D, CT_TID_NONE };
	struct control_status st[2];
	long end, start;

	ct_spawn(3, CT_TID_D, CT_VFORK);
	ct.sh->go[3] = 1;
	end = ct_now_ms() + CT_WAIT_MS;
	while (ct_state(ct.task[3].pid) != 'D' && ct_now_ms() < end)
		ct_run(1);
	CU_ASSERT_EQUAL_FATAL(ct_state(ct.task[3].pid), 'D');
	start = ct_now_ms();
	ct_control(50, CONTROL_STOP, tids, 2);
	/* Meanwhile another CONTROL is answered at once. */
	ct_control(51, CONTROL_CONTINUE, &tids[1], 1);
	CU_ASSERT_FATAL(ct_wait(MSG_CONTROL_DONE) != -1);
	CU_ASSERT_EQUAL(wire_get32(ct.payload), 51);
	CU_ASSERT_FATAL(ct_done(50, st, 2) == 2);
	CU_ASSERT(ct_now_ms() - start >= AGENT_STOP_TIMEOUT_MS);
	CU_ASSERT_EQUAL(st[0].tid, CT_TID_D);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_FAILED);
	CU_ASSERT_EQUAL(st[1].status, CONTROL_NO_TASK);
	CU_ASSERT_EQUAL(ct_state(ct.task[3].pid), 'D');
}

/*
 * A task that never reads its TASK_READY (it gave up waiting): the frame
 * stays in its socket, and it ends as any other, its records shipped.
 */
static void
test_ctl_unread_ready(void)
{
	struct ct_task *t = &ct.task[5];
	long end;
	int status;

	ct_spawn(5, CT_TID_F, CT_QUIET);
	ct_run(20);
	CU_ASSERT_PTR_NOT_NULL(agent_task_find(&ct.a, CT_TID_F));
	ct.sh->go[5] = 1;
	CU_ASSERT_FATAL(waitpid(t->pid, &status, 0) == t->pid);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	t->pid = 0;
	CU_ASSERT_EQUAL(ct.sh->ready[5], 0);
	CU_ASSERT_EQUAL(ct.sh->unread[5], TASK_READY_FRAME);
	end = ct_now_ms() + CT_WAIT_MS;
	while (!ct.ended[5] && ct_now_ms() < end)
		ct_run(1);
	CU_ASSERT(ct.ended[5]);
	CU_ASSERT_EQUAL(ct.lastseq[5], 3);
	CU_ASSERT_PTR_NULL(agent_task_find(&ct.a, CT_TID_F));
	ring_close(&t->ring);
}

/* Kill: the process dies of SIGKILL, the agent ends the task. */
static void
test_ctl_kill(void)
{
	int32_t tids[2] = { CT_TID_A, CT_TID_B };
	struct control_status st[2];
	int status, i;
	long end;

	ct_control(40, CONTROL_KILL, tids, 2);
	CU_ASSERT_FATAL(ct_done(40, st, 2) == 2);
	for (i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(st[i].status, CONTROL_OK);
		CU_ASSERT_EQUAL(waitpid(ct.task[i].pid, &status, 0),
		    ct.task[i].pid);
		CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		ct.task[i].pid = 0;
		ring_close(&ct.task[i].ring);
	}
	end = ct_now_ms() + CT_WAIT_MS;
	while (!(ct.ended[0] && ct.ended[1]) && ct_now_ms() < end)
		ct_run(1);
	CU_ASSERT(ct.ended[0] && ct.ended[1]);
	ct_control(41, CONTROL_STOP, tids, 2);
	CU_ASSERT_FATAL(ct_done(41, st, 2) == 2);
	CU_ASSERT_EQUAL(st[0].status, CONTROL_NO_TASK);
	CU_ASSERT_EQUAL(st[1].status, CONTROL_NO_TASK);
}

/* The agent's own view of /proc: this process runs, a child stops. */
static void
test_ctl_proc(void)
{
	pid_t pid;
	long end;
	int st;

	CU_ASSERT_EQUAL(agent_proc_stopped(getpid()), 0);
	pid = fork();
	CU_ASSERT_FATAL(pid != -1);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	kill(pid, SIGSTOP);
	end = ct_now_ms() + CT_WAIT_MS;
	while (agent_proc_stopped(pid) != 1 && ct_now_ms() < end)
		usleep(1000);
	CU_ASSERT_EQUAL(agent_proc_stopped(pid), 1);
	kill(pid, SIGKILL);
	/* A zombie never stops; a reaped process is gone. */
	while (ct_state(pid) != 'Z' && ct_now_ms() < end)
		usleep(1000);
	CU_ASSERT_EQUAL(agent_proc_stopped(pid), -1);
	waitpid(pid, &st, 0);
	CU_ASSERT_EQUAL(agent_proc_stopped(pid), -1);
}

/* The decoders of what the coordinator sends the agent. */
static void
test_ctl_decoders(void)
{
	struct evbuffer *eb = evbuffer_new();
	int32_t tids[3] = { 1, -2, 0x40005 };
	struct control_msg m;
	struct breakpoint bps[BREAKPOINTS_MAX + 1], out[BREAKPOINTS_MAX];
	uint8_t buf[FRAME_HDR_SIZE + 2 + (BREAKPOINTS_MAX + 1) * BP_WIRE_MAX];
	uint8_t *p = buf + FRAME_HDR_SIZE;
	const char *why;
	uint32_t bp_id;
	uint64_t seq;
	unsigned n, i;
	size_t len;

	coord_frame_control(eb, 9, CONTROL_KILL, tids, 3);
	len = evbuffer_get_length(eb);
	evbuffer_remove(eb, buf, len);
	len -= FRAME_HDR_SIZE;
	CU_ASSERT_EQUAL(control_decode(p, len, &m, &why), 0);
	CU_ASSERT_EQUAL(m.id, 9);
	CU_ASSERT_EQUAL(m.op, CONTROL_KILL);
	CU_ASSERT_EQUAL(m.n, 3);
	CU_ASSERT_EQUAL((int32_t)wire_get32(m.tids + 4), -2);
	for (i = 0; i < len; i++)
		CU_ASSERT_EQUAL(control_decode(p, i, &m, &why), -1);
	CU_ASSERT_EQUAL(control_decode(p, len + 1, &m, &why), -1);
	p[4] = 0;
	CU_ASSERT_EQUAL(control_decode(p, len, &m, &why), -1);
	p[4] = CONTROL_INFO + 1;
	CU_ASSERT_EQUAL(control_decode(p, len, &m, &why), -1);

	memset(bps, 0, sizeof(bps));
	for (i = 0; i < BREAKPOINTS_MAX + 1; i++) {
		bps[i].id = i + 1;
		snprintf(bps[i].group, sizeof(bps[i].group), "g%u", i);
	}
	coord_frame_breakpoints(eb, bps, BREAKPOINTS_MAX);
	len = evbuffer_get_length(eb);
	evbuffer_remove(eb, buf, len);
	len -= FRAME_HDR_SIZE;
	CU_ASSERT_EQUAL(breakpoints_decode(p, len, out, &n, &why), 0);
	CU_ASSERT_EQUAL(n, BREAKPOINTS_MAX);
	CU_ASSERT_EQUAL(memcmp(out, bps, sizeof(out)), 0);
	for (i = 0; i < len; i++)
		CU_ASSERT_EQUAL(breakpoints_decode(p, i, out, &n, &why),
		    -1);
	CU_ASSERT_EQUAL(breakpoints_decode(p, len + 1, out, &n, &why),
	    -1);
	wire_put16(p, BREAKPOINTS_MAX + 1);		/* more than a task holds */
	CU_ASSERT_EQUAL(breakpoints_decode(p, len, out, &n, &why), -1);
	/* The encoder never sends more than a task holds. */
	coord_frame_breakpoints(eb, bps, BREAKPOINTS_MAX + 1);
	evbuffer_remove(eb, buf, evbuffer_get_length(eb));
	CU_ASSERT_EQUAL(wire_get16(p), BREAKPOINTS_MAX);
	/* An empty table clears. */
	coord_frame_breakpoints(eb, bps, 0);
	len = evbuffer_get_length(eb) - FRAME_HDR_SIZE;
	evbuffer_remove(eb, buf, evbuffer_get_length(eb));
	CU_ASSERT_EQUAL(breakpoints_decode(p, len, out, &n, &why), 0);
	CU_ASSERT_EQUAL(n, 0);

	task_stopped_encode(buf, 5, 17);
	CU_ASSERT_EQUAL(task_stopped_decode(p, TASK_STOPPED_LEN, &bp_id,
	    &seq, &why), 0);
	CU_ASSERT_EQUAL(bp_id, 5);
	CU_ASSERT_EQUAL(seq, 17);
	CU_ASSERT_EQUAL(task_stopped_decode(p, TASK_STOPPED_LEN - 1,
	    &bp_id, &seq, &why), -1);
	wire_put32(p, 0);
	CU_ASSERT_EQUAL(task_stopped_decode(p, TASK_STOPPED_LEN, &bp_id,
	    &seq, &why), -1);
	evbuffer_free(eb);
}

/* CONTROL_DONE as the agent builds it and the coordinator reads it. */
/*
 * CONTROL_INFO's answer: /proc of this very process, through the
 * agent's TASK_PROC encoder and the coordinator's decoder.
 */
static void
test_ctl_task_proc(void)
{
	struct task_proc pr = { .tid = 0x40009 };
	struct task_proc cp;
	struct evbuffer *eb = evbuffer_new();
	uint8_t buf[FRAME_HDR_SIZE + TASK_PROC_LEN];
	struct frame_hdr fh;
	const char *why;
	uint32_t id;

	CU_ASSERT_EQUAL_FATAL(agent_proc_read(getpid(), &pr), 0);
	CU_ASSERT_EQUAL(pr.state, 'R');		/* it runs this test */
	CU_ASSERT(pr.threads >= 1);
	CU_ASSERT(pr.rss_kb > 0);
	CU_ASSERT(pr.vsize_kb >= pr.rss_kb);
	CU_ASSERT_EQUAL(agent_proc_read(-1, &pr), -1);
	agent_frame_task_proc(eb, 77, &pr);
	CU_ASSERT_EQUAL_FATAL(evbuffer_get_length(eb), sizeof(buf));
	evbuffer_copyout(eb, buf, sizeof(buf));
	CU_ASSERT_EQUAL(frame_hdr_decode(buf, &fh, &why), 0);
	CU_ASSERT_EQUAL(fh.type, MSG_TASK_PROC);
	CU_ASSERT_EQUAL(task_proc_decode(buf + FRAME_HDR_SIZE,
	    TASK_PROC_LEN, &id, &cp, &why), 0);
	CU_ASSERT_EQUAL(id, 77);
	CU_ASSERT_EQUAL(cp.tid, 0x40009);
	CU_ASSERT_EQUAL(cp.state, pr.state);
	CU_ASSERT_EQUAL(cp.threads, pr.threads);
	CU_ASSERT_EQUAL(cp.utime_ms, pr.utime_ms);
	CU_ASSERT_EQUAL(cp.rss_kb, pr.rss_kb);
	CU_ASSERT_EQUAL(cp.syscall, pr.syscall);
	/* A state that is no letter, a short frame. */
	buf[FRAME_HDR_SIZE + 8] = '?';
	CU_ASSERT_EQUAL(task_proc_decode(buf + FRAME_HDR_SIZE,
	    TASK_PROC_LEN, &id, &cp, &why), -1);
	CU_ASSERT_EQUAL(task_proc_decode(buf + FRAME_HDR_SIZE,
	    TASK_PROC_LEN - 1, &id, &cp, &why), -1);
	evbuffer_free(eb);
}

static void
test_ctl_done_frame(void)
{
	struct agent_control_task t[3] = {
		{ .tid = 0x40005, .status = CONTROL_OK },
		{ .tid = 0x40006, .status = CONTROL_NO_TASK },
		{ .tid = 0x40007, .status = CONTROL_FAILED },
	};
	struct control_status st[3];
	struct evbuffer *eb = evbuffer_new();
	uint8_t buf[64], *p = buf + FRAME_HDR_SIZE;
	struct frame_hdr fh;
	const char *why;
	uint32_t id;
	size_t n, len, i;
	char out[256];
	FILE *f;

	agent_frame_control_done(eb, 12, t, 3);
	len = evbuffer_get_length(eb);
	CU_ASSERT_EQUAL(len, FRAME_HDR_SIZE + 6 + 15);
	evbuffer_copyout(eb, buf, len);
	CU_ASSERT_EQUAL(frame_hdr_decode(buf, &fh, &why), 0);
	CU_ASSERT_EQUAL(fh.type, MSG_CONTROL_DONE);
	len -= FRAME_HDR_SIZE;
	CU_ASSERT_EQUAL(control_done_decode(p, len, &id, st, 3, &n,
	    &why), 0);
	CU_ASSERT_EQUAL(id, 12);
	CU_ASSERT_EQUAL(n, 3);
	for (i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(st[i].tid, t[i].tid);
		CU_ASSERT_EQUAL(st[i].status, t[i].status);
	}
	CU_ASSERT_EQUAL(control_done_decode(p, len, &id, st, 2, &n,
	    &why), -1);				/* more than asked */
	for (i = 0; i < len; i++)
		CU_ASSERT_EQUAL(control_done_decode(p, i, &id, st, 3, &n,
		    &why), -1);
	CU_ASSERT_EQUAL(control_done_decode(p, len + 1, &id, st, 3, &n,
	    &why), -1);
	p[len - 1] = CONTROL_FAILED + 1;
	CU_ASSERT_EQUAL(control_done_decode(p, len, &id, st, 3, &n,
	    &why), -1);

	memset(out, 0, sizeof(out));
	f = fmemopen(out, sizeof(out) - 1, "w");
	CU_ASSERT_EQUAL(agent_dump_frames(eb, f), 0);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(out, "# control_done 12 t40005=ok "
	    "t40006=no_task t40007=failed\n");
	evbuffer_free(eb);
}

/* Which processes a restarted agent takes as its own: their PVM_TMP. */
static void
test_environ_match(void)
{
	static const char env[] = "A=1\0PVM_TMP=/tmp/x\0B=2";
	static const char empty[] = "PVM_TMP=\0";
	static const char twice[] = "PVM_TMP=/a\0PVM_TMP=/b\0";
	static const char cut[] = "A=1\0PVM_TMP=/tmp/x";

	CU_ASSERT(agent_adopt_environ_match(env, sizeof(env), "/tmp/x"));
	CU_ASSERT(!agent_adopt_environ_match(env, sizeof(env), "/tmp/xy"));
	CU_ASSERT(!agent_adopt_environ_match(env, sizeof(env), "/tmp/"));
	CU_ASSERT(!agent_adopt_environ_match(env, sizeof(env), "/tmp"));
	/* Unset or empty is /tmp, on either side. */
	CU_ASSERT(agent_adopt_environ_match("A=1", 4, NULL));
	CU_ASSERT(agent_adopt_environ_match("A=1", 4, "/tmp"));
	CU_ASSERT(agent_adopt_environ_match(empty, sizeof(empty) - 1, ""));
	CU_ASSERT(!agent_adopt_environ_match("A=1", 4, "/tmp/x"));
	/* The last one counts, as getenv would find after a setenv. */
	CU_ASSERT(agent_adopt_environ_match(twice, sizeof(twice) - 1, "/b"));
	/* A variable cut off without its NUL is not read. */
	CU_ASSERT(!agent_adopt_environ_match(cut, sizeof(cut) - 1, "/tmp/x"));
	CU_ASSERT(agent_adopt_environ_match("", 0, "/tmp"));
}

/*
 * A restarted agent adopts the ring of a live task of its machine: a
 * process holding a registered ring (tid set) and started with our
 * PVM_TMP (sleep, exec'd with the ring's fd left open) is found
 * through /proc, announced with TASK_NEW, its ring read on from its
 * tail, and ended with TASK_END once it is killed.
 */
static void
adopt_child(int fd, const char *dir)
{
	char env[128], *argv[] = { (char *)"sleep", (char *)"30", NULL };
	char *envp[] = { env, NULL };

	snprintf(env, sizeof(env), "PVM_TMP=%s", dir);
	if (fcntl(fd, F_SETFD, 0) == -1)
		_exit(1);
	execve("/bin/sleep", argv, envp);
	_exit(1);
}

/* Counts the records of an adopted task, noting the first one's seq. */
struct adopt_count {
	unsigned	 n;
	uint64_t	 first;
};

static int
adopt_record(int32_t tid, const struct record *r, void *arg,
    const char **why)
{
	struct adopt_count *ac = arg;

	(void)tid;
	(void)why;
	if (ac->n++ == 0)
		ac->first = r->seq;
	return 0;
}

/* The frames on out: counts TASK_NEW, records, TASK_END of tid. */
static void
adopt_frames(struct evbuffer *out, int32_t tid, int *nnew,
    unsigned *nrecs, uint64_t *first_seq, int *nend)
{
	static struct pack_state unpack;
	uint8_t hdr[FRAME_HDR_SIZE], *p;
	struct adopt_count ac;
	struct frame_hdr h;
	const char *why;

	while (evbuffer_copyout(out, hdr, sizeof(hdr)) == sizeof(hdr)) {
		CU_ASSERT_EQUAL_FATAL(frame_hdr_decode(hdr, &h, &why), 0);
		if (evbuffer_get_length(out) < sizeof(hdr) + h.len)
			break;
		evbuffer_drain(out, sizeof(hdr));
		p = evbuffer_pullup(out, h.len);
		CU_ASSERT((int32_t)wire_get32(p) == tid);
		if (h.type == MSG_TASK_NEW) {
			(*nnew)++;
			pack_state_init(&unpack);
		} else if (h.type == MSG_TASK_END)
			(*nend)++;
		else if (h.type == MSG_TASK_PACKED) {
			ac.n = 0;
			CU_ASSERT_EQUAL(task_packed_decode(p, h.len,
			    &unpack, adopt_record, &ac, &why), 0);
			if (*nrecs == 0 && ac.n > 0)
				*first_seq = ac.first;
			*nrecs += ac.n;
		}
		evbuffer_drain(out, h.len);
	}
}

/* Writes one ACK entry for tid to fd, as the coordinator would. */
static void
adopt_ack(int fd, int32_t tid, uint64_t seq, int ended)
{
	uint8_t f[FRAME_HDR_SIZE + 2 + ACK_ENTRY_LEN];

	frame_hdr_encode(f, MSG_ACK, 2 + ACK_ENTRY_LEN);
	wire_put16(f + FRAME_HDR_SIZE, 1);
	wire_put32(f + FRAME_HDR_SIZE + 2, (uint32_t)tid);
	wire_put64(f + FRAME_HDR_SIZE + 6, seq);
	f[FRAME_HDR_SIZE + 14] = (uint8_t)ended;
	CU_ASSERT_EQUAL(write(fd, f, sizeof(f)), (ssize_t)sizeof(f));
}

static void
test_adopt(void)
{
	struct event_base *base;
	struct evbuffer *in;
	struct agent a;
	struct ring rg = { .fd = -1 };
	struct record r;
	uint8_t buf[RECORD_MAX_SIZE];
	char dir[64], *old;
	uint64_t first = 0;
	unsigned nrecs = 0;
	int i, sv[2], nnew = 0, nend = 0;
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/pmon-unit-adopt.%ld", (long)getpid());
	CU_ASSERT_EQUAL_FATAL(ring_create(&rg, RING_MIN_SIZE), 0);
	rg.hdr->tid = 0x40007;
	memset(&r, 0, sizeof(r));
	r.call = PMON_CALL_mytid;
	r.peer = r.tag = r.ctx = r.bytes = r.inst = -1;
	for (i = 1; i <= 3; i++) {
		r.seq = (uint64_t)i;
		CU_ASSERT_EQUAL(ring_write(&rg, buf, record_encode(buf, &r,
		    NULL)), 0);
	}
	/* The lost agent's coordinator had acknowledged the first. */
	atomic_store(&rg.hdr->tail, RECORD_HDR_SIZE);
	if ((pid = fork()) == 0)
		adopt_child(rg.fd, dir);
	CU_ASSERT_FATAL(pid > 0);
	ring_close(&rg);

	old = getenv("PVM_TMP") ? strdup(getenv("PVM_TMP")) : NULL;
	setenv("PVM_TMP", dir, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(base = event_base_new());
	CU_ASSERT_EQUAL_FATAL(agent_init(&a, base), 0);
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
	    0, sv), 0);
	CU_ASSERT_EQUAL_FATAL(agent_coord_attach(&a, sv[0]), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in = evbuffer_new());
	for (i = 0; i < 200 && a.ntasks == 0; i++) {
		agent_adopt_all(&a);	/* until sleep has exec'd */
		if (a.ntasks == 0)
			usleep(10000);
	}
	CU_ASSERT_EQUAL(a.ntasks, 1);
	CU_ASSERT_EQUAL(agent_adopt_all(&a), 0);	/* not twice */
	agent_drain_all(&a, SIZE_MAX);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	for (i = 0; i < 200 && nend == 0; i++) {
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		while (evbuffer_read(in, sv[1], 65536) > 0)
			;
		adopt_frames(in, 0x40007, &nnew, &nrecs, &first, &nend);
		usleep(1000);
	}
	CU_ASSERT_EQUAL(nnew, 1);
	CU_ASSERT_EQUAL(nrecs, 2);
	CU_ASSERT_EQUAL(first, 2);
	CU_ASSERT_EQUAL(nend, 1);
	/* Its ring is kept until the coordinator acks the end. */
	CU_ASSERT_EQUAL(a.ntasks, 1);
	adopt_ack(sv[1], 0x40007, 3, 0);
	for (i = 0; i < 20; i++)
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	CU_ASSERT_EQUAL(a.ntasks, 1);
	adopt_ack(sv[1], 0x40007, 3, 1);
	for (i = 0; i < 200 && a.ntasks > 0; i++) {
		event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		usleep(1000);
	}
	CU_ASSERT_EQUAL(a.ntasks, 0);
	agent_free(&a);
	close(sv[1]);
	evbuffer_free(in);
	event_base_free(base);
	if (old != NULL) {
		setenv("PVM_TMP", old, 1);
		free(old);
	} else
		unsetenv("PVM_TMP");
}

/* ACK and TASK_RESUME: what each decoder takes and refuses. */
static void
test_ack_resume_decode(void)
{
	uint8_t p[2 + 2 * ACK_ENTRY_LEN + 1], r[21];
	const char *why;
	unsigned n;
	uint64_t seq, shipped;
	int32_t tid;
	int ended;

	wire_put16(p, 2);
	wire_put32(p + 2, 0x40005);
	wire_put64(p + 6, 77);
	p[14] = 0;
	wire_put32(p + 15, 0x40006);
	wire_put64(p + 19, 5);
	p[27] = 1;
	CU_ASSERT_EQUAL(ack_decode(p, 28, &n, &why), 0);
	CU_ASSERT_EQUAL(n, 2);
	ack_entry(p, 1, &tid, &seq, &ended);
	CU_ASSERT(tid == 0x40006 && seq == 5 && ended == 1);
	CU_ASSERT_EQUAL(ack_decode(p, 27, &n, &why), -1);	/* short */
	CU_ASSERT_EQUAL(ack_decode(p, 29, &n, &why), -1);	/* trailing */
	CU_ASSERT_EQUAL(ack_decode(p, 1, &n, &why), -1);
	p[27] = 2;
	CU_ASSERT_EQUAL(ack_decode(p, 28, &n, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "ended"));
	wire_put16(p, 0);
	CU_ASSERT_EQUAL(ack_decode(p, 2, &n, &why), 0);
	CU_ASSERT_EQUAL(n, 0);

	wire_put32(r, 0x40005);
	wire_put64(r + 4, 655);
	wire_put64(r + 12, 700);
	CU_ASSERT_EQUAL(task_resume_decode(r, 20, &tid, &seq, &shipped,
	    &why), 0);
	CU_ASSERT(tid == 0x40005 && seq == 655 && shipped == 700);
	CU_ASSERT_EQUAL(task_resume_decode(r, 19, &tid, &seq, &shipped,
	    &why), -1);
	CU_ASSERT_EQUAL(task_resume_decode(r, 12, &tid, &seq, &shipped,
	    &why), 0);				/* an older agent's */
	CU_ASSERT(seq == 655 && shipped == 0);
	CU_ASSERT_EQUAL(task_resume_decode(r, 21, &tid, &seq, &shipped,
	    &why), -1);
	wire_put64(r + 4, 0);
	CU_ASSERT_EQUAL(task_resume_decode(r, 20, &tid, &seq, &shipped,
	    &why), -1);
	wire_put64(r + 4, 1);
	wire_put32(r, 0);
	CU_ASSERT_EQUAL(task_resume_decode(r, 20, &tid, &seq, &shipped,
	    &why), -1);
}

/*
 * pvmd's task list as the agent reads it each second: a task the
 * starter started and that has not enrolled (a placeholder pid) is
 * pmon's, and is never reported as not instrumented however many
 * readings it takes (1,024 tasks spawned over 8 hosts took 15 s); this
 * process, which is no pmon task (no libpmon-pvm.so), is reported at
 * its second reading, and only the change is news.
 */
static void
test_others_starting(void)
{
	struct pvmtaskinfo ti[2];
	struct agent *a = xcalloc(1, sizeof(*a));
	char storm[] = "storm", outsider[] = "outsider";
	int i, changed;

	TAILQ_INIT(&a->tasks);
	a->pvm_tid = 0x40000;
	memset(ti, 0, sizeof(ti));
	ti[0].ti_tid = 0x40001;
	ti[0].ti_ptid = 0x40003;
	ti[0].ti_pid = 10000005;
	ti[0].ti_a_out = storm;
	ti[1].ti_tid = 0x40002;
	ti[1].ti_pid = getpid();
	ti[1].ti_a_out = outsider;
	for (i = 0; i < 20; i++) {
		changed = agent_others_read(a, ti, 2);
		CU_ASSERT_EQUAL(changed, i == 1);
	}
	CU_ASSERT_EQUAL_FATAL(a->nothers, 2);
	CU_ASSERT_EQUAL(a->others[0].tid, 0x40001);
	CU_ASSERT_FALSE(a->others[0].reported);
	CU_ASSERT_EQUAL(a->others[0].seen, 19);
	CU_ASSERT_EQUAL(a->others[1].tid, 0x40002);
	CU_ASSERT_TRUE(a->others[1].reported);
	/* It enrols: its real pid, and still no hello: instrumented or not
	   is then its library's to say (this process has none). */
	ti[0].ti_pid = getpid();
	CU_ASSERT_EQUAL(agent_others_read(a, ti, 2), 0);
	CU_ASSERT_EQUAL(agent_others_read(a, ti, 2), 1);
	CU_ASSERT_TRUE(a->others[0].reported);
	agent_others_free(a);
	free(a);
}

static CU_TestInfo hello_tests[] = {
	{ "roundtrip", test_hello_roundtrip },
	{ "long program name", test_hello_long_program },
	{ "rejects", test_hello_rejects },
	{ "TASK_READY wait", test_ready_wait },
	{ "environ of a task to adopt", test_environ_match },
	{ "adopt a live task's ring", test_adopt },
	{ "ACK and TASK_RESUME decoders", test_ack_resume_decode },
	CU_TEST_INFO_NULL
};

static CU_TestInfo drain_tests[] = {
	{ "batches", test_drain_batches },
	{ "max per pass", test_drain_max },
	{ "corrupt ring", test_drain_corrupt },
	{ "frames valid", test_frames_valid },
	{ "dump", test_dump },
	{ "coordinator on this host", test_peer_is_local },
	{ "pvmd's tasks not yet enrolled", test_others_starting },
	CU_TEST_INFO_NULL
};

/* In this order: each test goes on from the tasks the last one left. */
static CU_TestInfo control_tests[] = {
	{ "decoders", test_ctl_decoders },
	{ "CONTROL_DONE frame", test_ctl_done_frame },
	{ "TASK_PROC frame", test_ctl_task_proc },
	{ "/proc state", test_ctl_proc },
	{ "BREAKPOINTS into a task's ring", test_ctl_breakpoints },
	{ "stop", test_ctl_stop },
	{ "continue", test_ctl_continue },
	{ "TASK_STOPPED drains at once", test_ctl_task_stopped },
	{ "continue before the task's own stop",
	    test_ctl_continue_window },
	{ "continue without a BREAK: at once", test_ctl_continue_no_break },
	{ "stop before the task's own stop", test_ctl_stop_window },
	{ "stop and continue in the window: in order",
	    test_ctl_window_order },
	{ "continue: the task never stops itself",
	    test_ctl_continue_window_timeout },
	{ "bad CONTROL, bad task frame", test_ctl_bad },
	{ "a task that cannot stop", test_ctl_timeout },
	{ "TASK_READY never read", test_ctl_unread_ready },
	{ "kill", test_ctl_kill },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo suites[] = {
	{ "agent task hello", NULL, NULL, NULL, NULL, hello_tests },
	{ "agent drain", NULL, NULL, NULL, NULL, drain_tests },
	{ "agent control", ct_init, ct_cleanup, NULL, NULL, control_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(suites)
