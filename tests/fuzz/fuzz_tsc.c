/*
 * Fuzzes task times from the TSC (tsc.h): the safety check's parser of
 * the clocksource and /proc/cpuinfo texts, and the agent's conversion
 * with a history built from the input and an anchor taken from a ring
 * header (a task's word, untrusted).  Conversion must never go backwards
 * as ticks go forward, whatever the samples and the anchor.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tsc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tsc_cal cal;

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Input: "clocksource\0cpuinfo\0" then 16-byte samples: the anchor,
 * then the history; the same bytes read as ticks to convert. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 2);
	const char *cs, *ci;
	struct tsc_sample anchor, s;
	uint64_t ticks[64], prev = 0, ns;
	size_t off, nt = 0, i;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = text[size + 1] = '\0';
	cs = text;
	ci = cs + strlen(cs) + 1;
	(void)tsc_safe_text(cs, ci);
	off = (size_t)(ci + strlen(ci) + 1 - text);
	free(text);
	if (off > size)
		off = size;

	memset(&cal, 0, sizeof(cal));
	memset(&anchor, 0, sizeof(anchor));
	if (size - off >= 16) {
		anchor.tick = get64(data + off);
		anchor.ns = get64(data + off + 8);
	}
	for (i = off + 16; i + 16 <= size; i += 16) {
		s.tick = get64(data + i);
		s.ns = get64(data + i + 8);
		tsc_cal_add(&cal, &s);
		if (nt < 64)
			ticks[nt++] = s.tick + (s.ns & 0xffff);
	}
	for (i = 1; i < cal.n; i++)
		if (cal.s[i].tick <= cal.s[i - 1].tick ||
		    cal.s[i].ns <= cal.s[i - 1].ns)
			__builtin_trap();
	qsort(ticks, nt, sizeof(ticks[0]), cmp_u64);
	for (i = 0; i < nt; i++) {
		ns = tsc_to_ns(&cal, &anchor, ticks[i]);
		if (ns < prev)
			__builtin_trap();
		prev = ns;
	}
	return 0;
}
