/*
 * Logging for the pmon daemons and tools, after OpenBSD's log.c: messages
 * go to stderr (or syslog-free files the caller redirects), prefixed with
 * the program name.  Never used by libpmon or the instrumentation library.
 */
#ifndef PMON_LOG_H
#define PMON_LOG_H

#include <stdarg.h>

void	log_init(const char *progname, int verbose);
void	log_setverbose(int verbose);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
