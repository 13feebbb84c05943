/*
 * wildrace: a plain PVM program with one planted message race.  Two
 * senders send to a receiver at about the same time, with no causal
 * order between the two sends; the receiver takes the first with a
 * wildcard pvm_recv(-1, tag) and the other with pvm_recv(that sender,
 * tag).  Which sender's message the wildcard receive gets is decided by
 * arrival order alone, and the other message is received by a receive
 * with a different source argument: a monitor must report exactly one
 * race, at the receiver's wildcard receive, between the two sends.
 * Every message is received and every task exits cleanly.
 *
 *	wildrace FILE
 *
 * The receiver spawns both senders (wildrace -s FILE WHEN), WHEN being a
 * CLOCK_REALTIME instant in microseconds at which both send (each after
 * a random jitter of up to JITTER_US), so either may arrive first.  Each task appends lines to FILE:
 *	receiver TID PID
 *	sender TID PID
 *	first TID	(the receiver: whose message the wildcard receive got)
 *	done TID	(the receiver, after both receives)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"

#define TAG_DATA	1	/* the racing messages */
#define NSENDERS	2
#define START_US	200000	/* senders send this long after the spawn */
#define JITTER_US	2000	/* plus up to this much, so either may win */
#define ALARM_SECS	60	/* a task still alive then is hung */

static char prog[] = "wildrace", sflag[] = "-s", anyhost[] = "";

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

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A sender: waits for the agreed instant, then sends its tid. */
static int
sender(const char *file, int mytid, long long when)
{
	long long d;

	note(file, "sender", mytid, 1);
	srand((unsigned)getpid());
	d = when + rand() % JITTER_US - now_us();
	if (d > 0 && d < 10 * START_US)
		usleep((useconds_t)d);
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&mytid, 1, 1);
	return pvm_send(pvm_parent(), TAG_DATA) < 0;
}

static int
recv_from(int src, int *from)
{
	int bufid, bytes, tag, v;

	if ((bufid = pvm_recv(src, TAG_DATA)) < 0 ||
	    pvm_bufinfo(bufid, &bytes, &tag, from) < 0)
		return -1;
	pvm_upkint(&v, 1, 1);
	return v == *from ? 0 : -1;
}

static int
receiver(char *file, int mytid)
{
	char when[32], *args[] = { sflag, file, when, NULL };
	int tids[NSENDERS], first, second;

	note(file, "receiver", mytid, 1);
	snprintf(when, sizeof(when), "%lld", now_us() + START_US);
	if (pvm_spawn(prog, args, PvmTaskDefault, anyhost, NSENDERS, tids) !=
	    NSENDERS) {
		fprintf(stderr, "wildrace: spawn failed\n");
		return 1;
	}
	if (recv_from(-1, &first) < 0) {
		fprintf(stderr, "wildrace: wildcard receive failed\n");
		return 1;
	}
	note(file, "first", first, 0);
	if (recv_from(first == tids[0] ? tids[1] : tids[0], &second) < 0) {
		fprintf(stderr, "wildrace: second receive failed\n");
		return 1;
	}
	note(file, "done", mytid, 0);
	return 0;
}

int
main(int argc, char **argv)
{
	int mytid, rc, is_sender = argc == 4 && strcmp(argv[1], sflag) == 0;

	if (argc != 2 && !is_sender) {
		fprintf(stderr, "usage: wildrace FILE\n");
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = pvm_mytid()) < 0)
		return 1;
	pvm_setopt(PvmAutoErr, 0);
	if (is_sender)
		rc = sender(argv[2], mytid, atoll(argv[3]));
	else
		rc = receiver(argv[1], mytid);
	pvm_exit();
	return rc;
}
