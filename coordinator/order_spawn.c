/*
 * Spawns and notifies: a released pvm_spawn begin is kept for the clock
 * of the children it makes until each has started; a pvm_notify of task
 * exits is kept for the notifies it will bring, and each goes after the
 * exit it reports (order_step_notify).
 */
#include <stdlib.h>
#include <string.h>

#include "order_internal.h"
#include "xmalloc.h"

#define PVM_TASK_EXIT	1	/* pvm3.h PvmTaskExit, what pvm_notify asks */

/* --- spawns ----------------------------------------------------------- */

/* Remembers a released spawn begin for the clock of its children. */
void
order_spawn_note(struct order_task *t, const struct record *r, uint64_t corr)
{
	struct order_spawn *ns;
	size_t ncap;

	if (t->nspawns == t->spawncap) {
		ncap = t->spawncap ? t->spawncap * 2 : 4;
		t->spawns = xreallocarray(t->spawns, ncap, sizeof(*ns));
		t->spawncap = ncap;
	}
	t->spawns[t->nspawns].seq = r->seq;
	t->spawns[t->nspawns].raw = r->t_ns;
	t->spawns[t->nspawns].corr = corr;
	t->spawns[t->nspawns].children = UINT32_MAX;
	t->spawns[t->nspawns].started = 0;
	t->nspawns++;
}

/* The spawn begin of t at seq, or NULL. */
static struct order_spawn *
spawn_find(struct order_task *t, uint64_t seq)
{
	size_t i;

	for (i = t->nspawns; i-- > 0;)
		if (t->spawns[i].seq == seq)
			return &t->spawns[i];
	return NULL;
}

/* Forgets a spawn once every child it made has started. */
static void
spawn_trim(struct order_task *t, struct order_spawn *sp)
{
	if (sp->children == UINT32_MAX || sp->started < sp->children)
		return;
	memmove(sp, sp + 1, (size_t)(&t->spawns[t->nspawns] - (sp + 1)) *
	    sizeof(*sp));
	t->nspawns--;
}

/* The end of a spawn: the children it made. */
void
order_spawn_ended(struct order_task *t, const struct record *r)
{
	struct order_spawn *sp;
	unsigned i;

	if ((sp = spawn_find(t, r->seq - 1)) == NULL)
		return;
	sp->children = 0;
	for (i = 0; i < r->npeers; i++)
		sp->children += record_peer(r, i) > 0;
	spawn_trim(t, sp);
}

/* A child started (or ended before it could): its spawn serves less. */
void
order_child_started(struct order *o, struct order_task *t)
{
	struct order_task *p;
	struct order_spawn *sp;

	if (t->parent_tid == 0 || t->spawn_seq == 0 ||
	    (p = task_find(o, t->parent_tid)) == NULL ||
	    (sp = spawn_find(p, t->spawn_seq)) == NULL)
		return;
	sp->started++;
	spawn_trim(p, sp);
}

/* --- notifies --------------------------------------------------------- */

/* Remembers a pvm_notify(PvmTaskExit) for the notifies it will bring. */
void
order_notify_note(struct order_task *t, const struct record *r)
{
	struct order_notify *nn, *n;
	unsigned i;

	if (r->inst != PVM_TASK_EXIT || r->npeers == 0)
		return;
	nn = xreallocarray(t->notifies, t->nnotifies + 1, sizeof(*nn));
	t->notifies = nn;
	n = &nn[t->nnotifies];
	memset(n, 0, sizeof(*n));
	n->tids = xcalloc(r->npeers, sizeof(*n->tids));
	n->tag = r->tag;
	n->ntids = r->npeers;
	for (i = 0; i < r->npeers; i++)
		n->tids[i] = record_peer(r, i);
	t->nnotifies++;
}

void
order_notifies_free(struct order_task *t)
{
	size_t i;

	for (i = 0; i < t->nnotifies; i++)
		free(t->notifies[i].tids);
	free(t->notifies);
	t->notifies = NULL;
	t->nnotifies = 0;
}

/*
 * A notify from a pvmd: after the exit it reports, matched to that
 * task's last event.  The k-th notify of a pvm_notify reports the k-th of
 * its watched tasks to end (done_at); a task pmon never saw counts as
 * ended once the notify has been patient, and is reported unmatched.
 */
int
order_step_notify(struct order *o, struct order_task *t, int force)
{
	const struct record *r = &t->head->rec;
	struct order_notify *nt = NULL;
	struct order_task *u, *best = NULL;
	struct clock_pred pred;
	uint64_t key, best_key = UINT64_MAX;
	size_t i, at = SIZE_MAX;

	for (i = 0; i < t->nnotifies; i++)
		if (t->notifies[i].tag == r->tag &&
		    t->notifies[i].received < t->notifies[i].ntids) {
			nt = &t->notifies[i];
			break;
		}
	if (nt == NULL)
		return order_release_plain(o, t, 0);
	for (i = 0; i < nt->ntids; i++) {
		if (nt->tids[i] == 0)
			continue;	/* an earlier notify reported it */
		u = task_find(o, nt->tids[i]);
		if (u != NULL && u->registered)
			key = u->done ? u->done_at : UINT64_MAX;
		else if (o->draining || !patient(o, t->head, o->synced))
			key = UINT64_MAX - 1;	/* never seen: ended unseen */
		else
			key = UINT64_MAX;
		if (key < best_key) {
			best_key = key;
			at = i;
			best = u != NULL && u->registered ? u : NULL;
		}
	}
	if (at == SIZE_MAX && !force)
		return order_wait_on(o, t, &o->notifyw, WAIT_NOTIFY, NULL);
	if (at != SIZE_MAX)
		nt->tids[at] = 0;
	/* Every notify it asked for came: forget it. */
	if (++nt->received == nt->ntids) {
		free(nt->tids);
		memmove(nt, nt + 1, (size_t)(&t->notifies[t->nnotifies] -
		    (nt + 1)) * sizeof(*nt));
		t->nnotifies--;
	}
	if (best == NULL || best->released == 0)
		return order_release_plain(o, t, 0);
	memset(&pred, 0, sizeof(pred));
	pred.corr = best->clock.corr;
	pred.raw = best->clock.raw;
	pred.host = best->host;
	return order_release_head(o, t, EVENT_MATCHED, best->tid,
	    best->released, &pred);
}
