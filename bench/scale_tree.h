/*
 * A tree of coordinators as separate processes (bench_scale -T): the
 * simulated delivery played into nsub intermediates, forked, each with
 * the hosts of its subtree (sim_subtree_of), which forward what they
 * release through a pipe to the root, this process.
 */
#ifndef PMON_SCALE_TREE_H
#define PMON_SCALE_TREE_H

#include <stdint.h>

#include "order.h"

struct sim_input;

/* What the root does besides ordering: bench_scale's state model. */
struct tree_hooks {
	order_release_cb release;
	order_done_cb	 done;
	void		(*task_new)(const struct sim_input *, size_t task,
			    void *);
	void		(*synced)(void *);	/* after a judged round */
	void		*arg;
};

struct tree_result {
	uint64_t	ns;		/* wall time, fork to the last release */
	uint64_t	rounds_unsettled;	/* rounds the root did not judge */
	uint64_t	forwarded;	/* events the intermediates sent up */
	uint64_t	root_cpu_ns;	/* CPU time of the root */
	uint64_t	sub_cpu_ns;	/* of the busiest intermediate */
	uint64_t	subs_cpu_ns;	/* of all intermediates */
};

/* Exits with a message on any error. */
void	scale_tree_play(const struct sim_input *, unsigned nsub, uint64_t lmin,
	    const struct tree_hooks *, struct tree_result *);

#endif
