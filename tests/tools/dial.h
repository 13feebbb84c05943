/*
 * For the test tools that play a peer: a connection to a daemon's
 * ADDRESS, a unix socket path (it holds a '/') or HOST:PORT for TCP.
 */
#ifndef PMON_TEST_DIAL_H
#define PMON_TEST_DIAL_H

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A connect that takes longer than secs fails with EAGAIN (Linux). */
static inline int
dial_socket(int family, int secs)
{
	struct timeval tv = { secs, 0 };
	int fd;

	if ((fd = socket(family, SOCK_STREAM, 0)) == -1)
		return -1;
	if (secs > 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static inline int
dial_unix(const char *path, int secs)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "%s: path too long\n",
		    program_invocation_short_name);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if ((fd = dial_socket(AF_UNIX, secs)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int
dial_tcp(const char *addr, int secs)
{
	char host[256], *port;
	struct addrinfo hints, *res, *ai;
	int fd = -1;

	snprintf(host, sizeof(host), "%s", addr);
	if ((port = strrchr(host, ':')) == NULL)
		return -1;
	*port++ = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -1;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((fd = dial_socket(ai->ai_family, secs)) == -1)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/*
 * A connected socket, or -1; one that takes longer than secs (0: no
 * limit) to connect, because the daemon's backlog is full, fails.
 */
static inline int
dial(const char *addr, int secs)
{
	return strchr(addr, '/') != NULL ? dial_unix(addr, secs) :
	    dial_tcp(addr, secs);
}

#endif
