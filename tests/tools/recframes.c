/*
 * recframes: lists the frames of a recording (doc/recording.md), so that
 * a test can see what pmon record wrote without going through a replay.
 *
 *	recframes FILE
 *
 * One line per frame, in file order: the frame's type (TASK_INFO, EVENT,
 * TASK_GONE, REC_HOST, REC_SNAPSHOT, ...), then for PROBLEM and NOTICE a
 * space and the JSON body, for every other type a space and the payload
 * length.  Exit status 0 when the file ended with its end block, 1 when
 * it is damaged or truncated (the reader's error on stderr), 2 when it
 * cannot be opened.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "recfile.h"

static const char *
type_name(uint8_t type)
{
	if (type == REC_HOST)
		return "REC_HOST";
	if (type == REC_SNAPSHOT)
		return "REC_SNAPSHOT";
	return proto_msg_name(type);
}

int
main(int argc, char **argv)
{
	struct recfile *rf;
	const uint8_t *p;
	char err[512];
	uint8_t type;
	size_t len;
	int rv;

	if (argc != 2) {
		fprintf(stderr, "usage: recframes FILE\n");
		return 2;
	}
	if ((rf = recfile_open(argv[1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "recframes: %s: %s\n", argv[1], err);
		return 2;
	}
	while ((rv = recfile_next(rf, &type, &p, &len)) == 1) {
		if (type == MSG_PROBLEM || type == MSG_NOTICE)
			printf("%s %.*s\n", type_name(type), (int)len,
			    (const char *)p);
		else
			printf("%s %zu\n", type_name(type), len);
	}
	if (rv == -1)
		fprintf(stderr, "recframes: %s: %s\n", argv[1],
		    recfile_error(rf));
	recfile_close(rf);
	return rv == 0 ? 0 : 1;
}
