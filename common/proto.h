/*
 * The pmon wire protocol: one table of every message that crosses a socket
 * between a task, an agent, the coordinator and a tool.
 *
 * A frame is an 8-byte header followed by the payload:
 *
 *	u8 magic (PROTO_MAGIC)  u8 version (PROTO_VERSION)
 *	u8 type (enum msg_type) u8 flags (0)
 *	u32 payload length
 *
 * All integers are big-endian (wire.h).  Payloads are described in
 * doc/protocol.md.  Append new messages; never renumber one, and bump
 * PROTO_VERSION when a message changes.
 */
#ifndef PMON_PROTO_H
#define PMON_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_MAGIC	0xb7
#define PROTO_VERSION	4	/* 3: the hellos carry the secret; 4: agents
				   send TASK_PACKED in a ZDATA stream, and
				   the coordinator ACKs (TASK_RESUME) */
#define FRAME_HDR_SIZE	8

/* The largest payload any message may carry. */
#define PROTO_MAX_PAYLOAD	(1024 * 1024)

/*
 * stream: 1 for the frames of the ordered stream a subscribed tool gets,
 * which are also what a recording holds.
 *
 *	  name		number	min	max (payload bytes)	stream */
#define PROTO_MESSAGES(X)						\
	X(AGENT_HELLO,	1,	14,	1024,			0)	\
	X(TASK_NEW,	2,	22,	1024,			0)	\
	X(TASK_RECORDS,	3,	8,	PROTO_MAX_PAYLOAD,	0)	\
	X(TASK_END,	4,	12,	12,			0)	\
	X(FLUSH,	5,	4,	4,			0)	\
	X(FLUSH_DONE,	6,	4,	4,			0)	\
	X(SHUTDOWN,	7,	0,	0,			0)	\
	X(TOOL_HELLO,	8,	8,	1024,			0)	\
	X(EVENT,	9,	73,	PROTO_MAX_PAYLOAD,	1)	\
	X(BYE,		10,	2,	1024,			0)	\
	X(ERROR,	11,	2,	1024,			0)	\
	X(TASK_HELLO,	12,	22,	1024,			0)	\
	X(TASK_INFO,	13,	24,	1024,			1)	\
	X(REQUEST,	14,	10,	1024,			0)	\
	X(REPLY,	15,	6,	PROTO_MAX_PAYLOAD,	0)	\
	X(PROBLEM,	16,	2,	PROTO_MAX_PAYLOAD,	1)	\
	X(TASK_STOPPED,	17,	12,	12,			0)	\
	X(CONTROL,	18,	7,	PROTO_MAX_PAYLOAD,	0)	\
	X(CONTROL_DONE,	19,	6,	PROTO_MAX_PAYLOAD,	0)	\
	X(BREAKPOINTS,	20,	2,	PROTO_MAX_PAYLOAD,	0)	\
	X(NOTICE,	21,	2,	PROTO_MAX_PAYLOAD,	1)	\
	X(TASK_READY,	22,	4,	4,			0)	\
	X(TASK_PROC,	23,	49,	49,			0)	\
	X(TASK_GONE,	24,	4,	4,			1)	\
	X(ZDATA,	25,	1,	PROTO_MAX_PAYLOAD,	0)	\
	X(TASK_PACKED,	26,	13,	PROTO_MAX_PAYLOAD,	0)	\
	X(ACK,		27,	2,	PROTO_MAX_PAYLOAD,	0)	\
	X(TASK_RESUME,	28,	12,	20,			0)	\
	X(TASK_FULL,	29,	0,	0,			0)	\
	X(TASK_OTHERS,	30,	4,	PROTO_MAX_PAYLOAD,	0)	\
	X(TASK_BELOW,	31,	8,	PROTO_MAX_PAYLOAD,	0)

enum msg_type {
#define PROTO_ENUM(name, num, min, max, stream) MSG_##name = num,
	PROTO_MESSAGES(PROTO_ENUM)
#undef PROTO_ENUM
};

/* Each message's limits as constants, for checks at compile time. */
enum msg_limits {
#define PROTO_LIMITS(name, num, min, max, stream) \
	MSG_MIN_##name = min, MSG_MAX_##name = max,
	PROTO_MESSAGES(PROTO_LIMITS)
#undef PROTO_LIMITS
};

struct msg_info {
	const char	*name;
	uint32_t	 min_len;
	uint32_t	 max_len;
	int		 stream;
};

/* TOOL_HELLO flags. */
#define TOOL_SUBSCRIBE	0x1	/* send me the ordered event stream */
#define TOOL_SNAPSHOT	0x2	/* ...after a snapshot of the state at its
				   start (REPLY with id 0) */
#define TOOL_RECORD	0x4	/* ...and TASK_GONE: what a recording needs
				   to rebuild the state (doc/recording.md) */
#define TOOL_LOSSLESS	0x8	/* ...and never drop an event for me: hold
				   the agents back instead (capture.md) */

/* REQUEST flags, and REPLY: the fixed part and the status. */
#define REQUEST_JSON	0x1	/* reply in JSON, not text */
#define REQUEST_UNOWNED	0x2	/* the stops it makes belong to no tool:
				   they outlive it (doc/control.md) */
#define REPLY_HDR_SIZE	6	/* u32 id, u8 status, u8 more */
#define REPLY_OK	0
#define REPLY_ERROR	1

/* CONTROL operations, and the per-task status in CONTROL_DONE. */
#define CONTROL_STOP		1	/* SIGSTOP, then drain the ring */
#define CONTROL_CONTINUE	2	/* SIGCONT */
#define CONTROL_KILL		3	/* SIGKILL */
#define CONTROL_INFO		4	/* a TASK_PROC per task, no signal */
#define CONTROL_OK		0
#define CONTROL_NO_TASK		1	/* not a live task of this host */
#define CONTROL_FAILED		2	/* the signal failed, or the task
					   did not stop within a second */

/* TASK_INFO: the fixed part before its two strings (tool_msg.h). */
#define TASK_INFO_FIXED		20
#define TASK_INFO_HOST_MAX	255	/* longer is cut */

/* TASK_PROC: u32 id, i32 tid, u8 state, u32 threads, u64 utime_ms,
 * u64 stime_ms, u64 rss_kb, u64 vsize_kb, i32 syscall. */
#define TASK_PROC_LEN		49

/*
 * TASK_PACKED: i32 tid, u8 time encoding (PACK_TIME_*), u32 count, u32
 * bytes of the time column; then the time column, then the records.
 */
#define TASK_PACKED_HDR_SIZE	13
/* ACK: u16 n, then n entries of i32 tid, u64 seq, u8 ended. */
#define ACK_ENTRY_LEN		13

/* The fixed part of EVENT: tid, flags, match_tid, match_seq, t_corr. */
#define EVENT_HDR_SIZE	(4 + 1 + 4 + 8 + 8)

/* EVENT flags. */
#define EVENT_MATCHED	0x1	/* match_tid/match_seq name the send */
#define EVENT_UNMATCHED	0x2	/* a receive released without its send */
#define EVENT_LOST	0x4	/* marker: records missing from this task */
#define EVENT_INCONSISTENT 0x8	/* released although the modelled group
				   state did not allow it (records lost) */
#define EVENT_AGAIN	0x10	/* a coordinator before this one may have
				   delivered it (doc/capture.md) */
#define EVENT_RESUMED	0x40	/* TASK_BELOW only, with EVENT_UNMATCHED:
				   the intermediate did not have the
				   sender's stream from its start (it
				   started after another); the root matches
				   it to a send it released, if it can */
#define EVENT_UNMONITORED 0x20	/* with EVENT_UNMATCHED: its sender is a
				   task pmon does not instrument */

struct frame_hdr {
	uint8_t		type;
	uint32_t	len;
};

const struct msg_info	*proto_msg(uint8_t type);
const char		*proto_msg_name(uint8_t type);
int			 proto_msg_stream(uint8_t type);

struct wire_reader;
int	proto_reader_done(const struct wire_reader *, const char **why);
int	proto_read_secret(struct wire_reader *, char *dst, const char **why);
int	proto_u32_decode(const uint8_t *, size_t, uint32_t *, const char **why);

void	frame_hdr_encode(uint8_t *out, uint8_t type, uint32_t len);
int	frame_hdr_decode(const uint8_t *in, struct frame_hdr *h,
	    const char **why);

/*
 * PVM messages between the daemons (doc/protocol.md, "A tree of
 * coordinators"), tagged so that no program's message is taken for one.
 * DIAL, root -> agent: `string ADDR:PORT`, the coordinator the agent
 * dials from now on (its intermediate, started on another host).
 */
#define PMON_PVM_TAG_DIAL	0x706d6f63	/* "pmoc" */

#endif
