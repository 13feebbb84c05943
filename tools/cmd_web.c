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
#include <time.h>

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
	{ "lossy", no_argument, NULL, 'l' },
	{ NULL, 0, NULL, 0 }
};

const struct cmd_entry cmd_web_entry = {
	"web", "[--port N] [--bind ADDR] [--keep N] [--lossy]",
	"serve live views of the application to a browser (doc/web.md)",
	"  -p, --port N    TCP port (default 7680; 0: any free port)\n"
	"  -b, --bind ADDR address to listen on (default 127.0.0.1)\n"
	"  -k, --keep N    events kept for browsers that come later\n"
	"                  (default 200000; older ones are dropped, and\n"
	"                  the page starts from a snapshot after them)\n"
	"  -l, --lossy     subscribe lossy: never hold the application\n"
	"                  back, lose events when pmon web lags (by\n"
	"                  default it is lossless while it keeps reading)\n"
	"\nPrints the page's URL, which carries a key: the data and the\n"
	"control panel answer only requests with that key.  Runs until\n"
	"SIGINT or SIGTERM, and keeps serving what it has after the\n"
	"coordinator stops.\n",
	"+hp:b:k:l", web_longopts, 0, 0, cmd_web
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

/*
 * What the ring holds, in stream order: events, problems and notices,
 * and the snapshots a page can start from (doc/web.md, "Losses").
 */
enum web_kind {
	WEB_OTHER,		/* a problem, a notice, bye */
	WEB_EVENT,
	WEB_LOST,		/* a "lost" notice */
	WEB_SNAPSHOT		/* the state at its point of the stream */
};

struct web_entry {
	char		*line;
	size_t		 weight;	/* in event lines */
	enum web_kind	 kind;
};

/* Losses whose notices left the ring: the hello still counts them. */
struct web_gone {
	unsigned long long	 losses, events;
	long long		 last_ms;	/* when the last was told */
};

struct web {
	struct event_base	*base;
	struct evhttp		*http;
	struct pmon		*p;
	struct event		*pmon_ev;
	char			 key[WEB_KEY_LEN + 1];
	int			 live;		/* attached to the coordinator */
	int			 failed;	/* out of memory */

	char			**tasks;	/* task lines, all of them */
	size_t			 ntasks, tasks_cap;

	struct web_entry	*ring;		/* kept lines, oldest first */
	size_t			 cap, first, nring;
	size_t			 keep;		/* the ring's budget (weight) */
	size_t			 weight;	/* what it holds now */
	size_t			 nsnap;		/* snapshots in it */
	size_t			 since_snap;	/* events after the last one */
	int			 attached;	/* the attach snapshot came */
	int			 lost_pending;	/* a snapshot follows a loss */
	int			 checkpoints;	/* the coordinator gives them */
	int			 lossless;	/* subscribed so, not degraded */
	long long		 self;		/* our tool id (0: not known) */
	int			 want_checkpoint;
	unsigned long long	 dropped;	/* events gone from the ring */
	unsigned long long	 gap;		/* of them, after its first
						   snapshot (web_trim) */
	struct web_gone		 gone;

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

/* One SSE message: a million of them are a late browser's start. */
static void
web_add_message(struct evbuffer *buf, const char *line)
{
	evbuffer_add(buf, "data: ", 6);
	evbuffer_add(buf, line, strlen(line));
	evbuffer_add(buf, "\n\n", 2);
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
		web_add_message(buf, line);
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

static struct web_entry *
web_entry_at(struct web *w, size_t i)
{
	return &w->ring[(w->first + i) % w->cap];
}

/* Makes room for one more entry: the ring doubles, oldest first again. */
static int
web_ring_grow(struct web *w)
{
	struct web_entry *v;
	size_t cap = w->cap ? 2 * w->cap : 1024, i;

	if ((v = calloc(cap, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < w->nring; i++)
		v[i] = *web_entry_at(w, i);
	free(w->ring);
	w->ring = v;
	w->cap = cap;
	w->first = 0;
	return 0;
}

static long long
web_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A lost notice leaves the ring: its loss still counts in the hello's
 * totals, so that a late page does not call the run complete.
 */
static void
web_lost_gone(struct web *w, const char *line)
{
	json_t *o = json_loads(line, 0, NULL);
	json_int_t ms;

	w->gone.losses++;
	w->gone.events += (unsigned long long)json_integer_value(
	    json_object_get(o, "events"));
	ms = json_integer_value(json_object_get(o, "received_ms"));
	if (ms > w->gone.last_ms)
		w->gone.last_ms = ms;
	json_decref(o);
}

/* Frees an entry that leaves the ring, and counts what it was. */
static void
web_forget(struct web *w, struct web_entry *e)
{
	w->weight -= e->weight;
	if (e->kind == WEB_EVENT)
		w->dropped++;
	else if (e->kind == WEB_SNAPSHOT)
		w->nsnap--;
	else if (e->kind == WEB_LOST)
		web_lost_gone(w, e->line);
	free(e->line);
	e->line = NULL;
}

static void
web_pop(struct web *w)
{
	web_forget(w, web_entry_at(w, 0));
	w->first = (w->first + 1) % w->cap;
	w->nring--;
}

/* Drops the entry after the first snapshot, which stays first. */
static void
web_pop_second(struct web *w)
{
	struct web_entry base = *web_entry_at(w, 0);

	w->first = (w->first + 1) % w->cap;
	w->nring--;
	if (web_entry_at(w, 0)->kind == WEB_EVENT)
		w->gap++;
	web_forget(w, web_entry_at(w, 0));
	*web_entry_at(w, 0) = base;
}

/*
 * Keeps the ring within --keep.  It starts with a snapshot, so that a
 * late page starts from a true state: the oldest snapshot goes with the
 * entries up to the next one.  With one snapshot only (a checkpoint is
 * on its way: web_checkpoint) the entries after it may grow to twice
 * --keep; beyond that they go, and the hello says how many events are
 * missing there (its "gap").
 */
static void
web_trim(struct web *w)
{
	while (w->weight > w->keep && w->nring > 1) {
		if (web_entry_at(w, 0)->kind != WEB_SNAPSHOT)
			web_pop(w);	/* what came before the attach one */
		else if (w->nsnap > 1) {
			do
				web_pop(w);
			while (web_entry_at(w, 0)->kind != WEB_SNAPSHOT);
			w->gap = 0;
		} else if (w->weight - web_entry_at(w, 0)->weight >
		    2 * w->keep)
			web_pop_second(w);
		else
			break;
	}
}

/* Keeps a line (it owns it now; NULL: out of memory) and sends it. */
static void
web_keep(struct web *w, char *line, enum web_kind kind)
{
	struct web_entry *e;

	if (line == NULL || (w->nring == w->cap && web_ring_grow(w) == -1)) {
		free(line);
		web_fail(w);
		return;
	}
	web_broadcast(w, line);
	e = &w->ring[(w->first + w->nring) % w->cap];
	e->line = line;
	e->kind = kind;
	/* A snapshot weighs what as many event lines would. */
	e->weight = kind == WEB_SNAPSHOT ? 1 + strlen(line) / 256 : 1;
	w->nring++;
	w->weight += e->weight;
	if (kind == WEB_SNAPSHOT) {
		w->nsnap++;
		w->since_snap = 0;
		w->want_checkpoint = 0;
	} else if (kind == WEB_EVENT &&
	    ++w->since_snap >= w->keep / 4 + 1 && w->checkpoints)
		w->want_checkpoint = 1;
	web_trim(w);
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

/* {"type":"snapshot","why":WHY,"state":JSON}: a state to start from. */
static void
web_keep_snapshot(struct web *w, const char *why, const char *json)
{
	char *s;

	if (asprintf(&s, "{\"type\":\"snapshot\",\"why\":\"%s\","
	    "\"state\":%s}", why, json) == -1)
		s = NULL;
	web_keep(w, s, WEB_SNAPSHOT);
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
	web_keep(w, s, WEB_OTHER);
}

/*
 * The coordinator dropped events for us (doc/control.md, "Slow tools"):
 * the notice is kept with the time it came, and the snapshot that
 * follows is the page's new start (web_snapshot).
 */
static int
web_keep_lost(struct web *w, const char *json, size_t len)
{
	json_t *o = json_loadb(json, len, 0, NULL), *line;
	const char *what = json_string_value(json_object_get(o, "notice"));

	if (!json_is_object(o) || what == NULL || strcmp(what, "lost") != 0) {
		json_decref(o);
		return -1;
	}
	fprintf(stderr, "pmon web: the coordinator dropped %lld events "
	    "for us (its queue was full); starting over from its snapshot\n",
	    (long long)json_integer_value(json_object_get(o, "events")));
	if ((line = json_pack("{s:s}", "type", "notice")) == NULL ||
	    json_object_update(line, o) == -1 ||
	    json_object_set_new(line, "received_ms",
	    json_integer(web_now_ms())) == -1) {
		json_decref(line);
		line = NULL;
	}
	json_decref(o);
	w->lost_pending = 1;
	web_keep(w, json_line(line), WEB_LOST);
	return 0;
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

/* The event's line of pmon trace --json, without its newline. */
static char *
event_line(const struct pmon_event *ev)
{
	char *s, *end, *fit;

	if ((s = malloc(trace_fmt_event_max(ev))) == NULL)
		return NULL;
	end = trace_fmt_event_json(s, ev, TRACE_JSON_BRIEF);
	end[-1] = '\0';
	/* Kept for long: only what it holds. */
	if ((fit = realloc(s, (size_t)(end - s))) == NULL)
		return s;
	return fit;
}

static void
web_event(const struct pmon_event *ev, void *arg)
{
	web_keep(arg, event_line(ev), WEB_EVENT);
}

/*
 * The attach snapshot, the one that follows a lost notice, or a
 * breakpoint's: each is the state at this point of the stream, and the
 * page starts over from it there.
 */
static void
web_snapshot(const char *json, size_t len, void *arg)
{
	struct web *w = arg;
	const char *why = "resync";

	(void)len;
	if (!w->attached)
		why = "attach";
	else if (w->lost_pending)
		why = "lost";
	w->attached = 1;
	w->lost_pending = 0;
	web_keep_snapshot(w, why, json);
}

static void
web_problem(const char *json, size_t len, void *arg)
{
	web_keep_typed(arg, "problem", json, len);
}

/*
 * Our own attach notice is the first the coordinator sends us (before
 * the attach snapshot): it names our tool id, so that a "degraded"
 * notice with that id says we are lossy from now on.
 */
static void
web_notice_self(struct web *w, const char *json, size_t len)
{
	json_t *o = json_loadb(json, len, 0, NULL);
	const char *what = json_string_value(json_object_get(o, "notice"));
	long long tool = json_integer_value(json_object_get(o, "tool"));

	if (what != NULL && strcmp(what, "attached") == 0 && w->self == 0 &&
	    !w->attached)
		w->self = tool;
	else if (what != NULL && strcmp(what, "degraded") == 0 &&
	    tool == w->self && w->lossless) {
		fprintf(stderr, "pmon web: the coordinator made us lossy (we "
		    "read nothing for its bound); events may be lost\n");
		w->lossless = 0;
	}
	json_decref(o);
}

static void
web_notice(const char *json, size_t len, void *arg)
{
	if (strstr(json, "\"attached\"") != NULL ||
	    strstr(json, "\"degraded\"") != NULL)
		web_notice_self(arg, json, len);
	if (strstr(json, "\"lost\"") == NULL ||
	    web_keep_lost(arg, json, len) == -1)
		web_keep_typed(arg, "notice", json, len);
}

static void
web_bye(const char *reason, void *arg)
{
	json_t *o = json_pack("{s:s, s:s}", "type", "bye", "reason",
	    reason != NULL ? reason : "");

	web_keep(arg, json_line(o), WEB_OTHER);
}

/* pmon_request in JSON; on failure *why says why. */
static int
web_request(struct web *w, const char *text, char **reply, size_t *len,
    const char **why)
{
	int rv;

	rv = pmon_request(w->p, text, PMON_JSON, reply, len);
	*why = pmon_error(w->p);
	/* What came after the reply waits: its turn comes next. */
	if (pmon_pending(w->p) && w->pmon_ev != NULL)
		event_active(w->pmon_ev, EV_READ, 0);
	return rv;
}

/*
 * A quarter of --keep events came since the last snapshot: ask for one
 * (it is the state at this point of the stream, like the attach
 * snapshot), so that the ring can drop its oldest part and still start
 * from a true state.  Events that come before the reply are kept first.
 */
static void
web_checkpoint(struct web *w)
{
	const char *why;
	char *reply;
	size_t len;

	if (!w->want_checkpoint || !w->live)
		return;
	w->want_checkpoint = 0;
	if (web_request(w, "snapshot", &reply, &len, &why) == -1) {
		if (pmon_closed(w->p))
			return;		/* web_pmon_readable says so */
		fprintf(stderr, "pmon web: no snapshot to keep (%s); older "
		    "events will leave a gap\n", why);
		w->checkpoints = 0;
		return;
	}
	web_keep_snapshot(w, "checkpoint", reply);
	free(reply);
}

static void
web_pmon_readable(evutil_socket_t fd, short what, void *arg)
{
	struct web *w = arg;

	(void)fd;
	(void)what;
	while (pmon_dispatch(w->p) == 0) {
		web_checkpoint(w);
		if (pmon_closed(w->p))
			break;
		/* What came after a checkpoint's reply, in its place. */
		if (!pmon_pending(w->p))
			return;
	}
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

/*
 * Everything kept, as SSE messages: a late browser's start.  The hello
 * counts what is no longer kept (doc/web.md, "The stream").
 */
static void
web_history(struct web *w, struct evbuffer *buf)
{
	size_t i;

	evbuffer_add_printf(buf, "data: {\"type\":\"hello\",\"live\":%s,"
	    "\"lossless\":%s,\"tool\":%lld,"
	    "\"keep\":%zu,\"dropped\":%llu,\"gap\":%llu,"
	    "\"losses_before\":%llu,\"lost_before\":%llu,"
	    "\"last_loss_ms\":%lld,\"kept\":%zu}\n\n",
	    w->live ? "true" : "false",
	    w->lossless ? "true" : "false", w->self,
	    w->keep, w->dropped, w->gap, w->gone.losses, w->gone.events,
	    w->gone.last_ms, w->nring);
	for (i = 0; i < w->ntasks; i++)
		web_add_message(buf, w->tasks[i]);
	for (i = 0; i < w->nring; i++)
		web_add_message(buf, web_entry_at(w, i)->line);
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
	const char *why;
	char *reply;
	size_t len;

	if (!w->live) {
		web_error(req, 503, "the coordinator is gone");
		return;
	}
	if (web_request(w, text, &reply, &len, &why) == -1) {
		web_error(req, pmon_closed(w->p) ? 503 : 400, why);
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
	if (!web_key_equal(w->key, q.key)) {
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
	    PMON_SNAPSHOT | (w->lossless ? PMON_LOSSLESS : 0)) == -1)
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
		free(web_entry_at(w, i)->line);
	free(w->ring);
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
	w.checkpoints = 1;
	w.lossless = !a->seen['l'];
	if (web_key_make(w.key) == -1)
		return tool_error("no random key: %s", strerror(errno));
	return web_run(&w, addr, port);
}
