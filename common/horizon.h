/*
 * The horizon of the coordinator's causal links (pmon start -H,
 * pmon-coordd -H; doc/state.md, "Causality"): how far back `pmon
 * frontier` and the race checks can look.  Written "unlimited", or EVENTS, DURATION or both joined
 * by a comma: EVENTS the last events of each task, DURATION (a number
 * and s, m or h) the last stretch of the stream.  Where both are given,
 * whichever is reached first bounds the links.
 */
#ifndef PMON_HORIZON_H
#define PMON_HORIZON_H

#include <stdint.h>

/* The default: the links of each task's last 16384 events. */
#define HORIZON_EVENTS_DEFAULT	16384
#define HORIZON_EVENTS_MAX	(UINT64_C(1) << 40)
#define HORIZON_SECONDS_MAX	(366 * 24 * 3600)

/*
 * Parses spec into *events and *ns (0: no bound of that kind); -1 when
 * it is not a horizon.
 */
int	horizon_parse(const char *spec, uint64_t *events, uint64_t *ns);

#endif
