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
 *	pmon stopline [--json] FRONTIER|TID:SEQ...
 *					stop tasks at a frontier (`pmon
 *					frontier` output) or at records, as
 *					long as the command runs
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

#include <jansson.h>

#include "pmon-tool.h"
#include "pmon.h"

static int	cmd_manip(const struct cmd_args *);
static int	cmd_request(const struct cmd_args *);
static int	cmd_watch(const struct cmd_args *);
static int	cmd_stopline(const struct cmd_args *);

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

const struct cmd_entry cmd_stopline_entry = {
	"stopline", "[--json] FRONTIER|TID:SEQ...",
	"stop tasks at a frontier or before given records, e.g. in a rerun",
	JSON_HELP
	"FRONTIER is a file (or - for stdin) holding `pmon frontier --json`\n"
	"output: each task stops just after its event of the past frontier.\n"
	"TID:SEQ stops task TID before its record SEQ (right after the call\n"
	"if SEQ ends one).  Tids must be those of the run being stopped: a\n"
	"rerun in a fresh virtual machine started the same way gets the same\n"
	"tids.  Like watch, prints notices until interrupted; that releases\n"
	"the stops.\n",
	"+hj", control_longopts, 1, -1, cmd_stopline
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
	/* Exits 1 if a target failed: a script must not go on as if. */
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

/* A notice or a problem: its JSON, or a line in words (render.c). */
static void
watch_print(const char *kind, const char *json, size_t len, void *arg)
{
	int json_out = *(int *)arg;

	if (json_out)
		printf("%s\n", json);
	else
		render_stream_object(stdout, kind, json, len);
	fflush(stdout);
}

static void
watch_notice(const char *json, size_t len, void *arg)
{
	watch_print("notice", json, len, arg);
}

static void
watch_problem(const char *json, size_t len, void *arg)
{
	watch_print("problem", json, len, arg);
}

static void
watch_bye(const char *reason, void *arg)
{
	(void)arg;
	fprintf(stderr, "pmon watch: the coordinator went away: %s\n", reason);
}

/*
 * Sends each request, printing its reply, then prints notices and
 * problems until SIGINT, SIGTERM or the coordinator's BYE.  Leaving
 * removes the requests and releases their stops.
 */
static int
watch_run(const char *name, char **requests, size_t n, int json)
{
	struct pmon_callbacks cb = { .notice = watch_notice,
	    .problem = watch_problem, .bye = watch_bye };
	struct pollfd pfd;
	struct pmon *p;
	char *reply;
	size_t len, i;
	int rv = EXIT_SUCCESS;

	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	pmon_set_callbacks(p, &cb, &json);
	if (pmon_connect(p, NULL, name, 0) == -1) {
		rv = tool_error("%s", pmon_error(p));
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (pmon_request(p, requests[i], 0, &reply, &len) == -1) {
			rv = tool_error("%s: %s", requests[i], pmon_error(p));
			goto out;
		}
		if (!json)
			printf("%s: ", requests[i]);
		tool_reply_print(stdout, requests[i], reply, len, json);
		free(reply);
	}
	fflush(stdout);
	tool_catch_stop();
	pfd.fd = pmon_fd(p);
	pfd.events = POLLIN;
	while (!tool_stop && !pmon_closed(p)) {
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

static int
cmd_watch(const struct cmd_args *a)
{
	return watch_run("pmon-watch", a->argv, (size_t)a->argc,
	    a->seen['j'] > 0);
}

/* --- stopline ---------------------------------------------------------- */

/* Appends "stopline TID:SEQ" to the list. */
static int
stopline_add(char ***v, size_t *n, long long tid, long long seq)
{
	char **nv;

	if ((nv = reallocarray(*v, *n + 1, sizeof(**v))) == NULL)
		return -1;
	*v = nv;
	if (asprintf(&nv[*n], "stopline %lld:%lld", tid, seq) == -1)
		return -1;
	(*n)++;
	return 0;
}

/*
 * A frontier from `pmon frontier --json` (file or "-"): each task with
 * an event in the past frontier stops just after it, before the next
 * one; a task with none cannot be stopped (its first records come
 * before its agent can give it a table) and is left out, said on stderr.
 */
static int
stopline_frontier(const char *path, char ***v, size_t *n)
{
	json_error_t err;
	json_t *root, *past, *seq;
	const char *key;
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	char *end;
	long long tid;

	if (f == NULL)
		return tool_error("%s: %s", path, strerror(errno));
	root = json_loadf(f, 0, &err);
	if (f != stdin)
		fclose(f);
	if (root == NULL)
		return tool_error("%s: line %d: %s", path, err.line, err.text);
	if (!json_is_object(past = json_object_get(root, "past"))) {
		json_decref(root);
		return tool_error("%s: not a frontier (no \"past\" object; "
		    "see pmon frontier)", path);
	}
	json_object_foreach(past, key, seq) {
		errno = 0;
		tid = strtoll(key, &end, 10);
		if (errno || *end != '\0' || tid <= 0 ||
		    !(json_is_integer(seq) || json_is_null(seq))) {
			json_decref(root);
			return tool_error("%s: bad frontier entry \"%s\"", path,
			    key);
		}
		if (json_is_null(seq)) {
			fprintf(stderr, "pmon stopline: t%llx has no event "
			    "before the frontier: not stopped\n", tid);
			continue;
		}
		if (stopline_add(v, n, tid, json_integer_value(seq) + 1) == -1) {
			json_decref(root);
			return tool_error("out of memory");
		}
	}
	json_decref(root);
	return EXIT_SUCCESS;
}

static int
cmd_stopline(const struct cmd_args *a)
{
	char **v = NULL, **nv, *req;
	size_t n = 0, i;
	int j, rv = EXIT_SUCCESS;

	for (j = 0; j < a->argc && rv == EXIT_SUCCESS; j++) {
		if (strchr(a->argv[j], ':') == NULL) {
			rv = stopline_frontier(a->argv[j], &v, &n);
			continue;
		}
		/* TID:SEQ, checked by the coordinator's parser. */
		if ((nv = reallocarray(v, n + 1, sizeof(*v))) == NULL ||
		    asprintf(&req, "stopline %s", a->argv[j]) == -1) {
			v = nv != NULL ? nv : v;
			rv = tool_error("out of memory");
			break;
		}
		v = nv;
		v[n++] = req;
	}
	if (rv == EXIT_SUCCESS && n == 0)
		rv = tool_usage_error("no task to stop");
	if (rv == EXIT_SUCCESS)
		rv = watch_run("pmon-stopline", v, n, a->seen['j'] > 0);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return rv;
}
