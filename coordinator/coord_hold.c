/*
 * Lossless tools (TOOL_LOSSLESS, doc/capture.md "A lossless
 * subscription"): the coordinator never drops an event for such a tool.
 * When one has more than c->tool_high bytes queued, the coordinator
 * holds the agents back: it stops reading from them, their own queues
 * fill, they stop draining the rings, and the rings absorb the rest (or
 * block their tasks, with pmon start --block).  Once every lossless
 * tool is down to half its limit, reading goes on, starting with what
 * the agents' connections already hold.
 *
 * A lossless tool that reads nothing for c->lossless_wait_ms while it
 * holds the agents back is degraded to an ordinary lossy tool, and every
 * tool is told ("degraded" notice): a hung tool cannot stop the
 * application for ever.  A tool that reads, however slowly, is never
 * degraded: that is the contract it asked for.
 */
#include <stdio.h>
#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coord.h"
#include "log.h"

static size_t
queued(const struct coord_tool *t)
{
	return evbuffer_get_length(bufferevent_get_output(t->bev));
}

static int
lossless(const struct coord_tool *t)
{
	return t->state != COORD_P_CLOSING && t->lossless && t->bev != NULL;
}

static void
agents_read(struct coord *c, int on)
{
	struct coord_agent *a;

	TAILQ_FOREACH(a, &c->agents, entry) {
		/* Not one that waits for its uplink (coord_relay.c). */
		if (a->state != COORD_P_ACTIVE || a->up_wait != NULL)
			continue;
		if (on)
			bufferevent_enable(a->bev, EV_READ);
		else
			bufferevent_disable(a->bev, EV_READ);
	}
}

/* Stops reading from the agents, for tool `by' (0: an uplink). */
static void
hold(struct coord *c, unsigned by)
{
	c->held_back = 1;
	c->held_since = coord_mono_ms();
	c->held_by = by;
	c->holds++;
	agents_read(c, 0);
}

/* t, lossless, just got more queued: hold the agents back if it is full. */
void
coord_hold_check(struct coord *c, struct coord_tool *t)
{
	if (c->held_back || queued(t) <= c->tool_high)
		return;
	hold(c, t->id);
	t->holds++;
	log_debug("tool %u (%s): %zu bytes queued; holding the agents back",
	    t->id, t->name, queued(t));
}

/*
 * An intermediate's uplink to the root has queued bytes: a root slower
 * than we are holds the agents back as a full lossless tool does.
 */
void
coord_hold_uplink(struct coord *c, size_t n)
{
	if (c->held_back || n <= c->tool_high)
		return;
	hold(c, 0);
	log_debug("an uplink has %zu bytes queued; holding the agents back",
	    n);
}

/* Is any lossless tool (or uplink) still above half its limit? */
static int
hold_needed(const struct coord *c)
{
	const struct coord_tool *t;

	if (coord_relay_backlog(c) > c->tool_high / 2)
		return 1;

	TAILQ_FOREACH(t, &c->tools, entry)
		if (lossless(t) && queued(t) > c->tool_high / 2)
			return 1;
	return 0;
}

/*
 * A lossless tool drained, left or was degraded: reading goes on when
 * none holds the agents back any more.  The agents' pending input is
 * handled from the loop (ev_resume), never inside a tool's callback.
 */
void
coord_hold_release(struct coord *c)
{
	struct coord_tool *t;
	uint64_t ms;

	if (!c->held_back || hold_needed(c))
		return;
	c->held_back = 0;
	ms = coord_mono_ms() - c->held_since;
	c->held_ms += ms;
	TAILQ_FOREACH(t, &c->tools, entry)
		if (t->id == c->held_by)
			t->held_ms += ms;
	agents_read(c, 1);
	event_active(c->ev_resume, EV_TIMEOUT, 0);
}

/* What the agents' connections held when reading stopped, in turn. */
static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;
	struct coord_agent *a, *next;

	(void)fd;
	(void)what;
	for (a = TAILQ_FIRST(&c->agents); a != NULL && !c->held_back;
	    a = next) {
		next = TAILQ_NEXT(a, entry);
		if (a->state == COORD_P_ACTIVE &&
		    evbuffer_get_length(bufferevent_get_input(a->bev)) > 0)
			coord_agent_read(a);
	}
}

static void
degrade(struct coord *c, struct coord_tool *t, uint64_t idle_ms)
{
	log_warnx("tool %u (%s): read nothing for %llu ms with %zu bytes "
	    "queued; it loses events from now on", t->id, t->name,
	    (unsigned long long)idle_ms, queued(t));
	t->lossless = 0;
	t->degraded = 1;
	if (queued(t) > c->tool_high)
		coord_tool_full(t);
	coord_notice_tool(c, t, "degraded");
}

/*
 * Every COORD_HOLD_CHECK_MS: a lossless tool that holds the agents back
 * and took nothing from its queue for lossless_wait_ms is degraded.
 */
static void
watch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;
	struct coord_tool *t;
	uint64_t now = coord_mono_ms(), d;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(t, &c->tools, entry) {
		if (!lossless(t))
			continue;
		d = t->drained;
		if (d != t->drained_seen || queued(t) <= c->tool_high / 2) {
			t->drained_seen = d;
			t->progress_ms = now;
		} else if (c->lossless_wait_ms > 0 &&
		    now - t->progress_ms >= c->lossless_wait_ms)
			degrade(c, t, now - t->progress_ms);
	}
	coord_hold_release(c);
}

/* Is a lossless tool still reading what it holds the agents back for? */
int
coord_hold_busy(const struct coord *c)
{
	const struct coord_tool *t;
	uint64_t now = coord_mono_ms();

	TAILQ_FOREACH(t, &c->tools, entry)
		if (lossless(t) && queued(t) > 0 &&
		    (c->lossless_wait_ms == 0 ||
		    now - t->progress_ms < c->lossless_wait_ms))
			return 1;
	return 0;
}

/* A tool that starts: its clock of progress starts now. */
void
coord_hold_tool_new(struct coord_tool *t)
{
	t->progress_ms = coord_mono_ms();
}

/* The tool leaves: what it held is released, its share is logged. */
void
coord_hold_tool_gone(struct coord *c, struct coord_tool *t)
{
	t->lossless = 0;
	coord_hold_release(c);
	if (t->holds > 0)
		log_info("tool %u (%s) held the agents back %llu times, %llu "
		    "ms in all", t->id, t->name, (unsigned long long)t->holds,
		    (unsigned long long)t->held_ms);
}

int
coord_hold_init(struct coord *c)
{
	struct timeval tv = { 0, COORD_HOLD_CHECK_MS * 1000 };

	if ((c->ev_resume = event_new(c->base, -1, 0, resume_cb, c)) ==
	    NULL || (c->ev_hold = event_new(c->base, -1, EV_PERSIST,
	    watch_cb, c)) == NULL)
		return -1;
	evtimer_add(c->ev_hold, &tv);
	return 0;
}

void
coord_hold_free(struct coord *c)
{
	if (c->held_back)
		c->held_ms += coord_mono_ms() - c->held_since;
	if (c->holds > 0)
		log_info("lossless tools held the agents back %llu times, "
		    "%llu ms in all", (unsigned long long)c->holds,
		    (unsigned long long)c->held_ms);
	if (c->ev_resume != NULL)
		event_free(c->ev_resume);
	if (c->ev_hold != NULL)
		event_free(c->ev_hold);
	c->ev_resume = c->ev_hold = NULL;
}
