/*
 * cycle3: a plain PVM program with a planted deadlock cycle of three
 * tasks, A -> B -> C -> A: each receives from the next before sending to
 * the previous, so all three block in pvm_recv forever.  A monitor must
 * report one deadlock whose cycle is exactly these tasks.
 *
 *	cycle3 FILE
 *
 * A spawns B and C (cycle3 -c FILE) and multicasts the three tids in
 * order; that message is received, so nothing else is wrong.  Before
 * blocking, each task appends "ROLE TID PID NEXT" (decimal tids; ROLE
 * a, b or c; NEXT the task it waits for) to FILE.  The tasks never end
 * on their own; halting pvmd kills them (an alarm ends them after
 * ALARM_SECS in case nobody does).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_INIT	1	/* A's multicast: the three tids */
#define TAG_TOKEN	2	/* what each waits for from the next */
#define NTASKS		3
#define ALARM_SECS	120	/* a task still alive then was forgotten */

static char prog[] = "cycle3", cflag[] = "-c", anyhost[] = "";

/* Appends "ROLE TID PID NEXT" to path with one write (O_APPEND: lines
 * of several tasks never mix). */
static void
note(const char *path, char role, int tid, int next)
{
	prog_log(path, "%c %d %ld %d\n", role, tid, (long)getpid(), next);
}

/* A: spawns B and C and tells everyone the order. */
static int
start(char *file, int mytid, int *tids)
{
	char *args[] = { cflag, file, NULL };

	tids[0] = mytid;
	if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, NTASKS - 1,
	    &tids[1]) != NTASKS - 1) {
		fprintf(stderr, "cycle3: spawn failed\n");
		return -1;
	}
	pvm_initsend(PvmDataDefault);
	pvm_pkint(tids, NTASKS, 1);
	return pvm_mcast(&tids[1], NTASKS - 1, TAG_INIT);
}

int
main(int argc, char **argv)
{
	int tids[NTASKS], mytid, me = -1, i, v = 0, next, prev;
	int child = argc == 3 && strcmp(argv[1], cflag) == 0;

	if (argc != 2 && !child) {
		fprintf(stderr, "usage: cycle3 FILE\n");
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (child) {
		if (pvm_recv(pvm_parent(), TAG_INIT) < 0)
			return 1;
		pvm_upkint(tids, NTASKS, 1);
	} else if (start(argv[1], mytid, tids) < 0) {
		pvm_exit();
		return 1;
	}
	for (i = 0; i < NTASKS; i++)
		if (tids[i] == mytid)
			me = i;
	if (me < 0) {
		fprintf(stderr, "cycle3: t%x not in the tid list\n", mytid);
		pvm_exit();
		return 1;
	}
	next = tids[(me + 1) % NTASKS];
	prev = tids[(me + NTASKS - 1) % NTASKS];
	note(argv[argc - 1], (char)('a' + me), mytid, next);
	/* Receive before sending: nobody ever sends. */
	if (pvm_recv(next, TAG_TOKEN) >= 0) {
		pvm_upkint(&v, 1, 1);
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&v, 1, 1);
		pvm_send(prev, TAG_TOKEN);
	}
	pvm_exit();
	return 0;
}
