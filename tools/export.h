/*
 * pmon export: the ordered event stream written in a format other
 * viewers open (doc/exports.md).  export.c owns the event source (libpmon
 * live, or a recording fed through libpmon's decoder) and what every
 * format needs to know about it: hosts and tasks numbered in order of
 * appearance, each call's begin at its end, each received message's send,
 * times relative to the start of the trace, and an output buffer.  Each
 * format is one file with one struct export_format: begin, task, event,
 * unfinished, gone, end.
 *
 * Everything is written as it comes and only what is still open is
 * kept: per task its open call, the messages sent and not yet received
 * (until they are, or their receiver ends), the spawns whose children
 * have not started yet, and the hosts' and tasks' definitions.
 */
#ifndef PMON_EXPORT_H
#define PMON_EXPORT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pmon.h"

struct export;

/* A host, numbered from 0 in the order its first task appeared. */
struct export_host {
	unsigned	 index;
	char		*name;
};

/* An open call: the begin of a call whose end has not come yet. */
struct export_call {
	int		 open;
	int		 call;		/* enum pmon_call */
	const char	*call_name;	/* static (record_call_name) */
	uint64_t	 seq;
	int64_t		 t;		/* relative corrected time, ns */
};

/* A task, numbered from 0 in the order the stream announced it. */
struct export_task {
	unsigned	 index;
	int32_t		 tid;
	int32_t		 parent;
	uint64_t	 spawn_seq;
	char		*program;
	const struct export_host *host;
	struct export_call cur;		/* the open call, if any */
	struct export_call handler;	/* a message handler's run, whose
					   calls are cur in the meantime */
	struct export_call outer;	/* the call it runs in, open again
					   at its end */
	int		 in_handler, has_outer;
	int64_t		 last_t;	/* time of its last event */
	uint64_t	 events;
	int		 gone;		/* ended: no event of it follows */
	void		*data;		/* the format's, freed with free() */
};

/*
 * A message (the event that sent it: a send's begin, a pvm_bcast's end)
 * or a spawn's begin (what a child's first event follows), kept until
 * every receiver got it or ended, or every child started.  data is the
 * format's (ShiViz's vector clock), freed with free().
 */
struct export_send {
	int32_t		 tid;
	uint64_t	 seq;
	int64_t		 t;
	const struct export_task *task;
	int		 at_end;	/* sent at the call's end (pvm_bcast) */
	int		 spawn;		/* a pvm_spawn's begin */
	int		 closed;	/* its waiting list is complete */
	int		 loose;		/* after a loss: holds no horizon */
	unsigned	 nwait, waitsize;
	int32_t		*wait;		/* receivers or children to come */
	void		*data;
};

/* One event as a format sees it. */
struct export_event {
	const struct pmon_event *ev;
	const struct export_task *task;
	int64_t		 t;		/* ev->t_corr - the trace's start, ns */
	/* At an end: the begin of the same call (NULL if it was lost). */
	const struct export_call *begin;
	/* At a receive's end that got a matched message: its send. */
	const struct export_send *send;
	/* At a message's or a spawn's event: its entry, for the format. */
	struct export_send *self;
	/* At a task's first event: its parent's spawn, when known. */
	const struct export_send *spawn;
};

struct export_format {
	const char	*name;
	int	(*begin)(struct export *);
	/* A new task (host->index is new when the host is). */
	int	(*task)(struct export *, const struct export_task *,
		    int new_host);
	int	(*event)(struct export *, const struct export_event *);
	/*
	 * A call that got no end: another begin of its task came first
	 * (its end was lost) or the stream ended (pvm_exit, a killed
	 * task).  t is the task's last time.  May be NULL.
	 */
	int	(*unfinished)(struct export *, const struct export_task *,
		    const struct export_call *, int64_t t);
	/* The task ended: no event of it follows.  May be NULL. */
	int	(*gone)(struct export *, const struct export_task *);
	int	(*end)(struct export *);
	/*
	 * What the stream says besides events, at its place in the
	 * stream: a PROBLEM ("problem", doc/state.md) or a NOTICE
	 * ("notice", doc/control.md), as the coordinator's JSON.  May be
	 * NULL; -1 is a write error.
	 */
	int	(*json)(struct export *, const char *what, const char *json,
		    size_t len);
};

extern const struct export_format export_chrome;
extern const struct export_format export_paje;
extern const struct export_format export_otf2;
extern const struct export_format export_otf2_vite;
extern const struct export_format export_shiviz;

/* What formats may use from export.c. */
const char	*export_path(struct export *);
void		*export_data(struct export *);
void		 export_set_data(struct export *, void *);
size_t		 export_ntasks(struct export *);
const struct export_task *export_task_at(struct export *, size_t);
size_t		 export_nhosts(struct export *);
const struct export_host *export_host_at(struct export *, size_t);
const struct export_task *export_task_of(struct export *, int32_t tid);
int64_t		 export_last_t(struct export *);	/* the greatest t */
/* 1 while export_finish closes the calls left open, at the end. */
int		 export_finishing(struct export *);
/*
 * No event, message or spawn still to come can be written at a time
 * before this: the least of the live tasks' last times and of the
 * times of the messages and spawns still waited for (INT64_MAX when
 * nothing is live).  Tasks the stream has not announced yet are not
 * counted: nothing says when they start; nor are messages whose
 * receive may have been lost (sent to a task before its lost marker,
 * or in flight when the stream had a gap): they may never come.  Costs
 * O(tasks + messages in flight).
 */
int64_t		 export_horizon(struct export *);
/* The slots export_horizon scans for messages and spawns. */
size_t		 export_inflight(struct export *);
long		 export_number(struct export *, int32_t tid);
size_t		 export_nnumbers(struct export *);
int32_t		 export_numbered(struct export *, size_t);
uint64_t	 export_start_ns(struct export *);	/* t = 0, in tc */
unsigned	 export_window(struct export *);	/* --window */
const struct export_format *export_format_of(struct export *);
int		 export_fail(struct export *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
void		 export_warn(struct export *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/*
 * The output (not for otf2): a format reserves room for at most
 * EXPORT_RESERVE_MAX bytes, writes into it with the export_put_*
 * helpers and commits the end.  export_reserve returns NULL after a
 * write error (export_fail has it).
 */
#define EXPORT_RESERVE_MAX	4096
char		*export_reserve(struct export *, size_t);
void		 export_commit(struct export *, char *end);
/* Any number of bytes; -1 after a write error. */
int		 export_write(struct export *, const void *, size_t);

/* The call classes every format draws the same way. */
int		 export_is_send(int call);
int		 export_is_recv(int call);
int		 export_is_blocking(int call);
/* Tids as PVM writes them: "t40003". */
const char	*export_tidstr(int32_t tid, char *buf, size_t size);

/* Decimal digits: trace_fmt_u64, trace_fmt_i64 (pmon-tool.h). */
/* v / div, '.', then v % div in digits digits (div = 10^digits). */
char		*export_put_fixed(char *p, int64_t v, uint64_t div,
		    int digits);
/* Lowercase hexadecimal of v. */
char		*export_put_hex(char *p, uint32_t v);

static inline char *
export_put(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

/* A string literal. */
#define export_put_lit(p, s)	export_put((p), (s), sizeof(s) - 1)

/* A short string (a name): a loop beats strlen and memcpy calls. */
static inline char *
export_put_str(char *p, const char *s)
{
	while (*s != '\0')
		*p++ = *s++;
	return p;
}

#endif
