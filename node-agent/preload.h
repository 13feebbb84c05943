/*
 * libpmon-pvm.so, the instrumentation library: private interface between
 * preload.c (state, ring, registration) and preload_calls.c (the
 * wrappers of every public libpvm3/libgpvm3 entry point).
 *
 * Everything here has hidden visibility (the library is built with
 * -fvisibility=hidden); only the pvm_* wrappers are exported.
 */
#ifndef PMON_PRELOAD_H
#define PMON_PRELOAD_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#define PVM33COMPAT		/* declares pvm_getmwid and pvm_setmwid */
#include <pvm3.h>
#include <pvmtev.h>

#include "record.h"
#include "spawn_env.h"

#define PRELOAD_EXPORT	__attribute__((visibility("default")))

/* Entry points libpvm3 and libgpvm3 export without a public prototype. */
int	pvm_vpackf(const char *, va_list);
int	pvm_vunpackf(const char *, va_list);
int	pvm_grphostinfo(char *, int, int *, int *, int *);
int	pvm_grpvhostinfo(char *, int **, int **, int *);
void	pvm_gsdump(void);

/*
 * One intercepted call.  call_enter() decides whether it is recorded
 * (an application call at depth 0 in an instrumented process); the
 * wrapper then fills the fields of r that matter and emits the begin
 * record, calls the real function, adjusts r and emits the end record
 * with call_end(), which also leaves the call.
 */
struct pcall {
	struct record	r;
	int		active;
};

void	*preload_real(unsigned call, const char *name);
int	 call_enter(struct pcall *, unsigned call);
void	 call_begin(struct pcall *, const int32_t *peers, unsigned npeers);
void	 call_end(struct pcall *, int rc, const int32_t *peers,
	    unsigned npeers);
void	 call_group(struct pcall *, const char *group);
struct pcall *call_outer(void);

/* Recording the calls of a message handler, inside another call. */
struct call_nest {
	int		 depth;
	struct pcall	*outer;
};
void	 call_nest_enter(struct call_nest *);
void	 call_nest_leave(const struct call_nest *);
int	 server_enter(struct pcall *);
void	 server_emit(struct pcall *, int rc);
int	 preload_mytid(void);

/* The destinations of the pvm_mcast inside a pvm_bcast. */
struct bcast_capture {
	int32_t		*tids;
	unsigned	 n;
};
void	 bcast_capture_set(struct bcast_capture *);
void	 bcast_capture_mcast(const int *tids, int count);

/* The task's tid once it is enrolled (not its parent's, in a fork). */
int	 preload_enrolled_tid(void);

/* A task of the host's starter (preload_starter.c, tasker.h). */
extern int starter_pending;
extern int starter_exit_pending;
void	 starter_init(void);
void	 starter_atfork(void);
void	 starter_tell(void);
int	 starter_defer_exit(void);
void	 starter_exit(int in_call);
void	 starter_catchout(FILE *);
int	 preload_real_exit(void);
void	 preload_enrol_early(void);

/* Signals the application handles (preload_signals.c). */
#include <stdatomic.h>
extern atomic_int signals_pending __attribute__((visibility("hidden")));
unsigned signals_take(int *signo, int *from_pvmd);

/* PMON_SPAWN and PVM_EXPORT around a recorded pvm_spawn. */
void	 spawn_edge_set(struct spawn_env *, uint64_t seq);

/*
 * The real function of a wrapper, typed after its prototype; NULL when no
 * library in the process defines it.
 */
#define REAL(n)	((__typeof__(&pvm_##n))preload_real(PMON_CALL_##n, "pvm_" #n))

#endif
