/*
 * streamcheck: checks that a `pmon trace --json` file is a causally
 * ordered, complete event stream, and prints what it holds in text forms
 * a shell test can compare with a program's own counts.
 *
 *	streamcheck [-aglTu] [-B N] [-i N] [-k TID] [-c | -t | -e] FILE
 *
 *	-a	every send to a task of the stream must be matched by one of
 *		that task's receives (for programs that receive everything)
 *	-g	group state consistency (below)
 *	-i N	with -g: up to N events may be flagged "inconsistent" (pmon
 *		could not place them in a state they were possible in);
 *		their own group checks are skipped, their changes applied
 *	-T	corrected times ("tc", below)
 *	-B N	at least N messages go backwards in raw time "t": their
 *		receive's t is before their send's (to prove that a clock
 *		offset took effect); prints how many did on stderr
 *	-k TID	task TID was killed: its last call may stay open (up to
 *		16 times)
 *	-l	allow "lost" markers (default: a violation)
 *	-u	allow receives released as unmatched (default: a violation)
 *	-c	print "program call phase count" lines, sorted
 *	-t	print "tid program host events" lines, sorted by tid
 *	-e	print one line per event: "tid seq program call phase src
 *		dst tag group" (tids in decimal, "-" when absent)
 *
 * Input: the format of doc/events.md, one JSON object per line.  Task
 * lines ("type":"task", from `pmon trace --json --tasks`) give tid,
 * program, host, parent and spawn_seq.  An object with a "call" is an
 * event: id ("TID:SEQ"), tid, seq, program, host, call ("pvm_send" or
 * "lost"), phase ("begin"/"end"), and for messages src, dst (an int, or
 * an array for pvm_mcast and pvm_bcast), tag, match ("TID:SEQ"),
 * unmatched and msg.  Other objects are ignored.
 *
 * Checks, each a violation that makes the exit status 1:
 *	- every line is a JSON object; every event id is "TID:SEQ" of its
 *	  tid and seq, and unique;
 *	- per task, seq strictly increases in stream order, begin and end
 *	  alternate for the same call (only pvm_exit may stay open; after
 *	  a lost marker, a call may end unbegun or stay open), but for a
 *	  message handler's run ("handler"), which may begin inside another
 *	  call, and that call is open again at its end;
 *	- a task spawned by a traced task appears after its parent's spawn;
 *	- a pvm_recvinfo end that names the pvm_putinfo it read ("match")
 *	  comes after it; so does a signal begin the pvm_sendsig or pvm_kill
 *	  that sent it, naming this task and this signal, matched once; a
 *	  signal from the task's pvmd ("pvmd") names one (but with -u);
 *	- every receive end that got a message, and every handler begin,
 *	  names its send ("match"),
 *	  which came earlier in the stream, is a send (pvm_send, pvm_psend,
 *	  pvm_mcast begin; pvm_bcast end) naming this task as a destination
 *	  with the same tag, and the receive's src is the sender; no
 *	  (send, receiver) pair is matched twice.
 *
 * With -g, the stream must be state-consistent (VISTOP, paper 003 section
 * 3.3): replaying it in stream order, group membership changes at the end
 * of pvm_joingroup and pvm_lvgroup with rc >= 0, and
 *	- at each pvm_bcast end, the "dst" list is exactly the group's
 *	  members other than the sender (empty when the bcast failed);
 *	- each pvm_gsize end with rc >= 0 returns the group's size, one with
 *	  rc PvmNoGroup finds it empty;
 *	- a barrier (count c in "inst"; -1 or no "inst" means the group's
 *	  size when it begins) never ends before its episode has begun:
 *	  over the barriers on group g with count c, the i-th end (0-based,
 *	  in stream order, over all tasks) comes after at least
 *	  c * (floor(i / c) + 1) begins;
 *	- a join by a member, a leave by a non-member, a group call without
 *	  "group" and an event flagged "inconsistent" are violations.
 * A task that begins pvm_exit while a member stays one until pvmgs sees
 * it gone, which the stream cannot show: from then on it may or may not
 * be among a bcast's receivers (once left out, it is out) and may or may
 * not count in a gsize.  A line {"type":"task_end","tid":N} ends a task's
 * memberships at once.
 *
 * With -T, every event but a lost marker has an integer "tc" (corrected
 * time); a task's tc never decreases in stream order, and a receive end's
 * tc is never before the tc of the send it matched.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <pvm3.h>

#include "record.h"
#include "xalloc.h"

#define EV_MATCHED	0x1
#define EV_UNMATCHED	0x2
#define EV_LOST		0x4
#define EV_MSG		0x8

struct task {
	int32_t		 tid;
	char		 program[64];
	char		 host[64];
	int32_t		 parent;
	uint64_t	 spawn_seq;
	uint64_t	 last_seq;
	int		 open_call;	/* call of an unfinished begin, or 0 */
	int		 outer_call;	/* the call a handler runs in, or 0 */
	int		 in_handler;	/* a handler's begin, not its end */
	int		 lost;		/* a lost marker was seen */
	unsigned	 nevents;
	int		 bar_count;	/* count of the open barrier (-g) */
	int64_t		 last_tc;	/* -T */
	int		 has_tc;
};

/* A send event, kept so that receives can be checked against it. */
struct send {
	int32_t		 tid;
	uint64_t	 seq;
	int		 call;
	int32_t		 tag;
	int32_t		*dests;
	unsigned	 ndests;
	int32_t		*matched;	/* receivers that matched it */
	unsigned	 nmatched;
	int64_t		 t, tc;		/* raw and corrected times */
	int		 has_t, has_tc;
	struct send	*next;		/* hash chain */
};

struct count {
	char		 program[64];
	int		 call;
	int		 phase;
	unsigned	 n;
};

/* Every event id seen, for uniqueness and "came earlier" checks. */
struct seen {
	int32_t		 tid;
	uint64_t	 seq;
	struct seen	*next;
};

#define NBUCKETS	65536

static struct task	*tasks;
static size_t		 ntasks;
static struct send	*sends[NBUCKETS];
static struct seen	*seen[NBUCKETS];
static struct count	*counts;
static size_t		 ncounts;
static int		 opt_all, opt_lost, opt_unmatched, opt_groups,
			 opt_times;
static long		 opt_backwards = -1;	/* -B N, or -1 */
#define KILLED_MAX	16
static long		 killed[KILLED_MAX];	/* -k TID */
static int		 nkilled;
static unsigned long	 nmessages, nbackwards;	/* matched; of those, raw t
						   going backwards */
static const char	*path;
static unsigned long	 lineno;
static int		 violations;

static void
violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * -i N: up to N events may be flagged inconsistent (pmon could not place
 * them in a state they were possible in); their own group checks are
 * not held against the stream, the state they change is still applied.
 */
static long	 opt_inconsistent;
static long	 ninconsistent;
static long	 ngroup_events;	/* events with a group */
static int	 excused;	/* checking a flagged event */

static void
violation(const char *fmt, ...)
{
	va_list ap;

	if (excused)
		return;
	fprintf(stderr, "streamcheck: %s:%lu: ", path, lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	violations++;
}

static unsigned
bucket(int32_t tid, uint64_t seq)
{
	return ((uint32_t)tid * 2654435761u ^ (uint32_t)(seq * 40503u)) %
	    NBUCKETS;
}

/* --- JSON field access ------------------------------------------------- */

static int
get_int(json_t *o, const char *key, int64_t *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return -1;
	*v = json_integer_value(j);
	return 0;
}

static int64_t
int_or(json_t *o, const char *key, int64_t dflt)
{
	int64_t v;

	return get_int(o, key, &v) == 0 ? v : dflt;
}

static const char *
str_or(json_t *o, const char *key, const char *dflt)
{
	json_t *j = json_object_get(o, key);

	return json_is_string(j) ? json_string_value(j) : dflt;
}

static int
flag_bit(const char *name)
{
	static const struct { const char *name; int bit; } names[] = {
		{ "matched", EV_MATCHED }, { "unmatched", EV_UNMATCHED },
		{ "lost", EV_LOST }, { "msg", EV_MSG },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i].name, name) == 0)
			return names[i].bit;
	return 0;
}

/* The PMON_EV_* flags, from "flags" (a number or a list of names) and
 * the booleans "unmatched", "lost" and "msg". */
static int
event_flags(json_t *o)
{
	json_t *j = json_object_get(o, "flags"), *v;
	size_t i;
	int f = 0;

	if (json_is_integer(j))
		f = (int)json_integer_value(j);
	else if (json_is_array(j))
		json_array_foreach(j, i, v)
			if (json_is_string(v))
				f |= flag_bit(json_string_value(v));
	if (json_is_true(json_object_get(o, "unmatched")))
		f |= EV_UNMATCHED;
	if (json_is_true(json_object_get(o, "lost")))
		f |= EV_LOST;
	if (json_is_true(json_object_get(o, "msg")))
		f |= EV_MSG;
	return f;
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

/* The id of the matched send: 1 if there is one, 0 if none, -1 if bad. */
static int
event_match(json_t *o, int32_t *tid, uint64_t *seq)
{
	json_t *m = json_object_get(o, "match");

	if (m == NULL || json_is_null(m))
		return 0;
	if (!json_is_string(m) ||
	    parse_id(json_string_value(m), tid, seq) == -1)
		return -1;
	return 1;
}

static int
event_phase(json_t *o)
{
	json_t *j = json_object_get(o, "phase");

	if (json_is_integer(j))
		return (int)json_integer_value(j);
	if (json_is_string(j)) {
		if (strcmp(json_string_value(j), "begin") == 0)
			return PMON_BEGIN;
		if (strcmp(json_string_value(j), "end") == 0)
			return PMON_END;
	}
	return -1;
}

static int
event_call(json_t *o)
{
	const char *name = str_or(o, "call", NULL);
	char buf[64];

	if (name == NULL)
		return -1;
	if (strncmp(name, "pvm_", 4) != 0 && strcmp(name, "lost") != 0 &&
	    strcmp(name, "break") != 0 && strcmp(name, "handler") != 0 &&
	    strcmp(name, "signal") != 0) {
		snprintf(buf, sizeof(buf), "pvm_%s", name);
		name = buf;
	}
	return record_call_lookup(name);
}

/* --- tasks -------------------------------------------------------------- */

static struct task *
task_get(int32_t tid)
{
	size_t i;

	for (i = 0; i < ntasks; i++)
		if (tasks[i].tid == tid)
			return &tasks[i];
	tasks = xreallocarray(tasks, ntasks + 1, sizeof(*tasks));
	memset(&tasks[ntasks], 0, sizeof(*tasks));
	tasks[ntasks].tid = tid;
	strcpy(tasks[ntasks].program, "?");
	strcpy(tasks[ntasks].host, "?");
	return &tasks[ntasks++];
}

static const char *
basename_of(const char *s)
{
	const char *p = strrchr(s, '/');

	return p ? p + 1 : s;
}

/* Fills in what an object tells of its task; never overwrites with less. */
static void
task_learn(struct task *t, json_t *o)
{
	const char *s;
	json_t *nested = json_object_get(o, "task");

	if (json_is_object(nested))
		task_learn(t, nested);
	if ((s = str_or(o, "program", NULL)) != NULL && *s != '\0')
		snprintf(t->program, sizeof(t->program), "%s", basename_of(s));
	if ((s = str_or(o, "host", NULL)) != NULL && *s != '\0')
		snprintf(t->host, sizeof(t->host), "%s", s);
	if (json_object_get(o, "parent") != NULL)
		t->parent = (int32_t)int_or(o, "parent", 0);
	if (json_object_get(o, "spawn_seq") != NULL)
		t->spawn_seq = (uint64_t)int_or(o, "spawn_seq", 0);
}

static int
id_seen(int32_t tid, uint64_t seq)
{
	struct seen *s;

	for (s = seen[bucket(tid, seq)]; s != NULL; s = s->next)
		if (s->tid == tid && s->seq == seq)
			return 1;
	return 0;
}

static void
id_add(int32_t tid, uint64_t seq)
{
	struct seen *s = xcalloc(1, sizeof(*s));
	unsigned b = bucket(tid, seq);

	s->tid = tid;
	s->seq = seq;
	s->next = seen[b];
	seen[b] = s;
}

/* --- sends and receives --------------------------------------------------- */

static int
is_send(int call, int phase)
{
	switch (call) {
	case PMON_CALL_send:
	case PMON_CALL_psend:
	case PMON_CALL_mcast:
		return phase == PMON_BEGIN;
	case PMON_CALL_bcast:
		return phase == PMON_END;
	default:
		return 0;
	}
}

static int
is_recv(int call)
{
	return call == PMON_CALL_recv || call == PMON_CALL_trecv ||
	    call == PMON_CALL_nrecv || call == PMON_CALL_precv;
}

/* Did this receive end get a message?  The flags say so; without them,
 * the return value does (precv returns 0, the others a buffer id). */
static int
recv_got_message(int call, int flags, int64_t rc, int has_match)
{
	if (flags & (EV_MSG | EV_MATCHED | EV_UNMATCHED) || has_match)
		return 1;
	return call == PMON_CALL_precv ? rc == 0 : rc > 0;
}

static void
send_add(json_t *o, int32_t tid, uint64_t seq, int call)
{
	struct send *s = xcalloc(1, sizeof(*s));
	json_t *dst = json_object_get(o, "dst"), *v;
	unsigned b = bucket(tid, seq);
	size_t i;

	s->tid = tid;
	s->seq = seq;
	s->call = call;
	s->tag = (int32_t)int_or(o, "tag", -1);
	if (json_is_integer(dst)) {
		s->dests = xcalloc(1, sizeof(int32_t));
		s->dests[s->ndests++] = (int32_t)json_integer_value(dst);
	} else if (json_is_array(dst)) {
		s->dests = xcalloc(json_array_size(dst) + 1, sizeof(int32_t));
		json_array_foreach(dst, i, v)
			if (json_is_integer(v))
				s->dests[s->ndests++] =
				    (int32_t)json_integer_value(v);
	} else
		violation("%x:%" PRIu64 ": send without dst", tid, seq);
	if ((call == PMON_CALL_send || call == PMON_CALL_psend) !=
	    json_is_integer(dst))
		violation("%x:%" PRIu64 ": dst of the wrong type", tid, seq);
	if (int_or(o, "src", -1) != tid)
		violation("%x:%" PRIu64 ": send with src %d", tid, seq,
		    (int)int_or(o, "src", -1));
	s->has_t = get_int(o, "t", &s->t) == 0;
	s->has_tc = get_int(o, "tc", &s->tc) == 0;
	s->next = sends[b];
	sends[b] = s;
}

static struct send *
send_find(int32_t tid, uint64_t seq)
{
	struct send *s;

	for (s = sends[bucket(tid, seq)]; s != NULL; s = s->next)
		if (s->tid == tid && s->seq == seq)
			return s;
	return NULL;
}

static int
has_tid(const int32_t *v, unsigned n, int32_t tid)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (v[i] == tid)
			return 1;
	return 0;
}

/* A message's times: raw t may go backwards (clocks differ), tc not. */
static void
message_times(json_t *o, int32_t tid, uint64_t seq, const struct send *s)
{
	int64_t t, tc;

	nmessages++;
	if (s->has_t && get_int(o, "t", &t) == 0 && t < s->t)
		nbackwards++;
	if (opt_times && s->has_tc && get_int(o, "tc", &tc) == 0 &&
	    tc < s->tc)
		violation("%x:%" PRIu64 ": tc %" PRId64 " is before the tc %"
		    PRId64 " of its send %x:%" PRIu64, tid, seq, tc, s->tc,
		    s->tid, s->seq);
}

static void
recv_check(json_t *o, int32_t tid, uint64_t seq)
{
	int32_t mtid;
	uint64_t mseq;
	struct send *s;
	int m = event_match(o, &mtid, &mseq), tag;

	if (m == -1) {
		violation("%x:%" PRIu64 ": malformed match", tid, seq);
		return;
	}
	/*
	 * A message from a pvmd (a notify) has no send in the stream; one
	 * that reports an exit names the task's last event, earlier.
	 */
	if (int_or(o, "src", -1) < -1) {
		if (m == 1 && !id_seen(mtid, mseq))
			violation("%x:%" PRIu64 ": notify before the exit "
			    "%x:%" PRIu64 " it reports", tid, seq, mtid, mseq);
		return;
	}
	if (m == 0) {
		if (!(event_flags(o) & EV_UNMATCHED))
			violation("%x:%" PRIu64 ": receive end without match",
			    tid, seq);
		else if (!opt_unmatched)
			violation("%x:%" PRIu64 ": receive released unmatched",
			    tid, seq);
		return;
	}
	if (!id_seen(mtid, mseq)) {
		violation("%x:%" PRIu64 ": matched send %x:%" PRIu64
		    " has not come before it", tid, seq, mtid, mseq);
		return;
	}
	if ((s = send_find(mtid, mseq)) == NULL) {
		violation("%x:%" PRIu64 ": matched event %x:%" PRIu64
		    " is not a send", tid, seq, mtid, mseq);
		return;
	}
	if (!has_tid(s->dests, s->ndests, tid))
		violation("%x:%" PRIu64 ": matched send %x:%" PRIu64
		    " was not sent to this task", tid, seq, mtid, mseq);
	if (int_or(o, "src", -1) != mtid)
		violation("%x:%" PRIu64 ": src %d, matched send is from %d",
		    tid, seq, (int)int_or(o, "src", -1), mtid);
	if (int_or(o, "dst", -1) != tid)
		violation("%x:%" PRIu64 ": receive with dst %d", tid, seq,
		    (int)int_or(o, "dst", -1));
	tag = (int)int_or(o, "tag", -2);
	if (tag != s->tag)
		violation("%x:%" PRIu64 ": tag %d, matched send has tag %d",
		    tid, seq, tag, s->tag);
	if (has_tid(s->matched, s->nmatched, tid))
		violation("%x:%" PRIu64 ": send %x:%" PRIu64
		    " matched twice by this task", tid, seq, mtid, mseq);
	s->matched = xreallocarray(s->matched, s->nmatched + 1,
	    sizeof(int32_t));
	s->matched[s->nmatched++] = tid;
	message_times(o, tid, seq, s);
}

/* --- signals --------------------------------------------------------------- */

/* A pvm_sendsig or pvm_kill begin. */
struct sigsend {
	int32_t		 tid;
	uint64_t	 seq;
	int32_t		 victim;
	int		 signo;
	int		 matched;
};
static struct sigsend	*sigsends;
static size_t		 nsigsends;

static void
sigsend_add(json_t *o, int32_t tid, uint64_t seq)
{
	struct sigsend *g;

	sigsends = xreallocarray(sigsends, nsigsends + 1, sizeof(*sigsends));
	g = &sigsends[nsigsends++];
	g->tid = tid;
	g->seq = seq;
	g->victim = (int32_t)int_or(o, "peer", -1);
	g->signo = (int)int_or(o, "signal", -1);
	g->matched = 0;
}

/*
 * A signal its pvmd sent names the pvm_sendsig (pvm_kill) that sent it:
 * earlier in the stream, to this task, of this signal, matched once.
 */
static void
signal_check(json_t *o, int32_t tid, uint64_t seq)
{
	int32_t mtid;
	uint64_t mseq;
	int m = event_match(o, &mtid, &mseq);
	size_t i;

	if (m == 0) {
		if (json_is_true(json_object_get(o, "pvmd")) && !opt_unmatched)
			violation("%x:%" PRIu64 ": a signal from the pvmd "
			    "without its pvm_sendsig", tid, seq);
		return;
	}
	for (i = 0; i < nsigsends; i++)
		if (sigsends[i].tid == mtid && sigsends[i].seq == mseq)
			break;
	if (m == -1 || i == nsigsends) {
		violation("%x:%" PRIu64 ": signal matched to %x:%" PRIu64
		    ", no pvm_sendsig or pvm_kill before it", tid, seq, mtid,
		    mseq);
		return;
	}
	if (sigsends[i].victim != tid || sigsends[i].signo !=
	    (int)int_or(o, "signal", -2) || sigsends[i].matched++)
		violation("%x:%" PRIu64 ": signal %d matched to %x:%" PRIu64
		    " (signal %d to %x, matched %d times before)", tid, seq,
		    (int)int_or(o, "signal", -2), mtid, mseq,
		    sigsends[i].signo, sigsends[i].victim,
		    sigsends[i].matched - 1);
}

/* --- groups (-g) ---------------------------------------------------------- */

struct member {
	int32_t		 tid;
	int		 leaving;	/* began pvm_exit: pvmgs may drop it */
};

/* Barriers on one group with one count. */
struct episodes {
	int		 count;
	unsigned long	 nbegin;
	unsigned long	 nend;
};

struct group {
	char		 name[256];
	struct member	*members;
	unsigned	 nmembers;
	struct episodes	*eps;
	unsigned	 neps;
};

static struct group	*groups;
static size_t		 ngroups;

static struct group *
group_get(const char *name)
{
	size_t i;

	for (i = 0; i < ngroups; i++)
		if (strcmp(groups[i].name, name) == 0)
			return &groups[i];
	groups = xreallocarray(groups, ngroups + 1, sizeof(*groups));
	memset(&groups[ngroups], 0, sizeof(*groups));
	snprintf(groups[ngroups].name, sizeof(groups[ngroups].name), "%s",
	    name);
	return &groups[ngroups++];
}

static int
member_find(const struct group *g, int32_t tid)
{
	unsigned i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i].tid == tid)
			return (int)i;
	return -1;
}

static void
member_add(struct group *g, int32_t tid)
{
	g->members = xreallocarray(g->members, g->nmembers + 1,
	    sizeof(*g->members));
	g->members[g->nmembers].tid = tid;
	g->members[g->nmembers++].leaving = 0;
}

static void
member_del(struct group *g, unsigned i)
{
	g->members[i] = g->members[--g->nmembers];
}

/* Members that are surely in the group (not leaving with their task). */
static unsigned
group_sure(const struct group *g)
{
	unsigned i, n = 0;

	for (i = 0; i < g->nmembers; i++)
		n += !g->members[i].leaving;
	return n;
}

/* The task began pvm_exit (leaving = 1) or is gone (0: out at once). */
static void
groups_task_exit(int32_t tid, int leaving)
{
	size_t i;
	int m;

	for (i = 0; i < ngroups; i++) {
		if ((m = member_find(&groups[i], tid)) == -1)
			continue;
		if (leaving)
			groups[i].members[m].leaving = 1;
		else
			member_del(&groups[i], (unsigned)m);
	}
}

static struct episodes *
episodes_get(struct group *g, int count)
{
	unsigned i;

	for (i = 0; i < g->neps; i++)
		if (g->eps[i].count == count)
			return &g->eps[i];
	g->eps = xreallocarray(g->eps, g->neps + 1, sizeof(*g->eps));
	memset(&g->eps[g->neps], 0, sizeof(*g->eps));
	g->eps[g->neps].count = count;
	return &g->eps[g->neps++];
}

static void
join_check(struct task *t, uint64_t seq, struct group *g, int64_t rc)
{
	if (rc < 0)
		return;
	if (member_find(g, t->tid) != -1)
		violation("%x:%" PRIu64 ": joins %s, of which it is a member",
		    t->tid, seq, g->name);
	else
		member_add(g, t->tid);
}

static void
leave_check(struct task *t, uint64_t seq, struct group *g, int64_t rc)
{
	int m;

	if (rc < 0)
		return;
	if ((m = member_find(g, t->tid)) == -1)
		violation("%x:%" PRIu64 ": leaves %s, of which it is not a "
		    "member", t->tid, seq, g->name);
	else
		member_del(g, (unsigned)m);
}

/*
 * The receivers of a bcast end are the members but the sender.  A member
 * whose task is exiting may be missing: pvmgs had dropped it, so it is
 * out from now on.
 */
static void
bcast_check(json_t *o, struct task *t, uint64_t seq, struct group *g)
{
	json_t *dst = json_object_get(o, "dst"), *v;
	size_t i, j;
	int in;

	if (!json_is_array(dst)) {
		violation("%x:%" PRIu64 ": bcast end without a dst list",
		    t->tid, seq);
		return;
	}
	json_array_foreach(dst, i, v) {
		if (!json_is_integer(v))
			continue;
		if (json_integer_value(v) == t->tid)
			violation("%x:%" PRIu64 ": bcast to its own sender",
			    t->tid, seq);
		else if (member_find(g, (int32_t)json_integer_value(v)) == -1)
			violation("%x:%" PRIu64 ": bcast to %x, not a member "
			    "of %s", t->tid, seq,
			    (int32_t)json_integer_value(v), g->name);
	}
	for (i = g->nmembers; i-- > 0; ) {
		if (g->members[i].tid == t->tid)
			continue;
		in = 0;
		json_array_foreach(dst, j, v)
			if (json_is_integer(v) &&
			    json_integer_value(v) == g->members[i].tid)
				in = 1;
		if (in)
			continue;
		if (g->members[i].leaving)
			member_del(g, (unsigned)i);
		else
			violation("%x:%" PRIu64 ": bcast missed %x, a member "
			    "of %s", t->tid, seq, g->members[i].tid, g->name);
	}
}

static void
gsize_check(struct task *t, uint64_t seq, struct group *g, int64_t rc)
{
	unsigned sure = group_sure(g);

	if (rc == PvmNoGroup && sure > 0)
		violation("%x:%" PRIu64 ": gsize %s found no group, the group "
		    "has %u members", t->tid, seq, g->name, sure);
	else if (rc >= 0 && (rc < sure || rc > g->nmembers))
		violation("%x:%" PRIu64 ": gsize %s returned %" PRId64 ", the "
		    "group has %u members%s", t->tid, seq, g->name, rc,
		    g->nmembers, sure < g->nmembers ? " (some leaving)" : "");
}

/*
 * Barriers with count c on a group: the i-th end needs the entries of
 * its whole episode, so at least c * (floor(i / c) + 1) begins.  A count
 * of -1 is the group's size when the barrier begins.
 */
static void
barrier_begin(json_t *o, struct task *t, uint64_t seq, struct group *g)
{
	int64_t c;

	(void)seq;
	t->bar_count = 0;
	if (get_int(o, "inst", &c) == -1 || c == -1)
		c = g->nmembers;
	if (c <= 0 || c > INT32_MAX)
		return;
	t->bar_count = (int)c;
	episodes_get(g, (int)c)->nbegin++;
}

static void
barrier_end(struct task *t, uint64_t seq, struct group *g, int64_t rc)
{
	struct episodes *e;
	unsigned long need;

	if (t->bar_count <= 0 || rc < 0)
		return;
	e = episodes_get(g, t->bar_count);
	need = (unsigned long)e->count * (e->nend / e->count + 1);
	if (e->nbegin < need)
		violation("%x:%" PRIu64 ": barrier %s (count %d) ends after "
		    "%lu entries, its episode has %lu", t->tid, seq, g->name,
		    e->count, e->nbegin, need);
	e->nend++;
}

static int
is_group_call(int call)
{
	return call == PMON_CALL_joingroup || call == PMON_CALL_lvgroup ||
	    call == PMON_CALL_bcast || call == PMON_CALL_gsize ||
	    call == PMON_CALL_barrier;
}

static void	group_event_check(json_t *, struct task *, uint64_t, int,
		    int);

static void
group_event(json_t *o, struct task *t, uint64_t seq, int call, int phase)
{
	if (json_object_get(o, "group") != NULL)
		ngroup_events++;
	if (json_is_true(json_object_get(o, "inconsistent"))) {
		if (++ninconsistent > opt_inconsistent)
			violation("%x:%" PRIu64 ": released inconsistent",
			    t->tid, seq);
		else
			excused = 1;
	}
	group_event_check(o, t, seq, call, phase);
	excused = 0;
}

static void
group_event_check(json_t *o, struct task *t, uint64_t seq, int call,
    int phase)
{
	const char *name = str_or(o, "group", NULL);
	int64_t rc = int_or(o, "rc", -1);
	struct group *g;

	if (call == PMON_CALL_exit && phase == PMON_BEGIN)
		groups_task_exit(t->tid, 1);
	if (!is_group_call(call))
		return;
	if (name == NULL || *name == '\0') {
		violation("%x:%" PRIu64 ": %s without a group", t->tid, seq,
		    record_call_name(call));
		return;
	}
	g = group_get(name);
	if (call == PMON_CALL_barrier && phase == PMON_BEGIN)
		barrier_begin(o, t, seq, g);
	if (phase != PMON_END)
		return;
	switch (call) {
	case PMON_CALL_joingroup: join_check(t, seq, g, rc); break;
	case PMON_CALL_lvgroup: leave_check(t, seq, g, rc); break;
	case PMON_CALL_bcast: bcast_check(o, t, seq, g); break;
	case PMON_CALL_gsize: gsize_check(t, seq, g, rc); break;
	case PMON_CALL_barrier: barrier_end(t, seq, g, rc); break;
	}
}

/* --- corrected times (-T) ------------------------------------------------- */

static void
time_check(json_t *o, struct task *t, uint64_t seq)
{
	int64_t tc;

	if (get_int(o, "tc", &tc) == -1) {
		violation("%x:%" PRIu64 ": no tc", t->tid, seq);
		return;
	}
	if (t->has_tc && tc < t->last_tc)
		violation("%x:%" PRIu64 ": tc %" PRId64 " is before the task's "
		    "previous tc %" PRId64, t->tid, seq, tc, t->last_tc);
	t->last_tc = tc;
	t->has_tc = 1;
}

/* --- events ------------------------------------------------------------- */

static void
count_event(const struct task *t, int call, int phase)
{
	size_t i;

	for (i = 0; i < ncounts; i++)
		if (counts[i].call == call && counts[i].phase == phase &&
		    strcmp(counts[i].program, t->program) == 0) {
			counts[i].n++;
			return;
		}
	counts = xreallocarray(counts, ncounts + 1, sizeof(*counts));
	memset(&counts[ncounts], 0, sizeof(*counts));
	snprintf(counts[ncounts].program, sizeof(counts[ncounts].program),
	    "%s", t->program);
	counts[ncounts].call = call;
	counts[ncounts].phase = phase;
	counts[ncounts++].n = 1;
}

/* Begin and end of one call alternate: the monitor records outermost
 * calls only, so nothing nests. */
/* open_call after a lost marker: the lost records may have begun or
 * ended a call. */
#define OPEN_UNKNOWN	(-1)

static void
pairing_check(struct task *t, uint64_t seq, int call, int phase)
{
	if (t->open_call == OPEN_UNKNOWN) {
		/* After lost records: a begin or the end of any call. */
		t->open_call = phase == PMON_BEGIN ? call : 0;
		return;
	}
	/* A handler's calls come between its begin and end, as at top. */
	if (call == PMON_CALL_HANDLER && phase == PMON_BEGIN) {
		if (t->in_handler)
			violation("%x:%" PRIu64 ": a handler begins inside "
			    "another", t->tid, seq);
		t->in_handler = 1;
		t->outer_call = t->open_call;
		t->open_call = 0;
		return;
	}
	if (call == PMON_CALL_HANDLER) {
		if (!t->in_handler || t->open_call != 0)
			violation("%x:%" PRIu64 ": handler ends, but %s was "
			    "open", t->tid, seq, t->in_handler ?
			    record_call_name(t->open_call) : "no handler");
		t->in_handler = 0;
		t->open_call = t->outer_call;
		t->outer_call = 0;
		return;
	}
	if (phase == PMON_BEGIN) {
		if (t->open_call != 0)
			violation("%x:%" PRIu64 ": %s begins inside %s", t->tid,
			    seq, record_call_name(call),
			    record_call_name(t->open_call));
		t->open_call = call;
	} else {
		if (t->open_call != call)
			violation("%x:%" PRIu64 ": %s ends, but %s was open",
			    t->tid, seq, record_call_name(call),
			    t->open_call ? record_call_name(t->open_call) :
			    "nothing");
		t->open_call = 0;
	}
}

/* A spawned task's first event follows its parent's spawn begin.  Only
 * a monitored parent passes spawn_seq, so that begin is in the stream. */
static void
spawn_check(const struct task *t, uint64_t seq)
{
	if (t->nevents != 1 || t->spawn_seq == 0 || t->parent <= 0)
		return;
	if (!id_seen(t->parent, t->spawn_seq))
		violation("%x:%" PRIu64 ": first event before its parent's "
		    "spawn %x:%" PRIu64, t->tid, seq, t->parent, t->spawn_seq);
}

static int print_events;

/* Ids: "TID:SEQ" of the event itself, unique; per task, seq runs 1, 2,
 * 3, ... in stream order (after a lost marker it may jump forward). */
static int
id_check(json_t *o, struct task *t, uint64_t seq)
{
	int32_t itid;
	uint64_t iseq;
	const char *id = str_or(o, "id", "");

	if (parse_id(id, &itid, &iseq) == -1 || itid != t->tid || iseq != seq)
		violation("%x:%" PRIu64 ": id \"%s\" is not TID:SEQ", t->tid,
		    seq, id);
	if (id_seen(t->tid, seq)) {
		violation("%x:%" PRIu64 ": duplicate event id", t->tid, seq);
		return -1;
	}
	if (seq <= t->last_seq || (!t->lost && seq != t->last_seq + 1))
		violation("%x:%" PRIu64 ": seq follows %" PRIu64, t->tid, seq,
		    t->last_seq);
	id_add(t->tid, seq);
	t->last_seq = seq;
	return 0;
}

static void
print_tids(json_t *j)
{
	json_t *v;
	size_t i;

	if (json_is_integer(j))
		printf(" %d", (int)json_integer_value(j));
	else if (json_is_array(j)) {
		putchar(' ');
		json_array_foreach(j, i, v)
			printf("%s%d", i ? "," : "", (int)json_integer_value(v));
		if (json_array_size(j) == 0)
			putchar('-');
	} else
		printf(" -");
}

/* "tid seq program call phase src dst tag group" */
static void
print_event(json_t *o, const struct task *t, uint64_t seq, int call,
    int phase)
{
	const char *group = str_or(o, "group", "");

	printf("%x %" PRIu64 " %s %s %s", t->tid, seq, t->program,
	    record_call_name(call), phase == PMON_BEGIN ? "begin" : "end");
	print_tids(json_object_get(o, "src"));
	print_tids(json_object_get(o, "dst"));
	printf(" %d %s\n", (int)int_or(o, "tag", -1), *group ? group : "-");
}

static void
event(json_t *o)
{
	int64_t tid, seq;
	int call, phase, flags;
	struct task *t;
	int32_t mtid;
	uint64_t mseq;

	if (get_int(o, "tid", &tid) == -1 || get_int(o, "seq", &seq) == -1 ||
	    seq < 1) {
		violation("event without integer tid and seq");
		return;
	}
	call = event_call(o);
	phase = event_phase(o);
	flags = event_flags(o);
	t = task_get((int32_t)tid);
	task_learn(t, o);
	if (call == PMON_CALL_LOST || flags & EV_LOST) {
		if (!opt_lost)
			violation("%x: records lost", t->tid);
		t->lost = 1;
		t->open_call = OPEN_UNKNOWN;
		id_check(o, t, (uint64_t)seq);
		return;
	}
	if (call <= 0 || (phase != PMON_BEGIN && phase != PMON_END)) {
		violation("%x:%" PRId64 ": unknown call or phase", t->tid, seq);
		return;
	}
	if (id_check(o, t, (uint64_t)seq) == -1)
		return;
	t->nevents++;
	spawn_check(t, (uint64_t)seq);
	/* A task stopped at a breakpoint: between calls, not a call. */
	if (call == PMON_CALL_BREAK)
		return;
	pairing_check(t, (uint64_t)seq, call, phase);
	if (opt_times)
		time_check(o, t, (uint64_t)seq);
	if (opt_groups)
		group_event(o, t, (uint64_t)seq, call, phase);
	if (is_send(call, phase))
		send_add(o, t->tid, (uint64_t)seq, call);
	if ((is_recv(call) && phase == PMON_END &&
	    recv_got_message(call, flags, int_or(o, "rc", -1),
	    event_match(o, &(int32_t){ 0 }, &(uint64_t){ 0 }) != 0)) ||
	    (call == PMON_CALL_HANDLER && phase == PMON_BEGIN))
		recv_check(o, t->tid, (uint64_t)seq);
	if ((call == PMON_CALL_sendsig || call == PMON_CALL_kill) &&
	    phase == PMON_BEGIN)
		sigsend_add(o, t->tid, (uint64_t)seq);
	if (call == PMON_CALL_SIGNAL && phase == PMON_BEGIN)
		signal_check(o, t->tid, (uint64_t)seq);
	/* A pvm_recvinfo that names the pvm_putinfo it read: earlier. */
	if (call == PMON_CALL_recvinfo && phase == PMON_END &&
	    event_match(o, &mtid, &mseq) == 1 && !id_seen(mtid, mseq))
		violation("%x:%" PRId64 ": pvm_recvinfo before the put "
		    "%x:%" PRIu64 " it read", t->tid, seq, mtid, mseq);
	count_event(t, call, phase);
	if (print_events)
		print_event(o, t, (uint64_t)seq, call, phase);
}

static void
object(json_t *o)
{
	const char *type = str_or(o, "type", NULL);
	int64_t tid;

	if (type == NULL)
		type = json_object_get(o, "call") ? "event" :
		    json_object_get(o, "program") ? "task" : "other";
	if (strcmp(type, "event") == 0)
		event(o);
	else if (strcmp(type, "task") == 0) {
		if (get_int(o, "tid", &tid) == -1)
			violation("task without integer tid");
		else
			task_learn(task_get((int32_t)tid), o);
	} else if (strcmp(type, "task_end") == 0) {
		if (get_int(o, "tid", &tid) == -1)
			violation("task_end without integer tid");
		else
			groups_task_exit((int32_t)tid, 0);
	}
}

/* --- end of stream -------------------------------------------------------- */

static int
traced(int32_t tid)
{
	size_t i;

	for (i = 0; i < ntasks; i++)
		if (tasks[i].tid == tid && tasks[i].nevents > 0)
			return 1;
	return 0;
}

static int
was_killed(long tid)
{
	int i;

	for (i = 0; i < nkilled; i++)
		if (killed[i] == tid)
			return 1;
	return 0;
}

static void
final_checks(void)
{
	struct send *s;
	size_t i;
	unsigned b, d;

	for (i = 0; i < ntasks; i++)
		if (tasks[i].open_call != 0 &&
		    tasks[i].open_call != OPEN_UNKNOWN &&
		    tasks[i].open_call != PMON_CALL_exit &&
		    !was_killed(tasks[i].tid))
			violation("%x: %s began and never ended", tasks[i].tid,
			    record_call_name(tasks[i].open_call));
	if (opt_backwards >= 0) {
		fprintf(stderr, "streamcheck: %s: %lu of %lu messages go "
		    "backwards in t\n", path, nbackwards, nmessages);
		if (nbackwards < (unsigned long)opt_backwards)
			violation("only %lu messages go backwards in t, "
			    "expected at least %ld", nbackwards, opt_backwards);
	}
	if (!opt_all)
		return;
	for (b = 0; b < NBUCKETS; b++)
		for (s = sends[b]; s != NULL; s = s->next)
			for (d = 0; d < s->ndests; d++)
				if (traced(s->dests[d]) && !has_tid(s->matched,
				    s->nmatched, s->dests[d]))
					violation("send %x:%" PRIu64 " to %x "
					    "was never matched", s->tid, s->seq,
					    s->dests[d]);
}

static int
count_cmp(const void *a, const void *b)
{
	const struct count *x = a, *y = b;
	int c = strcmp(x->program, y->program);

	if (c == 0)
		c = strcmp(record_call_name(x->call), record_call_name(y->call));
	return c ? c : x->phase - y->phase;
}

static int
task_cmp(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void
print_counts(void)
{
	size_t i;

	qsort(counts, ncounts, sizeof(*counts), count_cmp);
	for (i = 0; i < ncounts; i++)
		printf("%s %s %s %u\n", counts[i].program,
		    record_call_name(counts[i].call),
		    counts[i].phase == PMON_BEGIN ? "begin" : "end",
		    counts[i].n);
}

static void
print_tasks(void)
{
	size_t i;

	qsort(tasks, ntasks, sizeof(*tasks), task_cmp);
	for (i = 0; i < ntasks; i++)
		printf("%x %s %s %u\n", tasks[i].tid, tasks[i].program,
		    tasks[i].host, tasks[i].nevents);
}

static int
read_stream(FILE *f)
{
	char *line = NULL;
	size_t size = 0;
	json_error_t err;
	json_t *o;

	while (getline(&line, &size, f) != -1) {
		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if ((o = json_loads(line, 0, &err)) == NULL ||
		    !json_is_object(o))
			violation("not a JSON object: %s", o ? "" : err.text);
		else
			object(o);
		json_decref(o);
	}
	free(line);
	return ferror(f) ? -1 : 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: streamcheck [-aglTu] [-B N] [-i N] [-k TID] "
	    "[-c | -t | -e] FILE\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "counts", no_argument, NULL, 'c' },
		{ "tasks", no_argument, NULL, 't' },
		{ "events", no_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	int ch, mode = 0;
	char *end;
	FILE *f;

	while ((ch = getopt_long(argc, argv, "aB:cegi:k:tTlu", longopts,
	    NULL)) != -1)
		switch (ch) {
		case 'k':
			if (nkilled == KILLED_MAX)
				usage();
			killed[nkilled++] = strtol(optarg, &end, 0);
			if (*optarg == '\0' || *end != '\0')
				usage();
			break;
		case 'i':
			opt_inconsistent = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' ||
			    opt_inconsistent < 0)
				usage();
			break;
		case 'a': opt_all = 1; break;
		case 'g': opt_groups = 1; break;
		case 'T': opt_times = 1; break;
		case 'l': opt_lost = 1; break;
		case 'u': opt_unmatched = 1; break;
		case 'B':
			opt_backwards = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || opt_backwards < 0)
				usage();
			break;
		case 'c': case 't': case 'e': mode = ch; break;
		default: usage();
		}
	if (optind != argc - 1)
		usage();
	path = argv[optind];
	print_events = mode == 'e';
	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "streamcheck: %s: %s\n", path, strerror(errno));
		return 2;
	}
	if (read_stream(f) == -1) {
		fprintf(stderr, "streamcheck: %s: read error\n", path);
		return 2;
	}
	fclose(f);
	final_checks();
	if (lineno == 0)
		violation("empty stream");
	if (ninconsistent > 0)
		fprintf(stderr, "streamcheck: %s: %ld of %ld group events "
		    "flagged inconsistent\n", path, ninconsistent,
		    ngroup_events);
	if (violations > 0) {
		fprintf(stderr, "streamcheck: %s: %d violations\n", path,
		    violations);
		return 1;
	}
	if (mode == 'c')
		print_counts();
	else if (mode == 't')
		print_tasks();
	return 0;
}
