/*
 * barrierexit: a plain PVM program where two tasks wait forever in a
 * barrier for a third that exited instead of entering it.  A monitor
 * must report that each waiter waits on the exited task, and a deadlock
 * of the two waiters whose chain ends at the exited task.
 *
 *	barrierexit FILE
 *
 * The parent spawns a waiter and a quitter (barrierexit -w|-q FILE); all
 * three join the group "bx".  The parent and the waiter each tell the
 * quitter they joined, then call pvm_barrier("bx", 3).  The quitter
 * takes both messages (so none is left unreceived), waits QUIT_DELAY_US
 * so that the others are inside the barrier, and calls pvm_exit without
 * entering it.  Each task appends "ROLE TID PID" (decimal tid; ROLE
 * parent, waiter or quitter) to FILE; the quitter writes "exited TID"
 * just before pvm_exit.  The waiters never end on their own; halting
 * pvmd kills them (an alarm ends them after ALARM_SECS in case nobody
 * does).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_JOINED	1	/* a waiter to the quitter: I am a member */
#define GSIZE		3
#define QUIT_DELAY_US	500000
#define ALARM_SECS	120	/* a task still alive then was forgotten */

static char prog[] = "barrierexit", group[] = "bx", wflag[] = "-w",
    qflag[] = "-q", anyhost[] = "";

/* Appends "WORD TID [PID]" to path with one write (O_APPEND: lines of
 * several tasks never mix). */
static void
note(const char *path, const char *word, int tid, int with_pid)
{
	if (with_pid)
		prog_log(path, "%s %d %ld\n", word, tid, (long)getpid());
	else
		prog_log(path, "%s %d\n", word, tid);
}

/* The parent: spawns the waiter and the quitter; returns the quitter. */
static int
spawn_both(char *file)
{
	char *wargs[] = { wflag, file, NULL }, *qargs[] = { qflag, file, NULL };
	int w, q;

	if (pvm_spawn(prog, wargs, PvmTaskDefault, anyhost, 1, &w) != 1 ||
	    pvm_spawn(prog, qargs, PvmTaskDefault, anyhost, 1, &q) != 1) {
		fprintf(stderr, "barrierexit: spawn failed\n");
		return -1;
	}
	/* The waiter learns the quitter from the parent. */
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&q, 1, 1);
	pvm_send(w, TAG_JOINED);
	return q;
}

static int
quitter(const char *file, int mytid)
{
	int i;

	for (i = 0; i < GSIZE - 1; i++)
		if (pvm_recv(-1, TAG_JOINED) < 0)
			return 1;
	usleep(QUIT_DELAY_US);
	note(file, "exited", mytid, 0);
	return 0;
}

int
main(int argc, char **argv)
{
	int mytid, q = 0, rc = 0;
	const char *role = "parent";

	if (argc == 3 && strcmp(argv[1], wflag) == 0)
		role = "waiter";
	else if (argc == 3 && strcmp(argv[1], qflag) == 0)
		role = "quitter";
	else if (argc != 2) {
		fprintf(stderr, "usage: barrierexit FILE\n");
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (strcmp(role, "parent") == 0 && (q = spawn_both(argv[1])) < 0) {
		pvm_exit();
		return 1;
	}
	if (strcmp(role, "waiter") == 0) {
		if (pvm_recv(pvm_parent(), TAG_JOINED) < 0)
			return 1;
		pvm_upkint(&q, 1, 1);
	}
	if (pvm_joingroup(group) < 0) {
		fprintf(stderr, "barrierexit: t%x: joingroup failed\n", mytid);
		pvm_exit();
		return 1;
	}
	note(argv[argc - 1], role, mytid, 1);
	if (strcmp(role, "quitter") == 0)
		rc = quitter(argv[argc - 1], mytid);
	else {
		pvm_initsend(PvmDataDefault);
		pvm_send(q, TAG_JOINED);
		if (pvm_barrier(group, GSIZE) < 0)
			fprintf(stderr, "barrierexit: t%x: barrier failed\n",
			    mytid);
	}
	pvm_exit();
	return rc;
}
