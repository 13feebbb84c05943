/*
 * Network addresses as pmon's command lines and messages write them.
 */
#ifndef PMON_ADDR_H
#define PMON_ADDR_H

#include <stddef.h>

/*
 * Splits "ADDR", "ADDR:PORT" or "[ADDR]:PORT" (an IPv6 address with a
 * port goes in brackets; a bare one has no port).  port is left as it
 * is when s has none.  -1 when a part is empty or does not fit.
 */
int	addr_split(const char *s, char *host, size_t hostsize, char *port,
	    size_t portsize);

#endif
