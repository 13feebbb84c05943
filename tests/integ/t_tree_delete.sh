#!/bin/bash
# A tree of coordinators whose intermediate's host leaves the virtual
# machine (issue 20; doc/protocol.md, "A tree of coordinators"): 4 hosts
# (network namespaces) under `pmon start --fanout 2`, so the
# intermediate of hosts 3-4 runs on host 3.  A lossless `pmon trace
# --json` gets a message storm whose task 0 runs on host 1 and the
# others on host 4 (storm -H), so some channels lie within the subtree
# and two cross it.  Mid-run, the console deletes host 3: its pvmd kills
# the intermediate and host 3's agent.  The root starts the intermediate
# on host 4, the next host of its subtree, and tells host 4's agent the
# new address (a PVM message); the agent dials it and sends what the
# root had not acknowledged.  The trace then holds every event the storm
# made (storm.c's count), once each, causal and complete, no receive
# released unmatched and no lost marker; `pmon problems` finds none;
# `pmon hosts` shows host 3 deleted and host 4's agent up via host 4.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
command -v jq >/dev/null || skip "jq is not installed"
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

# Task 0 paces the rounds (-p US, 3.2 s in all) so that the deletion
# comes mid-run, even under the sanitizers.
n=16 rounds=400 pace=8000
netns_pmon_up 4 -v -Q 268435456 --fanout 2
log=$(host_tmp 1)/pmon-coordd.$(id -u).log
H3=$(ns_name 3) H4=$(ns_name 4)

relay_pid() { pgrep -f -- "pmon-coordd -U .* -S 1:"; }
first=$(relay_pid)
[ -n "$first" ] || fail "no intermediate for hosts 3-4"
[ "$(ip netns identify "$first")" = "$H3" ] ||
    fail "the intermediate of hosts 3-4 is not on $H3"

pmon_trace "$RUN/trace.json" --lossless

calls() { grep -c '"call"' "$RUN/trace.json"; }
calls_over() { [ "$(calls)" -gt "$1" ]; }
bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" -p $pace -H "$H4" \
    $n $rounds >"$RUN/storm.out" 2>"$RUN/storm.err"
STORM_PID=$BG_PID
wait_for 20 calls_over $((n * 20)) ||
    fail "the storm did not get going: $(calls) events"

$PM_ON sh -c "printf 'delete $H3\nquit\n' | timeout 20 pvm" \
    >"$RUN/delete.out" 2>&1
grep -q "$H3 *deleted" "$RUN/delete.out" ||
    fail "the console did not delete $H3: $(cat "$RUN/delete.out")"
moved() {
	p=$(relay_pid) && [ -n "$p" ] && [ "$p" != "$first" ] &&
	    [ "$(ip netns identify "$p")" = "$H4" ]
}
wait_for 20 moved || fail "the intermediate was not started on $H4: \
$(grep intermediate "$log")"
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
expect_eq "the root's word on the move" 1 "$(grep -c \
    "intermediate 1: host $H3 is gone; starting it on host $H4" "$log")"
grep -q "intermediate 1 .* listens on .*; telling its agents" "$log" ||
    fail "the root did not tell the agents: $(grep intermediate "$log")"
# The agents' stderr goes to the master pvmd's log.
grep -q "says the coordinator is at .*: dialing it instead of" \
    "$(host_tmp 1)/pvml.$(id -u)" ||
    fail "host 4's agent did not dial the new intermediate"

$PM_ON timeout 60 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" problems >"$RUN/problems.txt" 2>&1 ||
    fail "pmon problems failed: $(cat "$RUN/problems.txt")"
expect_eq "pmon problems" "no problems" "$(cat "$RUN/problems.txt")"
$PM_ON timeout 20 "$PMON" hosts --json >"$RUN/hosts.json" ||
    fail "pmon hosts failed"
host_field() {
	jq -r --arg h "$1" ".hosts[] | select(.name == \$h) | .$2" \
	    "$RUN/hosts.json"
}
expect_eq "host $H3's agent" deleted "$(host_field "$H3" agent)"
expect_eq "host $H4's agent" up "$(host_field "$H4" agent)"
expect_eq "host $H4's agent via" "$H4" "$(host_field "$H4" via)"

pmon_shutdown "$TRACE_PID"
# storm.c: 10 events a round and 16 besides per task, 2 more of task 0.
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
expect_eq "events in the stream" $((10 * n * rounds + 16 * n + 2)) \
    "$(calls)"
expect_eq "receives released unmatched" 0 \
    "$(grep -c '"unmatched":true' "$RUN/trace.json")"
expect_eq "lost markers" 0 "$(grep -c '"lost"' "$RUN/trace.json")"
pass
