/*
 * Requests from tools (REQUEST frames): the information services on the
 * state model.  A request is one line of words:
 *
 *	snapshot | ps | hosts | groups | problems | queues [TASK] |
 *	frontier TASK:SEQ
 *
 * TASK is a tid in decimal, 0x hex or PVM's t-hex (t40001).  The reply is
 * text, or JSON with REQUEST_JSON; a malformed request gets an error
 * naming the word and what is wrong with it.  doc/requests.md has the
 * grammar.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "coord.h"
#include "log.h"

#define REQUEST_WORDS	4

struct words {
	char	*v[REQUEST_WORDS];
	size_t	 at[REQUEST_WORDS];	/* 1-based column of each */
	size_t	 n;
};

/* Splits text (modified) at blanks; -1 with too many words. */
static int
split(char *text, struct words *w)
{
	char *p = text;

	w->n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (*p == '\0')
			return 0;
		if (w->n == REQUEST_WORDS)
			return -1;
		w->at[w->n] = (size_t)(p - text) + 1;
		w->v[w->n++] = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
	}
}

/* A tid: decimal, 0x hex or t-hex.  end gets what follows it. */
static int
parse_tid(const char *s, int32_t *tid, char **end)
{
	unsigned long v;
	int base = 10;

	if (s[0] == 't') {
		s++;
		base = 16;
	} else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16;
	if (*s < '0' || *s > '9') {
		if (base != 16 || !((*s >= 'a' && *s <= 'f') ||
		    (*s >= 'A' && *s <= 'F')))
			return -1;
	}
	errno = 0;
	v = strtoul(s, end, base);
	if (errno != 0 || *end == s || v == 0 || v > INT32_MAX)
		return -1;
	*tid = (int32_t)v;
	return 0;
}

static int
parse_event(const char *s, int32_t *tid, uint64_t *seq)
{
	unsigned long long v;
	char *end;

	if (parse_tid(s, tid, &end) == -1 || *end != ':')
		return -1;
	s = end + 1;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0)
		return -1;
	*seq = v;
	return 0;
}

static const struct {
	const char	*name;
	unsigned	 parts;
} info_requests[] = {
	{ "snapshot",	STATE_ALL },
	{ "ps",		STATE_TASKS },
	{ "hosts",	STATE_HOSTS },
	{ "groups",	STATE_GROUPS },
	{ "problems",	STATE_PROBLEMS },
	{ "queues",	STATE_QUEUES },
};

/*
 * Runs one request; *body (malloc'ed, not NUL-counted in *len) is the
 * reply or the error.  Returns REPLY_OK or REPLY_ERROR.
 */
int
coord_request_run(struct coord *c, const struct coord_request *req,
    char **body, size_t *len)
{
	char text[sizeof(req->text)], err[256];
	struct words w;
	int32_t tid = 0;
	uint64_t seq = 0;
	unsigned parts = 0;
	const char *why;
	char *end;
	size_t i, maxw = 1;
	FILE *f;
	int json = (req->flags & REQUEST_JSON) != 0, rv = 0;

	*body = NULL;
	*len = 0;
	memcpy(text, req->text, sizeof(text));
	err[0] = '\0';
	if (split(text, &w) == -1)
		snprintf(err, sizeof(err), "column %zu: too many words",
		    w.at[REQUEST_WORDS - 1]);
	else if (w.n == 0)
		snprintf(err, sizeof(err), "empty request");
	for (i = 0; err[0] == '\0' &&
	    i < sizeof(info_requests) / sizeof(info_requests[0]); i++)
		if (strcmp(w.v[0], info_requests[i].name) == 0)
			parts = info_requests[i].parts;
	if (err[0] == '\0' && parts == 0 && strcmp(w.v[0], "frontier") != 0)
		snprintf(err, sizeof(err), "column 1: unknown request \"%.32s\"",
		    w.v[0]);
	if (err[0] == '\0' && parts == STATE_QUEUES && w.n == 2) {
		maxw = 2;
		if (parse_tid(w.v[1], &tid, &end) == -1 || *end != '\0')
			snprintf(err, sizeof(err), "column %zu: \"%.32s\" is "
			    "not a task id", w.at[1], w.v[1]);
	} else if (err[0] == '\0' && parts == 0) {
		maxw = 2;
		if (w.n < 2)
			snprintf(err, sizeof(err), "column %zu: frontier needs "
			    "an event, TASK:SEQ", strlen(req->text) + 1);
		else if (parse_event(w.v[1], &tid, &seq) == -1)
			snprintf(err, sizeof(err), "column %zu: \"%.32s\" is "
			    "not an event (TASK:SEQ)", w.at[1], w.v[1]);
	}
	if (err[0] == '\0' && w.n > maxw)
		snprintf(err, sizeof(err), "column %zu: unexpected \"%.32s\"",
		    w.at[maxw], w.v[maxw]);
	if (err[0] != '\0') {
		if ((*body = strdup(err)) == NULL)
			fatal("%s", __func__);
		*len = strlen(err);
		return REPLY_ERROR;
	}

	if ((f = open_memstream(body, len)) == NULL)
		fatal("%s", __func__);
	if (parts & STATE_PROBLEMS)
		state_check(c->state);
	if (parts == 0)
		rv = state_frontier(c->state, tid, seq, f, &why);
	else if (json)
		rv = state_write(c->state, parts, tid, f);
	else
		rv = state_write_text(c->state, parts, tid, f);
	if (fclose(f) != 0)
		fatal("%s", __func__);
	if (rv == -1 && parts == 0) {
		free(*body);
		if ((*body = strdup(why)) == NULL)
			fatal("%s", __func__);
		*len = strlen(why);
		return REPLY_ERROR;
	}
	if (rv == -1)
		fatalx("%s: state_write failed", __func__);
	return REPLY_OK;
}

/* The state at this point of the stream, for a tool that subscribes. */
void
coord_snapshot_send(struct coord *c, struct coord_tool *t)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&body, &len)) == NULL ||
	    state_write(c->state, STATE_ALL, 0, f) == -1 || fclose(f) != 0)
		fatal("%s", __func__);
	coord_frame_reply(bufferevent_get_output(t->bev), 0, REPLY_OK, body,
	    len);
	free(body);
}
