/*
 * Protects the recording format (common/recfile.c, doc/recording.md):
 * frames come back as written, in order, with the end block's counts;
 * a file cut at any byte, or with any one bit flipped, gives back a
 * prefix of the frames and then an error naming an offset, never a
 * clean end and never a frame that was not written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "proto.h"
#include "recfile.h"
#include "unit.h"

#define NFRAMES	200

struct frame {
	uint8_t		type;
	size_t		len;
	uint8_t		payload[200];
};

static struct frame frames[NFRAMES];

/* Frames of every kind a recording holds, of valid sizes. */
static void
make_frames(void)
{
	static const uint8_t types[] = { MSG_TASK_INFO, MSG_EVENT,
	    MSG_EVENT, MSG_PROBLEM, MSG_NOTICE, MSG_TASK_GONE, REC_HOST };
	size_t i, j;

	for (i = 0; i < NFRAMES; i++) {
		frames[i].type = types[i % sizeof(types)];
		switch (frames[i].type) {
		case MSG_EVENT:
			frames[i].len = 73 + i % 100;
			break;
		case MSG_TASK_GONE:
			frames[i].len = 4;
			break;
		default:
			frames[i].len = 24 + i % 50;
		}
		for (j = 0; j < frames[i].len; j++)
			frames[i].payload[j] = (uint8_t)(i * 7 + j * 13 +
			    (j % 5 == 0 ? 0 : i));
	}
}

/* Writes every frame into a malloc'ed buffer; returns its size. */
static size_t
write_file(uint8_t **buf, size_t block)
{
	struct recfile_header h = { .proto = PROTO_VERSION,
	    .created_ns = 12345 };
	struct recfile_writer *w;
	struct recfile_end end;
	char err[256];
	size_t size = 0, i;
	FILE *fp;

	strcpy(h.writer, "unit");
	strcpy(h.clock, "clc");
	strcpy(h.source, "here:/tmp");
	make_frames();
	fp = open_memstream((char **)buf, &size);
	CU_ASSERT_FATAL(fp != NULL);
	w = recfile_create_fp(fp, &h, block, err, sizeof(err));
	CU_ASSERT_FATAL(w != NULL);
	for (i = 0; i < NFRAMES; i++)
		CU_ASSERT_FATAL(recfile_write_frame(w, frames[i].type,
		    frames[i].payload, frames[i].len) == 0);
	CU_ASSERT_FATAL(recfile_finish(w, &end) == 0);
	recfile_writer_free(w);
	CU_ASSERT(end.frames == NFRAMES);
	CU_ASSERT(end.events == 2 * (NFRAMES / 7) + (NFRAMES % 7 > 2 ? 2 :
	    NFRAMES % 7 > 1 ? 1 : 0));
	CU_ASSERT(end.file_bytes == size);
	return size;
}

/* A stream of len bytes of buf (fmemopen cannot make an empty one). */
static FILE *
open_bytes(const uint8_t *buf, size_t len)
{
	return len > 0 ? fmemopen((void *)buf, len, "r") :
	    fopen("/dev/null", "r");
}

/*
 * Reads buf[0..len): how many frames came back, each checked against
 * what was written; the result of the last recfile_next (or -2 when the
 * header was refused) and the error.
 */
static size_t
read_file(const uint8_t *buf, size_t len, int *rv, char *err, size_t size)
{
	struct recfile *r;
	const uint8_t *p;
	size_t n = 0, plen;
	uint8_t type;

	if ((r = recfile_open_fp(open_bytes(buf, len), err, size)) == NULL) {
		*rv = -2;
		return 0;
	}
	while ((*rv = recfile_next(r, &type, &p, &plen)) == 1) {
		CU_ASSERT_FATAL(n < NFRAMES);
		CU_ASSERT_FATAL(type == frames[n].type &&
		    plen == frames[n].len &&
		    memcmp(p, frames[n].payload, plen) == 0);
		n++;
	}
	if (*rv == 0)
		CU_ASSERT(recfile_end(r) != NULL &&
		    recfile_end(r)->frames == n);
	snprintf(err, size, "%s", recfile_error(r));
	recfile_close(r);
	return n;
}

static void
test_roundtrip(void)
{
	uint8_t *buf = NULL;
	size_t size, n;
	char err[256];
	int rv;

	size = write_file(&buf, RECFILE_BLOCK_MIN);
	n = read_file(buf, size, &rv, err, sizeof(err));
	CU_ASSERT(rv == 0);
	CU_ASSERT(n == NFRAMES);
	free(buf);
	/* One block for everything. */
	size = write_file(&buf, 0);
	n = read_file(buf, size, &rv, err, sizeof(err));
	CU_ASSERT(rv == 0 && n == NFRAMES);
	free(buf);
}

static void
test_header(void)
{
	uint8_t *buf = NULL;
	struct recfile *r;
	char err[256];
	size_t size;

	size = write_file(&buf, 0);
	r = recfile_open_fp(open_bytes(buf, size), err, sizeof(err));
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT(strcmp(recfile_header(r)->writer, "unit") == 0);
	CU_ASSERT(strcmp(recfile_header(r)->clock, "clc") == 0);
	CU_ASSERT(recfile_header(r)->created_ns == 12345);
	recfile_close(r);
	memcpy(buf, "NOTAREC!", 8);
	CU_ASSERT(recfile_open_fp(open_bytes(buf, size), err,
	    sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "not a pmon recording") != NULL);
	free(buf);
}

/* The offset an error names: "... at offset N...". */
static long
error_offset(const char *err)
{
	const char *s = strstr(err, "at offset ");

	return s != NULL ? strtol(s + 10, NULL, 10) : -1;
}

static void
test_truncated_everywhere(void)
{
	uint8_t *buf = NULL;
	size_t size, len, n, last = 0;
	char err[256];
	int rv;

	size = write_file(&buf, RECFILE_BLOCK_MIN);
	for (len = 0; len < size; len++) {
		n = read_file(buf, len, &rv, err, sizeof(err));
		CU_ASSERT_FATAL(rv == -1 || rv == -2);
		CU_ASSERT(strstr(err, "truncated at offset ") != NULL ||
		    (len < 8 && strstr(err, "truncated") != NULL));
		CU_ASSERT(error_offset(err) >= 0 &&
		    (size_t)error_offset(err) <= len);
		/* A longer prefix never gives fewer frames. */
		CU_ASSERT(n >= last);
		last = n;
	}
	CU_ASSERT(last == NFRAMES);	/* all but the end block */
	free(buf);
}

static void
test_flipped_bits(void)
{
	uint8_t *buf = NULL;
	size_t size, pos;
	char err[256];
	int rv, bit;

	size = write_file(&buf, RECFILE_BLOCK_MIN);
	for (pos = 0; pos < size; pos++)
		for (bit = 0; bit < 8; bit += 3) {
			buf[pos] ^= (uint8_t)(1 << bit);
			read_file(buf, size, &rv, err, sizeof(err));
			CU_ASSERT_FATAL(rv != 0);
			CU_ASSERT(rv == -2 || (error_offset(err) >= 0 &&
			    (size_t)error_offset(err) <= pos));
			buf[pos] ^= (uint8_t)(1 << bit);
		}
	free(buf);
}

static void
test_writer_limits(void)
{
	struct recfile_header h = { .proto = PROTO_VERSION };
	char err[256];
	FILE *fp;

	fp = fopen("/dev/null", "w");
	CU_ASSERT_FATAL(fp != NULL);
	CU_ASSERT(recfile_create_fp(fp, &h, 10, err, sizeof(err)) == NULL);
	CU_ASSERT(recfile_create("/nonexistent/dir/x.pmr", &h, 0, err,
	    sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "/nonexistent/dir/x.pmr") != NULL);
}

static CU_TestInfo recfile_tests[] = {
	{ "round trip", test_roundtrip },
	{ "header and magic", test_header },
	{ "truncated at every byte", test_truncated_everywhere },
	{ "a flipped bit anywhere", test_flipped_bits },
	{ "writer limits", test_writer_limits },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo recfile_suites[] = {
	{ "recfile", NULL, NULL, NULL, NULL, recfile_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(recfile_suites)
