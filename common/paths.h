/*
 * Where the pmon daemons of one virtual machine meet: sockets and files in
 * the PVM_TMP directory of the host (default /tmp), named by uid.  Two
 * virtual machines with different PVM_TMP never see each other, and every
 * host of a multi-host machine uses its own.
 */
#ifndef PMON_PATHS_H
#define PMON_PATHS_H

#include <stddef.h>

#define PMON_SOCK_AGENT		"agent"		/* tasks register here */
#define PMON_SOCK_COORD		"coord"		/* tools connect here */
#define PMON_FILE_SECRET	"secret"	/* the VM's secret (secret.h) */
#define PMON_FILE_RING		"ring"		/* ring bytes for this host's
						   tasks (doc/capture.md) */
#define PMON_FILE_TASKER	"tasker"	/* the pid of the host's task
						   starter (node-agent/tasker.c) */
#define PMON_SOCK_STARTER	"starter"	/* its tasks tell it where
						   their output goes */

int	pmon_runtime_path(char *buf, size_t size, const char *what);
int	pmon_secret_path_for(char *buf, size_t size, const char *sock_path);
int	pmon_pvmd_pid(char *path, size_t size);

#endif
