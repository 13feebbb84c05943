/*
 * pmon export: writes the ordered event stream in a format other viewers
 * open (Chrome trace-event JSON, Paje, OTF2, ShiViz; doc/exports.md).
 *
 * The events come from libpmon either way: live, subscribed to the
 * coordinator until BYE or SIGINT/SIGTERM; or from a recording, which
 * libpmon reads (pmon_read_recording) with the same decoder.  A recording holds
 * the frames a subscribed tool received, byte for byte, so both sources
 * give the formats the same callbacks in the same order, and the
 * exports of a run and of its recording are the same files.  Reading
 * the file directly rather than through pmon replay needs no
 * coordinator process, no socket and no pacing, and it cannot lose
 * events to a full tool queue.
 *
 * The export subscribes as a recorder does (PMON_RECORD), so it learns
 * when a task ended (TASK_GONE, in stream order): a message is kept
 * until each of its receivers took it or ended, so what the export holds
 * is what is in flight, never the whole run.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "pmon-tool.h"
#include "pmon.h"

#define EXPORT_POLL_MS		200
#define EXPORT_DRAIN_MAX	1000	/* reads after a stop signal */
#define EXPORT_HOSTS_MAX	65536
#define EXPORT_OUT_SIZE		(256 * 1024)
#define EXPORT_WINDOW_DEFAULT	262144	/* 68 bytes a line: 17 MiB */
#define EXPORT_WINDOW_MIN	16
#define EXPORT_WINDOW_MAX	100000000
#define EXPORT_TCACHE		64	/* a power of two */
#define XMAP_MIN		256
#define NS_PER_S		1000000000ULL

static int	cmd_export(const struct cmd_args *);

static const struct option export_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "format", required_argument, NULL, 'f' },
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "window", required_argument, NULL, 'w' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_export_entry = {
	"export", "--format=chrome|paje|otf2|otf2-vite|shiviz [-i RECORDING] "
	"[-w LINES] -o OUT",
	"write the event stream for other trace viewers",
	"  -f, --format FMT  chrome: trace-event JSON (Perfetto,\n"
	"                    chrome://tracing); paje: Paje trace (ViTE,\n"
	"                    pajeng); otf2: an OTF2 archive in the directory\n"
	"                    OUT (Vampir, otf2-print); otf2-vite: the same\n"
	"                    as ViTE 1.2 reads it without a notice (not\n"
	"                    valid OTF2: otf2-print warns); shiviz: a log with\n"
	"                    vector clocks (ShiViz)\n"
	"  -i, --input FILE  read a recording (pmon record) instead of the\n"
	"                    live stream\n"
	"  -o, --output OUT  the file to write (\"-\": stdout, not for otf2)\n"
	"  -w, --window LINES  paje: the most lines held back to put the\n"
	"                    events in time order (default 262144, 17 MiB;\n"
	"                    doc/exports.md)\n"
	"\nLive, it exports from the point it attaches until the coordinator\n"
	"shuts down, or until SIGINT or SIGTERM; the file is finished either\n"
	"way.  doc/exports.md describes each format.\n",
	"+hf:i:o:w:", export_longopts, 0, 0, cmd_export
};

static const struct export_format *const export_formats[] = {
	&export_chrome, &export_paje, &export_otf2, &export_otf2_vite,
	&export_shiviz
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
	char		*out;		/* EXPORT_OUT_SIZE bytes */
	size_t		 outlen;
	void		*data;
	struct export_task **tasks;
	size_t		 ntasks, tasks_size;
	struct export_host **hosts;
	size_t		 nhosts, hosts_size;
	struct xmap	 taskmap;
	struct export_task *tcache[EXPORT_TCACHE];	/* by tid's low bits */
	struct xmap	 sends;		/* messages and spawns waited for */
	struct xmap	 numbers;	/* tid -> its number + 1 */
	int32_t		*numbered;	/* number -> tid */
	size_t		 nnumbers, numbers_size;
	unsigned	 window;
	int		 started;
	uint64_t	 start_ns;
	int64_t		 last_t;
	int		 finishing;	/* in export_finish */
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

/* Moves every entry into a table of size slots. */
static int
xmap_resize(struct xmap *m, size_t size)
{
	struct xmap n = { NULL, size, 0 };
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

	if (2 * (m->n + 1) > m->size &&
	    xmap_resize(m, m->size ? 2 * m->size : XMAP_MIN) == -1)
		return -1;
	s = xmap_slot(m, tid, seq);
	if (s->v == NULL)
		m->n++;
	s->tid = tid;
	s->seq = seq;
	s->v = v;
	return 0;
}

/*
 * Removes the entry of key, if any, closing the gap by moving later
 * entries of the same probe run back (no tombstones).  A table that
 * became mostly empty after a burst shrinks again.
 */
static void
xmap_del(struct xmap *m, int32_t tid, uint64_t seq)
{
	struct xmap_slot *s = xmap_slot(m, tid, seq);
	size_t i, j, k, mask = m->size - 1;

	if (s == NULL || s->v == NULL)
		return;
	i = j = (size_t)(s - m->slot);
	s->v = NULL;
	m->n--;
	for (j = (j + 1) & mask; m->slot[j].v != NULL; j = (j + 1) & mask) {
		k = xmap_hash(m->slot[j].tid, m->slot[j].seq, m->size);
		/* j stays when its home k lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->slot[i] = m->slot[j];
		m->slot[j].v = NULL;
		i = j;
	}
	if (m->size > XMAP_MIN && 8 * m->n < m->size)
		xmap_resize(m, m->size / 2);	/* on failure it stays */
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

int
export_finishing(struct export *x)
{
	return x->finishing;
}

uint64_t
export_start_ns(struct export *x)
{
	return x->start_ns;
}

unsigned
export_window(struct export *x)
{
	return x->window;
}

int64_t
export_horizon(struct export *x)
{
	const struct export_task *t;
	const struct export_send *s;
	int64_t h = INT64_MAX;
	size_t i;

	for (i = 0; i < x->ntasks; i++) {
		t = x->tasks[i];
		if (!t->gone && t->events > 0 && t->last_t < h)
			h = t->last_t;
	}
	for (i = 0; i < x->sends.size; i++)
		if ((s = x->sends.slot[i].v) != NULL && !s->loose && s->t < h)
			h = s->t;
	return h;
}

size_t
export_inflight(struct export *x)
{
	return x->sends.size;
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

const struct export_format *
export_format_of(struct export *x)
{
	return x->fmt;
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

/* A warning on stderr about the file being written; the export goes on. */
void
export_warn(struct export *x, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tool_error("%s: %s", x->path, msg);
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

/* --- the output --------------------------------------------------------- */

static int
export_out_flush(struct export *x)
{
	if (x->outlen > 0 && fwrite(x->out, 1, x->outlen, x->fp) !=
	    x->outlen)
		return export_fail(x, "%s", strerror(errno));
	x->outlen = 0;
	return 0;
}

char *
export_reserve(struct export *x, size_t n)
{
	if (x->out == NULL || n > EXPORT_RESERVE_MAX) {
		export_fail(x, "no room for %zu bytes of output", n);
		return NULL;
	}
	if (EXPORT_OUT_SIZE - x->outlen < n && export_out_flush(x) == -1)
		return NULL;
	return x->out + x->outlen;
}

void
export_commit(struct export *x, char *end)
{
	x->outlen = (size_t)(end - x->out);
}

int
export_write(struct export *x, const void *buf, size_t len)
{
	const char *b = buf;
	size_t n;
	char *p;

	while (len > 0) {
		n = len < EXPORT_RESERVE_MAX ? len : EXPORT_RESERVE_MAX;
		if ((p = export_reserve(x, n)) == NULL)
			return -1;
		export_commit(x, export_put(p, b, n));
		b += n;
		len -= n;
	}
	return 0;
}

char *
export_put_fixed(char *p, int64_t v, uint64_t div, int digits)
{
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v, f;
	int i;

	if (v < 0)
		*p++ = '-';
	p = trace_fmt_u64(p, a / div);
	*p++ = '.';
	f = a % div;
	for (i = digits; i > 0; i--, f /= 10)
		p[i - 1] = (char)('0' + f % 10);
	return p + digits;
}

char *
export_put_hex(char *p, uint32_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[8];
	size_t n = 0;

	do {
		tmp[n++] = hex[v & 0xf];
		v >>= 4;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
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
	struct export_task *t, **c;
	int new_host;

	/* Every event asks: most find their task here. */
	c = &x->tcache[(uint32_t)pt->tid & (EXPORT_TCACHE - 1)];
	if (*c != NULL && (*c)->tid == pt->tid)
		return *c;
	if ((t = xmap_get(&x->taskmap, pt->tid, 0)) != NULL)
		return *c = t;
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

/* --- messages and spawns in flight ------------------------------------- */

static void
export_send_free(struct export *x, struct export_send *s)
{
	xmap_del(&x->sends, s->tid, s->seq);
	free(s->wait);
	free(s->data);
	free(s);
}

/*
 * A message or a spawn's begin, for the receives or the children that
 * follow.  A damaged recording may repeat an event: its entry is reused.
 */
static struct export_send *
export_send_add(struct export *x, const struct export_task *t,
    const struct pmon_event *ev, int64_t tm)
{
	struct export_send *s;

	if ((s = xmap_get(&x->sends, ev->tid, ev->seq)) != NULL) {
		free(s->data);
		s->data = NULL;
		s->nwait = 0;
		s->loose = 0;
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
	s->spawn = ev->call == PMON_CALL_spawn;
	s->at_end = ev->phase == PMON_PHASE_END;
	s->closed = !s->spawn;
	return s;
}

/*
 * Adds a receiver (a child) to wait for: once, never the sender itself
 * (PVM delivers no message to it), and never a task that ended.
 */
static int
export_send_wait(struct export *x, struct export_send *s, int32_t tid)
{
	const struct export_task *t = export_task_of(x, tid);
	unsigned i, size;
	int32_t *w;

	if (tid <= 0 || (tid == s->tid && !s->spawn) ||
	    (t != NULL && t->gone))
		return 0;
	for (i = 0; i < s->nwait; i++)
		if (s->wait[i] == tid)
			return 0;
	if (s->nwait == s->waitsize) {
		size = s->waitsize ? 2 * s->waitsize : 1;
		if ((w = reallocarray(s->wait, size, sizeof(*w))) == NULL)
			return export_fail(x, "out of memory");
		s->wait = w;
		s->waitsize = size;
	}
	s->wait[s->nwait++] = tid;
	return 0;
}

/* The receivers of a message, at the event that sent it. */
static int
export_send_dests(struct export *x, struct export_send *s,
    const struct pmon_event *ev)
{
	unsigned i;

	if (ev->call == PMON_CALL_send || ev->call == PMON_CALL_psend)
		return export_send_wait(x, s, ev->peer);
	for (i = 0; i < ev->npeers; i++)
		if (export_send_wait(x, s, ev->peers[i]) == -1)
			return -1;
	return 0;
}

/* tid got the message, or the child started, or either ended. */
static void
export_send_unwait(struct export_send *s, int32_t tid)
{
	unsigned i;

	for (i = 0; i < s->nwait; i++) {
		if (s->wait[i] == tid) {
			s->wait[i] = s->wait[--s->nwait];
			return;
		}
	}
}

/* After the event that used s: it goes when nothing else is waited for. */
static void
export_send_settle(struct export *x, struct export_send *s)
{
	if (s != NULL && s->closed && s->nwait == 0)
		export_send_free(x, s);
}

/*
 * Task t ended: no message waits for it any more, and its unfinished
 * spawns (killed inside pvm_spawn) wait for no child.  The entries to
 * free are collected first: freeing moves entries of the table.
 */
static int
export_sends_gone(struct export *x, const struct export_task *t)
{
	struct export_send *s, **dead = NULL;
	size_t i, n = 0, size = 0;
	int rv = 0;

	for (i = 0; i < x->sends.size; i++) {
		if ((s = x->sends.slot[i].v) == NULL)
			continue;
		if (s->spawn && s->tid == t->tid)
			s->closed = 1;
		export_send_unwait(s, t->tid);
		if (!s->closed || s->nwait > 0)
			continue;
		if (grow(&dead, &size, n, sizeof(*dead)) == -1) {
			rv = export_fail(x, "out of memory");
			break;
		}
		dead[n++] = s;
	}
	for (i = 0; i < n; i++)
		export_send_free(x, dead[i]);
	free(dead);
	return rv;
}

/*
 * A loss: the messages sent to tid (0: to anyone) before t may have been
 * taken by a receive that was lost, so they no longer hold the horizon.
 * They stay until received or their receiver ends.
 */
static void
export_loosen(struct export *x, int32_t tid, int64_t t)
{
	struct export_send *s;
	size_t i;
	unsigned j;

	for (i = 0; i < x->sends.size; i++) {
		if ((s = x->sends.slot[i].v) == NULL || s->spawn || s->t >= t)
			continue;
		for (j = 0; j < s->nwait && tid != 0; j++)
			if (s->wait[j] == tid)
				break;
		if (tid == 0 || j < s->nwait)
			s->loose = 1;
	}
}

/* --- events ------------------------------------------------------------- */

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

/* The event that carries a message: a send's begin, a pvm_bcast's end. */
static int
export_is_message(const struct pmon_event *ev)
{
	if (ev->call == PMON_CALL_bcast)
		return ev->phase == PMON_PHASE_END;
	return export_is_send(ev->call) && ev->phase == PMON_PHASE_BEGIN;
}

/* A receive that took its message (a probe only looks at it). */
static int
export_takes(const struct pmon_event *ev)
{
	return export_is_recv(ev->call) && ev->call != PMON_CALL_probe &&
	    (ev->flags & PMON_EV_MATCHED);
}

/* Makes the entry of a message or a spawn, with whom it waits for. */
static int
export_self(struct export *x, const struct export_task *t,
    struct export_event *e)
{
	const struct pmon_event *ev = e->ev;

	if (export_is_message(ev)) {
		if ((e->self = export_send_add(x, t, ev, e->t)) == NULL)
			return -1;
		return export_send_dests(x, e->self, ev);
	}
	if (ev->call == PMON_CALL_spawn && ev->phase == PMON_PHASE_BEGIN &&
	    (e->self = export_send_add(x, t, ev, e->t)) == NULL)
		return -1;
	return 0;
}

/*
 * A spawn's end names the children: its begin's entry waits for those
 * that have not started yet.  A failed send's end: the message never
 * left (the coordinator took it back), so nobody waits for it.
 */
static int
export_call_ended(struct export *x, const struct export_call *begin,
    const struct pmon_event *ev)
{
	struct export_send *s;
	const struct export_task *c;
	unsigned i;

	if (begin == NULL || (ev->call != PMON_CALL_spawn &&
	    (!export_is_send(ev->call) || ev->call == PMON_CALL_bcast)) ||
	    (s = xmap_get(&x->sends, ev->tid, begin->seq)) == NULL)
		return 0;
	if (ev->call == PMON_CALL_spawn && s->spawn) {
		for (i = 0; i < ev->npeers; i++) {
			c = export_task_of(x, ev->peers[i]);
			if ((c == NULL || c->events == 0) &&
			    export_send_wait(x, s, ev->peers[i]) == -1)
				return -1;
		}
		s->closed = 1;
	} else if (!s->spawn && ev->rc < 0)
		s->nwait = 0;
	export_send_settle(x, s);
	return 0;
}

/*
 * A message handler's run begins inside the call it interrupted, which
 * stays open; its begin takes the handler's message (doc/events.md).
 */
static int
export_begin_handler(struct export *x, struct export_task *t,
    struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	struct export_send *got = NULL;

	if (t->in_handler || !t->cur.open) {
		if (export_close_open(x, t) == -1)
			return -1;
	} else {
		t->outer = t->cur;
		t->has_outer = 1;
		t->cur.open = 0;
	}
	if (ev->flags & PMON_EV_MATCHED)
		e->send = got = xmap_get(&x->sends, ev->match_tid,
		    ev->match_seq);
	if (export_self(x, t, e) == -1 || x->fmt->event(x, e) == -1)
		return -1;
	if (got != NULL) {
		export_send_unwait(got, ev->tid);
		export_send_settle(x, got);
	}
	t->in_handler = 1;
	t->handler.open = 1;
	t->handler.call = ev->call;
	t->handler.call_name = pmon_call_name(ev->call);
	t->handler.seq = ev->seq;
	t->handler.t = e->t;
	return 0;
}

static int
export_begin_call(struct export *x, struct export_task *t,
    struct export_event *e)
{
	const struct pmon_event *ev = e->ev;

	if (ev->call == PMON_CALL_HANDLER) {
		if (export_begin_handler(x, t, e) == -1)
			return -1;
		export_send_settle(x, e->self);
		return 0;
	}
	if (export_close_open(x, t) == -1 || export_self(x, t, e) == -1 ||
	    x->fmt->event(x, e) == -1)
		return -1;
	export_send_settle(x, e->self);
	t->cur.open = 1;
	t->cur.call = ev->call;
	t->cur.call_name = pmon_call_name(ev->call);
	t->cur.seq = ev->seq;
	t->cur.t = e->t;
	return 0;
}

static int
export_end_call(struct export *x, struct export_task *t,
    struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	struct export_send *got = NULL;

	if (ev->call == PMON_CALL_HANDLER && t->in_handler) {
		if (export_close_open(x, t) == -1)
			return -1;
		e->begin = &t->handler;
	} else if (t->cur.open && t->cur.call == ev->call)
		e->begin = &t->cur;
	else if (export_close_open(x, t) == -1)
		return -1;
	if (export_is_recv(ev->call) && (ev->flags & PMON_EV_MATCHED))
		e->send = got = xmap_get(&x->sends, ev->match_tid,
		    ev->match_seq);
	if (export_self(x, t, e) == -1 || x->fmt->event(x, e) == -1)
		return -1;
	export_send_settle(x, e->self);
	if (got != NULL && export_takes(ev)) {
		export_send_unwait(got, ev->tid);
		export_send_settle(x, got);
	}
	if (export_call_ended(x, e->begin, ev) == -1)
		return -1;
	t->cur.open = 0;
	if (ev->call == PMON_CALL_HANDLER && t->in_handler) {
		t->in_handler = t->handler.open = 0;
		if (t->has_outer)
			t->cur = t->outer;	/* back in the call it ran in */
		t->has_outer = 0;
	}
	return 0;
}

static int
export_event_kind(struct export *x, struct export_task *t,
    struct export_event *e)
{
	const struct pmon_event *ev = e->ev;

	if (ev->flags & PMON_EV_LOST) {
		if (export_close_open(x, t) == -1)
			return -1;
		export_loosen(x, t->tid, e->t);
		return x->fmt->event(x, e);
	}
	/* A stop at a breakpoint is a marker, inside or between calls. */
	if (ev->call == PMON_CALL_BREAK)
		return x->fmt->event(x, e);
	if (ev->phase == PMON_PHASE_BEGIN)
		return export_begin_call(x, t, e);
	return export_end_call(x, t, e);
}

/*
 * One event.  A task's first one follows its parent's spawn, which then
 * waits for one child less.  Nothing of a task follows its end (the
 * coordinator sends nothing after TASK_GONE): a damaged recording's
 * stray events are ignored.
 */
static int
export_event_do(struct export *x, const struct pmon_event *ev)
{
	struct export_event e = { .ev = ev };
	struct export_send *spawn = NULL;
	struct export_task *t;

	if ((t = export_task_get(x, ev->task)) == NULL)
		return -1;
	if (t->gone)
		return 0;
	e.task = t;
	e.t = export_time(x, ev->t_corr);
	if (t->events == 0 && t->parent > 0 && t->spawn_seq != 0)
		e.spawn = spawn = xmap_get(&x->sends, t->parent, t->spawn_seq);
	t->events++;
	t->last_t = e.t;
	if (e.t > x->last_t)
		x->last_t = e.t;
	if (export_event_kind(x, t, &e) == -1)
		return -1;
	if (spawn != NULL) {
		export_send_unwait(spawn, t->tid);
		export_send_settle(x, spawn);
	}
	return 0;
}

static void
export_on_event(const struct pmon_event *ev, void *arg)
{
	struct export *x = arg;

	if (!x->failed)
		export_event_do(x, ev);
}

/* TASK_GONE: the task ended and its last event came. */
static int
export_gone(struct export *x, int32_t tid)
{
	struct export_task *t = xmap_get(&x->taskmap, tid, 0);
	struct export_send *spawn;

	if (t == NULL || t->gone)
		return 0;
	t->gone = 1;
	/* A child that never started: its spawn waits no more. */
	if (t->events == 0 && t->parent > 0 && t->spawn_seq != 0 &&
	    (spawn = xmap_get(&x->sends, t->parent, t->spawn_seq)) != NULL) {
		export_send_unwait(spawn, tid);
		export_send_settle(x, spawn);
	}
	if (export_sends_gone(x, t) == -1)
		return -1;
	return x->fmt->gone != NULL ? x->fmt->gone(x, t) : 0;
}

/*
 * A "lost" notice: this tool's queue was full and the coordinator
 * dropped its events for a while (doc/control.md).  What was in flight
 * may have been received in the gap.
 */
static void
export_on_notice(const char *json, size_t len, void *arg)
{
	struct export *x = arg;
	const char *kind = NULL;
	json_t *j;

	if (x->failed)
		return;
	if (x->fmt->json != NULL && x->fmt->json(x, "notice", json, len) ==
	    -1)
		return;
	if ((j = json_loadb(json, len, 0, NULL)) == NULL)
		return;
	if (json_unpack(j, "{s:s}", "notice", &kind) == 0 &&
	    strcmp(kind, "lost") == 0)
		export_loosen(x, 0, INT64_MAX);
	json_decref(j);
}

/* A PROBLEM: to the format that wants it. */
static void
export_on_problem(const char *json, size_t len, void *arg)
{
	struct export *x = arg;

	if (!x->failed && x->fmt->json != NULL)
		x->fmt->json(x, "problem", json, len);
}

static void
export_on_frame(int type, const void *payload, size_t len, void *arg)
{
	struct export *x = arg;
	const uint8_t *p = payload;

	if (x->failed || type != PMON_FRAME_TASK_GONE || len != 4)
		return;
	export_gone(x, (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]));
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
	return x->failed ? 0 : tool_stream_end(p);
}

/*
 * A recording: every frame through libpmon's decoder.  A damaged file is
 * exported up to the damage, with a warning naming its offset.
 */
static int
export_recording(struct pmon *p, struct export *x, const char *path)
{
	if (pmon_read_recording(p, NULL) == -1 && !x->failed)
		tool_error("%s: %s; exporting what came before it", path,
		    pmon_error(p));
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
	struct export_send *s;
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
		if ((s = x->sends.slot[i].v) == NULL)
			continue;
		free(s->wait);
		free(s->data);
		free(s);
	}
	free(x->sends.slot);
	free(x->taskmap.slot);
	free(x->numbers.slot);
	free(x->numbered);
	free(x->out);
}

/* Ends every open call, then the format. */
static int
export_finish(struct export *x)
{
	size_t i;

	x->finishing = 1;
	for (i = 0; i < x->ntasks && !x->failed; i++)
		export_close_open(x, x->tasks[i]);
	if (x->fmt->end(x) == -1)
		export_fail(x, "%s", x->err[0] ? x->err : "writing failed");
	return x->failed ? -1 : 0;
}

static int
export_open_output(struct export *x)
{
	if (x->fmt == &export_otf2 || x->fmt == &export_otf2_vite) {
		if (strcmp(x->path, "-") == 0)
			return tool_usage_error("otf2 writes a directory: "
			    "-o DIR");
		return 0;
	}
	if ((x->out = malloc(EXPORT_OUT_SIZE)) == NULL)
		return tool_error("out of memory");
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
	if (export_out_flush(x) == -1 || ferror(x->fp) ||
	    fflush(x->fp) == EOF)
		rv = -1;
	if (x->fp != stdout && fclose(x->fp) == EOF)
		rv = -1;
	x->fp = NULL;
	if (rv == -1)
		return tool_error("%s: %s", x->path, strerror(errno));
	return 0;
}

/* The command line: format, output, window. */
static int
export_args(struct export *x, const struct cmd_args *a)
{
	char *end;
	long n;

	if (a->arg['f'] == NULL)
		return tool_usage_error("no --format given");
	if ((x->fmt = export_format_find(a->arg['f'])) == NULL)
		return tool_usage_error("unknown format '%s' (chrome, paje, "
		    "otf2, otf2-vite or shiviz)", a->arg['f']);
	if ((x->path = a->arg['o']) == NULL)
		return tool_usage_error("no -o OUT given");
	x->window = EXPORT_WINDOW_DEFAULT;
	if (a->arg['w'] != NULL) {
		errno = 0;
		n = strtol(a->arg['w'], &end, 10);
		if (errno != 0 || *end != '\0' || n < EXPORT_WINDOW_MIN ||
		    n > EXPORT_WINDOW_MAX)
			return tool_usage_error("bad window '%s' (%d to %d "
			    "lines)", a->arg['w'], EXPORT_WINDOW_MIN,
			    EXPORT_WINDOW_MAX);
		x->window = (unsigned)n;
	}
	return 0;
}

static int
cmd_export(const struct cmd_args *a)
{
	struct pmon_callbacks cb = { .task = export_on_task,
	    .event = export_on_event, .notice = export_on_notice,
	    .problem = export_on_problem, .frame = export_on_frame };
	struct export x;
	struct pmon *p = NULL;
	int rv;

	memset(&x, 0, sizeof(x));
	if ((rv = export_args(&x, a)) != 0)
		return rv;
	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	pmon_set_callbacks(p, &cb, &x);
	/* No file is made unless the coordinator or the recording is there. */
	if (a->arg['i'] != NULL && pmon_open_recording(p, a->arg['i'],
	    NULL) == -1) {
		rv = tool_error("%s: %s", a->arg['i'], pmon_error(p));
		goto out;
	}
	/* As a recorder: TASK_GONE says when a task's messages can go. */
	if (a->arg['i'] == NULL && pmon_connect(p, NULL, "pmon-export",
	    PMON_SUBSCRIBE | PMON_LOSSLESS | PMON_RECORD) == -1) {
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
	if (a->arg['i'] != NULL)
		rv = export_recording(p, &x, a->arg['i']);
	else
		rv = export_live(p, &x);
	if (export_finish(&x) == -1 && rv == 0)
		rv = tool_error("%s: %s", x.path, x.err);
	if (export_close_output(&x) != 0)
		rv = EXIT_FAILURE;
out:
	if (x.fp != NULL && x.fp != stdout)
		fclose(x.fp);
	pmon_free(p);
	export_free(&x);
	return rv;
}
