/*
 * Logging to stderr with the program name and, for warnings, errno text.
 * Lines that go to a file (a daemon's log) begin with the time, UTC to
 * the millisecond; those to a terminal or a pipe (pmon start reports
 * what the coordinator said) do not.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *log_progname = "pmon";
static int log_verbose;
static int log_stamped;		/* stderr is a file: lines say when */

void
log_init(const char *progname, int verbose)
{
	log_progname = progname;
	log_verbose = verbose;
	log_reopened();
}

/* stderr may be another file now (a daemon's log). */
void
log_reopened(void)
{
	struct stat st;

	log_stamped = fstat(STDERR_FILENO, &st) == 0 && S_ISREG(st.st_mode);
}

/* "2026-11-27T16:20:01.123Z ", or nothing when the time is not known. */
static void
log_stamp(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	buf[0] = '\0';
	if (clock_gettime(CLOCK_REALTIME, &ts) == -1 ||
	    gmtime_r(&ts.tv_sec, &tm) == NULL ||
	    (n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm)) == 0)
		return;
	snprintf(buf + n, size - n, ".%03ldZ ", ts.tv_nsec / 1000000);
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

static void
vlog(const char *level, int with_errno, const char *fmt, va_list ap)
{
	char msg[1024], when[40] = "";
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_stamped)
		log_stamp(when, sizeof(when));
	if (with_errno)
		fprintf(stderr, "%s%s: %s%s: %s\n", when, log_progname, level,
		    msg, strerror(saved));
	else
		fprintf(stderr, "%s%s: %s%s\n", when, log_progname, level,
		    msg);
	fflush(stderr);
	errno = saved;
}

/*
 * May the caller log one more line of r?  The last line a window allows
 * says that more will be left out; the first of the next window says how
 * many were.
 */
int
log_rate_ok(struct log_rate *r)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_sec - r->window >= LOG_RATE_WINDOW) {
		if (r->suppressed > 0)
			log_warnx("%lu more lines of %s in %d s left out",
			    r->suppressed, r->what, LOG_RATE_WINDOW);
		r->window = ts.tv_sec;
		r->n = 0;
		r->suppressed = 0;
	}
	if (r->n < LOG_RATE_BURST) {
		if (++r->n == LOG_RATE_BURST)
			log_warnx("(the next lines of %s in %d s are left out "
			    "and counted)", r->what, LOG_RATE_WINDOW);
		return 1;
	}
	r->suppressed++;
	return 0;
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
