/*
 * unreceived: a plain PVM program with one message that is never
 * received: the receiver lets it arrive (pvm_probe sees it) and exits
 * without taking it.  A monitor must report exactly that message as
 * unreceived: receiver, sender, tag and size.
 *
 *	unreceived FILE
 *
 * The sender spawns the receiver (unreceived -r FILE), waits for its
 * "ready" message (received), sends it MSG_BYTES raw bytes with tag
 * TAG_DATA and exits.  The receiver probes until the message is there,
 * then exits; libpvm's pvm_exit discards it.  Each task appends
 * "ROLE TID PID" (decimal tid; ROLE sender or receiver) to FILE, the
 * receiver "exited TID" just before pvm_exit, and the sender
 * "sent TAG BYTES" after the send.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_READY	1	/* receiver to sender, received */
#define TAG_DATA	7	/* sender to receiver, never received */
#define MSG_BYTES	100
#define PROBE_SECS	30	/* the receiver gives up waiting then */
#define ALARM_SECS	60	/* a task still alive then is hung */

static char prog[] = "unreceived", rflag[] = "-r", anyhost[] = "";

/* Appends one line to path with one write (O_APPEND: lines of several
 * tasks never mix). */
static void
note(const char *path, const char *line)
{
	prog_log(path, "%s", line);
}

static void
note_role(const char *path, const char *role, int tid)
{
	char line[128];

	snprintf(line, sizeof(line), "%s %d %ld\n", role, tid,
	    (long)getpid());
	note(path, line);
}

static int
receiver(const char *file, int mytid)
{
	char line[64];
	int parent = pvm_parent(), i, n = PROBE_SECS * 100;

	note_role(file, "receiver", mytid);
	pvm_initsend(PvmDataDefault);
	if (pvm_send(parent, TAG_READY) < 0)
		return 1;
	for (i = 0; i < n && pvm_probe(parent, TAG_DATA) == 0; i++)
		usleep(10000);
	snprintf(line, sizeof(line), "exited %d\n", mytid);
	note(file, line);
	return i < n ? 0 : 1;
}

static int
sender(char *file, int mytid)
{
	char *args[] = { rflag, file, NULL }, data[MSG_BYTES], line[64];
	int r;

	note_role(file, "sender", mytid);
	if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, 1, &r) != 1) {
		fprintf(stderr, "unreceived: spawn failed\n");
		return 1;
	}
	if (pvm_recv(r, TAG_READY) < 0)
		return 1;
	memset(data, 'x', sizeof(data));
	pvm_initsend(PvmDataRaw);
	pvm_pkbyte(data, MSG_BYTES, 1);
	if (pvm_send(r, TAG_DATA) < 0)
		return 1;
	snprintf(line, sizeof(line), "sent %d %d\n", TAG_DATA, MSG_BYTES);
	note(file, line);
	return 0;
}

int
main(int argc, char **argv)
{
	int mytid, rc, is_receiver = argc == 3 && strcmp(argv[1], rflag) == 0;

	if (argc != 2 && !is_receiver) {
		fprintf(stderr, "usage: unreceived FILE\n");
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (is_receiver)
		rc = receiver(argv[2], mytid);
	else
		rc = sender(argv[1], mytid);
	pvm_exit();
	return rc;
}
