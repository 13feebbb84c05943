/*
 * The packed record codec (pack.h, doc/capture.md).  Both ends run the
 * same state machine: the packer updates its state exactly as the
 * unpacker will, so the unpacker never needs more than the bytes.
 */
#include <string.h>

#include "pack.h"
#include "wire.h"

void
pack_state_init(struct pack_state *s)
{
	memset(s, 0, sizeof(*s));
}

int
pack_time_lookup(const char *name)
{
	if (strcmp(name, "exact") == 0)
		return PACK_TIME_EXACT;
	if (strcmp(name, "compact") == 0)
		return PACK_TIME_COMPACT;
	return -1;
}

const char *
pack_time_name(int mode)
{
	return mode == PACK_TIME_COMPACT ? "compact" : "exact";
}

/* Bits in d's binary representation: p2d2's log2, plus one. */
unsigned
pack_time_code(int64_t d)
{
	if (d <= 0)
		return 0;
	return 64 - (unsigned)__builtin_clzll((uint64_t)d);
}

uint64_t
pack_code_advance(unsigned code)
{
	return code == 0 ? 0 : (uint64_t)1 << (code - 1);
}

static struct pack_ref *
ref_slot(struct pack_state *s, unsigned call, unsigned phase)
{
	return &s->ref[(call * 2 + phase) % PACK_SLOTS];
}

/* What a record of call and phase is compared with when none came before. */
static const struct pack_ref ref_none = {
	.peer = -1, .tag = -1, .inst = -1
};

/* The reference a record of call and phase is packed against. */
static const struct pack_ref *
ref_get(struct pack_state *s, unsigned call, unsigned phase)
{
	const struct pack_ref *slot = ref_slot(s, call, phase);

	if (slot->used && slot->call == call && slot->phase == phase)
		return slot;
	return &ref_none;
}

static void
ref_put(struct pack_state *s, const struct record *r)
{
	struct pack_ref *slot = ref_slot(s, r->call, r->phase);

	slot->used = 1;
	slot->call = r->call;
	slot->phase = r->phase;
	slot->flags = r->flags;
	slot->rc = r->rc;
	slot->peer = r->peer;
	slot->tag = r->tag;
	slot->ctx = r->ctx;
	slot->bytes = r->bytes;
	slot->inst = r->inst;
}

/* The seven fields in PACK_F_* bit order. */
static void
fields_of(const struct record *r, int64_t v[7])
{
	v[0] = r->rc;
	v[1] = r->peer;
	v[2] = r->tag;
	v[3] = r->ctx;
	v[4] = r->bytes;
	v[5] = r->inst;
	v[6] = r->flags;
}

static void
fields_of_ref(const struct pack_ref *f, int64_t v[7])
{
	v[0] = f->rc;
	v[1] = f->peer;
	v[2] = f->tag;
	v[3] = f->ctx;
	v[4] = f->bytes;
	v[5] = f->inst;
	v[6] = f->flags;
}

/* Writes the time and moves the state's time as the decoder will. */
static uint8_t *
pack_time(struct pack_state *s, int mode, uint8_t *p, uint64_t t)
{
	int64_t d = (int64_t)(t - s->t);
	unsigned code;

	if (mode == PACK_TIME_EXACT) {
		s->t = t;
		return pack_put_varint(p, pack_zigzag(d));
	}
	code = pack_time_code(d >> PACK_TICK_SHIFT);
	s->t += pack_code_advance(code) << PACK_TICK_SHIFT;
	*p++ = (uint8_t)code;
	return p;
}

void
pack_record(struct pack_state *s, int mode, struct pack_out *o,
    const struct record *r)
{
	const struct pack_ref *ref = ref_get(s, r->call, r->phase);
	uint8_t *p = o->rec + o->nrec, *tp = o->time + o->ntime, *maskp;
	uint8_t x = 0, mask = 0;
	int64_t v[7], rv[7];
	unsigned i;
	int32_t prev;

	fields_of(r, v);
	fields_of_ref(ref, rv);
	for (i = 0; i < 7; i++)
		if (v[i] != rv[i])
			mask |= 1U << i;
	if (s->started && r->seq != s->seq + 1)
		x |= PACK_X_SKIP;
	if (!s->started)
		x |= PACK_X_ABSTIME;
	if (r->glen > 0)
		x |= PACK_X_GROUP;
	if (r->npeers > 0)
		x |= PACK_X_PEERS;
	p = pack_put_varint(p, (uint64_t)r->call * 2 + r->phase);
	maskp = p++;
	if (x != 0) {
		mask |= PACK_F_EXTRA;
		*p++ = x;
	}
	*maskp = mask;
	if (x & PACK_X_SKIP)
		p = pack_put_varint(p, r->seq - s->seq - 1);
	if (x & PACK_X_ABSTIME) {
		p = pack_put_varint(p, r->seq);
		tp = pack_put_varint(tp, r->t_ns);
		s->t = r->t_ns;
	} else
		tp = pack_time(s, mode, tp, r->t_ns);
	for (i = 0; i < 7; i++)
		if (mask & (1U << i))
			p = pack_put_varint(p, pack_zigzag(v[i] - rv[i]));
	if (x & PACK_X_GROUP) {
		*p++ = r->glen;
		memcpy(p, r->group, r->glen);
		p += r->glen;
	}
	if (x & PACK_X_PEERS) {
		p = pack_put_varint(p, r->npeers);
		for (i = 0, prev = 0; i < r->npeers; i++) {
			p = pack_put_varint(p,
			    pack_zigzag((int64_t)record_peer(r, i) - prev));
			prev = record_peer(r, i);
		}
	}
	s->started = 1;
	s->seq = r->seq;
	ref_put(s, r);
	o->nrec = (size_t)(p - o->rec);
	o->ntime = (size_t)(tp - o->time);
}

/* A field: the reference plus the difference, which must fit 32 bits. */
static int
get_field(struct wire_reader *rd, int64_t ref, int64_t lo, int64_t hi,
    int64_t *v)
{
	uint64_t z = pack_get_varint(rd);
	int64_t d = pack_unzigzag(z);

	if (rd->err || z > 0x1ffffffffULL)
		return -1;
	*v = ref + d;
	return *v < lo || *v > hi ? -1 : 0;
}

/* The time of a record after the task's first: a delta or a code. */
static int
unpack_time_next(struct pack_state *s, int mode, struct wire_reader *rd)
{
	unsigned code;

	if (mode == PACK_TIME_EXACT) {
		s->t += (uint64_t)pack_unzigzag(pack_get_varint(rd));
		return 0;
	}
	code = wire_read8(rd);
	if (code > PACK_CODE_MAX)
		return -1;
	s->t += pack_code_advance(code) << PACK_TICK_SHIFT;
	return 0;
}

static int
unpack_time(struct pack_state *s, int mode, struct wire_reader *rd,
    uint8_t x, const char **why)
{
	if (x & PACK_X_ABSTIME) {
		s->t = pack_get_varint(rd);
		return 0;
	}
	if (unpack_time_next(s, mode, rd) == -1) {
		*why = "packed record has a bad time code";
		return -1;
	}
	return 0;
}

static int
unpack_peers(struct wire_reader *rd, struct record *r, int32_t *peers,
    const char **why)
{
	uint64_t n = pack_get_varint(rd);
	int64_t v, prev = 0;
	unsigned i;

	if (rd->err || n == 0 || n > RECORD_PEERS_MAX) {
		*why = "packed record has a bad peer count";
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (get_field(rd, prev, INT32_MIN, INT32_MAX, &v) == -1) {
			*why = "packed record has a bad peer";
			return -1;
		}
		peers[i] = (int32_t)(prev = v);
	}
	r->npeers = (uint16_t)n;
	return 0;
}

/* The fields present in mask, each the one in r plus its delta. */
static int
unpack_deltas(struct wire_reader *rd, unsigned mask, struct record *r)
{
	int64_t v[7];
	unsigned i;

	fields_of(r, v);
	for (; mask != 0; mask &= mask - 1) {
		i = (unsigned)__builtin_ctz(mask);
		if (get_field(rd, v[i], i == 6 ? 0 : INT32_MIN,
		    i == 6 ? UINT8_MAX : INT32_MAX, &v[i]) == -1)
			return -1;
	}
	r->rc = (int32_t)v[0];
	r->peer = (int32_t)v[1];
	r->tag = (int32_t)v[2];
	r->ctx = (int32_t)v[3];
	r->bytes = (int32_t)v[4];
	r->inst = (int32_t)v[5];
	r->flags = (uint8_t)v[6];
	return 0;
}

static int
unpack_fields(struct wire_reader *rd, uint8_t mask, const struct pack_ref *f,
    struct record *r)
{
	r->rc = f->rc;
	r->peer = f->peer;
	r->tag = f->tag;
	r->ctx = f->ctx;
	r->bytes = f->bytes;
	r->inst = f->inst;
	r->flags = f->flags;
	/* In PACK_F_* bit order, only those present: often none. */
	mask &= (uint8_t)~PACK_F_EXTRA;
	return mask == 0 ? 0 : unpack_deltas(rd, mask, r);
}

/* The head: call and phase, masks, seq; and the time. */
static int
unpack_head(struct pack_state *s, int mode, struct wire_reader *rd,
    struct wire_reader *td, struct record *r, uint8_t *mask, uint8_t *x,
    const char **why)
{
	uint64_t cp = pack_get_varint(rd), skip = 0;

	*mask = wire_read8(rd);
	*x = (*mask & PACK_F_EXTRA) ? wire_read8(rd) : 0;
	if (rd->err || cp >= 2 * (uint64_t)PMON_CALL_MAX || cp < 2) {
		*why = "packed record has a bad call";
		return -1;
	}
	if ((*mask & PACK_F_EXTRA) && (*x == 0 || (*x & ~PACK_X_ALL))) {
		*why = "packed record has bad extras";
		return -1;
	}
	if (!s->started != !!(*x & PACK_X_ABSTIME) ||
	    (!s->started && (*x & PACK_X_SKIP))) {
		*why = "packed record: absolute time only on a task's first";
		return -1;
	}
	if (*x & PACK_X_SKIP)
		skip = pack_get_varint(rd);
	if (s->started && (skip >= UINT64_MAX - 1 - s->seq)) {
		*why = "packed record skips past the last sequence number";
		return -1;
	}
	r->call = (uint8_t)(cp / 2);
	r->phase = (uint8_t)(cp % 2);
	r->seq = s->started ? s->seq + 1 + skip : pack_get_varint(rd);
	if (r->seq == 0 || r->seq == UINT64_MAX) {
		*why = "packed record has a bad sequence number";
		return -1;
	}
	if (unpack_time(s, mode, td, *x, why) == -1)
		return -1;
	if (td->err) {
		*why = "packed records' times truncated";
		return -1;
	}
	return 0;
}

/*
 * The common record, nearly every one: the task's next (no extras), its
 * call and phase in at most two bytes, read without the general path's
 * steps for what it does not have.  Returns 1 when it unpacked r; 0 when
 * the record is of another kind, or bad, with nothing consumed and s
 * unchanged: the general path then reads it, and says what is wrong with
 * a bad one.
 */
static int
unpack_next(struct pack_state *s, int mode, struct wire_reader *rd,
    struct wire_reader *td, struct record *r)
{
	const struct pack_ref *ref;
	const uint8_t *p = rd->p + rd->off;
	size_t off = rd->off, toff = td->off, n = 1;
	uint64_t t = s->t;
	unsigned cp, mask;

	if (!s->started || rd->err || td->err || rd->len - off < 3 ||
	    s->seq >= UINT64_MAX - 1)
		return 0;
	if ((cp = p[0]) >= 0x80) {
		if (p[1] >= 0x80)
			return 0;
		cp = (cp & 0x7f) | (unsigned)p[1] << 7;
		n = 2;
	}
	mask = p[n];
	if (cp < 2 || cp >= 2 * PMON_CALL_MAX || (mask & PACK_F_EXTRA))
		return 0;
	rd->off += n + 1;
	r->call = (uint8_t)(cp / 2);
	r->phase = (uint8_t)(cp % 2);
	ref = ref_get(s, r->call, r->phase);
	if (unpack_fields(rd, (uint8_t)mask, ref, r) == -1 || rd->err ||
	    unpack_time_next(s, mode, td) == -1 || td->err) {
		rd->off = off;
		rd->err = 0;
		td->off = toff;
		td->err = 0;
		s->t = t;
		return 0;
	}
	r->seq = ++s->seq;
	r->t_ns = s->t;
	r->npeers = 0;
	r->glen = 0;
	r->group = NULL;
	r->peers = NULL;
	r->len = RECORD_HDR_SIZE;
	/* Unchanged fields against a reference it had: nothing to keep. */
	if (mask != 0 || ref == &ref_none)
		ref_put(s, r);
	return 1;
}

/* Any record, the general path. */
static int
unpack_any(struct pack_state *s, int mode, struct wire_reader *rd,
    struct wire_reader *td, uint8_t *out, struct record *r,
    const char **why)
{
	int32_t peers[RECORD_PEERS_MAX];
	uint8_t mask, x;

	/* Every field is set below: the head, the fields, these. */
	r->npeers = 0;
	r->glen = 0;
	r->group = NULL;
	r->peers = NULL;
	if (unpack_head(s, mode, rd, td, r, &mask, &x, why) == -1)
		return -1;
	if (rd->err || unpack_fields(rd, mask, ref_get(s, r->call, r->phase),
	    r) == -1) {
		*why = rd->err ? "packed record truncated" :
		    "packed record has a field out of range";
		return -1;
	}
	if (x & PACK_X_GROUP) {
		r->glen = wire_read8(rd);
		r->group = (const char *)wire_take(rd, r->glen);
		if (r->group == NULL || r->glen == 0) {
			*why = "packed record has a bad group name";
			return -1;
		}
	}
	if ((x & PACK_X_PEERS) && unpack_peers(rd, r, peers, why) == -1)
		return -1;
	if (rd->err) {
		*why = "packed record truncated";
		return -1;
	}
	r->t_ns = s->t;
	r->len = (uint16_t)record_size(r);
	/*
	 * Peers travel in host order here, and as encoded bytes in a
	 * struct record: only a record with peers goes through out.  The
	 * others, nearly all, are complete as they are; unpack_head checked
	 * what record_check would of all but a group name.
	 */
	if (r->npeers > 0) {
		record_encode(out, r, peers);
		if (record_decode(out, r->len, r, why) == -1)
			return -1;
	} else if (r->glen > 0 && record_check(r, why) == -1)
		return -1;
	s->started = 1;
	s->seq = r->seq;
	ref_put(s, r);
	return 0;
}

int
unpack_record(struct pack_state *s, int mode, struct wire_reader *rd,
    struct wire_reader *td, uint8_t *out, struct record *r,
    const char **why)
{
	if (unpack_next(s, mode, rd, td, r))
		return 0;
	return unpack_any(s, mode, rd, td, out, r, why);
}
