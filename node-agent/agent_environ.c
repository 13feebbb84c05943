/*
 * Which PVM virtual machine a process belongs to, from its environment
 * (agent_adopt.c).  Depends on nothing but the C library, so that a
 * fuzz target can link it alone.
 */
#include <string.h>

#include "agent.h"

/*
 * Does the environment env (len bytes of NUL-terminated VAR=VALUE, as
 * in /proc/PID/environ) name the directory pvm_tmp in PVM_TMP?  An
 * unset or empty PVM_TMP is /tmp, as for every PVM program.
 */
int
agent_adopt_environ_match(const char *env, size_t len, const char *pvm_tmp)
{
	const char *p = env, *end = env + len, *nul, *v = "/tmp";
	size_t n;

	while (p < end) {
		if ((nul = memchr(p, '\0', (size_t)(end - p))) == NULL)
			break;		/* cut short: the rest is unknown */
		if (strncmp(p, "PVM_TMP=", 8) == 0)
			v = p[8] != '\0' ? p + 8 : "/tmp";
		p = nul + 1;
	}
	if (pvm_tmp == NULL || *pvm_tmp == '\0')
		pvm_tmp = "/tmp";
	n = strlen(pvm_tmp);
	return strncmp(v, pvm_tmp, n) == 0 && v[n] == '\0';
}

