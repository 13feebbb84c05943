/*
 * Frames the coordinator sends: events and task descriptions to tools,
 * flush, shutdown, control and breakpoint requests to agents, errors to
 * anyone.
 */
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>

#include "coord.h"
#include "record.h"
#include "ring.h"
#include "wire.h"


/*
 * Encodes one EVENT frame (header included) into buf, the record from its
 * decoded fields.  Returns its size, or 0 if it does not fit; a record is
 * at most RECORD_MAX_SIZE bytes, so FRAME_HDR_SIZE + EVENT_HDR_SIZE +
 * RECORD_MAX_SIZE always fits.
 */
size_t
coord_frame_event(uint8_t *buf, size_t size, const struct order_event *ev)
{
	struct event_hdr h = { .tid = ev->tid, .flags = ev->flags,
	    .match_tid = ev->match_tid, .match_seq = ev->match_seq,
	    .t_corr = ev->t_corr };
	size_t len = EVENT_HDR_SIZE + record_size(ev->rec);
	uint8_t *p = buf + FRAME_HDR_SIZE;

	if (FRAME_HDR_SIZE + len > size)
		return 0;
	frame_hdr_encode(buf, MSG_EVENT, (uint32_t)len);
	event_hdr_encode(p, &h);
	record_encode(p + EVENT_HDR_SIZE, ev->rec, NULL);
	return FRAME_HDR_SIZE + len;
}

void
coord_frame_u32(struct evbuffer *out, uint8_t type, uint32_t v)
{
	uint8_t buf[FRAME_HDR_SIZE + 4];

	frame_hdr_encode(buf, type, 4);
	wire_put32(buf + FRAME_HDR_SIZE, v);
	evbuffer_add(out, buf, sizeof(buf));
}

void
coord_frame_empty(struct evbuffer *out, uint8_t type)
{
	uint8_t buf[FRAME_HDR_SIZE];

	frame_hdr_encode(buf, type, 0);
	evbuffer_add(out, buf, sizeof(buf));
}

/* BYE and ERROR: one string, cut to what the message allows. */
void
coord_frame_text(struct evbuffer *out, uint8_t type, const char *text)
{
	uint8_t buf[FRAME_HDR_SIZE + 2 + REASON_MAX];
	size_t n;

	n = reason_encode(buf + FRAME_HDR_SIZE, text);
	frame_hdr_encode(buf, type, (uint32_t)n);
	evbuffer_add(out, buf, FRAME_HDR_SIZE + n);
}

/*
 * Encodes a TASK_INFO frame into buf, which holds COORD_TASK_INFO_MAX
 * bytes.  A host or program name too long for the message is cut.
 * Returns the frame size.
 */
size_t
coord_frame_task_info(uint8_t *buf, const struct coord_task *t)
{
	struct task_info ti = { .tid = t->tid, .parent = t->parent_tid,
	    .pid = t->pid, .spawn_seq = t->spawn_seq };
	size_t len;

	snprintf(ti.host, sizeof(ti.host), "%s", t->host);
	snprintf(ti.program, sizeof(ti.program), "%s", t->program);
	len = task_info_encode(buf + FRAME_HDR_SIZE, &ti);
	frame_hdr_encode(buf, MSG_TASK_INFO, (uint32_t)len);
	return FRAME_HDR_SIZE + len;
}

/*
 * A REPLY: the body in as many frames as it takes, each but the last
 * with more set.
 */
void
coord_frame_reply(struct evbuffer *out, uint32_t id, uint8_t status,
    const char *body, size_t len)
{
	const size_t room = PROTO_MAX_PAYLOAD - REPLY_HDR_SIZE;
	uint8_t hdr[FRAME_HDR_SIZE + REPLY_HDR_SIZE];
	size_t n;

	do {
		n = len > room ? room : len;
		frame_hdr_encode(hdr, MSG_REPLY,
		    (uint32_t)(REPLY_HDR_SIZE + n));
		reply_hdr_encode(hdr + FRAME_HDR_SIZE, id, status, len > n);
		evbuffer_add(out, hdr, sizeof(hdr));
		evbuffer_add(out, body, n);
		body += n;
		len -= n;
	} while (len > 0);
}

/* A frame whose payload is one body (PROBLEM), cut to what it allows. */
void
coord_frame_body(struct evbuffer *out, uint8_t type, const char *body,
    size_t len)
{
	uint8_t hdr[FRAME_HDR_SIZE];

	if (len > PROTO_MAX_PAYLOAD)
		len = PROTO_MAX_PAYLOAD;
	frame_hdr_encode(hdr, type, (uint32_t)len);
	evbuffer_add(out, hdr, sizeof(hdr));
	evbuffer_add(out, body, len);
}

/*
 * CONTROL: op (CONTROL_*) on n tasks of one agent.  n is at most 65535
 * (the caller checks; more are cut).
 */
void
coord_frame_control(struct evbuffer *out, uint32_t id, uint8_t op,
    const int32_t *tids, size_t n)
{
	uint8_t hdr[FRAME_HDR_SIZE + CONTROL_HDR_SIZE], tid[4];
	size_t i;

	if (n > UINT16_MAX)
		n = UINT16_MAX;
	frame_hdr_encode(hdr, MSG_CONTROL, (uint32_t)(CONTROL_HDR_SIZE +
	    4 * n));
	control_hdr_encode(hdr + FRAME_HDR_SIZE, id, op, (uint16_t)n);
	evbuffer_add(out, hdr, sizeof(hdr));
	for (i = 0; i < n; i++) {
		wire_put32(tid, (uint32_t)tids[i]);
		evbuffer_add(out, tid, sizeof(tid));
	}
}

/*
 * BREAKPOINTS: the whole table, n entries of at most BREAKPOINTS_MAX
 * (the caller checks; more are cut: a task could not hold them).
 */
void
coord_frame_breakpoints(struct evbuffer *out, const struct breakpoint *bps,
    size_t n)
{
	uint8_t buf[FRAME_HDR_SIZE + BREAKPOINTS_PAYLOAD_MAX];
	size_t len;

	len = breakpoints_encode(buf + FRAME_HDR_SIZE, bps, n);
	frame_hdr_encode(buf, MSG_BREAKPOINTS, (uint32_t)len);
	evbuffer_add(out, buf, FRAME_HDR_SIZE + len);
}
