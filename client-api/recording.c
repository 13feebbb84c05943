/*
 * libpmon: writing recordings (pmon.h), over common/recfile.c, so that a
 * tool needs neither the file format nor the protocol's version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmon.h"
#include "proto.h"
#include "recfile.h"
#include "wire.h"

_Static_assert(PMON_RECORDING_FORMAT == RECFILE_VERSION &&
    PMON_RECORDING_BLOCK_DEFAULT == RECFILE_BLOCK_DEFAULT &&
    PMON_RECORDING_BLOCK_MIN == RECFILE_BLOCK_MIN &&
    PMON_RECORDING_BLOCK_MAX == RECFILE_BLOCK_MAX,
    "pmon.h's recording limits");
_Static_assert(sizeof(((struct pmon_recording_header *)0)->writer) ==
    RECFILE_STR_MAX + 1, "pmon.h's recording strings");

struct pmon_recording {
	struct recfile_writer	*w;
};

static void
counts_copy(struct pmon_recording_counts *to, const struct recfile_end *e)
{
	to->frames = e->frames;
	to->events = e->events;
	to->tasks = e->tasks;
	to->raw_bytes = e->raw_bytes;
	to->file_bytes = e->file_bytes;
	to->ended_ns = e->ended_ns;
}

struct pmon_recording *
pmon_recording_create(const char *path,
    const struct pmon_recording_header *header, size_t block_size,
    char *err, size_t errsize)
{
	struct pmon_recording *r;
	struct recfile_header h;

	memset(&h, 0, sizeof(h));
	h.version = (uint16_t)header->format;
	h.proto = PROTO_VERSION;
	h.created_ns = header->created_ns;
	memcpy(h.writer, header->writer, sizeof(h.writer));
	memcpy(h.clock, header->clock, sizeof(h.clock));
	memcpy(h.source, header->source, sizeof(h.source));
	h.writer[RECFILE_STR_MAX] = h.clock[RECFILE_STR_MAX] =
	    h.source[RECFILE_STR_MAX] = '\0';
	if (header->format > RECFILE_VERSION) {
		snprintf(err, errsize, "no recording format %u (1 to %d)",
		    header->format, RECFILE_VERSION);
		return NULL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	if ((r->w = recfile_create(path, &h, block_size, err, errsize)) ==
	    NULL) {
		free(r);
		return NULL;
	}
	return r;
}

int
pmon_recording_write(struct pmon_recording *r, int type, const void *payload,
    size_t len)
{
	return recfile_write_frame(r->w, (uint8_t)type, payload, len);
}

int
pmon_recording_write_host(struct pmon_recording *r, int32_t host_tid,
    int agent_up, const char *name, const char *arch)
{
	uint8_t buf[4 + 1 + 2 * (2 + RECFILE_STR_MAX)], *q;

	if (strlen(name) > RECFILE_STR_MAX || strlen(arch) > RECFILE_STR_MAX)
		return 0;	/* no host of PVM's has such names */
	wire_put32(buf, (uint32_t)host_tid);
	buf[4] = agent_up != 0;
	q = wire_putstr(buf + 5, name);
	q = wire_putstr(q, arch);
	return recfile_write_frame(r->w, REC_HOST, buf, (size_t)(q - buf));
}

int
pmon_recording_sync(struct pmon_recording *r)
{
	return recfile_sync(r->w);
}

int
pmon_recording_finish(struct pmon_recording *r,
    struct pmon_recording_counts *counts)
{
	struct recfile_end e;
	int rv;

	rv = recfile_finish(r->w, &e);
	if (counts != NULL)
		counts_copy(counts, &e);
	return rv;
}

void
pmon_recording_free(struct pmon_recording *r)
{
	if (r == NULL)
		return;
	recfile_writer_free(r->w);
	free(r);
}

const char *
pmon_recording_error(const struct pmon_recording *r)
{
	return recfile_writer_error(r->w);
}
