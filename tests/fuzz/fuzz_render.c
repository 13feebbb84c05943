/*
 * Fuzzes pmon's reading of the coordinator's replies (tools/render.c),
 * the JSON every table of the pmon command is made from.  The first
 * byte picks the request the reply answers, the rest is the reply.  No
 * reply may crash it or read out of bounds; one it cannot read writes
 * nothing.
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
	int rv;

	if (size < 1 || (fp = open_memstream(&buf, &len)) == NULL)
		return 0;
	rv = render_reply(fp, requests[data[0] % (sizeof(requests) /
	    sizeof(requests[0]))], (const char *)data + 1, size - 1);
	fclose(fp);
	if (rv == -1 && len != 0)
		abort();
	free(buf);
	return 0;
}
