/*
 * bench_record: what the recording writer and reader cost per event, in
 * each format (doc/recording.md, BENCHMARKS.md, "make bench-record").
 *
 *	bench_record [-i FILE] [-t tasks] [-R rounds] [-r runs] [-b block]
 *	    [-d dir] [-f format]
 *
 * The frames come from a recording (-i: every frame it holds, read
 * once into memory) or are made up in the shape of tests/progs/storm
 * (-t tasks, -R rounds: in each round every task makes pvm_initsend,
 * pvm_pkint and pvm_send to its successor, then every task pvm_recv(-1)
 * of its predecessor's message and pvm_upkint, begin and end, with times
 * a few microseconds apart).  Each run writes them all with recfile_write_frame
 * into a file in -d (default $TMPDIR or /tmp), in format 1 and then 2,
 * and reads each file back with recfile_next; the CPU time of this
 * process (user and system, CLOCK_PROCESS_CPUTIME_ID) gives events per
 * CPU second of the writer alone (its blocks, zlib and the file writes
 * included) and of the reader.  Then pmon record's path in this process
 * without its socket: the frames as the coordinator sends them, fed in
 * 64 KiB reads to libpmon (pmon_feed), whose frame callback writes them,
 * as pmon record's does (REC_HOST and REC_SNAPSHOT, which pmon record
 * makes itself, written directly).  Once per format the frames read back are
 * compared byte for byte with those written.  -f 1 or -f 2: that format
 * only.  It prints the median of -r runs per format, and last (without
 * -f):
 *	record_writer v1_ev_s=W1 v2_ev_s=W2 v1_B_ev=B1 v2_B_ev=B2
 *	    v1_read_ev_s=R1 v2_read_ev_s=R2
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmon-internal.h"
#include "pmon.h"
#include "proto.h"
#include "recfile.h"
#include "record.h"
#include "wire.h"

#define RUNS_MAX	51
#define READ_CHUNK	(64 * 1024)	/* what one read of pmon record gets */

/* Every frame, one after the other: u8 type, u32 length, the payload. */
struct frames {
	uint8_t		*buf;
	size_t		 len, cap;
	uint64_t	 n, events;
};

static void
frames_add(struct frames *f, uint8_t type, const uint8_t *p, size_t len)
{
	if (f->cap - f->len < 5 + len) {
		f->cap = 2 * f->cap + 5 + len + (1 << 20);
		if ((f->buf = realloc(f->buf, f->cap)) == NULL)
			err(1, "realloc");
	}
	f->buf[f->len] = type;
	wire_put32(f->buf + f->len + 1, (uint32_t)len);
	memcpy(f->buf + f->len + 5, p, len);
	f->len += 5 + len;
	f->n++;
	f->events += type == MSG_EVENT;
}

static void
frames_load(struct frames *f, const char *path)
{
	struct recfile *r;
	const uint8_t *p;
	char e[512];
	uint8_t type;
	size_t len;
	int rv;

	if ((r = recfile_open(path, e, sizeof(e))) == NULL)
		errx(1, "%s: %s", path, e);
	while ((rv = recfile_next(r, &type, &p, &len)) == 1)
		frames_add(f, type, p, len);
	if (rv == -1)
		errx(1, "%s: %s", path, recfile_error(r));
	recfile_close(r);
}

/* One storm task's state while the stream is made up. */
struct gtask {
	int32_t		 tid;
	uint64_t	 seq;
	uint64_t	 send_seq;	/* of its last pvm_send's begin */
};

static uint64_t	 gclock = 1700000000000000000ULL;
static uint32_t	 lcg = 12345;

/* A few microseconds, jittered. */
static uint64_t
tick(void)
{
	lcg = lcg * 1103515245u + 12345u;
	return 300 + (lcg >> 8) % 4000;
}

static void
gen_event(struct frames *f, struct gtask *t, unsigned call, unsigned phase,
    int32_t peer, int32_t tag, int32_t bytes, uint8_t rflags,
    const struct gtask *match)
{
	uint8_t buf[EVENT_HDR_SIZE + RECORD_HDR_SIZE];
	struct record r;

	memset(&r, 0, sizeof(r));
	r.call = (uint8_t)call;
	r.phase = (uint8_t)phase;
	r.seq = ++t->seq;
	r.t_ns = gclock += tick();
	r.peer = peer;
	r.tag = tag;
	r.ctx = 0;
	r.bytes = bytes;
	r.inst = -1;
	r.flags = rflags;
	r.len = RECORD_HDR_SIZE;
	wire_put32(buf, (uint32_t)t->tid);
	buf[4] = match != NULL ? EVENT_MATCHED : 0;
	wire_put32(buf + 5, match != NULL ? (uint32_t)match->tid : 0);
	wire_put64(buf + 9, match != NULL ? match->send_seq : 0);
	wire_put64(buf + 17, r.t_ns);
	record_encode(buf + EVENT_HDR_SIZE, &r, NULL);
	frames_add(f, MSG_EVENT, buf, sizeof(buf));
}

/* The first half of a task's round of storm.c: pack and send to next. */
static void
gen_send(struct frames *f, struct gtask *t, const struct gtask *next)
{
	gen_event(f, t, PMON_CALL_initsend, PMON_BEGIN, -1, -1, 0, 0, NULL);
	gen_event(f, t, PMON_CALL_initsend, PMON_END, -1, -1, 0, 0, NULL);
	gen_event(f, t, PMON_CALL_pkint, PMON_BEGIN, -1, -1, 4, 0, NULL);
	gen_event(f, t, PMON_CALL_pkint, PMON_END, -1, -1, 4, 0, NULL);
	gen_event(f, t, PMON_CALL_send, PMON_BEGIN, next->tid, 2, 4, 0,
	    NULL);
	t->send_seq = t->seq;
	gen_event(f, t, PMON_CALL_send, PMON_END, next->tid, 2, 4, 0, NULL);
}

/* The second half: receive prev's message and unpack it. */
static void
gen_recv(struct frames *f, struct gtask *t, const struct gtask *prev)
{
	gen_event(f, t, PMON_CALL_recv, PMON_BEGIN, -1, 2, 0, 0, NULL);
	gen_event(f, t, PMON_CALL_recv, PMON_END, prev->tid, 2, 4, RECORD_MSG,
	    prev);
	gen_event(f, t, PMON_CALL_upkint, PMON_BEGIN, -1, -1, 4, 0, NULL);
	gen_event(f, t, PMON_CALL_upkint, PMON_END, -1, -1, 4, 0, NULL);
}

static void
frames_storm(struct frames *f, unsigned ntasks, unsigned rounds)
{
	struct gtask *t;
	uint8_t info[64], *p;
	unsigned i, k;

	if ((t = calloc(ntasks, sizeof(*t))) == NULL)
		err(1, "calloc");
	for (i = 0; i < ntasks; i++) {
		t[i].tid = 0x40001 + (int32_t)i;
		memset(info, 0, sizeof(info));
		wire_put32(info, (uint32_t)t[i].tid);
		wire_put32(info + 4, (uint32_t)(i ? t[0].tid : 0));
		wire_put32(info + 8, 1000 + i);
		p = wire_putstr(info + 20, "host1");
		p = wire_putstr(p, "storm");
		frames_add(f, MSG_TASK_INFO, info, (size_t)(p - info));
	}
	for (k = 0; k < rounds; k++) {
		for (i = 0; i < ntasks; i++)
			gen_send(f, &t[i], &t[(i + 1) % ntasks]);
		for (i = 0; i < ntasks; i++)
			gen_recv(f, &t[i], &t[(i + ntasks - 1) % ntasks]);
	}
	free(t);
}

/*
 * The frames as they come on the wire, REC_* frames left out (the
 * stream holds them in place, as a zero-length gap): each frame's offset
 * in the wire bytes is where libpmon's frames end before it.
 */
struct wire {
	uint8_t		*buf;
	size_t		 len;
};

static void
wire_build(struct wire *wi, const struct frames *f)
{
	size_t off, len;

	if ((wi->buf = malloc(f->len + 3 * f->n)) == NULL)
		err(1, "malloc");
	wi->len = 0;
	for (off = 0; off < f->len; off += 5 + len) {
		len = wire_get32(f->buf + off + 1);
		if (f->buf[off] >= REC_HOST)
			continue;
		frame_hdr_encode(wi->buf + wi->len, f->buf[off],
		    (uint32_t)len);
		memcpy(wi->buf + wi->len + FRAME_HDR_SIZE, f->buf + off + 5,
		    len);
		wi->len += FRAME_HDR_SIZE + len;
	}
}

static void
lib_frame(int type, const void *payload, size_t len, void *arg)
{
	struct recfile_writer *w = arg;

	if (recfile_write_frame(w, (uint8_t)type, payload, len) == -1)
		errx(1, "%s", recfile_writer_error(w));
}

/*
 * pmon record's path: wire bytes through libpmon into the writer.  The
 * REC_* frames of f are written where they stood (before the wire
 * frame that followed them).
 */
static void
lib_all(const struct frames *f, const struct wire *wi, const char *path,
    unsigned version, size_t block)
{
	struct recfile_header h = { .version = (uint16_t)version,
	    .proto = PROTO_VERSION };
	struct pmon_callbacks cb = { .frame = lib_frame };
	struct recfile_writer *w;
	struct pmon *p;
	size_t off, woff = 0, wnext = 0, len, n;
	char e[512];

	if ((w = recfile_create(path, &h, block, e, sizeof(e))) == NULL)
		errx(1, "%s", e);
	if ((p = pmon_new()) == NULL)
		errx(1, "out of memory");
	pmon_set_callbacks(p, &cb, w);
	for (off = 0; off < f->len; off += 5 + len) {
		len = wire_get32(f->buf + off + 1);
		if (f->buf[off] < REC_HOST) {
			wnext += FRAME_HDR_SIZE + len;
			continue;
		}
		for (; woff < wnext; woff += n) {
			n = wnext - woff < READ_CHUNK ? wnext - woff :
			    READ_CHUNK;
			if (pmon_feed(p, wi->buf + woff, n) == -1)
				errx(1, "libpmon: %s", pmon_error(p));
		}
		lib_frame(f->buf[off], f->buf + off + 5, len, w);
	}
	for (; woff < wi->len; woff += n) {
		n = wi->len - woff < READ_CHUNK ? wi->len - woff : READ_CHUNK;
		if (pmon_feed(p, wi->buf + woff, n) == -1)
			errx(1, "libpmon: %s", pmon_error(p));
	}
	if (recfile_finish(w, NULL) == -1)
		errx(1, "%s: %s", path, recfile_writer_error(w));
	recfile_writer_free(w);
	pmon_free(p);
}

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes every frame in the given format; the file's size. */
static uint64_t
bench_write(const struct frames *f, const char *path, unsigned version,
    size_t block)
{
	struct recfile_header h = { .version = (uint16_t)version,
	    .proto = PROTO_VERSION };
	struct recfile_writer *w;
	struct recfile_end end;
	char e[512];
	size_t off;

	snprintf(h.writer, sizeof(h.writer), "bench_record");
	snprintf(h.clock, sizeof(h.clock), "as served");
	if ((w = recfile_create(path, &h, block, e, sizeof(e))) == NULL)
		errx(1, "%s", e);
	for (off = 0; off < f->len; off += 5 + wire_get32(f->buf + off + 1))
		if (recfile_write_frame(w, f->buf[off], f->buf + off + 5,
		    wire_get32(f->buf + off + 1)) == -1)
			errx(1, "%s: %s", path, recfile_writer_error(w));
	if (recfile_finish(w, &end) == -1)
		errx(1, "%s: %s", path, recfile_writer_error(w));
	recfile_writer_free(w);
	return end.file_bytes;
}

/* Reads the file back; with check, compares every frame with f's. */
static void
bench_read(const struct frames *f, const char *path, int check)
{
	struct recfile *r;
	const uint8_t *p;
	char e[512];
	uint8_t type;
	size_t len, off = 0;
	uint64_t n = 0;
	int rv;

	if ((r = recfile_open(path, e, sizeof(e))) == NULL)
		errx(1, "%s: %s", path, e);
	while ((rv = recfile_next(r, &type, &p, &len)) == 1) {
		if (check && (off >= f->len || type != f->buf[off] ||
		    len != wire_get32(f->buf + off + 1) ||
		    memcmp(p, f->buf + off + 5, len) != 0))
			errx(1, "%s: frame %llu differs from the one written",
			    path, (unsigned long long)n);
		off += 5 + len;
		n++;
	}
	if (rv == -1)
		errx(1, "%s: %s", path, recfile_error(r));
	if (n != f->n)
		errx(1, "%s: %llu frames read, %llu written", path,
		    (unsigned long long)n, (unsigned long long)f->n);
	recfile_close(r);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_record [-i file] [-t tasks] "
	    "[-R rounds] [-r runs] [-b block] [-d dir] [-f format]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct frames f = { 0 };
	const char *in = NULL, *dir = getenv("TMPDIR");
	double wr[2][RUNS_MAX], rd[2][RUNS_MAX], lb[2][RUNS_MAX], t0;
	double med[2][3];
	struct wire wi;
	uint64_t size[2] = { 0, 0 };
	unsigned ntasks = 8, rounds = 50000, v, only = 0;
	size_t block = 0;
	char path[2][4096];
	int runs = 5, c, i;

	while ((c = getopt(argc, argv, "b:d:f:i:r:R:t:")) != -1) {
		switch (c) {
		case 'b': block = strtoul(optarg, NULL, 10); break;
		case 'f': only = (unsigned)atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'i': in = optarg; break;
		case 'r': runs = atoi(optarg); break;
		case 'R': rounds = (unsigned)atoi(optarg); break;
		case 't': ntasks = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
	if (runs < 1 || runs > RUNS_MAX || ntasks < 2 || rounds < 1 ||
	    only > 2)
		usage();
	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if (in != NULL)
		frames_load(&f, in);
	else
		frames_storm(&f, ntasks, rounds);
	if (f.events == 0)
		errx(1, "no events to write");
	wire_build(&wi, &f);
	printf("bench_record: %llu frames, %llu events, %.1f wire bytes per "
	    "frame, from %s\n", (unsigned long long)f.n,
	    (unsigned long long)f.events, (double)(f.len - 5 * f.n + 8 * f.n) /
	    (double)f.n, in != NULL ? in : "a made-up storm");
	for (v = 0; v < 2; v++) {
		if (only != 0 && only != v + 1)
			continue;
		snprintf(path[v], sizeof(path[v]), "%s/bench_record.%ld.v%u.pmr",
		    dir, (long)getpid(), v + 1);
		lib_all(&f, &wi, path[v], v + 1, block);
		bench_read(&f, path[v], 1);
		bench_write(&f, path[v], v + 1, block);
		bench_read(&f, path[v], 1);
	}
	for (i = 0; i < runs; i++)
		for (v = 0; v < 2; v++) {
			if (only != 0 && only != v + 1)
				continue;
			t0 = cpu_now();
			size[v] = bench_write(&f, path[v], v + 1, block);
			wr[v][i] = (double)f.events / (cpu_now() - t0);
			t0 = cpu_now();
			bench_read(&f, path[v], 0);
			rd[v][i] = (double)f.events / (cpu_now() - t0);
			t0 = cpu_now();
			lib_all(&f, &wi, path[v], v + 1, block);
			lb[v][i] = (double)f.events / (cpu_now() - t0);
		}
	for (v = 0; v < 2; v++) {
		if (only != 0 && only != v + 1)
			continue;
		med[v][0] = median(wr[v], runs);
		med[v][1] = median(rd[v], runs);
		med[v][2] = median(lb[v], runs);
		printf("format %u: write %.2f M events/CPU s, read %.2f M "
		    "events/CPU s, libpmon and write %.2f M events/CPU s, "
		    "%llu bytes, %.2f B/event (median of %d)\n", v + 1,
		    med[v][0] / 1e6, med[v][1] / 1e6, med[v][2] / 1e6,
		    (unsigned long long)size[v], (double)size[v] /
		    (double)f.events, runs);
		unlink(path[v]);
	}
	if (only != 0)
		return 0;
	printf("record_writer v1_ev_s=%.0f v2_ev_s=%.0f v1_B_ev=%.2f "
	    "v2_B_ev=%.2f v1_read_ev_s=%.0f v2_read_ev_s=%.0f "
	    "v1_lib_ev_s=%.0f v2_lib_ev_s=%.0f\n", med[0][0], med[1][0],
	    (double)size[0] / (double)f.events, (double)size[1] /
	    (double)f.events, med[0][1], med[1][1], med[0][2], med[1][2]);
	free(wi.buf);
	free(f.buf);
	return 0;
}
