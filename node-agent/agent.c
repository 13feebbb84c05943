/*
 * The agent's core: the drain timer, the coordinator connection (frames
 * in, frames out) and the orderly exit.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "addr.h"
#include "agent.h"
#include "log.h"
#include "paths.h"
#include "proto.h"
#include "tasker.h"
#include "wire.h"
#include "xmalloc.h"

static long
ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000L +
	    (now.tv_nsec - t->tv_nsec) / 1000000L;
}

static void
zdata_emit(void *arg, const uint8_t *frame, size_t len)
{
	struct agent *a = arg;

	evbuffer_add(a->wire, frame, len);
}

/*
 * Deflates the queued frames onto the wire.  A sync flush makes all of
 * them readable now; it happens at flush points (a->want_sync: FLUSH,
 * CONTROL_DONE, a breakpoint), once per live interval, and when enough
 * plain bytes went by since the last one.
 */
static void
deflate_out(struct agent *a)
{
	size_t len = evbuffer_get_length(a->out);
	struct evbuffer_iovec v;
	int sync;

	sync = a->want_sync || a->zs.since_sync + len >= AGENT_SYNC_HIGH ||
	    ((a->zs.since_sync > 0 || len > 0) &&
	    ms_since(&a->last_sync) >= (long)a->live_ms);
	while (len > 0) {
		evbuffer_peek(a->out, -1, NULL, &v, 1);
		if (zs_out_write(&a->zs, v.iov_base, v.iov_len,
		    sync && v.iov_len == len, zdata_emit, a) == -1)
			fatalx("deflate failed");
		evbuffer_drain(a->out, v.iov_len);
		len -= v.iov_len;
	}
	if (sync) {
		if (zs_out_write(&a->zs, NULL, 0, 1, zdata_emit, a) == -1)
			fatalx("deflate failed");
		clock_gettime(CLOCK_MONOTONIC, &a->last_sync);
	}
	a->want_sync = 0;
}

/*
 * Sends what is queued: compressed after the hello, through the
 * bufferevent for a coordinator; dump mode prints it.
 */
void
agent_output(struct agent *a)
{
	if (a->dump) {
		if (agent_dump_frames(a->out, a->dumpf) == -1)
			log_warnx("dump: the agent produced a bad frame");
		return;
	}
	if (a->wire == NULL)
		return;
	if (!a->zs_on)
		evbuffer_add_buffer(a->wire, a->out);
	else
		deflate_out(a);
}

/* A flush point: what is queued must be readable by the coordinator now. */
void
agent_output_sync(struct agent *a)
{
	a->want_sync = 1;
	agent_output(a);
}

/*
 * pmon start -R: the ring size this host's tasks take when their
 * environment has no PMON_RING_SIZE, in a file next to the agent's
 * socket (written whole, then renamed into place).
 */
int
agent_publish_ring(struct agent *a, unsigned long size)
{
	char tmp[sizeof(a->ring_path) + 8];
	FILE *f;

	if (pmon_runtime_path(a->ring_path, sizeof(a->ring_path),
	    PMON_FILE_RING) == -1) {
		a->ring_path[0] = '\0';
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", a->ring_path);
	if ((f = fopen(tmp, "w")) == NULL)
		goto fail;
	fprintf(f, "%lu\n", size);
	if (fclose(f) == EOF || rename(tmp, a->ring_path) == -1) {
		unlink(tmp);
		goto fail;
	}
	return 0;
fail:
	log_warn("%s", a->ring_path);
	a->ring_path[0] = '\0';
	return -1;
}

/* What this agent shipped, for bench-size and the curious. */
void
agent_log_counts(const struct agent *a)
{
	log_info("shipped %llu records: %llu frame bytes, %llu bytes "
	    "compressed (%.3f B/record, time %s)",
	    (unsigned long long)a->nrecords,
	    (unsigned long long)a->zs.plain,
	    (unsigned long long)a->zs.packed,
	    a->nrecords ? (double)a->zs.packed / (double)a->nrecords : 0.0,
	    pack_time_name(a->time_mode));
}

/* Bytes waiting for the coordinator, compressed or not. */
static size_t
queued(const struct agent *a)
{
	return evbuffer_get_length(a->out) +
	    (a->wire != NULL ? evbuffer_get_length(a->wire) : 0);
}

/*
 * Whether rings may be drained now.  Without a coordinator, records wait
 * in the rings for the next one; with a slow one, they wait in the
 * rings, not in our memory.  Tasks in blocking mode wait with them.
 */
int
agent_may_drain(const struct agent *a)
{
	if (a->dump)
		return 1;
	return a->coord != NULL && queued(a) < a->high_water;
}

static void
timer_cb(int fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	agent_clock_sample();
	agent_tasks_tick(a);
	if (!a->dump && a->coord == NULL)
		return;
	if (agent_may_drain(a))
		agent_drain_all(a, AGENT_PASS_MAX);
	agent_output(a);
}

int
agent_init(struct agent *a, struct event_base *base)
{
	struct timeval tv = { 0, AGENT_DRAIN_MS * 1000 };

	memset(a, 0, sizeof(*a));
	a->base = base;
	a->listen_fd = -1;
	a->pvm_tid = -1;
	a->dumpf = stdout;
	a->time_mode = PACK_TIME_EXACT;
	a->high_water = AGENT_HIGH_WATER;
	a->live_ms = AGENT_LIVE_MS;
	clock_gettime(CLOCK_MONOTONIC, &a->last_sync);
	agent_clock_sample();
	TAILQ_INIT(&a->tasks);
	TAILQ_INIT(&a->controls);
	a->batch = xmalloc(AGENT_BATCH);
	a->pack = xmalloc(PROTO_MAX_PAYLOAD);
	a->packt = xmalloc(PROTO_MAX_PAYLOAD);
	if (zs_out_init(&a->zs, ZS_LEVEL) == -1)
		return -1;
	if ((a->out = evbuffer_new()) == NULL)
		return -1;
	a->ev_timer = event_new(base, -1, EV_PERSIST, timer_cb, a);
	if (a->ev_timer == NULL || event_add(a->ev_timer, &tv) == -1)
		return -1;
	return 0;
}

/*
 * Frees everything agent_init and later work allocated, saying nothing
 * to anyone (the unit tests; the daemon leaves with agent_exit).
 */
void
agent_free(struct agent *a)
{
	agent_controls_free(a);
	agent_tasks_free(a);
	agent_others_free(a);
	agent_unlisten(a);
	if (a->ev_timer != NULL)
		event_free(a->ev_timer);
	if (a->ev_reconnect != NULL)
		event_free(a->ev_reconnect);
	if (a->coord != NULL)
		bufferevent_free(a->coord);
	if (a->out != NULL)
		evbuffer_free(a->out);
	zs_out_end(&a->zs);
	free(a->batch);
	free(a->pack);
	free(a->packt);
	memset(a, 0, sizeof(*a));
	a->listen_fd = -1;
}

static int	stream_deflated(const struct agent *);

/*
 * The secret stays in memory (never logged): a coordinator that went
 * away may come back, and then we say hello again.
 */
void
agent_send_hello(struct agent *a)
{
	agent_frame_agent_hello(a->out, a->host_tid, (uint32_t)getpid(),
	    a->host, a->arch, a->secret);
	agent_output(a);
	/* The hello went out plain; what follows it may be deflated. */
	a->zs_on = a->wire != NULL && stream_deflated(a);
	if (a->wire != NULL)
		log_info("stream to the coordinator: %s", a->zs_on ?
		    "deflated" : "plain");
	if (a->nothers > 0)
		agent_others_send(a);
}

/*
 * Whether fd, a connected socket, ends on this host: a Unix socket, or
 * one whose two ends have the same address (loopback, or this host's
 * own address).  Hosts in network namespaces have addresses of their
 * own, and count as remote, as they would on a real network.
 */
int
agent_peer_is_local(int fd)
{
	struct sockaddr_storage me, peer;
	socklen_t mlen = sizeof(me), plen = sizeof(peer);
	const struct sockaddr_in *m4, *p4;
	const struct sockaddr_in6 *m6, *p6;

	if (getsockname(fd, (struct sockaddr *)&me, &mlen) == -1 ||
	    getpeername(fd, (struct sockaddr *)&peer, &plen) == -1 ||
	    me.ss_family != peer.ss_family)
		return 0;
	switch (me.ss_family) {
	case AF_UNIX:
		return 1;
	case AF_INET:
		m4 = (const struct sockaddr_in *)&me;
		p4 = (const struct sockaddr_in *)&peer;
		return m4->sin_addr.s_addr == p4->sin_addr.s_addr;
	case AF_INET6:
		m6 = (const struct sockaddr_in6 *)&me;
		p6 = (const struct sockaddr_in6 *)&peer;
		return memcmp(&m6->sin6_addr, &p6->sin6_addr,
		    sizeof(m6->sin6_addr)) == 0;
	default:
		return 0;
	}
}

/*
 * -z: the stream after the hello is deflated always, never, or (remote,
 * the default) unless the coordinator is on this host: there deflate
 * would only take CPU from the tasks it watches (doc/capture.md).
 */
static int
stream_deflated(const struct agent *a)
{
	switch (a->compress) {
	case CAPTURE_COMPRESS_ALWAYS:
		return 1;
	case CAPTURE_COMPRESS_NEVER:
		return 0;
	default:
		return a->coord == NULL ||
		    !agent_peer_is_local(bufferevent_getfd(a->coord));
	}
}

/*
 * FLUSH: everything recorded before it must go out ahead of FLUSH_DONE,
 * including the records of tasks that are registering right now.
 */
void
agent_flush(struct agent *a, uint32_t id)
{
	agent_accept_all(a);
	agent_tasks_hello_pending(a);
	agent_drain_all(a, SIZE_MAX);
	agent_frame_flush_done(a->out, id);
	agent_output_sync(a);
}

/* Writes out what is queued for the coordinator, waiting a little. */
static void
coord_drain_out(struct agent *a)
{
	struct timeval tv = { 5, 0 };
	int fd;

	if (a->coord == NULL)
		return;
	agent_output_sync(a);
	fd = bufferevent_getfd(a->coord);
	bufferevent_disable(a->coord, EV_READ | EV_WRITE);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1)
		return;
	while (evbuffer_get_length(a->wire) > 0)
		if (evbuffer_write(a->wire, fd) <= 0) {
			log_warn("coordinator: %zu bytes unsent",
			    evbuffer_get_length(a->wire));
			return;
		}
}

/*
 * Leaves: the rings are drained one last time (when there is still
 * someone to send to), the socket is removed and PVM is left.
 */
void
agent_exit(struct agent *a, int code)
{
	agent_control_release(a);
	if (a->dump || a->coord != NULL) {
		agent_accept_all(a);
		agent_tasks_hello_pending(a);
		agent_drain_all(a, SIZE_MAX);
		agent_output_sync(a);
		coord_drain_out(a);
	}
	/* Nobody drains the rings from now on: no task may wait for us. */
	agent_tasks_release(a);
	if (!a->dump)
		agent_log_counts(a);
	agent_unlisten(a);
	if (a->ring_path[0] != '\0')
		unlink(a->ring_path);
	agent_pvm_exit(a);
	/* An orderly end: pvmd starts the host's tasks itself again. */
	if (a->tasker && code == 0)
		tasker_stop();
	log_debug("exiting (%d)", code);
	exit(code);
}

/*
 * A frame from the coordinator: FLUSH, CONTROL, BREAKPOINTS and SHUTDOWN
 * are all it may send.
 */
static void
coord_frame(struct agent *a, const struct frame_hdr *h, const uint8_t *p)
{
	char text[1024];
	struct wire_reader r;

	if (h->type != MSG_ERROR)
		a->refusals = 0;	/* it took us */
	switch (h->type) {
	case MSG_FLUSH:
		agent_flush(a, wire_get32(p));
		break;
	case MSG_CONTROL:
		agent_control(a, p, h->len);
		break;
	case MSG_BREAKPOINTS:
		agent_breakpoints(a, p, h->len);
		break;
	case MSG_ACK:
		agent_ack(a, p, h->len);
		break;
	case MSG_SHUTDOWN:
		log_debug("shutdown requested");
		agent_exit(a, 0);
	case MSG_ERROR:
		wire_reader_init(&r, p, h->len);
		wire_readstr(&r, text, sizeof(text));
		/*
		 * With tasks to keep (adopted, or from a coordinator before),
		 * a refusal is waited out as a lost connection: a flood of
		 * connections from our address, or our old connection not yet
		 * closed, passes.  Without, the refusal ends the agent.
		 */
		if (a->coord_addr[0] != '\0' && a->ntasks > 0 &&
		    ++a->refusals <= AGENT_RECONNECT_S * 1000 /
		    AGENT_RECONNECT_MS) {
			log_warnx("coordinator dropped us: %s; keeping %u "
			    "tasks and dialing again", r.err ?
			    "(unreadable reason)" : text, a->ntasks);
			a->refused = 1;
			break;
		}
		log_warnx("coordinator dropped us: %s",
		    r.err ? "(unreadable reason)" : text);
		a->coord = NULL;
		a->wire = NULL;
		agent_exit(a, 1);
	default:
		log_warnx("coordinator sent an unexpected %s",
		    proto_msg_name(h->type));
		a->coord = NULL;
		a->wire = NULL;
		agent_exit(a, 1);
	}
}

static void	coord_lost(struct agent *);

static void
coord_read_cb(struct bufferevent *bev, void *arg)
{
	struct agent *a = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[FRAME_HDR_SIZE];
	struct frame_hdr h;
	const char *why;
	uint8_t *p;

	while (evbuffer_copyout(in, hdr, sizeof(hdr)) == sizeof(hdr)) {
		if (frame_hdr_decode(hdr, &h, &why) == -1) {
			log_warnx("bad frame from the coordinator: %s", why);
			a->coord = NULL;
			a->wire = NULL;
			agent_exit(a, 1);
		}
		if (evbuffer_get_length(in) < sizeof(hdr) + h.len)
			return;
		evbuffer_drain(in, sizeof(hdr));
		p = evbuffer_pullup(in, h.len);
		coord_frame(a, &h, p);
		evbuffer_drain(in, h.len);
		if (a->refused) {
			a->refused = 0;
			coord_lost(a);
			return;
		}
	}
}

static int	tcp_connect(const char *, int);

static time_t
mono_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/*
 * Dials the lost coordinator's address again; once it answers, says
 * hello and sends everything it has not acknowledged.  After
 * AGENT_RECONNECT_S, gives up and leaves.
 */
static void
reconnect_cb(int unused, short what, void *arg)
{
	struct agent *a = arg;
	int fd;

	(void)unused;
	(void)what;
	if (mono_sec() - a->lost_since > AGENT_RECONNECT_S) {
		log_warnx("no coordinator at %s for %d s; exiting",
		    a->coord_addr, AGENT_RECONNECT_S);
		agent_exit(a, 1);
	}
	if ((fd = tcp_connect(a->coord_addr, 1)) == -1)
		return;
	/* Frames made while nobody listened: the rings have it all. */
	evbuffer_drain(a->out, evbuffer_get_length(a->out));
	if (agent_coord_attach(a, fd) == -1) {
		log_warnx("cannot talk to the coordinator");
		return;
	}
	event_del(a->ev_reconnect);
	a->lost_since = 0;
	log_info("coordinator at %s reached again; sending what it has not "
	    "acknowledged", a->coord_addr);
	agent_send_hello(a);
	agent_tasks_resume(a);
}

/*
 * The coordinator went away without a SHUTDOWN (killed, crashed, the
 * network): the tasks, and what the coordinator has not acknowledged
 * in their rings, stay, and the agent dials its address again
 * (doc/capture.md).  Nobody is left to continue what pmon stopped, so
 * its breakpoints go and its stopped tasks continue, as when the agent
 * leaves.  Frames made meanwhile go nowhere.
 */
static void
coord_lost(struct agent *a)
{
	struct timeval tv = { 0, AGENT_RECONNECT_MS * 1000 };

	agent_control_release(a);
	agent_controls_free(a);
	bufferevent_free(a->coord);
	a->coord = NULL;
	a->wire = NULL;
	evbuffer_drain(a->out, evbuffer_get_length(a->out));
	/* The next connection starts a new deflate stream after its hello. */
	a->zs_on = 0;
	zs_out_end(&a->zs);
	if (zs_out_init(&a->zs, ZS_LEVEL) == -1)
		fatalx("%s: zlib", __func__);
	a->lost_since = mono_sec();
	if (a->ev_reconnect == NULL && (a->ev_reconnect = event_new(a->base,
	    -1, EV_PERSIST, reconnect_cb, a)) == NULL)
		fatal("%s", __func__);
	event_add(a->ev_reconnect, &tv);
}

/* A coordinator's address to dial: ADDR:PORT or [V6]:PORT. */
static int
split_dial(const char *s, char *host, size_t hostsize, char *port,
    size_t portsize)
{
	port[0] = '\0';
	if (addr_split(s, host, hostsize, port, portsize) == -1 ||
	    port[0] == '\0')
		return -1;
	return 0;
}

/*
 * Dials addr from now on (agent_pvm.c, dial_message): a connection to
 * the old address is given up as a lost one, and what the coordinator
 * did not acknowledge goes to the new one.  -1 when we cannot (no -c:
 * the coordinator is one of this host's sockets; a bad address).
 */
int
agent_coord_redirect(struct agent *a, const char *addr, int32_t from)
{
	char host[256], port[16];

	if (a->coord_addr[0] == '\0')
		return -1;
	if (strcmp(addr, a->coord_addr) == 0)
		return 0;
	if (split_dial(addr, host, sizeof(host), port, sizeof(port)) == -1) {
		log_warnx("bad coordinator address %s (want ADDR:PORT)", addr);
		return -1;
	}
	log_warnx("t%x says the coordinator is at %s: dialing it instead "
	    "of %s", (unsigned)from, addr, a->coord_addr);
	snprintf(a->coord_addr, sizeof(a->coord_addr), "%s", addr);
	if (a->coord != NULL)
		coord_lost(a);
	/* A minute to reach it, from now; the first try at once. */
	a->lost_since = mono_sec();
	if (a->ev_reconnect != NULL)
		event_active(a->ev_reconnect, EV_TIMEOUT, 0);
	return 0;
}

static void
coord_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct agent *a = arg;

	(void)bev;
	if (what & BEV_EVENT_EOF)
		log_info("coordinator closed the connection");
	else
		log_warnx("coordinator connection: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
	if (a->coord_addr[0] != '\0') {
		coord_lost(a);
		return;
	}
	a->coord = NULL;
	a->wire = NULL;
	agent_exit(a, 0);
}

/*
 * quiet: we are redialing a lost coordinator; a failure is expected and
 * not logged, and a host that does not answer (no refusal either) is
 * given up after a second, not the kernel's minutes: the loop must go
 * on serving the tasks.
 */
static int
tcp_connect(const char *addrport, int quiet)
{
	struct addrinfo hints, *res, *ai;
	struct timeval tv = { 1, 0 };
	char host[256], port[16];
	int fd = -1, rc, one = 1;

	if (split_dial(addrport, host, sizeof(host), port,
	    sizeof(port)) == -1) {
		log_warnx("bad coordinator address %s (want ADDR:PORT)",
		    addrport);
		return -1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		log_warnx("%s: %s", addrport, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		/* Linux bounds a blocking connect by the send timeout. */
		if (fd != -1 && quiet)
			(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
			    sizeof(tv));
		if (fd != -1 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			/* A BREAK must not wait for the last frame's ACK. */
			if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one)) == -1)
				log_warn("TCP_NODELAY");
			break;
		}
		if (fd != -1)
			close(fd);
		fd = -1;
	}
	if (fd == -1 && !quiet)
		log_warn("connect to the coordinator at %s", addrport);
	freeaddrinfo(res);
	return fd;
}

/* Connects to the coordinator; frames then go out through a bufferevent. */
int
agent_coord_connect(struct agent *a, const char *addrport)
{
	int fd;

	if ((fd = tcp_connect(addrport, 0)) == -1)
		return -1;
	snprintf(a->coord_addr, sizeof(a->coord_addr), "%s", addrport);
	return agent_coord_attach(a, fd);
}

/*
 * Talks to the coordinator on the connected socket fd, which the agent
 * now owns (the unit tests hand it one end of a socketpair).
 */
int
agent_coord_attach(struct agent *a, int fd)
{
	evutil_make_socket_nonblocking(fd);
	a->coord = bufferevent_socket_new(a->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (a->coord == NULL) {
		close(fd);
		return -1;
	}
	a->wire = bufferevent_get_output(a->coord);
	bufferevent_setcb(a->coord, coord_read_cb, NULL, coord_event_cb, a);
	bufferevent_enable(a->coord, EV_READ | EV_WRITE);
	return 0;
}
