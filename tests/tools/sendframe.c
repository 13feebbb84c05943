/*
 * sendframe: plays a broken peer against a pmon daemon, to test that the
 * daemon drops it and keeps serving everyone else.
 *
 *	sendframe [-w SECONDS] [-s SECRET] ADDRESS KIND
 *
 * ADDRESS is a unix socket path, or HOST:PORT for TCP.  KIND is what to
 * send:
 *	garbage		bytes that are not a pmon frame at all
 *	truncated	a frame header announcing more payload than follows,
 *			then end of input
 *	version		a frame of an unsupported protocol version
 *	oversize	a header announcing a payload far above the limit
 *	badtype		a frame of an unknown message type
 *	badpayload	a TOOL_HELLO whose string runs past its payload
 *	toolhello	a well-formed TOOL_HELLO with SECRET (-s; default
 *			none, an empty string)
 *	agenthello	a well-formed AGENT_HELLO with SECRET
 *
 * It then reads until the daemon closes the connection (printing the
 * type of every frame it gets, and the text of an ERROR or BYE: "got
 * ERROR: wrong secret ...") and exits 0; it exits 1 if the daemon still
 * holds the connection after SECONDS (default 5).
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dial.h"
#include "proto.h"
#include "wire.h"

/* A hello: TOOL_HELLO (flags 0, name "sendframe") or AGENT_HELLO. */
static ssize_t
build_hello(uint8_t type, const char *secret, uint8_t *buf, size_t size)
{
	uint8_t *p = buf + FRAME_HDR_SIZE;

	if (strlen(secret) > size - 64)
		return -1;
	if (type == MSG_TOOL_HELLO) {
		wire_put32(p, 0);
		p = wire_putstr(p + 4, "sendframe");
	} else {
		wire_put32(p, 0x40000);
		wire_put32(p + 4, (uint32_t)getpid());
		p = wire_putstr(p + 8, "sendframe");
		p = wire_putstr(p, "LINUX64");
	}
	p = wire_putstr(p, secret);
	frame_hdr_encode(buf, type, (uint32_t)(p - buf - FRAME_HDR_SIZE));
	return p - buf;
}

/* Fills buf with the bytes of one kind; returns their number, or -1. */
static ssize_t
build(const char *kind, const char *secret, uint8_t *buf, size_t size,
    int *half_close)
{
	*half_close = 0;
	if (strcmp(kind, "toolhello") == 0)
		return build_hello(MSG_TOOL_HELLO, secret, buf, size);
	if (strcmp(kind, "agenthello") == 0)
		return build_hello(MSG_AGENT_HELLO, secret, buf, size);
	if (strcmp(kind, "garbage") == 0) {
		memcpy(buf, "GET / HTTP/1.0\r\n\r\n\0\xff\xfe", 21);
		return 21;
	}
	if (strcmp(kind, "truncated") == 0) {
		frame_hdr_encode(buf, MSG_FLUSH, 4);
		buf[8] = 0;
		buf[9] = 1;
		*half_close = 1;
		return 10;
	}
	if (strcmp(kind, "version") == 0) {
		frame_hdr_encode(buf, MSG_FLUSH, 4);
		buf[1] = PROTO_VERSION + 100;
		wire_put32(buf + 8, 1);
		return 12;
	}
	if (strcmp(kind, "oversize") == 0) {
		frame_hdr_encode(buf, MSG_TASK_RECORDS, 0xfffffff0u);
		memset(buf + 8, 0, 64);
		return 72;
	}
	if (strcmp(kind, "badtype") == 0) {
		frame_hdr_encode(buf, 0xee, 4);
		wire_put32(buf + 8, 1);
		return 12;
	}
	if (strcmp(kind, "badpayload") == 0) {
		/* u32 flags, then a string claiming 500 bytes; 2 follow. */
		frame_hdr_encode(buf, MSG_TOOL_HELLO, 8);
		wire_put32(buf + 8, 0);
		wire_put16(buf + 12, 500);
		buf[14] = 'x';
		buf[15] = 'y';
		return 16;
	}
	return -1;
}

/* Prints the complete frames at the start of buf; returns the bytes. */
static size_t
print_frames(const uint8_t *buf, size_t len)
{
	struct wire_reader r;
	struct frame_hdr h;
	const char *why;
	char text[1024];
	size_t off = 0;

	while (len - off >= FRAME_HDR_SIZE) {
		if (frame_hdr_decode(buf + off, &h, &why) == -1) {
			printf("got a bad frame: %s\n", why);
			return len;
		}
		if (len - off - FRAME_HDR_SIZE < h.len)
			break;
		printf("got %s", proto_msg_name(h.type));
		if (h.type == MSG_ERROR || h.type == MSG_BYE) {
			wire_reader_init(&r, buf + off + FRAME_HDR_SIZE, h.len);
			wire_readstr(&r, text, sizeof(text));
			printf(": %s", r.err ? "(unreadable)" : text);
		}
		printf("\n");
		off += FRAME_HDR_SIZE + h.len;
	}
	return off;
}

/* Reads until the peer closes; 0 if it did within secs, 1 if not. */
static int
await_close(int fd, int secs)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	static uint8_t buf[64 * 1024];
	size_t have = 0, used;
	ssize_t n;

	for (;;) {
		switch (poll(&pfd, 1, secs * 1000)) {
		case -1:
			if (errno == EINTR)
				continue;
			perror("sendframe: poll");
			return 1;
		case 0:
			fprintf(stderr, "sendframe: peer kept the connection\n");
			return 1;
		}
		if (have == sizeof(buf))
			have = 0;	/* a huge frame: not ours to show */
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n == 0 || (n == -1 && errno == ECONNRESET)) {
			printf("closed\n");
			return 0;
		}
		if (n == -1) {
			perror("sendframe: read");
			return 1;
		}
		have += (size_t)n;
		used = print_frames(buf, have);
		memmove(buf, buf + used, have - used);
		have -= used;
		fflush(stdout);
	}
}

int
main(int argc, char **argv)
{
	uint8_t buf[1024];
	const char *secret = "";
	ssize_t len;
	int fd, ch, secs = 5, half_close;

	while ((ch = getopt(argc, argv, "s:w:")) != -1)
		switch (ch) {
		case 's':
			secret = optarg;
			break;
		case 'w':
			secs = atoi(optarg);
			break;
		default:
			goto usage;
		}
	if (argc - optind != 2 || secs < 1)
		goto usage;
	if ((len = build(argv[optind + 1], secret, buf, sizeof(buf),
	    &half_close)) == -1)
		goto usage;
	fd = dial(argv[optind], 0);
	if (fd == -1) {
		fprintf(stderr, "sendframe: cannot connect to %s\n",
		    argv[optind]);
		return 2;
	}
	if (write(fd, buf, (size_t)len) != len) {
		perror("sendframe: write");
		return 2;
	}
	if (half_close)
		shutdown(fd, SHUT_WR);
	return await_close(fd, secs);
usage:
	fprintf(stderr, "usage: sendframe [-w SECONDS] [-s SECRET] ADDRESS "
	    "garbage|truncated|version|oversize|badtype|badpayload|"
	    "toolhello|agenthello\n");
	return 2;
}
