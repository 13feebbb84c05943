/*
 * Fuzzes pmon's reading of what the coordinator says in JSON
 * (tools/render.c): the replies every table of the pmon command is made
 * from, and the problems and notices pmon trace and pmon watch print in
 * words.  The first byte picks the request the reply answers (or a
 * problem or a notice), the rest is the JSON.  Nothing may crash it or
 * read out of bounds; a reply it cannot read writes nothing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmon-tool.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const requests[] = {
	"snapshot", "ps", "queues t40001", "problems", "tools", "tasks *",
	"stop *", "breakpoints", "on enter send do stop", "delete 1",
	"flush", "frontier 262145:1",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;
	size_t nreq = sizeof(requests) / sizeof(requests[0]), k;
	int rv = 0;

	if (size < 1 || (fp = open_memstream(&buf, &len)) == NULL)
		return 0;
	k = data[0] % (nreq + 2);
	if (k < nreq)
		rv = render_reply(fp, requests[k], (const char *)data + 1,
		    size - 1);
	else
		render_stream_object(fp, k == nreq ? "problem" : "notice",
		    (const char *)data + 1, size - 1);
	fclose(fp);
	if (rv == -1 && len != 0)
		abort();
	free(buf);
	return 0;
}
