#!/bin/bash
# Protects breakpoints across hosts (issue 5): pingpong over 2 namespace
# hosts; a debugger-like tool (`pmon watch`) sets a breakpoint on the
# workers' pong sends that stops every task.  The worker that hits it
# stops before its send; the tasks on both hosts stop (the kernel shows
# them stopped); a visualizer-like tool attached all along (`pmon
# trace`) is told of the stop, and after a flush the snapshot shows the
# exact state at the breakpoint: the pong not sent, the master waiting
# for it.  When the debugger leaves, everything runs to the end.
# With CONTROL_FANOUT=K (t_tree_control.sh), the same under `pmon start
# --fanout K`: the breakpoint table and the stops go down a tree of
# coordinators, the BREAK record and the answers up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/pingpong" ] || fail "missing $PROGS/pingpong"
command -v jq >/dev/null || fail "jq is needed"

if [ -n "${CONTROL_FANOUT:-}" ]; then
	netns_pmon_up 2 -Q 268435456 --fanout "$CONTROL_FANOUT"
	expect_eq "hosts whose agent dials an intermediate" 2 \
	    "$($PM_ON "$PMON" hosts | grep -c ' up via ')"
else
	netns_pmon_up 2
fi
pmon_trace "$RUN/trace.json"

host_of() { echo $((($1 >> 18) & 0xfff)); }
proc_state() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $1 }'; }
all_stopped() {
	local pid
	for pid in "$@"; do
		[ "$(proc_state "$pid")" = T ] || return 1
	done
}

k=3 rounds=20
WATCH=$RUN/watch.json
bg $PM_ON "$PMON" watch --json 'on enter pvm_send tag 3 do stop *' \
    </dev/null >"$WATCH" 2>"$WATCH.err"
WATCH_PID=$BG_PID
wait_for 10 grep -q '"what":"added"' "$WATCH" ||
    fail "pmon watch did not set its breakpoint: $(cat "$WATCH" "$WATCH.err")"
bp=$(jq -rs 'map(select(.notice == "breakpoint"))[0].id' "$WATCH")
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/pingpong" "$k" "$rounds" 100 \
    "$RUN/pp.log" >"$RUN/pp.out" 2>&1
EXEC_PID=$BG_PID

# The visualizer hears of the stop.
wait_for 20 grep -q '"type":"notice","notice":"stopped"' "$RUN/trace.json" ||
    fail "the trace was not told of the stop: $(cat "$WATCH")"
# A worker that registers after the hit is stopped when it does ("stop
# *" holds for tasks that start while the application is stopped), with
# a notice of its own: wait until the snapshot shows every task stopped.
live='[.tasks[] | select(.program == "pingpong" and .state != "exited")]'
all_in_snapshot() {
	$PM_ON "$PMON" snapshot --json >"$RUN/bp.snap" 2>"$RUN/bp.err" ||
	    fail "pmon snapshot: $(cat "$RUN/bp.err")"
	jq -e --argjson n $((k + 1)) "$live | length == \$n and
	    all(.state == \"stopped\")" "$RUN/bp.snap" >/dev/null
}
wait_for 10 all_in_snapshot
expect_eq "pingpong tasks" $((k + 1)) "$(jq "$live | length" "$RUN/bp.snap")"
expect_eq "hosts of the pingpong tasks" 2 "$(jq -r "$live | .[].tid" \
    "$RUN/bp.snap" | while read -r t; do host_of "$t"; done | sort -u |
    wc -l)"
pids=$(jq -r "$live | .[].pid" "$RUN/bp.snap")
wait_for 5 all_stopped $pids || fail "not every pingpong task stopped: \
$(for p in $pids; do echo "$p $(proc_state "$p")"; done)"
jq -e "$live | all(.state == \"stopped\" and .stopped.breakpoint == $bp)" \
    "$RUN/bp.snap" >/dev/null || fail "the snapshot should show every task \
stopped by breakpoint $bp: $(jq -c "$live | map({tid, state, stopped})" \
    "$RUN/bp.snap")"

# The one at the breakpoint: before its first pong, nothing sent; the
# master has sent the k INITs and that worker's ping, received nothing,
# and waits for exactly that pong (unless the stop caught it between its
# ping and its pvm_recv).
hit=$(jq -c "$live | map(select(.stopped.at != null))" "$RUN/bp.snap")
expect_eq "tasks stopped at the breakpoint itself" 1 "$(jq length <<<"$hit")"
master=$(jq "$live | map(select(.parent == 0))[0].tid" "$RUN/bp.snap")
w=$(jq '.[0].tid' <<<"$hit")
jq -e --argjson m "$master" '.[0] | .stopped.at.call == "pvm_send" and
    .stopped.at.phase == "before" and .stopped.at.peer == $m and
    .stopped.at.tag == 3 and .sent.msgs == 0 and .received.msgs == 2' \
    <<<"$hit" >/dev/null || fail "the worker at the breakpoint: $hit"
jq -e --argjson m "$master" --argjson w "$w" --argjson k "$k" '.tasks[] |
    select(.tid == $m) | .sent.msgs == $k + 1 and .received.msgs == 0 and
    (.blocked == null or (.blocked.in == "pvm_recv" and
    .blocked.from == $w and .blocked.tag == 3))' "$RUN/bp.snap" >/dev/null ||
    fail "the master should wait for $w's pong: $(jq -c --argjson m \
    "$master" '.tasks[] | select(.tid == $m)' "$RUN/bp.snap")"
pm_log "stopped at the breakpoint: t$(printf %x "$w") (host $(host_of "$w"))"

kill -TERM "$WATCH_PID"
wait "$WATCH_PID" || fail "pmon watch exited with $?: $(cat "$WATCH.err")"
wait "$EXEC_PID" || fail "pingpong exited with $?: $(cat "$RUN/pp.out")"
EXEC_PID=""
grep -qx done "$RUN/pp.log" || fail "pingpong did not finish"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
expect_eq "BREAK records" 1 "$(count_lines '"call":"break"' "$RUN/trace.json")"
grep -q '"type":"notice","notice":"continued"' "$RUN/trace.json" ||
    fail "the trace was not told that the stops were released"
pass
