/*
 * The per-task record ring: a memfd shared between one instrumented task
 * (the only producer) and its host's agent (the only consumer).  Because
 * the agent maps the same memory, it can read a task's records while the
 * task is stopped and after it died.
 *
 * The header lives in the first page (native byte order: both sides are on
 * one host); records follow, encoded as in record.h, wrapping around the
 * end of the data area.  head and tail count bytes ever written and
 * consumed.  A full ring drops the new record and counts it: the task
 * never waits for the agent.
 */
#ifndef PMON_RING_H
#define PMON_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RING_MAGIC	0x706d6f6eU	/* "pmon" */
#define RING_VERSION	1
#define RING_HDR_SIZE	4096
#define RING_MIN_SIZE	4096
#define RING_MAX_SIZE	(64U * 1024 * 1024)
#define RING_DEFAULT_SIZE	(1024U * 1024)

struct ring_hdr {
	uint32_t		magic;
	uint32_t		version;
	uint32_t		size;		/* data bytes, a power of two */
	int32_t			tid;		/* the task's PVM tid, once known */
	_Alignas(64) _Atomic uint64_t head;	/* written by the task */
	_Atomic uint64_t	dropped;	/* records lost to a full ring */
	_Atomic uint64_t	written;	/* records written */
	_Alignas(64) _Atomic uint64_t tail;	/* written by the agent */
};

struct ring {
	struct ring_hdr	*hdr;
	uint8_t		*data;
	uint32_t	 size;		/* our own copy: never trust the peer's */
	size_t		 maplen;
	int		 fd;
};

int	ring_create(struct ring *, uint32_t size);
int	ring_attach(struct ring *, int fd, const char **why);
void	ring_close(struct ring *);
int	ring_write(struct ring *, const void *rec, size_t len);
ssize_t	ring_read(struct ring *, uint8_t *out, size_t outsize,
	    unsigned *nrecords, const char **why);
uint64_t ring_dropped(const struct ring *);

#endif
