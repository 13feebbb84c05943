/*
 * The coordinator as a PVM task: it enrols, picks the address agents can
 * reach, spawns one pmon-agentd per host (and on every host added later,
 * told by a PvmHostAdd notify) with the secret in its environment, and
 * shuts down when its pvmd goes away.
 */
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <pvm3.h>

#include "coord.h"
#include "paths.h"
#include "spawn_env.h"
#include "log.h"
#include "xmalloc.h"

static const char *
pvm_err(int cc)
{
	extern char *pvm_errlist[];
	extern int pvm_nerr;

	if (cc < 0 && -cc < pvm_nerr)
		return pvm_errlist[-cc];
	return "unknown PVM error";
}

/*
 * Does a pvmd run for $PVM_TMP?  Its pvmd.UID file names its socket,
 * whose name holds its pid; a stale file would make every PVM call hang,
 * so check the pid first.  Returns 1, or 0 with the reason in why.
 */
int
coord_pvmd_alive(char *why, size_t size)
{
	char path[PATH_MAX];
	const char *dir = getenv("PVM_TMP");
	int pid = pmon_pvmd_pid(path, sizeof(path));

	if (pid == -1 && access(path, F_OK) == -1) {
		snprintf(why, size, "no pvmd runs for PVM_TMP=%s (no %s)",
		    dir != NULL && *dir != '\0' ? dir : "/tmp", path);
		return 0;
	}
	if (pid > 0 && kill(pid, 0) == -1 && errno == ESRCH) {
		snprintf(why, size, "the pvmd named by %s (pid %d) is gone; "
		    "remove the stale file", path, pid);
		return 0;
	}
	return 1;
}

int
coord_pvm_init(struct coord *c)
{
	pvm_setopt(PvmAutoErr, 0);
	if ((c->pvm_tid = pvm_mytid()) < 0) {
		log_warnx("cannot enrol in PVM: %s", pvm_err(c->pvm_tid));
		c->pvm_tid = -1;
		return -1;
	}
	log_info("enrolled in PVM as t%x", (unsigned)c->pvm_tid);
	return 0;
}

/* The first IPv4 address of name that is not loopback, if any. */
static int
resolve_host(const char *name, char *out, size_t size)
{
	struct addrinfo hints, *res, *ai;
	struct in_addr a;
	int found = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(name, NULL, &hints, &res) != 0)
		return -1;
	for (ai = res; ai != NULL && !found; ai = ai->ai_next) {
		a = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		if ((ntohl(a.s_addr) >> 24) == 127)
			continue;
		inet_ntop(AF_INET, &a, out, (socklen_t)size);
		found = 1;
	}
	freeaddrinfo(res);
	return found ? 0 : -1;
}

/*
 * The address of this host's PVM host name that the other hosts can
 * reach (they resolve the name too), into out.
 */
static int
this_host_addr(struct coord *c, char *out, size_t size)
{
	struct pvmhostinfo *hi;
	int nhost, narch, i, me;

	if (pvm_config(&nhost, &narch, &hi) < 0 || nhost < 1) {
		log_warnx("pvm_config failed");
		return -1;
	}
	me = pvm_tidtohost(c->pvm_tid);
	for (i = 0; i < nhost; i++)
		if (hi[i].hi_tid == me)
			break;
	if (i == nhost || resolve_host(hi[i].hi_name, out, size) == -1) {
		log_warnx("this host's PVM name %s has no address other "
		    "hosts can reach; use -l", i < nhost ? hi[i].hi_name : "?");
		return -1;
	}
	return 0;
}

/*
 * Without -l: while every host of the machine is this one, agents dial
 * loopback (127.0.0.1) and no other host can reach the listener; when a
 * host joins, coord_agent_listen_wide opens one on this host's address
 * too (hosts_added).  A machine of several hosts gets the address of
 * this host's PVM host name at once.  With -l, what it says.
 */
int
coord_pvm_choose_listen(struct coord *c)
{
	struct pvmhostinfo *hi;
	int nhost, narch;

	if (c->listen_host[0] != '\0')
		return 0;
	if (pvm_config(&nhost, &narch, &hi) < 0 || nhost < 1) {
		log_warnx("pvm_config failed");
		return -1;
	}
	if (nhost == 1) {
		c->all_local = 1;
		snprintf(c->listen_host, sizeof(c->listen_host), "127.0.0.1");
		return 0;
	}
	return this_host_addr(c, c->listen_host, sizeof(c->listen_host));
}

/*
 * A host joined a machine whose agents dial loopback: agents spawned
 * from now on dial this host's address.  Returns 0 when they can.
 */
static int
listen_wide(struct coord *c)
{
	char addr[256];

	if (!c->all_local)
		return 0;
	if (this_host_addr(c, addr, sizeof(addr)) == -1 ||
	    coord_agent_listen_wide(c, addr) == -1) {
		log_warnx("a host was added, but agents can reach this one "
		    "on loopback only; restart pmon with -l to monitor it");
		return -1;
	}
	c->all_local = 0;
	return 0;
}

static struct coord_host *
host_find(const struct coord *c, int32_t host_tid)
{
	struct coord_host *h;

	TAILQ_FOREACH(h, &c->hosts, entry)
		if (h->host_tid == host_tid)
			return h;
	return NULL;
}

static struct coord_host *
host_add(struct coord *c, int32_t host_tid, const char *name)
{
	struct coord_host *h;

	if ((h = host_find(c, host_tid)) != NULL)
		return h;
	h = xcalloc(1, sizeof(*h));
	h->name = xstrdup(name);
	h->host_tid = host_tid;
	TAILQ_INSERT_TAIL(&c->hosts, h, entry);
	if (pvm_notify(PvmHostDelete, COORD_PVM_TAG_HOSTDEL, 1,
	    &h->host_tid) < 0)
		log_warnx("pvm_notify(PvmHostDelete) for host %s failed", name);
	return h;
}

/* The child of a tree's root whose subtree holds host_tid, if any. */
static struct coord_child *
child_of_host(const struct coord *c, int32_t host_tid)
{
	int k;

	if (c->host_subtree == NULL ||
	    (k = c->host_subtree[coord_host_number(host_tid)]) < 0 ||
	    (size_t)k >= c->nchildren)
		return NULL;
	return &c->children[k];
}

/*
 * A PVM call (spawn, tasks, send) reads what pvmd sends and queues the
 * messages that are not its reply (a notify): the socket then shows
 * nothing more, so look at the queue from the loop.
 */
static void
pvm_queued(struct coord *c)
{
	if (c->nev_pvm > 0)
		event_active(c->ev_pvm[0], EV_READ, 0);
}

/*
 * Spawns path (a full path) with argv on host, the secret in its
 * environment, never on a command line.  Its tid, or -1 with the reason
 * logged.
 */
static int
spawn_daemon(struct coord *c, const char *path, char **argv,
    const char *name)
{
	struct spawn_env se;
	char host[256];
	int tid, n;

	snprintf(host, sizeof(host), "%s", name);
	if (spawn_env_set(&se, PMON_SECRET_ENV, c->secret) == -1)
		fatal("%s", __func__);
	n = pvm_spawn((char *)path, argv, PvmTaskHost, host, 1, &tid);
	spawn_env_restore(&se);
	pvm_queued(c);
	if (n != 1) {
		log_warnx("cannot start %s on host %s: %s", path, name,
		    pvm_err(n < 0 ? n : tid));
		return -1;
	}
	return tid;
}

/* The host of the intermediate host_tid's agent dials, or NULL. */
const char *
coord_pvm_via(const struct coord *c, int32_t host_tid)
{
	const struct coord_child *ch = child_of_host(c, host_tid);

	return ch != NULL ? ch->host : NULL;
}

/* PVM tells us when the agent tid of host h exits (watched_exit). */
static void
watch_agent(struct coord_host *h, int tid)
{
	h->agent_tid = tid;
	if (pvm_notify(PvmTaskExit, COORD_PVM_TAG_EXIT, 1, &tid) < 0)
		log_warnx("pvm_notify(PvmTaskExit) for the agent of host %s "
		    "failed", h->name);
}

/* Tells tid to dial addr from now on (PMON_PVM_TAG_DIAL). */
static int
send_dial(struct coord *c, int tid, const char *addr)
{
	int rc;

	if ((rc = pvm_initsend(PvmDataDefault)) < 0 ||
	    (rc = pvm_pkstr((char *)addr)) < 0 ||
	    (rc = pvm_send(tid, PMON_PVM_TAG_DIAL)) < 0) {
		log_warnx("cannot tell t%x to dial %s: %s", (unsigned)tid,
		    addr, pvm_err(rc));
		pvm_queued(c);
		return -1;
	}
	pvm_queued(c);
	return 0;
}

static int
is_agent(const struct pvmtaskinfo *ti, const char *name)
{
	const char *base = ti->ti_a_out != NULL ?
	    strrchr(ti->ti_a_out, '/') : NULL;

	base = base != NULL ? base + 1 : ti->ti_a_out;
	return base != NULL && strcmp(base, name) == 0;
}

static void	spawn_agent(struct coord *, int32_t host_tid, const char *name);

/* Wakes adopt_timeout_cb at the first host's deadline, if any. */
static void
adopt_timer(struct coord *c)
{
	struct coord_host *h;
	struct timeval tv;
	uint64_t now = coord_mono_ms(), first = UINT64_MAX;

	TAILQ_FOREACH(h, &c->hosts, entry)
		if (h->adopt_until != 0 && h->adopt_until < first)
			first = h->adopt_until;
	if (first == UINT64_MAX)
		return;
	first = first > now ? first - now : 0;
	tv.tv_sec = (time_t)(first / 1000);
	tv.tv_usec = (suseconds_t)(first % 1000) * 1000;
	evtimer_add(c->ev_adopt, &tv);
}

/* No answer from a host's pmon-agentd tasks: it gets a new agent. */
static void
adopt_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;
	struct coord_host *h;
	uint64_t now = coord_mono_ms();

	(void)fd;
	(void)what;
	TAILQ_FOREACH(h, &c->hosts, entry) {
		if (h->adopt_until == 0 || h->adopt_until > now)
			continue;
		h->adopt_until = 0;
		if (h->hello || h->deleted || c->shutting_down)
			continue;
		spawn_agent(c, h->host_tid, h->name);
		h->adopt_spawned = h->agent_tid;
	}
	adopt_timer(c);
}

/*
 * The pmon-agentd tasks of the virtual machine that we did not start,
 * listed once, with one pvm_tasks for every host: under load, a call
 * a host takes seconds, and the loop waits for it.
 */
static void
old_agents_list(struct coord *c)
{
	struct pvmtaskinfo *ti;
	const char *name = strrchr(c->agent_path, '/');
	int n, i;

	name = name != NULL ? name + 1 : c->agent_path;
	if (pvm_tasks(0, &n, &ti) < 0)
		n = 0;
	pvm_queued(c);
	c->old_agents = xcalloc((size_t)n + 1, sizeof(*c->old_agents));
	for (i = 0; i < n; i++)
		if (is_agent(&ti[i], name) && ti[i].ti_ptid != c->pvm_tid) {
			c->old_agents[c->nold_agents].tid = ti[i].ti_tid;
			c->old_agents[c->nold_agents++].host = ti[i].ti_host;
		}
}

/*
 * The agents of a coordinator that died still run, holding what it did
 * not acknowledge (doc/capture.md, "A coordinator restart").  Before
 * an agent is started on host h, every pmon-agentd that was there when
 * we started (old_agents_list) is told to dial addr.  An agent answers (agent_found)
 * and dials; anything else, a task starter left by an agent that
 * ended, does not, and COORD_ADOPT_MS later the host gets a new agent
 * (adopt_timeout_cb).  One that finds an agent that was too slow to
 * answer exits at once, and the host is looked at again (watched_exit).
 * Returns 1 when the host waits for an answer.
 */
static int
agent_adopt(struct coord *c, struct coord_host *h, const char *addr)
{
	size_t i;

	if (c->old_agents == NULL)
		old_agents_list(c);
	h->adopt_told = 0;
	for (i = 0; i < c->nold_agents; i++)
		if (c->old_agents[i].host == h->host_tid &&
		    send_dial(c, c->old_agents[i].tid, addr) == 0)
			h->adopt_told++;
	if (h->adopt_told == 0)
		return 0;
	log_info("host %s: %d pmon-agentd task%s of a coordinator before; "
	    "told to dial %s", h->name, h->adopt_told,
	    h->adopt_told > 1 ? "s" : "", addr);
	h->adopt_until = coord_mono_ms() + COORD_ADOPT_MS;
	if (c->ev_adopt == NULL &&
	    (c->ev_adopt = evtimer_new(c->base, adopt_timeout_cb, c)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	adopt_timer(c);
	return 1;
}

/*
 * An agent we told to dial us answers: its host needs no new agent, and
 * under an intermediate, PVM tells us when it exits.
 */
static void
agent_found(struct coord *c, int src)
{
	struct coord_host *h = host_find(c, pvm_tidtohost(src));

	if (h == NULL || h->adopt_told == 0 || h->agent_tid == src)
		return;
	h->adopt_until = 0;
	log_info("host %s: agent t%x of a coordinator before dials us",
	    h->name, (unsigned)src);
	if (child_of_host(c, h->host_tid) != NULL)
		watch_agent(h, src);
}

/*
 * Starts an agent on one host, unless one of a coordinator before is
 * there: then it is told to dial us.
 */
static void
spawn_on(struct coord *c, int32_t host_tid, const char *name)
{
	const struct coord_child *ch = child_of_host(c, host_tid);
	struct coord_host *h = host_add(c, host_tid, name);

	if (!agent_adopt(c, h, ch != NULL ? ch->addr : c->listen_addr))
		spawn_agent(c, host_tid, name);
}

/* Starts an agent on one host. */
static void
spawn_agent(struct coord *c, int32_t host_tid, const char *name)
{
	const struct coord_child *ch = child_of_host(c, host_tid);
	struct coord_host *h;
	char *argv[16];
	int tid, i = 0;

	/* The capture settings of `pmon start` (doc/capture.md). */
	argv[i++] = (char *)"-t";
	argv[i++] = c->agent_time;
	if (c->agent_buffer[0] != '\0') {
		argv[i++] = (char *)"-b";
		argv[i++] = c->agent_buffer;
	}
	if (c->agent_live[0] != '\0') {
		argv[i++] = (char *)"-i";
		argv[i++] = c->agent_live;
	}
	if (c->agent_ring[0] != '\0') {
		argv[i++] = (char *)"-R";
		argv[i++] = c->agent_ring;
	}
	if (c->agent_compress[0] != '\0') {
		argv[i++] = (char *)"-z";
		argv[i++] = c->agent_compress;
	}
	if (c->agent_block[0] != '\0') {
		argv[i++] = (char *)"-k";
		argv[i++] = c->agent_block;
	}
	if (c->agent_tasker)
		argv[i++] = (char *)"-T";
	/* A subtree's agents dial its intermediate. */
	argv[i++] = (char *)"-c";
	argv[i++] = ch != NULL ? (char *)ch->addr : c->listen_addr;
	argv[i] = NULL;
	if ((tid = spawn_daemon(c, c->agent_path, argv, name)) == -1)
		return;
	log_info("started agent t%x on host %s, dialing %s", (unsigned)tid,
	    name, argv[i - 1]);
	h = host_add(c, host_tid, name);
	/*
	 * An uplink that closes says nothing of the agent behind it (its
	 * intermediate may be the one gone): PVM tells us when the agent
	 * exits (watched_exit).
	 */
	if (ch != NULL)
		watch_agent(h, tid);
}

/* Starts another agent on h, at most COORD_AGENT_RESPAWNS times. */
static void
respawn_on(struct coord *c, struct coord_host *h)
{
	if (h->respawns >= COORD_AGENT_RESPAWNS) {
		log_warnx("the agent of host %s went away again; not "
		    "restarted (%d restarts already)", h->name,
		    COORD_AGENT_RESPAWNS);
		return;
	}
	h->respawns++;
	h->hello = 0;
	log_info("restarting the agent of host %s (%u of %d)", h->name,
	    h->respawns, COORD_AGENT_RESPAWNS);
	spawn_on(c, h->host_tid, h->name);
}

/*
 * The agent of host_tid went away without being asked to: starts
 * another there, at most COORD_AGENT_RESPAWNS times per host, which
 * adopts the running tasks' rings (doc/capture.md).
 */
void
coord_pvm_respawn(struct coord *c, int32_t host_tid)
{
	struct coord_host *h;

	if (!c->spawn_agents || c->pvm_tid == -1 ||
	    (h = host_find(c, host_tid)) == NULL)
		return;
	if (h->deleted) {
		coord_agent_host_gone(c, h->name);
		return;
	}
	/*
	 * Under an intermediate, the uplink closes when the intermediate
	 * goes (the agent lives and dials it again once it is restarted)
	 * and when the agent does: PVM tells which (watched_exit).
	 */
	if (child_of_host(c, host_tid) != NULL) {
		log_info("the uplink of host %s closed", h->name);
		return;
	}
	respawn_on(c, h);
}

/* --- a tree of coordinators (-F) ----------------------------------- */

/* The root's view of which subtree a task's host is in. */
static int
root_subtree_of(int32_t tid, void *arg)
{
	const struct coord *c = arg;

	return c->host_subtree[coord_host_number(tid)];
}

/*
 * Starts the intermediate of subtree k on its first host, told its
 * hosts' numbers and where we listen.  It answers with its own address
 * (COORD_PVM_TAG_RELAY, child_ready), and only then are its hosts'
 * agents started, to dial it.
 */
static int
spawn_child(struct coord *c, struct coord_child *ch)
{
	char *argv[10], spec[16 + 8 * 64];
	size_t i, off;
	int tid, argc = 0;

	off = (size_t)snprintf(spec, sizeof(spec), "%d:", ch->subtree);
	for (i = 0; i < ch->nhosts && off < sizeof(spec); i++)
		off += (size_t)snprintf(spec + off, sizeof(spec) - off, "%s%u",
		    i > 0 ? "," : "", coord_host_number(ch->hosts[i]));
	if (off >= sizeof(spec))
		fatalx("%s: too many hosts", __func__);
	argv[argc++] = (char *)"-U";
	argv[argc++] = c->listen_addr;
	argv[argc++] = (char *)"-S";
	argv[argc++] = spec;
	if (c->verbose > 0)
		argv[argc++] = (char *)"-v";
	/* Started again: where its agents dial again. */
	if (ch->addr[0] != '\0') {
		argv[argc++] = (char *)"-l";
		argv[argc++] = ch->addr;
	}
	argv[argc] = NULL;
	if ((tid = spawn_daemon(c, c->coordd_path, argv, ch->host)) == -1)
		return -1;
	ch->tid = tid;
	if (pvm_notify(PvmTaskExit, COORD_PVM_TAG_EXIT, 1, &ch->tid) < 0)
		log_warnx("pvm_notify(PvmTaskExit) for t%x failed",
		    (unsigned)tid);
	log_info("started intermediate %d (t%x) on host %s for %zu hosts",
	    ch->subtree, (unsigned)tid, ch->host, ch->nhosts);
	return 0;
}

/*
 * Hosts under new intermediates, K at a time (-F K), each group's on its
 * first host.  A group whose intermediate cannot start has its agents
 * dial us.  The subtrees are numbered on from those there are: a host
 * added later joins a new one, so that no subtree's channels change
 * while its intermediate matches them.  0 when a subtree was added.
 */
static int
tree_add(struct coord *c, const struct pvmhostinfo *hi, int nhost)
{
	struct coord_child *ch;
	size_t k, j, k0 = c->nchildren;
	size_t nk = k0 + ((size_t)nhost + c->fanout - 1) / c->fanout;
	int added = 0;

	if (c->host_subtree == NULL) {
		c->host_subtree = xcalloc(COORD_HOST_NUMBERS,
		    sizeof(*c->host_subtree));
		for (j = 0; j < COORD_HOST_NUMBERS; j++)
			c->host_subtree[j] = -1;
	}
	c->children = xreallocarray(c->children, nk, sizeof(*c->children));
	memset(c->children + k0, 0, (nk - k0) * sizeof(*c->children));
	c->nchildren = nk;
	for (k = k0; k < nk; k++) {
		ch = &c->children[k];
		ch->subtree = (int)k;
		ch->host = xstrdup(hi[(k - k0) * c->fanout].hi_name);
		ch->host_tid = hi[(k - k0) * c->fanout].hi_tid;
		ch->hosts = xcalloc(c->fanout, sizeof(*ch->hosts));
		ch->names = xcalloc(c->fanout, sizeof(*ch->names));
		for (j = (k - k0) * c->fanout; j < (size_t)nhost &&
		    j < (k - k0 + 1) * c->fanout; j++) {
			ch->hosts[ch->nhosts] = hi[j].hi_tid;
			ch->names[ch->nhosts++] = xstrdup(hi[j].hi_name);
		}
		if (spawn_child(c, ch) == -1) {
			for (j = 0; j < ch->nhosts; j++)
				spawn_on(c, ch->hosts[j], ch->names[j]);
			continue;
		}
		/* Ready waits for the agents it will start. */
		for (j = 0; j < ch->nhosts; j++) {
			c->host_subtree[coord_host_number(ch->hosts[j])] =
			    (int16_t)k;
			host_add(c, ch->hosts[j], ch->names[j]);
		}
		added = 1;
	}
	if (added)
		order_set_subtree(c->order, ORDER_ROOT, root_subtree_of, c);
	return added ? 0 : -1;
}

/*
 * Starts an intermediate that exited again: on its host, at its old
 * address, where its agents dial it again; or, when that host has left
 * the virtual machine (or cannot start it), on the next host of its
 * subtree that can, and child_moved then tells its agents where it is.
 */
static void
child_restart(struct coord *c, struct coord_child *ch)
{
	struct coord_host *h;
	size_t j;

	if ((h = host_find(c, ch->host_tid)) != NULL && !h->deleted &&
	    spawn_child(c, ch) == 0)
		return;
	for (j = 0; j < ch->nhosts; j++) {
		if (ch->hosts[j] == ch->host_tid ||
		    (h = host_find(c, ch->hosts[j])) == NULL || h->deleted)
			continue;
		log_warnx("intermediate %d: host %s is gone; starting it on "
		    "host %s", ch->subtree, ch->host, ch->names[j]);
		free(ch->host);
		ch->host = xstrdup(ch->names[j]);
		ch->host_tid = ch->hosts[j];
		ch->addr[0] = '\0';
		ch->moved = 1;
		if (spawn_child(c, ch) == 0)
			return;
	}
	log_warnx("intermediate %d: no host of its subtree can start it; "
	    "its hosts' tasks are no longer monitored", ch->subtree);
}

/*
 * An intermediate started on another host listens at addr: its agents,
 * which dial the old address, are told the new one (PMON_PVM_TAG_DIAL),
 * and send it what the root did not acknowledge.
 */
static void
child_moved(struct coord *c, struct coord_child *ch, const char *addr)
{
	struct coord_host *h;
	size_t j;

	snprintf(ch->addr, sizeof(ch->addr), "%s", addr);
	ch->moved = 0;
	log_info("intermediate %d (t%x) on %s listens on %s; telling its "
	    "agents", ch->subtree, (unsigned)ch->tid, ch->host, ch->addr);
	for (j = 0; j < ch->nhosts; j++) {
		if ((h = host_find(c, ch->hosts[j])) == NULL || h->deleted ||
		    h->agent_tid == 0)
			continue;
		send_dial(c, h->agent_tid, ch->addr);
	}
}

/* An intermediate listens, at the address it says: its agents start. */
static void
child_ready(struct coord *c, int src, int bytes)
{
	struct coord_child *ch = NULL;
	char addr[300];
	size_t i;
	int k;

	/* pvm_upkstr writes what the message holds: bound it first. */
	if (bytes < 0 || (size_t)bytes >= sizeof(addr) ||
	    pvm_upkint(&k, 1, 1) < 0 || pvm_upkstr(addr) < 0) {
		log_warnx("malformed ready message from t%x", (unsigned)src);
		return;
	}
	if (k >= 0 && (size_t)k < c->nchildren && c->children[k].tid == src)
		ch = &c->children[k];
	if (ch == NULL) {
		log_warnx("ready message from t%x, not an intermediate "
		    "waited for", (unsigned)src);
		return;
	}
	if (ch->moved) {
		child_moved(c, ch, addr);
		return;
	}
	/* Started again: its agents dial it again on their own. */
	if (ch->addr[0] != '\0') {
		if (strcmp(ch->addr, addr) != 0)
			log_warnx("intermediate %d came back on %s, not on %s, "
			    "where its agents dial", k, addr, ch->addr);
		else
			log_info("intermediate %d (t%x) on %s listens on %s "
			    "again", k, (unsigned)src, ch->host, addr);
		return;
	}
	snprintf(ch->addr, sizeof(ch->addr), "%s", addr);
	log_info("intermediate %d (t%x) on %s listens on %s", k,
	    (unsigned)src, ch->host, ch->addr);
	for (i = 0; i < ch->nhosts; i++)
		spawn_on(c, ch->hosts[i], ch->names[i]);
}

/* A task we watch exited: our root (we are an intermediate) or a child. */
static void
watched_exit(struct coord *c)
{
	struct coord_child *ch;
	struct coord_host *h;
	size_t i;
	int tid;

	if (pvm_upkint(&tid, 1, 1) < 0)
		return;
	if (c->relay != NULL) {
		coord_shutdown(c, "the root coordinator exited");
		return;
	}
	for (i = 0; i < c->nchildren; i++) {
		ch = &c->children[i];
		if (ch->tid != tid || c->shutting_down)
			continue;
		ch->tid = 0;
		if (ch->restarts >= COORD_AGENT_RESPAWNS) {
			log_warnx("intermediate %zu (t%x) on %s exited again; "
			    "not restarted (%u restarts already): its hosts' "
			    "tasks are no longer monitored", i, (unsigned)tid,
			    ch->host, ch->restarts);
			continue;
		}
		ch->restarts++;
		log_warnx("intermediate %zu (t%x) on %s exited; starting it "
		    "again (%u of %d)", i, (unsigned)tid, ch->host,
		    ch->restarts, COORD_AGENT_RESPAWNS);
		child_restart(c, ch);
	}
	/* The agent of a host under an intermediate. */
	TAILQ_FOREACH(h, &c->hosts, entry) {
		if (h->agent_tid != tid)
			continue;
		h->agent_tid = 0;
		if (c->shutting_down || !c->spawn_agents)
			break;
		/*
		 * One started because no agent of a coordinator before
		 * answered in time leaves when it finds one holding the
		 * host, too slow to answer: the host is asked again.
		 */
		if (tid == h->adopt_spawned && h->adopt_told > 0 &&
		    h->adopt_rounds < COORD_AGENT_RESPAWNS) {
			h->adopt_rounds++;
			log_info("host %s: agent t%x left at once; asking the "
			    "agents of a coordinator before again", h->name,
			    (unsigned)tid);
			spawn_on(c, h->host_tid, h->name);
			break;
		}
		log_warnx("the agent of host %s (t%x) exited", h->name,
		    (unsigned)tid);
		if (h->deleted)
			coord_agent_host_gone(c, h->name);
		else
			respawn_on(c, h);
		break;
	}
}

void
coord_pvm_children_free(struct coord *c)
{
	size_t k, j;

	for (k = 0; k < c->nchildren; k++) {
		for (j = 0; j < c->children[k].nhosts; j++)
			free(c->children[k].names[j]);
		free(c->children[k].names);
		free(c->children[k].hosts);
		free(c->children[k].host);
	}
	free(c->children);
	free(c->host_subtree);
	c->children = NULL;
	c->host_subtree = NULL;
	c->nchildren = 0;
}

/*
 * An intermediate: tells its root (the PVM parent that spawned it)
 * where its agents dial, and watches it: when the root exits, so do
 * we.
 */
int
coord_pvm_relay_ready(struct coord *c)
{
	int parent = pvm_parent(), k = c->relay->subtree, rc;

	if (parent < 0) {
		log_warnx("no PVM parent to report to: an intermediate is "
		    "started by its root (pmon start --fanout)");
		return -1;
	}
	if ((rc = pvm_notify(PvmTaskExit, COORD_PVM_TAG_EXIT, 1,
	    &parent)) < 0)
		log_warnx("pvm_notify(PvmTaskExit): %s", pvm_err(rc));
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&k, 1, 1);
	pvm_pkstr(c->listen_addr);
	if ((rc = pvm_send(parent, COORD_PVM_TAG_RELAY)) < 0) {
		log_warnx("telling the root t%x we are ready: %s",
		    (unsigned)parent, pvm_err(rc));
		return -1;
	}
	return 0;
}

void
coord_pvm_spawn_all(struct coord *c)
{
	struct pvmhostinfo *hi;
	int nhost, narch, i;

	if (pvm_config(&nhost, &narch, &hi) < 0) {
		log_warnx("pvm_config failed; no agents started");
		return;
	}
	if (c->fanout == 0 || (unsigned)nhost <= c->fanout ||
	    tree_add(c, hi, nhost) == -1)
		for (i = 0; i < nhost; i++)
			spawn_on(c, hi[i].hi_tid, hi[i].hi_name);
	coord_start_ready_timer(c);
}

/* A PvmHostAdd notify: a count, then the pvmd tids of the new hosts. */
static void
hosts_added(struct coord *c)
{
	struct pvmhostinfo *hi, added[64];
	int n, tids[64], nhost, narch, i, j, m;

	if (pvm_upkint(&n, 1, 1) < 0 || n < 0) {
		log_warnx("malformed host-add notify from the pvmd");
		return;
	}
	if (n > (int)(sizeof(tids) / sizeof(tids[0])))
		n = sizeof(tids) / sizeof(tids[0]);
	if (pvm_upkint(tids, n, 1) < 0)
		return;
	/* Before our pvm_config: another one frees what it returned. */
	if (n > 0 && listen_wide(c) == -1)
		return;
	if (pvm_config(&nhost, &narch, &hi) < 0)
		return;
	/* The new hosts, as pvm_config has them. */
	for (i = 0, m = 0; i < nhost; i++) {
		for (j = 0; j < n && hi[i].hi_tid != tids[j]; j++)
			continue;
		if (j < n)
			added[m++] = hi[i];
	}
	if (m == 0)
		return;
	/* A machine grown past K hosts (-F K): a tree for the new ones. */
	if (c->fanout == 0 || (c->nchildren == 0 &&
	    (unsigned)nhost <= c->fanout) || tree_add(c, added, m) == -1)
		for (i = 0; i < m; i++)
			spawn_on(c, added[i].hi_tid, added[i].hi_name);
}

/*
 * A PvmHostDelete notify: the pvmd tid of a host that left the virtual
 * machine (pvm_delhosts, console delete, a crash).  Its agent is not
 * restarted, and its tasks end (coord_agent_host_gone).
 */
static void
host_deleted(struct coord *c)
{
	struct coord_host *h;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;
	int host_tid;

	if (pvm_upkint(&host_tid, 1, 1) < 0) {
		log_warnx("malformed host-delete notify from the pvmd");
		return;
	}
	if ((h = host_find(c, host_tid)) == NULL || h->deleted)
		return;
	h->deleted = 1;
	log_info("host %s left the virtual machine", h->name);
	/* A host whose agent never said hello is new to the model. */
	if (state_host_deleted(c->state, host_tid) == -1) {
		state_host(c->state, host_tid, h->name, "", 0);
		state_host_deleted(c->state, host_tid);
	}
	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s", __func__);
	fprintf(fp, "{\"notice\":\"host_deleted\",\"host_tid\":%d,"
	    "\"host\":", host_tid);
	json_str_write(fp, h->name);
	fputc('}', fp);
	if (fclose(fp) != 0)
		fatal("%s", __func__);
	coord_notice(c, buf);
	free(buf);
	coord_agent_host_gone(c, h->name);
}

static void
pvm_unwatch(struct coord *c)
{
	int i;

	for (i = 0; i < c->nev_pvm; i++)
		event_del(c->ev_pvm[i]);
}

static void
pvm_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;
	int bufid, bytes, tag, src;

	(void)fd;
	(void)what;
	while ((bufid = pvm_nrecv(-1, -1)) != 0) {
		if (bufid < 0) {
			log_warnx("lost the pvmd: %s", pvm_err(bufid));
			pvm_unwatch(c);
			coord_shutdown(c, "the pvmd went away");
			return;
		}
		if (pvm_bufinfo(bufid, &bytes, &tag, &src) != 0)
			tag = -1;
		if (tag == COORD_PVM_TAG_HOSTADD)
			hosts_added(c);
		else if (tag == COORD_PVM_TAG_HOSTDEL)
			host_deleted(c);
		else if (tag == COORD_PVM_TAG_RELAY)
			child_ready(c, src, bytes);
		else if (tag == COORD_PVM_TAG_EXIT)
			watched_exit(c);
		else if (tag == PMON_PVM_TAG_DIAL)
			agent_found(c, src);
		else
			log_debug("ignoring a PVM message (tag %d) from t%x",
			    tag, (unsigned)src);
		pvm_freebuf(bufid);
	}
}

/* Asks for host-add notifies and reads PVM's sockets in the loop. */
int
coord_pvm_watch(struct coord *c)
{
	int *fds, n, i, rc;

	if (c->relay == NULL && (rc = pvm_notify(PvmHostAdd,
	    COORD_PVM_TAG_HOSTADD, -1, NULL)) < 0)
		log_warnx("pvm_notify(PvmHostAdd): %s", pvm_err(rc));
	n = pvm_getfds(&fds);
	if (n < 1) {
		log_warnx("pvm_getfds: %s", pvm_err(n));
		return -1;
	}
	for (i = 0; i < n && i < (int)(sizeof(c->ev_pvm) /
	    sizeof(c->ev_pvm[0])); i++) {
		c->ev_pvm[i] = event_new(c->base, fds[i], EV_READ | EV_PERSIST,
		    pvm_read_cb, c);
		if (c->ev_pvm[i] == NULL || event_add(c->ev_pvm[i], NULL) == -1)
			fatalx("%s: event_new", __func__);
		c->nev_pvm++;
	}
	return 0;
}

void
coord_pvm_exit(struct coord *c)
{
	if (c->pvm_tid == -1)
		return;
	pvm_exit();
	c->pvm_tid = -1;
}
