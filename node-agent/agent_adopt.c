/*
 * A restarted agent takes over the rings of the tasks its predecessor
 * served (doc/capture.md, "An agent restart").  Those tasks registered
 * once and never will again, but their rings live on in them: every
 * process of ours on this host that holds a memfd named "pmon-ring" is
 * looked at through /proc/PID/fd, and its ring, when it is a registered
 * task's of this virtual machine and host, is read on from its tail.
 *
 * A process is of this virtual machine when its PVM_TMP (as it was
 * started) is ours: that is where it found the agent socket, and where
 * a host's pvmd, agent and tasks meet.  Its ring names its tid, whose
 * host field must be ours.  A pidfd, taken before its fds are looked
 * at, tells when it exits, and that the ring found was its own.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "xmalloc.h"

#define RING_MEMFD_LINK	"/memfd:pmon-ring"	/* ring.c's memfd name */
#define TID_HOST_MASK	0x3ffc0000		/* PVM's TIDHOST */

static int
pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Is process pid (its /proc directory dirfd) ours and of our machine? */
static int
proc_ours(int dirfd)
{
	struct stat st;
	char *env;
	ssize_t n;
	int fd, match;

	if (fstat(dirfd, &st) == -1 || st.st_uid != geteuid())
		return 0;
	if ((fd = openat(dirfd, "environ", O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	env = xmalloc(AGENT_ENVIRON_MAX);
	n = read(fd, env, AGENT_ENVIRON_MAX);
	close(fd);
	match = n > 0 && agent_adopt_environ_match(env, (size_t)n,
	    getenv("PVM_TMP"));
	free(env);
	return match;
}

/* The program's name, as the instrumentation sends it. */
static void
proc_program(int dirfd, char *out, size_t size)
{
	char path[4096], *base;
	ssize_t n;
	size_t len;

	n = readlinkat(dirfd, "exe", path, sizeof(path) - 1);
	if (n <= 0)
		n = snprintf(path, sizeof(path), "?");
	path[n] = '\0';
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	len = strnlen(base, size - 1);
	memcpy(out, base, len);
	out[len] = '\0';
}

/*
 * Opens the ring of process pid through its fd directory.  Returns 0
 * with the ring mapped, 1 when it has none, -1 when it has one we may
 * not take (with why).
 */
static int
proc_ring(int dirfd, struct ring *rg, const char **why)
{
	char link[300], target[64];
	struct dirent *d;
	DIR *fds;
	ssize_t n;
	int fdd, fd, rv = 1;

	if ((fdd = openat(dirfd, "fd", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || (fds = fdopendir(fdd)) == NULL) {
		if (fdd != -1)
			close(fdd);
		return 1;
	}
	while (rv == 1 && (d = readdir(fds)) != NULL) {
		n = readlinkat(fdd, d->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, RING_MEMFD_LINK,
		    sizeof(RING_MEMFD_LINK) - 1) != 0)
			continue;
		snprintf(link, sizeof(link), "fd/%s", d->d_name);
		/* Opening the link opens the memfd itself, read-write. */
		if ((fd = openat(dirfd, link, O_RDWR | O_CLOEXEC)) == -1)
			continue;
		rv = ring_attach(rg, fd, why) == -1 ? -1 : 0;
		if (rv == -1)
			close(fd);
	}
	closedir(fds);
	return rv;
}

/*
 * One process: adopts its ring if it is a registered task of ours.
 * Returns 1 when it did, 0 when it is not such a task.
 */
static int
adopt_pid(struct agent *a, pid_t pid)
{
	struct pollfd pfd;
	struct task_hello h;
	struct ring rg = { .fd = -1 };
	char dir[64];
	const char *why;
	int dirfd, pidfd, rv;

	snprintf(dir, sizeof(dir), "/proc/%ld", (long)pid);
	if ((pidfd = pidfd_open(pid)) == -1)
		return 0;
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		goto not;
	if (!proc_ours(dirfd) || (rv = proc_ring(dirfd, &rg, &why)) == 1)
		goto not;
	if (rv == -1) {
		log_warnx("pid %ld: %s; not adopted", (long)pid, why);
		goto not;
	}
	memset(&h, 0, sizeof(h));
	h.tid = rg.hdr->tid;
	h.pid = (uint32_t)pid;
	proc_program(dirfd, h.program, sizeof(h.program));
	/* Still the same process: the fds we read were its own. */
	pfd.fd = pidfd;
	pfd.events = POLLIN;
	if (h.tid <= 0 || (a->host_tid > 0 &&
	    ((h.tid ^ a->host_tid) & TID_HOST_MASK) != 0) ||
	    poll(&pfd, 1, 0) != 0 || agent_task_find(a, h.tid) != NULL)
		goto not;
	close(dirfd);
	return agent_task_adopt(a, pidfd, &rg, &h) == 0 ? 1 : 0;
not:
	ring_close(&rg);
	if (dirfd != -1)
		close(dirfd);
	close(pidfd);
	return 0;
}

/*
 * At start, after the hello: takes over the rings of every registered
 * task of this host whose agent is gone.  Returns the number adopted.
 */
int
agent_adopt_all(struct agent *a)
{
	struct dirent *d;
	DIR *proc;
	char *end;
	long pid;
	int n = 0;

	if ((proc = opendir("/proc")) == NULL) {
		log_warn("/proc");
		return 0;
	}
	while ((d = readdir(proc)) != NULL) {
		pid = strtol(d->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == (long)getpid())
			continue;
		n += adopt_pid(a, (pid_t)pid);
	}
	closedir(proc);
	if (n > 0)
		log_info("adopted %d running task%s", n, n == 1 ? "" : "s");
	return n;
}
