/*
 * pmon-coordd: the coordinator of one PVM virtual machine.  Spawns one
 * pmon-agentd per host, merges the agents' records into one causally
 * ordered stream (order.h) and serves it to tools on a unix socket.
 *
 * Everything non-static is prefixed coord_ and declared here: all files
 * but coordd.c are linked into the unit tests and the fuzz targets too.
 */
#ifndef PMON_COORD_H
#define PMON_COORD_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent_msg.h"
#include "clock.h"
#include "jsonstr.h"
#include "log.h"
#include "order.h"
#include "pack.h"
#include "proto.h"
#include "request.h"
#include "secret.h"
#include "state.h"
#include "tool_msg.h"
#include "zstream.h"

struct bufferevent;
struct evbuffer;
struct event;
struct event_base;
struct evconnlistener;

#define COORD_STR_MAX		1024	/* the longest string in a payload */
#define COORD_READY_TIMEOUT	10	/* s to wait for spawned agents */
#define COORD_FLUSH_TIMEOUT	5	/* s for the final flush round */
#define COORD_DRAIN_TIMEOUT	5	/* s to write the last frames */
#define COORD_HELLO_TIMEOUT	10	/* s from accept to a peer's hello */
#define COORD_PREAUTH_MAX	256	/* connections without a hello yet */
#define COORD_PREAUTH_SOURCE	32	/* ...of them from one address */
#define COORD_ACCEPT_PAUSE_MS	1000	/* no descriptor left: accept again
					   after this */
#define COORD_TOOL_HIGH		(8 * 1024 * 1024)  /* a tool's queue: full */
#define COORD_TOOL_HIGH_MIN	(64 * 1024)		/* -Q bounds */
#define COORD_TOOL_HIGH_MAX	(1024 * 1024 * 1024)
#define COORD_TOOL_MAX		(64 * 1024 * 1024) /* drop the tool */
#define COORD_MAX_AGENTS	1024
#define COORD_MAX_TOOLS		256
#define COORD_TASK_BUCKETS	4096
#define COORD_PVM_TAG_HOSTADD	0x706d6f6e	/* "pmon": our notify tags */
#define COORD_PVM_TAG_HOSTDEL	0x706d6f64	/* "pmod" */
#define COORD_CHECK_MS		500	/* a flush round and a deadlock check */
#define COORD_AGENT_GRACE_MS	5000	/* a lost agent's tasks wait this
					   long for its successor */
#define COORD_AGENT_RESPAWNS	3	/* agents started again per host */
#define COORD_ADOPT_MS		2000	/* an agent of a coordinator before
					   answers within this */
#define COORD_ACK_MS		10	/* ACKs wait this long to batch */
#define COORD_HOLD_CHECK_MS	250	/* how often stalled lossless tools
					   are looked for */
#define COORD_LOSSLESS_WAIT_MS	10000	/* -W: a lossless tool that reads
					   nothing this long is degraded */
#define COORD_LOSSLESS_WAIT_MAX	3600000
#define COORD_HOST_NUMBERS	4096	/* a tid's host field: 12 bits */
#define COORD_PVM_TAG_RELAY	0x706d6f72	/* "pmor": a child is ready */
#define COORD_PVM_TAG_EXIT	0x706d6f78	/* "pmox": parent or child
						   exited */

/* --- frames we send (coord_frame.c) --- */

size_t	coord_frame_event(uint8_t *buf, size_t size,
	    const struct order_event *);
void	coord_frame_u32(struct evbuffer *, uint8_t type, uint32_t);
void	coord_frame_empty(struct evbuffer *, uint8_t type);
void	coord_frame_text(struct evbuffer *, uint8_t type, const char *);
void	coord_frame_reply(struct evbuffer *, uint32_t id, uint8_t status,
	    const char *body, size_t len);
void	coord_frame_body(struct evbuffer *, uint8_t type, const char *body,
	    size_t len);
struct breakpoint;
void	coord_frame_control(struct evbuffer *, uint32_t id, uint8_t op,
	    const int32_t *tids, size_t n);
void	coord_frame_breakpoints(struct evbuffer *, const struct breakpoint *,
	    size_t n);
struct coord_task;
#define COORD_TASK_INFO_MAX	(FRAME_HDR_SIZE + 1024)
size_t	coord_frame_task_info(uint8_t *buf, const struct coord_task *);

/* --- the daemon's state (coord.c) --- */

/*
 * Where a task's stream stands (coord_task_move, the one place that
 * changes it):
 *
 *	LIVE -> ENDED		its end came, or its agent closed
 *	LIVE -> ORPHAN		its agent was lost: it waits for the next
 *				agent of its host, until orphan_until
 *	ORPHAN -> LIVE		that agent adopted it
 *	ORPHAN -> EXPIRED	none did in time, or its host was deleted
 *	ORPHAN -> ENDED		another process took its tid
 *	ENDED, EXPIRED -> LIVE	a new task under the tid
 *
 * An ended task that an agent sends more of (it adopted it too late, or
 * re-sends an end we had) is "late" (coord_task_late): what comes is
 * dropped until that agent's TASK_END.
 */
enum coord_task_stage {
	COORD_TASK_LIVE,
	COORD_TASK_ORPHAN,
	COORD_TASK_ENDED,
	COORD_TASK_EXPIRED,
};

struct coord_task {
	TAILQ_ENTRY(coord_task)	 entry;
	struct coord_task	*hnext;		/* in coord.task_hash */
	int32_t			 tid;
	int32_t			 parent_tid;
	uint32_t		 pid;
	uint64_t		 spawn_seq;
	enum coord_task_stage	 stage;
	struct coord_agent	*agent;		/* NULL once it left */
	uint64_t		 orphan_until;	/* ORPHAN until, monotonic ms */
	uint64_t		 late_records;	/* dropped while late */
	uint64_t		 seen_seq;	/* the last record added */
	int			 resumed;	/* re-sent records may come:
						   those <= seen_seq are
						   duplicates, dropped */
	uint64_t		 dups;
	uint64_t		 released_seq;	/* the last released and in
						   every tool's socket: acked */
	int			 done;		/* ended, all of it so */
	int			 ack_due;	/* on coord.acks */
	uint64_t		 out_seq;	/* the last released */
	int			 out_done;	/* ended, all released */
	int			 in_batch;	/* on coord.ack_batch */
	unsigned		 life;		/* TASK_NEWs of this tid */
	int			 server;	/* pvmgs: the order consumes its
						   records and releases none */
	struct coord_agent	*end_agent;	/* sent its TASK_END */
	struct coord_uplink	*up;		/* an intermediate: where its
						   events go up */
	struct coord_uplink	*parked;	/* ...and, while it is an
						   orphan, where they wait */
	uint64_t		 dropped;	/* ...and its TASK_END's, */
	int			 end_up;	/* which goes up once it is
						   all released */
	char			*host;
	char			*program;
	unsigned		 stop_tool;	/* the stop's owner; 0: none */
	uint32_t		 stop_bp;	/* the breakpoint it hit, or 0 */
	struct pack_state	 unpack;	/* its TASK_PACKED, from its
						   agent's TASK_NEW on */
};
TAILQ_HEAD(coord_tasks, coord_task);

enum coord_peer_state {
	COORD_P_HELLO,		/* connected, waiting for its hello */
	COORD_P_ACTIVE,
	COORD_P_CLOSING,	/* writing its last frames */
};

/*
 * A connection that has not said a valid hello yet (coord_conn.c).  It
 * has COORD_HELLO_TIMEOUT from its accept, however slowly it sends, and
 * the oldest make room for new ones, so that a flood of idle or slow
 * connections never keeps a real agent or tool out.
 */
struct coord_preauth {
	TAILQ_ENTRY(coord_preauth) entry;
	struct coord_agent	*agent;		/* the peer: one of the two */
	struct coord_tool	*tool;
	uint64_t		 deadline_ms;
	char			 source[64];	/* its address, or "local" */
	int			 listed;
};
TAILQ_HEAD(coord_preauths, coord_preauth);

struct coord_agent {
	TAILQ_ENTRY(coord_agent) entry;
	struct coord		*coord;
	struct bufferevent	*bev;
	enum coord_peer_state	 state;
	char			 peer[128];	/* address, for the log */
	int32_t			 host_tid;
	char			*host;
	uint32_t		 pid;		/* its hello's */
	struct zs_in		 zin;		/* its ZDATA stream */
	uint64_t		 nrecords;	/* records it sent */
	uint64_t		 wire_bytes;	/* bytes it sent (frames) */
	int			 lost;		/* went away on its own: its
						   tasks wait for another */
	struct coord_uplink	*up;		/* an intermediate: its
						   connection to the root */
	struct agent_hello	*up_wait;	/* ...its hello, while its
						   host's last uplink closes */
	int			 host_back;	/* its host was away: its
						   first FLUSH_DONE ends that */
	struct coord_preauth	 pre;
};
TAILQ_HEAD(coord_agents, coord_agent);

/* Events a tool lost while its queue was full, per task. */
struct coord_lost {
	int32_t			 tid;
	uint64_t		 first, last;	/* seqs */
	uint64_t		 events;
};

struct coord_tool {
	TAILQ_ENTRY(coord_tool)	 entry;
	struct coord		*coord;
	struct bufferevent	*bev;
	enum coord_peer_state	 state;
	int			 subscribed;
	int			 want_snapshot;	/* TOOL_SNAPSHOT: also to resync */
	int			 record;	/* TOOL_RECORD: gets TASK_GONE */
	int			 lossless;	/* TOOL_LOSSLESS, until degraded */
	int			 degraded;	/* was lossless, read nothing */
	uint64_t		 added;		/* bytes put in its queue */
	uint64_t		 drained;	/* bytes taken from its queue */
	uint64_t		 drained_seen;	/* ...at the last watch */
	uint64_t		 progress_ms;	/* when it last took some */
	uint64_t		 holds;		/* times it held the agents back */
	uint64_t		 held_ms;	/* for how long in all */
	uint64_t		 lost_events;	/* events it lost, in all */
	int			 full;		/* dropping events until drained */
	struct coord_lost	*lost;		/* while full, per task */
	size_t			 nlost, lostcap;
	uint64_t		 lost_problems;
	char			 name[64];	/* for the log */
	unsigned		 id;
	int			 replies_held;	/* not reading its requests:
						   its replies pile up */
	struct coord_preauth	 pre;
};
TAILQ_HEAD(coord_tools, coord_tool);

/* A flush in progress: the agents it still waits for. */
struct coord_flush {
	TAILQ_ENTRY(coord_flush) entry;
	uint32_t		 round;
	int			 final;		/* the shutdown flush */
	uint64_t		 mark;		/* order_mark() at its start */
	int			 sync;		/* asked for by the order core */
	struct coord_tool	*tool;		/* gets FLUSH_DONE, or NULL */
	uint32_t		 tool_id;
	int			 reply;		/* a REPLY, not FLUSH_DONE */
	int			 snapshot;	/* a snapshot (REPLY id 0), not
						   FLUSH_DONE */
	int			 again;		/* rounds after a tool's first */
	uint32_t		 op;		/* a stop that ends with this
						   round (coord_control.c) */
	struct coord_agent	**waiting;
	size_t			 nwaiting;
};
TAILQ_HEAD(coord_flushes, coord_flush);

/* A conditional request (coord_control.c): its trigger and actions. */
struct coord_bp {
	TAILQ_ENTRY(coord_bp)	 entry;
	uint32_t		 id;
	struct coord_tool	*owner;		/* NULL: its tool left */
	int			 enabled;
	uint64_t		 hits;
	int32_t			 stopline_tid;	/* a stopline: task and seq */
	uint64_t		 stopline;
	struct req		*req;
	char			 text[COORD_STR_MAX];
};
TAILQ_HEAD(coord_bps, coord_bp);
struct coord_op;
TAILQ_HEAD(coord_ops, coord_op);

/* A host we spawned an agent on, until that agent says hello. */
struct coord_host {
	TAILQ_ENTRY(coord_host)	 entry;
	int32_t			 host_tid;
	char			*name;
	int			 hello;
	int			 hello_late;	/* said not to have come */
	unsigned		 respawns;	/* agents started after one
						   was lost */
	int			 deleted;	/* left the virtual machine */
	int32_t			 agent_tid;	/* under an intermediate: its
						   agent, watched through
						   PvmTaskExit, or 0 */
	int			 adopt_told;	/* agents of a coordinator
						   before told to dial us */
	uint64_t		 adopt_until;	/* monotonic ms: a new agent
						   then, if none answers; 0 */
	int32_t			 adopt_spawned;	/* that new agent */
	unsigned		 adopt_rounds;	/* ...left at once, and they
						   were asked again */
};
TAILQ_HEAD(coord_hosts, coord_host);

struct coord_replay;

/*
 * A host whose agent was lost: until its next agent answers a flush (or
 * COORD_AGENT_GRACE_MS pass without one), no round judges a receive
 * from its tasks (order_host_away).
 */
struct coord_away {
	uint32_t		 host;		/* a tid's host field */
	uint64_t		 until;		/* monotonic ms */
};

/*
 * An intermediate coordinator of a tree (-U, coord_relay.c): its
 * subtree, the root it forwards to, an uplink per agent, and the
 * root's flush rounds it passes down.
 */
struct coord_uplink;
struct relay_flush;
TAILQ_HEAD(coord_uplinks, coord_uplink);
TAILQ_HEAD(relay_flushes, relay_flush);
struct coord_relay {
	int			 subtree;
	uint8_t			 mine[COORD_HOST_NUMBERS / 8];	/* its hosts */
	char			 root[300];	/* ADDR:PORT */
	struct coord_uplinks	 uplinks;
	struct relay_flushes	 flushes;
};

/* The root of a tree (-F): an intermediate it spawned, and its hosts. */
struct coord_child {
	int			 subtree;
	int32_t			 tid;		/* its PVM tid; 0: gone */
	char			*host;		/* where it runs */
	int32_t			 host_tid;	/* that host's pvmd */
	int			 moved;		/* started on another host:
						   its agents are told where
						   once it listens */
	char			 addr[300];	/* where its agents dial; ""
						   until it said so */
	int32_t			*hosts;		/* pvmd tids */
	char			**names;
	size_t			 nhosts;
	unsigned		 restarts;
};

/*
 * A batch on its way to the tools (coord_ack.c): what its release lets
 * the agents forget, once every tool that got it has taken it up to
 * its offset (coord_tool.added) into its socket.
 */
struct coord_ack_ticket {
	struct coord_tool	*tool;		/* NULL: it left */
	uint64_t		 offset;
};
struct coord_ack_entry {
	int32_t			 tid;
	unsigned		 life;
	uint64_t		 seq;
	int			 done;
};
struct coord_delivery {
	TAILQ_ENTRY(coord_delivery) entry;
	struct coord_ack_ticket	*tickets;
	size_t			 ntickets;
	struct coord_ack_entry	*acks;
	size_t			 nacks;
};
TAILQ_HEAD(coord_deliveries, coord_delivery);

/* Released events, framed, on their way to the subscribers. */
#define COORD_BATCH_SIZE	(128 * 1024)
struct coord_batch_buf;
struct coord_batch {
	struct coord_batch_buf	*cur;		/* holds buf */
	uint8_t			*buf;
	size_t			 len, size;
};

struct coord {
	struct event_base	*base;
	struct coord_replay	*replay;	/* -R: serving a recording */
	struct coord_relay	*relay;		/* -U: an intermediate */
	unsigned		 fanout;	/* -F: agents per intermediate */
	int16_t			*host_subtree;	/* a tree's root: each host
						   number's subtree, or -1 */
	struct coord_child	*children;
	size_t			 nchildren;
	char			 coordd_path[4096]; /* intermediates' binary */
	struct order		*order;
	struct state		*state;		/* the model of the released stream */
	struct event		*ev_check;	/* rounds that look for deadlocks */
	int			 verbose;
	int			 spawn_agents;	/* not -N */
	char			 agent_path[4096];
	char			 agent_time[8];	/* -t: agents' -t */
	char			 agent_buffer[16]; /* -b: agents' -b, or "" */
	char			 agent_live[8];	/* -i: agents' -i, or "" */
	char			 agent_ring[16]; /* -R: agents' -R, or "" */
	char			 agent_compress[8]; /* -z: agents' -z, or "" */
	char			 agent_block[16]; /* -k: agents' -k, or "" */
	int			 agent_tasker;	/* -T: agents start the hosts'
						   task starters (-T) */

	char			 listen_host[256]; /* -l, or chosen */
	char			 listen_addr[300]; /* ADDR:PORT for agents */
	struct evconnlistener	*agent_listener;
	struct evconnlistener	*agent_listener_wide; /* opened when a host
						   joins a loopback VM */
	struct coord_agents	 agents;
	unsigned		 nagents;	/* with those before their hello */
	struct coord_preauths	 preauth;	/* agents and tools before their
						   hello, oldest first */
	unsigned		 npreauth;
	unsigned		 npreauth_agents; /* of them */
	struct event		*ev_accept;	/* accepting again after EMFILE */
	struct log_rate		 accept_log;	/* failed accepts */
	struct log_rate		 refuse_log;	/* peers refused before hello */

	char			 sock_path[108];
	char			 secret_path[108];	/* the secret's file */
	char			 secret[PMON_SECRET_LEN + 1];
	struct evconnlistener	*tool_listener;
	struct coord_tools	 tools;
	unsigned		 ntools;
	struct coord_batch	 batch;		/* coord_batch_event */
	struct event		*ev_batch;	/* sends it at the pass's end */
	size_t			 tool_high;	/* -Q: a tool's queue is full */
	uint64_t		 lossless_wait_ms; /* -W; 0: never degrade */
	int			 held_back;	/* not reading from the agents:
						   a lossless tool is full */
	uint64_t		 held_since, held_ms, holds;
	unsigned		 held_by;	/* the tool that was full */
	struct event		*ev_resume;	/* reading goes on */
	struct event		*ev_hold;	/* coord_hold.c's watch */
	unsigned		 next_tool_id;

	struct coord_tasks	 tasks;
	struct coord_task	*task_hash[COORD_TASK_BUCKETS];
	struct coord_task	*task_last;	/* coord_task_find's last */
	struct coord_away	*away;		/* hosts away, a few */
	size_t			 naway;
	struct coord_flushes	 flushes;
	uint32_t		 next_round;
	struct event		*ev_sync;	/* a round for the order core */
	int			 sync_rounds;	/* such rounds in flight */
	struct clock		*clock;
	struct clock_params	 clock_params;	/* -C */
	struct coord_hosts	 hosts;
	struct coord_ops	 ops;		/* stops, continues, kills */
	uint32_t		 next_op;
	struct coord_bps	 bps;
	uint32_t		 next_bp;
	/* A "stop *" in force: tasks that start meanwhile stop too. */
	int			 stop_all;
	unsigned		 stop_all_tool;
	uint32_t		 stop_all_bp;

	int			 ready;		/* said ready */
	int			 ready_fd;	/* -r, or -1 */
	struct event		*ev_ready;	/* the agents' hello timeout */
	struct event		*ev_adopt;	/* agent_adopt's answers */
	struct coord_old_agent {
		int32_t		 tid;
		int32_t		 host;		/* its pvmd */
	}			*old_agents;	/* pmon-agentd tasks we did
						   not start, at our start */
	size_t			 nold_agents;
	void			(*ready_hook)(struct coord *);

	int			 pvm_tid;	/* -1: not enrolled */
	struct event		*ev_pvm[8];
	int			 nev_pvm;
	int			 all_local;	/* every host is this one:
						   agents dial loopback */

	int			 shutting_down;	/* the final flush runs */
	int			 finishing;	/* writing the last frames */

	int32_t			*acks;		/* tasks whose ACK is due */
	size_t			 nacks, ackcap;
	int32_t			*ack_batch;	/* tasks released into the
						   batch (coord_ack.c) */
	size_t			 nack_batch, ack_batchcap;
	struct coord_deliveries	 deliveries;	/* batches not yet in every
						   tool's socket */
	struct event		*ev_ack;	/* sends them, batched */
	struct event		*ev_shutdown;	/* final flush / drain timer */
};

int	coord_init(struct coord *, struct event_base *);
uint64_t coord_mono_ms(void);
void	coord_free(struct coord *);
struct coord_task *coord_task_find(struct coord *, int32_t tid);
struct coord_task *coord_task_add(struct coord *, int32_t tid);
void		 coord_task_move(struct coord_task *, enum coord_task_stage);
int		 coord_task_ended(const struct coord_task *);
int		 coord_task_late(const struct coord_task *);
void	coord_broadcast_task(struct coord *, const struct coord_task *);
void	coord_check_ready(struct coord *);
void	coord_start_ready_timer(struct coord *);
void	coord_flush_start(struct coord *, struct coord_tool *, uint32_t id);
void	coord_flush_reply(struct coord *, struct coord_tool *, uint32_t id);
void	coord_flush_snapshot(struct coord *, struct coord_tool *);
int	coord_flush_op(struct coord *, uint32_t op);
int	coord_request_run(struct coord *, struct coord_tool *,
	    const struct request_msg *,
	    char **body, size_t *len);
int	coord_request_is_control(enum req_kind);
void	coord_snapshot_send(struct coord *, struct coord_tool *);
void	coord_flush_done(struct coord *, struct coord_agent *, uint32_t);
void	coord_flush_forget(struct coord *, struct coord_agent *);
void	coord_flush_forget_tool(struct coord *, struct coord_tool *);
void	coord_shutdown(struct coord *, const char *why);
void	coord_sync_check(struct coord *);
void	coord_output_check(struct coord *);
void	coord_release_event(struct coord *, const struct order_event *);
void	coord_flush_settle(struct coord *);

/* coord_replay.c: -R, a recording served as if live (doc/recording.md) */
int	coord_replay_open(struct coord *, const char *path);
void	coord_replay_start(struct coord *);
int	coord_replay_done(const struct coord *);
int	coord_replay_snapshot(const struct coord *, const char **json,
	    size_t *len);
void	coord_replay_writable(struct coord *);
void	coord_replay_bye(struct coord_tool *);
void	coord_replay_free(struct coord *);
int	coord_replay_frame(struct coord *, uint8_t type, const uint8_t *,
	    size_t, const char **why);

/* coord_control.c */
struct req;
#define COORD_REPLY_LATER	2	/* coord_control_run: REPLY follows */
int	coord_control_run(struct coord *, struct coord_tool *, uint32_t req_id,
	    uint32_t flags, const struct req *, char **body, size_t *len);
int	coord_control_done(struct coord_agent *, const uint8_t *, size_t);
int	coord_control_proc(struct coord_agent *, const uint8_t *, size_t);
void	coord_control_break(struct coord *, int32_t tid,
	    const struct record *);
void	coord_control_install(struct coord *, struct coord_agent *to);
void	coord_control_event(struct coord *, const struct order_event *);
void	coord_control_task_new(struct coord *, struct coord_task *);
void	coord_control_problem(struct coord *, const struct state_problem *);
void	coord_control_tool_gone(struct coord *, struct coord_tool *);
void	coord_control_agent_gone(struct coord *, struct coord_agent *);
void	coord_control_flushed(struct coord *, uint32_t op);
void	coord_control_free(struct coord *);
void	coord_notice(struct coord *, const char *json);
void	coord_notice_tool(struct coord *, const struct coord_tool *,
	    const char *what);

/* coord_agent.c */
/* The host field of a PVM tid: a small number naming the host. */
#define coord_host_number(tid)	record_tid_host(tid)
int	coord_agent_listen(struct coord *);
int	coord_agent_listen_wide(struct coord *, const char *host);
void	coord_agent_drop(struct coord_agent *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	coord_agent_free(struct coord_agent *);
int	coord_agent_frame(struct coord_agent *, uint8_t type,
	    const uint8_t *payload, size_t len);
void	coord_agent_read(struct coord_agent *);
void	coord_agent_orphans_check(struct coord *, int all);
void	coord_host_away(struct coord *, uint32_t host, uint64_t ms);
void	coord_agent_host_gone(struct coord *, const char *host);

/* coord_relay.c: an intermediate of a tree (-U) */
struct agent_hello;
int	coord_relay_init(struct coord *, const char *root, const char *spec);
void	coord_relay_order(struct coord *);
int	coord_relay_agent_hello(struct coord_agent *,
	    const struct agent_hello *);
void	coord_relay_agent_gone(struct coord_agent *);
void	coord_relay_event(struct coord *, const struct order_event *);
void	coord_relay_adopted(struct coord_agent *, struct coord_task *);
void	coord_relay_task_free(struct coord_task *);
void	coord_relay_forward(struct coord_agent *, uint8_t type,
	    const uint8_t *, size_t);
void	coord_relay_down(struct coord_agent *, uint8_t type,
	    const uint8_t *, size_t);
void	coord_relay_task_done(struct coord *, int32_t tid);
int	coord_relay_flush_done(struct coord_agent *, uint32_t round);
void	coord_relay_settle(struct coord *);
void	coord_relay_batch_out(struct coord *);
size_t	coord_relay_backlog(const struct coord *);
void	coord_relay_free(struct coord *);

/* coord_hold.c: lossless tools hold the agents back */
int	coord_hold_init(struct coord *);
void	coord_hold_free(struct coord *);
void	coord_hold_check(struct coord *, struct coord_tool *);
void	coord_hold_uplink(struct coord *, size_t queued);
void	coord_hold_release(struct coord *);
int	coord_hold_busy(const struct coord *);
void	coord_hold_tool_new(struct coord_tool *);
void	coord_hold_tool_gone(struct coord *, struct coord_tool *);

/* coord_ack.c */
void	coord_ack_released(struct coord *, int32_t tid, uint64_t last);
void	coord_ack_done(struct coord *, int32_t tid);
void	coord_ack_taken(struct coord *, int32_t tid, uint64_t last);
void	coord_ack_batch_out(struct coord *);
void	coord_ack_delivered(struct coord *);
void	coord_ack_tool_gone(struct coord *, struct coord_tool *);
void	coord_ack_agent_gone(struct coord *, struct coord_agent *);
void	coord_ack_free(struct coord *);

/* coord_tool.c */
int	coord_tool_listen(struct coord *);
void	coord_tool_drop(struct coord_tool *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	coord_tool_free(struct coord_tool *);
void	coord_tools_send(struct coord *, const void *, size_t);
void	coord_tool_send_tasks(struct coord_tool *);
int	coord_tool_frame(struct coord_tool *, uint8_t type,
	    const uint8_t *payload, size_t len);
int	coord_tool_probe(const char *path);
void	coord_batch_event(struct coord *, const struct order_event *);
void	coord_batch_flush(struct coord *);
void	coord_batch_init(struct coord_batch *);
void	coord_batch_free(struct coord_batch *);
struct evbuffer *coord_tool_out(struct coord_tool *);
void	coord_tools_send_problem(struct coord *, const char *json);
void	coord_tools_send_gone(struct coord *, int32_t tid);
void	coord_tool_lost(struct coord_tool *);
void	coord_tool_full(struct coord_tool *);
void	coord_tools_write(struct coord *, char **body, size_t *len);

/*
 * coord_conn.c: framing shared by agents and tools.  A frame callback
 * returns 0 to go on, 1 to stop after this frame (the rest stays in the
 * input), -1 when it dropped the peer.
 */
typedef int (*coord_frame_cb)(void *peer, uint8_t type,
    const uint8_t *payload, size_t len);
int	coord_conn_read(struct bufferevent *, coord_frame_cb, void *peer,
	    const struct coord_preauth *, uint8_t hello, const char **why);
void	coord_conn_close(struct bufferevent *, const char *error);
int	coord_peer_name(int fd, char *buf, size_t size);
void	coord_preauth_add(struct coord *, struct coord_preauth *, int fd);
void	coord_preauth_done(struct coord *, struct coord_preauth *);
void	coord_preauth_expire(struct coord *);
int	coord_accept_init(struct coord *);
void	coord_accept_error(struct coord *, const char *what);
int	coord_secret_check(const struct coord *, const char *got, char *msg,
	    size_t size);

/* coord_pvm.c */
int	coord_pvm_init(struct coord *);
int	coord_pvm_choose_listen(struct coord *);
void	coord_pvm_spawn_all(struct coord *);
void	coord_pvm_respawn(struct coord *, int32_t host_tid);
int	coord_pvm_relay_ready(struct coord *);
void	coord_pvm_children_free(struct coord *);
const char *coord_pvm_via(const struct coord *, int32_t host_tid);
int	coord_pvm_watch(struct coord *);
void	coord_pvm_exit(struct coord *);
int	coord_pvmd_alive(char *why, size_t size);

#endif
