/*
 * Framing on the coordinator's connections, shared by agents (TCP) and
 * tools (unix socket): frames are checked header first, before anything
 * is buffered for their payload, and a dropped peer gets an ERROR frame
 * that is written out after its owner has forgotten it.  Both kinds of
 * peer prove with their hello that they know the secret.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "coord.h"
#include "proto.h"
#include "secret.h"

/*
 * Hands every complete frame in bev's input to cb.  cb returns 0 to go
 * on, 1 to stop after this frame, or -1 when it dropped the peer (bev
 * may be freed: not touched again).  Returns 0, 1 when cb dropped the
 * peer, or -1 with *why on a bad frame header; the caller drops the
 * peer.
 */
int
coord_conn_read(struct bufferevent *bev, coord_frame_cb cb, void *peer,
    const char **why)
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
