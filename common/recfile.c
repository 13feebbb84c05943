/*
 * Recordings (recfile.h, doc/recording.md): a writer that packs frames
 * into independently compressed, checksummed blocks, and a reader that
 * trusts nothing and says where the damage starts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#include "proto.h"
#include "recfile.h"
#include "wire.h"

#define MAGIC_LEN	8
#define HDR_FIXED	(MAGIC_LEN + 2 + 2)	/* magic, version, length */
#define HDR_FIELDS_MAX	(1 + 8 + 3 * (2 + RECFILE_STR_MAX))
/* The largest raw block: the block size plus one frame that overran it. */
#define RAW_MAX		(RECFILE_BLOCK_MAX + FRAME_HDR_SIZE + \
			    PROTO_MAX_PAYLOAD)

/*
 * EVENT frames are stored with their sequence number and time as deltas
 * from the task's previous event, and the corrected time as its
 * distance from the raw one: repeated patterns then repeat bytes, and
 * zlib takes a recording from 11 to under 4 bytes per event.  Both
 * sides keep the same table of each task's last event.
 */
#define EV_TID		0				/* in the payload */
#define EV_TCORR	17
#define EV_SEQ		(EVENT_HDR_SIZE + 4)
#define EV_TNS		(EVENT_HDR_SIZE + 12)
#define EV_DELTA_MIN	(EV_TNS + 8)	/* a payload with every field */

struct delta_ent {
	int32_t		 tid;		/* 0: free */
	uint64_t	 seq, t_ns;
};

struct delta_tab {
	struct delta_ent *v;
	size_t		 n, cap;	/* cap: 0 or a power of two */
};

struct recfile_writer {
	FILE		*fp;
	struct delta_tab deltas;
	size_t		 block_size;
	uint8_t		*raw;		/* frames waiting for a block */
	size_t		 rawlen, rawsize;
	uint8_t		*out;		/* one compressed block */
	size_t		 outsize;
	struct recfile_end counts;
	int		 failed;
	char		 err[256];
};

struct recfile {
	FILE		*fp;
	struct delta_tab deltas;
	uint64_t	 off;		/* bytes read so far */
	struct recfile_header hdr;
	uint8_t		*stored;	/* the current block as stored */
	size_t		 storedsize;
	uint8_t		*raw;		/* ...and uncompressed */
	size_t		 rawlen, rawoff, rawsize;
	uint64_t	 block_off;	/* where the current block starts */
	int		 ended;		/* read the end block */
	int		 failed;
	struct recfile_end end;
	char		 err[256];
};

static size_t
delta_slot(const struct delta_tab *d, int32_t tid)
{
	size_t i = ((uint32_t)tid * 2654435761u) & (d->cap - 1);

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

/* Compresses the waiting frames into one data block. */
static int
flush_block(struct recfile_writer *w)
{
	uLongf clen;

	if (w->rawlen == 0)
		return 0;
	if (reserve(&w->out, &w->outsize, compressBound(w->rawlen)) == -1)
		return wfail(w, "compressing a block");
	clen = w->outsize;
	if (compress2(w->out, &clen, w->raw, w->rawlen, 6) != Z_OK) {
		errno = 0;
		return wfail(w, "compressing a block");
	}
	if (write_block(w, RECFILE_BLOCK_DATA, w->out, clen, w->rawlen) == -1)
		return -1;
	w->rawlen = 0;
	return 0;
}

static size_t
header_encode(uint8_t *buf, const struct recfile_header *h)
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
	wire_put16(buf + MAGIC_LEN, RECFILE_VERSION);
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

struct recfile_writer *
recfile_create_fp(FILE *fp, const struct recfile_header *h,
    size_t block_size, char *err, size_t errsize)
{
	uint8_t hbuf[HDR_FIXED + HDR_FIELDS_MAX + 4];
	struct recfile_writer *w;

	if (block_size == 0)
		block_size = RECFILE_BLOCK_DEFAULT;
	if (block_size < RECFILE_BLOCK_MIN || block_size > RECFILE_BLOCK_MAX ||
	    !header_ok(h)) {
		errf(err, errsize, "bad block size or header strings");
		fclose(fp);
		return NULL;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		errf(err, errsize, "out of memory");
		fclose(fp);
		return NULL;
	}
	w->fp = fp;
	w->block_size = block_size;
	if (reserve(&w->raw, &w->rawsize, block_size) == -1) {
		errf(err, errsize, "out of memory");
		recfile_writer_free(w);
		return NULL;
	}
	if (write_all(w, hbuf, header_encode(hbuf, h)) == -1 ||
	    fflush(fp) == EOF) {
		errf(err, errsize, "writing the header: %s", strerror(errno));
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

int
recfile_write_frame(struct recfile_writer *w, uint8_t type,
    const void *payload, size_t len)
{
	if (w->failed)
		return -1;
	if (len > PROTO_MAX_PAYLOAD) {
		errno = EMSGSIZE;
		return wfail(w, "a frame too large");
	}
	if (w->rawlen + FRAME_HDR_SIZE + len > w->block_size &&
	    flush_block(w) == -1)
		return -1;
	if (reserve(&w->raw, &w->rawsize, w->rawlen + FRAME_HDR_SIZE + len) ==
	    -1)
		return wfail(w, "a frame");
	frame_hdr_encode(w->raw + w->rawlen, type, (uint32_t)len);
	memcpy(w->raw + w->rawlen + FRAME_HDR_SIZE, payload, len);
	if (type == MSG_EVENT && len >= EV_DELTA_MIN &&
	    delta_encode(&w->deltas, w->raw + w->rawlen + FRAME_HDR_SIZE) == -1)
		return wfail(w, "a frame");
	w->rawlen += FRAME_HDR_SIZE + len;
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
		*out = w->counts;
	return rv;
}

void
recfile_writer_free(struct recfile_writer *w)
{
	if (w == NULL)
		return;
	if (w->fp != NULL)
		fclose(w->fp);
	free(w->deltas.v);
	free(w->raw);
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
	if (wire_get16(buf + MAGIC_LEN) != RECFILE_VERSION)
		return rfail(r, "format version %u; this pmon reads version %u",
		    wire_get16(buf + MAGIC_LEN), RECFILE_VERSION);
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

struct recfile *
recfile_open(const char *path, char *err, size_t errsize)
{
	FILE *fp;

	if ((fp = fopen(path, "re")) == NULL) {
		errf(err, errsize, "%s", strerror(errno));
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
	free(r->deltas.v);
	free(r->stored);
	free(r->raw);
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

/* Reads, checks and uncompresses the next block; 0 at the end block. */
static int
block_read(struct recfile *r)
{
	uint8_t hdr[RECFILE_BLOCK_HDR];
	uint32_t kind, rawlen, slen;
	uLongf n;

	r->block_off = r->off;
	r->rawlen = r->rawoff = 0;
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
	n = rawlen;
	if (uncompress(r->raw, &n, r->stored, slen) != Z_OK || n != rawlen)
		return rfail(r, "corrupt block at offset %llu: bad zlib data",
		    (unsigned long long)r->block_off);
	r->rawlen = n;
	return 1;
}

/* The frame types a recording holds. */
static int
stream_type(uint8_t type)
{
	switch (type) {
	case MSG_TASK_INFO:
	case MSG_EVENT:
	case MSG_PROBLEM:
	case MSG_NOTICE:
	case MSG_TASK_GONE:
		return 1;
	default:
		return 0;
	}
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
	} else if (frame_hdr_decode(p, &h, &why) == 0 && !stream_type(p[2]))
		why = "a frame no tool stream holds";
	if (why == NULL && h.len > avail - FRAME_HDR_SIZE)
		why = "a frame cut by the block's end";
	if (why != NULL)
		return rfail(r, "corrupt block at offset %llu: %s",
		    (unsigned long long)r->block_off, why);
	*len = h.len;
	return 0;
}

int
recfile_next(struct recfile *r, uint8_t *type, const uint8_t **payload,
    size_t *len)
{
	const uint8_t *p;
	int rv;

	if (r->failed)
		return -1;
	while (r->rawoff == r->rawlen) {
		if (r->ended)
			return 0;
		if ((rv = block_read(r)) <= 0)
			return rv;
	}
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
