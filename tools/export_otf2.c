/*
 * OTF2 (Vampir, otf2-print), through Debian's libotf2: an archive in the
 * directory OUT (OUT/traces.otf2 is the anchor file).  A host is a
 * system tree node with a location group, a task a location (CPU
 * thread) of its host's group, a PVM call a region entered at its begin
 * and left at its end.  Timestamps are corrected times (tc) in ns.
 *
 * Messages are MpiSend and MpiRecv records: they are OTF2's only point
 * to point records (its other paradigms have none), and viewers draw
 * message lines from them.  The communicator (paradigm MPI, as the
 * records require) holds every task, rank = location number; readers
 * match a send with a receive by sender, receiver, communicator and tag,
 * in order, which is PVM's own order for messages between two tasks
 * with one tag.  A send is recorded at its begin (a pvm_bcast at its
 * end, when its receivers are known), a receive at the end of the
 * receive that got it.  Lost records are a MeasurementOnOff pair.  A
 * receive or barrier that never ended lasts until the task's end was
 * announced, or the end of the trace.
 *
 * The communicator is defined as OTF2 wants it, which otf2-print checks:
 * a COMM_LOCATIONS group of every location, a COMM_GROUP of ranks into
 * it, and the communicator over the COMM_GROUP.  ViTE 1.2 keeps only
 * COMM_LOCATIONS groups, so it reports the COMM_GROUP as not implemented
 * and finds no rank through it; it then takes the rank as the location,
 * so rank = location number = index in both groups: its arrows are right.
 * For ViTE's users, otf2-vite defines the communicator over the
 * COMM_LOCATIONS group, which ViTE reads without a word and otf2-print
 * does not accept: no archive satisfies both.
 */
#include <sys/mman.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "export.h"

#define OTF2_COMM	0	/* the one communicator */
/*
 * libotf2 keeps a location's events in memory chunks and writes them to
 * its file when it gets no new chunk.  Its own pool lets each location
 * fill 128 MiB, which a long run does: ours lets all locations together
 * hold OTF2_POOL event chunks, and a location that needs one more when
 * they are taken writes its own out (it always gets its first).  Chunks
 * of 4 MiB are written to the file directly: a smaller write would go
 * through a 4 MiB buffer libotf2 keeps per open file
 * (OTF2_FILE_BUFFER_SIZE).  They are mapped, and unmapped when written
 * out: libotf2 fills a chunk's unused end before it writes it, and
 * those pages must not stay.  So the archive holds what each live task
 * wrote since its chunk was last written out, up to 4 MiB a task,
 * whatever the run's length; a task's chunk goes when it ends.
 */
#define OTF2_CHUNK	(4 * 1024 * 1024)
#define OTF2_DEF_CHUNK	(1024 * 1024)
#define OTF2_POOL	4

/* The chunks one libotf2 buffer holds (its perBufferData). */
struct otf2_buf {
	void		**chunk;
	size_t		  n, size;
	int		  evt;		/* event chunks (mapped, pooled) */
};

/*
 * A blocking call (a receive, a barrier) that got no end: its Leave is
 * held back until it is known whether an event of its task follows (the
 * end was lost: the call is left at that event) or not (the task ended,
 * or the stream did: the call is left at the end of the trace).
 */
struct otf2_pend {
	int		  open;
	int		  call;
	int64_t		  t;		/* the task's last time */
};

struct otf2 {
	OTF2_Archive	 *archive;
	OTF2_EvtWriter	**evt;		/* by location: task number */
	uint64_t	 *count;	/* events by location, once closed */
	uint8_t		 *closed;	/* by location: its task ended */
	struct otf2_pend *pend;		/* by location: a Leave held back */
	size_t		  nevt;
	long		 *loc;		/* by task index: its location */
	size_t		  nloc;
	size_t		  used;		/* event chunks buffers hold */
	/* Regions are numbered densely, as OTF2 wants, in order of use. */
	uint32_t	  region[PMON_CALL_MAX];	/* +1, 0: unused */
	int		  region_call[PMON_CALL_MAX];
	uint32_t	  nregions;
};

static OTF2_FlushType
otf2_pre_flush(void *data, OTF2_FileType type, OTF2_LocationRef loc,
    void *caller, bool final)
{
	(void)data;
	(void)type;
	(void)loc;
	(void)caller;
	(void)final;
	return OTF2_FLUSH;
}

/*
 * No post-flush callback: with one, libotf2 would put a BufferFlush
 * record (a measurement artefact, shown by viewers) wherever it wrote a
 * location's chunks out, and the file would depend on when it did.
 */
static const OTF2_FlushCallbacks otf2_flush = {
	.otf2_pre_flush = otf2_pre_flush,
	.otf2_post_flush = NULL
};

static void *
otf2_chunk_new(void)
{
	void *c;

	c = mmap(NULL, OTF2_CHUNK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return c == MAP_FAILED ? NULL : c;
}

/* A new chunk for a buffer; NULL makes libotf2 write the buffer out. */
static void *
otf2_alloc(void *data, OTF2_FileType type, OTF2_LocationRef loc,
    void **perbuf, uint64_t size)
{
	struct otf2 *o = data;
	struct otf2_buf *b = *perbuf;
	int evt = type == OTF2_FILETYPE_EVENTS && size == OTF2_CHUNK;
	void *c, *p;

	(void)loc;
	if (b == NULL && (b = *perbuf = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	if (evt && b->n > 0 && o->used >= OTF2_POOL)
		return NULL;
	if (b->n == b->size) {
		if ((p = reallocarray(b->chunk, b->size ? 2 * b->size : 4,
		    sizeof(*b->chunk))) == NULL)
			return NULL;
		b->chunk = p;
		b->size = b->size ? 2 * b->size : 4;
	}
	if ((c = evt ? otf2_chunk_new() : malloc(size)) == NULL)
		return NULL;
	b->chunk[b->n++] = c;
	b->evt = evt;
	if (evt)
		o->used++;
	return c;
}

/* A buffer was written out, or closed: its chunks go. */
static void
otf2_free_all(void *data, OTF2_FileType type, OTF2_LocationRef loc,
    void **perbuf, bool final)
{
	struct otf2 *o = data;
	struct otf2_buf *b = *perbuf;
	size_t i;

	(void)type;
	(void)loc;
	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++) {
		if (b->evt) {
			munmap(b->chunk[i], OTF2_CHUNK);
			o->used--;
		} else
			free(b->chunk[i]);
	}
	b->n = 0;
	if (final) {
		free(b->chunk);
		free(b);
		*perbuf = NULL;
	}
}

static const OTF2_MemoryCallbacks otf2_memory = {
	.otf2_allocate = otf2_alloc,
	.otf2_free_all = otf2_free_all
};

/* Turns an OTF2 error into export_fail; 0 on success. */
static int
otf2_check(struct export *x, OTF2_ErrorCode e, const char *what)
{
	if (e == OTF2_SUCCESS)
		return 0;
	return export_fail(x, "%s: %s (%s)", what, OTF2_Error_GetName(e),
	    OTF2_Error_GetDescription(e));
}

static int
otf2_begin(struct export *x)
{
	struct otf2 *o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return export_fail(x, "out of memory");
	export_set_data(x, o);
	o->archive = OTF2_Archive_Open(export_path(x), "traces",
	    OTF2_FILEMODE_WRITE, OTF2_CHUNK, OTF2_DEF_CHUNK,
	    OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (o->archive == NULL)
		return export_fail(x, "cannot create the OTF2 archive (does "
		    "it exist already?)");
	if (otf2_check(x, OTF2_Archive_SetFlushCallbacks(o->archive,
	    &otf2_flush, NULL), "flush callbacks") == -1 ||
	    otf2_check(x, OTF2_Archive_SetMemoryCallbacks(o->archive,
	    &otf2_memory, o), "memory callbacks") == -1 ||
	    otf2_check(x, OTF2_Archive_SetSerialCollectiveCallbacks(
	    o->archive), "collective callbacks") == -1 ||
	    otf2_check(x, OTF2_Archive_OpenEvtFiles(o->archive),
	    "opening the event files") == -1)
		return -1;
	return 0;
}

/* Room for location loc in the tables. */
static int
otf2_room(struct export *x, struct otf2 *o, size_t loc)
{
	size_t n = loc + 1;
	void *p;

	if (loc < o->nevt)
		return 0;
	if ((p = reallocarray(o->evt, n, sizeof(*o->evt))) == NULL)
		return export_fail(x, "out of memory");
	o->evt = p;
	if ((p = reallocarray(o->count, n, sizeof(*o->count))) == NULL)
		return export_fail(x, "out of memory");
	o->count = p;
	if ((p = realloc(o->closed, n)) == NULL)
		return export_fail(x, "out of memory");
	o->closed = p;
	if ((p = reallocarray(o->pend, n, sizeof(*o->pend))) == NULL)
		return export_fail(x, "out of memory");
	o->pend = p;
	memset(o->pend + o->nevt, 0, (n - o->nevt) * sizeof(*o->pend));
	memset(o->evt + o->nevt, 0, (n - o->nevt) * sizeof(*o->evt));
	memset(o->count + o->nevt, 0, (n - o->nevt) * sizeof(*o->count));
	memset(o->closed + o->nevt, 0, n - o->nevt);
	o->nevt = n;
	return 0;
}

/*
 * The writer of location loc (the tid's number), made when new; NULL
 * with *closed set once its task ended.
 */
static OTF2_EvtWriter *
otf2_writer(struct export *x, long loc, int *closed)
{
	struct otf2 *o = export_data(x);

	*closed = 0;
	if (loc < 0 || otf2_room(x, o, (size_t)loc) == -1)
		return NULL;
	if (o->closed[loc]) {
		*closed = 1;
		return NULL;
	}
	if (o->evt[loc] == NULL && (o->evt[loc] = OTF2_Archive_GetEvtWriter(
	    o->archive, (OTF2_LocationRef)loc)) == NULL)
		export_fail(x, "no OTF2 event writer for location %ld", loc);
	return o->evt[loc];
}

/* A task's location, which every event asks for: by task index. */
static long
otf2_loc(struct export *x, const struct export_task *t)
{
	struct otf2 *o = export_data(x);

	if (t->index < o->nloc)
		return o->loc[t->index];
	return export_number(x, t->tid);
}

static int
otf2_task(struct export *x, const struct export_task *t, int new_host)
{
	struct otf2 *o = export_data(x);
	long *p;
	int closed;

	(void)new_host;
	if (t->index >= o->nloc) {
		if ((p = reallocarray(o->loc, t->index + 1,
		    sizeof(*p))) == NULL)
			return export_fail(x, "out of memory");
		o->loc = p;
		o->nloc = t->index + 1;
	}
	if ((o->loc[t->index] = export_number(x, t->tid)) == -1)
		return -1;
	if (otf2_writer(x, o->loc[t->index], &closed) == NULL && !closed)
		return -1;
	return 0;
}

static OTF2_TimeStamp
otf2_time(struct export *x, int64_t t)
{
	return export_start_ns(x) + (uint64_t)t;
}

/* The region of a call, numbered at its first use. */
static OTF2_RegionRef
otf2_region(struct otf2 *o, int call)
{
	if (o->region[call] == 0) {
		o->region_call[o->nregions] = call;
		o->region[call] = ++o->nregions;
	}
	return o->region[call] - 1;
}

/*
 * One MpiSend per destination.  A destination's rank is its tid's number
 * (export_number), which it may get before the stream announces it.
 */
static int
otf2_sends(struct export *x, OTF2_EvtWriter *w, const struct pmon_event *ev,
    OTF2_TimeStamp ts)
{
	unsigned i, n = ev->npeers;
	int32_t dst;
	long rank;

	if (ev->call != PMON_CALL_mcast && ev->call != PMON_CALL_bcast)
		n = 1;
	for (i = 0; i < n; i++) {
		dst = n == 1 && ev->npeers == 0 ? ev->peer : ev->peers[i];
		if ((rank = export_number(x, dst)) == -1)
			return -1;
		if (otf2_check(x, OTF2_EvtWriter_MpiSend(w, NULL, ts,
		    (uint32_t)rank, OTF2_COMM, (uint32_t)ev->tag,
		    ev->bytes < 0 ? 0 : (uint64_t)ev->bytes), "MpiSend") == -1)
			return -1;
	}
	return 0;
}

static int
otf2_begin_call(struct export *x, OTF2_EvtWriter *w,
    const struct export_event *e, OTF2_TimeStamp ts)
{
	struct otf2 *o = export_data(x);
	const struct pmon_event *ev = e->ev;

	if (otf2_check(x, OTF2_EvtWriter_Enter(w, NULL, ts,
	    otf2_region(o, ev->call)), "Enter") == -1)
		return -1;
	if (export_is_send(ev->call) && ev->call != PMON_CALL_bcast)
		return otf2_sends(x, w, ev, ts);
	return 0;
}

static int
otf2_end_call(struct export *x, OTF2_EvtWriter *w,
    const struct export_event *e, OTF2_TimeStamp ts)
{
	struct otf2 *o = export_data(x);
	const struct pmon_event *ev = e->ev;

	if (e->begin == NULL) {		/* its begin was lost */
		if (otf2_check(x, OTF2_EvtWriter_Enter(w, NULL, ts,
		    otf2_region(o, ev->call)), "Enter") == -1)
			return -1;
	}
	if (ev->call == PMON_CALL_bcast && otf2_sends(x, w, ev, ts) == -1)
		return -1;
	if (e->send != NULL && otf2_check(x, OTF2_EvtWriter_MpiRecv(w, NULL,
	    ts, (uint32_t)export_number(x, e->send->tid), OTF2_COMM,
	    (uint32_t)ev->tag,
	    ev->bytes < 0 ? 0 : (uint64_t)ev->bytes), "MpiRecv") == -1)
		return -1;
	return otf2_check(x, OTF2_EvtWriter_Leave(w, NULL, ts,
	    otf2_region(o, ev->call)), "Leave");
}

/*
 * Leaves the call held open at location loc (if any), at time tm or its
 * task's last time, whichever is later.
 */
static int
otf2_pending(struct export *x, OTF2_EvtWriter *w, long loc, int64_t tm)
{
	struct otf2 *o = export_data(x);
	struct otf2_pend *p = &o->pend[loc];

	if (!p->open)
		return 0;
	p->open = 0;
	return otf2_check(x, OTF2_EvtWriter_Leave(w, NULL,
	    otf2_time(x, tm > p->t ? tm : p->t), otf2_region(o, p->call)),
	    "Leave");
}

static int
otf2_event(struct export *x, const struct export_event *e)
{
	const struct pmon_event *ev = e->ev;
	OTF2_TimeStamp ts = otf2_time(x, e->t);
	long loc = otf2_loc(x, e->task);
	OTF2_EvtWriter *w;
	int closed;

	if ((w = otf2_writer(x, loc, &closed)) == NULL)
		return closed ? 0 : -1;
	/* An event of its task follows a call held open: it ended here. */
	if (otf2_pending(x, w, loc, e->t) == -1)
		return -1;
	if (ev->flags & PMON_EV_LOST) {
		if (otf2_check(x, OTF2_EvtWriter_MeasurementOnOff(w, NULL, ts,
		    OTF2_MEASUREMENT_OFF), "MeasurementOnOff") == -1)
			return -1;
		return otf2_check(x, OTF2_EvtWriter_MeasurementOnOff(w, NULL,
		    ts, OTF2_MEASUREMENT_ON), "MeasurementOnOff");
	}
	/* A handler's run is no region; its begin receives a message. */
	if (ev->call == PMON_CALL_HANDLER && e->send != NULL)
		return otf2_check(x, OTF2_EvtWriter_MpiRecv(w, NULL, ts,
		    (uint32_t)export_number(x, e->send->tid), OTF2_COMM,
		    (uint32_t)ev->tag, ev->bytes < 0 ? 0 : (uint64_t)ev->bytes),
		    "MpiRecv");
	if (ev->call <= PMON_CALL_NONE || ev->call >= PMON_CALL_LOST)
		return 0;	/* a breakpoint: no OTF2 record says it */
	if (ev->phase == PMON_PHASE_BEGIN)
		return otf2_begin_call(x, w, e, ts);
	return otf2_end_call(x, w, e, ts);
}

/*
 * An open region is left at the task's last time; a blocking one is
 * held back (struct otf2_pend): a task blocked to its end, in a deadlock
 * say, stays in its receive until the end of the trace.
 */
static int
otf2_unfinished(struct export *x, const struct export_task *t,
    const struct export_call *call, int64_t tm)
{
	struct otf2 *o = export_data(x);
	long loc = otf2_loc(x, t);
	OTF2_EvtWriter *w;
	int closed;

	if ((w = otf2_writer(x, loc, &closed)) == NULL)
		return closed ? 0 : -1;
	if (export_is_blocking(call->call)) {
		o->pend[loc].open = 1;
		o->pend[loc].call = call->call;
		o->pend[loc].t = tm;
		return 0;
	}
	return otf2_check(x, OTF2_EvtWriter_Leave(w, NULL, otf2_time(x, tm),
	    otf2_region(o, call->call)), "Leave");
}

/*
 * Counts a location's events and closes its writer (written out), after
 * leaving a call held open at the latest time the stream has reached:
 * the end of the trace, or when the task's end was announced.
 */
static int
otf2_close_loc(struct export *x, struct otf2 *o, size_t loc)
{
	OTF2_ErrorCode e;

	if (o->evt[loc] == NULL)
		return 0;
	if (otf2_pending(x, o->evt[loc], (long)loc, export_last_t(x)) == -1)
		return -1;
	OTF2_EvtWriter_GetNumberOfEvents(o->evt[loc], &o->count[loc]);
	e = OTF2_Archive_CloseEvtWriter(o->archive, o->evt[loc]);
	o->evt[loc] = NULL;
	return otf2_check(x, e, "closing an event writer");
}

/*
 * The task ended: its call left open (if any) is left, and its writer
 * closed, which writes its events out and gives its chunks back.  A
 * blocked call lasts until the task's end was announced: no event says
 * when it died, but it was after everything the stream held then.
 */
static int
otf2_gone(struct export *x, const struct export_task *t)
{
	struct otf2 *o = export_data(x);
	long loc = otf2_loc(x, t);

	if (loc < 0)
		return -1;
	if (t->cur.open && otf2_unfinished(x, t, &t->cur, t->last_t) == -1)
		return -1;
	if (otf2_room(x, o, (size_t)loc) == -1)
		return -1;
	o->closed[loc] = 1;
	return otf2_close_loc(x, o, (size_t)loc);
}

/*
 * Strings: 0 "", 1 "machine", 2 "host", 3 "pvm", 4 "all tasks", then
 * from 5 the hosts, the tasks and the regions.
 */
static int
otf2_strings(struct export *x, OTF2_GlobalDefWriter *g)
{
	struct otf2 *o = export_data(x);
	static const char *const fixed[] = { "", "machine", "host", "pvm",
	    "all tasks" };
	const struct export_task *t;
	uint32_t id = 0;
	int32_t tid;
	size_t i;
	char name[300], b[16];
	int rv = 0;

	for (i = 0; i < 5; i++)
		rv |= OTF2_GlobalDefWriter_WriteString(g, id++, fixed[i]);
	for (i = 0; i < export_nhosts(x); i++)
		rv |= OTF2_GlobalDefWriter_WriteString(g, id++,
		    export_host_at(x, i)->name);
	for (i = 0; i < export_nnumbers(x); i++) {
		tid = export_numbered(x, i);
		export_tidstr(tid, b, sizeof(b));
		if ((t = export_task_of(x, tid)) != NULL)
			snprintf(name, sizeof(name), "%s %s", t->program, b);
		else
			snprintf(name, sizeof(name), "%s (not monitored)", b);
		rv |= OTF2_GlobalDefWriter_WriteString(g, id++, name);
	}
	for (i = 0; i < o->nregions; i++)
		rv |= OTF2_GlobalDefWriter_WriteString(g, id++,
		    pmon_call_name(o->region_call[i]));
	return otf2_check(x, rv, "strings");
}

static int
otf2_regions(struct export *x, OTF2_GlobalDefWriter *g, uint32_t str)
{
	struct otf2 *o = export_data(x);
	OTF2_RegionRole role;
	size_t i;
	int rv = 0, call;

	for (i = 0; i < o->nregions; i++) {
		call = o->region_call[i];
		role = export_is_send(call) || export_is_recv(call) ?
		    OTF2_REGION_ROLE_POINT2POINT : OTF2_REGION_ROLE_FUNCTION;
		rv |= OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)i,
		    str, str, 0, role, OTF2_PARADIGM_USER,
		    OTF2_REGION_FLAG_NONE, 0, 0, 0);
		str++;
	}
	return otf2_check(x, rv, "regions");
}

/* The machine, its hosts, their location groups and the tasks. */
static int
otf2_system(struct export *x, OTF2_GlobalDefWriter *g)
{
	struct otf2 *o = export_data(x);
	const struct export_task *t;
	size_t i, nh = export_nhosts(x), nt = export_nnumbers(x);
	uint64_t n;
	int rv;

	rv = OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1,
	    OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	for (i = 0; i < nh; i++) {
		rv |= OTF2_GlobalDefWriter_WriteSystemTreeNode(g,
		    (uint32_t)i + 1, 5 + (uint32_t)i, 2, 0);
		rv |= OTF2_GlobalDefWriter_WriteLocationGroup(g, (uint32_t)i,
		    5 + (uint32_t)i, OTF2_LOCATION_GROUP_TYPE_PROCESS,
		    (uint32_t)i + 1, OTF2_UNDEFINED_LOCATION_GROUP);
	}
	/* A tid that never was a task (not monitored) goes to host 0. */
	for (i = 0; i < nt; i++) {
		t = export_task_of(x, export_numbered(x, i));
		n = i < o->nevt ? o->count[i] : 0;
		rv |= OTF2_GlobalDefWriter_WriteLocation(g, i,
		    5 + (uint32_t)(nh + i), OTF2_LOCATION_TYPE_CPU_THREAD, n,
		    t != NULL ? t->host->index : 0);
	}
	return otf2_check(x, rv, "system tree");
}

/*
 * Group 0: the locations (COMM_LOCATIONS); group 1: the ranks, indices
 * into group 0 (COMM_GROUP); comm 0 over group 1.  Rank i is location i.
 * otf2-vite: comm 0 over group 0, which ViTE 1.2 reads without a notice
 * and otf2-print calls an invalid group reference.
 */
static int
otf2_comm(struct export *x, OTF2_GlobalDefWriter *g)
{
	size_t i, n = export_nnumbers(x);
	uint64_t *m;
	int rv;

	if ((m = calloc(n ? n : 1, sizeof(*m))) == NULL)
		return export_fail(x, "out of memory");
	for (i = 0; i < n; i++)
		m[i] = i;
	rv = OTF2_GlobalDefWriter_WriteGroup(g, 0, 4,
	    OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
	    OTF2_GROUP_FLAG_NONE, (uint32_t)n, m);
	if (export_format_of(x) == &export_otf2_vite)
		rv |= OTF2_GlobalDefWriter_WriteComm(g, OTF2_COMM, 3, 0,
		    OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
	else {
		rv |= OTF2_GlobalDefWriter_WriteGroup(g, 1, 4,
		    OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
		    OTF2_GROUP_FLAG_NONE, (uint32_t)n, m);
		rv |= OTF2_GlobalDefWriter_WriteComm(g, OTF2_COMM, 3, 1,
		    OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
	}
	free(m);
	return otf2_check(x, rv, "communicator");
}

static int
otf2_definitions(struct export *x)
{
	struct otf2 *o = export_data(x);
	OTF2_GlobalDefWriter *g;
	OTF2_DefWriter *d;
	size_t i, nt = export_nnumbers(x);
	int64_t len = export_last_t(x);

	if (otf2_check(x, OTF2_Archive_OpenDefFiles(o->archive),
	    "opening the definition files") == -1)
		return -1;
	for (i = 0; i < nt; i++) {
		if ((d = OTF2_Archive_GetDefWriter(o->archive, i)) == NULL)
			return export_fail(x, "no OTF2 definition writer");
		OTF2_Archive_CloseDefWriter(o->archive, d);
	}
	if (otf2_check(x, OTF2_Archive_CloseDefFiles(o->archive),
	    "closing the definition files") == -1)
		return -1;
	if ((g = OTF2_Archive_GetGlobalDefWriter(o->archive)) == NULL)
		return export_fail(x, "no OTF2 global definition writer");
	if (otf2_check(x, OTF2_GlobalDefWriter_WriteClockProperties(g,
	    1000000000, export_start_ns(x), len > 0 ? (uint64_t)len : 0,
	    export_start_ns(x)), "clock properties") == -1 ||
	    otf2_strings(x, g) == -1 ||
	    otf2_regions(x, g, 5 + (uint32_t)(export_nhosts(x) + nt)) == -1 ||
	    otf2_system(x, g) == -1 || otf2_comm(x, g) == -1)
		return -1;
	return 0;
}

static int
otf2_end(struct export *x)
{
	struct otf2 *o = export_data(x);
	size_t i;
	int rv = 0;

	if (o == NULL)
		return -1;

	/* The definitions count each location's events. */
	for (i = 0; i < o->nevt && o->archive != NULL; i++)
		if (otf2_close_loc(x, o, i) == -1)
			rv = -1;
	if (o->archive != NULL) {
		if (otf2_check(x, OTF2_Archive_CloseEvtFiles(o->archive),
		    "closing the event files") == -1 || rv == -1 ||
		    otf2_definitions(x) == -1)
			rv = -1;
		if (otf2_check(x, OTF2_Archive_Close(o->archive),
		    "closing the archive") == -1)
			rv = -1;
	}
	free(o->evt);
	free(o->count);
	free(o->closed);
	free(o->pend);
	free(o->loc);
	free(o);
	export_set_data(x, NULL);
	return rv;
}

const struct export_format export_otf2 = {
	.name = "otf2", .begin = otf2_begin, .task = otf2_task,
	.event = otf2_event, .unfinished = otf2_unfinished, .gone = otf2_gone,
	.end = otf2_end
};

/* The same archive but for its communicator's group (otf2_comm). */
const struct export_format export_otf2_vite = {
	.name = "otf2-vite", .begin = otf2_begin, .task = otf2_task,
	.event = otf2_event, .unfinished = otf2_unfinished, .gone = otf2_gone,
	.end = otf2_end
};
