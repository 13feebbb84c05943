#!/bin/bash
# Protects the daemons against broken peers: garbage, a truncated frame,
# a wrong protocol version, an oversized length, an unknown type, a bad
# payload and hellos without the secret (t_auth has the rest of that),
# sent to the agent's unix socket, the coordinator's tool socket and its
# TCP port for agents.  Each bad peer is logged and
# dropped; the daemons keep serving: a trace started before still gets a
# later program's events, and flush and shutdown still work.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$SENDFRAME" ] || fail "missing $SENDFRAME"
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"

wait_for 10 test -S "$(agent_sock)" || fail "no agent socket"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no process listens on $(agent_sock)"
# The coordinator's TCP listener for agents, as `pmon start -v` said.
tcp=$COORD_ADDR
[ -n "$tcp" ] || fail "pmon start -v printed no agent address"
port=${tcp##*:}
case ${tcp%:*} in
'*' | 0.0.0.0 | '[::]' | '::') tcp=127.0.0.1:$port ;;
esac

log_lines() { cat "$PVM_TMP"/*.log "$PVM_TMP"/pvml.* 2>/dev/null | wc -l; }
for addr in "$(agent_sock)" "$(coord_sock)" "$tcp"; do
	for kind in garbage truncated version oversize badtype badpayload \
	    toolhello agenthello; do
		before=$(log_lines)
		"$SENDFRAME" -w 5 "$addr" "$kind" >/dev/null ||
		    fail "$addr kept a peer that sent $kind"
		pid_alive "$COORD_PID" ||
		    fail "pmon-coordd died after $kind to $addr"
		pid_alive "$AGENT_PID" ||
		    fail "pmon-agentd died after $kind to $addr"
		wait_for 5 eval '[ "$(log_lines)" -gt "$before" ]' ||
		    fail "nothing logged about $kind sent to $addr"
	done
done

# Still serving: a program run now is traced completely.
pmon_exec master1 || fail "master1 failed"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
expect_eq "master1 pvm_mcast after the bad peers" 1 \
    "$(count_of master1 pvm_mcast begin "$RUN/got")"
expect_eq "slave1 pvm_exit after the bad peers" 3 \
    "$(count_of slave1 pvm_exit begin "$RUN/got")"
pass
