/*
 * One variable exported to the tasks of one pvm_spawn (spawn_env.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawn_env.h"

/* Is name one of the colon-separated names of list? */
static int
export_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ':') &&
		    (p[n] == '\0' || p[n] == ':'))
			return 1;
	return 0;
}

/* A copy of the variable's value, or NULL when it is not set. */
static int
env_save(const char *name, char **old, int *had)
{
	const char *v = getenv(name);

	*had = v != NULL;
	*old = NULL;
	return v != NULL && (*old = strdup(v)) == NULL ? -1 : 0;
}

static void
env_restore(const char *name, int had, const char *old)
{
	if (had)
		setenv(name, old, 1);
	else
		unsetenv(name);
}

int
spawn_env_set(struct spawn_env *se, const char *name, const char *value)
{
	const char *exp, *newexp = NULL;
	char *list = NULL;
	int rv = 0;

	memset(se, 0, sizeof(*se));
	se->name = name;
	if (env_save(name, &se->old_value, &se->had_value) == -1 ||
	    env_save("PVM_EXPORT", &se->old_export, &se->had_export) == -1) {
		free(se->old_value);
		memset(se, 0, sizeof(*se));
		return -1;
	}
	se->set = 1;
	exp = se->old_export;
	if (exp == NULL || exp[0] == '\0')
		newexp = name;
	else if (!export_has(exp, name)) {
		if (asprintf(&list, "%s:%s", exp, name) == -1)
			rv = -1;
		newexp = list;
	}
	if (rv == 0 && (setenv(name, value, 1) == -1 || (newexp != NULL &&
	    setenv("PVM_EXPORT", newexp, 1) == -1)))
		rv = -1;
	free(list);
	if (rv == -1)
		spawn_env_restore(se);
	return rv;
}

void
spawn_env_restore(struct spawn_env *se)
{
	if (!se->set)
		return;
	env_restore(se->name, se->had_value, se->old_value);
	env_restore("PVM_EXPORT", se->had_export, se->old_export);
	free(se->old_value);
	free(se->old_export);
	memset(se, 0, sizeof(*se));
}
