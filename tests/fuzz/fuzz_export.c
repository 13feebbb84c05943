/*
 * Fuzzes pmon export from a recording (doc/exports.md): whatever frames
 * a recording holds, the export either writes a finished file or fails
 * with a message, never crashes, a Chrome export is always valid JSON,
 * and the times of a Paje export never go backwards, also when its
 * reordering window is full.  The first input byte picks the format
 * (chrome, paje, otf2, shiviz; bit 2: the smallest --window); the rest
 * are frames (8-byte wire headers and payloads), which are written into
 * a real recording (common/recfile) that the export then reads with -i,
 * as a user would.
 */
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "pmon-tool.h"
#include "proto.h"
#include "recfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], in[96], out[96];

/* The pmon command's error printers (tools/pmon.c), silent here. */
int
tool_error(const char *fmt, ...)
{
	(void)fmt;
	return 1;
}

int
tool_usage_error(const char *fmt, ...)
{
	(void)fmt;
	return 2;
}

/* ...its end of a live stream, never reached from a recording... */
int
tool_stream_end(const struct pmon *p)
{
	(void)p;
	return 0;
}

/* ...and its stop flag: a recording is read to its end, never waited on. */
volatile sig_atomic_t tool_stop;

void
tool_catch_stop(void)
{
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

/* The input's frames into a recording at in. */
static int
write_recording(const uint8_t *data, size_t size)
{
	struct recfile_header h = { .proto = PROTO_VERSION };
	struct recfile_writer *w;
	char err[256];
	size_t off = 0, len;
	int rv;

	if ((w = recfile_create(in, &h, RECFILE_BLOCK_MIN, err,
	    sizeof(err))) == NULL)
		return -1;
	while (size - off >= FRAME_HDR_SIZE) {
		len = (size_t)data[off + 4] << 24 | data[off + 5] << 16 |
		    data[off + 6] << 8 | data[off + 7];
		if (len > size - off - FRAME_HDR_SIZE)
			break;
		recfile_write_frame(w, data[off + 2], data + off +
		    FRAME_HDR_SIZE, len);
		off += FRAME_HDR_SIZE + len;
	}
	rv = recfile_finish(w, NULL);
	recfile_writer_free(w);
	return rv;
}

/* Every event line's time ("N TIME ...", N >= 5) is at least the last. */
static int
paje_ordered(const char *path)
{
	char line[4096], *end;
	double t, last = -1e300;
	FILE *fp;
	int rv = 1;

	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (strtol(line, &end, 10) < 5 || *end != ' ')
			continue;
		t = strtod(end + 1, NULL);
		if (t < last)
			rv = 0;
		last = t;
	}
	fclose(fp);
	return rv;
}

static void
cleanup(void)
{
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = { "chrome", "paje", "otf2",
	    "shiviz" };
	static char window[] = "16";
	struct cmd_args a;
	const char *fmt;
	json_t *doc;
	int rv;

	if (dir[0] == '\0') {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_export.XXXXXX");
		if (mkdtemp(dir) == NULL)
			abort();
		snprintf(in, sizeof(in), "%s/in.pmr", dir);
		snprintf(out, sizeof(out), "%s/out", dir);
		atexit(cleanup);
	}
	if (size == 0)
		return 0;
	fmt = formats[data[0] % 4];
	if (write_recording(data + 1, size - 1) == -1)
		return 0;
	memset(&a, 0, sizeof(a));
	a.arg['f'] = (char *)fmt;
	a.arg['i'] = in;
	a.arg['o'] = out;
	if (data[0] & 4)
		a.arg['w'] = window;
	rv = cmd_export_entry.exec(&a);
	if (rv == 0 && strcmp(fmt, "chrome") == 0) {
		if ((doc = json_load_file(out, 0, NULL)) == NULL)
			__builtin_trap();
		json_decref(doc);
	}
	if (rv == 0 && strcmp(fmt, "paje") == 0 && !paje_ordered(out))
		__builtin_trap();
	nftw(out, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	return 0;
}
