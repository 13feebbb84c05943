/*
 * Fuzzes what a recording can make pmon replay do (doc/recording.md).
 * The first byte picks what the rest is:
 *
 *	0: a recording file, of either format, read by common/recfile.c:
 *	   every frame it returns has a header the reader checked, and it
 *	   ends cleanly or with an error naming an offset inside the input;
 *	odd: frames (wire headers and payloads), written into a recording
 *	   of format 2 in memory with small blocks; even: format 1.  Read
 *	   back, every frame is the one written, byte for byte, until the
 *	   first one no recording holds (a type or length the reader
 *	   refuses), and all of them when there is none; they are served
 *	   by the replay's decoders (coord_replay_frame) to a real
 *	   coordinator state: task table, state model and requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "coord.h"
#include "log.h"
#include "proto.h"
#include "recfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct event_base *base;

/* The frames mode 1 wrote, in order (into the input). */
struct wframe {
	uint8_t		 type;
	const uint8_t	*p;
	size_t		 len;
};

static struct wframe	*wf;
static size_t		 nwf;

/* Whether the reader takes a frame of this type and length. */
static int
frame_valid(uint8_t type, size_t len)
{
	uint8_t hdr[FRAME_HDR_SIZE];
	struct frame_hdr h;
	const char *why;

	if (type == REC_HOST || type == REC_SNAPSHOT)
		return 1;
	frame_hdr_encode(hdr, type, (uint32_t)len);
	if (frame_hdr_decode(hdr, &h, &why) == -1)
		return 0;
	return type == MSG_TASK_INFO || type == MSG_EVENT ||
	    type == MSG_PROBLEM || type == MSG_NOTICE || type == MSG_TASK_GONE;
}

/* A frame read back in mode 1: the n-th written, byte for byte. */
static void
check_frame(size_t n, uint8_t type, const uint8_t *p, size_t len)
{
	if (n >= nwf || wf[n].type != type || wf[n].len != len ||
	    (len > 0 && memcmp(wf[n].p, p, len) != 0))
		__builtin_trap();
}

/* Reading stopped after n frames: at the first invalid one, or at the end. */
static void
check_stop(size_t n, int rv)
{
	size_t i;

	for (i = 0; i < nwf && frame_valid(wf[i].type, wf[i].len); i++)
		continue;
	if (n != i || (rv == 0) != (i == nwf))
		__builtin_trap();
}

/*
 * Reads a recording; traps on anything the reader must never do.  With
 * c (mode 1), checks the frames against those written.
 */
static void
read_all(const uint8_t *data, size_t size, struct coord *c)
{
	struct recfile *r;
	const uint8_t *p;
	const char *why, *at;
	char err[256];
	uint8_t type;
	size_t len, n = 0;
	int rv;
	FILE *fp;

	if ((fp = size > 0 ? fmemopen((void *)data, size, "r") :
	    fopen("/dev/null", "r")) == NULL)
		return;
	if ((r = recfile_open_fp(fp, err, sizeof(err))) == NULL) {
		if (c != NULL)
			__builtin_trap();	/* its own writer's header */
		return;
	}
	while ((rv = recfile_next(r, &type, &p, &len)) == 1) {
		if (len > PROTO_MAX_PAYLOAD)
			__builtin_trap();
		if (c != NULL) {
			check_frame(n++, type, p, len);
			coord_replay_frame(c, type, p, len, &why);
		}
	}
	if (c != NULL)
		check_stop(n, rv);
	if (rv == -1) {
		at = strstr(recfile_error(r), "offset ");
		if (at != NULL && strtoull(at + 7, NULL, 10) > size)
			__builtin_trap();
	} else if (recfile_end(r) == NULL)
		__builtin_trap();
	recfile_close(r);
}

/* Mode 1: the input's frames through the writer, the reader, a replay. */
static void
frames(const uint8_t *data, size_t size, unsigned version)
{
	static const char *const queries[] = { "snapshot", "ps", "problems",
	    "queues", "hosts", "groups" };
	struct recfile_header h = { .version = (uint16_t)version,
	    .proto = PROTO_VERSION };
	struct request_msg req = { .id = 1, .flags = REQUEST_JSON };
	struct recfile_writer *w;
	struct coord c;
	char *buf = NULL, *body, err[256];
	size_t bsize = 0, off = 0, len, i, n;
	FILE *fp;

	if ((fp = open_memstream(&buf, &bsize)) == NULL)
		return;
	if ((w = recfile_create_fp(fp, &h, RECFILE_BLOCK_MIN, err,
	    sizeof(err))) == NULL) {
		free(buf);
		return;
	}
	nwf = 0;
	if ((wf = malloc((size / FRAME_HDR_SIZE + 1) * sizeof(*wf))) == NULL) {
		recfile_writer_free(w);
		free(buf);
		return;
	}
	while (size - off >= FRAME_HDR_SIZE) {
		len = (size_t)data[off + 4] << 24 | data[off + 5] << 16 |
		    data[off + 6] << 8 | data[off + 7];
		if (len > size - off - FRAME_HDR_SIZE)
			break;
		if (recfile_write_frame(w, data[off + 2], data + off +
		    FRAME_HDR_SIZE, len) == -1)
			__builtin_trap();	/* in memory, nothing fails */
		wf[nwf].type = data[off + 2];
		wf[nwf].p = data + off + FRAME_HDR_SIZE;
		wf[nwf++].len = len;
		off += FRAME_HDR_SIZE + len;
	}
	recfile_finish(w, NULL);
	recfile_writer_free(w);
	memset(&c, 0, sizeof(c));
	if (coord_init(&c, base) == 0) {
		read_all((const uint8_t *)buf, bsize, &c);
		for (i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
			snprintf(req.text, sizeof(req.text), "%s", queries[i]);
			coord_request_run(&c, NULL, &req, &body, &n);
			if (body == NULL || strlen(body) != n)
				__builtin_trap();
			free(body);
		}
	}
	coord_free(&c);
	free(buf);
	free(wf);
	wf = NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (base == NULL) {
		log_init("fuzz_recfile", 0);
		if ((base = event_base_new()) == NULL)
			return 0;
	}
	if (size == 0)
		return 0;
	if (data[0] == 0)
		read_all(data + 1, size - 1, NULL);
	else
		frames(data + 1, size - 1, data[0] % 2 ? 2 : 1);
	return 0;
}
