/*
 * msgmix: a plain PVM program that makes every kind of message call whose
 * order the pmon stream must get right, and counts its own calls.
 *
 *	msgmix K DIR
 *
 * The master spawns K workers (msgmix -w DIR) and exchanges messages with
 * them through pvm_mcast, pvm_psend/pvm_precv, pvm_send/pvm_trecv,
 * pvm_nrecv polling, pvm_probe then pvm_recv, a wildcard tag, a wildcard
 * source and tag, and a group (joingroup, barrier, bcast, lvgroup).
 * Every message sent is received exactly once.  Before pvm_exit each task
 * writes DIR/TID.counts, one line "pvm_CALL N" per PVM function it called
 * (pvm_exit included), so a test can compare a monitor's per-call counts
 * with the program's own.  Polling loops make some counts vary from run
 * to run; the file always holds the true numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_INIT	1	/* mcast: K, tids */
#define TAG_PSEND	2	/* psend/precv: worker index */
#define TAG_TRECV	3	/* send/trecv: master to worker */
#define TAG_NRECV	4	/* send/nrecv polling */
#define TAG_PROBE	5	/* send/probe + recv */
#define TAG_ANYTAG	6	/* recv(source, -1) */
#define TAG_ANY		7	/* recv(-1, -1) */
#define TAG_BCAST	8	/* bcast to the group */
#define MAXWORKERS	32

/* The program's own count of each PVM call it makes. */
static struct {
	const char	*name;
	int		 n;
} counts[64];
static int ncounts;
static char *outdir;
/* libpvm takes non-const strings. */
static char group[] = "msgmix", prog[] = "msgmix", anyhost[] = "",
    wflag[] = "-w";
static int errors;

static void
count(const char *name)
{
	int i;

	for (i = 0; i < ncounts; i++)
		if (strcmp(counts[i].name, name) == 0)
			break;
	if (i == ncounts) {
		if (ncounts == (int)(sizeof(counts) / sizeof(counts[0])))
			abort();
		counts[ncounts++].name = name;
	}
	counts[i].n++;
}

/* Counts a call, then makes it: P(pvm_send, tid, tag). */
#define P(fn, ...)	(count(#fn), fn(__VA_ARGS__))

static void
check(int ok, const char *what, int val)
{
	if (!ok) {
		fprintf(stderr, "msgmix: %s (%d)\n", what, val);
		errors++;
	}
}

/* Writes DIR/TID.counts atomically (rename), then leaves PVM. */
static void
finish(int mytid)
{
	char path[4096], tmp[4200];
	FILE *f;
	int i;

	count("pvm_exit");
	snprintf(path, sizeof(path), "%s/%x.counts", outdir, mytid);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		perror(tmp);
		exit(1);
	}
	for (i = 0; i < ncounts; i++)
		fprintf(f, "%s %d\n", counts[i].name, counts[i].n);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		exit(1);
	}
	pvm_exit();
}

static void
send_int(int tid, int tag, int val)
{
	P(pvm_initsend, PvmDataDefault);
	P(pvm_pkint, &val, 1, 1);
	P(pvm_send, tid, tag);
}

static int
recv_int(int tid, int tag)
{
	int val = -1;

	if (P(pvm_recv, tid, tag) < 0)
		errors++;
	P(pvm_upkint, &val, 1, 1);
	return val;
}

static void
group_phase(int size, int master, int me)
{
	int v;

	check(P(pvm_joingroup, group) >= 0, "joingroup", 0);
	check(P(pvm_barrier, group, size) >= 0, "barrier 1", 0);
	if (master) {
		P(pvm_initsend, PvmDataDefault);
		v = 1000;
		P(pvm_pkint, &v, 1, 1);
		check(P(pvm_bcast, group, TAG_BCAST) >= 0, "bcast", 0);
	} else {
		v = recv_int(-1, TAG_BCAST);
		check(v == 1000, "bcast value", v);
	}
	check(P(pvm_barrier, group, size) >= 0, "barrier 2", me);
	check(P(pvm_lvgroup, group) >= 0, "lvgroup", 0);
}

static void
worker(int mytid)
{
	int tids[MAXWORKERS], k = 0, me = -1, i, v, master;

	master = P(pvm_parent);
	P(pvm_recv, -1, TAG_INIT);
	P(pvm_upkint, &k, 1, 1);
	if (k < 1 || k > MAXWORKERS) {
		fprintf(stderr, "msgmix: bad worker count %d\n", k);
		exit(1);
	}
	P(pvm_upkint, tids, k, 1);
	for (i = 0; i < k; i++)
		if (tids[i] == mytid)
			me = i;
	check(me >= 0, "not in the tid list", mytid);

	check(P(pvm_psend, master, TAG_PSEND, &me, 1, PVM_INT) >= 0,
	    "psend", me);
	check(P(pvm_trecv, -1, TAG_TRECV, &(struct timeval){ 30, 0 }) > 0,
	    "trecv timed out", me);
	P(pvm_upkint, &v, 1, 1);
	check(v == me, "trecv value", v);
	send_int(master, TAG_NRECV, me);
	send_int(master, TAG_PROBE, me);
	send_int(master, TAG_ANYTAG, me);
	send_int(master, TAG_ANY, me);
	group_phase(k + 1, 0, me);
}

static void
master_phases(int k, const int *tids)
{
	int i, v, src, tag, len, got;

	for (i = 0; i < k; i++) {
		check(P(pvm_precv, -1, TAG_PSEND, &v, 1, PVM_INT, &src, &tag,
		    &len) >= 0, "precv", i);
		check(v >= 0 && v < k && tids[v] == src, "precv source", v);
	}
	for (i = 0; i < k; i++)
		send_int(tids[i], TAG_TRECV, i);
	for (got = 0; got < k; ) {
		if (P(pvm_nrecv, -1, TAG_NRECV) > 0) {
			P(pvm_upkint, &v, 1, 1);
			got++;
		} else
			usleep(1000);
	}
	for (i = 0; i < k; i++) {
		while (P(pvm_probe, -1, TAG_PROBE) == 0)
			usleep(1000);
		recv_int(-1, TAG_PROBE);
	}
	for (i = 0; i < k; i++)
		check(recv_int(tids[i], -1) == i, "wildcard tag", i);
	for (i = 0; i < k; i++) {
		v = recv_int(-1, -1);
		check(v >= 0 && v < k, "wildcard source and tag", v);
	}
}

static int
master(int mytid, int k)
{
	int tids[MAXWORKERS], n, i;
	char *argv[] = { wflag, outdir, NULL };

	n = P(pvm_spawn, prog, argv, PvmTaskDefault, anyhost, k, tids);
	if (n < k) {
		fprintf(stderr, "msgmix: spawned %d of %d workers\n", n, k);
		for (i = 0; i < n; i++)
			P(pvm_kill, tids[i]);
		finish(mytid);
		exit(1);
	}
	printf("msgmix: %d workers\n", k);
	P(pvm_initsend, PvmDataDefault);
	P(pvm_pkint, &k, 1, 1);
	P(pvm_pkint, tids, k, 1);
	P(pvm_mcast, tids, k, TAG_INIT);
	master_phases(k, tids);
	group_phase(k + 1, 1, -1);
	printf("msgmix: %s\n", errors ? "FAILED" : "ok");
	return errors ? 1 : 0;
}

int
main(int argc, char **argv)
{
	int mytid, k = 0, rc;

	if (argc == 3) {
		outdir = argv[2];
		if (strcmp(argv[1], "-w") != 0 &&
		    ((k = atoi(argv[1])) < 1 || k > MAXWORKERS))
			outdir = NULL;
	}
	if (outdir == NULL) {
		fprintf(stderr, "usage: msgmix K DIR (1 <= K <= %d)\n",
		    MAXWORKERS);
		return 2;
	}
	if ((mytid = P(pvm_mytid)) < 0)
		return 1;
	if (k == 0) {
		worker(mytid);
		rc = errors ? 1 : 0;
	} else
		rc = master(mytid, k);
	fflush(stdout);
	finish(mytid);
	return rc;
}
