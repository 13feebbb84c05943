/*
 * nptasks.so: lets NPpvm run on a virtual machine that has other tasks
 * (bench/bench_overhead.sh).
 *
 * NPpvm (Debian's netpipe-pvm 3.7.2) refuses to start unless
 * pvm_tasks(0, ...) lists exactly two tasks, itself and its partner.
 * Under pmon the agent and the coordinator are PVM tasks too, and under
 * PVM's tracing so is the tracer.  Preloaded into NPpvm in every variant
 * of the bench alike, this pvm_tasks lists only the tasks that run the
 * caller's own executable (by /proc/PID/exe: the bench runs on one
 * host).  The bench starts the receiver and the transmitter together:
 * while fewer than two such tasks have enrolled, it asks pvmd again,
 * for up to WAIT_MS.  With NPTASKS_DEBUG set it prints what it kept.
 * Nothing else is interposed: NPpvm's ping-pong calls go to
 * libpvm3 (or to pmon's wrappers) as without it.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvm3.h>

#define WANT		2	/* NPpvm's transmitter and receiver */
#define WAIT_MS		10000
#define RETRY_MS	10
#define TASKS_MAX	256

/* What pvm_tasks returns: valid until the next call, as libpvm3's. */
static struct pvmtaskinfo mine[TASKS_MAX];

typedef int	(*tasks_fn)(int, int *, struct pvmtaskinfo **);

/* The executable of pid, or of this process when pid is -1. */
static int
exe_of(int pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	if (pid < 0)
		snprintf(path, sizeof(path), "/proc/self/exe");
	else if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	else		/* a task pvmd is still setting up */
		return -1;
	if ((n = readlink(path, buf, size - 1)) <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * Copies the entries of ti that run self into mine; returns how many.
 * libpvm3's own array stays as it is: its next pvm_tasks frees the
 * names it points to.
 */
static int
keep_same(const struct pvmtaskinfo *ti, int n, const char *self)
{
	char exe[PATH_MAX];
	int i, kept = 0;

	for (i = 0; i < n && kept < TASKS_MAX; i++)
		if (exe_of(ti[i].ti_pid, exe, sizeof(exe)) == 0 &&
		    strcmp(exe, self) == 0)
			mine[kept++] = ti[i];
	return kept;
}

static void
debug(const char *self, int n)
{
	int i;

	for (i = 0; i < n; i++)
		fprintf(stderr, "nptasks: pid %d: %s task t%x pid %d\n",
		    (int)getpid(), self, mine[i].ti_tid, mine[i].ti_pid);
}

int
pvm_tasks(int where, int *ntaskp, struct pvmtaskinfo **taskp)
{
	tasks_fn real = (tasks_fn)dlsym(RTLD_NEXT, "pvm_tasks");
	struct timespec retry = { 0, RETRY_MS * 1000000L };
	char self[PATH_MAX];
	int rc, waited;

	if (real == NULL)
		return PvmSysErr;
	if (ntaskp == NULL || taskp == NULL ||
	    exe_of(-1, self, sizeof(self)) == -1)
		return real(where, ntaskp, taskp);
	for (waited = 0;; waited += RETRY_MS) {
		rc = real(where, ntaskp, taskp);
		if (rc < 0 || *taskp == NULL)
			return rc;
		*ntaskp = keep_same(*taskp, *ntaskp, self);
		*taskp = mine;
		if (getenv("NPTASKS_DEBUG") != NULL)
			debug(self, *ntaskp);
		if (*ntaskp >= WANT || waited >= WAIT_MS)
			return rc;
		nanosleep(&retry, NULL);
	}
}
