#!/bin/bash
# A coordinator that died, replaced by a plain `pmon start` (doc/capture.md,
# "A coordinator restart"): the new coordinator listens on another port,
# finds the agent of the dead one still running (pvm_tasks), tells it
# the new address (a PVM message) instead of starting another agent, and
# the agent sends it every record the dead one had not acknowledged.
# A message storm (4 tasks, paced) runs across the restart; trace A is
# attached to the first coordinator, trace B to the second.  Then:
# - the agent is the one from before, the host is up, and the second
#   `pmon start` waited for no agent in vain;
# - B has every storm task from some record on to its last, without a
#   gap and without a lost marker, starting no later than where A ended;
# - A and B together hold every event the storm made (storm.c's count).
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

# 4 tasks, 600 rounds, task 0 sleeping 5 ms a round: 3 s or more.
n=4 rounds=600 pace=5000
start_pvmd
pmon_start
first_addr=$COORD_ADDR
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"
pmon_trace "$RUN/a.json"
TRACE_A=$TRACE_PID

calls() { grep -c '"call"' "$1"; }
calls_over() { [ "$(calls "$1")" -gt "$2" ]; }
bg "$PMON" exec "$PROGS/storm" -p $pace $n $rounds >"$RUN/storm.out" \
    2>"$RUN/storm.err"
STORM_PID=$BG_PID
wait_for 20 calls_over "$RUN/a.json" $((n * 100)) ||
    fail "the storm did not get going: $(calls "$RUN/a.json") events"

# The agent waits (stopped) while the coordinator dies and another
# starts, so that trace B is attached before anything is sent again.
kill -STOP "$AGENT_PID"
kill -KILL "$COORD_PID"
wait_for 10 pid_dead "$COORD_PID" || fail "the coordinator survived SIGKILL"
wait_for 10 pid_dead "$TRACE_A" || fail "trace A outlived its coordinator"
bg "$PMON" start -v -v -Q 268435456 </dev/null >"$RUN/start2.out" 2>&1
START_PID=$BG_PID
listening() { COORD_PID=$(sock_pid "$(coord_sock)") && [ -n "$COORD_PID" ]; }
wait_for 10 listening ||
    { kill -CONT "$AGENT_PID"; fail "no second coordinator: $(cat "$RUN/start2.out")"; }
PM_COORD_PIDS="$PM_COORD_PIDS $COORD_PID"
bg "$PMON" trace --json --tasks </dev/null >"$RUN/b.json" 2>"$RUN/b.err"
TRACE_PID=$BG_PID
wait_for 10 trace_connected "$TRACE_PID" ||
    { kill -CONT "$AGENT_PID"; fail "trace B did not connect: $(cat "$RUN/b.err")"; }
kill -CONT "$AGENT_PID"
wait "$START_PID" || fail "the second pmon start failed: $(cat "$RUN/start2.out")"
addr=$(grep -E ':[0-9]+$' "$RUN/start2.out" | tail -n 1)
[ -n "$addr" ] && [ "$addr" != "$first_addr" ] ||
    fail "the second coordinator listens at '$addr', the first at $first_addr"
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"

expect_eq "the agent" "$AGENT_PID" "$(sock_pid "$(agent_sock)")"
expect_eq "the host's agent" up "$(timeout 20 "$PMON" hosts --json |
    jq -r '.hosts[0].agent')"
grep -q "pmon-agentd tasks* of a coordinator before; told to dial $addr" \
    "$RUN/start2.out" ||
    fail "the new coordinator did not look for the agent: $(cat "$RUN/start2.out")"
grep -q "no agent said hello" "$RUN/start2.out" &&
    fail "the new coordinator waited for an agent in vain"
pmon_shutdown "$TRACE_PID"

# storm.c: 10 events a round and 16 besides per task, 2 more of task 0.
restart_streams_check "$RUN/a.json" "$RUN/b.json" \
    $((10 * n * rounds + 16 * n + 2))
pass
