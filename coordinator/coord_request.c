/*
 * Requests from tools (REQUEST frames).  request.c parses the text
 * (doc/requests.md has the grammar); this file runs what it asked for.
 * So far these are the information services on the state model:
 *
 *	snapshot | ps | hosts | groups | problems | queues [TASK | *] |
 *	frontier TASK:SEQ | tools
 *
 * The reply is JSON (doc/state.md, doc/requests.md); the pmon command
 * makes its tables from it.  A malformed request
 * gets the parser's error, which names the column and what is wrong
 * there; a request the language has but the coordinator does not run
 * yet gets an error that says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "coord.h"
#include "log.h"
#include "request.h"
#include "xmalloc.h"

/* The state parts each information request writes. */
static unsigned
info_parts(enum req_kind kind)
{
	switch (kind) {
	case REQ_SNAPSHOT:
		return STATE_ALL;
	case REQ_PS:
		return STATE_TASKS;
	case REQ_HOSTS:
		return STATE_HOSTS;
	case REQ_GROUPS:
		return STATE_GROUPS;
	case REQ_PROBLEMS:
		return STATE_PROBLEMS;
	case REQ_QUEUES:
		return STATE_QUEUES;
	case REQ_MAILBOX:
		return STATE_MAILBOX;
	default:
		return 0;
	}
}

/*
 * The one task queues is limited to, 0 for all: queues takes no object,
 * "*" or one task.  -1 with the error in err otherwise.
 */
static int
queues_tid(const struct req *r, int32_t *tid, char *err, size_t size)
{
	const struct req_object *o;

	*tid = 0;
	if (r->objects.n == 0)
		return 0;
	o = &r->objects.v[r->objects.n > 1 ? 1 : 0];
	if (r->objects.n > 1 || (o->kind != REQ_OBJ_TASK &&
	    o->kind != REQ_OBJ_ALL)) {
		snprintf(err, size, "column %u: queues takes one task or *",
		    o->col);
		return -1;
	}
	if (o->kind == REQ_OBJ_TASK)
		*tid = o->tid;
	return 0;
}

/* Hands err to the caller as the reply body. */
static int
request_error(const char *err, char **body, size_t *len)
{
	*body = xstrdup(err);
	*len = strlen(err);
	return REPLY_ERROR;
}

/* The requests coord_control.c runs. */
int
coord_request_is_control(enum req_kind kind)
{
	switch (kind) {
	case REQ_STOP:
	case REQ_CONTINUE:
	case REQ_KILL:
	case REQ_FLUSH:
	case REQ_STOPLINE:
	case REQ_ON:
	case REQ_ENABLE:
	case REQ_DISABLE:
	case REQ_DELETE:
	case REQ_BREAKPOINTS:
	case REQ_TASKS:
		return 1;
	default:
		return 0;
	}
}

/*
 * Runs one request of tool t; *body (malloc'ed, not NUL-counted in *len)
 * is the reply or the error.  Returns REPLY_OK or REPLY_ERROR, or
 * COORD_REPLY_LATER when a stop, continue, kill or flush answers by
 * itself once done (coord_control.c).
 */
int
coord_request_run(struct coord *c, struct coord_tool *t,
    const struct request_msg *creq, char **body, size_t *len)
{
	struct req *r;
	char err[256];
	int32_t tid = 0;
	uint64_t seq = 0;
	unsigned parts = 0;
	char why[512];
	FILE *f;
	int rv = 0;

	*body = NULL;
	*len = 0;
	r = xmalloc(sizeof(*r));
	err[0] = '\0';
	if (req_parse(creq->text, r, err, sizeof(err)) == 0) {
		if (coord_request_is_control(r->kind) && c->replay != NULL &&
		    r->kind != REQ_FLUSH) {
			free(r);
			return request_error("replay: the program is not "
			    "running", body, len);
		}
		if (r->kind == REQ_TOOLS) {
			free(r);
			coord_tools_write(c, body, len);
			return REPLY_OK;
		}
		if (coord_request_is_control(r->kind)) {
			rv = coord_control_run(c, t, creq->id, creq->flags, r,
			    body, len);
			free(r);
			return rv;
		}
		if (r->kind == REQ_FRONTIER) {
			tid = r->tid;
			seq = r->seq;
		} else if ((parts = info_parts(r->kind)) == 0)
			snprintf(err, sizeof(err), "\"%s\" is not "
			    "implemented yet", req_kind_name(r->kind));
		else if (r->kind == REQ_QUEUES)
			queues_tid(r, &tid, err, sizeof(err));
	}
	free(r);
	if (err[0] != '\0')
		return request_error(err, body, len);

	if ((f = open_memstream(body, len)) == NULL)
		fatal("%s", __func__);
	if (parts & STATE_PROBLEMS)
		state_check(c->state);
	if (parts == 0)
		rv = state_frontier(c->state, tid, seq, f, why, sizeof(why));
	else
		rv = state_write(c->state, parts, tid, f);
	if (fclose(f) != 0)
		fatal("%s", __func__);
	if (rv == -1 && parts == 0) {
		free(*body);
		return request_error(why, body, len);
	}
	if (rv == -1)
		fatalx("%s: state_write failed", __func__);
	return REPLY_OK;
}

/* The state at this point of the stream, for a tool that subscribes. */
void
coord_snapshot_send(struct coord *c, struct coord_tool *t)
{
	const char *recorded;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	if (coord_replay_snapshot(c, &recorded, &len)) {
		coord_frame_reply(coord_tool_out(t), 0, REPLY_OK,
		    recorded, len);
		return;
	}
	if ((f = open_memstream(&body, &len)) == NULL ||
	    state_write(c->state, STATE_ALL, 0, f) == -1 || fclose(f) != 0)
		fatal("%s", __func__);
	coord_frame_reply(coord_tool_out(t), 0, REPLY_OK, body,
	    len);
	free(body);
}
