/*
 * Recording format 2's EVENT codec (recpack.h, doc/recording.md).  The
 * writer and the reader run the same state machine over the same
 * fields, so the reader needs nothing but the bytes; all arithmetic is
 * unsigned, modulo each field's width.
 */
#include <string.h>

#include "recpack.h"

/* Where each field of an EVENT payload is (doc/protocol.md, record.h). */
#define O_TID		0
#define O_FLAGS		4
#define O_MATCH_TID	5
#define O_MATCH_SEQ	9
#define O_TCORR		17
#define O_LEN		(EVENT_HDR_SIZE + 0)
#define O_CALL		(EVENT_HDR_SIZE + 2)
#define O_PHASE		(EVENT_HDR_SIZE + 3)
#define O_SEQ		(EVENT_HDR_SIZE + 4)
#define O_TNS		(EVENT_HDR_SIZE + 12)
#define O_FIELDS	(EVENT_HDR_SIZE + 20)	/* rc, peer, tag, ctx, bytes,
						   inst: six i32 in a row */
#define O_NPEERS	(EVENT_HDR_SIZE + 44)
#define O_GLEN		(EVENT_HDR_SIZE + 46)
#define O_RFLAGS	(EVENT_HDR_SIZE + 47)
#define NFIELDS		6

/* The reference before a call and phase has had an event. */
static const struct recpack_slot slot_none = {
	.len = RECORD_HDR_SIZE,
	.f = { 0, UINT32_MAX, UINT32_MAX, 0, 0, UINT32_MAX }
};

void
recpack_task_init(struct recpack_task *t, int32_t tid)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
}

int
recpack_ok(const uint8_t *payload, size_t len, size_t *tail)
{
	if (len < RECPACK_FIXED || (int32_t)wire_get32(payload + O_TID) <= 0 ||
	    payload[O_PHASE] > 1)
		return 0;
	*tail = payload[O_GLEN] + 4 * (size_t)wire_get16(payload + O_NPEERS);
	return len == RECPACK_FIXED + *tail;
}

/* The task's slot for call and phase, reset when another held it. */
static struct recpack_slot *
slot_of(struct recpack_task *t, uint8_t call, uint8_t phase)
{
	struct recpack_slot *s = &t->slot[(call * 2u + phase) % RECPACK_SLOTS];

	if (!s->used || s->call != call || s->phase != phase) {
		*s = slot_none;
		s->used = 1;
		s->call = call;
		s->phase = phase;
	}
	return s;
}

/*
 * Bytes A and B (A in the high byte): what differs from the slot and the
 * task; fm has a bit for each of the six fields that differs.
 */
static unsigned
changes(const struct recpack_task *t, const struct recpack_slot *s,
    const uint8_t *pl, unsigned fm)
{
	unsigned a = pl[O_PHASE] | (fm & 0x1f) << 2, b = fm >> 5;

	if (wire_get64(pl + O_SEQ) != t->seq + 1)
		a |= RECPACK_A_SEQ;
	if (pl[O_RFLAGS] != s->rflags)
		b |= RECPACK_B_RFLAGS;
	if (pl[O_FLAGS] != s->flags)
		b |= RECPACK_B_FLAGS;
	if (wire_get32(pl + O_MATCH_TID) != s->match_tid)
		b |= RECPACK_B_MATCH_TID;
	if (wire_get64(pl + O_MATCH_SEQ) != s->match_seq)
		b |= RECPACK_B_MATCH_SEQ;
	if (wire_get16(pl + O_LEN) != s->len || pl[O_GLEN] != s->glen ||
	    wire_get16(pl + O_NPEERS) != s->npeers)
		b |= RECPACK_B_SHAPE;
	if (wire_get64(pl + O_TCORR) - wire_get64(pl + O_TNS) != t->tcorr)
		b |= RECPACK_B_TCORR;
	return b ? (a | RECPACK_A_B) << 8 | b : a << 8;
}

/* The fields B names, after the six, onto p; the slot takes them. */
static uint8_t *
put_more(struct recpack_slot *s, unsigned b, const uint8_t *pl, uint8_t *p)
{
	uint32_t match_tid = wire_get32(pl + O_MATCH_TID);
	uint64_t match_seq = wire_get64(pl + O_MATCH_SEQ);

	if (b & RECPACK_B_RFLAGS)
		*p++ = s->rflags = pl[O_RFLAGS];
	if (b & RECPACK_B_FLAGS)
		*p++ = s->flags = pl[O_FLAGS];
	if (b & RECPACK_B_MATCH_TID)
		p = pack_put_varint(p, pack_zigzag((int64_t)(int32_t)match_tid -
		    (int32_t)s->match_tid));
	if (b & RECPACK_B_MATCH_SEQ)
		p = pack_put_varint(p, pack_zigzag((int64_t)(match_seq -
		    s->match_seq)));
	if (b & RECPACK_B_SHAPE) {
		memcpy(p, pl + O_LEN, 2);
		memcpy(p + 2, pl + O_NPEERS, 3);	/* npeers, glen */
		p += 5;
		s->len = wire_get16(pl + O_LEN);
		s->npeers = wire_get16(pl + O_NPEERS);
		s->glen = pl[O_GLEN];
	}
	s->match_tid = match_tid;
	s->match_seq = match_seq;
	return p;
}

void
recpack_put(struct recpack_task *t, const uint8_t *pl, size_t tail,
    struct pack_out *o)
{
	struct recpack_slot *s = slot_of(t, pl[O_CALL], pl[O_PHASE]);
	uint8_t *p = o->rec + o->nrec, *tp = o->time + o->ntime;
	uint64_t seq = wire_get64(pl + O_SEQ), t_ns = wire_get64(pl + O_TNS);
	uint64_t tcorr = wire_get64(pl + O_TCORR) - t_ns;
	uint32_t f[NFIELDS];
	unsigned ab, fm = 0, m, i;

	for (i = 0; i < NFIELDS; i++) {
		f[i] = wire_get32(pl + O_FIELDS + 4 * i);
		fm |= (unsigned)(f[i] != s->f[i]) << i;
	}
	ab = changes(t, s, pl, fm);
	*p++ = pl[O_CALL];
	*p++ = (uint8_t)(ab >> 8);
	if (ab & (RECPACK_A_B << 8))
		*p++ = (uint8_t)ab;
	if (ab & (RECPACK_A_SEQ << 8))
		p = pack_put_varint(p, seq - t->seq - 1);
	for (m = fm; m != 0; m &= m - 1) {
		i = (unsigned)__builtin_ctz(m);
		p = pack_put_varint(p, pack_zigzag((int64_t)(int32_t)f[i] -
		    (int32_t)s->f[i]));
	}
	memcpy(s->f, f, sizeof(f));
	p = put_more(s, ab & 0xff, pl, p);
	if (tail > 0)
		memcpy(p, pl + RECPACK_FIXED, tail);
	tp = pack_put_varint(tp, pack_zigzag((int64_t)(t_ns - t->t_ns)));
	if (ab & RECPACK_B_TCORR)
		tp = pack_put_varint(tp, pack_zigzag((int64_t)(tcorr -
		    t->tcorr)));
	t->seq = seq;
	t->t_ns = t_ns;
	t->tcorr = tcorr;
	o->nrec = (size_t)(p + tail - o->rec);
	o->ntime = (size_t)(tp - o->time);
}

/* A zigzag varint change, as an unsigned addend. */
static uint64_t
get_change(struct wire_reader *r)
{
	return (uint64_t)pack_unzigzag(pack_get_varint(r));
}

/* The fields A and B name, into the slot and the task. */
static void
get_fields(struct recpack_task *t, struct recpack_slot *s, unsigned a,
    unsigned b, struct wire_reader *m, struct wire_reader *tm)
{
	unsigned i, present = (a >> 2 & 0x1f) | (b & RECPACK_B_INST) << 5;

	t->seq += 1 + ((a & RECPACK_A_SEQ) ? pack_get_varint(m) : 0);
	for (i = 0; i < NFIELDS; i++)
		if (present & (1u << i))
			s->f[i] += (uint32_t)get_change(m);
	if (b & RECPACK_B_RFLAGS)
		s->rflags = wire_read8(m);
	if (b & RECPACK_B_FLAGS)
		s->flags = wire_read8(m);
	if (b & RECPACK_B_MATCH_TID)
		s->match_tid += (uint32_t)get_change(m);
	if (b & RECPACK_B_MATCH_SEQ)
		s->match_seq += get_change(m);
	if (b & RECPACK_B_SHAPE) {
		s->len = wire_read16(m);
		s->npeers = wire_read16(m);
		s->glen = wire_read8(m);
	}
	t->t_ns += get_change(tm);
	if (b & RECPACK_B_TCORR)
		t->tcorr += get_change(tm);
}

/* The fixed part of the EVENT from the task and the slot. */
static void
build(const struct recpack_task *t, const struct recpack_slot *s,
    uint8_t *out)
{
	unsigned i;

	wire_put32(out + O_TID, (uint32_t)t->tid);
	out[O_FLAGS] = s->flags;
	wire_put32(out + O_MATCH_TID, s->match_tid);
	wire_put64(out + O_MATCH_SEQ, s->match_seq);
	wire_put64(out + O_TCORR, t->t_ns + t->tcorr);
	wire_put16(out + O_LEN, s->len);
	out[O_CALL] = s->call;
	out[O_PHASE] = s->phase;
	wire_put64(out + O_SEQ, t->seq);
	wire_put64(out + O_TNS, t->t_ns);
	for (i = 0; i < NFIELDS; i++)
		wire_put32(out + O_FIELDS + 4 * i, s->f[i]);
	wire_put16(out + O_NPEERS, s->npeers);
	out[O_GLEN] = s->glen;
	out[O_RFLAGS] = s->rflags;
}

int
recpack_get(struct recpack_task *t, struct wire_reader *m,
    struct wire_reader *tm, uint8_t *out, size_t *len, const char **why)
{
	struct recpack_slot *s;
	const uint8_t *tail;
	unsigned call = wire_read8(m), a = wire_read8(m), b = 0;
	size_t n;

	if (a & RECPACK_A_B)
		b = wire_read8(m);
	if (m->err || (b & ~RECPACK_B_ALL) || ((a & RECPACK_A_B) && b == 0)) {
		*why = "a packed EVENT with bad field bits";
		return -1;
	}
	s = slot_of(t, (uint8_t)call, a & RECPACK_A_PHASE);
	get_fields(t, s, a, b, m, tm);
	n = s->glen + 4 * (size_t)s->npeers;
	if ((tail = wire_take(m, n)) == NULL || m->err || tm->err) {
		*why = "a packed EVENT cut short";
		return -1;
	}
	build(t, s, out);
	memcpy(out + RECPACK_FIXED, tail, n);
	*len = RECPACK_FIXED + n;
	return 0;
}
