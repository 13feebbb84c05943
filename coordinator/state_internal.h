/*
 * Between the state model (state.c) and the reader of its JSON
 * (state_load.c), nobody else: state_load checks a snapshot and builds
 * a new model from it with the state_restore_* calls, which trust what
 * they are given; state.c writes problems' lines with
 * state_load_problem_text.
 */
#ifndef PMON_STATE_INTERNAL_H
#define PMON_STATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jsonstr.h"
#include "record.h"
#include "state.h"

/*
 * Problems `pmon problems` lists: later ones still go to the tools and
 * the breakpoints as they are found, and are only counted (a racy
 * program may find one per receive).
 */
#define STATE_PROBLEMS_KEPT	4096

/* A task as a snapshot shows it (doc/state.md), strings as bytes. */
struct restore_task {
	int32_t		 tid, parent;
	uint32_t	 pid;
	const char	*host, *program;
	int		 end;		/* RESTORE_LIVE, ... */
	int		 unmonitored;	/* "unmonitored" (live) or "ended" */
	int		 has_exit_rc;
	int32_t		 exit_rc;
	uint64_t	 calls, sent_msgs, sent_bytes, recv_msgs, recv_bytes;
	uint64_t	 computing, pvm, blocked;	/* ns */
	uint64_t	 last_seq, lost;
	int32_t		 kill_tid;	/* killed: the pvm_kill, or 0 */
	uint64_t	 kill_seq;
	/* The call it is blocked in (call 0: none), begun at event since. */
	uint8_t		 call;
	uint64_t	 since;
	int32_t		 peer, tag, ctx, inst;
	char		 group[RECORD_GROUP_MAX + 1];
	const int32_t	*kids;
	size_t		 nkids;
};
#define RESTORE_LIVE	0
#define RESTORE_EXITED	1
#define RESTORE_KILLED	2

/*
 * An empty model with s's callback and horizon.  Then the tasks tids
 * (sorted, distinct): those old knows in the order it learnt them, the
 * others after; every other call names only these.
 */
struct state	*state_restore_new(const struct state *s);
int	state_restore_tasks(struct state *, const struct state *old,
	    const int32_t *tids, size_t n);
int	state_restore_task(struct state *, const struct restore_task *);
/* A message queued at task to, in queue order. */
int	state_restore_message(struct state *, int32_t to, int32_t from,
	    uint64_t seq, int32_t tag, int32_t ctx, int32_t bytes);
/* A group, and its members in order. */
int	state_has_group(const struct state *, const char *group);
int	state_restore_group(struct state *, const char *group);
int	state_restore_member(struct state *, const char *group, int32_t tid,
	    int32_t inst);
int	state_restore_traffic(struct state *, int32_t from, int32_t to,
	    uint64_t msgs, uint64_t bytes);
/*
 * A problem found before, in order; a deadlock with its sorted tasks,
 * so that it is not reported again.  Not passed to the callback.
 */
int	state_restore_problem(struct state *, const char *json,
	    const int32_t *deadlock, size_t n);
/*
 * The barriers in progress, from the tasks blocked in them (a group
 * without members or waiters is listed for the barrier a task was
 * killed in: it keeps one); checks that every blocked task waits (its
 * groups explain a collective).  -1 with err when not.
 */
int	state_restore_finish(struct state *, uint64_t problems_not_kept,
	    char *err, size_t errsize);
int	state_restore_mbox(struct state *, const char *name, int32_t index,
	    int32_t owner, int32_t flags, int32_t bytes, uint64_t put);
/* s takes the restored model ns; ns gets what s had (to be freed). */
void	state_restore_swap(struct state *s, struct state *ns);

/* The line `pmon problems` prints for a problem's JSON. */
void	state_load_problem_text(FILE *, const char *json);

/*
 * The message mailbox (state_mbox.c): each entry pvm_putinfo stored and
 * nobody deleted, by name and index.
 */
struct mbox_entry {
	char		*name;
	int32_t		 index;
	int32_t		 owner;		/* the task that put it */
	int32_t		 flags;		/* pvm_putinfo's (PvmMbox*) */
	int32_t		 bytes;
	uint64_t	 put;		/* the seq of its put's begin */
};
struct mbox {
	struct mbox_entry *v;		/* by name, then index */
	size_t		 n, cap;
};
/* Stores (or replaces) an entry; -1 when out of memory. */
int	mbox_put(struct mbox *, const char *name, int32_t index,
	    int32_t owner, int32_t flags, int32_t bytes, uint64_t put);
void	mbox_del(struct mbox *, const char *name, int32_t index);
void	mbox_del_put(struct mbox *, int32_t owner, uint64_t put);
/* The owner ended: its entries go, but for the persistent ones. */
void	mbox_owner_end(struct mbox *, int32_t owner);
void	mbox_write_json(const struct mbox *, FILE *);
void	mbox_write_text(const struct mbox *, FILE *);
void	mbox_free(struct mbox *);

#endif
