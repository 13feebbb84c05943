/*
 * The information commands: pmon ps, hosts, groups, queues, snapshot,
 * problems, frontier and tools.  Each but tools flushes first, so that
 * the answer covers everything recorded before the command ran, then
 * sends one request (doc/requests.md) and prints the reply: a table made
 * from its JSON (render.c), or the JSON itself with --json.  pmon tools answers at once: a flush would wait for
 * the very lossless tool it may be asked about.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmon-tool.h"
#include "pmon.h"

static int	cmd_query(const struct cmd_args *);

static const struct option query_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 }
};

#define QUERY_HELP	"  -j, --json    print JSON (doc/state.md) instead of a table\n"

const struct cmd_entry cmd_ps_entry = {
	"ps", "[--json]",
	"list the tasks: host, program, state, where each is blocked, traffic",
	QUERY_HELP, "+hj", query_longopts, 0, 0, cmd_query
};

const struct cmd_entry cmd_hosts_entry = {
	"hosts", "[--json]",
	"list the hosts of the virtual machine and their agents",
	QUERY_HELP, "+hj", query_longopts, 0, 0, cmd_query
};

const struct cmd_entry cmd_groups_entry = {
	"groups", "[--json]",
	"list the groups, their members and barriers in progress",
	QUERY_HELP, "+hj", query_longopts, 0, 0, cmd_query
};

const struct cmd_entry cmd_mailbox_entry = {
	"mailbox", "[--json]",
	"list the message mailbox: what pvm_putinfo stored, by name and index",
	QUERY_HELP, "+hj", query_longopts, 0, 0, cmd_query
};

const struct cmd_entry cmd_queues_entry = {
	"queues", "[--json] [TASK]",
	"list the messages sent and not yet received, per receiver",
	QUERY_HELP "TASK is a tid (decimal, 0x hex, or t40001).\n",
	"+hj", query_longopts, 0, 1, cmd_query
};

const struct cmd_entry cmd_tasks_entry = {
	"tasks", "[--json] [OBJECTS]",
	"task details: the model's view and what /proc says (state, CPU, memory)",
	QUERY_HELP "OBJECTS: tasks (t40003 or 262147), host:NAME, group:NAME or *\n"
	"(the default), separated by commas.\n",
	"+hj", query_longopts, 0, 1, cmd_query
};

const struct cmd_entry cmd_snapshot_entry = {
	"snapshot", "[--json]",
	"the whole state of the application, at one point of the stream",
	QUERY_HELP, "+hj", query_longopts, 0, 0, cmd_query
};

const struct cmd_entry cmd_problems_entry = {
	"problems", "[--json]",
	"deadlocks, message races, unreceived messages, waits on exited tasks",
	QUERY_HELP, "+hj", query_longopts, 0, 0, cmd_query
};

const struct cmd_entry cmd_tools_entry = {
	"tools", "[--json]",
	"list the attached tools: lossless or lossy, queued, lost, held back",
	QUERY_HELP, "+hj", query_longopts, 0, 0, cmd_query
};

const struct cmd_entry cmd_frontier_entry = {
	"frontier", "[--json] TASK:SEQ",
	"the past and future frontiers of an event (the stopline), as JSON",
	"  -j, --json    accepted: the frontiers are always JSON\n",
	"+hj", query_longopts, 1, 1, cmd_query
};

int
tool_query(const char *name, const char *request, unsigned flags,
    FILE *out)
{
	struct pmon *p;
	char *reply;
	size_t len;
	int rv = EXIT_SUCCESS;

	if ((p = pmon_new()) == NULL)
		return tool_error("out of memory");
	if (pmon_connect(p, NULL, name, 0) == -1 ||
	    (strcmp(request, "tools") != 0 && pmon_flush(p) == -1) ||
	    pmon_request(p, request, flags, &reply, &len) == -1)
		rv = tool_error("%s", pmon_error(p));
	else {
		rv = tool_reply_print(out, request, reply, len,
		    (flags & PMON_JSON) != 0);
		free(reply);
	}
	pmon_free(p);
	return rv;
}

int
tool_reply_print(FILE *out, const char *request, const char *reply,
    size_t len, int json)
{
	int st;

	st = render_reply(json ? NULL : out, request, reply, len);
	if (json && len > 0) {
		fwrite(reply, 1, len, out);
		if (reply[len - 1] != '\n')
			fputc('\n', out);
	}
	if (st == -1 && !json)
		return tool_error("the coordinator's reply to \"%.40s\" is "
		    "not understood: %.200s", request, reply);
	return st == RENDER_FAILED ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int
cmd_query(const struct cmd_args *a)
{
	const char *cmd = tool_command_name();
	char request[1024], name[64];
	int json = a->seen['j'] > 0;

	if (strcmp(cmd, "frontier") == 0)
		json = 1;
	if (a->argc > 0)
		snprintf(request, sizeof(request), "%s %s", cmd, a->argv[0]);
	else
		snprintf(request, sizeof(request), "%s", cmd);
	snprintf(name, sizeof(name), "pmon-%s", cmd);
	return tool_query(name, request, json ? PMON_JSON : 0, stdout);
}
