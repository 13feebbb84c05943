/*
 * ACKs to the agents (doc/capture.md, "A coordinator restart"): an
 * agent keeps a task's records in its ring until the coordinator has
 * released them and every tool has them in its socket, so that a
 * coordinator started after this one died gets again whatever a tool
 * could not have had.  Releases mark the task in the batch they go out
 * in; when every tool has taken that batch into its socket (a delivery,
 * coord_ack_delivered), a short timer sends each agent one ACK with the
 * last such seq of each of its marked tasks, and the end of those that
 * ended and went out to the last.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coord.h"
#include "log.h"
#include "wire.h"
#include "xmalloc.h"

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
		v = xreallocarray(c->acks, c->ackcap, sizeof(*v));
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

/* The tools have tid's records up to seq last: its agent may free them. */
static void
ack_upto(struct coord *c, struct coord_task *t, uint64_t last)
{
	if (last <= t->released_seq)
		return;
	t->released_seq = last;
	if (t->agent != NULL || t->end_agent != NULL)
		ack_mark(c, t);
}

/* ...and it ended, with all of it so: its agent may forget it. */
static void
ack_end(struct coord *c, struct coord_task *t)
{
	t->done = 1;
	if (t->end_agent != NULL)
		ack_mark(c, t);
}

/* Records the order consumed and never releases (pvmgs's): acked now. */
void
coord_ack_taken(struct coord *c, int32_t tid, uint64_t last)
{
	struct coord_task *t = coord_task_find(c, tid);

	if (t != NULL)
		ack_upto(c, t, last);
}

static void
batch_mark(struct coord *c, struct coord_task *t)
{
	int32_t *v;

	if (t->in_batch)
		return;
	if (c->nack_batch == c->ack_batchcap) {
		c->ack_batchcap = c->ack_batchcap ? c->ack_batchcap * 2 : 64;
		v = xreallocarray(c->ack_batch, c->ack_batchcap, sizeof(*v));
		c->ack_batch = v;
	}
	c->ack_batch[c->nack_batch++] = t->tid;
	t->in_batch = 1;
}

/* The order released tid's records up to seq last, into the batch. */
void
coord_ack_released(struct coord *c, int32_t tid, uint64_t last)
{
	struct coord_task *t = coord_task_find(c, tid);

	if (t == NULL || last <= t->out_seq)
		return;
	t->out_seq = last;
	batch_mark(c, t);
}

/* tid ended and all of it was released, into the batch. */
void
coord_ack_done(struct coord *c, int32_t tid)
{
	struct coord_task *t = coord_task_find(c, tid);

	if (t == NULL)
		return;
	t->out_done = 1;
	batch_mark(c, t);
	/* No event of it waits in the batch: nothing else would send it. */
	if (c->batch.len == 0)
		coord_ack_batch_out(c);
}

/* --- deliveries ---------------------------------------------------------- */

/* Has every tool that got d taken it into its socket? */
static int
delivered(const struct coord_delivery *d)
{
	size_t i;

	for (i = 0; i < d->ntickets; i++)
		if (d->tickets[i].tool != NULL &&
		    d->tickets[i].tool->drained < d->tickets[i].offset)
			return 0;
	return 1;
}

static void
delivery_apply(struct coord *c, struct coord_delivery *d)
{
	struct coord_task *t;
	size_t i;

	for (i = 0; i < d->nacks; i++) {
		if ((t = coord_task_find(c, d->acks[i].tid)) == NULL ||
		    t->life != d->acks[i].life)
			continue;	/* gone, or a new task of that tid */
		ack_upto(c, t, d->acks[i].seq);
		if (d->acks[i].done)
			ack_end(c, t);
	}
}

static void
delivery_free(struct coord_delivery *d)
{
	free(d->tickets);
	free(d->acks);
	free(d);
}

/* The batches every tool has taken, oldest first, free their records. */
void
coord_ack_delivered(struct coord *c)
{
	struct coord_delivery *d;

	while ((d = TAILQ_FIRST(&c->deliveries)) != NULL && delivered(d)) {
		TAILQ_REMOVE(&c->deliveries, d, entry);
		delivery_apply(c, d);
		delivery_free(d);
	}
}

/*
 * The batch went to the tools (coord_batch_flush): what it released
 * waits until each tool that got it, or had anything queued, has taken
 * it to there.  With no tool, it is delivered at once.
 */
void
coord_ack_batch_out(struct coord *c)
{
	struct coord_delivery *d;
	struct coord_tool *tool;
	struct coord_task *t;
	size_t i;

	if (c->nack_batch == 0)
		return;
	d = xcalloc(1, sizeof(*d));
	d->tickets = xcalloc(c->ntools + 1, sizeof(*d->tickets));
	d->acks = xcalloc(c->nack_batch, sizeof(*d->acks));
	TAILQ_FOREACH(tool, &c->tools, entry)
		if (tool->state == COORD_P_ACTIVE && tool->subscribed &&
		    tool->drained < tool->added) {
			d->tickets[d->ntickets].tool = tool;
			d->tickets[d->ntickets++].offset = tool->added;
		}
	for (i = 0; i < c->nack_batch; i++) {
		if ((t = coord_task_find(c, c->ack_batch[i])) == NULL)
			continue;
		d->acks[d->nacks].tid = t->tid;
		d->acks[d->nacks].life = t->life;
		d->acks[d->nacks].seq = t->out_seq;
		d->acks[d->nacks++].done = t->out_done;
		t->in_batch = 0;
	}
	c->nack_batch = 0;
	TAILQ_INSERT_TAIL(&c->deliveries, d, entry);
	coord_ack_delivered(c);
}

/* A tool that leaves holds no ACK back. */
void
coord_ack_tool_gone(struct coord *c, struct coord_tool *tool)
{
	struct coord_delivery *d;
	size_t i;

	TAILQ_FOREACH(d, &c->deliveries, entry)
		for (i = 0; i < d->ntickets; i++)
			if (d->tickets[i].tool == tool)
				d->tickets[i].tool = NULL;
	coord_ack_delivered(c);
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
		ack_entry_encode(e, t->tid, t->released_seq,
		    t->agent == NULL && t->done);
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
	struct coord_delivery *d;

	while ((d = TAILQ_FIRST(&c->deliveries)) != NULL) {
		TAILQ_REMOVE(&c->deliveries, d, entry);
		delivery_free(d);
	}
	if (c->ev_ack != NULL)
		event_free(c->ev_ack);
	c->ev_ack = NULL;
	free(c->acks);
	free(c->ack_batch);
	c->acks = c->ack_batch = NULL;
	c->nacks = c->ackcap = c->nack_batch = c->ack_batchcap = 0;
}
