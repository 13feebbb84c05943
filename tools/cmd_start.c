/*
 * pmon start: starts pmon-coordd for the virtual machine of $PVM_TMP and
 * waits until it says it is ready.  The coordinator daemonizes and spawns
 * one agent per host itself; it reports "ready ADDR:PORT" on the pipe
 * given with -r once it listens, so success here means tools can connect.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmon-tool.h"
#include "pmon.h"

#define START_TIMEOUT_MS	15000

static int	cmd_start(const struct cmd_args *);

static const struct option start_longopts[] = {
	{ "agent-buffer", required_argument, NULL, 'B' },
	{ "block", optional_argument, NULL, 'K' },
	{ "clock", required_argument, NULL, 'C' },
	{ "compress", required_argument, NULL, 'Z' },
	{ "fanout", required_argument, NULL, 'F' },
	{ "live", required_argument, NULL, 'L' },
	{ "time", required_argument, NULL, 'T' },
	{ "help", no_argument, NULL, 'h' },
	{ "horizon", required_argument, NULL, 'H' },
	{ "listen", required_argument, NULL, 'l' },
	{ "ring-size", required_argument, NULL, 'R' },
	{ "tasker", no_argument, NULL, 'S' },
	{ "no-tasker", no_argument, NULL, 'N' },
	{ "tool-queue", required_argument, NULL, 'Q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "lossless-wait", required_argument, NULL, 'W' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_start_entry = {
	"start", "[-v] [-C clock] [-l address] [-Q bytes] [-T exact|compact] "
	"[-B bytes] [-L ms] [-R bytes] [-W seconds] [-Z always|remote|never] "
	"[-H horizon] [-F fanout] [--block[=TIMEOUT]] [--[no-]tasker]",
	"start the coordinator and its agents for this virtual machine",
	"  -B, --agent-buffer BYTES  what an agent may queue for the\n"
	"                 coordinator before it leaves records in the rings\n"
	"                 (default 16 MiB; doc/capture.md)\n"
	"  -C, --clock ALGO  clock correction of the events' times: clc (the\n"
	"                 default), tc, kz, lamport or raw (doc/clock.md)\n"
	"  -F, --fanout K  on a machine of more than K hosts, a tree: an\n"
	"                 intermediate coordinator, spawned through PVM on\n"
	"                 the first host of every K, merges those K hosts'\n"
	"                 agents, and this one merges the intermediates\n"
	"                 (README, \"On a large virtual machine\")\n"
	"  -H, --horizon EVENTS[,DURATION]|DURATION|unlimited  how far back\n"
	"                 pmon frontier and the race checks look: the last\n"
	"                 EVENTS of each task (default 16384), the last\n"
	"                 DURATION (30s, 10m, 2h) of the stream, or everything\n"
	"                 (doc/state.md, \"Causality\")\n"
	"  -L, --live MS  the agents make what they have readable at least\n"
	"                 every MS ms, 1 to 100 (default 20)\n"
	"  -R, --ring-size BYTES  each task's record ring, a power of two\n"
	"                 from 4096 to 67108864 (default 1 MiB; a task's\n"
	"                 PMON_RING_SIZE wins)\n"
	"  -T, --time exact|compact  how records' times travel: nanosecond\n"
	"                 deltas (the default) or p2d2's log2 deltas, smaller\n"
	"                 and approximate (doc/capture.md)\n"
	"  -l, --listen ADDR[:PORT]  where the coordinator listens for agents\n"
	"                 (default: 127.0.0.1 while the machine has one host,\n"
	"                 else this host's address; doc/protocol.md)\n"
	"  -Z, --compress always|remote|never  whether the agents deflate\n"
	"                 what they send: remote (the default) unless the\n"
	"                 coordinator is on the agent's own host\n"
	"  --block[=TIMEOUT]  a task whose ring is full waits for room, up to\n"
	"                 TIMEOUT (500ms, 2s; default forever), instead of\n"
	"                 dropping the record (doc/capture.md)\n"
	"  --tasker       (the default) monitor every task spawned on the\n"
	"                 machine, however it is started (console, XPVM, any\n"
	"                 program): each agent starts its host's tasks\n"
	"                 (doc/tasker.md)\n"
	"  --no-tasker    monitor only what pmon exec starts, and its\n"
	"                 descendants\n"
	"  -Q, --tool-queue BYTES  what a tool may have queued before it loses\n"
	"                 events, or, for a lossless tool (pmon record,\n"
	"                 export, trace --lossless), before the agents are\n"
	"                 held back (default 8 MiB; doc/capture.md)\n"
	"  -W, --lossless-wait SECONDS  a lossless tool that reads nothing\n"
	"                 this long while the agents wait for it loses events\n"
	"                 from then on (default 10; 0: never, up to 3600)\n"
	"  -v, --verbose  print the coordinator's agent address (ADDR:PORT)\n"
	"                 and the capture settings; twice: also run\n"
	"                 pmon-coordd with -v\n"
	"\nA pvmd must run for $PVM_TMP.  pmon-coordd is taken from\n"
	"$PMON_COORDD or the directory of the pmon binary.  It makes the\n"
	"machine's secret, $PVM_TMP/pmon-secret.UID (mode 0600), which\n"
	"tools and agents must show it.\n",
	"+B:C:F:hH:l:L:Q:R:T:vW:Z:", start_longopts, 0, 0, cmd_start
};

static const char *
pvm_tmp(void)
{
	const char *d = getenv("PVM_TMP");

	return d != NULL && *d != '\0' ? d : "/tmp";
}

/*
 * A pvmd runs when PVM_TMP holds its pvmd.UID file and the pid in the
 * socket name it holds (".../pvmtmpPID.0") is alive.  A stale file would
 * make the coordinator hang in pvm_mytid, so it is reported here.
 */
static int
pvmd_check(void)
{
	char path[PATH_MAX], buf[PATH_MAX], *s;
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/pvmd.%u", pvm_tmp(),
	    (unsigned)getuid());
	if ((f = fopen(path, "r")) == NULL)
		return tool_error("no pvmd runs for this virtual machine "
		    "(PVM_TMP=%s): start pvmd first", pvm_tmp());
	s = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (s == NULL || (s = strstr(buf, "pvmtmp")) == NULL)
		return 0;	/* not the layout we know; let PVM decide */
	pid = strtol(s + 6, NULL, 10);
	if (pid > 0 && kill((pid_t)pid, 0) == -1 && errno == ESRCH)
		return tool_error("no pvmd runs for this virtual machine "
		    "(PVM_TMP=%s): %s names pvmd %ld, which is gone; "
		    "remove it and start pvmd", pvm_tmp(), path, pid);
	return 0;
}

/*
 * Does a coordinator answer on this machine's tool socket?  A connect
 * is enough to know; it needs no hello, hence no secret.
 */
static int
coordinator_running(void)
{
	struct sockaddr_un sun;
	int fd, up;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (pmon_coordinator_path(sun.sun_path, sizeof(sun.sun_path)) == -1)
		return 0;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	up = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return up;
}

int
tool_coordd_path(char *buf, size_t size)
{
	const char *env = getenv("PMON_COORDD");

	if (env != NULL && *env != '\0')
		snprintf(buf, size, "%s", env);
	else if (tool_sibling(buf, size, "pmon-coordd") == -1)
		return tool_error("cannot find the pmon binary's directory: "
		    "%s; set PMON_COORDD", strerror(errno));
	if (access(buf, X_OK) == -1)
		return tool_error("cannot run %s: %s (set PMON_COORDD)", buf,
		    strerror(errno));
	return 0;
}

/*
 * pmon start's options that are pmon-coordd's, and what the daemon calls
 * them: it alone judges their values (tool_coordd_check).
 */
static const struct tool_coordd_opt start_coordd_opts[] = {
	{ 'C', "-C", "--clock", NULL },
	{ 'F', "-F", "--fanout", NULL },
	{ 'Q', "-Q", "--tool-queue", NULL },
	{ 'l', "-l", "--listen", NULL },
	{ 'T', "-t", "--time", NULL },
	{ 'B', "-b", "--agent-buffer", NULL },
	{ 'L', "-i", "--live", NULL },
	{ 'R', "-s", "--ring-size", NULL },
	{ 'Z', "-z", "--compress", NULL },
	{ 'W', "-W", "--lossless-wait", NULL },
	{ 'H', "-H", "--horizon", NULL },
	{ 'K', "-k", "--block", "forever" },
	{ 0, NULL, NULL, NULL }
};

/*
 * pmon-coordd's command line for a command's options (opts: those that
 * are the daemon's), "-v" when it was given twice, into argv, which has
 * room for TOOL_COORDD_ARGS.  Returns the number of arguments.
 */
int
tool_coordd_args(const char **argv, const struct cmd_args *a,
    const struct tool_coordd_opt *opts)
{
	const char *v;
	int i = 0;

	argv[i++] = "pmon-coordd";
	if (a->seen['v'] > 1)
		argv[i++] = "-v";
	for (; opts->ours != 0; opts++) {
		if ((v = a->arg[(unsigned char)opts->ours]) == NULL &&
		    a->seen[(unsigned char)opts->ours])
			v = opts->bare;
		if (v == NULL)
			continue;
		argv[i++] = opts->flag;
		argv[i++] = v;
	}
	argv[i] = NULL;
	return i;
}

/* Ours, and -T unless --no-tasker. */
static void
coordd_args(const char **argv, const struct cmd_args *a)
{
	int i = tool_coordd_args(argv, a, start_coordd_opts);

	if (!a->seen['N'])
		argv[i++] = "-T";
	argv[i] = NULL;
}

/*
 * In the child: runs pmon-coordd at path with argv (room for two more
 * arguments), its ready line to wfd (-r), stdin and stdout on
 * /dev/null, stderr on logfd unless it is -1.
 */
void
tool_coordd_exec(const char *path, const char **argv, int wfd, int logfd)
{
	char fdarg[16];
	int i, null;

	if ((null = open("/dev/null", O_RDWR)) != -1) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	if (logfd != -1)
		dup2(logfd, STDERR_FILENO);
	fcntl(wfd, F_SETFD, 0);		/* the only fd it must inherit */
	snprintf(fdarg, sizeof(fdarg), "%d", wfd);
	for (i = 0; argv[i] != NULL; i++)
		;
	argv[i++] = "-r";
	argv[i++] = fdarg;
	argv[i] = NULL;
	execv(path, (char *const *)argv);
	fprintf(stderr, "pmon %s: cannot run %s: %s\n", tool_command_name(),
	    path, strerror(errno));
	_exit(127);
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/*
 * Reads the coordinator's first line from fd into buf within the timeout.
 * Returns 1 with a line, 0 at end of file, -1 on timeout or error.
 */
int
tool_read_ready(int fd, char *buf, size_t size)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long deadline = now_ms() + START_TIMEOUT_MS, left;
	size_t len = 0;
	ssize_t n;

	while (len < size - 1 && memchr(buf, '\n', len) == NULL) {
		if ((left = deadline - now_ms()) <= 0)
			return -1;
		if ((n = poll(&pfd, 1, (int)left)) == -1 && errno != EINTR)
			return -1;
		if (n <= 0)
			continue;	/* timed out or interrupted */
		if ((n = read(fd, buf + len, size - 1 - len)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return len > 0 ? 1 : 0;
}

/* The daemon's flag at the start of msg, if any, as the command's. */
static void
coordd_words(char *msg, size_t size, const struct tool_coordd_opt *opts)
{
	char said[1024];
	size_t n;

	for (; opts->ours != 0; opts++) {
		n = strlen(opts->flag);
		if (strncmp(msg, opts->flag, n) != 0 ||
		    (msg[n] != ' ' && msg[n] != ':'))
			continue;
		snprintf(said, sizeof(said), "%s", msg + n);
		snprintf(msg, size, "%s%s", opts->name, said);
		return;
	}
}

/* In the child: pmon-coordd -n, its output into wfd. */
static void __attribute__((noreturn))
coordd_check_exec(const char *path, const char **argv, int wfd)
{
	const char *args[TOOL_COORDD_ARGS + 2];
	int i, null;

	if ((null = open("/dev/null", O_RDONLY)) != -1)
		dup2(null, STDIN_FILENO);
	dup2(wfd, STDOUT_FILENO);
	dup2(wfd, STDERR_FILENO);
	args[0] = argv[0];
	args[1] = "-n";
	for (i = 1; argv[i] != NULL && i < TOOL_COORDD_ARGS; i++)
		args[i + 1] = argv[i];
	args[i + 1] = NULL;
	execv(path, (char *const *)args);
	fprintf(stderr, "cannot run %s: %s\n", path, strerror(errno));
	_exit(127);
}

/*
 * Waits for our child pid.  0 when it exited with status 0, else -1 with
 * how it ended in why ("exited with status 2", "was killed by signal
 * 9"), or empty when that is not known (waitpid failed).
 */
static int
child_wait(pid_t pid, char *why, size_t size)
{
	int status;

	why[0] = '\0';
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		snprintf(why, size, "was killed by signal %d",
		    WTERMSIG(status));
	else if (WIFEXITED(status))
		snprintf(why, size, "exited with status %d",
		    WEXITSTATUS(status));
	return -1;
}

/*
 * pmon-coordd -n with argv's options: the daemon alone judges its
 * options.  0 with the settings they make in out; else a usage error in
 * the command's words (opts: its options that are the daemon's).
 */
int
tool_coordd_check(const char *path, const char **argv,
    const struct tool_coordd_opt *opts, char *out, size_t size)
{
	char buf[1024], why[64], *msg;
	size_t len = 0;
	ssize_t n;
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return tool_error("pipe: %s", strerror(errno));
	if ((pid = fork()) == -1)
		return tool_error("fork: %s", strerror(errno));
	if (pid == 0)
		coordd_check_exec(path, argv, fds[1]);
	close(fds[1]);
	while (len < sizeof(buf) - 1 && ((n = read(fds[0], buf + len,
	    sizeof(buf) - 1 - len)) > 0 || (n == -1 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	buf[len] = '\0';
	close(fds[0]);
	if (child_wait(pid, why, sizeof(why)) == 0) {
		snprintf(out, size, "%s", buf);
		return 0;
	}
	buf[strcspn(buf, "\n")] = '\0';
	msg = strstr(buf, "fatal: ") != NULL ? strstr(buf, "fatal: ") + 7 :
	    buf;
	coordd_words(msg, sizeof(buf) - (size_t)(msg - buf), opts);
	return tool_usage_error("%s", *msg ? msg : "pmon-coordd refused the "
	    "options");
}

/* Explains why the coordinator never said ready. */
int
tool_start_failed(pid_t pid, int got)
{
	char why[64];
	int status;

	if (got == -1) {
		if (waitpid(pid, &status, WNOHANG) == 0)
			kill(pid, SIGTERM);	/* our child, still starting */
		return tool_error("pmon-coordd did not report ready within "
		    "%d s (see its log in %s)", START_TIMEOUT_MS / 1000,
		    pvm_tmp());
	}
	if (child_wait(pid, why, sizeof(why)) == -1 && why[0] != '\0')
		return tool_error("pmon-coordd %s before it was ready", why);
	return tool_error("pmon-coordd stopped before it was ready (see its "
	    "log in %s)", pvm_tmp());
}

static int
cmd_start(const struct cmd_args *a)
{
	const char *argv[TOOL_COORDD_ARGS + 3];
	char path[PATH_MAX], line[256], settings[512];
	int fds[2], got, status;
	pid_t pid;

	if (a->seen['S'] && a->seen['N'])
		return tool_usage_error("--tasker and --no-tasker together");
	if (tool_coordd_path(path, sizeof(path)) != 0)
		return EXIT_FAILURE;
	coordd_args(argv, a);
	if ((got = tool_coordd_check(path, argv, start_coordd_opts, settings,
	    sizeof(settings))) != 0)
		return got;
	if (pvmd_check() != 0)
		return EXIT_FAILURE;
	if (coordinator_running())
		return tool_error("a pmon coordinator already runs for this "
		    "virtual machine (PVM_TMP=%s)", pvm_tmp());
	if (pipe2(fds, O_CLOEXEC) == -1)
		return tool_error("pipe: %s", strerror(errno));
	if ((pid = fork()) == -1)
		return tool_error("fork: %s", strerror(errno));
	if (pid == 0)
		tool_coordd_exec(path, argv, fds[1], -1);
	close(fds[1]);
	got = tool_read_ready(fds[0], line, sizeof(line));
	close(fds[0]);
	if (got != 1)
		return tool_start_failed(pid, got);
	if (strncmp(line, "ready ", 6) != 0)
		return tool_error("pmon-coordd said '%s' instead of ready",
		    line);
	waitpid(pid, &status, WNOHANG);	/* the daemon's first half */
	if (a->seen['v'])
		printf("%s\n%s", line + 6, settings);
	return 0;
}
