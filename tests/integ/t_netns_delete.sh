#!/bin/bash
# Protects host deletion (issue 17; doc/state.md, "Hosts"): on a 2-host
# machine, host 2 runs a task pmon monitors (spawned there from the
# console after pmon start) and one it does not (spawned before), both
# blocked in pvm_recv.  The console's `delete` of host 2 makes its pvmd
# kill them and its agent.  pmon then says so and goes on: a
# host_deleted notice in the stream, the host "deleted" in pmon hosts,
# the monitored task killed with every record it made (mytid and the
# receive's begin), the other ended, no agent restarted there, no
# problem reported; and master1 run afterwards on the host that is left
# is traced whole.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
command -v jq >/dev/null || skip "jq is not installed"
netns_setup 2
netns_start_pvmd
netns_wait_hosts 2
PM_ON="$RUN/on1"
H2=$(ns_name 2)

# spawn_on_2 NAME: outsider serve on host 2 from the console; its tid.
spawn_on_2() {
	$PM_ON sh -c "printf 'spawn -$H2 outsider serve /dev/null\nquit\n' |
	    timeout 20 pvm" >"$RUN/$1.out" 2>&1
	sed -n 's/^t\([0-9a-f]*\)$/\1/p' "$RUN/$1.out"
}
other=$(spawn_on_2 before)
[ -n "$other" ] || fail "no task spawned on $H2: $(cat "$RUN/before.out")"
pmon_start
netns_wait_agents 2
pmon_trace "$RUN/trace.json"
mine=$(spawn_on_2 after)
[ -n "$mine" ] || fail "no task spawned on $H2: $(cat "$RUN/after.out")"

# ps_state TID: the task's STATE in pmon ps.
ps_state() { $PM_ON "$PMON" ps | awk -v t="t$1" '$1 == t { print $4 }'; }
wait_for 10 eval '[ "$(ps_state "$mine")" = blocked ] &&
    [ "$(ps_state "$other")" = unmonitored ]' ||
    fail "not the two tasks on $H2: $($PM_ON "$PMON" ps)"

$PM_ON sh -c "printf 'delete $H2\nquit\n' | timeout 20 pvm" \
    >"$RUN/delete.out" 2>&1
grep -q "$H2 *deleted" "$RUN/delete.out" ||
    fail "the console did not delete $H2: $(cat "$RUN/delete.out")"
wait_for 20 eval '[ "$(ps_state "$mine")" = killed ] &&
    [ "$(ps_state "$other")" = ended ]' ||
    fail "the tasks of $H2 did not end: $($PM_ON "$PMON" ps)"
expect_eq "host $H2 in pmon hosts" deleted \
    "$($PM_ON "$PMON" hosts --json | jq -r --arg h "$H2" \
    '.hosts[] | select(.name == $h) | .agent')"
expect_eq "problems" "" "$($PM_ON "$PMON" problems | sed 1d)"

# The stream up to here: the killed task's receive stays open.
timeout 20 "$PMON" flush >/dev/null || fail "pmon flush failed"
stop_pid "$TRACE_PID"
"$STREAMCHECK" -a -k $((16#$mine)) "$RUN/trace.json" ||
    fail "stream violations"
expect_eq "host_deleted notices" 1 "$(jq -c --arg h "$H2" \
    'select(.notice == "host_deleted" and .host == $h)' \
    "$RUN/trace.json" | wc -l)"
# What the killed task made: mytid (begin, end), the receive's begin.
expect_eq "calls of the killed task" \
    "pvm_mytid begin,pvm_mytid end,pvm_recv begin" \
    "$(jq -r --argjson t "$((16#$mine))" 'select(.tid == $t and .call) |
    "\(.call) \(.phase)"' "$RUN/trace.json" | paste -sd,)"

pmon_trace "$RUN/trace2.json"
console_job "$RUN/console" "spawn -> master1"
n=$(sed -n 's/.*\] Spawning \([0-9]*\) worker tasks.*SUCCESSFUL.*/\1/p' \
    "$RUN/console")
expect_eq "master1 workers on the host left" 3 "$n"
trace_when_exited 'master1|slave1' $((n + 1))
expect_master1 "$RUN/trace2.json" "$n"
grep -q "cannot start.*$H2\|restarting the agent of host $H2" \
    "$(coord_log)" && fail "an agent restarted on the deleted host: \
$(grep "$H2" "$(coord_log)")"
[ -z "$(ip netns pids "$H2" | xargs -r ps -o comm= -p | grep -v '^sh$')" ] ||
    fail "processes left on $H2: $(ip netns pids "$H2" | xargs -r ps -o pid=,comm= -p)"
pass
