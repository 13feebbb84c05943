/*
 * The request language of the tool interface (issue 5, after OMIS): one
 * line of words that asks the coordinator for information (ps, queues,
 * frontier...), manipulates tasks (stop, continue, kill), or installs a
 * conditional request, an event-action breakpoint ("on enter pvm_send
 * tag 7 do stop *, notify").  doc/requests.md has the grammar.
 *
 * req_parse() turns the text into the tree below and req_format() turns
 * a tree back into its canonical text, so that a breakpoint can be
 * listed as it is understood.  The module has no state, does no I/O
 * and allocates nothing: it is linked into the unit tests and the fuzz
 * target as it is.
 */
#ifndef PMON_REQUEST_H
#define PMON_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define REQ_NAME_MAX	63	/* bytes of a host or group name */
#define REQ_OBJECTS_MAX	64	/* objects in one list */
#define REQ_ACTIONS_MAX	8	/* actions of one conditional request */
/* Room for req_format() of any request the parser accepts. */
#define REQ_TEXT_MAX	(48 * 1024)

enum req_kind {
	REQ_SNAPSHOT, REQ_PS, REQ_HOSTS, REQ_GROUPS, REQ_PROBLEMS,
	REQ_QUEUES, REQ_FRONTIER, REQ_TASKS, REQ_BREAKPOINTS,
	REQ_STOP, REQ_CONTINUE, REQ_KILL, REQ_FLUSH, REQ_STOPLINE,
	REQ_ON,
	REQ_ENABLE, REQ_DISABLE, REQ_DELETE, REQ_TOOLS, REQ_MAILBOX
};

/*
 * What an object names: one task; the task whose event triggered the
 * conditional request (only in its actions); the tasks on a host; the
 * members of a group; every task ("*", always alone in its list).
 */
enum req_obj_kind {
	REQ_OBJ_TASK, REQ_OBJ_SELF, REQ_OBJ_HOST, REQ_OBJ_GROUP, REQ_OBJ_ALL
};

struct req_object {
	enum req_obj_kind kind;
	int32_t		 tid;			/* REQ_OBJ_TASK */
	char		 name[REQ_NAME_MAX + 1]; /* REQ_OBJ_HOST, _GROUP */
	unsigned	 col;	/* 1-based column of the token, for
				   per-object status; 0 when implied */
};

struct req_objects {
	struct req_object v[REQ_OBJECTS_MAX];
	size_t		 n;
};

enum req_trig_kind {
	REQ_TRIG_ENTER, REQ_TRIG_LEAVE, REQ_TRIG_SPAWN, REQ_TRIG_EXIT,
	REQ_TRIG_RECV, REQ_TRIG_DEADLOCK, REQ_TRIG_RACE, REQ_TRIG_PROBLEM
};

/* The filters a trigger has (struct req_trigger's filters). */
#define REQ_F_PEER	0x1
#define REQ_F_TAG	0x2
#define REQ_F_CTX	0x4
#define REQ_F_GROUP	0x8
#define REQ_F_TASKS	0x10

struct req_trigger {
	enum req_trig_kind kind;
	int		 call;		/* enum pmon_call, 0 = any */
	unsigned	 filters;	/* REQ_F_* */
	struct req_objects tasks;	/* REQ_F_TASKS */
	int32_t		 peer, tag, ctx; /* REQ_F_PEER, _TAG, _CTX */
	char		 group[REQ_NAME_MAX + 1]; /* REQ_F_GROUP */
};

enum req_act_kind {
	REQ_ACT_STOP, REQ_ACT_CONTINUE, REQ_ACT_FLUSH, REQ_ACT_SNAPSHOT,
	REQ_ACT_NOTIFY, REQ_ACT_COUNT
};

/*
 * One action.  stop and continue have at least one object: written
 * without any, they name the triggering task (one REQ_OBJ_SELF with col
 * 0).  The other actions have none.
 */
struct req_action {
	enum req_act_kind kind;
	struct req_objects objects;
};

/*
 * A parsed request.  Only the fields of its kind are set; the parser
 * zeroes the rest.  It is large (about 50 KB): heap-allocate it where
 * the stack is small.
 */
struct req {
	enum req_kind	 kind;
	int		 force;		/* continue force */
	struct req_objects objects;	/* stop/continue/kill/queues/tasks;
					   queues and tasks: n 0 is all */
	int32_t		 tid;		/* frontier, stopline */
	uint64_t	 seq;
	uint32_t	 id;		/* enable/disable/delete */
	struct req_trigger trig;	/* on */
	struct req_action act[REQ_ACTIONS_MAX];
	size_t		 nact;
};

/* Parses one request; on error returns -1 with "column N: problem" in err. */
int	req_parse(const char *text, struct req *, char *err, size_t errsize);

/*
 * The canonical text of a request (for listing breakpoints): parse(format(r))
 * == r.  Returns its length, or -1 when it does not fit in size or r is
 * not a request the parser could have produced.
 */
int	req_format(const struct req *, char *buf, size_t size);

/* Whether two requests mean the same: the fields of their kind, not cols. */
int	req_equal(const struct req *, const struct req *);

/* The request's first word ("stop"), or "unknown". */
const char *req_kind_name(enum req_kind);

#endif
