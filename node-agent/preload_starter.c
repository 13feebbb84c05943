/*
 * A task the host's starter started (tasker.h has the contract): once
 * enrolled it tells the starter where its output goes, and before its
 * real pvm_exit it waits until the starter has forwarded what it wrote.
 *
 * pvmd tells a task's collector that its output has ended at the real
 * pvm_exit of a task a tasker started, but only when the process ends for
 * a task pvmd forked.  So the application's pvm_exit is put off: the
 * real one is done when the process ends (preload_fini), or before the
 * task's next PVM call, and what the task prints after pvm_exit still
 * reaches its collector, as under pvmd.
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
int starter_exit_pending;	/* the application's pvm_exit is put off */
static int32_t started_tid;
static int starter_fd = -1;
static int exiting;		/* inside the real pvm_exit */

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
	starter_exit_pending = 0;
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

/* Waits until the starter has forwarded everything written so far. */
static void
flush_output(void)
{
	struct pollfd pfd;
	char c = TASKER_DRAIN;

	fflush(NULL);
	pfd.fd = starter_fd;
	pfd.events = POLLIN;
	if (send(starter_fd, &c, 1, MSG_NOSIGNAL) == 1 &&
	    poll(&pfd, 1, TASKER_DRAIN_WAIT_MS) == 1 &&
	    read(starter_fd, &c, 1) == 1 && c == TASKER_DRAINED)
		return;
	close(starter_fd);		/* the starter is gone or stuck */
	starter_fd = -1;
}

/* The application's pvm_exit: 1 if it is put off. */
int
starter_defer_exit(void)
{
	if (starter_fd == -1 || exiting)
		return 0;
	fflush(NULL);
	starter_exit_pending = 1;
	return 1;
}

/*
 * The task's output is forwarded, then the put-off pvm_exit is done,
 * unless the process is inside a PVM call (an exit from a message
 * handler): then the end of its pvmd connection ends it, as it ends a
 * task that never called pvm_exit.
 */
void
starter_exit(int in_call)
{
	int saved = errno, pending = starter_exit_pending;

	starter_exit_pending = 0;
	if (starter_fd == -1)
		return;
	flush_output();
	if (pending && !in_call) {
		exiting = 1;
		preload_real_exit();
		exiting = 0;
	}
	if (starter_fd != -1)
		close(starter_fd);
	starter_fd = -1;
	errno = saved;
}

/*
 * pvm_catchout, by the application or by libpvm3's pvm_exit once it has
 * printed the last of its children's output, which must reach the
 * collector before the real pvm_exit ends the task's.
 */
void
starter_catchout(FILE *ff)
{
	int saved = errno;

	if (ff == NULL && exiting && starter_fd != -1)
		flush_output();
	errno = saved;
}
