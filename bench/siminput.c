/*
 * A simulated execution, encoded once and played into an ordering core
 * as pmon-coordd would (siminput.h).
 */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "order.h"
#include "record.h"
#include "sim.h"
#include "siminput.h"

#define SAMPLE_EVERY	4096

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void
bench_fatal(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s\n", prog, what);
	exit(1);
}

int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void
pin_one_core(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

void
sim_input_free(struct sim_input *in)
{
	free(in->ops);
	free(in->buf);
	free(in->tids);
	free(in->hosts);
	free(in->dropped);
	free(in->parents);
	free(in->spawn_seqs);
	memset(in, 0, sizeof(*in));
}

void
sim_input_prepare(struct sim_input *in, const struct sim *s,
    const struct sim_script *sc)
{
	const struct sim_task *t;
	size_t i, cap = 0;

	memset(in, 0, sizeof(*in));
	in->s = s;
	in->ntasks = sim_ntasks(s);
	in->tids = calloc(in->ntasks, sizeof(*in->tids));
	in->hosts = calloc(in->ntasks, sizeof(*in->hosts));
	in->dropped = calloc(in->ntasks, sizeof(*in->dropped));
	in->parents = calloc(in->ntasks, sizeof(*in->parents));
	in->spawn_seqs = calloc(in->ntasks, sizeof(*in->spawn_seqs));
	in->server = sim_group_server(s);
	in->ops = calloc(sc->n, sizeof(*in->ops));
	if (!in->tids || !in->hosts || !in->dropped || !in->parents ||
	    !in->spawn_seqs || !in->ops)
		bench_fatal("siminput", "out of memory");
	for (i = 0; i < in->ntasks; i++) {
		t = sim_task(s, i);
		in->tids[i] = t->tid;
		in->hosts[i] = sim_host_number(t->host);
		in->dropped[i] = t->ndropped;
		in->parents[i] = t->parent_tid;
		in->spawn_seqs[i] = t->spawn_seq;
	}
	for (i = 0; i < sc->n; i++) {
		struct sim_op *op = &in->ops[in->nops++];

		op->type = sc->acts[i].type;
		op->task = sc->acts[i].task;
		if (op->type != SIM_ACT_ADD)
			continue;
		if (in->buflen + RECORD_MAX_SIZE > cap) {
			cap = cap ? 2 * cap : 64 * 1024 * 1024;
			if ((in->buf = realloc(in->buf, cap)) == NULL)
				bench_fatal("siminput", "out of memory");
		}
		op->off = in->buflen;
		op->len = sim_encode(s, sc->acts[i].task, sc->acts[i].rec,
		    in->buf + in->buflen);
		in->buflen += op->len;
		in->nrecords++;
	}
}

void
sim_input_play(const struct sim_input *in, struct order *o,
    const struct sim_play_hooks *h)
{
	static const struct sim_play_hooks none;
	const struct sim_op *op;
	struct record r;
	const char *why = NULL;
	uint64_t mark = 0;
	size_t i;
	int rv = 0;

	if (h == NULL)
		h = &none;
	for (i = 0; i < in->nops; i++) {
		op = &in->ops[i];
		switch (op->type) {
		case SIM_ACT_NEW:
			if (h->task_new != NULL)
				h->task_new(in, op->task, h->arg);
			rv = order_task_new(o, in->tids[op->task],
			    in->hosts[op->task], in->parents[op->task],
			    in->spawn_seqs[op->task], &why);
			if (rv == 0 && (long)op->task == in->server)
				rv = order_group_server(o, in->tids[op->task],
				    &why);
			break;
		case SIM_ACT_ADD:
			rv = record_decode(in->buf + op->off, op->len, &r, &why);
			if (rv == 0)
				rv = order_add(o, in->tids[op->task], &r, &why);
			break;
		case SIM_ACT_END:
			rv = order_task_end(o, in->tids[op->task],
			    in->dropped[op->task], &why);
			break;
		case SIM_ACT_MARK:
			mark = order_mark(o);
			break;
		case SIM_ACT_SYNCED:
			order_synced(o, mark);
			if (h->synced != NULL)
				h->synced(h->arg);
			break;
		case SIM_ACT_RELEASE_ALL:
			order_release_all(o);
			break;
		}
		if (rv == -1) {
			fprintf(stderr, "action %zu: %s\n", i, why);
			exit(1);
		}
		if (h->sample != NULL && (i % SAMPLE_EVERY) == 0)
			h->sample(o, h->arg);
	}
}

struct order *
sim_order_clc(void (*cb)(const struct order_event *, void *), void *arg,
    struct clock **clkp, uint64_t lmin)
{
	struct clock_params cp;
	struct order *o;

	clock_params_default(&cp);
	cp.algo = CLOCK_CLC;
	cp.lmin_ns = lmin;
	if ((*clkp = clock_new(&cp)) == NULL ||
	    (o = order_new(cb, arg)) == NULL)
		bench_fatal("siminput", "out of memory");
	order_set_clock(o, *clkp);
	return o;
}
