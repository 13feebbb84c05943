/*
 * outsider: a PVM task pmon does not instrument, and one that talks to
 * it.  Started from a shell, not by pmon exec, the server enrols, writes
 * its tid to FILE, and serves one asker: it receives N (tag 1), sends N
 * messages back (tag 2, each one int), then waits for the asker's last
 * word (tag 3) and leaves.
 *
 *	outsider serve FILE
 *	outsider ask TID N
 *
 * The asker sends N, receives the N messages from TID, sends tag 3 and
 * exits: it makes 1 + N + 1 messages' calls, N of them receives from
 * the server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_ASK		1
#define TAG_ANSWER	2
#define TAG_DONE	3
#define ALARM_SECS	60	/* a task still alive then is hung */

static int
serve(const char *file)
{
	FILE *f;
	int me, n, i, asker;

	if ((me = pvm_mytid()) < 0)
		return 1;
	if ((f = fopen(file, "w")) == NULL) {
		perror(file);
		pvm_exit();
		return 1;
	}
	fprintf(f, "%d\n", me);
	fclose(f);
	if (pvm_recv(-1, TAG_ASK) < 0 || pvm_upkint(&n, 1, 1) < 0 ||
	    pvm_bufinfo(pvm_getrbuf(), NULL, NULL, &asker) < 0) {
		pvm_exit();
		return 1;
	}
	for (i = 0; i < n; i++) {
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&i, 1, 1);
		pvm_send(asker, TAG_ANSWER);
	}
	pvm_recv(asker, TAG_DONE);
	pvm_exit();
	return 0;
}

static int
ask(int server, int n)
{
	int i, v, bad = 0;

	if (pvm_mytid() < 0)
		return 1;
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&n, 1, 1);
	pvm_send(server, TAG_ASK);
	for (i = 0; i < n; i++)
		if (pvm_recv(server, TAG_ANSWER) < 0 ||
		    pvm_upkint(&v, 1, 1) < 0 || v != i)
			bad = 1;
	pvm_initsend(PvmDataDefault);
	pvm_send(server, TAG_DONE);
	pvm_exit();
	if (!bad)
		printf("outsider ok\n");
	return bad;
}

int
main(int argc, char *argv[])
{
	alarm(ALARM_SECS);
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2]);
	if (argc == 4 && strcmp(argv[1], "ask") == 0)
		return ask((int)strtol(argv[2], NULL, 0), atoi(argv[3]));
	fprintf(stderr, "usage: outsider serve FILE | outsider ask TID N\n");
	return 2;
}
