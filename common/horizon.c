/*
 * pmon start -H and pmon-coordd -H: the horizon of the causal links
 * (horizon.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "horizon.h"

/* One item: a count of events, or a duration with its unit. */
static int
horizon_item(const char *p, size_t len, uint64_t *events, uint64_t *ns)
{
	static const char units[] = "smh";
	static const uint64_t secs[] = { 1, 60, 3600 };
	char buf[32], *end;
	const char *u;
	unsigned long long v;

	if (len == 0 || len >= sizeof(buf) || p[0] < '0' || p[0] > '9')
		return -1;
	memcpy(buf, p, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno != 0 || v == 0)
		return -1;
	if (*end == '\0') {
		if (*events != 0 || v > HORIZON_EVENTS_MAX)
			return -1;
		*events = v;
		return 0;
	}
	if (end[1] != '\0' || (u = strchr(units, *end)) == NULL ||
	    *ns != 0 || v > HORIZON_SECONDS_MAX / secs[u - units])
		return -1;
	*ns = v * secs[u - units] * 1000000000ULL;
	return 0;
}

int
horizon_parse(const char *spec, uint64_t *events, uint64_t *ns)
{
	const char *comma;

	*events = *ns = 0;
	if (strcmp(spec, "unlimited") == 0)
		return 0;
	if ((comma = strchr(spec, ',')) == NULL)
		return horizon_item(spec, strlen(spec), events, ns);
	if (horizon_item(spec, (size_t)(comma - spec), events, ns) == -1 ||
	    horizon_item(comma + 1, strlen(comma + 1), events, ns) == -1) {
		*events = *ns = 0;
		return -1;
	}
	return 0;
}
