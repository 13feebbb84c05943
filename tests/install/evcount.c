/*
 * evcount: a tool written as a third party writes one, against the
 * installed pmon.h and libpmon.so alone (pkg-config pmon;
 * tests/integ/t_install.sh).  It subscribes to the coordinator of
 * $PVM_TMP, counts the events by program, call and phase, and when
 * SIGTERM or SIGINT comes, or the coordinator says goodbye, prints
 * "program call phase count" lines, as streamcheck -c does.
 *
 *	evcount
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmon.h>

#define MAXKEYS	1024

static struct count {
	char		 key[192];
	unsigned long	 n;
} counts[MAXKEYS];
static int ncounts;
static volatile sig_atomic_t stop;

static void
on_event(const struct pmon_event *ev, void *arg)
{
	char key[192];
	int i;

	(void)arg;
	snprintf(key, sizeof(key), "%s %s %s", ev->task->program,
	    ev->call_name, ev->phase == PMON_PHASE_BEGIN ? "begin" : "end");
	for (i = 0; i < ncounts; i++)
		if (strcmp(counts[i].key, key) == 0)
			break;
	if (i == ncounts) {
		if (ncounts == MAXKEYS)
			return;
		snprintf(counts[ncounts++].key, sizeof(counts[0].key), "%s",
		    key);
	}
	counts[i].n++;
}

static void
on_signal(int signo)
{
	(void)signo;
	stop = 1;
}

static int
by_key(const void *a, const void *b)
{
	return strcmp(((const struct count *)a)->key,
	    ((const struct count *)b)->key);
}

int
main(void)
{
	struct pmon_callbacks cb;
	struct sigaction sa;
	struct pmon *p;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	memset(&cb, 0, sizeof(cb));
	cb.event = on_event;
	if ((p = pmon_new()) == NULL ||
	    pmon_connect(p, NULL, "evcount",
	    PMON_SUBSCRIBE | PMON_LOSSLESS) == -1) {
		fprintf(stderr, "evcount: %s\n", p ? pmon_error(p) : "no memory");
		return 1;
	}
	pmon_set_callbacks(p, &cb, NULL);
	/* Connected and subscribed: what comes from now on is counted. */
	if (pmon_flush(p) == -1) {
		fprintf(stderr, "evcount: %s\n", pmon_error(p));
		return 1;
	}
	fprintf(stderr, "evcount: ready\n");
	while (!stop)
		if (pmon_wait(p, 1000) == -1) {
			if (!pmon_closed(p)) {
				fprintf(stderr, "evcount: %s\n", pmon_error(p));
				return 1;
			}
			break;
		}
	qsort(counts, ncounts, sizeof(counts[0]), by_key);
	for (i = 0; i < ncounts; i++)
		printf("%s %lu\n", counts[i].key, counts[i].n);
	pmon_free(p);
	return 0;
}
