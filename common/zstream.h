/*
 * The agent's deflate stream (doc/capture.md, doc/protocol.md): after its
 * AGENT_HELLO, everything an agent sends is ordinary frames deflated into
 * one zlib stream per connection, cut into ZDATA frames.  The stream is
 * sync-flushed only at flush points, so the coordinator can decode all
 * of it then; in between, deflate sees a long run of similar frames.
 *
 * Not in the instrumentation library: tasks never compress.
 */
#ifndef PMON_ZSTREAM_H
#define PMON_ZSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#define ZS_CHUNK	(64 * 1024)	/* most compressed bytes a ZDATA */
#define ZS_STEP		(64 * 1024)	/* inflated bytes per inflate call */
#define ZS_LEVEL	6		/* deflate level (BENCHMARKS.md) */

/* Called with each complete ZDATA frame, header included. */
typedef void	zs_emit_cb(void *arg, const uint8_t *frame, size_t len);

struct zs_out {
	z_stream	 z;
	int		 ready;
	uint8_t		*buf;		/* FRAME_HDR_SIZE + ZS_CHUNK */
	size_t		 since_sync;	/* plain bytes after the last sync */
	uint64_t	 plain;		/* plain bytes, ever */
	uint64_t	 packed;	/* ZDATA bytes, headers too, ever */
};

int	zs_out_init(struct zs_out *, int level);
void	zs_out_end(struct zs_out *);
/*
 * Deflates len bytes; sync: then sync-flushes (Z_SYNC_FLUSH), so that
 * everything written so far can be inflated.  Whatever compressed bytes
 * deflate gives out go to emit as ZDATA frames.  Returns 0, or -1 when
 * zlib fails (out of memory).
 */
int	zs_out_write(struct zs_out *, const void *p, size_t len, int sync,
	    zs_emit_cb *emit, void *arg);

/*
 * Called with each frame the stream held, in order; returns 0 to go on,
 * -1 to stop (the caller may have freed the zs_in: it is not touched
 * again).
 */
typedef int	zs_frame_cb(void *arg, uint8_t type, const uint8_t *payload,
		    size_t len);

struct zs_in {
	z_stream	 z;
	int		 ready;
	uint8_t		*buf;		/* inflated, not yet a whole frame */
	size_t		 len;
	size_t		 cap;
	uint64_t	 packed;	/* ZDATA payload bytes, ever */
	uint64_t	 plain;		/* inflated bytes, ever */
};

int	zs_in_init(struct zs_in *);
void	zs_in_end(struct zs_in *);
/*
 * Inflates one ZDATA payload, at most ZS_STEP bytes per step, and hands
 * every frame that is complete to cb.  Memory stays below one frame of
 * the largest size plus ZS_STEP, whatever the input claims.  Returns 0;
 * 1 when cb stopped; -1 with *why when the stream does not inflate, or
 * a frame in it has a bad header or is itself a ZDATA.
 */
int	zs_in_feed(struct zs_in *, const uint8_t *p, size_t len,
	    zs_frame_cb *cb, void *arg, const char **why);

#endif
