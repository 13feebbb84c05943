/*
 * replaystate: checks the "late attach" property of the coordinator's
 * state model.  A tool that subscribes mid-run with a snapshot gets the
 * state at some position of the stream and then exactly the events after
 * it; applying those events to the snapshot must give the state the
 * coordinator reports at the end.
 *
 *	replaystate TRACE FINAL
 *
 * TRACE is the output of `pmon trace --json --tasks --snapshot`: one JSON
 * object a line (doc/events.md).  Task lines ({"type":"task",...}) may
 * come anywhere; exactly one {"type":"snapshot","state":{...}} comes
 * before the first event (an object with a "call"); problem lines and
 * other typed lines are ignored.  FINAL is the output of `pmon snapshot
 * --json` taken after the program ended (doc/state.md).
 *
 * The snapshot gives the starting state: per task host, pid, parent,
 * program, state, exit_status, calls, sent, received, last_seq and
 * children; the queues; the traffic; the position.  The events after it
 * are applied in stream order with the model's conventions (doc/state.md;
 * the model, coordinator/state*.c, is the reference; this is an
 * independent replay):
 *	- a task line for a task not known yet makes a running task with
 *	  zero counts, which joins its parent's children; one for a task
 *	  that ended, with another pid, is a new task of a reused tid (the
 *	  old one's queue and traffic are gone, as in the model);
 *	- every begin counts a call.  pvm_send and pvm_psend send one
 *	  message to "dst", pvm_mcast one to each distinct tid of its "dst"
 *	  list but the sender: each counts in sent and in the traffic of the
 *	  pair, and is queued at its receiver unless that task has ended
 *	  (tids <= 0, pvmds, get nothing).  pvm_recv, pvm_trecv, pvm_precv
 *	  and pvm_barrier block.  pvm_exit ends the task: its queue is
 *	  dropped, and messages sent to it later are counted, not queued;
 *	- every end closes the open call (a blocked task runs again).  The
 *	  end of pvm_bcast sends to its "dst" list as a mcast begin does.
 *	  A pvm_send, pvm_psend or pvm_mcast that failed (rc < 0) takes its
 *	  messages (send id TID:SEQ-1) back out of the queues, and their
 *	  counts.  A receive end with "msg" counts in received and takes the
 *	  message its "match" names out of the task's queue.  The end of
 *	  pvm_spawn adds its "children"; that of pvm_exit sets exit_status;
 *	- a lost marker ("call":"lost", "count" N) stands for N events: it
 *	  advances the task's seq and forgets its open call.
 *
 * Differences, each printed on stderr (the first 50), make the exit
 * status 1:
 *	- stream integrity: per task, the first event after the snapshot has
 *	  seq position + 1 (1 for a task not in the position) and each next
 *	  one the previous + 1; a gap or a duplicate is a difference (a
 *	  duplicate is not applied).  Events of a task that no task line and
 *	  no snapshot announced.  A receive whose message is not queued;
 *	- at the end, against FINAL: the set of tasks; per task host, pid,
 *	  parent, program, state, exit_status (when either has one), calls,
 *	  sent, received, last_seq, children (as sets) and its position,
 *	  which must equal the replayed last_seq; every queue, as a set of
 *	  messages by send id with from, tag, ctx and bytes; the traffic of
 *	  every pair, msgs and bytes (a pair one side lacks counts as zero).
 * Not compared: time_ns (a late tool cannot know when the calls open at
 * the snapshot began), problems, hosts and groups.  A task inside
 * pvm_reduce, pvm_gather or pvm_scatter blocks or not by its role in the
 * group, which is not replayed: both states are accepted for it unless
 * the snapshot already had it blocked.  A task the coordinator found
 * gone without pvm_exit is "killed" in FINAL with no event saying so:
 * that shows as a difference.
 *
 * On success (exit 0), stdout has
 *	replaystate: ok: N tasks, E events after the snapshot, M messages
 *	replaystate: snapshot at E0 of E1 events
 * M is the number of messages the events sent (per destination), E0 and
 * E1 the sums of last_seq over the tasks of the snapshot and of FINAL:
 * the attach was mid-run when 0 < E0 < E1.  The second line is printed
 * on failure too.  Bad input (a line that is not a JSON object, no
 * snapshot, two, an event before it, a missing field) is exit status 2,
 * with the line and the problem.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "record.h"
#include "xalloc.h"

#define MAX_DIFFS	50

/* A message sent and not received, in its receiver's queue. */
struct qmsg {
	struct qmsg	*next;
	int32_t		 from;
	uint64_t	 seq;		/* of the send: id "from:seq" */
	int32_t		 tag, ctx, bytes;
};

enum end { END_LIVE, END_EXITED, END_KILLED };

/* Whether the open call blocks: a collective may, by the task's role. */
enum wait { WAIT_NONE, WAIT_BLOCKED, WAIT_MAYBE };

struct task {
	int32_t		 tid, parent;
	int64_t		 pid;
	char		*host, *program;
	int		 known;		/* by a task line or the snapshot */
	enum end	 end;
	int		 call;		/* the open call, or 0 */
	enum wait	 wait;
	int64_t		 from, tag;	/* of a blocking receive */
	uint64_t	 since;		/* the open call's begin */
	int		 has_exit;
	int64_t		 exit_status;
	int64_t		 calls;
	int64_t		 sent_msgs, sent_bytes, recv_msgs, recv_bytes;
	uint64_t	 last_seq;
	uint64_t	 next_seq;	/* the seq its next event must have */
	int		 has_pos;
	uint64_t	 pos;		/* in the document's position */
	int32_t		*kids;
	size_t		 nkids, kidcap;
	struct qmsg	*qhead, *qtail;
};

/* Messages and bytes from one task to another. */
struct pair {
	int32_t		 from, to;
	int64_t		 msgs, bytes;
};

/* Open addressing, linear probing; a slot is free when its value is. */
struct map {
	uint64_t	*keys;
	void		**vals;
	size_t		 cap, n;
};

/* A state: loaded from a document, or replayed. */
struct model {
	struct map	 tasks;		/* tid: struct task */
	struct task	**tv;		/* in order of creation */
	size_t		 nt, tcap;
	struct map	 pairs;		/* from << 32 | to: pair */
	struct pair	**pv;
	size_t		 np, pcap;
	uint64_t	 sum_last_seq;	/* over the document's tasks */
};

/* Where input comes from, for messages: line 0 is a whole document. */
struct input {
	const char	*path;
	unsigned long	 line;
};

struct replay {
	struct model	 m;
	struct input	 in;
	int		 snapshot;	/* the snapshot line was read */
	uint64_t	 e0;		/* its sum of last_seq */
	uint64_t	 nevents, nmessages;
	unsigned long	 ndiffs;
};

static void	bad(const struct input *, const char *, ...)
		    __attribute__((format(printf, 2, 3), noreturn));
static void	diff(unsigned long *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

static void
bad(const struct input *in, const char *fmt, ...)
{
	va_list ap;

	if (in->line > 0)
		fprintf(stderr, "replaystate: %s:%lu: ", in->path, in->line);
	else
		fprintf(stderr, "replaystate: %s: ", in->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void
diff(unsigned long *n, const char *fmt, ...)
{
	va_list ap;

	if ((*n)++ >= MAX_DIFFS)
		return;
	fputs("replaystate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
set_str(char **dst, const char *src)
{
	free(*dst);
	if ((*dst = strdup(src)) == NULL) {
		perror("replaystate");
		exit(2);
	}
}

/* --- maps --------------------------------------------------------------- */

static size_t
map_slot(const struct map *m, uint64_t key)
{
	uint64_t h = key;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (m->cap - 1);
}

static void *
map_get(const struct map *m, uint64_t key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = map_slot(m, key); m->vals[i] != NULL; i = (i + 1) &
	    (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

static void
map_insert(struct map *m, uint64_t key, void *val)
{
	size_t i;

	for (i = map_slot(m, key); m->vals[i] != NULL; i = (i + 1) &
	    (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

/* Adds key, which is not in the map. */
static void
map_put(struct map *m, uint64_t key, void *val)
{
	struct map old = *m;
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		m->cap = old.cap ? old.cap * 2 : 64;
		m->keys = xcalloc(m->cap, sizeof(*m->keys));
		m->vals = xcalloc(m->cap, sizeof(*m->vals));
		m->n = 0;
		for (i = 0; i < old.cap; i++)
			if (old.vals[i] != NULL)
				map_insert(m, old.keys[i], old.vals[i]);
		free(old.keys);
		free(old.vals);
	}
	map_insert(m, key, val);
}

/* --- the model ------------------------------------------------------------ */

static uint64_t
tid_key(int32_t tid)
{
	return (uint32_t)tid;
}

static uint64_t
pair_key(int32_t from, int32_t to)
{
	return (uint64_t)(uint32_t)from << 32 | (uint32_t)to;
}

static struct task *
task_find(const struct model *m, int32_t tid)
{
	return map_get(&m->tasks, tid_key(tid));
}

/* The task of tid; a new one is live, unknown and waits for seq 1. */
static struct task *
task_get(struct model *m, int32_t tid)
{
	struct task *t;

	if ((t = task_find(m, tid)) != NULL)
		return t;
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->next_seq = 1;
	if (m->nt == m->tcap) {
		m->tcap = m->tcap ? m->tcap * 2 : 16;
		m->tv = xreallocarray(m->tv, m->tcap, sizeof(*m->tv));
	}
	m->tv[m->nt++] = t;
	map_put(&m->tasks, tid_key(tid), t);
	return t;
}

static struct pair *
pair_find(const struct model *m, int32_t from, int32_t to)
{
	return map_get(&m->pairs, pair_key(from, to));
}

static struct pair *
pair_get(struct model *m, int32_t from, int32_t to)
{
	struct pair *p;

	if ((p = pair_find(m, from, to)) != NULL)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->from = from;
	p->to = to;
	if (m->np == m->pcap) {
		m->pcap = m->pcap ? m->pcap * 2 : 16;
		m->pv = xreallocarray(m->pv, m->pcap, sizeof(*m->pv));
	}
	m->pv[m->np++] = p;
	map_put(&m->pairs, pair_key(from, to), p);
	return p;
}

static void
kid_add(struct task *t, int32_t kid)
{
	size_t i;

	for (i = 0; i < t->nkids; i++)
		if (t->kids[i] == kid)
			return;
	if (t->nkids == t->kidcap) {
		t->kidcap = t->kidcap ? t->kidcap * 2 : 8;
		t->kids = xreallocarray(t->kids, t->kidcap, sizeof(*t->kids));
	}
	t->kids[t->nkids++] = kid;
}

static void
queue_add(struct task *t, const struct qmsg *msg)
{
	struct qmsg *q = xcalloc(1, sizeof(*q));

	*q = *msg;
	q->next = NULL;
	if (t->qtail != NULL)
		t->qtail->next = q;
	else
		t->qhead = q;
	t->qtail = q;
}

/* Takes the message of send from:seq out of t's queue, from the head. */
static struct qmsg *
queue_take(struct task *t, int32_t from, uint64_t seq)
{
	struct qmsg *q, *prev = NULL;

	for (q = t->qhead; q != NULL; prev = q, q = q->next) {
		if (q->from != from || q->seq != seq)
			continue;
		if (prev != NULL)
			prev->next = q->next;
		else
			t->qhead = q->next;
		if (t->qtail == q)
			t->qtail = prev;
		return q;
	}
	return NULL;
}

static void
queue_clear(struct task *t)
{
	struct qmsg *q;

	while ((q = t->qhead) != NULL) {
		t->qhead = q->next;
		free(q);
	}
	t->qtail = NULL;
}

static void
model_free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nt; i++) {
		queue_clear(m->tv[i]);
		free(m->tv[i]->kids);
		free(m->tv[i]->host);
		free(m->tv[i]->program);
		free(m->tv[i]);
	}
	for (i = 0; i < m->np; i++)
		free(m->pv[i]);
	free(m->tv);
	free(m->pv);
	free(m->tasks.keys);
	free(m->tasks.vals);
	free(m->pairs.keys);
	free(m->pairs.vals);
	memset(m, 0, sizeof(*m));
}

/* --- JSON fields ---------------------------------------------------------- */

static int64_t
need_int(const struct input *in, json_t *o, const char *key,
    const char *what)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		bad(in, "%s: no integer \"%s\"", what, key);
	return json_integer_value(j);
}

static const char *
need_str(const struct input *in, json_t *o, const char *key,
    const char *what)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_string(j))
		bad(in, "%s: no string \"%s\"", what, key);
	return json_string_value(j);
}

static json_t *
need_array(const struct input *in, json_t *o, const char *key,
    const char *what)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_array(j))
		bad(in, "%s: no array \"%s\"", what, key);
	return j;
}

static json_t *
need_object(const struct input *in, json_t *o, const char *key,
    const char *what)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_object(j))
		bad(in, "%s: no object \"%s\"", what, key);
	return j;
}

static int64_t
int_or(json_t *o, const char *key, int64_t dflt)
{
	json_t *j = json_object_get(o, key);

	return json_is_integer(j) ? json_integer_value(j) : dflt;
}

static int32_t
need_tid(const struct input *in, json_t *o, const char *key,
    const char *what)
{
	int64_t v = need_int(in, o, key, what);

	if (v < INT32_MIN || v > INT32_MAX)
		bad(in, "%s: \"%s\" %" PRId64 " is not a tid", what, key, v);
	return (int32_t)v;
}

/* Parses "TID:SEQ"; 0 or -1. */
static int
parse_id(const char *s, int32_t *tid, uint64_t *seq)
{
	long long t;
	unsigned long long q;
	int n = -1;

	if (sscanf(s, "%lld:%llu%n", &t, &q, &n) != 2 || n < 0 ||
	    s[n] != '\0' || t < INT32_MIN || t > INT32_MAX)
		return -1;
	*tid = (int32_t)t;
	*seq = q;
	return 0;
}

/* The call of a name such as "pvm_send"; 0 for one this does not know. */
static int
call_of(const char *name)
{
	int call = record_call_lookup(name);

	return call > 0 ? call : 0;
}

static const char *
call_name(int call)
{
	return call > 0 ? record_call_name((unsigned)call) : "?";
}

/* --- loading a state document ------------------------------------------- */

static void
load_counts(const struct input *in, json_t *o, const char *key,
    const char *what, int64_t *msgs, int64_t *bytes)
{
	json_t *c = need_object(in, o, key, what);
	char w[96];

	snprintf(w, sizeof(w), "%s: %s", what, key);
	*msgs = need_int(in, c, "msgs", w);
	*bytes = need_int(in, c, "bytes", w);
}

/* "state" and "blocked": how the task ended, or what it waits in. */
static void
load_task_state(const struct input *in, struct task *t, json_t *o,
    const char *what)
{
	const char *st = need_str(in, o, "state", what);
	json_t *b;
	char w[96];

	t->end = END_LIVE;
	t->call = 0;
	t->wait = WAIT_NONE;
	if (strcmp(st, "exited") == 0)
		t->end = END_EXITED;
	else if (strcmp(st, "killed") == 0)
		t->end = END_KILLED;
	else if (strcmp(st, "blocked") == 0) {
		snprintf(w, sizeof(w), "%s: blocked", what);
		b = need_object(in, o, "blocked", what);
		t->call = call_of(need_str(in, b, "in", w));
		t->wait = WAIT_BLOCKED;
		t->from = int_or(b, "from", -1);
		t->tag = int_or(b, "tag", -1);
	} else if (strcmp(st, "running") != 0)
		bad(in, "%s: unknown state \"%s\"", what, st);
}

static void
load_task(struct model *m, const struct input *in, json_t *o)
{
	struct task *t;
	json_t *kids, *v;
	char what[64];
	size_t i;

	if (!json_is_object(o))
		bad(in, "state: a task is not an object");
	t = task_get(m, need_tid(in, o, "tid", "state: task"));
	snprintf(what, sizeof(what), "state: task %" PRId32, t->tid);
	t->known = 1;
	set_str(&t->host, need_str(in, o, "host", what));
	set_str(&t->program, need_str(in, o, "program", what));
	t->pid = need_int(in, o, "pid", what);
	t->parent = need_tid(in, o, "parent", what);
	load_task_state(in, t, o, what);
	if ((t->has_exit = json_object_get(o, "exit_status") != NULL))
		t->exit_status = need_int(in, o, "exit_status", what);
	t->calls = need_int(in, o, "calls", what);
	load_counts(in, o, "sent", what, &t->sent_msgs, &t->sent_bytes);
	load_counts(in, o, "received", what, &t->recv_msgs, &t->recv_bytes);
	t->last_seq = (uint64_t)need_int(in, o, "last_seq", what);
	m->sum_last_seq += t->last_seq;
	kids = need_array(in, o, "children", what);
	t->nkids = 0;
	json_array_foreach(kids, i, v) {
		if (!json_is_integer(v))
			bad(in, "%s: a child is not a tid", what);
		kid_add(t, (int32_t)json_integer_value(v));
	}
}

static void
load_position(struct model *m, const struct input *in, json_t *pos)
{
	const char *key;
	struct task *t;
	json_t *v;
	char *end;
	long long tid;

	json_object_foreach(pos, key, v) {
		errno = 0;
		tid = strtoll(key, &end, 10);
		if (*key == '\0' || *end != '\0' || errno != 0 ||
		    tid < INT32_MIN || tid > INT32_MAX || !json_is_integer(v) ||
		    json_integer_value(v) < 0)
			bad(in, "state: position \"%s\" is not tid: seq", key);
		t = task_get(m, (int32_t)tid);
		t->has_pos = 1;
		t->pos = (uint64_t)json_integer_value(v);
		t->next_seq = t->pos + 1;
	}
}

static void
load_message(const struct input *in, struct task *t, json_t *o)
{
	struct qmsg q;
	char what[64];
	int32_t sender;

	snprintf(what, sizeof(what), "state: queue of %" PRId32, t->tid);
	if (!json_is_object(o))
		bad(in, "%s: a message is not an object", what);
	memset(&q, 0, sizeof(q));
	q.from = need_tid(in, o, "from", what);
	q.tag = (int32_t)need_int(in, o, "tag", what);
	q.ctx = (int32_t)need_int(in, o, "ctx", what);
	q.bytes = (int32_t)need_int(in, o, "bytes", what);
	if (parse_id(need_str(in, o, "send", what), &sender, &q.seq) == -1 ||
	    sender != q.from)
		bad(in, "%s: \"send\" is not the id FROM:SEQ", what);
	queue_add(t, &q);
}

static void
load_queues(struct model *m, const struct input *in, json_t *queues)
{
	struct task *t;
	json_t *o, *msgs, *v;
	size_t i, j;

	json_array_foreach(queues, i, o) {
		if (!json_is_object(o))
			bad(in, "state: a queue is not an object");
		t = task_get(m, need_tid(in, o, "tid", "state: queue"));
		queue_clear(t);
		msgs = need_array(in, o, "messages", "state: queue");
		json_array_foreach(msgs, j, v)
			load_message(in, t, v);
	}
}

static void
load_traffic(struct model *m, const struct input *in, json_t *traffic)
{
	struct pair *p;
	json_t *o;
	size_t i;

	json_array_foreach(traffic, i, o) {
		if (!json_is_object(o))
			bad(in, "state: a traffic entry is not an object");
		p = pair_get(m, need_tid(in, o, "from", "state: traffic"),
		    need_tid(in, o, "to", "state: traffic"));
		p->msgs = need_int(in, o, "msgs", "state: traffic");
		p->bytes = need_int(in, o, "bytes", "state: traffic");
	}
}

/* A state document (doc/state.md) into m, over what m holds. */
static void
load_state(struct model *m, const struct input *in, json_t *st)
{
	json_t *tasks, *o;
	size_t i;

	if (!json_is_object(st))
		bad(in, "the state is not a JSON object");
	tasks = need_array(in, st, "tasks", "state");
	m->sum_last_seq = 0;
	json_array_foreach(tasks, i, o)
		load_task(m, in, o);
	load_position(m, in, need_object(in, st, "position", "state"));
	load_queues(m, in, need_array(in, st, "queues", "state"));
	load_traffic(m, in, need_array(in, st, "traffic", "state"));
}

/* --- replaying events ---------------------------------------------------- */

static uint64_t
nbytes(int32_t b)
{
	return b > 0 ? (uint64_t)b : 0;
}

/* The task ends: PVM drops what it never received. */
static void
task_end(struct task *t, enum end how)
{
	if (t->end != END_LIVE)
		return;
	t->end = how;
	queue_clear(t);
}

/* A new task for a reused tid: the old one is gone, with its traffic. */
static void
task_reset(struct model *m, struct task *t)
{
	size_t i;

	queue_clear(t);
	free(t->kids);
	t->kids = NULL;
	t->nkids = t->kidcap = 0;
	t->parent = 0;
	t->end = END_LIVE;
	t->call = 0;
	t->wait = WAIT_NONE;
	t->has_exit = 0;
	t->calls = t->sent_msgs = t->sent_bytes = 0;
	t->recv_msgs = t->recv_bytes = 0;
	t->last_seq = 0;
	t->next_seq = 1;
	for (i = 0; i < m->np; i++)
		if (m->pv[i]->from == t->tid)
			m->pv[i]->msgs = m->pv[i]->bytes = 0;
}

static void
task_line(struct replay *r, json_t *o)
{
	const struct input *in = &r->in;
	struct task *t, *p;
	int32_t tid, parent;
	int64_t pid;

	tid = need_tid(in, o, "tid", "task line");
	pid = need_int(in, o, "pid", "task line");
	parent = need_tid(in, o, "parent", "task line");
	t = task_find(&r->m, tid);
	if (r->snapshot && t != NULL && t->known && t->end != END_LIVE &&
	    t->pid != pid)
		task_reset(&r->m, t);
	t = task_get(&r->m, tid);
	t->known = 1;
	t->pid = pid;
	set_str(&t->host, need_str(in, o, "host", "task line"));
	set_str(&t->program, need_str(in, o, "program", "task line"));
	if (parent == 0)
		return;
	t->parent = parent;
	if ((p = task_find(&r->m, parent)) != NULL)
		kid_add(p, tid);
}

/* One message of t's send to dst: counted, and queued if dst lives. */
static void
deliver(struct replay *r, struct task *t, int32_t dst, const struct qmsg *msg)
{
	struct task *d;
	struct pair *p;

	if (dst <= 0)
		return;
	d = task_get(&r->m, dst);
	p = pair_get(&r->m, t->tid, dst);
	t->sent_msgs++;
	t->sent_bytes += nbytes(msg->bytes);
	p->msgs++;
	p->bytes += nbytes(msg->bytes);
	r->nmessages++;
	if (d->end == END_LIVE)
		queue_add(d, msg);
}

static int
cmp_tid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* A send to a list: each distinct destination but the sender, once. */
static void
deliver_list(struct replay *r, struct task *t, json_t *dst,
    const struct qmsg *msg, const char *what)
{
	int32_t *d;
	size_t i, n = 0, nd = json_array_size(dst);
	json_t *v;

	d = xcalloc(nd + 1, sizeof(*d));
	json_array_foreach(dst, i, v) {
		if (!json_is_integer(v))
			bad(&r->in, "%s: a destination is not a tid", what);
		d[i] = (int32_t)json_integer_value(v);
	}
	qsort(d, nd, sizeof(*d), cmp_tid);
	for (i = 0; i < nd; i++)
		if (d[i] != t->tid && (n == 0 || d[n - 1] != d[i]))
			d[n++] = d[i];
	for (i = 0; i < n; i++)
		deliver(r, t, d[i], msg);
	free(d);
}

/* The message of a send event: src must be the task itself. */
static void
send_event(struct replay *r, struct task *t, json_t *o, uint64_t seq,
    const char *what)
{
	const struct input *in = &r->in;
	struct qmsg msg;
	json_t *dst;

	memset(&msg, 0, sizeof(msg));
	msg.from = t->tid;
	msg.seq = seq;
	msg.tag = (int32_t)need_int(in, o, "tag", what);
	msg.ctx = (int32_t)need_int(in, o, "ctx", what);
	msg.bytes = (int32_t)need_int(in, o, "bytes", what);
	if (need_tid(in, o, "src", what) != t->tid)
		bad(in, "%s: a send whose src is not its task", what);
	if (json_is_integer(dst = json_object_get(o, "dst")))
		deliver(r, t, (int32_t)json_integer_value(dst), &msg);
	else if (json_is_array(dst))
		deliver_list(r, t, dst, &msg, what);
	else
		bad(in, "%s: no \"dst\"", what);
}

/* A failed send delivered nothing: its message leaves d's queue. */
static void
retract_from(struct replay *r, struct task *t, struct task *d, uint64_t seq)
{
	struct qmsg *q;
	struct pair *p;

	if (d == NULL || (q = queue_take(d, t->tid, seq)) == NULL)
		return;
	t->sent_msgs--;
	t->sent_bytes -= nbytes(q->bytes);
	if ((p = pair_find(&r->m, t->tid, d->tid)) != NULL) {
		p->msgs--;
		p->bytes -= nbytes(q->bytes);
	}
	free(q);
}

/* The end of a failed send: its begin is seq - 1, maybe before the
 * snapshot, so a mcast's messages are looked for in every queue. */
static void
retract(struct replay *r, struct task *t, json_t *o, int call, uint64_t seq,
    const char *what)
{
	size_t i;

	if (call == PMON_CALL_mcast) {
		for (i = 0; i < r->m.nt; i++)
			retract_from(r, t, r->m.tv[i], seq - 1);
		return;
	}
	retract_from(r, t, task_find(&r->m, need_tid(&r->in, o, "dst", what)),
	    seq - 1);
}

static void
receive(struct replay *r, struct task *t, json_t *o, uint64_t seq,
    const char *what)
{
	json_t *m = json_object_get(o, "match");
	struct qmsg *q;
	int32_t from;
	uint64_t sseq;

	t->recv_msgs++;
	t->recv_bytes += nbytes((int32_t)need_int(&r->in, o, "bytes", what));
	if (m == NULL)
		return;		/* released unmatched */
	if (!json_is_string(m) ||
	    parse_id(json_string_value(m), &from, &sseq) == -1)
		bad(&r->in, "%s: \"match\" is not an event id", what);
	if ((q = queue_take(t, from, sseq)) == NULL) {
		diff(&r->ndiffs, "task %" PRId32 ": receive %" PRId32 ":%"
		    PRIu64 " got %s, which is not in its queue (received "
		    "twice, or its send is missing)", t->tid, t->tid, seq,
		    json_string_value(m));
		return;
	}
	free(q);
}

static void
spawn_end(struct replay *r, struct task *t, json_t *o, const char *what)
{
	json_t *kids = need_array(&r->in, o, "children", what), *v;
	struct task *k;
	int32_t kid;
	size_t i;

	json_array_foreach(kids, i, v) {
		if (!json_is_integer(v))
			bad(&r->in, "%s: a child is not a tid", what);
		if ((kid = (int32_t)json_integer_value(v)) <= 0)
			continue;
		k = task_get(&r->m, kid);
		kid_add(t, kid);
		if (k->parent == 0)
			k->parent = t->tid;
	}
}

static void
event_begin(struct replay *r, struct task *t, json_t *o, int call,
    uint64_t seq, const char *what)
{
	t->calls++;
	t->call = call;
	t->since = seq;
	t->wait = WAIT_NONE;
	switch (call) {
	case PMON_CALL_send:
	case PMON_CALL_psend:
	case PMON_CALL_mcast:
		send_event(r, t, o, seq, what);
		break;
	case PMON_CALL_recv:
	case PMON_CALL_trecv:
	case PMON_CALL_precv:
		t->from = int_or(o, "src", -1);
		t->tag = int_or(o, "tag", -1);
		t->wait = WAIT_BLOCKED;
		break;
	case PMON_CALL_barrier:
		t->wait = WAIT_BLOCKED;
		break;
	case PMON_CALL_reduce:
	case PMON_CALL_gather:
	case PMON_CALL_scatter:
		t->wait = WAIT_MAYBE;
		break;
	case PMON_CALL_exit:
		task_end(t, END_EXITED);
		break;
	}
}

static void
event_end(struct replay *r, struct task *t, json_t *o, int call,
    uint64_t seq, const char *what)
{
	int64_t rc = need_int(&r->in, o, "rc", what);

	switch (call) {
	case PMON_CALL_bcast:
		send_event(r, t, o, seq, what);
		break;
	case PMON_CALL_send:
	case PMON_CALL_psend:
	case PMON_CALL_mcast:
		if (rc < 0)
			retract(r, t, o, call, seq, what);
		break;
	case PMON_CALL_recv:
	case PMON_CALL_trecv:
	case PMON_CALL_nrecv:
	case PMON_CALL_precv:
		if (json_is_true(json_object_get(o, "msg")))
			receive(r, t, o, seq, what);
		break;
	case PMON_CALL_spawn:
		spawn_end(r, t, o, what);
		break;
	case PMON_CALL_exit:
		t->has_exit = 1;
		t->exit_status = rc;
		task_end(t, END_EXITED);
		break;
	}
	t->call = 0;
	t->wait = WAIT_NONE;
}

/* Per task, seq runs on from the position: -1 for a duplicate. */
static int
seq_check(struct replay *r, struct task *t, uint64_t seq)
{
	if (seq == t->next_seq)
		return 0;
	if (seq < t->next_seq) {
		diff(&r->ndiffs, "task %" PRId32 ": seq %" PRIu64 " after %"
		    PRIu64 " (a duplicate, not applied)", t->tid, seq,
		    t->next_seq - 1);
		return -1;
	}
	diff(&r->ndiffs, "task %" PRId32 ": seq %" PRIu64 " after %" PRIu64
	    " (a gap: %" PRIu64 " missing)", t->tid, seq, t->next_seq - 1,
	    seq - t->next_seq);
	return 0;
}

/* The task's events up to last are in. */
static void
advance(struct task *t, uint64_t last)
{
	t->next_seq = last + 1;
	if (last > t->last_seq)
		t->last_seq = last;
}

/* The task of an event: one never announced is a difference, once. */
static struct task *
event_task(struct replay *r, int32_t tid)
{
	struct task *t = task_find(&r->m, tid);

	if (t != NULL && t->known)
		return t;
	diff(&r->ndiffs, "task %" PRId32 ": events, but no task line or "
	    "snapshot announced it", tid);
	t = task_get(&r->m, tid);
	t->known = 1;
	return t;
}

static void
event_line(struct replay *r, json_t *o)
{
	const struct input *in = &r->in;
	const char *name, *phase;
	struct task *t;
	int64_t seq, count;
	char what[64];
	int call;

	if (!r->snapshot)
		bad(in, "an event before the snapshot line");
	t = event_task(r, need_tid(in, o, "tid", "event"));
	seq = need_int(in, o, "seq", "event");
	snprintf(what, sizeof(what), "event %" PRId32 ":%" PRId64, t->tid,
	    seq);
	if (seq < 1)
		bad(in, "%s: seq is not positive", what);
	name = need_str(in, o, "call", what);
	r->nevents++;
	if (strcmp(name, "lost") == 0) {
		if ((count = need_int(in, o, "count", what)) < 1)
			bad(in, "%s: lost marker of count %" PRId64, what,
			    count);
		if (seq_check(r, t, (uint64_t)seq) == 0) {
			advance(t, (uint64_t)(seq + count - 1));
			t->call = 0;
			t->wait = WAIT_NONE;
		}
		return;
	}
	phase = need_str(in, o, "phase", what);
	if (strcmp(phase, "begin") != 0 && strcmp(phase, "end") != 0)
		bad(in, "%s: phase \"%s\"", what, phase);
	call = call_of(name);
	if (seq_check(r, t, (uint64_t)seq) == -1)
		return;
	advance(t, (uint64_t)seq);
	if (strcmp(phase, "begin") == 0)
		event_begin(r, t, o, call, (uint64_t)seq, what);
	else
		event_end(r, t, o, call, (uint64_t)seq, what);
}

static void
snapshot_line(struct replay *r, json_t *o)
{
	if (r->snapshot)
		bad(&r->in, "a second snapshot line");
	load_state(&r->m, &r->in, json_object_get(o, "state"));
	r->e0 = r->m.sum_last_seq;
	r->snapshot = 1;
}

static void
trace_line(struct replay *r, json_t *o)
{
	json_t *type = json_object_get(o, "type");

	if (type != NULL) {
		if (!json_is_string(type))
			bad(&r->in, "\"type\" is not a string");
		if (strcmp(json_string_value(type), "snapshot") == 0)
			snapshot_line(r, o);
		else if (strcmp(json_string_value(type), "task") == 0)
			task_line(r, o);
		return;		/* problems and the like */
	}
	if (json_object_get(o, "call") != NULL)
		event_line(r, o);
}

static void
read_trace(struct replay *r, FILE *f)
{
	char *line = NULL;
	size_t size = 0;
	json_error_t err;
	json_t *o;

	while (getline(&line, &size, f) != -1) {
		r->in.line++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if ((o = json_loads(line, 0, &err)) == NULL)
			bad(&r->in, "not JSON: %s", err.text);
		if (!json_is_object(o))
			bad(&r->in, "not a JSON object");
		trace_line(r, o);
		json_decref(o);
	}
	free(line);
	if (ferror(f))
		bad(&r->in, "read error");
	r->in.line = 0;
	if (!r->snapshot)
		bad(&r->in, "no snapshot line");
}

/* --- comparing with the final state -------------------------------------- */

static const char *
end_name(const struct task *t)
{
	if (t->end == END_EXITED)
		return "exited";
	if (t->end == END_KILLED)
		return "killed";
	switch (t->wait) {
	case WAIT_BLOCKED:
		return "blocked";
	case WAIT_MAYBE:
		return "blocked or running";
	default:
		return "running";
	}
}

static int
state_matches(const struct task *rt, const struct task *ft)
{
	const char *rs = end_name(rt), *fs = end_name(ft);

	if (rt->end == END_LIVE && rt->wait == WAIT_MAYBE)
		return ft->end == END_LIVE;
	return strcmp(rs, fs) == 0;
}

/* "blocked (pvm_recv from 262149 tag 3 since 262147:92955)" */
static const char *
state_text(const struct task *t, char *buf, size_t len)
{
	if (t->end != END_LIVE || t->wait == WAIT_NONE)
		snprintf(buf, len, "%s", end_name(t));
	else
		snprintf(buf, len, "%s (%s from %" PRId64 " tag %" PRId64
		    " since %" PRId32 ":%" PRIu64 ")", end_name(t),
		    call_name(t->call), t->from, t->tag, t->tid, t->since);
	return buf;
}

static void
cmp_count(unsigned long *n, int32_t tid, const char *what, int64_t r,
    int64_t f)
{
	if (r != f)
		diff(n, "task %" PRId32 ": %s replayed %" PRId64 ", final %"
		    PRId64, tid, what, r, f);
}

static void
cmp_str(unsigned long *n, int32_t tid, const char *what, const char *r,
    const char *f)
{
	if (strcmp(r != NULL ? r : "", f != NULL ? f : "") != 0)
		diff(n, "task %" PRId32 ": %s replayed \"%s\", final \"%s\"",
		    tid, what, r != NULL ? r : "", f != NULL ? f : "");
}

/* The children, sorted and unique, as "[a,b]" into buf. */
static size_t
kids_sorted(const struct task *t, int32_t **out, char *buf, size_t len)
{
	int32_t *v = xcalloc(t->nkids + 1, sizeof(*v));
	size_t i, n = 0, off = 0;

	if (t->nkids > 0)
		memcpy(v, t->kids, t->nkids * sizeof(*v));
	qsort(v, t->nkids, sizeof(*v), cmp_tid);
	for (i = 0; i < t->nkids; i++)
		if (n == 0 || v[n - 1] != v[i])
			v[n++] = v[i];
	off = (size_t)snprintf(buf, len, "[");
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRId32,
		    i ? "," : "", v[i]);
	if (off < len)
		snprintf(buf + off, len - off, "]");
	*out = v;
	return n;
}

static void
cmp_kids(unsigned long *n, const struct task *rt, const struct task *ft)
{
	char rb[256], fb[256];
	int32_t *rv, *fv;
	size_t rn, fn;

	rn = kids_sorted(rt, &rv, rb, sizeof(rb));
	fn = kids_sorted(ft, &fv, fb, sizeof(fb));
	if (rn != fn || memcmp(rv, fv, rn * sizeof(*rv)) != 0)
		diff(n, "task %" PRId32 ": children replayed %s, final %s",
		    rt->tid, rb, fb);
	free(rv);
	free(fv);
}

static void
cmp_exit(unsigned long *n, const struct task *rt, const struct task *ft)
{
	if (!rt->has_exit && !ft->has_exit)
		return;
	if (rt->has_exit && ft->has_exit)
		cmp_count(n, rt->tid, "exit_status", rt->exit_status,
		    ft->exit_status);
	else if (ft->has_exit)
		diff(n, "task %" PRId32 ": exit_status replayed none, final %"
		    PRId64, rt->tid, ft->exit_status);
	else
		diff(n, "task %" PRId32 ": exit_status replayed %" PRId64
		    ", final none", rt->tid, rt->exit_status);
}

static void
cmp_task(unsigned long *n, const struct task *rt, const struct task *ft)
{
	char rb[128], fb[128];
	int32_t tid = rt->tid;

	cmp_str(n, tid, "host", rt->host, ft->host);
	cmp_count(n, tid, "pid", rt->pid, ft->pid);
	cmp_count(n, tid, "parent", rt->parent, ft->parent);
	cmp_str(n, tid, "program", rt->program, ft->program);
	if (!state_matches(rt, ft))
		diff(n, "task %" PRId32 ": state replayed %s, final %s", tid,
		    state_text(rt, rb, sizeof(rb)),
		    state_text(ft, fb, sizeof(fb)));
	cmp_exit(n, rt, ft);
	cmp_count(n, tid, "calls", rt->calls, ft->calls);
	cmp_count(n, tid, "sent.msgs", rt->sent_msgs, ft->sent_msgs);
	cmp_count(n, tid, "sent.bytes", rt->sent_bytes, ft->sent_bytes);
	cmp_count(n, tid, "received.msgs", rt->recv_msgs, ft->recv_msgs);
	cmp_count(n, tid, "received.bytes", rt->recv_bytes, ft->recv_bytes);
	cmp_count(n, tid, "last_seq", (int64_t)rt->last_seq,
	    (int64_t)ft->last_seq);
	if (!ft->has_pos)
		diff(n, "task %" PRId32 ": not in the final position", tid);
	else
		cmp_count(n, tid, "position", (int64_t)rt->last_seq,
		    (int64_t)ft->pos);
	cmp_kids(n, rt, ft);
}

/* The tids of both models, sorted, each once. */
static int32_t *
tids_union(const struct model *a, const struct model *b, size_t *np)
{
	int32_t *v = xcalloc(a->nt + b->nt + 1, sizeof(*v));
	size_t i, n = 0;

	for (i = 0; i < a->nt; i++)
		v[n++] = a->tv[i]->tid;
	for (i = 0; i < b->nt; i++)
		v[n++] = b->tv[i]->tid;
	qsort(v, n, sizeof(*v), cmp_tid);
	for (*np = 0, i = 0; i < n; i++)
		if (*np == 0 || v[*np - 1] != v[i])
			v[(*np)++] = v[i];
	return v;
}

static int
known(const struct task *t)
{
	return t != NULL && t->known;
}

static void
cmp_tasks(struct replay *r, const struct model *f, const int32_t *tids,
    size_t n)
{
	const struct task *rt, *ft;
	size_t i;

	for (i = 0; i < n; i++) {
		rt = task_find(&r->m, tids[i]);
		ft = task_find(f, tids[i]);
		if (known(rt) && known(ft))
			cmp_task(&r->ndiffs, rt, ft);
		else if (known(rt))
			diff(&r->ndiffs, "task %" PRId32 ": replayed, not in "
			    "the final state", tids[i]);
		else if (known(ft))
			diff(&r->ndiffs, "task %" PRId32 ": in the final "
			    "state, never announced in the trace", tids[i]);
	}
}

static int
cmp_qmsg(const void *a, const void *b)
{
	const struct qmsg *x = *(const struct qmsg * const *)a;
	const struct qmsg *y = *(const struct qmsg * const *)b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* t's queue as an array sorted by send id. */
static const struct qmsg **
queue_sorted(const struct task *t, size_t *np)
{
	const struct qmsg **v, *q;
	size_t n = 0;

	for (q = t != NULL ? t->qhead : NULL; q != NULL; q = q->next)
		n++;
	v = xcalloc(n + 1, sizeof(*v));
	for (n = 0, q = t != NULL ? t->qhead : NULL; q != NULL; q = q->next)
		v[n++] = q;
	qsort(v, n, sizeof(*v), cmp_qmsg);
	*np = n;
	return v;
}

static void
cmp_message(unsigned long *n, int32_t tid, const struct qmsg *r,
    const struct qmsg *f)
{
	if (r->tag != f->tag || r->ctx != f->ctx || r->bytes != f->bytes)
		diff(n, "queue of %" PRId32 ": message %" PRId32 ":%" PRIu64
		    " replayed tag %" PRId32 " ctx %" PRId32 " bytes %" PRId32
		    ", final tag %" PRId32 " ctx %" PRId32 " bytes %" PRId32,
		    tid, r->from, r->seq, r->tag, r->ctx, r->bytes, f->tag,
		    f->ctx, f->bytes);
}

static void
cmp_queue(unsigned long *n, int32_t tid, const struct task *rt,
    const struct task *ft)
{
	const struct qmsg **rv, **fv;
	size_t rn, fn, i = 0, j = 0;
	int c;

	rv = queue_sorted(rt, &rn);
	fv = queue_sorted(ft, &fn);
	while (i < rn || j < fn) {
		c = i == rn ? 1 : j == fn ? -1 : cmp_qmsg(&rv[i], &fv[j]);
		if (c == 0)
			cmp_message(n, tid, rv[i++], fv[j++]);
		else if (c < 0) {
			diff(n, "queue of %" PRId32 ": message %" PRId32 ":%"
			    PRIu64 " replayed, not in the final state", tid,
			    rv[i]->from, rv[i]->seq);
			i++;
		} else {
			diff(n, "queue of %" PRId32 ": message %" PRId32 ":%"
			    PRIu64 " in the final state, not replayed", tid,
			    fv[j]->from, fv[j]->seq);
			j++;
		}
	}
	free(rv);
	free(fv);
}

static int
cmp_pair(const void *a, const void *b)
{
	const struct pair *x = *(const struct pair * const *)a;
	const struct pair *y = *(const struct pair * const *)b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return (x->to > y->to) - (x->to < y->to);
}

static void
cmp_traffic_pair(unsigned long *n, const struct pair *rp,
    const struct pair *fp)
{
	const struct pair *p = rp != NULL ? rp : fp;
	int64_t rm = rp ? rp->msgs : 0, rb = rp ? rp->bytes : 0;
	int64_t fm = fp ? fp->msgs : 0, fb = fp ? fp->bytes : 0;

	if (rm != fm)
		diff(n, "traffic %" PRId32 " -> %" PRId32 ": msgs replayed %"
		    PRId64 ", final %" PRId64, p->from, p->to, rm, fm);
	if (rb != fb)
		diff(n, "traffic %" PRId32 " -> %" PRId32 ": bytes replayed %"
		    PRId64 ", final %" PRId64, p->from, p->to, rb, fb);
}

/* Every pair either side has; a missing one is zero. */
static void
cmp_traffic(struct replay *r, const struct model *f)
{
	struct pair **v;
	size_t i, n = 0;

	v = xcalloc(r->m.np + f->np + 1, sizeof(*v));
	for (i = 0; i < r->m.np; i++)
		v[n++] = r->m.pv[i];
	for (i = 0; i < f->np; i++)
		if (pair_find(&r->m, f->pv[i]->from, f->pv[i]->to) == NULL)
			v[n++] = f->pv[i];
	qsort(v, n, sizeof(*v), cmp_pair);
	for (i = 0; i < n; i++)
		cmp_traffic_pair(&r->ndiffs,
		    pair_find(&r->m, v[i]->from, v[i]->to),
		    pair_find(f, v[i]->from, v[i]->to));
	free(v);
}

static void
compare(struct replay *r, const struct model *f)
{
	int32_t *tids;
	size_t i, n;

	tids = tids_union(&r->m, f, &n);
	cmp_tasks(r, f, tids, n);
	for (i = 0; i < n; i++)
		cmp_queue(&r->ndiffs, tids[i], task_find(&r->m, tids[i]),
		    task_find(f, tids[i]));
	cmp_traffic(r, f);
	free(tids);
}

static size_t
count_known(const struct model *m)
{
	size_t i, n = 0;

	for (i = 0; i < m->nt; i++)
		if (m->tv[i]->known)
			n++;
	return n;
}

static void
load_final(struct model *f, const char *path)
{
	struct input in = { path, 0 };
	json_error_t err;
	json_t *st;

	if ((st = json_load_file(path, 0, &err)) == NULL) {
		in.line = (unsigned long)(err.line > 0 ? err.line : 0);
		bad(&in, "not JSON: %s", err.text);
	}
	load_state(f, &in, st);
	json_decref(st);
}

int
main(int argc, char **argv)
{
	struct replay r;
	struct model f;
	FILE *fp;

	if (argc != 3) {
		fprintf(stderr, "usage: replaystate TRACE FINAL\n");
		return 2;
	}
	memset(&r, 0, sizeof(r));
	memset(&f, 0, sizeof(f));
	r.in.path = argv[1];
	if ((fp = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "replaystate: %s: %s\n", argv[1],
		    strerror(errno));
		return 2;
	}
	read_trace(&r, fp);
	fclose(fp);
	load_final(&f, argv[2]);
	compare(&r, &f);
	if (r.ndiffs == 0)
		printf("replaystate: ok: %zu tasks, %" PRIu64 " events after "
		    "the snapshot, %" PRIu64 " messages\n", count_known(&r.m),
		    r.nevents, r.nmessages);
	printf("replaystate: snapshot at %" PRIu64 " of %" PRIu64 " events\n",
	    r.e0, f.sum_last_seq);
	if (r.ndiffs > MAX_DIFFS)
		fprintf(stderr, "replaystate: ... and %lu more\n",
		    r.ndiffs - MAX_DIFFS);
	if (r.ndiffs > 0)
		fprintf(stderr, "replaystate: %lu differences\n", r.ndiffs);
	model_free(&r.m);
	model_free(&f);
	return r.ndiffs > 0 ? 1 : 0;
}
