/*
 * Capture settings a run chooses with `pmon start` (doc/capture.md): the
 * coordinator checks them and passes them to the agents it spawns.
 */
#ifndef PMON_CAPTURE_H
#define PMON_CAPTURE_H

#include <stdint.h>

/* Bytes queued for the coordinator above which an agent stops draining
 * the rings (pmon-agentd -b). */
#define CAPTURE_BUFFER_DEFAULT	(16U * 1024 * 1024)
#define CAPTURE_BUFFER_MIN	(64U * 1024)
#define CAPTURE_BUFFER_MAX	(1024U * 1024 * 1024)

/* The longest time between two sync flushes of an agent's stream
 * (pmon-agentd -i), in ms. */
#define CAPTURE_LIVE_DEFAULT	20
#define CAPTURE_LIVE_MIN	1
#define CAPTURE_LIVE_MAX	100

/*
 * Whether an agent deflates its stream to the coordinator (pmon-agentd
 * -z, pmon start --compress).  remote, the default: unless the
 * coordinator runs on the agent's own host, where deflate would spend
 * CPU the watched tasks share on bytes that cross no network.
 */
enum capture_compress {
	CAPTURE_COMPRESS_REMOTE,
	CAPTURE_COMPRESS_ALWAYS,
	CAPTURE_COMPRESS_NEVER
};

int	capture_compress_lookup(const char *);

/*
 * A task's ring, in bytes: a power of two from RING_MIN_SIZE to
 * RING_MAX_SIZE (ring.h).  The agent publishes pmon start -R in its
 * host's PVM_TMP for the tasks that do not set PMON_RING_SIZE.
 */
#define CAPTURE_RING_MIN	4096U
#define CAPTURE_RING_MAX	(64U * 1024 * 1024)

/*
 * Blocking mode (pmon start --block[=TIMEOUT], pmon-coordd and
 * pmon-agentd -k): how long a task waits for room in its full ring
 * instead of dropping the record.  "forever", or a whole number of ms or
 * s from 1 ms to an hour ("500ms", "2s").
 */
#define CAPTURE_BLOCK_FOREVER	UINT64_MAX	/* as RING_BLOCK_FOREVER */
#define CAPTURE_BLOCK_MAX_MS	3600000ULL

int	capture_block_parse(const char *, uint64_t *ns);

#endif
