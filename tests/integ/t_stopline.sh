#!/bin/bash
# Protects stoplines (paper 002 sections 3.3-3.4; doc/control.md) on a
# 2-host machine (network namespaces): a frontier taken in one run stops
# a rerun there.  pingpong runs once, its workers on both hosts, in a
# fresh virtual machine; the frontier of one of the master's pings is
# saved with `pmon frontier`.  In a second fresh machine started the
# same way (so the tids are the same), `pmon stopline` on that file,
# then pingpong again: every task must stop at its frontier record --
# the BREAK right after its last event of the past frontier, at the very
# call the first run made next -- having made the same calls as in the
# first run up to there.  Ending `pmon stopline` lets pingpong finish.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/pingpong" ] || fail "missing $PROGS/pingpong"
command -v jq >/dev/null || fail "jq is needed"

k=3 rounds=20
netns_setup 2
PM_ON="$RUN/on1"

# The processes left in the hosts' namespaces.
ns_procs() {
	local i
	for i in 1 2; do
		ip netns pids "$(ns_name "$i")" 2>/dev/null
	done
}
ns_empty() { [ -z "$(ns_procs)" ]; }

# vm N: a fresh 2-host machine and pmon, traced into $RUN/runN.json.
vm() {
	rm -f "$(host_tmp 2)"/pvml.*
	netns_start_pvmd
	netns_wait_hosts_quiet 2
	pmon_start
	netns_wait_agents 2
	pmon_trace "$RUN/run$1.json"
}
vm_end() {
	pmon_shutdown "$TRACE_PID"
	stop_pid "$PVMD_PID" 5 || pm_log "pvmd $PVMD_PID needed SIGKILL"
	wait_for 10 ns_empty || fail "left on the hosts: $(ns_procs)"
}

# --- the first run, and a frontier in it ---------------------------------------

vm 1
pmon_exec "$PROGS/pingpong" "$k" "$rounds" 100 "$RUN/pp1.log" ||
    fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
master=$(awk '$1 == "master" { print $2 }' "$RUN/pp1.log")
# The master's 10th ping: the frontier cuts every task mid-run.  The
# trace may still be on its way when pingpong has exited.
tenth_ping() {
	ev=$(jq -r --argjson m "$master" 'select(.tid == $m and
	    .call == "pvm_send" and .phase == "begin" and .tag == 2) | .id' \
	    "$RUN/run1.json" | sed -n 10p)
	[ -n "$ev" ]
}
wait_for 10 tenth_ping || fail "no 10th ping in the first run"
$PM_ON "$PMON" frontier --json "$ev" >"$RUN/frontier.json" ||
    fail "pmon frontier $ev failed"
vm_end
pm_log "frontier of $ev: $(jq -c .past "$RUN/frontier.json")"
ntasks=$(jq '[.past[] | select(. != null)] | length' "$RUN/frontier.json")
[ "$ntasks" = $((k + 1)) ] ||
    fail "want a past event of all $((k + 1)) tasks: $(cat "$RUN/frontier.json")"
expect_eq "hosts of the tasks in the frontier" 2 "$(jq -r '.past | keys[]' \
    "$RUN/frontier.json" | while read -r t; do
	echo $(((t >> 18) & 0xfff)); done | sort -u | wc -l)"

# --- the rerun, stopped at the frontier -------------------------------------------

vm 2
SL=$RUN/stopline.json
bg $PM_ON "$PMON" stopline --json "$RUN/frontier.json" </dev/null >"$SL" \
    2>"$SL.err"
SL_PID=$BG_PID
wait_for 10 eval '[ "$(grep -c "\"what\":\"added\"" "$SL")" = "$ntasks" ]' ||
    fail "pmon stopline did not set $ntasks stoplines: $(cat "$SL" "$SL.err")"
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/pingpong" "$k" "$rounds" 100 \
    "$RUN/pp2.log" >"$RUN/pp2.out" 2>&1
EXEC_PID=$BG_PID
stopped() {
	jq -s '[.[] | select(.notice == "stopped") | .tasks[]] | unique |
	    length' "$SL"
}
wait_for 20 eval '[ "$(stopped)" = "$ntasks" ]' ||
    fail "not every task stopped at its stopline: $(cat "$SL")"
$PM_ON "$PMON" snapshot --json >"$RUN/stopped.snap" || fail "pmon snapshot"

# Each task: stopped at its BREAK, which comes right after its frontier
# record if the first run's next record began a call (stopped before
# it), or one later if it ended one (stopped right after that call).
for tid in $(jq -r '.past | keys[]' "$RUN/frontier.json"); do
	past=$(jq --arg t "$tid" '.past[$t]' "$RUN/frontier.json")
	next=$(jq -c --argjson t "$tid" --argjson s $((past + 1)) \
	    'select(.tid == $t and .seq == $s) | {call, phase}' \
	    "$RUN/run1.json")
	[ -n "$next" ] || fail "t$tid: no record $((past + 1)) in run 1"
	if [ "$(jq -r .phase <<<"$next")" = begin ]; then
		want_seq=$((past + 1)) want_phase=before
	else
		want_seq=$((past + 2)) want_phase=after
	fi
	jq -e --argjson t "$tid" --arg id "$tid:$want_seq" \
	    --arg call "$(jq -r .call <<<"$next")" --arg ph "$want_phase" '
	    .tasks[] | select(.tid == $t) | .state == "stopped" and
	    .stopped.at.event == $id and .stopped.at.call == $call and
	    .stopped.at.phase == $ph' "$RUN/stopped.snap" >/dev/null ||
	    fail "t$tid should be stopped $want_phase $next at $tid:$want_seq: \
$(jq -c --argjson t "$tid" '.tasks[] | select(.tid == $t) |
	    {state, stopped, last_seq}' "$RUN/stopped.snap")"
done

kill -TERM "$SL_PID"
wait "$SL_PID" || fail "pmon stopline exited with $?: $(cat "$SL.err")"
wait "$EXEC_PID" || fail "the rerun's pingpong exited with $?: $(cat \
    "$RUN/pp2.out")"
EXEC_PID=""
grep -qx done "$RUN/pp2.log" || fail "the rerun did not finish"
vm_end

# Up to the frontier the rerun made the same calls: same records.
for tid in $(jq -r '.past | keys[]' "$RUN/frontier.json"); do
	past=$(jq --arg t "$tid" '.past[$t]' "$RUN/frontier.json")
	for r in 1 2; do
		jq -c --argjson t "$tid" --argjson p "$past" 'select(.call and .tid == $t
		    and .seq <= $p) | [.seq, .call, .phase]' \
		    "$RUN/run$r.json" >"$RUN/upto.$tid.$r"
	done
	expect_eq "t$tid records up to the frontier" "$past" \
	    "$(wc -l <"$RUN/upto.$tid.2")"
	cmp -s "$RUN/upto.$tid.1" "$RUN/upto.$tid.2" || fail "t$tid: the \
rerun differs before the frontier: $(diff "$RUN/upto.$tid.1" \
	    "$RUN/upto.$tid.2" | head -n 4)"
done
expect_eq "BREAK records in the rerun" "$ntasks" \
    "$(count_lines '"call":"break"' "$RUN/run2.json")"
pass
