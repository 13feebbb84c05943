/*
 * burst: a PVM program that makes many cheap recorded calls in a row, for
 * the tests of what pmon must never lose silently (doc/capture.md).
 *
 *	burst [-w] [-p US] N FILE
 *
 * It enrols (pvm_mytid), appends "ready TID PID" to FILE, and waits
 * (without PVM calls) until FILE.go exists, so that the test can first
 * stop or kill what it wants to.  Then it makes N calls to pvm_getsbuf,
 * which only reads libpvm's state (two records each), sleeping US
 * microseconds after each with -p; with -p it appends "did K" after
 * every 100th call, and stops early (as if N were K) when FILE.stop
 * exists then.  It appends "did N", then:
 *	-w	waits for a signal without further PVM calls (the test
 *		kills it: every record it wrote is in its ring);
 *	else	calls pvm_exit and appends "ring written W dropped D": the
 *		counters of its own record ring (ring.h), read through
 *		/proc/self/fd, which is what pmon must have delivered and
 *		reported lost.
 * Every call the program makes is begun and ended: N + 2 calls in all
 * without -w, N + 1 with it.
 */
#include <sys/types.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvm3.h>

#include "prog_log.h"
#include "ring.h"

#define WAIT_GO_SECS	60

static void
sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Does FILE.SUFFIX exist? */
static int
exists(const char *file, const char *suffix)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.%s", file, suffix);
	return access(path, F_OK) == 0;
}

static void
wait_go(const char *file)
{
	int i;

	for (i = 0; i < WAIT_GO_SECS * 100; i++) {
		if (exists(file, "go"))
			return;
		sleep_us(10000);
	}
	fprintf(stderr, "burst: %s.go never appeared\n", file);
	exit(1);
}

/* The fd of our ring: the memfd the instrumentation named pmon-ring. */
static int
ring_fd(void)
{
	char link[320], target[256];
	struct dirent *d;
	DIR *dir;
	ssize_t n;
	int fd = -1;

	if ((dir = opendir("/proc/self/fd")) == NULL)
		return -1;
	while (fd == -1 && (d = readdir(dir)) != NULL) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, "/memfd:pmon-ring", 16) == 0)
			fd = atoi(d->d_name);
	}
	closedir(dir);
	return fd;
}

static void
log_ring(const char *file)
{
	struct ring_hdr h;
	int fd;

	if ((fd = ring_fd()) == -1 ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != RING_MAGIC) {
		fprintf(stderr, "burst: no pmon ring (not under pmon?)\n");
		exit(1);
	}
	prog_log(file, "ring written %llu dropped %llu\n",
	    (unsigned long long)atomic_load(&h.written),
	    (unsigned long long)atomic_load(&h.dropped));
}

int
main(int argc, char *argv[])
{
	const char *file;
	long pause_us = 0, i, n;
	int ch, hang = 0, tid;

	while ((ch = getopt(argc, argv, "wp:")) != -1) {
		switch (ch) {
		case 'w':
			hang = 1;
			break;
		case 'p':
			pause_us = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	n = atol(argv[optind]);
	file = argv[optind + 1];
	if ((tid = pvm_mytid()) < 0)
		return 1;
	prog_log(file, "ready %d %ld\n", tid, (long)getpid());
	wait_go(file);
	for (i = 1; i <= n; i++) {
		pvm_getsbuf();
		if (pause_us > 0) {
			sleep_us(pause_us);
			if (i % 100 == 0 && i < n) {
				if (exists(file, "stop"))
					n = i;
				else
					prog_log(file, "did %ld\n", i);
			}
		}
	}
	prog_log(file, "did %ld\n", n);
	if (hang) {
		for (;;)
			pause();
	}
	pvm_exit();
	log_ring(file);
	return 0;
usage:
	fprintf(stderr, "usage: burst [-w] [-p US] N FILE\n");
	return 2;
}
