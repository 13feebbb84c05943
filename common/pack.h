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
 *	- the time in one of two encodings, chosen per run:
 *	  exact: the signed nanosecond delta from the previous record's time;
 *	  compact: p2d2's self-correcting log2 delta (002 §2.2): one code k,
 *	  and the decoder's time advances by 2^(k-1) ns (k = 0: not at all)
 *	  from its own reconstructed previous time.
 *
 * One packed record:
 *
 *	varint	call * 2 + phase
 *	u8	fields present (PACK_F_*)
 *	u8	extras (PACK_X_*), only with PACK_F_EXTRA
 *	varint	seq skip (PACK_X_SKIP): records the ring dropped before it
 *	time	PACK_X_ABSTIME (the task's first record on the connection):
 *		varint seq, varint t_ns
 *		else exact: zigzag varint delta; compact: u8 code
 *	zigzag varints, one per field present, in PACK_F_* bit order
 *	u8 glen, glen bytes (PACK_X_GROUP)
 *	varint npeers, npeers zigzag varints: each tid minus the one
 *	before it, the first minus 0 (PACK_X_PEERS)
 */
#ifndef PMON_PACK_H
#define PMON_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

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

/* The largest packed record: header, 7 fields, group, peers. */
#define PACK_RECORD_MAX \
	(2 + 1 + 1 + 10 + 10 + 7 * 5 + 1 + RECORD_GROUP_MAX + 3 + \
	    5 * RECORD_PEERS_MAX)

/* Compact codes: 0 (no advance) and 1..64 (2^(k-1) ns). */
#define PACK_CODE_MAX	64

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

/*
 * Packs r (decoded, with r->seq greater than the previous one's) into
 * out, which has room for PACK_RECORD_MAX bytes.  Returns the size.
 */
size_t	pack_record(struct pack_state *, int mode, uint8_t *out,
	    const struct record *r);

/*
 * Unpacks one record from in (avail bytes) into out (RECORD_MAX_SIZE
 * bytes) in record.h's encoding, and decodes that into *r.  *used is the
 * packed size.  Returns 0, or -1 with *why; the state is then unusable.
 */
int	unpack_record(struct pack_state *, int mode, const uint8_t *in,
	    size_t avail, size_t *used, uint8_t *out, struct record *r,
	    const char **why);

/* The compact code of a delta of d ns, and the advance a code stands for. */
unsigned pack_time_code(int64_t d);
uint64_t pack_code_advance(unsigned code);

#endif
