/*
 * ring: a plain PVM program without problems whose tasks spend most of
 * their time blocked.  N tasks pass a token around a ring ROUNDS times;
 * each receives from its predecessor by name and holds the token for
 * HOLD_US before passing it on, so at any moment all but one task wait
 * in pvm_recv on a chain that ends at a running task: a monitor that
 * looks for deadlocks while the ring runs must find none, and none of
 * message races or unreceived messages when it ends.
 *
 *	ring N ROUNDS FILE
 *
 * Task 0 spawns the others (ring -c FILE) and multicasts N, ROUNDS and
 * the tids.  Each task appends "ring I TID PID" to FILE when it starts,
 * "hold I R" when it got the token in round R (before holding it), and
 * "done I TID" before pvm_exit.
 *
 * A file FILE.stop ends the ring early: task 0, holding the token, sends
 * a stop token (-1) around instead, each task passes it on and leaves,
 * and task 0 takes it back, so that every message sent is received.  A
 * test that needs the ring only while it looks at it need not wait for
 * all its rounds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_INIT	1	/* task 0's multicast: N, ROUNDS, tids */
#define TAG_TOKEN	2
#define MAXTASKS	16
#define MAXROUNDS	100
#define HOLD_US		100000
#define ALARM_SECS	90	/* a task still alive then is hung */

static char prog[] = "ring", cflag[] = "-c", anyhost[] = "";

/* Appends one line to path with one write (O_APPEND: lines of several
 * tasks never mix). */
static void
note(const char *path, const char *word, int i, int tid, int with_pid)
{
	if (with_pid)
		prog_log(path, "%s %d %d %ld\n", word, i, tid, (long)getpid());
	else
		prog_log(path, "%s %d %d\n", word, i, tid);
}

static int
pass(int to, int v)
{
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&v, 1, 1);
	return pvm_send(to, TAG_TOKEN);
}

static int
stop_asked(const char *file)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.stop", file);
	return access(path, F_OK) == 0;
}

/* Task me's part: ROUNDS receives and ROUNDS sends; task 0 sends
 * first, so every token sent is received. */
static int
run(const char *file, int me, int n, int rounds, const int *tids)
{
	int next = tids[(me + 1) % n], prev = tids[(me + n - 1) % n], r, v = 0;

	if (me == 0 && pass(next, 0) < 0)
		return -1;
	for (r = 0; r < rounds; r++) {
		if (pvm_recv(prev, TAG_TOKEN) < 0)
			return -1;
		pvm_upkint(&v, 1, 1);
		if (v == -1)		/* the stop token */
			return me == 0 || pass(next, -1) == 0 ? 0 : -1;
		prog_log(file, "hold %d %d\n", me, r);
		usleep(HOLD_US);
		if (me == 0 && r < rounds - 1 && stop_asked(file)) {
			if (pass(next, -1) < 0 || pvm_recv(prev, TAG_TOKEN) < 0)
				return -1;
			pvm_upkint(&v, 1, 1);
			return v == -1 ? 0 : -1;
		}
		if ((me != 0 || r < rounds - 1) && pass(next, v + 1) < 0)
			return -1;
	}
	return v == n * rounds - 1 || me != 0 ? 0 : -1;
}

/* Task 0: spawns the others and tells everyone the ring. */
static int
start(char *file, int mytid, int n, int rounds, int *tids)
{
	char *args[] = { cflag, file, NULL };

	tids[0] = mytid;
	if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, n - 1, &tids[1]) !=
	    n - 1) {
		fprintf(stderr, "ring: spawn failed\n");
		return -1;
	}
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&n, 1, 1);
	pvm_pkint(&rounds, 1, 1);
	pvm_pkint(tids, n, 1);
	return pvm_mcast(&tids[1], n - 1, TAG_INIT);
}

int
main(int argc, char **argv)
{
	int tids[MAXTASKS], mytid, n = 0, rounds = 0, me = -1, i, rc;
	int child = argc == 3 && strcmp(argv[1], cflag) == 0;

	if (argc == 4) {
		n = atoi(argv[1]);
		rounds = atoi(argv[2]);
	}
	if (!child && (n < 2 || n > MAXTASKS || rounds < 1 ||
	    rounds > MAXROUNDS)) {
		fprintf(stderr, "usage: ring N ROUNDS FILE (2 <= N <= %d, "
		    "1 <= ROUNDS <= %d)\n", MAXTASKS, MAXROUNDS);
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (child) {
		if (pvm_recv(pvm_parent(), TAG_INIT) < 0)
			return 1;
		pvm_upkint(&n, 1, 1);
		pvm_upkint(&rounds, 1, 1);
		if (n < 2 || n > MAXTASKS || rounds < 1 || rounds > MAXROUNDS)
			return 1;
		pvm_upkint(tids, n, 1);
	} else if (start(argv[3], mytid, n, rounds, tids) < 0) {
		pvm_exit();
		return 1;
	}
	for (i = 0; i < n; i++)
		if (tids[i] == mytid)
			me = i;
	note(argv[argc - 1], "ring", me, mytid, 1);
	rc = me < 0 || run(argv[argc - 1], me, n, rounds, tids) < 0;
	if (rc)
		fprintf(stderr, "ring: t%x: failed\n", mytid);
	note(argv[argc - 1], "done", me, mytid, 0);
	pvm_exit();
	return rc;
}
