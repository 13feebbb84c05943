/*
 * Fuzzes horizon_parse, the parser of pmon start -H and pmon-coordd -H:
 * whatever it accepts is within the documented bounds, and "unlimited"
 * is the only spec with neither bound.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "horizon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t events, ns;
	char *spec;

	if ((spec = malloc(size + 1)) == NULL)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	if (horizon_parse(spec, &events, &ns) == 0) {
		if (events > HORIZON_EVENTS_MAX ||
		    ns > (uint64_t)HORIZON_SECONDS_MAX * 1000000000ULL)
			__builtin_trap();
		if (events == 0 && ns == 0 && strcmp(spec, "unlimited") != 0)
			__builtin_trap();
	} else if (events != 0 || ns != 0)
		__builtin_trap();
	free(spec);
	return 0;
}
