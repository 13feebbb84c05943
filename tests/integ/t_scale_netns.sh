#!/bin/bash
# Protects pmon on a large virtual machine (issue 20): 8 hosts (network
# namespaces), a message storm of 320 tasks that PVM spreads over them,
# every task sending to its successor and taking one message with a
# wildcard receive.  A lossless `pmon trace --json` gets a stream that is
# causal and complete (streamcheck: every send matched by its receiver),
# with every event the program makes (storm.c's count); `pmon problems`
# finds none (a ring of wildcard receives from one sender races with
# nothing); the coordinator's peak RSS stays under 128 MB.  Every task
# is pmon's: none is ever noticed as unmonitored, however long the
# task starter takes to start 320 tasks (an agent once reported those
# not started yet, and their first messages went out unmatched).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

# SCALE_TASKS and SCALE_ROUNDS run it larger, SCALE_FANOUT under a tree
# of coordinators (BENCHMARKS.md, "Scale").
hosts=8 n=${SCALE_TASKS:-320} rounds=${SCALE_ROUNDS:-30}
netns_pmon_up $hosts -Q 268435456 ${SCALE_FANOUT:+--fanout $SCALE_FANOUT}
coord=$COORD_PID
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' \
    "/proc/$1/stat"; }

bg $PM_ON "$PMON" trace --json --tasks --lossless </dev/null \
    >"$RUN/trace.json" 2>"$RUN/trace.err"
TRACE_PID=$BG_PID
wait_for 10 trace_connected "$TRACE_PID" ||
    fail "pmon trace did not connect: $(cat "$RUN/trace.err")"
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

t0=$(date +%s%N)
pmon_exec "$PROGS/storm" $n $rounds ||
    fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
pm_log "storm $n $rounds: $((($(date +%s%N) - t0) / 1000000)) ms;" \
    "pmon-coordd CPU $(cpu $coord) s;" \
    "intermediates $(for p in $(pgrep -f -- 'pmon-coordd -U'); do
    printf '%s ' "$(cpu "$p")"; done)"
$PM_ON timeout 60 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" problems >"$RUN/problems.txt" 2>&1 ||
    fail "pmon problems failed: $(cat "$RUN/problems.txt")"
expect_eq "pmon problems" "no problems" "$(cat "$RUN/problems.txt")"
$PM_ON timeout 20 "$PMON" snapshot --json >"$RUN/snap.json" ||
    fail "pmon snapshot failed"
used=$(jq '[.tasks[] | select(.program == "storm") | .tid / 262144 | floor] |
    unique | length' "$RUN/snap.json")
expect_eq "hosts the storm ran on" $hosts "$used"
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$coord/status")
pm_log "pmon-coordd peak RSS ${hwm} kB"
[ "$hwm" -lt $((128 * 1024)) ] ||
    fail "pmon-coordd peak RSS ${hwm} kB, over 128 MB"

pmon_shutdown "$TRACE_PID"
# storm.c: 10 events a round and 16 besides per task, 2 more of task 0.
events=$((10 * n * rounds + 16 * n + 2))
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
expect_eq "events in the stream" $events \
    "$(grep -c '"call"' "$RUN/trace.json")"
expect_eq "storm tasks in the stream" $n \
    "$("$STREAMCHECK" -t "$RUN/trace.json" | awk '$2 == "storm" && $4 > 0' |
    wc -l)"
expect_eq "tasks noticed as unmonitored" 0 \
    "$(grep -c '"notice":"unmonitored"' "$RUN/trace.json")"
pass
