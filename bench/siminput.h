/*
 * A simulated execution as the coordinator receives it, ready to be
 * played into an ordering core again and again (bench_merge,
 * bench_scale): the simulator's recorded delivery script, with every
 * record encoded in memory ahead of time, so that a timed run pays only
 * what pmon-coordd pays (record_decode, order_add, registrations, ends,
 * flush rounds).
 */
#ifndef PMON_SIMINPUT_H
#define PMON_SIMINPUT_H

#include <stddef.h>
#include <stdint.h>

struct clock;
struct order;
struct order_event;
struct sim;
struct sim_script;

/* One coordinator action, with its record already encoded. */
struct sim_op {
	uint8_t		type;		/* SIM_ACT_* */
	uint32_t	task;
	size_t		off, len;	/* ADD: the record in the buffer */
};

struct sim_input {
	const struct sim *s;
	struct sim_op	*ops;
	size_t		 nops;
	uint8_t		*buf;
	size_t		 buflen;
	int32_t		*tids;
	uint32_t	*hosts;
	uint64_t	*dropped;
	int32_t		*parents;
	uint64_t	*spawn_seqs;
	size_t		 ntasks;
	size_t		 nrecords;
	long		 server;	/* pvmgs's task index, or -1 */
};

/* What a caller adds to the coordinator's actions (any may be NULL). */
struct sim_play_hooks {
	void	(*task_new)(const struct sim_input *, size_t task, void *);
	void	(*synced)(void *);	/* after a flush round */
	void	(*sample)(struct order *, void *); /* every 4096 actions */
	void	 *arg;
};

void	sim_input_prepare(struct sim_input *, const struct sim *,
	    const struct sim_script *);
void	sim_input_free(struct sim_input *);
/* Exits with a message when the order refuses an action. */
void	sim_input_play(const struct sim_input *, struct order *,
	    const struct sim_play_hooks *);

/* A new order with the controlled logical clock (*clkp, to free). */
struct order *sim_order_clc(void (*cb)(const struct order_event *, void *),
	    void *arg, struct clock **clkp, uint64_t lmin);

uint64_t now_ns(void);
void	pin_one_core(void);
int	cmp_double(const void *, const void *);
void	bench_fatal(const char *prog, const char *what) __attribute__((noreturn));

#endif
