/*
 * A task the host's starter started (tasker.h has the contract): once
 * enrolled it tells the starter where its output goes, and at pvm_exit
 * it waits until the starter has forwarded what it wrote.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"
#include "preload.h"
#include "tasker.h"

int starter_pending;		/* started by the starter, not told yet */
static int32_t started_tid;
static int starter_fd = -1;

void
starter_init(void)
{
	const char *v = getenv(TASKER_ENV_TID);
	long tid;
	char *end;

	if (v == NULL)
		return;
	errno = 0;
	tid = strtol(v, &end, 10);
	if (errno == 0 && *end == '\0' && tid > 0 && tid <= INT32_MAX) {
		started_tid = (int32_t)tid;
		starter_pending = 1;
	}
	/* Not for what this process starts. */
	unsetenv(TASKER_ENV_TID);
}

/* A forked child is not the task the starter started. */
void
starter_atfork(void)
{
	starter_pending = 0;
	started_tid = 0;
	if (starter_fd != -1)
		close(starter_fd);
	starter_fd = -1;
}

/* A system tag or context is negative as an int: taken as it is. */
static int
opt(int what)
{
	__typeof__(&pvm_getopt) real = REAL(getopt);

	return real != NULL ? real(what) : 0;
}

void
starter_tell(void)
{
	struct sockaddr_un sun;
	struct tasker_hello h;
	int fd, saved = errno;

	if (preload_enrolled_tid() != started_tid)
		return;		/* not yet, or under another tid */
	starter_pending = 0;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (pmon_runtime_path(sun.sun_path, sizeof(sun.sun_path),
	    PMON_SOCK_STARTER) == -1 ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		goto out;
	h.tid = started_tid;
	h.out_tid = opt(PvmSelfOutputTid);
	h.out_ctx = opt(PvmSelfOutputContext);
	h.out_code = opt(PvmSelfOutputCode);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
		close(fd);
		goto out;
	}
	starter_fd = fd;
out:
	errno = saved;
}

void
starter_drain(void)
{
	struct pollfd pfd;
	char c = TASKER_DRAIN;
	int saved = errno;

	if (starter_fd == -1)
		return;
	fflush(NULL);
	pfd.fd = starter_fd;
	pfd.events = POLLIN;
	if (write(starter_fd, &c, 1) == 1 &&
	    poll(&pfd, 1, TASKER_DRAIN_WAIT_MS) == 1)
		(void)read(starter_fd, &c, 1);
	close(starter_fd);
	starter_fd = -1;
	errno = saved;
}
