/*
 * msgtruth: a message ring whose receives say what they got, so that a
 * test can check every match pmon reports against the truth
 * (tests/integ/t_lost_match.sh, doc/ordering.md "Losses").
 *
 *	msgtruth N ROUNDS DIR [PAUSE_US]
 *
 * Task 0 spawns the other N - 1 (msgtruth -c DIR) and multicasts N,
 * ROUNDS, PAUSE_US (default 0) and the tids.  In each round every task sends one message to
 * its successor (tag 2), in every fourth round (N >= 4) also multicasts
 * one to the two tasks after its successor (tag 3), then takes every
 * message addressed to it that round with a wildcard receive,
 * pvm_recv(-1, -1), and sleeps PAUSE_US microseconds.  Each message carries the sender's index, the round
 * and the sequence number of the record its pvm_send or pvm_mcast
 * begins with: pmon numbers a task's records from 1, a begin and an end
 * per PVM call, so the k-th call begins with record 2 k - 1 and ends
 * with 2 k.  After each receive the task notes the record its pvm_recv
 * ended with and the send it got; before pvm_exit it writes the notes
 * to DIR/truth.TID (tid in hex), one line each:
 *
 *	recv RECV_TID RECV_SEQ SEND_TID SEND_SEQ	(tids in decimal)
 *
 * Task 0 prints "msgtruth ok" when its rounds are done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_INIT	1
#define TAG_NEXT	2	/* to the successor */
#define TAG_MCAST	3	/* to the two after it */
#define MAXTASKS	64
#define MAXROUNDS	10000000
#define MAXPAUSE	1000000

/* Every PVM call goes through CALL: calls is the number made so far. */
static int calls;
#define CALL(x)		(calls++, (x))
/* The record the next call but `ahead` will begin with. */
#define SEQ_AHEAD(ahead)	(2 * (calls + (ahead)) + 1)

struct note {
	int		recv_seq, send_tid, send_seq;
};

static char prog[] = "msgtruth", cflag[] = "-c", anyhost[] = "";
static struct note *notes;
static size_t nnotes, capnotes;

static void
note(int recv_seq, int send_tid, int send_seq)
{
	if (nnotes == capnotes) {
		capnotes = capnotes ? 2 * capnotes : 4096;
		if ((notes = realloc(notes, capnotes * sizeof(*notes))) ==
		    NULL) {
			perror("msgtruth");
			exit(1);
		}
	}
	notes[nnotes].recv_seq = recv_seq;
	notes[nnotes].send_tid = send_tid;
	notes[nnotes++].send_seq = send_seq;
}

/* Packs who sends, the round, and the seq its send will begin with. */
static void
pack(int me, int round)
{
	int v[3];

	v[0] = me;
	v[1] = round;
	/* initsend, pkint, then the send. */
	v[2] = SEQ_AHEAD(2);
	CALL(pvm_initsend(PvmDataDefault));
	CALL(pvm_pkint(v, 3, 1));
}

/* Takes one message, and notes which send it was. */
static int
take(const int *tids, int n)
{
	int bufid, len, tag, src, recv_seq, v[3];

	recv_seq = SEQ_AHEAD(0) + 1;
	if ((bufid = CALL(pvm_recv(-1, -1))) < 0 ||
	    CALL(pvm_bufinfo(bufid, &len, &tag, &src)) < 0 ||
	    CALL(pvm_upkint(v, 3, 1)) < 0 || v[0] < 0 || v[0] >= n ||
	    tids[v[0]] != src)
		return -1;
	note(recv_seq, src, v[2]);
	return 0;
}

static int
ring(int me, int n, int rounds, int pause, const int *tids)
{
	int r, k, want, mc[2];

	mc[0] = tids[(me + 2) % n];
	mc[1] = tids[(me + 3) % n];
	for (r = 0; r < rounds; r++) {
		pack(me, r);
		if (CALL(pvm_send(tids[(me + 1) % n], TAG_NEXT)) < 0)
			return -1;
		want = 1;
		if (n >= 4 && r % 4 == 3) {
			pack(me, r);
			if (CALL(pvm_mcast(mc, 2, TAG_MCAST)) < 0)
				return -1;
			want += 2;
		}
		for (k = 0; k < want; k++)
			if (take(tids, n) == -1)
				return -1;
		if (pause > 0)
			usleep((useconds_t)pause);
	}
	return 0;
}

static int
start(const char *dir, int n, int rounds, int pause, int *tids)
{
	char *args[] = { cflag, NULL, NULL };
	int got;

	args[1] = (char *)dir;
	got = CALL(pvm_spawn(prog, args, PvmTaskDefault, anyhost, n - 1,
	    &tids[1]));
	if (got != n - 1) {
		fprintf(stderr, "msgtruth: spawned %d of %d tasks\n", got,
		    n - 1);
		return -1;
	}
	CALL(pvm_initsend(PvmDataDefault));
	CALL(pvm_pkint(&n, 1, 1));
	CALL(pvm_pkint(&rounds, 1, 1));
	CALL(pvm_pkint(&pause, 1, 1));
	CALL(pvm_pkint(tids, n, 1));
	return CALL(pvm_mcast(&tids[1], n - 1, TAG_INIT)) < 0 ? -1 : 0;
}

static int
join(int *n, int *rounds, int *pause, int *tids)
{
	if (CALL(pvm_recv(CALL(pvm_parent()), TAG_INIT)) < 0)
		return -1;
	CALL(pvm_upkint(n, 1, 1));
	CALL(pvm_upkint(rounds, 1, 1));
	CALL(pvm_upkint(pause, 1, 1));
	if (*n < 2 || *n > MAXTASKS || *rounds < 1 || *rounds > MAXROUNDS ||
	    *pause < 0 || *pause > MAXPAUSE)
		return -1;
	CALL(pvm_upkint(tids, *n, 1));
	return 0;
}

static int
write_notes(const char *dir, int mytid)
{
	char path[4096];
	FILE *f;
	size_t i;

	if ((size_t)snprintf(path, sizeof(path), "%s/truth.%x", dir, mytid) >=
	    sizeof(path) || (f = fopen(path, "w")) == NULL)
		return -1;
	for (i = 0; i < nnotes; i++)
		fprintf(f, "recv %d %d %d %d\n", mytid, notes[i].recv_seq,
		    notes[i].send_tid, notes[i].send_seq);
	return fclose(f) == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static int tids[MAXTASKS];
	int mytid, n = 0, rounds = 0, pause = 0, me = -1, i, rc, child;
	const char *dir;

	child = argc == 3 && strcmp(argv[1], cflag) == 0;
	if (child)
		dir = argv[2];
	else if (argc == 4 || argc == 5) {
		n = atoi(argv[1]);
		rounds = atoi(argv[2]);
		dir = argv[3];
		pause = argc == 5 ? atoi(argv[4]) : 0;
	} else
		dir = NULL;
	if (dir == NULL || (!child && (n < 2 || n > MAXTASKS ||
	    rounds < 1 || rounds > MAXROUNDS || pause < 0 ||
	    pause > MAXPAUSE))) {
		fprintf(stderr, "usage: msgtruth N ROUNDS DIR [PAUSE_US] "
		    "(2 <= N <= %d, 1 <= ROUNDS <= %d, PAUSE_US <= %d)\n",
		    MAXTASKS, MAXROUNDS, MAXPAUSE);
		return 2;
	}
	if ((mytid = CALL(pvm_mytid())) < 0)
		return 1;
	CALL(pvm_setopt(PvmAutoErr, 0));
	if (child)
		rc = join(&n, &rounds, &pause, tids);
	else {
		tids[0] = mytid;
		rc = start(dir, n, rounds, pause, tids);
	}
	for (i = 0; rc == 0 && i < n; i++)
		if (tids[i] == mytid)
			me = i;
	if (rc == 0)
		rc = me < 0 ? -1 : ring(me, n, rounds, pause, tids);
	if (rc == 0)
		rc = write_notes(dir, mytid);
	if (rc != 0)
		fprintf(stderr, "msgtruth: t%x: failed\n", mytid);
	pvm_exit();
	if (!child && rc == 0)
		printf("msgtruth ok\n");
	return rc != 0;
}
