/*
 * Runtime paths (paths.h).
 */
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paths.h"

/*
 * Writes "$PVM_TMP/pmon-WHAT.UID" into buf.  Fails with ENAMETOOLONG when
 * the path would not fit buf or a unix socket address.
 */
int
pmon_runtime_path(char *buf, size_t size, const char *what)
{
	struct sockaddr_un sun;
	const char *dir;
	int n;

	dir = getenv("PVM_TMP");
	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	n = snprintf(buf, size, "%s/pmon-%s.%u", dir, what,
	    (unsigned)getuid());
	if (n < 0 || (size_t)n >= size || (size_t)n >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
