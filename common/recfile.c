/*
 * Recordings (recfile.h, doc/recording.md): a writer that packs frames
 * into independently compressed, checksummed blocks, and a reader that
 * trusts nothing and says where the damage starts.  Format 2 (the
 * writer's default) stores each EVENT packed against its task's earlier
 * ones (recpack.h) and deflates cheaply; format 1 stores the frames with
 * three deltas and deflates at level 6.  The reader reads both.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "pack.h"
#include "proto.h"
#include "recfile.h"
#include "recpack.h"
#include "wire.h"

#define MAGIC_LEN	8
#define HDR_FIXED	(MAGIC_LEN + 2 + 2)	/* magic, version, length */
#define HDR_FIELDS_MAX	(1 + 8 + 3 * (2 + RECFILE_STR_MAX))
/*
 * The largest raw block: the block size plus one frame that overran it
 * (in format 2 an item: a head, type and length of at most 12 bytes).
 */
#define RAW_MAX		(RECFILE_BLOCK_MAX + 16 + RECFILE_SNAPSHOT_MAX)
/* Format 2's items: how each begins (a varint). */
#define ITEM_FRAME	0	/* u8 type, varint length, the payload */
#define ITEM_NEW_TASK	1	/* i32 tid, then its first EVENT, packed */
#define ITEM_TASK	2	/* + a known task's index: its EVENT, packed */
/* Deflate level of each format's blocks (doc/recording.md). */
#define ZLEVEL_V1	6
#define ZLEVEL_V2	3

/*
 * Format 1 stores EVENT frames with their sequence number and time as
 * deltas from the task's previous event, and the corrected time as its
 * distance from the raw one: repeated patterns then repeat bytes, and
 * zlib takes a recording from 11 to under 4 bytes per event.  Both
 * sides keep the same table of each task's last event.
 */
#define EV_TID		0				/* in the payload */
#define EV_TCORR	17
#define EV_SEQ		(EVENT_HDR_SIZE + 4)
#define EV_TNS		(EVENT_HDR_SIZE + 12)
#define EV_DELTA_MIN	(EV_TNS + 8)	/* a payload with every field */

/*
 * Per tid: format 1's last event of the task; format 2's writer, the
 * task's index + 1 (0: none yet).
 */
struct delta_ent {
	int32_t		 tid;		/* 0: free */
	uint32_t	 idx;
	uint64_t	 seq, t_ns;
};

struct delta_tab {
	struct delta_ent *v;
	size_t		 n, cap;	/* cap: 0 or a power of two */
};

/* Format 2: what both sides remember of each task, by index. */
struct task_tab {
	struct recpack_task **v;
	size_t		 n, cap;
};

struct recfile_writer {
	FILE		*fp;
	unsigned	 version;
	struct delta_tab deltas;
	struct task_tab	 tasks;
	size_t		 block_size;
	uint8_t		*raw;		/* frames waiting for a block; */
	size_t		 rawlen, rawsize;	/* format 2: the main column */
	uint8_t		*tcol;		/* format 2: the time column */
	size_t		 tlen, tsize;
	uint8_t		*out;		/* one compressed block */
	size_t		 outsize;
	z_stream	 z;
	int		 zready;
	struct recfile_end counts;
	struct recfile_end saved;	/* counts at the last block that
					   reached the file */
	int		 failed;
	char		 err[256];
};

struct recfile {
	FILE		*fp;
	struct delta_tab deltas;
	struct task_tab	 tasks;
	uint64_t	 off;		/* bytes read so far */
	struct recfile_header hdr;
	uint8_t		*stored;	/* the current block as stored */
	size_t		 storedsize;
	uint8_t		*raw;		/* ...and uncompressed */
	size_t		 rawlen, rawoff, rawsize;
	struct wire_reader main, time;	/* format 2: raw's two columns */
	uint8_t		*ev;		/* format 2: an EVENT rebuilt */
	z_stream	 z;		/* format 2: raw deflate */
	int		 zready;
	uint64_t	 block_off;	/* where the current block starts */
	int		 ended;		/* read the end block */
	int		 failed;
	struct recfile_end end;
	char		 err[256];
};

static size_t
delta_slot(const struct delta_tab *d, int32_t tid)
{
	size_t i = record_tid_hash(tid) & (d->cap - 1);

	while (d->v[i].tid != 0 && d->v[i].tid != tid)
		i = (i + 1) & (d->cap - 1);
	return i;
}

static int
delta_grow(struct delta_tab *d)
{
	struct delta_tab n = { .cap = d->cap ? d->cap * 2 : 64 };
	size_t i;

	if ((n.v = calloc(n.cap, sizeof(*n.v))) == NULL)
		return -1;
	for (i = 0; i < d->cap; i++)
		if (d->v[i].tid != 0)
			n.v[delta_slot(&n, d->v[i].tid)] = d->v[i];
	n.n = d->n;
	free(d->v);
	*d = n;
	return 0;
}

/* The task's last event (zeros for a new task); NULL out of memory. */
static struct delta_ent *
delta_get(struct delta_tab *d, int32_t tid)
{
	struct delta_ent *e;

	/* 0 marks free slots: tid 0 shares INT32_MIN's entry, alike on
	 * both sides. */
	if (tid == 0)
		tid = INT32_MIN;
	if (2 * (d->n + 1) > d->cap && delta_grow(d) == -1)
		return NULL;
	e = &d->v[delta_slot(d, tid)];
	if (e->tid == 0) {
		e->tid = tid;
		d->n++;
	}
	return e;
}

/* An EVENT payload (at least EV_DELTA_MIN bytes) as stored. */
static int
delta_encode(struct delta_tab *d, uint8_t *p)
{
	struct delta_ent *e;
	uint64_t seq = wire_get64(p + EV_SEQ), t_ns = wire_get64(p + EV_TNS);

	if ((e = delta_get(d, (int32_t)wire_get32(p + EV_TID))) == NULL)
		return -1;
	wire_put64(p + EV_TCORR, wire_get64(p + EV_TCORR) - t_ns);
	wire_put64(p + EV_SEQ, seq - e->seq);
	wire_put64(p + EV_TNS, t_ns - e->t_ns);
	e->seq = seq;
	e->t_ns = t_ns;
	return 0;
}

/* The inverse, in place. */
static int
delta_decode(struct delta_tab *d, uint8_t *p)
{
	struct delta_ent *e;
	uint64_t seq, t_ns;

	if ((e = delta_get(d, (int32_t)wire_get32(p + EV_TID))) == NULL)
		return -1;
	seq = e->seq + wire_get64(p + EV_SEQ);
	t_ns = e->t_ns + wire_get64(p + EV_TNS);
	wire_put64(p + EV_SEQ, seq);
	wire_put64(p + EV_TNS, t_ns);
	wire_put64(p + EV_TCORR, wire_get64(p + EV_TCORR) + t_ns);
	e->seq = seq;
	e->t_ns = t_ns;
	return 0;
}

/* A new task at the end of t; NULL out of memory or at the limit. */
static struct recpack_task *
task_add(struct task_tab *t, int32_t tid)
{
	struct recpack_task **n, *task;
	size_t cap;

	if (t->n == RECFILE_TASKS_MAX)
		return NULL;
	if (t->n == t->cap) {
		cap = t->cap ? 2 * t->cap : 64;
		if ((n = reallocarray(t->v, cap, sizeof(*n))) == NULL)
			return NULL;
		t->v = n;
		t->cap = cap;
	}
	if ((task = malloc(sizeof(*task))) == NULL)
		return NULL;
	recpack_task_init(task, tid);
	return t->v[t->n++] = task;
}

static void
task_tab_free(struct task_tab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
}

static void
errf(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The crc of a block: its first 12 header bytes, then what is stored. */
static uint32_t
block_crc(const uint8_t *hdr, const uint8_t *stored, size_t len)
{
	uLong crc = crc32(0L, Z_NULL, 0);

	crc = crc32(crc, hdr, 12);
	if (len > 0)
		crc = crc32(crc, stored, (uInt)len);
	return (uint32_t)crc;
}

/* --- writing ------------------------------------------------------------- */

static int
wfail(struct recfile_writer *w, const char *what)
{
	w->failed = 1;
	errf(w->err, sizeof(w->err), "%s: %s", what,
	    errno ? strerror(errno) : "failed");
	return -1;
}

/* Grows *buf to hold want bytes: buffers follow the blocks' sizes. */
static int
reserve(uint8_t **buf, size_t *size, size_t want)
{
	uint8_t *n;

	if (*size >= want)
		return 0;
	if ((n = realloc(*buf, want)) == NULL)
		return -1;
	*buf = n;
	*size = want;
	return 0;
}

static int
write_all(struct recfile_writer *w, const void *p, size_t len)
{
	errno = 0;
	if (len > 0 && fwrite(p, 1, len, w->fp) != len)
		return wfail(w, "writing the recording");
	w->counts.file_bytes += len;
	return 0;
}

static int
write_block(struct recfile_writer *w, uint32_t kind, const uint8_t *stored,
    size_t slen, size_t rawlen)
{
	uint8_t hdr[RECFILE_BLOCK_HDR];

	wire_put32(hdr, kind);
	wire_put32(hdr + 4, (uint32_t)rawlen);
	wire_put32(hdr + 8, (uint32_t)slen);
	wire_put32(hdr + 12, block_crc(hdr, stored, slen));
	if (write_all(w, hdr, sizeof(hdr)) == -1)
		return -1;
	return write_all(w, stored, slen);
}

/*
 * Deflates n pieces, in order, into w->out as one zlib stream; with
 * store_last, the last piece is stored (deflate level 0).
 */
static int
deflate_pieces(struct recfile_writer *w, const uint8_t *const *piece,
    const size_t *len, int n, int store_last, size_t *clen)
{
	size_t total = 0;
	int i, rv, level = w->version == 1 ? ZLEVEL_V1 : ZLEVEL_V2;

	for (i = 0; i < n; i++)
		total += len[i];
	/* A level switch ends a deflate block: room for that too. */
	if (deflateReset(&w->z) != Z_OK || deflateParams(&w->z, level,
	    Z_DEFAULT_STRATEGY) != Z_OK || reserve(&w->out, &w->outsize,
	    deflateBound(&w->z, total) + 64) == -1)
		return -1;
	w->z.next_out = w->out;
	w->z.avail_out = (uInt)w->outsize;
	for (i = 0; i < n; i++) {
		if (i == n - 1 && store_last && deflateParams(&w->z, 0,
		    Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
		w->z.next_in = (Bytef *)piece[i];
		w->z.avail_in = (uInt)len[i];
		rv = deflate(&w->z, i == n - 1 ? Z_FINISH : Z_NO_FLUSH);
		if (w->z.avail_in != 0 || rv != (i == n - 1 ? Z_STREAM_END :
		    Z_OK))
			return -1;
	}
	*clen = w->outsize - w->z.avail_out;
	return 0;
}

/*
 * Compresses what waits into one data block.  Format 1: the frames at
 * level 6, a zlib stream.  Format 2: u32 the main column's length and
 * the main column at level 3 (its long repeats make level 3 as cheap as
 * 1, and smaller), then the time column stored: its varints hardly
 * compress, and deflating them would cost half again what the rest of
 * the writer does; raw deflate, as the block's crc32 covers it already
 * (doc/recording.md).
 */
static int
flush_block(struct recfile_writer *w)
{
	uint8_t mlen[4];
	const uint8_t *piece[3] = { mlen, w->raw, w->tcol };
	size_t len[3] = { sizeof(mlen), w->rawlen, w->tlen }, clen;
	int rv;

	if (w->rawlen == 0)
		return 0;
	wire_put32(mlen, (uint32_t)w->rawlen);
	errno = 0;
	if (w->version == 1)
		rv = deflate_pieces(w, piece + 1, len + 1, 1, 0, &clen);
	else
		rv = deflate_pieces(w, piece, len, 3, 1, &clen);
	if (rv == -1)
		return wfail(w, "compressing a block");
	if (write_block(w, RECFILE_BLOCK_DATA, w->out, clen, (w->version == 1 ?
	    0 : sizeof(mlen)) + w->rawlen + w->tlen) == -1)
		return -1;
	w->rawlen = w->tlen = 0;
	/* Out to the file, so that a full disk is known block by block. */
	errno = 0;
	if (fflush(w->fp) == EOF)
		return wfail(w, "writing the recording");
	w->saved = w->counts;
	return 0;
}

static size_t
header_encode(uint8_t *buf, const struct recfile_header *h, unsigned version)
{
	uint8_t *p = buf + HDR_FIXED;
	size_t len;

	*p++ = h->proto;
	wire_put64(p, h->created_ns);
	p = wire_putstr(p + 8, h->writer);
	p = wire_putstr(p, h->clock);
	p = wire_putstr(p, h->source);
	len = (size_t)(p - buf);
	memcpy(buf, RECFILE_MAGIC, MAGIC_LEN);
	wire_put16(buf + MAGIC_LEN, (uint16_t)version);
	wire_put16(buf + MAGIC_LEN + 2, (uint16_t)(len - HDR_FIXED));
	wire_put32(p, (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)len));
	return len + 4;
}

static int
header_ok(const struct recfile_header *h)
{
	return strlen(h->writer) <= RECFILE_STR_MAX &&
	    strlen(h->clock) <= RECFILE_STR_MAX &&
	    strlen(h->source) <= RECFILE_STR_MAX;
}

/* The writer's buffers and deflate stream, then the header. */
static int
writer_start(struct recfile_writer *w, const struct recfile_header *h,
    char *err, size_t errsize)
{
	uint8_t hbuf[HDR_FIXED + HDR_FIELDS_MAX + 4];

	if (reserve(&w->raw, &w->rawsize, w->block_size) == -1 ||
	    (w->version >= 2 && reserve(&w->tcol, &w->tsize, w->block_size) ==
	    -1) ||
	    deflateInit2(&w->z, w->version == 1 ? ZLEVEL_V1 : ZLEVEL_V2,
	    Z_DEFLATED, w->version == 1 ? 15 : -15, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		errf(err, errsize, "out of memory");
		return -1;
	}
	w->zready = 1;
	if (write_all(w, hbuf, header_encode(hbuf, h, w->version)) == -1 ||
	    fflush(w->fp) == EOF) {
		errf(err, errsize, "writing the header: %s", strerror(errno));
		return -1;
	}
	return 0;
}

struct recfile_writer *
recfile_create_fp(FILE *fp, const struct recfile_header *h,
    size_t block_size, char *err, size_t errsize)
{
	struct recfile_writer *w;
	unsigned version = h->version ? h->version : RECFILE_VERSION;

	if (block_size == 0)
		block_size = RECFILE_BLOCK_DEFAULT;
	if (block_size < RECFILE_BLOCK_MIN || block_size > RECFILE_BLOCK_MAX ||
	    !header_ok(h) || version < RECFILE_VERSION_MIN ||
	    version > RECFILE_VERSION) {
		errf(err, errsize, "bad block size, format version or header "
		    "strings");
		fclose(fp);
		return NULL;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		errf(err, errsize, "out of memory");
		fclose(fp);
		return NULL;
	}
	w->fp = fp;
	w->version = version;
	w->block_size = block_size;
	if (writer_start(w, h, err, errsize) == -1) {
		recfile_writer_free(w);
		return NULL;
	}
	return w;
}

struct recfile_writer *
recfile_create(const char *path, const struct recfile_header *h,
    size_t block_size, char *err, size_t errsize)
{
	FILE *fp;

	if ((fp = fopen(path, "we")) == NULL) {
		errf(err, errsize, "%s: %s", path, strerror(errno));
		return NULL;
	}
	return recfile_create_fp(fp, h, block_size, err, errsize);
}

/* Format 1: the frame as on the wire, an EVENT with its deltas. */
static int
put_frame_v1(struct recfile_writer *w, uint8_t type, const void *payload,
    size_t len)
{
	if (reserve(&w->raw, &w->rawsize, w->rawlen + FRAME_HDR_SIZE + len) ==
	    -1)
		return wfail(w, "a frame");
	frame_hdr_encode(w->raw + w->rawlen, type, (uint32_t)len);
	memcpy(w->raw + w->rawlen + FRAME_HDR_SIZE, payload, len);
	if (type == MSG_EVENT && len >= EV_DELTA_MIN &&
	    delta_encode(&w->deltas, w->raw + w->rawlen + FRAME_HDR_SIZE) == -1)
		return wfail(w, "a frame");
	w->rawlen += FRAME_HDR_SIZE + len;
	return 0;
}

/* Format 2: a frame as it is, in the main column. */
static int
put_item_frame(struct recfile_writer *w, uint8_t type, const void *payload,
    size_t len)
{
	uint8_t *p;

	if (reserve(&w->raw, &w->rawsize, w->rawlen + 12 + len) == -1)
		return wfail(w, "a frame");
	p = w->raw + w->rawlen;
	*p++ = ITEM_FRAME;
	*p++ = type;
	p = pack_put_varint(p, len);
	memcpy(p, payload, len);
	w->rawlen = (size_t)(p - w->raw) + len;
	return 0;
}

/*
 * The task an EVENT packs against, with the item's head at *p: a new
 * task's tid, or the index of a known one.  NULL when it is not to be
 * packed (beyond RECFILE_TASKS_MAX tasks) or out of memory (w failed).
 */
static struct recpack_task *
event_task(struct recfile_writer *w, int32_t tid, uint8_t **p)
{
	struct delta_ent *e;
	struct recpack_task *t;

	if ((e = delta_get(&w->deltas, tid)) == NULL) {
		wfail(w, "a frame");
		return NULL;
	}
	if (e->idx != 0) {
		*p = pack_put_varint(*p, ITEM_TASK + (uint64_t)e->idx - 1);
		return w->tasks.v[e->idx - 1];
	}
	if ((t = task_add(&w->tasks, tid)) == NULL) {
		if (w->tasks.n < RECFILE_TASKS_MAX)
			wfail(w, "a frame");
		return NULL;
	}
	e->idx = (uint32_t)w->tasks.n;
	*(*p)++ = ITEM_NEW_TASK;
	wire_put32(*p, (uint32_t)tid);
	*p += 4;
	return t;
}

/* Format 2: an EVENT packed, or as it is when it does not pack. */
static int
put_item_event(struct recfile_writer *w, const uint8_t *payload, size_t len)
{
	struct pack_out o;
	struct recpack_task *t;
	size_t tail;
	uint8_t *p;

	if (!recpack_ok(payload, len, &tail))
		return put_item_frame(w, MSG_EVENT, payload, len);
	if (reserve(&w->raw, &w->rawsize, w->rawlen + 5 + RECPACK_MAIN_MAX +
	    tail) == -1 || reserve(&w->tcol, &w->tsize, w->tlen +
	    RECPACK_TIME_MAX) == -1)
		return wfail(w, "a frame");
	p = w->raw + w->rawlen;
	if ((t = event_task(w, (int32_t)wire_get32(payload), &p)) == NULL)
		return w->failed ? -1 : put_item_frame(w, MSG_EVENT, payload,
		    len);
	o.rec = w->raw;
	o.nrec = (size_t)(p - w->raw);
	o.time = w->tcol;
	o.ntime = w->tlen;
	recpack_put(t, payload, tail, &o);
	w->rawlen = o.nrec;
	w->tlen = o.ntime;
	return 0;
}

int
recfile_write_frame(struct recfile_writer *w, uint8_t type,
    const void *payload, size_t len)
{
	int rv;

	if (w->failed)
		return -1;
	if (len > (type == REC_SNAPSHOT ? RECFILE_SNAPSHOT_MAX :
	    PROTO_MAX_PAYLOAD)) {
		errno = EMSGSIZE;
		return wfail(w, "a frame too large");
	}
	if (w->rawlen + w->tlen + FRAME_HDR_SIZE + len > w->block_size &&
	    flush_block(w) == -1)
		return -1;
	if (w->version == 1)
		rv = put_frame_v1(w, type, payload, len);
	else if (type == MSG_EVENT)
		rv = put_item_event(w, payload, len);
	else
		rv = put_item_frame(w, type, payload, len);
	if (rv == -1)
		return -1;
	w->counts.frames++;
	w->counts.raw_bytes += FRAME_HDR_SIZE + len;
	if (type == MSG_EVENT)
		w->counts.events++;
	else if (type == MSG_TASK_INFO)
		w->counts.tasks++;
	return 0;
}

int
recfile_sync(struct recfile_writer *w)
{
	if (w->failed)
		return -1;
	if (flush_block(w) == -1)
		return -1;
	errno = 0;
	if (fflush(w->fp) == EOF)
		return wfail(w, "writing the recording");
	return 0;
}

int
recfile_finish(struct recfile_writer *w, struct recfile_end *out)
{
	uint8_t end[RECFILE_END_SIZE];
	int rv = -1;

	if (recfile_sync(w) == 0) {
		w->counts.ended_ns = now_ns();
		wire_put64(end, w->counts.frames);
		wire_put64(end + 8, w->counts.events);
		wire_put64(end + 16, w->counts.tasks);
		wire_put64(end + 24, w->counts.raw_bytes);
		wire_put64(end + 32, w->counts.file_bytes);
		wire_put64(end + 40, w->counts.ended_ns);
		if (write_block(w, RECFILE_BLOCK_END, end, sizeof(end),
		    sizeof(end)) == 0)
			rv = 0;
	}
	errno = 0;
	if (fclose(w->fp) == EOF && rv == 0)
		rv = wfail(w, "closing the recording");
	w->fp = NULL;
	if (out != NULL)
		*out = rv == 0 ? w->counts : w->saved;
	return rv;
}

void
recfile_writer_free(struct recfile_writer *w)
{
	if (w == NULL)
		return;
	if (w->fp != NULL)
		fclose(w->fp);
	if (w->zready)
		deflateEnd(&w->z);
	free(w->deltas.v);
	task_tab_free(&w->tasks);
	free(w->raw);
	free(w->tcol);
	free(w->out);
	free(w);
}

const char *
recfile_writer_error(const struct recfile_writer *w)
{
	return w->err;
}

void
recfile_writer_counts(const struct recfile_writer *w, struct recfile_end *c)
{
	*c = w->counts;
}

/* --- reading ------------------------------------------------------------- */

/* Reads exactly len bytes; 0, or -1 at the end of the file. */
static int
read_all(struct recfile *r, void *p, size_t len)
{
	size_t n = len > 0 ? fread(p, 1, len, r->fp) : 0;

	r->off += n;
	return n == len ? 0 : -1;
}

static int
rfail(struct recfile *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
}

static int
header_decode(struct recfile *r, const uint8_t *fields, size_t len)
{
	struct wire_reader wr;
	struct recfile_header *h = &r->hdr;

	wire_reader_init(&wr, fields, len);
	h->proto = wire_read8(&wr);
	h->created_ns = wire_read64(&wr);
	wire_readstr(&wr, h->writer, sizeof(h->writer));
	wire_readstr(&wr, h->clock, sizeof(h->clock));
	wire_readstr(&wr, h->source, sizeof(h->source));
	if (wr.err || wr.off != len)
		return rfail(r, "corrupt header at offset 0: bad fields");
	if (h->proto != PROTO_VERSION)
		return rfail(r, "recorded with protocol version %u; this pmon "
		    "reads version %u", h->proto, PROTO_VERSION);
	return 0;
}

static int
header_read(struct recfile *r)
{
	uint8_t buf[HDR_FIXED + HDR_FIELDS_MAX + 4];
	size_t flen;

	if (read_all(r, buf, HDR_FIXED) == -1) {
		if (memcmp(buf, RECFILE_MAGIC, r->off < MAGIC_LEN ? r->off :
		    MAGIC_LEN) != 0)
			goto magic;
		return rfail(r, "truncated at offset 0 (in the header)");
	}
	if (memcmp(buf, RECFILE_MAGIC, MAGIC_LEN) != 0)
		goto magic;
	r->hdr.version = wire_get16(buf + MAGIC_LEN);
	if (r->hdr.version < RECFILE_VERSION_MIN ||
	    r->hdr.version > RECFILE_VERSION)
		return rfail(r, "format version %u; this pmon reads versions "
		    "%u to %u", r->hdr.version, RECFILE_VERSION_MIN,
		    RECFILE_VERSION);
	flen = wire_get16(buf + MAGIC_LEN + 2);
	if (flen > HDR_FIELDS_MAX)
		return rfail(r, "corrupt header at offset 0: too long");
	if (read_all(r, buf + HDR_FIXED, flen + 4) == -1)
		return rfail(r, "truncated at offset 0 (in the header)");
	if (wire_get32(buf + HDR_FIXED + flen) !=
	    (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)(HDR_FIXED + flen)))
		return rfail(r, "corrupt header at offset 0: crc mismatch");
	return header_decode(r, buf + HDR_FIXED, flen);
magic:
	return rfail(r, "not a pmon recording (bad magic)");
}

struct recfile *
recfile_open_fp(FILE *fp, char *err, size_t errsize)
{
	struct recfile *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		errf(err, errsize, "out of memory");
		fclose(fp);
		return NULL;
	}
	r->fp = fp;
	if (header_read(r) == -1) {
		errf(err, errsize, "%s", r->err);
		recfile_close(r);
		return NULL;
	}
	return r;
}

static int
regular_file(int fd, char *err, size_t errsize)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		errf(err, errsize, "%s", strerror(errno));
	else if (S_ISDIR(st.st_mode))
		errf(err, errsize, "a directory, not a recording");
	else if (!S_ISREG(st.st_mode))
		errf(err, errsize, "not a regular file (a recording is one)");
	else
		return 0;
	return -1;
}

/*
 * A recording is a regular file: a directory would read as empty, and
 * opening a FIFO would wait for a writer (so it is opened non-blocking,
 * and checked, before it is read).
 */
struct recfile *
recfile_open(const char *path, char *err, size_t errsize)
{
	FILE *fp;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
		errf(err, errsize, "%s", strerror(errno));
		return NULL;
	}
	if (regular_file(fd, err, errsize) == -1) {
		close(fd);
		return NULL;
	}
	if (fcntl(fd, F_SETFL, 0) == -1 || (fp = fdopen(fd, "r")) == NULL) {
		errf(err, errsize, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	return recfile_open_fp(fp, err, errsize);
}

void
recfile_close(struct recfile *r)
{
	if (r == NULL)
		return;
	if (r->fp != NULL)
		fclose(r->fp);
	if (r->zready)
		inflateEnd(&r->z);
	free(r->deltas.v);
	task_tab_free(&r->tasks);
	free(r->stored);
	free(r->raw);
	free(r->ev);
	free(r);
}

static int
end_decode(struct recfile *r, const uint8_t *p)
{
	int c;

	r->end.frames = wire_get64(p);
	r->end.events = wire_get64(p + 8);
	r->end.tasks = wire_get64(p + 16);
	r->end.raw_bytes = wire_get64(p + 24);
	r->end.file_bytes = wire_get64(p + 32);
	r->end.ended_ns = wire_get64(p + 40);
	if (r->end.file_bytes != r->block_off)
		return rfail(r, "corrupt block at offset %llu: the end block "
		    "counts another length", (unsigned long long)r->block_off);
	if ((c = fgetc(r->fp)) != EOF)
		return rfail(r, "corrupt file at offset %llu: data after the "
		    "end block", (unsigned long long)r->off);
	r->ended = 1;
	return 0;
}

/* Format 2: the raw block's two columns. */
static int
columns(struct recfile *r)
{
	uint32_t mlen = r->rawlen >= 4 ? wire_get32(r->raw) : 0;

	if (mlen == 0 || mlen > r->rawlen - 4)
		return rfail(r, "corrupt block at offset %llu: bad columns",
		    (unsigned long long)r->block_off);
	wire_reader_init(&r->main, r->raw + 4, mlen);
	wire_reader_init(&r->time, r->raw + 4 + mlen, r->rawlen - 4 - mlen);
	return 1;
}

/* Format 2: inflates the stored block, raw deflate, into exactly rawlen. */
static int
inflate_raw(struct recfile *r, size_t slen, size_t rawlen)
{
	if (!r->zready) {
		if (inflateInit2(&r->z, -15) != Z_OK)
			return -1;
		r->zready = 1;
	} else if (inflateReset(&r->z) != Z_OK)
		return -1;
	r->z.next_in = r->stored;
	r->z.avail_in = (uInt)slen;
	r->z.next_out = r->raw;
	r->z.avail_out = (uInt)rawlen;
	if (inflate(&r->z, Z_FINISH) != Z_STREAM_END || r->z.avail_in != 0 ||
	    r->z.avail_out != 0)
		return -1;
	return 0;
}

/* Reads, checks and uncompresses the next block; 0 at the end block. */
static int
block_read(struct recfile *r)
{
	uint8_t hdr[RECFILE_BLOCK_HDR];
	uint32_t kind, rawlen, slen;
	uLongf n;

	r->block_off = r->off;
	r->rawlen = r->rawoff = 0;
	wire_reader_init(&r->main, r->raw, 0);
	wire_reader_init(&r->time, r->raw, 0);
	if (read_all(r, hdr, sizeof(hdr)) == -1)
		return rfail(r, "truncated at offset %llu%s",
		    (unsigned long long)r->block_off, r->off == r->block_off ?
		    " (no end block: the recording did not end cleanly)" : "");
	kind = wire_get32(hdr);
	rawlen = wire_get32(hdr + 4);
	slen = wire_get32(hdr + 8);
	if ((kind != RECFILE_BLOCK_DATA && kind != RECFILE_BLOCK_END) ||
	    rawlen > RAW_MAX || slen > compressBound(RAW_MAX) ||
	    (kind == RECFILE_BLOCK_END && (rawlen != RECFILE_END_SIZE ||
	    slen != RECFILE_END_SIZE)))
		return rfail(r, "corrupt block at offset %llu: bad block "
		    "header", (unsigned long long)r->block_off);
	if (reserve(&r->stored, &r->storedsize, slen) == -1 ||
	    reserve(&r->raw, &r->rawsize, rawlen) == -1)
		return rfail(r, "out of memory for the block at offset %llu",
		    (unsigned long long)r->block_off);
	if (read_all(r, r->stored, slen) == -1)
		return rfail(r, "truncated at offset %llu",
		    (unsigned long long)r->block_off);
	if (wire_get32(hdr + 12) != block_crc(hdr, r->stored, slen))
		return rfail(r, "corrupt block at offset %llu: crc mismatch",
		    (unsigned long long)r->block_off);
	if (kind == RECFILE_BLOCK_END)
		return end_decode(r, r->stored) == -1 ? -1 : 0;
	if (r->hdr.version == 1) {
		n = rawlen;
		if (uncompress(r->raw, &n, r->stored, slen) != Z_OK ||
		    n != rawlen)
			return rfail(r, "corrupt block at offset %llu: bad zlib "
			    "data", (unsigned long long)r->block_off);
		r->rawlen = n;
		return 1;
	}
	if (inflate_raw(r, slen, rawlen) == -1)
		return rfail(r, "corrupt block at offset %llu: bad deflate "
		    "data", (unsigned long long)r->block_off);
	r->rawlen = rawlen;
	return columns(r);
}

/* Checks the frame header at p (avail bytes); its length in *len. */
static int
frame_check(struct recfile *r, const uint8_t *p, size_t avail, size_t *len)
{
	struct frame_hdr h;
	const char *why = NULL;

	if (avail < FRAME_HDR_SIZE)
		why = "a frame cut by the block's end";
	else if (p[2] == REC_HOST || p[2] == REC_SNAPSHOT) {
		if (p[0] != PROTO_MAGIC || p[1] != PROTO_VERSION || p[3] != 0)
			why = "bad frame header";
		h.len = wire_get32(p + 4);
	} else if (frame_hdr_decode(p, &h, &why) == 0 && !proto_msg_stream(p[2]))
		why = "a frame no tool stream holds";
	if (why == NULL && h.len > avail - FRAME_HDR_SIZE)
		why = "a frame cut by the block's end";
	if (why != NULL)
		return rfail(r, "corrupt block at offset %llu: %s",
		    (unsigned long long)r->block_off, why);
	*len = h.len;
	return 0;
}

static int
next_v1(struct recfile *r, uint8_t *type, const uint8_t **payload,
    size_t *len)
{
	const uint8_t *p;

	p = r->raw + r->rawoff;
	if (frame_check(r, p, r->rawlen - r->rawoff, len) == -1)
		return -1;
	if (p[2] == MSG_EVENT && *len >= EV_DELTA_MIN &&
	    delta_decode(&r->deltas, r->raw + r->rawoff + FRAME_HDR_SIZE) == -1)
		return rfail(r, "out of memory at offset %llu",
		    (unsigned long long)r->block_off);
	*type = p[2];
	*payload = p + FRAME_HDR_SIZE;
	r->rawoff += FRAME_HDR_SIZE + *len;
	return 1;
}

/* Format 2: a frame stored as it is, checked as format 1's are. */
static int
item_frame(struct recfile *r, uint8_t *type, const uint8_t **payload,
    size_t *len)
{
	uint8_t hdr[FRAME_HDR_SIZE];
	uint64_t n;

	*type = wire_read8(&r->main);
	n = pack_get_varint(&r->main);
	if (r->main.err || n > r->main.len - r->main.off)
		return rfail(r, "corrupt block at offset %llu: a frame cut by "
		    "the block's end", (unsigned long long)r->block_off);
	*payload = wire_take(&r->main, (size_t)n);
	frame_hdr_encode(hdr, *type, n > RECFILE_SNAPSHOT_MAX ? UINT32_MAX :
	    (uint32_t)n);
	return frame_check(r, hdr, FRAME_HDR_SIZE + (size_t)n, len);
}

/* Format 2: the task an EVENT item names; NULL after rfail. */
static struct recpack_task *
item_task(struct recfile *r, uint64_t head)
{
	struct recpack_task *t;
	int32_t tid;

	if (head != ITEM_NEW_TASK) {
		if (head - ITEM_TASK < r->tasks.n)
			return r->tasks.v[head - ITEM_TASK];
		goto bad;
	}
	tid = (int32_t)wire_read32(&r->main);
	if (r->main.err || tid <= 0 || r->tasks.n == RECFILE_TASKS_MAX)
		goto bad;
	if ((t = task_add(&r->tasks, tid)) == NULL)
		rfail(r, "out of memory at offset %llu",
		    (unsigned long long)r->block_off);
	return t;
bad:
	rfail(r, "corrupt block at offset %llu: an EVENT of no task",
	    (unsigned long long)r->block_off);
	return NULL;
}

static int
next_v2(struct recfile *r, uint8_t *type, const uint8_t **payload,
    size_t *len)
{
	struct recpack_task *t;
	const char *why;
	uint64_t head;

	head = pack_get_varint(&r->main);
	if (r->main.err)
		return rfail(r, "corrupt block at offset %llu: an item cut by "
		    "the block's end", (unsigned long long)r->block_off);
	if (head == ITEM_FRAME)
		return item_frame(r, type, payload, len) == -1 ? -1 : 1;
	if ((t = item_task(r, head)) == NULL)
		return -1;
	if (r->ev == NULL && (r->ev = malloc(RECPACK_EVENT_MAX)) == NULL)
		return rfail(r, "out of memory at offset %llu",
		    (unsigned long long)r->block_off);
	if (recpack_get(t, &r->main, &r->time, r->ev, len, &why) == -1)
		return rfail(r, "corrupt block at offset %llu: %s",
		    (unsigned long long)r->block_off, why);
	*type = MSG_EVENT;
	*payload = r->ev;
	return 1;
}

/* Whether the current block has been read to its end. */
static int
block_done(struct recfile *r)
{
	if (r->hdr.version == 1)
		return r->rawoff == r->rawlen;
	if (r->main.off < r->main.len)
		return 0;
	if (r->time.off != r->time.len)
		return rfail(r, "corrupt block at offset %llu: bytes left in "
		    "its time column", (unsigned long long)r->block_off);
	return 1;
}

int
recfile_next(struct recfile *r, uint8_t *type, const uint8_t **payload,
    size_t *len)
{
	int rv;

	if (r->failed)
		return -1;
	while ((rv = block_done(r)) != 0) {
		if (rv == -1)
			return -1;
		if (r->ended)
			return 0;
		if ((rv = block_read(r)) <= 0)
			return rv;
	}
	if (r->hdr.version == 1)
		return next_v1(r, type, payload, len);
	return next_v2(r, type, payload, len);
}

const struct recfile_header *
recfile_header(const struct recfile *r)
{
	return &r->hdr;
}

const char *
recfile_error(const struct recfile *r)
{
	return r->err;
}

const struct recfile_end *
recfile_end(const struct recfile *r)
{
	return r->ended ? &r->end : NULL;
}

uint64_t
recfile_offset(const struct recfile *r)
{
	return r->off;
}
