/*
 * The PVM calls pmon records, by number: part of pmon's public API
 * (installed beside pmon.h, which includes it) and of its wire protocol
 * (event records carry the number, common/record.h).  pmon_call_name()
 * and pmon_call_lookup() of pmon.h turn numbers into names ("pvm_send")
 * and back.
 */
#ifndef PMON_CALLS_H
#define PMON_CALLS_H

/*
 * Every public entry point of libpvm3 and libgpvm3, in one list.  Append
 * only: the numbers travel on the wire.
 */
#define PMON_CALLS(X)							\
	X(addhosts) X(addmhf) X(archcode) X(barrier) X(bcast)		\
	X(bufinfo) X(catchout) X(config) X(delete) X(delhosts)		\
	X(delinfo) X(delmhf) X(exit) X(export) X(freebuf)		\
	X(freecontext) X(freezegroup) X(gather) X(getcontext)		\
	X(getfds) X(getinst) X(getmboxinfo) X(getminfo)		\
	X(getnoresets) X(getopt) X(getrbuf) X(getsbuf) X(gettid)	\
	X(gettmask) X(gsize) X(halt) X(hostsync) X(initsend)		\
	X(insert) X(joingroup) X(kill) X(lookup) X(lvgroup)		\
	X(mcast) X(mkbuf) X(mstat) X(mytid) X(newcontext)		\
	X(notify) X(nrecv) X(packf) X(parent) X(perror) X(pkbyte)	\
	X(pkcplx) X(pkdcplx) X(pkdouble) X(pkfloat) X(pkint)		\
	X(pklong) X(pkmesg) X(pkmesgbody) X(pkshort) X(pkstr)		\
	X(pkuint) X(pkulong) X(pkushort) X(precv) X(probe)		\
	X(psend) X(pstat) X(putinfo) X(recv) X(recvf) X(recvinfo)	\
	X(reduce) X(reg_hoster) X(reg_rm) X(reg_tasker)		\
	X(reg_tracer) X(scatter) X(send) X(sendsig) X(setcontext)	\
	X(setminfo) X(setopt) X(setrbuf) X(setsbuf) X(settmask)	\
	X(siblings) X(spawn) X(start_pvmd) X(strerror) X(tasks)	\
	X(tickle) X(tidtohost) X(trecv) X(unexport) X(unpackf)		\
	X(upkbyte) X(upkcplx) X(upkdcplx) X(upkdouble) X(upkfloat)	\
	X(upkint) X(upklong) X(upkmesg) X(upkshort) X(upkstr)		\
	X(upkuint) X(upkulong) X(upkushort) X(version) X(vpackf)	\
	X(vunpackf) X(grphostinfo) X(grpvhostinfo) X(gsdump)		\
	X(getmwid) X(setmwid)

enum pmon_call {
	PMON_CALL_NONE = 0,
#define PMON_CALL_ENUM(n) PMON_CALL_##n,
	PMON_CALLS(PMON_CALL_ENUM)
#undef PMON_CALL_ENUM
	PMON_CALL_LOST,		/* synthetic: records missing from a task */
	/*
	 * Written by a task that stops at a breakpoint, just before it
	 * stops: rc is the call it stopped at (enum pmon_call), inst the
	 * breakpoint's id, phase whether it stopped before that call ran
	 * (PMON_PHASE_BEGIN) or after it returned (PMON_PHASE_END); peer,
	 * tag, ctx, bytes and the group are the call's.
	 */
	PMON_CALL_BREAK,
	/*
	 * Synthetic: a message handler the application installed with
	 * pvm_addmhf ran, inside the call it interrupted.  Its begin is the
	 * receive of the message it was given (PMON_EV_MSG, peer, tag, ctx,
	 * bytes, the message's id); the calls the handler made come between
	 * it and the end, whose rc is the handler's.
	 */
	PMON_CALL_HANDLER,
	/*
	 * Synthetic: a signal the application handles (its handler was
	 * installed with sigaction or signal) arrived since the task's
	 * last record.  Begin and end are written together, between two
	 * calls: inst is the signal's number, PMON_EV_PVMD set when the
	 * task's pvmd sent it, and the end's rc how many arrived.
	 */
	PMON_CALL_SIGNAL,
	PMON_CALL_MAX
};

#endif
