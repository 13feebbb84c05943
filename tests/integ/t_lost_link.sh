#!/bin/bash
# Protects "nothing lost silently" when the connection between an agent
# and a live coordinator breaks (doc/capture.md): the agent's TCP socket
# is destroyed (ss -K) while the coordinator is stopped, with a task
# running and another that ended unacknowledged.  The coordinator holds
# the running task for the host's next agent; the same agent dials again,
# says hello, announces both tasks with TASK_RESUME and sends again what
# was not acknowledged; the coordinator drops what it already had.  Each
# task's stream is complete exactly once: every record of its ring,
# none twice, none lost, one task line, and both end as exited.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"
ss -K dst 127.0.0.2 >/dev/null 2>&1 || skip "ss -K (SOCK_DESTROY) is not available"

N=3000			# pvm_getsbuf calls of the long burst, 1 ms apart
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"
port=${COORD_ADDR##*:}

for b in long short; do : >"$RUN/$b.log"; touch "$RUN/$b.log.go"; done
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/burst" -p 1000 $N "$RUN/long.log"
LONG=$BG_PID
did() { awk '$1 == "did" { n = $2 } END { print n + 0 }' "$RUN/long.log"; }
wait_for 20 eval '[ "$(did)" -ge 300 ]' || fail "burst did not start its calls"

# The coordinator reads nothing now: the short task's end stays
# unacknowledged in the agent.
kill -STOP "$COORD_PID"
pmon_exec "$PROGS/burst" 10 "$RUN/short.log" ||
    { kill -CONT "$COORD_PID"; fail "short burst failed"; }
ss -K src 127.0.0.1 dst 127.0.0.1 dport = ":$port" >"$RUN/ss.out" 2>&1
kill -CONT "$COORD_PID"
grep -q ESTAB "$RUN/ss.out" || fail "no agent connection was destroyed: $(cat "$RUN/ss.out")"
before=$(did)
wait "$LONG" || fail "long burst failed"
[ "$before" -lt "$N" ] || fail "the long burst ended before the link broke"
[ "$(sock_pid "$(agent_sock)")" = "$AGENT_PID" ] ||
    fail "the agent is not the same: it should have dialed again"

$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
pmon_shutdown "$TRACE_PID"

"$STREAMCHECK" "$RUN/trace.json" >"$RUN/check.out" 2>&1 ||
    fail "stream check: $(head -20 "$RUN/check.out")"
for b in long short; do
	read -r _ tid _ <"$RUN/$b.log"
	written=$(awk '$1 == "ring" { print $3 }' "$RUN/$b.log")
	dropped=$(awk '$1 == "ring" { print $5 }' "$RUN/$b.log")
	expect_eq "records the $b ring dropped" 0 "$dropped"
	sel="select(.tid == $tid and .call)"
	expect_eq "events of the $b burst" "$written" \
	    "$(jq -s "[.[] | $sel] | length" "$RUN/trace.json")"
	expect_eq "last seq of the $b burst" "$written" \
	    "$(jq -s "[.[] | $sel | .seq] | max" "$RUN/trace.json")"
	expect_eq "lost markers of the $b burst" 0 "$(jq -s "[.[] | $sel |
	    select(.call == \"lost\")] | length" "$RUN/trace.json")"
	expect_eq "task lines of the $b burst" 1 "$(jq -s "[.[] |
	    select(.type == \"task\" and .tid == $tid)] | length" \
	    "$RUN/trace.json")"
	expect_eq "state of the $b burst" exited "$(jq -r ".tasks[] |
	    select(.tid == $tid) | .state" "$RUN/ps.json")"
done
grep -q "dropping it" "$(coord_log)" && fail "an agent was dropped: $(cat "$(coord_log)")"
pass
