/*
 * The events of the state model (state.c): what each released event
 * changes (state_event), from a call's begin and end, through the sends
 * and receives (state_queues.c), barriers and group membership
 * (state_groups.c), spawns and the mailbox, to the end of a task; and,
 * since every pack and unpack call is an event, the send and receive
 * buffers that those calls fill and read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>

#include "proto.h"
#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/*
 * With a time horizon, every 2^16 events the histories of tasks that no
 * longer merge (ended, or only sending) are cut at the horizon too.
 */
#define STATE_SWEEP_MASK	0xffff

/* pvm3.h error codes of the unpack calls (the coordinator has no pvm3.h). */
#define PVM_BAD_PARAM		(-2)	/* PvmBadParam */
#define PVM_NO_BUF		(-15)	/* PvmNoBuf: no receive buffer */

static void	task_end(struct state *, struct task *, enum task_end);

/* --- packs and unpacks ------------------------------------------------- */

/*
 * VISTOP's "message unpacked incorrectly": a receiver must unpack the
 * types its sender packed, in the same order and no more.  PVM messages
 * carry no types, so only the instrumented calls tell: every pack call
 * of a task's send buffer since pvm_initsend is kept (consecutive ones
 * of one type as one run), a message sent gets a shared copy, and the
 * unpack calls after the receive that took it consume the runs.  The
 * same type in any chunking is right (pvm_pkint of 10 items, then
 * pvm_upkint of 4 and of 6); another type at the cursor (pvm_upkuint of
 * a pvm_pkint: the types must be the same, not only their sizes) or more
 * than is left is wrong.  Whatever the model cannot follow stops the
 * check: nothing is reported then.
 */

/* The pack call whose data an unpack call reads; 0 if none is known. */
static uint8_t
packed_by(uint8_t call)
{
	switch (call) {
	case PMON_CALL_upkbyte:		return PMON_CALL_pkbyte;
	case PMON_CALL_upkcplx:		return PMON_CALL_pkcplx;
	case PMON_CALL_upkdcplx:	return PMON_CALL_pkdcplx;
	case PMON_CALL_upkdouble:	return PMON_CALL_pkdouble;
	case PMON_CALL_upkfloat:	return PMON_CALL_pkfloat;
	case PMON_CALL_upkint:		return PMON_CALL_pkint;
	case PMON_CALL_upklong:		return PMON_CALL_pklong;
	case PMON_CALL_upkshort:	return PMON_CALL_pkshort;
	case PMON_CALL_upkstr:		return PMON_CALL_pkstr;
	case PMON_CALL_upkuint:		return PMON_CALL_pkuint;
	case PMON_CALL_upkulong:	return PMON_CALL_pkulong;
	case PMON_CALL_upkushort:	return PMON_CALL_pkushort;
	default:			return 0;
	}
}

/* The send buffer cannot be followed (any more). */
static void
pack_off(struct task *t)
{
	pkseq_unref(t->pack.snap);
	t->pack.snap = NULL;
	t->pack.on = 0;
	t->pack.n = 0;
}

/* pvm_initsend: a new, empty send buffer. */
static void
pack_init(struct task *t)
{
	pack_off(t);
	t->pack.on = 1;
}

/* The end of a typed pack call (pvm_pkint, ..., pvm_pkstr). */
static void
pack_add(struct task *t, const struct record *r)
{
	struct packing *p = &t->pack;
	struct pkrun *last;
	int str = r->call == PMON_CALL_pkstr;

	if (!p->on)
		return;
	if (r->rc < 0 || r->bytes < 0) {
		pack_off(t);		/* what it packed is unknown */
		return;
	}
	if (r->bytes == 0 && !str)
		return;
	pkseq_unref(p->snap);
	p->snap = NULL;
	last = p->n > 0 ? &p->run[p->n - 1] : NULL;
	if (last == NULL || last->call != r->call) {
		if (p->n == STATE_PACK_RUNS) {
			pack_off(t);
			return;
		}
		last = &p->run[p->n++];
		memset(last, 0, sizeof(*last));
		last->call = r->call;
	}
	last->bytes += (uint64_t)r->bytes;
	last->nstr += str;
}

/*
 * How the message t sends now was packed: a new reference, or NULL when
 * not known.
 */
struct pkseq *
state_pack_share(struct task *t)
{
	struct packing *p = &t->pack;
	struct pkseq *pk;

	if (!p->on)
		return NULL;
	if (p->snap == NULL) {
		pk = xmalloc(sizeof(*pk) + p->n * sizeof(pk->run[0]));
		pk->refs = 1;
		pk->n = p->n;
		memcpy(pk->run, p->run, p->n * sizeof(pk->run[0]));
		p->snap = pk;
	}
	p->snap->refs++;
	return p->snap;
}

static void
unpack_stop(struct task *t)
{
	pkseq_unref(t->unpack.pk);
	memset(&t->unpack, 0, sizeof(t->unpack));
}

/*
 * The architecture of t's host (the host field of its tid); NULL if not
 * known.  Where the host was last found is kept, to look there first.
 */
static const char *
task_arch(const struct state *s, struct task *t)
{
	uint32_t h;
	size_t i;

	if (t == NULL)
		return NULL;
	h = record_tid_host(t->tid);
	i = t->host_hint;
	if (i >= s->nhosts || record_tid_host(s->hosts[i].tid) != h)
		for (i = 0; i < s->nhosts; i++)
			if (record_tid_host(s->hosts[i].tid) == h)
				break;
	if (i == s->nhosts)
		return NULL;
	t->host_hint = i;
	return s->hosts[i].arch[0] != '\0' ? s->hosts[i].arch : NULL;
}

/*
 * Are the architectures of a's and b's hosts known and different?  Tasks
 * of one host, the common case, need not look their hosts up.
 */
static int
arch_differs(const struct state *s, struct task *a, struct task *b)
{
	const char *x, *y;

	if (a != NULL && b != NULL &&
	    record_tid_host(a->tid) == record_tid_host(b->tid))
		return 0;
	return (x = task_arch(s, a)) != NULL && (y = task_arch(s, b)) != NULL &&
	    strcmp(x, y) != 0;
}

/*
 * The receive r of t took q: its receive buffer is q's message now, to
 * be unpacked from the start.  The bytes of an item (a long) may differ
 * between architectures, so messages between them are not checked.
 */
void
state_unpack_start(const struct state *s, struct task *t,
    const struct record *r, struct qmsg *q)
{
	struct unpacking *u = &t->unpack;

	unpack_stop(t);
	if (q->pk == NULL)
		return;
	if (arch_differs(s, task_find(s, q->from), t))
		return;
	u->pk = q->pk;
	q->pk = NULL;
	u->from = q->from;
	u->tag = q->tag;
	u->send_seq = q->seq;
	u->recv_seq = r->seq;
}

/* Reports the unpack r and stops checking the message. */
static void
unpack_bad(struct state *s, struct task *t, const struct record *r,
    const struct pkrun *run)
{
	state_report_unpack(s, t, r, run);
	unpack_stop(t);
}

/*
 * The end of an unpack call of t: it must read the type packed at the
 * cursor, and no more than is left of its run.  A string is read whole
 * by pvm_upkstr.  An unpack that failed (past the end of the message,
 * for PVM) is wrong, unless it failed for want of a receive buffer or
 * for its arguments: then the model has lost track.
 */
static void
unpack_step(struct state *s, struct task *t, const struct record *r)
{
	struct unpacking *u = &t->unpack;
	const struct pkrun *run;
	uint8_t want = packed_by(r->call);
	int str = r->call == PMON_CALL_upkstr, done;
	uint64_t n;

	if (u->pk == NULL)
		return;
	if (want == 0 || r->rc == PVM_NO_BUF || r->rc == PVM_BAD_PARAM ||
	    (!str && r->bytes < 0)) {
		unpack_stop(t);
		return;
	}
	if (!str && r->bytes == 0 && r->rc >= 0)
		return;
	if (u->run >= u->pk->n) {
		unpack_bad(s, t, r, NULL);
		return;
	}
	run = &u->pk->run[u->run];
	if (run->call != want || r->rc < 0) {
		unpack_bad(s, t, r, run);
		return;
	}
	if (str) {
		n = r->bytes > 0 ? (uint64_t)r->bytes : 0;
		done = ++u->nstr >= run->nstr;
	} else {
		n = (uint64_t)r->bytes;
		if (n > run->bytes - u->in_run) {
			unpack_bad(s, t, r, run);
			return;
		}
		done = u->in_run + n == run->bytes;
	}
	u->in_run += n;
	u->offset += n;
	if (done) {
		u->run++;
		u->in_run = 0;
		u->nstr = 0;
	}
}

/* The end of a call that packs, unpacks or changes t's buffers. */
static void
buffers_end(struct state *s, struct task *t, const struct record *r)
{
	switch (r->call) {
	case PMON_CALL_initsend:
		if (r->rc < 0)
			pack_off(t);
		else
			pack_init(t);
		break;
	case PMON_CALL_pkbyte:
	case PMON_CALL_pkcplx:
	case PMON_CALL_pkdcplx:
	case PMON_CALL_pkdouble:
	case PMON_CALL_pkfloat:
	case PMON_CALL_pkint:
	case PMON_CALL_pklong:
	case PMON_CALL_pkshort:
	case PMON_CALL_pkstr:
	case PMON_CALL_pkuint:
	case PMON_CALL_pkulong:
	case PMON_CALL_pkushort:
		pack_add(t, r);
		break;
	case PMON_CALL_mkbuf:
	case PMON_CALL_setsbuf:
	case PMON_CALL_pkmesg:
	case PMON_CALL_pkmesgbody:
	case PMON_CALL_packf:
	case PMON_CALL_vpackf:
		pack_off(t);
		break;
	case PMON_CALL_reduce:
	case PMON_CALL_gather:
	case PMON_CALL_scatter:
		/* They send and receive in between: not followed. */
		pack_off(t);
		unpack_stop(t);
		break;
	case PMON_CALL_setrbuf:
	case PMON_CALL_freebuf:		/* maybe of the receive buffer */
	case PMON_CALL_recvinfo:
		unpack_stop(t);
		break;
	case PMON_CALL_upkmesg:
	case PMON_CALL_unpackf:
	case PMON_CALL_vunpackf:
	case PMON_CALL_upkbyte:
	case PMON_CALL_upkcplx:
	case PMON_CALL_upkdcplx:
	case PMON_CALL_upkdouble:
	case PMON_CALL_upkfloat:
	case PMON_CALL_upkint:
	case PMON_CALL_upklong:
	case PMON_CALL_upkshort:
	case PMON_CALL_upkstr:
	case PMON_CALL_upkuint:
	case PMON_CALL_upkulong:
	case PMON_CALL_upkushort:
		unpack_step(s, t, r);
		break;
	default:
		break;
	}
}

/* --- events ------------------------------------------------------------ */

/*
 * A task's first event follows its parent's spawn begin, which the
 * spawn's end told, or the parent's current call if it is still in the
 * spawn.
 */
static void
first_event(struct state *s, struct task *t, uint64_t seq)
{
	struct task *p;
	struct cause c;
	uint64_t at = t->spawn_seq;

	if (t->parent == 0 || (p = task_find(s, t->parent)) == NULL)
		return;
	if (at == 0 && p->in_call && p->cur.call == PMON_CALL_spawn)
		at = p->cur.seq;
	if (at == 0)
		return;
	c = state_out(p, at);
	state_link(s, t, seq, &c);
}

static void
advance(struct task *t, uint64_t last, uint64_t tc)
{
	if (!t->seen)
		t->first_t = tc;
	t->seen = 1;
	if (tc > t->last_t)
		t->last_t = tc;
	if (last > t->last_seq)
		t->last_seq = last;
}

/* Report a receive from a task that has already ended, if it must wait. */
static void
recv_from_ended(struct state *s, struct task *t)
{
	struct task *p;

	if (t->cur.peer == -1 || (p = task_find(s, t->cur.peer)) == NULL ||
	    p->end == TASK_LIVE || state_queued_match(t))
		return;
	state_report_waits_on_exited(s, t, p->tid);
}

/*
 * A pvm_kill, or a pvm_sendsig of SIGTERM or SIGKILL: if its victim is,
 * or will be, killed, this is what killed it (the edge to its last
 * event).  Which comes first in the stream, the kill or the victim's
 * end, depends on the order's other constraints.
 */
static void
kill_note(struct state *s, const struct task *t, const struct record *r)
{
	struct task *v;

	if (!record_is_fatal_signal(r))
		return;
	if ((v = task_find(s, r->peer)) == NULL || v->end == TASK_EXITED)
		return;
	v->kill_tid = t->tid;
	v->kill_seq = r->seq;
}

static void
event_begin(struct state *s, struct task *t, const struct order_event *ev)
{
	const struct record *r = ev->rec;
	uint64_t tc = ev->t_corr;

	if (r->call == PMON_CALL_HANDLER && t->in_call && !t->has_outer) {
		t->outer = t->cur;
		t->has_outer = 1;
	}
	t->calls++;
	t->in_call = 1;
	t->cur.call = r->call;
	t->cur.seq = r->seq;
	t->cur.t = tc;
	t->cur.peer = r->peer;
	t->cur.tag = r->tag;
	t->cur.ctx = r->ctx;
	t->cur.inst = r->inst;
	rec_group(r, t->cur.group);
	if (is_blocking_recv(r->call))
		state_wait_register(s, t);
	switch (r->call) {
	case PMON_CALL_send:
	case PMON_CALL_psend:
	case PMON_CALL_mcast:
		state_sends_apply(s, t, r);
		break;
	case PMON_CALL_recv:
	case PMON_CALL_precv:
		recv_from_ended(s, t);
		break;
	case PMON_CALL_barrier:
		state_barrier_enter(s, t);
		break;
	case PMON_CALL_exit:
		task_end(s, t, TASK_EXITED);
		break;
	case PMON_CALL_kill:
	case PMON_CALL_sendsig:
		kill_note(s, t, r);
		break;
	case PMON_CALL_HANDLER:
		/* It took its message: a receive, as at a receive's end. */
		if (record_is_recv(r))
			state_receive_apply(s, t, ev, NULL);
		break;
	default:
		break;
	}
}

/*
 * The children a spawn made.  A failed spawn leaves a PVM error code in
 * place of a tid; the agent passes only tids, and anything else is no
 * child.
 */
static void
spawn_end(struct state *s, struct task *t, const struct record *r,
    uint64_t begin)
{
	struct task *k;
	unsigned i;

	for (i = 0; i < r->npeers; i++) {
		int32_t kid = record_peer(r, i);

		if (kid <= 0)
			continue;
		k = task_get(s, kid);
		state_task_add_kid(t, k);
		if (k->parent == 0)
			k->parent = t->tid;
		if (k->spawn_seq != 0)
			continue;
		k->spawn_seq = begin;
	}
}

/*
 * The mailbox calls that changed it: a put stored an entry (at the index
 * it returned), a delete or a read with PvmMboxReadAndDelete removed
 * one.  A read names the put it got (the order matched it) or, without
 * an id, the index it asked for.
 */
static void
mbox_end(struct state *s, struct task *t, const struct order_event *ev,
    const struct call *open)
{
	const struct record *r = ev->rec;
	char name[RECORD_GROUP_MAX + 1];

	if (r->rc < 0)
		return;
	rec_group(r, name);
	switch (r->call) {
	case PMON_CALL_putinfo:
		mbox_put(&s->mbox, name, r->rc, t->tid, r->tag, r->bytes,
		    open != NULL ? open->seq : 0);
		break;
	case PMON_CALL_delinfo:
		mbox_del(&s->mbox, name, r->inst);
		break;
	default:
		if (!(r->tag & PvmMboxReadAndDelete) || r->rc == 0)
			break;
		if (ev->flags & EVENT_MATCHED)
			mbox_del_put(&s->mbox, ev->match_tid, ev->match_seq);
		else if (!(r->flags & RECORD_MSGID))
			mbox_del(&s->mbox, name, r->inst);
		break;
	}
}

/* pvm_addmhf's end: rc the handler's id, the filter its begin's. */
static void
handler_add(struct task *t, const struct record *r)
{
	struct handler *h;

	if (t->nhandlers == STATE_HANDLERS_MAX)
		return;
	t->handlers = xreallocarray(t->handlers, t->nhandlers + 1,
	    sizeof(*t->handlers));
	h = &t->handlers[t->nhandlers++];
	h->mhid = r->rc;
	h->src = r->peer;
	h->tag = r->tag;
	h->ctx = r->ctx;
}

/* pvm_delmhf's end: inst the id (doc/events.md). */
static void
handler_delete(struct task *t, int32_t mhid)
{
	size_t i;

	for (i = 0; i < t->nhandlers; i++)
		if (t->handlers[i].mhid == mhid) {
			t->handlers[i] = t->handlers[--t->nhandlers];
			return;
		}
}

static void
event_end(struct state *s, struct task *t, const struct order_event *ev)
{
	const struct record *r = ev->rec;
	const struct call *open = NULL;

	if (t->in_call && t->cur.call == r->call) {
		uint64_t dt = ev->t_corr > t->cur.t ? ev->t_corr - t->cur.t : 0;

		open = &t->cur;
		t->t_pvm += dt;
		if (is_blocking_recv(r->call) || r->call == PMON_CALL_barrier)
			t->t_blocked += dt;
	}
	/* A receive replaces the receive buffer, with or without message. */
	if (r->call == PMON_CALL_recv || r->call == PMON_CALL_nrecv ||
	    r->call == PMON_CALL_trecv)
		unpack_stop(t);
	if (record_is_send(r))
		state_sends_apply(s, t, r);
	else if (r->rc < 0 && (r->call == PMON_CALL_send ||
	    r->call == PMON_CALL_psend || r->call == PMON_CALL_mcast))
		state_retract_sends(s, t, r);
	else if (record_is_recv(r))
		state_receive_apply(s, t, ev, open);
	else if (r->call == PMON_CALL_barrier)
		state_barrier_leave(s, t, r->seq);
	else if (r->call == PMON_CALL_joingroup ||
	    r->call == PMON_CALL_lvgroup)
		state_membership(s, t, r);
	else if (r->call == PMON_CALL_spawn)
		spawn_end(s, t, r, open != NULL ? open->seq : 0);
	else if (r->call == PMON_CALL_putinfo || r->call == PMON_CALL_recvinfo ||
	    r->call == PMON_CALL_delinfo)
		mbox_end(s, t, ev, open);
	else if (r->call == PMON_CALL_addmhf && r->rc >= 0)
		handler_add(t, r);
	else if (r->call == PMON_CALL_delmhf && r->rc >= 0)
		handler_delete(t, r->inst);
	else if (r->call == PMON_CALL_exit) {
		t->has_exit_rc = 1;
		t->exit_rc = r->rc;
		task_end(s, t, TASK_EXITED);
	}
	buffers_end(s, t, r);
	t->in_call = 0;
	if (r->call == PMON_CALL_HANDLER && t->has_outer) {
		t->cur = t->outer;	/* back in the call it interrupted */
		t->in_call = 1;
		t->has_outer = 0;
		if (is_blocking_recv(t->cur.call))
			state_wait_register(s, t);
	}
}

/*
 * After state_load, a task's times are durations (first_t 0, last_t its
 * life so far): they go on from the first event after the snapshot, as
 * if the task's last event before it and the begin of the call it is in
 * had happened then.
 */
static void
retime(struct state *s, uint64_t tc)
{
	struct task *t;
	size_t i;

	for (i = 0; i < s->ntasks; i++) {
		t = s->tasks[i];
		if (t->in_call)
			t->cur.t = tc;
		if (t->seen && t->end == TASK_LIVE && t->last_t <= tc) {
			t->first_t = tc - t->last_t;
			t->last_t = tc;
		}
	}
	s->retime = 0;
}

void
state_event(struct state *s, const struct order_event *ev)
{
	const struct record *r = ev->rec;
	struct task *t;
	uint64_t last = r->seq;
	int first;

	if (s->retime)
		retime(s, ev->t_corr);

	/* Runs of events come from one task: skip the hash lookup. */
	if ((t = s->last) == NULL || t->tid != ev->tid) {
		t = task_get(s, ev->tid);
		s->last = t;
	}
	if (ev->t_corr > s->now)
		s->now = ev->t_corr;
	if (s->h_ns != 0 && (++s->nevents & STATE_SWEEP_MASK) == 0)
		state_links_sweep(s);
	if (ev->flags & EVENT_LOST) {
		/* What the task was in is unknown now. */
		if (r->bytes > 0) {
			last = r->seq + (uint64_t)r->bytes - 1;
			t->lost += (uint64_t)r->bytes;
		}
		t->in_call = t->has_outer = 0;
		pack_off(t);
		unpack_stop(t);
		advance(t, last, ev->t_corr);
		return;
	}
	first = !t->seen;
	if (first && r->seq > 1)
		t->unknown_past = 1;
	advance(t, last, ev->t_corr);
	if (first)
		first_event(s, t, r->seq);
	t->has_brk = 0;
	if (r->call == PMON_CALL_SIGNAL)
		return;	/* between calls: changes no state */
	if (r->call == PMON_CALL_BREAK) {
		/* Not a call: where the task stopped itself. */
		t->has_brk = 1;
		t->brk_phase = r->phase;
		t->brk.call = (uint8_t)(r->rc > 0 && r->rc < PMON_CALL_MAX ?
		    r->rc : 0);
		t->brk.seq = r->seq;
		t->brk.peer = r->peer;
		t->brk.tag = r->tag;
		t->brk.ctx = r->ctx;
		t->brk.inst = r->inst;
		rec_group(r, t->brk.group);
		return;
	}
	if (r->phase == PMON_BEGIN) {
		event_begin(s, t, ev);
		return;
	}
	event_end(s, t, ev);
}

/* --- ends of tasks ----------------------------------------------------- */

static void
task_end(struct state *s, struct task *t, enum task_end how)
{
	struct group *g;

	if (t->end != TASK_LIVE)
		return;
	state_ended_receives(s, t);
	state_ended_barriers(s, t);
	t->end = how;
	pack_off(t);
	unpack_stop(t);
	for (g = s->groups; g != NULL; g = g->next)
		state_group_leave(g, t->tid);
	mbox_owner_end(&s->mbox, t->tid);
	state_ended_queue(s, t);
}

void
state_task_gone(struct state *s, int32_t tid)
{
	struct task *t;

	if ((t = task_find(s, tid)) != NULL)
		task_end(s, t, TASK_KILLED);
}
