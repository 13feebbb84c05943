/*
 * storm: a message storm, the load of the tests and the benchmark that
 * check that pmon keeps up with a busy program (doc/capture.md, "A
 * lossless subscription").  N tasks; in each of ROUNDS rounds every task
 * sends one small message to its successor and then takes one message
 * with a wildcard receive, pvm_recv(-1, TAG).
 *
 *	storm [-p US] [-H HOST] N ROUNDS [FILE]
 *
 * Task 0 spawns the other N - 1 (storm -c [FILE]) wherever PVM places
 * them, or on HOST with -H, and multicasts N, ROUNDS and the tids.  A
 * round is five calls: pvm_initsend, pvm_pkint, pvm_send, pvm_recv,
 * pvm_upkint.  Besides its rounds, task 0 calls pvm_mytid, pvm_setopt,
 * pvm_spawn, pvm_initsend, 3 x pvm_pkint, pvm_mcast and pvm_exit; every
 * other task pvm_mytid, pvm_setopt, pvm_parent, pvm_recv, 3 x pvm_upkint
 * and pvm_exit.  So
 * task 0 makes 5 ROUNDS + 9 calls and each other task 5 ROUNDS + 8:
 * 10 N ROUNDS + 16 N + 2 events, with pvm_exit's end.  With FILE, each
 * task appends "calls TID K" (its calls, counted as it makes them)
 * before pvm_exit.  Task 0 prints "storm ok" when it finished its rounds.
 * With -p, task 0 sleeps US microseconds before each of its sends: the
 * messages in the ring stay as many as the tasks, so every task then
 * goes at that pace (a steady run of a known rate, for the restart
 * tests).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_INIT	1	/* task 0's multicast: N, ROUNDS, tids */
#define TAG_MSG		2	/* the storm */
#define MAXTASKS	1024
#define MAXROUNDS	100000000

static char prog[] = "storm", cflag[] = "-c", anyhost[] = "";
static int calls;	/* PVM calls made so far */
static int pause_us;	/* -p: task 0's sleep before each send */
static char *where = anyhost;	/* -H: the host of the others */

static int
send_next(int to, int v)
{
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&v, 1, 1);
	calls += 3;
	return pvm_send(to, TAG_MSG);
}

static int
storm(int me, int n, int rounds, const int *tids)
{
	int next = tids[(me + 1) % n], r, v;

	for (r = 0; r < rounds; r++) {
		if (me == 0 && pause_us > 0)
			usleep((useconds_t)pause_us);
		if (send_next(next, r) < 0)
			return -1;
		calls += 2;
		if (pvm_recv(-1, TAG_MSG) < 0)
			return -1;
		pvm_upkint(&v, 1, 1);
	}
	return 0;
}

/* Task 0: spawns the others and tells everyone the ring. */
static int
start(char *file, int n, int rounds, int *tids)
{
	char *args[] = { cflag, file, NULL };
	int got;

	calls++;
	got = pvm_spawn(prog, args, where == anyhost ? PvmTaskDefault :
	    PvmTaskHost, where, n - 1, &tids[1]);
	if (got != n - 1) {
		fprintf(stderr, "storm: spawned %d of %d tasks\n", got, n - 1);
		return -1;
	}
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&n, 1, 1);
	pvm_pkint(&rounds, 1, 1);
	pvm_pkint(tids, n, 1);
	calls += 5;
	return pvm_mcast(&tids[1], n - 1, TAG_INIT);
}

static int
join(int *n, int *rounds, int *tids)
{
	calls += 5;
	if (pvm_recv(pvm_parent(), TAG_INIT) < 0)
		return -1;
	pvm_upkint(n, 1, 1);
	pvm_upkint(rounds, 1, 1);
	if (*n < 2 || *n > MAXTASKS || *rounds < 1 || *rounds > MAXROUNDS)
		return -1;
	pvm_upkint(tids, *n, 1);
	return 0;
}

int
main(int argc, char **argv)
{
	static int tids[MAXTASKS];
	int mytid, n = 0, rounds = 0, me = -1, i, rc, child;
	char *file = NULL;

	child = argc >= 2 && strcmp(argv[1], cflag) == 0;
	while (!child && argc >= 3 && (strcmp(argv[1], "-p") == 0 ||
	    strcmp(argv[1], "-H") == 0)) {
		if (argv[1][1] == 'p')
			pause_us = atoi(argv[2]);
		else
			where = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (child)
		file = argc >= 3 ? argv[2] : NULL;
	else if (argc == 3 || argc == 4) {
		n = atoi(argv[1]);
		rounds = atoi(argv[2]);
		file = argc == 4 ? argv[3] : NULL;
	}
	if (!child && (n < 2 || n > MAXTASKS || rounds < 1 ||
	    rounds > MAXROUNDS)) {
		fprintf(stderr, "usage: storm [-p US] [-H HOST] N ROUNDS [FILE] (2 <= N "
		    "<= %d, 1 <= ROUNDS <= %d)\n", MAXTASKS, MAXROUNDS);
		return 2;
	}
	calls += 2;
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (child)
		rc = join(&n, &rounds, tids);
	else {
		tids[0] = mytid;
		rc = start(file, n, rounds, tids);
	}
	for (i = 0; rc == 0 && i < n; i++)
		if (tids[i] == mytid)
			me = i;
	if (rc == 0)
		rc = me < 0 ? -1 : storm(me, n, rounds, tids);
	if (rc != 0)
		fprintf(stderr, "storm: t%x: failed\n", mytid);
	calls++;
	if (file != NULL)
		prog_log(file, "calls %x %d\n", mytid, calls);
	pvm_exit();
	if (!child && rc == 0)
		printf("storm ok\n");
	return rc != 0;
}
