/*
 * Fuzzes libpmon's frame reader: whatever bytes a coordinator sends, the
 * library decodes them or fails with a message, and the callbacks only
 * ever see valid strings, peer arrays within bounds and a task for every
 * event.  The first input byte picks the size of the pieces the stream is
 * fed in, so frames split at every boundary get exercised.
 */
#include <stddef.h>
#include <stdint.h>
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

static const struct pmon_callbacks callbacks = {
	.task = touch_task, .event = touch_event, .flush_done = touch_flush,
	.bye = touch_bye, .snapshot = touch_json, .problem = touch_json
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmon *p;
	size_t chunk, off, n;

	if (size < 1)
		return 0;
	chunk = data[0] ? data[0] : size;
	data++;
	size--;
	if ((p = pmon_new()) == NULL)
		return 0;
	pmon_set_callbacks(p, &callbacks, NULL);
	for (off = 0; off < size; off += n) {
		n = size - off < chunk ? size - off : chunk;
		if (pmon_feed(p, data + off, n) == -1) {
			if (pmon_error(p)[0] == '\0')
				__builtin_trap();
			break;
		}
	}
	pmon_free(p);
	return 0;
}
