/*
 * badunpack: a plain PVM program with one message unpacked with other
 * types than it was packed with (VISTOP's "message unpacked
 * incorrectly").  A monitor must report exactly that message: receiver,
 * sender, tag, and where the unpacks went wrong.
 *
 *	badunpack FILE
 *
 * The parent spawns the child (badunpack -c FILE) and sends it two
 * messages.  The first (tag TAG_GOOD: an int and a double) the child
 * unpacks as packed.  The second (tag TAG_BAD) holds two ints and a
 * double, and the child unpacks three ints: the third pvm_upkint reads
 * the double's first bytes, 8 bytes into the message.  PVM messages
 * carry no types, so the unpack itself succeeds.  The child then tells
 * the parent it is done (TAG_DONE, unpacked as packed) and both exit.
 * Each task appends "ROLE TID PID" (decimal tid; ROLE parent or child)
 * to FILE, and the parent "sent TAG" after the bad message's send.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_BAD		1	/* int, int, double; unpacked int, int, int */
#define TAG_GOOD	2	/* int, double; unpacked so */
#define TAG_DONE	3	/* child to parent: int */
#define ALARM_SECS	60	/* a task still alive then is hung */

static char prog[] = "badunpack", cflag[] = "-c", anyhost[] = "";

static int
child(const char *file, int mytid)
{
	int parent = pvm_parent(), a = 0, b = 0, c = 0;
	double d = 0;

	prog_log(file, "child %d %ld\n", mytid, (long)getpid());
	if (pvm_recv(parent, TAG_GOOD) < 0 || pvm_upkint(&a, 1, 1) < 0 ||
	    pvm_upkdouble(&d, 1, 1) < 0)
		return 1;
	if (a != 7 || d != 2.5) {
		fprintf(stderr, "badunpack: good message read %d %g\n", a, d);
		return 1;
	}
	if (pvm_recv(parent, TAG_BAD) < 0 || pvm_upkint(&a, 1, 1) < 0 ||
	    pvm_upkint(&b, 1, 1) < 0)
		return 1;
	/* The mistake: the third item was packed as a double. */
	pvm_upkint(&c, 1, 1);
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&a, 1, 1);
	return pvm_send(parent, TAG_DONE) < 0;
}

static int
parent(char *file, int mytid)
{
	char *args[] = { cflag, file, NULL };
	int kid, one = 1, two = 2, seven = 7, done = 0;
	double d = 2.5;

	prog_log(file, "parent %d %ld\n", mytid, (long)getpid());
	if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, 1, &kid) != 1) {
		fprintf(stderr, "badunpack: spawn failed\n");
		return 1;
	}
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&seven, 1, 1);
	pvm_pkdouble(&d, 1, 1);
	if (pvm_send(kid, TAG_GOOD) < 0)
		return 1;
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&one, 1, 1);
	pvm_pkint(&two, 1, 1);
	pvm_pkdouble(&d, 1, 1);
	if (pvm_send(kid, TAG_BAD) < 0)
		return 1;
	prog_log(file, "sent %d\n", TAG_BAD);
	if (pvm_recv(kid, TAG_DONE) < 0 || pvm_upkint(&done, 1, 1) < 0)
		return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	int mytid, rc, is_child = argc == 3 && strcmp(argv[1], cflag) == 0;

	if (argc != 2 && !is_child) {
		fprintf(stderr, "usage: badunpack FILE\n");
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (is_child)
		rc = child(argv[2], mytid);
	else
		rc = parent(argv[1], mytid);
	pvm_exit();
	return rc;
}
