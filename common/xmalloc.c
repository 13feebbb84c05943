/*
 * Allocation that cannot fail (xmalloc.h): the daemons' only rule for
 * running out of memory.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

void *
xmalloc(size_t size)
{
	void *p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		fatal("xmalloc: %zu bytes", size);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		fatal("xcalloc: %zu x %zu bytes", n, size);
	return p;
}

void *
xcalloc_lines(size_t size)
{
	void *p;

	size = (size + XMALLOC_LINE - 1) / XMALLOC_LINE * XMALLOC_LINE;
	if ((p = aligned_alloc(XMALLOC_LINE, size)) == NULL)
		fatal("xcalloc_lines: %zu bytes", size);
	memset(p, 0, size);
	return p;
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	void *p;

	if ((p = reallocarray(old, n == 0 ? 1 : n, size == 0 ? 1 : size)) ==
	    NULL)
		fatal("xreallocarray: %zu x %zu bytes", n, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		fatal("xstrdup");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;

	if ((p = strndup(s, n)) == NULL)
		fatal("xstrndup");
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("xasprintf");
	return n;
}
