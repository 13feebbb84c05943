/*
 * The agent's decoder of TASK_HELLO (task_hello.h).  A task is not
 * trusted: every field is checked before the agent acts on it.  Depends
 * on common/ only, so a fuzz target can link it alone.
 */
#include <string.h>

#include "agent.h"
#include "wire.h"

/*
 * Decodes a TASK_HELLO payload of len bytes.  Returns 0, or -1 with *why
 * naming the problem.
 */
int
agent_parse_task_hello(const uint8_t *payload, size_t len,
    struct task_hello *h, const char **why)
{
	struct wire_reader r;

	memset(h, 0, sizeof(*h));
	wire_reader_init(&r, payload, len);
	h->tid = (int32_t)wire_read32(&r);
	h->pid = wire_read32(&r);
	h->parent_tid = (int32_t)wire_read32(&r);
	h->spawn_seq = wire_read64(&r);
	wire_readstr(&r, h->program, sizeof(h->program));
	if (r.err) {
		*why = "TASK_HELLO truncated or program name invalid";
		return -1;
	}
	if (r.off != len) {
		*why = "TASK_HELLO has trailing bytes";
		return -1;
	}
	if (h->tid <= 0) {
		*why = "TASK_HELLO tid is not a task id";
		return -1;
	}
	if (h->pid == 0 || h->pid > INT32_MAX) {
		*why = "TASK_HELLO pid out of range";
		return -1;
	}
	if (h->parent_tid < 0 || (h->parent_tid == 0) != (h->spawn_seq == 0)) {
		*why = "TASK_HELLO parent_tid and spawn_seq disagree";
		return -1;
	}
	return 0;
}
