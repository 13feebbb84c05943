/*
 * Reading the state model's own JSON back (doc/state.md).
 *
 * state_load sets a model from a snapshot: a replay resynchronises there
 * after a loss in its recording (coord_replay.c).  A recording is a
 * file, so the snapshot is untrusted: every field is checked for its
 * type and range, and against the others (a task's position and its
 * last seq, the waiters a barrier lists and the tasks blocked in it),
 * while a new model is built with state_restore_* (state_internal.h);
 * only a snapshot that passes replaces the old model.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "log.h"
#include "record.h"
#include "state.h"
#include "state_internal.h"
#include "xmalloc.h"

/* The longest host or program name a snapshot may hold, in bytes. */
#define LOAD_STR_MAX	1024
/* PVM numbers hosts in 12 bits of a tid. */
#define LOAD_HOSTS_MAX	4096

/* What the checks across parts need of a task of the snapshot. */
struct ltask {
	int32_t		 tid;
	int		 end;
	uint64_t	 last_seq;
	uint8_t		 call;		/* blocked in, 0: not */
	char		 group[RECORD_GROUP_MAX + 1];
	int		 listed;	/* by its barrier's group */
	size_t		 member;	/* of group number member - 1 */
};

struct load {
	struct state	*s;		/* the model being built */
	char		*err;
	size_t		 errsize;
	char		 at[64];	/* where: "tasks[3]" */
	struct ltask	*lt;		/* sorted by tid once all are read */
	size_t		 nlt;
};

/* Says what is wrong, and where; returns -1. */
static int
bad(struct load *ld, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(ld->err, ld->errsize, "%s%s", ld->at,
	    ld->at[0] != '\0' ? ": " : "");
	if (n < 0 || (size_t)n >= ld->errsize)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ld->err + n, ld->errsize - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static void
at(struct load *ld, const char *part, size_t i)
{
	snprintf(ld->at, sizeof(ld->at), "%s[%zu]", part, i);
}

static int
cmp_tid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/* --- fields ---------------------------------------------------------- */

/* obj's key, an integer from min to max. */
static int
get_int(struct load *ld, const json_t *obj, const char *key, long long min,
    long long max, long long *out)
{
	const json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return bad(ld, "no \"%s\"", key);
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return bad(ld, "\"%s\" is not an integer from %lld to %lld",
		    key, min, max);
	*out = json_integer_value(v);
	return 0;
}

static int
get_i32(struct load *ld, const json_t *obj, const char *key, int32_t *out)
{
	long long v;

	if (get_int(ld, obj, key, INT32_MIN, INT32_MAX, &v) == -1)
		return -1;
	*out = (int32_t)v;
	return 0;
}

static int
get_tid(struct load *ld, const json_t *obj, const char *key, int32_t *out)
{
	long long v;

	if (get_int(ld, obj, key, 1, INT32_MAX, &v) == -1)
		return -1;
	*out = (int32_t)v;
	return 0;
}

static int
get_u64(struct load *ld, const json_t *obj, const char *key, uint64_t *out)
{
	long long v;

	if (get_int(ld, obj, key, 0, INT64_MAX, &v) == -1)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int
get_str(struct load *ld, const json_t *obj, const char *key, char *out,
    size_t size)
{
	const json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return bad(ld, "no \"%s\"", key);
	if (!json_is_string(v) || json_str_bytes(json_string_value(v), out,
	    size) == -1)
		return bad(ld, "\"%s\" is not a string of at most %zu bytes",
		    key, size - 1);
	return 0;
}

static const json_t *
get_obj(struct load *ld, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_object(v))
		bad(ld, "\"%s\" is %s", key, v == NULL ? "missing" :
		    "not an object");
	return json_is_object(v) ? v : NULL;
}

static const json_t *
get_array(struct load *ld, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_array(v))
		bad(ld, "\"%s\" is %s", key, v == NULL ? "missing" :
		    "not an array");
	return json_is_array(v) ? v : NULL;
}

/* An event "TID:SEQ" (decimal, TID and SEQ above 0). */
static int
parse_id(const char *s, int32_t *tid, uint64_t *seq)
{
	unsigned long long q;
	long t;
	char *end;

	if (s == NULL || *s < '1' || *s > '9')
		return -1;
	errno = 0;
	t = strtol(s, &end, 10);
	if (errno != 0 || t > INT32_MAX || *end != ':' || end[1] < '1' ||
	    end[1] > '9')
		return -1;
	q = strtoull(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || q > INT64_MAX)
		return -1;
	*tid = (int32_t)t;
	*seq = q;
	return 0;
}

static int
get_id(struct load *ld, const json_t *obj, const char *key, int32_t *tid,
    uint64_t *seq)
{
	if (parse_id(json_string_value(json_object_get(obj, key)), tid,
	    seq) == -1)
		return bad(ld, "\"%s\" is not an event \"TID:SEQ\"", key);
	return 0;
}

/*
 * obj's key, an object of n counts: "sent" {"msgs","bytes"}, "time_ns"
 * {"computing","pvm","blocked"}.
 */
static int
get_counts(struct load *ld, const json_t *obj, const char *key,
    const char *const *keys, uint64_t *const *out, size_t n)
{
	const json_t *o;
	char saved[sizeof(ld->at)];
	size_t i;
	int rv = 0;

	if ((o = get_obj(ld, obj, key)) == NULL)
		return -1;
	memcpy(saved, ld->at, sizeof(saved));
	snprintf(ld->at, sizeof(ld->at), "%.40s.%.16s", saved, key);
	for (i = 0; i < n && rv == 0; i++)
		rv = get_u64(ld, o, keys[i], out[i]);
	memcpy(ld->at, saved, sizeof(saved));
	return rv;
}

/* --- tasks ----------------------------------------------------------- */

static struct ltask *
ltask_find(const struct load *ld, int32_t tid)
{
	return bsearch(&tid, ld->lt, ld->nlt, sizeof(*ld->lt), cmp_tid);
}

/* The tids of a part's elements, sorted; one listed twice is an error. */
static int
tids_of(struct load *ld, const json_t *a, const char *part, int32_t *v)
{
	size_t i, n = json_array_size(a);

	for (i = 0; i < n; i++) {
		at(ld, part, i);
		if (!json_is_object(json_array_get(a, i)))
			return bad(ld, "not an object");
		if (get_tid(ld, json_array_get(a, i), "tid", &v[i]) == -1)
			return -1;
	}
	ld->at[0] = '\0';
	qsort(v, n, sizeof(*v), cmp_tid);
	for (i = 1; i < n; i++)
		if (v[i] == v[i - 1])
			return bad(ld, "%s: %" PRId32 " is listed twice", part,
			    v[i]);
	return 0;
}

/*
 * Every tid the model will hold: the tasks, and the receivers of queued
 * messages (a message to a task that never announced itself), sorted
 * and distinct.
 */
static int
collect_tids(struct load *ld, const json_t *tasks, const json_t *queues,
    int32_t **out, size_t *n)
{
	size_t i, j, nt = json_array_size(tasks), nq = json_array_size(queues);
	int32_t *v;

	*out = v = xcalloc(nt + nq + 1, sizeof(*v));
	if (tids_of(ld, tasks, "tasks", v) == -1 ||
	    tids_of(ld, queues, "queues", v + nt) == -1)
		return -1;
	qsort(v, nt + nq, sizeof(*v), cmp_tid);
	for (i = j = 0; i < nt + nq; i++)
		if (j == 0 || v[j - 1] != v[i])
			v[j++] = v[i];
	*n = j;
	return 0;
}

static int
is_blocking(int call)
{
	return call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_precv || call == PMON_CALL_barrier ||
	    call == PMON_CALL_reduce || call == PMON_CALL_gather ||
	    call == PMON_CALL_scatter;
}

/* "blocked": the call, its filter or group, and the event it began at. */
static int
load_blocked(struct load *ld, const json_t *b, struct restore_task *rt)
{
	char in[32];
	int32_t tid;
	int call;

	if (!json_is_object(b))
		return bad(ld, "\"blocked\" is not an object");
	if (get_str(ld, b, "in", in, sizeof(in)) == -1)
		return -1;
	if (!is_blocking(call = record_call_lookup(in)))
		return bad(ld, "blocked in %s, which does not block", in);
	rt->call = (uint8_t)call;
	rt->peer = rt->tag = rt->ctx = rt->inst = -1;
	if (call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_precv) {
		if (get_i32(ld, b, "from", &rt->peer) == -1 ||
		    get_i32(ld, b, "tag", &rt->tag) == -1 ||
		    get_i32(ld, b, "ctx", &rt->ctx) == -1)
			return -1;
	} else if (get_str(ld, b, "group", rt->group,
	    sizeof(rt->group)) == -1 || get_i32(ld, b, call ==
	    PMON_CALL_barrier ? "count" : "root", &rt->inst) == -1)
		return -1;
	if (get_id(ld, b, "since", &tid, &rt->since) == -1)
		return -1;
	if (tid != rt->tid || rt->since > rt->last_seq)
		return bad(ld, "blocked since an event that is not one of "
		    "its own so far");
	return 0;
}

static int
load_state(struct load *ld, const json_t *o, struct restore_task *rt)
{
	static const char *const states[] = { "running", "blocked", "stopped",
	    "exited", "killed", "unmonitored", "ended" };
	const json_t *b = json_object_get(o, "blocked");
	char st[16];
	size_t i, nstates = sizeof(states) / sizeof(states[0]);

	if (get_str(ld, o, "state", st, sizeof(st)) == -1)
		return -1;
	for (i = 0; i < nstates && strcmp(st, states[i]) != 0; i++)
		;
	if (i == nstates)
		return bad(ld, "unknown state \"%s\"", st);
	rt->end = i == 3 || i == 6 ? RESTORE_EXITED : i == 4 ? RESTORE_KILLED :
	    RESTORE_LIVE;
	rt->unmonitored = i >= 5;
	if (rt->unmonitored && (b != NULL || rt->last_seq > 0 ||
	    json_object_get(o, "exit_status") != NULL))
		return bad(ld, "%s, with events of its own", st);
	if ((b != NULL && (i == 0 || i > 2)) || (b == NULL && i == 1))
		return bad(ld, "%s, %s \"blocked\"", st, b != NULL ? "with" :
		    "without");
	if (b != NULL && load_blocked(ld, b, rt) == -1)
		return -1;
	if (json_object_get(o, "killed_by") != NULL && (i != 4 ||
	    get_id(ld, o, "killed_by", &rt->kill_tid, &rt->kill_seq) == -1))
		return i != 4 ? bad(ld, "%s, killed by a task", st) : -1;
	if (json_object_get(o, "exit_status") == NULL)
		return 0;
	if (rt->end != RESTORE_EXITED)
		return bad(ld, "%s, with an exit status", st);
	rt->has_exit_rc = 1;
	return get_i32(ld, o, "exit_status", &rt->exit_rc);
}

static int
load_kids(struct load *ld, const json_t *o, int32_t **kids, size_t *n)
{
	const json_t *a;
	size_t i;

	if ((a = get_array(ld, o, "children")) == NULL)
		return -1;
	*n = json_array_size(a);
	*kids = xcalloc(*n + 1, sizeof(**kids));
	for (i = 0; i < *n; i++) {
		const json_t *k = json_array_get(a, i);

		if (!json_is_integer(k) || json_integer_value(k) <= 0 ||
		    json_integer_value(k) > INT32_MAX)
			return bad(ld, "children[%zu] is not a tid", i);
		(*kids)[i] = (int32_t)json_integer_value(k);
	}
	return 0;
}

/* "handlers", if there: a live task's message handlers (pvm_addmhf). */
static int
load_handlers(struct load *ld, const json_t *o, struct handler **hs,
    size_t *n)
{
	const json_t *a = json_object_get(o, "handlers"), *h;
	size_t i;

	*n = 0;
	if (a == NULL)
		return 0;
	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > STATE_HANDLERS_MAX)
		return bad(ld, "\"handlers\" is not an array of 1 to %d",
		    STATE_HANDLERS_MAX);
	*hs = xcalloc(json_array_size(a), sizeof(**hs));
	json_array_foreach(a, i, h) {
		if (!json_is_object(h))
			return bad(ld, "handlers[%zu] is not an object", i);
		if (get_i32(ld, h, "id", &(*hs)[i].mhid) == -1 ||
		    get_i32(ld, h, "from", &(*hs)[i].src) == -1 ||
		    get_i32(ld, h, "tag", &(*hs)[i].tag) == -1 ||
		    get_i32(ld, h, "ctx", &(*hs)[i].ctx) == -1)
			return -1;
		(*n)++;
	}
	return 0;
}

static int
load_counts(struct load *ld, const json_t *o, struct restore_task *rt)
{
	static const char *const msgs[] = { "msgs", "bytes" };
	static const char *const times[] = { "computing", "pvm", "blocked" };
	uint64_t *const sent[] = { &rt->sent_msgs, &rt->sent_bytes };
	uint64_t *const recv[] = { &rt->recv_msgs, &rt->recv_bytes };
	uint64_t *const tns[] = { &rt->computing, &rt->pvm, &rt->blocked };

	if (get_u64(ld, o, "calls", &rt->calls) == -1 ||
	    get_counts(ld, o, "sent", msgs, sent, 2) == -1 ||
	    get_counts(ld, o, "received", msgs, recv, 2) == -1 ||
	    get_counts(ld, o, "time_ns", times, tns, 3) == -1 ||
	    get_u64(ld, o, "last_seq", &rt->last_seq) == -1 ||
	    get_u64(ld, o, "lost", &rt->lost) == -1)
		return -1;
	return 0;
}

/* One task: into the model, and what the later checks need into lt. */
static int
load_task(struct load *ld, const json_t *o, struct ltask *lt)
{
	char host[LOAD_STR_MAX], program[LOAD_STR_MAX];
	struct restore_task rt;
	struct handler *handlers = NULL;
	int32_t *kids = NULL;
	long long pid;
	int rv = -1;

	memset(&rt, 0, sizeof(rt));
	rt.host = host;
	rt.program = program;
	if (get_tid(ld, o, "tid", &rt.tid) == -1 ||
	    get_str(ld, o, "host", host, sizeof(host)) == -1 ||
	    get_int(ld, o, "pid", 0, UINT32_MAX, &pid) == -1 ||
	    get_i32(ld, o, "parent", &rt.parent) == -1 ||
	    get_str(ld, o, "program", program, sizeof(program)) == -1 ||
	    load_counts(ld, o, &rt) == -1 || load_state(ld, o, &rt) == -1 ||
	    load_kids(ld, o, &kids, &rt.nkids) == -1 ||
	    load_handlers(ld, o, &handlers, &rt.nhandlers) == -1)
		goto out;
	if (rt.nhandlers > 0 && rt.end != RESTORE_LIVE) {
		bad(ld, "an ended task with message handlers");
		goto out;
	}
	rt.pid = (uint32_t)pid;
	rt.kids = kids;
	rt.handlers = handlers;
	state_restore_task(ld->s, &rt);
	lt->tid = rt.tid;
	lt->end = rt.end;
	lt->last_seq = rt.last_seq;
	lt->call = rt.call;
	memcpy(lt->group, rt.group, sizeof(lt->group));
	rv = 0;
out:
	free(kids);
	free(handlers);
	return rv;
}

static int
load_tasks(struct load *ld, const json_t *tasks)
{
	size_t i, n = json_array_size(tasks);

	ld->lt = xcalloc(n + 1, sizeof(*ld->lt));
	for (i = 0; i < n; i++) {
		at(ld, "tasks", i);
		if (load_task(ld, json_array_get(tasks, i), &ld->lt[i]) == -1)
			return -1;
		ld->nlt++;
	}
	ld->at[0] = '\0';
	qsort(ld->lt, ld->nlt, sizeof(*ld->lt), cmp_tid);
	return 0;
}

/* "position": exactly the tasks, each at its last seq. */
static int
load_position(struct load *ld, const json_t *pos)
{
	const struct ltask *lt;
	const char *key;
	json_t *v;
	uint64_t seq;
	int32_t tid;
	char id[40];

	snprintf(ld->at, sizeof(ld->at), "position");
	if (json_object_size(pos) != ld->nlt)
		return bad(ld, "%zu tasks for %zu in \"tasks\"",
		    json_object_size(pos), ld->nlt);
	json_object_foreach((json_t *)pos, key, v) {
		snprintf(id, sizeof(id), "%.20s:1", key);
		if (parse_id(id, &tid, &seq) == -1 ||
		    (lt = ltask_find(ld, tid)) == NULL)
			return bad(ld, "\"%s\" is not a task of \"tasks\"", key);
		if (!json_is_integer(v) || (uint64_t)json_integer_value(v) !=
		    lt->last_seq)
			return bad(ld, "task %s is not at its last_seq", key);
	}
	ld->at[0] = '\0';
	return 0;
}

/* --- the other parts ------------------------------------------------- */

static int
load_hosts(struct load *ld, const json_t *hosts)
{
	char name[LOAD_STR_MAX], arch[LOAD_STR_MAX], agent[8];
	const json_t *h;
	int32_t tid;
	size_t i;

	if (json_array_size(hosts) > LOAD_HOSTS_MAX)
		return bad(ld, "more than %d hosts", LOAD_HOSTS_MAX);
	for (i = 0; i < json_array_size(hosts); i++) {
		at(ld, "hosts", i);
		h = json_array_get(hosts, i);
		if (get_i32(ld, h, "host_tid", &tid) == -1 ||
		    get_str(ld, h, "name", name, sizeof(name)) == -1 ||
		    get_str(ld, h, "arch", arch, sizeof(arch)) == -1 ||
		    get_str(ld, h, "agent", agent, sizeof(agent)) == -1)
			return -1;
		if (strcmp(agent, "up") != 0 && strcmp(agent, "down") != 0 &&
		    strcmp(agent, "deleted") != 0)
			return bad(ld, "agent \"%s\"", agent);
		state_host(ld->s, tid, name, arch, strcmp(agent, "up") == 0);
		if (json_object_get(h, "via") != NULL) {
			if (get_str(ld, h, "via", name, sizeof(name)) == -1)
				return -1;
			state_host_via(ld->s, tid, name);
		}
		if (strcmp(agent, "deleted") == 0)
			state_host_deleted(ld->s, tid);
	}
	ld->at[0] = '\0';
	return 0;
}

/* The members of groups[gi]: running tasks, each once. */
static int
load_members(struct load *ld, size_t gi, const char *name, const json_t *m)
{
	struct ltask *lt;
	int32_t tid, inst;
	size_t i;

	for (i = 0; i < json_array_size(m); i++) {
		const json_t *e = json_array_get(m, i);

		if (get_tid(ld, e, "tid", &tid) == -1 ||
		    get_i32(ld, e, "inst", &inst) == -1)
			return -1;
		if ((lt = ltask_find(ld, tid)) == NULL ||
		    lt->end != RESTORE_LIVE)
			return bad(ld, "member %" PRId32 " is not a running "
			    "task", tid);
		if (lt->member == gi + 1)
			return bad(ld, "member %" PRId32 " is listed twice",
			    tid);
		lt->member = gi + 1;
		state_restore_member(ld->s, name, tid, inst);
	}
	return 0;
}

/* A barrier's waiters: exactly the tasks blocked in it. */
static int
load_waiting(struct load *ld, const char *name, const json_t *b)
{
	const json_t *w;
	struct ltask *lt;
	size_t i;

	if (json_is_null(b))
		return 0;
	if (!json_is_object(b) || !json_is_array(w = json_object_get(b,
	    "waiting")))
		return bad(ld, "\"barrier\" is neither null nor "
		    "{\"waiting\":[...]}");
	for (i = 0; i < json_array_size(w); i++) {
		const json_t *v = json_array_get(w, i);

		if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
		    json_integer_value(v) > INT32_MAX ||
		    (lt = ltask_find(ld, (int32_t)json_integer_value(v))) ==
		    NULL || lt->listed || lt->end != RESTORE_LIVE ||
		    lt->call != PMON_CALL_barrier ||
		    strcmp(lt->group, name) != 0)
			return bad(ld, "waiting[%zu] is not a task blocked "
			    "in this barrier", i);
		lt->listed = 1;
	}
	return 0;
}

static int
load_groups(struct load *ld, const json_t *groups)
{
	char name[RECORD_GROUP_MAX + 1];
	const json_t *g, *m;
	size_t i;

	for (i = 0; i < json_array_size(groups); i++) {
		at(ld, "groups", i);
		g = json_array_get(groups, i);
		if (get_str(ld, g, "name", name, sizeof(name)) == -1 ||
		    (m = get_array(ld, g, "members")) == NULL)
			return -1;
		if (state_has_group(ld->s, name))
			return bad(ld, "group \"%s\" is listed twice", name);
		state_restore_group(ld->s, name);
		if (load_members(ld, i, name, m) == -1 ||
		    load_waiting(ld, name, json_object_get(g, "barrier")) == -1)
			return -1;
	}
	ld->at[0] = '\0';
	for (i = 0; i < ld->nlt; i++)
		if (ld->lt[i].call == PMON_CALL_barrier && !ld->lt[i].listed)
			return bad(ld, "task %" PRId32 " is blocked in a barrier "
			    "no group lists", ld->lt[i].tid);
	return 0;
}

static int
load_message(struct load *ld, int32_t to, const json_t *m)
{
	int32_t from, tag, ctx, bytes, tid;
	uint64_t seq;

	if (get_tid(ld, m, "from", &from) == -1 ||
	    get_i32(ld, m, "tag", &tag) == -1 ||
	    get_i32(ld, m, "ctx", &ctx) == -1 ||
	    get_i32(ld, m, "bytes", &bytes) == -1 ||
	    get_id(ld, m, "send", &tid, &seq) == -1)
		return -1;
	if (tid != from)
		return bad(ld, "a message from %" PRId32 " sent by %" PRId32,
		    from, tid);
	state_restore_message(ld->s, to, from, seq, tag, ctx, bytes);
	return 0;
}

static int
load_queues(struct load *ld, const json_t *queues)
{
	const struct ltask *lt;
	const json_t *q, *m;
	int32_t to;
	size_t i, j;

	for (i = 0; i < json_array_size(queues); i++) {
		at(ld, "queues", i);
		q = json_array_get(queues, i);
		if (get_tid(ld, q, "tid", &to) == -1 ||
		    (m = get_array(ld, q, "messages")) == NULL)
			return -1;
		if ((lt = ltask_find(ld, to)) != NULL &&
		    lt->end != RESTORE_LIVE)
			return bad(ld, "messages queued at a task that ended");
		for (j = 0; j < json_array_size(m); j++)
			if (load_message(ld, to, json_array_get(m, j)) == -1)
				return -1;
	}
	ld->at[0] = '\0';
	return 0;
}

static int
load_traffic(struct load *ld, const json_t *traffic)
{
	const json_t *e;
	int32_t from, to;
	uint64_t msgs, bytes;
	size_t i;

	for (i = 0; i < json_array_size(traffic); i++) {
		at(ld, "traffic", i);
		e = json_array_get(traffic, i);
		if (get_tid(ld, e, "from", &from) == -1 ||
		    get_i32(ld, e, "to", &to) == -1 ||
		    get_u64(ld, e, "msgs", &msgs) == -1 ||
		    get_u64(ld, e, "bytes", &bytes) == -1)
			return -1;
		if (ltask_find(ld, from) == NULL)
			return bad(ld, "from a task not in \"tasks\"");
		state_restore_traffic(ld->s, from, to, msgs, bytes);
	}
	ld->at[0] = '\0';
	return 0;
}

/* --- problems -------------------------------------------------------- */

/* Problems are objects of arrays of objects at most. */
#define LOAD_PROBLEM_DEPTH	4

static int
write_string(FILE *fp, const char *utf8)
{
	char buf[LOAD_STR_MAX];

	if (json_str_bytes(utf8, buf, sizeof(buf)) == -1)
		return -1;
	json_str_write(fp, buf);
	return 0;
}

/*
 * Writes v as the model wrote it: no spaces, keys in their order,
 * strings as state_json_str writes bytes.  -1 for what a problem never
 * holds: a real number, a string that is not bytes, deeper nesting.
 */
static int
write_value(FILE *fp, const json_t *v, int depth)
{
	const char *key;
	json_t *e;
	size_t i;

	if (depth > LOAD_PROBLEM_DEPTH)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		i = 0;
		fputc('{', fp);
		json_object_foreach((json_t *)v, key, e) {
			if (i++ > 0)
				fputc(',', fp);
			if (write_string(fp, key) == -1)
				return -1;
			fputc(':', fp);
			if (write_value(fp, e, depth + 1) == -1)
				return -1;
		}
		fputc('}', fp);
		return 0;
	case JSON_ARRAY:
		fputc('[', fp);
		json_array_foreach(v, i, e) {
			if (i > 0)
				fputc(',', fp);
			if (write_value(fp, e, depth + 1) == -1)
				return -1;
		}
		fputc(']', fp);
		return 0;
	case JSON_STRING:
		return write_string(fp, json_string_value(v));
	case JSON_INTEGER:
		fprintf(fp, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
		fputs(json_is_true(v) ? "true" : json_is_false(v) ? "false" :
		    "null", fp);
		return 0;
	default:
		return -1;
	}
}

/* A deadlock's tasks, increasing, so that it is not reported again. */
static int
deadlock_tids(struct load *ld, const json_t *p, int32_t **tids, size_t *n)
{
	const json_t *a = json_object_get(p, "tasks"), *v;
	size_t i;

	*n = json_array_size(a);
	if (*n == 0)
		return bad(ld, "a deadlock without \"tasks\"");
	*tids = xcalloc(*n, sizeof(**tids));
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
		    json_integer_value(v) > INT32_MAX ||
		    (i > 0 && json_integer_value(v) <= (*tids)[i - 1]))
			return bad(ld, "the tasks of a deadlock are not "
			    "increasing tids");
		(*tids)[i] = (int32_t)json_integer_value(v);
	}
	return 0;
}

static int
load_problem(struct load *ld, const json_t *p)
{
	int32_t *tids = NULL;
	char *buf = NULL;
	size_t len = 0, n = 0;
	json_t *kept;
	FILE *fp;
	int rv = -1, w;

	if (!json_is_string(json_object_get(p, "kind")))
		return bad(ld, "a problem without \"kind\"");
	if (strcmp(json_string_value(json_object_get(p, "kind")),
	    "deadlock") == 0 && deadlock_tids(ld, p, &tids, &n) == -1)
		goto out;
	/* A memory stream fails only for want of memory: fatal. */
	if ((fp = open_memstream(&buf, &len)) == NULL)
		fatal("%s: open_memstream", __func__);
	/* "over" is the model's judgement when it writes: not kept. */
	if ((kept = json_copy((json_t *)p)) == NULL)
		fatal("%s: json_copy", __func__);
	json_object_del(kept, "over");
	w = write_value(fp, kept, 0);
	json_decref(kept);
	if (fclose(fp) != 0)
		fatal("%s: problem", __func__);
	if (w == -1)
		bad(ld, "a problem holds a value the model never writes");
	else if (state_restore_problem(ld->s, buf, tids, n) == -1)
		bad(ld, "more problems than the model keeps (%d)",
		    STATE_PROBLEMS_KEPT);
	else
		rv = 0;
out:
	free(buf);
	free(tids);
	return rv;
}

static int
load_problems(struct load *ld, const json_t *doc, const json_t *problems)
{
	uint64_t dropped = 0, unchecked = 0;
	size_t i;

	for (i = 0; i < json_array_size(problems); i++) {
		at(ld, "problems", i);
		if (!json_is_object(json_array_get(problems, i)))
			return bad(ld, "not an object");
		if (load_problem(ld, json_array_get(problems, i)) == -1)
			return -1;
	}
	ld->at[0] = '\0';
	if (json_object_get(doc, "problems_not_kept") != NULL &&
	    get_u64(ld, doc, "problems_not_kept", &dropped) == -1)
		return -1;
	if (json_object_get(doc, "races_unchecked") != NULL &&
	    get_u64(ld, doc, "races_unchecked", &unchecked) == -1)
		return -1;
	ld->s->races_unchecked = unchecked;
	return state_restore_finish(ld->s, dropped, ld->err, ld->errsize);
}

/* --- the snapshot ---------------------------------------------------- */

/* The mailbox (optional: snapshots before it had none). */
static int
load_mailbox(struct load *ld, const json_t *doc)
{
	char name[RECORD_GROUP_MAX + 1];
	const json_t *a = json_object_get(doc, "mailbox"), *e;
	int32_t index, owner, flags, bytes, tid;
	uint64_t put;
	size_t i;

	if (a == NULL)
		return 0;
	if (!json_is_array(a))
		return bad(ld, "\"mailbox\" is not an array");
	for (i = 0; i < json_array_size(a); i++) {
		at(ld, "mailbox", i);
		e = json_array_get(a, i);
		if (get_str(ld, e, "name", name, sizeof(name)) == -1 ||
		    get_i32(ld, e, "index", &index) == -1 ||
		    get_tid(ld, e, "owner", &owner) == -1 ||
		    get_i32(ld, e, "flags", &flags) == -1 ||
		    get_i32(ld, e, "bytes", &bytes) == -1 ||
		    get_id(ld, e, "put", &tid, &put) == -1)
			return -1;
		if (tid != owner || index < 0)
			return bad(ld, "an entry put by %" PRId32 ", owned by %"
			    PRId32 ", at index %" PRId32, tid, owner, index);
		state_restore_mbox(ld->s, name, index, owner, flags, bytes,
		    put);
	}
	ld->at[0] = '\0';
	return 0;
}

static int
load_doc(struct load *ld, const struct state *old, const json_t *doc)
{
	const json_t *pos, *hosts, *tasks, *groups, *queues, *traffic, *probs;
	int32_t *tids = NULL;
	size_t ntids = 0;
	int rv;

	if (!json_is_object(doc))
		return bad(ld, "not a JSON object");
	if ((pos = get_obj(ld, doc, "position")) == NULL ||
	    (hosts = get_array(ld, doc, "hosts")) == NULL ||
	    (tasks = get_array(ld, doc, "tasks")) == NULL ||
	    (groups = get_array(ld, doc, "groups")) == NULL ||
	    (queues = get_array(ld, doc, "queues")) == NULL ||
	    (traffic = get_array(ld, doc, "traffic")) == NULL ||
	    (probs = get_array(ld, doc, "problems")) == NULL)
		return -1;
	rv = collect_tids(ld, tasks, queues, &tids, &ntids);
	if (rv == 0)
		state_restore_tasks(ld->s, old, tids, ntids);
	free(tids);
	if (rv == -1 || load_tasks(ld, tasks) == -1 ||
	    load_position(ld, pos) == -1 || load_hosts(ld, hosts) == -1 ||
	    load_groups(ld, groups) == -1 || load_queues(ld, queues) == -1 ||
	    load_traffic(ld, traffic) == -1 || load_mailbox(ld, doc) == -1)
		return -1;
	return load_problems(ld, doc, probs);
}

int
state_load(struct state *s, const char *json, size_t len, char *err,
    size_t errsize)
{
	struct load ld;
	json_error_t je;
	json_t *doc;
	int rv = -1;

	memset(&ld, 0, sizeof(ld));
	ld.err = err;
	ld.errsize = errsize;
	if ((doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je)) ==
	    NULL) {
		snprintf(err, errsize, "not JSON: %s (byte %d)", je.text,
		    je.position);
		return -1;
	}
	ld.s = state_restore_new(s);
	if (load_doc(&ld, s, doc) == 0) {
		state_restore_swap(s, ld.s);
		rv = 0;
	}
	state_free(ld.s);
	free(ld.lt);
	json_decref(doc);
	return rv;
}
