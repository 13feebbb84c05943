/*
 * Allocation for the daemons, after tmux's xmalloc.c: out of memory is
 * fatal (the daemon logs it and exits), so no caller has a failure path
 * that would leave its model half updated.  The libraries (libpmon, the
 * instrumentation, the common codecs they share) never exit: they use
 * malloc and report the failure.
 */
#ifndef PMON_XMALLOC_H
#define PMON_XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
/*
 * Zeroed, starting on a cache line (free it with free): for a structure
 * whose first lines hold what a hot path reads.
 */
#define XMALLOC_LINE	64
void	*xcalloc_lines(size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
