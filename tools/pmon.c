/*
 * pmon: the command line of the pmon monitoring system.  main() finds the
 * command in the table, parses its options and runs it; every error is a
 * one-line message on stderr and exit status 1 (2 for usage errors).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmon.h"
#include "pmon-tool.h"

static const struct cmd_entry *const cmd_table[] = {
	&cmd_start_entry,
	&cmd_exec_entry,
	&cmd_trace_entry,
	&cmd_flush_entry,
	&cmd_shutdown_entry,
	&cmd_ps_entry,
	&cmd_hosts_entry,
	&cmd_tools_entry,
	&cmd_groups_entry,
	&cmd_mailbox_entry,
	&cmd_queues_entry,
	&cmd_snapshot_entry,
	&cmd_problems_entry,
	&cmd_frontier_entry,
	&cmd_tasks_entry,
	&cmd_stop_entry,
	&cmd_continue_entry,
	&cmd_kill_entry,
	&cmd_request_entry,
	&cmd_watch_entry,
	&cmd_stopline_entry,
	&cmd_record_entry,
	&cmd_replay_entry,
	&cmd_web_entry,
	&cmd_export_entry,
	&cmd_top_entry,
};
#define NCMDS	(sizeof(cmd_table) / sizeof(cmd_table[0]))

/* The command being run, for error messages. */
static const struct cmd_entry *cmd_current;
static const char *cmd_name;

static void	cmd_print_usage(const struct cmd_entry *, FILE *);

/* The name of the command being run ("ps"), for commands that share code. */
const char *
tool_command_name(void)
{
	return cmd_name != NULL ? cmd_name : "";
}

static void
tool_vmsg(const char *fmt, va_list ap)
{
	if (cmd_name != NULL)
		fprintf(stderr, "pmon %s: ", cmd_name);
	else
		fprintf(stderr, "pmon: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Prints an error line; returns the exit status for errors. */
int
tool_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(fmt, ap);
	va_end(ap);
	return EXIT_FAILURE;
}

/*
 * How a tool's stream ended: 0 after the coordinator's BYE or our own
 * stop; otherwise an error saying why, and, when the coordinator went
 * without a goodbye, that the stream is incomplete.
 */
int
tool_stream_end(const struct pmon *p)
{
	if (tool_stop || (pmon_closed(p) && !pmon_gone(p)))
		return 0;
	if (pmon_gone(p))
		return tool_error("%s; it went without a goodbye (was it "
		    "killed?): the stream ends here, and what it had not sent "
		    "us yet is missing", pmon_error(p));
	return tool_error("%s", pmon_error(p));
}

volatile sig_atomic_t tool_stop;

static void
on_stop(int sig)
{
	(void)sig;
	if (tool_stop < 2)
		tool_stop++;
}

/*
 * A tool that runs until told: SIGINT and SIGTERM set tool_stop (2 at
 * the second: a tool finishing its work stops waiting), and interrupt
 * its poll (no SA_RESTART), so that it ends cleanly.
 */
void
tool_catch_stop(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int
tool_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(fmt, ap);
	va_end(ap);
	if (cmd_current != NULL)
		cmd_print_usage(cmd_current, stderr);
	else
		fprintf(stderr, "Try 'pmon help'.\n");
	return EXIT_USAGE;
}

/*
 * Writes into buf the path of name relative to the directory of the pmon
 * binary itself ("pmon-coordd", "../lib/libpmon-pvm.so"), so an installed
 * or a freshly built tree finds its own parts.  Returns 0 or -1.
 */
int
tool_sibling(char *buf, size_t size, const char *name)
{
	char self[PATH_MAX], *slash;
	ssize_t n;
	int len;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return -1;
	*slash = '\0';
	len = snprintf(buf, size, "%s/%s", self, name);
	if (len < 0 || (size_t)len >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static void
cmd_print_usage(const struct cmd_entry *ce, FILE *f)
{
	fprintf(f, "usage: pmon %s%s%s\n", ce->name, *ce->usage ? " " : "",
	    ce->usage);
}

static int
cmd_help_one(const struct cmd_entry *ce)
{
	cmd_print_usage(ce, stdout);
	printf("%s\n", ce->summary);
	if (*ce->help)
		printf("\n%s", ce->help);
	return 0;
}

static int
cmd_help_all(void)
{
	size_t i;

	printf("usage: pmon COMMAND [OPTIONS] [ARGS]\n"
	    "Monitors a PVM virtual machine (the one of $PVM_TMP).\n\n"
	    "Commands:\n");
	for (i = 0; i < NCMDS; i++)
		printf("  %-10s %s\n", cmd_table[i]->name,
		    cmd_table[i]->summary);
	printf("  %-10s %s\n", "help", "show this list, or one command's "
	    "help: pmon help COMMAND");
	printf("\nEvery command takes --help.\n");
	return 0;
}

static const struct cmd_entry *
cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmd_table[i]->name, name) == 0)
			return cmd_table[i];
	return NULL;
}

/*
 * Parses argv (argv[0] is the command name) by the entry's tables.
 * Returns 0, 1 when --help was handled, or EXIT_USAGE.
 */
static int
cmd_parse(const struct cmd_entry *ce, int argc, char **argv,
    struct cmd_args *a)
{
	int ch;

	memset(a, 0, sizeof(*a));
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ce->getopt, ce->longopts,
	    NULL)) != -1) {
		if (ch == 'h')
			return cmd_help_one(ce) == 0 ? 1 : EXIT_USAGE;
		if (ch == '?' || ch <= 0 || ch >= 128) {
			if (optopt > 0 && optopt < 128)
				return tool_usage_error("unknown option -%c",
				    optopt);
			return tool_usage_error("unknown option %s",
			    argv[optind - 1]);
		}
		a->seen[ch]++;
		a->arg[ch] = optarg;
	}
	a->argc = argc - optind;
	a->argv = argv + optind;
	if (a->argc < ce->min_args)
		return tool_usage_error("missing argument");
	if (ce->max_args != -1 && a->argc > ce->max_args)
		return tool_usage_error("unexpected argument '%s'",
		    a->argv[ce->max_args]);
	return 0;
}

static int
cmd_help(int argc, char **argv)
{
	const struct cmd_entry *ce;

	if (argc < 2)
		return cmd_help_all();
	if ((ce = cmd_find(argv[1])) == NULL)
		return tool_usage_error("unknown command '%s'", argv[1]);
	return cmd_help_one(ce);
}

int
main(int argc, char **argv)
{
	const struct cmd_entry *ce;
	struct cmd_args args;
	int rv;

	if (argc < 2)
		return tool_usage_error("no command given");
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)
		return cmd_help(argc - 1, argv + 1);
	if ((ce = cmd_find(argv[1])) == NULL)
		return tool_usage_error("unknown command '%s'", argv[1]);
	cmd_name = ce->name;
	cmd_current = ce;
	if ((rv = cmd_parse(ce, argc - 1, argv + 1, &args)) != 0)
		return rv == 1 ? 0 : rv;
	return ce->exec(&args);
}
