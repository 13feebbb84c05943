/*
 * The messages between a tool and the coordinator (tool_msg.h): each
 * one's encoder and strict decoder.
 */
#include <string.h>

#include "tool_msg.h"
#include "wire.h"

/* --- encoders ----------------------------------------------------------- */

/* payload has room for MSG_MAX_TOOL_HELLO bytes. */
int
tool_hello_encode(uint8_t *payload, size_t *len, uint32_t flags,
    const char *name, const char *secret)
{
	uint8_t *q;

	if (4 + wire_strsize(name) + wire_strsize(secret) > MSG_MAX_TOOL_HELLO)
		return -1;
	wire_put32(payload, flags);
	q = wire_putstr(payload + 4, name);
	q = wire_putstr(q, secret);
	*len = (size_t)(q - payload);
	return 0;
}

/* payload has room for MSG_MAX_REQUEST bytes. */
int
request_encode(uint8_t *payload, size_t *len, uint32_t id, uint32_t flags,
    const char *text)
{
	if (8 + wire_strsize(text) > MSG_MAX_REQUEST)
		return -1;
	wire_put32(payload, id);
	wire_put32(payload + 4, flags);
	*len = (size_t)(wire_putstr(payload + 8, text) - payload);
	return 0;
}

/* A string cut to max bytes. */
static uint8_t *
put_str_cut(uint8_t *p, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max)
		n = max;
	wire_put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return p + 2 + n;
}

/*
 * Encodes ti into payload, which has room for MSG_MAX_TASK_INFO bytes:
 * a host name longer than TASK_INFO_HOST_MAX, and a program name longer
 * than the rest of the room, are cut.  Returns the payload's length.
 */
size_t
task_info_encode(uint8_t *payload, const struct task_info *ti)
{
	uint8_t *p = payload;

	wire_put32(p, (uint32_t)ti->tid);
	wire_put32(p + 4, (uint32_t)ti->parent);
	wire_put32(p + 8, ti->pid);
	wire_put64(p + 12, ti->spawn_seq);
	p = put_str_cut(p + TASK_INFO_FIXED, ti->host, TASK_INFO_HOST_MAX);
	p = put_str_cut(p, ti->program,
	    MSG_MAX_TASK_INFO - (size_t)(p - payload) - 2);
	return (size_t)(p - payload);
}

/* Decodes a TASK_INFO payload; -1 with *why when it is not one. */
int
task_info_decode(const uint8_t *payload, size_t len, struct task_info *ti,
    const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, payload, len);
	ti->tid = (int32_t)wire_read32(&r);
	ti->parent = (int32_t)wire_read32(&r);
	ti->pid = wire_read32(&r);
	ti->spawn_seq = wire_read64(&r);
	wire_readstr(&r, ti->host, sizeof(ti->host));
	wire_readstr(&r, ti->program, sizeof(ti->program));
	if (r.err || r.off != len) {
		*why = "fields do not match the payload length";
		return -1;
	}
	if (ti->tid <= 0) {
		*why = "invalid tid";
		return -1;
	}
	return 0;
}

void
reply_hdr_encode(uint8_t *out, uint32_t id, uint8_t status, int more)
{
	wire_put32(out, id);
	out[4] = status;
	out[5] = more != 0;
}

/* payload has room for 2 + REASON_MAX bytes; returns the length. */
size_t
reason_encode(uint8_t *payload, const char *text)
{
	size_t n = strnlen(text, REASON_MAX);

	wire_put16(payload, (uint16_t)n);
	memcpy(payload + 2, text, n);
	return 2 + n;
}

/* --- decoders ----------------------------------------------------------- */

int
reply_hdr_decode(const uint8_t *p, size_t len, uint32_t *id,
    uint8_t *status, int *more, const char **why)
{
	if (len < REPLY_HDR_SIZE) {
		*why = "REPLY truncated";
		return -1;
	}
	*id = wire_get32(p);
	*status = p[4];
	*more = p[5];
	if (*status > REPLY_ERROR || p[5] > 1) {
		*why = "bad status";
		return -1;
	}
	return 0;
}

int
reason_decode(const uint8_t *p, size_t len, char *text, size_t size,
    const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	wire_readstr(&r, text, size);
	if (proto_reader_done(&r, why) == -1) {
		*why = "bad string";
		return -1;
	}
	return 0;
}

int
tool_hello_decode(const uint8_t *p, size_t len,
    struct tool_hello *h, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	h->flags = wire_read32(&r);
	wire_readstr(&r, h->name, sizeof(h->name));
	if (proto_read_secret(&r, h->secret, why) == -1 ||
	    proto_reader_done(&r, why) == -1)
		return -1;
	if (h->flags & ~(uint32_t)(TOOL_SUBSCRIBE | TOOL_SNAPSHOT |
	    TOOL_RECORD | TOOL_LOSSLESS)) {
		*why = "tool hello has unknown flags";
		return -1;
	}
	return 0;
}

int
request_decode(const uint8_t *p, size_t len, struct request_msg *req,
    const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, p, len);
	req->id = wire_read32(&r);
	req->flags = wire_read32(&r);
	wire_readstr(&r, req->text, sizeof(req->text));
	if (proto_reader_done(&r, why) == -1)
		return -1;
	if (req->id == 0) {
		*why = "request id 0 (REPLY id 0 is the snapshot)";
		return -1;
	}
	if (req->flags & ~(uint32_t)(REQUEST_JSON | REQUEST_UNOWNED)) {
		*why = "request has unknown flags";
		return -1;
	}
	return 0;
}
