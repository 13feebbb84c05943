/*
 * The pmon command: one table of subcommands, after tmux's cmd_entry.
 * main() parses each command's options from its table entry, so a command
 * only looks at the parsed result.
 */
#ifndef PMON_TOOL_H
#define PMON_TOOL_H

#include <sys/types.h>

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Exit statuses of every command. */
#define EXIT_USAGE	2

/* The options and operands of one invocation. */
struct cmd_args {
	int		 seen[128];	/* how often each option was given */
	char		*arg[128];	/* the last argument of each option */
	int		 argc;		/* operands after the options */
	char		**argv;
};

struct cmd_entry {
	const char	*name;
	const char	*usage;		/* what follows the name */
	const char	*summary;	/* one line for `pmon help` */
	const char	*help;		/* option lines for --help */
	const char	*getopt;	/* short options, "+" first */
	const struct option *longopts;	/* each maps to a short option */
	int		 min_args;	/* operands required */
	int		 max_args;	/* operands allowed, -1: any */
	int		(*exec)(const struct cmd_args *);
};

extern const struct cmd_entry cmd_start_entry;
extern const struct cmd_entry cmd_exec_entry;
extern const struct cmd_entry cmd_trace_entry;
extern const struct cmd_entry cmd_flush_entry;
extern const struct cmd_entry cmd_shutdown_entry;
extern const struct cmd_entry cmd_ps_entry;
extern const struct cmd_entry cmd_hosts_entry;
extern const struct cmd_entry cmd_tools_entry;
extern const struct cmd_entry cmd_groups_entry;
extern const struct cmd_entry cmd_mailbox_entry;
extern const struct cmd_entry cmd_queues_entry;
extern const struct cmd_entry cmd_snapshot_entry;
extern const struct cmd_entry cmd_problems_entry;
extern const struct cmd_entry cmd_frontier_entry;
extern const struct cmd_entry cmd_tasks_entry;
extern const struct cmd_entry cmd_stop_entry;
extern const struct cmd_entry cmd_continue_entry;
extern const struct cmd_entry cmd_kill_entry;
extern const struct cmd_entry cmd_request_entry;
extern const struct cmd_entry cmd_watch_entry;
extern const struct cmd_entry cmd_stopline_entry;
extern const struct cmd_entry cmd_record_entry;
extern const struct cmd_entry cmd_replay_entry;
extern const struct cmd_entry cmd_web_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_top_entry;

/* pmon.c */
int		 tool_error(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
int		 tool_usage_error(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
int		 tool_sibling(char *, size_t, const char *);
struct pmon;
int		 tool_stream_end(const struct pmon *);
const char	*tool_command_name(void);
/* Set by SIGINT or SIGTERM once tool_catch_stop() has run. */
extern volatile sig_atomic_t tool_stop;
void		 tool_catch_stop(void);

/* cmd_start.c: starting pmon-coordd and waiting for its ready line. */
int		 tool_coordd_path(char *, size_t);
/* An option of a command that is pmon-coordd's. */
struct tool_coordd_opt {
	char		 ours;		/* the command's short option */
	const char	*flag;		/* pmon-coordd's: "-z" */
	const char	*name;		/* the command's long one: "--compress" */
	const char	*bare;		/* its value when given without one
					   (an optional argument), or NULL */
};
#define TOOL_COORDD_ARGS	40	/* of pmon-coordd's argv, at most */
int		 tool_coordd_args(const char **, const struct cmd_args *,
		    const struct tool_coordd_opt *);
void		 tool_coordd_exec(const char *path, const char **argv,
		    int wfd, int logfd) __attribute__((noreturn));
int		 tool_coordd_check(const char *path, const char **argv,
		    const struct tool_coordd_opt *, char *settings, size_t);
int		 tool_read_ready(int fd, char *, size_t);
int		 tool_start_failed(pid_t pid, int got);

/*
 * cmd_query.c: flush, send one request (PMON_* flags), print its reply:
 * as JSON with PMON_JSON, else as text.  EXIT_FAILURE if the reply says
 * a target failed.
 */
int		 tool_query(const char *name, const char *request,
		    unsigned flags, FILE *);
int		 tool_reply_print(FILE *, const char *request,
		    const char *reply, size_t len, int json);

/* render.c: the coordinator's JSON replies as text (doc/requests.md). */
#define RENDER_OK	0
#define RENDER_FAILED	1	/* the reply says a target failed */
struct json_t;
int		 render_reply(FILE *, const char *request, const char *reply,
		    size_t len);
void		 render_problem(FILE *, const struct json_t *, int width);
void		 render_notice(FILE *, const struct json_t *);
void		 render_wait(FILE *, const struct json_t *);
void		 render_where(const struct json_t *task, char *, size_t);
void		 render_stream_object(FILE *, const char *type,
		    const char *json, size_t len);

/*
 * trace_fmt.c: the lines of pmon trace (doc/events.md), written into a
 * buffer with room for the _max bytes; each returns the end of its line
 * (the newline included).  The JSON objects also as jansson's json_t.
 */
struct json_t;
struct pmon_event;
struct pmon_task;
size_t		 trace_fmt_event_max(const struct pmon_event *);
size_t		 trace_fmt_task_max(const struct pmon_task *);
/* trace_fmt_event_json's flags. */
#define TRACE_JSON_BRIEF	0x1	/* pmon web's: no id, host, program, tc = t */
char		*trace_fmt_event_json(char *, const struct pmon_event *, int);
/* The time column of the text lines (pmon trace --time). */
enum trace_time {
	TRACE_TIME_REL,		/* seconds since the first event: 1.000000123 */
	TRACE_TIME_ABS,		/* the time of day: 22:14:26.123456789 */
	TRACE_TIME_TC,		/* tc, the corrected time, in ns */
	TRACE_TIME_NONE
};
struct trace_clock {
	enum trace_time	 mode;
	int		 started;
	uint64_t	 t0;		/* rel: the first event's tc */
	time_t		 sec;		/* abs: the second hms holds */
	char		 hms[16];
};
char		*trace_fmt_event_text(char *, const struct pmon_event *,
		    struct trace_clock *);
char		*trace_fmt_task_json(char *, const struct pmon_task *);
char		*trace_fmt_task_text(char *, const struct pmon_task *);
struct json_t	*trace_event_json(const struct pmon_event *);
struct json_t	*trace_task_json(const struct pmon_task *);
/* v in decimal at o (up to 20 digits, or 21 with a sign); returns the end. */
char		*trace_fmt_u64(char *o, uint64_t v);
char		*trace_fmt_i64(char *o, int64_t v);
/* "TID:SEQ" (with the quotes): an event's id in JSON. */
char		*trace_fmt_id(char *o, int32_t tid, uint64_t seq);

/* trace_summary.c */
struct pmon_event;
struct pmon_task;
struct summary;
struct summary	*summary_new(void);
void		 summary_free(struct summary *);
int		 summary_event(struct summary *, const struct pmon_event *);
void		 summary_print(struct summary *, FILE *);

#endif
