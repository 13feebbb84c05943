/*
 * Fuzzes libpmon's frame reader: whatever bytes a coordinator sends, the
 * library decodes them or fails with a message, and the callbacks only
 * ever see valid strings, peer arrays within bounds and a task for every
 * event.  The first input byte picks the size of the pieces the stream is
 * fed in, so frames split at every boundary get exercised.  The stream is
 * decoded a second time without an event callback (what a recorder
 * does, which skips building events): it must be accepted or refused
 * exactly as with one, with the same message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pmon-internal.h"
#include "pmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void
touch_task(const struct pmon_task *t, void *arg)
{
	(void)arg;
	sink += strlen(t->host) + strlen(t->program) + (size_t)t->tid;
}

static void
touch_event(const struct pmon_event *ev, void *arg)
{
	unsigned i;

	(void)arg;
	if (ev->task == NULL || ev->task->tid != ev->tid)
		__builtin_trap();
	touch_task(ev->task, NULL);
	sink += strlen(ev->call_name) + strlen(ev->group);
	for (i = 0; i < ev->npeers; i++)
		sink += (size_t)ev->peers[i];
}

static void
touch_flush(uint32_t id, void *arg)
{
	(void)arg;
	sink += id;
}

static void
touch_bye(const char *reason, void *arg)
{
	(void)arg;
	sink += strlen(reason);
}

static void
touch_json(const char *json, size_t len, void *arg)
{
	(void)arg;
	sink += strlen(json) + len;
}

static void
touch_frame(int type, const void *payload, size_t len, void *arg)
{
	(void)arg;
	if (len > 0 && payload == NULL)
		__builtin_trap();
	sink += (size_t)type + len;
}

static const struct pmon_callbacks callbacks = {
	.task = touch_task, .event = touch_event, .flush_done = touch_flush,
	.bye = touch_bye, .snapshot = touch_json, .problem = touch_json
};

static const struct pmon_callbacks frames_only = {
	.frame = touch_frame
};

/* Feeds the stream in pieces; returns where it stopped, and why in err. */
static size_t
feed(const struct pmon_callbacks *cb, const uint8_t *data, size_t size,
    size_t chunk, char *err, size_t errsize)
{
	struct pmon *p;
	size_t off, n;

	err[0] = '\0';
	if ((p = pmon_new()) == NULL)
		__builtin_trap();
	pmon_set_callbacks(p, cb, NULL);
	for (off = 0; off < size; off += n) {
		n = size - off < chunk ? size - off : chunk;
		if (pmon_feed(p, data + off, n) == -1) {
			if (pmon_error(p)[0] == '\0')
				__builtin_trap();
			snprintf(err, errsize, "%s", pmon_error(p));
			break;
		}
	}
	pmon_free(p);
	return off;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err1[2048], err2[2048];
	size_t chunk, end1, end2;

	if (size < 1)
		return 0;
	chunk = data[0] ? data[0] : size;
	data++;
	size--;
	end1 = feed(&callbacks, data, size, chunk, err1, sizeof(err1));
	end2 = feed(&frames_only, data, size, chunk, err2, sizeof(err2));
	if (end1 != end2 || strcmp(err1, err2) != 0)
		__builtin_trap();
	return 0;
}
