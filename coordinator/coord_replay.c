/*
 * pmon-coordd -R FILE: a recording (recfile.h) served to tools as if it
 * were live.  No pvmd, no agents, no order core: the recorded stream is
 * already ordered.  Each frame goes where the live one came from:
 * TASK_INFO through the task table and the state model to every
 * subscriber, EVENT through coord_release_event (tools, state model,
 * breakpoints), PROBLEM and NOTICE to the tools as recorded, TASK_GONE
 * to the model (and to recorders).  Queries are answered by the same
 * code as live, on the state at the current position.
 *
 * A recording misses events where its recorder lagged (a lost notice)
 * and after such a gap holds the snapshot the coordinator then sent it,
 * as it starts with one when it began late: there the state model is
 * set from the snapshot (state_load), so that what it shows is what
 * the live model had, not what the recorded events alone make of it.
 *
 * The stream waits for the first subscriber (or the first flush), so
 * that it sees everything, then runs as fast as the subscribers read:
 * nothing is dropped, a pass stops while one has half its queue limit
 * waiting.  At the end, subscribers get BYE and flushes complete; the
 * coordinator then answers queries on the final state until SHUTDOWN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>

#include "coord.h"
#include "log.h"
#include "recfile.h"
#include "wire.h"
#include "xmalloc.h"

/* Frames served in one pass of the loop: queries get their turn. */
#define REPLAY_PASS_FRAMES	512

struct coord_replay {
	struct recfile	*rf;
	char		 path[1024];
	struct event	*ev_pass;
	int		 started;
	int		 done;
	char		*snapshot;	/* REC_SNAPSHOT: the state at the
					   recording's start */
	size_t		 snapshot_len;
	/*
	 * A lost notice came: the model misses events until the next
	 * snapshot (its frame number, for the log).
	 */
	uint64_t	 lost_at;
	/*
	 * The model was set from the recording's first snapshot: the
	 * TASK_INFO frames of the attach that follow it name tasks it
	 * already has.
	 */
	int		 announce;
	uint64_t	 resyncs;	/* snapshots the model took */
	uint64_t	 frames;
	char		 error[512];	/* "": ended cleanly */
	/* The first frame for the tools, read ahead (recording_head). */
	int		 ahead;		/* 1 frame, 0 none, -1 end/damage */
	uint8_t		 ahead_type;
	const uint8_t	*ahead_p;
	size_t		 ahead_len;
};

/* --- frames ------------------------------------------------------------ */

static int
replay_task_info(struct coord *c, const uint8_t *p, size_t len,
    const char **why)
{
	struct task_info ti;
	struct coord_task *t;
	int announced;

	if (task_info_decode(p, len, &ti, why) == -1)
		return -1;
	if ((t = coord_task_find(c, ti.tid)) != NULL && !coord_task_ended(t)) {
		*why = "TASK_INFO for a task that runs";
		return -1;
	}
	announced = c->replay != NULL && c->replay->announce &&
	    state_has_task(c->state, ti.tid);
	if (t == NULL)
		t = coord_task_add(c, ti.tid);
	free(t->host);
	free(t->program);
	t->parent_tid = ti.parent;
	t->pid = ti.pid;
	t->spawn_seq = ti.spawn_seq;
	if (coord_task_ended(t))
		coord_task_move(t, COORD_TASK_LIVE);
	t->host = xstrdup(ti.host);
	t->program = xstrdup(ti.program);
	if (!announced)
		state_task(c->state, ti.tid, ti.parent, ti.pid, ti.host,
		    ti.program);
	coord_broadcast_task(c, t);
	return 0;
}

static int
replay_event(struct coord *c, const uint8_t *p, size_t len, const char **why)
{
	struct order_event ev;
	struct event_hdr h;
	struct coord_task *t;
	struct record rec;

	if (len < EVENT_HDR_SIZE) {
		*why = "EVENT too short";
		return -1;
	}
	event_hdr_decode(p, &h);
	ev.tid = h.tid;
	ev.flags = h.flags;
	ev.match_tid = h.match_tid;
	ev.match_seq = h.match_seq;
	ev.t_corr = h.t_corr;
	if (record_decode(p + EVENT_HDR_SIZE, len - EVENT_HDR_SIZE, &rec,
	    why) == -1)
		return -1;
	if (rec.len != len - EVENT_HDR_SIZE) {
		*why = "EVENT with bytes after its record";
		return -1;
	}
	if ((t = coord_task_find(c, ev.tid)) == NULL || coord_task_ended(t)) {
		*why = "EVENT of a task without TASK_INFO";
		return -1;
	}
	if (ev.flags & ~(EVENT_MATCHED | EVENT_UNMATCHED | EVENT_LOST |
	    EVENT_INCONSISTENT | EVENT_AGAIN | EVENT_UNMONITORED)) {
		*why = "EVENT with unknown flags";
		return -1;
	}
	ev.rec = &rec;
	coord_release_event(c, &ev);
	return 0;
}

static int
replay_task_gone(struct coord *c, const uint8_t *p, size_t len,
    const char **why)
{
	struct coord_task *t;
	int32_t tid;

	tid = len == 4 ? (int32_t)wire_get32(p) : 0;
	if ((t = coord_task_find(c, tid)) == NULL || coord_task_ended(t)) {
		*why = "TASK_GONE of no running task";
		return -1;
	}
	coord_task_move(t, COORD_TASK_ENDED);
	coord_tools_send_gone(c, tid);
	state_task_gone(c->state, tid);
	return 0;
}

static int
replay_host(struct coord *c, const uint8_t *p, size_t len, const char **why)
{
	char name[COORD_STR_MAX], arch[COORD_STR_MAX];
	struct wire_reader r;
	int32_t host_tid;
	int up;

	wire_reader_init(&r, p, len);
	host_tid = (int32_t)wire_read32(&r);
	up = wire_read8(&r);
	wire_readstr(&r, name, sizeof(name));
	wire_readstr(&r, arch, sizeof(arch));
	if (r.err || r.off != len || up > 1) {
		*why = "bad host frame";
		return -1;
	}
	state_host(c->state, host_tid, name, arch, up);
	return 0;
}

/* A PROBLEM or NOTICE body as the C string the senders take. */
static char *
frame_text(const uint8_t *p, size_t len, const char **why)
{
	char *s;

	if (memchr(p, '\0', len) != NULL) {
		*why = "a JSON body holding a NUL";
		return NULL;
	}
	s = xmalloc(len + 1);
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

/* A mid-stream snapshot: to the tools that asked for one, as live. */
static void
replay_send_snapshot(struct coord *c, const uint8_t *p, size_t len)
{
	struct coord_tool *t;

	TAILQ_FOREACH(t, &c->tools, entry)
		if (t->state == COORD_P_ACTIVE && t->want_snapshot)
			coord_frame_reply(bufferevent_get_output(t->bev), 0,
			    REPLY_OK, (const char *)p, len);
}

/*
 * The model takes the snapshot: the first one (a recording that began
 * late), or one after a loss.  One it cannot use is logged, and the
 * replay goes on with the model it has.
 */
static void
replay_resync(struct coord *c, const uint8_t *p, size_t len, int head)
{
	struct coord_replay *rp = c->replay;
	unsigned long long n = rp != NULL ? rp->frames + 1 : 0;
	char err[256];

	if (state_load(c->state, (const char *)p, len, err,
	    sizeof(err)) == -1) {
		log_warnx("%s: frame %llu: a snapshot the state cannot be set "
		    "from (%s); the state goes on from the recorded events "
		    "alone", rp != NULL ? rp->path : "replay", n, err);
		return;
	}
	if (rp == NULL)
		return;
	if (!head)
		log_info("%s: frame %llu: the state is set from the snapshot "
		    "after the loss at frame %llu", rp->path, n,
		    (unsigned long long)rp->lost_at);
	rp->announce = head;
	rp->resyncs++;
}

/*
 * REC_SNAPSHOT: before the stream starts, kept for the tools that
 * subscribe with a snapshot; after, sent to them as live.  The model
 * takes the first one and those after a loss.
 */
static int
replay_snapshot(struct coord *c, const uint8_t *p, size_t len)
{
	struct coord_replay *rp = c->replay;
	int head = rp == NULL || !rp->started;

	if (rp != NULL && head && rp->snapshot == NULL) {
		rp->snapshot = xmalloc(len);
		memcpy(rp->snapshot, p, len);
		rp->snapshot_len = len;
	} else if (!head)
		replay_send_snapshot(c, p, len);
	if (head || rp->lost_at != 0)
		replay_resync(c, p, len, head);
	if (rp != NULL)
		rp->lost_at = 0;
	return 0;
}

/* The tools' lost notice, which a snapshot follows (doc/control.md). */
static int
is_lost_notice(const char *json)
{
	static const char lost[] = "{\"notice\":\"lost\"";

	return strncmp(json, lost, sizeof(lost) - 1) == 0;
}

/* An integer member of o within [lo, hi]; -1 when missing or out. */
static int
json_int_in(const json_t *o, const char *key, long long lo, long long hi,
    long long *v)
{
	const json_t *m = json_object_get(o, key);

	if (!json_is_integer(m))
		return -1;
	*v = json_integer_value(m);
	return *v < lo || *v > hi ? -1 : 0;
}

/*
 * A task pmon did not instrument (the notices of coord_agent.c's
 * TASK_OTHERS) or a host that left the virtual machine (coord_pvm.c), as
 * the live model learnt it: the replayed model learns it at the same
 * point.  Other notices change nothing.
 */
static int
replay_notice(struct coord *c, const char *text, const char **why)
{
	const char *kind, *host, *program;
	long long tid, parent, pid;
	json_t *o;
	int rv = 0;

	if ((o = json_loads(text, 0, NULL)) == NULL ||
	    (kind = json_string_value(json_object_get(o, "notice"))) == NULL)
		goto out;
	if (strcmp(kind, "unmonitored_ended") == 0) {
		if (json_int_in(o, "tid", 1, INT32_MAX, &tid) == -1)
			rv = -1;
		else
			rv = state_task_other_end(c->state, (int32_t)tid);
	} else if (strcmp(kind, "host_deleted") == 0) {
		if (json_int_in(o, "host_tid", 1, INT32_MAX, &tid) == -1)
			rv = -1;
		else
			state_host_deleted(c->state, (int32_t)tid);
	} else if (strcmp(kind, "unmonitored") == 0) {
		host = json_string_value(json_object_get(o, "host"));
		program = json_string_value(json_object_get(o, "program"));
		if (json_int_in(o, "tid", 1, INT32_MAX, &tid) == -1 ||
		    json_int_in(o, "parent", 0, INT32_MAX, &parent) == -1 ||
		    json_int_in(o, "pid", 1, UINT32_MAX, &pid) == -1 ||
		    host == NULL || program == NULL)
			rv = -1;
		else
			rv = state_task_other(c->state, (int32_t)tid,
			    (int32_t)parent, (uint32_t)pid, host, program);
	}
	if (rv == -1)
		*why = "a malformed notice of an unmonitored task";
out:
	json_decref(o);
	return rv == -1 ? -1 : 0;
}

/*
 * Serves one recorded frame; -1 with *why when its contents are bad.
 * A recorded deadlock first brings the model's problems to the same
 * point: live, deadlocks are found by a check between events, which
 * the recording shows only by the PROBLEM it produced.
 */
int
coord_replay_frame(struct coord *c, uint8_t type, const uint8_t *p,
    size_t len, const char **why)
{
	char *json;

	/* The attach's TASK_INFO frames come before anything else. */
	if (c->replay != NULL && type != MSG_TASK_INFO && type != REC_HOST &&
	    type != MSG_NOTICE && type != REC_SNAPSHOT)
		c->replay->announce = 0;
	switch (type) {
	case MSG_TASK_INFO:
		return replay_task_info(c, p, len, why);
	case MSG_EVENT:
		return replay_event(c, p, len, why);
	case MSG_TASK_GONE:
		return replay_task_gone(c, p, len, why);
	case REC_HOST:
		return replay_host(c, p, len, why);
	case REC_SNAPSHOT:
		return replay_snapshot(c, p, len);
	case MSG_PROBLEM:
	case MSG_NOTICE:
		if ((json = frame_text(p, len, why)) == NULL)
			return -1;
		/* Live, deadlocks are found by a check between events. */
		if (type == MSG_PROBLEM &&
		    strstr(json, "\"kind\":\"deadlock\"") != NULL)
			state_check(c->state);
		if (type == MSG_PROBLEM) {
			coord_tools_send_problem(c, json);
		} else {
			if (c->replay != NULL && is_lost_notice(json) &&
			    c->replay->lost_at == 0)
				c->replay->lost_at = c->replay->frames + 1;
			if (replay_notice(c, json, why) == -1) {
				free(json);
				return -1;
			}
			coord_notice(c, json);
		}
		free(json);
		return 0;
	default:
		*why = "a frame a replay cannot serve";
		return -1;
	}
}

/* --- the stream -------------------------------------------------------- */

/* Does a subscriber have half its limit waiting?  Then wait for it. */
static int
replay_blocked(struct coord *c)
{
	struct coord_tool *t;

	TAILQ_FOREACH(t, &c->tools, entry)
		if (t->state == COORD_P_ACTIVE && t->subscribed &&
		    evbuffer_get_length(bufferevent_get_output(t->bev)) >
		    c->tool_high / 2)
			return 1;
	return 0;
}

/* The end of the stream, or of a subscriber that came after it. */
void
coord_replay_bye(struct coord_tool *t)
{
	struct coord_replay *rp = t->coord->replay;
	char reason[600];

	if (rp->error[0] != '\0')
		snprintf(reason, sizeof(reason), "the recording is damaged: %s",
		    rp->error);
	else
		snprintf(reason, sizeof(reason), "the recording ended");
	coord_frame_text(coord_tool_out(t), MSG_BYE, reason);
	t->state = COORD_P_CLOSING;
}

static void
replay_end(struct coord *c)
{
	struct coord_replay *rp = c->replay;
	struct coord_tool *t;

	rp->done = 1;
	if (rp->lost_at != 0)
		log_warnx("%s: events were lost at frame %llu and no snapshot "
		    "follows: the state from there is that of the recorded "
		    "events alone", rp->path, (unsigned long long)rp->lost_at);
	if (rp->error[0] != '\0')
		log_warnx("%s: %s; served the %llu frames before it", rp->path,
		    rp->error, (unsigned long long)rp->frames);
	else
		log_info("%s: served all %llu frames; the state was set from "
		    "%llu snapshots", rp->path, (unsigned long long)rp->frames,
		    (unsigned long long)rp->resyncs);
	recfile_close(rp->rf);
	rp->rf = NULL;
	/* The model as a live coordinator's last round leaves it. */
	state_check(c->state);
	/* Flushes answer before BYE closes the stream. */
	coord_flush_settle(c);
	TAILQ_FOREACH(t, &c->tools, entry)
		if (t->state == COORD_P_ACTIVE && t->subscribed)
			coord_replay_bye(t);
}

static void
replay_pass_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;
	struct coord_replay *rp = c->replay;
	const uint8_t *p;
	const char *why;
	uint8_t type;
	size_t len;
	int i, rv;

	(void)fd;
	(void)what;
	if (rp->done || c->shutting_down)
		return;
	for (i = 0; i < REPLAY_PASS_FRAMES; i++) {
		if (replay_blocked(c))
			return;		/* coord_replay_writable resumes */
		if (rp->ahead != 0) {
			rv = rp->ahead;
			type = rp->ahead_type;
			p = rp->ahead_p;
			len = rp->ahead_len;
			rp->ahead = 0;
		} else
			rv = recfile_next(rp->rf, &type, &p, &len);
		if (rv != 1) {
			if (rv == -1)
				snprintf(rp->error, sizeof(rp->error), "%s",
				    recfile_error(rp->rf));
			replay_end(c);
			return;
		}
		if (coord_replay_frame(c, type, p, len, &why) == -1) {
			snprintf(rp->error, sizeof(rp->error), "bad frame "
			    "%llu (%s) before offset %llu: %s",
			    (unsigned long long)rp->frames + 1,
			    proto_msg_name(type),
			    (unsigned long long)recfile_offset(rp->rf), why);
			replay_end(c);
			return;
		}
		rp->frames++;
	}
	event_active(rp->ev_pass, EV_TIMEOUT, 0);
}

void
coord_replay_start(struct coord *c)
{
	struct coord_replay *rp = c->replay;

	if (rp == NULL || rp->started)
		return;
	rp->started = 1;
	log_info("%s: serving the recording", rp->path);
	event_active(rp->ev_pass, EV_TIMEOUT, 0);
}

/* A subscriber's queue drained: go on if the stream waited for it. */
void
coord_replay_writable(struct coord *c)
{
	struct coord_replay *rp = c->replay;

	if (rp->started && !rp->done && !replay_blocked(c) &&
	    !event_pending(rp->ev_pass, EV_TIMEOUT, NULL))
		event_active(rp->ev_pass, EV_TIMEOUT, 0);
}

/*
 * Before the stream starts, a tool that subscribes with a snapshot gets
 * the recorded one: a recording that began late starts from a state its
 * model never saw (doc/recording.md).
 */
int
coord_replay_snapshot(const struct coord *c, const char **json,
    size_t *len)
{
	const struct coord_replay *rp = c->replay;

	if (rp == NULL || rp->started || rp->snapshot == NULL)
		return 0;
	*json = rp->snapshot;
	*len = rp->snapshot_len;
	return 1;
}

int
coord_replay_done(const struct coord *c)
{
	return c->replay != NULL && c->replay->done;
}

/*
 * The hosts (and snapshot) a recording starts with are the machine a
 * live tool would find when it attaches: the model gets them before
 * any tool does.  The first other frame waits in rp->ahead.
 */
static void
recording_head(struct coord *c)
{
	struct coord_replay *rp = c->replay;
	const char *why;

	while ((rp->ahead = recfile_next(rp->rf, &rp->ahead_type,
	    &rp->ahead_p, &rp->ahead_len)) == 1) {
		if (rp->ahead_type != REC_HOST &&
		    rp->ahead_type != REC_SNAPSHOT)
			return;
		if (coord_replay_frame(c, rp->ahead_type, rp->ahead_p,
		    rp->ahead_len, &why) == -1) {
			/* Served at the start, it fails there with why. */
			return;
		}
		rp->frames++;
	}
}

/*
 * Opens the recording and checks its header; the clock correction it
 * was made with is only logged: its times are already corrected.
 */
int
coord_replay_open(struct coord *c, const char *path)
{
	struct coord_replay *rp;
	const struct recfile_header *h;
	char err[512];

	rp = xcalloc(1, sizeof(*rp));
	snprintf(rp->path, sizeof(rp->path), "%s", path);
	if ((rp->rf = recfile_open(path, err, sizeof(err))) == NULL) {
		log_warnx("%s: %s", path, err);
		free(rp);
		return -1;
	}
	if ((rp->ev_pass = event_new(c->base, -1, 0, replay_pass_cb, c)) ==
	    NULL)
		fatalx("%s: event_new", __func__);
	h = recfile_header(rp->rf);
	log_info("%s: written by %s from %s, clock correction %s", path,
	    h->writer, h->source, h->clock);
	snprintf(c->listen_addr, sizeof(c->listen_addr), "replay");
	c->replay = rp;
	recording_head(c);
	return 0;
}

void
coord_replay_free(struct coord *c)
{
	struct coord_replay *rp = c->replay;

	if (rp == NULL)
		return;
	if (rp->ev_pass != NULL)
		event_free(rp->ev_pass);
	recfile_close(rp->rf);
	free(rp->snapshot);
	free(rp);
	c->replay = NULL;
}
