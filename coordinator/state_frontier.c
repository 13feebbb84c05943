/*
 * The state model's frontiers (state.c, `pmon frontier`): the past and
 * the future of an event on every task, searched in the links that the
 * horizon keeps (state_causal.c), or an error that says why they do not
 * reach it.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* --- frontiers --------------------------------------------------------- */

static void
write_seq_or_null(FILE *fp, uint64_t seq)
{
	if (seq == 0)
		fputs("null", fp);
	else
		fprintf(fp, "%" PRIu64, seq);
}

/* The horizon, for people: "the last 16384 events of each task". */
static void
horizon_text(const struct state *s, char *buf, size_t size)
{
	const char *unit = "s";
	uint64_t d = s->h_ns;
	int n = 0;

	if (s->h_events != 0)
		n = snprintf(buf, size, "the last %" PRIu64 " events of each "
		    "task", s->h_events);
	if (d == 0)
		return;
	if (d % 1000000000 == 0)
		d /= 1000000000;
	else if (d % 1000 == 0) {
		d /= 1000;
		unit = "us";
	} else
		unit = "ns";
	snprintf(buf + n, size - (size_t)n, "%sthe last %" PRIu64 " %s of "
	    "the stream", n > 0 ? " and " : "", d, unit);
}

/*
 * Says why (t, seq)'s frontier on u is not known: beyond the horizon.
 * which is "past" or "future".
 */
static void
beyond_horizon(const struct state *s, const struct task *t, uint64_t seq,
    const struct task *u, const char *which, char *err, size_t size)
{
	char hz[96];

	horizon_text(s, hz, sizeof(hz));
	if (u == t)
		snprintf(err, size, "t%x:%" PRIu64 " is beyond the horizon "
		    "of the frontiers, ", (unsigned)t->tid, seq);
	else
		snprintf(err, size, "t%x:%" PRIu64 ": its %s on t%x is "
		    "beyond the horizon of the frontiers, ", (unsigned)t->tid,
		    seq, which, (unsigned)u->tid);
	snprintf(err + strlen(err), size - strlen(err), "%s (pmon start -H "
	    "EVENTS[,DURATION] keeps more, -H unlimited all)", hz);
}

/*
 * Says why (t, seq)'s frontier on u is not known: the model was set from
 * a snapshot after it (state_load), and knows no clock from before.
 */
static void
before_resync(const struct task *t, uint64_t seq, const struct task *u,
    char *err, size_t size)
{
	if (u == t)
		snprintf(err, size, "t%x:%" PRIu64 " is older than the snapshot "
		    "the state was set from after a loss: its frontiers are not "
		    "known", (unsigned)t->tid, seq);
	else
		snprintf(err, size, "t%x:%" PRIu64 ": its past on t%x reaches "
		    "before the snapshot the state was set from after a loss, "
		    "where the clocks are not known", (unsigned)t->tid, seq,
		    (unsigned)u->tid);
}

/*
 * The frontiers of (t, seq) on the tasks tv into past and future; -1
 * with err when the links kept do not settle them.
 */
static int
frontier_of(const struct state *s, const struct task *t, uint64_t seq,
    const struct task **tv, size_t nt, uint64_t *past, uint64_t *future,
    char *err, size_t size)
{
	const struct task *why;
	uint64_t *p, *f;
	size_t i;
	int rv = -1;

	if (seq <= t->base) {
		before_resync(t, seq, t, err, size);
		return -1;
	}
	/* Its task dropped the links after it. */
	if (seq <= t->links.gone_seq) {
		beyond_horizon(s, t, seq, t, "past", err, size);
		return -1;
	}
	p = xcalloc(s->ntasks + 1, sizeof(*p));
	f = xcalloc(s->ntasks + 1, sizeof(*f));
	if (state_past(s, t, seq, p, &why) == -1) {
		beyond_horizon(s, t, seq, why, "past", err, size);
		goto out;
	}
	if (state_future(s, t, seq, f, &why) == -1) {
		beyond_horizon(s, t, seq, why, "future", err, size);
		goto out;
	}
	for (i = 0; i < nt; i++) {
		past[i] = p[tv[i]->idx];
		future[i] = f[tv[i]->idx];
		if (past[i] < tv[i]->base) {
			before_resync(t, seq, tv[i], err, size);
			goto out;
		}
	}
	rv = 0;
out:
	free(p);
	free(f);
	return rv;
}

static void
write_frontier(FILE *fp, const struct task *t, uint64_t seq,
    const struct task **tv, size_t nt, const uint64_t *past,
    const uint64_t *future)
{
	size_t i;

	fputs("{\"event\":", fp);
	state_json_id(fp, t->tid, seq);
	fputs(",\"past\":{", fp);
	for (i = 0; i < nt; i++) {
		fprintf(fp, "%s\"%" PRId32 "\":", i ? "," : "", tv[i]->tid);
		write_seq_or_null(fp, past[i]);
	}
	fputs("},\"future\":{", fp);
	for (i = 0; i < nt; i++) {
		fprintf(fp, "%s\"%" PRId32 "\":", i ? "," : "", tv[i]->tid);
		write_seq_or_null(fp, future[i]);
	}
	fputs("}}", fp);
}

int
state_frontier(const struct state *s, int32_t tid, uint64_t seq, FILE *fp,
    char *err, size_t size)
{
	const struct task **tv, *t;
	uint64_t *past = NULL, *future = NULL;
	size_t nt;
	int rv = -1;

	if ((t = task_find(s, tid)) == NULL || !t->seen) {
		snprintf(err, size, "unknown task");
		return -1;
	}
	if (seq == 0 || seq > t->last_seq) {
		snprintf(err, size, "event not seen yet");
		return -1;
	}
	tv = state_tasks_sorted(s, &nt);
	past = xcalloc(nt + 1, sizeof(*past));
	future = xcalloc(nt + 1, sizeof(*future));
	if (frontier_of(s, t, seq, tv, nt, past, future, err, size) == 0) {
		write_frontier(fp, t, seq, tv, nt, past, future);
		rv = 0;
		if (ferror(fp)) {
			snprintf(err, size, "write error");
			rv = -1;
		}
	}
	free(tv);
	free(past);
	free(future);
	return rv;
}
