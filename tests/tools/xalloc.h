/*
 * For the test tools: allocations that cannot fail.  Out of memory, the
 * tool says so and exits 2 (its "bad input or trouble" status).
 */
#ifndef PMON_TEST_XALLOC_H
#define PMON_TEST_XALLOC_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static inline void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL) {
		perror(program_invocation_short_name);
		exit(2);
	}
	return p;
}

static inline void *
xreallocarray(void *p, size_t n, size_t size)
{
	if ((p = reallocarray(p, n, size)) == NULL) {
		perror(program_invocation_short_name);
		exit(2);
	}
	return p;
}

#endif
