/*
 * The state model's causality (state.c): vector clocks, the clock
 * histories behind frontiers, and their horizon.
 *
 * Causality is tracked with vector clocks indexed by task (in the order
 * the model learnt of them), one component per task holding the last seq
 * of that task known to precede.  A task's clock changes in the others'
 * components only where it merges: the end of a receive (the clock of
 * the send, which the queued message holds), a barrier exit (the join of
 * its episode's entries) and its first event (its parent's at the
 * spawn).  Its own component is implicit: the clock of its event seq
 * has seq there.  Clocks are shared and reference counted: a task's
 * current clock is also the clock of every message it sent since the
 * clock last changed and of the last entry of its history, and is copied
 * before it changes (vc_own).  So what a receive, a barrier or a spawn
 * merges never depends on the history.
 *
 * The history, one entry per merge with the clock from then on, serves
 * frontiers only.  It is bounded by the horizon (state_set_horizon): the
 * clocks of each task's last events, and of the last seconds of the
 * stream; older entries are dropped and a frontier that needs one is an
 * error that says so.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* --- vector clocks ----------------------------------------------------- */

/*
 * Makes *vp a clock of at least n components that only the caller
 * holds, copying it if it is shared: then it may change.  n is at most
 * the number of tasks, which memory bounds far below UINT32_MAX.
 */
static void
vc_own(struct vclock **vp, size_t n)
{
	struct vclock *v = *vp, *nv;
	size_t have = v != NULL ? v->n : 0;

	if (v != NULL && v->refs == 1 && n <= have)
		return;
	if (n < have)
		n = have;
	if (n > UINT32_MAX)
		fatalx("%s: %zu components", __func__, n);
	nv = xmalloc(sizeof(*nv) + n * sizeof(nv->c[0]));
	nv->refs = 1;
	nv->n = (uint32_t)n;
	if (have > 0)
		memcpy(nv->c, v->c, have * sizeof(nv->c[0]));
	memset(nv->c + have, 0, (n - have) * sizeof(nv->c[0]));
	vc_unref(v);
	*vp = nv;
}

/* Raises component i of *vp to at least x; 1 if it changed. */
int
state_vc_raise(struct vclock **vp, size_t i, uint64_t x)
{
	if (x <= vc_get(*vp, i))
		return 0;
	vc_own(vp, i + 1);
	(*vp)->c[i] = x;
	return 1;
}

/*
 * *dst = max(*dst, src) but in component skip (the owner's own, which
 * is implicit); 1 if *dst changed.  An unchanged clock stays shared.
 */
int
state_vc_join(struct vclock **dst, const struct vclock *src, size_t skip)
{
	size_t i;

	if (src == NULL)
		return 0;
	for (i = 0; i < src->n; i++)
		if (i != skip && src->c[i] > vc_get(*dst, i))
			break;
	if (i == src->n)
		return 0;
	vc_own(dst, src->n);
	for (; i < src->n; i++)
		if (i != skip && src->c[i] > (*dst)->c[i])
			(*dst)->c[i] = src->c[i];
	return 1;
}

/* --- clock histories --------------------------------------------------- */

static void
hist_drop_first(struct history *h)
{
	vc_unref(h->gone);
	h->gone = hist_at(h, 0)->vc;
	h->first = (h->first + 1) & (h->cap - 1);
	h->n--;
	h->cut = 1;
}

void
state_hist_free(struct history *h)
{
	while (h->n > 0)
		hist_drop_first(h);
	vc_unref(h->gone);
	free(h->e);
}

/* Doubles the ring, keeping the entries in order. */
static void
hist_grow(struct history *h)
{
	struct hent *ne;
	size_t i, ncap = h->cap ? h->cap * 2 : 8;

	ne = xreallocarray(NULL, ncap, sizeof(*ne));
	for (i = 0; i < h->n; i++)
		ne[i] = *hist_at(h, i);
	free(h->e);
	h->e = ne;
	h->first = 0;
	h->cap = ncap;
}

/*
 * Drops t's oldest entries that the horizon no longer needs: the next
 * entry already covers every event of t's last h_events, and every
 * event later than h_ns before the latest time.  The last entry (the
 * clock now) stays.
 */
static void
hist_prune(const struct state *s, struct task *t)
{
	struct history *h = &t->hist;
	const struct hent *next;

	while (h->n >= 2) {
		next = hist_at(h, 1);
		if ((s->h_events == 0 ||
		    next->seq + s->h_events > t->last_seq + 1) &&
		    (s->h_ns == 0 || next->t + s->h_ns > s->now))
			break;
		hist_drop_first(h);
	}
}

void
state_hist_sweep(struct state *s)
{
	size_t i;

	for (i = 0; i < s->ntasks; i++)
		hist_prune(s, s->tasks[i]);
}

/* t's clock changed at event seq: the history gets it. */
void
state_hist_push(struct state *s, struct task *t, uint64_t seq)
{
	struct history *h = &t->hist;
	struct hent *e;

	if (h->n > 0 && (e = hist_at(h, h->n - 1))->seq == seq) {
		vc_unref(e->vc);
		e->vc = vc_ref(t->vc);
		return;
	}
	if (h->n == h->cap)
		hist_grow(h);
	e = hist_at(h, h->n++);
	e->seq = seq;
	e->t = s->now;
	e->vc = vc_ref(t->vc);
	hist_prune(s, t);
}

/*
 * The index + 1 of t's last entry at or before seq, 0 if none; -1 when
 * the history was cut there.
 */
static long
hist_find(const struct task *t, uint64_t seq)
{
	const struct history *h = &t->hist;
	size_t lo = 0, hi = h->n;

	/* Mostly the latest: skip the search of a long history. */
	if (hi > 0 && hist_at(h, hi - 1)->seq <= seq)
		return (long)hi;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hist_at(h, mid)->seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 && h->cut ? -1 : (long)lo;
}

/*
 * The clock of t's event seq from the history (NULL: zeros); -1 when it
 * is beyond the horizon.
 */
int
state_event_vc(const struct task *t, uint64_t seq, const struct vclock **out)
{
	long i = hist_find(t, seq);

	*out = i > 0 ? hist_at(&t->hist, (size_t)i - 1)->vc : NULL;
	return i < 0 ? -1 : 0;
}

/*
 * The send (from, seq) happened before t's event at: t's clock takes
 * the send's clock vc and the send itself.
 */
void
state_merge_event(struct state *s, struct task *t, const struct vclock *vc,
    const struct task *from, uint64_t seq, uint64_t at)
{
	int a, b = 0;

	a = state_vc_join(&t->vc, vc, t->idx);
	if (from != t)
		b = state_vc_raise(&t->vc, from->idx, seq);
	if (a || b)
		state_hist_push(s, t, at);
}

/*
 * The clock of the send (from, seq) when its message is not queued (the
 * model missed the send): from the history, or none beyond the horizon
 * (then only the send itself is merged).
 */
const struct vclock *
state_send_vc(const struct task *from, uint64_t seq)
{
	const struct vclock *vc;

	return state_event_vc(from, seq, &vc) == 0 ? vc : NULL;
}

/* --- the horizon ------------------------------------------------------- */

void
state_set_horizon(struct state *s, uint64_t events, uint64_t ns)
{
	size_t i;

	s->h_events = events;
	s->h_ns = ns;
	for (i = 0; i < s->ntasks; i++)
		hist_prune(s, s->tasks[i]);
}
