/*
 * pmon flush and pmon shutdown: one request each to the coordinator.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pmon-tool.h"
#include "pmon.h"

/* How long shutdown waits for the coordinator's final flush and BYE. */
#define SHUTDOWN_TIMEOUT_MS	60000

static int	cmd_flush(const struct cmd_args *);
static int	cmd_shutdown(const struct cmd_args *);

static const struct option ctl_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_flush_entry = {
	"flush", "",
	"wait until every event recorded so far reached the subscribed tools",
	"", "+h", ctl_longopts, 0, 0, cmd_flush
};

const struct cmd_entry cmd_shutdown_entry = {
	"shutdown", "",
	"flush, stop the agents and the coordinator, and wait until it is gone",
	"", "+h", ctl_longopts, 0, 0, cmd_shutdown
};

static struct pmon *
ctl_connect(const char *name)
{
	struct pmon *p;

	if ((p = pmon_new()) == NULL) {
		tool_error("out of memory");
		return NULL;
	}
	if (pmon_connect(p, NULL, name, 0) == -1) {
		tool_error("%s", pmon_error(p));
		pmon_free(p);
		return NULL;
	}
	return p;
}

static int
cmd_flush(const struct cmd_args *a)
{
	struct pmon *p;
	int rv = 0;

	(void)a;
	if ((p = ctl_connect("pmon-flush")) == NULL)
		return EXIT_FAILURE;
	if (pmon_flush(p) == -1)
		rv = tool_error("%s", pmon_error(p));
	pmon_free(p);
	return rv;
}

/* Shutdown is done when the coordinator says BYE or closes: both mean
 * it finished its final flush and is exiting. */
static int
cmd_shutdown(const struct cmd_args *a)
{
	struct pmon *p;
	int rv = 0, n;

	(void)a;
	if ((p = ctl_connect("pmon-shutdown")) == NULL)
		return EXIT_FAILURE;
	if (pmon_send_shutdown(p) == -1)
		rv = tool_error("%s", pmon_error(p));
	else {
		while ((n = pmon_wait(p, SHUTDOWN_TIMEOUT_MS)) == 1)
			;
		if (n == 0)
			rv = tool_error("the coordinator did not finish "
			    "within %d s", SHUTDOWN_TIMEOUT_MS / 1000);
		else if (!pmon_closed(p))
			rv = tool_error("%s", pmon_error(p));
	}
	pmon_free(p);
	return rv;
}
