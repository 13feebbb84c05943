/*
 * flood: plays an attacker, or an unlucky neighbour, against a pmon
 * daemon, to test that the daemon's limits hold and that it goes on
 * serving its real peers.
 *
 *	flood [-a] [-n CONNECTIONS] [-t SECONDS] [-r REQUESTS] [-s SECRET]
 *	    ADDRESS KIND
 *
 * ADDRESS is a unix socket path, or HOST:PORT for TCP.  KIND:
 *	idle	  CONNECTIONS connections (default 100) that send nothing
 *	slow	  connections that send an AGENT_HELLO one byte a second,
 *		  never the whole of it
 *	big	  connections whose first frame declares a TASK_RECORDS of
 *		  1 MiB (the most the protocol allows), then send all of it
 *		  but the last byte, as far as the daemon takes it
 *	pipeline  one tool (TOOL_HELLO with SECRET) that sends REQUESTS
 *		  (default 100000) "snapshot" requests without reading a
 *		  reply, as many as the daemon takes, for SECONDS; then it
 *		  reads every reply
 *
 * It connects for at most 5 s (or SECONDS, default 10, if less), trying
 * again when a connection fails or takes a second, prints "flood:
 * connected C" (kinds but pipeline), keeps the
 * connections until SECONDS have passed and prints one line:
 *	flood: kind K connected C closed_by_peer D [written W replies R]
 * C counts the connections made, D the times the daemon closed one;
 * with -a a connection the daemon closes is made again at once.  For
 * pipeline, W is the requests written and R the replies read after.
 * Exits 0, or 2 on bad usage or when no connection could be made.
 */
#include <sys/param.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "dial.h"
#include "proto.h"
#include "wire.h"
#include "xalloc.h"

#define BIG_FRAME	(1024 * 1024)

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Has the daemon closed fd?  Reads (and forgets) what it sent. */
static int
closed_by_peer(int fd)
{
	uint8_t buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	return n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR);
}

/* Sends what a connection of kind sends at its step (0: at once). */
static void
feed(int fd, const char *kind, unsigned tick)
{
	static uint8_t zeros[64 * 1024];
	uint8_t hdr[FRAME_HDR_SIZE];
	size_t sent = 0;
	ssize_t n;

	if (strcmp(kind, "slow") == 0) {
		/* A header declaring 64 bytes, then those, all but one. */
		frame_hdr_encode(hdr, MSG_AGENT_HELLO, 64);
		if (tick < sizeof(hdr))
			(void)write(fd, hdr + tick, 1);
		else if (tick < sizeof(hdr) + 63)
			(void)write(fd, zeros, 1);
		return;
	}
	if (strcmp(kind, "big") != 0 || tick > 0)
		return;
	frame_hdr_encode(hdr, MSG_TASK_RECORDS, BIG_FRAME);
	(void)write(fd, hdr, sizeof(hdr));
	while (sent < BIG_FRAME - 1 && (n = write(fd, zeros,
	    MIN(sizeof(zeros), BIG_FRAME - 1 - sent))) > 0)
		sent += (size_t)n;
}

/* -a, as an attacker would: a connection the daemon closed comes again. */
static int
redial(int *fd, const char *addr, const char *kind)
{
	if (*fd != -1 && !closed_by_peer(*fd))
		return 0;
	if (*fd != -1)
		close(*fd);
	if ((*fd = dial(addr, 1)) != -1) {
		nonblock(*fd);
		feed(*fd, kind, 0);
	}
	return 1;
}

/*
 * Every second each connection sends its next byte (step); with again,
 * one the daemon closes is made again as soon as poll says.
 */
static int
many(const char *addr, const char *kind, int count, int secs, int again)
{
	struct pollfd *pfd = xcalloc((size_t)count, sizeof(*pfd));
	unsigned *step = xcalloc((size_t)count, sizeof(*step));
	double end = now_s() + secs, busy = now_s() + (secs < 5 ? secs : 5);
	double next = now_s();
	int i, n = 0, closed = 0;

	/* A full backlog or a refusal: try again, for 5 s at most. */
	while (n < count && now_s() < busy) {
		if ((pfd[n].fd = dial(addr, 1)) == -1) {
			usleep(10000);
			continue;
		}
		nonblock(pfd[n].fd);
		pfd[n].events = POLLIN;
		feed(pfd[n].fd, kind, step[n]++);
		n++;
	}
	if (n == 0) {
		fprintf(stderr, "flood: cannot connect to %s\n", addr);
		return 2;
	}
	printf("flood: connected %d\n", n);
	fflush(stdout);
	while (now_s() < end) {
		if (poll(pfd, (nfds_t)n, 100) > 0)
			for (i = 0; again && i < n && now_s() < end; i++)
				if (pfd[i].revents != 0 &&
				    redial(&pfd[i].fd, addr, kind)) {
					closed++;
					step[i] = 1;
				}
		if (now_s() < next)
			continue;
		next += 1;
		for (i = 0; i < n; i++)
			feed(pfd[i].fd, kind, step[i]++);
	}
	for (i = 0; i < n; i++) {
		if (pfd[i].fd == -1)
			continue;
		closed += closed_by_peer(pfd[i].fd);
		close(pfd[i].fd);
	}
	printf("flood: kind %s connected %d closed_by_peer %d\n", kind, n,
	    closed);
	free(pfd);
	free(step);
	return 0;
}

static size_t
tool_hello(uint8_t *buf, const char *secret)
{
	uint8_t *p = buf + FRAME_HDR_SIZE;

	wire_put32(p, 0);
	p = wire_putstr(p + 4, "flood");
	p = wire_putstr(p, secret);
	frame_hdr_encode(buf, MSG_TOOL_HELLO, (uint32_t)(p - buf -
	    FRAME_HDR_SIZE));
	return (size_t)(p - buf);
}

static size_t
request(uint8_t *buf, uint32_t id)
{
	uint8_t *p = buf + FRAME_HDR_SIZE;

	wire_put32(p, id);
	wire_put32(p + 4, 0);
	p = wire_putstr(p + 8, "snapshot");
	frame_hdr_encode(buf, MSG_REQUEST, (uint32_t)(p - buf -
	    FRAME_HDR_SIZE));
	return (size_t)(p - buf);
}

/* Writes requests while the daemon takes them, until secs pass. */
static long
pipeline_write(int fd, long want, int secs)
{
	uint8_t buf[128];
	double end = now_s() + secs;
	size_t len, off = 0;
	long written = 0;
	ssize_t n;

	len = request(buf, 1);
	while (written < want && now_s() < end) {
		n = write(fd, buf + off, len - off);
		if (n == -1 && errno == EAGAIN) {
			usleep(10000);
			continue;
		}
		if (n <= 0)
			break;
		if ((off += (size_t)n) < len)
			continue;
		off = 0;
		len = request(buf, (uint32_t)++written + 1);
	}
	return written - (off > 0);
}

/* Counts the last frames of replies until want or the peer is quiet. */
static long
pipeline_read(int fd, long want)
{
	static uint8_t buf[1 << 20];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct frame_hdr h;
	const char *why;
	size_t have = 0, off;
	long replies = 0;
	ssize_t n;

	while (replies < want && poll(&pfd, 1, 10000) == 1) {
		if ((n = read(fd, buf + have, sizeof(buf) - have)) <= 0 &&
		    errno != EAGAIN)
			break;
		have += n > 0 ? (size_t)n : 0;
		for (off = 0; have - off >= FRAME_HDR_SIZE; ) {
			if (frame_hdr_decode(buf + off, &h, &why) == -1)
				return -1;
			if (have - off - FRAME_HDR_SIZE < h.len)
				break;
			if (h.type == MSG_REPLY && h.len >= REPLY_HDR_SIZE &&
			    buf[off + FRAME_HDR_SIZE + 5] == 0)
				replies++;
			off += FRAME_HDR_SIZE + h.len;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	return replies;
}

static int
pipeline(const char *addr, const char *secret, long want, int secs)
{
	uint8_t hello[1024];
	long written, replies;
	int fd;

	if ((fd = dial(addr, 5)) == -1) {
		fprintf(stderr, "flood: cannot connect to %s\n", addr);
		return 2;
	}
	if (write(fd, hello, tool_hello(hello, secret)) == -1)
		return 2;
	nonblock(fd);
	written = pipeline_write(fd, want, secs);
	replies = pipeline_read(fd, written);
	printf("flood: kind pipeline connected 1 closed_by_peer %d written "
	    "%ld replies %ld\n", replies < written, written, replies);
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *secret = "", *kind;
	long requests = 100000;
	int ch, count = 100, secs = 10, again = 0;

	signal(SIGPIPE, SIG_IGN);	/* the daemon closes on us */
	while ((ch = getopt(argc, argv, "an:r:s:t:")) != -1)
		switch (ch) {
		case 'a':
			again = 1;
			break;
		case 'n':
			count = atoi(optarg);
			break;
		case 'r':
			requests = atol(optarg);
			break;
		case 's':
			secret = optarg;
			break;
		case 't':
			secs = atoi(optarg);
			break;
		default:
			goto usage;
		}
	if (argc - optind != 2 || count < 1 || secs < 1 || requests < 1)
		goto usage;
	kind = argv[optind + 1];
	if (strcmp(kind, "pipeline") == 0)
		return pipeline(argv[optind], secret, requests, secs);
	if (strcmp(kind, "idle") == 0 || strcmp(kind, "slow") == 0 ||
	    strcmp(kind, "big") == 0)
		return many(argv[optind], kind, count, secs, again);
usage:
	fprintf(stderr, "usage: flood [-a] [-n connections] [-t seconds] "
	    "[-r requests] [-s secret] address idle|slow|big|pipeline\n");
	return 2;
}
