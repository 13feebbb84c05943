/*
 * libpmon internals that the unit tests and the fuzz target reach past
 * the public API: attaching an already connected socket and feeding the
 * frame decoder bytes directly.
 */
#ifndef PMON_INTERNAL_H
#define PMON_INTERNAL_H

#include <stddef.h>

#include "pmon.h"

/* The most tasks one handle remembers; a coordinator announcing more is
 * treated as broken rather than allowed to exhaust the tool's memory. */
#define PMON_TASKS_MAX	(1 << 20)

/*
 * Adopts fd, a connected stream socket, as the coordinator connection
 * without sending TOOL_HELLO.  The handle owns fd from then on (closes it
 * in pmon_free).  Returns 0, or -1 when the handle is already connected.
 */
int	pmon_attach_fd(struct pmon *, int fd);

/*
 * Appends len bytes to the input buffer as if read from the socket and
 * decodes every complete frame, calling the callbacks.  Returns 0, or -1
 * on a malformed frame, an ERROR frame or BYE (as pmon_dispatch does).
 */
int	pmon_feed(struct pmon *, const void *buf, size_t len);

#endif
