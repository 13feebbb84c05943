/*
 * Big-endian field encoding for everything that crosses a process or host
 * boundary.  Structs are never copied onto the wire: PVM hosts may differ
 * in architecture.
 *
 * A wire_reader walks a received buffer; every get is bounds-checked and a
 * short read sets ->err, so a decoder can read all fields and check once.
 */
#ifndef PMON_WIRE_H
#define PMON_WIRE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * One byte swap and one unaligned store (or load) a field: GCC's store
 * merging of the byte-by-byte form built unaligned runs of fields with
 * shifts and ors, some 100 instructions an event header (BENCHMARKS.md).
 */
static inline void
wire_put16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
wire_put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
wire_put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t
wire_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline uint32_t
wire_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t
wire_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

struct wire_reader {
	const uint8_t	*p;
	size_t		 len;
	size_t		 off;
	int		 err;	/* set by any read past the end */
};

static inline void
wire_reader_init(struct wire_reader *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
	r->err = 0;
}

static inline const uint8_t *
wire_take(struct wire_reader *r, size_t n)
{
	const uint8_t *p;

	if (r->err || r->len - r->off < n) {
		r->err = 1;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static inline uint8_t
wire_read8(struct wire_reader *r)
{
	const uint8_t *p = wire_take(r, 1);

	return p ? p[0] : 0;
}

static inline uint16_t
wire_read16(struct wire_reader *r)
{
	const uint8_t *p = wire_take(r, 2);

	return p ? wire_get16(p) : 0;
}

static inline uint32_t
wire_read32(struct wire_reader *r)
{
	const uint8_t *p = wire_take(r, 4);

	return p ? wire_get32(p) : 0;
}

static inline uint64_t
wire_read64(struct wire_reader *r)
{
	const uint8_t *p = wire_take(r, 8);

	return p ? wire_get64(p) : 0;
}

/*
 * A string is a 16-bit length and that many bytes, no NUL on the wire.
 * wire_readstr copies it NUL-terminated into dst; a string that does not
 * fit dst (or holds a NUL) is an error, never silently truncated.
 */
static inline void
wire_readstr(struct wire_reader *r, char *dst, size_t dstsize)
{
	uint16_t n = wire_read16(r);
	const uint8_t *p = wire_take(r, n);

	if (p == NULL || n >= dstsize || memchr(p, '\0', n) != NULL) {
		r->err = 1;
		if (dstsize > 0)
			dst[0] = '\0';
		return;
	}
	memcpy(dst, p, n);
	dst[n] = '\0';
}

/* Bytes a string takes on the wire. */
static inline size_t
wire_strsize(const char *s)
{
	return 2 + strlen(s);
}

/* Writes a string (at most 65535 bytes, the caller checks); returns the
 * position after it. */
static inline uint8_t *
wire_putstr(uint8_t *p, const char *s)
{
	size_t n = strlen(s);

	wire_put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return p + 2 + n;
}

#endif
