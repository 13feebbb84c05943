/*
 * bench_decode: how fast a tool decodes the coordinator's stream.
 *
 * The stream is a recording (-i FILE, its wire frames) or, by default, a
 * message storm generated in memory with the coordinator's own frame
 * encoders: 8 tasks announced by TASK_INFO, then rounds in which every
 * task sends one small message to its successor (pvm_initsend, pvm_pkint,
 * pvm_send) and takes one (pvm_recv, matched to its send, pvm_upkint),
 * begin and end of each: 10 events per task and round, as
 * tests/progs/storm makes them.  Generation is not timed.
 *
 * The timed runs feed the bytes to libpmon with pmon_feed in pieces of
 * the size libpmon reads from its socket, and count CPU time (getrusage):
 * without an event callback, with one that reads every field, and with
 * pmon trace's own line writers (--json and text) behind it, the lines
 * written to a buffer that is then dropped; for comparison, the same
 * JSON lines made by jansson (json_dumpb of trace_event_json), as pmon
 * trace made them before (which then also wrote each line on its own),
 * over the first JANSSON_EVENTS events only: it is that slow.  Each
 * figure is the median of the runs.
 *
 *	bench_decode [-q] [-i FILE] [-n events] [-r runs] [-c chunk]
 *	    [-m mode]
 *
 * -m measures one mode only (plain, cb, json, text or jansson), for a
 * profiler.
 * Last line: decode ev_s=N ev_s_cb=N
 */
#include <sys/resource.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "coord.h"
#include "log.h"
#include "pmon-internal.h"
#include "pmon-tool.h"
#include "pmon.h"
#include "proto.h"
#include "recfile.h"
#include "record.h"

#define STORM_TASKS	8
#define STORM_TAG	2
#define RUNS_MAX	31
/* What pmon trace's writer may hold before it writes (cmd_trace.c). */
#define SINK_SIZE	(256 * 1024)
/* The events the jansson lines are timed on. */
#define JANSSON_EVENTS	500000

/* The stream: whole frames, header and payload, back to back. */
struct stream {
	uint8_t		*buf;
	size_t		 len, size;
	uint64_t	 events;
	size_t		 head_len;	/* the bytes of the first ... */
	uint64_t	 head_events;	/* ... JANSSON_EVENTS events */
};

static void
stream_add(struct stream *s, uint8_t type, const void *payload, size_t len)
{
	size_t need = FRAME_HDR_SIZE + len;

	if (s->size - s->len < need) {
		s->size = (s->size + need) * 2;
		if ((s->buf = realloc(s->buf, s->size)) == NULL)
			fatalx("out of memory for the stream");
	}
	frame_hdr_encode(s->buf + s->len, type, (uint32_t)len);
	memcpy(s->buf + s->len + FRAME_HDR_SIZE, payload, len);
	s->len += need;
	if (type == MSG_EVENT)
		s->events++;
	if (s->head_events < JANSSON_EVENTS) {
		s->head_len = s->len;
		s->head_events = s->events;
	}
}

/* --- the generated storm ------------------------------------------------ */

struct storm {
	struct stream	*s;
	int32_t		 tids[STORM_TASKS];
	uint64_t	 seq[STORM_TASKS];
	uint64_t	 send_seq[STORM_TASKS];	/* of this round's send */
	uint64_t	 t_ns;
};

static void
storm_task_info(struct storm *st, int i)
{
	uint8_t buf[FRAME_HDR_SIZE + 1024];
	struct coord_task t;
	char host[] = "node1", program[] = "storm";
	size_t n;

	memset(&t, 0, sizeof(t));
	t.tid = st->tids[i];
	t.parent_tid = i == 0 ? 0 : st->tids[0];
	t.pid = 1000 + (uint32_t)i;
	t.spawn_seq = i == 0 ? 0 : 6;
	t.host = host;
	t.program = program;
	n = coord_frame_task_info(buf, &t);
	stream_add(st->s, MSG_TASK_INFO, buf + FRAME_HDR_SIZE,
	    n - FRAME_HDR_SIZE);
}

/* One event of task i: its record encoded, the EVENT frame around it. */
static void
storm_event(struct storm *st, int i, uint8_t call, uint8_t phase,
    const struct record *tmpl, uint8_t flags, int32_t mtid, uint64_t mseq)
{
	uint8_t fbuf[FRAME_HDR_SIZE + EVENT_HDR_SIZE + RECORD_HDR_SIZE];
	struct order_event ev;
	struct record r = *tmpl;
	size_t n;

	r.call = call;
	r.phase = phase;
	r.seq = ++st->seq[i];
	r.t_ns = st->t_ns += 150;
	memset(&ev, 0, sizeof(ev));
	ev.tid = st->tids[i];
	ev.flags = flags;
	ev.match_tid = mtid;
	ev.match_seq = mseq;
	ev.t_corr = r.t_ns + 20;
	ev.rec = &r;
	if ((n = coord_frame_event(fbuf, sizeof(fbuf), &ev)) == 0)
		fatalx("an event frame does not fit");
	stream_add(st->s, MSG_EVENT, fbuf + FRAME_HDR_SIZE,
	    n - FRAME_HDR_SIZE);
}

static void
storm_call(struct storm *st, int i, uint8_t call, const struct record *beg,
    const struct record *end, uint8_t flags, int32_t mtid, uint64_t mseq)
{
	storm_event(st, i, call, PMON_BEGIN, beg, 0, 0, 0);
	storm_event(st, i, call, PMON_END, end, flags, mtid, mseq);
}

static void
rec_init(struct record *r, int32_t peer, int32_t tag, int32_t bytes,
    int32_t rc)
{
	memset(r, 0, sizeof(*r));
	r->peer = peer;
	r->tag = tag;
	r->bytes = bytes;
	r->rc = rc;
	r->inst = -1;
}

/* Every task sends to its successor, then every task receives. */
static void
storm_round(struct storm *st, int round)
{
	struct record b, e;
	int i, prev;

	for (i = 0; i < STORM_TASKS; i++) {
		rec_init(&b, -1, -1, -1, 0);
		rec_init(&e, -1, -1, -1, 1);
		storm_call(st, i, PMON_CALL_initsend, &b, &e, 0, 0, 0);
		rec_init(&b, -1, -1, 4, 0);
		rec_init(&e, -1, -1, 4, 0);
		storm_call(st, i, PMON_CALL_pkint, &b, &e, 0, 0, 0);
		rec_init(&b, st->tids[(i + 1) % STORM_TASKS], STORM_TAG, 4, 0);
		e = b;
		st->send_seq[i] = st->seq[i] + 1;
		storm_call(st, i, PMON_CALL_send, &b, &e, 0, 0, 0);
	}
	for (i = 0; i < STORM_TASKS; i++) {
		prev = (i + STORM_TASKS - 1) % STORM_TASKS;
		rec_init(&b, -1, STORM_TAG, -1, 0);
		rec_init(&e, st->tids[prev], STORM_TAG, 4, 5 + round % 3);
		e.flags = RECORD_MSG;
		storm_call(st, i, PMON_CALL_recv, &b, &e, EVENT_MATCHED,
		    st->tids[prev], st->send_seq[prev]);
		rec_init(&b, -1, -1, 4, 0);
		rec_init(&e, -1, -1, 4, 0);
		storm_call(st, i, PMON_CALL_upkint, &b, &e, 0, 0, 0);
	}
}

static void
storm_generate(struct stream *s, uint64_t events)
{
	struct storm st;
	int i, r;

	memset(&st, 0, sizeof(st));
	st.s = s;
	st.t_ns = 1700000000000000000ULL;
	for (i = 0; i < STORM_TASKS; i++) {
		st.tids[i] = 0x40001 + i;
		storm_task_info(&st, i);
	}
	for (r = 0; s->events < events; r++)
		storm_round(&st, r);
}

/* --- a recording ---------------------------------------------------------- */

/* The frames a tool gets; the recording's own (hosts, snapshot) are not. */
static void
stream_load(struct stream *s, const char *path)
{
	const uint8_t *payload;
	struct recfile *rf;
	char err[512];
	uint8_t type;
	size_t len;
	int rv;

	if ((rf = recfile_open(path, err, sizeof(err))) == NULL)
		fatalx("%s: %s", path, err);
	while ((rv = recfile_next(rf, &type, &payload, &len)) == 1)
		if (proto_msg(type) != NULL)
			stream_add(s, type, payload, len);
	if (rv == -1)
		fatalx("%s: %s", path, recfile_error(rf));
	recfile_close(rf);
}

/* --- the callbacks ---------------------------------------------------------- */

static volatile uint64_t sink;

/* Reads every field, as a tool that uses them all would. */
static void
touch_event(const struct pmon_event *ev, void *arg)
{
	uint64_t h = 0;
	unsigned i;

	(void)arg;
	h += (uint64_t)ev->tid + ev->seq + ev->t_ns + ev->t_corr;
	h += (uint64_t)ev->call + (uint64_t)ev->phase + (uint64_t)ev->flags;
	h += (uint64_t)ev->rc + (uint64_t)ev->peer + (uint64_t)ev->tag;
	h += (uint64_t)ev->ctx + (uint64_t)ev->bytes + (uint64_t)ev->inst;
	h += (uint64_t)ev->match_tid + ev->match_seq;
	h += (uint64_t)ev->call_name[0] + (uint64_t)ev->group[0];
	h += (uint64_t)ev->task->host[0] + (uint64_t)ev->task->program[0];
	for (i = 0; i < ev->npeers; i++)
		h += (uint64_t)ev->peers[i];
	sink += h;
}

/* pmon trace's writer, into a buffer dropped whenever it fills. */
struct sink_buf {
	char		 buf[SINK_SIZE];
	size_t		 len;
	int		 json;
};

/* Where the next line of at most need bytes goes. */
static char *
sink_room(struct sink_buf *sb, size_t need)
{
	if (need > SINK_SIZE)
		fatalx("a line longer than the buffer");
	if (SINK_SIZE - sb->len < need) {
		sink += sb->len;
		sb->len = 0;
	}
	return sb->buf + sb->len;
}

static void
format_event(const struct pmon_event *ev, void *arg)
{
	static struct trace_clock rel;	/* pmon trace's default column */
	struct sink_buf *sb = arg;
	char *o = sink_room(sb, trace_fmt_event_max(ev));

	o = sb->json ? trace_fmt_event_json(o, ev, 0) :
	    trace_fmt_event_text(o, ev, &rel);
	sb->len = (size_t)(o - sb->buf);
}

static void
format_task(const struct pmon_task *t, void *arg)
{
	struct sink_buf *sb = arg;
	char *o = sink_room(sb, trace_fmt_task_max(t));

	o = sb->json ? trace_fmt_task_json(o, t) : trace_fmt_task_text(o, t);
	sb->len = (size_t)(o - sb->buf);
}

/* The same JSON line through jansson, as pmon trace made it before. */
static void
format_jansson(const struct pmon_event *ev, void *arg)
{
	struct sink_buf *sb = arg;
	json_t *o = trace_event_json(ev);
	size_t n;

	n = json_dumpb(o, sb->buf + sb->len, SINK_SIZE - sb->len - 1,
	    JSON_COMPACT);
	if (n >= SINK_SIZE - sb->len - 1) {	/* did not fit: again */
		sink += sb->len;
		sb->len = 0;
		n = json_dumpb(o, sb->buf, SINK_SIZE - 1, JSON_COMPACT);
	}
	json_decref(o);
	if (n >= SINK_SIZE - 1)
		fatalx("a line longer than the buffer");
	sb->len += n;
	sb->buf[sb->len++] = '\n';
}

/* --- the timed runs ------------------------------------------------------- */

static double
cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) == -1)
		fatal("getrusage");
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

enum mode { MODE_PLAIN, MODE_CB, MODE_JSON, MODE_TEXT, MODE_JANSSON };

#define MODES	5

static const char *const mode_names[MODES] = {
	"no callback", "every field", "trace --json", "trace (text)",
	"jansson"
};
static const char *const mode_opts[MODES] = {
	"plain", "cb", "json", "text", "jansson"
};

/* Decodes len bytes of the stream; returns the CPU seconds it took. */
static double
decode_run(const struct stream *s, size_t len, enum mode m, size_t chunk,
    struct sink_buf *sb)
{
	struct pmon_callbacks cb;
	struct pmon *p;
	size_t off, n;
	double t0;

	memset(&cb, 0, sizeof(cb));
	if (m == MODE_CB)
		cb.event = touch_event;
	else if (m == MODE_JSON || m == MODE_TEXT) {
		cb.event = format_event;
		cb.task = format_task;
		sb->json = m == MODE_JSON;
		sb->len = 0;
	} else if (m == MODE_JANSSON) {
		cb.event = format_jansson;
		sb->len = 0;
	}
	if ((p = pmon_new()) == NULL)
		fatalx("out of memory");
	pmon_set_callbacks(p, &cb, sb);
	t0 = cpu_seconds();
	for (off = 0; off < len; off += n) {
		n = len - off < chunk ? len - off : chunk;
		if (pmon_feed(p, s->buf + off, n) == -1)
			fatalx("decoding failed at byte %zu: %s", off,
			    pmon_error(p));
	}
	t0 = cpu_seconds() - t0;
	pmon_free(p);
	return t0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median events per CPU second of runs decodes. */
static double
measure(const struct stream *s, enum mode m, int runs, size_t chunk,
    int quiet, struct sink_buf *sb)
{
	double rates[RUNS_MAX], cpu;
	size_t len = m == MODE_JANSSON ? s->head_len : s->len;
	uint64_t events = m == MODE_JANSSON ? s->head_events : s->events;
	int i;

	for (i = 0; i < runs; i++) {
		cpu = decode_run(s, len, m, chunk, sb);
		rates[i] = cpu > 0 ? (double)events / cpu : 0;
		if (!quiet)
			printf("%-13s run %d: %.3f s CPU, %.0f events/s\n",
			    mode_names[m], i + 1, cpu, rates[i]);
	}
	qsort(rates, (size_t)runs, sizeof(*rates), cmp_double);
	return rates[runs / 2];
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: bench_decode [-q] [-i FILE] [-n events] "
	    "[-r runs] [-c chunk] [-m plain|cb|json|text|jansson]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static struct sink_buf sb;
	struct stream s;
	const char *file = NULL;
	uint64_t events = 4000000;
	size_t chunk = 64 * 1024;
	double rate[MODES];
	int ch, runs = 5, quiet = 0, only = -1, m;

	log_init("bench_decode", 0);
	while ((ch = getopt(argc, argv, "c:i:m:n:qr:")) != -1) {
		switch (ch) {
		case 'c':
			chunk = strtoul(optarg, NULL, 10);
			break;
		case 'i':
			file = optarg;
			break;
		case 'm':
			for (only = 0; only < MODES; only++)
				if (strcmp(optarg, mode_opts[only]) == 0)
					break;
			if (only == MODES)
				usage();
			break;
		case 'n':
			events = strtoull(optarg, NULL, 10);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc != optind || runs < 1 || runs > RUNS_MAX || chunk == 0 ||
	    events == 0)
		usage();
	memset(&s, 0, sizeof(s));
	if (file != NULL)
		stream_load(&s, file);
	else
		storm_generate(&s, events);
	if (!quiet)
		printf("stream: %" PRIu64 " events, %.1f MB (%s), fed in "
		    "pieces of %zu bytes\n", s.events, s.len / 1e6,
		    file != NULL ? file : "a generated storm of 8 tasks",
		    chunk);
	if (s.events == 0)
		fatalx("the stream holds no events");
	for (m = 0; m < MODES; m++)
		rate[m] = only == -1 || only == m ?
		    measure(&s, (enum mode)m, runs, chunk, quiet, &sb) : 0;
	printf("trace_json ev_s=%.0f\n", rate[MODE_JSON]);
	printf("trace_text ev_s=%.0f\n", rate[MODE_TEXT]);
	printf("jansson_json ev_s=%.0f\n", rate[MODE_JANSSON]);
	printf("decode ev_s=%.0f ev_s_cb=%.0f\n", rate[MODE_PLAIN],
	    rate[MODE_CB]);
	free(s.buf);
	return 0;
}
