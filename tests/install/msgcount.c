/*
 * msgcount: a tool written as a third party writes one, against the
 * installed pmon.h and libpmon.so alone (pkg-config pmon;
 * tests/integ/t_install.sh).  It subscribes to the coordinator of
 * $PVM_TMP and counts the messages each task sends and receives (a
 * multicast to n tasks is n messages).  When SIGTERM or SIGINT comes,
 * or the coordinator says goodbye, it prints one line per task:
 *
 *	t40001 master1 sent 3 received 3
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmon.h>

#define MAXTASKS	4096

static struct count {
	int32_t		 tid;
	char		 program[64];
	unsigned long	 sent, received;
} counts[MAXTASKS];
static int ntasks;
static volatile sig_atomic_t stop;

static struct count *
task_count(const struct pmon_event *ev)
{
	int i;

	for (i = 0; i < ntasks; i++)
		if (counts[i].tid == ev->tid)
			return &counts[i];
	if (ntasks == MAXTASKS)
		return NULL;
	counts[ntasks].tid = ev->tid;
	snprintf(counts[ntasks].program, sizeof(counts[0].program), "%s",
	    ev->task->program);
	return &counts[ntasks++];
}

static void
on_event(const struct pmon_event *ev, void *arg)
{
	struct count *c;

	(void)arg;
	if ((c = task_count(ev)) == NULL)
		return;
	if ((ev->call == PMON_CALL_send || ev->call == PMON_CALL_psend) &&
	    ev->phase == PMON_PHASE_BEGIN)
		c->sent++;
	else if ((ev->call == PMON_CALL_mcast &&
	    ev->phase == PMON_PHASE_BEGIN) || (ev->call == PMON_CALL_bcast &&
	    ev->phase == PMON_PHASE_END))
		c->sent += ev->npeers;
	if (ev->flags & PMON_EV_MSG)
		c->received++;
}

static void
on_signal(int signo)
{
	(void)signo;
	stop = 1;
}

int
main(void)
{
	struct pmon_callbacks cb = { .event = on_event };
	struct sigaction sa;
	struct pmon *p;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((p = pmon_new()) == NULL ||
	    pmon_connect(p, NULL, "msgcount",
	    PMON_SUBSCRIBE | PMON_LOSSLESS) == -1) {
		fprintf(stderr, "msgcount: %s\n",
		    p != NULL ? pmon_error(p) : "out of memory");
		return 1;
	}
	pmon_set_callbacks(p, &cb, NULL);
	/* Connected and subscribed: what comes from now on is counted. */
	if (pmon_flush(p) == -1) {
		fprintf(stderr, "msgcount: %s\n", pmon_error(p));
		return 1;
	}
	fprintf(stderr, "msgcount: ready\n");
	while (!stop)
		if (pmon_wait(p, 1000) == -1) {
			if (!pmon_closed(p)) {
				fprintf(stderr, "msgcount: %s\n", pmon_error(p));
				return 1;
			}
			break;
		}
	for (i = 0; i < ntasks; i++)
		printf("t%x %s sent %lu received %lu\n",
		    (unsigned)counts[i].tid, counts[i].program, counts[i].sent,
		    counts[i].received);
	pmon_free(p);
	return 0;
}
