/*
 * pingpong: a plain PVM program that sends as fast as PVM lets it.  The
 * master spawns K workers and, ROUNDS times, sends each worker a message
 * of BYTES bytes and waits for it to come back; with PAUSE_US, it sleeps
 * that long after each round (a steady rate rather than the fastest).
 *
 *	pingpong K ROUNDS BYTES FILE [PAUSE_US]
 *
 * Every task appends "master TID PID" or "worker TID PID" to FILE when it
 * starts, and the master appends
 * "rtt_ns N" (the mean round trip) and "done" at the end.  Every message
 * sent is received: 2 * K * ROUNDS messages of BYTES bytes each, plus
 * the K start messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_INIT	1	/* master to worker: ROUNDS, BYTES, index */
#define TAG_PING	2
#define TAG_PONG	3
#define MAXTASKS	16
#define MAXBYTES	(1 << 20)
#define ALARM_SECS	120	/* a task still alive then is hung */

static char prog[] = "pingpong", wflag[] = "-w", anyhost[] = "";

static long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
send_bytes(int to, int tag, char *buf, int bytes)
{
	pvm_initsend(PvmDataRaw);
	pvm_pkbyte(buf, bytes, 1);
	return pvm_send(to, tag);
}

static int
worker(void)
{
	int hdr[3], r;
	char *buf;

	if (pvm_recv(pvm_parent(), TAG_INIT) < 0)
		return -1;
	pvm_upkint(hdr, 3, 1);
	if (hdr[0] < 1 || hdr[1] < 1 || hdr[1] > MAXBYTES ||
	    (buf = malloc((size_t)hdr[1])) == NULL)
		return -1;
	for (r = 0; r < hdr[0]; r++) {
		if (pvm_recv(pvm_parent(), TAG_PING) < 0)
			return -1;
		pvm_upkbyte(buf, hdr[1], 1);
		if (send_bytes(pvm_parent(), TAG_PONG, buf, hdr[1]) < 0)
			return -1;
	}
	free(buf);
	return 0;
}

static int
master(int k, int rounds, int bytes, const char *file, int pause_us)
{
	char *args[] = { wflag, (char *)file, NULL }, *buf;
	int tids[MAXTASKS], hdr[3], i, r;
	long long t0;

	if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, k, tids) != k) {
		fprintf(stderr, "pingpong: spawn failed\n");
		return -1;
	}
	if ((buf = calloc(1, (size_t)bytes)) == NULL)
		return -1;
	for (i = 0; i < k; i++) {
		hdr[0] = rounds;
		hdr[1] = bytes;
		hdr[2] = i + 1;
		pvm_initsend(PvmDataDefault);
		pvm_pkint(hdr, 3, 1);
		if (pvm_send(tids[i], TAG_INIT) < 0)
			return -1;
	}
	t0 = now_ns();
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < k; i++) {
			if (send_bytes(tids[i], TAG_PING, buf, bytes) < 0 ||
			    pvm_recv(tids[i], TAG_PONG) < 0)
				return -1;
			pvm_upkbyte(buf, bytes, 1);
		}
		if (pause_us > 0)
			usleep((useconds_t)pause_us);
	}
	prog_log(file, "rtt_ns %lld\n",
	    (now_ns() - t0) / ((long long)rounds * k));
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int child = argc == 3 && strcmp(argv[1], wflag) == 0;
	int k = 0, rounds = 0, bytes = -1, pause_us = 0, mytid, rc;
	const char *file = child ? argv[2] : argv[argc > 4 ? 4 : 0];

	if (argc == 5 || argc == 6) {
		k = atoi(argv[1]);
		rounds = atoi(argv[2]);
		bytes = atoi(argv[3]);
		pause_us = argc == 6 ? atoi(argv[5]) : 0;
	}
	if (!child && (k < 1 || k > MAXTASKS || rounds < 1 || bytes < 1 ||
	    bytes > MAXBYTES || pause_us < 0 || pause_us > 1000000)) {
		fprintf(stderr, "usage: pingpong K ROUNDS BYTES FILE [PAUSE_US] "
		    "(1 <= K <= %d, 1 <= BYTES <= %d, PAUSE_US <= 1000000)\n",
		    MAXTASKS, MAXBYTES);
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	prog_log(file, "%s %d %ld\n", child ? "worker" : "master", mytid,
	    (long)getpid());
	rc = child ? worker() : master(k, rounds, bytes, file, pause_us);
	if (rc)
		fprintf(stderr, "pingpong: t%x: failed\n", mytid);
	else if (!child)
		prog_log(file, "done\n");
	pvm_exit();
	return rc != 0;
}
