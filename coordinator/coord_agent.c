/*
 * The agents' side of the coordinator: a TCP listener (on loopback while
 * every host is this one), one bufferevent per agent, and the handling
 * of what agents send.  An agent's first frame is its hello, with the
 * secret.  An agent that sends anything malformed or out of place, or a
 * wrong secret, is logged and dropped; its tasks are ended so that
 * nobody waits for them, and the others go on.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "addr.h"
#include "coord.h"
#include "log.h"
#include "record.h"
#include "xmalloc.h"

/* Ends every task the agent still owns: it will send nothing more. */
static void
agent_end_tasks(struct coord_agent *a)
{
	struct coord *c = a->coord;
	struct coord_task *t;
	const char *why;

	TAILQ_FOREACH(t, &c->tasks, entry) {
		if (t->agent != a)
			continue;
		t->agent = NULL;
		if (coord_task_ended(t))
			continue;
		coord_task_move(t, COORD_TASK_ENDED);
		if (order_task_end(c->order, t->tid, 0, &why) == -1)
			log_warnx("task t%x: %s", (unsigned)t->tid, why);
	}
}

/*
 * The agent went away on its own (killed, crashed, its connection
 * broke): its tasks may well be running still, with their records in
 * their rings.  They wait COORD_AGENT_GRACE_MS for another agent of
 * their host to adopt them (agent_task_new), and are ended only then.
 */
static void
agent_orphan_tasks(struct coord_agent *a)
{
	struct coord *c = a->coord;
	struct coord_task *t;
	uint64_t until = coord_mono_ms() + COORD_AGENT_GRACE_MS;

	TAILQ_FOREACH(t, &c->tasks, entry) {
		if (t->agent != a)
			continue;
		t->agent = NULL;
		if (coord_task_ended(t))
			continue;
		coord_task_move(t, COORD_TASK_ORPHAN);
		t->orphan_until = until;
	}
}

/*
 * Ends an orphaned task no agent will adopt.  What it recorded since its
 * agent was lost is gone with it, and nothing says how much.
 */
static void
orphan_end(struct coord *c, struct coord_task *t)
{
	const char *why;

	coord_task_move(t, COORD_TASK_EXPIRED);
	coord_relay_task_free(t);
	if (order_task_end(c->order, t->tid, 0, &why) == -1)
		log_warnx("task t%x: %s", (unsigned)t->tid, why);
}

/*
 * A host's agent was lost (or, at an intermediate, has not come yet):
 * receives from its tasks wait for the next, for ms at most.
 */
void
coord_host_away(struct coord *c, uint32_t host, uint64_t ms)
{
	size_t i;

	for (i = 0; i < c->naway && c->away[i].host != host; i++)
		;
	if (i == c->naway)
		c->away = xreallocarray(c->away, ++c->naway,
		    sizeof(*c->away));
	c->away[i].host = host;
	c->away[i].until = coord_mono_ms() + ms;
	order_host_away(c->order, host, 1);
}

static int
host_is_away(const struct coord *c, uint32_t host)
{
	size_t i;

	for (i = 0; i < c->naway; i++)
		if (c->away[i].host == host)
			return 1;
	return 0;
}

/* ...its next agent answered a flush, or none came in time. */
static void
host_back(struct coord *c, uint32_t host)
{
	size_t i;

	for (i = 0; i < c->naway; i++)
		if (c->away[i].host == host) {
			c->away[i] = c->away[--c->naway];
			order_host_away(c->order, host, 0);
			return;
		}
}

/* Ends the orphans whose grace period is over (all: every one). */
void
coord_agent_orphans_check(struct coord *c, int all)
{
	struct coord_task *t;
	uint64_t now = coord_mono_ms();
	size_t i;

	for (i = c->naway; i-- > 0;)
		if (all || now >= c->away[i].until)
			host_back(c, c->away[i].host);

	TAILQ_FOREACH(t, &c->tasks, entry) {
		if (t->stage != COORD_TASK_ORPHAN ||
		    (!all && now < t->orphan_until))
			continue;
		log_warnx("task t%x (%s): no agent adopted it; ended",
		    (unsigned)t->tid, t->program);
		orphan_end(c, t);
	}
}

/* An unmonitored task pvmd no longer lists: "ended", and tools told. */
static void
other_ended(struct coord *c, int32_t tid)
{
	char buf[64];

	if (state_task_other_end(c->state, tid) != 1)
		return;
	snprintf(buf, sizeof(buf), "{\"notice\":\"unmonitored_ended\","
	    "\"tid\":%d}", tid);
	coord_notice(c, buf);
}

/*
 * A host left the virtual machine: its pvmd killed its tasks and its
 * agent on the way out (pvmbailout sends each a SIGTERM).  No agent will
 * come to adopt the host's orphaned tasks, so they end now, with what
 * their agent drained before it went; its unmonitored tasks end too.
 * Tasks whose agent is still connected end when it closes.
 */
void
coord_agent_host_gone(struct coord *c, const char *host)
{
	struct coord_task *t;
	int32_t *others;
	size_t i, n;

	TAILQ_FOREACH(t, &c->tasks, entry)
		if (t->stage == COORD_TASK_ORPHAN &&
		    strcmp(t->host, host) == 0) {
			log_info("task t%x (%s): its host %s was deleted; "
			    "ended", (unsigned)t->tid, t->program, host);
			orphan_end(c, t);
		}
	others = state_others_on(c->state, host, &n);
	for (i = 0; i < n; i++)
		other_ended(c, others[i]);
	free(others);
}

void
coord_agent_free(struct coord_agent *a)
{
	struct coord *c = a->coord;
	int32_t host_tid = a->host_tid;
	int respawn = 0, lost;

	TAILQ_REMOVE(&c->agents, a, entry);
	c->nagents--;
	coord_preauth_done(c, &a->pre);
	if (a->nrecords > 0)
		log_info("agent %s (%s): %llu records in %llu bytes "
		    "(%.3f B/record), %llu bytes inflated", a->peer,
		    a->host ? a->host : "no hello", (unsigned long long)
		    a->nrecords, (unsigned long long)a->wire_bytes,
		    (double)a->wire_bytes / (double)a->nrecords,
		    (unsigned long long)a->zin.plain);
	if (a->host != NULL)
		state_host(c->state, a->host_tid, a->host, "", 0);
	/*
	 * Away before a round it leaves ends: that round must not judge
	 * a receive whose send its next agent will bring.
	 */
	lost = a->lost && a->state == COORD_P_ACTIVE && !c->shutting_down;
	if (lost)
		coord_host_away(c, coord_host_number(host_tid),
		    COORD_AGENT_GRACE_MS);
	coord_flush_forget(c, a);
	coord_control_agent_gone(c, a);
	coord_ack_agent_gone(c, a);
	/* An intermediate: the root waits for the host's next agent. */
	coord_relay_agent_gone(a);
	/*
	 * An intermediate keeps them too: what it holds of them is not
	 * the root's yet, and their channels here wait for what their
	 * next agent sends on.  The root restarts the agent.
	 */
	if (lost) {
		agent_orphan_tasks(a);
		respawn = c->relay == NULL;
	} else
		agent_end_tasks(a);
	if (a->bev != NULL)
		bufferevent_free(a->bev);
	zs_in_end(&a->zin);
	free(a->host);
	free(a->up_wait);
	free(a);
	if (c->shutting_down)
		coord_output_check(c);
	if (respawn)
		coord_pvm_respawn(c, host_tid);
}

void
coord_agent_drop(struct coord_agent *a, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A flood must not flood the log. */
	if (!a->pre.listed || log_rate_ok(&a->coord->refuse_log))
		log_warnx("agent %s (%s): %s; dropping it", a->peer,
		    a->host ? a->host : "no hello yet", msg);
	coord_conn_close(a->bev, msg);
	a->bev = NULL;
	coord_agent_free(a);
}

static struct coord_agent *
agent_of_host(const struct coord *c, int32_t host_tid)
{
	struct coord_agent *a;

	TAILQ_FOREACH(a, &c->agents, entry)
		if (a->state == COORD_P_ACTIVE && a->host_tid == host_tid)
			return a;
	return NULL;
}

static int
agent_hello(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct agent_hello h;
	struct coord_agent *old;
	struct coord_host *host;
	const char *why;
	char msg[256];

	if (a->state != COORD_P_HELLO) {
		coord_agent_drop(a, "AGENT_HELLO sent twice");
		return -1;
	}
	if (agent_hello_decode(p, len, &h, &why) == -1) {
		coord_agent_drop(a, "bad AGENT_HELLO: %s", why);
		return -1;
	}
	if (coord_secret_check(a->coord, h.secret, msg, sizeof(msg)) == -1) {
		explicit_bzero(h.secret, sizeof(h.secret));
		coord_agent_drop(a, "%s", msg);
		return -1;
	}
	explicit_bzero(h.secret, sizeof(h.secret));
	if (a->coord->nagents - a->coord->npreauth_agents >=
	    COORD_MAX_AGENTS) {
		coord_agent_drop(a, "too many agents (%d)", COORD_MAX_AGENTS);
		return -1;
	}
	/* One agent per host: a second must not take over its tasks. */
	if ((old = agent_of_host(a->coord, h.host_tid)) != NULL) {
		coord_agent_drop(a, "host %s (t%x) has an agent already: %s, "
		    "pid %u", old->host, (unsigned)h.host_tid, old->peer,
		    old->pid);
		return -1;
	}
	a->host = xstrdup(h.host);
	a->host_tid = h.host_tid;
	a->pid = h.pid;
	a->state = COORD_P_ACTIVE;
	coord_preauth_done(a->coord, &a->pre);
	state_host(a->coord->state, h.host_tid, h.host, h.arch, 1);
	state_host_via(a->coord->state, h.host_tid,
	    coord_pvm_via(a->coord, h.host_tid));
	log_info("agent %s: host %s (t%x, %s), pid %u", a->peer, h.host,
	    (unsigned)h.host_tid, h.arch, h.pid);
	TAILQ_FOREACH(host, &a->coord->hosts, entry) {
		if (host->host_tid != h.host_tid)
			continue;
		if (host->hello_late)
			log_warnx("host %s: its agent said hello after all; its "
			    "tasks are monitored", host->name);
		host->hello = 1;
		host->hello_late = 0;
	}
	a->host_back = host_is_away(a->coord, coord_host_number(h.host_tid));
	if (a->coord->relay != NULL)
		return coord_relay_agent_hello(a, &h);
	if (!TAILQ_EMPTY(&a->coord->bps))
		coord_control_install(a->coord, a);
	coord_check_ready(a->coord);
	return 0;
}

/* A task's stream starts anew (t NULL: a tid not seen yet), on agent a. */
static struct coord_task *
task_start(struct coord_agent *a, struct coord_task *t,
    const struct task_hello *tn)
{
	if (t == NULL)
		t = coord_task_add(a->coord, tn->tid);
	free(t->host);
	free(t->program);
	t->parent_tid = tn->parent_tid;
	t->pid = tn->pid;
	t->spawn_seq = tn->spawn_seq;
	if (coord_task_ended(t))
		coord_task_move(t, COORD_TASK_LIVE);
	t->seen_seq = t->released_seq = t->out_seq = t->dups = 0;
	t->resumed = t->done = t->out_done = t->end_up = 0;
	t->life++;
	t->server = a->coord->relay == NULL &&
	    strcmp(tn->program, "pvmgs") == 0;
	t->end_agent = NULL;
	t->agent = a;
	pack_state_init(&t->unpack);
	t->host = xstrdup(a->host);
	t->program = xstrdup(tn->program);
	return t;
}

/*
 * An intermediate's TASK_NEW: the task is new to this subtree's order
 * (no parent, no spawn: the root has them), and its TASK_NEW goes up.
 */
static int
relay_task_new(struct coord_agent *a, const struct task_hello *tn,
    const uint8_t *p, size_t len)
{
	struct coord *c = a->coord;
	struct coord_task *t = coord_task_find(c, tn->tid);
	const char *why;

	if (t != NULL && !coord_task_ended(t)) {
		coord_agent_drop(a, "TASK_NEW for t%x, which is running",
		    (unsigned)tn->tid);
		return -1;
	}
	if (order_task_new(c->order, tn->tid, coord_host_number(a->host_tid),
	    0, 0, &why) == -1) {
		coord_agent_drop(a, "TASK_NEW t%x: %s", (unsigned)tn->tid, why);
		return -1;
	}
	t = task_start(a, t, tn);
	t->up = a->up;
	coord_relay_forward(a, MSG_TASK_NEW, p, len);
	return 0;
}

/*
 * TASK_NEW of a task whose agent was lost, from the host's new agent:
 * the same task, re-attached.  Its records go on from where the ring's
 * tail was, our last ACK: those we already have come again and are
 * dropped by seq.
 */
static int
agent_task_adopted(struct coord_agent *a, struct coord_task *t,
    const uint8_t *p, size_t len)
{
	coord_task_move(t, COORD_TASK_LIVE);
	t->agent = a;
	t->resumed = 1;		/* it re-sends what we did not ack */
	/* At an intermediate, the root's orphan is adopted too. */
	t->up = a->up;
	coord_relay_forward(a, MSG_TASK_NEW, p, len);
	coord_relay_adopted(a, t);
	pack_state_init(&t->unpack);	/* a new connection's packing */
	log_info("task t%x (%s) re-attached to agent %s", (unsigned)t->tid,
	    t->program, a->peer);
	return 0;
}

/*
 * TASK_NEW of a task whose stream has ended here: one ended because no
 * agent adopted it in time (expired), or one whose end we had when its
 * agent reconnected before our ACK of that end.  The agent is not at
 * fault.  What it sends of the task is dropped (and, for an expired
 * task, counted in the log at its end).
 */
static int
agent_task_late(struct coord_agent *a, struct coord_task *t)
{
	t->agent = a;		/* late from now on */
	pack_state_init(&t->unpack);
	t->late_records = 0;
	if (t->stage == COORD_TASK_EXPIRED)
		log_warnx("task t%x (%s) was adopted by agent %s after its "
		    "grace period; what it records from now on is dropped",
		    (unsigned)t->tid, t->program, a->peer);
	return 0;
}

static int
agent_task_new(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct coord *c = a->coord;
	struct task_hello tn;
	struct coord_task *t;
	const char *why;

	if (task_new_decode(p, len, &tn, &why) == -1) {
		coord_agent_drop(a, "bad TASK_NEW: %s", why);
		return -1;
	}
	t = coord_task_find(c, tn.tid);
	if (t != NULL && t->stage == COORD_TASK_ORPHAN && t->pid == tn.pid &&
	    coord_host_number(tn.tid) == coord_host_number(a->host_tid))
		return agent_task_adopted(a, t, p, len);
	if (c->relay != NULL)
		return relay_task_new(a, &tn, p, len);
	if (t != NULL && coord_task_ended(t) && t->agent == NULL &&
	    t->pid == tn.pid &&
	    coord_host_number(tn.tid) == coord_host_number(a->host_tid))
		return agent_task_late(a, t);
	if (t != NULL && t->stage == COORD_TASK_ORPHAN) {
		/* Another process under its tid: the orphan is gone. */
		coord_task_move(t, COORD_TASK_ENDED);
		coord_relay_task_free(t);
		if (order_task_end(c->order, t->tid, 0, &why) == -1)
			log_warnx("task t%x: %s", (unsigned)t->tid, why);
	}
	if (t != NULL && !coord_task_ended(t)) {
		coord_agent_drop(a, "TASK_NEW for t%x, which is running",
		    (unsigned)tn.tid);
		return -1;
	}
	if (order_task_new(c->order, tn.tid, coord_host_number(a->host_tid),
	    tn.parent_tid, tn.spawn_seq, &why) == -1) {
		coord_agent_drop(a, "TASK_NEW t%x: %s", (unsigned)tn.tid, why);
		return -1;
	}
	/* The group server's records order the groups' changes. */
	if (strcmp(tn.program, "pvmgs") == 0 &&
	    order_group_server(c->order, tn.tid, &why) == -1) {
		coord_agent_drop(a, "TASK_NEW t%x: %s", (unsigned)tn.tid, why);
		return -1;
	}
	t = task_start(a, t, &tn);
	log_debug("task t%x (%s) on %s, parent t%x", (unsigned)t->tid,
	    t->program, t->host, (unsigned)t->parent_tid);
	state_task(c->state, t->tid, t->parent_tid, t->pid, t->host,
	    t->program);
	coord_broadcast_task(c, t);
	coord_control_task_new(c, t);
	return 0;
}

/* A task adopted too late (agent_task_late), by this agent? */
static int
agent_is_late(struct coord_agent *a, const struct coord_task *t)
{
	return t != NULL && t->agent == a && coord_task_late(t);
}

static struct coord_task *
agent_late(struct coord_agent *a, int32_t tid)
{
	struct coord_task *t = coord_task_find(a->coord, tid);

	return agent_is_late(a, t) ? t : NULL;
}

/* A task's records may come only from the agent that announced it. */
static int
agent_owns_task(struct coord_agent *a, const struct coord_task *t,
    const char **why)
{
	if (t == NULL || t->agent != a) {
		*why = "records or end of a task this agent did not announce";
		return 0;
	}
	if (coord_task_ended(t)) {
		*why = "records or end of a task that ended";
		return 0;
	}
	return 1;
}

static int
agent_owns(struct coord_agent *a, int32_t tid, const char **why)
{
	return agent_owns_task(a, coord_task_find(a->coord, tid), why);
}

/*
 * Is a's host in a subtree of ours, whose intermediate sends its events
 * (TASK_BELOW), not its records?
 */
static int
agent_below(const struct coord_agent *a)
{
	const struct coord *c = a->coord;

	return c->host_subtree != NULL &&
	    c->host_subtree[coord_host_number(a->host_tid)] >= 0;
}

/* A record, or with below an event from an intermediate (TASK_BELOW). */
static int
agent_add(struct coord_agent *a, int32_t tid, const struct record *r,
    const struct order_event *below, const char **why)
{
	struct coord_task *t = coord_task_find(a->coord, tid);

	if (agent_is_late(a, t)) {
		t->late_records++;
		return 0;
	}
	if (!agent_owns_task(a, t, why))
		return -1;
	/* Sent again after a reconnection or by a new agent: we have it. */
	if (t->resumed && r->seq <= t->seen_seq) {
		t->dups++;
		return 0;
	}
	t->seen_seq = r->seq;
	a->nrecords++;
	/* A task stopped at a breakpoint: act now, not at its release. */
	if (r->call == PMON_CALL_BREAK && a->coord->relay == NULL)
		coord_control_break(a->coord, tid, r);
	if ((below != NULL ? order_add_below(a->coord->order, tid, r,
	    below->flags, below->match_tid, below->match_seq, why) :
	    order_add(a->coord->order, tid, r, why)) == -1)
		return -1;
	/* The group server's records are never released: ack them now. */
	if (t->server)
		coord_ack_taken(a->coord, tid, r->seq);
	return 0;
}

static int
agent_record(int32_t tid, const struct record *r, void *arg,
    const char **why)
{
	return agent_add(arg, tid, r, NULL, why);
}

static int
agent_event_below(int32_t tid, const struct record *r, uint8_t flags,
    int32_t match_tid, uint64_t match_seq, void *arg, const char **why)
{
	struct order_event below = { .flags = flags, .match_tid = match_tid,
	    .match_seq = match_seq };

	return agent_add(arg, tid, r, &below, why);
}

/* TASK_BELOW: a task's events, from the intermediate of its subtree. */
static int
agent_task_below(struct coord_agent *a, const uint8_t *p, size_t len)
{
	const char *why = "events from a host no intermediate serves";

	if (!agent_below(a) ||
	    task_below_decode(p, len, agent_event_below, a, &why) == -1) {
		coord_agent_drop(a, "bad TASK_BELOW: %s", why);
		return -1;
	}
	return 0;
}

static int
agent_records(struct coord_agent *a, const uint8_t *p, size_t len)
{
	const char *why = "records of a host whose intermediate orders them";

	if (agent_below(a) ||
	    task_records_decode(p, len, agent_record, a, &why) == -1) {
		coord_agent_drop(a, "bad TASK_RECORDS: %s", why);
		return -1;
	}
	return 0;
}

/* TASK_PACKED: unpacked against what this connection sent of the task. */
static int
agent_packed(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct coord_task *t;
	const char *why = "records of a host whose intermediate orders them";
	int32_t tid;

	/* A late task's records are unpacked, then dropped (agent_record). */
	if (agent_below(a) || task_packed_tid(p, len, &tid, &why) == -1 ||
	    (agent_late(a, tid) == NULL && !agent_owns(a, tid, &why))) {
		coord_agent_drop(a, "bad TASK_PACKED: %s", why);
		return -1;
	}
	t = coord_task_find(a->coord, tid);
	if (task_packed_decode(p, len, &t->unpack, agent_record, a,
	    &why) == -1) {
		coord_agent_drop(a, "bad TASK_PACKED: %s", why);
		return -1;
	}
	return 0;
}

/* A frame the agent's deflate stream held: handled like any other. */
static int
agent_inner_frame(void *arg, uint8_t type, const uint8_t *p, size_t len)
{
	return coord_agent_frame(arg, type, p, len);
}

/*
 * ZDATA: the next piece of the agent's deflate stream.  The frames in
 * it are checked and dispatched as they complete; a stream that does
 * not inflate drops the agent like any malformed frame.
 */
static int
agent_zdata(struct coord_agent *a, const uint8_t *p, size_t len)
{
	const char *why;

	if (!a->zin.ready && zs_in_init(&a->zin) == -1)
		fatalx("%s: inflateInit", __func__);
	switch (zs_in_feed(&a->zin, p, len, agent_inner_frame, a, &why)) {
	case 0:
		return 0;
	case 1:
		return -1;	/* dropped while handling a frame */
	default:
		coord_agent_drop(a, "bad ZDATA: %s", why);
		return -1;
	}
}

static int
agent_task_end(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct coord_task *t;
	uint64_t dropped;
	int32_t tid;
	const char *why;

	if (task_end_decode(p, len, &tid, &dropped, &why) == -1) {
		coord_agent_drop(a, "bad TASK_END: %s", why);
		return -1;
	}
	if ((t = agent_late(a, tid)) != NULL) {
		if (t->stage == COORD_TASK_EXPIRED)
			log_warnx("task t%x (%s) ended; %llu records of it "
			    "came too late and were dropped", (unsigned)tid,
			    t->program, (unsigned long long)t->late_records);
		t->agent = NULL;	/* no longer late */
		t->end_agent = a;	/* so that it forgets the task */
		coord_ack_done(a->coord, tid);
		return 0;
	}
	if (!agent_owns(a, tid, &why)) {
		coord_agent_drop(a, "bad TASK_END: %s", why);
		return -1;
	}
	t = coord_task_find(a->coord, tid);
	coord_task_move(t, COORD_TASK_ENDED);
	t->agent = NULL;
	t->end_agent = a;	/* gets the ACK of the end */
	/* An intermediate's goes up once the task is all released. */
	t->end_up = a->coord->relay != NULL;
	t->dropped = dropped;
	if (t->dups > 0)
		log_info("task t%x (%s): %llu records came twice",
		    (unsigned)tid, t->program, (unsigned long long)t->dups);
	if (dropped > 0)
		log_warnx("task t%x (%s) lost %llu records to a full ring",
		    (unsigned)tid, t->program, (unsigned long long)dropped);
	if (order_task_end(a->coord->order, tid, dropped, &why) == -1) {
		coord_agent_drop(a, "TASK_END t%x: %s", (unsigned)tid, why);
		return -1;
	}
	return 0;
}

/*
 * TASK_RESUME, after TASK_NEW from an agent that reconnected: the
 * task's records go on at next_seq.  A task new to us (this coordinator
 * started after the one that had its earlier records) starts there,
 * without a lost marker for what that one released; a task we have
 * re-sends what we did not acknowledge, which we drop by seq.
 */
static int
agent_task_resume(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct coord_task *t;
	uint64_t next, shipped;
	int32_t tid;
	const char *why;

	if (task_resume_decode(p, len, &tid, &next, &shipped, &why) ==
	    -1) {
		coord_agent_drop(a, "bad TASK_RESUME: %s", why);
		return -1;
	}
	if (agent_late(a, tid) != NULL)
		return 0;	/* what follows of it is dropped */
	if (!agent_owns(a, tid, &why)) {
		coord_agent_drop(a, "bad TASK_RESUME: %s", why);
		return -1;
	}
	t = coord_task_find(a->coord, tid);
	t->resumed = 1;
	coord_relay_forward(a, MSG_TASK_RESUME, p, len);
	if (t->seen_seq > 0 || next == 1)
		return 0;
	if (order_task_resume(a->coord->order, tid, next, shipped, &why) ==
	    -1) {
		coord_agent_drop(a, "TASK_RESUME t%x: %s", (unsigned)tid, why);
		return -1;
	}
	t->seen_seq = t->released_seq = t->out_seq = next - 1;
	log_info("task t%x (%s) resumed at record %llu", (unsigned)tid,
	    t->program, (unsigned long long)next);
	return 0;
}

static int
agent_flush_done(struct coord_agent *a, const uint8_t *p, size_t len)
{
	uint32_t round;
	const char *why;

	if (proto_u32_decode(p, len, &round, &why) == -1) {
		coord_agent_drop(a, "bad FLUSH_DONE: %s", why);
		return -1;
	}
	/* What its host's tasks sent before came ahead of this. */
	if (a->host_back) {
		a->host_back = 0;
		host_back(a->coord, coord_host_number(a->host_tid));
	}
	if (!coord_relay_flush_done(a, round))
		coord_flush_done(a->coord, a, round);
	return 0;
}

/* --- tasks pmon does not instrument (TASK_OTHERS) ---------------------- */

/* The host's unmonitored tasks the model had, 0 once listed again. */
struct others_seen {
	struct coord_agent	*a;
	int32_t			*was;
	size_t			 nwas;
};

static int
cmp_i32(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;

	return a < b ? -1 : a > b;
}

static void
notice_other(struct coord *c, const struct task_other *o, const char *host)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	fprintf(fp, "{\"notice\":\"unmonitored\",\"tid\":%d,\"parent\":%d,"
	    "\"pid\":%u,\"host\":", o->tid, o->parent_tid, o->pid);
	json_str_write(fp, host);
	fputs(",\"program\":", fp);
	json_str_write(fp, o->program);
	fputc('}', fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	coord_notice(c, buf);
	free(buf);
}

static void
other_listed(const struct task_other *o, void *arg)
{
	struct others_seen *x = arg;
	struct coord *c = x->a->coord;
	int32_t *was;
	int rv;

	if ((was = bsearch(&o->tid, x->was, x->nwas, sizeof(*x->was),
	    cmp_i32)) != NULL) {
		*was = 0;
		return;
	}
	rv = state_task_other(c->state, o->tid, o->parent_tid, o->pid,
	    x->a->host, o->program);
	if (rv == 1 && order_task_unmonitored(c->order, o->tid) == -1)
		fatal("%s", __func__);
	if (rv == 1) {
		log_info("task t%x (%s) on %s is not monitored", (unsigned)o->tid,
		    o->program, x->a->host);
		notice_other(c, o, x->a->host);
	}
}

/*
 * The agent's list of its host's tasks that pmon does not instrument:
 * those new to the model are shown as unmonitored, those it no longer
 * lists have ended.
 */
static int
agent_task_others(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct coord *c = a->coord;
	struct others_seen x = { .a = a };
	const char *why;
	size_t i;

	x.was = state_others_on(c->state, a->host, &x.nwas);
	qsort(x.was, x.nwas, sizeof(*x.was), cmp_i32);
	if (task_others_decode(p, len, other_listed, &x, &why) == -1) {
		free(x.was);
		coord_agent_drop(a, "bad TASK_OTHERS: %s", why);
		return -1;
	}
	for (i = 0; i < x.nwas; i++)
		if (x.was[i] != 0)
			other_ended(c, x.was[i]);
	free(x.was);
	return 0;
}

/* One frame from an agent; -1 when the agent was dropped. */
static int	agent_dispatch(struct coord_agent *, uint8_t,
		    const uint8_t *, size_t);

int
coord_agent_frame(struct coord_agent *a, uint8_t type, const uint8_t *p,
    size_t len)
{
	struct coord *c = a->coord;
	int rv;

	rv = agent_dispatch(a, type, p, len);
	coord_sync_check(c);
	coord_relay_settle(c);
	return rv;
}

static int
agent_dispatch(struct coord_agent *a, uint8_t type, const uint8_t *p,
    size_t len)
{
	if (a->state == COORD_P_HELLO && type != MSG_AGENT_HELLO) {
		coord_agent_drop(a, "%s before AGENT_HELLO",
		    proto_msg_name(type));
		return -1;
	}
	/* An intermediate passes the agent's answers up as they came. */
	if (a->coord->relay != NULL && (type == MSG_CONTROL_DONE ||
	    type == MSG_TASK_PROC || type == MSG_TASK_OTHERS)) {
		coord_relay_forward(a, type, p, len);
		return 0;
	}
	switch (type) {
	case MSG_AGENT_HELLO:
		return agent_hello(a, p, len);
	case MSG_TASK_NEW:
		return agent_task_new(a, p, len);
	case MSG_TASK_RECORDS:
		return agent_records(a, p, len);
	case MSG_TASK_PACKED:
		return agent_packed(a, p, len);
	case MSG_TASK_BELOW:
		return agent_task_below(a, p, len);
	case MSG_ZDATA:
		return agent_zdata(a, p, len);
	case MSG_TASK_END:
		return agent_task_end(a, p, len);
	case MSG_TASK_RESUME:
		return agent_task_resume(a, p, len);
	case MSG_FLUSH_DONE:
		return agent_flush_done(a, p, len);
	case MSG_CONTROL_DONE:
		return coord_control_done(a, p, len);
	case MSG_TASK_PROC:
		return coord_control_proc(a, p, len);
	case MSG_TASK_OTHERS:
		return agent_task_others(a, p, len);
	default:
		coord_agent_drop(a, "unexpected %s from an agent",
		    proto_msg_name(type));
		return -1;
	}
}

static int
agent_frame_cb(void *peer, uint8_t type, const uint8_t *p, size_t len)
{
	struct coord_agent *a = peer;

	a->wire_bytes += FRAME_HDR_SIZE + len;
	if (coord_agent_frame(peer, type, p, len) == -1)
		return -1;
	return a->coord->held_back ? 1 : 0;
}

/*
 * The frames a's connection holds.  While a lossless tool holds the
 * agents back (coord_hold.c) the rest waits in the input, and reading
 * stops until coord_hold_release.
 */
void
coord_agent_read(struct coord_agent *a)
{
	struct bufferevent *bev = a->bev;
	const char *why;

	if (a->state == COORD_P_CLOSING) {
		evbuffer_drain(bufferevent_get_input(bev),
		    evbuffer_get_length(bufferevent_get_input(bev)));
		return;
	}
	switch (coord_conn_read(bev, agent_frame_cb, a, &a->pre,
	    MSG_AGENT_HELLO, &why)) {
	case -1:
		coord_agent_drop(a, "%s", why);
		return;
	case 1:
		return;		/* dropped */
	}
	if (a->coord->held_back && a->state == COORD_P_ACTIVE)
		bufferevent_disable(bev, EV_READ);
}

static void
agent_read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	coord_agent_read(arg);
}

static void
agent_write_cb(struct bufferevent *bev, void *arg)
{
	struct coord_agent *a = arg;

	(void)bev;
	if (a->coord->shutting_down)
		coord_output_check(a->coord);
}

static void
agent_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct coord_agent *a = arg;
	size_t pending;

	pending = evbuffer_get_length(bufferevent_get_input(bev));
	if (a->pre.listed && !log_rate_ok(&a->coord->refuse_log))
		;	/* one of a flood, maybe */
	else if (pending > 0 && a->state != COORD_P_CLOSING)
		log_warnx("agent %s (%s): connection closed inside a frame "
		    "(%zu bytes left unread)", a->peer,
		    a->host ? a->host : "no hello yet", pending);
	else if ((what & BEV_EVENT_ERROR) && !a->coord->shutting_down)
		log_warn("agent %s (%s)", a->peer,
		    a->host ? a->host : "no hello yet");
	else if (!a->coord->shutting_down)
		log_info("agent %s (%s) closed its connection", a->peer,
		    a->host ? a->host : "no hello yet");
	a->lost = 1;
	coord_agent_free(a);
}

static void
agent_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct coord *c = arg;
	struct coord_agent *a;
	int one = 1;

	(void)l;
	(void)sa;
	(void)salen;
	if (c->shutting_down) {
		evutil_closesocket(fd);
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->coord = c;
	a->state = COORD_P_HELLO;
	coord_peer_name(fd, a->peer, sizeof(a->peer));
	/* Small frames (a BREAK, a CONTROL) must not wait for an ACK. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		log_warn("agent %s: TCP_NODELAY", a->peer);
	a->bev = bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (a->bev == NULL)
		fatalx("%s: bufferevent_socket_new", __func__);
	bufferevent_setcb(a->bev, agent_read_cb, agent_write_cb,
	    agent_event_cb, a);
	bufferevent_enable(a->bev, EV_READ | EV_WRITE);
	a->pre.agent = a;
	coord_preauth_add(c, &a->pre, fd);
	TAILQ_INSERT_TAIL(&c->agents, a, entry);
	c->nagents++;
	log_debug("agent connection from %s", a->peer);
}

static void
agent_listen_error_cb(struct evconnlistener *l, void *arg)
{
	(void)l;
	coord_accept_error(arg, "an agent");
}

/* Formats the bound address as ADDR:PORT (IPv6 in brackets). */
static int
listen_name(struct coord *c, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(c->listen_addr, sizeof(c->listen_addr), "[%s]:%u",
		    host, ntohs(s6->sin6_port));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(c->listen_addr, sizeof(c->listen_addr), "%s:%u",
		    host, ntohs(s4->sin_port));
	}
	return 0;
}

/*
 * Listens for agents on spec, "ADDR", "ADDR:PORT" or "[ADDR]:PORT"
 * (default: an ephemeral port), and sets c->listen_addr to what agents
 * dial from now on.
 */
static struct evconnlistener *
agent_bind(struct coord *c, const char *spec)
{
	struct evconnlistener *l;
	struct addrinfo hints, *res;
	char host[256], port[16] = "0";
	int rc;

	if (addr_split(spec, host, sizeof(host), port, sizeof(port)) == -1) {
		log_warnx("bad listen address %s (want ADDR, ADDR:PORT or "
		    "[ADDR]:PORT)", spec);
		return NULL;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		log_warnx("listen address %s: %s", spec, gai_strerror(rc));
		return NULL;
	}
	l = evconnlistener_new_bind(c->base, agent_accept_cb, c,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
	    64, res->ai_addr, (int)res->ai_addrlen);
	freeaddrinfo(res);
	if (l == NULL) {
		log_warn("listening on %s", spec);
		return NULL;
	}
	evconnlistener_set_error_cb(l, agent_listen_error_cb);
	if (listen_name(c, evconnlistener_get_fd(l)) == -1) {
		log_warn("getsockname");
		evconnlistener_free(l);
		return NULL;
	}
	log_info("listening for agents on %s", c->listen_addr);
	return l;
}

/* Listens for agents on c->listen_host (-l, or coord_pvm_choose_listen). */
int
coord_agent_listen(struct coord *c)
{
	if ((c->agent_listener = agent_bind(c, c->listen_host)) == NULL)
		return -1;
	return 0;
}

/*
 * A host joined a machine whose agents dial loopback: listens on host,
 * an address the new host can reach, too; agents spawned from now on
 * dial it, those already here stay on loopback.
 */
int
coord_agent_listen_wide(struct coord *c, const char *host)
{
	if (c->agent_listener_wide != NULL)
		return 0;
	if ((c->agent_listener_wide = agent_bind(c, host)) == NULL)
		return -1;
	if (c->shutting_down)
		evconnlistener_disable(c->agent_listener_wide);
	return 0;
}
