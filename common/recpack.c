/*
 * Recording format 2's EVENT codec (recpack.h, doc/recording.md).  The
 * writer and the reader run the same state machine over the same
 * bytes, so the reader needs nothing but the file; all arithmetic is
 * unsigned, modulo each field's width.  A slot keeps the payload bytes
 * it packs against as they are: an event like the one before it is
 * found equal by three comparisons of bytes, and rebuilt by copies.
 */
#include <string.h>

#include "recpack.h"

/* Where each field of an EVENT payload is (doc/protocol.md, record.h). */
#define O_TID		0
#define O_HDR		4	/* flags, match_tid, match_seq: slot hdr */
#define O_TCORR		17
#define O_LEN		(EVENT_HDR_SIZE + 0)
#define O_CALL		(EVENT_HDR_SIZE + 2)
#define O_PHASE		(EVENT_HDR_SIZE + 3)
#define O_SEQ		(EVENT_HDR_SIZE + 4)
#define O_TNS		(EVENT_HDR_SIZE + 12)
#define O_REC		(EVENT_HDR_SIZE + 20)	/* rc...flags: slot rec */
/* In a slot's hdr and rec. */
#define H_FLAGS		0
#define H_MATCH_TID	1
#define H_MATCH_SEQ	5
#define R_NPEERS	24	/* then glen */
#define R_GLEN		26
#define R_RFLAGS	27
#define NFIELDS		6	/* i32 rc, peer, tag, ctx, bytes, inst */

/*
 * The reference before a call and phase has had an event: no flags or
 * match, a record of 48 bytes, rc, ctx and bytes 0, peer, tag and inst
 * -1, no group or peers.
 */
static const struct recpack_slot slot_none = {
	.len = { 0, RECORD_HDR_SIZE },
	.rec = { 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff }
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
	*tail = payload[O_REC + R_GLEN] + 4 * (size_t)wire_get16(payload +
	    O_REC + R_NPEERS);
	return len == RECPACK_FIXED + *tail;
}

/*
 * The task's slot for call and phase; a new one, fresh, from the round
 * robin (taken from the call and phase that held it).
 */
static inline struct recpack_slot *
slot_of(struct recpack_task *t, uint8_t call, uint8_t phase)
{
	unsigned cp = call * 2u + phase;
	struct recpack_slot *s;

	if (t->map[cp] != 0)
		return &t->slot[t->map[cp] - 1];
	s = &t->slot[t->next];
	if (s->used)
		t->map[s->call * 2u + s->phase] = 0;
	*s = slot_none;
	s->used = 1;
	s->call = call;
	s->phase = phase;
	t->map[cp] = (uint8_t)(t->next + 1);
	t->next = (uint8_t)((t->next + 1) % RECPACK_SLOTS);
	return s;
}

/* Which of the six fields differ from the slot's, a bit each. */
static unsigned
fields_changed(const struct recpack_slot *s, const uint8_t *pl)
{
	unsigned fm = 0, i;

	if (memcmp(pl + O_REC, s->rec, 4 * NFIELDS) == 0)
		return 0;
	for (i = 0; i < NFIELDS; i++)
		if (memcmp(pl + O_REC + 4 * i, s->rec + 4 * i, 4) != 0)
			fm |= 1u << i;
	return fm;
}

/* Byte B's bits besides INST and TCORR: flags, match, shape. */
static unsigned
more_changed(const struct recpack_slot *s, const uint8_t *pl)
{
	unsigned b = 0;

	if (pl[O_REC + R_RFLAGS] != s->rec[R_RFLAGS])
		b |= RECPACK_B_RFLAGS;
	if (memcmp(pl + O_HDR, s->hdr, sizeof(s->hdr)) != 0) {
		if (pl[O_HDR + H_FLAGS] != s->hdr[H_FLAGS])
			b |= RECPACK_B_FLAGS;
		if (memcmp(pl + O_HDR + H_MATCH_TID, s->hdr + H_MATCH_TID, 4))
			b |= RECPACK_B_MATCH_TID;
		if (memcmp(pl + O_HDR + H_MATCH_SEQ, s->hdr + H_MATCH_SEQ, 8))
			b |= RECPACK_B_MATCH_SEQ;
	}
	if (memcmp(pl + O_LEN, s->len, 2) != 0 ||
	    memcmp(pl + O_REC + R_NPEERS, s->rec + R_NPEERS, 3) != 0)
		b |= RECPACK_B_SHAPE;
	return b;
}

/* A change of a 32-bit field, as the reader adds it back. */
static inline uint8_t *
put_change32(uint8_t *p, const uint8_t *now, const uint8_t *was)
{
	return pack_put_varint(p, pack_zigzag((int64_t)(int32_t)wire_get32(now)
	    - (int32_t)wire_get32(was)));
}

/* The fields B names, after the six. */
static uint8_t *
put_more(const struct recpack_slot *s, unsigned b, const uint8_t *pl,
    uint8_t *p)
{
	if (b & RECPACK_B_RFLAGS)
		*p++ = pl[O_REC + R_RFLAGS];
	if (b & RECPACK_B_FLAGS)
		*p++ = pl[O_HDR + H_FLAGS];
	if (b & RECPACK_B_MATCH_TID)
		p = put_change32(p, pl + O_HDR + H_MATCH_TID,
		    s->hdr + H_MATCH_TID);
	if (b & RECPACK_B_MATCH_SEQ)
		p = pack_put_varint(p, pack_zigzag((int64_t)(wire_get64(pl +
		    O_HDR + H_MATCH_SEQ) - wire_get64(s->hdr + H_MATCH_SEQ))));
	if (b & RECPACK_B_SHAPE) {
		memcpy(p, pl + O_LEN, 2);
		memcpy(p + 2, pl + O_REC + R_NPEERS, 3);
		p += 5;
	}
	return p;
}

/* Whether every byte the slot keeps is the payload's. */
static inline int
slot_same(const struct recpack_slot *s, const uint8_t *pl)
{
	return memcmp(pl + O_REC, s->rec, sizeof(s->rec)) == 0 &&
	    memcmp(pl + O_HDR, s->hdr, sizeof(s->hdr)) == 0 &&
	    memcmp(pl + O_LEN, s->len, sizeof(s->len)) == 0;
}

/* The fields that differ onto p, and the slot takes the payload's. */
static uint8_t *
put_changes(struct recpack_slot *s, unsigned fm, unsigned b,
    const uint8_t *pl, uint8_t *p)
{
	unsigned i;

	for (; fm != 0; fm &= fm - 1) {
		i = 4 * (unsigned)__builtin_ctz(fm);
		p = put_change32(p, pl + O_REC + i, s->rec + i);
	}
	p = put_more(s, b, pl, p);
	memcpy(s->hdr, pl + O_HDR, sizeof(s->hdr));
	memcpy(s->len, pl + O_LEN, sizeof(s->len));
	memcpy(s->rec, pl + O_REC, sizeof(s->rec));
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
	unsigned a = pl[O_PHASE], b = 0, fm = 0, same = slot_same(s, pl);

	if (!same) {
		fm = fields_changed(s, pl);
		b = fm >> 5 | more_changed(s, pl);
		a |= (fm & 0x1f) << 2;
	}
	if (tcorr != t->tcorr)
		b |= RECPACK_B_TCORR;
	if (seq != t->seq + 1)
		a |= RECPACK_A_SEQ;
	*p++ = pl[O_CALL];
	*p++ = (uint8_t)(b ? a | RECPACK_A_B : a);
	if (b)
		*p++ = (uint8_t)b;
	if (a & RECPACK_A_SEQ)
		p = pack_put_varint(p, seq - t->seq - 1);
	if (!same)
		p = put_changes(s, fm, b, pl, p);
	if (tail > 0)
		memcpy(p, pl + RECPACK_FIXED, tail);
	tp = pack_put_varint(tp, pack_zigzag((int64_t)(t_ns - t->t_ns)));
	if (b & RECPACK_B_TCORR)
		tp = pack_put_varint(tp, pack_zigzag((int64_t)(tcorr -
		    t->tcorr)));
	t->seq = seq;
	t->t_ns = t_ns;
	t->tcorr = tcorr;
	o->nrec = (size_t)(p + tail - o->rec);
	o->ntime = (size_t)(tp - o->time);
}

/* A zigzag varint change, as an unsigned addend. */
static inline uint64_t
get_change(struct wire_reader *r)
{
	return (uint64_t)pack_unzigzag(pack_get_varint(r));
}

/* Adds a change to the 32-bit field at p. */
static inline void
add_change32(uint8_t *p, struct wire_reader *r)
{
	wire_put32(p, wire_get32(p) + (uint32_t)get_change(r));
}

/* The fields byte B names, after the six, into the slot. */
static void
get_more(struct recpack_slot *s, unsigned b, struct wire_reader *m)
{
	const uint8_t *shape;

	if (b & RECPACK_B_RFLAGS)
		s->rec[R_RFLAGS] = wire_read8(m);
	if (b & RECPACK_B_FLAGS)
		s->hdr[H_FLAGS] = wire_read8(m);
	if (b & RECPACK_B_MATCH_TID)
		add_change32(s->hdr + H_MATCH_TID, m);
	if (b & RECPACK_B_MATCH_SEQ)
		wire_put64(s->hdr + H_MATCH_SEQ, wire_get64(s->hdr +
		    H_MATCH_SEQ) + get_change(m));
	if ((b & RECPACK_B_SHAPE) && (shape = wire_take(m, 5)) != NULL) {
		memcpy(s->len, shape, 2);
		memcpy(s->rec + R_NPEERS, shape + 2, 3);
	}
}

/* The fixed part of the EVENT from the task and the slot. */
static void
build(const struct recpack_task *t, const struct recpack_slot *s,
    uint8_t *out)
{
	wire_put32(out + O_TID, (uint32_t)t->tid);
	memcpy(out + O_HDR, s->hdr, sizeof(s->hdr));
	wire_put64(out + O_TCORR, t->t_ns + t->tcorr);
	memcpy(out + O_LEN, s->len, sizeof(s->len));
	out[O_CALL] = s->call;
	out[O_PHASE] = s->phase;
	wire_put64(out + O_SEQ, t->seq);
	wire_put64(out + O_TNS, t->t_ns);
	memcpy(out + O_REC, s->rec, sizeof(s->rec));
}

int
recpack_get(struct recpack_task *t, struct wire_reader *m,
    struct wire_reader *tm, uint8_t *out, size_t *len, const char **why)
{
	struct recpack_slot *s;
	const uint8_t *tail;
	unsigned call = wire_read8(m), a = wire_read8(m), b = 0, i;
	size_t n;

	if (a & RECPACK_A_B)
		b = wire_read8(m);
	if (m->err || (b & ~RECPACK_B_ALL) || ((a & RECPACK_A_B) && b == 0)) {
		*why = "a packed EVENT with bad field bits";
		return -1;
	}
	s = slot_of(t, (uint8_t)call, a & RECPACK_A_PHASE);
	t->seq += 1 + ((a & RECPACK_A_SEQ) ? pack_get_varint(m) : 0);
	for (i = 0; i < NFIELDS; i++)
		if ((i < 5 ? a & (4u << i) : b & RECPACK_B_INST) != 0)
			add_change32(s->rec + 4 * i, m);
	get_more(s, b, m);
	t->t_ns += get_change(tm);
	if (b & RECPACK_B_TCORR)
		t->tcorr += get_change(tm);
	n = s->rec[R_GLEN] + 4 * (size_t)wire_get16(s->rec + R_NPEERS);
	if ((tail = wire_take(m, n)) == NULL || m->err || tm->err) {
		*why = "a packed EVENT cut short";
		return -1;
	}
	build(t, s, out);
	memcpy(out + RECPACK_FIXED, tail, n);
	*len = RECPACK_FIXED + n;
	return 0;
}
