/*
 * Event records: what the instrumentation writes for every outermost PVM
 * call a task makes, at its begin and at its end.
 *
 * One encoding serves the task's ring, the agent's frames and the
 * coordinator: the task encodes once, the agent ships the bytes unchanged.
 * Layout (big-endian, 48 bytes then the variable parts):
 *
 *	 0 u16 len	total bytes of this record
 *	 2 u8  call	enum pmon_call
 *	 3 u8  phase	PMON_BEGIN or PMON_END
 *	 4 u64 seq	per-task sequence number, from 1, no gaps
 *	12 u64 t_ns	CLOCK_REALTIME in nanoseconds
 *	20 i32 rc	return value (end records)
 *	24 i32 peer	the partner task: destination of a send, source of a
 *			receive (requested at begin, actual at end), target
 *			of kill/sendsig/notify; -1 when none
 *	28 i32 tag	message tag (or -1)
 *	32 i32 ctx	message context
 *	36 i32 bytes	message bytes, or bytes packed/unpacked
 *	40 i32 inst	group instance (joingroup/getinst/...), the count
 *			of pvm_barrier and pvm_freezegroup, what a
 *			pvm_notify asks for (PvmTaskExit...), or -1
 *	44 u16 npeers	number of peer tids that follow the group name
 *	46 u8  glen	length of the group name
 *	47 u8  flags	RECORD_* flags
 *	48 glen bytes of group name, then npeers x i32 tids: the
 *			destinations of a multicast or broadcast, the
 *			children a spawn created
 */
#ifndef PMON_RECORD_H
#define PMON_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "pmon_calls.h"

#define RECORD_HDR_SIZE		48
#define RECORD_GROUP_MAX	255
#define RECORD_PEERS_MAX	4096
#define RECORD_MAX_SIZE	\
	(RECORD_HDR_SIZE + RECORD_GROUP_MAX + 4 * RECORD_PEERS_MAX)

#define PMON_BEGIN	0
#define PMON_END	1

/* Record flags. */
#define RECORD_MSG	0x1	/* the end of a receive that got a message */
/*
 * On the end of a group call: the call sent one request to the group
 * server, pvmgs.  On pvmgs's own records (receive ends, the only ones it
 * writes): the request it took, from peer, tag = the request code.
 */
#define RECORD_GS	0x2
/*
 * On a receive end with RECORD_MSG: inst is the message's id, the
 * number of the record that began its send (pvm_send, pvm_mcast) modulo
 * 2^31, which the sender's instrumentation put in the message's wait id
 * (pvm_setminfo).  The coordinator matches the receive to that send
 * even where it cannot count the channel (doc/ordering.md, "Message
 * ids"); record_msg_id reads it.
 */
#define RECORD_MSGID	0x4
#define RECORD_MSGID_MASK 0x7fffffffU
/* On a PMON_CALL_SIGNAL begin: the task's pvmd sent it (pvm_sendsig). */
#define RECORD_PVMD	0x8

/*
 * pvmgs's request codes (the message tags of libgpvm3's pvmgsd.h) and
 * the context its requests travel in (SYSCTX_DG of lpvm.h).
 */
#define PMON_GS_JOIN		1
#define PMON_GS_LEAVE		2
#define PMON_GS_BARRIER		3
#define PMON_GS_BCAST		4
#define PMON_GS_GETINST		5
#define PMON_GS_GETTID		6
#define PMON_GS_GSIZE		7
#define PMON_GS_DEADTID		11	/* pvmd: a task pvmgs knew exited;
					   peer = that task */
#define PMON_GS_TIDLIST		12
#define PMON_GS_STATICGROUP	13
#define PMON_GS_CTX		0x7fffc

/* A decoded record.  group and the peer list point into the encoded bytes. */
struct record {
	uint16_t	 len;
	uint8_t		 call;
	uint8_t		 phase;
	uint8_t		 flags;
	uint64_t	 seq;
	uint64_t	 t_ns;
	int32_t		 rc;
	int32_t		 peer;
	int32_t		 tag;
	int32_t		 ctx;
	int32_t		 bytes;
	int32_t		 inst;
	uint16_t	 npeers;
	uint8_t		 glen;
	const char	*group;		/* glen bytes, not NUL-terminated */
	const uint8_t	*peers;		/* npeers big-endian i32 */
};

const char	*record_call_name(unsigned call);
int		 record_is_fatal_signal(const struct record *);
int		 record_call_lookup(const char *name);
size_t		 record_encode(uint8_t *out, const struct record *,
		    const int32_t *peers);
int		 record_decode(const uint8_t *in, size_t avail,
		    struct record *, const char **why);
int		 record_check(const struct record *, const char **why);
int32_t		 record_peer(const struct record *, unsigned i);

/*
 * In line, as what follows: the coordinator asks them of every event,
 * several times.
 */
static inline size_t
record_size(const struct record *r)
{
	return RECORD_HDR_SIZE + r->glen + 4 * (size_t)r->npeers;
}

/*
 * What the coordinator needs to know of a call to order it.
 *
 * A record that carries a message's destinations: the begin of a
 * point-to-point send or a multicast, or the end of a broadcast (libgpvm3
 * learns the members only during the call; the instrumentation lists
 * them in the end record).
 */
static inline int
record_is_send(const struct record *r)
{
	switch (r->call) {
	case PMON_CALL_send:
	case PMON_CALL_psend:
	case PMON_CALL_mcast:
		return r->phase == PMON_BEGIN;
	case PMON_CALL_bcast:
		return r->phase == PMON_END;
	default:
		return 0;
	}
}

/*
 * The end of a receive that consumed a message (peer and tag are real),
 * or the begin of a message handler, which consumed the message it runs
 * for.
 */
static inline int
record_is_recv(const struct record *r)
{
	switch (r->call) {
	case PMON_CALL_recv:
	case PMON_CALL_trecv:
	case PMON_CALL_nrecv:
	case PMON_CALL_precv:
		return r->phase == PMON_END && (r->flags & RECORD_MSG);
	case PMON_CALL_HANDLER:
		return r->phase == PMON_BEGIN && (r->flags & RECORD_MSG);
	default:
		return 0;
	}
}

/*
 * The begin of a pvm_sendsig or pvm_kill: peer is the task it signals,
 * inst the signal (SIGTERM for pvm_kill).
 */
static inline int
record_is_signal_send(const struct record *r)
{
	return (r->call == PMON_CALL_sendsig || r->call == PMON_CALL_kill) &&
	    r->phase == PMON_BEGIN;
}

/* The id of the message a receive end got (RECORD_MSGID), or 0. */
static inline uint32_t
record_msg_id(const struct record *r)
{
	return (r->flags & RECORD_MSGID) ? (uint32_t)r->inst : 0;
}

/*
 * Compares the record numbered seq with message id, the number of a
 * send's begin modulo 2^31: negative when seq comes before it, 0 when
 * it is that send.  Records compared this way are within 2^30 of each
 * other.
 */
static inline int
record_msg_id_cmp(uint64_t seq, uint32_t id)
{
	uint32_t d = (id - (uint32_t)seq) & RECORD_MSGID_MASK;

	if (d == 0)
		return 0;
	return d < (1U << 30) ? -1 : 1;
}

/*
 * A hash of a tid for tables of tasks, every bit of it mixed from every
 * bit of the tid: a PVM tid has its host in bits 18 and up and the
 * task's number on the host in the low ones, so hashes that keep low
 * bits (tid * odd & mask) put the tasks of different hosts with the
 * same number in one slot (4096 tasks on 64 hosts: 64 slots).
 */
/* A PVM tid's host field (bits 18 to 29): its host's number. */
static inline uint32_t
record_tid_host(int32_t tid)
{
	return ((uint32_t)tid >> 18) & 0xfff;
}

static inline uint32_t
record_tid_hash(int32_t tid)
{
	uint32_t x = (uint32_t)tid;

	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

#endif
