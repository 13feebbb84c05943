/*
 * The manipulation commands (doc/control.md, doc/requests.md):
 *
 *	pmon stop OBJECTS		stop tasks (SIGSTOP, rings drained)
 *	pmon continue [--force] OBJECTS
 *	pmon kill OBJECTS
 *	pmon request TEXT...		any request, its reply printed
 *	pmon watch [--json] REQUEST...	conditional requests that live as
 *					long as the command: prints what
 *					they and the other tools do
 *
 * OBJECTS is a comma-separated list of tasks (t40003, 262147), host:NAME,
 * group:NAME, or "*".  A stop belongs to the tool that made it and ends
 * with it, but these commands end at once: their stops belong to nobody
 * (PMON_UNOWNED), and any tool continues them.  `pmon watch` owns the
 * stops of its breakpoints until it ends.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmon-tool.h"
#include "pmon.h"

static int	cmd_manip(const struct cmd_args *);
static int	cmd_request(const struct cmd_args *);
static int	cmd_watch(const struct cmd_args *);

static const struct option control_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'j' },
	{ "force", no_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 }
};

#define JSON_HELP	"  -j, --json    print the reply as JSON\n"
#define OBJECTS_HELP	"OBJECTS: tasks (t40003 or 262147), host:NAME, group:NAME or *,\n" \
			"separated by commas.\n"

const struct cmd_entry cmd_stop_entry = {
	"stop", "[--json] OBJECTS",
	"stop tasks where they are (their events flushed)",
	JSON_HELP OBJECTS_HELP, "+hj", control_longopts, 1, 1, cmd_manip
};

const struct cmd_entry cmd_continue_entry = {
	"continue", "[--json] [--force] OBJECTS",
	"continue stopped tasks",
	JSON_HELP "  -f, --force   also tasks another tool stopped\n"
	OBJECTS_HELP, "+hjf", control_longopts, 1, 1, cmd_manip
};

const struct cmd_entry cmd_kill_entry = {
	"kill", "[--json] OBJECTS",
	"kill tasks (SIGKILL)",
	JSON_HELP OBJECTS_HELP, "+hj", control_longopts, 1, 1, cmd_manip
};

const struct cmd_entry cmd_request_entry = {
	"request", "[--json] TEXT...",
	"send one request (doc/requests.md) and print the reply",
	JSON_HELP "The words of TEXT are joined with blanks.\n",
	"+hj", control_longopts, 1, -1, cmd_request
};

const struct cmd_entry cmd_watch_entry = {
	"watch", "[--json] REQUEST...",
	"set conditional requests and print what happens until interrupted",
	JSON_HELP
	"Each REQUEST is one argument, e.g. 'on enter pvm_send tag 7 do stop'.\n"
	"Prints one line per notice (this and other tools' actions, hits)\n"
	"and per problem; ends on SIGINT or SIGTERM, which removes the\n"
	"requests and continues the tasks they stopped.\n",
	"+hj", control_longopts, 1, -1, cmd_watch
};

/* Joins words with blanks into buf; -1 if it does not fit. */
static int
join(char *buf, size_t size, const char *first, char **v, int n)
{
	size_t len = 0;
	int i, w;

	buf[0] = '\0';
	if (first != NULL && (w = snprintf(buf, size, "%s", first)) >= 0)
		len = (size_t)w;
	for (i = 0; i < n && len < size; i++) {
		w = snprintf(buf + len, size - len, "%s%s", len ? " " : "",
		    v[i]);
		if (w < 0)
			return -1;
		len += (size_t)w;
	}
	return len < size ? 0 : -1;
}

static int
cmd_manip(const struct cmd_args *a)
{
	const char *cmd = tool_command_name();
	char request[1024], name[64];

	snprintf(request, sizeof(request), "%s%s %s", cmd,
	    a->seen['f'] ? " force" : "", a->argv[0]);
	snprintf(name, sizeof(name), "pmon-%s", cmd);
	return tool_query(name, request, PMON_UNOWNED |
	    (a->seen['j'] ? PMON_JSON : 0), stdout);
}

static int
cmd_request(const struct cmd_args *a)
{
	char request[1024];

	if (join(request, sizeof(request), NULL, a->argv, a->argc) == -1)
		return tool_usage_error("request too long");
	return tool_query("pmon-request", request, PMON_UNOWNED |
	    (a->seen['j'] ? PMON_JSON : 0), stdout);
}

/* --- watch ------------------------------------------------------------- */

static volatile sig_atomic_t watch_stop;

static void
watch_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static void
watch_print(const char *kind, const char *json, void *arg)
{
	int json_out = *(int *)arg;

	if (json_out)
		printf("%s\n", json);
	else
		printf("%s: %s\n", kind, json);
	fflush(stdout);
}

static void
watch_notice(const char *json, size_t len, void *arg)
{
	(void)len;
	watch_print("notice", json, arg);
}

static void
watch_problem(const char *json, size_t len, void *arg)
{
	(void)len;
	watch_print("problem", json, arg);
}

static void
watch_bye(const char *reason, void *arg)
{
	(void)arg;
	fprintf(stderr, "pmon watch: the coordinator went away: %s\n", reason);
}

static int
cmd_watch(const struct cmd_args *a)
{
	struct pmon_callbacks cb = { .notice = watch_notice,
	    .problem = watch_problem, .bye = watch_bye };
	struct sigaction sa;
	struct pollfd pfd;
	struct pmon *p;
	char *reply;
	size_t len;
	int json = a->seen['j'] > 0, i, rv = EXIT_SUCCESS;

	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	pmon_set_callbacks(p, &cb, &json);
	if (pmon_connect(p, NULL, "pmon-watch", 0) == -1) {
		rv = tool_error("%s", pmon_error(p));
		goto out;
	}
	for (i = 0; i < a->argc; i++) {
		if (pmon_request(p, a->argv[i], json ? PMON_JSON : 0, &reply,
		    &len) == -1) {
			rv = tool_error("%s: %s", a->argv[i], pmon_error(p));
			goto out;
		}
		if (json)
			printf("%.*s\n", (int)len, reply);
		else
			printf("%s: %.*s", a->argv[i], (int)len, reply);
		free(reply);
	}
	fflush(stdout);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watch_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pfd.fd = pmon_fd(p);
	pfd.events = POLLIN;
	while (!watch_stop && !pmon_closed(p)) {
		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			rv = tool_error("poll: %s", strerror(errno));
			break;
		}
		if (pmon_dispatch(p) == -1) {
			if (!pmon_closed(p))
				rv = tool_error("%s", pmon_error(p));
			break;
		}
	}
out:
	pmon_free(p);
	return rv;
}
