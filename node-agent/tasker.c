/*
 * The task starter of one host (doc/tasker.md has pvmd's side, measured).
 *
 *	pmon-agentd -S -p LIBRARY [-v]
 *
 * Registered as the host's tasker, it is handed every spawn on the host
 * (SM_STTASK: tid, flags, path, argv, the spawn's environment strings)
 * and starts the task as pvmd would have, with LIBRARY first in
 * LD_PRELOAD: pvmd's environment under the spawn's strings, pvmd's
 * directory or the spawn's (PVMSPAWNWD), default signals, no descriptor
 * of ours.  pmon's own daemons are started as they are.  Each exit goes
 * to pvmd (SM_TASKX: the wait status and rusage), which needs it for a
 * task that never connected (exec failed, not a PVM program).  Each
 * task's output comes on a pipe, which the starter forwards where pvmd
 * would have sent it, once the task says where (tasker.h).
 *
 * The starter is its own process, which pvmd starts for the agent (the
 * agent's executable again, with -S): pvmd drops the PVM connection of
 * every running task a tasker started when the tasker goes, so it must
 * outlive agent restarts.  The first on a host registers; the one a
 * restarted agent starts finds the registration taken (PvmAlready) and
 * leaves.  SIGTERM (tasker_stop, at an orderly agent shutdown)
 * unregisters it: pvmd forks new spawns itself again, and the starter
 * stays, enrolled, until the last task it started has ended.
 */
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>
#include <pvmproto.h>

#include "log.h"
#include "paths.h"
#include "spawn_env.h"
#include "tasker.h"
#include "xmalloc.h"

#define TASKER_PVMD	((int)0x80000000)	/* TIDPVMD: the local pvmd */
#define TASKER_STR_MAX	(1024 * 1024)	/* one string of a spawn */
#define TASKER_HELD_MAX	(64 * 1024)	/* output kept until we know where
					   it goes */
#define TASKER_READ	4096

/* What a spawn adds to pvmd's environment: not ours to pass on. */
static const char *const spawn_vars[] = {
	"PVMEPID", "PVMTMASK", "PVMTRCBUF", "PVMTRCOPT", "PVMCTX",
	"PVM_EXPORT", "PVMSPAWNWD", NULL
};

/* pmon's daemons: started without the library. */
static const char *const own_programs[] = {
	"pmon-agentd", "pmon-coordd", NULL
};

/* A spawn pvmd handed over (SM_STTASK). */
struct spawn_req {
	int32_t		 tid;
	int		 flags;		/* PvmTaskDebug matters */
	char		*path;		/* absolute */
	char		**argv;		/* argv[0] is path */
	int		 argc;
	char		**env;		/* the spawn's strings */
	int		 nenv;
};

/* A task we started. */
struct child {
	pid_t		 pid;
	int32_t		 tid;
	int		 out;		/* its output pipe's read end, or -1 */
	int		 ctl;		/* its connection (tasker.h), or -1 */
	int		 told;		/* we know where its output goes */
	struct tasker_hello to;
	char		*held;		/* its output until then */
	size_t		 nheld;
};

static struct {
	const char	*preload;
	struct child	**v;
	size_t		 n, cap;
	char		 pidfile[PATH_MAX];
	char		 sockpath[PATH_MAX];
	int		 stopping;
} tk;

/* --- the agent's side ---------------------------------------------------- */

/* The library next to our executable (../lib), or $PMON_PRELOAD. */
static int
preload_path(char *buf, size_t size)
{
	const char *env = getenv("PMON_PRELOAD");
	char exe[PATH_MAX], rel[PATH_MAX + 32], *slash;
	ssize_t n;

	if (env != NULL && *env != '\0')
		snprintf(rel, sizeof(rel), "%s", env);
	else {
		if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
			return -1;
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		snprintf(rel, sizeof(rel), "%s/../lib/libpmon-pvm.so", exe);
	}
	return size >= PATH_MAX && realpath(rel, buf) != NULL ? 0 : -1;
}

/*
 * pvmd starts it, on our host (or, when a starter is registered already,
 * that one does, and the new one leaves): so it is pvmd's child, which
 * outlives us, and its standard output and error are pvmd's pipe, which
 * goes to the pvmd log, where a task's lines without a collector go.
 */
void
tasker_start(const char *host, int verbose)
{
	char lib[PATH_MAX], exe[PATH_MAX];
	char *argv[] = { (char *)"-S", (char *)"-p", lib,
	    verbose ? (char *)"-v" : NULL, NULL };
	ssize_t n;
	int tid, rc;

	if (preload_path(lib, sizeof(lib)) == -1) {
		log_warn("no task starter: the instrumentation library "
		    "(set PMON_PRELOAD)");
		return;
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0) {
		log_warn("no task starter: /proc/self/exe");
		return;
	}
	exe[n] = '\0';
	if ((rc = pvm_spawn(exe, argv, PvmTaskHost, (char *)host, 1,
	    &tid)) != 1)
		log_warnx("no task starter: pvm_spawn: %d",
		    rc < 0 ? rc : tid);
}

/* Does pid run our executable? */
static int
same_program(pid_t pid)
{
	char path[64], a[PATH_MAX], b[PATH_MAX];
	ssize_t n, m;

	snprintf(path, sizeof(path), "/proc/%ld/exe", (long)pid);
	if ((n = readlink(path, a, sizeof(a))) <= 0 ||
	    (m = readlink("/proc/self/exe", b, sizeof(b))) <= 0)
		return 0;
	return n == m && memcmp(a, b, (size_t)n) == 0;
}

void
tasker_stop(void)
{
	char path[PATH_MAX], buf[32];
	long pid;
	ssize_t n;
	int fd;

	if (pmon_runtime_path(path, sizeof(path), PMON_FILE_TASKER) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((pid = strtol(buf, NULL, 10)) <= 1 || !same_program((pid_t)pid))
		return;		/* stale: that process is not a starter */
	if (kill((pid_t)pid, SIGTERM) == 0)
		log_debug("asked the task starter (pid %ld) to stop", pid);
}

/* --- the starter --------------------------------------------------------- */

/* Our environment becomes pvmd's: without what a spawn of us added. */
static void
env_as_pvmd(void)
{
	char *exp, *name, *save;
	size_t i;

	if ((exp = getenv("PVM_EXPORT")) != NULL) {
		exp = xstrdup(exp);
		for (name = strtok_r(exp, ":", &save); name != NULL;
		    name = strtok_r(NULL, ":", &save))
			unsetenv(name);
		free(exp);
	}
	for (i = 0; spawn_vars[i] != NULL; i++)
		unsetenv(spawn_vars[i]);
}

static int
own_program(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base != NULL ? base + 1 : path;
	for (i = 0; own_programs[i] != NULL; i++)
		if (strcmp(base, own_programs[i]) == 0)
			return 1;
	return 0;
}

static void
send_taskx(int tid, int status, const struct rusage *ru)
{
	int v[6] = { tid, status, 0, 0, 0, 0 };
	int rc;

	if (ru != NULL) {
		v[2] = (int)ru->ru_utime.tv_sec;
		v[3] = (int)ru->ru_utime.tv_usec;
		v[4] = (int)ru->ru_stime.tv_sec;
		v[5] = (int)ru->ru_stime.tv_usec;
	}
	if ((rc = pvm_initsend(PvmDataDefault)) < 0 ||
	    (rc = pvm_pkint(v, 6, 1)) < 0 ||
	    (rc = pvm_send(TASKER_PVMD, SM_TASKX)) < 0)
		log_warnx("t%x ended, but pvmd cannot be told: %d", tid, rc);
}

/* --- output -------------------------------------------------------------- */

/*
 * Output with no collector goes where pvmd's would go, its log, as lines
 * "[tTID] text": on our standard error, which is pvmd's pipe (pvmd logs
 * it as ours, so the line reads "[tSTARTER] [tTID] text").
 */
static void
output_log(const struct child *c, const char *p, size_t n)
{
	const char *nl;
	size_t len;

	while (n > 0) {
		len = (nl = memchr(p, '\n', n)) != NULL ? (size_t)(nl - p) : n;
		fprintf(stderr, "[t%x] %.*s\n", (unsigned)c->tid, (int)len, p);
		len = nl != NULL ? len + 1 : len;
		p += len;
		n -= len;
	}
	fflush(stderr);
}

/* To the collector as pvmd sends it: int tid, int n, byte data[n]. */
static void
output_send(const struct child *c, const char *p, size_t n)
{
	int sbuf, ctx, len = (int)n, tid = c->tid, rc;

	sbuf = pvm_setsbuf(pvm_mkbuf(PvmDataDefault));
	ctx = pvm_setcontext(c->to.out_ctx);
	if ((rc = pvm_pkint(&tid, 1, 1)) < 0 ||
	    (rc = pvm_pkint(&len, 1, 1)) < 0 ||
	    (rc = pvm_pkbyte((char *)p, len, 1)) < 0 ||
	    (rc = pvm_send(c->to.out_tid, c->to.out_code)) < 0)
		log_warnx("output of t%x to t%x lost: %d", (unsigned)c->tid,
		    (unsigned)c->to.out_tid, rc);
	pvm_setcontext(ctx);
	pvm_freebuf(pvm_setsbuf(sbuf));
}

static void
output_out(struct child *c, const char *p, size_t n)
{
	if (c->to.out_tid > 0)
		output_send(c, p, n);
	else
		output_log(c, p, n);
}

/* What the task wrote before it said where: now it goes there. */
static void
output_release(struct child *c)
{
	if (c->nheld > 0)
		output_out(c, c->held, c->nheld);
	free(c->held);
	c->held = NULL;
	c->nheld = 0;
}

static void
output(struct child *c, const char *p, size_t n)
{
	char *nv;

	if (c->told) {
		output_out(c, p, n);
		return;
	}
	/* Kept until it says (a bounded wait: the pvmd log after). */
	if (c->nheld + n > TASKER_HELD_MAX) {
		output_release(c);
		c->told = 1;
		output_out(c, p, n);
		return;
	}
	nv = xreallocarray(c->held, c->nheld + n, 1);
	memcpy(nv + c->nheld, p, n);
	c->held = nv;
	c->nheld += n;
}

/* Reads the task's pipe dry; closes it at its end. */
static void
output_drain(struct child *c)
{
	char buf[TASKER_READ];
	ssize_t n;

	while (c->out != -1) {
		if ((n = read(c->out, buf, sizeof(buf))) > 0) {
			output(c, buf, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN) {
			close(c->out);
			c->out = -1;
		}
		break;
	}
}

/* --- the tasks ----------------------------------------------------------- */

static struct child *
child_find_pid(pid_t pid)
{
	size_t i;

	for (i = 0; i < tk.n; i++)
		if (tk.v[i]->pid == pid)
			return tk.v[i];
	return NULL;
}

static struct child *
child_find_tid(int32_t tid)
{
	size_t i;

	for (i = 0; i < tk.n; i++)
		if (tk.v[i]->tid == tid)
			return tk.v[i];
	return NULL;
}

static struct child *
child_add(pid_t pid, int32_t tid, int out)
{
	struct child **nv, *c;
	size_t ncap;

	if (tk.n == tk.cap) {
		ncap = tk.cap ? 2 * tk.cap : 64;
		nv = xreallocarray(tk.v, ncap, sizeof(*nv));
		tk.v = nv;
		tk.cap = ncap;
	}
	c = xcalloc(1, sizeof(*c));
	c->pid = pid;
	c->tid = tid;
	c->out = out;
	c->ctl = -1;
	return tk.v[tk.n++] = c;
}

/* The task ended: what it wrote last, then its exit to pvmd. */
static void
child_end(struct child *c, int status, const struct rusage *ru)
{
	size_t i;

	output_drain(c);
	if (!c->told)
		output_release(c);
	if (c->ctl != -1)
		close(c->ctl);
	if (c->out != -1)
		close(c->out);
	send_taskx(c->tid, status, ru);
	for (i = 0; i < tk.n; i++)
		if (tk.v[i] == c) {
			tk.v[i] = tk.v[--tk.n];
			break;
		}
	free(c->held);
	free(c);
}

/*
 * The program a spawn runs: with PvmTaskDebug, the debugger, given the
 * path and the arguments, as pvmd does ($PVM_DEBUGGER, else the one in
 * $PVM_ROOT/lib; pvmd's hostfile bx= is not ours to read).
 */
static void
exec_spawn(const struct spawn_req *r)
{
	const char *dbg, *root;
	char def[PATH_MAX], **av;
	int i;

	if (!(r->flags & PvmTaskDebug)) {
		execv(r->path, r->argv);
		return;
	}
	if ((dbg = getenv("PVM_DEBUGGER")) == NULL || *dbg == '\0') {
		root = getenv("PVM_ROOT");
		snprintf(def, sizeof(def), "%s/lib/debugger",
		    root != NULL ? root : "/usr/lib/pvm3");
		dbg = def;
	}
	av = xcalloc((size_t)r->argc + 2, sizeof(*av));
	av[0] = (char *)dbg;
	for (i = 0; i < r->argc; i++)
		av[i + 1] = r->argv[i];
	execv(dbg, av);
}

/* The child's side: never returns. */
static void
child_exec(const struct spawn_req *r, int out)
{
	const char *wd = NULL;
	char *val, tidv[16];
	sigset_t none;
	int i, sig;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (dup2(out, STDOUT_FILENO) == -1 || dup2(out, STDERR_FILENO) == -1)
		_exit(1);
	close_range(3, ~0U, 0);
	for (i = 0; i < r->nenv; i++) {
		if (strncmp(r->env[i], "PVMSPAWNWD=", 11) == 0)
			wd = r->env[i] + 11;
		putenv(r->env[i]);
	}
	if (!own_program(r->path)) {
		snprintf(tidv, sizeof(tidv), "%d", (int)r->tid);
		if ((val = spawn_env_preload(getenv("LD_PRELOAD"),
		    tk.preload)) == NULL ||
		    setenv("LD_PRELOAD", val, 1) == -1 ||
		    setenv(TASKER_ENV_TID, tidv, 1) == -1)
			_exit(1);
	}
	if (wd != NULL && chdir(wd) == -1)
		_exit(1);
	exec_spawn(r);
	_exit(1);		/* as pvmd's own child does */
}

/*
 * A string of the spawn, malloc'ed; NULL when it is not one.  Read as
 * pvm_upkstr reads it (its length with the NUL, then the bytes), which
 * has no bound of its own.
 */
static char *
unpack_str(void)
{
	char *str;
	int len;

	if (pvm_upkint(&len, 1, 1) < 0 || len < 1 || len > TASKER_STR_MAX)
		return NULL;
	str = xmalloc((size_t)len);
	if (pvm_upkbyte(str, len, 1) < 0 || str[len - 1] != '\0') {
		free(str);
		return NULL;
	}
	return str;
}

static void
free_strs(char **v, int n)
{
	int i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Forks and execs the task, its output on a pipe to us. */
static void
spawn(const struct spawn_req *r)
{
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) == -1) {
		log_warn("cannot start t%x (%s)", (unsigned)r->tid, r->path);
		send_taskx(r->tid, 0, NULL);
		return;
	}
	if ((pid = fork()) == 0)
		child_exec(r, pfd[1]);
	close(pfd[1]);
	if (pid == -1) {
		log_warn("cannot start t%x (%s)", (unsigned)r->tid, r->path);
		close(pfd[0]);
		send_taskx(r->tid, 0, NULL);
		return;
	}
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	if (child_add(pid, r->tid, pfd[0]) == NULL) {
		/* Out of memory: it runs, its output and exit unseen. */
		log_warnx("t%x (%s): out of memory", (unsigned)r->tid,
		    r->path);
		close(pfd[0]);
		return;
	}
	log_debug("started t%x: %s, pid %ld", (unsigned)r->tid, r->path,
	    (long)pid);
}

/*
 * SM_STTASK: int tid, flags; str path; int argc; str argv[argc]; int
 * nenv; str env[nenv]; then inst, hosttotal, outof (not needed).
 */
static void
start_task(void)
{
	struct spawn_req r = { 0 };
	int i;

	if (pvm_upkint(&r.tid, 1, 1) < 0 || pvm_upkint(&r.flags, 1, 1) < 0 ||
	    (r.path = unpack_str()) == NULL ||
	    pvm_upkint(&r.argc, 1, 1) < 0 || r.argc < 0 || r.argc > 4096)
		goto bad;
	r.argv = xcalloc((size_t)r.argc + 1, sizeof(*r.argv));
	for (i = 0; i < r.argc; i++)
		if ((r.argv[i] = unpack_str()) == NULL)
			goto bad;
	if (pvm_upkint(&r.nenv, 1, 1) < 0 || r.nenv < 0 || r.nenv > 65536)
		goto bad;
	r.env = xcalloc((size_t)r.nenv + 1, sizeof(*r.env));
	for (i = 0; i < r.nenv; i++)
		if ((r.env[i] = unpack_str()) == NULL)
			goto bad;
	if (r.argc == 0) {
		/* No argv[0]: the path, as pvmd gives its own children. */
		free(r.argv);
		r.argv = xcalloc(2, sizeof(*r.argv));
		r.argv[0] = xstrdup(r.path);
		r.argc = 1;
	}
	spawn(&r);
	goto out;
bad:
	log_warnx("a spawn pvmd handed over is malformed; not started");
	/* pvmd keeps a task it handed over until it hears it ended. */
	if (r.tid > 0)
		send_taskx(r.tid, 1 << 8, NULL);	/* exit status 1 */
out:
	free(r.path);
	free_strs(r.argv, r.argc);
	free_strs(r.env, r.nenv);
}

static void
reap(void)
{
	struct child *c;
	struct rusage ru;
	pid_t pid;
	int status;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0)
		if ((c = child_find_pid(pid)) != NULL)
			child_end(c, status, &ru);
}

/* --- the tasks' connections (tasker.h) ------------------------------------ */

static int
listen_tasks(void)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (pmon_runtime_path(sun.sun_path, sizeof(sun.sun_path),
	    PMON_SOCK_STARTER) == -1 ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	/* A starter before us on this host is gone: we hold the host. */
	unlink(sun.sun_path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, 64) == -1) {
		close(fd);
		return -1;
	}
	snprintf(tk.sockpath, sizeof(tk.sockpath), "%s", sun.sun_path);
	return fd;
}

/*
 * A task says where its output goes.  It is the task pvmd gave that tid
 * to (its process, by SO_PEERCRED), and says it at once; anyone else is
 * shown the door.
 */
static void
accept_task(int lfd)
{
	struct timeval tv = { 1, 0 };
	struct tasker_hello h;
	struct child *c;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd;

	if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == -1 ||
	    read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    (c = child_find_tid(h.tid)) == NULL || c->pid != cr.pid ||
	    c->ctl != -1) {
		close(fd);
		return;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	c->ctl = fd;
	c->to = h;
	if (!c->told) {
		c->told = 1;
		output_release(c);
	}
}

/*
 * What we sent the collector has left pvmd before what the task does
 * next: pvmd routes our messages in order, so once it answered a request
 * made after them, they are in the collector's queue ahead of the end of
 * file pvmd sends at the task's pvm_exit.  (A message the answer's wait
 * takes in is handled by the loop's read_pvmd.)
 */
static void
pvmd_sync(const struct child *c)
{
	if (c->told && c->to.out_tid > 0)
		(void)pvm_pstat(pvm_mytid());
}

/* At its pvm_exit: everything it wrote is forwarded, then it is told. */
static void
task_says(struct child *c)
{
	char b;
	ssize_t n;

	while ((n = read(c->ctl, &b, 1)) == 1)
		if (b == TASKER_DRAIN) {
			output_drain(c);
			pvmd_sync(c);
			b = TASKER_DRAINED;
			(void)write(c->ctl, &b, 1);
		}
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR)) {
		close(c->ctl);
		c->ctl = -1;
	}
}

/* --- the loop ------------------------------------------------------------ */

/* Every message pvmd has for us; -1 when pvmd is gone. */
static int
read_pvmd(void)
{
	int bufid, len, tag, src;

	while ((bufid = pvm_nrecv(-1, -1)) > 0) {
		if (pvm_bufinfo(bufid, &len, &tag, &src) == 0 &&
		    tag == (int)SM_STTASK && src < 0)
			start_task();
		pvm_freebuf(bufid);
	}
	return bufid < 0 ? -1 : 0;
}

static void
stop(void)
{
	if (tk.stopping)
		return;
	tk.stopping = 1;
	(void)pvm_reg_tasker();	/* toggles: unregistered */
	unlink(tk.pidfile);
	log_info("task starter unregistered; %zu task%s still running",
	    tk.n, tk.n == 1 ? "" : "s");
}

static int
write_pidfile(void)
{
	char buf[32];
	int fd, n;

	if (pmon_runtime_path(tk.pidfile, sizeof(tk.pidfile),
	    PMON_FILE_TASKER) == -1 ||
	    (fd = open(tk.pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * The descriptors to watch: the signals, pvmd, our socket, and each
 * task's pipe and connection; who[i] names the task of pfd[i].
 */
static struct pollfd *
watch_set(int sigfd, int lfd, struct child ***who, nfds_t *nfds)
{
	static struct pollfd *pfd;
	static struct child **w;
	static size_t cap;
	size_t need, n = 0, i;
	int *fds, npvm, k;

	if ((npvm = pvm_getfds(&fds)) < 0)
		return NULL;
	need = 2 + (size_t)npvm + 2 * tk.n;
	if (need > cap) {
		cap = need * 2;
		pfd = xreallocarray(pfd, cap, sizeof(*pfd));
		w = xreallocarray(w, cap, sizeof(*w));
	}
	pfd[n].fd = sigfd;
	w[n++] = NULL;
	pfd[n].fd = lfd;
	w[n++] = NULL;
	for (k = 0; k < npvm; k++) {
		pfd[n].fd = fds[k];
		w[n++] = NULL;
	}
	for (i = 0; i < tk.n; i++) {
		pfd[n].fd = tk.v[i]->out;
		w[n++] = tk.v[i];
		pfd[n].fd = tk.v[i]->ctl;
		w[n++] = tk.v[i];
	}
	for (i = 0; i < n; i++) {
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	*who = w;
	*nfds = n;
	return pfd;
}

static int
serve(int sigfd, int lfd)
{
	struct signalfd_siginfo si;
	struct pollfd *pfd;
	struct child **who;
	nfds_t n, i;

	while (!tk.stopping || tk.n > 0) {
		if ((pfd = watch_set(sigfd, lfd, &who, &n)) == NULL)
			return -1;
		if (poll(pfd, n, -1) == -1 && errno != EINTR)
			return -1;
		/* The tasks' output first: a reaped task's goes with it. */
		for (i = 0; i < n; i++) {
			if (who[i] == NULL || pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == who[i]->out)
				output_drain(who[i]);
			else if (pfd[i].fd == who[i]->ctl)
				task_says(who[i]);
		}
		if (pfd[1].revents != 0)
			accept_task(lfd);
		while (read(sigfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo == SIGCHLD)
				reap();
			else
				stop();
		if (read_pvmd() == -1)
			return -1;
	}
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: pmon-agentd -S -p LIBRARY [-v]\n");
	exit(2);
}

/* Blocks the signals we take on a descriptor; returns it. */
static int
signals_init(void)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		fatal("signalfd");
	/* Our stderr is pvmd's pipe: it goes with pvmd. */
	signal(SIGPIPE, SIG_IGN);
	return fd;
}

int
tasker_main(int argc, char *argv[])
{
	int ch, verbose = 0, rc, sigfd, lfd, *fds, n, i;

	while ((ch = getopt(argc, argv, "Sp:v")) != -1)
		switch (ch) {
		case 'S':
			break;
		case 'p':
			tk.preload = optarg;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	if (optind != argc || tk.preload == NULL)
		usage();
	log_init("pmon-tasker", verbose);
	env_as_pvmd();
	sigfd = signals_init();
	pvm_setopt(PvmAutoErr, 0);	/* we say what went wrong */
	if (pvm_mytid() < 0)
		fatalx("cannot enrol in PVM: is pvmd running?");
	pvm_setopt(PvmResvTids, 1);
	if ((rc = pvm_reg_tasker()) < 0) {
		if (rc == PvmAlready)
			log_debug("the host has its task starter already");
		else
			log_warnx("cannot register as this host's task "
			    "starter: %d", rc);
		pvm_exit();
		return rc == PvmAlready ? 0 : 1;
	}
	/* Our pvmd socket is no task's business. */
	if ((n = pvm_getfds(&fds)) > 0)
		for (i = 0; i < n; i++)
			fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	if ((lfd = listen_tasks()) == -1)
		log_warn("no socket for the tasks (their output goes to the "
		    "pvmd log)");
	if (write_pidfile() == -1)
		log_warn("%s", tk.pidfile);
	log_info("starting this host's tasks with %s", tk.preload);
	rc = serve(sigfd, lfd);
	if (rc == -1)
		log_warnx("pvmd is gone; %zu task%s it had us start lose PVM",
		    tk.n, tk.n == 1 ? "" : "s");
	if (!tk.stopping)
		unlink(tk.pidfile);
	if (lfd != -1)
		unlink(tk.sockpath);
	pvm_exit();
	free(tk.v);
	return rc == -1 ? 1 : 0;
}
