/*
 * The tools' side of the coordinator: a unix socket in the virtual
 * machine's PVM_TMP, readable by our user only, whose peers are checked
 * by uid.  A tool says TOOL_HELLO first, with the secret; a subscriber
 * then gets TASK_INFO for every known task (and a snapshot of the state,
 * if it asked) and the ordered EVENT stream, with PROBLEM frames where
 * the state model found one.  Tools may ask for FLUSH, SHUTDOWN and
 * information (REQUEST).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "coord.h"
#include "log.h"
#include "paths.h"
#include "wire.h"
#include "xmalloc.h"

static void	tool_output_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);

static void
tool_forget_output(struct coord_tool *t)
{
	evbuffer_remove_cb(bufferevent_get_output(t->bev), tool_output_cb, t);
}

void
coord_tool_free(struct coord_tool *t)
{
	struct coord *c = t->coord;

	coord_hold_tool_gone(c, t);
	TAILQ_REMOVE(&c->tools, t, entry);
	c->ntools--;
	coord_ack_tool_gone(c, t);
	coord_preauth_done(c, &t->pre);
	coord_flush_forget_tool(c, t);
	coord_control_tool_gone(c, t);
	free(t->lost);
	/* A replay serves the recorded notices, not its own tools'. */
	if (t->state == COORD_P_ACTIVE && !c->finishing && c->replay == NULL)
		coord_notice_tool(c, t, "detached");
	if (t->bev != NULL) {
		tool_forget_output(t);
		bufferevent_free(t->bev);
	}
	free(t);
	if (c->finishing)
		coord_output_check(c);
}

void
coord_tool_drop(struct coord_tool *t, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A flood must not flood the log. */
	if (!t->pre.listed || log_rate_ok(&t->coord->refuse_log))
		log_warnx("tool %u (%s): %s; dropping it", t->id,
		    t->name[0] ? t->name : "no hello yet", msg);
	/* The connection outlives t to send its error. */
	tool_forget_output(t);
	coord_conn_close(t->bev, msg);
	t->bev = NULL;
	coord_tool_free(t);
}

/*
 * Queues a frame to every subscriber: frames that must not be lost, like
 * TASK_INFO.  A lossy tool that lets them pile up beyond COORD_TOOL_MAX
 * is dropped; a lossless one holds the agents back instead.
 */
void
coord_tools_send(struct coord *c, const void *buf, size_t len)
{
	struct coord_tool *t, *next;
	size_t queued;

	for (t = TAILQ_FIRST(&c->tools); t != NULL; t = next) {
		next = TAILQ_NEXT(t, entry);
		if (t->state != COORD_P_ACTIVE || !t->subscribed)
			continue;
		evbuffer_add(coord_tool_out(t), buf, len);
		if (t->lossless) {
			coord_hold_check(c, t);
			continue;
		}
		queued = evbuffer_get_length(bufferevent_get_output(t->bev));
		if (queued > COORD_TOOL_MAX)
			coord_tool_drop(t, "it reads too slowly (%zu bytes "
			    "queued)", queued);
	}
}

/* While t's queue is full: the event it loses, counted per task. */
static void
tool_lose(struct coord_tool *t, const uint8_t *frame)
{
	const uint8_t *ev = frame + FRAME_HDR_SIZE;
	const uint8_t *rec = ev + EVENT_HDR_SIZE;
	int32_t tid = (int32_t)wire_get32(ev), bytes;
	uint64_t seq = wire_get64(rec + 4), last = seq;
	struct coord_lost *l;
	size_t i;

	bytes = (int32_t)wire_get32(rec + 36);
	if ((ev[4] & EVENT_LOST) && bytes > 0)
		last += (uint64_t)bytes - 1;
	for (i = 0; i < t->nlost; i++)
		if (t->lost[i].tid == tid)
			break;
	if (i == t->nlost) {
		if (t->nlost == t->lostcap) {
			t->lostcap = t->lostcap ? t->lostcap * 2 : 16;
			t->lost = xreallocarray(t->lost, t->lostcap,
			    sizeof(*t->lost));
		}
		l = &t->lost[t->nlost++];
		l->tid = tid;
		l->first = seq;
		l->events = 0;
	}
	l = &t->lost[i];
	l->last = last;
	l->events++;
	t->lost_events++;
}

/* t's queue is full: it gets no events until it drained to half. */
void
coord_tool_full(struct coord_tool *t)
{
	t->full = 1;
	log_warnx("tool %u (%s): %zu bytes queued; dropping its events until "
	    "it catches up", t->id, t->name,
	    evbuffer_get_length(bufferevent_get_output(t->bev)));
}

/* Every EVENT frame of the batch is lost to t. */
static void
tool_lose_batch(struct coord_tool *t, const uint8_t *b, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += FRAME_HDR_SIZE + wire_get32(b + off + 4))
		tool_lose(t, b + off);
}

/*
 * A batch's memory, which the tools' output buffers share: each holds a
 * reference (evbuffer_add_reference), not a copy, and the last to write
 * it out lets it go (batch_buf_unref).  A few are kept for the next
 * batches, already in memory: a batch a pass, a copy of it per tool and
 * fresh pages for each had cost the coordinator a fifth of its time
 * under a storm of 1024 tasks.  The spares outlive the coordinator's
 * structures: a tool's buffer can let go of its batch after them.
 */
struct coord_batch_buf {
	struct coord_batch_buf	*next;		/* on batch_spares */
	unsigned		 refs;		/* tool buffers holding it */
	uint8_t			 data[COORD_BATCH_SIZE];
};

#define BATCH_SPARES_MAX	16

static struct coord_batch_buf	*batch_spares;
static unsigned			 batch_nspares;

static struct coord_batch_buf *
batch_buf_get(void)
{
	struct coord_batch_buf *bb = batch_spares;

	if (bb == NULL)
		bb = xmalloc(sizeof(*bb));
	else {
		batch_spares = bb->next;
		batch_nspares--;
	}
	bb->refs = 0;
	return bb;
}

static void
batch_buf_put(struct coord_batch_buf *bb)
{
	if (batch_nspares >= BATCH_SPARES_MAX) {
		free(bb);
		return;
	}
	bb->next = batch_spares;
	batch_spares = bb;
	batch_nspares++;
}

void
coord_batch_init(struct coord_batch *b)
{
	b->cur = batch_buf_get();
	b->buf = b->cur->data;
	b->len = 0;
	b->size = COORD_BATCH_SIZE;
}

/*
 * At exit: the batch and the spares no buffer holds.  A batch a tool's
 * buffer still holds becomes a spare when it lets go.
 */
void
coord_batch_free(struct coord_batch *b)
{
	struct coord_batch_buf *bb;

	if (b->cur != NULL && b->cur->refs == 0)
		free(b->cur);
	b->cur = NULL;
	b->buf = NULL;
	while ((bb = batch_spares) != NULL) {
		batch_spares = bb->next;
		free(bb);
	}
	batch_nspares = 0;
}

static void
batch_buf_unref(const void *data, size_t len, void *arg)
{
	struct coord_batch_buf *bb = arg;

	(void)data;
	(void)len;
	if (--bb->refs == 0)
		batch_buf_put(bb);
}

/* The batch into a tool's output, by reference where it can. */
static void
batch_add(struct coord_batch *b, struct evbuffer *out)
{
	b->cur->refs++;
	if (evbuffer_add_reference(out, b->buf, b->len, batch_buf_unref,
	    b->cur) == 0)
		return;
	b->cur->refs--;
	evbuffer_add(out, b->buf, b->len);
}

/*
 * The batch to every subscriber, in one piece.  A slow lossy tool
 * never holds anything up: once c->tool_high bytes wait for it, it gets
 * no more events (nor problems) until its queue has drained to half;
 * then it is told exactly what it lost (tool_resume).  A lossless tool
 * gets every event, and holds the agents back while it is full
 * (coord_hold.c).
 */
void
coord_batch_flush(struct coord *c)
{
	struct coord_batch *b = &c->batch;
	struct coord_tool *t;
	struct evbuffer *out;

	if (b->len == 0)
		return;
	TAILQ_FOREACH(t, &c->tools, entry) {
		if (t->state != COORD_P_ACTIVE || !t->subscribed)
			continue;
		if (t->full) {
			tool_lose_batch(t, b->buf, b->len);
			continue;
		}
		out = bufferevent_get_output(t->bev);
		batch_add(b, out);
		if (evbuffer_get_length(out) <= c->tool_high)
			continue;
		if (t->lossless)
			coord_hold_check(c, t);
		else
			coord_tool_full(t);
	}
	/* The tools hold this one now: the next batch goes elsewhere. */
	if (b->cur->refs > 0) {
		b->cur = batch_buf_get();
		b->buf = b->cur->data;
	}
	b->len = 0;
	coord_ack_batch_out(c);
}

/*
 * Released events are framed into one batch, which the subscribers get
 * in one piece (one copy and one evbuffer call per tool, not per
 * event): when it is full, at the end of the loop pass that filled it
 * (ev_batch), and before any other frame to a tool (coord_tool_out),
 * so that every tool still sees the stream in order.
 */
void
coord_batch_event(struct coord *c, const struct order_event *ev)
{
	struct coord_batch *b = &c->batch;
	size_t n;

	if (b->len + FRAME_HDR_SIZE + EVENT_HDR_SIZE + record_size(ev->rec) >
	    b->size || b->len > c->tool_high / 4)
		coord_batch_flush(c);
	if (b->len == 0 && c->ev_batch != NULL)
		event_active(c->ev_batch, EV_TIMEOUT, 0);
	n = coord_frame_event(b->buf + b->len, b->size - b->len, ev);
	if (n == 0)
		log_warnx("event of t%x too large to send", (unsigned)ev->tid);
	b->len += n;
}

/* A tool's output, after the events released before this point. */
struct evbuffer *
coord_tool_out(struct coord_tool *t)
{
	coord_batch_flush(t->coord);
	return bufferevent_get_output(t->bev);
}

/*
 * TASK_GONE: to the recorders only, in stream order (doc/recording.md),
 * and like TASK_INFO even to one whose queue is full: the state it
 * rebuilds must end the task.
 */
void
coord_tools_send_gone(struct coord *c, int32_t tid)
{
	struct coord_tool *t;

	TAILQ_FOREACH(t, &c->tools, entry)
		if (t->state == COORD_P_ACTIVE && t->subscribed && t->record)
			coord_frame_u32(coord_tool_out(t), MSG_TASK_GONE,
			    (uint32_t)tid);
}

void
coord_tools_send_problem(struct coord *c, const char *json)
{
	struct coord_tool *t;

	TAILQ_FOREACH(t, &c->tools, entry) {
		if (t->state != COORD_P_ACTIVE || !t->subscribed)
			continue;
		if (t->full)
			t->lost_problems++;
		else
			coord_frame_body(coord_tool_out(t), MSG_PROBLEM,
			    json, strlen(json));
	}
}

/*
 * t's queue drained after it was full: a "lost" notice (to t only) with
 * the events it missed per task, then a snapshot if it subscribed with
 * one, so that it can start over from there; then events again.
 */
static void
tool_resume(struct coord_tool *t)
{
	/* The events still in the batch are lost to t too: count them. */
	coord_batch_flush(t->coord);
	if (t->nlost == 0 && t->lost_problems == 0) {
		t->full = 0;	/* it drained before it missed anything */
		return;
	}
	coord_tool_lost(t);
	if (t->want_snapshot)
		coord_snapshot_send(t->coord, t);
}

/* The "lost" notice: what t missed since its queue was full. */
void
coord_tool_lost(struct coord_tool *t)
{
	char *buf = NULL;
	size_t len = 0, i;
	uint64_t total = 0;
	FILE *fp;

	/* The events still in the batch are lost to t too: count them. */
	coord_batch_flush(t->coord);
	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	for (i = 0; i < t->nlost; i++)
		total += t->lost[i].events;
	fprintf(fp, "{\"notice\":\"lost\",\"tool\":%u,\"events\":%llu,"
	    "\"problems\":%llu,\"tasks\":[", t->id,
	    (unsigned long long)total, (unsigned long long)t->lost_problems);
	for (i = 0; i < t->nlost; i++)
		fprintf(fp, "%s{\"tid\":%d,\"first\":%llu,\"last\":%llu,"
		    "\"events\":%llu}", i ? "," : "", t->lost[i].tid,
		    (unsigned long long)t->lost[i].first,
		    (unsigned long long)t->lost[i].last,
		    (unsigned long long)t->lost[i].events);
	fputs("]}", fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	log_info("tool %u (%s) caught up: %s", t->id, t->name, buf);
	coord_frame_body(coord_tool_out(t), MSG_NOTICE, buf, len);
	free(buf);
	free(t->lost);
	t->lost = NULL;
	t->nlost = t->lostcap = 0;
	t->lost_problems = 0;
	t->full = 0;
}

static const char *
tool_stream(const struct coord_tool *t)
{
	if (!t->subscribed)
		return "none";
	if (t->lossless)
		return "lossless";
	return t->degraded ? "degraded" : "lossy";
}

static void
tool_write_json(FILE *fp, const struct coord_tool *t)
{
	fprintf(fp, "{\"tool\":%u,\"name\":", t->id);
	json_str_write(fp, t->name);
	fprintf(fp, ",\"stream\":\"%s\",\"queued\":%zu,\"lost\":%llu,"
	    "\"holds\":%llu,\"held_ms\":%llu}", tool_stream(t),
	    evbuffer_get_length(bufferevent_get_output(t->bev)),
	    (unsigned long long)t->lost_events, (unsigned long long)t->holds,
	    (unsigned long long)t->held_ms);
}

/*
 * The "tools" request: every tool, how it subscribed, what waits for
 * it, what it lost and how often (and how long) it held the agents
 * back (doc/requests.md).
 */
void
coord_tools_write(struct coord *c, char **body, size_t *len)
{
	const struct coord_tool *t;
	FILE *fp;
	int n = 0;

	if ((fp = open_memstream(body, len)) == NULL)
		fatal("%s", __func__);
	fprintf(fp, "{\"held_back\":%s,\"lossless_wait_ms\":%llu,"
	    "\"tools\":[", c->held_back ? "true" : "false",
	    (unsigned long long)c->lossless_wait_ms);
	TAILQ_FOREACH(t, &c->tools, entry) {
		if (t->state != COORD_P_ACTIVE)
			continue;
		if (n++ > 0)
			fputc(',', fp);
		tool_write_json(fp, t);
	}
	fputs("]}", fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
}

void
coord_tool_send_tasks(struct coord_tool *t)
{
	uint8_t buf[COORD_TASK_INFO_MAX];
	struct coord_task *task;

	TAILQ_FOREACH(task, &t->coord->tasks, entry)
		evbuffer_add(coord_tool_out(t), buf,
		    coord_frame_task_info(buf, task));
}

/* A tool's name as the log shows it: cut, and printable only. */
static void
log_name(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i < size - 1 && src[i] != '\0'; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = '\0';
}

static int
tool_hello(struct coord_tool *t, const uint8_t *p, size_t len)
{
	struct tool_hello h;
	const char *why;
	char msg[256];

	if (t->state != COORD_P_HELLO) {
		coord_tool_drop(t, "TOOL_HELLO sent twice");
		return -1;
	}
	if (tool_hello_decode(p, len, &h, &why) == -1) {
		coord_tool_drop(t, "bad TOOL_HELLO: %s", why);
		return -1;
	}
	if (coord_secret_check(t->coord, h.secret, msg, sizeof(msg)) == -1) {
		explicit_bzero(h.secret, sizeof(h.secret));
		coord_tool_drop(t, "%s", msg);
		return -1;
	}
	explicit_bzero(h.secret, sizeof(h.secret));
	if (t->coord->ntools - (t->coord->npreauth -
	    t->coord->npreauth_agents) >= COORD_MAX_TOOLS) {
		coord_tool_drop(t, "too many tools (%d)", COORD_MAX_TOOLS);
		return -1;
	}
	log_name(t->name, sizeof(t->name), h.name);
	/*
	 * The events released before it came go to the tools that were
	 * there: t's stream starts with the tasks' TASK_INFO.
	 */
	coord_batch_flush(t->coord);
	t->state = COORD_P_ACTIVE;
	t->subscribed = (h.flags & TOOL_SUBSCRIBE) != 0;
	t->want_snapshot = t->subscribed && (h.flags & TOOL_SNAPSHOT);
	t->record = t->subscribed && (h.flags & TOOL_RECORD);
	t->lossless = t->subscribed && (h.flags & TOOL_LOSSLESS);
	coord_preauth_done(t->coord, &t->pre);
	coord_hold_tool_new(t);
	log_info("tool %u: %s%s", t->id, t->name,
	    !t->subscribed ? "" : t->lossless ? ", subscribed, lossless" :
	    ", subscribed");
	if (t->coord->replay == NULL)
		coord_notice_tool(t->coord, t, "attached");
	if (t->subscribed)
		coord_tool_send_tasks(t);
	if (t->subscribed && (h.flags & TOOL_SNAPSHOT))
		coord_snapshot_send(t->coord, t);
	if (t->subscribed && t->coord->replay != NULL) {
		if (coord_replay_done(t->coord))
			coord_replay_bye(t);
		else
			coord_replay_start(t->coord);
	}
	return 0;
}

static int
tool_request(struct coord_tool *t, const uint8_t *p, size_t len)
{
	struct request_msg req;
	const char *why;
	char *body;
	size_t n;
	int status;

	if (request_decode(p, len, &req, &why) == -1) {
		coord_tool_drop(t, "bad REQUEST: %s", why);
		return -1;
	}
	status = coord_request_run(t->coord, t, &req, &body, &n);
	if (status == COORD_REPLY_LATER)
		return 0;
	if (status == REPLY_ERROR)
		log_info("tool %u (%s): request \"%s\": %.*s", t->id, t->name,
		    req.text, (int)n, body);
	coord_frame_reply(coord_tool_out(t), req.id,
	    (uint8_t)status, body, n);
	free(body);
	return 0;
}

static int
tool_flush(struct coord_tool *t, const uint8_t *p, size_t len)
{
	const char *why;
	uint32_t id;

	if (proto_u32_decode(p, len, &id, &why) == -1) {
		coord_tool_drop(t, "bad FLUSH: %s", why);
		return -1;
	}
	if (t->coord->shutting_down)
		return 0;	/* BYE follows the final flush */
	coord_flush_start(t->coord, t, id);
	return 0;
}

/* One frame from a tool; -1 when the tool was dropped. */
int
coord_tool_frame(struct coord_tool *t, uint8_t type, const uint8_t *p,
    size_t len)
{
	if (t->state == COORD_P_HELLO && type != MSG_TOOL_HELLO) {
		coord_tool_drop(t, "%s before TOOL_HELLO",
		    proto_msg_name(type));
		return -1;
	}
	switch (type) {
	case MSG_TOOL_HELLO:
		return tool_hello(t, p, len);
	case MSG_FLUSH:
		return tool_flush(t, p, len);
	case MSG_REQUEST:
		return tool_request(t, p, len);
	case MSG_SHUTDOWN:
		coord_shutdown(t->coord, t->name);
		return 0;
	default:
		coord_tool_drop(t, "unexpected %s from a tool",
		    proto_msg_name(type));
		return -1;
	}
}

/*
 * A tool that sends requests and does not read the replies must not make
 * them pile up without bound: once more than c->tool_high bytes wait for
 * it, its requests are left unread (in its socket, then in the tool)
 * until it has taken half of that.  It is not dropped: a slow reader
 * gets every reply.
 */
static int
tool_frame_cb(void *peer, uint8_t type, const uint8_t *p, size_t len)
{
	struct coord_tool *t = peer;

	if (coord_tool_frame(t, type, p, len) == -1)
		return -1;
	if (evbuffer_get_length(bufferevent_get_output(t->bev)) <=
	    t->coord->tool_high)
		return 0;
	t->replies_held = 1;
	bufferevent_disable(t->bev, EV_READ);
	return 1;
}

static void
tool_read_cb(struct bufferevent *bev, void *arg)
{
	struct coord_tool *t = arg;
	const char *why;

	if (t->state == COORD_P_CLOSING) {
		evbuffer_drain(bufferevent_get_input(bev),
		    evbuffer_get_length(bufferevent_get_input(bev)));
		return;
	}
	if (coord_conn_read(bev, tool_frame_cb, t, &t->pre, MSG_TOOL_HELLO,
	    &why) == -1)
		coord_tool_drop(t, "%s", why);
}

/* The tool took half its queue: its held requests are read again. */
static void
tool_replies_resume(struct coord_tool *t)
{
	t->replies_held = 0;
	bufferevent_enable(t->bev, EV_READ);
	tool_read_cb(t->bev, t);
}

/* What the tool took from its queue: coord_hold.c's sign of life. */
static void
tool_output_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct coord_tool *t = arg;

	(void)buf;
	t->added += info->n_added;
	t->drained += info->n_deleted;
	/* Into its socket: batches may be delivered (coord_ack.c). */
	if (info->n_deleted > 0 && !TAILQ_EMPTY(&t->coord->deliveries))
		coord_ack_delivered(t->coord);
}

static void
tool_write_cb(struct bufferevent *bev, void *arg)
{
	struct coord_tool *t = arg;

	(void)bev;
	if (t->replies_held && !t->coord->finishing) {
		tool_replies_resume(t);
		return;		/* it may be gone */
	}
	if (t->full && !t->coord->finishing)
		tool_resume(t);
	if (t->lossless)
		coord_hold_release(t->coord);
	if (t->coord->replay != NULL)
		coord_replay_writable(t->coord);
	if (t->coord->finishing)
		coord_output_check(t->coord);
}

static void
tool_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct coord_tool *t = arg;
	size_t pending;

	(void)what;
	pending = evbuffer_get_length(bufferevent_get_input(bev));
	if (t->pre.listed && !log_rate_ok(&t->coord->refuse_log))
		;	/* one of a flood, maybe */
	else if (pending > 0 && !t->replies_held)
		log_warnx("tool %u (%s): connection closed inside a frame "
		    "(%zu bytes left unread)", t->id,
		    t->name[0] ? t->name : "no hello yet", pending);
	else
		log_info("tool %u (%s) disconnected", t->id,
		    t->name[0] ? t->name : "no hello yet");
	coord_tool_free(t);
}

/* Only our own user (or root) may watch and stop this machine. */
static int
peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return 0;
	return cred.uid == getuid() || cred.uid == 0;
}

/* Ends a connection with the reason in an ERROR frame, not a reset. */
static void
tool_refuse(struct coord *c, evutil_socket_t fd, const char *why)
{
	struct bufferevent *bev;

	if (log_rate_ok(&c->refuse_log))
		log_warnx("refusing a tool connection: %s", why);
	if ((bev = bufferevent_socket_new(c->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		evutil_closesocket(fd);
		return;
	}
	coord_conn_close(bev, why);
}

static void
tool_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct coord *c = arg;
	struct coord_tool *t;

	(void)l;
	(void)sa;
	(void)salen;
	if (c->shutting_down || !peer_allowed(fd)) {
		tool_refuse(c, fd, c->shutting_down ? "shutting down" :
		    "another user's coordinator");
		return;
	}
	t = xcalloc(1, sizeof(*t));
	t->coord = c;
	t->id = c->next_tool_id++;
	t->state = COORD_P_HELLO;
	t->bev = bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (t->bev == NULL)
		fatalx("%s: bufferevent_socket_new", __func__);
	bufferevent_setcb(t->bev, tool_read_cb, tool_write_cb, tool_event_cb,
	    t);
	bufferevent_setwatermark(t->bev, EV_WRITE, c->tool_high / 2, 0);
	if (evbuffer_add_cb(bufferevent_get_output(t->bev), tool_output_cb,
	    t) == NULL)
		fatalx("%s: evbuffer_add_cb", __func__);
	bufferevent_enable(t->bev, EV_READ | EV_WRITE);
	t->pre.tool = t;
	coord_preauth_add(c, &t->pre, fd);
	TAILQ_INSERT_TAIL(&c->tools, t, entry);
	c->ntools++;
}

static int
sock_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun->sun_path, path);
	return 0;
}

/*
 * Is a coordinator answering on path?  Returns 1 if so, 0 if not (a stale
 * socket is removed), -1 on error.
 */
int
coord_tool_probe(const char *path)
{
	struct sockaddr_un sun;
	int fd, rv;

	if (sock_addr(&sun, path) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	rv = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	if (rv == 0)
		return 1;
	if (errno == ECONNREFUSED) {
		log_info("removing stale socket %s", path);
		if (unlink(path) == -1 && errno != ENOENT)
			return -1;
		return 0;
	}
	return errno == ENOENT ? 0 : -1;
}

static void
tool_listen_error_cb(struct evconnlistener *l, void *arg)
{
	(void)l;
	coord_accept_error(arg, "a tool");
}

int
coord_tool_listen(struct coord *c)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd;

	if (pmon_runtime_path(c->sock_path, sizeof(c->sock_path),
	    PMON_SOCK_COORD) == -1 || sock_addr(&sun, c->sock_path) == -1) {
		log_warn("tool socket path");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1) {
		log_warn("socket");
		return -1;
	}
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_warn("bind %s", c->sock_path);
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	c->tool_listener = evconnlistener_new(c->base, tool_accept_cb, c,
	    LEV_OPT_CLOSE_ON_FREE, 16, fd);
	if (c->tool_listener == NULL) {
		log_warn("listen %s", c->sock_path);
		close(fd);
		unlink(c->sock_path);
		return -1;
	}
	evconnlistener_set_error_cb(c->tool_listener, tool_listen_error_cb);
	log_info("listening for tools on %s", c->sock_path);
	return 0;
}
