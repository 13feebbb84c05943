#!/bin/bash
# Protects the whole chain of a lossless tool with blocking mode
# (doc/capture.md, "A lossless subscription" and "Blocking mode"): a
# lossless trace that stops reading for 2 s (less than -W) holds the
# agents back, the agent's buffer (-B 64 KiB) and its connection fill,
# the 4 KiB rings fill, and the storm's tasks wait (--block) instead of
# dropping; when the trace reads again the program goes on, and the
# trace holds every event of every task.  The host is a network
# namespace whose TCP buffers are made small, so that the kernel does
# not absorb the whole run between the agent and the coordinator.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
need_built "$PROGS/storm"
command -v jq >/dev/null || fail "jq is needed"

tasks=4 rounds=5000
netns_setup 1
ip netns exec "$(ns_name 1)" sysctl -q -w \
    net.ipv4.tcp_rmem="4096 16384 65536" \
    net.ipv4.tcp_wmem="4096 16384 65536" || fail "sysctl in the namespace"
netns_start_pvmd
netns_wait_hosts 1
PM_ON="$RUN/on1"
pmon_start -Q 262144 -W 30 -R 4096 -B 65536 --block
netns_wait_agents 1

bg $PM_ON "$PMON" trace --json --tasks --lossless </dev/null \
    >"$RUN/trace.json" 2>"$RUN/trace.err"
TRACE_PID=$BG_PID
wait_for 10 trace_connected "$TRACE_PID" ||
    fail "pmon trace --lossless did not connect: $(cat "$RUN/trace.err")"
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"
kill -STOP "$TRACE_PID"

bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" "$tasks" "$rounds" \
    "$RUN/calls" >"$RUN/storm.out" 2>&1
STORM_PID=$BG_PID
sleep 2
pid_alive "$STORM_PID" || fail "storm finished while its records had \
nowhere to go (the test proves nothing): $(cat "$RUN/storm.out")"
held=$($PM_ON timeout 10 "$PMON" tools --json </dev/null | jq .held_back)
kill -CONT "$TRACE_PID"
expect_eq "agents held back by the stopped trace" true "$held"
wait_for 100 pid_dead "$STORM_PID" || fail "storm did not finish"
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.out")"
grep -qx "storm ok" "$RUN/storm.out" || fail "storm did not finish"
grep -q "waited [0-9]* times for room in its ring" \
    "$(host_tmp 1)/pvml.$(id -u)" ||
    fail "no task waited for room in its ring (the test proves nothing)"
wait_calls "$tasks" "$RUN/calls"
pmon_shutdown "$TRACE_PID"

# Every event of every task: as many as the task made (its own count of
# its calls), numbered without a gap, no lost marker, no degrade.
expect_calls_complete "the lossless trace" "$RUN/trace.json" "$RUN/calls"
grep -q '"call":"lost"' "$RUN/trace.json" &&
    fail "the trace holds a lost marker"
grep -q '"notice":"degraded"' "$RUN/trace.json" &&
    fail "the trace was degraded although it stopped for less than -W"
pass
