/*
 * Stopping tasks (doc/control.md): CONTROL from the coordinator stops,
 * continues or kills tasks of this host; BREAKPOINTS replaces the table
 * every task checks itself.
 *
 * A stop is done when the kernel shows every thread of the task stopped
 * and its ring has been drained: the TASK_RECORDS go out ahead of the
 * CONTROL_DONE, on the same buffer.  The agent looks at /proc every
 * AGENT_STOP_POLL_MS, for at most AGENT_STOP_TIMEOUT_MS; several
 * CONTROLs may be waiting at once, each with its own timer.
 *
 * A task that hits a breakpoint writes its BREAK record, sends
 * TASK_STOPPED and only then stops itself: the coordinator may hear of
 * the BREAK, and answer with a CONTROL, while the task has still to
 * raise(SIGSTOP).  A SIGCONT sent in that window would be lost (the task
 * would stay stopped for ever), and a SIGSTOP would stop it short of its
 * own, which would stop it again once continued.  So while the last
 * record drained from its ring is a BREAK and the kernel does not show
 * it stopped, neither a continue nor a stop signals it: both wait for
 * it to stop itself, as a stop waits for its SIGSTOP.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "log.h"
#include "proto.h"
#include "wire.h"
#include "xmalloc.h"

static long
ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((now.tv_sec - start->tv_sec) * 1000000000L +
	    (now.tv_nsec - start->tv_nsec)) / 1000000;
}

/*
 * The state letter of /proc/.../stat (path): "pid (comm) S ...", where
 * comm may hold anything, parentheses too.  0 when it cannot be read.
 */
static char
stat_state(const char *path)
{
	char buf[512], *p;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2];
}

static int
state_stopped(char c)
{
	return c == 'T' || c == 't';
}

/*
 * Has pid stopped?  Every thread must be (SIGSTOP stops them one by
 * one).  Returns 1 when all are, 0 when not yet, -1 when the process is
 * gone or a zombie: it will never stop.
 */
int
agent_proc_stopped(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	char c;
	int all = 1;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	c = stat_state(path);
	if (c == 0 || c == 'Z' || c == 'X' || c == 'x')
		return -1;
	if (!state_stopped(c))
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	if ((d = opendir(path)) == NULL)
		return 1;		/* the leader is stopped: enough */
	while (all && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strlen(de->d_name) > 20)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%s/stat",
		    (long)pid, de->d_name);
		c = stat_state(path);
		/* A thread that exited meanwhile is not running either. */
		if (c != 0 && c != 'Z' && c != 'X' && c != 'x' &&
		    !state_stopped(c))
			all = 0;
	}
	closedir(d);
	return all;
}

/*
 * /proc/PID/stat (after the command, which may hold blanks: field 3 is
 * the state, 14-15 utime and stime in ticks, 20 the threads, 23 vsize
 * in bytes, 24 rss in pages) and the system call it sits in.
 */
int
agent_proc_read(pid_t pid, struct task_proc *pr)
{
	char path[64], buf[1024], *p;
	unsigned long long f[25];
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || (buf[n] = '\0', p = strrchr(buf, ')')) == NULL ||
	    p[1] != ' ' || p[2] == '\0')
		return -1;
	pr->state = (uint8_t)p[2];
	p += 3;
	for (i = 4; i <= 24; i++) {
		while (*p == ' ')
			p++;
		f[i] = strtoull(p, &p, 10);
	}
	if (tick <= 0)
		tick = 100;
	pr->utime_ms = f[14] * 1000 / (unsigned long long)tick;
	pr->stime_ms = f[15] * 1000 / (unsigned long long)tick;
	pr->threads = (uint32_t)f[20];
	pr->vsize_kb = f[23] / 1024;
	pr->rss_kb = f[24] * (unsigned long long)(page > 0 ? page : 4096) / 1024;
	pr->syscall = -1;
	snprintf(path, sizeof(path), "/proc/%ld/syscall", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		if ((n = read(fd, buf, 32)) > 0 && buf[0] >= '0' &&
		    buf[0] <= '9') {
			buf[n] = '\0';
			pr->syscall = (int32_t)strtol(buf, NULL, 10);
		}
		close(fd);
	}
	return 0;
}

static void
settle(struct agent_control *c, struct agent_control_task *ct,
    uint8_t status)
{
	ct->status = status;
	if (ct->pending) {
		ct->pending = 0;
		c->npending--;
	}
}

/*
 * The task of ct, while it is the same live process: not ended, not
 * gone (agent_task_gone: its pid cannot have been reused).
 */
static struct agent_task *
control_task(struct agent_control *c, struct agent_control_task *ct)
{
	struct agent_task *t = agent_task_find(c->agent, ct->tid);

	if (t == NULL || (ct->pid != 0 && t->peer_pid != ct->pid) ||
	    agent_task_gone(t))
		return NULL;
	return t;
}

static int
control_signal(uint8_t op)
{
	switch (op) {
	case CONTROL_STOP:
		return SIGSTOP;
	case CONTROL_CONTINUE:
		return SIGCONT;
	default:
		return SIGKILL;
	}
}

/*
 * Is t on its way to stop itself at a breakpoint: its last record
 * drained a BREAK, no SIGCONT of ours since, and not stopped yet?
 */
static int
break_pending(struct agent_task *t)
{
	return t->at_break && agent_proc_stopped(t->peer_pid) == 0;
}

/*
 * Sends sig to the task of ct; ct->status says how that went.  After a
 * SIGCONT the task is past its BREAK: a second continue does not wait.
 */
static int
control_kill(struct agent_task *t, struct agent_control_task *ct, int sig)
{
	if (kill(ct->pid, sig) == -1) {
		ct->status = errno == ESRCH ? CONTROL_NO_TASK : CONTROL_FAILED;
		log_warn("task t%x (pid %ld): signal %d",
		    (unsigned)ct->tid, (long)ct->pid, sig);
		return -1;
	}
	if (sig == SIGCONT)
		t->at_break = t->stopped_by_us = 0;
	else if (sig == SIGSTOP)
		t->stopped_by_us = 1;
	ct->status = CONTROL_OK;
	return 0;
}

/*
 * Is a CONTROL that came before c still holding back a signal to task
 * tid?  Held CONTROLs of one task take effect in the order they came,
 * whichever timer runs first.
 */
static int
earlier_held(struct agent_control *c, int32_t tid)
{
	struct agent_control *e;
	unsigned i;

	TAILQ_FOREACH(e, &c->agent->controls, entry) {
		if (e == c)
			break;
		for (i = 0; i < e->n; i++)
			if (e->t[i].held && e->t[i].pending &&
			    e->t[i].tid == tid)
				return 1;
	}
	return 0;
}

/*
 * A stop is settled when the task shows stopped (its ring is drained
 * then) or will never stop.  A ring found corrupt ends the task, with
 * TASK_END ahead of our answer: CONTROL_NO_TASK.  A stop held back
 * (the task was on its way to its breakpoint) sends its SIGSTOP after
 * all if the task got past the breakpoint without stopping: continued
 * by an earlier CONTROL, or by someone else.
 */
static void
stop_check(struct agent_control *c, struct agent_control_task *ct)
{
	struct agent_task *t;
	int stopped;

	if ((t = control_task(c, ct)) == NULL ||
	    (stopped = agent_proc_stopped(ct->pid)) == -1) {
		settle(c, ct, CONTROL_NO_TASK);
		return;
	}
	if (ct->held) {
		if (earlier_held(c, ct->tid))
			return;
		if (!stopped && !t->at_break) {
			ct->held = 0;
			if (control_kill(t, ct, SIGSTOP) == -1)
				settle(c, ct, ct->status);
			return;
		}
	}
	if (!stopped)
		return;
	ct->held = 0;
	if (agent_task_drain(t) == -1) {
		settle(c, ct, CONTROL_NO_TASK);
		return;
	}
	settle(c, ct, CONTROL_OK);
}

/*
 * A continue held back until the task stopped itself at its breakpoint
 * (or got past it some other way: a later record was drained, or an
 * earlier continue sent SIGCONT).
 */
static void
cont_check(struct agent_control *c, struct agent_control_task *ct)
{
	struct agent_task *t;

	if ((t = control_task(c, ct)) == NULL) {
		settle(c, ct, CONTROL_NO_TASK);
		return;
	}
	if (earlier_held(c, ct->tid) || break_pending(t))
		return;
	ct->held = 0;
	(void)control_kill(t, ct, SIGCONT);
	settle(c, ct, ct->status);
}

static void
control_check(struct agent_control *c, struct agent_control_task *ct)
{
	if (c->op == CONTROL_CONTINUE)
		cont_check(c, ct);
	else
		stop_check(c, ct);
}

/*
 * Signals the task of ct, and has a stop wait until it shows stopped.
 * A task on its way to stop itself at a breakpoint gets no signal yet
 * (ct is held): a stop waits for its own stop, a continue sends SIGCONT
 * after it; so does one that comes while an earlier CONTROL is held
 * for the task.  A kill never waits.
 */
static void
control_start(struct agent_control *c, struct agent_control_task *ct)
{
	struct task_proc pr;
	struct agent_task *t;

	if ((t = control_task(c, ct)) == NULL) {
		ct->status = CONTROL_NO_TASK;
		return;
	}
	ct->pid = t->peer_pid;
	if (c->op == CONTROL_INFO) {
		/* Its TASK_PROC goes out ahead of the CONTROL_DONE. */
		pr.tid = ct->tid;
		if (agent_proc_read(ct->pid, &pr) == -1) {
			ct->status = CONTROL_NO_TASK;
			return;
		}
		agent_frame_task_proc(c->agent->out, c->id, &pr);
		ct->status = CONTROL_OK;
		return;
	}
	ct->held = c->op != CONTROL_KILL &&
	    (break_pending(t) || earlier_held(c, ct->tid));
	if (!ct->held && control_kill(t, ct, control_signal(c->op)) == -1)
		return;
	if (c->op == CONTROL_KILL || (c->op == CONTROL_CONTINUE && !ct->held))
		return;
	ct->pending = 1;
	c->npending++;
	if (c->op == CONTROL_STOP)
		stop_check(c, ct);	/* one already stopped is done now */
}

static void
control_free(struct agent_control *c)
{
	TAILQ_REMOVE(&c->agent->controls, c, entry);
	if (c->ev != NULL)
		event_free(c->ev);
	free(c);
}

/* Every task is settled: the answer goes out after the rings drained. */
static void
control_done(struct agent_control *c)
{
	struct agent *a = c->agent;

	agent_frame_control_done(a->out, c->id, c->t, c->n);
	control_free(c);
	agent_output_sync(a);
}

static void
control_tick(int fd, short what, void *arg)
{
	struct agent_control *c = arg;
	int late = ms_since(&c->start) >= AGENT_STOP_TIMEOUT_MS;
	unsigned i;

	(void)fd;
	(void)what;
	for (i = 0; i < c->n; i++) {
		if (!c->t[i].pending)
			continue;
		control_check(c, &c->t[i]);
		if (c->t[i].pending && late) {
			log_warnx("task t%x (pid %ld) did not stop within "
			    "%d ms%s", (unsigned)c->t[i].tid,
			    (long)c->t[i].pid, AGENT_STOP_TIMEOUT_MS,
			    c->op == CONTROL_CONTINUE ? " at its breakpoint: "
			    "not continued" : "");
			settle(c, &c->t[i], CONTROL_FAILED);
		}
	}
	if (c->npending == 0)
		control_done(c);
}

/*
 * CONTROL from the coordinator.  A malformed one is logged and dropped:
 * the coordinator is trusted, but checked.
 */
void
agent_control(struct agent *a, const uint8_t *p, size_t len)
{
	struct timeval tv = { 0, AGENT_STOP_POLL_MS * 1000 };
	struct control_msg m;
	struct agent_control *c;
	const char *why;
	unsigned i;

	if (control_decode(p, len, &m, &why) == -1) {
		log_warnx("bad CONTROL from the coordinator: %s; ignored",
		    why);
		return;
	}
	c = xcalloc(1, sizeof(*c) + m.n * sizeof(c->t[0]));
	c->agent = a;
	c->id = m.id;
	c->op = m.op;
	c->n = m.n;
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	TAILQ_INSERT_TAIL(&a->controls, c, entry);
	for (i = 0; i < c->n; i++) {
		c->t[i].tid = (int32_t)wire_get32(m.tids + 4 * (size_t)i);
		control_start(c, &c->t[i]);
	}
	if (c->npending == 0) {
		control_done(c);
		return;
	}
	c->ev = event_new(a->base, -1, EV_PERSIST, control_tick, c);
	if (c->ev == NULL || event_add(c->ev, &tv) == -1) {
		log_warnx("CONTROL %u: cannot wait for the tasks to stop",
		    c->id);
		for (i = 0; i < c->n; i++)
			if (c->t[i].pending)
				settle(c, &c->t[i], CONTROL_FAILED);
		control_done(c);
	}
}

/* BREAKPOINTS: the whole table, into every task's control page. */
void
agent_breakpoints(struct agent *a, const uint8_t *p, size_t len)
{
	struct breakpoint bps[BREAKPOINTS_MAX];
	const char *why;
	unsigned n;

	if (breakpoints_decode(p, len, bps, &n, &why) == -1) {
		log_warnx("bad BREAKPOINTS from the coordinator: %s; the "
		    "table stays as it was", why);
		return;
	}
	if (n > 0)
		memcpy(a->bps, bps, n * sizeof(bps[0]));
	a->nbp = n;
	agent_tasks_set_breakpoints(a);
	log_debug("%u breakpoints set", n);
}

#define RELEASE_WAIT_MS	200	/* for a task on its way to its stop */

/*
 * The agent is leaving (shutdown, or its coordinator is gone): nobody
 * would be left to continue what pmon stopped.  The breakpoints go, and
 * every task stopped by us or at a breakpoint continues; one still on
 * its way to its own SIGSTOP is waited for a moment first, or the
 * SIGCONT would come before it and be lost.
 */
void
agent_control_release(struct agent *a)
{
	struct timespec start, nap = { 0, 1000000 };
	struct agent_task *t;

	a->nbp = 0;
	agent_tasks_set_breakpoints(a);
	clock_gettime(CLOCK_MONOTONIC, &start);
	TAILQ_FOREACH(t, &a->tasks, entry) {
		if (t->state != TASK_S_ACTIVE || agent_task_gone(t) ||
		    (!t->stopped_by_us && !t->at_break))
			continue;
		while (t->at_break && agent_proc_stopped(t->peer_pid) == 0 &&
		    ms_since(&start) < RELEASE_WAIT_MS)
			nanosleep(&nap, NULL);
		if (kill(t->peer_pid, SIGCONT) == 0)
			log_info("task t%x continued: the agent leaves",
			    (unsigned)t->hello.tid);
		t->at_break = t->stopped_by_us = 0;
	}
}

/* Forgets the CONTROLs in progress, unanswered (agent_free). */
void
agent_controls_free(struct agent *a)
{
	while (!TAILQ_EMPTY(&a->controls))
		control_free(TAILQ_FIRST(&a->controls));
}
