/*
 * The agent as a PVM task: enrolled to learn which host it serves, and
 * watching its pvmd so that it leaves with the virtual machine.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <pvm3.h>

#include "agent.h"
#include "log.h"

static void
host_info(struct agent *a)
{
	struct pvmhostinfo *hi;
	int nhost, narch, i;

	gethostname(a->host, sizeof(a->host) - 1);
	snprintf(a->arch, sizeof(a->arch), "unknown");
	if (pvm_config(&nhost, &narch, &hi) < 0)
		return;
	for (i = 0; i < nhost; i++)
		if (hi[i].hi_tid == a->host_tid) {
			snprintf(a->host, sizeof(a->host), "%s", hi[i].hi_name);
			snprintf(a->arch, sizeof(a->arch), "%s", hi[i].hi_arch);
			return;
		}
}

/* Enrols in PVM.  Returns 0, or -1 when there is no pvmd to talk to. */
int
agent_pvm_init(struct agent *a)
{
	pvm_setopt(PvmAutoErr, 0);
	if ((a->pvm_tid = pvm_mytid()) < 0) {
		a->pvm_tid = -1;
		gethostname(a->host, sizeof(a->host) - 1);
		snprintf(a->arch, sizeof(a->arch), "unknown");
		return -1;
	}
	a->host_tid = pvm_tidtohost(a->pvm_tid);
	host_info(a);
	log_debug("enrolled as t%x on %s (%s), pvmd t%x",
	    (unsigned)a->pvm_tid, a->host, a->arch, (unsigned)a->host_tid);
	return 0;
}

/*
 * Dial another coordinator (PMON_PVM_TAG_DIAL): our intermediate was
 * started on another host, or a coordinator started after ours died
 * looks for its agents; we answer the latter with an empty message of
 * the same tag.  Any task of the virtual machine runs as its user and
 * could send it; the address must parse.
 */
static void
dial_message(struct agent *a, int bytes, int src)
{
	char addr[sizeof(a->coord_addr)];

	/* pvm_upkstr writes what the message holds: bound it first. */
	if (bytes < 0 || (size_t)bytes >= sizeof(addr) ||
	    pvm_upkstr(addr) < 0) {
		log_warnx("malformed coordinator address from t%x",
		    (unsigned)src);
		return;
	}
	/* A coordinator restarted looks for agents: this one dials it. */
	if (agent_coord_redirect(a, addr, src) == 0 &&
	    (pvm_initsend(PvmDataDefault) < 0 ||
	    pvm_send(src, PMON_PVM_TAG_DIAL) < 0))
		log_warnx("cannot answer t%x", (unsigned)src);
}

/*
 * Something arrived from pvmd: a new address to dial, or messages
 * nobody should send us, discarded; an error means pvmd is gone, and so
 * is our virtual machine.
 */
static void
pvm_cb(int fd, short what, void *arg)
{
	struct agent *a = arg;
	int bufid, bytes, tag, src;

	(void)fd;
	(void)what;
	while ((bufid = pvm_nrecv(-1, -1)) > 0) {
		if (pvm_bufinfo(bufid, &bytes, &tag, &src) == 0 &&
		    tag == PMON_PVM_TAG_DIAL)
			dial_message(a, bytes, src);
		pvm_freebuf(bufid);
	}
	if (bufid < 0)
		agent_pvm_gone(a, bufid);
}

/*
 * A PVM call reads what pvmd sends and queues the messages that are not
 * its reply (a DIAL): the socket then shows nothing more, so look at the
 * queue from the loop.
 */
void
agent_pvm_queued(struct agent *a)
{
	if (a->nev_pvm > 0)
		event_active(a->ev_pvm[0], EV_READ, 0);
}

/*
 * A PVM call failed as it does when pvmd is gone: so is our virtual
 * machine.  libpvm3 has closed the socket pvm_cb watches by then, so
 * whoever saw the error says so.
 */
void
agent_pvm_gone(struct agent *a, int rc)
{
	log_warnx("pvmd is gone (%d); exiting", rc);
	a->pvm_tid = -1;
	agent_exit(a, 0);
}

int
agent_pvm_watch(struct agent *a)
{
	int *fds, n, i;

	if (a->pvm_tid == -1)
		return 0;
	if ((n = pvm_getfds(&fds)) < 0) {
		log_warnx("pvm_getfds: %d", n);
		return -1;
	}
	for (i = 0; i < n && a->nev_pvm < (int)(sizeof(a->ev_pvm) /
	    sizeof(a->ev_pvm[0])); i++) {
		a->ev_pvm[a->nev_pvm] = event_new(a->base, fds[i],
		    EV_READ | EV_PERSIST, pvm_cb, a);
		if (a->ev_pvm[a->nev_pvm] == NULL ||
		    event_add(a->ev_pvm[a->nev_pvm], NULL) == -1) {
			log_warnx("cannot watch the pvmd socket");
			return -1;
		}
		a->nev_pvm++;
	}
	return 0;
}

void
agent_pvm_exit(struct agent *a)
{
	int i;

	for (i = 0; i < a->nev_pvm; i++)
		event_free(a->ev_pvm[i]);
	a->nev_pvm = 0;
	if (a->pvm_tid != -1)
		pvm_exit();
	a->pvm_tid = -1;
}
