/*
 * pmon replay: serves a recording (pmon record) to tools as if it were
 * live, through pmon-coordd -R: every tool works post-mortem.
 *
 *	pmon replay FILE		a replay coordinator for $PVM_TMP, in
 *					the background, until pmon shutdown
 *	pmon replay FILE -- CMD ...	CMD with PVM_TMP naming a private
 *					directory that holds the replay's
 *					socket; the replay ends with CMD, and
 *					so does pmon replay, with its status
 *
 * The file is checked first: damage is reported with its offset, and
 * everything before it is served.  No pvmd is needed.
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
#include <time.h>
#include <unistd.h>

#include "pmon-tool.h"
#include "pmon.h"

#define REPLAY_EXIT_WAIT_MS	10000	/* for the coordinator to go */

static int	cmd_replay(const struct cmd_args *);

static const struct option replay_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "horizon", required_argument, NULL, 'H' },
	{ "tool-queue", required_argument, NULL, 'Q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_replay_entry = {
	"replay", "[-v] [-H horizon] [-Q bytes] FILE [-- COMMAND [ARG...]]",
	"serve a recording to tools as if it were live",
	"  -H, --horizon EVENTS[,DURATION]|DURATION|unlimited  how far back\n"
	"                 pmon frontier answers, as pmon start -H (default\n"
	"                 each task's last 16384 events; doc/state.md)\n"
	"  -Q, --tool-queue BYTES  what a tool may have queued before the\n"
	"                 replay waits for it (default 8 MiB)\n"
	"  -v, --verbose  say what the file holds; twice: run pmon-coordd -v\n"
	"\nWithout COMMAND, starts a replay coordinator for $PVM_TMP in the\n"
	"background (pmon shutdown ends it).  With it, runs COMMAND with\n"
	"PVM_TMP naming a private directory that holds the replay's socket,\n"
	"then ends the replay and exits with COMMAND's status:\n"
	"  pmon replay run.pmr -- pmon trace --json\n"
	"The stream starts when the first tool subscribes or flushes, and\n"
	"subscribers get BYE at its end; queries then see the final state.\n"
	"A damaged file is reported with the offset of the damage; what\n"
	"comes before it is served (doc/recording.md).\n",
	"+hH:Q:v", replay_longopts, 1, -1, cmd_replay
};

/* Reads the whole file once: what it holds, or where it is damaged. */
static int
replay_scan(const char *path, int verbose)
{
	struct pmon_recording_header h;
	struct pmon_recording_counts n;
	struct pmon *p;
	int rv;

	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	if (pmon_open_recording(p, path, &h) == -1) {
		rv = tool_error("%s: %s", path, pmon_error(p));
		pmon_free(p);
		return rv;
	}
	if ((rv = pmon_read_recording(p, &n)) == -1)
		tool_error("%s: %s; serving the %llu events before it", path,
		    pmon_error(p), (unsigned long long)n.events);
	if (verbose)
		fprintf(stderr, "pmon replay: %s: %llu frames, %llu events, "
		    "written by %s from %s%s\n", path,
		    (unsigned long long)n.frames, (unsigned long long)n.events,
		    h.writer, h.source, rv == 0 ? ", ended cleanly" : "");
	pmon_free(p);
	return 0;
}

/* pmon replay's options that are pmon-coordd's (tool_coordd_check). */
static const struct tool_coordd_opt replay_coordd_opts[] = {
	{ 'Q', "-Q", "--tool-queue", NULL },
	{ 'H', "-H", "--horizon", NULL },
	{ 0, NULL, NULL, NULL }
};

/* In the child: pmon-coordd -R FILE, -d when in the foreground. */
static void __attribute__((noreturn))
replay_exec(const char *coordd, const char *file, int wfd, int foreground,
    const struct cmd_args *a, int logfd)
{
	const char *argv[TOOL_COORDD_ARGS + 6];
	int i;

	i = tool_coordd_args(argv, a, replay_coordd_opts);
	if (foreground)
		argv[i++] = "-d";
	argv[i++] = "-R";
	argv[i++] = file;
	argv[i] = NULL;
	tool_coordd_exec(coordd, argv, wfd, logfd);
}

/*
 * Starts the replay coordinator and waits for its ready line.  Returns
 * its pid (our child when foreground), or -1 after saying why.
 */
static pid_t
replay_start(const struct cmd_args *a, int foreground, int logfd)
{
	char coordd[PATH_MAX], line[256], file[PATH_MAX];
	int fds[2], got, status;
	pid_t pid;

	if (tool_coordd_path(coordd, sizeof(coordd)) != 0)
		return -1;
	/* The daemon leaves our working directory. */
	if (realpath(a->argv[0], file) == NULL)
		return tool_error("%s: %s", a->argv[0], strerror(errno)), -1;
	if (pipe2(fds, O_CLOEXEC) == -1)
		return tool_error("pipe: %s", strerror(errno)), -1;
	if ((pid = fork()) == -1)
		return tool_error("fork: %s", strerror(errno)), -1;
	if (pid == 0)
		replay_exec(coordd, file, fds[1], foreground, a, logfd);
	close(fds[1]);
	got = tool_read_ready(fds[0], line, sizeof(line));
	close(fds[0]);
	if (got != 1 || strncmp(line, "ready", 5) != 0) {
		tool_start_failed(pid, got);
		return -1;
	}
	if (!foreground)
		waitpid(pid, &status, 0);	/* the daemon's first half */
	return pid;
}

static volatile sig_atomic_t replay_signalled;

static void
on_signal(int sig)
{
	replay_signalled = sig;
}

/*
 * Runs CMD and returns its status (128 + the signal if one ended it).
 * SIGINT and SIGTERM are passed on to it, and the replay still ends
 * cleanly after it.
 */
static int
run_command(char **argv)
{
	struct sigaction sa;
	int status, passed = 0;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;	/* no SA_RESTART: waitpid returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fflush(NULL);
	if ((pid = fork()) == -1)
		return tool_error("fork: %s", strerror(errno));
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "pmon replay: %s: %s\n", argv[0],
		    strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR)
			return tool_error("waitpid: %s", strerror(errno));
		if (replay_signalled && !passed++)
			kill(pid, replay_signalled);
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * Asks the replay to shut down and waits for it; SIGTERM if it hangs.
 * Returns 0 if it exited with status 0, else -1 after saying how.
 */
static int
replay_stop(pid_t pid)
{
	struct pmon *p;
	long deadline = now_ms() + REPLAY_EXIT_WAIT_MS;
	int status;

	if ((p = pmon_new()) != NULL &&
	    pmon_connect(p, NULL, "pmon-replay", 0) == 0)
		pmon_send_shutdown(p);
	pmon_free(p);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ms() > deadline) {
			tool_error("the replay coordinator did not exit; "
			    "terminating it");
			kill(pid, SIGTERM);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(10000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		tool_error("the replay coordinator was killed by signal %d",
		    WTERMSIG(status));
	else
		tool_error("the replay coordinator exited with status %d",
		    WEXITSTATUS(status));
	return -1;
}

/* Prints the coordinator's log (after a failure) and removes it. */
static void
log_dump(const char *path, int show)
{
	char buf[4096];
	size_t n;
	FILE *f;

	if (show && (f = fopen(path, "r")) != NULL) {
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stderr);
		fclose(f);
	}
	unlink(path);
}

/* pmon replay FILE -- CMD: a private directory, CMD, then the end. */
static int
replay_command(const struct cmd_args *a, char **cmd)
{
	const char *tmpdir = getenv("TMPDIR");
	char dir[PATH_MAX], log[PATH_MAX + 16];
	int logfd, rv;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/pmon-replay.XXXXXX",
	    tmpdir != NULL && *tmpdir == '/' ? tmpdir : "/tmp");
	if (mkdtemp(dir) == NULL)
		return tool_error("mkdtemp %s: %s", dir, strerror(errno));
	snprintf(log, sizeof(log), "%s/coordd.log", dir);
	if ((logfd = open(log, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		rv = tool_error("%s: %s", log, strerror(errno));
		rmdir(dir);
		return rv;
	}
	setenv("PVM_TMP", dir, 1);
	pid = replay_start(a, 1, logfd);
	close(logfd);
	if (pid == -1) {
		log_dump(log, 1);
		rmdir(dir);
		return EXIT_FAILURE;
	}
	rv = run_command(cmd);
	if (replay_stop(pid) == -1) {
		log_dump(log, 1);
		if (rv == 0)
			rv = EXIT_FAILURE;
	} else
		log_dump(log, a->seen['v'] > 1);
	if (rmdir(dir) == -1)
		tool_error("%s: %s", dir, strerror(errno));
	return rv;
}

static int
cmd_replay(const struct cmd_args *a)
{
	const char *tmp = getenv("PVM_TMP"), *argv[TOOL_COORDD_ARGS + 1];
	char coordd[PATH_MAX], settings[512];
	int rv;

	if (a->argc > 1 && (strcmp(a->argv[1], "--") != 0 || a->argc < 3))
		return tool_usage_error("after FILE: -- COMMAND [ARG...]");
	if (tool_coordd_path(coordd, sizeof(coordd)) != 0)
		return EXIT_FAILURE;
	tool_coordd_args(argv, a, replay_coordd_opts);
	if ((rv = tool_coordd_check(coordd, argv, replay_coordd_opts,
	    settings, sizeof(settings))) != 0)
		return rv;
	if (replay_scan(a->argv[0], a->seen['v']) != 0)
		return EXIT_FAILURE;
	if (a->argc > 1)
		return replay_command(a, a->argv + 2);
	if (replay_start(a, 0, -1) == -1)
		return EXIT_FAILURE;
	printf("replaying %s for PVM_TMP=%s; pmon shutdown ends it\n",
	    a->argv[0], tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	return 0;
}
