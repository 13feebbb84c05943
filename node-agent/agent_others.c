/*
 * The tasks of our host that pmon does not instrument: one that ran
 * before pmon started, a static binary, one pvmd started itself (pmon
 * start --no-tasker).  pvmd's task list is read every AGENT_OTHERS_MS; a
 * task in it twice in a row that never came to us (by tid, or by pid
 * while its hello is on its way) is reported to the coordinator in
 * TASK_OTHERS, the whole list, whenever the list changes.  One the
 * starter started and that has not enrolled yet (pvmd knows it by a
 * placeholder pid) is pmon's, however long a busy host takes to start
 * it: 1,024 tasks spawned at once over 8 hosts took 15 s.  One that has
 * the instrumentation library loaded is on its way to us: it has
 * AGENT_OTHERS_HELLO_READS readings to come.  pmon's own
 * processes and PVM's consoles (pvm, xpvm) are tools, not the
 * application, and are left out.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <pvm3.h>

#include "agent.h"
#include "log.h"
#include "xmalloc.h"

/* The command of process pid (/proc/PID/comm), "" if it is gone. */
static void
proc_comm(pid_t pid, char *dst, size_t size)
{
	char path[64];
	FILE *f;

	dst[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fgets(dst, (int)size, f) == NULL)
		dst[0] = '\0';
	fclose(f);
	dst[strcspn(dst, "\n")] = '\0';
}

/* Is pid a tool: pmon's (pmon-agentd, pmon-coordd) or a PVM console? */
static int
is_tool(pid_t pid)
{
	char comm[32];

	proc_comm(pid, comm, sizeof(comm));
	return strncmp(comm, "pmon-", 5) == 0 || strcmp(comm, "pvm") == 0 ||
	    strcmp(comm, "xpvm") == 0;
}

/*
 * Did the starter start it, and has it not enrolled yet?  pvmd knows
 * such a task by a placeholder pid, from 10,000,000 on (above any Linux
 * pid), until the task enrols (doc/tasker.md).
 */
static int
is_starting(pid_t pid)
{
	return pid >= 10000000;
}

/* Has process pid loaded the instrumentation library? */
static int
is_instrumented(pid_t pid)
{
	char path[64], line[512];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, "/libpmon-pvm.so") != NULL;
	fclose(f);
	return found;
}

/* Has the task come to us (registered, or its hello under way)? */
static int
is_ours(struct agent *a, int32_t tid, pid_t pid)
{
	struct agent_task *t;

	TAILQ_FOREACH(t, &a->tasks, entry)
		if ((t->state != TASK_S_HELLO && t->hello.tid == tid) ||
		    t->peer_pid == pid)
			return 1;
	return 0;
}

static int
cmp_other(const void *x, const void *y)
{
	const struct agent_other *a = x, *b = y;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static struct agent_other *
other_find(struct agent_other *v, size_t n, int32_t tid)
{
	struct agent_other key = { .tid = tid };

	if (n == 0)
		return NULL;
	return bsearch(&key, v, n, sizeof(*v), cmp_other);
}

/* The name pvmd gave it (a spawned task's path), else its command. */
static void
other_name(char *dst, size_t size, const struct pvmtaskinfo *ti)
{
	if (ti->ti_a_out != NULL && ti->ti_a_out[0] != '\0')
		snprintf(dst, size, "%s", ti->ti_a_out);
	else
		proc_comm(ti->ti_pid, dst, size);
}

/*
 * One reading of pvmd's list: the candidates become what it holds now,
 * each marked reported once it was there last time too.  Returns 1 when
 * the reported set changed.
 */
int
agent_others_read(struct agent *a, struct pvmtaskinfo *ti, int n)
{
	struct agent_other *next, *was;
	size_t k = 0, i;
	int changed = 0;

	next = xcalloc((size_t)n + 1, sizeof(*next));
	for (i = 0; i < (size_t)n && k < AGENT_OTHERS_MAX; i++) {
		if (ti[i].ti_tid == a->pvm_tid || ti[i].ti_pid <= 0 ||
		    is_ours(a, ti[i].ti_tid, ti[i].ti_pid) ||
		    is_tool(ti[i].ti_pid))
			continue;
		next[k].tid = ti[i].ti_tid;
		next[k].parent = ti[i].ti_ptid > 0 ? ti[i].ti_ptid : 0;
		next[k].pid = (uint32_t)ti[i].ti_pid;
		other_name(next[k].program, sizeof(next[k].program), &ti[i]);
		k++;
	}
	qsort(next, k, sizeof(*next), cmp_other);
	for (i = 0; i < k; i++) {
		was = other_find(a->others, a->nothers, next[i].tid);
		if (was == NULL || was->pid != next[i].pid)
			continue;
		next[i].seen = was->seen + 1;
		if (was->reported || (!is_starting((pid_t)next[i].pid) &&
		    (next[i].seen >= AGENT_OTHERS_HELLO_READS ||
		    !is_instrumented((pid_t)next[i].pid)))) {
			next[i].reported = 1;
			changed |= !was->reported;
		}
	}
	for (i = 0; i < a->nothers; i++)
		if (a->others[i].reported && ((was = other_find(next, k,
		    a->others[i].tid)) == NULL || !was->reported))
			changed = 1;
	free(a->others);
	a->others = next;
	a->nothers = k;
	return changed;
}

void
agent_others_send(struct agent *a)
{
	if (a->coord == NULL)
		return;
	agent_frame_task_others(a->out, a->others, a->nothers);
	agent_output(a);
}

static void
others_cb(int fd, short what, void *arg)
{
	struct agent *a = arg;
	struct pvmtaskinfo *ti;
	int n, rc;

	(void)fd;
	(void)what;
	if (a->pvm_tid == -1)
		return;
	rc = pvm_tasks(a->host_tid, &n, &ti);
	agent_pvm_queued(a);
	if (rc < 0) {
		if (rc == PvmSysErr)
			agent_pvm_gone(a, rc);
		return;
	}
	if (agent_others_read(a, ti, n))
		agent_others_send(a);
}

int
agent_others_watch(struct agent *a)
{
	struct timeval tv = { AGENT_OTHERS_MS / 1000,
	    (AGENT_OTHERS_MS % 1000) * 1000 };

	if (a->pvm_tid == -1)
		return 0;
	a->ev_others = event_new(a->base, -1, EV_PERSIST, others_cb, a);
	if (a->ev_others == NULL || event_add(a->ev_others, &tv) == -1)
		return -1;
	return 0;
}

void
agent_others_free(struct agent *a)
{
	if (a->ev_others != NULL)
		event_free(a->ev_others);
	a->ev_others = NULL;
	free(a->others);
	a->others = NULL;
	a->nothers = 0;
}
