/*
 * The secret of one virtual machine: 32 random bytes the coordinator
 * makes when it starts, written as 64 lowercase hex digits to
 * $PVM_TMP/pmon-secret.UID (our user's, mode 0600) and removed when it
 * exits.  Every AGENT_HELLO and TOOL_HELLO carries it, and the
 * coordinator drops a peer whose secret is wrong or missing
 * (doc/protocol.md, "Authentication").  Tools read the file; agents get
 * the secret in their environment (PMON_SECRET, which the coordinator
 * exports to the agents it spawns through PVM) or from a file (-s).
 */
#ifndef PMON_SECRET_H
#define PMON_SECRET_H

#include <stddef.h>

#define PMON_SECRET_BYTES	32
#define PMON_SECRET_LEN		(2 * PMON_SECRET_BYTES)	/* hex digits */
#define PMON_SECRET_ENV		"PMON_SECRET"

int	pmon_secret_make(char *out);
int	pmon_secret_write(const char *path, const char *secret);
int	pmon_secret_read(const char *path, char *out, const char **why);
int	pmon_secret_valid(const char *s);
int	pmon_secret_equal(const char *expected, const char *got);

#endif
