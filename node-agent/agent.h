/*
 * pmon-agentd: one per host.  Accepts instrumented tasks on a unix socket,
 * drains their record rings and ships everything to the coordinator (or,
 * in dump mode, prints it).
 *
 * Everything non-static is prefixed agent_ and declared here: the agent's
 * objects (all but agentd.c) are linked into the unit test binary.
 */
#ifndef PMON_AGENT_H
#define PMON_AGENT_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "capture.h"
#include "log.h"
#include "pack.h"
#include "ring.h"
#include "secret.h"
#include "agent_msg.h"
#include "task_msg.h"
#include "zstream.h"

/* glibc's sys/queue.h lacks the _SAFE iterators. */
#ifndef TAILQ_FOREACH_SAFE
#define TAILQ_FOREACH_SAFE(var, head, field, tvar)			\
	for ((var) = TAILQ_FIRST(head);					\
	    (var) != NULL && ((tvar) = TAILQ_NEXT(var, field), 1);	\
	    (var) = (tvar))
#endif

struct evbuffer;
struct event;
struct event_base;
struct bufferevent;

#define AGENT_DRAIN_MS		20		/* ring drain period */
#define AGENT_BATCH		(256 * 1024)	/* ring bytes per read */
#define AGENT_HIGH_WATER	CAPTURE_BUFFER_DEFAULT /* stop draining
						   above (-b) */
#define AGENT_LIVE_MS		CAPTURE_LIVE_DEFAULT /* sync flush at
						   least this often (-i) */
#define AGENT_SYNC_HIGH		(1024 * 1024)	/* plain bytes between two
						   sync flushes, at most */
#define AGENT_PASS_MAX		(4 * 1024 * 1024) /* per task, per timer */
#define AGENT_HELLO_TIMEOUT	5		/* seconds to send TASK_HELLO */
#define AGENT_MAX_TASKS		4096
#define AGENT_ACCEPT_PAUSE_MS	1000		/* no descriptor left:
						   accept again after */
#define AGENT_CLOCK_OFFSET_MAX	86400000000000LL /* ns: a day */
#define AGENT_STOP_POLL_MS	1		/* waiting for a stop: /proc */
#define AGENT_STOP_TIMEOUT_MS	1000		/* ...and how long */
#define AGENT_ENVIRON_MAX	(256 * 1024)	/* of a task, when adopting */
#define AGENT_RECONNECT_MS	500		/* dialing a lost coordinator */
#define AGENT_RECONNECT_S	60		/* ...and for how long */
#define AGENT_OTHERS_MS		1000		/* pvmd's task list read */
/* Readings an instrumented task has to say hello before it is "other". */
#define AGENT_OTHERS_HELLO_READS	10
#define AGENT_OTHERS_MAX	1024		/* tasks pmon does not
						   instrument, per host */

enum agent_task_state {
	TASK_S_HELLO,		/* accepted, TASK_HELLO not complete */
	TASK_S_ACTIVE,		/* ring attached, TASK_NEW sent */
	TASK_S_ENDED,		/* gone; its ring is kept until the
				   coordinator acknowledges its end */
};

struct agent_task {
	TAILQ_ENTRY(agent_task)	 entry;
	struct agent		*agent;
	enum agent_task_state	 state;
	int			 fd;
	struct event		*ev;
	time_t			 since;		/* accepted (monotonic) */
	pid_t			 peer_pid;	/* SO_PEERCRED */
	uint8_t			 hbuf[FRAME_HDR_SIZE + 1024];
	size_t			 hlen;		/* the hello, then each
						   TASK_STOPPED */
	int			 ringfd;	/* received, not yet attached */
	struct task_hello	 hello;
	struct ring		 ring;
	int			 at_break;	/* the last record drained is
						   a BREAK, and no SIGCONT
						   of ours came after it */
	int			 stopped_by_us;	/* our SIGSTOP, no SIGCONT */
	struct pack_state	 pack;		/* TASK_PACKED, on this
						   connection */
	int			 adopted;	/* found running after a
						   restart: fd is a pidfd,
						   not its socket */
	uint64_t		 acked;		/* the coordinator's last ACK */
	uint64_t		 shipped;	/* the last seq sent to any
						   coordinator */
	uint64_t		 end_dropped;	/* ENDED: the ring's dropped */
	uint64_t		 relieved;	/* times held records were freed
						   unacknowledged (ring_relieve) */
};
TAILQ_HEAD(agent_tasks, agent_task);

/* A task of our host in pvmd's list that never came to us. */
struct agent_other {
	int32_t			 tid, parent;
	uint32_t		 pid;
	int			 reported;	/* seen in two readings */
	unsigned		 seen;		/* readings in a row */
	char			 program[256];
};

/* One task of a CONTROL, until it is settled. */
struct agent_control_task {
	int32_t			 tid;
	pid_t			 pid;		/* 0: not found */
	uint8_t			 status;	/* CONTROL_OK, ... */
	int			 pending;	/* waiting for it to stop
						   (a continue: before its
						   SIGCONT) */
	int			 held;		/* no signal sent yet: it
						   is on its way to stop
						   at a breakpoint */
};

/*
 * A CONTROL in progress: stops wait for the kernel to show them, and so
 * does a continue of a task on its way to stop at a breakpoint.
 */
struct agent_control {
	TAILQ_ENTRY(agent_control) entry;
	struct agent		*agent;
	uint32_t		 id;
	uint8_t			 op;
	struct event		*ev;		/* the /proc poll */
	struct timespec		 start;		/* monotonic */
	unsigned		 npending;
	uint16_t		 n;
	struct agent_control_task t[];
};
TAILQ_HEAD(agent_controls, agent_control);

struct agent {
	struct event_base	*base;
	int			 dump;		/* -D: print, no coordinator */
	int			 tasker;	/* -T: started the task starter */
	FILE			*dumpf;
	struct bufferevent	*coord;
	struct evbuffer		*out;		/* frames to the coordinator,
						   not yet compressed */
	struct evbuffer		*wire;		/* the coordinator socket's
						   output, or NULL */
	struct zs_out		 zs;
	int			 zs_on;		/* after AGENT_HELLO */
	int			 compress;	/* CAPTURE_COMPRESS_* (-z) */
	int			 want_sync;	/* a flush point passed */
	struct timespec		 last_sync;	/* monotonic */
	int			 time_mode;	/* PACK_TIME_* (-t) */
	size_t			 high_water;	/* -b */
	unsigned		 live_ms;	/* -i */
	uint64_t		 block_ns;	/* -k: RING_BLOCK_NEVER, a
						   timeout or ..._FOREVER */
	uint8_t			*pack;		/* PROTO_MAX_PAYLOAD bytes */
	uint8_t			*packt;		/* PROTO_MAX_PAYLOAD bytes */
	uint64_t		 nrecords;	/* records shipped */
	char			 ring_path[108]; /* published ring size, or
						   "" */
	int			 listen_fd;
	struct event		*ev_listen;
	struct event		*ev_listen_again; /* after EMFILE */
	struct log_rate		 conn_log;	/* refusals, failed accepts */
	char			 sock_path[108];
	struct event		*ev_timer;
	struct agent_tasks	 tasks;
	unsigned		 ntasks;
	int			 refused;	/* an ERROR to wait out */
	unsigned		 refusals;	/* in a row, each waited out */
	uint8_t			*batch;		/* AGENT_BATCH bytes */
	int			 pvm_tid;	/* -1: not enrolled */
	int			 host_tid;
	char			 host[256];
	char			 arch[64];
	char			 secret[PMON_SECRET_LEN + 1]; /* for the
						   coordinator; never logged */
	struct event		*ev_pvm[8];
	int			 nev_pvm;
	struct agent_controls	 controls;	/* CONTROLs in progress */
	struct breakpoint		 bps[BREAKPOINTS_MAX]; /* the last BREAKPOINTS */
	unsigned		 nbp;
	char			 coord_addr[300]; /* -c: dialed again when
						   the coordinator is lost */
	struct event		*ev_reconnect;
	time_t			 lost_since;	/* monotonic; 0: connected */
	struct event		*ev_others;	/* pvmd's task list */
	struct agent_other	*others;	/* by tid */
	size_t			 nothers;
};

/* Packing a task's records into TASK_PACKED. */
struct agent_packer {
	uint8_t			*buf;		/* PROTO_MAX_PAYLOAD bytes */
	uint8_t			*tbuf;		/* PROTO_MAX_PAYLOAD bytes */
	struct pack_state	*ps;
	int			 mode;		/* PACK_TIME_* */
	uint64_t		 records;	/* packed, ever */
};

/* agent.c */
int	agent_init(struct agent *, struct event_base *);
void	agent_free(struct agent *);
int	agent_coord_connect(struct agent *, const char *addrport);
int	agent_coord_attach(struct agent *, int fd);
void	agent_send_hello(struct agent *);
int	agent_peer_is_local(int fd);
void	agent_flush(struct agent *, uint32_t id);
void	agent_output(struct agent *);
void	agent_output_sync(struct agent *);
int	agent_may_drain(const struct agent *);
void	agent_log_counts(const struct agent *);
int	agent_publish_ring(struct agent *, unsigned long size);
void	agent_exit(struct agent *, int code) __attribute__((noreturn));
int	agent_coord_redirect(struct agent *, const char *addr,
	    int32_t from);

/* agent_environ.c */
int	agent_adopt_environ_match(const char *env, size_t len,
	    const char *pvm_tmp);

/* agent_frame.c */
void	agent_frame_agent_hello(struct evbuffer *, int32_t host_tid,
	    uint32_t pid, const char *host, const char *arch,
	    const char *secret);
void	agent_frame_task_new(struct evbuffer *, const struct task_hello *);
void	agent_frame_records(struct evbuffer *, int32_t tid,
	    const uint8_t *recs, size_t len, unsigned count);
void	agent_frame_packed(struct evbuffer *, int32_t tid,
	    struct agent_packer *, const struct pack_out *, uint32_t count);
void	agent_frame_task_others(struct evbuffer *,
	    const struct agent_other *, size_t n);
void	agent_frame_task_end(struct evbuffer *, int32_t tid,
	    uint64_t dropped);
void	agent_frame_task_resume(struct evbuffer *, int32_t tid,
	    uint64_t next_seq, uint64_t shipped);
void	agent_frame_flush_done(struct evbuffer *, uint32_t id);
void	agent_frame_control_done(struct evbuffer *, uint32_t id,
	    const struct agent_control_task *, size_t n);
int	agent_dump_frames(struct evbuffer *, FILE *);

/* agent_drain.c */
int	agent_ring_drain(struct ring *, int32_t tid, struct evbuffer *,
	    uint8_t *batch, size_t batchsize, size_t max, int *last_call,
	    const char **why);
int	agent_ring_drain_packed(struct ring *, int32_t tid, struct evbuffer *,
	    uint8_t *batch, size_t batchsize, struct agent_packer *,
	    size_t max, int *last_call, const char **why);

/* agent_clock.c */
int	agent_parse_clock_offset(const char *, int64_t *ns, const char **why);
void	agent_set_clock_offset(int64_t ns);
void	agent_clock_sample(void);
int	agent_clock_shifts(const struct ring *);
uint64_t agent_clock_ns(struct ring *, uint64_t t);

/* agent_task.c */
int	agent_listen(struct agent *);
void	agent_unlisten(struct agent *);
void	agent_accept_all(struct agent *);
void	agent_drain_all(struct agent *, size_t max);
void	agent_tasks_tick(struct agent *);
void	agent_tasks_hello_pending(struct agent *);
void	agent_tasks_free(struct agent *);
void	agent_tasks_release(struct agent *);
struct agent_task *agent_task_find(struct agent *, int32_t tid);
int	agent_task_gone(const struct agent_task *);
int	agent_task_drain(struct agent_task *);
void	agent_tasks_set_breakpoints(struct agent *);
int	agent_task_adopt(struct agent *, int pidfd, struct ring *,
	    const struct task_hello *);
void	agent_ack(struct agent *, const uint8_t *payload, size_t len);
void	agent_tasks_resume(struct agent *);

/* agent_adopt.c: a restarted agent takes over the rings of live tasks */
int	agent_adopt_all(struct agent *);

/* What /proc says of a task (CONTROL_INFO). */
void	agent_frame_task_proc(struct evbuffer *, uint32_t id,
	    const struct task_proc *);
int	agent_proc_read(pid_t, struct task_proc *);

/* agent_control.c */
void	agent_control(struct agent *, const uint8_t *payload, size_t len);
void	agent_breakpoints(struct agent *, const uint8_t *payload, size_t len);
void	agent_controls_free(struct agent *);
void	agent_control_release(struct agent *);
int	agent_proc_stopped(pid_t);

/* agent_pvm.c */
int	agent_pvm_init(struct agent *);
int	agent_pvm_watch(struct agent *);
void	agent_pvm_exit(struct agent *);
void	agent_pvm_gone(struct agent *, int rc);
void	agent_pvm_queued(struct agent *);

/* agent_others.c */
/*
 * One reading of pvmd's task list (n entries of ti): returns 1 when the
 * set of tasks to report as not instrumented changed (a->others).
 */
struct pvmtaskinfo;
int	agent_others_read(struct agent *, struct pvmtaskinfo *, int n);
int	agent_others_watch(struct agent *);
void	agent_others_send(struct agent *);
void	agent_others_free(struct agent *);

#endif
