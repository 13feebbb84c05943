/*
 * Framing on the coordinator's connections, shared by agents (TCP) and
 * tools (unix socket): frames are checked header first, before anything
 * is buffered for their payload, and a dropped peer gets an ERROR frame
 * that is written out after its owner has forgotten it.  Both kinds of
 * peer prove with their hello that they know the secret.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "coord.h"
#include "proto.h"
#include "secret.h"

/*
 * Hands every complete frame in bev's input to cb.  cb returns 0 to go
 * on, 1 to stop after this frame, or -1 when it dropped the peer (bev
 * may be freed: not touched again).  Returns 0, 1 when cb dropped the
 * peer, or -1 with *why on a bad frame header; the caller drops the
 * peer.  Until its hello is taken (pre listed), a peer may send nothing
 * but a frame of type hello, which the protocol's table limits to 1 KiB:
 * a header that says otherwise ends it before its payload is kept.
 */
int
coord_conn_read(struct bufferevent *bev, coord_frame_cb cb, void *peer,
    const struct coord_preauth *pre, uint8_t hello, const char **why)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[FRAME_HDR_SIZE];
	const uint8_t *frame;
	struct frame_hdr h;
	size_t total;

	for (;;) {
		if (evbuffer_get_length(in) < FRAME_HDR_SIZE)
			return 0;
		evbuffer_copyout(in, hdr, sizeof(hdr));
		if (frame_hdr_decode(hdr, &h, why) == -1)
			return -1;
		if (pre->listed && h.type != hello) {
			*why = "its first frame is not a hello";
			return -1;
		}
		total = FRAME_HDR_SIZE + (size_t)h.len;
		if (evbuffer_get_length(in) < total)
			return 0;
		if ((frame = evbuffer_pullup(in, (ev_ssize_t)total)) == NULL) {
			*why = "out of memory";
			return -1;
		}
		switch (cb(peer, h.type, frame + FRAME_HDR_SIZE, h.len)) {
		case -1:
			return 1;
		case 1:
			evbuffer_drain(in, total);
			return 0;
		}
		evbuffer_drain(in, total);
	}
}

static void
close_write_cb(struct bufferevent *bev, void *arg)
{
	(void)arg;
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		bufferevent_free(bev);
}

static void
close_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)what;
	(void)arg;
	bufferevent_free(bev);
}

/*
 * Takes over bev of a peer its owner has forgotten: writes an ERROR frame
 * naming the reason (if any) and what is still queued, then frees it.
 */
void
coord_conn_close(struct bufferevent *bev, const char *error)
{
	struct timeval tv = { COORD_DRAIN_TIMEOUT, 0 };

	bufferevent_disable(bev, EV_READ);
	if (error != NULL)
		coord_frame_text(bufferevent_get_output(bev), MSG_ERROR, error);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_setcb(bev, NULL, close_write_cb, close_event_cb, NULL);
	bufferevent_set_timeouts(bev, NULL, &tv);
	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		bufferevent_free(bev);
	else
		bufferevent_enable(bev, EV_WRITE);
}

/* "ADDR:PORT" of a TCP peer, "local" for a unix socket. */
int
coord_peer_name(int fd, char *buf, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN];
	const void *a;
	unsigned port;

	snprintf(buf, size, "local");
	if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1)
		return -1;
	if (ss.ss_family == AF_INET) {
		a = &((struct sockaddr_in *)&ss)->sin_addr;
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else
		return 0;
	if (inet_ntop(ss.ss_family, a, host, sizeof(host)) == NULL)
		return -1;
	snprintf(buf, size, "%s:%u", host, port);
	return 0;
}

/*
 * Is got, from a peer's hello, this virtual machine's secret?  If not,
 * msg says why, for the peer's ERROR and the log; it never holds a
 * secret.  The comparison takes the same time however much of got is
 * right.
 */
int
coord_secret_check(const struct coord *c, const char *got, char *msg,
    size_t size)
{
	if (got[0] == '\0') {
		snprintf(msg, size, "no secret: read %s", c->secret_path);
		return -1;
	}
	if (!pmon_secret_equal(c->secret, got)) {
		snprintf(msg, size, "wrong secret (not the one in %s)",
		    c->secret_path);
		return -1;
	}
	return 0;
}

/* --- before the hello ------------------------------------------------- */

/* The address of fd's peer without its port ("local": a unix socket). */
static void
peer_source(int fd, char *buf, size_t size)
{
	char *colon;

	coord_peer_name(fd, buf, size);
	if ((colon = strrchr(buf, ':')) != NULL)
		*colon = '\0';
}

/* Ends the connection p stands for (and p with it). */
static void
preauth_drop(struct coord_preauth *p, const char *why)
{
	if (p->agent != NULL)
		coord_agent_drop(p->agent, "%s", why);
	else
		coord_tool_drop(p->tool, "%s", why);
}

/*
 * Has p's whole first frame come, in its input or still in its socket?
 * Then it is read in this pass of the loop: a real peer's hello waits
 * there while the flood that came after it is accepted.
 */
static int
frame_waiting(const struct coord_preauth *p)
{
	struct bufferevent *bev = p->agent != NULL ? p->agent->bev :
	    p->tool->bev;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t have = evbuffer_get_length(in);
	uint8_t hdr[FRAME_HDR_SIZE];
	struct frame_hdr h;
	const char *why;
	int fd = bufferevent_getfd(bev), sock;

	if (ioctl(fd, FIONREAD, &sock) == -1)
		return 0;
	evbuffer_copyout(in, hdr, have < sizeof(hdr) ? have : sizeof(hdr));
	if (have < sizeof(hdr) && recv(fd, hdr + have, sizeof(hdr) - have,
	    MSG_PEEK) != (ssize_t)(sizeof(hdr) - have))
		return 0;
	if (frame_hdr_decode(hdr, &h, &why) == -1)
		return 0;
	return have + (size_t)sock >= FRAME_HDR_SIZE + h.len;
}

/*
 * The connection to make room with, among those from source (all if
 * NULL): the oldest whose first frame has not all come, else the oldest.
 * *n says how many there are.
 */
static struct coord_preauth *
preauth_victim(struct coord *c, const char *source, unsigned *n)
{
	struct coord_preauth *p, *oldest = NULL, *victim = NULL;

	*n = 0;
	TAILQ_FOREACH(p, &c->preauth, entry) {
		if (source != NULL && strcmp(p->source, source) != 0)
			continue;
		if (oldest == NULL)
			oldest = p;
		if (victim == NULL && !frame_waiting(p))
			victim = p;
		(*n)++;
	}
	return victim != NULL ? victim : oldest;
}

/*
 * A new connection, fd, waits for its hello.  If its address already has
 * COORD_PREAUTH_SOURCE such connections, or all addresses together
 * COORD_PREAUTH_MAX, the oldest of them goes, unless its hello has come
 * and waits to be read: a real peer says hello as soon as it is
 * connected, so the ones that waited longest are the flood's.
 */
void
coord_preauth_add(struct coord *c, struct coord_preauth *p, int fd)
{
	struct coord_preauth *old;
	unsigned n;

	peer_source(fd, p->source, sizeof(p->source));
	if (c->npreauth >= COORD_PREAUTH_SOURCE &&
	    (old = preauth_victim(c, p->source, &n)) != NULL &&
	    n >= COORD_PREAUTH_SOURCE)
		preauth_drop(old, "too many connections without a hello from "
		    "its address: the oldest goes");
	else if (c->npreauth >= COORD_PREAUTH_MAX &&
	    (old = preauth_victim(c, NULL, &n)) != NULL)
		preauth_drop(old, "too many connections without a hello: the "
		    "oldest goes");
	p->deadline_ms = coord_mono_ms() + COORD_HELLO_TIMEOUT * 1000;
	p->listed = 1;
	TAILQ_INSERT_TAIL(&c->preauth, p, entry);
	c->npreauth++;
	c->npreauth_agents += p->agent != NULL;
}

/* p said its hello, or is going away. */
void
coord_preauth_done(struct coord *c, struct coord_preauth *p)
{
	if (!p->listed)
		return;
	TAILQ_REMOVE(&c->preauth, p, entry);
	c->npreauth--;
	c->npreauth_agents -= p->agent != NULL;
	p->listed = 0;
}

/* The connections whose hello did not come in time end. */
void
coord_preauth_expire(struct coord *c)
{
	struct coord_preauth *p;
	uint64_t now = coord_mono_ms();
	char why[64];

	snprintf(why, sizeof(why), "no hello within %d s of connecting",
	    COORD_HELLO_TIMEOUT);
	while ((p = TAILQ_FIRST(&c->preauth)) != NULL && p->deadline_ms <= now)
		preauth_drop(p, why);
}

/* --- accepting --------------------------------------------------------- */

static void
listeners_enable(struct coord *c, int on)
{
	struct evconnlistener *l[] = { c->agent_listener,
	    c->agent_listener_wide, c->tool_listener };
	size_t i;

	for (i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (l[i] != NULL && on)
			evconnlistener_enable(l[i]);
		else if (l[i] != NULL)
			evconnlistener_disable(l[i]);
}

static void
accept_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct coord *c = arg;

	(void)fd;
	(void)what;
	if (!c->shutting_down)
		listeners_enable(c, 1);
}

int
coord_accept_init(struct coord *c)
{
	static const struct log_rate accept = LOG_RATE_INIT("failed accepts");
	static const struct log_rate refuse = LOG_RATE_INIT("peers dropped "
	    "before their hello");

	c->accept_log = accept;
	c->refuse_log = refuse;
	TAILQ_INIT(&c->preauth);
	c->ev_accept = evtimer_new(c->base, accept_resume_cb, c);
	return c->ev_accept != NULL ? 0 : -1;
}

/*
 * A listener's accept failed (what: "an agent", "a tool").  Out of
 * descriptors or memory, the next accept would fail too and the
 * listener's callback would spin: every listener pauses for
 * COORD_ACCEPT_PAUSE_MS (descriptors are the process's), as relayd does,
 * while the hello deadline frees those that idle connections hold.
 */
void
coord_accept_error(struct coord *c, const char *what)
{
	struct timeval tv = { COORD_ACCEPT_PAUSE_MS / 1000,
	    COORD_ACCEPT_PAUSE_MS % 1000 * 1000 };
	int err = EVUTIL_SOCKET_ERROR();
	int pause = err == EMFILE || err == ENFILE || err == ENOBUFS ||
	    err == ENOMEM;

	if (log_rate_ok(&c->accept_log))
		log_warnx("accepting %s: %s%s", what, strerror(err), pause ?
		    "; not accepting for a second" : "");
	if (!pause)
		return;
	listeners_enable(c, 0);
	evtimer_add(c->ev_accept, &tv);
}
