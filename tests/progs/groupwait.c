/*
 * groupwait: a plain PVM program whose tasks make a known number of
 * calls when the test says so and then wait for ever, some of them as
 * members of a group: for tests that stop tasks by host or group and
 * that count what a flush delivers.
 *
 *	groupwait K G N FILE
 *
 * The master (index 0) spawns K workers one by one (groupwait -w FILE I
 * G N).  Every task appends "task I TID PID member|other" to FILE (tid in
 * decimal; workers 1 to G are members) and waits, without PVM calls,
 * until FILE.go exists.  Then the members join the group "groupwait"
 * (the master and the other workers stay out), and every task makes N
 * pairs of pvm_initsend and pvm_pkint, appends "burst I TID CALLS"
 * (CALLS: the PVM calls it has made so far, all returned) and calls
 * pvm_recv(-1, TAG_END), which begins one more call and blocks for a
 * message nobody sends: the test ends the tasks (pmon kill).  An alarm
 * ends them after ALARM_SECS.
 *
 * The joins come after the go so that a test can have them recorded
 * while it holds the agent: the coordinator releases a join only after
 * a flush round that began once the join had arrived.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_END		99	/* never sent */
#define MAXWORKERS	16
#define MAXCALLS	100000
#define ALARM_SECS	90	/* a task still alive then was forgotten */

static char prog[] = "groupwait", wflag[] = "-w", group[] = "groupwait",
    anyhost[] = "";
static int calls;	/* PVM calls made and returned */

static int
spawn_workers(char *file, int k, char *g, char *n)
{
	char index[16], *args[6];
	int i, tid;

	for (i = 1; i <= k; i++) {
		snprintf(index, sizeof(index), "%d", i);
		args[0] = wflag;
		args[1] = file;
		args[2] = index;
		args[3] = g;
		args[4] = n;
		args[5] = NULL;
		calls++;
		if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, 1,
		    &tid) != 1) {
			fprintf(stderr, "groupwait: spawn %d failed: %d\n", i,
			    tid);
			return -1;
		}
	}
	return 0;
}

/* Waits, making no PVM call, until the test creates FILE.go. */
static void
wait_go(const char *file)
{
	char go[4096];

	snprintf(go, sizeof(go), "%s.go", file);
	while (access(go, F_OK) != 0)
		usleep(5000);
}

static void
burst(int n)
{
	int i, v = 0;

	for (i = 0; i < n; i++) {
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&v, 1, 1);
		calls += 2;
	}
}

int
main(int argc, char **argv)
{
	int worker = argc == 6 && strcmp(argv[1], wflag) == 0;
	int k = 0, g, n, me = 0, mytid, member;
	char *file;

	if (argc != 5 && !worker) {
		fprintf(stderr, "usage: groupwait K G N FILE\n");
		return 2;
	}
	alarm(ALARM_SECS);
	if (worker) {		/* -w FILE I G N */
		file = argv[2];
		me = atoi(argv[3]);
		g = atoi(argv[4]);
		n = atoi(argv[5]);
	} else {		/* K G N FILE */
		k = atoi(argv[1]);
		g = atoi(argv[2]);
		n = atoi(argv[3]);
		file = argv[4];
	}
	if (k < 0 || k > MAXWORKERS || g < 0 || g > MAXWORKERS || n < 0 ||
	    n > MAXCALLS) {
		fprintf(stderr, "groupwait: K, G at most %d, N at most %d\n",
		    MAXWORKERS, MAXCALLS);
		return 2;
	}
	calls++;
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	if (!worker && spawn_workers(file, k, argv[2], argv[3]) == -1) {
		pvm_exit();
		return 1;
	}
	member = worker && me <= g;
	prog_log(file, "task %d %d %ld %s\n", me, mytid, (long)getpid(),
	    member ? "member" : "other");
	wait_go(file);
	if (member) {
		calls++;
		if (pvm_joingroup(group) < 0) {
			fprintf(stderr, "groupwait: t%x: join failed\n", mytid);
			pvm_exit();
			return 1;
		}
	}
	burst(n);
	prog_log(file, "burst %d %d %d\n", me, mytid, calls);
	if (pvm_recv(-1, TAG_END) < 0)
		fprintf(stderr, "groupwait: t%x: recv failed\n", mytid);
	pvm_exit();
	return 0;
}
