#!/bin/bash
# A tree of coordinators whose root dies, replaced by a plain `pmon
# start --fanout 2` (doc/capture.md, "A coordinator restart"; issue 20):
# 4 hosts (network namespaces), so intermediates on hosts 1 and 3.  A
# message storm that PVM spreads over every host runs across the
# restart; trace A is attached to the first root, trace B to the
# second.  The root is SIGKILLed while every agent waits (stopped, so
# that B is attached before anything is sent again); the intermediates
# go with it and close their agents' connections without telling them
# to leave.  The new root starts new intermediates, finds the agents of
# the old tree through PVM and tells each its new intermediate's
# address.  Then:
# - every host's agent is the one from before, up via its intermediate;
# - B has every storm task from some record on to its last, without a
#   gap and without a lost marker, starting no later than where A ended;
# - A and B together hold every event the storm made (storm.c's count),
#   and `pmon problems` finds none.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

# 16 tasks, 500 rounds, task 0 sleeping 5 ms a round: 2.5 s or more.
# RESTART_HOSTS, RESTART_TASKS, RESTART_ROUNDS and RESTART_FANOUT try
# it larger.
hosts=${RESTART_HOSTS:-4} n=${RESTART_TASKS:-16}
rounds=${RESTART_ROUNDS:-500} fanout=${RESTART_FANOUT:-2} pace=5000
netns_pmon_up "$hosts" -v -Q 268435456 --fanout "$fanout"
first_addr=$COORD_ADDR

# agent_on I: the pid of the agent listening on host I's socket.
agent_on() {
	"$RUN/on$1" ss -xlpn 2>/dev/null |
	    awk -v p="$(host_tmp "$1")/pmon-agent.$(id -u)" '$5 == p' |
	    sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p' | head -n 1
}
agents=
for i in $(seq $hosts); do
	p=$(agent_on "$i")
	[ -n "$p" ] || fail "no agent on host $i"
	agents="$agents $p"
done

trace() {
	bg $PM_ON "$PMON" trace --json --tasks --lossless </dev/null \
	    >"$RUN/$1.json" 2>"$RUN/$1.err"
	TRACE_PID=$BG_PID
	wait_for 10 trace_connected "$TRACE_PID" ||
	    { kill -CONT $agents; fail "trace $1 did not connect: $(cat "$RUN/$1.err")"; }
}
trace a
TRACE_A=$TRACE_PID
calls() { grep -c '"call"' "$1"; }
calls_over() { [ "$(calls "$1")" -gt "$2" ]; }
bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" -p $pace $n $rounds \
    >"$RUN/storm.out" 2>"$RUN/storm.err"
STORM_PID=$BG_PID
wait_for 20 calls_over "$RUN/a.json" $((n * 50)) ||
    fail "the storm did not get going: $(calls "$RUN/a.json") events"

kill -STOP $agents
kill -KILL "$COORD_PID"
wait_for 10 pid_dead "$COORD_PID" ||
    { kill -CONT $agents; fail "the root survived SIGKILL"; }
wait_for 10 pid_dead "$TRACE_A" ||
    { kill -CONT $agents; fail "trace A outlived its coordinator"; }
relays() { pgrep -f -- "pmon-coordd -U " | wc -l; }
wait_for 10 eval '[ "$(relays)" = 0 ]' ||
    { kill -CONT $agents; fail "the intermediates outlived their root"; }
bg $PM_ON "$PMON" start -v -v -Q 268435456 --fanout "$fanout" </dev/null \
    >"$RUN/start2.out" 2>&1
START_PID=$BG_PID
listening() { COORD_PID=$(sock_pid "$(coord_sock)") && [ -n "$COORD_PID" ]; }
wait_for 10 listening ||
    { kill -CONT $agents; fail "no second root: $(cat "$RUN/start2.out")"; }
PM_COORD_PIDS="$PM_COORD_PIDS $COORD_PID"
trace b
kill -CONT $agents
wait "$START_PID" || fail "the second pmon start failed: $(cat "$RUN/start2.out")"
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"

now=
for i in $(seq $hosts); do now="$now $(agent_on "$i")"; done
expect_eq "the hosts' agents" "$agents" "$now"
grep -q "no agent said hello" "$RUN/start2.out" &&
    fail "the new root waited for an agent in vain"
$PM_ON timeout 60 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
expect_eq "hosts shown with their intermediate" $hosts \
    "$($PM_ON "$PMON" hosts | grep -c ' up via ')"
$PM_ON timeout 20 "$PMON" problems >"$RUN/problems.txt" 2>&1 ||
    fail "pmon problems failed: $(cat "$RUN/problems.txt")"
expect_eq "pmon problems" "no problems" "$(cat "$RUN/problems.txt")"
pmon_shutdown "$TRACE_PID"

# storm.c: 10 events a round and 16 besides per task, 2 more of task 0.
restart_streams_check "$RUN/a.json" "$RUN/b.json" \
    $((10 * n * rounds + 16 * n + 2))
pass
