/*
 * The names of the capture settings that take a word (capture.h).
 */
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
