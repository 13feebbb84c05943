/*
 * Recordings: the stream a subscribed tool receives, in a file
 * (doc/recording.md).  pmon record writes one; pmon-coordd -R serves one
 * to tools as if live.
 *
 * Layout, all integers big-endian:
 *
 *	header	"PMONREC\n", u16 format version, u16 length of the fields,
 *		the fields (u8 protocol version, u64 created, str writer,
 *		str clock, str source), u32 crc32 of everything before it
 *	blocks	u32 kind (REC_BLOCK_DATA or REC_BLOCK_END), u32 raw length,
 *		u32 stored length, u32 crc32 of those 12 bytes and the
 *		stored bytes, then the stored bytes
 *
 * A data block is compressed whole (format 1: a zlib stream; format 2:
 * raw deflate), so a damaged block loses nothing before it.  Format 1
 * holds whole frames (the wire's 8-byte header and payload; an EVENT's
 * seq and time stored as deltas from its task's previous event);
 * format 2, the writer's, items in two columns: every frame but EVENT
 * as it is, each EVENT packed against its task's earlier ones
 * (common/recpack.h).  The end block is stored raw: the counts of
 * struct recfile_end.  A file without one did not end cleanly.
 *
 * The reader checks everything before it uses it and stops at the first
 * damage with a message naming its byte offset; every frame before it
 * was returned.  Nothing here logs.
 */
#ifndef PMON_RECFILE_H
#define PMON_RECFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RECFILE_MAGIC		"PMONREC\n"
#define RECFILE_VERSION		2	/* the newest, which the writer
					   writes unless told otherwise */
#define RECFILE_VERSION_MIN	1
#define RECFILE_BLOCK_DATA	1
#define RECFILE_BLOCK_END	2
#define RECFILE_BLOCK_HDR	16
#define RECFILE_BLOCK_DEFAULT	(64 * 1024)	/* raw bytes per block */
#define RECFILE_BLOCK_MIN	1024
#define RECFILE_BLOCK_MAX	(4 * 1024 * 1024)
/*
 * A REC_SNAPSHOT may be larger than any wire frame: the state of a big
 * run (its queues above all) is sent in several REPLY frames.
 */
#define RECFILE_SNAPSHOT_MAX	(64 * 1024 * 1024)
#define RECFILE_STR_MAX		255
#define RECFILE_END_SIZE	48
/* Format 2 packs the EVENTs of this many tasks (tids); stores the rest. */
#define RECFILE_TASKS_MAX	16384

/*
 * Frames only recordings hold, never the wire: numbers above every
 * protocol message.
 */
#define REC_HOST	0x80	/* i32 host_tid, u8 agent_up, str name,
				   str arch: a host of the state model */
#define REC_SNAPSHOT	0x81	/* the state (JSON) where the recording
				   starts, when it started late */

struct recfile_header {
	/*
	 * The format: what recfile_open read; for recfile_create, 0 (the
	 * newest, RECFILE_VERSION) or an older one to write.
	 */
	uint16_t	version;
	uint8_t		proto;		/* PROTO_VERSION of the frames */
	uint64_t	created_ns;	/* CLOCK_REALTIME at the start */
	char		writer[RECFILE_STR_MAX + 1];	/* "pmon record" */
	char		clock[RECFILE_STR_MAX + 1];	/* "clc", ... */
	char		source[RECFILE_STR_MAX + 1];	/* host:PVM_TMP */
};

struct recfile_end {
	uint64_t	frames;
	uint64_t	events;
	uint64_t	tasks;		/* TASK_INFO frames */
	uint64_t	raw_bytes;	/* the frames' bytes */
	uint64_t	file_bytes;	/* in the end block: the file before
					   it; from recfile_finish: all */
	uint64_t	ended_ns;
};

struct recfile_writer;
struct recfile;

/*
 * Creates path (replacing a file there) and writes the header.  A block
 * is written whenever block_size raw bytes are waiting (0: the default)
 * and by recfile_sync.  NULL with the reason in err on failure.
 */
struct recfile_writer *recfile_create(const char *path,
	    const struct recfile_header *, size_t block_size, char *err,
	    size_t errsize);
/* The same on an open stream, which the writer then owns. */
struct recfile_writer *recfile_create_fp(FILE *,
	    const struct recfile_header *, size_t block_size, char *err,
	    size_t errsize);
/* Adds one frame (type, payload); -1 with recfile_writer_error. */
int	recfile_write_frame(struct recfile_writer *, uint8_t type,
	    const void *payload, size_t len);
/* Writes what waits as a block, then flushes the stream. */
int	recfile_sync(struct recfile_writer *);
/*
 * Writes the last block and the end block and closes the file; the
 * counts (may be NULL) then include the end block.  When it fails (a
 * full disk), they are those of the last block that reached the file:
 * what it surely holds.
 */
int	recfile_finish(struct recfile_writer *, struct recfile_end *);
/* Closes without an end block (what a crash leaves).  NULL: no-op. */
void	recfile_writer_free(struct recfile_writer *);
const char *recfile_writer_error(const struct recfile_writer *);
/* The counts so far (file_bytes: the blocks written so far). */
void	recfile_writer_counts(const struct recfile_writer *,
	    struct recfile_end *);

/*
 * Opens a recording and reads its header.  NULL with the reason in err
 * (the header's damage and its offset included; a format newer than
 * RECFILE_VERSION: "format version N; this pmon reads versions 1 to M").
 */
struct recfile *recfile_open(const char *path, char *err, size_t errsize);
/* The same on a stream (fmemopen for a buffer), which it then owns. */
struct recfile *recfile_open_fp(FILE *, char *err, size_t errsize);
void	recfile_close(struct recfile *);
const struct recfile_header *recfile_header(const struct recfile *);

/*
 * The next frame: 1 with *type, *payload (valid until the next call)
 * and *len; 0 after the end block (recfile_end has the counts); -1 on
 * damage, with recfile_error: "corrupt block at offset N: why" or
 * "truncated at offset N" (N is where the damaged block starts: every
 * frame before it was returned).
 */
int	recfile_next(struct recfile *, uint8_t *type, const uint8_t **payload,
	    size_t *len);
const char *recfile_error(const struct recfile *);
const struct recfile_end *recfile_end(const struct recfile *);
/* Bytes of the file read so far. */
uint64_t recfile_offset(const struct recfile *);

#endif
