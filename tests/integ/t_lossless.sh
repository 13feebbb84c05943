#!/bin/bash
# Protects the lossless subscription (doc/capture.md): with small tool
# queues (pmon start -Q 1 MiB) a message storm outruns its tools, yet a
# lossless recorder and a lossless trace get every event of every task,
# counted against the program's own count of its calls; a third
# lossless tool that stops reading (SIGSTOP) is degraded after the
# bound (-W 2), told so when it reads again, and holds up nobody after
# that: the other two still miss nothing.  The program does not wait
# for pmon (no --block): while the stalled tool holds the agents back,
# its records wait in the rings, which are made big enough (-R 4 MiB)
# to hold the whole run (t_lossless_block.sh: the same with --block).
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
need_built "$PROGS/storm"

tasks=8 rounds=3000
start_pvmd
pmon_start -Q 1048576 -W 2 -R 4194304

bg "$PMON" record -o "$RUN/run.pmr" </dev/null 2>"$RUN/record.err"
REC_PID=$BG_PID
wait_for 10 trace_connected "$REC_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/record.err")"
pmon_trace_lossless() {
	bg "$PMON" trace --json --tasks --lossless </dev/null >"$1" 2>"$1.err"
	wait_for 10 trace_connected "$BG_PID" ||
	    fail "pmon trace --lossless did not connect: $(cat "$1.err")"
}
pmon_trace_lossless "$RUN/trace.json"
TRACE_PID=$BG_PID
pmon_trace_lossless "$RUN/stalled.json"
STALLED_PID=$BG_PID
timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"
kill -STOP "$STALLED_PID"

pmon_exec "$PROGS/storm" "$tasks" "$rounds" "$RUN/calls" ||
    fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -qx "storm ok" "$RUN/storm.out" || fail "storm did not finish"
wait_calls "$tasks" "$RUN/calls"
# pmon tools shows who holds the agents back, and the degrade.
tools_json() {
	timeout 10 "$PMON" tools --json </dev/null >"$RUN/tools.json" \
	    2>"$RUN/tools.err" || fail "pmon tools: $(cat "$RUN/tools.err")"
}
stalled_degraded() {
	tools_json
	[ "$(jq -r '.tools[] | select(.stream == "degraded") | .name' \
	    "$RUN/tools.json")" = pmon-trace ]
}
wait_for 20 stalled_degraded ||
    fail "the stalled tool was never degraded: $(cat "$RUN/tools.json")"
grep -q "read nothing for" "$(coord_log)" ||
    fail "the degrade is not in the coordinator's log"
expect_eq "lossless tools left" 2 "$(jq '[.tools[] |
    select(.stream == "lossless")] | length' "$RUN/tools.json")"
[ "$(jq '[.tools[].holds] | add' "$RUN/tools.json")" -gt 0 ] ||
    fail "no lossless tool ever held the agents back (the test proves \
nothing): $(cat "$RUN/tools.json")"
kill -CONT "$STALLED_PID"
pmon_shutdown "$TRACE_PID"
wait_for 10 pid_dead "$REC_PID" || fail "pmon record did not exit"
wait "$REC_PID" || fail "pmon record exited with $?: $(cat "$RUN/record.err")"
wait_for 10 pid_dead "$STALLED_PID" || fail "the stalled trace did not exit"

expect_calls_complete "the lossless trace" "$RUN/trace.json" "$RUN/calls"
"$PMON" replay "$RUN/run.pmr" -- "$PMON" trace --json --tasks \
    >"$RUN/replay.json" 2>"$RUN/replay.err" ||
    fail "pmon replay: $(cat "$RUN/replay.err")"
expect_calls_complete "the recording" "$RUN/replay.json" "$RUN/calls"
grep -q '"call":"lost"' "$RUN/trace.json" "$RUN/replay.json" &&
    fail "a lossless stream holds a lost marker"

# The stalled tool: told it was degraded, then what it lost; everyone
# else saw the degrade notice too.
grep -q '"notice":"degraded"' "$RUN/stalled.json" ||
    fail "the stalled tool was not told it was degraded"
grep -q '"notice":"lost"' "$RUN/stalled.json" ||
    fail "the stalled tool was not told what it lost"
grep -q '"notice":"degraded"' "$RUN/trace.json" ||
    fail "the other tools were not told of the degrade"

pass
