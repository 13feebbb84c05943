/*
 * grouprace: a plain PVM program whose group calls race each other, as
 * in VISTOP's Fig. 3 (paper 003, section 3.3): tasks join and leave a
 * group while another task broadcasts to it, so only the group state a
 * monitor models can tell in which order the events may be shown.
 *
 *	grouprace N ROUNDS DIR
 *
 * The master spawns N workers (grouprace -w DIR), spread over every host
 * of the virtual machine, and broadcasts to the group "gr.race" until all
 * workers are done, polling pvm_gsize on it now and then.  Each worker
 * joins "gr.bar" and polls pvm_gsize until all N have joined, then for
 * ROUNDS rounds joins "gr.race" (skipping every third round), sleeps a
 * random moment, passes a barrier on "gr.bar" with count N, leaves
 * "gr.race", and takes the broadcasts it got.  Then the odd workers leave
 * "gr.bar" while the even ones poll its size until only they are left
 * and pass a few more barriers with that smaller count.  Finally the
 * master tells every worker it is done; a worker takes the broadcasts
 * still queued (PVM keeps the order of messages between two tasks) and
 * leaves.
 *
 * Before pvm_exit each task writes DIR/TID.counts, one line "pvm_CALL N"
 * per PVM function it called (as msgmix does), and DIR/TID.stats with
 * what it did: "role master|worker", "joins N", "leaves N",
 * "bcast_recv N" (broadcast messages received), "barriers N",
 * "gsize N" (pvm_gsize calls), and for the master "bcasts N" and
 * "bcast_empty N" (broadcasts that found nobody else in the group).
 * Every blocking wait has a time limit, and an alarm ends a task that
 * hangs anyway.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_INIT	1	/* mcast: N, ROUNDS, tids */
#define TAG_BCAST	2	/* bcast to gr.race: a sequence number */
#define TAG_FIN		3	/* worker to master: index, errors */
#define TAG_DONE	4	/* master to worker: no more broadcasts */
#define MAXWORKERS	32
#define MAXROUNDS	1000
#define MAXBCASTS	4000	/* the master stops broadcasting here */
#define EXTRA_BARRIERS	4	/* phase 2: barriers of the even workers */
#define WAIT_SECS	45	/* any wait for other tasks */
#define ALARM_SECS	90	/* a task that still runs then is hung */

/* The program's own count of each PVM call it makes. */
static struct {
	const char	*name;
	int		 n;
} counts[64];
static int ncounts;

/* What the task did, for DIR/TID.stats. */
static struct {
	int	joins, leaves, bcast_recv, barriers, gsize;
	int	bcasts, bcast_empty;
} st;

static char *outdir;
/* libpvm takes non-const strings. */
static char race[] = "gr.race", bar[] = "gr.bar", prog[] = "grouprace",
    wflag[] = "-w";
static int errors, last_seq = -1;

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
		fprintf(stderr, "grouprace: t%x: %s (%d)\n", pvm_mytid(), what,
		    val);
		errors++;
	}
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A random pause of up to max_us microseconds: lets the races vary. */
static void
pause_us(int max_us)
{
	usleep((useconds_t)(rand() % (max_us + 1)));
}

static void
write_file(int mytid, const char *ext, void (*fill)(FILE *))
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%x.%s", outdir, mytid, ext);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		perror(tmp);
		exit(1);
	}
	fill(f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		perror(path);
		exit(1);
	}
}

static void
fill_counts(FILE *f)
{
	int i;

	for (i = 0; i < ncounts; i++)
		fprintf(f, "%s %d\n", counts[i].name, counts[i].n);
}

static int is_master;

static void
fill_stats(FILE *f)
{
	fprintf(f, "role %s\njoins %d\nleaves %d\nbcast_recv %d\n"
	    "barriers %d\ngsize %d\n", is_master ? "master" : "worker",
	    st.joins, st.leaves, st.bcast_recv, st.barriers, st.gsize);
	if (is_master)
		fprintf(f, "bcasts %d\nbcast_empty %d\n", st.bcasts,
		    st.bcast_empty);
	fprintf(f, "errors %d\n", errors);
}

/* Writes DIR/TID.counts and DIR/TID.stats (atomically), leaves PVM. */
static void
finish(int mytid)
{
	count("pvm_exit");
	write_file(mytid, "counts", fill_counts);
	write_file(mytid, "stats", fill_stats);
	pvm_exit();
}

/* --- worker --------------------------------------------------------------- */

/* Takes every broadcast already queued from the master. */
static void
drain(int master)
{
	int seq;

	while (P(pvm_nrecv, master, TAG_BCAST) > 0) {
		P(pvm_upkint, &seq, 1, 1);
		check(seq > last_seq, "broadcasts out of order", seq);
		last_seq = seq;
		st.bcast_recv++;
	}
}

/* Polls the size of group until it is size; 0, or -1 after WAIT_SECS. */
static int
await_size(char *group, int size)
{
	double limit = now() + WAIT_SECS;
	int n;

	for (;;) {
		st.gsize++;
		if ((n = P(pvm_gsize, group)) == size)
			return 0;
		if (now() > limit) {
			check(0, "group size never reached", n);
			return -1;
		}
		usleep(500);
	}
}

static void
barrier(int size)
{
	st.barriers++;
	check(P(pvm_barrier, bar, size) >= 0, "barrier", size);
}

/* ROUNDS rounds of join, barrier, leave on gr.race while the master
 * broadcasts to it. */
static void
rounds(int master, int me, int n, int nrounds)
{
	int r, member;

	for (r = 0; r < nrounds; r++) {
		member = (me + r) % 3 != 2;
		if (member) {
			st.joins++;
			check(P(pvm_joingroup, race) >= 0, "join gr.race", r);
		}
		pause_us(1000);
		drain(master);
		barrier(n);
		drain(master);
		pause_us(1000);
		if (member) {
			st.leaves++;
			check(P(pvm_lvgroup, race) >= 0, "leave gr.race", r);
		}
		drain(master);
	}
}

/* Phase 2: the odd workers leave gr.bar; the even ones wait until they
 * are alone in it and pass barriers with their smaller count. */
static void
shrink(int me, int n)
{
	int neven = (n + 1) / 2, i;

	if (me % 2 == 1) {
		st.leaves++;
		check(P(pvm_lvgroup, bar) >= 0, "leave gr.bar", me);
		return;
	}
	if (await_size(bar, neven) == -1)
		return;
	for (i = 0; i < EXTRA_BARRIERS; i++)
		barrier(neven);
}

static void
worker(int mytid)
{
	int tids[MAXWORKERS], n = 0, nrounds = 0, me = -1, i, master, v[2];

	master = P(pvm_parent);
	check(P(pvm_trecv, master, TAG_INIT,
	    &(struct timeval){ WAIT_SECS, 0 }) > 0, "no init message", 0);
	P(pvm_upkint, &n, 1, 1);
	P(pvm_upkint, &nrounds, 1, 1);
	if (n < 1 || n > MAXWORKERS || nrounds < 0 || nrounds > MAXROUNDS) {
		fprintf(stderr, "grouprace: bad init message\n");
		exit(1);
	}
	P(pvm_upkint, tids, n, 1);
	for (i = 0; i < n; i++)
		if (tids[i] == mytid)
			me = i;
	check(me >= 0, "not in the tid list", mytid);
	srand((unsigned)mytid ^ (unsigned)time(NULL));

	st.joins++;
	check(P(pvm_joingroup, bar) >= 0, "join gr.bar", me);
	if (await_size(bar, n) == 0) {
		rounds(master, me, n, nrounds);
		shrink(me, n);
	}

	v[0] = me;
	v[1] = errors;
	P(pvm_initsend, PvmDataDefault);
	P(pvm_pkint, v, 2, 1);
	P(pvm_send, master, TAG_FIN);
	check(P(pvm_trecv, master, TAG_DONE,
	    &(struct timeval){ WAIT_SECS, 0 }) > 0, "no done message", me);
	drain(master);
	if (me % 2 == 0) {
		st.leaves++;
		check(P(pvm_lvgroup, bar) >= 0, "leave gr.bar", me);
	}
}

/* --- master --------------------------------------------------------------- */

static void
broadcast(int seq)
{
	int rc;

	P(pvm_initsend, PvmDataDefault);
	P(pvm_pkint, &seq, 1, 1);
	rc = P(pvm_bcast, race, TAG_BCAST);
	st.bcasts++;
	/* Nobody in the group, or only ourselves: a normal outcome here. */
	if (rc == PvmNoGroup || rc == PvmNoInst)
		st.bcast_empty++;
	else
		check(rc >= 0, "bcast", rc);
}

/* Spawns worker i on host i modulo the number of hosts. */
static int
spawn_all(int n, int *tids)
{
	struct pvmhostinfo *hi;
	int nhost, narch, i;
	char *argv[] = { wflag, outdir, NULL };

	if (P(pvm_config, &nhost, &narch, &hi) < 0 || nhost < 1) {
		fprintf(stderr, "grouprace: pvm_config failed\n");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (P(pvm_spawn, prog, argv, PvmTaskHost,
		    hi[i % nhost].hi_name, 1, &tids[i]) != 1) {
			fprintf(stderr, "grouprace: spawn on %s: %d\n",
			    hi[i % nhost].hi_name, tids[i]);
			while (--i >= 0)
				P(pvm_kill, tids[i]);
			return -1;
		}
	printf("grouprace: %d workers on %d hosts\n", n, nhost < n ?
	    nhost : n);
	return 0;
}

/* Broadcasts until every worker said it is done. */
static void
race_loop(int n)
{
	double limit = now() + WAIT_SECS;
	int nfin = 0, seq = 0, v[2];

	while (nfin < n) {
		if (st.bcasts < MAXBCASTS)
			broadcast(seq++);
		if (seq % 4 == 0) {
			st.gsize++;
			P(pvm_gsize, race);
		}
		while (P(pvm_nrecv, -1, TAG_FIN) > 0) {
			P(pvm_upkint, v, 2, 1);
			errors += v[1];
			nfin++;
		}
		if (now() > limit) {
			check(0, "workers did not finish", nfin);
			break;
		}
		pause_us(400);
	}
}

static int
master(int mytid, int n, int nrounds)
{
	int tids[MAXWORKERS], i;

	(void)mytid;
	if (spawn_all(n, tids) == -1)
		return 1;
	P(pvm_initsend, PvmDataDefault);
	P(pvm_pkint, &n, 1, 1);
	P(pvm_pkint, &nrounds, 1, 1);
	P(pvm_pkint, tids, n, 1);
	P(pvm_mcast, tids, n, TAG_INIT);
	race_loop(n);
	for (i = 0; i < n; i++) {
		P(pvm_initsend, PvmDataDefault);
		P(pvm_send, tids[i], TAG_DONE);
	}
	printf("grouprace: %d broadcasts, %d to an empty group\n", st.bcasts,
	    st.bcast_empty);
	printf("grouprace: %s\n", errors ? "FAILED" : "ok");
	return errors ? 1 : 0;
}

int
main(int argc, char **argv)
{
	int mytid, n = 0, nrounds = 0, rc;

	if (argc == 3 && strcmp(argv[1], "-w") == 0)
		outdir = argv[2];
	else if (argc == 4) {
		n = atoi(argv[1]);
		nrounds = atoi(argv[2]);
		if (n >= 1 && n <= MAXWORKERS && nrounds >= 0 &&
		    nrounds <= MAXROUNDS)
			outdir = argv[3];
	}
	if (outdir == NULL) {
		fprintf(stderr, "usage: grouprace N ROUNDS DIR "
		    "(1 <= N <= %d, ROUNDS <= %d)\n", MAXWORKERS, MAXROUNDS);
		return 2;
	}
	alarm(ALARM_SECS);
	if ((mytid = P(pvm_mytid)) < 0)
		return 1;
	P(pvm_setopt, PvmAutoErr, 0);
	is_master = n > 0;
	srand((unsigned)mytid ^ (unsigned)time(NULL));
	if (is_master)
		rc = master(mytid, n, nrounds);
	else {
		worker(mytid);
		rc = errors ? 1 : 0;
	}
	fflush(stdout);
	finish(mytid);
	return rc;
}
