/*
 * ACKs to the agents (doc/capture.md, "A coordinator restart"): an
 * agent keeps a task's records in its ring until the coordinator has
 * released them, so that a coordinator started after this one died gets
 * them again.  Releases mark the task; a short timer then sends each
 * agent one ACK with the last released seq of each of its marked tasks,
 * and the end of those that ended and were released to the last.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coord.h"
#include "log.h"
#include "wire.h"

static void	ack_send_all(int, short, void *);

static void
ack_mark(struct coord *c, struct coord_task *t)
{
	struct timeval tv = { 0, COORD_ACK_MS * 1000 };
	int32_t *v;

	if (t->ack_due)
		return;
	if (c->nacks == c->ackcap) {
		c->ackcap = c->ackcap ? c->ackcap * 2 : 64;
		if ((v = reallocarray(c->acks, c->ackcap, sizeof(*v))) ==
		    NULL)
			fatal("%s", __func__);
		c->acks = v;
	}
	c->acks[c->nacks++] = t->tid;
	t->ack_due = 1;
	if (c->ev_ack == NULL &&
	    (c->ev_ack = evtimer_new(c->base, ack_send_all, c)) == NULL)
		fatal("%s", __func__);
	if (!evtimer_pending(c->ev_ack, NULL))
		evtimer_add(c->ev_ack, &tv);
}

/* The order released tid's records up to seq last. */
void
coord_ack_released(struct coord *c, int32_t tid, uint64_t last)
{
	struct coord_task *t = coord_task_find(c, tid);

	if (t == NULL || last <= t->released_seq)
		return;
	t->released_seq = last;
	if (t->agent != NULL || t->end_agent != NULL)
		ack_mark(c, t);
}

/* tid ended and all of it was released: its agent may forget it. */
void
coord_ack_done(struct coord *c, int32_t tid)
{
	struct coord_task *t = coord_task_find(c, tid);

	if (t == NULL)
		return;
	t->done = 1;
	if (t->end_agent != NULL)
		ack_mark(c, t);
}

/* Who gets t's ACK: the agent it is on, or the one that ended it. */
static struct coord_agent *
ack_agent(const struct coord_task *t)
{
	if (t->agent != NULL)
		return t->agent;
	return t->done ? t->end_agent : NULL;
}

/* One ACK of every due task of agent a, whose entries are then cleared. */
static void
ack_send(struct coord *c, struct coord_agent *a)
{
	struct evbuffer *out = bufferevent_get_output(a->bev);
	uint8_t hdr[FRAME_HDR_SIZE + 2], e[ACK_ENTRY_LEN];
	struct coord_task *t;
	size_t i, n = 0;

	for (i = 0; i < c->nacks; i++)
		if ((t = coord_task_find(c, c->acks[i])) != NULL &&
		    ack_agent(t) == a)
			n++;
	if (n == 0)
		return;
	if (n > UINT16_MAX)
		n = UINT16_MAX;
	frame_hdr_encode(hdr, MSG_ACK, (uint32_t)(2 + n * ACK_ENTRY_LEN));
	wire_put16(hdr + FRAME_HDR_SIZE, (uint16_t)n);
	evbuffer_add(out, hdr, sizeof(hdr));
	for (i = 0; i < c->nacks && n > 0; i++) {
		if ((t = coord_task_find(c, c->acks[i])) == NULL ||
		    ack_agent(t) != a)
			continue;
		wire_put32(e, (uint32_t)t->tid);
		wire_put64(e + 4, t->released_seq);
		e[12] = t->agent == NULL && t->done;
		evbuffer_add(out, e, sizeof(e));
		if (e[12])
			t->end_agent = NULL;
		t->ack_due = 0;
		c->acks[i] = 0;
		n--;
	}
}

/* Once per COORD_ACK_MS at most: the ACKs that became due. */
static void
ack_send_all(int fd, short what, void *arg)
{
	struct coord *c = arg;
	struct coord_agent *a;
	struct coord_task *t;
	size_t i, j;

	(void)fd;
	(void)what;
	TAILQ_FOREACH(a, &c->agents, entry)
		if (a->state == COORD_P_ACTIVE && a->bev != NULL)
			ack_send(c, a);
	/* What is left had no agent (or more than one ACK holds). */
	for (i = j = 0; i < c->nacks; i++) {
		if (c->acks[i] == 0 ||
		    (t = coord_task_find(c, c->acks[i])) == NULL)
			continue;
		if (ack_agent(t) == NULL) {
			t->ack_due = 0;
			continue;
		}
		c->acks[j++] = c->acks[i];
	}
	c->nacks = j;
	if (c->nacks > 0) {
		struct timeval tv = { 0, COORD_ACK_MS * 1000 };

		evtimer_add(c->ev_ack, &tv);
	}
}

/* a is going away: tasks it ended are acked by nobody now. */
void
coord_ack_agent_gone(struct coord *c, struct coord_agent *a)
{
	struct coord_task *t;

	TAILQ_FOREACH(t, &c->tasks, entry)
		if (t->end_agent == a)
			t->end_agent = NULL;
}

void
coord_ack_free(struct coord *c)
{
	if (c->ev_ack != NULL)
		event_free(c->ev_ack);
	c->ev_ack = NULL;
	free(c->acks);
	c->acks = NULL;
	c->nacks = c->ackcap = 0;
}
