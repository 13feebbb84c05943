/*
 * catchout: a parent that collects its children's output with
 * pvm_catchout, as PVM programs do to see their workers' printfs.
 *
 *	catchout K LINES
 *
 * The parent spawns K copies of itself (argument "child") and waits for
 * a message from each; each child prints LINES lines "child I line J"
 * (I its index, J from 1), tells the parent it is done, and exits.  The
 * parent then calls pvm_exit, which waits until every child's output has
 * reached it: libpvm prints each line as "[tTID] text" on the parent's
 * stdout.  The parent prints "catchout ok" last.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>

#define TAG_DONE	1
#define MAXKIDS		16

static int
child(int i, int lines)
{
	int j, parent = pvm_parent();

	for (j = 1; j <= lines; j++)
		printf("child %d line %d\n", i, j);
	fflush(stdout);
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&i, 1, 1);
	pvm_send(parent, TAG_DONE);
	pvm_exit();
	return 0;
}

int
main(int argc, char *argv[])
{
	int k, lines, tid, i;
	char idx[16], nl[16];
	char *cargs[] = { (char *)"child", idx, nl, (char *)"-", NULL };

	if (argc == 5 && strcmp(argv[1], "child") == 0)
		return child(atoi(argv[2]), atoi(argv[3]));
	if (argc != 3 || (k = atoi(argv[1])) < 1 || k > MAXKIDS ||
	    (lines = atoi(argv[2])) < 0) {
		fprintf(stderr, "usage: catchout K LINES\n");
		return 2;
	}
	if (pvm_mytid() < 0)
		return 1;
	pvm_catchout(stdout);
	snprintf(nl, sizeof(nl), "%d", lines);
	for (i = 0; i < k; i++) {
		snprintf(idx, sizeof(idx), "%d", i);
		if (pvm_spawn(argv[0], cargs, PvmTaskDefault, (char *)"", 1,
		    &tid) != 1) {
			fprintf(stderr, "catchout: spawn failed: %d\n", tid);
			pvm_exit();
			return 1;
		}
	}
	for (i = 0; i < k; i++)
		pvm_recv(-1, TAG_DONE);
	pvm_exit();
	printf("catchout ok\n");
	return 0;
}
