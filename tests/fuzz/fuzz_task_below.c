/*
 * Fuzzes what an intermediate coordinator can make the root do: a stream
 * of frames (TASK_NEW, TASK_BELOW, TASK_END, FLUSH for a round) drives
 * the root's ordering core of a tree whose subtree 0 is the tasks of
 * odd hosts.  Whatever the input, the released stream stays sane: each
 * task's events in increasing sequence, every matched receive naming a
 * send of its peer, every event encodable as an EVENT frame.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coord.h"
#include "order.h"
#include "proto.h"
#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NLAST	64

static struct {
	int32_t		tid;
	uint64_t	seq;
} last[NLAST];

static void
release(const struct order_event *ev, void *arg)
{
	static uint8_t buf[FRAME_HDR_SIZE + EVENT_HDR_SIZE + RECORD_MAX_SIZE];
	unsigned i = (uint32_t)ev->tid % NLAST;

	(void)arg;
	if (coord_frame_event(buf, sizeof(buf), ev) == 0)
		__builtin_trap();
	if ((ev->flags & EVENT_MATCHED) && (ev->match_tid != ev->rec->peer ||
	    ev->match_seq == 0))
		__builtin_trap();
	if (ev->flags & EVENT_RESUMED)	/* never leaves the root */
		__builtin_trap();
	if (last[i].tid == ev->tid && ev->rec->seq <= last[i].seq &&
	    ev->rec->seq != 1)
		__builtin_trap();
	last[i].tid = ev->tid;
	last[i].seq = ev->rec->seq;
}

static int
subtree_of(int32_t tid, void *arg)
{
	(void)arg;
	return ((uint32_t)tid >> 18) & 1 ? 0 : -1;
}

static int
below(int32_t tid, const struct record *r, uint8_t flags, int32_t match_tid,
    uint64_t match_seq, void *arg, const char **why)
{
	return order_add_below(arg, tid, r, flags, match_tid, match_seq, why);
}

static void
one_frame(struct order *o, uint8_t type, const uint8_t *p, size_t len)
{
	struct task_hello tn;
	uint64_t dropped;
	uint32_t id;
	int32_t tid;
	const char *why;

	switch (type) {
	case MSG_TASK_NEW:
		if (task_new_decode(p, len, &tn, &why) == 0)
			order_task_new(o, tn.tid, coord_host_number(tn.tid),
			    tn.parent_tid, tn.spawn_seq, &why);
		break;
	case MSG_TASK_BELOW:
		task_below_decode(p, len, below, o, &why);
		break;
	case MSG_TASK_END:
		if (task_end_decode(p, len, &tid, &dropped, &why) == 0)
			order_task_end(o, tid, dropped, &why);
		break;
	case MSG_FLUSH_DONE:
		if (proto_u32_decode(p, len, &id, &why) == 0)
			order_synced(o, order_mark(o));
		break;
	default:
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
	order_set_subtree(o, ORDER_ROOT, subtree_of, NULL);
	memset(last, 0, sizeof(last));
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
	order_free(o);
	return 0;
}
