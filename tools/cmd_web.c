/*
 * pmon web: a tool attached like any other (subscribed, with the
 * snapshot) that serves the views of doc/web.md to browsers with
 * libevent's HTTP server.  It keeps what it received -- the task lines,
 * the attach snapshot and the last --keep events, problems and notices --
 * so that a browser that comes late gets everything so far, then the
 * live stream as Server-Sent Events.  The page and its scripts are
 * compiled into the binary (tools/web/, the Makefile's web_assets.c).
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <jansson.h>

#include "pmon-tool.h"
#include "pmon.h"
#include "web.h"

#define WEB_DEFAULT_PORT	7680
#define WEB_DEFAULT_KEEP	200000
#define WEB_KEEP_MAX		10000000
/* A browser this far behind the live stream is dropped (it reconnects). */
#define WEB_CLIENT_BACKLOG	(64u << 20)

static int	cmd_web(const struct cmd_args *);

static const struct option web_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "port", required_argument, NULL, 'p' },
	{ "bind", required_argument, NULL, 'b' },
	{ "keep", required_argument, NULL, 'k' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_web_entry = {
	"web", "[--port N] [--bind ADDR] [--keep N]",
	"serve live views of the application to a browser (doc/web.md)",
	"  -p, --port N    TCP port (default 7680; 0: any free port)\n"
	"  -b, --bind ADDR address to listen on (default 127.0.0.1)\n"
	"  -k, --keep N    events kept for browsers that come later\n"
	"                  (default 200000; older ones are dropped)\n"
	"\nPrints the page's URL, which carries a key: the data and the\n"
	"control panel answer only requests with that key.  Runs until\n"
	"SIGINT or SIGTERM, and keeps serving what it has after the\n"
	"coordinator stops.\n",
	"+hp:b:k:", web_longopts, 0, 0, cmd_web
};

/* A browser on /events: it gets every line the tool keeps from now on. */
struct web_client {
	struct web			*w;
	struct evhttp_request		*req;
	struct evhttp_connection	*conn;
	size_t				 limit;	/* output bytes to drop at */
	TAILQ_ENTRY(web_client)		 entry;
};
TAILQ_HEAD(web_clients, web_client);

struct web {
	struct event_base	*base;
	struct evhttp		*http;
	struct pmon		*p;
	struct event		*pmon_ev;
	char			 key[PMON_SECRET_LEN + 1];
	int			 live;		/* attached to the coordinator */
	int			 failed;	/* out of memory */

	char			**tasks;	/* task lines, all of them */
	size_t			 ntasks, tasks_cap;
	char			*snapshot;	/* the attach snapshot line */
	char			**ring;		/* the last `keep' other lines */
	size_t			 keep, first, nring;
	unsigned long long	 dropped;	/* lines gone from the ring */

	struct web_clients	 clients;
};

/* --- what is kept ---------------------------------------------------------- */

/* Out of memory: the loop ends, and the command fails. */
static void
web_fail(struct web *w)
{
	w->failed = 1;
	event_base_loopbreak(w->base);
}

/* Sends one line as an SSE message to every browser on /events. */
static void
web_broadcast(struct web *w, const char *line)
{
	struct web_client *c, *next;
	struct bufferevent *bev;
	struct evbuffer *buf;

	for (c = TAILQ_FIRST(&w->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if ((buf = evbuffer_new()) == NULL) {
			web_fail(w);
			return;
		}
		evbuffer_add_printf(buf, "data: %s\n\n", line);
		evhttp_send_reply_chunk(c->req, buf);
		evbuffer_free(buf);
		bev = evhttp_connection_get_bufferevent(c->conn);
		if (evbuffer_get_length(bufferevent_get_output(bev)) >
		    c->limit) {
			fprintf(stderr, "pmon web: a browser fell %u MiB "
			    "behind; dropped\n", WEB_CLIENT_BACKLOG >> 20);
			evhttp_connection_free(c->conn);	/* closecb */
		}
	}
}

/* Keeps a line (it owns it now; NULL: out of memory) and sends it. */
static void
web_keep(struct web *w, char *line)
{
	size_t at;

	if (line == NULL) {
		web_fail(w);
		return;
	}
	web_broadcast(w, line);
	if (w->nring == w->keep) {
		free(w->ring[w->first]);
		w->first = (w->first + 1) % w->keep;
		w->nring--;
		w->dropped++;
	}
	at = (w->first + w->nring) % w->keep;
	w->ring[at] = line;
	w->nring++;
}

static char *
json_line(json_t *o)
{
	char *s;

	if (o == NULL)
		return NULL;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/*
 * Keeps {"type":TYPE,...} made of a JSON object the coordinator sent (a
 * problem or a notice); libpmon hands over only objects, but anything
 * else is left out rather than broken.
 */
static void
web_keep_typed(struct web *w, const char *type, const char *json,
    size_t len)
{
	char *s;

	if (len < 2 || json[0] != '{' || json[len - 1] != '}')
		return;
	if (asprintf(&s, "{\"type\":\"%s\"%s%s", type, len > 2 ? "," : "",
	    json + 1) == -1)
		s = NULL;
	web_keep(w, s);
}

/* --- libpmon callbacks ----------------------------------------------------- */

static void
web_task(const struct pmon_task *t, void *arg)
{
	struct web *w = arg;
	char *line, **v;

	if ((line = json_line(trace_task_json(t))) == NULL) {
		web_fail(w);
		return;
	}
	if (w->ntasks == w->tasks_cap) {
		w->tasks_cap = w->tasks_cap ? 2 * w->tasks_cap : 64;
		if ((v = reallocarray(w->tasks, w->tasks_cap,
		    sizeof(*v))) == NULL) {
			free(line);
			web_fail(w);
			return;
		}
		w->tasks = v;
	}
	w->tasks[w->ntasks++] = line;
	web_broadcast(w, line);
}

static void
web_event(const struct pmon_event *ev, void *arg)
{
	web_keep(arg, json_line(trace_event_json(ev)));
}

static void
web_snapshot(const char *json, size_t len, void *arg)
{
	struct web *w = arg;
	char *s;

	(void)len;
	if (asprintf(&s, "{\"type\":\"snapshot\",\"state\":%s}", json) ==
	    -1) {
		web_fail(w);
		return;
	}
	free(w->snapshot);
	w->snapshot = s;
	web_broadcast(w, s);
}

static void
web_problem(const char *json, size_t len, void *arg)
{
	web_keep_typed(arg, "problem", json, len);
}

static void
web_notice(const char *json, size_t len, void *arg)
{
	web_keep_typed(arg, "notice", json, len);
}

static void
web_bye(const char *reason, void *arg)
{
	json_t *o = json_pack("{s:s, s:s}", "type", "bye", "reason",
	    reason != NULL ? reason : "");

	web_keep(arg, json_line(o));
}

static void
web_pmon_readable(evutil_socket_t fd, short what, void *arg)
{
	struct web *w = arg;

	(void)fd;
	(void)what;
	if (pmon_dispatch(w->p) == 0)
		return;
	if (!pmon_closed(w->p))
		fprintf(stderr, "pmon web: %s\n", pmon_error(w->p));
	fprintf(stderr, "pmon web: the coordinator is gone; still serving "
	    "what arrived\n");
	w->live = 0;
	event_del(w->pmon_ev);
}

/* --- HTTP ------------------------------------------------------------------ */

static void
web_headers(struct evhttp_request *req, const char *type)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Cache-Control", "no-store");
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Content-Security-Policy",
	    "default-src 'self'; style-src 'self' 'unsafe-inline'");
}

static void
web_error(struct evhttp_request *req, int code, const char *why)
{
	struct evbuffer *buf = evbuffer_new();
	json_t *o = json_pack("{s:s}", "error", why);
	char *s = json_line(o);

	web_headers(req, "application/json");
	if (buf != NULL && s != NULL)
		evbuffer_add_printf(buf, "%s\n", s);
	/* The reason goes in the body: the status line keeps its phrase. */
	evhttp_send_reply(req, code, NULL, buf);
	free(s);
	if (buf != NULL)
		evbuffer_free(buf);
}

static const char *
asset_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot == NULL)
		return "application/octet-stream";
	if (strcmp(dot, ".html") == 0)
		return "text/html; charset=utf-8";
	if (strcmp(dot, ".js") == 0)
		return "text/javascript; charset=utf-8";
	if (strcmp(dot, ".css") == 0)
		return "text/css; charset=utf-8";
	return "application/octet-stream";
}

static int
web_asset(struct evhttp_request *req, const char *path)
{
	struct evbuffer *buf;
	size_t i;

	if (strcmp(path, "/") == 0)
		path = "/index.html";
	for (i = 0; i < web_nassets; i++)
		if (strcmp(path + 1, web_assets[i].name) == 0)
			break;
	if (i == web_nassets)
		return -1;
	if ((buf = evbuffer_new()) == NULL) {
		web_error(req, 500, "out of memory");
		return 0;
	}
	evbuffer_add_reference(buf, web_assets[i].data, web_assets[i].len,
	    NULL, NULL);
	web_headers(req, asset_type(path));
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
	return 0;
}

/* Everything kept, as SSE messages: a late browser's start. */
static void
web_history(struct web *w, struct evbuffer *buf)
{
	size_t i;

	evbuffer_add_printf(buf, "data: {\"type\":\"hello\",\"live\":%s,"
	    "\"keep\":%zu,\"dropped\":%llu}\n\n", w->live ? "true" : "false",
	    w->keep, w->dropped);
	for (i = 0; i < w->ntasks; i++)
		evbuffer_add_printf(buf, "data: %s\n\n", w->tasks[i]);
	if (w->snapshot != NULL)
		evbuffer_add_printf(buf, "data: %s\n\n", w->snapshot);
	for (i = 0; i < w->nring; i++)
		evbuffer_add_printf(buf, "data: %s\n\n",
		    w->ring[(w->first + i) % w->keep]);
}

/*
 * The browser went away.  When libevent saw it close, it detached the
 * unfinished reply from the connection and left it to us: ending it
 * frees it.  Otherwise freeing the connection frees the reply too.
 */
static void
web_client_closed(struct evhttp_connection *conn, void *arg)
{
	struct web_client *c = arg;

	(void)conn;
	if (evhttp_request_get_connection(c->req) == NULL)
		evhttp_send_reply_end(c->req);
	TAILQ_REMOVE(&c->w->clients, c, entry);
	free(c);
}

static void
web_events(struct web *w, struct evhttp_request *req,
    const struct web_query *q)
{
	struct web_client *c = NULL;
	struct evbuffer *buf;

	if ((buf = evbuffer_new()) == NULL ||
	    (!q->once && (c = calloc(1, sizeof(*c))) == NULL)) {
		if (buf != NULL)
			evbuffer_free(buf);
		web_error(req, 500, "out of memory");
		return;
	}
	web_history(w, buf);
	web_headers(req, "text/event-stream");
	if (q->once) {
		evbuffer_add_printf(buf, "data: {\"type\":\"end\"}\n\n");
		evhttp_send_reply(req, 200, "OK", buf);
		evbuffer_free(buf);
		return;
	}
	c->w = w;
	c->req = req;
	c->conn = evhttp_request_get_connection(req);
	c->limit = evbuffer_get_length(buf) + WEB_CLIENT_BACKLOG;
	evhttp_send_reply_start(req, 200, "OK");
	evhttp_send_reply_chunk(req, buf);
	evbuffer_free(buf);
	evhttp_connection_set_closecb(c->conn, web_client_closed, c);
	TAILQ_INSERT_TAIL(&w->clients, c, entry);
}

/* Sends a request to the coordinator and returns its JSON reply. */
static void
web_ask(struct web *w, struct evhttp_request *req, const char *text)
{
	struct evbuffer *buf;
	char *reply;
	size_t len;

	if (!w->live) {
		web_error(req, 503, "the coordinator is gone");
		return;
	}
	if (pmon_request(w->p, text, PMON_JSON, &reply, &len) == -1) {
		web_error(req, pmon_closed(w->p) ? 503 : 400,
		    pmon_error(w->p));
		return;
	}
	if ((buf = evbuffer_new()) == NULL) {
		free(reply);
		web_error(req, 500, "out of memory");
		return;
	}
	evbuffer_add(buf, reply, len);
	free(reply);
	web_headers(req, "application/json");
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
}

static void
web_post_request(struct web *w, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	char body[WEB_REQUEST_MAX + 1], text[WEB_REQUEST_MAX];
	const char *why;
	size_t len;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		web_error(req, 405, "POST the request text");
		return;
	}
	len = evbuffer_get_length(in);
	if (len > WEB_REQUEST_MAX) {
		web_error(req, 413, "request too long");
		return;
	}
	evbuffer_copyout(in, body, len);
	if (web_request_text(body, len, text, sizeof(text), &why) == -1) {
		web_error(req, 400, why);
		return;
	}
	web_ask(w, req, text);
}

static void
web_route(struct evhttp_request *req, void *arg)
{
	struct web *w = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = evhttp_uri_get_path(uri), *why;
	struct web_query q;

	if (path == NULL || *path == '\0')
		path = "/";
	if (web_asset(req, path) == 0)
		return;
	if (web_query_parse(evhttp_uri_get_query(uri), &q, &why) == -1) {
		web_error(req, 400, why);
		return;
	}
	if (strcmp(path, "/events") != 0 && strcmp(path, "/snapshot") != 0 &&
	    strcmp(path, "/request") != 0) {
		web_error(req, 404, "no such page");
		return;
	}
	if (!pmon_secret_equal(w->key, q.key)) {
		web_error(req, 403, "wrong or missing key (k=): use the URL "
		    "pmon web printed");
		return;
	}
	if (strcmp(path, "/events") == 0)
		web_events(w, req, &q);
	else if (strcmp(path, "/snapshot") == 0)
		web_ask(w, req, "snapshot");
	else
		web_post_request(w, req);
}

/* --- setup ----------------------------------------------------------------- */

static int
parse_count(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno == 0 && *end == '\0' && s[0] >= '0' && s[0] <= '9' &&
	    *out <= max ? 0 : -1;
}

/* Prints the page's URL, with the port the system chose for port 0. */
static int
web_print_url(struct web *w, struct evhttp_bound_socket *bs)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN];
	unsigned port;

	if (getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&ss, &sl) == -1)
		return -1;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		printf("http://[%s]:%u/?k=%s\n", host, port, w->key);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
		printf("http://%s:%u/?k=%s\n", host, port, w->key);
	}
	return fflush(stdout) == EOF ? -1 : 0;
}

static void
web_on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	event_base_loopbreak(arg);
}

static int
web_listen(struct web *w, const char *addr, unsigned long port)
{
	struct evhttp_bound_socket *bs;

	if ((w->http = evhttp_new(w->base)) == NULL)
		return tool_error("out of memory");
	evhttp_set_allowed_methods(w->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
	evhttp_set_max_body_size(w->http, WEB_REQUEST_MAX);
	evhttp_set_gencb(w->http, web_route, w);
	if ((bs = evhttp_bind_socket_with_handle(w->http, addr,
	    (ev_uint16_t)port)) == NULL)
		return tool_error("cannot listen on %s port %lu: %s", addr,
		    port, strerror(errno));
	if (web_print_url(w, bs) == -1)
		return tool_error("printing the URL: %s", strerror(errno));
	return 0;
}

static int
web_attach(struct web *w)
{
	struct pmon_callbacks cb = { .task = web_task, .event = web_event,
	    .snapshot = web_snapshot, .problem = web_problem,
	    .notice = web_notice, .bye = web_bye };

	if ((w->p = pmon_new()) == NULL)
		return tool_error("out of memory");
	pmon_set_callbacks(w->p, &cb, w);
	if (pmon_connect(w->p, NULL, "pmon-web", PMON_SUBSCRIBE |
	    PMON_SNAPSHOT) == -1)
		return tool_error("%s", pmon_error(w->p));
	w->live = 1;
	if ((w->pmon_ev = event_new(w->base, pmon_fd(w->p),
	    EV_READ | EV_PERSIST, web_pmon_readable, w)) == NULL ||
	    event_add(w->pmon_ev, NULL) == -1)
		return tool_error("out of memory");
	return 0;
}

static void
web_free(struct web *w)
{
	struct web_client *c;
	size_t i;

	while ((c = TAILQ_FIRST(&w->clients)) != NULL) {
		evhttp_connection_set_closecb(c->conn, NULL, NULL);
		TAILQ_REMOVE(&w->clients, c, entry);
		free(c);
	}
	if (w->http != NULL)
		evhttp_free(w->http);
	if (w->pmon_ev != NULL)
		event_free(w->pmon_ev);
	pmon_free(w->p);
	for (i = 0; i < w->ntasks; i++)
		free(w->tasks[i]);
	free(w->tasks);
	for (i = 0; i < w->nring; i++)
		free(w->ring[(w->first + i) % w->keep]);
	free(w->ring);
	free(w->snapshot);
}

static int
web_run(struct web *w, const char *addr, unsigned long port)
{
	struct event *sigint, *sigterm;
	int rv;

	signal(SIGPIPE, SIG_IGN);
	if ((w->base = event_base_new()) == NULL)
		return tool_error("out of memory");
	sigint = evsignal_new(w->base, SIGINT, web_on_signal, w->base);
	sigterm = evsignal_new(w->base, SIGTERM, web_on_signal, w->base);
	if (sigint == NULL || sigterm == NULL || evsignal_add(sigint, NULL) ||
	    evsignal_add(sigterm, NULL))
		rv = tool_error("out of memory");
	else if ((rv = web_attach(w)) == 0 &&
	    (rv = web_listen(w, addr, port)) == 0) {
		event_base_dispatch(w->base);
		if (w->failed)
			rv = tool_error("out of memory");
	}
	web_free(w);
	if (sigint != NULL)
		event_free(sigint);
	if (sigterm != NULL)
		event_free(sigterm);
	event_base_free(w->base);
	return rv;
}

static int
cmd_web(const struct cmd_args *a)
{
	struct web w;
	unsigned long port = WEB_DEFAULT_PORT, keep = WEB_DEFAULT_KEEP;
	const char *addr = "127.0.0.1";

	memset(&w, 0, sizeof(w));
	TAILQ_INIT(&w.clients);
	if (a->seen['p'] && parse_count(a->arg['p'], 65535, &port) == -1)
		return tool_usage_error("bad port: %s", a->arg['p']);
	if (a->seen['k'] && (parse_count(a->arg['k'], WEB_KEEP_MAX,
	    &keep) == -1 || keep == 0))
		return tool_usage_error("bad --keep (1 to %d): %s",
		    WEB_KEEP_MAX, a->arg['k']);
	if (a->seen['b'])
		addr = a->arg['b'];
	w.keep = keep;
	if ((w.ring = calloc(keep, sizeof(*w.ring))) == NULL)
		return tool_error("out of memory");
	if (pmon_secret_make(w.key) == -1) {
		free(w.ring);
		return tool_error("no random key: %s", strerror(errno));
	}
	return web_run(&w, addr, port);
}
