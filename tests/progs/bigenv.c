/*
 * bigenv: spawns a program with a variable of N bytes in PVM_EXPORT, as
 * a PVM program may, and waits until the task it got has ended.
 *
 *	bigenv N PROGRAM
 *
 * It prints "spawned 1" (or the spawn's error), then "ended" once pvmd
 * says the task exited (pvm_notify), and exits 0.  A task whose end
 * pvmd never learns would keep it waiting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>

#define TAG_EXIT	99

int
main(int argc, char *argv[])
{
	char *v;
	long n;
	int tid, cc;

	if (argc != 3 || (n = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: bigenv N PROGRAM\n");
		return 2;
	}
	if ((v = malloc((size_t)n + 1)) == NULL)
		return 1;
	memset(v, 'x', (size_t)n);
	v[n] = '\0';
	if (setenv("PMON_TEST_BIG", v, 1) == -1 ||
	    setenv("PVM_EXPORT", "PMON_TEST_BIG", 1) == -1)
		return 1;
	if (pvm_mytid() < 0)
		return 1;
	cc = pvm_spawn(argv[2], NULL, PvmTaskDefault, (char *)"", 1, &tid);
	printf("spawned %d\n", cc == 1 ? 1 : tid);
	fflush(stdout);
	if (cc == 1) {
		pvm_notify(PvmTaskExit, TAG_EXIT, 1, &tid);
		pvm_recv(-1, TAG_EXIT);
		printf("ended\n");
	}
	free(v);
	pvm_exit();
	return 0;
}
