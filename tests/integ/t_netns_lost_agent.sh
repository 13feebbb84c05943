#!/bin/bash
# Protects the agent restart across hosts (doc/capture.md): two
# namespace hosts, a burst task on each; host 2's agent is SIGKILLed.
# The coordinator starts another on host 2 only, which adopts host 2's
# task and not host 1's (whose agent keeps it); both tasks finish, and
# each one's stream holds every seq up to its ring's last write, with
# nothing lost (host 2's ring held what was not acknowledged).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"

N=3000			# pvm_getsbuf calls, 1 ms apart, on each host
netns_pmon_up 2
pmon_trace "$RUN/trace.json"

# agent_on I: the pid of the agent listening on host I's socket.
agent_on() {
	"$RUN/on$1" ss -xlpn 2>/dev/null |
	    awk -v p="$(host_tmp "$1")/pmon-agent.$(id -u)" '$5 == p' |
	    sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p' | head -n 1
}
# maps_ring PID TID: process PID maps the ring of task TID.
maps_ring() {
	local f
	for f in /proc/$1/fd/*; do
		case $(readlink "$f") in "/memfd:pmon-ring"*) ;; *) continue ;; esac
		[ "$(od -An -t d4 -j 12 -N 4 "$f" | tr -d ' ')" = "$2" ] &&
		    return 0
	done
	return 1
}
did() { awk '$1 == "did" { n = $2 } END { print n + 0 }' "$1"; }

A1=$(agent_on 1) A2=$(agent_on 2)
[ -n "$A1" ] && [ -n "$A2" ] || fail "agents: host 1 '$A1', host 2 '$A2'"
for i in 1 2; do
	: >"$RUN/b$i.log"
	touch "$RUN/b$i.log.go"
	bg "$RUN/on$i" timeout 60 "$PMON" exec "$PROGS/burst" -p 1000 $N \
	    "$RUN/b$i.log"
	eval "B$i=\$BG_PID"
done
wait_for 20 eval '[ "$(did "$RUN/b2.log")" -ge 300 ]' ||
    fail "burst on host 2 did not start its calls"
kill -KILL "$A2"
wait_for 10 pid_dead "$A2" || fail "host 2's agent survived SIGKILL"
new_agent() { NEW=$(agent_on 2); [ -n "$NEW" ] && [ "$NEW" != "$A2" ]; }
wait_for 10 new_agent || fail "no agent was started again on host 2"
read -r _ t1 _ <"$RUN/b1.log"
read -r _ t2 _ <"$RUN/b2.log"
wait_for 10 maps_ring "$NEW" "$t2" ||
    fail "host 2's new agent did not adopt t$(printf %x "$t2")"
maps_ring "$NEW" "$t1" && fail "host 2's new agent adopted host 1's task"
[ "$(agent_on 1)" = "$A1" ] || fail "host 1's agent changed"
[ "$(did "$RUN/b2.log")" -lt "$N" ] ||
    fail "burst on host 2 finished before its new agent came"
wait "$B1" || fail "burst on host 1 failed"
wait "$B2" || fail "burst on host 2 failed"

$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
pmon_shutdown "$TRACE_PID"

"$STREAMCHECK" -l "$RUN/trace.json" >"$RUN/check.out" 2>&1 ||
    fail "stream check: $(head -20 "$RUN/check.out")"
for i in 1 2; do
	eval "tid=\$t$i"
	written=$(awk '$1 == "ring" { print $3 }' "$RUN/b$i.log")
	dropped=$(awk '$1 == "ring" { print $5 }' "$RUN/b$i.log")
	expect_eq "records of burst $i (written + dropped)" $((2 * (N + 2))) \
	    $((written + dropped))
	sel="select(.tid == $tid and .call)"
	lost=$(jq -s "[.[] | $sel | select(.call == \"lost\") | .count] |
	    add // 0" "$RUN/trace.json")
	events=$(jq -s "[.[] | $sel | select(.call != \"lost\")] | length" \
	    "$RUN/trace.json")
	pm_log "burst $i: $events events, $lost lost"
	expect_eq "events plus lost of burst $i" $((2 * (N + 2))) \
	    $((events + lost))
	expect_eq "lost of burst $i" 0 "$lost"
	expect_eq "task lines of burst $i" 1 "$(jq -s "[.[] | select(.type ==
	    \"task\" and .tid == $tid)] | length" "$RUN/trace.json")"
	expect_eq "state of burst $i" exited "$(jq -r ".tasks[] |
	    select(.tid == $tid) | .state" "$RUN/ps.json")"
	expect_eq "lost of burst $i in pmon ps" "$lost" "$(jq -r ".tasks[] |
	    select(.tid == $tid) | .lost" "$RUN/ps.json")"
done
pass
