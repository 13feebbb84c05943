/*
 * The wrappers: one exported pvm_* function for every public entry point
 * of libpvm3 and libgpvm3 (the PMON_CALLS list in pmon_calls.h).  Each fills
 * the record fields that matter for its call; the calls whose only
 * interesting field is the return value share the WRAP macro.
 *
 * Everything a wrapper asks libpvm3 for its record (context, buffer
 * sizes, message info) goes to the real functions and happens inside the
 * call (depth > 0), so it is never recorded itself.
 */
#include <limits.h>
#include <signal.h>
#include <string.h>

#include "preload.h"

/* Bytes of nitem items of size bytes, saturated to an i32. */
static int32_t
nbytes(int nitem, size_t size)
{
	long long n = (long long)nitem * (long long)size;

	if (n < 0)
		return -1;
	return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

/* Size of one item of a pvm_psend/pvm_reduce datatype, 0 if unknown. */
static size_t
dtsize(int dt)
{
	switch (dt) {
	case PVM_BYTE:	return 1;
	case PVM_SHORT:
	case PVM_USHORT: return sizeof(short);
	case PVM_INT:
	case PVM_UINT:	return sizeof(int);
	case PVM_LONG:
	case PVM_ULONG:	return sizeof(long);
	case PVM_FLOAT:	return sizeof(float);
	case PVM_CPLX:	return 2 * sizeof(float);
	case PVM_DOUBLE: return sizeof(double);
	case PVM_DCPLX:	return 2 * sizeof(double);
	default:	return 0;
	}
}

static int32_t
dtbytes(int count, int dt)
{
	size_t sz = dtsize(dt);

	return sz == 0 ? -1 : nbytes(count, sz);
}

static int
cur_ctx(void)
{
	__typeof__(&pvm_getcontext) real = REAL(getcontext);

	return real != NULL ? real() : -1;
}

static int
buf_bytes(int bufid)
{
	__typeof__(&pvm_bufinfo) real = REAL(bufinfo);
	int len, tag, tid;

	if (real == NULL || bufid <= 0 || real(bufid, &len, &tag, &tid) < 0)
		return -1;
	return len;
}

static int
sbuf_bytes(void)
{
	__typeof__(&pvm_getsbuf) real = REAL(getsbuf);

	return real != NULL ? buf_bytes(real()) : -1;
}

/* The outgoing message of a send: destination, tag, context, size. */
static void
fill_send(struct pcall *c, int tid, int tag)
{
	c->r.peer = tid;
	c->r.tag = tag;
	c->r.ctx = cur_ctx();
	c->r.bytes = sbuf_bytes();
}

/*
 * The id a recorded send gives its message (record.h, RECORD_MSGID):
 * the wait id of the send buffer, which PVM carries to the receiver, is
 * set to the number of the send's begin record for the real call and
 * given back after it, so the application sees its buffer unchanged.  A
 * wait id the application set itself is left alone.  fill_send_id reads
 * the buffer's info once, for the record's size and for the id.
 */
struct msg_id {
	int		 mid;		/* 0: no id */
	struct pvmminfo	 mi;		/* the buffer's, as the call found it */
};

/* Buffer mid's size into the record, and whether it can carry an id. */
static void
msg_id_take(struct pcall *c, int mid, struct msg_id *m)
{
	__typeof__(&pvm_getminfo) get = REAL(getminfo);

	if (get == NULL || (m->mid = mid) <= 0 || get(m->mid, &m->mi) < 0) {
		m->mid = 0;
		return;
	}
	c->r.bytes = m->mi.len;
	if (m->mi.wid != 0)
		m->mid = 0;
}

static void
fill_send_id(struct pcall *c, int tid, int tag, struct msg_id *m)
{
	__typeof__(&pvm_getsbuf) sbuf = REAL(getsbuf);

	c->r.peer = tid;
	c->r.tag = tag;
	c->r.ctx = cur_ctx();
	msg_id_take(c, sbuf != NULL ? sbuf() : 0, m);
}

/* After the begin record: the id is its number. */
static void
msg_id_set(const struct pcall *c, struct msg_id *m)
{
	__typeof__(&pvm_setminfo) set = REAL(setminfo);
	struct pvmminfo mi;

	if (!c->active || m->mid <= 0 || set == NULL ||
	    (c->r.seq & RECORD_MSGID_MASK) == 0) {
		m->mid = 0;
		return;
	}
	mi = m->mi;
	mi.wid = (int)(c->r.seq & RECORD_MSGID_MASK);
	if (set(m->mid, &mi) < 0)
		m->mid = 0;
}

static int in_handler;		/* a message handler runs (handler_run) */

/*
 * After the real send: the buffer's wait id as it was.  Only that field:
 * pvm_setminfo sets the header of a message that may still wait in
 * libpvm3's queue (a send from inside a message handler, which runs in
 * another call's routing, is sent later), and a handler's send buffer
 * is freed as the handler returns, so it is left alone.
 */
static void
msg_id_clear(const struct msg_id *m)
{
	__typeof__(&pvm_setminfo) set = REAL(setminfo);
	__typeof__(&pvm_getminfo) get = REAL(getminfo);
	struct pvmminfo mi;

	if (m->mid <= 0 || in_handler || get(m->mid, &mi) < 0)
		return;
	mi.wid = m->mi.wid;
	(void)set(m->mid, &mi);
}

static void
fill_recv_begin(struct pcall *c, int tid, int tag)
{
	c->r.peer = tid;
	c->r.tag = tag;
	c->r.ctx = cur_ctx();
}

/* The end of a receive that returned buffer bufid: the actual message. */
static void
fill_recv_end(struct pcall *c, int bufid)
{
	__typeof__(&pvm_getminfo) real = REAL(getminfo);
	struct pvmminfo mi;

	if (!c->active || bufid <= 0 || real == NULL ||
	    real(bufid, &mi) < 0)
		return;
	c->r.flags |= RECORD_MSG;
	c->r.peer = mi.src;
	c->r.tag = mi.tag;
	c->r.bytes = mi.len;
	c->r.ctx = mi.ctx;
	if (mi.wid > 0) {
		c->r.flags |= RECORD_MSGID;
		c->r.inst = mi.wid;
	}
}

/*
 * A wrapper returning int: fill runs before the begin record when the
 * call is recorded, after runs (with rc set) before the end record.
 */
#define WRAPX(n, params, args, fill, after)				\
PRELOAD_EXPORT int							\
pvm_##n params								\
{									\
	__typeof__(&pvm_##n) real = REAL(n);				\
	struct pcall c;							\
	int rc;								\
									\
	if (real == NULL)						\
		return PvmNotImpl;					\
	if (call_enter(&c, PMON_CALL_##n)) {				\
		fill;							\
	}								\
	call_begin(&c, NULL, 0);					\
	rc = real args;							\
	if (c.active) {							\
		after;							\
	}								\
	call_end(&c, rc, NULL, 0);					\
	return rc;							\
}
#define WRAP(n, params, args, fill)	WRAPX(n, params, args, fill, )

/* Packing and unpacking: bytes = items x item size. */
#define PACK(n, type, size)						\
	WRAP(n, (type *p, int nitem, int stride), (p, nitem, stride),	\
	    c.r.bytes = nbytes(nitem, size))

PACK(pkbyte, char, sizeof(char))
PACK(pkcplx, float, 2 * sizeof(float))
PACK(pkdcplx, double, 2 * sizeof(double))
PACK(pkdouble, double, sizeof(double))
PACK(pkfloat, float, sizeof(float))
PACK(pkint, int, sizeof(int))
PACK(pklong, long, sizeof(long))
PACK(pkshort, short, sizeof(short))
PACK(pkuint, unsigned int, sizeof(unsigned int))
PACK(pkulong, unsigned long, sizeof(unsigned long))
PACK(pkushort, unsigned short, sizeof(unsigned short))
PACK(upkbyte, char, sizeof(char))
PACK(upkcplx, float, 2 * sizeof(float))
PACK(upkdcplx, double, 2 * sizeof(double))
PACK(upkdouble, double, sizeof(double))
PACK(upkfloat, float, sizeof(float))
PACK(upklong, long, sizeof(long))
PACK(upkshort, short, sizeof(short))
PACK(upkuint, unsigned int, sizeof(unsigned int))
PACK(upkulong, unsigned long, sizeof(unsigned long))
PACK(upkushort, unsigned short, sizeof(unsigned short))

WRAP(pkstr, (char *s), (s), c.r.bytes = s ? nbytes((int)strnlen(s, INT_MAX), 1) : -1)
WRAPX(upkstr, (char *s), (s), ,
    c.r.bytes = rc >= 0 && s ? nbytes((int)strnlen(s, INT_MAX), 1) : -1)
WRAP(pkmesg, (int mid), (mid), c.r.bytes = buf_bytes(mid))
WRAP(pkmesgbody, (int mid), (mid), c.r.bytes = buf_bytes(mid))
WRAP(upkmesg, (void), (), )

/* Tasks, hosts and the virtual machine. */
WRAP(addhosts, (char **names, int count, int *svp), (names, count, svp), )
WRAP(delhosts, (char **names, int count, int *svp), (names, count, svp), )
WRAP(config, (int *nhostp, int *narchp, struct pvmhostinfo **hostp),
    (nhostp, narchp, hostp), )
WRAP(tasks, (int where, int *ntaskp, struct pvmtaskinfo **taskp),
    (where, ntaskp, taskp), c.r.peer = where)
WRAP(mstat, (char *host), (host), )
WRAP(pstat, (int tid), (tid), c.r.peer = tid)
WRAP(kill, (int tid), (tid), c.r.peer = tid; c.r.inst = SIGTERM)
WRAP(sendsig, (int tid, int signum), (tid, signum),
    c.r.peer = tid; c.r.inst = signum)
WRAP(tidtohost, (int tid), (tid), c.r.peer = tid)
WRAP(hostsync, (int host, struct timeval *clk, struct timeval *delta),
    (host, clk, delta), c.r.peer = host)
WRAP(mytid, (void), (), )
WRAP(parent, (void), (), )

/*
 * A task the starter started does its real pvm_exit when the process
 * ends (preload_starter.c).
 */
PRELOAD_EXPORT int
pvm_exit(void)
{
	__typeof__(&pvm_exit) real = REAL(exit);
	struct pcall c;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	(void)call_enter(&c, PMON_CALL_exit);
	call_begin(&c, NULL, 0);
	rc = starter_defer_exit() ? PvmOk : real();
	call_end(&c, rc, NULL, 0);
	return rc;
}

WRAP(halt, (void), (), )
WRAP(start_pvmd, (int argc, char **argv, int block), (argc, argv, block), )
WRAP(archcode, (char *arch), (arch), )

/* libpvm3's pvm_exit ends a collection with pvm_catchout(NULL). */
PRELOAD_EXPORT int
pvm_catchout(FILE *ff)
{
	__typeof__(&pvm_catchout) real = REAL(catchout);
	struct pcall c;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	(void)call_enter(&c, PMON_CALL_catchout);
	call_begin(&c, NULL, 0);
	rc = real(ff);
	starter_catchout(ff);
	call_end(&c, rc, NULL, 0);
	return rc;
}

WRAP(getfds, (int **fds), (fds), )
WRAP(getnoresets, (int **tids, int *ntids), (tids, ntids), )
WRAP(tickle, (int narg, int *argp, int *nresp, int *resp),
    (narg, argp, nresp, resp), )
WRAP(reg_hoster, (void), (), )
WRAP(reg_rm, (struct pvmhostinfo **hip), (hip), )
WRAP(reg_tasker, (void), (), )
WRAP(reg_tracer, (int tctx, int ttag, int octx, int otag, char *tmask,
    int tbuf, int topt), (tctx, ttag, octx, otag, tmask, tbuf, topt), )
WRAP(export, (char *name), (name), )
WRAP(unexport, (char *name), (name), )
WRAP(perror, (char *s), (s), )

/* Options, trace masks, message handlers. */
WRAP(getopt, (int what), (what), )
WRAP(setopt, (int what, int val), (what, val), )
WRAP(gettmask, (int who, Pvmtmask mask), (who, mask), )
WRAP(settmask, (int who, Pvmtmask mask), (who, mask), )

/*
 * Message handlers (pvm_addmhf).  libpvm3 calls a handler with the
 * message's buffer only, so each handler the application installs gets
 * a trampoline of its own, which records the handler's run
 * (PMON_CALL_HANDLER: its begin receives the message) and the calls it
 * makes.  Handlers libpvm3 installs for itself (pvm_catchout's) are left
 * alone, and so is a handler beyond the last trampoline.
 */
#define HANDLER_SLOTS	32

static struct handler_slot {
	int		(*f)(int);
	int		 mhid;		/* pvm_addmhf's handle; -1: free */
} handlers[HANDLER_SLOTS];

static int
handler_run(unsigned slot, int mid)
{
	int (*f)(int) = handlers[slot].f;
	struct call_nest around, inside;
	struct pcall c;
	int rc;

	call_nest_enter(&around);
	if (call_enter(&c, PMON_CALL_HANDLER))
		fill_recv_end(&c, mid);
	call_begin(&c, NULL, 0);
	c.r.flags &= (uint8_t)~(RECORD_MSG | RECORD_MSGID);	/* the begin's */
	call_nest_enter(&inside);
	in_handler++;
	rc = f(mid);
	in_handler--;
	call_nest_leave(&inside);
	call_end(&c, rc, NULL, 0);
	call_nest_leave(&around);
	return rc;
}

#define HANDLER(n) static int handler_##n(int mid) { return handler_run(n, mid); }
HANDLER(0) HANDLER(1) HANDLER(2) HANDLER(3) HANDLER(4) HANDLER(5)
HANDLER(6) HANDLER(7) HANDLER(8) HANDLER(9) HANDLER(10) HANDLER(11)
HANDLER(12) HANDLER(13) HANDLER(14) HANDLER(15) HANDLER(16) HANDLER(17)
HANDLER(18) HANDLER(19) HANDLER(20) HANDLER(21) HANDLER(22) HANDLER(23)
HANDLER(24) HANDLER(25) HANDLER(26) HANDLER(27) HANDLER(28) HANDLER(29)
HANDLER(30) HANDLER(31)
#undef HANDLER

static int (*const trampolines[HANDLER_SLOTS])(int) = {
	handler_0, handler_1, handler_2, handler_3, handler_4, handler_5,
	handler_6, handler_7, handler_8, handler_9, handler_10, handler_11,
	handler_12, handler_13, handler_14, handler_15, handler_16,
	handler_17, handler_18, handler_19, handler_20, handler_21,
	handler_22, handler_23, handler_24, handler_25, handler_26,
	handler_27, handler_28, handler_29, handler_30, handler_31
};

static int
handler_slot_free(void)
{
	int i;

	for (i = 0; i < HANDLER_SLOTS; i++)
		if (handlers[i].f == NULL)
			return i;
	return -1;
}

PRELOAD_EXPORT int
pvm_addmhf(int src, int tag, int ctx, int (*f)(int))
{
	__typeof__(&pvm_addmhf) real = REAL(addmhf);
	struct pcall c;
	int rc, slot = -1;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_addmhf)) {
		c.r.peer = src;
		c.r.tag = tag;
		c.r.ctx = ctx;
		if (f != NULL)
			slot = handler_slot_free();
	}
	call_begin(&c, NULL, 0);
	if (slot != -1) {
		handlers[slot].f = f;
		rc = real(src, tag, ctx, trampolines[slot]);
		if (rc >= 0)
			handlers[slot].mhid = rc;
		else
			handlers[slot].f = NULL;
	} else
		rc = real(src, tag, ctx, f);
	call_end(&c, rc, NULL, 0);
	return rc;
}

PRELOAD_EXPORT int
pvm_delmhf(int mhid)
{
	__typeof__(&pvm_delmhf) real = REAL(delmhf);
	struct pcall c;
	int rc, i;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_delmhf))
		c.r.inst = mhid;
	call_begin(&c, NULL, 0);
	rc = real(mhid);
	if (rc >= 0)
		for (i = 0; i < HANDLER_SLOTS; i++)
			if (handlers[i].f != NULL && handlers[i].mhid == mhid)
				handlers[i].f = NULL;
	call_end(&c, rc, NULL, 0);
	return rc;
}

/* Buffers and contexts. */
WRAP(initsend, (int encoding), (encoding), )
WRAP(mkbuf, (int encoding), (encoding), )
WRAP(freebuf, (int mid), (mid), )
WRAP(getrbuf, (void), (), )
WRAP(getsbuf, (void), (), )
WRAP(setrbuf, (int mid), (mid), )
WRAP(setsbuf, (int mid), (mid), )
WRAP(bufinfo, (int mid, int *len, int *tag, int *tid), (mid, len, tag, tid), )
WRAP(getminfo, (int mid, struct pvmminfo *info), (mid, info), )
WRAP(setminfo, (int mid, struct pvmminfo *info), (mid, info), )
WRAP(getmwid, (int mid), (mid), )
WRAP(setmwid, (int mid, int wid), (mid, wid), )
WRAP(getcontext, (void), (), )
WRAP(newcontext, (void), (), )
WRAP(setcontext, (int ctx), (ctx), c.r.ctx = ctx)
WRAP(freecontext, (int ctx), (ctx), c.r.ctx = ctx)

/*
 * The mailbox.  pvmd keeps a stored message's header, so pvm_putinfo
 * gives the message the number of its begin record as its wait id, as a
 * send does, and the end of a pvm_recvinfo that got an entry names the
 * put that stored it (peer, inst: RECORD_MSGID); the buffer it returns
 * has its wait id as the putter's buffer had it.  The name is the
 * record's group; inst the index (asked, or got), tag the flags.
 */
PRELOAD_EXPORT int
pvm_putinfo(char *name, int mid, int flags)
{
	__typeof__(&pvm_putinfo) real = REAL(putinfo);
	struct msg_id m = { 0 };
	struct pcall c;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_putinfo)) {
		call_group(&c, name);
		c.r.tag = flags;
		msg_id_take(&c, mid, &m);
	}
	call_begin(&c, NULL, 0);
	msg_id_set(&c, &m);
	rc = real(name, mid, flags);
	msg_id_clear(&m);
	c.r.inst = rc;
	call_end(&c, rc, NULL, 0);
	return rc;
}

PRELOAD_EXPORT int
pvm_recvinfo(char *name, int index, int flags)
{
	__typeof__(&pvm_recvinfo) real = REAL(recvinfo);
	__typeof__(&pvm_getminfo) get = REAL(getminfo);
	__typeof__(&pvm_setminfo) set = REAL(setminfo);
	struct pvmminfo mi;
	struct pcall c;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_recvinfo)) {
		call_group(&c, name);
		c.r.tag = flags;
		c.r.inst = index;
	}
	call_begin(&c, NULL, 0);
	rc = real(name, index, flags);
	if (c.active && rc > 0 && get != NULL && get(rc, &mi) >= 0) {
		c.r.flags |= RECORD_MSG;	/* a copy of the message */
		c.r.peer = mi.src;
		c.r.bytes = mi.len;
		if (mi.wid > 0) {
			c.r.flags |= RECORD_MSGID;
			c.r.inst = mi.wid;
			mi.wid = 0;
			(void)set(rc, &mi);
		}
	}
	call_end(&c, rc, NULL, 0);
	return rc;
}

WRAP(delinfo, (char *name, int req, int flags), (name, req, flags),
    (call_group(&c, name), c.r.inst = req, c.r.tag = flags))
WRAP(getmboxinfo, (char *pattern, int *nclasses,
    struct pvmmboxinfo **classes), (pattern, nclasses, classes), )
WRAP(insert, (char *name, int req, int data), (name, req, data), )
WRAP(lookup, (char *name, int req, int *datap), (name, req, datap), )
WRAP(delete, (char *name, int req), (name, req), )

/* Point-to-point sends. */

/*
 * A send inside a group call, in the group server's context, is the
 * call's request to pvmgs: the end record says so (RECORD_GS).
 */
static void
note_gs_request(void)
{
	struct pcall *o = call_outer();

	if (o != NULL && o->r.glen > 0 && cur_ctx() == PMON_GS_CTX)
		o->r.flags |= RECORD_GS;
}

PRELOAD_EXPORT int
pvm_send(int tid, int tag)
{
	__typeof__(&pvm_send) real = REAL(send);
	struct pcall c;
	struct msg_id m = { 0 };
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_send))
		fill_send_id(&c, tid, tag, &m);
	else
		note_gs_request();
	call_begin(&c, NULL, 0);
	msg_id_set(&c, &m);
	rc = real(tid, tag);
	msg_id_clear(&m);
	call_end(&c, rc, NULL, 0);
	return rc;
}

WRAP(psend, (int tid, int tag, void *buf, int len, int dt),
    (tid, tag, buf, len, dt),
    (fill_send(&c, tid, tag), c.r.bytes = dtbytes(len, dt)))

/* Receives: the end record names the message actually received. */
#define RECV(n, params, args, tid, tag)					\
	WRAPX(n, params, args, fill_recv_begin(&c, tid, tag),		\
	    fill_recv_end(&c, rc))

/*
 * In the group server: a DEADTID notify received, whose tid the server
 * unpacks next (pvmgs is single-threaded).
 */
static int	gs_dead_pending;

/* In the group server, a request taken is a group state change. */
static int
gs_request(int32_t tag)
{
	switch (tag) {
	case PMON_GS_JOIN:
	case PMON_GS_LEAVE:
	case PMON_GS_BARRIER:
	case PMON_GS_BCAST:
	case PMON_GS_GETINST:
	case PMON_GS_GETTID:
	case PMON_GS_GSIZE:
	case PMON_GS_TIDLIST:
	case PMON_GS_STATICGROUP:
		return 1;
	default:
		return 0;
	}
}

PRELOAD_EXPORT int
pvm_recv(int tid, int tag)
{
	__typeof__(&pvm_recv) real = REAL(recv);
	struct pcall c, s;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_recv))
		fill_recv_begin(&c, tid, tag);
	call_begin(&c, NULL, 0);
	rc = real(tid, tag);
	fill_recv_end(&c, rc);
	call_end(&c, rc, NULL, 0);
	if (server_enter(&s)) {
		fill_recv_end(&s, rc);
		gs_dead_pending = (s.r.flags & RECORD_MSG) &&
		    s.r.tag == PMON_GS_DEADTID;
		if ((s.r.flags & RECORD_MSG) && s.r.ctx == PMON_GS_CTX &&
		    gs_request(s.r.tag))
			server_emit(&s, rc);
	}
	return rc;
}

/*
 * In the group server, the first int unpacked from a DEADTID notify is
 * the task that exited: the server drops it from its groups.
 */
PRELOAD_EXPORT int
pvm_upkint(int *p, int nitem, int stride)
{
	__typeof__(&pvm_upkint) real = REAL(upkint);
	struct pcall c, s;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_upkint))
		c.r.bytes = nbytes(nitem, sizeof(int));
	call_begin(&c, NULL, 0);
	rc = real(p, nitem, stride);
	call_end(&c, rc, NULL, 0);
	if (gs_dead_pending && server_enter(&s)) {
		gs_dead_pending = 0;
		if (rc >= 0 && p != NULL && nitem > 0) {
			s.r.flags = RECORD_MSG;
			s.r.peer = p[0];
			s.r.tag = PMON_GS_DEADTID;
			s.r.ctx = PMON_GS_CTX;
			s.r.bytes = 4;
			server_emit(&s, rc);
		}
	}
	return rc;
}

RECV(nrecv, (int tid, int tag), (tid, tag), tid, tag)
RECV(trecv, (int tid, int tag, struct timeval *tmout), (tid, tag, tmout),
    tid, tag)
RECV(probe, (int tid, int tag), (tid, tag), tid, tag)

/* Groups. */
WRAPX(joingroup, (char *group), (group), call_group(&c, group),
    c.r.inst = rc)
WRAP(lvgroup, (char *group), (group), call_group(&c, group))
WRAP(barrier, (char *group, int count), (group, count),
    (call_group(&c, group), c.r.inst = count))
WRAPX(getinst, (char *group, int tid), (group, tid),
    (call_group(&c, group), c.r.peer = tid), c.r.inst = rc)
WRAPX(gettid, (char *group, int inst), (group, inst),
    (call_group(&c, group), c.r.inst = inst), c.r.peer = rc)
WRAP(gsize, (char *group), (group), call_group(&c, group))
WRAP(freezegroup, (char *group, int size), (group, size),
    (call_group(&c, group), c.r.inst = size))
WRAP(grphostinfo, (char *group, int hosttid, int *coord, int *nmem,
    int *nhosts), (group, hosttid, coord, nmem, nhosts),
    (call_group(&c, group), c.r.peer = hosttid))
WRAP(grpvhostinfo, (char *group, int **coordv, int **nmemv, int *nhosts),
    (group, coordv, nmemv, nhosts), call_group(&c, group))

#define COLLECTIVE(n, params, args)					\
	WRAP(n, params, args, (call_group(&c, group), c.r.tag = tag,	\
	    c.r.inst = root, c.r.bytes = dtbytes(count, dt)))

COLLECTIVE(reduce, (void (*func)(int *, void *, void *, int *, int *),
    void *data, int count, int dt, int tag, char *group, int root),
    (func, data, count, dt, tag, group, root))
COLLECTIVE(gather, (void *result, void *data, int count, int dt, int tag,
    char *group, int root), (result, data, count, dt, tag, group, root))
COLLECTIVE(scatter, (void *result, void *data, int count, int dt, int tag,
    char *group, int root), (result, data, count, dt, tag, group, root))

/*
 * Calls with lists or odd signatures, written out.
 */

/* The peers of a multicast are its destinations.  Inside a pvm_bcast,
 * the inner multicast tells the broadcast whom it reached. */
PRELOAD_EXPORT int
pvm_mcast(int *tids, int count, int tag)
{
	__typeof__(&pvm_mcast) real = REAL(mcast);
	struct pcall c;
	unsigned n = tids != NULL && count > 0 ? (unsigned)count : 0;
	struct msg_id m = { 0 };
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_mcast)) {
		fill_send_id(&c, -1, tag, &m);
		call_begin(&c, (const int32_t *)tids, n);
	} else
		bcast_capture_mcast(tids, count);
	msg_id_set(&c, &m);
	rc = real(tids, count, tag);
	msg_id_clear(&m);
	call_end(&c, rc, NULL, 0);
	return rc;
}

PRELOAD_EXPORT int
pvm_bcast(char *group, int tag)
{
	__typeof__(&pvm_bcast) real = REAL(bcast);
	int32_t tids[RECORD_PEERS_MAX];
	struct bcast_capture bc = { tids, 0 };
	struct pcall c;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_bcast)) {
		call_group(&c, group);
		fill_send(&c, -1, tag);
		call_begin(&c, NULL, 0);
		bcast_capture_set(&bc);
	}
	rc = real(group, tag);
	bcast_capture_set(NULL);
	call_end(&c, rc, tids, bc.n);
	return rc;
}

PRELOAD_EXPORT int
pvm_precv(int tid, int tag, void *buf, int len, int dt, int *atid,
    int *atag, int *alen)
{
	__typeof__(&pvm_precv) real = REAL(precv);
	struct pcall c;
	int rtid = -1, rtag = -1, rlen = -1, rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_precv))
		fill_recv_begin(&c, tid, tag);
	call_begin(&c, NULL, 0);
	rc = real(tid, tag, buf, len, dt, &rtid, &rtag, &rlen);
	if (rc >= 0) {
		if (atid != NULL)
			*atid = rtid;
		if (atag != NULL)
			*atag = rtag;
		if (alen != NULL)
			*alen = rlen;
	}
	if (c.active && rc >= 0) {
		c.r.flags |= RECORD_MSG;
		c.r.peer = rtid;
		c.r.tag = rtag;
		c.r.bytes = rlen;
		c.r.ctx = cur_ctx();
	}
	call_end(&c, rc, NULL, 0);
	return rc;
}

/* The end of a spawn lists the children it created. */
PRELOAD_EXPORT int
pvm_spawn(char *task, char **argv, int flag, char *where, int ntask,
    int *tids)
{
	__typeof__(&pvm_spawn) real = REAL(spawn);
	int32_t kids[RECORD_PEERS_MAX];
	struct spawn_env se = { .set = 0 };
	struct pcall c;
	unsigned n = 0;
	int i, rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, PMON_CALL_spawn)) {
		call_begin(&c, NULL, 0);
		spawn_edge_set(&se, c.r.seq);
	}
	rc = real(task, argv, flag, where, ntask, tids);
	spawn_env_restore(&se);
	for (i = 0; rc > 0 && tids != NULL && i < ntask &&
	    n < RECORD_PEERS_MAX; i++)
		if (tids[i] > 0)
			kids[n++] = tids[i];
	call_end(&c, rc, kids, n);
	return rc;
}

/* The peers of a notify are the tasks (or hosts) it watches. */
PRELOAD_EXPORT int
pvm_notify(int what, int tag, int count, int *vals)
{
	__typeof__(&pvm_notify) real = REAL(notify);
	struct pcall c;
	unsigned n = 0;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	if (what != PvmHostAdd && vals != NULL && count > 0)
		n = (unsigned)count;
	if (call_enter(&c, PMON_CALL_notify)) {
		c.r.tag = tag;
		c.r.inst = what;
		if (n > 0)
			c.r.peer = vals[0];
	}
	call_begin(&c, (const int32_t *)vals, n);
	rc = real(what, tag, count, vals);
	call_end(&c, rc, NULL, 0);
	return rc;
}

PRELOAD_EXPORT int
pvm_siblings(int **tidsp)
{
	__typeof__(&pvm_siblings) real = REAL(siblings);
	struct pcall c;
	unsigned n;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	call_enter(&c, PMON_CALL_siblings);
	call_begin(&c, NULL, 0);
	rc = real(tidsp);
	n = rc > 0 && tidsp != NULL && *tidsp != NULL ? (unsigned)rc : 0;
	call_end(&c, rc, n > 0 ? (const int32_t *)*tidsp : NULL, n);
	return rc;
}

/* Formatted packing: the bytes the send buffer grew by. */
static int
vpack(unsigned call, const char *fmt, va_list ap)
{
	__typeof__(&pvm_vpackf) real = REAL(vpackf);
	struct pcall c;
	int before = -1, rc;

	if (real == NULL)
		return PvmNotImpl;
	if (call_enter(&c, call))
		before = sbuf_bytes();
	call_begin(&c, NULL, 0);
	rc = real(fmt, ap);
	if (c.active && before >= 0 && rc >= 0)
		c.r.bytes = sbuf_bytes() - before;
	call_end(&c, rc, NULL, 0);
	return rc;
}

static int
vunpack(unsigned call, const char *fmt, va_list ap)
{
	__typeof__(&pvm_vunpackf) real = REAL(vunpackf);
	struct pcall c;
	int rc;

	if (real == NULL)
		return PvmNotImpl;
	call_enter(&c, call);
	call_begin(&c, NULL, 0);
	rc = real(fmt, ap);
	call_end(&c, rc, NULL, 0);
	return rc;
}

PRELOAD_EXPORT int
pvm_packf(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vpack(PMON_CALL_packf, fmt, ap);
	va_end(ap);
	return rc;
}

PRELOAD_EXPORT int
pvm_unpackf(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vunpack(PMON_CALL_unpackf, fmt, ap);
	va_end(ap);
	return rc;
}

PRELOAD_EXPORT int
pvm_vpackf(const char *fmt, va_list ap)
{
	return vpack(PMON_CALL_vpackf, fmt, ap);
}

PRELOAD_EXPORT int
pvm_vunpackf(const char *fmt, va_list ap)
{
	return vunpack(PMON_CALL_vunpackf, fmt, ap);
}

/*
 * pvm_recvf returns the previous matching function; pvm3.h misdeclares
 * its return type, and the wrapper must agree with the header.
 */
typedef int (*recvf_fn)(int, int, int);
typedef int (*recvf_ret)(recvf_fn);

PRELOAD_EXPORT recvf_ret
pvm_recvf(recvf_fn match)
{
	__typeof__(&pvm_recvf) real = REAL(recvf);
	struct pcall c;
	recvf_ret old;

	if (real == NULL)
		return NULL;
	call_enter(&c, PMON_CALL_recvf);
	call_begin(&c, NULL, 0);
	old = real(match);
	call_end(&c, 0, NULL, 0);
	return old;
}

PRELOAD_EXPORT char *
pvm_strerror(void)
{
	__typeof__(&pvm_strerror) real = REAL(strerror);
	struct pcall c;
	char *s;

	if (real == NULL)
		return NULL;
	call_enter(&c, PMON_CALL_strerror);
	call_begin(&c, NULL, 0);
	s = real();
	call_end(&c, 0, NULL, 0);
	return s;
}

PRELOAD_EXPORT char *
pvm_version(void)
{
	__typeof__(&pvm_version) real = REAL(version);
	struct pcall c;
	char *s;

	if (real == NULL)
		return NULL;
	call_enter(&c, PMON_CALL_version);
	call_begin(&c, NULL, 0);
	s = real();
	call_end(&c, 0, NULL, 0);
	return s;
}

PRELOAD_EXPORT void
pvm_gsdump(void)
{
	__typeof__(&pvm_gsdump) real = REAL(gsdump);
	struct pcall c;

	if (real == NULL)
		return;
	call_enter(&c, PMON_CALL_gsdump);
	call_begin(&c, NULL, 0);
	real();
	call_end(&c, 0, NULL, 0);
}
