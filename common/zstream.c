/*
 * Deflating an agent's frames into ZDATA, and inflating them back with
 * bounded memory (zstream.h).
 */
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "zstream.h"

#define ZS_IN_MAX	(FRAME_HDR_SIZE + PROTO_MAX_PAYLOAD + ZS_STEP)

int
zs_out_init(struct zs_out *zo, int level)
{
	memset(zo, 0, sizeof(*zo));
	if ((zo->buf = malloc(FRAME_HDR_SIZE + ZS_CHUNK)) == NULL)
		return -1;
	/* Raw deflate: the zlib header and checksum would buy nothing. */
	if (deflateInit2(&zo->z, level, Z_DEFLATED, -15, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		free(zo->buf);
		zo->buf = NULL;
		return -1;
	}
	zo->ready = 1;
	return 0;
}

void
zs_out_end(struct zs_out *zo)
{
	if (zo->ready)
		deflateEnd(&zo->z);
	free(zo->buf);
	memset(zo, 0, sizeof(*zo));
}

/* Hands what deflate wrote to emit, as one ZDATA frame. */
static void
out_emit(struct zs_out *zo, zs_emit_cb *emit, void *arg)
{
	size_t n = ZS_CHUNK - zo->z.avail_out;

	if (n == 0)
		return;
	frame_hdr_encode(zo->buf, MSG_ZDATA, (uint32_t)n);
	emit(arg, zo->buf, FRAME_HDR_SIZE + n);
	zo->packed += FRAME_HDR_SIZE + n;
	zo->z.next_out = zo->buf + FRAME_HDR_SIZE;
	zo->z.avail_out = ZS_CHUNK;
}

int
zs_out_write(struct zs_out *zo, const void *p, size_t len, int sync,
    zs_emit_cb *emit, void *arg)
{
	int flush = sync ? Z_SYNC_FLUSH : Z_NO_FLUSH, rc;

	if (!zo->ready)
		return -1;
	if (sync && len == 0 && zo->since_sync == 0)
		return 0;	/* an empty sync would still cost 5 bytes */
	zo->z.next_in = (Bytef *)(uintptr_t)p;
	zo->z.avail_in = (uInt)len;
	zo->z.next_out = zo->buf + FRAME_HDR_SIZE;
	zo->z.avail_out = ZS_CHUNK;
	/*
	 * Until the input is taken and, for a sync flush, deflate left
	 * room in the output (zlib's rule for being done).
	 */
	for (;;) {
		rc = deflate(&zo->z, flush);
		if (rc != Z_OK && rc != Z_BUF_ERROR)
			return -1;
		if (zo->z.avail_out == 0) {
			out_emit(zo, emit, arg);
			continue;
		}
		if (zo->z.avail_in == 0)
			break;
	}
	out_emit(zo, emit, arg);
	zo->plain += len;
	zo->since_sync = sync ? 0 : zo->since_sync + len;
	return 0;
}

int
zs_in_init(struct zs_in *zi)
{
	memset(zi, 0, sizeof(*zi));
	if (inflateInit2(&zi->z, -15) != Z_OK)
		return -1;
	zi->ready = 1;
	return 0;
}

void
zs_in_end(struct zs_in *zi)
{
	if (zi->ready)
		inflateEnd(&zi->z);
	free(zi->buf);
	memset(zi, 0, sizeof(*zi));
}

/* Room for ZS_STEP more inflated bytes; never more than ZS_IN_MAX. */
static int
in_room(struct zs_in *zi)
{
	size_t want = zi->len + ZS_STEP;
	uint8_t *nb;

	if (want <= zi->cap)
		return 0;
	if (want > ZS_IN_MAX)
		return -1;
	if ((nb = realloc(zi->buf, want)) == NULL)
		return -1;
	zi->buf = nb;
	zi->cap = want;
	return 0;
}

/* Hands the complete frames in buf to cb and keeps the rest. */
static int
in_frames(struct zs_in *zi, zs_frame_cb *cb, void *arg, const char **why)
{
	struct frame_hdr h;
	size_t off = 0, total;

	while (zi->len - off >= FRAME_HDR_SIZE) {
		if (frame_hdr_decode(zi->buf + off, &h, why) == -1)
			return -1;
		if (h.type == MSG_ZDATA) {
			*why = "ZDATA inside the compressed stream";
			return -1;
		}
		total = FRAME_HDR_SIZE + (size_t)h.len;
		if (zi->len - off < total)
			break;
		if (cb(arg, h.type, zi->buf + off + FRAME_HDR_SIZE, h.len) ==
		    -1)
			return 1;
		off += total;
	}
	memmove(zi->buf, zi->buf + off, zi->len - off);
	zi->len -= off;
	return 0;
}

int
zs_in_feed(struct zs_in *zi, const uint8_t *p, size_t len, zs_frame_cb *cb,
    void *arg, const char **why)
{
	size_t got;
	uInt before;
	int rc, full;

	if (!zi->ready) {
		*why = "no inflate stream";
		return -1;
	}
	zi->z.next_in = (Bytef *)(uintptr_t)p;
	zi->z.avail_in = (uInt)len;
	zi->packed += len;
	do {
		if (in_room(zi) == -1) {
			*why = "out of memory inflating";
			return -1;
		}
		zi->z.next_out = zi->buf + zi->len;
		zi->z.avail_out = ZS_STEP;
		before = zi->z.avail_in;
		rc = inflate(&zi->z, Z_SYNC_FLUSH);
		if (rc == Z_STREAM_END) {
			*why = "the compressed stream ended";
			return -1;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			*why = rc == Z_MEM_ERROR ? "out of memory inflating" :
			    "the compressed stream is corrupt";
			return -1;
		}
		got = ZS_STEP - zi->z.avail_out;
		full = zi->z.avail_out == 0;
		zi->len += got;
		zi->plain += got;
		if ((rc = in_frames(zi, cb, arg, why)) != 0)
			return rc;
		if (got == 0 && zi->z.avail_in == before &&
		    zi->z.avail_in > 0) {
			*why = "the compressed stream is stuck";
			return -1;
		}
	} while (zi->z.avail_in > 0 || full);
	return 0;
}
