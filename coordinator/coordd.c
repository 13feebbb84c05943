/*
 * pmon-coordd: start-up, daemonizing and the event loop.  Everything
 * else lives in the other coordinator files (coord.h), which the tests
 * link without this one.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "capture.h"
#include "coord.h"
#include "horizon.h"
#include "log.h"
#include "paths.h"
#include "secret.h"

static struct coord coord;
static int ready_pipe = -1;	/* to the parent waiting in daemonize() */
static int foreground;
static int sock_ours;		/* we made the tool socket: remove it */
static int secret_ours;		/* ...and the secret's file */
static const char *replay_path;	/* -R: serve this recording */
static int horizon_set;		/* -H: the causal links' horizon */
static uint64_t horizon_events, horizon_ns;
static int check_only;		/* -n: check the options and exit */
static const char *relay_root;	/* -U: an intermediate of this root */
static const char *relay_spec;	/* -S: its subtree and hosts */

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: pmon-coordd [-dnNTv] [-A agent-path] "
	    "[-b agent-buffer-bytes] [-C clock-correction] [-H horizon] "
	    "[-i live-ms] [-k block-timeout] [-l address] "
	    "[-Q tool-queue-bytes]\n       [-r fd] [-s ring-bytes] "
	    "[-t exact|compact] [-W lossless-wait-s] "
	    "[-z always|remote|never] [-F fanout]\n"
	    "       pmon-coordd -R recording [-dnv] [-H horizon] [-Q bytes] "
	    "[-r fd]\n"
	    "       pmon-coordd -U root-address -S subtree:host,... [-v] "
	    "[-l address]\n");
	exit(1);
}

/*
 * -n: the options are good (each was checked as it was read); print
 * the settings they make, as pmon start -v shows them, and exit.
 */
static void __attribute__((noreturn))
print_settings(void)
{
	printf("capture time=%s agent_buffer=", coord.agent_time);
	if (coord.agent_buffer[0] != '\0')
		printf("%s", coord.agent_buffer);
	else
		printf("%u", CAPTURE_BUFFER_DEFAULT);
	if (coord.agent_live[0] != '\0')
		printf(" live_ms=%s", coord.agent_live);
	else
		printf(" live_ms=%d", CAPTURE_LIVE_DEFAULT);
	printf(" ring=%s compress=%s block=%s\n", coord.agent_ring[0] ?
	    coord.agent_ring : "default", coord.agent_compress[0] ?
	    coord.agent_compress : "remote", coord.agent_block[0] ?
	    coord.agent_block : "off");
	printf("tools queue=%llu lossless_wait_s=%llu\n",
	    (unsigned long long)(coord.tool_high ? coord.tool_high :
	    COORD_TOOL_HIGH),
	    (unsigned long long)coord.lossless_wait_ms / 1000);
	exit(fflush(stdout) == 0 ? 0 : 1);
}

/*
 * Preloaded with the instrumentation, the coordinator would monitor
 * itself and pass the library on to the agents it spawns: run again
 * without it.
 */
static void
shed_preload(char *argv[])
{
	const char *pre = getenv("LD_PRELOAD");

	if (pre == NULL || strstr(pre, "libpmon-pvm") == NULL)
		return;
	unsetenv("LD_PRELOAD");
	execv("/proc/self/exe", argv);
	fatal("re-executing without LD_PRELOAD");
}

/* A binary beside ours: pmon-agentd, or pmon-coordd itself. */
static void
path_beside(char *buf, size_t size, const char *name)
{
	char self[PATH_MAX];
	ssize_t n;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		fatal("readlink /proc/self/exe");
	self[n] = '\0';
	if ((size_t)snprintf(buf, size, "%s/%s", dirname(self), name) >=
	    size)
		fatalx("%s path too long", name);
}

/*
 * Forks; the parent stays until the child is ready (exit 0) or gone
 * (exit 1), so whoever started us learns whether it worked.
 */
static void
daemonize(void)
{
	int p[2], null;
	ssize_t n;
	pid_t pid;
	char b;

	if (pipe2(p, O_CLOEXEC) == -1)
		fatal("pipe");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid > 0) {
		close(p[1]);
		if (coord.ready_fd != -1)
			close(coord.ready_fd);
		while ((n = read(p[0], &b, 1)) == -1 && errno == EINTR)
			;
		_exit(n == 1 ? 0 : 1);
	}
	close(p[0]);
	ready_pipe = p[1];
	if (setsid() == -1)
		fatal("setsid");
	if ((null = open("/dev/null", O_RDWR)) == -1)
		fatal("/dev/null");
	dup2(null, STDIN_FILENO);
	dup2(null, STDOUT_FILENO);
	if (null > STDERR_FILENO)
		close(null);
}

/* Once ready, a daemon logs to $PVM_TMP/pmon-coordd.UID.log. */
static void
open_log(void)
{
	char path[PATH_MAX];
	int fd;

	if (pmon_runtime_path(path, sizeof(path) - 4, "coordd") == -1) {
		log_warnx("log file path too long; logging to stderr");
		return;
	}
	strcat(path, ".log");
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd == -1) {
		log_warn("%s", path);
		return;
	}
	log_info("logging to %s", path);
	dup2(fd, STDERR_FILENO);
	close(fd);
	log_reopened();
}

/* Once ready, a daemon logs to $PVM_TMP/pmon-coordd.UID.log. */
static void
ready_hook(struct coord *c)
{
	(void)c;
	if (foreground)
		return;
	open_log();
	if (ready_pipe != -1) {
		if (write(ready_pipe, "r", 1) != 1)
			log_warn("telling the parent we are ready");
		close(ready_pipe);
		ready_pipe = -1;
	}
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	static int signalled;
	struct coord *c = arg;

	(void)what;
	/* pvmd sends SIGTERM as it goes: only a second signal hurries. */
	if (signalled++) {
		log_warnx("signal %d again: exiting now", (int)sig);
		event_base_loopexit(c->base, NULL);
		return;
	}
	coord_shutdown(c, sig == SIGTERM ? "SIGTERM" : "SIGINT");
}

static int
parse_fd(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0' || v < 3 || v > INT_MAX ||
	    fcntl((int)v, F_GETFD) == -1)
		fatalx("-r %s: not an open file descriptor above 2", s);
	fcntl((int)v, F_SETFD, FD_CLOEXEC);
	return (int)v;
}

/* A decimal number from lo to hi; fatal otherwise (bad start-up). */
static unsigned long long
parse_num(const char *opt, const char *s, unsigned long long lo,
    unsigned long long hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || s[0] < '0' || s[0] > '9' || v < lo ||
	    v > hi)
		fatalx("%s %s: not a number from %llu to %llu", opt, s, lo, hi);
	return v;
}

/*
 * A capture setting for the agents: a decimal number from lo to hi,
 * kept as the agents will be given it.
 */
static void
agent_arg(char *dst, size_t size, const char *opt, const char *s,
    unsigned long long lo, unsigned long long hi)
{
	snprintf(dst, size, "%llu", parse_num(opt, s, lo, hi));
}

/* Checks that nothing stands in our way, before daemonizing. */
static void
preflight(void)
{
	char why[PATH_MAX + 128], path[108];
	int rv;

	if (replay_path == NULL && !coord_pvmd_alive(why, sizeof(why)))
		fatalx("%s", why);
	if (replay_path != NULL && access(replay_path, R_OK) == -1)
		fatal("-R %s", replay_path);
	if (pmon_runtime_path(path, sizeof(path), PMON_SOCK_COORD) == -1)
		fatal("tool socket path");
	if ((rv = coord_tool_probe(path)) == 1)
		fatalx("another coordinator already answers on %s", path);
	if (rv == -1)
		fatal("%s", path);
	if (replay_path == NULL && coord.spawn_agents &&
	    access(coord.agent_path, X_OK) == -1)
		fatal("agent %s", coord.agent_path);
}

/*
 * Removes the files that are ours: the tool socket and the secret, at
 * the end and on every exit() (fatal() included) after they were made.
 */
static void
remove_files(void)
{
	if (sock_ours && unlink(coord.sock_path) == -1)
		log_warn("%s", coord.sock_path);
	if (secret_ours && unlink(coord.secret_path) == -1)
		log_warn("%s", coord.secret_path);
	sock_ours = secret_ours = 0;
}

/*
 * A new secret at every start, in $PVM_TMP/pmon-secret.UID.  A valid
 * one left there by a coordinator that died is taken over: its agents
 * may still run, and come back to us with it (doc/capture.md).  We hold
 * the tool socket, so no other coordinator of this machine runs.
 */
static void
secret_create(struct coord *c)
{
	const char *why;

	if (pmon_runtime_path(c->secret_path, sizeof(c->secret_path),
	    PMON_FILE_SECRET) == -1)
		fatal("secret file path");
	if (pmon_secret_read(c->secret_path, c->secret, &why) == 0) {
		secret_ours = 1;
		log_info("taking over the secret in %s", c->secret_path);
		return;
	}
	if (pmon_secret_make(c->secret) == -1)
		fatal("making the secret");
	if (pmon_secret_write(c->secret_path, c->secret) == -1)
		fatal("writing the secret to %s", c->secret_path);
	secret_ours = 1;
	log_debug("the secret is in %s", c->secret_path);
}

/*
 * -R: the tool socket and its secret as live, a recording instead of
 * pvmd and agents (coord_replay.c).
 */
static void
start_replay(void)
{
	if (coord_tool_listen(&coord) == -1)
		exit(1);
	sock_ours = 1;
	secret_create(&coord);
	if (coord_replay_open(&coord, replay_path) == -1)
		exit(1);
}

static void
start(struct event_base *base)
{
	static struct event *sig[2];

	if (coord_init(&coord, base) == -1)
		fatal("%s", __func__);
	if (horizon_set)
		state_set_horizon(coord.state, horizon_events, horizon_ns);
	coord.ready_hook = ready_hook;
	atexit(remove_files);
	if (replay_path != NULL)
		start_replay();
	else {
		if (coord_pvm_init(&coord) == -1 ||
		    coord_tool_listen(&coord) == -1)
			exit(1);
		sock_ours = 1;
		/* After the bind, which only one of two racing starts wins. */
		secret_create(&coord);
		if (coord_pvm_choose_listen(&coord) == -1 ||
		    coord_agent_listen(&coord) == -1 ||
		    coord_pvm_watch(&coord) == -1)
			exit(1);
	}
	sig[0] = evsignal_new(base, SIGTERM, signal_cb, &coord);
	sig[1] = evsignal_new(base, SIGINT, signal_cb, &coord);
	if (sig[0] == NULL || sig[1] == NULL || evsignal_add(sig[0], NULL) ||
	    evsignal_add(sig[1], NULL))
		fatalx("evsignal_new");
	if (replay_path == NULL && coord.spawn_agents)
		coord_pvm_spawn_all(&coord);
	else
		coord_check_ready(&coord);
}

/*
 * -U: an intermediate coordinator of a tree, spawned by its root through
 * PVM (doc/protocol.md, "A tree of coordinators").  It runs in the
 * foreground, as pvmd started it, logs to $PVM_TMP/pmon-relay.UID.log,
 * has the secret from its environment, and ends when its root does.
 */
static void
run_relay(int verbose)
{
	static struct event *sig[2];
	struct event_base *base;
	char path[PATH_MAX];
	char *v = getenv(PMON_SECRET_ENV);
	int fd;

	if (v == NULL || !pmon_secret_valid(v))
		fatalx("%s holds no secret: an intermediate is started by "
		    "its root (pmon start --fanout)", PMON_SECRET_ENV);
	memcpy(coord.secret, v, PMON_SECRET_LEN + 1);
	explicit_bzero(v, strlen(v));
	unsetenv(PMON_SECRET_ENV);
	if (pmon_runtime_path(path, sizeof(path) - 4, "relay") == 0 &&
	    (fd = open(strcat(path, ".log"), O_WRONLY | O_CREAT | O_APPEND |
	    O_CLOEXEC, 0600)) != -1) {
		dup2(fd, STDERR_FILENO);
		close(fd);
		log_reopened();
	}
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	coord.verbose = verbose;
	coord.spawn_agents = 0;
	sig[0] = evsignal_new(base, SIGTERM, signal_cb, &coord);
	sig[1] = evsignal_new(base, SIGINT, signal_cb, &coord);
	if (sig[0] == NULL || sig[1] == NULL || evsignal_add(sig[0], NULL) ||
	    evsignal_add(sig[1], NULL))
		fatalx("evsignal_new");
	if (coord_relay_init(&coord, relay_root, relay_spec) == -1 ||
	    coord_init(&coord, base) == -1 || coord_pvm_init(&coord) == -1 ||
	    coord_pvm_choose_listen(&coord) == -1 ||
	    coord_agent_listen(&coord) == -1 ||
	    coord_pvm_watch(&coord) == -1 ||
	    coord_pvm_relay_ready(&coord) == -1)
		exit(1);
	log_info("intermediate %d of root %s: agents dial %s",
	    coord.relay->subtree, relay_root, coord.listen_addr);
	event_base_dispatch(base);
	log_info("exiting");
	coord_pvm_exit(&coord);
	coord_free(&coord);
	event_base_free(base);
}

int
main(int argc, char *argv[])
{
	struct event_config *cfg;
	struct event_base *base;
	int algo, ch, verbose = 0;
	uint64_t block_ns;

	log_init("pmon-coordd", 0);
	shed_preload(argv);
	coord.ready_fd = -1;
	coord.spawn_agents = 1;
	clock_params_default(&coord.clock_params);
	strcpy(coord.agent_time, "exact");
	coord.lossless_wait_ms = COORD_LOSSLESS_WAIT_MS;
	while ((ch = getopt(argc, argv, "A:b:C:dF:H:i:k:l:nNQ:R:r:s:S:Tt:U:vW:z:")) !=
	    -1) {
		switch (ch) {
		case 's':
			agent_arg(coord.agent_ring, sizeof(coord.agent_ring),
			    "-s", optarg, CAPTURE_RING_MIN, CAPTURE_RING_MAX);
			if ((strtoul(optarg, NULL, 10) &
			    (strtoul(optarg, NULL, 10) - 1)) != 0)
				fatalx("-s %s: not a power of two", optarg);
			break;
		case 't':
			if (pack_time_lookup(optarg) == -1)
				fatalx("-t %s: exact or compact", optarg);
			snprintf(coord.agent_time, sizeof(coord.agent_time),
			    "%s", optarg);
			break;
		case 'z':
			if (capture_compress_lookup(optarg) == -1)
				fatalx("-z %s: always, remote or never", optarg);
			snprintf(coord.agent_compress,
			    sizeof(coord.agent_compress), "%s", optarg);
			break;
		case 'T':
			coord.agent_tasker = 1;
			break;
		case 'k':
			if (capture_block_parse(optarg, &block_ns) == -1 ||
			    strlen(optarg) >= sizeof(coord.agent_block))
				fatalx("-k %s: forever, or a whole number of "
				    "ms or s up to an hour", optarg);
			strcpy(coord.agent_block, optarg);
			break;
		case 'b':
			agent_arg(coord.agent_buffer, sizeof(coord.agent_buffer),
			    "-b", optarg, CAPTURE_BUFFER_MIN,
			    CAPTURE_BUFFER_MAX);
			break;
		case 'i':
			agent_arg(coord.agent_live, sizeof(coord.agent_live),
			    "-i", optarg, CAPTURE_LIVE_MIN, CAPTURE_LIVE_MAX);
			break;
		case 'Q':
			coord.tool_high = parse_num("-Q", optarg,
			    COORD_TOOL_HIGH_MIN, COORD_TOOL_HIGH_MAX);
			break;
		case 'W':
			/* Seconds; 0: never degraded. */
			coord.lossless_wait_ms = 1000 * parse_num("-W",
			    optarg, 0, COORD_LOSSLESS_WAIT_MAX / 1000);
			break;
		case 'C':
			if ((algo = clock_algo_lookup(optarg)) == -1)
				fatalx("-C %s: not a clock correction (clc, "
				    "tc, kz, lamport or raw)", optarg);
			coord.clock_params.algo = (enum clock_algo)algo;
			break;
		case 'F':
			coord.fanout = (unsigned)parse_num("-F", optarg, 1,
			    COORD_MAX_AGENTS);
			break;
		case 'U':
			relay_root = optarg;
			break;
		case 'S':
			relay_spec = optarg;
			break;
		case 'A':
			if (strlen(optarg) >= sizeof(coord.agent_path))
				fatalx("-A: path too long");
			strcpy(coord.agent_path, optarg);
			break;
		case 'd':
			foreground = 1;
			break;
		case 'H':
			if (horizon_parse(optarg, &horizon_events,
			    &horizon_ns) == -1)
				fatalx("-H %s: EVENTS, DURATION (30s, 10m, "
				    "2h), EVENTS,DURATION or unlimited",
				    optarg);
			horizon_set = 1;
			break;
		case 'l':
			if (strlen(optarg) >= sizeof(coord.listen_host))
				fatalx("-l: address too long");
			strcpy(coord.listen_host, optarg);
			break;
		case 'n':
			check_only = 1;
			break;
		case 'N':
			coord.spawn_agents = 0;
			break;
		case 'r':
			coord.ready_fd = parse_fd(optarg);
			break;
		case 'R':
			replay_path = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (check_only)
		print_settings();
	log_setverbose(verbose);
	signal(SIGPIPE, SIG_IGN);
	if (coord.agent_path[0] == '\0')
		path_beside(coord.agent_path, sizeof(coord.agent_path),
		    "pmon-agentd");
	path_beside(coord.coordd_path, sizeof(coord.coordd_path),
	    "pmon-coordd");
	if ((relay_root == NULL) != (relay_spec == NULL))
		fatalx("-U and -S go together");
	if (relay_root != NULL) {
		run_relay(verbose);
		return 0;
	}
	preflight();
	if (!foreground)
		daemonize();
	/*
	 * Precise timers: libevent's coarse clock ticks in 4 ms steps on
	 * some kernels, too coarse for the stop path (doc/control.md).
	 */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == -1 ||
	    (base = event_base_new_with_config(cfg)) == NULL)
		fatalx("event_base_new");
	event_config_free(cfg);
	coord.verbose = verbose;
	start(base);
	event_base_dispatch(base);
	log_info("exiting");
	remove_files();
	coord_pvm_exit(&coord);
	coord_free(&coord);
	event_base_free(base);
	return 0;
}
