/*
 * The coordinator's state and the work that spans agents and tools: the
 * ordered stream (released events go to every subscriber), flush rounds,
 * readiness and the shutdown sequence.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "coord.h"
#include "log.h"
#include "record.h"
#include "xmalloc.h"

/*
 * Encodes each released event once and queues it to every subscriber;
 * then the state model and the breakpoints see it.  A replay feeds its
 * recorded events here too.
 */
void
coord_release_event(struct coord *c, const struct order_event *ev)
{
	if (c->relay != NULL) {
		coord_relay_event(c, ev);
		return;
	}
	coord_batch_event(c, ev);
	coord_ack_released(c, ev->tid, (ev->flags & EVENT_LOST) &&
	    ev->rec->bytes > 0 ? ev->rec->seq + (uint64_t)ev->rec->bytes - 1 :
	    ev->rec->seq);
	state_event(c->state, ev);
	if (!TAILQ_EMPTY(&c->bps))
		coord_control_event(c, ev);
}

static void
coord_release(const struct order_event *ev, void *arg)
{
	coord_release_event(arg, ev);
}

/*
 * A problem the state model found: an event for every subscriber, and
 * the breakpoints it triggers.
 */
static void
coord_problem(const struct state_problem *sp, void *arg)
{
	struct coord *c = arg;

	log_info("problem: %s", sp->json);
	/* A replay serves the recorded PROBLEM frames instead. */
	if (c->replay != NULL)
		return;
	coord_tools_send_problem(c, sp->json);
	if (!TAILQ_EMPTY(&c->bps))
		coord_control_problem(c, sp);
}

/* Every event of an ended task is out: the model may end it. */
static void
coord_task_done(int32_t tid, void *arg)
{
	struct coord *c = arg;

	if (c->relay != NULL) {
		coord_relay_task_done(c, tid);
		return;
	}
	coord_tools_send_gone(c, tid);
	state_task_gone(c->state, tid);
	coord_ack_done(c, tid);
}

uint64_t
coord_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void	sync_timer_cb(int, short, void *);

static void
batch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;

	(void)fd;
	(void)what;
	if (c->relay != NULL)
		coord_relay_batch_out(c);
	else
		coord_batch_flush(c);
}
static void	check_timer_cb(int, short, void *);

int
coord_init(struct coord *c, struct event_base *base)
{
	c->base = base;
	c->pvm_tid = -1;
	c->next_tool_id = 1;
	if (c->tool_high == 0)
		c->tool_high = COORD_TOOL_HIGH;
	TAILQ_INIT(&c->agents);
	TAILQ_INIT(&c->tools);
	TAILQ_INIT(&c->tasks);
	TAILQ_INIT(&c->flushes);
	TAILQ_INIT(&c->hosts);
	TAILQ_INIT(&c->ops);
	TAILQ_INIT(&c->deliveries);
	TAILQ_INIT(&c->bps);
	struct timeval tv = { 0, COORD_CHECK_MS * 1000 };

	c->order = order_new(coord_release, c);
	c->state = state_new(coord_problem, c);
	c->clock = clock_new(&c->clock_params);
	if ((c->ev_sync = evtimer_new(base, sync_timer_cb, c)) == NULL ||
	    (c->ev_check = event_new(base, -1, EV_PERSIST, check_timer_cb,
	    c)) == NULL || coord_hold_init(c) == -1 ||
	    coord_accept_init(c) == -1 ||
	    (c->ev_batch = event_new(base, -1, 0, batch_cb, c)) == NULL)
		return -1;
	coord_batch_init(&c->batch);
	if (c->relay != NULL)
		coord_relay_order(c);	/* no clock: the root corrects */
	else
		order_set_clock(c->order, c->clock);
	order_set_done_cb(c->order, coord_task_done, c);
	evtimer_add(c->ev_check, &tv);
	return 0;
}

void
coord_free(struct coord *c)
{
	struct coord_task *t;
	struct coord_host *h;
	struct coord_flush *f;
	int i;

	/* No stop to release, no breakpoint to remove when tools go. */
	coord_control_free(c);
	coord_replay_free(c);
	/* Rounds first: freeing an agent must not complete one. */
	while ((f = TAILQ_FIRST(&c->flushes)) != NULL) {
		TAILQ_REMOVE(&c->flushes, f, entry);
		free(f->waiting);
		free(f);
	}
	while (!TAILQ_EMPTY(&c->tools))
		coord_tool_free(TAILQ_FIRST(&c->tools));
	while (!TAILQ_EMPTY(&c->agents))
		coord_agent_free(TAILQ_FIRST(&c->agents));
	coord_relay_free(c);
	coord_hold_free(c);
	c->task_last = NULL;
	while ((t = TAILQ_FIRST(&c->tasks)) != NULL) {
		TAILQ_REMOVE(&c->tasks, t, entry);
		coord_relay_task_free(t);
		free(t->host);
		free(t->program);
		free(t);
	}
	while ((h = TAILQ_FIRST(&c->hosts)) != NULL) {
		TAILQ_REMOVE(&c->hosts, h, entry);
		free(h->name);
		free(h);
	}
	coord_ack_free(c);
	coord_pvm_children_free(c);
	free(c->old_agents);
	free(c->away);
	if (c->agent_listener != NULL)
		evconnlistener_free(c->agent_listener);
	if (c->agent_listener_wide != NULL)
		evconnlistener_free(c->agent_listener_wide);
	if (c->tool_listener != NULL)
		evconnlistener_free(c->tool_listener);
	for (i = 0; i < c->nev_pvm; i++)
		event_free(c->ev_pvm[i]);
	if (c->ev_ready != NULL)
		event_free(c->ev_ready);
	if (c->ev_adopt != NULL)
		event_free(c->ev_adopt);
	if (c->ev_shutdown != NULL)
		event_free(c->ev_shutdown);
	if (c->ev_sync != NULL)
		event_free(c->ev_sync);
	if (c->ev_check != NULL)
		event_free(c->ev_check);
	if (c->ev_accept != NULL)
		event_free(c->ev_accept);
	if (c->ev_batch != NULL)
		event_free(c->ev_batch);
	coord_batch_free(&c->batch);
	order_free(c->order);
	state_free(c->state);
	clock_free(c->clock);
	memset(c, 0, sizeof(*c));
}

/* --- tasks ------------------------------------------------------------ */

static size_t
task_bucket(int32_t tid)
{
	return record_tid_hash(tid) % COORD_TASK_BUCKETS;
}

/*
 * Runs of records come from one task: the last one found is looked at
 * first (entries live as long as the coordinator).
 */
struct coord_task *
coord_task_find(struct coord *c, int32_t tid)
{
	struct coord_task *t = c->task_last;

	if (t != NULL && t->tid == tid)
		return t;
	for (t = c->task_hash[task_bucket(tid)]; t != NULL; t = t->hnext)
		if (t->tid == tid)
			return c->task_last = t;
	return NULL;
}

/* A new, empty task entry for tid (which is not known yet). */
struct coord_task *
coord_task_add(struct coord *c, int32_t tid)
{
	struct coord_task *t;

	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->hnext = c->task_hash[task_bucket(tid)];
	c->task_hash[task_bucket(tid)] = t;
	TAILQ_INSERT_TAIL(&c->tasks, t, entry);
	return t;
}

static const char *const coord_task_stages[] = {
	"live", "orphan", "ended", "expired"
};

/* Moves t's stream to stage to (coord.h draws the moves). */
void
coord_task_move(struct coord_task *t, enum coord_task_stage to)
{
	static const unsigned legal[] = {
		[COORD_TASK_LIVE] = 1 << COORD_TASK_ORPHAN |
		    1 << COORD_TASK_ENDED,
		[COORD_TASK_ORPHAN] = 1 << COORD_TASK_LIVE |
		    1 << COORD_TASK_ENDED | 1 << COORD_TASK_EXPIRED,
		[COORD_TASK_ENDED] = 1 << COORD_TASK_LIVE,
		[COORD_TASK_EXPIRED] = 1 << COORD_TASK_LIVE,
	};

	if (!(legal[t->stage] & 1U << to))
		log_warnx("task t%x: its stream went from %s to %s",
		    (unsigned)t->tid, coord_task_stages[t->stage],
		    coord_task_stages[to]);
	t->stage = to;
}

int
coord_task_ended(const struct coord_task *t)
{
	return t->stage == COORD_TASK_ENDED || t->stage == COORD_TASK_EXPIRED;
}

/* An ended task an agent still sends of: dropped until its TASK_END. */
int
coord_task_late(const struct coord_task *t)
{
	return coord_task_ended(t) && t->agent != NULL;
}

/*
 * Every subscriber learns a task when it is announced, so TASK_INFO
 * always comes before the task's first EVENT.
 */
void
coord_broadcast_task(struct coord *c, const struct coord_task *t)
{
	uint8_t buf[COORD_TASK_INFO_MAX];

	coord_tools_send(c, buf, coord_frame_task_info(buf, t));
}

/* --- readiness -------------------------------------------------------- */

static void
say_ready(struct coord *c)
{
	char line[sizeof(c->listen_addr) + 16];
	int n;

	c->ready = 1;
	if (c->ev_ready != NULL)
		event_del(c->ev_ready);
	log_info("ready; agents dial %s", c->listen_addr);
	if (c->ready_fd != -1) {
		n = snprintf(line, sizeof(line), "ready %s\n", c->listen_addr);
		if (write(c->ready_fd, line, (size_t)n) != n)
			log_warn("writing the ready line");
		close(c->ready_fd);
		c->ready_fd = -1;
	}
	if (c->ready_hook != NULL)
		c->ready_hook(c);
}

/* Ready once listening and every agent we spawned has said hello. */
void
coord_check_ready(struct coord *c)
{
	struct coord_host *h;

	if (c->ready || (c->agent_listener == NULL && c->replay == NULL))
		return;
	TAILQ_FOREACH(h, &c->hosts, entry)
		if (!h->hello)
			return;
	say_ready(c);
}

static void
ready_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;
	struct coord_host *h;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(h, &c->hosts, entry)
		if (!h->hello) {
			log_warnx("host %s: no agent said hello within %d s; "
			    "its tasks are not monitored until one does",
			    h->name, COORD_READY_TIMEOUT);
			h->hello_late = 1;
		}
	if (!c->ready)
		say_ready(c);
}

void
coord_start_ready_timer(struct coord *c)
{
	struct timeval tv = { COORD_READY_TIMEOUT, 0 };

	if (c->ev_ready == NULL &&
	    (c->ev_ready = evtimer_new(c->base, ready_timeout_cb, c)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	evtimer_add(c->ev_ready, &tv);
	coord_check_ready(c);
}

/* --- flush rounds ----------------------------------------------------- */

static void	shutdown_finish(struct coord *);
static void	flush_check(struct coord *, struct coord_flush *);
static struct coord_flush *flush_new(struct coord *, struct coord_tool *,
		    uint32_t, int);

/* Logs what every task that holds events waits for. */
static void
log_window(struct coord *c)
{
	char *buf = NULL, *line, *next;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return;
	order_dump(c->order, f);
	fclose(f);
	for (line = buf; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		log_warnx("window: %s", line);
	}
	free(buf);
}

/*
 * A tool's flush waits for everything recorded before it, but the
 * records a round drains come after the round began, and a join or
 * leave among them waits for a round that began after it came; a group
 * call that pvmgs served waits up to ORDER_PATIENCE_ROUNDS rounds for
 * pvmgs's records (which never come when pvmgs is not instrumented).
 * So while such waits remain, the tool's round is followed by another,
 * at most ORDER_PATIENCE_ROUNDS + 1 of them, before it is answered.
 */
static int
flush_again(struct coord *c, struct coord_flush *f)
{
	struct coord_flush *g;

	if ((f->tool == NULL && f->op == 0) ||
	    f->again > ORDER_PATIENCE_ROUNDS ||
	    order_wants_sync(c->order) != ORDER_SYNC_SOON)
		return 0;
	g = flush_new(c, f->tool, f->tool_id, 0);
	g->reply = f->reply;
	g->snapshot = f->snapshot;
	g->op = f->op;
	g->again = f->again + 1;
	flush_check(c, g);
	return 1;
}

/* Completes a round once no agent is left to answer. */
static void
flush_check(struct coord *c, struct coord_flush *f)
{
	if (f->nwaiting > 0)
		return;
	TAILQ_REMOVE(&c->flushes, f, entry);
	/* Every record made before the round began has been ordered. */
	order_synced(c->order, f->mark);
	/* The model is now up to date: a task shown blocked is blocked. */
	state_check(c->state);
	if (f->sync)
		c->sync_rounds--;
	if (flush_again(c, f))
		;	/* the tool is answered when the next round ends */
	else if (f->op != 0)
		coord_control_flushed(c, f->op);
	else if (f->tool != NULL && f->snapshot)
		coord_snapshot_send(c, f->tool);
	else if (f->tool != NULL && f->reply)
		coord_frame_reply(coord_tool_out(f->tool),
		    f->tool_id, REPLY_OK, "{}", 2);
	else if (f->tool != NULL)
		coord_frame_u32(coord_tool_out(f->tool),
		    MSG_FLUSH_DONE, f->tool_id);
	if (f->final)
		shutdown_finish(c);
	free(f->waiting);
	free(f);
	coord_sync_check(c);
	coord_relay_settle(c);
}

/*
 * Asks every agent to drain its rings; when all have answered, every
 * record made before now has been ordered, and what could be released
 * went out ahead of the tool's FLUSH_DONE.
 */
static struct coord_flush *
flush_new(struct coord *c, struct coord_tool *tool, uint32_t id, int final)
{
	struct coord_flush *f;
	struct coord_agent *a;

	f = xcalloc(1, sizeof(*f));
	f->waiting = xcalloc(c->nagents + 1, sizeof(*f->waiting));
	if (++c->next_round == 0)
		c->next_round = 1;
	f->round = c->next_round;
	f->tool = tool;
	f->tool_id = id;
	f->final = final;
	f->mark = order_mark(c->order);
	TAILQ_FOREACH(a, &c->agents, entry) {
		if (a->state != COORD_P_ACTIVE)
			continue;
		f->waiting[f->nwaiting++] = a;
		coord_frame_u32(bufferevent_get_output(a->bev), MSG_FLUSH,
		    f->round);
	}
	TAILQ_INSERT_TAIL(&c->flushes, f, entry);
	log_debug("flush round %u: %zu agents", f->round, f->nwaiting);
	return f;
}

/* Is there an agent a round would ask? */
static int
agents_active(const struct coord *c)
{
	const struct coord_agent *a;

	TAILQ_FOREACH(a, &c->agents, entry)
		if (a->state == COORD_P_ACTIVE)
			return 1;
	return 0;
}

/*
 * In a replay, "now" is the end of the recording: a round completes
 * once all of it has been served (coord_flush_settle).
 */
static void
flush_begin(struct coord *c, struct coord_flush *f)
{
	if (c->replay != NULL && !coord_replay_done(c)) {
		coord_replay_start(c);
		return;
	}
	flush_check(c, f);
	coord_sync_check(c);
}

/*
 * A round nobody waits for (tool NULL: a breakpoint's flush action) is
 * not run when no agent would be asked: it would end at once, inside
 * the release of the event that triggered it.
 */
void
coord_flush_start(struct coord *c, struct coord_tool *tool, uint32_t id)
{
	if (tool == NULL && c->replay == NULL && !agents_active(c))
		return;
	flush_begin(c, flush_new(c, tool, id, 0));
}

/* The "flush" request: the same round, answered with REPLY id. */
void
coord_flush_reply(struct coord *c, struct coord_tool *tool, uint32_t id)
{
	struct coord_flush *f = flush_new(c, tool, id, 0);

	f->reply = 1;
	flush_begin(c, f);
}

/* The replay has served everything: the rounds waiting for it end. */
void
coord_flush_settle(struct coord *c)
{
	struct coord_flush *f, *next;

	for (f = TAILQ_FIRST(&c->flushes); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		flush_check(c, f);
	}
}

/*
 * A breakpoint's snapshot action: the same round, then the state to the
 * tool, so that it shows everything recorded until now.  With no agent
 * to ask nothing more can come: the snapshot goes at once, without a
 * round that would end inside the release of the triggering event.
 */
void
coord_flush_snapshot(struct coord *c, struct coord_tool *tool)
{
	struct coord_flush *f;

	if (!agents_active(c)) {
		coord_snapshot_send(c, tool);
		return;
	}
	f = flush_new(c, tool, 0, 0);
	f->snapshot = 1;
	flush_check(c, f);
	coord_sync_check(c);
}

/*
 * A stop's notice and reply wait for this round (coord_control.c), so
 * that every tool has the stopped tasks' records before it hears of the
 * stop.  0 if no agent would be asked: nothing more can come.
 */
int
coord_flush_op(struct coord *c, uint32_t op)
{
	struct coord_flush *f;

	if (c->replay != NULL || !agents_active(c))
		return 0;
	f = flush_new(c, NULL, 0, 0);
	f->op = op;
	flush_check(c, f);
	coord_sync_check(c);
	return 1;
}

/*
 * Group joins and leaves wait until no broadcast recorded before them can
 * still arrive: a flush round that began after they came proves it.  One
 * such round at a time, a few milliseconds after the need arose, so that
 * a burst of joins shares one round; rounds that only let the core judge
 * a broadcast impossible come slower.
 */
#define SYNC_SOON_US	2000
#define SYNC_LATER_US	20000

void
coord_sync_check(struct coord *c)
{
	struct timeval tv = { 0, SYNC_SOON_US };
	int want;

	if (c->sync_rounds > 0 || c->shutting_down ||
	    evtimer_pending(c->ev_sync, NULL) ||
	    (want = order_wants_sync(c->order)) == 0)
		return;
	if (want == ORDER_SYNC_LATER)
		tv.tv_usec = SYNC_LATER_US;
	evtimer_add(c->ev_sync, &tv);
}

static void
sync_timer_cb(int fd, short ev, void *arg)
{
	struct coord *c = arg;
	struct coord_flush *f;

	(void)fd;
	(void)ev;
	if (c->shutting_down || !order_wants_sync(c->order))
		return;
	f = flush_new(c, NULL, 0, 0);
	f->sync = 1;
	c->sync_rounds++;
	flush_check(c, f);
}

/*
 * Deadlocks make no events: a round now and then brings the model up to
 * date and looks for them (flush_check), when no other round runs.
 */
static void
check_timer_cb(int fd, short ev, void *arg)
{
	struct coord *c = arg;

	(void)fd;
	(void)ev;
	if (c->shutting_down)
		return;
	coord_preauth_expire(c);
	coord_agent_orphans_check(c, 0);
	if (c->nagents == 0 || !TAILQ_EMPTY(&c->flushes))
		return;
	flush_check(c, flush_new(c, NULL, 0, 0));
}

/* Removes a from f's list; returns 1 if it was there. */
static int
flush_unwait(struct coord_flush *f, struct coord_agent *a)
{
	size_t i;

	for (i = 0; i < f->nwaiting; i++)
		if (f->waiting[i] == a) {
			f->waiting[i] = f->waiting[--f->nwaiting];
			return 1;
		}
	return 0;
}

void
coord_flush_done(struct coord *c, struct coord_agent *a, uint32_t round)
{
	struct coord_flush *f;

	TAILQ_FOREACH(f, &c->flushes, entry)
		if (f->round == round) {
			if (flush_unwait(f, a))
				flush_check(c, f);
			return;
		}
	log_debug("agent %s: FLUSH_DONE of unknown round %u", a->peer, round);
}

/* An agent that went away counts as done in every round. */
void
coord_flush_forget(struct coord *c, struct coord_agent *a)
{
	struct coord_flush *f, *next;

	for (f = TAILQ_FIRST(&c->flushes); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		if (flush_unwait(f, a))
			flush_check(c, f);
	}
}

void
coord_flush_forget_tool(struct coord *c, struct coord_tool *tool)
{
	struct coord_flush *f;

	TAILQ_FOREACH(f, &c->flushes, entry)
		if (f->tool == tool)
			f->tool = NULL;
}

/* --- shutdown --------------------------------------------------------- */

static void
drain_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;
	struct timeval tv = { COORD_FLUSH_TIMEOUT, 0 };

	(void)fd;
	(void)what;
	/*
	 * A lossless tool that still reads its backlog (and holds the
	 * agents back for it) gets more time: what it has not read yet
	 * must not be lost.  One that stopped reading is degraded by
	 * coord_hold.c's watch, and then this ends.
	 */
	if (coord_hold_busy(c)) {
		log_info("shutdown: waiting for lossless tools to read what "
		    "is queued for them");
		evtimer_add(c->ev_shutdown, &tv);
		return;
	}
	if (!c->finishing) {
		log_warnx("final flush: agents did not answer within %d s",
		    COORD_FLUSH_TIMEOUT);
		shutdown_finish(c);
		return;
	}
	log_warnx("peers did not read their last frames within %d s",
	    COORD_DRAIN_TIMEOUT);
	event_base_loopexit(c->base, NULL);
}

/*
 * Stops accepting peers and runs a final flush round; shutdown_finish
 * follows when it completes (or times out).
 */
void
coord_shutdown(struct coord *c, const char *why)
{
	struct timeval tv = { COORD_FLUSH_TIMEOUT, 0 };

	if (c->shutting_down)
		return;
	c->shutting_down = 1;
	event_del(c->ev_check);
	log_info("shutting down: %s", why);
	coord_agent_orphans_check(c, 1);
	if (c->agent_listener != NULL)
		evconnlistener_disable(c->agent_listener);
	if (c->agent_listener_wide != NULL)
		evconnlistener_disable(c->agent_listener_wide);
	if (c->tool_listener != NULL)
		evconnlistener_disable(c->tool_listener);
	if (c->ev_ready != NULL)
		event_del(c->ev_ready);
	c->ev_shutdown = evtimer_new(c->base, drain_timeout_cb, c);
	if (c->ev_shutdown == NULL)
		fatalx("%s: evtimer_new", __func__);
	evtimer_add(c->ev_shutdown, &tv);
	flush_check(c, flush_new(c, NULL, 0, 1));
}

/*
 * Releases what the window still holds, says BYE to every tool and (a
 * root) SHUTDOWN to every agent; the loop ends once all of it is written.
 */
static void
shutdown_finish(struct coord *c)
{
	struct timeval tv = { COORD_DRAIN_TIMEOUT, 0 };
	struct coord_tool *t;
	struct coord_agent *a;
	struct order_stats st;

	if (c->finishing)
		return;
	order_stats(c->order, &st);
	if (st.held > 0) {
		log_warnx("shutdown: %zu events still wait", st.held);
		log_window(c);
	}
	order_release_all(c->order);
	order_stats(c->order, &st);
	/* An intermediate's went up for its root to match. */
	if (st.unmatched > 0 && c->relay != NULL)
		log_info("shutdown: %" PRIu64 " of %" PRIu64 " receives went "
		    "up without their send, for the root to match",
		    st.unmatched, st.matched + st.unmatched);
	else if (st.unmatched > 0)
		log_warnx("shutdown: %" PRIu64 " of %" PRIu64 " receives went "
		    "without their send (records lost)", st.unmatched,
		    st.matched + st.unmatched);
	if (st.repaired > 0 || st.estimated > 0)
		log_info("shutdown: of the receives intermediates matched, "
		    "%" PRIu64 " had a send's time no longer kept; %" PRIu64
		    " an intermediate started again could not match were "
		    "matched here", st.estimated, st.repaired);
	c->finishing = 1;
	TAILQ_FOREACH(t, &c->tools, entry) {
		/* A tool still behind learns what it lost before BYE. */
		if (t->full)
			coord_tool_lost(t);
		coord_frame_text(coord_tool_out(t), MSG_BYE,
		    "the coordinator is shutting down");
		t->state = COORD_P_CLOSING;
	}
	/*
	 * An intermediate's agents leave on their root's SHUTDOWN, which
	 * came down their uplinks.  One that goes on its own (SIGTERM from
	 * a pvmd leaving the machine, its root dead) only closes their
	 * connections: they dial it again, or the one its root starts
	 * instead, or a root started anew finds them (agent_adopt).
	 */
	TAILQ_FOREACH(a, &c->agents, entry) {
		if (c->relay == NULL)
			coord_frame_empty(bufferevent_get_output(a->bev),
			    MSG_SHUTDOWN);
		a->state = COORD_P_CLOSING;
	}
	evtimer_add(c->ev_shutdown, &tv);
	coord_output_check(c);
}

/* Ends the loop once every peer's output has been written. */
void
coord_output_check(struct coord *c)
{
	struct coord_tool *t;
	struct coord_agent *a;

	if (!c->finishing)
		return;
	TAILQ_FOREACH(t, &c->tools, entry)
		if (evbuffer_get_length(bufferevent_get_output(t->bev)) > 0)
			return;
	TAILQ_FOREACH(a, &c->agents, entry)
		if (evbuffer_get_length(bufferevent_get_output(a->bev)) > 0)
			return;
	event_base_loopexit(c->base, NULL);
}
