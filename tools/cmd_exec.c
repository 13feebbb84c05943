/*
 * pmon exec: runs an unmodified PVM program with the instrumentation
 * library preloaded.  LD_PRELOAD is added to PVM_EXPORT so that every
 * task the program spawns, on any host, is instrumented too.  The
 * program's exit status becomes pmon's (128+N when killed by signal N).
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmon-tool.h"
#include "pmon.h"

/* The status of a program that could not be found or run, as env(1). */
#define EXIT_NOTFOUND	127
#define EXIT_NOEXEC	126

static int	cmd_exec(const struct cmd_args *);

static const struct option exec_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_exec_entry = {
	"exec", "PROGRAM [ARGS...]",
	"run a PVM program (and every task it spawns) under the monitor",
	"PROGRAM is searched in PATH.  LD_PRELOAD gets the instrumentation\n"
	"library ($PMON_PRELOAD, or ../lib/libpmon-pvm.so from the pmon\n"
	"binary) and PVM_EXPORT gets LD_PRELOAD, so spawned tasks are\n"
	"monitored too.  The exit status is the program's (128+N if killed\n"
	"by signal N; 127 if it was not found, 126 if it could not run).\n"
	"With no pmon agent on this host (pmon start) it runs nothing and\n"
	"exits 1.\n",
	"+h", exec_longopts, 1, -1, cmd_exec
};

static volatile sig_atomic_t child_pid;

static int
preload_path(char *buf, size_t size)
{
	const char *env = getenv("PMON_PRELOAD");
	char rel[PATH_MAX];

	if (env != NULL && *env != '\0')
		snprintf(rel, sizeof(rel), "%s", env);
	else if (tool_sibling(rel, sizeof(rel), "../lib/libpmon-pvm.so") == -1)
		return tool_error("cannot find the pmon binary's directory: "
		    "%s; set PMON_PRELOAD", strerror(errno));
	/* Tasks start in pvmd's directory: the path must be absolute. */
	if (size < PATH_MAX || realpath(rel, buf) == NULL)
		return tool_error("cannot find the instrumentation library "
		    "%s: %s (set PMON_PRELOAD)", rel, strerror(errno));
	return 0;
}

/* Termination requests for pmon are meant for the program. */
static void
forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static void
parent_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = forward_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* The terminal sends these to the program as well: let it decide. */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}

/* In the child: runs the program; tells the parent errno if it cannot. */
static void __attribute__((noreturn))
child_exec(char **argv, int errfd)
{
	int e;

	execvp(argv[0], argv);
	e = errno;
	if (write(errfd, &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(EXIT_NOTFOUND);
	_exit(EXIT_NOTFOUND);
}

static int
wait_status(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return tool_error("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * Is there an agent on this host for the program's tasks to register
 * with?  Without one they would run unmonitored, which is not what was
 * asked: say so, and run nothing.  (A socket left by an agent that died
 * passes; its coordinator starts another.)
 */
static int
agent_here(void)
{
	char path[PATH_MAX];
	struct stat st;

	if (pmon_agent_path(path, sizeof(path)) == -1)
		return tool_error("the agent's socket: %s", strerror(errno));
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		return 0;
	return tool_error("no pmon agent on this host (%s): the program would "
	    "run unmonitored; start pmon first (pmon start)", path);
}

static int
cmd_exec(const struct cmd_args *a)
{
	char preload[PATH_MAX];
	int fds[2], e;
	pid_t pid;
	ssize_t n;

	if (agent_here() != 0 || preload_path(preload, sizeof(preload)) != 0)
		return EXIT_FAILURE;
	if (pmon_instrument_env(preload) == -1)
		return tool_error("setting the environment: %s",
		    strerror(errno));
	if (pipe2(fds, O_CLOEXEC) == -1)
		return tool_error("pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) == -1)
		return tool_error("fork: %s", strerror(errno));
	if (pid == 0)
		child_exec(a->argv, fds[1]);
	child_pid = pid;
	parent_signals();
	close(fds[1]);
	while ((n = read(fds[0], &e, sizeof(e))) == -1 && errno == EINTR)
		;
	close(fds[0]);
	if (n == (ssize_t)sizeof(e)) {
		wait_status(pid);
		tool_error("cannot run %s: %s", a->argv[0], strerror(e));
		return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
	}
	return wait_status(pid);
}
