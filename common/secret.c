/*
 * The virtual machine's secret (secret.h): made, written, read and
 * compared.  No logging: the callers say what went wrong, and nobody
 * ever prints the secret itself.
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "secret.h"

/*
 * Fills out (PMON_SECRET_LEN + 1 bytes) with a fresh secret from the
 * kernel's random source.  Returns 0, or -1 with errno.
 */
int
pmon_secret_make(char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[PMON_SECRET_BYTES];
	size_t got = 0, i;
	ssize_t n;

	while (got < sizeof(raw)) {
		n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	for (i = 0; i < sizeof(raw); i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 0xf];
	}
	out[PMON_SECRET_LEN] = '\0';
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

/*
 * Writes secret to a new file at path, readable by our user only.  A
 * file already there is a stale one (the caller made sure no
 * coordinator runs): it is removed first, and the new one is created
 * with O_EXCL and O_NOFOLLOW, so that nothing planted at path between
 * the two -- a symbolic link, another user's file -- is ever written
 * through.  Returns 0, or -1 with errno.
 */
int
pmon_secret_write(const char *path, const char *secret)
{
	char line[PMON_SECRET_LEN + 1];
	ssize_t n;
	int fd, saved;

	if (!pmon_secret_valid(secret)) {
		errno = EINVAL;
		return -1;
	}
	if (unlink(path) == -1 && errno != ENOENT)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return -1;
	memcpy(line, secret, PMON_SECRET_LEN);
	line[PMON_SECRET_LEN] = '\n';
	while ((n = write(fd, line, sizeof(line))) == -1 && errno == EINTR)
		;
	saved = errno;
	explicit_bzero(line, sizeof(line));
	if (n != (ssize_t)sizeof(line)) {
		close(fd);
		unlink(path);
		errno = n == -1 ? saved : EIO;
		return -1;
	}
	if (close(fd) == -1) {
		saved = errno;
		unlink(path);
		errno = saved;
		return -1;
	}
	return 0;
}

/*
 * Reads the secret at path into out (PMON_SECRET_LEN + 1 bytes).  The
 * file must be a regular file (not a symbolic link) of our user (root
 * may read anyone's), readable by nobody else, and hold 64 lowercase
 * hex digits and at most a newline.  Returns 0, or -1 with *why.
 */
int
pmon_secret_read(const char *path, char *out, const char **why)
{
	char buf[PMON_SECRET_LEN + 2];
	struct stat st;
	ssize_t n;
	int fd;

	out[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		*why = errno == ELOOP ? "it is a symbolic link" :
		    strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if (st.st_uid != getuid() && getuid() != 0)
		*why = "it belongs to another user";
	else if (st.st_mode & 077)
		*why = "others may read or write it (it must be mode 0600)";
	else
		*why = NULL;
	if (*why != NULL) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) == -1 && errno == EINTR)
		;
	close(fd);
	if (n == -1) {
		*why = strerror(errno);
		return -1;
	}
	if (n == PMON_SECRET_LEN + 1 && buf[PMON_SECRET_LEN] == '\n')
		n--;
	buf[n < PMON_SECRET_LEN + 1 ? n : PMON_SECRET_LEN + 1] = '\0';
	if (n != PMON_SECRET_LEN || !pmon_secret_valid(buf)) {
		explicit_bzero(buf, sizeof(buf));
		*why = "it does not hold a secret (64 lowercase hex digits)";
		return -1;
	}
	memcpy(out, buf, PMON_SECRET_LEN + 1);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* Is s a secret as pmon_secret_make writes one? */
int
pmon_secret_valid(const char *s)
{
	size_t i;

	for (i = 0; i < PMON_SECRET_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[PMON_SECRET_LEN] == '\0';
}

/*
 * Does got match expected?  An expected that is not a valid secret
 * matches nothing.  The time taken depends on got's length only, never
 * on how many of its bytes are right.
 */
int
pmon_secret_equal(const char *expected, const char *got)
{
	volatile unsigned char diff = 0;
	size_t i;

	if (!pmon_secret_valid(expected) || strlen(got) != PMON_SECRET_LEN)
		return 0;
	for (i = 0; i < PMON_SECRET_LEN; i++)
		diff |= (unsigned char)(expected[i] ^ got[i]);
	return diff == 0;
}
