/*
 * pmon export: writes the ordered event stream in a format other viewers
 * open (Chrome trace-event JSON, Paje, OTF2, ShiViz; doc/exports.md).
 *
 * The events come from libpmon either way: live, subscribed to the
 * coordinator until BYE or SIGINT/SIGTERM; or from a recording, whose
 * frames (recfile) are fed to libpmon's own decoder.  A recording holds
 * the frames a subscribed tool received, byte for byte, so both sources
 * give the formats the same callbacks in the same order, and the
 * exports of a run and of its recording are the same files.  Reading
 * the file directly rather than through pmon replay needs no
 * coordinator process, no socket and no pacing, and it cannot lose
 * events to a full tool queue.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "pmon-internal.h"
#include "pmon-tool.h"
#include "pmon.h"
#include "proto.h"
#include "recfile.h"
#include "record.h"

#define EXPORT_POLL_MS		200
#define EXPORT_DRAIN_MAX	1000	/* reads after a stop signal */
#define EXPORT_HOSTS_MAX	65536
#define NS_PER_S		1000000000ULL

static int	cmd_export(const struct cmd_args *);

static const struct option export_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, 'f' },
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_export_entry = {
	"export", "--format=chrome|paje|otf2|shiviz [-i RECORDING] -o OUT",
	"write the event stream for other trace viewers",
	"  -f, --format FMT  chrome: trace-event JSON (Perfetto,\n"
	"                    chrome://tracing); paje: Paje trace (ViTE,\n"
	"                    pajeng); otf2: an OTF2 archive in the directory\n"
	"                    OUT (Vampir, otf2-print); shiviz: a log with\n"
	"                    vector clocks (ShiViz)\n"
	"  -i, --input FILE  read a recording (pmon record) instead of the\n"
	"                    live stream\n"
	"  -o, --output OUT  the file to write (\"-\": stdout, not for otf2)\n"
	"\nLive, it exports from the point it attaches until the coordinator\n"
	"shuts down, or until SIGINT or SIGTERM; the file is finished either\n"
	"way.  doc/exports.md describes each format.\n",
	"+hf:i:o:", export_longopts, 0, 0, cmd_export
};

static const struct export_format *const export_formats[] = {
	&export_chrome, &export_paje, &export_otf2, &export_shiviz
};

/* Open addressing on (tid, seq): the tasks (seq 0) and the sends. */
struct xmap_slot {
	int32_t		 tid;
	uint64_t	 seq;
	void		*v;
};

struct xmap {
	struct xmap_slot *slot;
	size_t		 size;		/* a power of two, or 0 */
	size_t		 n;
};

struct export {
	const struct export_format *fmt;
	const char	*path;
	FILE		*fp;
	void		*data;
	struct export_task **tasks;
	size_t		 ntasks, tasks_size;
	struct export_host **hosts;
	size_t		 nhosts, hosts_size;
	struct xmap	 taskmap;
	struct xmap	 sends;
	struct xmap	 numbers;	/* tid -> its number + 1 */
	int32_t		*numbered;	/* number -> tid */
	size_t		 nnumbers, numbers_size;
	int		 started;
	uint64_t	 start_ns;
	int64_t		 last_t;
	int		 failed;
	char		 err[256];
};


/* --- the maps ----------------------------------------------------------- */

static size_t
xmap_hash(int32_t tid, uint64_t seq, size_t size)
{
	uint64_t h = ((uint64_t)(uint32_t)tid << 32 ^ seq) *
	    0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 17) & (size - 1);
}

static struct xmap_slot *
xmap_slot(const struct xmap *m, int32_t tid, uint64_t seq)
{
	size_t i;

	if (m->size == 0)
		return NULL;
	for (i = xmap_hash(tid, seq, m->size);; i = (i + 1) & (m->size - 1)) {
		if (m->slot[i].v == NULL ||
		    (m->slot[i].tid == tid && m->slot[i].seq == seq))
			return &m->slot[i];
	}
}

static void *
xmap_get(const struct xmap *m, int32_t tid, uint64_t seq)
{
	struct xmap_slot *s = xmap_slot(m, tid, seq);

	return s != NULL ? s->v : NULL;
}

static int
xmap_grow(struct xmap *m)
{
	struct xmap n = { NULL, m->size ? 2 * m->size : 256, 0 };
	struct xmap_slot *s;
	size_t i;

	if ((n.slot = calloc(n.size, sizeof(*n.slot))) == NULL)
		return -1;
	for (i = 0; i < m->size; i++) {
		if (m->slot[i].v == NULL)
			continue;
		s = xmap_slot(&n, m->slot[i].tid, m->slot[i].seq);
		*s = m->slot[i];
		n.n++;
	}
	free(m->slot);
	*m = n;
	return 0;
}

/* Adds or replaces; v must not be NULL. */
static int
xmap_put(struct xmap *m, int32_t tid, uint64_t seq, void *v)
{
	struct xmap_slot *s;

	if (2 * (m->n + 1) > m->size && xmap_grow(m) == -1)
		return -1;
	s = xmap_slot(m, tid, seq);
	if (s->v == NULL)
		m->n++;
	s->tid = tid;
	s->seq = seq;
	s->v = v;
	return 0;
}

/* Makes room for element n of *arrp, an array of size elements. */
static int
grow(void *arrp, size_t *size, size_t n, size_t elem)
{
	void **arr = arrp, *p;
	size_t want = *size ? 2 * *size : 16;

	if (n < *size)
		return 0;
	if ((p = reallocarray(*arr, want, elem)) == NULL)
		return -1;
	*arr = p;
	*size = want;
	return 0;
}

/* --- what formats use --------------------------------------------------- */

FILE *
export_file(struct export *x)
{
	return x->fp;
}

const char *
export_path(struct export *x)
{
	return x->path;
}

void *
export_data(struct export *x)
{
	return x->data;
}

void
export_set_data(struct export *x, void *data)
{
	x->data = data;
}

size_t
export_ntasks(struct export *x)
{
	return x->ntasks;
}

const struct export_task *
export_task_at(struct export *x, size_t i)
{
	return i < x->ntasks ? x->tasks[i] : NULL;
}

size_t
export_nhosts(struct export *x)
{
	return x->nhosts;
}

const struct export_host *
export_host_at(struct export *x, size_t i)
{
	return i < x->nhosts ? x->hosts[i] : NULL;
}

const struct export_task *
export_task_of(struct export *x, int32_t tid)
{
	return xmap_get(&x->taskmap, tid, 0);
}

int64_t
export_last_t(struct export *x)
{
	return x->last_t;
}

uint64_t
export_start_ns(struct export *x)
{
	return x->start_ns;
}

/*
 * A number for every tid a format names, tasks and message partners
 * alike, in the order they are first asked for: a receiver can be named
 * before the stream announced it.  -1 when out of memory.
 */
long
export_number(struct export *x, int32_t tid)
{
	uintptr_t n = (uintptr_t)xmap_get(&x->numbers, tid, 0);

	if (n != 0)
		return (long)n - 1;
	if (grow(&x->numbered, &x->numbers_size, x->nnumbers,
	    sizeof(*x->numbered)) == -1 ||
	    xmap_put(&x->numbers, tid, 0, (void *)(x->nnumbers + 1)) == -1) {
		export_fail(x, "out of memory");
		return -1;
	}
	x->numbered[x->nnumbers] = tid;
	return (long)x->nnumbers++;
}

size_t
export_nnumbers(struct export *x)
{
	return x->nnumbers;
}

int32_t
export_numbered(struct export *x, size_t i)
{
	return i < x->nnumbers ? x->numbered[i] : 0;
}

/* Records the first failure; returns -1. */
int
export_fail(struct export *x, const char *fmt, ...)
{
	va_list ap;

	if (!x->failed) {
		va_start(ap, fmt);
		vsnprintf(x->err, sizeof(x->err), fmt, ap);
		va_end(ap);
	}
	x->failed = 1;
	return -1;
}

int
export_is_send(int call)
{
	return call == PMON_CALL_send || call == PMON_CALL_psend ||
	    call == PMON_CALL_mcast || call == PMON_CALL_bcast;
}

int
export_is_recv(int call)
{
	return call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_nrecv || call == PMON_CALL_precv ||
	    call == PMON_CALL_probe;
}

/* What the state model counts as blocked time (doc/state.md). */
int
export_is_blocking(int call)
{
	return call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_precv || call == PMON_CALL_barrier;
}

const char *
export_tidstr(int32_t tid, char *buf, size_t size)
{
	snprintf(buf, size, "t%x", (unsigned)tid);
	return buf;
}

/* --- tasks and hosts ---------------------------------------------------- */

static const struct export_host *
export_host_get(struct export *x, const char *name, int *new_host)
{
	struct export_host *h;
	size_t i;

	*new_host = 0;
	for (i = 0; i < x->nhosts; i++)
		if (strcmp(x->hosts[i]->name, name) == 0)
			return x->hosts[i];
	if (x->nhosts == EXPORT_HOSTS_MAX) {
		export_fail(x, "more than %d hosts", EXPORT_HOSTS_MAX);
		return NULL;
	}
	if (grow(&x->hosts, &x->hosts_size, x->nhosts,
	    sizeof(*x->hosts)) == -1 ||
	    (h = calloc(1, sizeof(*h))) == NULL)
		goto nomem;
	if ((h->name = strdup(name)) == NULL) {
		free(h);
		goto nomem;
	}
	h->index = (unsigned)x->nhosts;
	x->hosts[x->nhosts++] = h;
	*new_host = 1;
	return h;
nomem:
	export_fail(x, "out of memory");
	return NULL;
}

/* The task of pt, announced to the format when it is new. */
static struct export_task *
export_task_get(struct export *x, const struct pmon_task *pt)
{
	struct export_task *t;
	int new_host;

	if ((t = xmap_get(&x->taskmap, pt->tid, 0)) != NULL)
		return t;
	if (grow(&x->tasks, &x->tasks_size, x->ntasks,
	    sizeof(*x->tasks)) == -1 ||
	    (t = calloc(1, sizeof(*t))) == NULL)
		goto nomem;
	if ((t->program = strdup(pt->program)) == NULL ||
	    xmap_put(&x->taskmap, pt->tid, 0, t) == -1) {
		free(t->program);
		free(t);
		goto nomem;
	}
	t->index = (unsigned)x->ntasks;
	t->tid = pt->tid;
	t->parent = pt->parent;
	t->spawn_seq = pt->spawn_seq;
	x->tasks[x->ntasks++] = t;
	if ((t->host = export_host_get(x, pt->host, &new_host)) == NULL)
		return NULL;
	if (x->fmt->task(x, t, new_host) == -1)
		return NULL;
	return t;
nomem:
	export_fail(x, "out of memory");
	return NULL;
}

static void
export_on_task(const struct pmon_task *pt, void *arg)
{
	struct export *x = arg;

	if (!x->failed)
		export_task_get(x, pt);
}

/* --- events ------------------------------------------------------------- */

/* A send's or a spawn's begin, for the receive or the child that follows. */
static struct export_send *
export_send_add(struct export *x, const struct export_task *t,
    const struct pmon_event *ev, int64_t tm)
{
	struct export_send *s;

	/* A damaged recording may repeat an event: its entry is reused. */
	if ((s = xmap_get(&x->sends, ev->tid, ev->seq)) != NULL) {
		free(s->data);
		s->data = NULL;
	} else if ((s = calloc(1, sizeof(*s))) == NULL ||
	    xmap_put(&x->sends, ev->tid, ev->seq, s) == -1) {
		free(s);
		export_fail(x, "out of memory");
		return NULL;
	}
	s->tid = ev->tid;
	s->seq = ev->seq;
	s->t = tm;
	s->task = t;
	return s;
}

static int
export_close_open(struct export *x, struct export_task *t)
{
	int rv = 0;

	if (t->cur.open && x->fmt->unfinished != NULL)
		rv = x->fmt->unfinished(x, t, &t->cur, t->last_t);
	t->cur.open = 0;
	return rv;
}

/*
 * Times are relative to the whole second in which the first event lies:
 * small numbers that keep nanoseconds exact in a double, and the same for
 * a live export and one from its recording.
 */
static int64_t
export_time(struct export *x, uint64_t tc)
{
	if (!x->started) {
		x->start_ns = tc - tc % NS_PER_S;
		x->started = 1;
	}
	return (int64_t)(tc - x->start_ns);
}

static int
export_begin_call(struct export *x, struct export_task *t,
    struct export_event *e)
{
	const struct pmon_event *ev = e->ev;

	if (export_close_open(x, t) == -1)
		return -1;
	if ((export_is_send(ev->call) || ev->call == PMON_CALL_spawn) &&
	    (e->self = export_send_add(x, t, ev, e->t)) == NULL)
		return -1;
	if (x->fmt->event(x, e) == -1)
		return -1;
	t->cur.open = 1;
	t->cur.call = ev->call;
	t->cur.call_name = record_call_name((unsigned)ev->call);
	t->cur.seq = ev->seq;
	t->cur.t = e->t;
	return 0;
}

static int
export_end_call(struct export *x, struct export_task *t,
    struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	int rv;

	if (t->cur.open && t->cur.call == ev->call)
		e->begin = &t->cur;
	else if (export_close_open(x, t) == -1)
		return -1;
	if (export_is_recv(ev->call) && (ev->flags & PMON_EV_MATCHED))
		e->send = xmap_get(&x->sends, ev->match_tid, ev->match_seq);
	rv = x->fmt->event(x, e);
	t->cur.open = 0;
	return rv;
}

static int
export_event_do(struct export *x, const struct pmon_event *ev)
{
	struct export_event e = { .ev = ev };
	struct export_task *t;

	if ((t = export_task_get(x, ev->task)) == NULL)
		return -1;
	e.task = t;
	e.t = export_time(x, ev->t_corr);
	if (t->events == 0 && t->parent > 0 && t->spawn_seq != 0)
		e.spawn = xmap_get(&x->sends, t->parent, t->spawn_seq);
	t->events++;
	t->last_t = e.t;
	if (e.t > x->last_t)
		x->last_t = e.t;
	if (ev->flags & PMON_EV_LOST) {
		if (export_close_open(x, t) == -1)
			return -1;
		return x->fmt->event(x, &e);
	}
	/* A stop at a breakpoint is a marker, inside or between calls. */
	if (ev->call == PMON_CALL_BREAK)
		return x->fmt->event(x, &e);
	if (ev->phase == PMON_PHASE_BEGIN)
		return export_begin_call(x, t, &e);
	return export_end_call(x, t, &e);
}

static void
export_on_event(const struct pmon_event *ev, void *arg)
{
	struct export *x = arg;

	if (!x->failed)
		export_event_do(x, ev);
}

/* --- sources ------------------------------------------------------------ */

/*
 * Live (connected): until BYE, close, a signal or a failure; then what
 * had arrived.
 */
static int
export_live(struct pmon *p, struct export *x)
{
	int rv = 0, i;

	tool_catch_stop();
	while (!tool_stop && !x->failed)
		if ((rv = pmon_wait(p, EXPORT_POLL_MS)) == -1)
			break;
	for (i = 0; rv != -1 && i < EXPORT_DRAIN_MAX && !x->failed; i++)
		if ((rv = pmon_wait(p, 0)) == 0)
			break;
	if (!x->failed && !tool_stop && !pmon_closed(p))
		return tool_error("%s", pmon_error(p));
	return 0;
}

/* The frames a subscribed tool got; the recording's own are skipped. */
static int
export_stream_frame(uint8_t type)
{
	return type == MSG_TASK_INFO || type == MSG_EVENT ||
	    type == MSG_PROBLEM || type == MSG_NOTICE || type == MSG_TASK_GONE;
}

static int
export_feed(struct pmon *p, uint8_t type, const uint8_t *payload, size_t len)
{
	uint8_t hdr[FRAME_HDR_SIZE];

	frame_hdr_encode(hdr, type, (uint32_t)len);
	if (pmon_feed(p, hdr, sizeof(hdr)) == -1 ||
	    pmon_feed(p, payload, len) == -1)
		return -1;
	return 0;
}

/*
 * A recording: every frame through libpmon's decoder.  A damaged file is
 * exported up to the damage, with a warning naming its offset.
 */
static int
export_recording(struct pmon *p, struct export *x, struct recfile *rf,
    const char *path)
{
	const uint8_t *payload;
	uint8_t type;
	size_t len;
	int rv = 0;

	while (!x->failed && (rv = recfile_next(rf, &type, &payload,
	    &len)) == 1) {
		if (!export_stream_frame(type))
			continue;
		if (export_feed(p, type, payload, len) == -1) {
			rv = tool_error("%s: %s", path, pmon_error(p));
			recfile_close(rf);
			return rv;
		}
	}
	if (rv == -1)
		tool_error("%s: %s; exporting what came before it", path,
		    recfile_error(rf));
	recfile_close(rf);
	return 0;
}

/* --- the command -------------------------------------------------------- */

static const struct export_format *
export_format_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(export_formats) / sizeof(*export_formats); i++)
		if (strcmp(export_formats[i]->name, name) == 0)
			return export_formats[i];
	return NULL;
}

static void
export_free(struct export *x)
{
	size_t i;

	for (i = 0; i < x->ntasks; i++) {
		free(x->tasks[i]->program);
		free(x->tasks[i]->data);
		free(x->tasks[i]);
	}
	free(x->tasks);
	for (i = 0; i < x->nhosts; i++) {
		free(x->hosts[i]->name);
		free(x->hosts[i]);
	}
	free(x->hosts);
	for (i = 0; i < x->sends.size; i++) {
		if (x->sends.slot[i].v == NULL)
			continue;
		free(((struct export_send *)x->sends.slot[i].v)->data);
		free(x->sends.slot[i].v);
	}
	free(x->sends.slot);
	free(x->taskmap.slot);
	free(x->numbers.slot);
	free(x->numbered);
}

/* Ends every open call, then the format. */
static int
export_finish(struct export *x)
{
	size_t i;

	for (i = 0; i < x->ntasks && !x->failed; i++)
		export_close_open(x, x->tasks[i]);
	if (x->fmt->end(x) == -1)
		export_fail(x, "%s", x->err[0] ? x->err : "writing failed");
	return x->failed ? -1 : 0;
}

static int
export_open_output(struct export *x)
{
	if (x->fmt == &export_otf2) {
		if (strcmp(x->path, "-") == 0)
			return tool_usage_error("otf2 writes a directory: "
			    "-o DIR");
		return 0;
	}
	if (strcmp(x->path, "-") == 0)
		x->fp = stdout;
	else if ((x->fp = fopen(x->path, "w")) == NULL)
		return tool_error("%s: %s", x->path, strerror(errno));
	return 0;
}

static int
export_close_output(struct export *x)
{
	int rv = 0;

	if (x->fp == NULL)
		return 0;
	if (ferror(x->fp) || fflush(x->fp) == EOF)
		rv = -1;
	if (x->fp != stdout && fclose(x->fp) == EOF)
		rv = -1;
	x->fp = NULL;
	if (rv == -1)
		return tool_error("%s: %s", x->path, strerror(errno));
	return 0;
}

static int
cmd_export(const struct cmd_args *a)
{
	struct pmon_callbacks cb = { .task = export_on_task,
	    .event = export_on_event };
	struct export x;
	struct pmon *p = NULL;
	struct recfile *rf = NULL;
	char err[512];
	int rv;

	memset(&x, 0, sizeof(x));
	if (a->arg['f'] == NULL)
		return tool_usage_error("no --format given");
	if ((x.fmt = export_format_find(a->arg['f'])) == NULL)
		return tool_usage_error("unknown format '%s' (chrome, paje, "
		    "otf2 or shiviz)", a->arg['f']);
	if ((x.path = a->arg['o']) == NULL)
		return tool_usage_error("no -o OUT given");
	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	pmon_set_callbacks(p, &cb, &x);
	/* No file is made unless the coordinator or the recording is there. */
	if (a->arg['i'] != NULL && (rf = recfile_open(a->arg['i'], err,
	    sizeof(err))) == NULL) {
		rv = tool_error("%s: %s", a->arg['i'], err);
		goto out;
	}
	if (a->arg['i'] == NULL && pmon_connect(p, NULL, "pmon-export",
	    PMON_SUBSCRIBE | PMON_LOSSLESS) == -1) {
		rv = tool_error("%s", pmon_error(p));
		goto out;
	}
	if ((rv = export_open_output(&x)) != 0)
		goto out;
	if (x.fmt->begin(&x) == -1) {
		rv = tool_error("%s: %s", x.path, x.err);
		x.fmt->end(&x);		/* frees what begin made */
		goto out;
	}
	if (rf != NULL) {
		rv = export_recording(p, &x, rf, a->arg['i']);
		rf = NULL;	/* closed */
	} else
		rv = export_live(p, &x);
	if (export_finish(&x) == -1 && rv == 0)
		rv = tool_error("%s: %s", x.path, x.err);
	if (export_close_output(&x) != 0)
		rv = EXIT_FAILURE;
out:
	recfile_close(rf);
	if (x.fp != NULL && x.fp != stdout)
		fclose(x.fp);
	pmon_free(p);
	export_free(&x);
	return rv;
}
