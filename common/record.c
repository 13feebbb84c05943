/*
 * The record codec: one fixed header and two variable parts (record.h).
 */
#include <signal.h>
#include <string.h>

#include "record.h"
#include "wire.h"

static const char *const call_names[PMON_CALL_MAX] = {
	[PMON_CALL_NONE] = "none",
#define PMON_CALL_NAME(n) [PMON_CALL_##n] = "pvm_" #n,
	PMON_CALLS(PMON_CALL_NAME)
#undef PMON_CALL_NAME
	[PMON_CALL_LOST] = "lost",
	[PMON_CALL_BREAK] = "break",
	[PMON_CALL_HANDLER] = "handler",
	[PMON_CALL_SIGNAL] = "signal",
};

const char *
record_call_name(unsigned call)
{
	if (call >= PMON_CALL_MAX)
		return "unknown";
	return call_names[call];
}

/* Returns the call number for a name such as "pvm_send", or -1. */
int
record_call_lookup(const char *name)
{
	int i;

	for (i = 1; i < PMON_CALL_MAX; i++)
		if (strcmp(call_names[i], name) == 0)
			return i;
	return -1;
}

/*
 * Encodes r, with its group name from r->group and its peer list from
 * peers (host order), or, when peers is NULL, from the encoded list at
 * r->peers (a record that was decoded), into out, which has room for
 * record_size(r) bytes.  Returns the size written.
 */
size_t
record_encode(uint8_t *out, const struct record *r, const int32_t *peers)
{
	size_t len = record_size(r);
	uint8_t *p;
	unsigned i;

	wire_put16(out, (uint16_t)len);
	out[2] = r->call;
	out[3] = r->phase;
	wire_put64(out + 4, r->seq);
	wire_put64(out + 12, r->t_ns);
	wire_put32(out + 20, (uint32_t)r->rc);
	wire_put32(out + 24, (uint32_t)r->peer);
	wire_put32(out + 28, (uint32_t)r->tag);
	wire_put32(out + 32, (uint32_t)r->ctx);
	wire_put32(out + 36, (uint32_t)r->bytes);
	wire_put32(out + 40, (uint32_t)r->inst);
	wire_put16(out + 44, r->npeers);
	out[46] = r->glen;
	out[47] = r->flags;
	p = out + RECORD_HDR_SIZE;
	if (r->glen > 0)
		memcpy(p, r->group, r->glen);
	p += r->glen;
	if (peers == NULL) {
		if (r->npeers > 0)
			memcpy(p, r->peers, 4 * (size_t)r->npeers);
		return len;
	}
	for (i = 0; i < r->npeers; i++, p += 4)
		wire_put32(p, (uint32_t)peers[i]);
	return len;
}

/*
 * Decodes the record at in, of which avail bytes are readable.  Checks
 * every field that a consumer indexes or trusts; returns 0, or -1 with
 * *why naming the problem.
 */
int
record_decode(const uint8_t *in, size_t avail, struct record *r,
    const char **why)
{
	if (avail < RECORD_HDR_SIZE) {
		*why = "record truncated";
		return -1;
	}
	r->len = wire_get16(in);
	r->call = in[2];
	r->phase = in[3];
	r->seq = wire_get64(in + 4);
	r->t_ns = wire_get64(in + 12);
	r->rc = (int32_t)wire_get32(in + 20);
	r->peer = (int32_t)wire_get32(in + 24);
	r->tag = (int32_t)wire_get32(in + 28);
	r->ctx = (int32_t)wire_get32(in + 32);
	r->bytes = (int32_t)wire_get32(in + 36);
	r->inst = (int32_t)wire_get32(in + 40);
	r->npeers = wire_get16(in + 44);
	r->glen = in[46];
	r->flags = in[47];
	r->group = (const char *)in + RECORD_HDR_SIZE;
	r->peers = in + RECORD_HDR_SIZE + r->glen;

	if (r->len > avail) {
		*why = "record longer than its buffer";
		return -1;
	}
	if (r->npeers > RECORD_PEERS_MAX) {
		*why = "record has too many peers";
		return -1;
	}
	if (r->len != record_size(r)) {
		*why = "record length does not match its contents";
		return -1;
	}
	return record_check(r, why);
}

/*
 * What record_decode checks of a record's fields, for a record made
 * some other way (unpack_record): a known call and phase, a sequence
 * number, a group name without NUL.  Returns 0, or -1 with *why.
 */
int
record_check(const struct record *r, const char **why)
{
	if (r->call == PMON_CALL_NONE || r->call >= PMON_CALL_MAX) {
		*why = "record has an unknown call";
		return -1;
	}
	if (r->phase != PMON_BEGIN && r->phase != PMON_END) {
		*why = "record has an unknown phase";
		return -1;
	}
	if (r->seq == 0) {
		*why = "record has sequence number 0";
		return -1;
	}
	if ((r->flags & RECORD_MSGID) &&
	    (!(r->flags & RECORD_MSG) || r->inst <= 0)) {
		*why = "record has a message id without a message";
		return -1;
	}
	if (r->glen > 0 && memchr(r->group, '\0', r->glen) != NULL) {
		*why = "record group name holds a NUL";
		return -1;
	}
	return 0;
}

int32_t
record_peer(const struct record *r, unsigned i)
{
	return (int32_t)wire_get32(r->peers + 4 * (size_t)i);
}

/*
 * A pvm_kill, or the begin of a pvm_sendsig of a signal meant to end its
 * victim (SIGTERM, SIGKILL).
 */
int
record_is_fatal_signal(const struct record *r)
{
	return record_is_signal_send(r) && (r->inst == SIGTERM ||
	    r->inst == SIGKILL);
}
