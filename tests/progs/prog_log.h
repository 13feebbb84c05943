/*
 * For the test programs: how a task tells the test who it is and what it
 * did.  One line per call, appended with one write (O_APPEND), so lines
 * of several tasks writing the same file never mix.
 */
#ifndef PMON_PROG_LOG_H
#define PMON_PROG_LOG_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void	prog_log(const char *path, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));

/* Appends the formatted line to path; exits if it cannot. */
static void
prog_log(const char *path, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) ||
	    (fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644)) == -1 ||
	    write(fd, line, (size_t)n) != n || close(fd) == -1) {
		perror(path);
		exit(1);
	}
}

#endif
