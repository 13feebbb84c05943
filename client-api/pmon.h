/*
 * libpmon: the client API of the pmon monitoring system.
 *
 * A tool connects to the coordinator of one PVM virtual machine, may
 * subscribe to the causally ordered event stream, and sends requests.
 * Use it from your own event loop (poll pmon_fd() for reading, then call
 * pmon_dispatch()) or in blocking mode (pmon_wait(), pmon_flush()).
 *
 * The library never prints and never exits: every function that can fail
 * returns -1 and leaves a message in pmon_error().  Strings and arrays
 * handed to callbacks belong to the library and are valid only during the
 * callback.
 */
#ifndef PMON_H
#define PMON_H

#include <stddef.h>
#include <stdint.h>

#include "pmon_calls.h"		/* enum pmon_call: PMON_CALL_send, ... */

#ifdef __cplusplus
extern "C" {
#endif

struct pmon;

/* pmon_connect flags. */
#define PMON_SUBSCRIBE	0x1	/* receive the ordered event stream */
#define PMON_SNAPSHOT	0x2	/* with PMON_SUBSCRIBE: first the state at
				   the point the stream starts (snapshot) */
#define PMON_RECORD	0x4	/* with PMON_SUBSCRIBE: also the frames a
				   recording needs (TASK_GONE, see frame) */
#define PMON_LOSSLESS	0x8	/* with PMON_SUBSCRIBE: the coordinator never
				   drops an event for this tool; it holds the
				   application's records back while the tool
				   lags, and makes the tool lossy (a notice
				   "degraded") only when it reads nothing for
				   the coordinator's bound (doc/capture.md) */

/* pmon_request flags. */
#define PMON_JSON	0x1	/* none: replies are always JSON (it was
				   "JSON rather than a table") */
#define PMON_UNOWNED	0x2	/* stops made by this request belong to no
				   tool: they stay when this tool leaves, and
				   any tool may continue them */

/* pmon_event.phase */
#define PMON_PHASE_BEGIN	0
#define PMON_PHASE_END		1

/* pmon_event.flags */
#define PMON_EV_MATCHED		0x1	/* match_tid/match_seq name the send */
#define PMON_EV_UNMATCHED	0x2	/* a receive released without its send */
#define PMON_EV_LOST		0x4	/* marker: lost events, count in bytes;
					   call_name is "lost" */
#define PMON_EV_MSG		0x8	/* end of a receive that got a message */
#define PMON_EV_INCONSISTENT	0x10	/* released although the group state
					   did not allow it (records lost) */
#define PMON_EV_AGAIN		0x20	/* a coordinator that died may have
					   delivered it already: a tool that
					   joins the two streams drops it if
					   it has its id (tid:seq) */
#define PMON_EV_UNMONITORED	0x40	/* with PMON_EV_UNMATCHED: the sender
					   is a task pmon does not instrument
					   (pmon ps: "unmonitored") */
#define PMON_EV_PVMD		0x80	/* a "signal" the task's pvmd sent it
					   (for a pvm_sendsig or pvm_kill) */

/*
 * Frame types: the frame callback's type, and what a recording holds
 * (doc/protocol.md, doc/recording.md).  Payloads are big-endian.
 */
#define PMON_FRAME_EVENT	9
#define PMON_FRAME_TASK_INFO	13
#define PMON_FRAME_PROBLEM	16
#define PMON_FRAME_NOTICE	21
#define PMON_FRAME_TASK_GONE	24	/* with PMON_RECORD: u32 the tid of a
					   task that ended, in stream order */
#define PMON_FRAME_HOST		0x80	/* recordings only: i32 host tid, u8
					   agent up, then name and arch, each
					   a u16 length and its bytes */
#define PMON_FRAME_SNAPSHOT	0x81	/* recordings only: the state (JSON)
					   where the recording starts */

/* A task of the monitored application. */
struct pmon_task {
	int32_t		 tid;
	int32_t		 parent;	/* tid, or 0 when not spawned by PVM */
	uint32_t	 pid;
	uint64_t	 spawn_seq;	/* parent's spawn record, 0 if none */
	const char	*host;
	const char	*program;
};

/*
 * One event of the ordered stream: the begin or the end of one PVM call
 * made by the application (doc/events.md describes each field).
 */
struct pmon_event {
	int32_t		 tid;
	uint64_t	 seq;
	uint64_t	 t_ns;		/* the host's clock */
	uint64_t	 t_corr;	/* corrected: causal, one timeline */
	int		 call;		/* enum pmon_call */
	const char	*call_name;	/* "pvm_send" */
	int		 phase;
	int		 flags;
	int32_t		 rc;
	int32_t		 peer;		/* partner tid, -1 if none */
	int32_t		 tag;
	int32_t		 ctx;
	int32_t		 bytes;
	int32_t		 inst;
	const char	*group;		/* "" when none */
	unsigned	 npeers;
	const int32_t	*peers;		/* multicast destinations, children */
	int32_t		 match_tid;	/* with PMON_EV_MATCHED */
	uint64_t	 match_seq;
	const struct pmon_task *task;	/* host and program of tid */
};

struct pmon_callbacks {
	void	(*task)(const struct pmon_task *, void *arg);
	void	(*event)(const struct pmon_event *, void *arg);
	void	(*flush_done)(uint32_t id, void *arg);
	void	(*bye)(const char *reason, void *arg);
	/*
	 * The state (JSON, as the "snapshot" request returns it) at the
	 * point the stream starts: the events that follow are exactly
	 * those after its "position".  Only with PMON_SNAPSHOT.
	 */
	void	(*snapshot)(const char *json, size_t len, void *arg);
	/* A problem the coordinator found (doc/state.md), as JSON. */
	void	(*problem)(const char *json, size_t len, void *arg);
	/*
	 * What a tool (this one too) or a breakpoint did: attached,
	 * detached, stopped or continued tasks, added or removed a
	 * breakpoint (doc/control.md), as JSON.  Every tool gets them,
	 * subscribed or not.
	 */
	void	(*notice)(const char *json, size_t len, void *arg);
	/*
	 * Every frame of the stream exactly as it came, after the callback
	 * for it ran: type is a PMON_FRAME_* (TASK_GONE only with
	 * PMON_RECORD; from a recording, also its HOST and SNAPSHOT
	 * frames), payload its bytes.  What pmon record writes.
	 */
	void	(*frame)(int type, const void *payload, size_t len, void *arg);
};

/* Allocates a handle; NULL only when out of memory. */
struct pmon	*pmon_new(void);
/* Closes the connection and frees everything.  pmon_free(NULL) is a no-op. */
void		 pmon_free(struct pmon *);

/*
 * Connects to the coordinator's socket at path, or, when path is NULL, to
 * the one of the virtual machine named by $PVM_TMP.  name identifies the
 * tool to the others.  The hello carries the virtual machine's secret,
 * read from the file next to the socket (pmon-secret.UID in the same
 * directory); it fails, naming the file, when that cannot be read.  A
 * coordinator that refuses the tool (a wrong secret) says why in an
 * ERROR, which the next call that reads reports through pmon_error().
 */
int		 pmon_connect(struct pmon *, const char *path, const char *name,
		    unsigned flags);
void		 pmon_set_callbacks(struct pmon *,
		    const struct pmon_callbacks *, void *arg);
const char	*pmon_error(const struct pmon *);

/* The socket to poll for reading in the tool's own event loop. */
int		 pmon_fd(const struct pmon *);
/*
 * Reads what the socket has without blocking and calls the callbacks.
 * Returns 0, or -1 on error or when the coordinator closed the connection
 * or said BYE (pmon_closed() tells which; pmon_error() says why either
 * way).  Callbacks may send (pmon_send_flush) but must not dispatch or
 * free the handle.
 */
int		 pmon_dispatch(struct pmon *);
/*
 * pmon_request returns at its reply: frames read with it that come after
 * it in the stream wait in the handle, and are dispatched first by the
 * next pmon_dispatch or pmon_wait.  A tool that waits for pmon_fd itself
 * calls pmon_dispatch while this is true (the descriptor may have
 * nothing new to say).
 */
int		 pmon_pending(const struct pmon *);
int		 pmon_closed(const struct pmon *);
/*
 * The connection ended without a BYE (the coordinator was killed or
 * crashed; also in the middle of a frame, or reset).  A coordinator started on
 * its address takes over (doc/capture.md, "A coordinator restart"): a
 * tool that connects to it gets the events the dead one may have
 * delivered again, flagged PMON_EV_AGAIN.
 */
int		 pmon_gone(const struct pmon *);

/* Sends a flush request; its completion arrives as flush_done(id). */
int		 pmon_send_flush(struct pmon *, uint32_t *id);
/* Asks the coordinator to flush, stop the agents and exit. */
int		 pmon_send_shutdown(struct pmon *);

/*
 * Sends a request (doc/requests.md: "ps", "snapshot", "queues t40001",
 * ...) and dispatches until its reply came.  On success *reply is the
 * reply, NUL-terminated and malloc'ed (free it), *len its length.  A
 * request the coordinator refuses fails with its reason in pmon_error().
 */
int		 pmon_request(struct pmon *, const char *text, unsigned flags,
		    char **reply, size_t *len);

/*
 * Blocking mode.  pmon_wait waits up to timeout_ms (-1: forever) for
 * input and dispatches it; returns 1 if something was dispatched, 0 on
 * timeout or when a signal interrupted the wait, -1 on error or close.
 * pmon_flush sends a flush and dispatches until it completed: every event
 * recorded before the call has then been delivered to the event callback.
 */
int		 pmon_wait(struct pmon *, int timeout_ms);
int		 pmon_flush(struct pmon *);
/*
 * How long pmon_request and pmon_flush wait (-1, the default: as long as
 * it takes).  Past it they fail with errno ETIMEDOUT and say so in
 * pmon_error(); the reply that comes later is dropped, and the handle
 * stays usable.
 */
void		 pmon_set_timeout(struct pmon *, int timeout_ms);

/*
 * The sockets of the virtual machine named by $PVM_TMP: the
 * coordinator's, which pmon_connect dials when given no path, and this
 * host's agent's, where the tasks it monitors register.  0, or -1 with
 * errno ENAMETOOLONG when the path does not fit buf.
 */
int		 pmon_coordinator_path(char *buf, size_t size);
int		 pmon_agent_path(char *buf, size_t size);
/*
 * Makes the PVM programs this process starts from now on run monitored:
 * puts the instrumentation library at path (absolute: tasks start in
 * pvmd's directory) first in LD_PRELOAD, and LD_PRELOAD in PVM_EXPORT
 * so that the tasks they spawn get it too, keeping what both held
 * (doc/tasker.md).  0, or -1 with errno.
 */
int		 pmon_instrument_env(const char *path);

/* "pvm_send" for PMON_CALL_send; "unknown" for a number it does not know. */
const char	*pmon_call_name(int call);
/* The number of a call's name ("pvm_send"), or -1. */
int		 pmon_call_lookup(const char *name);

/*
 * Recordings: the stream of a subscribed tool in a file, as pmon record
 * writes it and pmon replay serves it (doc/recording.md).
 */
#define PMON_RECORDING_FORMAT		2	/* the newest */
#define PMON_RECORDING_BLOCK_DEFAULT	(64 * 1024)
#define PMON_RECORDING_BLOCK_MIN	1024
#define PMON_RECORDING_BLOCK_MAX	(4 * 1024 * 1024)

struct pmon_recording_header {
	unsigned	 format;	/* 1 or 2; to create, 0: the newest */
	uint64_t	 created_ns;	/* CLOCK_REALTIME at its start */
	char		 writer[256];	/* "pmon record" */
	char		 clock[256];	/* how its times were corrected */
	char		 source[256];	/* host:PVM_TMP */
};

struct pmon_recording_counts {
	uint64_t	 frames;
	uint64_t	 events;
	uint64_t	 tasks;		/* TASK_INFO frames */
	uint64_t	 raw_bytes;	/* the frames' bytes */
	uint64_t	 file_bytes;
	uint64_t	 ended_ns;	/* from its end block; 0: none yet */
};

/*
 * Reading: pmon_open_recording makes an unconnected handle read the
 * recording at path (and fills *header, which may be NULL).
 * pmon_read_recording then gives its stream to the callbacks, as a tool
 * subscribed with PMON_SNAPSHOT and PMON_RECORD got it live, and counts
 * what it read in *counts (may be NULL).  It returns 0 at the file's
 * end block; -1 on damage ("corrupt block at offset N: ...", "truncated
 * at offset N" in pmon_error()), after every frame before the damage.
 */
int		 pmon_open_recording(struct pmon *, const char *path,
		    struct pmon_recording_header *header);
int		 pmon_read_recording(struct pmon *,
		    struct pmon_recording_counts *counts);

/*
 * Writing: pmon_recording_create makes path (replacing a file there)
 * and writes the header; a compressed block is written each time
 * block_size bytes of frames wait (0: the default) and at
 * pmon_recording_sync.  NULL with the reason in err when it cannot.
 * pmon_recording_finish writes the end block and closes the file, then
 * pmon_recording_free frees the handle (which alone leaves the file
 * without an end block, as a crash would).  Each returns -1 with the
 * reason in pmon_recording_error() on failure (a full disk); the counts
 * are then those of what surely reached the file.
 */
struct pmon_recording;
struct pmon_recording *pmon_recording_create(const char *path,
		    const struct pmon_recording_header *, size_t block_size,
		    char *err, size_t errsize);
/* A frame as the frame callback got it, or a PMON_FRAME_SNAPSHOT. */
int		 pmon_recording_write(struct pmon_recording *, int type,
		    const void *payload, size_t len);
/* A PMON_FRAME_HOST: a host of the state, as the "hosts" request has it. */
int		 pmon_recording_write_host(struct pmon_recording *,
		    int32_t host_tid, int agent_up, const char *name,
		    const char *arch);
int		 pmon_recording_sync(struct pmon_recording *);
int		 pmon_recording_finish(struct pmon_recording *,
		    struct pmon_recording_counts *);
void		 pmon_recording_free(struct pmon_recording *);
const char	*pmon_recording_error(const struct pmon_recording *);

#ifdef __cplusplus
}
#endif

#endif
