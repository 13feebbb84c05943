/*
 * The shared-memory record ring (ring.h).
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "record.h"
#include "ring.h"
#include "wire.h"

#define RING_SEALS	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static int
ring_map(struct ring *rg, int fd, uint32_t size)
{
	void *p;

	rg->maplen = RING_HDR_SIZE + (size_t)size;
	p = mmap(NULL, rg->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	rg->hdr = p;
	rg->data = (uint8_t *)p + RING_HDR_SIZE;
	rg->size = size;
	rg->fd = fd;
	return 0;
}

/*
 * Task side: creates a sealed memfd of size data bytes (a power of two)
 * and maps it.  The fd is close-on-exec: an exec'd program starts afresh.
 */
int
ring_create(struct ring *rg, uint32_t size)
{
	int fd, saved;

	if (size < RING_MIN_SIZE || size > RING_MAX_SIZE ||
	    (size & (size - 1)) != 0) {
		errno = EINVAL;
		return -1;
	}
	fd = memfd_create("pmon-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	if (ftruncate(fd, RING_HDR_SIZE + (off_t)size) == -1 ||
	    fcntl(fd, F_ADD_SEALS, RING_SEALS) == -1 ||
	    ring_map(rg, fd, size) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	rg->hdr->magic = RING_MAGIC;
	rg->hdr->version = RING_VERSION;
	rg->hdr->size = size;
	rg->hdr->tid = 0;
	return 0;
}

/*
 * Agent side: maps a ring received from a task.  The task is not trusted:
 * the memfd must be sealed against shrinking (or a later read would fault)
 * and its header must agree with the file's size.
 */
int
ring_attach(struct ring *rg, int fd, const char **why)
{
	struct ring_hdr hdr;
	struct stat st;
	int seals;

	seals = fcntl(fd, F_GET_SEALS);
	if (seals == -1 || (seals & F_SEAL_SHRINK) == 0) {
		*why = "ring is not a memfd sealed against shrinking";
		return -1;
	}
	if (fstat(fd, &st) == -1 || st.st_size < RING_HDR_SIZE) {
		*why = "ring file too small";
		return -1;
	}
	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		*why = "ring header unreadable";
		return -1;
	}
	if (hdr.magic != RING_MAGIC || hdr.version != RING_VERSION) {
		*why = "ring has a bad magic or version";
		return -1;
	}
	if (hdr.size < RING_MIN_SIZE || hdr.size > RING_MAX_SIZE ||
	    (hdr.size & (hdr.size - 1)) != 0 ||
	    st.st_size != RING_HDR_SIZE + (off_t)hdr.size) {
		*why = "ring size does not match its file";
		return -1;
	}
	if (ring_map(rg, fd, hdr.size) == -1) {
		*why = "cannot map ring";
		return -1;
	}
	return 0;
}

/* Unmaps the ring and closes its fd.  Safe on a ring never mapped. */
void
ring_close(struct ring *rg)
{
	if (rg->hdr != NULL)
		munmap(rg->hdr, rg->maplen);
	if (rg->fd != -1)
		close(rg->fd);
	rg->hdr = NULL;
	rg->data = NULL;
	rg->fd = -1;
}

static void
ring_copy_in(struct ring *rg, uint64_t pos, const void *src, size_t len)
{
	size_t off = pos & (rg->size - 1), first = rg->size - off;

	if (first >= len)
		memcpy(rg->data + off, src, len);
	else {
		memcpy(rg->data + off, src, first);
		memcpy(rg->data, (const uint8_t *)src + first, len - first);
	}
}

static void
ring_copy_out(const struct ring *rg, uint64_t pos, void *dst, size_t len)
{
	size_t off = pos & (rg->size - 1), first = rg->size - off;

	if (first >= len)
		memcpy(dst, rg->data + off, len);
	else {
		memcpy(dst, rg->data + off, first);
		memcpy((uint8_t *)dst + first, rg->data, len - first);
	}
}

/*
 * Producer: appends one encoded record.  Never blocks: when the agent has
 * not made room, the record is dropped and counted, and -1 is returned.
 */
int
ring_write(struct ring *rg, const void *rec, size_t len)
{
	struct ring_hdr *h = rg->hdr;
	uint64_t head, tail;

	head = atomic_load_explicit(&h->head, memory_order_relaxed);
	tail = atomic_load_explicit(&h->tail, memory_order_acquire);
	if (head - tail > rg->size || rg->size - (head - tail) < len) {
		atomic_fetch_add_explicit(&h->dropped, 1,
		    memory_order_relaxed);
		return -1;
	}
	ring_copy_in(rg, head, rec, len);
	atomic_store_explicit(&h->head, head + len, memory_order_release);
	atomic_fetch_add_explicit(&h->written, 1, memory_order_relaxed);
	return 0;
}

/*
 * Consumer: copies whole records, oldest first, into out (outsize bytes,
 * at least RECORD_MAX_SIZE to be sure of progress) and frees their room.
 * Returns the bytes copied (0 when empty) and their count in *nrecords,
 * or -1 with *why when the task corrupted its ring.
 */
ssize_t
ring_read(struct ring *rg, uint8_t *out, size_t outsize, unsigned *nrecords,
    const char **why)
{
	struct ring_hdr *h = rg->hdr;
	uint64_t head, tail, pos;
	uint8_t lenbuf[2];
	size_t n = 0, len;

	*nrecords = 0;
	tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	head = atomic_load_explicit(&h->head, memory_order_acquire);
	if (head - tail > rg->size) {
		*why = "ring head is out of range";
		return -1;
	}
	for (pos = tail; pos < head; pos += len) {
		ring_copy_out(rg, pos, lenbuf, sizeof(lenbuf));
		len = wire_get16(lenbuf);
		if (len < RECORD_HDR_SIZE || len > head - pos) {
			*why = "ring holds a record of impossible length";
			return -1;
		}
		if (len > outsize - n)
			break;
		ring_copy_out(rg, pos, out + n, len);
		n += len;
		(*nrecords)++;
	}
	atomic_store_explicit(&h->tail, pos, memory_order_release);
	return (ssize_t)n;
}

uint64_t
ring_dropped(const struct ring *rg)
{
	return atomic_load_explicit(&rg->hdr->dropped, memory_order_relaxed);
}
