/*
 * deadpair: a plain PVM program with a planted deadlock between two
 * tasks.  Each waits for the other's message before sending its own, so
 * both block in pvm_recv forever; a monitor must report one deadlock
 * cycle of exactly these two tasks.
 *
 *	deadpair FILE
 *
 * The parent spawns one child (deadpair -c FILE).  Before blocking, each
 * task appends one line "ROLE TID PID" (tid in decimal) to FILE, so a
 * test knows the tasks to expect: "parent" and "child".  The tasks never
 * end on their own; halting pvmd kills them (an alarm ends them after
 * ALARM_SECS in case nobody does).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_PING	1	/* the message each waits for */
#define ALARM_SECS	120	/* a task still alive then was forgotten */

static char prog[] = "deadpair", cflag[] = "-c", anyhost[] = "";

/* Appends "ROLE TID PID" to path with one write (O_APPEND: lines of
 * several tasks never mix). */
static void
note(const char *path, const char *role, int tid)
{
	prog_log(path, "%s %d %ld\n", role, tid, (long)getpid());
}

/* Receives from peer, then answers: the order that makes the pair wait
 * for each other.  Never returns in practice. */
static int
recv_then_send(int peer)
{
	int v = 0;

	if (pvm_recv(peer, TAG_PING) < 0)
		return -1;
	pvm_upkint(&v, 1, 1);
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&v, 1, 1);
	return pvm_send(peer, TAG_PING);
}

int
main(int argc, char **argv)
{
	char *args[3];
	int mytid, peer, child = argc == 3 && strcmp(argv[1], cflag) == 0;
	const char *file;

	if (argc != 2 && !child) {
		fprintf(stderr, "usage: deadpair FILE\n");
		return 2;
	}
	file = argv[argc - 1];
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (child)
		peer = pvm_parent();
	else {
		args[0] = cflag;
		args[1] = argv[1];
		args[2] = NULL;
		if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, 1,
		    &peer) != 1) {
			fprintf(stderr, "deadpair: spawn failed: %d\n", peer);
			pvm_exit();
			return 1;
		}
	}
	note(file, child ? "child" : "parent", mytid);
	if (recv_then_send(peer) < 0)
		fprintf(stderr, "deadpair: t%x: recv failed\n", mytid);
	pvm_exit();
	return 0;
}
