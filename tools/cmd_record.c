/*
 * pmon record: subscribes to the coordinator's stream and writes every
 * frame of it, as it came, to a recording (pmon_recording_create,
 * doc/recording.md), which pmon replay serves to tools later.  It ends
 * at BYE, or on SIGINT/SIGTERM after catching up with what the
 * coordinator released before the signal, and always closes the file
 * with its end block.  A coordinator that dies is waited for: the one
 * that takes over its address goes on in the same recording, less what
 * it delivers again of what the recording has (record_rejoin).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "pmon-tool.h"
#include "pmon.h"

#define RECORD_POLL_MS		200
#define RECORD_SYNC_MS		1000	/* a block at least this often */
#define RECORD_DRAIN_MAX	1000
#define RECORD_STOP_MS		10000	/* at a signal: catching up */
#define RECORD_HOSTS_MAX	4096
#define RECORD_REJOIN_MS	100	/* dialing a coordinator that died */
#define RECORD_REJOIN_S		60	/* ...and for how long, as agents */
#define RECORD_FLAGS		(PMON_SUBSCRIBE | PMON_SNAPSHOT | \
				 PMON_RECORD | PMON_LOSSLESS)

static int	cmd_record(const struct cmd_args *);

static const struct option record_longopts[] = {
	{ "block", required_argument, NULL, 'Q' },
	{ "format", required_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_record_entry = {
	"record", "-o FILE [-Q bytes] [-F format]",
	"write the ordered stream to a recording that pmon replay serves",
	"  -o, --output FILE  the recording (replaced if it exists)\n"
	"  -Q, --block BYTES  frames per compressed block, in bytes (default\n"
	"                 65536, 1024 to 4194304): damage to the file loses\n"
	"                 its block and what follows, never what precedes\n"
	"  -F, --format N  the recording format: 2 (default), or 1, which\n"
	"                 pmon replay before format 2 also reads\n"
	"\nStarted before the program, it records the whole run; started\n"
	"later, it records from there on, with the state at that point\n"
	"(doc/recording.md).  Ends with status 0 when the coordinator shuts\n"
	"down, or on SIGINT or SIGTERM once it has written what the\n"
	"coordinator released before the signal (10 s at most; a second\n"
	"signal stops waiting), and the end block; prints a summary line\n"
	"on stderr, and one more if the coordinator dropped events for it.\n"
	"A coordinator that dies (killed, no BYE) is waited for 60 s: the\n"
	"one started on its address goes on in the same recording, without\n"
	"the events the recording has already.\n",
	"+F:hQ:o:", record_longopts, 0, 0, cmd_record
};

/*
 * What record_keep needs of a frame, which its callback (task, event)
 * noted just before the frame callback: the frame's task, and of an
 * event its seq, the last seq it stands for (a lost marker: the last
 * record lost) and whether it is delivered again.
 */
struct frame_meta {
	int32_t			 tid;		/* 0: neither task nor event */
	uint64_t		 seq, last;
	int			 again;
};

/* A frame that came before the snapshot, written after it. */
struct held {
	struct held		*next;
	int			 type;
	struct frame_meta	 meta;
	size_t			 len;
	uint8_t			 payload[];
};

/*
 * The last seq recorded of each task (0: its TASK_INFO only), by tid:
 * open addressing, at most half full.
 */
struct last_seq {
	int32_t			 tid;		/* 0: free */
	uint64_t		 seq;
};

struct seq_tab {
	struct last_seq		*v;
	size_t			 n, cap;	/* cap: 0 or a power of two */
};

struct rec {
	struct pmon_recording	*w;
	struct pmon		*p;
	const struct pmon_callbacks *cb;
	struct seq_tab		 last;
	struct frame_meta	 meta;		/* of the frame to come */
	int			 bye;		/* the coordinator said BYE */
	int			 rejoined;	/* connected again: frames of
						   what we have are left out */
	int			 attaching;	/* its snapshot is to come */
	unsigned		 rejoins;	/* coordinators that took over */
	uint64_t		 again;		/* their events left out */
	uint64_t		 missed;	/* released before we were back */
	int			 started;	/* the snapshot came */
	struct held		*held, **held_tail;
	char			*hosts[RECORD_HOSTS_MAX];	/* recorded */
	size_t			 nhosts;
	int			 need_hosts;	/* a task on a new host */
	int			 failed;
	uint32_t		 stop_flush;	/* our flush at a signal */
	int			 stop_flushed;
	uint64_t		 dropped;	/* "lost" notices: our queue */
};


static int
host_known(const struct rec *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nhosts; i++)
		if (strcmp(r->hosts[i], name) == 0)
			return 1;
	return 0;
}

/* One host of a "hosts" array as a PMON_FRAME_HOST, once per name. */
static void
write_host(struct rec *r, json_t *h)
{
	const char *name = json_string_value(json_object_get(h, "name"));
	const char *arch = json_string_value(json_object_get(h, "arch"));
	const char *agent = json_string_value(json_object_get(h, "agent"));
	json_t *tid = json_object_get(h, "host_tid");

	if (name == NULL || arch == NULL || agent == NULL ||
	    !json_is_integer(tid) || host_known(r, name) ||
	    r->nhosts == RECORD_HOSTS_MAX)
		return;
	if ((r->hosts[r->nhosts] = strdup(name)) == NULL) {
		r->failed = 1;
		return;
	}
	r->nhosts++;
	if (pmon_recording_write_host(r->w, (int32_t)json_integer_value(tid),
	    strcmp(agent, "up") == 0, name, arch) == -1)
		r->failed = 1;
}

/* The hosts of a snapshot or of a "hosts" reply (doc/state.md). */
static void
write_hosts(struct rec *r, const char *json, size_t len)
{
	json_t *doc, *hosts;
	size_t i;

	if ((doc = json_loadb(json, len, 0, NULL)) == NULL)
		return;
	hosts = json_is_array(doc) ? doc : json_object_get(doc, "hosts");
	for (i = 0; json_is_array(hosts) && i < json_array_size(hosts); i++)
		write_host(r, json_array_get(hosts, i));
	json_decref(doc);
}

/*
 * The coordinator answers the hello with the notice of this tool's
 * attach, the known tasks and then the snapshot; a recording starts
 * with the snapshot and the hosts, so that a replay knows the machine
 * before it serves anything (doc/recording.md).
 */
static void
hold(struct rec *r, int type, const void *payload, size_t len)
{
	struct held *h;

	if ((h = malloc(sizeof(*h) + len)) == NULL) {
		r->failed = 1;
		return;
	}
	h->next = NULL;
	h->type = type;
	h->meta = r->meta;
	h->len = len;
	memcpy(h->payload, payload, len);
	*r->held_tail = h;
	r->held_tail = &h->next;
}

static void	record_write(struct rec *, int, const struct frame_meta *,
		    const void *, size_t);

static void
release_held(struct rec *r)
{
	struct held *h;

	r->started = 1;
	while ((h = r->held) != NULL) {
		r->held = h->next;
		record_write(r, h->type, &h->meta, h->payload, h->len);
		free(h);
	}
	r->held_tail = &r->held;
}

/* A "lost" notice is ours alone: what the coordinator dropped for us. */
static void
count_dropped(struct rec *r, const void *json, size_t len)
{
	json_t *o = json_loadb(json, len, 0, NULL);
	const char *kind = json_string_value(json_object_get(o, "notice"));
	json_t *events = json_object_get(o, "events");

	if (kind != NULL && strcmp(kind, "lost") == 0 &&
	    json_is_integer(events) && json_integer_value(events) > 0)
		r->dropped += (uint64_t)json_integer_value(events);
	json_decref(o);
}

static struct last_seq *
seq_slot(const struct seq_tab *t, int32_t tid)
{
	/* A tid's host (bits 18 and up) folded onto its task number. */
	size_t i = (((uint32_t)tid ^ (uint32_t)tid >> 16) * 2654435761u) &
	    (t->cap - 1);

	while (t->v[i].tid != 0 && t->v[i].tid != tid)
		i = (i + 1) & (t->cap - 1);
	return &t->v[i];
}

/* tid's entry, made (seq 0) if new; NULL out of memory. */
static struct last_seq *
seq_get(struct seq_tab *t, int32_t tid)
{
	struct seq_tab n;
	struct last_seq *e;
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		n.cap = t->cap ? 2 * t->cap : 64;
		n.n = t->n;
		if ((n.v = calloc(n.cap, sizeof(*n.v))) == NULL)
			return NULL;
		for (i = 0; i < t->cap; i++)
			if (t->v[i].tid != 0)
				*seq_slot(&n, t->v[i].tid) = t->v[i];
		free(t->v);
		*t = n;
	}
	if ((e = seq_slot(t, tid))->tid == 0) {
		e->tid = tid;
		t->n++;
	}
	return e;
}

/*
 * Whether to write a frame of a coordinator that took over: an event it
 * flags PMON_EV_AGAIN that the recording has (by its task's last seq),
 * or the TASK_INFO of a task the recording knows, is left out.  Keeps
 * each task's last seq.  0: leave it out; -1 out of memory.
 */
static int
record_keep(struct rec *r, int type, const struct frame_meta *m)
{
	struct last_seq *e;

	if (m->tid == 0)
		return 1;
	if (type == PMON_FRAME_TASK_INFO) {
		if (r->rejoined && r->last.cap > 0 &&
		    seq_slot(&r->last, m->tid)->tid != 0)
			return 0;
		return seq_get(&r->last, m->tid) == NULL ? -1 : 1;
	}
	if ((e = seq_get(&r->last, m->tid)) == NULL)
		return -1;
	if (m->again && m->seq <= e->seq) {
		r->again++;
		return 0;
	}
	if (m->last > e->seq)
		e->seq = m->last;
	return 1;
}

static void
record_task(const struct pmon_task *t, void *arg)
{
	struct rec *r = arg;

	r->meta = (struct frame_meta){ .tid = t->tid };
	/* Before the snapshot, its hosts have the task's. */
	if (r->started && !host_known(r, t->host))
		r->need_hosts = 1;
}

static void
record_event(const struct pmon_event *ev, void *arg)
{
	struct rec *r = arg;

	r->meta = (struct frame_meta){ .tid = ev->tid, .seq = ev->seq,
	    .last = ev->seq, .again = (ev->flags & PMON_EV_AGAIN) != 0 };
	/* A lost marker's count is in bytes (doc/events.md). */
	if ((ev->flags & PMON_EV_LOST) && ev->bytes > 0)
		r->meta.last = ev->seq + (uint64_t)ev->bytes - 1;
}

static void
record_write(struct rec *r, int type, const struct frame_meta *m,
    const void *payload, size_t len)
{
	int keep;

	if ((keep = record_keep(r, type, m)) <= 0) {
		r->failed = keep == -1;
		return;
	}
	if (pmon_recording_write(r->w, type, payload, len) == -1) {
		r->failed = 1;
		return;
	}
	if (type == PMON_FRAME_NOTICE)
		count_dropped(r, payload, len);
}

static void
record_frame(int type, const void *payload, size_t len, void *arg)
{
	struct rec *r = arg;

	if (!r->failed && !r->started)
		hold(r, type, payload, len);
	else if (!r->failed)
		record_write(r, type, &r->meta, payload, len);
	r->meta.tid = 0;
}

/*
 * What a coordinator that took over released before we were attached
 * to it: for each task, the events after the last we have up to the
 * snapshot's position.  Goes into a "lost" notice (that of a lagging
 * tool, doc/control.md) in buf; returns the count, 0 for none.
 */
static uint64_t
record_gap(struct rec *r, const char *json, size_t len, FILE *fp)
{
	json_t *o = json_loadb(json, len, 0, NULL), *pos, *v;
	struct last_seq *e;
	const char *key;
	uint64_t total = 0, at;
	int32_t tid;

	pos = json_object_get(o, "position");
	json_object_foreach(pos, key, v) {
		tid = (int32_t)strtol(key, NULL, 10);
		if (!json_is_integer(v) || tid <= 0 ||
		    (e = seq_get(&r->last, tid)) == NULL)
			continue;
		at = (uint64_t)json_integer_value(v);
		if (at <= e->seq)
			continue;
		fprintf(fp, "%s{\"tid\":%d,\"first\":%llu,\"last\":%llu,"
		    "\"events\":%llu}", total ? "," : "", tid,
		    (unsigned long long)e->seq + 1, (unsigned long long)at,
		    (unsigned long long)(at - e->seq));
		total += at - e->seq;
		e->seq = at;
	}
	json_decref(o);
	return total;
}

/*
 * A coordinator that took over is attached: if it released events
 * before, the recording says so with a lost notice and goes on from its
 * snapshot (the replay resynchronises there); else its snapshot is not
 * kept, the recording's own state saw more.
 */
static void
record_takeover(struct rec *r, const char *json, size_t len)
{
	char *buf = NULL;
	size_t blen = 0;
	uint64_t n;
	FILE *fp;

	r->attaching = 0;
	r->rejoins++;
	fprintf(stderr, "pmon record: a coordinator took over; recording "
	    "on\n");
	if ((fp = open_memstream(&buf, &blen)) == NULL) {
		r->failed = 1;
		return;
	}
	fputs("{\"notice\":\"lost\",\"tool\":0,\"tasks\":[", fp);
	n = record_gap(r, json, len, fp);
	fprintf(fp, "],\"events\":%llu,\"problems\":0}",
	    (unsigned long long)n);
	if (fclose(fp) != 0)
		r->failed = 1;
	else if (n > 0 && (pmon_recording_write(r->w, PMON_FRAME_NOTICE, buf,
	    blen) == -1 || pmon_recording_write(r->w, PMON_FRAME_SNAPSHOT,
	    json, len) == -1))
		r->failed = 1;
	r->missed += n;
	free(buf);
}

/*
 * The state where the stream starts: kept, and its hosts.  That of a
 * coordinator that took over: record_takeover.
 */
static void
record_snapshot(const char *json, size_t len, void *arg)
{
	struct rec *r = arg;

	if (r->failed)
		return;
	if (r->attaching)
		record_takeover(r, json, len);
	else if (pmon_recording_write(r->w, PMON_FRAME_SNAPSHOT, json,
	    len) == -1)
		r->failed = 1;
	if (!r->failed)
		write_hosts(r, json, len);
	release_held(r);
}

/* A task named a host the recording lacks: ask which hosts there are. */
static int
record_hosts(struct rec *r)
{
	char *reply;
	size_t len;

	r->need_hosts = 0;
	if (pmon_request(r->p, "hosts", PMON_JSON, &reply, &len) == -1)
		return pmon_closed(r->p) ? 0 : -1;
	write_hosts(r, reply, len);
	free(reply);
	return 0;
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void
record_flush_done(uint32_t id, void *arg)
{
	struct rec *r = arg;

	if (id == r->stop_flush)
		r->stop_flushed = 1;
}

/*
 * Stopped by a signal: what the coordinator released before it may
 * still wait in its queue for us (a lossless queue holds up to -Q).  A
 * flush of our own brings all of it ahead of its FLUSH_DONE, so that the
 * recording holds whatever a `pmon flush` before the signal covered.  A
 * second signal, or RECORD_STOP_MS, ends the wait.
 */
static void
record_catch_up(struct rec *r)
{
	long until = now_ms() + RECORD_STOP_MS;

	if (pmon_closed(r->p) || pmon_send_flush(r->p, &r->stop_flush) == -1)
		return;
	while (!r->stop_flushed && tool_stop < 2 && !r->failed &&
	    now_ms() < until)
		if (pmon_wait(r->p, RECORD_POLL_MS) == -1)
			break;
}

static void
record_bye(const char *reason, void *arg)
{
	struct rec *r = arg;

	(void)reason;
	r->bye = 1;
}

/*
 * The coordinator died: dial its socket until one takes over (or
 * RECORD_REJOIN_S, or a signal).  The new one delivers again, flagged,
 * what the dead one may have delivered (record_keep leaves out what we
 * have), and nothing falls between the two (doc/capture.md).
 */
static int
record_rejoin(struct rec *r)
{
	long until = now_ms() + RECORD_REJOIN_S * 1000L;
	struct timespec ts = { 0, RECORD_REJOIN_MS * 1000000L };
	struct pmon *p;

	fprintf(stderr, "pmon record: %s; waiting %d s for a coordinator to "
	    "take over\n", pmon_error(r->p), RECORD_REJOIN_S);
	if (pmon_recording_sync(r->w) == -1) {
		r->failed = 1;
		return -1;
	}
	/*
	 * Not at once: the dying coordinator's socket may still take a
	 * connection into its backlog, and reset it.  A connection that
	 * ends before its snapshot is only dialled again.
	 */
	while (!tool_stop && now_ms() < until) {
		nanosleep(&ts, NULL);
		if ((p = pmon_new()) == NULL)
			return tool_error("out of memory");
		if (pmon_connect(p, NULL, "pmon-record", RECORD_FLAGS) == 0) {
			pmon_free(r->p);
			r->p = p;
			pmon_set_callbacks(p, r->cb, r);
			r->rejoined = r->attaching = 1;
			return 0;
		}
		pmon_free(p);
	}
	return -1;
}

/* The stream of one coordinator: -1 when it ends, 0 at a signal. */
static int
record_run(struct rec *r, long *last_sync)
{
	int rv = 0;

	while (!tool_stop && !r->failed) {
		if ((rv = pmon_wait(r->p, RECORD_POLL_MS)) == -1)
			break;
		if (r->need_hosts && (rv = record_hosts(r)) == -1)
			break;
		if (now_ms() - *last_sync >= RECORD_SYNC_MS) {
			if (pmon_recording_sync(r->w) == -1)
				r->failed = 1;
			*last_sync = now_ms();
		}
	}
	return rv;
}

/* Until BYE, close, error or a signal; then what was released before. */
static int
record_loop(struct rec *r)
{
	long last_sync = now_ms();
	int rv = 0, i;

	for (;;) {
		rv = record_run(r, &last_sync);
		if (rv != -1 || tool_stop || r->failed || r->bye ||
		    !pmon_gone(r->p) || record_rejoin(r) == -1)
			break;
	}
	if (tool_stop && rv != -1 && !r->failed)
		record_catch_up(r);
	for (i = 0; rv != -1 && i < RECORD_DRAIN_MAX && !r->failed; i++)
		if ((rv = pmon_wait(r->p, 0)) == 0)
			break;
	if (r->failed)
		return -1;
	return tool_stream_end(r->p);
}


static int
block_size(const char *s, size_t *size)
{
	char *end;
	unsigned long long v;

	*size = 0;
	if (s == NULL)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || s[0] < '0' || s[0] > '9' ||
	    v < PMON_RECORDING_BLOCK_MIN || v > PMON_RECORDING_BLOCK_MAX)
		return tool_usage_error("--block %s: not a number of bytes "
		    "from %d to %d", s, PMON_RECORDING_BLOCK_MIN,
		    PMON_RECORDING_BLOCK_MAX);
	*size = (size_t)v;
	return 0;
}

static int
format_version(const char *s, unsigned *version)
{
	*version = PMON_RECORDING_FORMAT;
	if (s == NULL)
		return 0;
	if (strcmp(s, "1") == 0 || strcmp(s, "2") == 0) {
		*version = (unsigned)(s[0] - '0');
		return 0;
	}
	return tool_usage_error("--format %s: not 1 or 2", s);
}

static void
make_header(struct pmon_recording_header *h)
{
	char host[256], dir[PATH_MAX];
	struct timespec ts;
	const char *tmp = getenv("PVM_TMP");

	memset(h, 0, sizeof(*h));
	clock_gettime(CLOCK_REALTIME, &ts);
	h->created_ns = (uint64_t)ts.tv_sec * 1000000000u +
	    (uint64_t)ts.tv_nsec;
	snprintf(h->writer, sizeof(h->writer), "pmon record");
	/* The coordinator's correction is in its log, not on the wire. */
	snprintf(h->clock, sizeof(h->clock), "as served");
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "?");
	host[sizeof(host) - 1] = '\0';
	snprintf(dir, sizeof(dir), "%s", tmp != NULL && *tmp ? tmp : "/tmp");
	snprintf(h->source, sizeof(h->source), "%.100s:%.150s", host, dir);
}

static void
print_summary(const char *path, const struct pmon_recording_counts *e,
    const struct rec *r)
{
	uint64_t bytes = e->file_bytes, dropped = r->dropped;

	fprintf(stderr, "pmon record: %s: %llu events, %llu tasks, %llu "
	    "bytes, %.2f B/event\n", path, (unsigned long long)e->events,
	    (unsigned long long)e->tasks, (unsigned long long)bytes,
	    e->events ? (double)bytes / (double)e->events : 0.0);
	if (dropped > 0)
		fprintf(stderr, "pmon record: %s: the coordinator dropped %llu "
		    "events for this recorder (it fell behind); the "
		    "recording says where\n", path,
		    (unsigned long long)dropped);
	if (r->rejoins > 0)
		fprintf(stderr, "pmon record: %s: %u coordinator%s took over; "
		    "%llu events they delivered again were in it already\n",
		    path, r->rejoins, r->rejoins == 1 ? "" : "s",
		    (unsigned long long)r->again);
	if (r->missed > 0)
		fprintf(stderr, "pmon record: %s: %llu events were released "
		    "by a coordinator that took over before this recorder was "
		    "back; the recording says where\n", path,
		    (unsigned long long)r->missed);
}

static int
cmd_record(const struct cmd_args *a)
{
	struct pmon_callbacks cb = { .task = record_task,
	    .event = record_event, .frame = record_frame,
	    .snapshot = record_snapshot, .flush_done = record_flush_done,
	    .bye = record_bye };
	struct rec r = { .held_tail = &r.held, .cb = &cb };
	struct pmon_recording_header h;
	struct pmon_recording_counts end;
	const char *path = a->arg['o'];
	char err[512];
	size_t bsize, i;
	unsigned version;
	int rv;

	if (path == NULL)
		return tool_usage_error("-o FILE is required");
	if (block_size(a->arg['Q'], &bsize) != 0 ||
	    format_version(a->arg['F'], &version) != 0)
		return EXIT_USAGE;
	if ((r.p = pmon_new()) == NULL)
		return tool_error("out of memory");
	if (pmon_connect(r.p, NULL, "pmon-record", RECORD_FLAGS) == -1) {
		rv = tool_error("%s", pmon_error(r.p));
		pmon_free(r.p);
		return rv;
	}
	make_header(&h);
	h.format = version;
	if ((r.w = pmon_recording_create(path, &h, bsize, err,
	    sizeof(err))) == NULL) {
		pmon_free(r.p);
		return tool_error("%s", err);
	}
	pmon_set_callbacks(r.p, &cb, &r);
	tool_catch_stop();
	rv = record_loop(&r);
	release_held(&r);	/* the snapshot never came: keep the rest */
	if (pmon_recording_finish(r.w, &end) == 0 && !r.failed)
		print_summary(path, &end, &r);
	else
		rv = tool_error("%s: %s; it holds at least the first %llu "
		    "events (of %llu tasks), with no end block: pmon replay "
		    "serves them", path, pmon_recording_error(r.w),
		    (unsigned long long)end.events,
		    (unsigned long long)end.tasks);
	pmon_recording_free(r.w);
	for (i = 0; i < r.nhosts; i++)
		free(r.hosts[i]);
	free(r.last.v);
	pmon_free(r.p);
	return rv;
}
