/*
 * smallpp: a small-message PVM ping-pong that times only its steady
 * state (bench/bench_overhead.sh, BENCHMARKS.md).
 *
 *	smallpp ROUNDS BYTES [WARMUP]
 *
 * The master spawns one worker (this program, found on pvmd's path),
 * then bounces a BYTES-byte message off it WARMUP times (100) untimed
 * and ROUNDS times timed, each round a pvm_initsend, pvm_pkbyte and
 * pvm_send, then pvm_recv and pvm_upkbyte, on PVM's default route
 * (task - pvmd - task).  The warm-up keeps one-time costs out of the
 * numbers: enrolling, the worker's first calls (under pmon: its
 * registration with the agent), page faults.
 *
 * The master prints on stdout
 *	rtt_mean_ns N	the mean round trip of the timed rounds
 *	rtt_p50_ns N	their median
 *	sent N		messages it sent: 1 + WARMUP + ROUNDS
 * Exit status 0 on success.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_INIT	1
#define TAG_PING	2
#define TAG_PONG	3
#define ROUNDS_MAX	10000000
#define BYTES_MAX	(1 << 20)
#define ALARM_SECS	300

static char prog[] = "smallpp", wflag[] = "-w", anyhost[] = "";

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static int
bounce_send(int to, int tag, char *buf, int bytes)
{
	if (pvm_initsend(PvmDataRaw) < 0 || pvm_pkbyte(buf, bytes, 1) < 0)
		return -1;
	return pvm_send(to, tag);
}

static int
bounce_recv(int from, int tag, char *buf, int bytes)
{
	if (pvm_recv(from, tag) < 0)
		return -1;
	return pvm_upkbyte(buf, bytes, 1);
}

static int
worker(void)
{
	int parent = pvm_parent(), hdr[2], r;
	char *buf;

	if (pvm_recv(parent, TAG_INIT) < 0 || pvm_upkint(hdr, 2, 1) < 0)
		return -1;
	if (hdr[0] < 1 || hdr[1] < 1 || hdr[1] > BYTES_MAX ||
	    (buf = malloc((size_t)hdr[1])) == NULL)
		return -1;
	for (r = 0; r < hdr[0]; r++)
		if (bounce_recv(parent, TAG_PING, buf, hdr[1]) < 0 ||
		    bounce_send(parent, TAG_PONG, buf, hdr[1]) < 0)
			return -1;
	free(buf);
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int
master(int rounds, int bytes, int warmup)
{
	char *args[] = { wflag, NULL }, *buf;
	uint64_t *rtt, t, sum = 0;
	int tid, hdr[2], r;

	if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, 1, &tid) != 1) {
		fprintf(stderr, "smallpp: cannot spawn the worker\n");
		return -1;
	}
	buf = calloc(1, (size_t)bytes);
	rtt = calloc((size_t)rounds, sizeof(*rtt));
	if (buf == NULL || rtt == NULL)
		return -1;
	hdr[0] = warmup + rounds;
	hdr[1] = bytes;
	if (pvm_initsend(PvmDataDefault) < 0 || pvm_pkint(hdr, 2, 1) < 0 ||
	    pvm_send(tid, TAG_INIT) < 0)
		return -1;
	for (r = 0; r < warmup + rounds; r++) {
		t = now_ns();
		if (bounce_send(tid, TAG_PING, buf, bytes) < 0 ||
		    bounce_recv(tid, TAG_PONG, buf, bytes) < 0)
			return -1;
		if (r >= warmup)
			rtt[r - warmup] = now_ns() - t;
	}
	for (r = 0; r < rounds; r++)
		sum += rtt[r];
	qsort(rtt, (size_t)rounds, sizeof(*rtt), cmp_u64);
	printf("rtt_mean_ns %llu\nrtt_p50_ns %llu\nsent %d\n",
	    (unsigned long long)(sum / (uint64_t)rounds),
	    (unsigned long long)rtt[(rounds - 1) / 2], 1 + warmup + rounds);
	free(rtt);
	free(buf);
	return 0;
}

static int
arg_int(const char *s, int lo, int hi, int *v)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || n < lo || n > hi)
		return -1;
	*v = (int)n;
	return 0;
}

int
main(int argc, char **argv)
{
	int child = argc == 2 && strcmp(argv[1], wflag) == 0;
	int rounds = 0, bytes = 0, warmup = 100, rc;

	if (!child && ((argc != 3 && argc != 4) ||
	    arg_int(argv[1], 1, ROUNDS_MAX, &rounds) == -1 ||
	    arg_int(argv[2], 1, BYTES_MAX, &bytes) == -1 ||
	    (argc == 4 && arg_int(argv[3], 0, ROUNDS_MAX, &warmup) == -1))) {
		fprintf(stderr, "usage: smallpp ROUNDS BYTES [WARMUP] "
		    "(ROUNDS 1..%d, BYTES 1..%d)\n", ROUNDS_MAX, BYTES_MAX);
		return 2;
	}
	alarm(ALARM_SECS);
	if (pvm_mytid() < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	rc = child ? worker() : master(rounds, bytes, warmup);
	if (rc != 0)
		fprintf(stderr, "smallpp: %s failed\n", child ? "worker" :
		    "master");
	pvm_exit();
	return rc != 0;
}
