/*
 * pmon-agentd: the per-host agent.
 *
 *	pmon-agentd [-v] [-D] [-O NS] [-s FILE] [-t exact|compact] [-b BYTES]
 *	    [-i MS] [-R BYTES] [-z always|remote|never] [-k TIMEOUT] [-T]
 *	    [-c ADDR:PORT]
 *	pmon-agentd -S -p LIBRARY [-v]
 *
 * -c names the coordinator (which spawns the agents with it); -D is the
 * dump mode: no coordinator, every frame is printed on stdout.  -t, -b,
 * -i, -R and -z are the capture settings the coordinator passes on from
 * `pmon start` (doc/capture.md): the time encoding of the records, the
 * bytes queued for the coordinator above which rings are not drained,
 * the longest time between two sync flushes, the ring size it
 * publishes for the tasks of its host, and whether its stream is
 * deflated (remote, the default: unless the coordinator is on this
 * host).  -k is blocking mode: it tells every task whose ring it takes
 * to wait up to TIMEOUT (forever, 500ms, 2s) for room in a full ring
 * instead of dropping the record.  -T starts the host's task starter
 * (pmon-agentd -S, node-agent/tasker.c), which starts every task
 * spawned on the host instrumented; an orderly exit of the agent stops
 * it.
 *
 * The agent tells the coordinator the virtual machine's secret: the one
 * in FILE with -s, else the one in PMON_SECRET (which is how it reaches
 * the agents the coordinator spawns), else the one in this host's
 * $PVM_TMP/pmon-secret.UID.  PMON_SECRET leaves the environment first
 * thing, and the secret is never logged.
 *
 * -O NS, or PMON_TEST_CLOCK_OFFSET_NS=NS in the environment (which is how
 * it reaches agents spawned by the coordinator: they get their pvmd's
 * environment), is for tests only: NS (signed, in nanoseconds) is added
 * to the time of every record this agent ships, as if this host's clock
 * were off by that much.  -O wins over the environment.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "log.h"
#include "paths.h"
#include "secret.h"
#include "tasker.h"

static struct agent agent;

_Static_assert(CAPTURE_BLOCK_FOREVER == RING_BLOCK_FOREVER,
    "-k forever is the ring's forever");

/* A decimal number from lo to hi; fatal otherwise (bad start-up). */
static unsigned long long
parse_num(const char *opt, const char *s, unsigned long long lo,
    unsigned long long hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 ||
	    v < lo || v > hi)
		fatalx("%s %s: not a number from %llu to %llu", opt, s, lo, hi);
	return v;
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: pmon-agentd [-v] [-D] [-O NS] [-s FILE] "
	    "[-t exact|compact] [-b BYTES] [-i MS] [-R BYTES]\n"
	    "    [-z always|remote|never] [-k TIMEOUT] "
	    "[-c ADDR:PORT]\n"
	    "  -t MODE  time encoding of the records (default exact)\n"
	    "  -b BYTES stop draining rings above this much output\n"
	    "           (default 16777216)\n"
	    "  -i MS    sync-flush the stream at least every MS ms, 1-100\n"
	    "           (default 20)\n"
	    "  -R BYTES ring size for this host's tasks without\n"
	    "           PMON_RING_SIZE (a power of two, 4096-67108864)\n"
	    "  -z WHEN  deflate the stream always, never, or when the\n"
	    "           coordinator is on another host (remote, the default)\n"
	    "  -k TIMEOUT  blocking mode: a task waits up to TIMEOUT for room\n"
	    "           in its full ring (forever, or e.g. 500ms, 2s)\n"
	    "  -T       start this host's task starter: every task spawned\n"
	    "           on the host is started instrumented (tasker.c)\n"
	    "  -O NS    test only: add NS nanoseconds to every record's time\n"
	    "           (also PMON_TEST_CLOCK_OFFSET_NS=NS in the environment)\n"
	    "  -s FILE  the virtual machine's secret (default: PMON_SECRET,\n"
	    "           else $PVM_TMP/pmon-secret.UID)\n");
	exit(2);
}

/*
 * The test-only clock offset, from -O (opt) or else the environment.  A
 * value that does not parse is fatal: a test that asked for an offset
 * must not run without it.
 */
static void
clock_offset_init(const char *opt)
{
	const char *s = opt, *name = "-O", *why;
	int64_t ns;

	if (s == NULL) {
		s = getenv("PMON_TEST_CLOCK_OFFSET_NS");
		name = "PMON_TEST_CLOCK_OFFSET_NS";
	}
	if (s == NULL)
		return;
	if (agent_parse_clock_offset(s, &ns, &why) == -1)
		fatalx("%s \"%s\": %s", name, s, why);
	agent_set_clock_offset(ns);
	/* Loud on purpose: every time this agent ships is now false. */
	if (ns != 0)
		log_warnx("test only: %+" PRId64 " ns added to the time of "
		    "every record", ns);
}

/*
 * Takes PMON_SECRET out of the environment before anything could
 * inherit it: its value is overwritten where it lies (so that it no
 * longer shows in /proc/PID/environ either) and the variable is unset.
 * Returns 1 with a valid secret in out, 0 without one, -1 when the
 * variable holds something else.
 */
static int
secret_from_env(char *out)
{
	char *v = getenv(PMON_SECRET_ENV);
	int rv;

	out[0] = '\0';
	if (v == NULL)
		return 0;
	if ((rv = pmon_secret_valid(v) ? 1 : -1) == 1)
		memcpy(out, v, PMON_SECRET_LEN + 1);
	explicit_bzero(v, strlen(v));
	unsetenv(PMON_SECRET_ENV);
	return rv;
}

/*
 * The secret for the coordinator: -s FILE, else PMON_SECRET (env: what
 * secret_from_env found), else this host's secret file.  Fatal without
 * one: the coordinator would refuse us anyway.
 */
static void
secret_init(char *out, const char *file, int env)
{
	char path[PATH_MAX];
	const char *why;

	if (file != NULL) {
		if (pmon_secret_read(file, out, &why) == -1)
			fatalx("-s %s: %s", file, why);
		return;
	}
	if (env == -1)
		fatalx("%s holds no secret (64 lowercase hex digits)",
		    PMON_SECRET_ENV);
	if (env == 1)
		return;
	if (pmon_runtime_path(path, sizeof(path), PMON_FILE_SECRET) == -1)
		fatalx("no secret: %s is unset and PVM_TMP is too long",
		    PMON_SECRET_ENV);
	if (pmon_secret_read(path, out, &why) == -1)
		fatalx("no secret: %s is unset, no -s FILE, and %s: %s",
		    PMON_SECRET_ENV, path, why);
}

static void
signal_cb(int sig, short what, void *arg)
{
	(void)what;
	log_info("signal %d: exiting", sig);
	agent_exit(arg, 0);
}

static void
watch_signal(struct event_base *base, int sig)
{
	struct event *ev = evsignal_new(base, sig, signal_cb, &agent);

	if (ev == NULL || event_add(ev, NULL) == -1)
		fatalx("cannot watch signal %d", sig);
}

int
main(int argc, char *argv[])
{
	struct event_config *cfg;
	struct event_base *base;
	const char *coord = NULL, *offset = NULL, *secret_file = NULL;
	char secret[PMON_SECRET_LEN + 1];
	int ch, verbose = 0, dump = 0, env_secret, time_mode = PACK_TIME_EXACT;
	int compress = CAPTURE_COMPRESS_REMOTE, tasker = 0;
	size_t high_water = AGENT_HIGH_WATER;
	unsigned live_ms = AGENT_LIVE_MS;
	unsigned long ring_size = 0;
	uint64_t block_ns = RING_BLOCK_NEVER;

	/* The host's task starter: the same executable (tasker.c). */
	if (argc > 1 && strcmp(argv[1], "-S") == 0)
		return tasker_main(argc, argv);
	env_secret = secret_from_env(secret);
	while ((ch = getopt(argc, argv, "vDO:R:Tb:c:i:k:s:t:z:")) != -1) {
		switch (ch) {
		case 'R':
			ring_size = (unsigned long)parse_num("-R", optarg,
			    CAPTURE_RING_MIN, CAPTURE_RING_MAX);
			if ((ring_size & (ring_size - 1)) != 0)
				fatalx("-R %s: not a power of two", optarg);
			break;
		case 't':
			if ((time_mode = pack_time_lookup(optarg)) == -1)
				fatalx("-t %s: exact or compact", optarg);
			break;
		case 'z':
			if ((compress = capture_compress_lookup(optarg)) == -1)
				fatalx("-z %s: always, remote or never", optarg);
			break;
		case 'k':
			if (capture_block_parse(optarg, &block_ns) == -1)
				fatalx("-k %s: forever, or a whole number of "
				    "ms or s up to an hour (500ms, 2s)", optarg);
			break;
		case 'b':
			high_water = parse_num("-b", optarg,
			    CAPTURE_BUFFER_MIN, CAPTURE_BUFFER_MAX);
			break;
		case 'i':
			live_ms = (unsigned)parse_num("-i", optarg,
			    CAPTURE_LIVE_MIN, CAPTURE_LIVE_MAX);
			break;
		case 'v':
			verbose++;
			break;
		case 'D':
			dump = 1;
			break;
		case 'T':
			tasker = 1;
			break;
		case 'c':
			coord = optarg;
			break;
		case 'O':
			offset = optarg;
			break;
		case 's':
			secret_file = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || (coord == NULL) == !dump)
		usage();
	log_init("pmon-agentd", verbose);
	if (!dump)
		secret_init(secret, secret_file, env_secret);
	clock_offset_init(offset);
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Precise timers: the stop poll ticks every millisecond, and
	 * libevent's coarse clock moves in 4 ms steps on some kernels.
	 */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == -1 ||
	    (base = event_base_new_with_config(cfg)) == NULL ||
	    agent_init(&agent, base) == -1)
		fatalx("cannot initialise libevent");
	event_config_free(cfg);
	agent.dump = dump;
	agent.time_mode = time_mode;
	agent.high_water = high_water;
	agent.live_ms = live_ms;
	agent.compress = compress;
	agent.block_ns = block_ns;
	if (live_ms < AGENT_DRAIN_MS) {
		/* The drain timer is what notices the live interval. */
		struct timeval tv = { 0, (suseconds_t)live_ms * 1000 };

		if (event_add(agent.ev_timer, &tv) == -1)
			fatalx("cannot set the drain timer");
	}
	if (!dump)
		memcpy(agent.secret, secret, sizeof(agent.secret));
	explicit_bzero(secret, sizeof(secret));
	if (agent_pvm_init(&agent) == -1) {
		if (!dump)
			fatalx("cannot enrol in PVM: is pvmd running?");
		log_warnx("not enrolled in PVM (no pvmd?); dumping anyway");
	}
	if (agent_listen(&agent) == -1) {
		agent_pvm_exit(&agent);
		fatalx("cannot serve tasks");
	}
	if (coord != NULL && agent_coord_connect(&agent, coord) == -1) {
		agent_unlisten(&agent);
		agent_pvm_exit(&agent);
		fatalx("cannot reach the coordinator");
	}
	if (ring_size != 0)
		(void)agent_publish_ring(&agent, ring_size);
	/* Now that tasks can register with us: every spawn on the host. */
	if (tasker && !dump) {
		agent.tasker = 1;
		tasker_start(agent.host, verbose);
	}
	agent_send_hello(&agent);
	/*
	 * The hello goes out now, not after the adoption below (which may
	 * take a while): a coordinator under a flood of connections that
	 * say nothing makes room by dropping the oldest that has not
	 * spoken (doc/limits.md).
	 */
	event_base_loop(base, EVLOOP_NONBLOCK);
	/* After a restart: the tasks our predecessor served. */
	agent_adopt_all(&agent);
	if (agent_pvm_watch(&agent) == -1 || agent_others_watch(&agent) == -1)
		agent_exit(&agent, 1);
	watch_signal(base, SIGTERM);
	watch_signal(base, SIGINT);
	log_info("serving tasks on %s", agent.sock_path);
	event_base_dispatch(base);
	agent_exit(&agent, 0);
}
