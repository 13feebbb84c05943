/*
 * The task starter of one host (doc/tasker.md has pvmd's side, measured).
 *
 *	pmon-agentd -S -p LIBRARY [-v]
 *
 * Registered as the host's tasker, it is handed every spawn on the host
 * (SM_STTASK: tid, flags, path, argv, the spawn's environment strings)
 * and starts the task as pvmd would have, with LIBRARY first in
 * LD_PRELOAD: pvmd's environment under the spawn's strings, pvmd's
 * directory or the spawn's (PVMSPAWNWD), default signals, no descriptor
 * of ours.  pmon's own daemons are started as they are.  Each exit goes
 * to pvmd (SM_TASKX: the wait status and rusage), which needs it for a
 * task that never connected (exec failed, not a PVM program).
 *
 * The starter is its own process, started detached by the agent (the
 * agent's executable again, with -S): pvmd drops the PVM connection of
 * every running task a tasker started when the tasker goes, so it must
 * outlive agent restarts.  The first on a host registers; the one a
 * restarted agent starts finds the registration taken (PvmAlready) and
 * leaves.  SIGTERM (tasker_stop, at an orderly agent shutdown)
 * unregisters it: pvmd forks new spawns itself again, and the starter
 * stays, enrolled, until the last task it started has ended.
 */
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>
#include <pvmproto.h>

#include "log.h"
#include "paths.h"
#include "spawn_env.h"
#include "tasker.h"

#define TASKER_PVMD	((int)0x80000000)	/* TIDPVMD: the local pvmd */
#define TASKER_STR_MAX	(256 * 1024)	/* one string of a spawn */
#define TASKER_FDS	16		/* pvm_getfds, and the signals */

/* What a spawn adds to pvmd's environment: not ours to pass on. */
static const char *const spawn_vars[] = {
	"PVMEPID", "PVMTMASK", "PVMTRCBUF", "PVMTRCOPT", "PVMCTX",
	"PVM_EXPORT", "PVMSPAWNWD", NULL
};

/* pmon's daemons: started without the library. */
static const char *const own_programs[] = {
	"pmon-agentd", "pmon-coordd", NULL
};

struct child {
	pid_t		 pid;
	int		 tid;
};

static struct {
	const char	*preload;
	struct child	*v;
	size_t		 n, cap;
	char		*str;		/* TASKER_STR_MAX bytes */
	char		 pidfile[PATH_MAX];
	int		 stopping;
} tk;

/* --- the agent's side ---------------------------------------------------- */

/* The library next to our executable (../lib), or $PMON_PRELOAD. */
static int
preload_path(char *buf, size_t size)
{
	const char *env = getenv("PMON_PRELOAD");
	char exe[PATH_MAX], rel[PATH_MAX + 32], *slash;
	ssize_t n;

	if (env != NULL && *env != '\0')
		snprintf(rel, sizeof(rel), "%s", env);
	else {
		if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
			return -1;
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		snprintf(rel, sizeof(rel), "%s/../lib/libpmon-pvm.so", exe);
	}
	return size >= PATH_MAX && realpath(rel, buf) != NULL ? 0 : -1;
}

void
tasker_start(int verbose)
{
	char lib[PATH_MAX];
	char *argv[] = { (char *)"pmon-agentd", (char *)"-S", (char *)"-p",
	    lib, verbose ? (char *)"-v" : NULL, NULL };
	pid_t pid;
	int status;

	if (preload_path(lib, sizeof(lib)) == -1) {
		log_warn("no task starter: the instrumentation library "
		    "(set PMON_PRELOAD)");
		return;
	}
	/* Twice: the starter is nobody's child, and outlives us. */
	if ((pid = fork()) == -1) {
		log_warn("no task starter: fork");
		return;
	}
	if (pid == 0) {
		if (setsid() == -1 || (pid = fork()) == -1)
			_exit(1);
		if (pid > 0)
			_exit(0);
		close_range(3, ~0U, 0);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
}

/* Does pid run our executable? */
static int
same_program(pid_t pid)
{
	char path[64], a[PATH_MAX], b[PATH_MAX];
	ssize_t n, m;

	snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
	if ((n = readlink(path, a, sizeof(a))) <= 0 ||
	    (m = readlink("/proc/self/exe", b, sizeof(b))) <= 0)
		return 0;
	return n == m && memcmp(a, b, (size_t)n) == 0;
}

void
tasker_stop(void)
{
	char path[PATH_MAX], buf[32];
	long pid;
	ssize_t n;
	int fd;

	if (pmon_runtime_path(path, sizeof(path), PMON_FILE_TASKER) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((pid = strtol(buf, NULL, 10)) <= 1 || !same_program((pid_t)pid))
		return;		/* stale: that process is not a starter */
	if (kill((pid_t)pid, SIGTERM) == 0)
		log_debug("asked the task starter (pid %ld) to stop", pid);
}

/* --- the starter --------------------------------------------------------- */

/* Our environment becomes pvmd's: without what a spawn of us added. */
static void
env_as_pvmd(void)
{
	char *exp, *name, *save;
	size_t i;

	if ((exp = getenv("PVM_EXPORT")) != NULL &&
	    (exp = strdup(exp)) != NULL) {
		for (name = strtok_r(exp, ":", &save); name != NULL;
		    name = strtok_r(NULL, ":", &save))
			unsetenv(name);
		free(exp);
	}
	for (i = 0; spawn_vars[i] != NULL; i++)
		unsetenv(spawn_vars[i]);
}

static int
own_program(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base != NULL ? base + 1 : path;
	for (i = 0; own_programs[i] != NULL; i++)
		if (strcmp(base, own_programs[i]) == 0)
			return 1;
	return 0;
}

static void
send_taskx(int tid, int status, const struct rusage *ru)
{
	int v[6] = { tid, status, 0, 0, 0, 0 };
	int rc;

	if (ru != NULL) {
		v[2] = (int)ru->ru_utime.tv_sec;
		v[3] = (int)ru->ru_utime.tv_usec;
		v[4] = (int)ru->ru_stime.tv_sec;
		v[5] = (int)ru->ru_stime.tv_usec;
	}
	if ((rc = pvm_initsend(PvmDataDefault)) < 0 ||
	    (rc = pvm_pkint(v, 6, 1)) < 0 ||
	    (rc = pvm_send(TASKER_PVMD, SM_TASKX)) < 0)
		log_warnx("t%x ended, but pvmd cannot be told: %d", tid, rc);
}

/* The child's side: never returns. */
static void
child_exec(const char *path, char **argv, char **env, int nenv)
{
	const char *wd = NULL, *old;
	sigset_t none;
	char *val;
	int i, sig;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	close_range(3, ~0U, 0);
	for (i = 0; i < nenv; i++) {
		if (strncmp(env[i], "PVMSPAWNWD=", 11) == 0)
			wd = env[i] + 11;
		putenv(env[i]);
	}
	if (!own_program(path)) {
		old = getenv("LD_PRELOAD");
		if ((val = spawn_env_preload(old, tk.preload)) == NULL ||
		    setenv("LD_PRELOAD", val, 1) == -1)
			_exit(1);
	}
	if (wd != NULL && chdir(wd) == -1)
		_exit(1);
	execv(path, argv);
	_exit(1);		/* as pvmd's own child does */
}

static int
child_add(pid_t pid, int tid)
{
	struct child *nv;
	size_t ncap;

	if (tk.n == tk.cap) {
		ncap = tk.cap ? 2 * tk.cap : 64;
		if ((nv = reallocarray(tk.v, ncap, sizeof(*nv))) == NULL)
			return -1;
		tk.v = nv;
		tk.cap = ncap;
	}
	tk.v[tk.n].pid = pid;
	tk.v[tk.n++].tid = tid;
	return 0;
}

/* A string of the spawn, copied; NULL when it could not be read. */
static char *
unpack_str(void)
{
	if (pvm_upkstr(tk.str) < 0)
		return NULL;
	return strdup(tk.str);
}

static void
free_strs(char **v, int n)
{
	int i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* SM_STTASK: int tid, flags; str path; int argc; str argv[argc]; ... */
static void
start_task(void)
{
	char *path = NULL, **argv = NULL, **env = NULL;
	int tid, flags, argc = 0, nenv = 0, i;
	pid_t pid;

	if (pvm_upkint(&tid, 1, 1) < 0 || pvm_upkint(&flags, 1, 1) < 0 ||
	    (path = unpack_str()) == NULL || pvm_upkint(&argc, 1, 1) < 0 ||
	    argc < 0 || argc > 4096 ||
	    (argv = calloc((size_t)argc + 1, sizeof(*argv))) == NULL)
		goto bad;
	for (i = 0; i < argc; i++)
		if ((argv[i] = unpack_str()) == NULL)
			goto bad;
	if (pvm_upkint(&nenv, 1, 1) < 0 || nenv < 0 || nenv > 65536 ||
	    (env = calloc((size_t)nenv + 1, sizeof(*env))) == NULL)
		goto bad;
	for (i = 0; i < nenv; i++)
		if ((env[i] = unpack_str()) == NULL)
			goto bad;
	if ((pid = fork()) == 0)
		child_exec(path, argc > 0 ? argv : (char *[]){ path, NULL },
		    env, nenv);
	if (pid == -1 || child_add(pid, tid) == -1) {
		log_warn("cannot start t%x (%s)", (unsigned)tid, path);
		if (pid == -1)
			send_taskx(tid, 0, NULL);
	} else
		log_debug("started t%x: %s, pid %ld", (unsigned)tid, path,
		    (long)pid);
	free(path);
	free_strs(argv, argc);
	free_strs(env, nenv);
	return;
bad:
	log_warnx("a spawn pvmd handed over is malformed; not started");
	free(path);
	free_strs(argv, argc);
	free_strs(env, nenv);
}

static void
reap(void)
{
	struct rusage ru;
	pid_t pid;
	size_t i;
	int status;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0)
		for (i = 0; i < tk.n; i++)
			if (tk.v[i].pid == pid) {
				send_taskx(tk.v[i].tid, status, &ru);
				tk.v[i] = tk.v[--tk.n];
				break;
			}
}

/* Every message pvmd has for us; -1 when pvmd is gone. */
static int
read_pvmd(void)
{
	int bufid, len, tag, src;

	while ((bufid = pvm_nrecv(-1, -1)) > 0) {
		if (pvm_bufinfo(bufid, &len, &tag, &src) < 0)
			continue;
		if (tag == (int)SM_STTASK && src < 0)
			start_task();
		pvm_freebuf(bufid);
	}
	return bufid < 0 ? -1 : 0;
}

static void
stop(void)
{
	if (tk.stopping)
		return;
	tk.stopping = 1;
	(void)pvm_reg_tasker();	/* toggles: unregistered */
	unlink(tk.pidfile);
	log_info("task starter unregistered; %zu task%s still running",
	    tk.n, tk.n == 1 ? "" : "s");
}

static int
write_pidfile(void)
{
	char buf[32];
	int fd, n;

	if (pmon_runtime_path(tk.pidfile, sizeof(tk.pidfile),
	    PMON_FILE_TASKER) == -1 ||
	    (fd = open(tk.pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int
serve(int sigfd)
{
	struct pollfd pfd[TASKER_FDS];
	struct signalfd_siginfo si;
	int *fds, n, i;

	while (!tk.stopping || tk.n > 0) {
		if ((n = pvm_getfds(&fds)) < 0)
			return -1;
		n = n < TASKER_FDS - 1 ? n : TASKER_FDS - 1;
		pfd[0].fd = sigfd;
		pfd[0].events = POLLIN;
		for (i = 0; i < n; i++) {
			pfd[i + 1].fd = fds[i];
			pfd[i + 1].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n + 1, -1) == -1 && errno != EINTR)
			return -1;
		while (read(sigfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo == SIGCHLD)
				reap();
			else
				stop();
		if (read_pvmd() == -1)
			return -1;
	}
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: pmon-agentd -S -p LIBRARY [-v]\n");
	exit(2);
}

int
tasker_main(int argc, char *argv[])
{
	sigset_t set;
	int ch, verbose = 0, rc, sigfd, *fds, n, i;

	while ((ch = getopt(argc, argv, "Sp:v")) != -1)
		switch (ch) {
		case 'S':
			break;
		case 'p':
			tk.preload = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	if (optind != argc || tk.preload == NULL)
		usage();
	log_init("pmon-tasker", verbose);
	env_as_pvmd();
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		fatal("signalfd");
	/* Our stderr is the first agent's pipe to pvmd: it may close. */
	signal(SIGPIPE, SIG_IGN);
	if ((tk.str = malloc(TASKER_STR_MAX)) == NULL)
		fatal("%s", __func__);
	if (pvm_mytid() < 0)
		fatalx("cannot enrol in PVM: is pvmd running?");
	pvm_setopt(PvmResvTids, 1);
	if ((rc = pvm_reg_tasker()) < 0) {
		if (rc == PvmAlready)
			log_debug("the host has its task starter already");
		else
			log_warnx("cannot register as this host's task "
			    "starter: %d", rc);
		pvm_exit();
		free(tk.str);
		return rc == PvmAlready ? 0 : 1;
	}
	/* Our pvmd socket is no task's business. */
	if ((n = pvm_getfds(&fds)) > 0)
		for (i = 0; i < n; i++)
			fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	if (write_pidfile() == -1)
		log_warn("%s", tk.pidfile);
	log_info("starting this host's tasks with %s", tk.preload);
	rc = serve(sigfd);
	if (rc == -1)
		log_warnx("pvmd is gone; %zu task%s it had us start lose PVM",
		    tk.n, tk.n == 1 ? "" : "s");
	if (!tk.stopping)
		unlink(tk.pidfile);
	pvm_exit();
	free(tk.str);
	free(tk.v);
	return rc == -1 ? 1 : 0;
}
