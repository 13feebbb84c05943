/*
 * Capture settings a run chooses with `pmon start` (doc/capture.md): the
 * coordinator checks them and passes them to the agents it spawns.
 */
#ifndef PMON_CAPTURE_H
#define PMON_CAPTURE_H

/* Bytes queued for the coordinator above which an agent stops draining
 * the rings (pmon-agentd -b). */
#define CAPTURE_BUFFER_DEFAULT	(16U * 1024 * 1024)
#define CAPTURE_BUFFER_MIN	(64U * 1024)
#define CAPTURE_BUFFER_MAX	(1024U * 1024 * 1024)

/* The longest time between two sync flushes of an agent's stream
 * (pmon-agentd -i), in ms. */
#define CAPTURE_LIVE_DEFAULT	20
#define CAPTURE_LIVE_MIN	1
#define CAPTURE_LIVE_MAX	100

#endif
