#!/bin/bash
# A tree of coordinators (issue 20): 8 hosts (network namespaces) under
# `pmon start --fanout 4`, so two intermediate coordinators, spawned
# through PVM on hosts 1 and 5, each take the agents of four hosts, and
# the root takes the two.  Every agent's connection reaches the root
# through an intermediate.  A lossless `pmon trace --json` attached to
# the root gets two message storms that PVM spreads over every host
# (each task sends to its successor and takes one message with a
# wildcard receive: some channels lie within a subtree, the rest
# cross):
# - the first is stopped mid-run with `pmon stop *`: every storm task on
#   every host stops (the kernel shows it), no event comes while they
#   are stopped, and `pmon continue *` lets it finish;
# - during the second, the intermediate of hosts 5-8 is killed
#   (SIGKILL).  The root starts it again through PVM on the same host
#   and address, its agents dial it again and send what the root had
#   not acknowledged, and the root drops what it had.  Then the agent
#   of host 3, under the other intermediate, is killed: the root starts
#   another there (PVM tells it the agent exited), which dials that
#   intermediate and adopts the running tasks' rings.
# The trace then holds every event both storms made (storm.c's count),
# once each, causal and complete (streamcheck: every send matched), no
# receive released without its send and no lost marker, although the
# new intermediate never saw the sends its predecessor forwarded (the
# root matches those receives); `pmon problems` finds none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

# Task 0 paces the rounds (-p US, 3.2 s in all) so that the stop and the
# kill come mid-run, once every task runs, even under the sanitizers.
hosts=8 n=${TREE_TASKS:-64} rounds=${TREE_ROUNDS:-400} pace=8000
netns_pmon_up $hosts -v -Q 268435456 --fanout 4
log=$(host_tmp 1)/pmon-coordd.$(id -u).log

relay_pid() { pgrep -f -- "pmon-coordd -U .* -S $1:"; }
[ -n "$(relay_pid 0)" ] || fail "no intermediate for hosts 1-4"
[ -n "$(relay_pid 1)" ] || fail "no intermediate for hosts 5-8"
# The root heard each agent's hello from an intermediate's host.
hellos() { grep -E 'agent [0-9.]+:[0-9]+: host ' "$PVM_TMP.pmon-start.out"; }
expect_eq "agents' hellos at the root" $hosts "$(hellos | wc -l)"
expect_eq "agents' hellos from elsewhere" 0 \
    "$(hellos | grep -vc 'agent 198\.18\.0\.1[15]:')"
# pmon hosts says which intermediate each host's agent dials.
$PM_ON timeout 20 "$PMON" hosts --json >"$RUN/hosts.json" ||
    fail "pmon hosts failed"
via() {
	jq --argjson lo "$1" --argjson hi "$2" --argjson at "$3" '
	    (.hosts[] | select(.host_tid == $at * 262144) | .name) as $v |
	    [.hosts[] | select(.host_tid / 262144 | floor | . >= $lo and
	    . <= $hi) | select(.via == $v)] | length' "$RUN/hosts.json"
}
expect_eq "hosts 1-4 via host 1" 4 "$(via 1 4 1)"
expect_eq "hosts 5-8 via host 5" 4 "$(via 5 8 5)"
expect_eq "hosts shown with their intermediate" $hosts \
    "$($PM_ON "$PMON" hosts | grep -c ' up via ')"

bg $PM_ON "$PMON" trace --json --tasks --lossless </dev/null \
    >"$RUN/trace.json" 2>"$RUN/trace.err"
TRACE_PID=$BG_PID
wait_for 10 trace_connected "$TRACE_PID" ||
    fail "pmon trace did not connect: $(cat "$RUN/trace.err")"
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

calls() { grep -c '"call"' "$RUN/trace.json"; }
calls_over() { [ "$(calls)" -gt "$1" ]; }
# Every task of the storm registered: a task that starts while "stop *"
# is in force is stopped as it starts, and may miss the continue.
registered() { [ "$(grep -c '"type":"task".*"program":"storm"' \
    "$RUN/trace.json")" -ge "$1" ]; }
storm() {
	bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" -p $pace $n $rounds \
	    >"$RUN/storm.out" 2>"$RUN/storm.err"
	STORM_PID=$BG_PID
	wait_for 30 registered $(($2 * n)) ||
	    fail "the storm's tasks did not all start"
	wait_for 20 calls_over $(($1 + n * 10)) ||
	    fail "the storm did not get going: $(calls) events"
}
storm_end() {
	wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
	grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
}

# 1: stop and continue, down the tree.
storm 0 1
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
used=$(jq "$live | map(.tid / 262144 | floor) | unique | length" \
    "$RUN/stop.snap")
expect_eq "hosts the storm ran on" $hosts "$used"
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
storm_end
$PM_ON timeout 60 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

# 2: an intermediate killed and started again.
first=$(relay_pid 1)
storm "$(calls)" 2
kill -KILL "$first"
restarted() { p=$(relay_pid 1) && [ -n "$p" ] && [ "$p" != "$first" ]; }
wait_for 10 restarted || fail "the intermediate was not started again"
# agent_on I: the pid of the agent listening on host I's socket.
agent_on() {
	"$RUN/on$1" ss -xlpn 2>/dev/null |
	    awk -v p="$(host_tmp "$1")/pmon-agent.$(id -u)" '$5 == p' |
	    sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p' | head -n 1
}
agent3=$(agent_on 3)
[ -n "$agent3" ] || fail "no agent on host 3"
kill -KILL "$agent3"
new_agent() { p=$(agent_on 3) && [ -n "$p" ] && [ "$p" != "$agent3" ]; }
wait_for 10 new_agent || fail "no agent was started again on host 3"
storm_end
grep -q "intermediate 1 .* exited; starting it again" "$log" ||
    fail "the root did not say it restarted the intermediate"
grep -q "restarting the agent of host .* (1 of 3)" "$log" ||
    fail "the root did not say it restarted host 3's agent"
grep -qE "agent 198\.18\.0\.11:[0-9]+: host [^ ]*3 .*pid $(agent_on 3)\$" \
    "$log" || fail "host 3's new agent did not reach the root through host 1"
$PM_ON timeout 60 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" problems >"$RUN/problems.txt" 2>&1 ||
    fail "pmon problems failed: $(cat "$RUN/problems.txt")"
expect_eq "pmon problems" "no problems" "$(cat "$RUN/problems.txt")"

pmon_shutdown "$TRACE_PID"
pm_log "$(grep -o 'shutdown: of the receives.*' "$log")"
# storm.c: 10 events a round and 16 besides per task, 2 more of task 0.
events=$((2 * (10 * n * rounds + 16 * n + 2)))
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
expect_eq "events in the stream" $events "$(calls)"
expect_eq "receives released unmatched" 0 \
    "$(grep -c '"unmatched":true' "$RUN/trace.json")"
expect_eq "lost markers" 0 "$(grep -c '"lost"' "$RUN/trace.json")"
pass
