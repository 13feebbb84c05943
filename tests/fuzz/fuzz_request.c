/*
 * Fuzzes the request parser (coordinator/request.c) with arbitrary text,
 * as a tool may send it.  A refused request must get an error that names
 * a column inside the text (or just past it) and quotes no control byte.
 * An accepted one must have a canonical text that parses back to the
 * same tree, and that text must be a fixed point of format(parse()).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct req r1, r2;
static char text1[REQ_TEXT_MAX], text2[REQ_TEXT_MAX];

/* err is "column N: ..." with 1 <= N <= len + 1, all printable. */
static void
check_error(const char *err, size_t len)
{
	unsigned long col;
	char *end;
	size_t i;

	if (strncmp(err, "column ", 7) != 0)
		__builtin_trap();
	col = strtoul(err + 7, &end, 10);
	if (col < 1 || col > len + 1 || strncmp(end, ": ", 2) != 0 ||
	    end[2] == '\0')
		__builtin_trap();
	for (i = 0; err[i] != '\0'; i++)
		if ((unsigned char)err[i] < 0x20 || err[i] == 0x7f)
			__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], *s;
	int n1, n2;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (req_parse(s, &r1, err, sizeof(err)) == -1) {
		check_error(err, strlen(s));
		free(s);
		return 0;
	}
	free(s);
	if ((n1 = req_format(&r1, text1, sizeof(text1))) < 0 ||
	    (size_t)n1 != strlen(text1))
		__builtin_trap();
	if (req_parse(text1, &r2, err, sizeof(err)) == -1 ||
	    !req_equal(&r1, &r2) || !req_equal(&r2, &r1))
		__builtin_trap();
	if ((n2 = req_format(&r2, text2, sizeof(text2))) != n1 ||
	    strcmp(text1, text2) != 0)
		__builtin_trap();
	return 0;
}
