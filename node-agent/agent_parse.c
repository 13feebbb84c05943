/*
 * The agent's decoders of what the coordinator sends: CONTROL and ACK
 * (BREAKPOINTS: common/breakpoint.c; a task's frames: common/task_msg.c).  A task
 * is not trusted, and the coordinator is checked: every field is checked
 * before the agent acts on it.  Depends on common/ only, so a fuzz
 * target can link it alone.
 */
#include <string.h>

#include "agent.h"
#include "proto.h"
#include "record.h"
#include "wire.h"

/*
 * CONTROL: u32 id, u8 op, u16 n, n x i32 tid.  The tids stay in the
 * payload (m->tids); any tid is fine here, one the agent does not serve
 * is answered CONTROL_NO_TASK.
 */
int
agent_parse_control(const uint8_t *payload, size_t len,
    struct agent_control_msg *m, const char **why)
{
	struct wire_reader r;

	wire_reader_init(&r, payload, len);
	m->id = wire_read32(&r);
	m->op = wire_read8(&r);
	m->n = wire_read16(&r);
	m->tids = wire_take(&r, 4 * (size_t)m->n);
	if (r.err) {
		*why = "CONTROL truncated";
		return -1;
	}
	if (r.off != len) {
		*why = "CONTROL has trailing bytes";
		return -1;
	}
	if (m->op != CONTROL_STOP && m->op != CONTROL_CONTINUE &&
	    m->op != CONTROL_KILL && m->op != CONTROL_INFO) {
		*why = "CONTROL has an unknown operation";
		return -1;
	}
	return 0;
}

/*
 * Does the environment env (len bytes of NUL-terminated VAR=VALUE, as
 * in /proc/PID/environ) name the directory pvm_tmp in PVM_TMP?  An
 * unset or empty PVM_TMP is /tmp, as for every PVM program.
 */
int
agent_adopt_environ_match(const char *env, size_t len, const char *pvm_tmp)
{
	const char *p = env, *end = env + len, *nul, *v = "/tmp";
	size_t n;

	while (p < end) {
		if ((nul = memchr(p, '\0', (size_t)(end - p))) == NULL)
			break;		/* cut short: the rest is unknown */
		if (strncmp(p, "PVM_TMP=", 8) == 0)
			v = p[8] != '\0' ? p + 8 : "/tmp";
		p = nul + 1;
	}
	if (pvm_tmp == NULL || *pvm_tmp == '\0')
		pvm_tmp = "/tmp";
	n = strlen(pvm_tmp);
	return strncmp(v, pvm_tmp, n) == 0 && v[n] == '\0';
}

/*
 * ACK (doc/protocol.md): u16 n, then n entries of i32 tid, u64 seq,
 * u8 ended.  Checks the whole payload; the entries are then read with
 * agent_ack_entry.  Returns 0 with the count in *n, or -1 with *why.
 */
int
agent_parse_ack(const uint8_t *payload, size_t len, unsigned *n,
    const char **why)
{
	unsigned i, count;

	if (len < 2) {
		*why = "ACK truncated";
		return -1;
	}
	count = wire_get16(payload);
	if (len != 2 + (size_t)count * ACK_ENTRY_LEN) {
		*why = "ACK length does not match its count";
		return -1;
	}
	for (i = 0; i < count; i++)
		if (payload[2 + i * ACK_ENTRY_LEN + 12] > 1) {
			*why = "ACK entry with a bad ended flag";
			return -1;
		}
	*n = count;
	return 0;
}

/* Entry i of an ACK that agent_parse_ack accepted. */
void
agent_ack_entry(const uint8_t *payload, unsigned i, int32_t *tid,
    uint64_t *seq, int *ended)
{
	const uint8_t *e = payload + 2 + (size_t)i * ACK_ENTRY_LEN;

	*tid = (int32_t)wire_get32(e);
	*seq = wire_get64(e + 4);
	*ended = e[12];
}
