/*
 * A simulator of PVM executions for the coordinator's ordering core.
 *
 * sim_generate runs PVM programs (rings, master/worker, spawn trees,
 * multicast rounds, groups with broadcasts and barriers, task deaths) in
 * true global time and writes, for every task, the records the
 * instrumentation would write (node-agent/preload_calls.c), stamped by
 * its host's clock (an offset and a drift).  Beside the records it keeps
 * the ground truth: which send each receive got, which entries make up
 * each barrier episode, which task each notify reports, the true time of
 * every record.
 *
 * Executions with groups may have an instrumented group server, pvmgs: an
 * extra task with no parent that lives until the end and writes one
 * record per request it serves (record.h, RECORD_GS), at the instant the
 * simulator applies the request.  The order consumes its records and
 * never releases them.
 *
 * sim_deliver then feeds an order as the coordinator would: each host's
 * agent drains its tasks' rings at random times and ships the batches
 * with random delays (records of a task in sequence, hosts interleaved),
 * flush rounds run periodically and whenever order_wants_sync says so,
 * and at the end a final round, order_task_end for every task and
 * order_release_all.  What it did is kept as a script that sim_replay
 * plays into another order (another clock algorithm, a benchmark),
 * action for action.
 *
 * The simulator never looks at what the order releases: checking that is
 * the caller's business (tests/sim/proptest.c).
 */
#ifndef PMON_SIM_H
#define PMON_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct order;

enum sim_scenario {
	SIM_RING,	/* token rings, send/recv and psend/precv */
	SIM_MW,		/* master/worker: wildcards, probe, nrecv, notify */
	SIM_SPAWN,	/* spawn trees exchanging up and down */
	SIM_MCAST,	/* multicast rounds */
	SIM_GROUP,	/* join/leave/bcast/gsize races, barriers */
	SIM_DEATH,	/* the point-to-point programs, tasks killed */
	SIM_MIXED,	/* everything at once, with deaths */
	SIM_BENCH,	/* 64 tasks, long loops (bench/bench_merge.c) */
	SIM_STORM,	/* ntasks in a ring, each sends to its successor and
			   takes one with a wildcard receive, scale rounds
			   (bench/bench_scale.c) */
	SIM_NSCENARIOS
};

struct sim_params {
	uint64_t	seed;
	enum sim_scenario scenario;
	unsigned	nhosts;		/* 0: chosen from the seed (2-5) */
	unsigned	scale;		/* loop lengths; 1 for tests */
	int		drops;		/* drop ranges of records (full rings) */
	int		notify;		/* programs use pvm_notify */
	int		kills;		/* -1: the scenario decides, 0, 1 */
	int		no_groups;	/* bench: a ring instead of groups */
	int		gs_server;	/* an instrumented pvmgs, in scenarios
					   with groups: -1 the seed decides
					   (3 runs of 4), 0 none, 1 always */
	uint64_t	lmin_ns;	/* minimal message latency */
	unsigned	ntasks;		/* SIM_STORM's tasks (0: 8) */
};

/* The ground truth of one record, and the record itself. */
struct sim_rec {
	uint64_t	t_true;		/* true time, ns from the start */
	uint8_t		call, phase, flags;
	uint8_t		dropped;	/* never shipped (ring full) */
	int32_t		rc, peer, tag, ctx, bytes, inst;
	uint16_t	npeers;
	uint8_t		group;		/* group index + 1, 0: none */
	uint32_t	peers;		/* first index in sim_peers() */
	uint32_t	msg;		/* message got or probed, + 1; 0: none */
	uint32_t	episode;	/* barrier episode + 1; 0: none */
};

struct sim_task {
	int32_t		tid;
	uint32_t	host;		/* index in sim_host(), 0-based */
	int32_t		parent_tid;
	uint64_t	spawn_seq;	/* seq of the parent's spawn begin */
	uint32_t	parent;		/* parent task index, UINT32_MAX: none */
	struct sim_rec	*recs;		/* seq = index + 1 */
	size_t		nrecs;
	uint64_t	ndropped;
	uint64_t	t_end;		/* exit or death, UINT64_MAX: never */
	int		killed;
	int		group_server;	/* pvmgs: never ends, never released */
};

struct sim_msg {
	uint32_t	src;		/* task index; UINT32_MAX: a pvmd */
	uint32_t	dst;
	int32_t		src_tid;
	int32_t		tag, ctx;
	uint32_t	send_rec;	/* index of the sending record in src */
	uint32_t	notify_of;	/* a notify: the task that ended */
	uint64_t	t_depart, t_arrive;
};

struct sim_episode {
	uint8_t		group;		/* group index + 1 */
	int32_t		count;
	uint32_t	nentries;
	uint32_t	first;		/* first index in sim_entries() */
};

/* A barrier entry: a task and the index of its begin record. */
struct sim_entry {
	uint32_t	task;
	uint32_t	rec;
};

struct sim_host {
	int64_t		offset_ns;	/* raw = true + offset + drift * true */
	double		drift;
};

/* What the coordinator did, in order. */
enum sim_act_type {
	SIM_ACT_NEW,		/* order_task_new, and order_group_server
				   for the group server */
	SIM_ACT_ADD,		/* order_add of a record */
	SIM_ACT_END,		/* order_task_end */
	SIM_ACT_MARK,		/* order_mark */
	SIM_ACT_SYNCED,		/* order_synced with the last mark */
	SIM_ACT_RELEASE_ALL	/* order_release_all */
};

struct sim_act {
	uint8_t		type;
	uint32_t	task;
	uint32_t	rec;		/* ADD: record index */
	uint64_t	t;		/* coordinator time of the action */
};

struct sim_script {
	struct sim_act	*acts;
	size_t		 n, cap;
};

/*
 * Called before each action is carried out (NULL: none).  Returning -1
 * stops the delivery (sim_deliver fails with "stopped").
 */
typedef int (*sim_act_cb)(const struct sim_act *, void *arg);

struct sim;

const char	*sim_scenario_name(enum sim_scenario);
int		 sim_scenario_lookup(const char *);
void		 sim_params_default(struct sim_params *);

/* NULL only when out of memory.  sim_free(NULL) is a no-op. */
struct sim	*sim_new(const struct sim_params *);
void		 sim_free(struct sim *);

/* Runs the execution.  -1 when out of memory. */
int		 sim_generate(struct sim *);

size_t			 sim_ntasks(const struct sim *);
const struct sim_task	*sim_task(const struct sim *, size_t);
/* The index of the group server task, or -1 when there is none. */
long			 sim_group_server(const struct sim *);
/* The index of the task with this tid, or -1. */
long			 sim_task_index(const struct sim *, int32_t tid);
size_t			 sim_nhosts(const struct sim *);
const struct sim_host	*sim_host(const struct sim *, size_t);
/* The number order_task_new is given for host h (what the coordinator
 * takes from the pvmd's tid). */
uint32_t		 sim_host_number(size_t h);
size_t			 sim_nmsgs(const struct sim *);
const struct sim_msg	*sim_msg(const struct sim *, size_t);
size_t			 sim_nepisodes(const struct sim *);
const struct sim_episode *sim_episode(const struct sim *, size_t);
const struct sim_entry	*sim_entries(const struct sim *);
const int32_t		*sim_peers(const struct sim *);
const char		*sim_group_name(const struct sim *, unsigned gid1);
size_t			 sim_total_records(const struct sim *);
/* Tasks the generator left neither blocked nor ended: a simulator bug. */
size_t			 sim_stalled(const struct sim *);
/* The raw (host clock) time of a record. */
uint64_t		 sim_raw(const struct sim *, const struct sim_task *,
			    const struct sim_rec *);

/* Fills r (group and peers point into the sim) for a record. */
void	sim_record(const struct sim *, size_t task, size_t rec,
	    struct record *r, int32_t *peers);
/* Encodes a record as the task would; returns its size. */
size_t	sim_encode(const struct sim *, size_t task, size_t rec,
	    uint8_t *out);

/*
 * Feeds o as the coordinator would and records the script.  cb sees
 * every action before it is carried out.  Returns 0, or -1 with *why
 * when the order refused an action (or memory ran out).
 */
int	sim_deliver(struct sim *, struct order *o, struct sim_script *,
	    sim_act_cb cb, void *arg, const char **why);
/* Plays a script into another order. */
int	sim_replay(const struct sim *, const struct sim_script *,
	    struct order *o, sim_act_cb cb, void *arg, const char **why);
void	sim_script_free(struct sim_script *);

/*
 * A tree of coordinators in one process (simtree.c): nsub intermediates,
 * host h's tasks in subtree h % nsub, under root, an order the caller
 * made (with its clock and callbacks) and frees.  sim_tree_replay plays
 * a script of sim_deliver into it: registrations, records and ends to
 * the task's intermediate (and registrations to the root), whose
 * released events and ends go up to the root; a flush round to every
 * level, the root's judged only once no intermediate holds an event
 * from before it.
 */
struct sim_tree;

int	sim_subtree_of(int32_t tid, unsigned nsub);
struct sim_tree *sim_tree_new(const struct sim *, unsigned nsub,
	    struct order *root);
void	sim_tree_free(struct sim_tree *);
int	sim_tree_replay(struct sim_tree *, const struct sim_script *,
	    const char **why);
struct order *sim_tree_sub(const struct sim_tree *, unsigned k);
/* Rounds the root could not judge: something from before was held. */
uint64_t sim_tree_rounds_unsettled(const struct sim_tree *);

#endif
