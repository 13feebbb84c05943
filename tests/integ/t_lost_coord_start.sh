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

# 4 tasks, 1000 rounds, task 0 sleeping 5 ms a round: 5 s or more.
n=4 rounds=1000 pace=5000
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

# Per task: B's records, a run without a gap that starts no later than
# A's last + 1; A and B together: every event of the storm.
jq -r 'select(.call) | "\(.tid) \(.seq) \(.call)"' \
    "$RUN/a.json" >"$RUN/a.seq"
jq -r 'select(.call) | "\(.tid) \(.seq) \(.call)"' \
    "$RUN/b.json" >"$RUN/b.seq"
awk 'NR == FNR { if (!($1 in alast) || $2 > alast[$1]) alast[$1] = $2; next }
    $3 == "lost" { print "lost marker of t" $1; bad = 1 }
    ($1 in bprev) && $2 != bprev[$1] + 1 {
	print "t" $1 ": B jumps from " bprev[$1] " to " $2; bad = 1 }
    !($1 in bprev) && ($1 in alast) && $2 > alast[$1] + 1 {
	print "t" $1 ": B starts at " $2 ", A ended at " alast[$1]; bad = 1 }
    { bprev[$1] = $2 }
    END { exit bad }' "$RUN/a.seq" "$RUN/b.seq" >"$RUN/check.out" ||
    fail "trace B: $(head "$RUN/check.out")"
expect_eq "events in A and B together" $((10 * n * rounds + 16 * n + 2)) \
    "$(cat "$RUN/a.seq" "$RUN/b.seq" | awk '{ print $1, $2 }' | sort -u |
    wc -l)"
pass
