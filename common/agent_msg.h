/*
 * The messages between an agent and the coordinator (doc/protocol.md),
 * each encoded and decoded here alone, for both sides: the agent's
 * hello, its tasks (TASK_NEW, TASK_RECORDS, TASK_PACKED, TASK_END,
 * TASK_RESUME, TASK_OTHERS), what /proc says of them (TASK_PROC), and
 * the coordinator's CONTROL, its answer CONTROL_DONE, and ACK
 * (BREAKPOINTS: breakpoint.h; FLUSH and FLUSH_DONE: proto_u32_decode).
 * The decoders are strict: every field is checked, and a payload longer
 * or shorter than its fields is an error.  No allocation, no I/O.
 */
#ifndef PMON_AGENT_MSG_H
#define PMON_AGENT_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "secret.h"
#include "task_msg.h"

struct pack_state;
struct record;

#define AGENT_MSG_STR_MAX	1024	/* the longest string of a payload */

/* AGENT_HELLO: i32 host_tid, u32 pid, str host, str arch, str secret. */
struct agent_hello {
	int32_t		host_tid;
	uint32_t	pid;
	char		host[AGENT_MSG_STR_MAX];
	char		arch[AGENT_MSG_STR_MAX];
	char		secret[PMON_SECRET_LEN + 1];	/* "": none sent */
};
#define AGENT_HELLO_MAX		(8 + 2 + 255 + 2 + 63 + 2 + PMON_SECRET_LEN)

size_t	agent_hello_encode(uint8_t *payload, const struct agent_hello *);
int	agent_hello_decode(const uint8_t *, size_t, struct agent_hello *,
	    const char **why);

/* TASK_NEW: the task's own TASK_HELLO payload, checked as the
 * coordinator needs it. */
int	task_new_decode(const uint8_t *, size_t, struct task_hello *,
	    const char **why);

/* TASK_OTHERS: u32 n, then n unmonitored tasks. */
struct task_other {
	int32_t		tid, parent_tid;
	uint32_t	pid;
	char		program[256];
};
#define TASK_OTHERS_MAX		4096	/* per TASK_OTHERS */
#define TASK_OTHER_PROGRAM_MAX	255	/* sent of the program's name */
#define TASK_OTHER_MAX		(12 + 2 + TASK_OTHER_PROGRAM_MAX)
size_t	task_other_encode(uint8_t *out, const struct task_other *);
/* The bytes task_other_encode writes, at most TASK_OTHER_MAX. */
size_t	task_other_size(const struct task_other *);
/* Checked whole, then each task to cb. */
typedef void (*task_other_cb)(const struct task_other *, void *arg);
int	task_others_decode(const uint8_t *, size_t, task_other_cb,
	    void *arg, const char **why);

/*
 * TASK_RECORDS: i32 tid, u32 count, the records; TASK_PACKED: i32 tid,
 * u8 time encoding, u32 count, u32 bytes of the time column, the time
 * column, the packed records.  Each record, decoded and checked, to cb;
 * -1 from cb stops the walk.
 */
#define TASK_RECORDS_HDR_SIZE	8
typedef int (*task_record_cb)(int32_t tid, const struct record *,
    void *arg, const char **why);
void	task_records_hdr_encode(uint8_t *out, int32_t tid, uint32_t count);
int	task_records_decode(const uint8_t *, size_t, task_record_cb,
	    void *arg, const char **why);
void	task_packed_hdr_encode(uint8_t *out, int32_t tid, uint8_t mode,
	    uint32_t count, uint32_t ntime);
int	task_packed_tid(const uint8_t *, size_t, int32_t *tid,
	    const char **why);
int	task_packed_decode(const uint8_t *, size_t, struct pack_state *,
	    task_record_cb, void *arg, const char **why);

/*
 * TASK_BELOW (an intermediate coordinator to its parent): i32 tid, u32
 * count, then count x (u8 flags, i32 match_tid, u64 match_seq, one
 * record): the task's events as the intermediate released them, each
 * with what it found of its match (EVENT_MATCHED and the send, or
 * EVENT_UNMATCHED, maybe with EVENT_UNMONITORED or EVENT_RESUMED;
 * EVENT_AGAIN).  A
 * match names the receive's peer and a seq; no flag else.
 */
#define TASK_BELOW_ENTRY_HDR	13
typedef int (*task_below_cb)(int32_t tid, const struct record *,
    uint8_t flags, int32_t match_tid, uint64_t match_seq, void *arg,
    const char **why);
void	task_below_entry_encode(uint8_t *out, uint8_t flags,
	    int32_t match_tid, uint64_t match_seq);
int	task_below_decode(const uint8_t *, size_t, task_below_cb,
	    void *arg, const char **why);

/* TASK_END: i32 tid, u64 records dropped in the ring. */
#define TASK_END_LEN		12
size_t	task_end_encode(uint8_t *out, int32_t tid, uint64_t dropped);
int	task_end_decode(const uint8_t *, size_t, int32_t *tid,
	    uint64_t *dropped, const char **why);

/*
 * TASK_RESUME: i32 tid, u64 next_seq (at least 1), then u64 shipped,
 * which agents before it did not send (0: not known).
 */
#define TASK_RESUME_LEN		20
size_t	task_resume_encode(uint8_t *out, int32_t tid, uint64_t next_seq,
	    uint64_t shipped);
int	task_resume_decode(const uint8_t *, size_t, int32_t *tid,
	    uint64_t *next_seq, uint64_t *shipped, const char **why);

/* TASK_PROC (TASK_PROC_LEN bytes): what /proc says of a task. */
struct task_proc {
	int32_t		tid;
	uint8_t		state;		/* the letter of /proc/PID/stat */
	uint32_t	threads;
	uint64_t	utime_ms, stime_ms;
	uint64_t	rss_kb, vsize_kb;
	int32_t		syscall;	/* the one it sits in, -1: none */
};
size_t	task_proc_encode(uint8_t *out, uint32_t id, const struct task_proc *);
int	task_proc_decode(const uint8_t *, size_t, uint32_t *id,
	    struct task_proc *, const char **why);

/* CONTROL: u32 id, u8 op, u16 n, n x i32 tid (tids stay in the payload). */
#define CONTROL_HDR_SIZE	7
struct control_msg {
	uint32_t	 id;
	uint8_t		 op;		/* CONTROL_* */
	uint16_t	 n;
	const uint8_t	*tids;		/* n big-endian i32 */
};
void	control_hdr_encode(uint8_t *out, uint32_t id, uint8_t op, uint16_t n);
int	control_decode(const uint8_t *, size_t, struct control_msg *,
	    const char **why);

/* CONTROL_DONE: u32 id, u16 n, n x (i32 tid, u8 status). */
#define CONTROL_DONE_HDR_SIZE	6
#define CONTROL_DONE_ENTRY	5
struct control_status {
	int32_t		tid;
	uint8_t		status;		/* CONTROL_OK, _NO_TASK, _FAILED */
};
void	control_done_hdr_encode(uint8_t *out, uint32_t id, uint16_t n);
void	control_done_entry_encode(uint8_t *out, const struct control_status *);
int	control_done_decode(const uint8_t *, size_t, uint32_t *id,
	    struct control_status *, size_t max, size_t *n, const char **why);

/* ACK: u16 n, then n entries (ACK_ENTRY_LEN) of i32 tid, u64 seq, u8 ended. */
void	ack_entry_encode(uint8_t *out, int32_t tid, uint64_t seq, int ended);
int	ack_decode(const uint8_t *, size_t, unsigned *n, const char **why);
void	ack_entry(const uint8_t *, unsigned i, int32_t *tid, uint64_t *seq,
	    int *ended);

#endif
