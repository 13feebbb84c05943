#!/bin/bash
# Protects "nothing lost silently" across an agent restart
# (doc/capture.md): the agent is SIGKILLed while a task makes calls; the
# coordinator holds the task, starts another agent on the host, which
# adopts the task's ring and reads on from its tail.  The task never
# notices and finishes; its stream goes on with every seq up to its
# ring's last write, nothing lost: the ring held what the coordinator
# had not acknowledged, the new agent sends it again, the coordinator
# drops what it already had.  The task is announced once and never
# reported ended while it ran.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"

N=3000			# pvm_getsbuf calls, 1 ms apart
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"

burst_start $N
log=$BURST_LOG
agent_kill "$AGENT_PID"
before=$(burst_did)
read -r _ tid pid <"$log"
# The new agent maps burst's ring (tid: an i32 at byte 12 of its header).
adopted() {
	local f
	for f in /proc/$NEW_PID/fd/*; do
		case $(readlink "$f") in "/memfd:pmon-ring"*) ;; *) continue ;; esac
		[ "$(od -An -t d4 -j 12 -N 4 "$f" | tr -d ' ')" = "$tid" ] &&
		    return 0
	done
	return 1
}
wait_for 10 adopted || fail "the new agent did not adopt burst's ring"
[ "$(burst_did)" -lt "$N" ] || fail "burst finished before its new agent came"
wait "$BURST" || fail "burst failed"
written=$(awk '$1 == "ring" { print $3 }' "$log")
dropped=$(awk '$1 == "ring" { print $5 }' "$log")
expect_eq "records burst made (written + dropped)" $((2 * (N + 2))) \
    $((written + dropped))

$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
pmon_shutdown "$TRACE_PID"

expect_burst_whole "$RUN/trace.json" "$RUN/ps.json" "$tid" "$N" "$before"
pass
