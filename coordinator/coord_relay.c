/*
 * An intermediate coordinator of a tree (pmon-coordd -U; doc/protocol.md,
 * "A tree of coordinators").  Agents of the hosts of one subtree dial it
 * as they would dial the root.  For each agent it opens an uplink, a
 * connection to the root that looks like that agent to it: the agent's
 * hello, its tasks' TASK_NEW, TASK_RESUME and TASK_END, and whatever
 * the agent answers (CONTROL_DONE, TASK_PROC, TASK_OTHERS) go up as
 * they are; its records go into this coordinator's ordering core
 * (order_set_subtree), which matches the receives on the subtree's own
 * channels, and come out as TASK_BELOW, each event with its match.
 * What the root sends down an uplink (ACK, CONTROL, BREAKPOINTS,
 * SHUTDOWN) goes to its agent as it is; a FLUSH goes down under a round
 * number of ours, and its FLUSH_DONE goes up only once everything the
 * agent sent before it has gone up too (order_settled), so that the
 * root judges its rounds on all of it.
 *
 * The intermediate keeps no state model, no clock, no tools and no
 * ACKs of its own: the root's ACKs free the agents' rings, so an
 * intermediate that dies loses nothing an agent cannot send again.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coord.h"
#include "log.h"
#include "record.h"
#include "wire.h"
#include "xmalloc.h"

/* A root's FLUSH, sent down to one agent under our round number. */
struct relay_flush {
	TAILQ_ENTRY(relay_flush) entry;
	struct coord_uplink	*up;
	uint32_t		 round;		/* ours, to the agent */
	uint32_t		 root_round;
	int			 answered;	/* the agent's FLUSH_DONE came */
	uint64_t		 mark;		/* order_mark() then */
};

/*
 * One agent's connection to the root.  TASK_BELOW frames are built in
 * buf, one open frame at a time (the last task's), and written at the
 * end of the loop's pass (coord_relay_batch_out).
 */
struct coord_uplink {
	TAILQ_ENTRY(coord_uplink) entry;
	struct coord		*coord;
	struct bufferevent	*bev;
	struct coord_agent	*agent;		/* NULL once it left */
	uint8_t			*buf;
	size_t			 len, size;
	size_t			 frame;		/* the open frame's offset */
	int32_t			 frame_tid;	/* 0: none open */
	uint32_t		 frame_count;
	uint64_t		 events;	/* sent up, for the log */
	int			 parked;	/* an orphan's: keeps its frames
						   for the next agent's uplink */
	int			 shut;		/* its agent gone, all written:
						   waits for the root's close */
	int32_t			 host_tid;	/* its agent's host */
};

int
coord_relay_init(struct coord *c, const char *root, const char *spec)
{
	struct coord_relay *r;
	unsigned long k, h;
	char *end;

	r = xcalloc(1, sizeof(*r));
	TAILQ_INIT(&r->uplinks);
	TAILQ_INIT(&r->flushes);
	if (strlen(root) >= sizeof(r->root)) {
		log_warnx("-U %s: address too long", root);
		goto bad;
	}
	strcpy(r->root, root);
	/* -S K:H,H,...: our subtree's number and its hosts' numbers. */
	k = strtoul(spec, &end, 10);
	if (end == spec || *end != ':' || k > INT_MAX) {
		log_warnx("-S %s: want SUBTREE:HOST[,HOST...]", spec);
		goto bad;
	}
	r->subtree = (int)k;
	do {
		spec = end + 1;
		h = strtoul(spec, &end, 10);
		if (end == spec || h >= COORD_HOST_NUMBERS ||
		    (*end != ',' && *end != '\0')) {
			log_warnx("-S: bad host number at \"%s\"", spec);
			goto bad;
		}
		r->mine[h / 8] |= (uint8_t)(1u << (h % 8));
	} while (*end == ',');
	c->relay = r;
	return 0;
bad:
	free(r);
	return -1;
}

/* order_set_subtree's callback: ours, or -1 for any other host. */
static int
relay_subtree_of(int32_t tid, void *arg)
{
	const struct coord_relay *r = arg;
	uint32_t h = coord_host_number(tid);

	return (r->mine[h / 8] >> (h % 8)) & 1 ? r->subtree : -1;
}

/*
 * Until its agent has said hello and answered a flush, a host of the
 * subtree is away: a round of ours that only the agents already here
 * answered must not judge a receive from its tasks (doc/ordering.md,
 * "A task whose agent is away").
 */
void
coord_relay_order(struct coord *c)
{
	struct coord_relay *r = c->relay;
	uint32_t h;

	order_set_subtree(c->order, r->subtree, relay_subtree_of, r);
	for (h = 0; h < COORD_HOST_NUMBERS; h++)
		if ((r->mine[h / 8] >> (h % 8)) & 1)
			coord_host_away(c, h, COORD_READY_TIMEOUT * 1000);
}

static void	uplink_shut(struct coord_uplink *);
static int	uplink_dial(struct coord_agent *, const struct agent_hello *);
static void	uplink_waited(struct coord *, int32_t);
static void	uplink_read_cb(struct bufferevent *, void *);
static void	uplink_write_cb(struct bufferevent *, void *);
static void	uplink_event_cb(struct bufferevent *, short, void *);

static void
uplink_free(struct coord_uplink *up)
{
	struct coord *c = up->coord;
	struct relay_flush *f, *next;
	struct coord_task *t;

	for (f = TAILQ_FIRST(&c->relay->flushes); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		if (f->up == up) {
			TAILQ_REMOVE(&c->relay->flushes, f, entry);
			free(f);
		}
	}
	TAILQ_FOREACH(t, &c->tasks, entry)
		if (t->up == up)
			t->up = NULL;
	if (up->agent != NULL)
		up->agent->up = NULL;
	TAILQ_REMOVE(&c->relay->uplinks, up, entry);
	if (up->bev != NULL)
		bufferevent_free(up->bev);
	free(up->buf);
	if (up->agent == NULL && !c->shutting_down)
		uplink_waited(c, up->host_tid);
	free(up);
	coord_hold_release(c);
}

static struct evbuffer *
uplink_out(const struct coord_uplink *up)
{
	return bufferevent_get_output(up->bev);
}

/*
 * An agent said hello.  While the uplink of its host's agent before it
 * is still writing its last frames, the root would refuse a second for
 * the host, and what went up the refused one would be lost: we read
 * nothing more from the agent until that uplink is closed (uplink_free).
 */
int
coord_relay_agent_hello(struct coord_agent *a, const struct agent_hello *h)
{
	struct coord_uplink *up;

	TAILQ_FOREACH(up, &a->coord->relay->uplinks, entry)
		if (up->agent == NULL && up->host_tid == h->host_tid)
			break;
	if (up == NULL)
		return uplink_dial(a, h);
	a->up_wait = xmalloc(sizeof(*a->up_wait));
	*a->up_wait = *h;
	bufferevent_disable(a->bev, EV_READ);
	log_info("agent %s (%s): waits for the last uplink of its host to "
	    "close", a->peer, h->host);
	return 0;
}

/* Its host's last uplink closed: agent a's goes up now. */
static void
uplink_waited(struct coord *c, int32_t host_tid)
{
	struct agent_hello h;
	struct coord_agent *a;

	TAILQ_FOREACH(a, &c->agents, entry)
		if (a->up_wait != NULL && a->host_tid == host_tid)
			break;
	if (a == NULL)
		return;
	h = *a->up_wait;
	free(a->up_wait);
	a->up_wait = NULL;
	if (uplink_dial(a, &h) == -1)
		return;		/* a is gone */
	if (!c->held_back)
		bufferevent_enable(a->bev, EV_READ);
}

/* An agent's uplink: it dials the root and says the agent's hello. */
static int
uplink_dial(struct coord_agent *a, const struct agent_hello *h)
{
	struct coord *c = a->coord;
	struct coord_uplink *up;
	struct sockaddr_storage ss;
	struct agent_hello uh;
	uint8_t buf[FRAME_HDR_SIZE + AGENT_HELLO_MAX];
	size_t n;
	int len = sizeof(ss), one = 1;

	if (evutil_parse_sockaddr_port(c->relay->root,
	    (struct sockaddr *)&ss, &len) == -1) {
		coord_agent_drop(a, "the root's address %s does not parse",
		    c->relay->root);
		return -1;
	}
	up = xcalloc(1, sizeof(*up));
	up->coord = c;
	up->agent = a;
	up->host_tid = h->host_tid;
	up->bev = bufferevent_socket_new(c->base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (up->bev == NULL)
		fatalx("%s: bufferevent_socket_new", __func__);
	bufferevent_setcb(up->bev, uplink_read_cb, uplink_write_cb,
	    uplink_event_cb, up);
	TAILQ_INSERT_TAIL(&c->relay->uplinks, up, entry);
	a->up = up;
	if (bufferevent_socket_connect(up->bev, (struct sockaddr *)&ss,
	    len) == -1) {
		coord_agent_drop(a, "cannot dial the root at %s",
		    c->relay->root);
		return -1;
	}
	setsockopt(bufferevent_getfd(up->bev), IPPROTO_TCP, TCP_NODELAY,
	    &one, sizeof(one));
	bufferevent_enable(up->bev, EV_READ | EV_WRITE);
	uh = *h;
	memcpy(uh.secret, c->secret, sizeof(uh.secret));
	n = agent_hello_encode(buf + FRAME_HDR_SIZE, &uh);
	explicit_bzero(uh.secret, sizeof(uh.secret));
	frame_hdr_encode(buf, MSG_AGENT_HELLO, (uint32_t)n);
	evbuffer_add(uplink_out(up), buf, FRAME_HDR_SIZE + n);
	explicit_bzero(buf, sizeof(buf));
	log_info("agent %s (%s): uplink to the root at %s", a->peer, h->host,
	    c->relay->root);
	return 0;
}

/* Closes the open TASK_BELOW frame: its length and count. */
static void
below_close(struct coord_uplink *up)
{
	uint8_t *p;

	if (up->frame_tid == 0)
		return;
	p = up->buf + up->frame;
	frame_hdr_encode(p, MSG_TASK_BELOW,
	    (uint32_t)(up->len - up->frame - FRAME_HDR_SIZE));
	wire_put32(p + FRAME_HDR_SIZE + 4, up->frame_count);
	up->frame_tid = 0;
}

static void
below_out(struct coord_uplink *up)
{
	below_close(up);
	if (up->parked)
		return;
	if (up->len > 0 && up->bev != NULL)
		evbuffer_add(uplink_out(up), up->buf, up->len);
	up->len = 0;
}

/* The end of the loop's pass: what was released goes up. */
void
coord_relay_batch_out(struct coord *c)
{
	struct coord_uplink *up;

	TAILQ_FOREACH(up, &c->relay->uplinks, entry) {
		below_out(up);
		if (up->bev != NULL)
			coord_hold_uplink(c,
			    evbuffer_get_length(uplink_out(up)));
	}
}

/*
 * Did we get the sender's records from where it started?  Not when we
 * started after an intermediate that had them: its agent resumed it
 * here.  A receive whose send we do not have may then be matched by the
 * root, to a send that one forwarded.
 */
static int
sender_resumed(struct coord *c, int32_t tid)
{
	const struct coord_task *s = coord_task_find(c, tid);

	return s == NULL || s->resumed;
}

/* A released event goes up its task's uplink (a lost marker does not). */
void
coord_relay_event(struct coord *c, const struct order_event *ev)
{
	struct coord_task *t;
	struct coord_uplink *up;
	size_t need = TASK_BELOW_ENTRY_HDR + record_size(ev->rec);
	uint8_t flags;

	if ((ev->flags & EVENT_LOST) ||
	    (t = coord_task_find(c, ev->tid)) == NULL)
		return;
	/*
	 * An orphan's events wait for the uplink of the agent that adopts
	 * it: the root never had them, and the next agent sends only what
	 * we have not seen.
	 */
	if ((up = t->up) == NULL && t->stage == COORD_TASK_ORPHAN) {
		if (t->parked == NULL) {
			t->parked = xcalloc(1, sizeof(*t->parked));
			t->parked->coord = c;
			t->parked->parked = 1;
		}
		up = t->parked;
	}
	if (up == NULL)
		return;
	if (up->frame_tid != ev->tid ||
	    up->len - up->frame + need > PROTO_MAX_PAYLOAD)
		below_close(up);
	if (up->len + FRAME_HDR_SIZE + TASK_RECORDS_HDR_SIZE + need >
	    up->size) {
		if (up->len >= COORD_BATCH_SIZE)
			below_out(up);
		up->size = up->size == 0 ? COORD_BATCH_SIZE : up->size;
		while (up->len + FRAME_HDR_SIZE + TASK_RECORDS_HDR_SIZE +
		    need > up->size)
			up->size *= 2;
		up->buf = xreallocarray(up->buf, up->size, 1);
	}
	if (up->frame_tid == 0) {
		up->frame = up->len;
		up->frame_tid = ev->tid;
		up->frame_count = 0;
		wire_put32(up->buf + up->len + FRAME_HDR_SIZE,
		    (uint32_t)ev->tid);
		up->len += FRAME_HDR_SIZE + TASK_RECORDS_HDR_SIZE;
	}
	flags = ev->flags & (EVENT_MATCHED | EVENT_UNMATCHED | EVENT_AGAIN |
	    EVENT_UNMONITORED);
	if ((flags & (EVENT_UNMATCHED | EVENT_UNMONITORED)) ==
	    EVENT_UNMATCHED && sender_resumed(c, ev->rec->peer))
		flags |= EVENT_RESUMED;
	task_below_entry_encode(up->buf + up->len, flags,
	    (flags & EVENT_MATCHED) ? ev->match_tid : 0,
	    (flags & EVENT_MATCHED) ? ev->match_seq : 0);
	up->len += TASK_BELOW_ENTRY_HDR;
	up->len += record_encode(up->buf + up->len, ev->rec, NULL);
	up->frame_count++;
	up->events++;
	if (c->ev_batch != NULL)
		event_active(c->ev_batch, EV_TIMEOUT, 0);
}

/*
 * Agent a adopted orphan t (its TASK_NEW went up): what t released
 * while it was an orphan follows.
 */
void
coord_relay_adopted(struct coord_agent *a, struct coord_task *t)
{
	struct coord_uplink *pk = t->parked;

	if (pk == NULL)
		return;
	below_close(pk);
	if (a->up != NULL && a->up->bev != NULL && pk->len > 0) {
		below_out(a->up);
		evbuffer_add(uplink_out(a->up), pk->buf, pk->len);
		a->up->events += pk->events;
	}
	coord_relay_task_free(t);
}

/* Drops what t has parked (it ended an orphan, or we are leaving). */
void
coord_relay_task_free(struct coord_task *t)
{
	if (t->parked == NULL)
		return;
	free(t->parked->buf);
	free(t->parked);
	t->parked = NULL;
}

/* A frame of the agent's that goes up as it came. */
void
coord_relay_forward(struct coord_agent *a, uint8_t type, const uint8_t *p,
    size_t len)
{
	uint8_t hdr[FRAME_HDR_SIZE];

	if (a->up == NULL || a->up->bev == NULL)
		return;
	/* After the events released before it. */
	below_out(a->up);
	frame_hdr_encode(hdr, type, (uint32_t)len);
	evbuffer_add(uplink_out(a->up), hdr, sizeof(hdr));
	evbuffer_add(uplink_out(a->up), p, len);
}

/* Every event of an ended task went up: so does its end. */
void
coord_relay_task_done(struct coord *c, int32_t tid)
{
	struct coord_task *t = coord_task_find(c, tid);
	uint8_t buf[FRAME_HDR_SIZE + TASK_END_LEN];

	if (t == NULL || t->up == NULL || t->up->bev == NULL || !t->end_up)
		return;
	t->end_up = 0;
	below_out(t->up);
	frame_hdr_encode(buf, MSG_TASK_END, TASK_END_LEN);
	task_end_encode(buf + FRAME_HDR_SIZE, tid, t->dropped);
	evbuffer_add(uplink_out(t->up), buf, sizeof(buf));
}

/*
 * The agent is gone.  Its uplink goes too, once what it holds is
 * written: the root then waits for the host's next agent, as for any
 * agent lost, and that one sends again what the root did not ACK.
 */
void
coord_relay_agent_gone(struct coord_agent *a)
{
	struct coord_uplink *up = a->up;
	struct coord_task *t;

	if (up == NULL)
		return;
	log_info("agent %s (%s): %llu events went up", a->peer,
	    a->host != NULL ? a->host : "no hello", (unsigned long long)
	    up->events);
	up->agent = NULL;
	a->up = NULL;
	/*
	 * Nothing of its tasks goes up this uplink any more: the root has
	 * not acknowledged what they release from now on, and gets it
	 * through the uplink of the host's next agent.
	 */
	TAILQ_FOREACH(t, &a->coord->tasks, entry)
		if (t->up == up)
			t->up = NULL;
	below_out(up);
	if (up->bev == NULL)
		uplink_free(up);
	else if (evbuffer_get_length(uplink_out(up)) == 0)
		uplink_shut(up);
}

/* --- flush rounds: the root's, through us ------------------------------ */

/*
 * Answers the root's rounds whose agent has answered and whose records
 * have all gone up.  Anything still held waits for a send from another
 * agent of the subtree, which the same root round drains, or for one of
 * our own rounds to judge it lost: one is started when none runs.
 */
void
coord_relay_settle(struct coord *c)
{
	struct relay_flush *f, *next;
	int waiting = 0;

	if (c->relay == NULL)
		return;
	for (f = TAILQ_FIRST(&c->relay->flushes); f != NULL; f = next) {
		next = TAILQ_NEXT(f, entry);
		if (!f->answered)
			continue;
		if (!order_settled(c->order, f->mark)) {
			waiting = 1;
			continue;
		}
		below_out(f->up);
		if (f->up->bev != NULL)
			coord_frame_u32(uplink_out(f->up), MSG_FLUSH_DONE,
			    f->root_round);
		TAILQ_REMOVE(&c->relay->flushes, f, entry);
		free(f);
	}
	if (waiting && TAILQ_EMPTY(&c->flushes) && !c->shutting_down)
		coord_flush_start(c, NULL, 0);
}

/* An agent's FLUSH_DONE: 1 if it answers one of the root's rounds. */
int
coord_relay_flush_done(struct coord_agent *a, uint32_t round)
{
	struct coord *c = a->coord;
	struct relay_flush *f;

	if (c->relay == NULL)
		return 0;
	TAILQ_FOREACH(f, &c->relay->flushes, entry)
		if (f->round == round && f->up == a->up) {
			f->answered = 1;
			f->mark = order_mark(c->order);
			coord_relay_settle(c);
			return 1;
		}
	return 0;
}

static void
relay_flush(struct coord_uplink *up, uint32_t root_round)
{
	struct coord *c = up->coord;
	struct relay_flush *f;

	if (up->agent == NULL || up->agent->bev == NULL)
		return;
	f = xcalloc(1, sizeof(*f));
	f->up = up;
	f->root_round = root_round;
	if (++c->next_round == 0)
		c->next_round = 1;
	f->round = c->next_round;
	TAILQ_INSERT_TAIL(&c->relay->flushes, f, entry);
	coord_frame_u32(bufferevent_get_output(up->agent->bev), MSG_FLUSH,
	    f->round);
}

/* --- what the root sends down ----------------------------------------- */

static void
uplink_lost(struct coord_uplink *up, const char *why)
{
	struct coord_agent *a = up->agent;

	/* Nothing more goes up; the agent goes, and the uplink with it. */
	bufferevent_free(up->bev);
	up->bev = NULL;
	if (a == NULL) {
		uplink_free(up);
		return;
	}
	/*
	 * The agent dials us again as it would a root that went away: its
	 * connection closes at once (nothing it could read is left).
	 */
	log_warnx("agent %s (%s): uplink to the root: %s; closing its "
	    "connection", a->peer, a->host, why);
	bufferevent_free(a->bev);
	a->bev = NULL;
	/* Its tasks wait for it, orphans, as for an agent lost. */
	a->lost = 1;
	coord_agent_free(a);
}

static int
uplink_frame(void *arg, uint8_t type, const uint8_t *p, size_t len)
{
	struct coord_uplink *up = arg;
	struct coord_agent *a = up->agent;
	char text[256];
	uint32_t round;
	const char *why;

	switch (type) {
	case MSG_FLUSH:
		if (proto_u32_decode(p, len, &round, &why) == -1)
			break;
		relay_flush(up, round);
		return 0;
	case MSG_ACK:
	case MSG_CONTROL:
	case MSG_BREAKPOINTS:
	case MSG_SHUTDOWN:
		if (a != NULL && a->bev != NULL)
			coord_relay_down(a, type, p, len);
		return 0;
	case MSG_ERROR:
		snprintf(text, sizeof(text), "the root refused it: %.*s",
		    len > 2 ? (int)(len - 2) : 0, (const char *)p + 2);
		uplink_lost(up, text);
		return -1;
	default:
		why = "unexpected frame";
		break;
	}
	snprintf(text, sizeof(text), "bad %s from the root: %s",
	    proto_msg_name(type), why);
	uplink_lost(up, text);
	return -1;
}

/* A frame from the root for the agent, as it came. */
void
coord_relay_down(struct coord_agent *a, uint8_t type, const uint8_t *p,
    size_t len)
{
	struct evbuffer *out = bufferevent_get_output(a->bev);
	uint8_t hdr[FRAME_HDR_SIZE];

	frame_hdr_encode(hdr, type, (uint32_t)len);
	evbuffer_add(out, hdr, sizeof(hdr));
	evbuffer_add(out, p, len);
}

static void
uplink_read_cb(struct bufferevent *bev, void *arg)
{
	struct coord_uplink *up = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[FRAME_HDR_SIZE];
	const uint8_t *frame;
	struct frame_hdr h;
	const char *why;

	/* Its agent is gone: what the root says is for nobody. */
	if (up->agent == NULL) {
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	while (evbuffer_get_length(in) >= FRAME_HDR_SIZE) {
		evbuffer_copyout(in, hdr, sizeof(hdr));
		if (frame_hdr_decode(hdr, &h, &why) == -1) {
			uplink_lost(up, why);
			return;
		}
		if (evbuffer_get_length(in) < FRAME_HDR_SIZE + (size_t)h.len)
			return;
		frame = evbuffer_pullup(in, FRAME_HDR_SIZE + (ev_ssize_t)h.len);
		if (frame == NULL)
			fatalx("%s: evbuffer_pullup", __func__);
		if (uplink_frame(up, h.type, frame + FRAME_HDR_SIZE,
		    h.len) == -1)
			return;
		evbuffer_drain(in, FRAME_HDR_SIZE + (size_t)h.len);
	}
}

static void
uplink_write_cb(struct bufferevent *bev, void *arg)
{
	struct coord_uplink *up = arg;

	(void)bev;
	if (up->agent == NULL) {
		uplink_shut(up);	/* its last frames are written */
		return;
	}
	coord_hold_release(up->coord);
}

/*
 * The uplink of an agent gone, all written: we send no more, and go
 * once the root closes its end (uplink_event_cb).  Closing first would
 * reset the connection if an ACK of the root's came meanwhile, and the
 * root would lose what it had not read yet.
 */
static void
uplink_shut(struct coord_uplink *up)
{
	if (up->shut)
		return;
	up->shut = 1;
	if (shutdown(bufferevent_getfd(up->bev), SHUT_WR) == -1)
		uplink_free(up);
}

static void
uplink_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & BEV_EVENT_CONNECTED)
		return;
	uplink_lost(arg, (what & BEV_EVENT_EOF) ? "closed by the root" :
	    "connection error");
}

/* The largest backlog of any uplink: the root is slower than we are. */
size_t
coord_relay_backlog(const struct coord *c)
{
	const struct coord_uplink *up;
	size_t n, max = 0;

	if (c->relay == NULL)
		return 0;
	TAILQ_FOREACH(up, &c->relay->uplinks, entry)
		if (up->bev != NULL &&
		    (n = evbuffer_get_length(uplink_out(up))) > max)
			max = n;
	return max;
}

void
coord_relay_free(struct coord *c)
{
	struct coord_uplink *up;

	if (c->relay == NULL)
		return;
	while ((up = TAILQ_FIRST(&c->relay->uplinks)) != NULL) {
		up->agent = NULL;
		uplink_free(up);
	}
	free(c->relay);
	c->relay = NULL;
}
