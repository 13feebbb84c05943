/*
 * Signals (doc/events.md, "Signals"; doc/ordering.md, "Predecessors"): a
 * pvm_sendsig or pvm_kill begin is noted at its victim when it arrives,
 * and its time when it is released; the victim's next signal of that
 * number from its pvmd goes after it, matched to it.
 */
#include <string.h>

#include "order_internal.h"
#include "xmalloc.h"

/* A pvm_sendsig or pvm_kill begin arrived: note it at its victim. */
void
order_sig_arrived(struct order *o, struct order_task *t, const struct record *r)
{
	struct order_task *v;
	struct order_sig *g;

	if (r->peer <= 0)
		return;		/* no task: PVM refuses it */
	v = order_task_get(o, r->peer);
	if (v->sigs == NULL)
		v->sigs = xcalloc(ORDER_SIGS_MAX, sizeof(*v->sigs));
	if (v->nsigs == ORDER_SIGS_MAX)
		memmove(v->sigs, v->sigs + 1, --v->nsigs * sizeof(*v->sigs));
	g = &v->sigs[v->nsigs++];
	memset(g, 0, sizeof(*g));
	g->from = t->tid;
	g->signo = r->inst;
	g->seq = r->seq;
}

/* A pvm_sendsig or pvm_kill begin was released: its signal may go. */
void
order_sig_released(struct order *o, struct order_task *t,
    const struct record *r, uint64_t corr)
{
	struct order_task *v = task_find(o, r->peer);
	size_t i;

	for (i = 0; v != NULL && i < v->nsigs; i++)
		if (v->sigs[i].from == t->tid && v->sigs[i].seq == r->seq) {
			v->sigs[i].released = 1;
			v->sigs[i].pred.raw = r->t_ns;
			v->sigs[i].pred.corr = corr;
			v->sigs[i].pred.host = t->host;
			wake_list(o, &o->sigw);
			return;
		}
}

/*
 * A signal from t's pvmd: after the first pvm_sendsig (pvm_kill) of its
 * number to t that is still unmatched, once that is released.  With
 * none, it waits for a flush round: a signal pmon saw no sender of (a
 * pvmd's own SIGTERM as it halts, a task pmon does not instrument, a
 * lost record) then goes unmatched.
 */
int
order_step_signal(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	struct order_sig g;
	size_t i;

	for (i = 0; i < t->nsigs; i++)
		if (t->sigs[i].signo == r->inst)
			break;
	if (i < t->nsigs && t->sigs[i].released) {
		g = t->sigs[i];
		memmove(&t->sigs[i], &t->sigs[i + 1], (t->nsigs - i - 1) *
		    sizeof(*t->sigs));
		t->nsigs--;
		return order_release_head(o, t, EVENT_MATCHED, g.from, g.seq,
		    &g.pred);
	}
	if (force || o->draining ||
	    (i == t->nsigs && t->head->added < o->synced))
		return order_release_plain(o, t, 0);
	return order_wait_on(o, t, &o->sigw, WAIT_SIGNAL, NULL);
}
