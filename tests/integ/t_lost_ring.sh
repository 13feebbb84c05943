#!/bin/bash
# Protects "nothing lost silently" for a full ring (doc/capture.md): a
# task writes far more records than its 4 KiB ring holds while its agent
# is stopped, and never waits for it; what the ring dropped shows in the
# stream as lost markers that add up to exactly the ring's own dropped
# count, delivered events plus lost ones are exactly the records the
# program made (two per call), and `pmon ps` shows the same lost count.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"

N=20000			# pvm_getsbuf calls: 40000 records, ~85 fit
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"

log=$RUN/burst.log
PMON_RING_SIZE=4096 bg $PM_ON timeout 60 "$PMON" exec "$PROGS/burst" $N "$log"
BURST=$BG_PID
wait_for 20 grep -qs '^ready ' "$log" || fail "burst never got ready"
tid=$(awk '$1 == "ready" { print $2 }' "$log")
# The task is registered (pvm_mytid returned after TASK_READY); from
# now on nobody drains its ring until the agent continues.
kill -STOP "$AGENT_PID"
touch "$log.go"
wait_for 30 grep -qs '^ring ' "$log" ||
    { kill -CONT "$AGENT_PID"; fail "burst did not finish with its agent stopped"; }
wait "$BURST" || { kill -CONT "$AGENT_PID"; fail "burst failed"; }
kill -CONT "$AGENT_PID"

written=$(awk '$1 == "ring" { print $3 }' "$log")
dropped=$(awk '$1 == "ring" { print $5 }' "$log")
# mytid, N x getsbuf, exit: each begun and ended.
expect_eq "records burst made (written + dropped)" $((2 * (N + 2))) \
    $((written + dropped))
[ "$dropped" -gt 0 ] || fail "the ring dropped nothing (written $written)"

$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
$PM_ON timeout 20 "$PMON" ps >"$RUN/ps.txt" 2>>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
pmon_shutdown "$TRACE_PID"

"$STREAMCHECK" -l "$RUN/trace.json" >"$RUN/check.out" 2>&1 ||
    fail "stream check: $(head -20 "$RUN/check.out")"
lost=$(jq -s --argjson t "$tid" '[.[] | select(.tid == $t and
    .call == "lost") | .count] | add // 0' "$RUN/trace.json")
events=$(jq -s --argjson t "$tid" '[.[] | select(.tid == $t and .call and
    .call != "lost")] | length' "$RUN/trace.json")
expect_eq "events lost in the stream (the ring's dropped)" "$dropped" "$lost"
expect_eq "events delivered (the ring's written)" "$written" "$events"
# Every seq from 1 to the last is an event or inside a lost marker.
last=$(jq -s --argjson t "$tid" '[.[] | select(.tid == $t and .call) |
    .seq + (if .call == "lost" then .count - 1 else 0 end)] | max' \
    "$RUN/trace.json")
expect_eq "last seq of burst" $((2 * (N + 2))) "$last"
expect_eq "lost in pmon ps --json" "$dropped" "$(jq --argjson t "$tid" \
    '.tasks[] | select(.tid == $t) | .lost' "$RUN/ps.json")"
expect_eq "LOST column of pmon ps" "$dropped" "$(awk -v t="$(printf 't%x' \
    "$tid")" '$1 == t { print $NF }' "$RUN/ps.txt")"
grep -q "lost $dropped records to a full ring" "$(coord_log)" ||
    fail "the coordinator's log does not name the $dropped records"
pass
