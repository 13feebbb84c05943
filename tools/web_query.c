/*
 * What pmon web reads from the browser beyond what libevent parses: the
 * values of a query string and the text of a POSTed request.  Both come
 * from any local process that reaches the port, so both are checked
 * before use.
 */
#include <sys/queue.h>
#include <sys/random.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "web.h"

/* A new key into out (WEB_KEY_LEN + 1 bytes); -1 without randomness. */
int
web_key_make(char *out)
{
	uint8_t raw[WEB_KEY_LEN / 2];
	size_t i;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -1;
	for (i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* Compares two keys in a time that does not depend on where they differ. */
int
web_key_equal(const char *a, const char *b)
{
	unsigned diff = 0;
	size_t i;

	for (i = 0; i < WEB_KEY_LEN; i++)
		diff |= (unsigned)(a[i] ^ b[i]);
	return diff == 0;
}

static int
query_key(const char *v, struct web_query *q, const char **why)
{
	if (strlen(v) != WEB_KEY_LEN ||
	    strspn(v, "0123456789abcdef") != WEB_KEY_LEN) {
		*why = "the key (k) is not 64 hex digits";
		return -1;
	}
	memcpy(q->key, v, WEB_KEY_LEN + 1);
	return 0;
}

static int
query_once(const char *v, struct web_query *q, const char **why)
{
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
		*why = "once must be 0 or 1";
		return -1;
	}
	q->once = v[0] == '1';
	return 0;
}

/*
 * Fills q from query (what follows the '?', or NULL).  Names the page
 * does not use (view, test) are left to the page.  Returns 0, or -1 with
 * the reason in *why.
 */
int
web_query_parse(const char *query, struct web_query *q, const char **why)
{
	struct evkeyvalq kv;
	struct evkeyval *e;
	int rv = 0;

	memset(q, 0, sizeof(*q));
	if (query == NULL)
		return 0;
	TAILQ_INIT(&kv);
	if (evhttp_parse_query_str(query, &kv) == -1) {
		*why = "malformed query string";
		return -1;
	}
	TAILQ_FOREACH(e, &kv, next) {
		if (strcmp(e->key, "k") == 0)
			rv = query_key(e->value, q, why);
		else if (strcmp(e->key, "once") == 0)
			rv = query_once(e->value, q, why);
		if (rv == -1)
			break;
	}
	evhttp_clear_headers(&kv);
	return rv;
}

/*
 * Copies the request text of a POST body into out (size bytes) without
 * its trailing white space.  A request is one line of printable ASCII
 * (doc/requests.md), shorter than WEB_REQUEST_MAX.  Returns 0, or -1
 * with the reason in *why.
 */
int
web_request_text(const char *body, size_t len, char *out, size_t size,
    const char **why)
{
	size_t i;

	while (len > 0 && (body[len - 1] == '\n' || body[len - 1] == '\r' ||
	    body[len - 1] == ' '))
		len--;
	if (len == 0) {
		*why = "empty request";
		return -1;
	}
	if (len >= WEB_REQUEST_MAX || len >= size) {
		*why = "request too long";
		return -1;
	}
	for (i = 0; i < len; i++)
		if (body[i] < 0x20 || body[i] > 0x7e) {
			*why = "request is not one line of printable ASCII";
			return -1;
		}
	memcpy(out, body, len);
	out[len] = '\0';
	return 0;
}
