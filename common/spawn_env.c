/*
 * One variable exported to the tasks of one pvm_spawn (spawn_env.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawn_env.h"

int
spawn_env_list_has(const char *list, const char *seps, const char *word)
{
	size_t n = strlen(word), len;

	while (*list != '\0') {
		len = strcspn(list, seps);
		if (len == n && strncmp(list, word, n) == 0)
			return 1;
		list += len;
		list += strspn(list, seps);
	}
	return 0;
}

char *
spawn_env_preload(const char *old, const char *lib)
{
	char *val;

	if (old == NULL || *old == '\0')
		return strdup(lib);
	if (spawn_env_list_has(old, ": ", lib))
		return strdup(old);
	if (asprintf(&val, "%s:%s", lib, old) == -1)
		return NULL;
	return val;
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
	else if (!spawn_env_list_has(exp, ":", name)) {
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

void
spawn_env_keep(struct spawn_env *se)
{
	free(se->old_value);
	free(se->old_export);
	memset(se, 0, sizeof(*se));
}
