#!/bin/bash
# A tree of coordinators (issue 20): 8 hosts (network namespaces) under
# `pmon start --fanout 4`, so two intermediate coordinators, spawned
# through PVM on hosts 1 and 5, each merge four agents and the root
# merges the two.  A message storm that PVM spreads over every host
# (each task sends to its successor and takes one message with a
# wildcard receive: half its channels lie within a subtree, the rest
# cross) reaches a lossless `pmon trace --json` causal and complete
# (streamcheck), with every event storm.c makes and every receive
# matched; `pmon problems` finds none.  Stop and continue go down the
# tree: mid-run, `pmon stop *` stops every storm task on every host
# (the kernel shows them stopped), and their events stop with them;
# `pmon continue *` lets the storm finish.  Every event went up through
# an intermediate (their logs count them).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

# Task 0 paces the rounds (-p) so that the stop comes mid-run.
hosts=8 n=${TREE_TASKS:-96} rounds=${TREE_ROUNDS:-300} pace=${TREE_PACE:-3000}
netns_setup $hosts
netns_start_pvmd
netns_wait_hosts $hosts
PM_ON="$RUN/on1"
pmon_start -v -Q 268435456 --fanout 4
netns_wait_agents $hosts
coord=$COORD_PID

relays() { pgrep -f -- "pmon-coordd -U" | wc -l; }
expect_eq "intermediate coordinators" 2 "$(relays)"
for h in 1 5; do
	[ -f "$(host_tmp $h)/pmon-relay.$(id -u).log" ] ||
	    fail "no intermediate log on host $h"
done

bg $PM_ON "$PMON" trace --json --tasks --lossless </dev/null \
    >"$RUN/trace.json" 2>"$RUN/trace.err"
TRACE_PID=$BG_PID
wait_for 10 trace_connected "$TRACE_PID" ||
    fail "pmon trace did not connect: $(cat "$RUN/trace.err")"
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" -p $pace $n $rounds \
    >"$RUN/storm.out" 2>"$RUN/storm.err"
STORM_PID=$BG_PID
calls() { grep -c '"call"' "$RUN/trace.json"; }
calls_over() { [ "$(calls)" -gt "$1" ]; }
wait_for 20 calls_over $((n * 100)) ||
    fail "the storm did not get going: $(calls) events"
$PM_ON timeout 20 "$PMON" stop '*' >"$RUN/stop.out" 2>&1 ||
    fail "pmon stop: $(cat "$RUN/stop.out")"
proc_state() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null |
    awk '{ print $1 }'; }
live='[.tasks[] | select(.program == "storm" and .state != "exited")]'
$PM_ON timeout 20 "$PMON" snapshot --json >"$RUN/stop.snap" ||
    fail "pmon snapshot failed"
expect_eq "storm tasks stopped" $n \
    "$(jq "$live | map(select(.state == \"stopped\")) | length" \
    "$RUN/stop.snap")"
for pid in $(jq -r "$live | .[].pid" "$RUN/stop.snap"); do
	[ "$(proc_state "$pid")" = T ] || fail "storm pid $pid is not stopped"
done
stopped_at=$(calls)
sleep 1
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
expect_eq "events while stopped" "$stopped_at" "$(calls)"
$PM_ON timeout 20 "$PMON" continue '*' >"$RUN/cont.out" 2>&1 ||
    fail "pmon continue: $(cat "$RUN/cont.out")"
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
$PM_ON timeout 60 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" problems >"$RUN/problems.txt" 2>&1 ||
    fail "pmon problems failed: $(cat "$RUN/problems.txt")"
expect_eq "pmon problems" "no problems" "$(cat "$RUN/problems.txt")"
$PM_ON timeout 20 "$PMON" snapshot --json >"$RUN/snap.json" ||
    fail "pmon snapshot failed"
used=$(jq '[.tasks[] | select(.program == "storm") | .tid / 262144 | floor] |
    unique | length' "$RUN/snap.json")
expect_eq "hosts the storm ran on" $hosts "$used"
expect_eq "intermediate coordinators after the run" 2 "$(relays)"

pmon_shutdown "$TRACE_PID"
# storm.c: 10 events a round and 16 besides per task, 2 more of task 0.
events=$((10 * n * rounds + 16 * n + 2))
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
expect_eq "events in the stream" $events \
    "$(grep -c '"call"' "$RUN/trace.json")"
expect_eq "receives released unmatched" 0 \
    "$(grep -c '"unmatched":true' "$RUN/trace.json")"
# Every event came up through an intermediate: they log what each
# agent's uplink carried as the agents leave at the shutdown.
wait_for 20 test "$(relays)" -eq 0 || fail "intermediates still run"
up=$(cat "$(host_tmp 1)/pmon-relay.$(id -u).log" \
    "$(host_tmp 5)/pmon-relay.$(id -u).log" |
    awk '/events went up/ { s += $(NF - 3) } END { print s + 0 }')
expect_eq "events through the intermediates" $events "$up"
pass
