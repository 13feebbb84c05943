/*
 * Fuzzes what an agent or a tool can make the coordinator do: a stream of
 * frames goes through the coordinator's payload decoders, and what they
 * accept drives a real ordering core and state model, and requests are
 * answered, as the daemon's handlers do; the hellos' secrets go through
 * the coordinator's check.  The released stream must stay
 * sane whatever the input: each task's events in increasing sequence,
 * every event encodable as an EVENT frame.
 */
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "coord.h"
#include "order.h"
#include "proto.h"
#include "record.h"
#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NLAST	64

static struct {
	int32_t		tid;
	uint64_t	seq;
} last[NLAST];

static struct coord coord;

static void
problem(const struct state_problem *sp, void *arg)
{
	(void)arg;
	if (sp->json[0] != '{' || sp->ntids == 0)
		__builtin_trap();
}

static void
task_done(int32_t tid, void *arg)
{
	(void)arg;
	state_task_gone(coord.state, tid);
}

static void
release(const struct order_event *ev, void *arg)
{
	static uint8_t buf[FRAME_HDR_SIZE + EVENT_HDR_SIZE + RECORD_MAX_SIZE];
	unsigned i = (uint32_t)ev->tid % NLAST;
	struct frame_hdr h;
	const char *why;

	(void)arg;
	if (coord_frame_event(buf, sizeof(buf), ev) == 0 ||
	    frame_hdr_decode(buf, &h, &why) == -1)
		__builtin_trap();
	/* A tid reused after its end starts again from seq 1. */
	if (last[i].tid == ev->tid && ev->rec->seq <= last[i].seq &&
	    ev->rec->seq != 1)
		__builtin_trap();
	last[i].tid = ev->tid;
	last[i].seq = ev->rec->seq;
	state_event(coord.state, ev);
}

static int
add_record(int32_t tid, const struct record *r, void *arg, const char **why)
{
	return order_add(arg, tid, r, why);
}

/* CONTROL_DONE: what the decoder accepts is within its bounds. */
static void
control_done(const uint8_t *p, size_t len)
{
	static struct control_status st[UINT16_MAX];
	const char *why;
	uint32_t id;
	size_t n, max = len % 2 ? UINT16_MAX : 4, i;

	if (control_done_decode(p, len, &id, st, max, &n, &why) == -1)
		return;
	if (n > max || len != 6 + 5 * n)
		__builtin_trap();
	for (i = 0; i < n; i++)
		if (st[i].status > CONTROL_FAILED)
			__builtin_trap();
}

/*
 * A hello's secret, as the coordinator checks it: what the decoder
 * accepts fits, only the right one passes (the seeds carry it), and a
 * refusal never tells the right one.
 */
static void
check_secret(const char *got)
{
	static const char right[] = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	char msg[256];
	int rv;

	if (strlen(got) > PMON_SECRET_LEN)
		__builtin_trap();
	snprintf(coord.secret, sizeof(coord.secret), "%s", right);
	snprintf(coord.secret_path, sizeof(coord.secret_path), "/s");
	rv = coord_secret_check(&coord, got, msg, sizeof(msg));
	if ((rv == 0) != (strcmp(got, right) == 0) ||
	    (rv == -1 && strstr(msg, right) != NULL))
		__builtin_trap();
}

/* TASK_OTHERS: each task the decoder accepts into the order and model. */
static void
other(const struct task_other *t, void *arg)
{
	if (t->tid <= 0 || t->pid == 0 || t->parent_tid == t->tid ||
	    strlen(t->program) >= sizeof(t->program))
		__builtin_trap();
	if (state_task_other(coord.state, t->tid, t->parent_tid, t->pid,
	    "host", t->program) == 1)
		order_task_unmonitored(arg, t->tid);
}

/* One frame, as coord_agent_frame and coord_tool_frame would take it. */
static void
one_frame(struct order *o, uint8_t type, const uint8_t *p, size_t len)
{
	struct agent_hello ah;
	struct task_hello tn;
	struct tool_hello th;
	struct request_msg req;
	static struct req parsed;
	struct task_proc proc;
	char err[256];
	uint64_t dropped, shipped;
	char *body;
	size_t n;
	uint32_t id;
	int32_t tid;
	const char *why;

	switch (type) {
	case MSG_AGENT_HELLO:
		if (agent_hello_decode(p, len, &ah, &why) == 0)
			check_secret(ah.secret);
		break;
	case MSG_TASK_NEW:
		if (task_new_decode(p, len, &tn, &why) == 0 &&
		    order_task_new(o, tn.tid, 0, tn.parent_tid, tn.spawn_seq,
		    &why) == 0) {
			if (strcmp(tn.program, "pvmgs") == 0)
				order_group_server(o, tn.tid, &why);
			state_task(coord.state, tn.tid, tn.parent_tid, tn.pid,
			    "host", tn.program);
		}
		break;
	case MSG_TASK_RECORDS:
		task_records_decode(p, len, add_record, o, &why);
		break;
	case MSG_TASK_END:
		if (task_end_decode(p, len, &tid, &dropped, &why) == 0)
			order_task_end(o, tid, dropped, &why);
		break;
	case MSG_TASK_RESUME:
		/* dropped: the seq the task goes on at. */
		if (task_resume_decode(p, len, &tid, &dropped, &shipped,
		    &why) == 0) {
			if (dropped == 0 || tid <= 0)
				__builtin_trap();
			order_task_resume(o, tid, dropped, shipped, &why);
		}
		break;
	case MSG_REQUEST:
		/* Stops and breakpoints need agents and tools: not here. */
		if (request_decode(p, len, &req, &why) == 0 &&
		    (req_parse(req.text, &parsed, err, sizeof(err)) == -1 ||
		    !coord_request_is_control(parsed.kind))) {
			coord_request_run(&coord, NULL, &req, &body, &n);
			if (body == NULL || strlen(body) != n)
				__builtin_trap();
			free(body);
		}
		break;
	case MSG_TOOL_HELLO:
		if (tool_hello_decode(p, len, &th, &why) == 0)
			check_secret(th.secret);
		break;
	case MSG_CONTROL_DONE:
		control_done(p, len);
		break;
	case MSG_TASK_OTHERS:
		if (task_others_decode(p, len, other, o, &why) == 0 &&
		    len > 4 && p[4] == 0)	/* now and then, all ended */
			for (tid = 1; tid < 64; tid++)
				state_task_other_end(coord.state, tid);
		break;
	case MSG_TASK_PROC:
		if (task_proc_decode(p, len, &id, &proc, &why) == 0 &&
		    (proc.state < 'A' || proc.state > 'z'))
			__builtin_trap();
		break;
	default:
		proto_u32_decode(p, len, &id, &why);
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct order *o;
	struct frame_hdr h;
	const char *why;
	size_t off = 0;

	if ((o = order_new(release, NULL)) == NULL)
		return 0;
	if ((coord.state = state_new(problem, NULL)) == NULL) {
		order_free(o);
		return 0;
	}
	order_set_done_cb(o, task_done, NULL);
	for (size_t i = 0; i < NLAST; i++)
		last[i].tid = 0;
	while (size - off >= FRAME_HDR_SIZE) {
		if (frame_hdr_decode(data + off, &h, &why) == -1)
			break;
		off += FRAME_HDR_SIZE;
		if (size - off < h.len)
			break;
		one_frame(o, h.type, data + off, h.len);
		off += h.len;
	}
	order_release_all(o);
	state_check(coord.state);
	order_free(o);
	state_free(coord.state);
	coord.state = NULL;
	return 0;
}
