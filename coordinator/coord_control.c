/*
 * Stopping, continuing and killing tasks, and breakpoints (doc/control.md):
 * the manipulation services of the request language (request.h).
 *
 * A stop, continue or kill request becomes one CONTROL frame per agent
 * that holds a target; the tool's REPLY goes out when every such agent
 * answered CONTROL_DONE, with one status per object.  A stop has an
 * owner, the tool that asked (or whose breakpoint hit): another tool
 * continues the task only with "continue force", and a tool that leaves
 * releases its stops and loses its breakpoints.
 *
 * Breakpoints on entering or leaving a call are checked inside the tasks:
 * their table goes to every agent (BREAKPOINTS), which writes it into
 * every task's control page.  A task that hits one writes a BREAK record
 * and stops itself; the record's arrival here runs the breakpoint's
 * actions at once, before the record is causally released.  Every tool
 * is told what the others did with NOTICE frames.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "coord.h"
#include "log.h"
#include "record.h"
#include "request.h"
#include "ring.h"
#include "xmalloc.h"

/* One target of an operation, and what became of it. */
struct op_target {
	int32_t		 tid;		/* 0: the object named no task */
	unsigned	 col;		/* the object's column */
	char		 object[REQ_NAME_MAX + 8];
	const char	*error;		/* NULL: sent to its agent */
	uint8_t		 status;	/* CONTROL_* once answered */
	int		 answered;
	int		 has_proc;	/* CONTROL_INFO's answer */
	struct task_proc proc;
};

/*
 * A breakpoint's snapshot action waits for the stops and continues of
 * its hit, then for a flush round: so the snapshot shows the tasks
 * stopped, and everything recorded until then (the BREAK record too)
 * ordered.  Each operation of the hit holds a reference, and so does
 * bp_act() while it starts them.
 */
struct hit_snapshot {
	unsigned		 tool;		/* the breakpoint's owner */
	unsigned		 refs;
};

/* A stop, continue or kill in flight. */
struct coord_op {
	TAILQ_ENTRY(coord_op)	 entry;
	uint32_t		 id;		/* the CONTROL frames' */
	uint8_t			 op;		/* CONTROL_STOP... */
	struct coord_tool	*tool;		/* gets the REPLY, or NULL */
	uint32_t		 req_id;
	unsigned		 owner;		/* tool id owning the stop */
	uint32_t		 bp;		/* the breakpoint that asked */
	struct hit_snapshot	*snap;		/* waits for this op, or NULL */
	int			 release;	/* a stop whose owner left:
						   continue what it stopped */
	int			 flushing;	/* answered; waits for its
						   flush round */
	struct op_target	*v;
	size_t			 n;
	struct coord_agent	**agents;	/* that still owe an answer */
	size_t			 nagents;
};

static const char *
op_name(uint8_t op)
{
	switch (op) {
	case CONTROL_STOP:
		return "stop";
	case CONTROL_CONTINUE:
		return "continue";
	case CONTROL_INFO:
		return "tasks";
	default:
		return "kill";
	}
}

static const char *
op_done_name(uint8_t op)
{
	switch (op) {
	case CONTROL_STOP:
		return "stopped";
	case CONTROL_CONTINUE:
		return "continued";
	case CONTROL_INFO:
		return "ok";
	default:
		return "killed";
	}
}

/* --- notices ----------------------------------------------------------- */

/* Sends one NOTICE (a JSON object) to every tool that said hello. */
void
coord_notice(struct coord *c, const char *json)
{
	struct coord_tool *t;

	log_info("notice: %s", json);
	TAILQ_FOREACH(t, &c->tools, entry)
		if (t->state == COORD_P_ACTIVE)
			coord_frame_body(coord_tool_out(t),
			    MSG_NOTICE, json, strlen(json));
}

/* The tasks an operation changed, as a notice. */
static void
notice_op(struct coord *c, const struct coord_op *o)
{
	char *buf = NULL;
	size_t len = 0, i, k = 0;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	fprintf(fp, "{\"notice\":\"%s\",\"tool\":%u,\"tasks\":[",
	    op_done_name(o->op), o->owner);
	for (i = 0; i < o->n; i++)
		if (o->v[i].error == NULL && o->v[i].status == CONTROL_OK)
			fprintf(fp, "%s%d", k++ ? "," : "", o->v[i].tid);
	fputc(']', fp);
	if (o->bp != 0)
		fprintf(fp, ",\"breakpoint\":%u", o->bp);
	fputc('}', fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	if (k > 0 && o->op != CONTROL_INFO)
		coord_notice(c, buf);
	free(buf);
}

void
coord_notice_tool(struct coord *c, const struct coord_tool *t,
    const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	fprintf(fp, "{\"notice\":\"%s\",\"tool\":%u,\"name\":", what, t->id);
	json_str_write(fp, t->name);
	fputc('}', fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	coord_notice(c, buf);
	free(buf);
}

/* --- objects ----------------------------------------------------------- */

/* May pmon stop this task?  Not the group server: groups would hang. */
static int
controllable(const struct coord_task *t)
{
	return !coord_task_ended(t) && t->agent != NULL &&
	    strcmp(t->program, "pvmgs") != 0;
}

/* A target of o: any live task for information, else controllable. */
static int
targetable(const struct coord_op *o, const struct coord_task *t)
{
	if (o->op == CONTROL_INFO)
		return !coord_task_ended(t) && t->agent != NULL;
	return controllable(t);
}

static void
target_add(struct coord_op *o, size_t *cap, int32_t tid, unsigned col,
    const char *object, const char *error)
{
	struct op_target *tg;

	if (o->n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		o->v = xreallocarray(o->v, *cap, sizeof(*o->v));
	}
	tg = &o->v[o->n++];
	memset(tg, 0, sizeof(*tg));
	tg->tid = tid;
	tg->col = col;
	snprintf(tg->object, sizeof(tg->object), "%s", object);
	tg->error = error;
}

static void
object_name(const struct req_object *ob, int32_t self, char *buf,
    size_t size)
{
	switch (ob->kind) {
	case REQ_OBJ_TASK:
		snprintf(buf, size, "t%x", (unsigned)ob->tid);
		break;
	case REQ_OBJ_SELF:
		snprintf(buf, size, "t%x", (unsigned)self);
		break;
	case REQ_OBJ_HOST:
		snprintf(buf, size, "host:%s", ob->name);
		break;
	case REQ_OBJ_GROUP:
		snprintf(buf, size, "group:%s", ob->name);
		break;
	case REQ_OBJ_ALL:
		snprintf(buf, size, "*");
		break;
	}
}

/*
 * Expands the objects into targets: a task, self (the task an event
 * came from), every task of a host, every member of a group, or every
 * task.  An object that names no task gets an error target.
 */
static void
expand(struct coord *c, struct coord_op *o, const struct req_objects *obs,
    int32_t self)
{
	struct coord_task *t;
	char name[REQ_NAME_MAX + 8];
	int32_t *members;
	size_t cap = o->n, i, j, nm, before;

	for (i = 0; i < obs->n; i++) {
		const struct req_object *ob = &obs->v[i];

		object_name(ob, self, name, sizeof(name));
		before = o->n;
		switch (ob->kind) {
		case REQ_OBJ_TASK:
		case REQ_OBJ_SELF:
			t = coord_task_find(c, ob->kind == REQ_OBJ_TASK ?
			    ob->tid : self);
			if (t == NULL)
				target_add(o, &cap, 0, ob->col, name,
				    "no such task");
			else if (!targetable(o, t))
				target_add(o, &cap, 0, ob->col, name,
				    coord_task_ended(t) ? "the task has ended" :
				    "pmon does not stop the group server");
			else
				target_add(o, &cap, t->tid, ob->col, name,
				    NULL);
			continue;
		case REQ_OBJ_HOST:
		case REQ_OBJ_ALL:
			TAILQ_FOREACH(t, &c->tasks, entry)
				if (targetable(o, t) &&
				    (ob->kind == REQ_OBJ_ALL ||
				    strcmp(t->host, ob->name) == 0))
					target_add(o, &cap, t->tid, ob->col,
					    name, NULL);
			break;
		case REQ_OBJ_GROUP:
			state_group_members(c->state, ob->name, &members, &nm);
			for (j = 0; j < nm; j++)
				if ((t = coord_task_find(c, members[j])) !=
				    NULL && targetable(o, t))
					target_add(o, &cap, t->tid, ob->col,
					    name, NULL);
			free(members);
			break;
		}
		if (o->n == before)
			target_add(o, &cap, 0, ob->col, name,
			    "names no live task");
	}
}

/* --- operations ---------------------------------------------------------- */

static void	op_finish(struct coord *, struct coord_op *);
static void	op_start(struct coord *, struct coord_op *,
		    const struct req_objects *, int32_t self, int force);
static void	op_run(struct coord *, uint8_t, unsigned, uint32_t,
		    const struct req_objects *, int32_t, int,
		    struct hit_snapshot *);

/* Ownership: who may continue a task another tool stopped. */
static void
check_owner(struct coord *c, struct coord_op *o, int force)
{
	struct coord_task *t;
	size_t i;

	if (o->op != CONTROL_CONTINUE || force)
		return;
	for (i = 0; i < o->n; i++) {
		if (o->v[i].error != NULL ||
		    (t = coord_task_find(c, o->v[i].tid)) == NULL)
			continue;
		if (t->stop_tool != 0 && t->stop_tool != o->owner)
			o->v[i].error = "stopped by another tool: "
			    "\"continue force\" overrides";
	}
}

/* Sends one CONTROL per agent holding a target; finishes if none. */
static void
op_send(struct coord *c, struct coord_op *o)
{
	struct coord_agent *a;
	struct coord_task *t;
	int32_t *tids;
	size_t i, n;

	tids = xcalloc(o->n + 1, sizeof(*tids));
	o->agents = xcalloc(c->nagents + 1, sizeof(*o->agents));
	TAILQ_FOREACH(a, &c->agents, entry) {
		if (a->state != COORD_P_ACTIVE)
			continue;
		for (i = n = 0; i < o->n; i++)
			if (o->v[i].error == NULL &&
			    (t = coord_task_find(c, o->v[i].tid)) != NULL &&
			    t->agent == a)
				tids[n++] = o->v[i].tid;
		if (n == 0)
			continue;
		coord_frame_control(bufferevent_get_output(a->bev), o->id,
		    o->op, tids, n);
		o->agents[o->nagents++] = a;
	}
	free(tids);
	/* A target whose agent is gone. */
	for (i = 0; i < o->n; i++)
		if (o->v[i].error == NULL &&
		    ((t = coord_task_find(c, o->v[i].tid)) == NULL ||
		    t->agent == NULL))
			o->v[i].error = "its agent is gone";
	TAILQ_INSERT_TAIL(&c->ops, o, entry);
	if (o->nagents == 0)
		op_finish(c, o);
}

static struct coord_op *
op_new(struct coord *c, uint8_t op, struct coord_tool *tool,
    uint32_t req_id)
{
	struct coord_op *o;

	o = xcalloc(1, sizeof(*o));
	if (++c->next_op == 0)
		c->next_op = 1;
	o->id = c->next_op;
	o->op = op;
	o->tool = tool;
	o->req_id = req_id;
	o->owner = tool != NULL ? tool->id : 0;
	return o;
}

/*
 * Drops a reference to s; the last one starts the flush round that ends
 * in the snapshot, if the tool is still there.  c NULL: nothing starts
 * (the coordinator is going away).
 */
static void
snap_release(struct coord *c, struct hit_snapshot *s)
{
	struct coord_tool *t;

	if (s == NULL || --s->refs > 0)
		return;
	if (c != NULL)
		TAILQ_FOREACH(t, &c->tools, entry)
			if (t->id == s->tool && t->state == COORD_P_ACTIVE) {
				coord_flush_snapshot(c, t);
				break;
			}
	free(s);
}

static void
op_free(struct coord_op *o)
{
	snap_release(NULL, o->snap);
	free(o->v);
	free(o->agents);
	free(o);
}

/* "tasks": the model's task with what /proc says of it, per target. */
static void
info_reply(struct coord *c, struct coord_op *o)
{
	const struct task_proc *pr;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	fputs("{\"tasks\":[", fp);
	for (i = 0; i < o->n; i++) {
		const struct op_target *tg = &o->v[i];

		pr = &tg->proc;
		fputs(i > 0 ? "," : "", fp);
		if (tg->has_proc && state_write_task(c->state, tg->tid,
		    fp) == 0) {
			/* The task object, with "proc" added. */
			fseeko(fp, -1, SEEK_CUR);
			fprintf(fp, ",\"proc\":{\"state\":\"%c\","
			    "\"threads\":%u,\"utime_ms\":%llu,"
			    "\"stime_ms\":%llu,\"rss_kb\":%llu,"
			    "\"vsize_kb\":%llu,\"syscall\":%d}}",
			    pr->state, pr->threads,
			    (unsigned long long)pr->utime_ms,
			    (unsigned long long)pr->stime_ms,
			    (unsigned long long)pr->rss_kb,
			    (unsigned long long)pr->vsize_kb, pr->syscall);
		} else {
			fputs("{\"object\":", fp);
			json_str_write(fp, tg->object);
			fputs(",\"error\":", fp);
			json_str_write(fp, tg->error != NULL ? tg->error :
			    "no such task on its host");
			fputc('}', fp);
		}
	}
	fputs("]}", fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	coord_frame_reply(coord_tool_out(o->tool), o->req_id,
	    REPLY_OK, buf, len);
	free(buf);
}

/* TASK_PROC from an agent: for the CONTROL_INFO it answers. */
int
coord_control_proc(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct task_proc pr;
	struct coord_op *o;
	const char *why;
	uint32_t id;
	size_t i;

	if (task_proc_decode(p, len, &id, &pr, &why) == -1) {
		coord_agent_drop(a, "bad TASK_PROC: %s", why);
		return -1;
	}
	TAILQ_FOREACH(o, &a->coord->ops, entry)
		if (o->id == id && o->op == CONTROL_INFO)
			break;
	for (i = 0; o != NULL && i < o->n; i++)
		if (o->v[i].tid == pr.tid && o->v[i].error == NULL) {
			o->v[i].proc = pr;
			o->v[i].has_proc = 1;
		}
	return 0;
}

/* The reply: one status per target. */
static void
op_reply(struct coord_op *o)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	fprintf(fp, "{\"request\":\"%s\",\"results\":[", op_name(o->op));
	for (i = 0; i < o->n; i++) {
		const struct op_target *tg = &o->v[i];
		const char *err = tg->error;

		if (err == NULL && tg->status == CONTROL_NO_TASK)
			err = "no such task on its host";
		else if (err == NULL && tg->status != CONTROL_OK)
			err = o->op == CONTROL_STOP ?
			    "the task did not stop" : "the signal failed";
		fprintf(fp, "%s{\"object\":", i ? "," : "");
		json_str_write(fp, tg->object);
		if (tg->tid != 0)
			fprintf(fp, ",\"tid\":%d", tg->tid);
		if (err != NULL) {
			fputs(",\"status\":\"error\",\"error\":", fp);
			json_str_write(fp, err);
		} else
			fprintf(fp, ",\"status\":\"%s\"",
			    op_done_name(o->op));
		fputc('}', fp);
	}
	fputs("]}", fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	coord_frame_reply(coord_tool_out(o->tool), o->req_id,
	    REPLY_OK, buf, len);
	free(buf);
}

/*
 * Continuing tasks for a tool that left (owner), in operations of at
 * most REQ_OBJECTS_MAX tasks: release_add each, then release_end.
 */
static void
release_add(struct coord *c, unsigned owner, struct req_objects *obs,
    int32_t tid)
{
	if (obs->n == REQ_OBJECTS_MAX) {
		op_run(c, CONTROL_CONTINUE, owner, 0, obs, 0, 1, NULL);
		obs->n = 0;
	}
	memset(&obs->v[obs->n], 0, sizeof(obs->v[0]));
	obs->v[obs->n].kind = REQ_OBJ_TASK;
	obs->v[obs->n++].tid = tid;
}

static void
release_end(struct coord *c, unsigned owner, struct req_objects *obs)
{
	if (obs->n > 0)
		op_run(c, CONTROL_CONTINUE, owner, 0, obs, 0, 1, NULL);
	obs->n = 0;
}

static void	op_end(struct coord *, struct coord_op *);

/*
 * Every agent answered: the model and the owners now; the notice and
 * the reply once a stop's flush round has ordered everything its tasks
 * recorded, so that a tool that hears of a stop already has the records
 * up to it (the BREAK record of a hit too), and a snapshot it asks for
 * then shows the tasks where they stopped.
 */
static void
op_finish(struct coord *c, struct coord_op *o)
{
	struct coord_task *t;
	size_t i, stopped = 0;

	/* Sent, never answered: the agent left first. */
	for (i = 0; i < o->n; i++)
		if (o->v[i].error == NULL && !o->v[i].answered)
			o->v[i].error = "its agent is gone";
	for (i = 0; i < o->n; i++) {
		const struct op_target *tg = &o->v[i];

		if (tg->error != NULL || tg->status != CONTROL_OK ||
		    (t = coord_task_find(c, tg->tid)) == NULL)
			continue;
		switch (o->op) {
		case CONTROL_STOP:
			if (t->stop_tool == 0 || o->owner != 0)
				t->stop_tool = o->owner;
			if (o->bp != 0 && t->stop_bp == 0)
				t->stop_bp = o->bp;
			state_task_stopped(c->state, t->tid, 1, t->stop_tool,
			    t->stop_bp);
			stopped++;
			break;
		case CONTROL_CONTINUE:
			t->stop_tool = 0;
			t->stop_bp = 0;
			state_task_stopped(c->state, t->tid, 0, 0, 0);
			break;
		}
	}
	o->flushing = stopped > 0 && coord_flush_op(c, o->id);
	if (!o->flushing)
		op_end(c, o);
}

/* The stop's round is over (coord.c), if the stop is still there. */
void
coord_control_flushed(struct coord *c, uint32_t id)
{
	struct coord_op *o;

	TAILQ_FOREACH(o, &c->ops, entry)
		if (o->id == id && o->flushing) {
			op_end(c, o);
			return;
		}
}

/* The notice, the reply, and what a tool that left asked for. */
static void
op_end(struct coord *c, struct coord_op *o)
{
	struct req_objects obs = { .n = 0 };
	size_t i;

	notice_op(c, o);
	if (o->tool != NULL && o->op == CONTROL_INFO)
		info_reply(c, o);
	else if (o->tool != NULL)
		op_reply(o);
	TAILQ_REMOVE(&c->ops, o, entry);
	/* Its owner left while it ran: what it stopped goes on. */
	for (i = 0; o->release && i < o->n; i++)
		if (o->v[i].error == NULL && o->v[i].status == CONTROL_OK)
			release_add(c, o->owner, &obs, o->v[i].tid);
	release_end(c, o->owner, &obs);
	snap_release(c, o->snap);
	o->snap = NULL;
	op_free(o);
}

/* Agent a owes o nothing more; o ends when no agent does. */
static void
op_answered(struct coord *c, struct coord_op *o, struct coord_agent *a)
{
	size_t i;

	for (i = 0; i < o->nagents; i++)
		if (o->agents[i] == a) {
			o->agents[i] = o->agents[--o->nagents];
			if (o->nagents == 0)
				op_finish(c, o);
			return;
		}
}

/*
 * CONTROL_DONE from an agent: u32 id, u16 count, then 5 bytes per task,
 * as many as the frame holds (a CONTROL may name up to 65535 tasks).
 */
int
coord_control_done(struct coord_agent *a, const uint8_t *p, size_t len)
{
	struct control_status *st;
	struct coord *c = a->coord;
	struct coord_op *o;
	uint32_t id;
	size_t n, i, j, max = len > 6 ? (len - 6) / 5 : 0;
	const char *why;

	st = xcalloc(max + 1, sizeof(*st));
	if (control_done_decode(p, len, &id, st, max, &n, &why) == -1) {
		free(st);
		coord_agent_drop(a, "bad CONTROL_DONE: %s", why);
		return -1;
	}
	TAILQ_FOREACH(o, &c->ops, entry)
		if (o->id == id)
			break;
	if (o == NULL) {
		log_debug("agent %s: CONTROL_DONE of unknown id %u", a->peer,
		    id);
		free(st);
		return 0;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < o->n; j++)
			if (o->v[j].tid == st[i].tid && o->v[j].error == NULL &&
			    !o->v[j].answered) {
				o->v[j].status = st[i].status;
				o->v[j].answered = 1;
			}
	free(st);
	op_answered(c, o, a);
	return 0;
}

/* The one object "self". */
static const struct req_objects self_only = {
	.v = { [0] = { .kind = REQ_OBJ_SELF } }, .n = 1
};

/*
 * An operation no tool waits for: a breakpoint's action, the release of
 * a tool's stops, a task starting under "stop *".  A snapshot action of
 * the same hit (snap) waits for it.
 */
static void
op_run(struct coord *c, uint8_t op, unsigned owner, uint32_t bp,
    const struct req_objects *obs, int32_t self, int force,
    struct hit_snapshot *snap)
{
	struct coord_op *o = op_new(c, op, NULL, 0);

	o->owner = owner;
	o->bp = bp;
	if ((o->snap = snap) != NULL)
		snap->refs++;
	op_start(c, o, obs, self, force);
}

static int
names_all(const struct req_objects *obs)
{
	size_t i;

	for (i = 0; i < obs->n; i++)
		if (obs->v[i].kind == REQ_OBJ_ALL)
			return 1;
	return 0;
}

/*
 * "stop *" stops the application, also the tasks that start while it is
 * stopped; "continue *" by whoever may continue it ends that.
 */
static void
stop_all_track(struct coord *c, const struct coord_op *o,
    const struct req_objects *obs, int force)
{
	if (!names_all(obs))
		return;
	if (o->op == CONTROL_STOP) {
		c->stop_all = 1;
		c->stop_all_tool = o->owner;
		c->stop_all_bp = o->bp;
	} else if (o->op == CONTROL_CONTINUE && (force ||
	    c->stop_all_tool == 0 || c->stop_all_tool == o->owner))
		c->stop_all = 0;
}

/* A task announced itself: under "stop *", it stops at once. */
void
coord_control_task_new(struct coord *c, struct coord_task *t)
{
	if (!c->stop_all || !controllable(t))
		return;
	op_run(c, CONTROL_STOP, c->stop_all_tool, c->stop_all_bp, &self_only,
	    t->tid, 0, NULL);
}

/* Starts an operation on objects; the caller replied or op_finish will. */
static void
op_start(struct coord *c, struct coord_op *o, const struct req_objects *obs,
    int32_t self, int force)
{
	stop_all_track(c, o, obs, force);
	expand(c, o, obs, self);
	check_owner(c, o, force);
	op_send(c, o);
}

/* --- breakpoints --------------------------------------------------------- */

static struct coord_bp *
bp_find(struct coord *c, uint32_t id)
{
	struct coord_bp *b;

	TAILQ_FOREACH(b, &c->bps, entry)
		if (b->id == id)
			return b;
	return NULL;
}

/* Is this breakpoint checked in the tasks (entering or leaving a call)? */
static int
bp_in_task(const struct coord_bp *b)
{
	return b->req->trig.kind == REQ_TRIG_ENTER ||
	    b->req->trig.kind == REQ_TRIG_LEAVE;
}

/* One control-page entry for breakpoint b and task tid (0: all). */
static void
bp_entry(const struct coord_bp *b, int32_t tid, struct breakpoint *e)
{
	const struct req_trigger *tr = &b->req->trig;

	memset(e, 0, sizeof(*e));
	e->id = b->id;
	e->tid = tid;
	e->call = (uint8_t)tr->call;
	e->phase = tr->kind == REQ_TRIG_ENTER ? PMON_BEGIN : PMON_END;
	if (tr->filters & REQ_F_PEER) {
		e->match |= BP_PEER;
		e->peer = tr->peer;
	}
	if (tr->filters & REQ_F_TAG) {
		e->match |= BP_TAG;
		e->tag = tr->tag;
	}
	if (tr->filters & REQ_F_CTX) {
		e->match |= BP_CTX;
		e->ctx = tr->ctx;
	}
	if (tr->filters & REQ_F_GROUP) {
		e->match |= BP_GROUP;
		snprintf(e->group, sizeof(e->group), "%s", tr->group);
	}
	if (b->stopline) {
		e->match |= BP_SEQ;
		e->seq = b->stopline;
	}
}

/*
 * The control-page entries of the enabled in-task breakpoints; -1 when
 * they do not fit (why says so).  A task filter naming hosts or groups
 * is expanded to the tasks they hold now.
 */
static int
bp_table(struct coord *c, struct breakpoint *tab, size_t *n, const char **why)
{
	struct coord_bp *b;
	struct coord_op tmp;
	size_t i;

	*n = 0;
	TAILQ_FOREACH(b, &c->bps, entry) {
		if (!b->enabled || !bp_in_task(b))
			continue;
		if (!(b->req->trig.filters & REQ_F_TASKS) &&
		    b->stopline_tid == 0) {
			if (*n == BREAKPOINTS_MAX)
				goto full;
			bp_entry(b, 0, &tab[(*n)++]);
			continue;
		}
		if (b->stopline_tid != 0) {
			/*
			 * Before record SEQ if it begins a call; if it ends
			 * one, the task cannot stop inside PVM: right after
			 * that call, before record SEQ + 1.
			 */
			if (*n + 2 > BREAKPOINTS_MAX)
				goto full;
			bp_entry(b, b->stopline_tid, &tab[(*n)++]);
			bp_entry(b, b->stopline_tid, &tab[*n]);
			tab[*n].phase = PMON_END;
			tab[(*n)++].seq = b->stopline + 1;
			continue;
		}
		memset(&tmp, 0, sizeof(tmp));
		expand(c, &tmp, &b->req->trig.tasks, 0);
		for (i = 0; i < tmp.n; i++) {
			if (tmp.v[i].error != NULL)
				continue;
			if (*n == BREAKPOINTS_MAX) {
				free(tmp.v);
				goto full;
			}
			bp_entry(b, tmp.v[i].tid, &tab[(*n)++]);
		}
		free(tmp.v);
	}
	return 0;
full:
	*why = "too many breakpoints for the tasks' control pages";
	return -1;
}

/* Sends the table to one agent, or to all (a NULL). */
void
coord_control_install(struct coord *c, struct coord_agent *to)
{
	struct breakpoint tab[BREAKPOINTS_MAX];
	struct coord_agent *a;
	const char *why;
	size_t n;

	if (bp_table(c, tab, &n, &why) == -1) {
		log_warnx("breakpoints: %s", why);
		return;
	}
	TAILQ_FOREACH(a, &c->agents, entry)
		if (a->state == COORD_P_ACTIVE && (to == NULL || a == to))
			coord_frame_breakpoints(bufferevent_get_output(a->bev),
			    tab, n);
}

static void
notice_bp(struct coord *c, const struct coord_bp *b, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	fprintf(fp, "{\"notice\":\"breakpoint\",\"tool\":%u,\"id\":%u,"
	    "\"what\":\"%s\",\"text\":", b->owner != NULL ? b->owner->id : 0,
	    b->id, what);
	json_str_write(fp, b->text);
	fputc('}', fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	coord_notice(c, buf);
	free(buf);
}

static void
bp_free(struct coord *c, struct coord_bp *b)
{
	TAILQ_REMOVE(&c->bps, b, entry);
	free(b->req);
	free(b);
}

/* Adds a breakpoint of tool t; -1 with why if its table would not fit. */
static struct coord_bp *
bp_add(struct coord *c, struct coord_tool *t, const struct req *r,
    int32_t stopline_tid, uint64_t stopline, const char **why)
{
	struct breakpoint tab[BREAKPOINTS_MAX];
	struct coord_bp *b;
	size_t n;

	b = xcalloc(1, sizeof(*b));
	b->req = xmalloc(sizeof(*b->req));
	*b->req = *r;
	if (++c->next_bp == 0)
		c->next_bp = 1;
	b->id = c->next_bp;
	b->owner = t;
	b->enabled = 1;
	b->stopline_tid = stopline_tid;
	b->stopline = stopline;
	if (stopline != 0)
		snprintf(b->text, sizeof(b->text), "stopline t%x:%llu",
		    (unsigned)stopline_tid, (unsigned long long)stopline);
	else if (req_format(r, b->text, sizeof(b->text)) == -1)
		snprintf(b->text, sizeof(b->text), "(too long to show)");
	TAILQ_INSERT_TAIL(&c->bps, b, entry);
	if (bp_in_task(b) && bp_table(c, tab, &n, why) == -1) {
		bp_free(c, b);
		return NULL;
	}
	if (bp_in_task(b))
		coord_control_install(c, NULL);
	notice_bp(c, b, "added");
	return b;
}

/* An action's objects: none written (self, column 0) means deflt. */
static const struct req_objects *
act_objects(const struct req_action *a, const struct req_objects *deflt)
{
	if (a->objects.n == 0 || (a->objects.n == 1 &&
	    a->objects.v[0].kind == REQ_OBJ_SELF && a->objects.v[0].col == 0))
		return deflt;
	return &a->objects;
}

/*
 * The actions of breakpoint b, for an event of task tid; a stop or
 * continue without objects is of all (a problem's tasks), or of tid.
 */
static void
bp_act(struct coord *c, struct coord_bp *b, int32_t tid,
    const struct req_objects *all, int stopped)
{
	const struct req *r = b->req;
	unsigned owner = b->owner != NULL ? b->owner->id : 0;
	struct hit_snapshot *snap = NULL;
	int stops = 0;
	size_t i;

	b->hits++;
	for (i = 0; i < r->nact && b->owner != NULL; i++)
		if (r->act[i].kind == REQ_ACT_SNAPSHOT && snap == NULL) {
			snap = xcalloc(1, sizeof(*snap));
			snap->tool = owner;
			snap->refs = 1;
		}
	if (b->stopline != 0) {
		/* A stopline's one action: the task stays stopped. */
		op_run(c, CONTROL_STOP, owner, b->id, &self_only, tid, 0,
		    NULL);
		stops = 1;
	}
	for (i = 0; i < r->nact; i++) {
		const struct req_action *a = &r->act[i];

		switch (a->kind) {
		case REQ_ACT_STOP:
		case REQ_ACT_CONTINUE:
			op_run(c, a->kind == REQ_ACT_STOP ? CONTROL_STOP :
			    CONTROL_CONTINUE, owner, b->id, act_objects(a,
			    all != NULL ? all : &self_only), tid, 0, snap);
			stops |= a->kind == REQ_ACT_STOP;
			break;
		case REQ_ACT_FLUSH:
			coord_flush_start(c, NULL, 0);
			break;
		case REQ_ACT_SNAPSHOT:
			/* Once the hit's stops are done (snap). */
			break;
		case REQ_ACT_NOTIFY:
			if (b->owner != NULL) {
				char msg[160];

				snprintf(msg, sizeof(msg), "{\"notice\":"
				    "\"hit\",\"breakpoint\":%u,\"tid\":%d,"
				    "\"hits\":%llu}", b->id, tid,
				    (unsigned long long)b->hits);
				coord_frame_body(coord_tool_out(
				    b->owner), MSG_NOTICE, msg,
				    strlen(msg));
			}
			break;
		case REQ_ACT_COUNT:
			break;
		}
	}
	snap_release(c, snap);
	/* A task that stopped itself with no stop to do goes on. */
	if (stopped && !stops)
		op_run(c, CONTROL_CONTINUE, owner, b->id, &self_only, tid, 1,
		    NULL);
}

/*
 * A BREAK record, as it arrives from the agent: the task has stopped
 * itself.  It is its breakpoint's owner's stop; the other actions run.
 */
void
coord_control_break(struct coord *c, int32_t tid, const struct record *r)
{
	struct coord_task *t = coord_task_find(c, tid);
	struct coord_bp *b = bp_find(c, (uint32_t)r->inst);

	if (t == NULL)
		return;
	if (b == NULL || !b->enabled) {
		/* Deleted while the task was on its way: let it go. */
		op_run(c, CONTROL_CONTINUE, 0, 0, &self_only, tid, 1, NULL);
		return;
	}
	t->stop_tool = b->owner != NULL ? b->owner->id : 0;
	t->stop_bp = b->id;
	log_info("t%x stopped at breakpoint %u (%s)", (unsigned)tid, b->id,
	    record_call_name((unsigned)r->rc));
	bp_act(c, b, tid, NULL, 1);
	if (b->stopline != 0) {
		/* A stopline stops once. */
		notice_bp(c, b, "deleted");
		bp_free(c, b);
		coord_control_install(c, NULL);
	}
}

/* Does tid pass the trigger's task filter? */
static int
trig_task(struct coord *c, const struct req_trigger *tr, int32_t tid)
{
	struct coord_op tmp;
	size_t i;
	int in = 0;

	if (!(tr->filters & REQ_F_TASKS))
		return 1;
	memset(&tmp, 0, sizeof(tmp));
	expand(c, &tmp, &tr->tasks, 0);
	for (i = 0; i < tmp.n && !in; i++)
		in = tmp.v[i].error == NULL && tmp.v[i].tid == tid;
	free(tmp.v);
	return in;
}

/*
 * The triggers the coordinator checks on the released stream: a message
 * received (recv), tasks spawned (spawn: self is each child, the task
 * filter names the parent), a task calling pvm_exit (exit).  Their
 * actions run after the event was released, not where it happened.
 */
void
coord_control_event(struct coord *c, const struct order_event *ev)
{
	const struct record *r = ev->rec;
	struct coord_bp *b, *nb;
	unsigned i;

	for (b = TAILQ_FIRST(&c->bps); b != NULL; b = nb) {
		const struct req_trigger *tr = &b->req->trig;

		nb = TAILQ_NEXT(b, entry);
		if (!b->enabled || !trig_task(c, tr, ev->tid))
			continue;
		switch (tr->kind) {
		case REQ_TRIG_RECV:
			if (!record_is_recv(r) ||
			    ((tr->filters & REQ_F_PEER) && r->peer != tr->peer) ||
			    ((tr->filters & REQ_F_TAG) && r->tag != tr->tag) ||
			    ((tr->filters & REQ_F_CTX) && r->ctx != tr->ctx))
				continue;
			bp_act(c, b, ev->tid, NULL, 0);
			break;
		case REQ_TRIG_SPAWN:
			if (r->call != PMON_CALL_spawn || r->phase != PMON_END)
				continue;
			for (i = 0; i < r->npeers; i++)
				if (record_peer(r, i) > 0)
					bp_act(c, b, record_peer(r, i), NULL, 0);
			break;
		case REQ_TRIG_EXIT:
			if (r->call != PMON_CALL_exit || r->phase != PMON_BEGIN)
				continue;
			bp_act(c, b, ev->tid, NULL, 0);
			break;
		default:
			break;
		}
	}
}

/*
 * A problem the model found: the deadlock, race and problem triggers
 * whose task filter names one of its tasks.  Their stops and continues
 * without objects are of all its tasks (every task of a deadlock, the
 * receiver of a race); self is the first.
 */
void
coord_control_problem(struct coord *c, const struct state_problem *sp)
{
	static struct req_objects all;
	struct coord_bp *b, *nb;
	size_t i;
	int in;

	all.n = 0;
	for (i = 0; i < sp->ntids && all.n < REQ_OBJECTS_MAX; i++) {
		memset(&all.v[all.n], 0, sizeof(all.v[0]));
		all.v[all.n].kind = REQ_OBJ_TASK;
		all.v[all.n++].tid = sp->tids[i];
	}
	for (b = TAILQ_FIRST(&c->bps); b != NULL; b = nb) {
		const struct req_trigger *tr = &b->req->trig;

		nb = TAILQ_NEXT(b, entry);
		if (!b->enabled || sp->ntids == 0 ||
		    (tr->kind != REQ_TRIG_PROBLEM &&
		    !(tr->kind == REQ_TRIG_DEADLOCK &&
		    strcmp(sp->kind, "deadlock") == 0) &&
		    !(tr->kind == REQ_TRIG_RACE &&
		    strcmp(sp->kind, "race") == 0)))
			continue;
		for (i = 0, in = 0; i < sp->ntids && !in; i++)
			in = trig_task(c, tr, sp->tids[i]);
		if (in)
			bp_act(c, b, sp->tids[0], &all, 0);
	}
}

/* The breakpoints, for the "breakpoints" request. */
static void
bp_list(struct coord *c, FILE *fp)
{
	struct coord_bp *b;
	int first = 1;

	fputs("{\"breakpoints\":[", fp);
	TAILQ_FOREACH(b, &c->bps, entry) {
		fprintf(fp, "%s{\"id\":%u,\"tool\":%u,\"enabled\":%s,"
		    "\"hits\":%llu,\"text\":", first ? "" : ",", b->id,
		    b->owner != NULL ? b->owner->id : 0,
		    b->enabled ? "true" : "false",
		    (unsigned long long)b->hits);
		json_str_write(fp, b->text);
		fputc('}', fp);
		first = 0;
	}
	fputs("]}", fp);
}

/* --- requests -------------------------------------------------------------- */

static int
reply_text(char **body, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
reply_text(char **body, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(body, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("%s", __func__);	/* xasprintf's rule, with a va_list */
	*len = (size_t)n;
	return REPLY_OK;
}

/*
 * Runs a manipulation or breakpoint request of tool t (flags REQUEST_*:
 * with REQUEST_UNOWNED its stops belong to nobody).  Returns REPLY_OK
 * or REPLY_ERROR with a body to send now, or COORD_REPLY_LATER when the
 * REPLY (id req_id) will follow.
 */
int
coord_control_run(struct coord *c, struct coord_tool *t, uint32_t req_id,
    uint32_t flags, const struct req *r, char **body, size_t *len)
{
	struct coord_op *o;
	struct coord_bp *b;
	const char *why = NULL;
	char *buf = NULL;
	size_t blen = 0;
	FILE *fp;
	int rv;

	switch (r->kind) {
	case REQ_STOP:
	case REQ_CONTINUE:
	case REQ_KILL:
		o = op_new(c, r->kind == REQ_STOP ? CONTROL_STOP :
		    r->kind == REQ_CONTINUE ? CONTROL_CONTINUE : CONTROL_KILL,
		    t, req_id);
		if (flags & REQUEST_UNOWNED)
			o->owner = 0;
		op_start(c, o, &r->objects, 0, r->force);
		return COORD_REPLY_LATER;
	case REQ_FLUSH:
		coord_flush_reply(c, t, req_id);
		return COORD_REPLY_LATER;
	case REQ_TASKS:
		o = op_new(c, CONTROL_INFO, t, req_id);
		if (r->objects.n == 0) {
			struct req_objects all = { .n = 1 };

			all.v[0].kind = REQ_OBJ_ALL;
			op_start(c, o, &all, 0, 0);
		} else
			op_start(c, o, &r->objects, 0, 0);
		return COORD_REPLY_LATER;
	case REQ_ON:
		if ((b = bp_add(c, t, r, 0, 0, &why)) == NULL)
			return reply_text(body, len, "%s", why), REPLY_ERROR;
		return reply_text(body, len, "{\"id\":%u}", b->id);
	case REQ_STOPLINE:
		if ((b = bp_add(c, t, r, r->tid, r->seq, &why)) == NULL)
			return reply_text(body, len, "%s", why), REPLY_ERROR;
		return reply_text(body, len, "{\"id\":%u}", b->id);
	case REQ_ENABLE:
	case REQ_DISABLE:
	case REQ_DELETE:
		if ((b = bp_find(c, r->id)) == NULL)
			return reply_text(body, len, "no breakpoint %u", r->id),
			    REPLY_ERROR;
		if (b->owner != t)
			return reply_text(body, len, "breakpoint %u belongs to "
			    "tool %u", r->id, b->owner ? b->owner->id : 0),
			    REPLY_ERROR;
		if (r->kind == REQ_DELETE) {
			notice_bp(c, b, "deleted");
			rv = bp_in_task(b);
			bp_free(c, b);
		} else {
			b->enabled = r->kind == REQ_ENABLE;
			notice_bp(c, b, b->enabled ? "enabled" : "disabled");
			rv = bp_in_task(b);
		}
		if (rv)
			coord_control_install(c, NULL);
		return reply_text(body, len, "{}");
	case REQ_BREAKPOINTS:
		if ((fp = open_memstream(&buf, &blen)) == NULL)
			fatal("%s", __func__);
		bp_list(c, fp);
		if (fclose(fp) != 0)
			fatal("%s", __func__);
		*body = buf;
		*len = blen;
		return REPLY_OK;
	default:
		return reply_text(body, len, "\"%s\" is not implemented yet",
		    req_kind_name(r->kind)), REPLY_ERROR;
	}
}

/* --- peers that leave ------------------------------------------------------ */

/*
 * A tool left: its breakpoints go, its stops are released (tasks it
 * stopped continue), and nobody waits to answer it.
 */
void
coord_control_tool_gone(struct coord *c, struct coord_tool *t)
{
	struct req_objects obs = { .n = 0 };
	struct coord_bp *b, *nb;
	struct coord_task *task;
	struct coord_op *o;
	int changed = 0;

	TAILQ_FOREACH(o, &c->ops, entry) {
		if (o->tool == t)
			o->tool = NULL;
		if (o->op == CONTROL_STOP && o->owner == t->id)
			o->release = 1;
	}
	if (c->stop_all && c->stop_all_tool == t->id)
		c->stop_all = 0;
	for (b = TAILQ_FIRST(&c->bps); b != NULL; b = nb) {
		nb = TAILQ_NEXT(b, entry);
		if (b->owner != t)
			continue;
		changed |= bp_in_task(b);
		notice_bp(c, b, "deleted");
		bp_free(c, b);
	}
	if (changed)
		coord_control_install(c, NULL);
	TAILQ_FOREACH(task, &c->tasks, entry)
		if (task->stop_tool == t->id)
			release_add(c, t->id, &obs, task->tid);
	release_end(c, t->id, &obs);
}

/* An agent left: what it owed counts as failed. */
void
coord_control_agent_gone(struct coord *c, struct coord_agent *a)
{
	struct coord_op *o, *next;

	for (o = TAILQ_FIRST(&c->ops); o != NULL; o = next) {
		next = TAILQ_NEXT(o, entry);
		op_answered(c, o, a);
	}
}

void
coord_control_free(struct coord *c)
{
	struct coord_task *t;
	struct coord_op *o;

	while ((o = TAILQ_FIRST(&c->ops)) != NULL) {
		TAILQ_REMOVE(&c->ops, o, entry);
		op_free(o);
	}
	while (!TAILQ_EMPTY(&c->bps))
		bp_free(c, TAILQ_FIRST(&c->bps));
	TAILQ_FOREACH(t, &c->tasks, entry)
		t->stop_tool = 0;
}
