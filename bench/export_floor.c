/*
 * export_floor: what `pmon export -i RECORDING` costs before any format
 * writes a byte: the recording read with common/recfile and every
 * stream frame decoded by libpmon (pmon_feed), exactly as tools/export.c
 * does, into callbacks that only count.  bench/bench_export.sh prints
 * it beside the exports, so that their figures can be read as this
 * floor plus the format's own work.
 *
 *	export_floor RECORDING
 *
 * Prints "floor events=E cpu_s=S ev_s=X" (user + system time of this
 * process, from getrusage).
 */
#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>

#include "pmon-internal.h"
#include "pmon.h"
#include "proto.h"
#include "recfile.h"

static void
count_event(const struct pmon_event *ev, void *arg)
{
	(void)ev;
	(*(unsigned long long *)arg)++;
}

/* The frames a subscribed tool gets, through the decoder; -1 on error. */
static int
floor_feed(struct pmon *p, struct recfile *rf)
{
	const uint8_t *payload;
	uint8_t type, hdr[FRAME_HDR_SIZE];
	size_t len;
	int rv;

	while ((rv = recfile_next(rf, &type, &payload, &len)) == 1) {
		if (type != MSG_TASK_INFO && type != MSG_EVENT &&
		    type != MSG_PROBLEM && type != MSG_NOTICE &&
		    type != MSG_TASK_GONE)
			continue;
		frame_hdr_encode(hdr, type, (uint32_t)len);
		if (pmon_feed(p, hdr, sizeof(hdr)) == -1 ||
		    pmon_feed(p, payload, len) == -1) {
			fprintf(stderr, "export_floor: %s\n", pmon_error(p));
			return -1;
		}
	}
	if (rv == -1)
		fprintf(stderr, "export_floor: %s\n", recfile_error(rf));
	return rv;
}

int
main(int argc, char **argv)
{
	struct pmon_callbacks cb = { .event = count_event };
	unsigned long long events = 0;
	struct recfile *rf;
	struct rusage ru;
	struct pmon *p;
	char err[512];
	double cpu;
	int rv;

	if (argc != 2) {
		fprintf(stderr, "usage: export_floor RECORDING\n");
		return 2;
	}
	if ((rf = recfile_open(argv[1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "export_floor: %s: %s\n", argv[1], err);
		return 1;
	}
	if ((p = pmon_new()) == NULL) {
		fprintf(stderr, "export_floor: out of memory\n");
		return 1;
	}
	pmon_set_callbacks(p, &cb, &events);
	rv = floor_feed(p, rf);
	recfile_close(rf);
	pmon_free(p);
	getrusage(RUSAGE_SELF, &ru);
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("floor events=%llu cpu_s=%.2f ev_s=%.0f\n", events, cpu,
	    cpu > 0 ? events / cpu : 0);
	return rv == -1;
}
