/*
 * Fuzzes what pmon web parses itself from a browser: the values of a
 * query string (web_query_parse) and a POSTed request text
 * (web_request_text).  Neither may crash, read out of bounds or accept
 * a key or a request that breaks its rules.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "web.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct web_query q;
	char *s, out[WEB_REQUEST_MAX];
	const char *why;
	size_t i;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (web_query_parse(s, &q, &why) == 0 && q.key[0] != '\0') {
		for (i = 0; q.key[i] != '\0'; i++)
			if (strchr("0123456789abcdef", q.key[i]) == NULL)
				abort();
		if (i != WEB_KEY_LEN)
			abort();
	}
	if (web_request_text((const char *)data, size, out, sizeof(out),
	    &why) == 0)
		for (i = 0; out[i] != '\0'; i++)
			if (out[i] < 0x20 || out[i] > 0x7e)
				abort();
	free(s);
	return 0;
}
