#!/bin/bash
# Protects stops, continues and breakpoints (doc/control.md):
# - `pmon stop '*'` stops every task of a running ring (the kernel shows
#   them stopped, the snapshot says who stopped them) and `pmon continue
#   '*'` lets the ring finish;
# - a breakpoint set by one tool (`pmon watch`) on pingpong's first pong
#   send stops the worker before that send, and its "stop *" action the
#   master too; another tool's snapshot then shows the worker stopped at
#   the send with nothing sent yet and the master waiting for it; every
#   tool is told of the stop; when the watching tool ends, its stop is
#   released and pingpong finishes;
# - continuing another tool's stop needs --force;
# - triggers on the released stream: a message received, a task exiting
#   (hits counted exactly), a deadlock (its two tasks stopped);
# - `pmon kill` ends the stopped pair.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
for p in ring pingpong; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
command -v jq >/dev/null || fail "jq is needed"

export PVM_TMP=$RUN/vm
mkdir -p "$PVM_TMP"
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"

query() {
	local out=$1
	shift
	$PM_ON timeout 20 "$PMON" "$@" </dev/null >"$out" 2>"$out.err" ||
	    fail "pmon $* failed: $(cat "$out.err")"
}
proc_state() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $1 }'; }
all_in_state() {
	local want=$1 pid
	shift
	for pid in "$@"; do
		[ "$(proc_state "$pid")" = "$want" ] || return 1
	done
}

# --- stop and continue everything ---------------------------------------------

n=4 f=$RUN/ring.log
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/ring" "$n" 8 "$f" \
    >"$RUN/ring.out" 2>"$RUN/ring.err"
EXEC_PID=$BG_PID
wait_for 20 eval '[ "$(grep -c "^ring" "$f" 2>/dev/null)" = "$n" ]' ||
    fail "ring did not start: $(cat "$f" "$RUN/ring.err" 2>&1)"
pids=$(awk '$1 == "ring" { print $4 }' "$f")
query "$RUN/stop.json" stop --json '*'
jq -e --argjson n "$n" '.request == "stop" and (.results | length) == $n and
    all(.results[]; .status == "stopped")' "$RUN/stop.json" >/dev/null ||
    fail "pmon stop '*': $(cat "$RUN/stop.json")"
all_in_state T $pids || fail "ring tasks not stopped: $(for p in $pids; do
	echo "$p $(proc_state "$p")"; done)"
holds=$(grep -c '^hold' "$f")
sleep 0.5
expect_eq "tokens held while stopped" "$holds" "$(grep -c '^hold' "$f")"
query "$RUN/stopped.snap" snapshot --json
jq -e '[.tasks[] | select(.program == "ring")] | length > 0 and
    all(.state == "stopped" and .stopped.tool == 0 and
    (.stopped | has("breakpoint") | not))' "$RUN/stopped.snap" >/dev/null ||
    fail "the snapshot does not show the ring stopped: $(jq -c \
    '[.tasks[] | {tid, state, stopped}]' "$RUN/stopped.snap")"
# Task details: the kernel's view, as the agents read it.
query "$RUN/tasks.json" tasks --json
jq -e --argjson n "$n" '[.tasks[] | select(.program == "ring")] |
    length == $n and all(.proc.state == "T" and .proc.threads >= 1)' \
    "$RUN/tasks.json" >/dev/null || fail "pmon tasks should show the ring \
stopped: $(jq -c '.tasks[] | {tid, pid, proc}' "$RUN/tasks.json")"
for pid in $pids; do
	jq -e --argjson p "$pid" '[.tasks[] | select(.pid == $p)] | length == 1' \
	    "$RUN/tasks.json" >/dev/null || fail "pmon tasks lacks pid $pid"
done
query "$RUN/cont.json" continue --json '*'
jq -e '(.results | length) > 0 and all(.results[]; .status == "continued")' \
    "$RUN/cont.json" >/dev/null || fail "pmon continue: $(cat "$RUN/cont.json")"
wait "$EXEC_PID" || fail "ring exited with $?: $(cat "$RUN/ring.err")"
EXEC_PID=""
expect_eq "ring tasks done" "$n" "$(grep -c '^done' "$f")"

# Objects that name no task get their own error; the others still run.
$PM_ON "$PMON" stop --json t7fff0 >"$RUN/nostop.json" 2>&1 &&
    fail "pmon stop of an unknown task exited 0"
jq -e '.results == [{"object": "t7fff0", "status": "error",
    "error": "no such task"}]' "$RUN/nostop.json" >/dev/null ||
    fail "stop of an unknown task: $(cat "$RUN/nostop.json")"

# --- a breakpoint, seen by another tool --------------------------------------

k=2 rounds=20
f=$RUN/pingpong.log
WATCH=$RUN/watch.json
bg $PM_ON "$PMON" watch --json 'on enter pvm_send tag 3 do stop *' \
    </dev/null >"$WATCH" 2>"$WATCH.err"
WATCH_PID=$BG_PID
wait_for 10 grep -q '"what":"added"' "$WATCH" ||
    fail "pmon watch did not set its breakpoint: $(cat "$WATCH" "$WATCH.err")"
bp=$(jq -rs 'map(select(.id != null and .notice == null))[0].id' "$WATCH")
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/pingpong" "$k" "$rounds" 100 "$f" \
    >"$RUN/pingpong.out" 2>"$RUN/pingpong.err"
EXEC_PID=$BG_PID
wait_for 20 eval 'grep -q "\"notice\":\"stopped\"" "$WATCH"' ||
    fail "no stop notice: $(cat "$WATCH" "$RUN/pingpong.err")"
# The visualizer's view: flush, then the snapshot at the breakpoint.  A
# worker may be stopped before it wrote its line: the pids and the
# master's tid come from the snapshot, and the kernel must agree.
query "$RUN/bp.snap" snapshot --json
live='[.tasks[] | select(.program == "pingpong" and .state != "exited")]'
expect_eq "pingpong tasks in the snapshot" $((k + 1)) \
    "$(jq "$live | length" "$RUN/bp.snap")"
master=$(jq "$live | map(select(.parent == 0))[0].tid" "$RUN/bp.snap")
pids=$(jq -r "$live | .[].pid" "$RUN/bp.snap")
wait_for 5 all_in_state T $pids ||
    fail "pingpong not stopped: $(for p in $pids; do
	echo "$p $(proc_state "$p")"; done)"
hit=$(jq -c --argjson bp "$bp" '[.tasks[] | select(.stopped.breakpoint ==
    $bp and .stopped.at != null)]' "$RUN/bp.snap")
expect_eq "tasks stopped at the breakpoint itself" 1 "$(jq length <<<"$hit")"
jq -e --argjson m "$master" '.[0] | .stopped.at.call == "pvm_send" and
    .stopped.at.phase == "before" and .stopped.at.peer == $m and
    .stopped.at.tag == 3 and .sent.msgs == 0 and .received.msgs == 2' \
    <<<"$hit" >/dev/null || fail "the worker at the breakpoint: $hit"
w=$(jq '.[0].tid' <<<"$hit")
# The master waits for that pong, unless the stop caught it still inside
# the pvm_send of its ping (the message out, the call not returned).
jq -e --argjson m "$master" --argjson w "$w" '.tasks[] | select(.tid == $m) |
    .state == "stopped" and (.blocked == null or (.blocked.in == "pvm_recv"
    and .blocked.from == $w and .blocked.tag == 3))' "$RUN/bp.snap" \
    >/dev/null ||
    fail "the master should wait for $w's pong: $(jq -c --argjson m \
    "$master" '.tasks[] | select(.tid == $m)' "$RUN/bp.snap")"

# Another tool may not continue the watcher's stop without --force.
$PM_ON "$PMON" continue --json "t$(printf %x "$w")" >"$RUN/steal.json" 2>&1 &&
    fail "pmon continue of another tool's stop exited 0"
jq -e '.results[0].status == "error" and
    (.results[0].error | test("another tool"))' "$RUN/steal.json" \
    >/dev/null || fail "continue of another tool's stop: $(cat "$RUN/steal.json")"

# The watcher ends: its breakpoint goes, its stops are released.
kill -TERM "$WATCH_PID"
wait "$WATCH_PID" || fail "pmon watch exited with $?: $(cat "$WATCH.err")"
wait "$EXEC_PID" || fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
EXEC_PID=""
grep -qx done "$f" || fail "pingpong did not finish: $(cat "$f")"
query "$RUN/bps.json" request --json breakpoints
expect_eq "breakpoints left" 0 "$(jq '.breakpoints | length' "$RUN/bps.json")"

# --- triggers on the released stream: notify actions, counted ------------------

rounds=5
f=$RUN/pingpong2.log
WATCH=$RUN/watch2.json
bg $PM_ON "$PMON" watch --json 'on recv tag 2 do notify' 'on exit do notify' \
    </dev/null >"$WATCH" 2>"$WATCH.err"
WATCH_PID=$BG_PID
wait_for 10 eval '[ "$(grep -c "\"what\":\"added\"" "$WATCH")" = 2 ]' ||
    fail "pmon watch did not set its requests: $(cat "$WATCH" "$WATCH.err")"
read -r recv_bp exit_bp <<<"$(jq -rs '[.[] | select(.notice == "breakpoint")
    | .id] | join(" ")' "$WATCH")"
$PM_ON timeout 60 "$PMON" exec "$PROGS/pingpong" 1 "$rounds" 100 "$f" \
    >"$RUN/pingpong2.out" 2>&1 || fail "pingpong exited with $?"
# The worker receives ROUNDS pings (tag 2); two tasks call pvm_exit.
hits() {
	jq -s --argjson b "$1" '[.[] | select(.notice == "hit" and
	    .breakpoint == $b)] | length' "$WATCH"
}
wait_for 10 eval '[ "$(hits "$exit_bp")" = 2 ]' ||
    fail "exit hits: $(hits "$exit_bp"), want 2: $(cat "$WATCH")"
expect_eq "recv tag 2 hits" "$rounds" "$(hits "$recv_bp")"
worker=$(awk '$1 == "worker" { print $2 }' "$f")
expect_eq "tasks of the recv hits" "$worker" "$(jq -s --argjson b "$recv_bp" \
    '[.[] | select(.notice == "hit" and .breakpoint == $b) | .tid] | unique |
    .[]' "$WATCH")"
kill -TERM "$WATCH_PID"
wait "$WATCH_PID" || fail "pmon watch exited with $?: $(cat "$WATCH.err")"

# --- a deadlock stops its tasks; pmon kill ends them ---------------------------

f=$RUN/deadpair.tids
WATCH=$RUN/watch3.json
bg $PM_ON "$PMON" watch --json 'on deadlock do stop, notify' \
    </dev/null >"$WATCH" 2>"$WATCH.err"
WATCH_PID=$BG_PID
wait_for 10 grep -q '"what":"added"' "$WATCH" ||
    fail "pmon watch did not set its request: $(cat "$WATCH" "$WATCH.err")"
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/deadpair" "$f" \
    >"$RUN/deadpair.out" 2>&1
EXEC_PID=$BG_PID
wait_for 20 grep -q '"notice":"hit"' "$WATCH" ||
    fail "no hit on the deadlock: $(cat "$WATCH")"
p=$(awk '$1 == "parent" { print $2 }' "$f")
c=$(awk '$1 == "child" { print $2 }' "$f")
pids=$(awk '{ print $3 }' "$f")
wait_for 5 all_in_state T $pids || fail "the deadlocked pair is not \
stopped: $(for x in $pids; do echo "$x $(proc_state "$x")"; done)"
jq -se --argjson p "$p" --argjson c "$c" 'map(select(.notice ==
    "stopped")) | map(.tasks[]) | sort == ([$p, $c] | sort)' "$WATCH" \
    >/dev/null || fail "the stop should name $p and $c: $(cat "$WATCH")"
query "$RUN/kill.json" kill --json "t$(printf %x "$p"),t$(printf %x "$c")"
jq -e '[.results[].status] == ["killed", "killed"]' "$RUN/kill.json" \
    >/dev/null || fail "pmon kill: $(cat "$RUN/kill.json")"
wait_for 10 pid_dead "$EXEC_PID" || fail "deadpair did not end when killed"
wait "$EXEC_PID" 2>/dev/null
EXEC_PID=""
kill -TERM "$WATCH_PID"
wait "$WATCH_PID" || fail "pmon watch exited with $?: $(cat "$WATCH.err")"

pmon_shutdown "$TRACE_PID"
# deadpair's tasks were killed inside pvm_recv: checked without them.
grep -v '"program":"deadpair"' "$RUN/trace.json" >"$RUN/trace.alive.json"
"$STREAMCHECK" -a "$RUN/trace.alive.json" || fail "stream violations"
expect_eq "BREAK records in the stream" 1 \
    "$(count_lines '"call":"break"' "$RUN/trace.json")"
pass
