/*
 * A variable passed to the tasks one pvm_spawn creates: set in our
 * environment and named in PVM_EXPORT only around the call (libpvm3
 * sends the exported variables with the spawn), then both put back as
 * they were.  The instrumentation passes PMON_SPAWN this way, the
 * coordinator the secret (doc/protocol.md).
 */
#ifndef PMON_SPAWN_ENV_H
#define PMON_SPAWN_ENV_H

struct spawn_env {
	const char	*name;
	char		*old_value;
	char		*old_export;
	int		 had_value;
	int		 had_export;
	int		 set;
};

/* Sets name=value, exported; -1 (nothing changed) when out of memory. */
int	spawn_env_set(struct spawn_env *, const char *name, const char *value);
/* Puts both variables back; a no-op unless spawn_env_set succeeded. */
void	spawn_env_restore(struct spawn_env *);
/* Leaves both as they are set now, for good (pmon_instrument_env). */
void	spawn_env_keep(struct spawn_env *);

/* Is word one of the entries of list, separated by any of seps? */
int	spawn_env_list_has(const char *list, const char *seps, const char *word);
/*
 * LD_PRELOAD's value with lib first, keeping what old held (ld.so
 * separates entries by spaces or colons); malloc'd, NULL out of memory.
 */
char	*spawn_env_preload(const char *old, const char *lib);

#endif
