/*
 * pmon export: the ordered event stream written in a format other
 * viewers open (doc/exports.md).  export.c owns the event source (libpmon
 * live, or a recording fed through libpmon's decoder) and what every
 * format needs to know about it: hosts and tasks numbered in order of
 * appearance, each call's begin at its end, each received message's send,
 * and times relative to the start of the trace.  Each format is one file
 * with one struct export_format: begin, task, event, end.
 */
#ifndef PMON_EXPORT_H
#define PMON_EXPORT_H

#include <stdint.h>
#include <stdio.h>

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
	int64_t		 last_t;	/* time of its last event */
	uint64_t	 events;
	void		*data;		/* the format's, freed with free() */
};

/*
 * A send (or a spawn's begin: what a child's first event follows), kept
 * so that a receive's end can name it.  data is the format's (ShiViz's
 * vector clock), freed with free().
 */
struct export_send {
	int32_t		 tid;
	uint64_t	 seq;
	int64_t		 t;
	const struct export_task *task;
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
	/* At a send's or a spawn's begin: its entry, for the format's data. */
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
	 * task).  t is the task's last time.
	 */
	int	(*unfinished)(struct export *, const struct export_task *,
		    const struct export_call *, int64_t t);
	int	(*end)(struct export *);
};

extern const struct export_format export_chrome;
extern const struct export_format export_paje;
extern const struct export_format export_otf2;
extern const struct export_format export_shiviz;

/* What formats may use from export.c. */
FILE		*export_file(struct export *);	/* NULL for otf2 */
const char	*export_path(struct export *);
void		*export_data(struct export *);
void		 export_set_data(struct export *, void *);
size_t		 export_ntasks(struct export *);
const struct export_task *export_task_at(struct export *, size_t);
size_t		 export_nhosts(struct export *);
const struct export_host *export_host_at(struct export *, size_t);
const struct export_task *export_task_of(struct export *, int32_t tid);
int64_t		 export_last_t(struct export *);	/* the greatest t */
long		 export_number(struct export *, int32_t tid);
size_t		 export_nnumbers(struct export *);
int32_t		 export_numbered(struct export *, size_t);
uint64_t	 export_start_ns(struct export *);	/* t = 0, in tc */
int		 export_fail(struct export *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/* The call classes every format draws the same way. */
int		 export_is_send(int call);
int		 export_is_recv(int call);
int		 export_is_blocking(int call);
/* Tids as PVM writes them: "t40003". */
const char	*export_tidstr(int32_t tid, char *buf, size_t size);

#endif
