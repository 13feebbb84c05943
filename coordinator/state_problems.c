/*
 * The state model's problems (state.c): each is written as its JSON
 * object, passed to the callback and kept (the first
 * STATE_PROBLEMS_KEPT); here are how one is written and the reports of
 * every kind but deadlocks (state_deadlock.c).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "record.h"
#include "state.h"
#include "state_internal.h"

/* --- problems ---------------------------------------------------------- */

/* A task the problem is about (for the callback). */
void
state_pb_task(struct pbuf *pb, int32_t tid)
{
	if (pb->ntids < STATE_PROBLEM_TIDS)
		pb->tids[pb->ntids++] = tid;
}

/* A memory stream fails only for want of memory: fatal, as in xmalloc. */
void
state_pb_open(struct pbuf *pb, const char *kind)
{
	memset(pb, 0, sizeof(*pb));
	if ((pb->fp = open_memstream(&pb->buf, &pb->len)) == NULL)
		fatal("%s: open_memstream", __func__);
	fprintf(pb->fp, "{\"kind\":\"%s\"", kind);
	pb->kind = kind;
}

/* Tells the callback of the finished problem and keeps it. */
void
state_pb_emit(struct state *s, struct pbuf *pb)
{
	struct problem *p;
	int bad;

	fputc('}', pb->fp);
	bad = ferror(pb->fp);
	bad |= fclose(pb->fp) != 0;
	pb->fp = NULL;
	if (bad)
		fatal("%s: problem", __func__);
	if (s->nproblems < STATE_PROBLEMS_KEPT)
		state_grow(&s->problems, &s->probcap, s->nproblems + 1,
		    sizeof(*s->problems));
	if (s->cb != NULL) {
		struct state_problem sp = { pb->buf, pb->kind, pb->tids,
		    pb->ntids };

		s->cb(&sp, s->arg);
	}
	if (s->nproblems == STATE_PROBLEMS_KEPT) {
		s->problems_dropped++;
		free(pb->buf);
		return;
	}
	p = &s->problems[s->nproblems++];
	p->json = pb->buf;
}

void
state_report_waits_on_exited(struct state *s, const struct task *w,
    int32_t exited)
{
	struct pbuf pb;

	state_pb_open(&pb, "waits_on_exited");
	state_pb_task(&pb, w->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"exited\":%" PRId32
	    ",\"in\":\"%s\"", w->tid, exited, state_call_name(w->cur.call));
	state_pb_emit(s, &pb);
}

void
state_report_unreceived(struct state *s, const struct task *t,
    const struct qmsg *q)
{
	struct pbuf pb;

	state_pb_open(&pb, "unreceived");
	state_pb_task(&pb, t->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"from\":%" PRId32
	    ",\"tag\":%" PRId32 ",\"ctx\":%" PRId32 ",\"bytes\":%" PRId32
	    ",\"send\":", t->tid, q->from, q->tag, q->ctx, q->bytes);
	state_json_id(pb.fp, q->from, q->seq);
	state_pb_emit(s, &pb);
}

/* The receive c got c->s1 though q (its filter matched) could have come. */
void
state_report_race(struct state *s, const struct task *t, const struct cand *c,
    const struct qmsg *q)
{
	struct pbuf pb;

	state_pb_open(&pb, "race");
	state_pb_task(&pb, t->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"recv\":", t->tid);
	state_json_id(pb.fp, t->tid, c->recv_seq);
	fprintf(pb.fp, ",\"tag\":%" PRId32 ",\"sends\":[", c->tag);
	state_json_id(pb.fp, c->s1_tid, c->s1_seq);
	fputc(',', pb.fp);
	state_json_id(pb.fp, q->from, q->seq);
	fputc(']', pb.fp);
	state_pb_emit(s, &pb);
}

/*
 * t's unpack r does not read what was packed at the cursor: run (NULL
 * past the end of the message).
 */
void
state_report_unpack(struct state *s, const struct task *t,
    const struct record *r, const struct pkrun *run)
{
	const struct unpacking *u = &t->unpack;
	struct pbuf pb;

	state_pb_open(&pb, "unpack_mismatch");
	state_pb_task(&pb, t->tid);
	fprintf(pb.fp, ",\"tid\":%" PRId32 ",\"recv\":", t->tid);
	state_json_id(pb.fp, t->tid, u->recv_seq);
	fputs(",\"send\":", pb.fp);
	state_json_id(pb.fp, u->from, u->send_seq);
	fprintf(pb.fp, ",\"from\":%" PRId32 ",\"tag\":%" PRId32 ",\"at\":",
	    u->from, u->tag);
	state_json_id(pb.fp, t->tid, r->seq);
	if (run != NULL)
		fprintf(pb.fp, ",\"packed\":\"%s\"",
		    state_call_name(run->call));
	else
		fputs(",\"packed\":null", pb.fp);
	fprintf(pb.fp, ",\"unpacked\":\"%s\",\"offset\":%" PRIu64,
	    state_call_name(r->call), u->offset);
	state_pb_emit(s, &pb);
}
