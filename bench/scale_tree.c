/*
 * A tree of coordinators as processes (scale_tree.h): each intermediate
 * a forked process playing the delivery of its subtree's tasks into an
 * order of its own (order_set_subtree), the root this process, fed the
 * intermediates' released events through pipes as pmon's levels would
 * pass them (doc/ordering.md, "A tree of coordinators").
 *
 * What goes up a pipe, in the order the intermediate did it: a task's
 * registration (before its events), each released event but lost markers
 * (with its flags and match, and the record encoded), a task's end once
 * its last event went up, the marks and ends of flush rounds (the round's
 * end says whether everything from before the round went up: "settled"),
 * and the end of the run.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "order.h"
#include "proto.h"
#include "record.h"
#include "scale_tree.h"
#include "sim.h"
#include "siminput.h"

enum fwd_type { FWD_NEW, FWD_EVENT, FWD_END, FWD_MARK, FWD_SYNC, FWD_FIN };

struct fwd_hdr {
	uint8_t		type;
	uint8_t		flags;		/* EVENT: its flags; SYNC: settled */
	uint16_t	len;		/* EVENT: the record's bytes after */
	uint32_t	task;		/* NEW, END: the task's index; EVENT:
					   its tid; MARK, SYNC: the round */
	uint64_t	seq;		/* EVENT: the send it matched */
};

#define WBUF_SIZE	(64 * 1024)
#define RBUF_SIZE	(1024 * 1024)

/* tid to task index, sorted for bsearch; built before the fork. */
struct tid_index {
	int32_t		tid;
	uint32_t	task;
};

struct tree {
	const struct sim_input *in;
	unsigned	 nsub;
	struct tid_index *byid;
};

struct child {
	struct tree	*tree;
	int		 fd;
	uint8_t		 buf[WBUF_SIZE];
	size_t		 n;
};

static void	fatalx(const char *) __attribute__((noreturn));

static void
fatalx(const char *what)
{
	bench_fatal("bench_scale", what);
}

static int
tid_cmp(const void *a, const void *b)
{
	const struct tid_index *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static uint32_t
task_of(const struct tree *tr, int32_t tid)
{
	struct tid_index key = { tid, 0 }, *p;

	p = bsearch(&key, tr->byid, tr->in->ntasks, sizeof(key), tid_cmp);
	if (p == NULL)
		fatalx("an event of an unknown task");
	return p->task;
}

static int
subtree_cb(int32_t tid, void *arg)
{
	const struct tree *tr = arg;

	return sim_subtree_of(tid, tr->nsub);
}

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t
tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ULL +
	    (uint64_t)tv->tv_usec * 1000ULL;
}

static void
pin_to(unsigned cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	CPU_SET(n > 1 ? cpu % (unsigned)n : 0, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* --- an intermediate ----------------------------------------------------- */

static void
child_flush(struct child *c)
{
	size_t off = 0;
	ssize_t w;

	while (off < c->n) {
		if ((w = write(c->fd, c->buf + off, c->n - off)) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);	/* the root is gone */
		}
		off += (size_t)w;
	}
	c->n = 0;
}

static void
child_put(struct child *c, uint8_t type, uint8_t flags, uint32_t task,
    uint64_t seq, const struct record *r)
{
	struct fwd_hdr h;

	if (c->n + sizeof(h) + RECORD_MAX_SIZE > sizeof(c->buf))
		child_flush(c);
	memset(&h, 0, sizeof(h));
	h.type = type;
	h.flags = flags;
	h.task = task;
	h.seq = seq;
	if (r != NULL)
		h.len = (uint16_t)record_encode(c->buf + c->n + sizeof(h), r,
		    NULL);
	memcpy(c->buf + c->n, &h, sizeof(h));
	c->n += sizeof(h) + h.len;
}

static void
forward_cb(const struct order_event *ev, void *arg)
{
	struct child *c = arg;

	if (ev->flags & EVENT_LOST)
		return;		/* the gap in seq says it */
	child_put(c, FWD_EVENT, ev->flags, (uint32_t)ev->tid, ev->match_seq,
	    ev->rec);
}

static void
child_done_cb(int32_t tid, void *arg)
{
	struct child *c = arg;

	child_put(c, FWD_END, 0, task_of(c->tree, tid), 0, NULL);
}

static void __attribute__((noreturn))
child_main(struct tree *tr, unsigned k, int fd)
{
	const struct sim_input *in = tr->in;
	const struct sim_op *op;
	struct child *c;
	struct order *o;
	struct record r;
	const char *why = NULL;
	uint64_t mark = 0;
	uint32_t round = 0;
	size_t i;
	int32_t tid;
	int rv = 0;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		_exit(1);
	c->tree = tr;
	c->fd = fd;
	o = order_new(forward_cb, c);
	order_set_subtree(o, (int)k, subtree_cb, tr);
	order_set_done_cb(o, child_done_cb, c);
	for (i = 0; i < in->nops && rv == 0; i++) {
		op = &in->ops[i];
		tid = in->tids[op->task];
		switch (op->type) {
		case SIM_ACT_NEW:
			if (sim_subtree_of(tid, tr->nsub) != (int)k)
				break;
			child_put(c, FWD_NEW, 0, op->task, 0, NULL);
			rv = order_task_new(o, tid, in->hosts[op->task], 0, 0,
			    &why);
			break;
		case SIM_ACT_ADD:
			if (sim_subtree_of(tid, tr->nsub) != (int)k)
				break;
			rv = record_decode(in->buf + op->off, op->len, &r, &why);
			if (rv == 0)
				rv = order_add(o, tid, &r, &why);
			break;
		case SIM_ACT_END:
			if (sim_subtree_of(tid, tr->nsub) != (int)k)
				break;
			rv = order_task_end(o, tid, in->dropped[op->task],
			    &why);
			break;
		case SIM_ACT_MARK:
			child_put(c, FWD_MARK, 0, round, 0, NULL);
			mark = order_mark(o);
			break;
		case SIM_ACT_SYNCED:
			order_synced(o, mark);
			child_put(c, FWD_SYNC, (uint8_t)order_settled(o, mark),
			    round++, 0, NULL);
			child_flush(c);
			break;
		case SIM_ACT_RELEASE_ALL:
			order_release_all(o);
			break;
		}
	}
	if (rv == -1) {
		fprintf(stderr, "bench_scale: subtree %u: %s\n", k, why);
		_exit(1);
	}
	child_put(c, FWD_FIN, 0, 0, 0, NULL);
	child_flush(c);
	order_free(o);
	_exit(0);
}

/* --- the root ---------------------------------------------------------- */

struct pipe_in {
	int		 fd;
	int		 fin;
	uint8_t		*buf;
	size_t		 n;
};

struct root {
	struct tree	*tree;
	const struct tree_hooks *h;
	struct order	*o;
	uint64_t	*marks;		/* per round: the root's mark */
	uint32_t	*syncs;		/* per round: intermediates done */
	uint8_t		*unsettled;
	size_t		 nrounds;	/* room in the three */
	uint32_t	 marked;	/* rounds marked so far */
	struct tree_result *res;
};

static void
root_round_room(struct root *rt, uint32_t round)
{
	size_t n;

	if (round < rt->nrounds)
		return;
	n = rt->nrounds ? rt->nrounds * 2 : 64;
	while (n <= round)
		n *= 2;
	rt->marks = realloc(rt->marks, n * sizeof(*rt->marks));
	rt->syncs = realloc(rt->syncs, n * sizeof(*rt->syncs));
	rt->unsettled = realloc(rt->unsettled, n);
	if (!rt->marks || !rt->syncs || !rt->unsettled)
		fatalx("out of memory");
	memset(rt->syncs + rt->nrounds, 0, (n - rt->nrounds) *
	    sizeof(*rt->syncs));
	memset(rt->unsettled + rt->nrounds, 0, n - rt->nrounds);
	rt->nrounds = n;
}

static void
root_message(struct root *rt, const struct fwd_hdr *h, const uint8_t *rec)
{
	const struct sim_input *in = rt->tree->in;
	const char *why = NULL;
	struct record r;
	int rv = 0;

	switch (h->type) {
	case FWD_NEW:
		if (rt->h->task_new != NULL)
			rt->h->task_new(in, h->task, rt->h->arg);
		rv = order_task_new(rt->o, in->tids[h->task],
		    in->hosts[h->task], in->parents[h->task],
		    in->spawn_seqs[h->task], &why);
		if (rv == 0 && (long)h->task == in->server)
			rv = order_group_server(rt->o, in->tids[h->task], &why);
		break;
	case FWD_EVENT:
		rt->res->forwarded++;
		rv = record_decode(rec, h->len, &r, &why);
		if (rv == 0)
			rv = order_add_below(rt->o, (int32_t)h->task, &r,
			    h->flags, r.peer, h->seq, &why);
		break;
	case FWD_END:
		rv = order_task_end(rt->o, in->tids[h->task],
		    in->dropped[h->task], &why);
		break;
	case FWD_MARK:
		/*
		 * The first intermediate to mark a round: what the root has
		 * now went up before any of them marked it.
		 */
		root_round_room(rt, h->task);
		if (h->task >= rt->marked) {
			rt->marks[h->task] = order_mark(rt->o);
			rt->marked = h->task + 1;
		}
		break;
	case FWD_SYNC:
		root_round_room(rt, h->task);
		rt->unsettled[h->task] |= !h->flags;
		if (++rt->syncs[h->task] < rt->tree->nsub)
			break;
		if (rt->unsettled[h->task]) {
			rt->res->rounds_unsettled++;
			break;
		}
		order_synced(rt->o, rt->marks[h->task]);
		if (rt->h->synced != NULL)
			rt->h->synced(rt->h->arg);
		break;
	default:
		fatalx("an unknown message from an intermediate");
	}
	if (rv == -1) {
		fprintf(stderr, "bench_scale: root: %s\n", why);
		exit(1);
	}
}

/* Reads what a pipe has and takes every whole message in it. */
static void
root_read(struct root *rt, struct pipe_in *p)
{
	struct fwd_hdr h;
	size_t off = 0;
	ssize_t got;

	if ((got = read(p->fd, p->buf + p->n, RBUF_SIZE - p->n)) == -1) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		fatalx("reading an intermediate's pipe");
	}
	if (got == 0)
		fatalx("an intermediate ended without finishing");
	p->n += (size_t)got;
	while (p->n - off >= sizeof(h)) {
		memcpy(&h, p->buf + off, sizeof(h));
		if (p->n - off < sizeof(h) + h.len)
			break;
		if (h.type == FWD_FIN)
			p->fin = 1;
		else
			root_message(rt, &h, p->buf + off + sizeof(h));
		off += sizeof(h) + h.len;
	}
	memmove(p->buf, p->buf + off, p->n - off);
	p->n -= off;
}

void
scale_tree_play(const struct sim_input *in, unsigned nsub, uint64_t lmin,
    const struct tree_hooks *h, struct tree_result *res)
{
	struct tree tr;
	struct root rt;
	struct pipe_in *pipes;
	struct pollfd *pfd;
	struct clock *clk;
	pid_t *pids;
	struct rusage ru;
	uint64_t t0, c0, c;
	unsigned k, left;
	size_t i;
	int fds[2], st;

	memset(res, 0, sizeof(*res));
	memset(&tr, 0, sizeof(tr));
	tr.in = in;
	tr.nsub = nsub;
	if ((tr.byid = calloc(in->ntasks + 1, sizeof(*tr.byid))) == NULL)
		fatalx("out of memory");
	for (i = 0; i < in->ntasks; i++) {
		tr.byid[i].tid = in->tids[i];
		tr.byid[i].task = (uint32_t)i;
	}
	qsort(tr.byid, in->ntasks, sizeof(*tr.byid), tid_cmp);
	pipes = calloc(nsub, sizeof(*pipes));
	pfd = calloc(nsub, sizeof(*pfd));
	pids = calloc(nsub, sizeof(*pids));
	if (pipes == NULL || pfd == NULL || pids == NULL)
		fatalx("out of memory");

	memset(&rt, 0, sizeof(rt));
	rt.tree = &tr;
	rt.h = h;
	rt.res = res;
	rt.o = sim_order_clc(h->release, h->arg, &clk, lmin);
	order_set_subtree(rt.o, ORDER_ROOT, subtree_cb, &tr);
	order_set_done_cb(rt.o, h->done, h->arg);

	fflush(NULL);
	t0 = now_ns();
	c0 = cpu_ns();
	for (k = 0; k < nsub; k++) {
		if (pipe(fds) == -1)
			fatalx("pipe failed");
		if ((pids[k] = fork()) == -1)
			fatalx("fork failed");
		if (pids[k] == 0) {
			close(fds[0]);
			/* The intermediates share the cores the root has not. */
			pin_to(1 + k);
			child_main(&tr, k, fds[1]);
		}
		close(fds[1]);
		pipes[k].fd = fds[0];
		if ((pipes[k].buf = malloc(RBUF_SIZE)) == NULL)
			fatalx("out of memory");
	}
	pin_to(0);
	for (left = nsub; left > 0;) {
		for (k = 0; k < nsub; k++) {
			pfd[k].fd = pipes[k].fin ? -1 : pipes[k].fd;
			pfd[k].events = POLLIN;
			pfd[k].revents = 0;
		}
		if (poll(pfd, nsub, -1) == -1) {
			if (errno == EINTR)
				continue;
			fatalx("poll failed");
		}
		for (k = 0; k < nsub; k++)
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
				root_read(&rt, &pipes[k]);
				if (pipes[k].fin)
					left--;
			}
	}
	order_release_all(rt.o);
	res->ns = now_ns() - t0;
	res->root_cpu_ns = cpu_ns() - c0;

	for (k = 0; k < nsub; k++) {
		if (wait4(pids[k], &st, 0, &ru) == -1 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			fatalx("an intermediate failed");
		c = tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime);
		res->subs_cpu_ns += c;
		if (c > res->sub_cpu_ns)
			res->sub_cpu_ns = c;
		close(pipes[k].fd);
		free(pipes[k].buf);
	}
	order_free(rt.o);
	clock_free(clk);
	free(rt.marks);
	free(rt.syncs);
	free(rt.unsettled);
	free(pipes);
	free(pfd);
	free(pids);
	free(tr.byid);
}
