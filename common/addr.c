/*
 * Network addresses as pmon's command lines and messages write them.
 */
#include <string.h>

#include "addr.h"

static int
copy_part(char *dst, size_t size, const char *src, size_t n)
{
	if (n == 0 || n >= size)
		return -1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

int
addr_split(const char *s, char *host, size_t hostsize, char *port,
    size_t portsize)
{
	const char *colon = strrchr(s, ':'), *end;

	if (s[0] == '[') {
		if ((end = strchr(s, ']')) == NULL ||
		    copy_part(host, hostsize, s + 1, (size_t)(end - s - 1)) == -1)
			return -1;
		if (end[1] == '\0')
			return 0;
		if (end[1] != ':')
			return -1;
		return copy_part(port, portsize, end + 2, strlen(end + 2));
	}
	if (colon == NULL || strchr(s, ':') != colon)	/* bare IPv6 */
		return copy_part(host, hostsize, s, strlen(s));
	if (copy_part(host, hostsize, s, (size_t)(colon - s)) == -1)
		return -1;
	return copy_part(port, portsize, colon + 1, strlen(colon + 1));
}
