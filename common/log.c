/*
 * Logging to stderr with the program name and, for warnings, errno text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

static const char *log_progname = "pmon";
static int log_verbose;

void
log_init(const char *progname, int verbose)
{
	log_progname = progname;
	log_verbose = verbose;
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

static void
vlog(const char *level, int with_errno, const char *fmt, va_list ap)
{
	char msg[1024];
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (with_errno)
		fprintf(stderr, "%s: %s%s: %s\n", log_progname, level, msg,
		    strerror(saved));
	else
		fprintf(stderr, "%s: %s%s\n", log_progname, level, msg);
	fflush(stderr);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", 1, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", 0, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog("", 0, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 2)
		return;
	va_start(ap, fmt);
	vlog("debug: ", 0, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", 1, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("fatal: ", 0, fmt, ap);
	va_end(ap);
	exit(1);
}
