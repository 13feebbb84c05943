/*
 * pmon-agentd: the per-host agent.
 *
 *	pmon-agentd [-v] [-D] [-c ADDR:PORT]
 *
 * -c names the coordinator (which spawns the agents with it); -D is the
 * dump mode: no coordinator, every frame is printed on stdout.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "log.h"

static struct agent agent;

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: pmon-agentd [-v] [-D] [-c ADDR:PORT]\n");
	exit(2);
}

static void
signal_cb(int sig, short what, void *arg)
{
	(void)what;
	log_info("signal %d: exiting", sig);
	agent_exit(arg, 0);
}

static void
watch_signal(struct event_base *base, int sig)
{
	struct event *ev = evsignal_new(base, sig, signal_cb, &agent);

	if (ev == NULL || event_add(ev, NULL) == -1)
		fatalx("cannot watch signal %d", sig);
}

int
main(int argc, char *argv[])
{
	struct event_base *base;
	const char *coord = NULL;
	int ch, verbose = 0, dump = 0;

	while ((ch = getopt(argc, argv, "vDc:")) != -1) {
		switch (ch) {
		case 'v':
			verbose++;
			break;
		case 'D':
			dump = 1;
			break;
		case 'c':
			coord = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || (coord == NULL) == !dump)
		usage();
	log_init("pmon-agentd", verbose);
	signal(SIGPIPE, SIG_IGN);
	if ((base = event_base_new()) == NULL || agent_init(&agent, base) == -1)
		fatalx("cannot initialise libevent");
	agent.dump = dump;
	if (agent_pvm_init(&agent) == -1) {
		if (!dump)
			fatalx("cannot enrol in PVM: is pvmd running?");
		log_warnx("not enrolled in PVM (no pvmd?); dumping anyway");
	}
	if (agent_listen(&agent) == -1) {
		agent_pvm_exit(&agent);
		fatalx("cannot serve tasks");
	}
	if (coord != NULL && agent_coord_connect(&agent, coord) == -1) {
		agent_unlisten(&agent);
		agent_pvm_exit(&agent);
		fatalx("cannot reach the coordinator");
	}
	agent_send_hello(&agent);
	if (agent_pvm_watch(&agent) == -1)
		agent_exit(&agent, 1);
	watch_signal(base, SIGTERM);
	watch_signal(base, SIGINT);
	log_info("serving tasks on %s", agent.sock_path);
	event_base_dispatch(base);
	agent_exit(&agent, 0);
}
