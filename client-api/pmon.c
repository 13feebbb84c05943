/*
 * libpmon: a tool's connection to the pmon coordinator (pmon.h).
 *
 * The coordinator is trusted to be a pmon coordinator but not to be
 * bug-free: every frame is checked with frame_hdr_decode() before its
 * payload is buffered and decoded strictly, and anything malformed ends
 * the connection with a message in pmon_error().  The library never
 * prints, never exits and does not use libevent, so any tool can embed it.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "pmon-internal.h"
#include "pmon.h"
#include "proto.h"
#include "recfile.h"
#include "record.h"
#include "secret.h"
#include "tool_msg.h"
#include "wire.h"

/* pmon.h's numbers are the protocol's and the recordings'. */
_Static_assert(PMON_FRAME_EVENT == MSG_EVENT &&
    PMON_FRAME_TASK_INFO == MSG_TASK_INFO &&
    PMON_FRAME_PROBLEM == MSG_PROBLEM && PMON_FRAME_NOTICE == MSG_NOTICE &&
    PMON_FRAME_TASK_GONE == MSG_TASK_GONE && PMON_FRAME_HOST == REC_HOST &&
    PMON_FRAME_SNAPSHOT == REC_SNAPSHOT, "pmon.h's frame types");
_Static_assert(PMON_PHASE_BEGIN == PMON_BEGIN && PMON_PHASE_END == PMON_END,
    "pmon.h's phases");

/* Bytes read from the socket at a time, at least. */
#define PMON_READ_CHUNK	(256 * 1024)

/* Entries of the cache in front of the task table (a power of 2). */
#define PMON_TCACHE	64

/* The longest string a payload can hold. */
#define PMON_STR_MAX	1024
#define PMON_LATE_MAX	8	/* requests given up on, remembered */

/* A task as the library keeps it: the public part and its own strings. */
struct ptask {
	struct pmon_task pub;
	char		*host;
	char		*program;
};

struct pmon {
	int		 fd;
	int		 failed;	/* error: every call fails from now on */
	int		 closed;	/* BYE or end of file at a frame boundary */
	int		 gone;		/* end of file without a BYE */
	char		 err[PMON_STR_MAX + 128];

	struct pmon_callbacks cb;
	void		*cbarg;

	/*
	 * Bytes read: those from inoff to inlen are not decoded yet.  They
	 * move to the front only when the room behind them runs out, so a
	 * large frame arriving in many reads is not moved for every read.
	 */
	uint8_t		*in;
	size_t		 inoff;
	size_t		 inlen;
	size_t		 insize;
	size_t		 inmissing;	/* bytes of a frame begun, not read */

	struct ptask	**tasks;	/* sorted by tid */
	size_t		 ntasks;
	size_t		 tasksize;
	/*
	 * The last task found for each slot of a tid's hash: an event
	 * mostly finds its task here, without a search.  A ptask never
	 * moves nor goes away before pmon_free, so an entry never goes
	 * stale.
	 */
	struct ptask	*tcache[PMON_TCACHE];

	int32_t		 peers[RECORD_PEERS_MAX];	/* of the current event */
	char		 group[RECORD_GROUP_MAX + 1];

	uint32_t	 flush_next;	/* id of the next flush request */
	uint32_t	 flush_wait;	/* the id pmon_flush waits for */
	int		 flush_got;

	/* A reply being assembled from REPLY frames: id 0 is the snapshot. */
	uint32_t	 req_next;
	uint32_t	 req_wait;	/* the id pmon_request waits for */
	int		 req_got;
	int		 timeout_ms;	/* of pmon_request, pmon_flush; -1 */
	/* Requests given up on (pmon_set_timeout): their replies go. */
	uint32_t	 late[PMON_LATE_MAX];
	unsigned	 nlate;
	int		 parked;	/* pmon_parse stopped at a reply:
					   what came after it waits */
	uint8_t		 req_status;
	char		*reply;
	size_t		 replylen;
	/* The snapshot (REPLY id 0), apart: it may come between the
	 * frames of a request's reply, or right behind it. */
	char		*snap;
	size_t		 snaplen;

	struct recfile	*rf;		/* pmon_open_recording's */
};

static int	pmon_fail(struct pmon *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/* Records why the connection is unusable; always returns -1. */
static int
pmon_fail(struct pmon *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->failed = 1;
	return -1;
}

/* An orderly end: the coordinator said BYE or closed between frames. */
static int
pmon_close_orderly(struct pmon *p, const char *why)
{
	snprintf(p->err, sizeof(p->err), "%s", why);
	p->closed = 1;
	return -1;
}

struct pmon *
pmon_new(void)
{
	struct pmon *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->fd = -1;
	p->flush_next = 1;
	p->req_next = 1;
	p->timeout_ms = -1;
	return p;
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* pmon_request gave up on request id: its reply, if it comes, goes. */
static void
late_add(struct pmon *p, uint32_t id)
{
	if (p->nlate == PMON_LATE_MAX) {
		memmove(p->late, p->late + 1, (PMON_LATE_MAX - 1) *
		    sizeof(p->late[0]));
		p->nlate--;
	}
	p->late[p->nlate++] = id;
}

/* Is id one given up on?  Its last part (!more) forgets it. */
static int
late_reply(struct pmon *p, uint32_t id, int more)
{
	unsigned i;

	for (i = 0; i < p->nlate; i++)
		if (p->late[i] == id) {
			if (!more)
				p->late[i] = p->late[--p->nlate];
			return 1;
		}
	return 0;
}

static void
ptask_free(struct ptask *t)
{
	free(t->host);
	free(t->program);
	free(t);
}

void
pmon_free(struct pmon *p)
{
	size_t i;

	if (p == NULL)
		return;
	if (p->fd != -1)
		close(p->fd);
	recfile_close(p->rf);
	for (i = 0; i < p->ntasks; i++)
		ptask_free(p->tasks[i]);
	free(p->tasks);
	free(p->in);
	free(p->reply);
	free(p->snap);
	free(p);
}

const char *
pmon_error(const struct pmon *p)
{
	return p->err[0] ? p->err : "no error";
}

int
pmon_fd(const struct pmon *p)
{
	return p->fd;
}

int
pmon_closed(const struct pmon *p)
{
	return p->closed;
}

int
pmon_gone(const struct pmon *p)
{
	return p->gone;
}

void
pmon_set_callbacks(struct pmon *p, const struct pmon_callbacks *cb,
    void *arg)
{
	if (cb != NULL)
		p->cb = *cb;
	else
		memset(&p->cb, 0, sizeof(p->cb));
	p->cbarg = arg;
}

/* --- the task table ----------------------------------------------------- */

/* Index of tid in the sorted table, or where it would be inserted. */
static size_t
task_index(const struct pmon *p, int32_t tid)
{
	size_t lo = 0, hi = p->ntasks, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->tasks[mid]->pub.tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* PVM tids hold the host in bits 18 and up, the task below. */
static unsigned
task_slot(int32_t tid)
{
	uint32_t v = (uint32_t)tid;

	return (v ^ v >> 18) & (PMON_TCACHE - 1);
}

static struct ptask *
task_find(struct pmon *p, int32_t tid)
{
	struct ptask **slot = &p->tcache[task_slot(tid)];
	size_t i;

	if (*slot != NULL && (*slot)->pub.tid == tid)
		return *slot;
	i = task_index(p, tid);
	if (i < p->ntasks && p->tasks[i]->pub.tid == tid)
		return *slot = p->tasks[i];
	return NULL;
}

/* Returns the entry for tid, inserting an empty one; NULL with the error
 * set when out of memory or over PMON_TASKS_MAX. */
static struct ptask *
task_get(struct pmon *p, int32_t tid)
{
	struct ptask *t, **nt;
	size_t i = task_index(p, tid), n;

	if (i < p->ntasks && p->tasks[i]->pub.tid == tid)
		return p->tasks[i];
	if (p->ntasks == PMON_TASKS_MAX) {
		pmon_fail(p, "coordinator announced more than %d tasks",
		    PMON_TASKS_MAX);
		return NULL;
	}
	if (p->ntasks == p->tasksize) {
		n = p->tasksize ? 2 * p->tasksize : 64;
		if ((nt = reallocarray(p->tasks, n, sizeof(*nt))) == NULL)
			goto nomem;
		p->tasks = nt;
		p->tasksize = n;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		goto nomem;
	t->pub.tid = tid;
	memmove(&p->tasks[i + 1], &p->tasks[i],
	    (p->ntasks - i) * sizeof(*p->tasks));
	p->tasks[i] = t;
	p->ntasks++;
	return t;
nomem:
	pmon_fail(p, "out of memory for the task table");
	return NULL;
}

/* --- frame decoding ----------------------------------------------------- */

static int
pmon_bad_payload(struct pmon *p, uint8_t type, const char *why)
{
	return pmon_fail(p, "malformed %s frame from the coordinator: %s",
	    proto_msg_name(type), why);
}

static int
decode_task_info(struct pmon *p, const uint8_t *buf, size_t len)
{
	struct task_info ti;
	struct ptask *t;
	const char *why;
	char *h, *prog;

	if (task_info_decode(buf, len, &ti, &why) == -1)
		return pmon_bad_payload(p, MSG_TASK_INFO, why);
	if ((h = strdup(ti.host)) == NULL ||
	    (prog = strdup(ti.program)) == NULL) {
		free(h);
		return pmon_fail(p, "out of memory for a task");
	}
	if ((t = task_get(p, ti.tid)) == NULL) {
		free(h);
		free(prog);
		return -1;
	}
	free(t->host);
	free(t->program);
	t->host = h;
	t->program = prog;
	t->pub.parent = ti.parent;
	t->pub.pid = ti.pid;
	t->pub.spawn_seq = ti.spawn_seq;
	t->pub.host = h;
	t->pub.program = prog;
	if (p->cb.task != NULL)
		p->cb.task(&t->pub, p->cbarg);
	return 0;
}

/*
 * Fills the record's part of ev; the group name and the peers are
 * copied into p (to be NUL-terminated and in host order) only when there
 * are any.
 */
static void
event_fill(struct pmon *p, struct pmon_event *ev, const struct record *rec)
{
	unsigned i;

	ev->seq = rec->seq;
	ev->t_ns = rec->t_ns;
	ev->call = rec->call;
	ev->call_name = record_call_name(rec->call);
	ev->phase = rec->phase;
	ev->rc = rec->rc;
	ev->peer = rec->peer;
	ev->tag = rec->tag;
	ev->ctx = rec->ctx;
	ev->bytes = rec->bytes;
	/* A receive's inst is its message's id: the match says it. */
	ev->inst = (rec->flags & RECORD_MSGID) ? -1 : rec->inst;
	ev->group = "";
	if (rec->glen > 0) {
		memcpy(p->group, rec->group, rec->glen);
		p->group[rec->glen] = '\0';
		ev->group = p->group;
	}
	for (i = 0; i < rec->npeers; i++)
		p->peers[i] = record_peer(rec, i);
	ev->npeers = rec->npeers;
	ev->peers = p->peers;
	if (rec->flags & RECORD_MSG)
		ev->flags |= PMON_EV_MSG;
	if (rec->call == PMON_CALL_SIGNAL && (rec->flags & RECORD_PVMD))
		ev->flags |= PMON_EV_PVMD;
	if (rec->call == PMON_CALL_LOST)
		ev->flags |= PMON_EV_LOST;
}

/* Checks the EVENT header fields; the record is checked by its codec. */
static int
event_flags(struct pmon *p, uint8_t flags, uint64_t match_seq)
{
	const uint8_t known = EVENT_MATCHED | EVENT_UNMATCHED | EVENT_LOST |
	    EVENT_INCONSISTENT | EVENT_AGAIN | EVENT_UNMONITORED;
	int f = 0;

	if (flags & ~known)
		return pmon_bad_payload(p, MSG_EVENT, "unknown event flags");
	if ((flags & EVENT_MATCHED) && (flags & EVENT_UNMATCHED))
		return pmon_bad_payload(p, MSG_EVENT,
		    "event both matched and unmatched");
	if ((flags & EVENT_UNMONITORED) && !(flags & EVENT_UNMATCHED))
		return pmon_bad_payload(p, MSG_EVENT,
		    "a matched event says its sender is unmonitored");
	if ((flags & EVENT_MATCHED) && match_seq == 0)
		return pmon_bad_payload(p, MSG_EVENT,
		    "matched event names send sequence number 0");
	if (flags & EVENT_MATCHED)
		f |= PMON_EV_MATCHED;
	if (flags & EVENT_UNMATCHED)
		f |= PMON_EV_UNMATCHED;
	if (flags & EVENT_LOST)
		f |= PMON_EV_LOST;
	if (flags & EVENT_INCONSISTENT)
		f |= PMON_EV_INCONSISTENT;
	if (flags & EVENT_AGAIN)
		f |= PMON_EV_AGAIN;
	if (flags & EVENT_UNMONITORED)
		f |= PMON_EV_UNMONITORED;
	return f;
}

/*
 * The fixed header (EVENT_HDR_SIZE: tid, flags, match_tid, match_seq,
 * t_corr), then one record.  Every EVENT is checked whole; the event is
 * built only for an event callback.
 */
static int
decode_event(struct pmon *p, const uint8_t *buf, size_t len)
{
	struct pmon_event ev;
	struct event_hdr h;
	struct record rec;
	struct ptask *t;
	const char *why;
	int f;

	if (len < EVENT_HDR_SIZE)
		return pmon_bad_payload(p, MSG_EVENT, "header truncated");
	event_hdr_decode(buf, &h);
	ev.tid = h.tid;
	ev.match_tid = h.match_tid;
	ev.match_seq = h.match_seq;
	ev.t_corr = h.t_corr;
	if ((f = event_flags(p, h.flags, ev.match_seq)) == -1)
		return -1;
	ev.flags = f;
	buf += EVENT_HDR_SIZE;
	len -= EVENT_HDR_SIZE;
	if (record_decode(buf, len, &rec, &why) == -1)
		return pmon_bad_payload(p, MSG_EVENT, why);
	if (rec.len != len)
		return pmon_bad_payload(p, MSG_EVENT,
		    "bytes after the record");
	if ((t = task_find(p, ev.tid)) == NULL)
		return pmon_fail(p, "coordinator sent an EVENT for task %d "
		    "before its TASK_INFO", ev.tid);
	if (p->cb.event == NULL)
		return 0;
	event_fill(p, &ev, &rec);
	ev.task = &t->pub;
	p->cb.event(&ev, p->cbarg);
	return 0;
}

static int
decode_flush_done(struct pmon *p, const uint8_t *buf, size_t len)
{
	const char *why;
	uint32_t id;

	if (proto_u32_decode(buf, len, &id, &why) == -1)
		return pmon_bad_payload(p, MSG_FLUSH_DONE, why);
	if (p->flush_wait != 0 && id == p->flush_wait)
		p->flush_got = 1;
	if (p->cb.flush_done != NULL)
		p->cb.flush_done(id, p->cbarg);
	return 0;
}

/* BYE and ERROR carry one string: the coordinator's reason. */
static int
decode_reason(struct pmon *p, uint8_t type, const uint8_t *buf, size_t len,
    char *text, size_t size)
{
	const char *why;

	if (reason_decode(buf, len, text, size, &why) == -1)
		return pmon_bad_payload(p, type, why);
	return 0;
}

static int
decode_bye(struct pmon *p, const uint8_t *buf, size_t len)
{
	char reason[PMON_STR_MAX], msg[PMON_STR_MAX + 64];

	if (decode_reason(p, MSG_BYE, buf, len, reason, sizeof(reason)) == -1)
		return -1;
	if (p->cb.bye != NULL)
		p->cb.bye(reason, p->cbarg);
	snprintf(msg, sizeof(msg), "the coordinator said goodbye: %s",
	    reason[0] ? reason : "no reason given");
	return pmon_close_orderly(p, msg);
}

static int
decode_error(struct pmon *p, const uint8_t *buf, size_t len)
{
	char text[PMON_STR_MAX];

	if (decode_reason(p, MSG_ERROR, buf, len, text, sizeof(text)) == -1)
		return -1;
	return pmon_fail(p, "the coordinator dropped this tool: %s", text);
}

/* A reply is assembled whole before anyone sees it. */
#define PMON_REPLY_MAX	(256 * 1024 * 1024)

static int
decode_reply(struct pmon *p, const uint8_t *buf, size_t len)
{
	size_t n = len - REPLY_HDR_SIZE, *blen;
	char **body, *nr;
	const char *why;
	uint8_t status;
	uint32_t id;
	int more;

	if (reply_hdr_decode(buf, len, &id, &status, &more, &why) == -1)
		return pmon_bad_payload(p, MSG_REPLY, why);
	body = id == 0 ? &p->snap : &p->reply;
	blen = id == 0 ? &p->snaplen : &p->replylen;
	if (id != 0 && late_reply(p, id, more))
		return 0;
	if (id != 0 && (id != p->req_wait || p->req_got))
		return pmon_bad_payload(p, MSG_REPLY, "reply to no request");
	if (*blen + n > PMON_REPLY_MAX)
		return pmon_fail(p, "reply of more than %d bytes",
		    PMON_REPLY_MAX);
	if ((nr = realloc(*body, *blen + n + 1)) == NULL)
		return pmon_fail(p, "out of memory");
	*body = nr;
	memcpy(*body + *blen, buf + REPLY_HDR_SIZE, n);
	*blen += n;
	(*body)[*blen] = '\0';
	if (more)
		return 0;
	if (id != 0) {
		p->req_got = 1;
		p->req_status = status;
		return 0;
	}
	if (p->cb.snapshot != NULL)
		p->cb.snapshot(p->snap, p->snaplen, p->cbarg);
	free(p->snap);
	p->snap = NULL;
	p->snaplen = 0;
	return 0;
}

/* PROBLEM and NOTICE: one JSON object, passed on NUL-terminated. */
static int
decode_json(struct pmon *p, const uint8_t *buf, size_t len,
    void (*cb)(const char *, size_t, void *))
{
	char *json;

	if (cb == NULL)
		return 0;
	if ((json = malloc(len + 1)) == NULL)
		return pmon_fail(p, "out of memory");
	memcpy(json, buf, len);
	json[len] = '\0';
	cb(json, len, p->cbarg);
	free(json);
	return 0;
}

static int	decode_frame(struct pmon *, uint8_t, const uint8_t *, size_t);

/* Decodes one frame, then hands a stream frame on as it came. */
static int
dispatch_frame(struct pmon *p, uint8_t type, const uint8_t *buf, size_t len)
{
	if (decode_frame(p, type, buf, len) == -1)
		return -1;
	if (p->cb.frame != NULL && proto_msg_stream(type))
		p->cb.frame(type, buf, len, p->cbarg);
	return 0;
}

/* Decodes one complete frame whose header frame_hdr_decode() accepted. */
static int
decode_frame(struct pmon *p, uint8_t type, const uint8_t *buf, size_t len)
{
	switch (type) {
	case MSG_TASK_GONE:
		return 0;	/* for recorders: the frame callback */
	case MSG_REPLY:
		return decode_reply(p, buf, len);
	case MSG_PROBLEM:
		return decode_json(p, buf, len, p->cb.problem);
	case MSG_NOTICE:
		return decode_json(p, buf, len, p->cb.notice);
	case MSG_TASK_INFO:
		return decode_task_info(p, buf, len);
	case MSG_EVENT:
		return decode_event(p, buf, len);
	case MSG_FLUSH_DONE:
		return decode_flush_done(p, buf, len);
	case MSG_BYE:
		return decode_bye(p, buf, len);
	case MSG_ERROR:
		return decode_error(p, buf, len);
	default:
		return pmon_fail(p, "coordinator sent an unexpected %s frame",
		    proto_msg_name(type));
	}
}

/*
 * Checks the frame header at in.  An EVENT header, nearly every frame of
 * the stream, is accepted by a look at its bytes (ev: the EVENT limits);
 * any other, and every bad one for its message, goes through
 * frame_hdr_decode().
 */
static int
frame_hdr_check(const uint8_t *in, const struct msg_info *ev,
    struct frame_hdr *h, const char **why)
{
	uint32_t len = wire_get32(in + 4);

	if (in[0] == PROTO_MAGIC && in[1] == PROTO_VERSION &&
	    in[2] == MSG_EVENT && in[3] == 0 && len >= ev->min_len &&
	    len <= ev->max_len) {
		h->type = MSG_EVENT;
		h->len = len;
		return 0;
	}
	return frame_hdr_decode(in, h, why);
}

/*
 * Decodes every complete frame in the input buffer and keeps the rest,
 * noting how much of a frame is still missing.  A header is checked as
 * soon as its 8 bytes are in, so a bad length is caught before the
 * buffer grows for its payload.
 */
static int
pmon_parse(struct pmon *p)
{
	const struct msg_info *ev = proto_msg(MSG_EVENT);
	struct frame_hdr h;
	const char *why;
	size_t off = p->inoff;
	int rv = 0;

	p->inmissing = 0;
	p->parked = 0;
	while (p->inlen - off >= FRAME_HDR_SIZE) {
		if (frame_hdr_check(p->in + off, ev, &h, &why) == -1) {
			rv = pmon_fail(p, "bad frame from the coordinator: %s",
			    why);
			break;
		}
		if (p->inlen - off - FRAME_HDR_SIZE < h.len) {
			p->inmissing = FRAME_HDR_SIZE + h.len -
			    (p->inlen - off);
			break;
		}
		rv = dispatch_frame(p, h.type, p->in + off + FRAME_HDR_SIZE,
		    h.len);
		off += FRAME_HDR_SIZE + h.len;
		if (rv == -1)
			break;
		/*
		 * The reply pmon_request waits for: what came after it in the
		 * stream is for after the request returns (pmon_pending).
		 */
		if (p->req_wait != 0 && p->req_got) {
			p->parked = p->inlen - off >= FRAME_HDR_SIZE;
			break;
		}
	}
	/* Nothing after an error or BYE is read. */
	if (rv == -1 || off == p->inlen)
		p->inoff = p->inlen = 0;
	else
		p->inoff = off;
	return rv;
}

/*
 * Makes room for want more bytes of input: first by moving what is not
 * decoded yet to the front, then by growing the buffer.
 */
static int
pmon_input_reserve(struct pmon *p, size_t want)
{
	uint8_t *n;
	size_t size;

	if (p->insize - p->inlen >= want)
		return 0;
	if (p->inoff > 0) {
		memmove(p->in, p->in + p->inoff, p->inlen - p->inoff);
		p->inlen -= p->inoff;
		p->inoff = 0;
		if (p->insize - p->inlen >= want)
			return 0;
	}
	size = p->inlen + want;
	if ((n = realloc(p->in, size)) == NULL)
		return pmon_fail(p, "out of memory for input");
	p->in = n;
	p->insize = size;
	return 0;
}

static int
pmon_usable(struct pmon *p)
{
	if (p->failed || p->closed)
		return -1;	/* the message of the first failure stays */
	return 0;
}

int
pmon_feed(struct pmon *p, const void *buf, size_t len)
{
	if (pmon_usable(p) == -1)
		return -1;
	if (pmon_input_reserve(p, len) == -1)
		return -1;
	memcpy(p->in + p->inlen, buf, len);
	p->inlen += len;
	return pmon_parse(p);
}

/* --- recordings ---------------------------------------------------------- */

const char *
pmon_call_name(int call)
{
	return call < 0 ? "unknown" : record_call_name((unsigned)call);
}

int
pmon_call_lookup(const char *name)
{
	return record_call_lookup(name);
}

int
pmon_open_recording(struct pmon *p, const char *path,
    struct pmon_recording_header *header)
{
	const struct recfile_header *h;
	char err[512];

	if (pmon_usable(p) == -1)
		return -1;
	if (p->fd != -1 || p->rf != NULL)
		return pmon_fail(p, "the handle is in use");
	if ((p->rf = recfile_open(path, err, sizeof(err))) == NULL)
		return pmon_fail(p, "%s", err);
	if (header == NULL)
		return 0;
	h = recfile_header(p->rf);
	memset(header, 0, sizeof(*header));
	header->format = h->version;
	header->created_ns = h->created_ns;
	snprintf(header->writer, sizeof(header->writer), "%s", h->writer);
	snprintf(header->clock, sizeof(header->clock), "%s", h->clock);
	snprintf(header->source, sizeof(header->source), "%s", h->source);
	return 0;
}

/*
 * One frame of a recording.  A stream frame is checked against the
 * protocol table as one from the socket is, then dispatched; the
 * recording's own go to the snapshot and frame callbacks.
 */
static int
recording_frame(struct pmon *p, uint8_t type, const uint8_t *buf,
    size_t len)
{
	uint8_t hdr[FRAME_HDR_SIZE];
	struct frame_hdr h;
	const char *why;

	if (type == REC_SNAPSHOT || type == REC_HOST) {
		if (type == REC_SNAPSHOT &&
		    decode_json(p, buf, len, p->cb.snapshot) == -1)
			return -1;
		if (p->cb.frame != NULL)
			p->cb.frame(type, buf, len, p->cbarg);
		return 0;
	}
	if (!proto_msg_stream(type))
		return 0;
	if (len > PROTO_MAX_PAYLOAD)
		return pmon_fail(p, "a %s frame of %zu bytes",
		    proto_msg_name(type), len);
	frame_hdr_encode(hdr, type, (uint32_t)len);
	if (frame_hdr_decode(hdr, &h, &why) == -1)
		return pmon_fail(p, "bad %s frame of %zu bytes: %s",
		    proto_msg_name(type), len, why);
	return dispatch_frame(p, type, buf, len);
}

int
pmon_read_recording(struct pmon *p, struct pmon_recording_counts *counts)
{
	struct pmon_recording_counts n;
	const struct recfile_end *end;
	const uint8_t *buf;
	uint8_t type;
	size_t len;
	int rv = 0;

	memset(&n, 0, sizeof(n));
	if (pmon_usable(p) == -1)
		goto out;
	if (p->rf == NULL) {
		rv = pmon_fail(p, "no recording open");
		goto out;
	}
	while ((rv = recfile_next(p->rf, &type, &buf, &len)) == 1) {
		n.frames++;
		n.events += type == MSG_EVENT;
		n.tasks += type == MSG_TASK_INFO;
		n.raw_bytes += FRAME_HDR_SIZE + len;
		if (recording_frame(p, type, buf, len) == -1)
			break;
	}
	n.file_bytes = recfile_offset(p->rf);
	if (rv == 0 && (end = recfile_end(p->rf)) != NULL)
		n.ended_ns = end->ended_ns;
	if (rv == 1)
		rv = -1;	/* the callbacks' frame: the message is in */
	else if (rv == -1)
		pmon_fail(p, "%s", recfile_error(p->rf));
out:
	if (counts != NULL)
		*counts = n;
	return p->failed ? -1 : rv;
}

int
pmon_pending(const struct pmon *p)
{
	return p->parked;
}

int
pmon_dispatch(struct pmon *p)
{
	ssize_t n;

	if (pmon_usable(p) == -1)
		return -1;
	if (p->fd == -1)
		return pmon_fail(p, "not connected");
	/* What came after a request's reply comes first. */
	if (p->parked)
		return pmon_parse(p);
	/* Room for the rest of a frame begun, so that one read can end it. */
	if (pmon_input_reserve(p, p->inmissing > PMON_READ_CHUNK ?
	    p->inmissing : PMON_READ_CHUNK) == -1)
		return -1;
	n = read(p->fd, p->in + p->inlen, p->insize - p->inlen);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		/* It died with bytes of ours unread. */
		p->gone = errno == ECONNRESET;
		return pmon_fail(p, "reading from the coordinator: %s",
		    strerror(errno));
	}
	if (n == 0) {
		p->gone = 1;
		if (p->inlen > p->inoff)
			return pmon_fail(p, "the coordinator closed the "
			    "connection in the middle of a frame");
		return pmon_close_orderly(p,
		    "the coordinator closed the connection");
	}
	p->inlen += (size_t)n;
	return pmon_parse(p);
}

/* --- sending ------------------------------------------------------------- */

/* Waits until fd can take more bytes; the socket is non-blocking. */
static int
pmon_wait_writable(struct pmon *p)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLOUT };

	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return pmon_fail(p, "poll: %s", strerror(errno));
	return 0;
}

/*
 * The coordinator closed the connection while we were sending: it may
 * have said why first (an ERROR, say "wrong secret"), and that is the
 * better message.
 */
static int
pmon_send_failed(struct pmon *p, int err)
{
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	int i;

	for (i = 0; i < 64 && poll(&pfd, 1, 0) == 1; i++)
		if (pmon_dispatch(p) == -1)
			break;
	if (p->failed)
		return -1;
	p->closed = 0;
	p->gone = err == EPIPE || err == ECONNRESET;
	return pmon_fail(p, "sending to the coordinator: %s", strerror(err));
}

static int
pmon_send_frame(struct pmon *p, uint8_t type, const uint8_t *payload,
    size_t len)
{
	uint8_t buf[FRAME_HDR_SIZE + PMON_STR_MAX];
	size_t total = FRAME_HDR_SIZE + len, off = 0;
	ssize_t n;

	if (pmon_usable(p) == -1)
		return -1;
	if (p->fd == -1)
		return pmon_fail(p, "not connected");
	if (len > PMON_STR_MAX)
		return pmon_fail(p, "request too long");
	frame_hdr_encode(buf, type, (uint32_t)len);
	if (len > 0)
		memcpy(buf + FRAME_HDR_SIZE, payload, len);
	while (off < total) {
		n = send(p->fd, buf + off, total - off, MSG_NOSIGNAL);
		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EPIPE || errno == ECONNRESET)
			return pmon_send_failed(p, errno);
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return pmon_fail(p, "sending to the coordinator: %s",
			    strerror(errno));
		if (pmon_wait_writable(p) == -1)
			return -1;
	}
	return 0;
}

int
pmon_send_flush(struct pmon *p, uint32_t *id)
{
	uint8_t payload[4];
	uint32_t fid = p->flush_next;

	wire_put32(payload, fid);
	if (pmon_send_frame(p, MSG_FLUSH, payload, sizeof(payload)) == -1)
		return -1;
	if (++p->flush_next == 0)	/* 0 means "none" to pmon_flush */
		p->flush_next = 1;
	if (id != NULL)
		*id = fid;
	return 0;
}

int
pmon_send_shutdown(struct pmon *p)
{
	return pmon_send_frame(p, MSG_SHUTDOWN, NULL, 0);
}

/* --- connecting ---------------------------------------------------------- */

int
pmon_attach_fd(struct pmon *p, int fd)
{
	int fl;

	if (p->fd != -1)
		return pmon_fail(p, "already connected");
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return pmon_fail(p, "fcntl: %s", strerror(errno));
	p->fd = fd;
	p->err[0] = '\0';
	return 0;
}

/* Says which virtual machine had no coordinator, in words a user acts on. */
static int
pmon_no_coordinator(struct pmon *p, const char *path, int explicit)
{
	const char *tmp = getenv("PVM_TMP");

	if (explicit)
		return pmon_fail(p, "no pmon coordinator at %s: "
		    "run 'pmon start'", path);
	if (tmp == NULL || *tmp == '\0')
		return pmon_fail(p, "no pmon coordinator for this virtual "
		    "machine (PVM_TMP unset, so /tmp): run 'pmon start'");
	return pmon_fail(p, "no pmon coordinator for this virtual machine "
	    "(PVM_TMP=%s): run 'pmon start'", tmp);
}

static int
pmon_socket_connect(struct pmon *p, const char *path, int explicit)
{
	struct sockaddr_un sun;
	int fd, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return pmon_fail(p, "socket path too long: %s", path);
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return pmon_fail(p, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		if (saved == ENOENT || saved == ECONNREFUSED)
			return pmon_no_coordinator(p, path, explicit);
		return pmon_fail(p, "connecting to %s: %s", path,
		    strerror(saved));
	}
	if (pmon_attach_fd(p, fd) == -1) {
		close(fd);
		return -1;
	}
	return 0;
}

/*
 * Only our own user's coordinator (or root's) hears the secret: a
 * socket someone else bound at the path gets nothing.
 */
static int
pmon_peer_check(struct pmon *p, const char *path)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(p->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return pmon_fail(p, "%s: SO_PEERCRED: %s", path,
		    strerror(errno));
	if (cred.uid != getuid() && cred.uid != 0 && getuid() != 0)
		return pmon_fail(p, "%s belongs to uid %u, not to this user: "
		    "not a coordinator of ours", path, (unsigned)cred.uid);
	return 0;
}

/* The secret in the file that goes with the socket at path. */
static int
pmon_read_secret(struct pmon *p, const char *path, char *secret)
{
	char file[PATH_MAX];
	const char *why;

	if (pmon_secret_path_for(file, sizeof(file), path) == -1)
		return pmon_fail(p, "socket path too long: %s", path);
	if (pmon_secret_read(file, secret, &why) == -1)
		return pmon_fail(p, "cannot read the virtual machine's "
		    "secret %s: %s", file, why);
	return 0;
}

static int
pmon_send_hello(struct pmon *p, const char *name, unsigned flags,
    const char *secret)
{
	uint8_t payload[MSG_MAX_TOOL_HELLO];
	uint32_t wflags = 0;
	size_t len;
	int rv;

	if (name == NULL)
		name = "libpmon";
	if (flags & PMON_SUBSCRIBE)
		wflags |= TOOL_SUBSCRIBE;
	if (flags & PMON_SNAPSHOT)
		wflags |= TOOL_SNAPSHOT;
	if (flags & PMON_RECORD)
		wflags |= TOOL_RECORD;
	if (flags & PMON_LOSSLESS)
		wflags |= TOOL_LOSSLESS;
	if (tool_hello_encode(payload, &len, wflags, name, secret) == -1)
		return pmon_fail(p, "tool name too long");
	rv = pmon_send_frame(p, MSG_TOOL_HELLO, payload, len);
	explicit_bzero(payload, sizeof(payload));
	return rv;
}

int
pmon_connect(struct pmon *p, const char *path, const char *name,
    unsigned flags)
{
	char buf[sizeof(((struct sockaddr_un *)NULL)->sun_path)];
	char secret[PMON_SECRET_LEN + 1];
	int rv;

	if (p->fd != -1 || p->rf != NULL)
		return pmon_fail(p, "already connected");
	if (flags & ~(unsigned)(PMON_SUBSCRIBE | PMON_SNAPSHOT | PMON_RECORD |
	    PMON_LOSSLESS))
		return pmon_fail(p, "unknown connect flags 0x%x", flags);
	if ((flags & (PMON_SNAPSHOT | PMON_RECORD | PMON_LOSSLESS)) &&
	    !(flags & PMON_SUBSCRIBE))
		return pmon_fail(p, "PMON_SNAPSHOT, PMON_RECORD and "
		    "PMON_LOSSLESS need PMON_SUBSCRIBE");
	if (path == NULL) {
		if (pmon_runtime_path(buf, sizeof(buf), PMON_SOCK_COORD) == -1)
			return pmon_fail(p, "PVM_TMP is too long for a "
			    "socket path");
		path = buf;
	}
	if (pmon_socket_connect(p, path, path != buf) == -1)
		return -1;
	if (pmon_peer_check(p, path) == -1 ||
	    pmon_read_secret(p, path, secret) == -1) {
		close(p->fd);
		p->fd = -1;
		return -1;
	}
	rv = pmon_send_hello(p, name, flags, secret);
	explicit_bzero(secret, sizeof(secret));
	return rv;
}

/* --- blocking mode ------------------------------------------------------- */

int
pmon_wait(struct pmon *p, int timeout_ms)
{
	struct pollfd pfd;
	int n;

	if (pmon_usable(p) == -1)
		return -1;
	if (p->fd == -1)
		return pmon_fail(p, "not connected");
	if (p->parked)
		return pmon_dispatch(p) == -1 ? -1 : 1;
	pfd.fd = p->fd;
	pfd.events = POLLIN;
	if ((n = poll(&pfd, 1, timeout_ms)) == -1) {
		if (errno == EINTR)
			return 0;
		return pmon_fail(p, "poll: %s", strerror(errno));
	}
	if (n == 0)
		return 0;
	if (pmon_dispatch(p) == -1)
		return -1;
	return 1;
}

void
pmon_set_timeout(struct pmon *p, int timeout_ms)
{
	p->timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
}

/* What is left of the handle's timeout from start (CLOCK_MONOTONIC ms). */
static int
time_left(const struct pmon *p, uint64_t start)
{
	uint64_t now = mono_ms();

	if (p->timeout_ms < 0)
		return -1;
	return now - start >= (uint64_t)p->timeout_ms ? 0 :
	    (int)((uint64_t)p->timeout_ms - (now - start));
}

int
pmon_flush(struct pmon *p)
{
	char why[sizeof(p->err)];
	uint64_t start = mono_ms();
	uint32_t id;
	int left;

	if (pmon_send_flush(p, &id) == -1)
		return -1;
	p->flush_wait = id;
	p->flush_got = 0;
	while (!p->flush_got) {
		if ((left = time_left(p, start)) == 0) {
			p->flush_wait = 0;
			errno = ETIMEDOUT;
			snprintf(p->err, sizeof(p->err), "the flush did not "
			    "complete in %d ms", p->timeout_ms);
			return -1;
		}
		if (pmon_wait(p, left) == -1) {
			if (p->flush_got)	/* BYE right after FLUSH_DONE */
				break;
			if (p->closed) {
				snprintf(why, sizeof(why), "%s", p->err);
				snprintf(p->err, sizeof(p->err), "the flush "
				    "did not complete: %.1000s", why);
			}
			p->flush_wait = 0;
			return -1;
		}
	}
	p->flush_wait = 0;
	return 0;
}

int
pmon_request(struct pmon *p, const char *text, unsigned flags, char **reply,
    size_t *len)
{
	uint8_t payload[MSG_MAX_REQUEST];
	uint32_t id = p->req_next;
	uint64_t start;
	size_t plen;
	int left;

	*reply = NULL;
	*len = 0;
	if (flags & ~(unsigned)(PMON_JSON | PMON_UNOWNED))
		return pmon_fail(p, "unknown request flags 0x%x", flags);
	if (request_encode(payload, &plen, id,
	    (flags & PMON_JSON ? REQUEST_JSON : 0) |
	    (flags & PMON_UNOWNED ? REQUEST_UNOWNED : 0), text) == -1) {
		snprintf(p->err, sizeof(p->err), "request too long");
		return -1;
	}
	if (pmon_send_frame(p, MSG_REQUEST, payload, plen) == -1)
		return -1;
	if (++p->req_next == 0)
		p->req_next = 1;
	p->req_wait = id;
	p->req_got = 0;
	start = mono_ms();
	while (!p->req_got) {
		if ((left = time_left(p, start)) == 0) {
			late_add(p, id);
			p->req_wait = 0;
			errno = ETIMEDOUT;
			snprintf(p->err, sizeof(p->err), "no reply to \"%.200s\" "
			    "in %d ms", text, p->timeout_ms);
			return -1;
		}
		if (pmon_wait(p, left) == -1 && !p->req_got) {
			p->req_wait = 0;
			return -1;
		}
	}
	p->req_wait = 0;
	if (p->req_status == REPLY_ERROR) {
		snprintf(p->err, sizeof(p->err), "%.1000s",
		    p->reply != NULL ? p->reply : "");
		free(p->reply);
		p->reply = NULL;
		p->replylen = 0;
		return -1;
	}
	if (p->reply == NULL && (p->reply = strdup("")) == NULL)
		return pmon_fail(p, "out of memory");
	*reply = p->reply;
	*len = p->replylen;
	p->reply = NULL;
	p->replylen = 0;
	return 0;
}
