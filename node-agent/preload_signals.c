/*
 * Signals the application handles (doc/events.md, "Signals"), so that a
 * pvm_sendsig or pvm_kill has an edge to what it did to its victim.
 *
 * The wrappers of sigaction and signal put a trampoline in front of the
 * handler the application installs; the trampoline counts the signal and
 * runs that handler.  A ring write from inside a signal handler could
 * cut into one in progress, so the count waits for the task's next call
 * boundary, where preload.c asks signals_take for it and writes a
 * PMON_CALL_SIGNAL begin and end per signal number.  What the
 * application asks back (the old action) is its own handler, never the
 * trampoline.  A signal the kernel merged with one still pending is
 * counted once; signals whose handler was installed some other way
 * (sigset, sysv_signal, a raw system call) are not seen.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

atomic_int signals_pending;

static struct sigaction app[NSIG];		/* the application's */
static atomic_uint arrived[NSIG];		/* since the last take */
static atomic_int sender[NSIG];			/* pid of the last sender
						   (SI_USER), or 0 */

static void
trampoline(int signo, siginfo_t *si, void *uc)
{
	const struct sigaction *a = &app[signo];
	int pid = si != NULL && si->si_code == SI_USER ? si->si_pid : 0;

	atomic_fetch_add_explicit(&arrived[signo], 1, memory_order_relaxed);
	atomic_store_explicit(&sender[signo], pid, memory_order_relaxed);
	atomic_store_explicit(&signals_pending, 1, memory_order_release);
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(signo, si, uc);
	else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN)
		a->sa_handler(signo);
}

static int
is_handler(const struct sigaction *a)
{
	if (a->sa_flags & SA_SIGINFO)
		return a->sa_sigaction != NULL;
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

static int
is_trampoline(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == trampoline;
}

PRELOAD_EXPORT int
sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
	static int (*real)(int, const struct sigaction *, struct sigaction *);
	struct sigaction ours, prev;
	int rc;

	if (real == NULL &&
	    (real = (__typeof__(real))dlsym(RTLD_NEXT, "sigaction")) == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (signo <= 0 || signo >= NSIG)
		return real(signo, act, old);
	prev = app[signo];
	if (act != NULL && is_handler(act)) {
		app[signo] = *act;
		ours = *act;
		ours.sa_flags |= SA_SIGINFO;
		ours.sa_sigaction = trampoline;
		if ((rc = real(signo, &ours, old)) == -1)
			app[signo] = prev;
	} else
		rc = real(signo, act, old);
	if (rc == 0 && old != NULL && is_trampoline(old))
		*old = prev;
	return rc;
}

/* glibc's signal: BSD semantics, the signal blocked in its handler. */
PRELOAD_EXPORT sighandler_t
signal(int signo, sighandler_t handler)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	if (signo > 0 && signo < NSIG)
		sigaddset(&act.sa_mask, signo);
	if (sigaction(signo, &act, &old) == -1)
		return SIG_ERR;
	return old.sa_handler;
}

/*
 * Is pid a pvmd?  Its name says so ("pvmd", or "pvmd3" as PVM's own
 * scripts start it).  Not the pid of $PVM_TMP/pvmd.UID's socket name:
 * a pvmd that a master started on another host forks after naming it.
 */
static int
is_pvmd(int pid)
{
	char path[64], comm[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, comm, sizeof(comm));
	close(fd);
	return n >= 4 && memcmp(comm, "pvmd", 4) == 0;
}

/*
 * The next signal number at or after *signo that arrived since it was
 * last taken: how many times, and whether the host's pvmd sent it (as it
 * does for pvm_sendsig and pvm_kill).  0 when none is left.
 */
unsigned
signals_take(int *signo, int *from_pvmd)
{
	unsigned n;
	int pid;

	for (; *signo < NSIG; (*signo)++) {
		n = atomic_exchange_explicit(&arrived[*signo], 0,
		    memory_order_acq_rel);
		if (n == 0)
			continue;
		pid = atomic_load_explicit(&sender[*signo],
		    memory_order_relaxed);
		*from_pvmd = pid > 0 && is_pvmd(pid);
		return n;
	}
	return 0;
}
