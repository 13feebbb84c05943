/*
 * bench_agent: records per second one agent drains, packs, deflates and
 * ships on one core (BENCHMARKS.md, "make bench-agent").
 *
 *	bench_agent [-p producers] [-w windows] [-s seconds] [-t exact|compact]
 *	    [-c agent-cpu] [-l deflate-level]
 *
 * The agent runs on the last CPU (-c), the producers and the reader on
 * the others.
 * The agent is the real one (agent_init, agent_listen, its accept, task
 * registration, drain, pack and deflate code) in this process, pinned
 * to one CPU.  The producers are processes on the other CPUs, each a
 * task as the instrumentation makes one: a ring of its own (memfd,
 * ring_create), registered with TASK_HELLO on the agent's socket, and
 * records written with ring_write as fast as it can, each stamped with
 * CLOCK_REALTIME, in NAS SP's per-step pattern of calls (bench_size.c).
 * A full ring drops, as in a task.  The coordinator end of the agent's
 * socket is a process that reads and counts.  The agent loop is the
 * daemon's: libevent for the sockets and the drain timer, and between
 * its passes one more drain of every ring (agent_drain_all) with the
 * output bound respected.  Each window of -s seconds gives two rates:
 * records per second of wall time and per second of the agent's own CPU
 * time (getrusage), which is what one core of its own would give it on
 * a machine other processes share (the producers keep its rings full:
 * they drop more than it ships).  The last line is the median of the
 * second:
 *	agent records_per_s=N
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <err.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "agent.h"
#include "log.h"
#include "paths.h"
#include "record.h"
#include "ring.h"
#include "task_msg.h"

#define MAX_PRODUCERS	16
#define MAX_WINDOWS	32
#define PATTERN_MAX	256

struct shared {
	volatile int	 stop;
	uint64_t	 written[MAX_PRODUCERS];
	uint64_t	 dropped[MAX_PRODUCERS];
};

static struct shared *sh;
static struct record pattern[PATTERN_MAX];
static unsigned npattern;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == -1)
		warn("sched_setaffinity %d", cpu);
}

/* Every CPU but the agent's. */
static void
pin_others(int agent_cpu)
{
	cpu_set_t set;
	int i, n = (int)sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (i = 0; i < n; i++)
		if (i != agent_cpu || n == 1)
			CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void
pat(unsigned call, int32_t peer, int32_t tag, int32_t bytes, int32_t rc,
    uint8_t flags)
{
	struct record *r;
	int ph;

	for (ph = PMON_BEGIN; ph <= PMON_END; ph++) {
		if (npattern == PATTERN_MAX)
			errx(1, "pattern too long");
		r = &pattern[npattern++];
		memset(r, 0, sizeof(*r));
		r->call = (uint8_t)call;
		r->phase = (uint8_t)ph;
		r->peer = peer;
		r->tag = tag;
		r->bytes = ph == PMON_BEGIN && call == PMON_CALL_recv ? 0 :
		    bytes;
		r->rc = ph == PMON_END ? rc : 0;
		r->inst = -1;
		r->flags = ph == PMON_END ? flags : 0;
	}
}

static void
pat_msg(int32_t to, int32_t from, int32_t tag, int32_t bytes)
{
	pat(PMON_CALL_initsend, -1, -1, 0, 1, 0);
	pat(PMON_CALL_pkdouble, -1, -1, bytes, 0, 0);
	pat(PMON_CALL_send, to, tag, bytes, 0, 0);
	pat(PMON_CALL_recv, from, tag, bytes, 2, RECORD_MSG);
	pat(PMON_CALL_upkdouble, -1, -1, bytes, 0, 0);
}

/* One SP step of a task with neighbours n[0..3]: 110 calls. */
static void
make_pattern(const int32_t n[4])
{
	int i, s;

	npattern = 0;
	for (i = 0; i < 4; i++)
		pat_msg(n[i], n[i ^ 1], 10 + i, 12000);
	for (i = 0; i < 3; i++)
		for (s = 0; s < 6; s++)
			pat_msg(n[2 * (i % 2) + s / 3], n[2 * (i % 2) + 1 -
			    s / 3], 100 * (i + 1) + s, 4000);
}

/* TASK_HELLO with the ring's memfd, as the instrumentation sends it. */
static int
send_hello(int fd, struct ring *rg, int32_t tid)
{
	struct task_hello h;

	memset(&h, 0, sizeof(h));
	h.tid = tid;
	h.pid = (uint32_t)getpid();
	strcpy(h.program, "bench_task");
	return task_hello_send(fd, &h, rg->fd);
}

static void __attribute__((noreturn))
producer(int i, const char *sock, int agent_cpu)
{
	struct sockaddr_un sun;
	struct timespec ts;
	struct ring rg;
	struct record *r;
	uint8_t buf[RECORD_HDR_SIZE];
	int32_t tid = 0x40001 + i, n[4];
	uint64_t seq = 0;
	unsigned k;
	uint32_t nbp;
	int fd;

	pin_others(agent_cpu);
	for (k = 0; k < 4; k++)
		n[k] = 0x40001 + (int32_t)((i + 1 + k) % MAX_PRODUCERS);
	make_pattern(n);
	if (ring_create(&rg, RING_DEFAULT_SIZE) == -1)
		err(1, "ring_create");
	rg.hdr->tid = tid;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    send_hello(fd, &rg, tid) == -1)
		err(1, "producer %d: registering", i);
	if (task_ready_wait(fd, 5000, &nbp) == -1)
		errx(1, "producer %d: no TASK_READY", i);
	while (!sh->stop) {
		for (k = 0; k < npattern; k++) {
			r = &pattern[k];
			r->seq = ++seq;
			clock_gettime(CLOCK_REALTIME, &ts);
			r->t_ns = (uint64_t)ts.tv_sec * 1000000000ULL +
			    (uint64_t)ts.tv_nsec;
			ring_write(&rg, buf, record_encode(buf, r, NULL));
		}
	}
	sh->written[i] = rg.hdr->written;
	sh->dropped[i] = ring_dropped(&rg);
	_exit(0);
}

/* The coordinator's end: reads and counts, then says how much. */
static void __attribute__((noreturn))
reader(int fd, int out, int agent_cpu)
{
	static uint8_t buf[1 << 16];
	uint64_t total = 0;
	ssize_t n;

	pin_others(agent_cpu);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (uint64_t)n;
	(void)write(out, &total, sizeof(total));
	_exit(0);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One pass of the daemon's loop, plus a drain of every ring. */
static void
agent_pass(struct agent *a)
{
	event_base_loop(a->base, EVLOOP_NONBLOCK);
	if (evbuffer_get_length(a->out) + evbuffer_get_length(a->wire) <
	    a->high_water)
		agent_drain_all(a, AGENT_PASS_MAX);
	agent_output(a);
}

int
main(int argc, char *argv[])
{
	char dir[] = "/tmp/pmon-bench-agent.XXXXXX";
	struct event_base *base;
	struct agent a;
	struct rusage ru0, ru1;
	double rate[MAX_WINDOWS], wall[MAX_WINDOWS], t0, t1, secs = 1.0, cpu;
	uint64_t n0, bytes, written = 0, dropped = 0, plain0, packed0;
	pid_t pids[MAX_PRODUCERS], rpid;
	int ch, i, np = 2, nwin = 5, sv[2], pfd[2], mode, level = ZS_LEVEL;
	int cpu_agent = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1;
	const char *tmode = "compact";

	while ((ch = getopt(argc, argv, "c:l:p:s:t:w:")) != -1) {
		switch (ch) {
		case 'l':
			level = atoi(optarg);
			break;
		case 'c':
			cpu_agent = atoi(optarg);
			break;
		case 'p':
			np = atoi(optarg);
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 't':
			tmode = optarg;
			break;
		case 'w':
			nwin = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_agent [-p producers] "
			    "[-w windows] [-s seconds] [-t exact|compact] "
			    "[-c agent-cpu] [-l deflate-level]\n");
			return 2;
		}
	}
	if (np < 1 || np > MAX_PRODUCERS || nwin < 1 || nwin > MAX_WINDOWS ||
	    secs <= 0 || (mode = pack_time_lookup(tmode)) == -1 ||
	    level < 1 || level > 9)
		errx(2, "bad arguments");
	log_init("bench_agent", 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(dir) == NULL || setenv("PVM_TMP", dir, 1) == -1)
		err(1, "%s", dir);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		err(1, "mmap");
	memset(sh, 0, sizeof(*sh));

	pin(cpu_agent);
	if ((base = event_base_new()) == NULL || agent_init(&a, base) == -1)
		errx(1, "agent_init");
	a.time_mode = mode;
	/* Its coordinator end is on this host: deflate as for a remote one. */
	a.compress = CAPTURE_COMPRESS_ALWAYS;
	if (level != ZS_LEVEL && (zs_out_end(&a.zs), zs_out_init(&a.zs,
	    level)) == -1)
		errx(1, "zs_out_init");
	if (agent_listen(&a) == -1)
		errx(1, "agent_listen");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe(pfd) == -1)
		err(1, "socketpair");
	if ((rpid = fork()) == 0) {
		close(sv[0]);
		reader(sv[1], pfd[1], cpu_agent);
	}
	close(sv[1]);
	if (agent_coord_attach(&a, sv[0]) == -1)
		errx(1, "agent_coord_attach");
	agent_send_hello(&a);
	for (i = 0; i < np; i++)
		if ((pids[i] = fork()) == 0)
			producer(i, a.sock_path, cpu_agent);

	/* Until every producer is registered and writing. */
	t0 = now();
	while (a.ntasks < (unsigned)np || a.nrecords < 1000000) {
		agent_pass(&a);
		if (now() - t0 > 10)
			errx(1, "producers did not register");
	}
	for (i = 0; i < nwin; i++) {
		n0 = a.nrecords;
		plain0 = a.zs.plain;
		packed0 = a.zs.packed;
		getrusage(RUSAGE_SELF, &ru0);
		t0 = now();
		while ((t1 = now()) - t0 < secs)
			agent_pass(&a);
		getrusage(RUSAGE_SELF, &ru1);
		cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec +
		    ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		    (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec +
		    ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
		wall[i] = (double)(a.nrecords - n0) / (t1 - t0);
		rate[i] = (double)(a.nrecords - n0) / cpu;
		printf("window %d: %.0f records/s of wall time, %.0f per s of "
		    "agent CPU (%.2f s of %.2f s), %.2f B/record packed, %.3f "
		    "B/record shipped\n", i + 1, wall[i], rate[i], cpu,
		    t1 - t0, (double)(a.zs.plain - plain0) /
		    (double)(a.nrecords - n0), (double)(a.zs.packed -
		    packed0) / (double)(a.nrecords - n0));
	}
	sh->stop = 1;
	for (i = 0; i < np; i++)
		waitpid(pids[i], NULL, 0);
	for (i = 0; i < 50; i++)	/* the last records and TASK_ENDs */
		agent_pass(&a);
	for (i = 0; i < np; i++) {
		written += sh->written[i];
		dropped += sh->dropped[i];
	}
	agent_output_sync(&a);
	while (evbuffer_get_length(a.wire) > 0)
		event_base_loop(base, EVLOOP_ONCE);
	agent_unlisten(&a);
	/* The reader sees the end now, whenever libevent closes the fd. */
	shutdown(bufferevent_getfd(a.coord), SHUT_WR);
	bufferevent_free(a.coord);
	a.coord = NULL;
	a.wire = NULL;
	if (read(pfd[0], &bytes, sizeof(bytes)) != sizeof(bytes))
		bytes = 0;
	waitpid(rpid, NULL, 0);
	printf("bench_agent: %d producers, time %s, deflate level %d, agent "
	    "on CPU %d of %ld; %llu records written, %llu dropped by full "
	    "rings, %llu shipped in %llu bytes\n", np, tmode, level,
	    cpu_agent, sysconf(_SC_NPROCESSORS_ONLN),
	    (unsigned long long)written, (unsigned long long)dropped,
	    (unsigned long long)a.nrecords, (unsigned long long)bytes);
	if (a.nrecords != written)
		errx(1, "records lost: %llu written, %llu dropped, %llu "
		    "shipped", (unsigned long long)written,
		    (unsigned long long)dropped,
		    (unsigned long long)a.nrecords);
	agent_free(&a);
	event_base_free(base);
	rmdir(dir);
	qsort(rate, (size_t)nwin, sizeof(rate[0]), cmp_double);
	qsort(wall, (size_t)nwin, sizeof(wall[0]), cmp_double);
	printf("median: %.0f records per s of wall time, %.0f per s of agent "
	    "CPU\n", wall[nwin / 2], rate[nwin / 2]);
	printf("agent records_per_s=%.0f\n", rate[nwin / 2]);
	return 0;
}
