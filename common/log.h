/*
 * Logging for the pmon daemons and tools, after OpenBSD's log.c: messages
 * go to stderr (or syslog-free files the caller redirects), prefixed with
 * the program name.  Never used by libpmon or the instrumentation library.
 */
#ifndef PMON_LOG_H
#define PMON_LOG_H

#include <stdarg.h>
#include <time.h>

/*
 * A line that a peer can make the daemon repeat (a refusal, a failed
 * accept) goes through a rate limit: at most LOG_RATE_BURST lines per
 * LOG_RATE_WINDOW seconds, then one line saying how many were left out.
 */
#define LOG_RATE_BURST	32
#define LOG_RATE_WINDOW	10	/* seconds */

struct log_rate {
	const char	*what;		/* names the lines in the summary */
	time_t		 window;	/* when the current window began */
	unsigned	 n;		/* lines logged in it */
	unsigned long	 suppressed;	/* lines left out of it */
};
#define LOG_RATE_INIT(what)	{ (what), 0, 0, 0 }

void	log_init(const char *progname, int verbose);
void	log_reopened(void);
void	log_setverbose(int verbose);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
int	log_rate_ok(struct log_rate *);
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
