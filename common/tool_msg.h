/*
 * The messages between a tool and the coordinator (doc/protocol.md),
 * each encoded and decoded here alone, for libpmon and the coordinator:
 * the tool's hello and requests, and the TASK_INFO of the stream (the
 * coordinator's replay reads it back from recordings).  The decoders are
 * strict: every field is checked, and a payload longer or shorter than
 * its fields is an error.  No allocation, no I/O.
 */
#ifndef PMON_TOOL_MSG_H
#define PMON_TOOL_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "secret.h"
#include "wire.h"

#define TOOL_MSG_STR_MAX	1024	/* the longest string of a payload */

/* TOOL_HELLO: u32 flags (TOOL_*), str name, str secret. */
struct tool_hello {
	uint32_t	flags;
	char		name[TOOL_MSG_STR_MAX];
	char		secret[PMON_SECRET_LEN + 1];	/* "": none sent */
};
/* 0, or -1 when name and secret do not fit the message. */
int	tool_hello_encode(uint8_t *payload, size_t *len, uint32_t flags,
	    const char *name, const char *secret);
int	tool_hello_decode(const uint8_t *, size_t, struct tool_hello *,
	    const char **why);

/* REQUEST: u32 id (never 0), u32 flags (REQUEST_*), str text. */
struct request_msg {
	uint32_t	id;
	uint32_t	flags;
	char		text[TOOL_MSG_STR_MAX];
};
/* 0, or -1 when the text does not fit the message. */
int	request_encode(uint8_t *payload, size_t *len, uint32_t id,
	    uint32_t flags, const char *text);
int	request_decode(const uint8_t *, size_t, struct request_msg *,
	    const char **why);

/*
 * TASK_INFO: i32 tid, i32 parent (0: not spawned by PVM), u32 pid, u64
 * the parent's spawn record (0: none), str host, str program.
 */
struct task_info {
	int32_t		 tid;
	int32_t		 parent;
	uint32_t	 pid;
	uint64_t	 spawn_seq;
	char		 host[MSG_MAX_TASK_INFO];
	char		 program[MSG_MAX_TASK_INFO];
};
size_t	task_info_encode(uint8_t *payload, const struct task_info *);
int	task_info_decode(const uint8_t *payload, size_t len, struct task_info *,
	    const char **why);

/*
 * EVENT: this header (EVENT_HDR_SIZE: i32 tid, u8 flags EVENT_*, i32
 * match_tid, u64 match_seq, u64 t_corr), then the record (record.h).
 * In line: every event of the stream goes through them.
 */
struct event_hdr {
	int32_t		 tid;
	uint8_t		 flags;
	int32_t		 match_tid;
	uint64_t	 match_seq;
	uint64_t	 t_corr;
};

static inline void
event_hdr_encode(uint8_t *out, const struct event_hdr *h)
{
	wire_put32(out, (uint32_t)h->tid);
	out[4] = h->flags;
	wire_put32(out + 5, (uint32_t)h->match_tid);
	wire_put64(out + 9, h->match_seq);
	wire_put64(out + 17, h->t_corr);
}

/* in holds EVENT_HDR_SIZE bytes at least (the message's minimum). */
static inline void
event_hdr_decode(const uint8_t *in, struct event_hdr *h)
{
	h->tid = (int32_t)wire_get32(in);
	h->flags = in[4];
	h->match_tid = (int32_t)wire_get32(in + 5);
	h->match_seq = wire_get64(in + 9);
	h->t_corr = wire_get64(in + 17);
}

/* REPLY: u32 id (0: the snapshot), u8 status REPLY_*, u8 more, body. */
void	reply_hdr_encode(uint8_t *out, uint32_t id, uint8_t status, int more);
int	reply_hdr_decode(const uint8_t *, size_t, uint32_t *id,
	    uint8_t *status, int *more, const char **why);

/* BYE and ERROR: str reason, cut to REASON_MAX bytes. */
#define REASON_MAX		512
size_t	reason_encode(uint8_t *payload, const char *text);
int	reason_decode(const uint8_t *, size_t, char *text, size_t size,
	    const char **why);

#endif
