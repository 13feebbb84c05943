/*
 * Runtime paths (paths.h).
 */
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * The secret file that goes with the coordinator socket at sock_path: in
 * the same directory, named after the socket ("pmon-coord.UID" has
 * "pmon-secret.UID"; a socket of another name, our uid's).  Fails with
 * ENAMETOOLONG when it would not fit buf.
 */
int
pmon_secret_path_for(char *buf, size_t size, const char *sock_path)
{
	static const char prefix[] = "pmon-" PMON_SOCK_COORD ".";
	const char *base = strrchr(sock_path, '/');
	int dirlen, n;

	base = base != NULL ? base + 1 : sock_path;
	dirlen = (int)(base - sock_path);
	if (strncmp(base, prefix, sizeof(prefix) - 1) == 0 &&
	    base[sizeof(prefix) - 1] != '\0')
		n = snprintf(buf, size, "%.*spmon-%s.%s", dirlen, sock_path,
		    PMON_FILE_SECRET, base + sizeof(prefix) - 1);
	else
		n = snprintf(buf, size, "%.*spmon-%s.%u", dirlen, sock_path,
		    PMON_FILE_SECRET, (unsigned)getuid());
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
