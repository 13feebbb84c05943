/*
 * The summary of pmon trace --summary: per task the events, calls,
 * messages and bytes sent and received; totals; how receives were
 * matched.  It fits one screen: at most SUMMARY_ROWS tasks are listed,
 * the totals always cover every task.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmon-tool.h"
#include "pmon.h"

#define SUMMARY_ROWS	20

struct task_sum {
	int32_t		 tid;
	char		 host[32];
	char		 program[32];
	unsigned long	 events;
	unsigned long	 calls;		/* begin events */
	unsigned long	 sent;		/* messages, one per destination */
	unsigned long long sent_bytes;
	unsigned long	 recvd;
	unsigned long long recvd_bytes;
};

struct summary {
	struct task_sum	*tasks;		/* sorted by tid */
	size_t		 ntasks;
	size_t		 size;
	unsigned long	 matched;
	unsigned long	 unmatched;
	unsigned long	 lost;
};

struct summary *
summary_new(void)
{
	return calloc(1, sizeof(struct summary));
}

void
summary_free(struct summary *s)
{
	if (s == NULL)
		return;
	free(s->tasks);
	free(s);
}

/* The entry of tid, inserted in tid order when new; NULL without memory. */
static struct task_sum *
summary_task(struct summary *s, int32_t tid)
{
	struct task_sum *n;
	size_t lo = 0, hi = s->ntasks, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->tasks[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->ntasks && s->tasks[lo].tid == tid)
		return &s->tasks[lo];
	if (s->ntasks == s->size) {
		n = reallocarray(s->tasks, s->size ? 2 * s->size : 16,
		    sizeof(*n));
		if (n == NULL)
			return NULL;
		s->tasks = n;
		s->size = s->size ? 2 * s->size : 16;
	}
	memmove(&s->tasks[lo + 1], &s->tasks[lo],
	    (s->ntasks - lo) * sizeof(*s->tasks));
	s->ntasks++;
	memset(&s->tasks[lo], 0, sizeof(s->tasks[lo]));
	s->tasks[lo].tid = tid;
	return &s->tasks[lo];
}

/* Counts messages as the coordinator orders them (record_is_send/recv). */
static void
summary_msgs(struct summary *s, struct task_sum *ts,
    const struct pmon_event *ev)
{
	unsigned long n = 0;
	int b = ev->bytes > 0 ? ev->bytes : 0;

	if ((ev->call == PMON_CALL_send || ev->call == PMON_CALL_psend) &&
	    ev->phase == PMON_PHASE_BEGIN)
		n = 1;
	else if (ev->call == PMON_CALL_mcast && ev->phase == PMON_PHASE_BEGIN)
		n = ev->npeers;
	else if (ev->call == PMON_CALL_bcast && ev->phase == PMON_PHASE_END)
		n = ev->npeers;
	ts->sent += n;
	ts->sent_bytes += (unsigned long long)n * (unsigned)b;
	if (ev->phase == PMON_PHASE_END && (ev->flags & PMON_EV_MSG) &&
	    ev->call != PMON_CALL_probe) {
		ts->recvd++;
		ts->recvd_bytes += (unsigned)b;
		if (ev->flags & PMON_EV_MATCHED)
			s->matched++;
	}
	if (ev->flags & PMON_EV_UNMATCHED)
		s->unmatched++;
}

/*
 * Keeps name, cut to size, in dst; it is compared first, so the copy is
 * made only when a tid's names change (nearly never, and not per event).
 */
static void
summary_name(char *dst, size_t size, const char *name)
{
	if (strncmp(dst, name, size - 1) != 0)
		snprintf(dst, size, "%s", name);
}

int
summary_event(struct summary *s, const struct pmon_event *ev)
{
	struct task_sum *ts;

	if ((ts = summary_task(s, ev->tid)) == NULL)
		return -1;
	summary_name(ts->host, sizeof(ts->host), ev->task->host);
	summary_name(ts->program, sizeof(ts->program), ev->task->program);
	if (ev->flags & PMON_EV_LOST) {
		s->lost += (uint32_t)ev->bytes;
		return 0;
	}
	ts->events++;
	if (ev->phase == PMON_PHASE_BEGIN)
		ts->calls++;
	summary_msgs(s, ts, ev);
	return 0;
}

static void
summary_row(FILE *f, const char *tid, const char *host, const char *prog,
    const struct task_sum *t)
{
	fprintf(f, "%-9s %-12.12s %-12.12s %8lu %7lu %6lu %10llu %6lu %10llu\n",
	    tid, host, prog, t->events, t->calls, t->sent, t->sent_bytes,
	    t->recvd, t->recvd_bytes);
}

void
summary_print(struct summary *s, FILE *f)
{
	struct task_sum total;
	char tid[16];
	size_t i;

	memset(&total, 0, sizeof(total));
	fprintf(f, "%-9s %-12s %-12s %8s %7s %6s %10s %6s %10s\n", "task",
	    "host", "program", "events", "calls", "sent", "bytes", "recvd",
	    "bytes");
	for (i = 0; i < s->ntasks; i++) {
		const struct task_sum *t = &s->tasks[i];

		if (i < SUMMARY_ROWS) {
			snprintf(tid, sizeof(tid), "t%x", (unsigned)t->tid);
			summary_row(f, tid, t->host, t->program, t);
		}
		total.events += t->events;
		total.calls += t->calls;
		total.sent += t->sent;
		total.sent_bytes += t->sent_bytes;
		total.recvd += t->recvd;
		total.recvd_bytes += t->recvd_bytes;
	}
	if (s->ntasks > SUMMARY_ROWS)
		fprintf(f, "(%zu more tasks not listed)\n",
		    s->ntasks - SUMMARY_ROWS);
	snprintf(tid, sizeof(tid), "%zu", s->ntasks);
	summary_row(f, "total", tid, s->ntasks == 1 ? "task" : "tasks",
	    &total);
	fprintf(f, "receives: %lu matched to their send, %lu unmatched; "
	    "%lu events lost\n", s->matched, s->unmatched, s->lost);
	fflush(f);
}
