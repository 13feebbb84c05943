/*
 * libpmon: what a tool that starts pmon's daemons or PVM programs needs
 * (pmon.h): where the virtual machine's sockets are, and the environment
 * that makes programs run monitored.
 */
#include <stdlib.h>

#include "paths.h"
#include "pmon.h"
#include "spawn_env.h"

int
pmon_coordinator_path(char *buf, size_t size)
{
	return pmon_runtime_path(buf, size, PMON_SOCK_COORD);
}

int
pmon_agent_path(char *buf, size_t size)
{
	return pmon_runtime_path(buf, size, PMON_SOCK_AGENT);
}

int
pmon_instrument_env(const char *path)
{
	struct spawn_env se;
	char *val;
	int rv;

	if ((val = spawn_env_preload(getenv("LD_PRELOAD"), path)) == NULL)
		return -1;
	if ((rv = spawn_env_set(&se, "LD_PRELOAD", val)) == 0)
		spawn_env_keep(&se);
	free(val);
	return rv;
}
