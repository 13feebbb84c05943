/*
 * Runtime paths (paths.h).
 */
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
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

/*
 * The pid of the pvmd of $PVM_TMP (default /tmp), as its pvmd.UID file
 * gives it: the file names pvmd's socket, "pvmtmpPID.0".  That is the
 * pid of a master pvmd; one a master started on another host forks
 * after naming its socket.  -1 when there is no such file or it names no
 * pid; path (if not NULL) gets the file's name.
 */
int
pmon_pvmd_pid(char *path, size_t size)
{
	char file[PATH_MAX], sock[PATH_MAX];
	const char *dir = getenv("PVM_TMP"), *base;
	FILE *f;
	int pid;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	snprintf(file, sizeof(file), "%s/pvmd.%u", dir, (unsigned)getuid());
	if (path != NULL)
		snprintf(path, size, "%s", file);
	if ((f = fopen(file, "re")) == NULL)
		return -1;
	if (fgets(sock, sizeof(sock), f) == NULL)
		sock[0] = '\0';
	fclose(f);
	sock[strcspn(sock, "\n")] = '\0';
	base = strrchr(sock, '/');
	if (base == NULL || sscanf(base, "/pvmtmp%d.", &pid) != 1 || pid <= 0)
		return -1;
	return pid;
}
