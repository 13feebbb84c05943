/*
 * Breakpoints as they travel: the coordinator's table, which it sends to
 * every agent in a BREAKPOINTS frame (doc/control.md, doc/protocol.md),
 *
 *	u16 n, then n entries of
 *	u32 id, i32 tid, u8 call, u8 phase, u16 match, i32 peer, i32 tag,
 *	i32 ctx, u64 seq, str group
 *
 * The agent writes the table into its tasks' control pages, laid out as
 * the ring says (struct ring_bp, ring.h), which may change apart from
 * this form.
 */
#ifndef PMON_BREAKPOINT_H
#define PMON_BREAKPOINT_H

#include <stddef.h>
#include <stdint.h>

#define BREAKPOINTS_MAX		32	/* a table: what a task holds */
#define BREAKPOINT_GROUP_MAX	63

/* breakpoint.match: the fields that must equal the call's. */
#define BP_PEER		0x01	/* destination of a send, source asked of
				   a receive, target of kill/notify */
#define BP_TAG		0x02
#define BP_CTX		0x04
#define BP_GROUP	0x08
#define BP_SEQ		0x10	/* the record number: a stopline */
#define BP_ALL		(BP_PEER | BP_TAG | BP_CTX | BP_GROUP | BP_SEQ)

struct breakpoint {
	uint32_t	id;		/* the coordinator's; never 0 */
	int32_t		tid;		/* only this task; 0: every task */
	uint8_t		call;		/* enum pmon_call; 0: any call */
	uint8_t		phase;		/* PMON_BEGIN: before the call runs;
					   PMON_END: after it returned */
	uint16_t	match;		/* BP_* */
	int32_t		peer;
	int32_t		tag;
	int32_t		ctx;
	uint64_t	seq;		/* BP_SEQ: stop before this record */
	char		group[BREAKPOINT_GROUP_MAX + 1];  /* NUL-terminated */
};

#define BP_WIRE_FIXED	32	/* an entry before its group string */
#define BP_WIRE_MAX	(BP_WIRE_FIXED + 2 + BREAKPOINT_GROUP_MAX)
#define BREAKPOINTS_PAYLOAD_MAX	(2 + BREAKPOINTS_MAX * BP_WIRE_MAX)

size_t	breakpoint_encode(uint8_t *out, const struct breakpoint *);
int	breakpoint_decode(const uint8_t *in, size_t avail,
	    struct breakpoint *, size_t *used, const char **why);
size_t	breakpoints_encode(uint8_t *payload, const struct breakpoint *,
	    size_t n);
int	breakpoints_decode(const uint8_t *payload, size_t len,
	    struct breakpoint *, unsigned *n, const char **why);

#endif
