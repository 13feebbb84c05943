/*
 * handlers: a master whose messages are taken by a message handler
 * (pvm_addmhf, PVM 3.4), not by its receives.  It spawns K workers and
 * installs a handler for tag 5 from anyone; each worker sends it M
 * requests (tag 5, one int) and waits for each answer (tag 6).  The
 * handler unpacks the request and sends the answer (one int) to the
 * request's sender.  The master meanwhile only waits in pvm_recv(-1, 7)
 * for each worker's last word, and handlers run inside those receives.
 *
 *	handlers K M
 *
 * Prints "handlers ok R" with R the requests the handler took (K x M).
 * Calls, from this source: the master pvm_mytid, pvm_getcontext,
 * pvm_addmhf, pvm_spawn,
 * K x pvm_recv, pvm_exit, and K x M handler runs of
 * pvm_upkint, pvm_bufinfo, pvm_initsend, pvm_pkint, pvm_send; each
 * worker pvm_mytid, pvm_parent, M x (pvm_initsend, pvm_pkint, pvm_send,
 * pvm_recv, pvm_upkint), pvm_initsend, pvm_send, pvm_exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_ASK		5
#define TAG_ANSWER	6
#define TAG_DONE	7
#define MAXK		32
#define ALARM_SECS	60	/* a task still alive then is hung */

static int taken;

static int
answer(int mid)
{
	int v, len, tag, src;

	(void)mid;
	if (pvm_upkint(&v, 1, 1) < 0 ||
	    pvm_bufinfo(mid, &len, &tag, &src) < 0)
		return 0;
	v = v * 2;
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&v, 1, 1);
	pvm_send(src, TAG_ANSWER);
	taken++;
	return 0;
}

static int
worker(int m)
{
	int parent, i, v, bad = 0;

	pvm_mytid();
	parent = pvm_parent();
	for (i = 0; i < m; i++) {
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&i, 1, 1);
		pvm_send(parent, TAG_ASK);
		pvm_recv(parent, TAG_ANSWER);
		pvm_upkint(&v, 1, 1);
		bad |= v != 2 * i;
	}
	pvm_initsend(PvmDataDefault);
	pvm_send(parent, TAG_DONE);
	pvm_exit();
	return bad;
}

int
main(int argc, char *argv[])
{
	char *args[] = { (char *)"-w", NULL, NULL };
	int k, m, tids[MAXK], i, h;

	alarm(ALARM_SECS);
	if (argc == 3 && strcmp(argv[1], "-w") == 0)
		return worker(atoi(argv[2]));
	if (argc != 3 || (k = atoi(argv[1])) < 1 || k > MAXK ||
	    (m = atoi(argv[2])) < 0) {
		fprintf(stderr, "usage: handlers K M (1 <= K <= %d)\n", MAXK);
		return 2;
	}
	if (pvm_mytid() < 0)
		return 1;
	h = pvm_addmhf(-1, TAG_ASK, pvm_getcontext(), answer);
	args[1] = argv[2];
	if (h < 0 || pvm_spawn(argv[0], args, PvmTaskDefault, (char *)"", k,
	    tids) != k) {
		fprintf(stderr, "handlers: addmhf %d or spawn failed\n", h);
		pvm_exit();
		return 1;
	}
	for (i = 0; i < k; i++)
		pvm_recv(-1, TAG_DONE);
	pvm_exit();
	printf("handlers ok %d\n", taken);
	return taken == k * m ? 0 : 1;
}
