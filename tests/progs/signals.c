/*
 * signals: pvm_sendsig and pvm_kill between tasks.  The master spawns a
 * catcher and a victim.  The catcher installs a SIGUSR1 handler with
 * sigaction and a SIGUSR2 handler with signal, raises SIGUSR1 once
 * itself and tells the master it is ready (tag 4); the victim says so
 * too.  Then R rounds: the master sends the catcher SIGUSR1 (odd rounds
 * SIGUSR2) with pvm_sendsig, then a message (tag 1) that says which;
 * the catcher waits until its handler saw the signal, and answers (tag
 * 2).  The victim waits in pvm_recv for a message that never comes; the
 * master asks pvm_notify for its exit, kills it with pvm_kill, and waits
 * for the notify (tag 3).
 *
 *	signals R [HOST]
 *
 * HOST: where the catcher and the victim run (default: where PVM puts
 * them).  The master prints "signals ok R", the catcher checks that
 * sigaction and signal give back its own handlers, not pmon's.
 *
 * Calls, from this source: the master pvm_mytid, pvm_spawn (twice),
 * pvm_recv (twice), R x (pvm_sendsig, pvm_initsend, pvm_pkint,
 * pvm_send, pvm_recv, pvm_upkint), pvm_notify, pvm_kill, pvm_recv,
 * pvm_exit; the catcher pvm_mytid, pvm_parent, pvm_initsend, pvm_send,
 * R x (pvm_recv, pvm_upkint, pvm_initsend, pvm_pkint, pvm_send),
 * pvm_exit, and R + 1 signals (the first one raised, not sent by its
 * pvmd); the victim pvm_mytid, pvm_parent, pvm_initsend, pvm_send and
 * the begin of one pvm_recv.
 *
 * The children say they are ready before the master signals them: a
 * task the host's task starter started cannot be signalled before it
 * enrols (doc/tasker.md, "Signals before a task enrols").
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pvm3.h>

#define TAG_SIG		1
#define TAG_GOT		2
#define TAG_EXIT	3
#define TAG_READY	4
#define TAG_NEVER	9
#define ALARM_SECS	60	/* a task still alive then is hung */

static volatile sig_atomic_t got[NSIG];

static void
on_usr1(int signo, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	got[signo]++;
}

static void
on_usr2(int signo)
{
	got[signo]++;
}

static int
catcher(int rounds)
{
	struct sigaction sa, old;
	int parent, i, signo, bad = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) == -1 ||
	    signal(SIGUSR2, on_usr2) == SIG_ERR)
		return 1;
	/* What the application installed is what it gets back. */
	if (sigaction(SIGUSR1, NULL, &old) == -1 ||
	    !(old.sa_flags & SA_SIGINFO) || old.sa_sigaction != on_usr1 ||
	    signal(SIGUSR2, on_usr2) != on_usr2) {
		fprintf(stderr, "signals: the old actions are not ours\n");
		bad = 1;
	}
	pvm_mytid();
	parent = pvm_parent();
	raise(SIGUSR1);
	pvm_initsend(PvmDataDefault);
	pvm_send(parent, TAG_READY);	/* the handlers are in place */
	for (i = 0; i < rounds; i++) {
		pvm_recv(parent, TAG_SIG);
		pvm_upkint(&signo, 1, 1);
		while (got[signo] < (signo == SIGUSR1 ? 2 : 1) + i / 2)
			usleep(1000);
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&signo, 1, 1);
		pvm_send(parent, TAG_GOT);
	}
	pvm_exit();
	return bad;
}

static int
victim(void)
{
	pvm_mytid();
	pvm_initsend(PvmDataDefault);
	pvm_send(pvm_parent(), TAG_READY);	/* enrolled: killable */
	pvm_recv(-1, TAG_NEVER);
	return 1;
}

int
main(int argc, char *argv[])
{
	char *cargs[] = { (char *)"-c", NULL, NULL };
	char *vargs[] = { (char *)"-v", NULL };
	char *host = (char *)"";
	int rounds, i, signo, back, c, v, bad = 0;
	int where = PvmTaskDefault;

	alarm(ALARM_SECS);
	if (argc == 3 && strcmp(argv[1], "-c") == 0)
		return catcher(atoi(argv[2]));
	if (argc == 2 && strcmp(argv[1], "-v") == 0)
		return victim();
	if (argc < 2 || argc > 3 || (rounds = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: signals R [HOST] (R >= 1)\n");
		return 2;
	}
	if (argc == 3) {
		host = argv[2];
		where = PvmTaskHost;
	}
	if (pvm_mytid() < 0)
		return 1;
	cargs[1] = argv[1];
	if (pvm_spawn(argv[0], cargs, where, host, 1, &c) != 1 ||
	    pvm_spawn(argv[0], vargs, where, host, 1, &v) != 1) {
		fprintf(stderr, "signals: spawn failed\n");
		pvm_exit();
		return 1;
	}
	pvm_recv(c, TAG_READY);
	pvm_recv(v, TAG_READY);
	for (i = 0; i < rounds; i++) {
		signo = i % 2 ? SIGUSR2 : SIGUSR1;
		pvm_sendsig(c, signo);
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&signo, 1, 1);
		pvm_send(c, TAG_SIG);
		pvm_recv(c, TAG_GOT);
		pvm_upkint(&back, 1, 1);
		bad |= back != signo;
	}
	pvm_notify(PvmTaskExit, TAG_EXIT, 1, &v);
	pvm_kill(v);
	pvm_recv(-1, TAG_EXIT);
	pvm_exit();
	printf("signals ok %d\n", rounds);
	return bad;
}
