/*
 * A tree of coordinators in one process (sim.h, sim_tree_*): a script of
 * sim_deliver played into intermediates, one per subtree of hosts, whose
 * released events go up to a root as the daemons pass them
 * (doc/ordering.md, "A tree of coordinators").
 */
#include <stdlib.h>

#include "order.h"
#include "proto.h"
#include "sim.h"

struct sim_sub {
	struct sim_tree	*tree;
	struct order	*o;
	uint64_t	 mark;
};

struct sim_tree {
	const struct sim *s;
	unsigned	 nsub;
	struct sim_sub	*subs;
	struct order	*root;
	uint64_t	 root_mark;
	uint64_t	 rounds_unsettled;
	const char	*why;		/* the first refusal, from below */
};

int
sim_subtree_of(int32_t tid, unsigned nsub)
{
	uint32_t host = ((uint32_t)tid >> 18) & 0xfff;

	if (tid <= 0 || host == 0)
		return -1;
	return (int)((host - 1) % nsub);
}

static int
subtree_cb(int32_t tid, void *arg)
{
	const struct sim_tree *tr = arg;

	return sim_subtree_of(tid, tr->nsub);
}

/* An intermediate's released event goes up, but for a lost marker. */
static void
forward_cb(const struct order_event *ev, void *arg)
{
	struct sim_sub *sub = arg;
	struct sim_tree *tr = sub->tree;
	const char *why;

	if ((ev->flags & EVENT_LOST) || tr->why != NULL)
		return;
	if (order_add_below(tr->root, ev->tid, ev->rec, ev->flags,
	    ev->match_tid, ev->match_seq, &why) == -1)
		tr->why = why;
}

/* A task's last event went up: the root may end it too. */
static void
done_cb(int32_t tid, void *arg)
{
	struct sim_sub *sub = arg;
	struct sim_tree *tr = sub->tree;
	long ti = sim_task_index(tr->s, tid);
	const char *why;

	if (ti < 0 || tr->why != NULL)
		return;
	if (order_task_end(tr->root, tid, sim_task(tr->s, (size_t)ti)->ndropped,
	    &why) == -1)
		tr->why = why;
}

struct sim_tree *
sim_tree_new(const struct sim *s, unsigned nsub, struct order *root)
{
	struct sim_tree *tr;
	unsigned k;

	if (nsub == 0 || (tr = calloc(1, sizeof(*tr))) == NULL)
		return NULL;
	if ((tr->subs = calloc(nsub, sizeof(*tr->subs))) == NULL) {
		free(tr);
		return NULL;
	}
	tr->s = s;
	tr->nsub = nsub;
	tr->root = root;
	order_set_subtree(root, ORDER_ROOT, subtree_cb, tr);
	for (k = 0; k < nsub; k++) {
		tr->subs[k].tree = tr;
		tr->subs[k].o = order_new(forward_cb, &tr->subs[k]);
		order_set_subtree(tr->subs[k].o, (int)k, subtree_cb, tr);
		order_set_done_cb(tr->subs[k].o, done_cb, &tr->subs[k]);
	}
	return tr;
}

void
sim_tree_free(struct sim_tree *tr)
{
	unsigned k;

	if (tr == NULL)
		return;
	for (k = 0; k < tr->nsub; k++)
		order_free(tr->subs[k].o);
	free(tr->subs);
	free(tr);
}

uint64_t
sim_tree_rounds_unsettled(const struct sim_tree *tr)
{
	return tr->rounds_unsettled;
}

struct order *
sim_tree_sub(const struct sim_tree *tr, unsigned k)
{
	return k < tr->nsub ? tr->subs[k].o : NULL;
}

/*
 * A flush round of the tree: every intermediate judges its own round,
 * and the root judges its round only when no intermediate still holds
 * anything added before the round began.
 */
static void
tree_synced(struct sim_tree *tr)
{
	unsigned k;
	int settled = 1;

	for (k = 0; k < tr->nsub; k++) {
		order_synced(tr->subs[k].o, tr->subs[k].mark);
		settled &= order_settled(tr->subs[k].o, tr->subs[k].mark);
	}
	if (settled)
		order_synced(tr->root, tr->root_mark);
	else
		tr->rounds_unsettled++;
}

static int
tree_act(struct sim_tree *tr, const struct sim_act *a, const char **why)
{
	uint8_t buf[RECORD_MAX_SIZE];
	const struct sim_task *t = sim_task(tr->s, a->task);
	struct order *sub;
	struct record r;
	size_t len;
	unsigned k;
	int k0;

	if ((k0 = sim_subtree_of(t->tid, tr->nsub)) < 0) {
		*why = "a task on no host";
		return -1;
	}
	sub = tr->subs[k0].o;
	switch (a->type) {
	case SIM_ACT_NEW:
		if (order_task_new(sub, t->tid, sim_host_number(t->host), 0, 0,
		    why) == -1 || order_task_new(tr->root, t->tid,
		    sim_host_number(t->host), t->parent_tid, t->spawn_seq,
		    why) == -1)
			return -1;
		return t->group_server ? order_group_server(tr->root, t->tid,
		    why) : 0;
	case SIM_ACT_ADD:
		len = sim_encode(tr->s, a->task, a->rec, buf);
		if (record_decode(buf, len, &r, why) == -1)
			return -1;
		return order_add(sub, t->tid, &r, why);
	case SIM_ACT_END:
		return order_task_end(sub, t->tid, t->ndropped, why);
	case SIM_ACT_MARK:
		tr->root_mark = order_mark(tr->root);
		for (k = 0; k < tr->nsub; k++)
			tr->subs[k].mark = order_mark(tr->subs[k].o);
		return 0;
	case SIM_ACT_SYNCED:
		tree_synced(tr);
		return 0;
	case SIM_ACT_RELEASE_ALL:
		for (k = 0; k < tr->nsub; k++)
			order_release_all(tr->subs[k].o);
		order_release_all(tr->root);
		return 0;
	}
	return 0;
}

int
sim_tree_replay(struct sim_tree *tr, const struct sim_script *sc,
    const char **why)
{
	size_t i;

	for (i = 0; i < sc->n; i++) {
		if (tree_act(tr, &sc->acts[i], why) == -1)
			return -1;
		if (tr->why != NULL) {
			*why = tr->why;
			return -1;
		}
	}
	return 0;
}
