/*
 * Fuzzes what a restarted agent reads of another process before it
 * adopts its ring: /proc/PID/environ, any bytes at all (the process is
 * the user's, but its environment is whatever it was started with).
 * The first input byte says how many of the next bytes are the agent's
 * own PVM_TMP; the rest is the environment.  The answer must be the one
 * a plain reading gives: the last complete PVM_TMP=VALUE (empty or
 * absent: /tmp) equals ours.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
reference(const char *env, size_t len, const char *mine)
{
	const char *v = "/tmp";
	size_t i, start = 0;

	for (i = 0; i < len; i++) {
		if (env[i] != '\0')
			continue;
		if (i - start >= 8 && memcmp(env + start, "PVM_TMP=", 8) == 0)
			v = i - start > 8 ? env + start + 8 : "/tmp";
		start = i + 1;
	}
	if (*mine == '\0')
		mine = "/tmp";
	return strcmp(v, mine) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char mine[256], *env;
	size_t n, envlen;

	if (size < 1)
		return 0;
	n = data[0] < size - 1 ? data[0] : size - 1;
	memcpy(mine, data + 1, n);
	mine[n] = '\0';	/* ours comes from getenv: cut at a NUL */
	envlen = size - 1 - n;
	/* A copy of exactly envlen bytes: reads past it are caught. */
	if ((env = malloc(envlen > 0 ? envlen : 1)) == NULL)
		return 0;
	memcpy(env, data + 1 + n, envlen);
	if (agent_adopt_environ_match(env, envlen, mine) !=
	    reference(env, envlen, mine))
		__builtin_trap();
	free(env);
	return 0;
}
