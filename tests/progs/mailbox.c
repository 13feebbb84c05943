/*
 * mailbox: two tasks that meet only in PVM's message mailbox
 * (pvm_putinfo, pvm_recvinfo, pvm_delinfo; PVM 3.4).
 *
 *	mailbox put NAME N KEEP FILE
 *	mailbox get NAME N
 *
 * The putter stores N entries in class NAME (PvmMboxMultiInstance), the
 * i-th holding the int i at index i, and one persistent entry in class
 * KEEP, writes "put N" to FILE, then waits for the getter's word (tag
 * 9), deletes NAME's entry 0 and exits: its other NAME entries go with
 * it, the KEEP entry stays.  The getter, started once FILE says so,
 * reads NAME's entries 0 to N-1 (each holds its index), tells the
 * entries' owner it is done and exits.
 *
 * Calls: the putter pvm_mytid, N + 1 x (pvm_initsend, pvm_pkint,
 * pvm_getsbuf, pvm_putinfo), pvm_recv, pvm_delinfo, pvm_exit; the getter pvm_mytid,
 * N x (pvm_recvinfo, pvm_upkint), pvm_bufinfo, pvm_initsend, pvm_send,
 * pvm_exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_DONE	9
#define ALARM_SECS	60	/* a task still alive then is hung */

static int
put(char *name, int n, char *keep, const char *file)
{
	FILE *f;
	int i, idx, bad = 0;

	if (pvm_mytid() < 0)
		return 1;
	for (i = 0; i <= n; i++) {
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&i, 1, 1);
		if (i < n)
			idx = pvm_putinfo(name, pvm_getsbuf(),
			    PvmMboxMultiInstance);
		else
			idx = pvm_putinfo(keep, pvm_getsbuf(),
			    PvmMboxPersistent);
		bad |= idx != (i < n ? i : 0);
	}
	if ((f = fopen(file, "w")) == NULL) {
		pvm_exit();
		return 1;
	}
	fprintf(f, "put %d\n", n);
	fclose(f);
	pvm_recv(-1, TAG_DONE);
	bad |= pvm_delinfo(name, 0, PvmMboxDefault) < 0;
	pvm_exit();
	return bad;
}

static int
get(char *name, int n)
{
	int i, v, bufid = 0, owner = 0, bad = 0;

	if (pvm_mytid() < 0)
		return 1;
	for (i = 0; i < n; i++) {
		if ((bufid = pvm_recvinfo(name, i, PvmMboxDefault)) <= 0 ||
		    pvm_upkint(&v, 1, 1) < 0 || v != i)
			bad = 1;
	}
	if (bufid > 0)
		pvm_bufinfo(bufid, NULL, NULL, &owner);
	pvm_initsend(PvmDataDefault);
	pvm_send(owner, TAG_DONE);
	pvm_exit();
	if (!bad)
		printf("got %d\n", n);
	return bad;
}

int
main(int argc, char *argv[])
{
	alarm(ALARM_SECS);
	if (argc == 6 && strcmp(argv[1], "put") == 0)
		return put(argv[2], atoi(argv[3]), argv[4], argv[5]);
	if (argc == 4 && strcmp(argv[1], "get") == 0)
		return get(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: mailbox put NAME N KEEP FILE | "
	    "mailbox get NAME N\n");
	return 2;
}
