/*
 * The ordering core's window in numbers (order_stats, order_task_stats)
 * and in words (order_dump), for pmon's status and for debugging.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "order_internal.h"

/* After a run every task that holds an event waits for something. */
void
order_stats(const struct order *o, struct order_stats *st)
{
	const struct order_group *g;
	struct order_task *t;
	size_t i;
	int k;

	memset(st, 0, sizeof(*st));
	st->tasks = o->registered;
	st->held = o->held;
	st->retained = o->retained;
	st->released = o->nreleased;
	st->inconsistent = o->ninconsistent;
	st->matched = o->nmatched;
	st->unmatched = o->nunmatched;
	st->estimated = o->nestimated;
	st->repaired = o->nrepaired;
	st->channels = o->nchans;
	for (g = o->groups; g != NULL; g = g->next)
		for (k = 0; k < COLL_KINDS; k++)
			st->kept += g->cn[k];
	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext) {
			st->kept += t->nspawns + t->nnotifies;
			if (t->head == NULL)
				continue;
			st->blocked++;
			if (t->wait >= WAIT_STATE && t->wait <= WAIT_SERVER)
				st->state_waits++;
		}
}

int
order_task_stats(const struct order *o, int32_t tid, struct order_stats *st)
{
	const struct order_task *t = task_find(o, tid);
	struct order_chan *c;
	size_t i;

	if (t == NULL || !t->registered) {
		errno = ENOENT;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->tasks = 1;
	st->held = t->held;
	for (i = 0; i < o->nchanb; i++)
		for (c = o->chans[i]; c != NULL; c = c->hnext)
			if (c->src == tid)
				st->retained += c->count;
	st->blocked = t->head != NULL;
	st->state_waits = t->head != NULL && t->wait >= WAIT_STATE &&
	    t->wait <= WAIT_SERVER;
	return 0;
}

static const char *const wait_names[] = {
	"none", "spawn", "message", "barrier", "state", "conflict", "round",
	"group call", "group server", "mailbox put", "notify", "signal"
};

void
order_dump(const struct order *o, FILE *f)
{
	const struct order_task *t;
	const struct order_group *g;
	const struct record *r;
	size_t i;

	for (i = 0; i < o->ntaskb; i++)
		for (t = o->tasks[i]; t != NULL; t = t->hnext) {
			if (t->head == NULL)
				continue;
			r = &t->head->rec;
			fprintf(f, "t%x holds %zu: %s %s seq %llu rc %d "
			    "peer %x %.*s waits for %s\n", (unsigned)t->tid,
			    t->held, record_call_name(r->call),
			    r->phase == PMON_BEGIN ? "begin" : "end",
			    (unsigned long long)r->seq, r->rc,
			    (unsigned)r->peer, r->glen, r->group,
			    wait_names[t->wait]);
		}
	for (g = o->groups; g != NULL; g = g->next) {
		fprintf(f, "group %.*s:", g->len, g->name);
		for (i = 0; i < g->nmembers; i++)
			fprintf(f, " t%x/%d", (unsigned)g->members[i],
			    g->insts[i]);
		fprintf(f, "; %zu joins and leaves held, barrier episode "
		    "%llu with %u entries", g->held_changes,
		    (unsigned long long)g->episode, g->arrivals);
		for (i = 0; i < g->ncounted; i++)
			fprintf(f, "; count %d: %llu entries",
			    g->counted[i].count,
			    (unsigned long long)g->counted[i].entries);
		fprintf(f, "\n");
	}
}
