/*
 * The EVENT codec of recording format 2 (doc/recording.md; used by
 * common/recfile.c only).  An EVENT payload is stored against what the
 * writer and the reader both remember of its task's earlier events, with
 * pack_record's ideas (common/pack.h: zigzag varint deltas against the
 * task's previous event of the same call and phase, so a repeated
 * pattern stores the same bytes every time) applied to the payload's
 * bytes as they are: nothing is decoded or checked, every field is an
 * integer of its width and every difference is taken modulo that width,
 * so any payload of the right shape comes back byte for byte, and an
 * event costs a few dozen instructions.
 *
 * One EVENT, in the two columns of a block:
 *
 *	main	u8 call
 *		u8 A: phase (bit 0, a phase above 1 is not packed) and the
 *		   fields present (RECPACK_A_*); with RECPACK_A_B:
 *		u8 B: more fields present (RECPACK_B_*)
 *		the fields present, in bit order: the sequence number as a
 *		   varint skip (seq - previous seq - 1), rc, peer, tag, ctx,
 *		   bytes, inst as zigzag varint changes, the record flags
 *		   and EVENT flags as u8, match_tid and match_seq as zigzag
 *		   varint changes, the shape (u16 record length, u16
 *		   npeers, u8 glen) as it is
 *		the group name and the peers (glen + 4 npeers bytes), as
 *		   they are
 *	time	zigzag varint: t_ns - the task's previous t_ns (0 before one)
 *		with RECPACK_B_TCORR, zigzag varint: the change of
 *		   t_corr - t_ns since the task's previous EVENT
 *
 * A field is present when it differs from the task's previous EVENT of
 * the same call and phase (before one: rc, ctx, bytes, the flags and
 * matches 0, peer, tag and inst -1, the shape 48, 0, 0).  A task
 * remembers 32 calls and phases: a 33rd takes the slot of the one that
 * got its slot longest ago, which then starts afresh.
 */
#ifndef PMON_RECPACK_H
#define PMON_RECPACK_H

#include <stddef.h>
#include <stdint.h>

#include "pack.h"
#include "proto.h"
#include "record.h"
#include "wire.h"

/* Byte A. */
#define RECPACK_A_PHASE		0x01
#define RECPACK_A_SEQ		0x02
#define RECPACK_A_RC		0x04
#define RECPACK_A_PEER		0x08
#define RECPACK_A_TAG		0x10
#define RECPACK_A_CTX		0x20
#define RECPACK_A_BYTES		0x40
#define RECPACK_A_B		0x80
/* Byte B. */
#define RECPACK_B_INST		0x01
#define RECPACK_B_RFLAGS	0x02
#define RECPACK_B_FLAGS		0x04
#define RECPACK_B_MATCH_TID	0x08
#define RECPACK_B_MATCH_SEQ	0x10
#define RECPACK_B_SHAPE		0x20
#define RECPACK_B_TCORR		0x40
#define RECPACK_B_ALL		0x7f

/* The fixed part of an EVENT payload: its header and the record's. */
#define RECPACK_FIXED		(EVENT_HDR_SIZE + RECORD_HDR_SIZE)
/* The most one EVENT adds to each column, besides its group and peers. */
#define RECPACK_MAIN_MAX	(3 + 10 + 6 * 5 + 2 + 5 + 10 + 5)
#define RECPACK_TIME_MAX	(10 + 10)
#define RECPACK_SLOTS		32	/* calls and phases of a task */
/* The largest EVENT payload rebuilt: the most glen and npeers can say. */
#define RECPACK_EVENT_MAX	(RECPACK_FIXED + 255 + 4 * 65535)

/*
 * What one end remembers of the task's previous EVENT of a call and
 * phase: the bytes packed against, as they were in its payload.
 */
struct recpack_slot {
	uint8_t		 used;
	uint8_t		 call;
	uint8_t		 phase;
	uint8_t		 hdr[13];	/* flags, match_tid, match_seq */
	uint8_t		 len[2];	/* the record's length */
	uint8_t		 rec[28];	/* rc, peer, tag, ctx, bytes, inst,
					   npeers, glen, flags */
};

/*
 * What both ends remember of one task.  The first RECPACK_SLOTS calls
 * and phases it makes get a slot each; one more takes the slot given
 * out longest ago, round robin.
 */
struct recpack_task {
	int32_t		 tid;
	uint64_t	 seq;		/* of its previous EVENT */
	uint64_t	 t_ns;
	uint64_t	 tcorr;		/* t_corr - t_ns */
	uint8_t		 map[512];	/* by call * 2 + phase: slot + 1 */
	uint8_t		 next;		/* the slot given out next */
	struct recpack_slot slot[RECPACK_SLOTS];
};

void	recpack_task_init(struct recpack_task *, int32_t tid);
/*
 * Whether an EVENT payload packs: a positive tid, a phase of 0 or 1, and
 * exactly the group and peers its record says after the fixed part.
 * Its group and peers, in bytes, in *tail.
 */
int	recpack_ok(const uint8_t *payload, size_t len, size_t *tail);
/*
 * Packs it onto o's columns, which have RECPACK_MAIN_MAX + tail and
 * RECPACK_TIME_MAX bytes free.
 */
void	recpack_put(struct recpack_task *, const uint8_t *payload,
	    size_t tail, struct pack_out *o);
/*
 * Rebuilds the task's next EVENT from the two columns into out
 * (RECPACK_EVENT_MAX bytes); its length in *len.  0, or -1
 * with *why (the task is then unusable).
 */
int	recpack_get(struct recpack_task *, struct wire_reader *main,
	    struct wire_reader *time, uint8_t *out, size_t *len,
	    const char **why);

#endif
