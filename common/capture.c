/*
 * The capture settings that take a word or a duration (capture.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

static const char *const compress_names[] = {
	[CAPTURE_COMPRESS_REMOTE] = "remote",
	[CAPTURE_COMPRESS_ALWAYS] = "always",
	[CAPTURE_COMPRESS_NEVER] = "never",
};

/* always, remote or never: its enum capture_compress, else -1. */
int
capture_compress_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(compress_names) / sizeof(compress_names[0]);
	    i++)
		if (strcmp(name, compress_names[i]) == 0)
			return (int)i;
	return -1;
}

/*
 * A blocking timeout: "forever", or digits and "ms" or "s".  Returns 0
 * with it in *ns (CAPTURE_BLOCK_FOREVER for forever), else -1.
 */
int
capture_block_parse(const char *s, uint64_t *ns)
{
	unsigned long long v;
	char *end;

	if (strcmp(s, "forever") == 0) {
		*ns = CAPTURE_BLOCK_FOREVER;
		return 0;
	}
	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || v > CAPTURE_BLOCK_MAX_MS)
		return -1;
	if (strcmp(end, "s") == 0)
		v *= 1000;
	else if (strcmp(end, "ms") != 0)
		return -1;
	if (v < 1 || v > CAPTURE_BLOCK_MAX_MS)
		return -1;
	*ns = v * 1000000ULL;
	return 0;
}
