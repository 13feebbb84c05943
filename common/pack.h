/*
 * Packed records: how an agent ships a task's records to the coordinator
 * (TASK_PACKED, doc/capture.md).  The ring keeps record.h's encoding;
 * packing rewrites each record against what both ends remember of the
 * task's earlier records on this connection, so that a communication
 * pattern that repeats packs to the same bytes every time and the
 * connection's deflate stream reduces it to almost nothing:
 *
 *	- the sequence number is implicit (previous + 1); a gap the ring
 *	  left (dropped records) is sent as an explicit skip;
 *	- the fields rc, peer, tag, ctx, bytes, inst and flags are sent only
 *	  when they differ from the previous record of the same call and
 *	  phase, as a zigzag varint of the difference;
 *	- the group name and the peer list only when present;
 *	- the time, in a column of its own after the frame's records (so
 *	  that the records repeat even where the times do not), in one of
 *	  two encodings chosen per run:
 *	  exact: the signed nanosecond delta from the previous record's time;
 *	  compact: p2d2's self-correcting log2 delta (002 §2.2), counted in
 *	  ticks of 2^PACK_TICK_SHIFT ns: one code k, the number of bits of
 *	  the ticks since the decoder's own reconstructed previous time, and
 *	  the decoder's time advances by 2^(k-1) ticks (k = 0: not at all).
 *	  The reconstructed time is never ahead of the real one (for a
 *	  clock that does not step back) and its lag e obeys e_i < T or
 *	  2 e_i < (t_i - t_{i-1}) + e_{i-1} + T, T the tick: it halves at
 *	  every record instead of accumulating (doc/capture.md).
 *
 * One packed record:
 *
 *	varint	call * 2 + phase
 *	u8	fields present (PACK_F_*)
 *	u8	extras (PACK_X_*), only with PACK_F_EXTRA
 *	varint	seq skip (PACK_X_SKIP): records the ring dropped before it,
 *		or with PACK_X_ABSTIME (the task's first record on the
 *		connection) its seq
 *	zigzag varints, one per field present, in PACK_F_* bit order
 *	u8 glen, glen bytes (PACK_X_GROUP)
 *	varint npeers, npeers zigzag varints: each tid minus the one
 *	before it, the first minus 0 (PACK_X_PEERS)
 *
 * and its time, in the time column: with PACK_X_ABSTIME varint t_ns;
 * else exact: a zigzag varint delta; compact: one byte, the code.
 */
#ifndef PMON_PACK_H
#define PMON_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "wire.h"

#define PACK_TIME_EXACT		0
#define PACK_TIME_COMPACT	1

/* Fields present. */
#define PACK_F_RC	0x01
#define PACK_F_PEER	0x02
#define PACK_F_TAG	0x04
#define PACK_F_CTX	0x08
#define PACK_F_BYTES	0x10
#define PACK_F_INST	0x20
#define PACK_F_FLAGS	0x40
#define PACK_F_EXTRA	0x80

/* Extras. */
#define PACK_X_SKIP	0x01
#define PACK_X_ABSTIME	0x02
#define PACK_X_GROUP	0x04
#define PACK_X_PEERS	0x08
#define PACK_X_ALL	0x0f

/* The largest packed record: header, 7 fields, group, peers; its time. */
#define PACK_RECORD_MAX \
	(2 + 1 + 1 + 10 + 7 * 5 + 1 + RECORD_GROUP_MAX + 3 + \
	    5 * RECORD_PEERS_MAX)
#define PACK_TIME_MAX	10

/*
 * Compact codes: 0 (no advance) and 1..50 (2^(k-1) ticks).  The tick,
 * about 16 us, is p2d2's "time quantum": shorter gaps (the calls of one
 * burst) add up until they reach it, which is what lets a repeated
 * burst repeat its codes (BENCHMARKS.md, bench-size).
 */
#define PACK_TICK_SHIFT	14
#define PACK_CODE_MAX	(64 - PACK_TICK_SHIFT)

/* What one end remembers of the previous record of one call and phase. */
struct pack_ref {
	uint8_t		 used;
	uint8_t		 call;
	uint8_t		 phase;
	uint8_t		 flags;
	int32_t		 rc, peer, tag, ctx, bytes, inst;
};

#define PACK_SLOTS	32	/* direct-mapped by call and phase */

/*
 * Per task and per connection, the same on both ends.  t is the time
 * the decoder has for the previous record: the exact one in exact mode,
 * the reconstructed one in compact mode.
 */
struct pack_state {
	int		 started;	/* a record went by: seq and t hold */
	uint64_t	 seq;
	uint64_t	 t;
	struct pack_ref	 ref[PACK_SLOTS];
};

void	pack_state_init(struct pack_state *);
int	pack_time_lookup(const char *name);
const char *pack_time_name(int mode);

/* Where pack_record writes: the two columns, and how full they are. */
struct pack_out {
	uint8_t		*rec;		/* PACK_RECORD_MAX bytes free */
	size_t		 nrec;
	uint8_t		*time;		/* PACK_TIME_MAX bytes free */
	size_t		 ntime;
};

/*
 * Packs r (decoded, with r->seq greater than the previous one's) onto
 * the ends of out's two columns.
 */
void	pack_record(struct pack_state *, int mode, struct pack_out *,
	    const struct record *r);

/*
 * The varints of the packed forms (LEB128: 7 bits a byte, low bits
 * first) and the zigzag map that gives small signed numbers short ones;
 * recordings use them too (common/recfile.c).
 */
static inline uint8_t *
pack_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t
pack_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t
pack_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/*
 * A varint of at most 10 bytes; sets rd->err on a short or overlong one.
 * Read from the bytes directly: a time delta takes three or four.
 */
static inline uint64_t
pack_get_varint_long(struct wire_reader *rd)
{
	const uint8_t *p, *end;
	uint64_t v = 0;
	unsigned shift;
	uint8_t b;

	if (rd->err || rd->off == rd->len) {
		rd->err = 1;
		return 0;
	}
	p = rd->p + rd->off;
	end = rd->p + rd->len;
	/* The tenth byte (shift 63) ends the varint or makes it overlong. */
	for (shift = 0; p < end; shift += 7) {
		b = *p++;
		if (shift == 63 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0) {
			rd->off = (size_t)(p - rd->p);
			return v;
		}
	}
	rd->off = (size_t)(p - rd->p);
	rd->err = 1;
	return 0;
}

/* The same, with the common one-byte varint read in line. */
static inline uint64_t
pack_get_varint(struct wire_reader *rd)
{
	if (!rd->err && rd->off < rd->len && rd->p[rd->off] < 0x80)
		return rd->p[rd->off++];
	return pack_get_varint_long(rd);
}

/*
 * Unpacks the next record from the two columns (readers over the bytes
 * of each) into *r, checked as record_decode checks.  r->group points
 * into rec's bytes; a record with peers is encoded into out
 * (RECORD_MAX_SIZE bytes), where r->peers points.  Returns 0, or -1
 * with *why; the state is then unusable.
 */
int	unpack_record(struct pack_state *, int mode, struct wire_reader *rec,
	    struct wire_reader *time, uint8_t *out, struct record *r,
	    const char **why);

/* The compact code of a delta of d ns, and the advance a code stands for. */
unsigned pack_time_code(int64_t d);
uint64_t pack_code_advance(unsigned code);

#endif
