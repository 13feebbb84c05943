/*
 * pvmtracer: PVM's built-in tracing as XPVM uses it, the baseline of
 * bench/bench_overhead.sh (BENCHMARKS.md, "make bench-overhead").
 *
 *	pvmtracer [-b bytes] [-R readyfile] [-o statsfile]
 *
 * Registers as the virtual machine's tracer (pvm_reg_tracer) with every
 * event kind of pvmtev.h in the mask, full trace records and a trace
 * buffer of -b bytes (4096; 0: one message per event).  From then on
 * every task that enrols traces itself: a task started from a shell
 * takes the tracer's settings from pvmd and the PVMTRACERCLASS mailbox,
 * a spawned task from its parent.  A traced task packs each event into
 * its trace buffer and sends the buffer to this task when it is full
 * and at pvm_exit.
 *
 * The tracer receives those messages and counts them; it does not
 * decode them (XPVM would, in another process: here that work is left
 * out, to the tracer's advantage).  -R names a file created once the
 * tracer is registered.  On SIGTERM or SIGINT it takes what still comes
 * for TAIL_MS, unregisters, writes "trace_msgs N", "trace_bytes N",
 * "output_msgs N", "tasks N" (distinct tasks that sent trace messages,
 * not counting pvmds, which report tasks' starts and ends) and
 * "senders tTID..." (pvmds too) to -o (or stdout) and leaves.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <pvm3.h>
#include <pvmtev.h>

#define TRACE_TAG	0x7e01	/* the trace messages' tag */
#define OUTPUT_TAG	0x7e02	/* spawned tasks' output, if sent here */
#define POLL_MS		100	/* how often a waiting tracer checks stop */
#define TAIL_MS		300	/* after stop: quiet this long, then leave */
#define SENDERS_MAX	256
#define TID_LOCAL	0x3ffff	/* a pvmd's tid has no local part */

static volatile sig_atomic_t stop;

struct counts {
	unsigned long	trace_msgs;
	unsigned long	trace_bytes;
	unsigned long	output_msgs;
	int		senders[SENDERS_MAX];
	int		nsenders;
};

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
sender_add(struct counts *c, int tid)
{
	int i;

	for (i = 0; i < c->nsenders; i++)
		if (c->senders[i] == tid)
			return;
	if (c->nsenders < SENDERS_MAX)
		c->senders[c->nsenders++] = tid;
}

/* Takes one message within ms milliseconds.  Returns 1, or 0 if none. */
static int
take(struct counts *c, int ms)
{
	struct timeval tmout = { ms / 1000, (ms % 1000) * 1000 };
	int bufid, len, tag, src;

	if ((bufid = pvm_trecv(-1, -1, &tmout)) <= 0)
		return 0;
	if (pvm_bufinfo(bufid, &len, &tag, &src) < 0)
		return 1;
	if (tag == TRACE_TAG) {
		c->trace_msgs++;
		c->trace_bytes += (unsigned long)len;
		sender_add(c, src);
	} else if (tag == OUTPUT_TAG)
		c->output_msgs++;
	pvm_freebuf(bufid);
	return 1;
}

static int
write_stats(const char *path, const struct counts *c)
{
	FILE *f = path != NULL ? fopen(path, "w") : stdout;
	int i, tasks = 0;

	if (f == NULL) {
		fprintf(stderr, "pvmtracer: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < c->nsenders; i++)
		if ((c->senders[i] & TID_LOCAL) != 0)
			tasks++;
	fprintf(f, "trace_msgs %lu\ntrace_bytes %lu\noutput_msgs %lu\n"
	    "tasks %d\nsenders", c->trace_msgs, c->trace_bytes,
	    c->output_msgs, tasks);
	for (i = 0; i < c->nsenders; i++)
		fprintf(f, " t%x", (unsigned)c->senders[i]);
	fputc('\n', f);
	return f != stdout ? fclose(f) : fflush(f);
}

static int
touch(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "pvmtracer: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return fclose(f);
}

static void
usage(void)
{
	fprintf(stderr, "usage: pvmtracer [-b bytes] [-R readyfile] "
	    "[-o statsfile]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *ready = NULL, *stats = NULL;
	struct counts c;
	Pvmtmask mask;
	char *end;
	long bufsize = 4096;
	int ctx, k, o, rc;

	while ((o = getopt(argc, argv, "b:o:R:")) != -1) {
		switch (o) {
		case 'b':
			errno = 0;
			bufsize = strtol(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || bufsize < 0 ||
			    bufsize > 1 << 24)
				usage();
			break;
		case 'o': stats = optarg; break;
		case 'R': ready = optarg; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	memset(&c, 0, sizeof(c));
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (pvm_mytid() < 0) {
		fprintf(stderr, "pvmtracer: cannot enrol in PVM\n");
		return 1;
	}
	pvm_setopt(PvmAutoErr, 0);
	TEV_MASK_INIT(mask);
	for (k = TEV_FIRST; k <= TEV_MAX; k++)
		TEV_MASK_SET(mask, k);
	ctx = pvm_getcontext();
	rc = pvm_reg_tracer(ctx, TRACE_TAG, ctx, OUTPUT_TAG, mask,
	    (int)bufsize, PvmTraceFull);
	if (rc < 0) {
		fprintf(stderr, "pvmtracer: pvm_reg_tracer failed (%d): is "
		    "another tracer registered?\n", rc);
		pvm_exit();
		return 1;
	}
	if (ready != NULL && touch(ready) == -1)
		stop = 1;
	while (!stop)
		(void)take(&c, POLL_MS);
	while (take(&c, TAIL_MS))
		;
	/* A second call unregisters and deletes the mailbox entry. */
	pvm_reg_tracer(ctx, TRACE_TAG, ctx, OUTPUT_TAG, mask, (int)bufsize,
	    PvmTraceFull);
	rc = write_stats(stats, &c);
	pvm_exit();
	return rc == 0 ? 0 : 1;
}
