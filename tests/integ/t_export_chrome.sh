#!/bin/bash
# Protects the Chrome export's arrows, as Chromium DevTools' Performance
# panel draws them (doc/exports.md, "chrome"): on a recording of master1,
# pingpong and deadpair (a two-task deadlock, killed with pmon kill
# after pingpong ran), every flow event binds the way DevTools' trace
# engine binds it (FlowsHandler: to the event with the same ts, pid, tid
# and cat; its "s" and "f" belong together by cat, name and id; a flow's
# events go in order of their start), and binds where it should: a
# message's "s" to the call that sent it, its "f" to the marker where it
# was received, later.  The counts come from the programs: master1 with
# N workers sends 3 N messages and makes N spawns, pingpong K ROUNDS 2 K
# ROUNDS + K messages and K spawns, deadpair none and one.  Also: pids
# from 1, the deadlocked receives last until the end of the trace, and
# each deadlocked task has an instant naming the deadlock and one
# naming its kill.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
for p in pingpong deadpair; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
command -v jq >/dev/null || fail "jq is needed (.ci/run installs it)"

start_pvmd
pmon_start
REC=$RUN/run.pmr
pmon_record "$REC"
bg "$PMON" export --format=chrome -o "$RUN/live.json" </dev/null \
    >"$RUN/live.out" 2>"$RUN/live.err"
LIVE_PID=$BG_PID
wait_for 10 trace_connected "$LIVE_PID" ||
    fail "pmon export did not connect: $(cat "$RUN/live.err")"
timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"

timeout 60 "$PMON" exec master1 >"$RUN/master1.out" 2>"$RUN/master1.err" ||
    fail "master1 failed: $(cat "$RUN/master1.err")"
n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*SUCCESSFUL/\1/p' \
    "$RUN/master1.out")
[ -n "$n" ] || fail "master1 did not spawn its workers: $(cat \
    "$RUN/master1.out")"

# deadpair blocks for good; pingpong runs after the deadlock was found,
# so the trace goes on past it; then pmon kill ends the pair.
deadpair_start
TIDS=$DP_TIDS
k=2 rounds=5
pmon_exec "$PROGS/pingpong" "$k" "$rounds" 64 "$RUN/pingpong.log" ||
    fail "pingpong failed: $(cat "$RUN/pingpong.err")"
grep -qx done "$RUN/pingpong.log" || fail "pingpong did not finish"
P=$(awk '$1 == "parent" { print $2 }' "$TIDS")
C=$(awk '$1 == "child" { print $2 }' "$TIDS")
timeout 20 "$PMON" kill "$P,$C" </dev/null >"$RUN/kill.out" 2>&1 ||
    fail "pmon kill: $(cat "$RUN/kill.out")"
wait_for 10 pid_dead "$DP_PID" || fail "deadpair did not end"
pmon_shutdown "$REC_PID"
wait_for 10 pid_dead "$LIVE_PID" || fail "the live export did not end"
wait "$LIVE_PID" || fail "the live export exited with $?"

C_JSON=$RUN/rec.json
timeout 30 "$PMON" export --format=chrome -i "$REC" -o "$C_JSON" \
    </dev/null >"$RUN/rec.out" 2>"$RUN/rec.err" ||
    fail "pmon export -i: $(cat "$RUN/rec.err")"
[ -s "$RUN/rec.err" ] && fail "pmon export -i complained: $(cat \
    "$RUN/rec.err")"
cmp "$RUN/live.json" "$C_JSON" >/dev/null || fail "the live export \
differs from the recording's: $(diff "$RUN/live.json" "$C_JSON" | head -n 6)"
jq -e '.traceEvents | length > 0' "$C_JSON" >/dev/null ||
    fail "not JSON: $(tail -c 300 "$C_JSON")"

# Every flow event with what it binds to, as DevTools binds it: the
# events (not flow events) with the same ts, pid, tid and cat.  The key
# is built from jq's numbers, which are doubles as in JavaScript.
BIND='def key: "\(.ts)|\(.pid)|\(.tid)|\(.cat)";
    [.traceEvents[] | select(.ts != null)] as $ev |
    ([$ev[] | select(.ph | test("^[stf]$") | not)] | group_by(key) |
    map({key: (.[0] | key), value: .}) | from_entries) as $by |
    [$ev[] | select(.ph | test("^[stf]$")) |
    . + {bound: ($by[key] // [])}]'
jq "$BIND" "$C_JSON" >"$RUN/flows.json" || fail "jq failed on the export"

bad=$(jq -r '.[] | select((.bound | length) != 1) |
    "\(.ph) \(.cat) id \(.id) at \(.ts) tid \(.tid): binds to \(.bound |
    length) events"' "$RUN/flows.json") || fail "jq failed on the bindings"
bad=$(head -n 5 <<<"$bad")
[ -z "$bad" ] || fail "flow events that bind to no event or to several:
$bad"
bad=$(jq -r '.[] | select(.ph == "s") | select(.bound[0] as $b |
    (if .cat == "spawn" then "^pvm_spawn$" else
    "^pvm_(send|psend|mcast|bcast)$" end) as $re |
    $b.ph != "X" or ($b.name | test($re) | not)) |
    "\(.cat) id \(.id): starts on \(.bound[0].ph) \(.bound[0].name)"' \
    "$RUN/flows.json") || fail "jq failed on the flow starts"
bad=$(head -n 5 <<<"$bad")
[ -z "$bad" ] || fail "flows that do not start on the call that sent:
$bad"
bad=$(jq -r '.[] | select(.ph == "f") | select(.bound[0] as $b |
    (if .cat == "spawn" then "^spawned by t[0-9a-f]+$" else
    "^message from t[0-9a-f]+$" end) as $re |
    $b.ph != "i" or ($b.name | test($re) | not)) |
    "\(.cat) id \(.id): ends on \(.bound[0].ph) \(.bound[0].name)"' \
    "$RUN/flows.json") || fail "jq failed on the flow ends"
bad=$(head -n 5 <<<"$bad")
[ -z "$bad" ] || fail "flows that do not end on a receiving marker:
$bad"
# One start and one end per flow (cat, name, id), the end's event later
# than the start's: DevTools keys a flow's events by their ts.
bad=$(jq -r 'group_by([.cat, .name, .id])[] | select(length != 2 or
    .[0].ph != "s" or .[1].ph != "f" or
    (.[1].bound[0].ts * 1000 | round) <= (.[0].bound[0].ts * 1000 |
    round)) | "\(.[0].cat) \(.[0].name) id \(.[0].id): \(map(.ph) |
    join(","))"' "$RUN/flows.json") || fail "jq failed on the flows"
bad=$(head -n 5 <<<"$bad")
[ -z "$bad" ] || fail "flows without one start and a later end: $bad"
# A receive's marker is inside the receive that got the message.
bad=$(jq -r '[.traceEvents[] | select(.ph == "X")] as $x |
    .traceEvents[] | select(.ph == "i" and .cat == "msg") | . as $m |
    select([$x[] | select(.tid == $m.tid and .ts <= $m.ts and
    .ts + .dur >= $m.ts and (.name | test("recv|probe")))] | length != 1) |
    "\(.name) at \(.ts) tid \(.tid)"' "$C_JSON") ||
    fail "jq failed on the markers"
bad=$(head -n 3 <<<"$bad")
[ -z "$bad" ] || fail "receive markers outside a receive: $bad"

cnt() { jq "[.[] | select(.ph == \"$1\" and .cat == \"$2\")] | length" \
    "$RUN/flows.json"; }
msgs=$((3 * n + 2 * k * rounds + k)) spawns=$((n + k + 1))
expect_eq "message flow starts" "$msgs" "$(cnt s msg)"
expect_eq "message flow ends" "$msgs" "$(cnt f msg)"
expect_eq "spawn flow starts" "$spawns" "$(cnt s spawn)"
expect_eq "spawn flow ends" "$spawns" "$(cnt f spawn)"

expect_eq "events with a pid below 1" 0 "$(jq '[.traceEvents[] |
    select(.pid != null and .pid < 1)] | length' "$C_JSON")"
expect_eq "hosts (process_name, pid 1)" 1 "$(jq '[.traceEvents[] |
    select(.name == "process_name" and .pid == 1)] | length' "$C_JSON")"

# The deadlock: each receive lasts until the end of the trace (the last
# time of any event, pingpong's), each task says deadlock and kill.
END=$(jq '[.traceEvents[] | select(.ts != null) | .ts + (.dur // 0)] |
    max * 1000 | round' "$C_JSON")
for t in $P $C; do
	r=$(jq -c --argjson t "$t" '[.traceEvents[] | select(.tid == $t and
	    .ph == "X" and .name == "pvm_recv")]' "$C_JSON")
	expect_eq "deadpair t$t: pvm_recv slices" 1 "$(jq length <<<"$r")"
	expect_eq "deadpair t$t: its pvm_recv is unfinished" true \
	    "$(jq '.[0].args.unfinished' <<<"$r")"
	expect_eq "deadpair t$t: its pvm_recv ends at the end of the trace" \
	    "$END" "$(jq '.[0] | (.ts + .dur) * 1000 | round' <<<"$r")"
	[ "$(jq '.[0].dur * 1000 | round' <<<"$r")" -gt 1000 ] ||
	    fail "deadpair t$t: its pvm_recv lasts only $(jq '.[0].dur' \
	    <<<"$r") us, though pingpong ran after it"
	expect_eq "deadpair t$t: instants naming the deadlock" 1 \
	    "$(jq --argjson t "$t" '[.traceEvents[] | select(.tid == $t and
	    .ph == "i" and (.name | test("^deadlock of 2 tasks: waits in "
	    + "pvm_recv for t[0-9a-f]+, tag 1$")) and
	    .args.problem.kind == "deadlock")] | length' \
	    "$C_JSON")"
	expect_eq "deadpair t$t: instants naming the kill" 1 \
	    "$(jq --argjson t "$t" '[.traceEvents[] | select(.tid == $t and
	    .ph == "i" and .name == "killed by pmon kill")] | length' \
	    "$C_JSON")"
done
pm_log "$msgs message flows and $spawns spawn flows bound; deadlock drawn"
pass
