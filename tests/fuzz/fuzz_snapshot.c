/*
 * Fuzzes state_load (coordinator/state_load.c), which sets the state
 * model from a snapshot's JSON when a replay resynchronises: the input
 * is that JSON, loaded into a model that already holds tasks, a queue
 * and a problem.  A snapshot it rejects leaves the model as it was and
 * says why; one it accepts writes back (state_write) as a snapshot that
 * loads again and writes the same.  Then events go on from the loaded
 * state, and the deadlock check, the tables pmon prints (tools/render.c)
 * and a frontier run on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "pmon-tool.h"
#include "proto.h"
#include "record.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TA	262145
#define TB	262146

/* The model's snapshot; with text, as pmon snapshot prints it. */
static char *
written(const struct state *s, int text)
{
	char *buf = NULL, *table = NULL;
	size_t len = 0, tlen = 0;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		return NULL;
	if (state_write(s, STATE_ALL, 0, fp) == -1)
		__builtin_trap();
	fclose(fp);
	if (!text || buf == NULL)
		return buf;
	if ((fp = open_memstream(&table, &tlen)) == NULL) {
		free(buf);
		return NULL;
	}
	if (render_reply(fp, "snapshot", buf, len) != RENDER_OK)
		__builtin_trap();
	fclose(fp);
	free(buf);
	return table;
}

/* One event of tid, as the order releases it. */
static void
event(struct state *s, int32_t tid, uint8_t call, uint8_t phase,
    uint64_t seq, int32_t peer, int32_t mtid, uint64_t mseq)
{
	uint8_t buf[RECORD_MAX_SIZE];
	struct order_event ev;
	struct record r;
	const char *why;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.call = call;
	r.phase = phase;
	r.seq = seq;
	r.t_ns = seq * 1000;
	r.peer = peer;
	r.tag = 1;
	r.inst = -1;
	r.bytes = 4;
	r.rc = 1;
	if (mtid != 0)
		r.flags = RECORD_MSG;
	n = record_encode(buf, &r, NULL);
	if (record_decode(buf, n, &r, &why) == -1)
		__builtin_trap();
	memset(&ev, 0, sizeof(ev));
	ev.tid = tid;
	ev.flags = mtid != 0 ? EVENT_MATCHED : 0;
	ev.match_tid = mtid;
	ev.match_seq = mseq;
	ev.t_corr = r.t_ns;
	ev.rec = &r;
	state_event(s, &ev);
}

/* A model with something in it: the load must replace all of it. */
static struct state *
busy_model(void)
{
	struct state *s;

	if ((s = state_new(NULL, NULL)) == NULL)
		return NULL;
	state_host(s, 0x40000, "vm", "LINUX64", 1);
	state_task(s, TA, 0, 1, "vm", "a");
	state_task(s, TB, 0, 2, "vm", "b");
	event(s, TA, PMON_CALL_send, PMON_BEGIN, 1, TB, 0, 0);
	event(s, TA, PMON_CALL_send, PMON_END, 2, TB, 0, 0);
	event(s, TB, PMON_CALL_exit, PMON_BEGIN, 1, -1, 0, 0);
	return s;
}

/* Events after the snapshot, whatever it held. */
static void
go_on(struct state *s)
{
	char err[256], *text;
	FILE *fp;

	event(s, TA, PMON_CALL_recv, PMON_BEGIN, 1000, -1, 0, 0);
	event(s, TA, PMON_CALL_recv, PMON_END, 1001, -1, TB, 1);
	event(s, TB, PMON_CALL_send, PMON_BEGIN, 1000, TA, 0, 0);
	event(s, TA, PMON_CALL_barrier, PMON_BEGIN, 1002, -1, 0, 0);
	state_task_gone(s, TB);
	state_check(s);
	if ((fp = fopen("/dev/null", "w")) != NULL) {
		state_frontier(s, TA, 1001, fp, err, sizeof(err));
		state_frontier(s, TA, 1, fp, err, sizeof(err));
		fclose(fp);
	}
	free(written(s, 0));
	text = written(s, 1);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state *s;
	char err[256], *before, *after, *again;

	if ((s = busy_model()) == NULL)
		return 0;
	before = written(s, 0);
	err[0] = '\0';
	if (state_load(s, (const char *)data, size, err, sizeof(err)) == -1) {
		after = written(s, 0);
		if (err[0] == '\0' || before == NULL || after == NULL ||
		    strcmp(before, after) != 0)
			__builtin_trap();
		free(after);
	} else {
		free(written(s, 1));
		after = written(s, 0);
		if (after == NULL || state_load(s, after, strlen(after), err,
		    sizeof(err)) == -1)
			__builtin_trap();
		again = written(s, 0);
		if (again == NULL || strcmp(after, again) != 0)
			__builtin_trap();
		free(after);
		free(again);
		go_on(s);
	}
	free(before);
	state_free(s);
	return 0;
}
