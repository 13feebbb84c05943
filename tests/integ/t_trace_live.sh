#!/bin/bash
# Protects the promptness of a live pmon trace, which buffers its lines
# and writes them whenever its input runs dry: while a program is still
# running but makes no more calls, every event it made is already in the
# output of pmon trace --json and of the text trace, not held back until
# the trace ends; the text trace says the same as the JSON one (with a
# time column, tids in hex also where a call returns one), and a
# --quiet --summary trace counts the same events and calls.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || fail "jq is needed"

N=50			# pvm_getsbuf calls
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
JSON_PID=$TRACE_PID
bg $PM_ON "$PMON" trace --tasks </dev/null >"$RUN/trace.txt" \
    2>"$RUN/trace.txt.err"
TEXT_PID=$BG_PID
wait_for 10 trace_connected "$TEXT_PID" ||
    fail "pmon trace did not connect: $(cat "$RUN/trace.txt.err")"
bg $PM_ON "$PMON" trace --quiet --summary </dev/null >"$RUN/summary.txt" \
    2>"$RUN/summary.err"
SUM_PID=$BG_PID
wait_for 10 trace_connected "$SUM_PID" ||
    fail "pmon trace did not connect: $(cat "$RUN/summary.err")"
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"

# burst -w: pvm_mytid, N x pvm_getsbuf, then it waits for a signal.
log=$RUN/burst.log
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/burst" -w $N "$log"
BURST=$BG_PID
wait_for 20 grep -qs '^ready ' "$log" || fail "burst never got ready"
tid=$(awk '$1 == "ready" { print $2 }' "$log")
touch "$log.go"
wait_for 20 grep -qs "^did $N\$" "$log" || fail "burst did not make its calls"

# Each call is begun and ended.
calls_in_json() {
	jq -s --argjson t "$tid" '[.[] | select(.tid == $t and .call)] |
	    length' "$RUN/trace.json"
}
calls_in_text() {
	grep -c "^t$(printf %x "$tid"):[0-9]* .* pvm_" "$RUN/trace.txt"
}
wait_for 10 eval '[ "$(calls_in_json)" = $((2 * (N + 1))) ]' ||
    fail "the JSON trace shows $(calls_in_json) of $((2 * (N + 1))) events \
while the program waits"
wait_for 10 eval '[ "$(calls_in_text)" = $((2 * (N + 1))) ]' ||
    fail "the text trace shows $(calls_in_text) of $((2 * (N + 1))) events \
while the program waits"
pid_alive "$BURST" || fail "burst ended before the traces were read"
expect_eq "task lines for burst in the text trace" 1 \
    "$(grep -c "^task t$(printf %x "$tid") .* burst pid " "$RUN/trace.txt")"
expect_eq "getsbuf ends in the JSON trace" "$N" "$(jq -s --argjson t "$tid" \
    '[.[] | select(.tid == $t and .call == "pvm_getsbuf" and
    .phase == "end")] | length' "$RUN/trace.json")"
expect_eq "getsbuf ends in the text trace" "$N" \
    "$(grep -c " pvm_getsbuf *end " "$RUN/trace.txt")"
# After the id, the time: seconds since the first event, 9 decimals,
# never back within a task; pvm_mytid returns burst's tid, in hex.
hex=t$(printf %x "$tid")
expect_eq "burst's lines with a time" $((2 * (N + 1))) "$(awk -v t="$hex" \
    'index($1, t ":") == 1 && $2 ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$/ &&
    $2 + 0 >= last { last = $2 + 0; n++ } END { print n + 0 }' \
    "$RUN/trace.txt")"
expect_eq "pvm_mytid's end" 1 "$(grep -c "^$hex:[0-9]* .* pvm_mytid *end *rc $hex\$" \
    "$RUN/trace.txt")"

kill "$(awk '$1 == "ready" { print $3 }' "$log")"
wait_for 10 pid_dead "$BURST" || fail "burst ignored SIGTERM"
wait "$BURST" 2>/dev/null
pmon_shutdown "$JSON_PID"
wait_for 10 pid_dead "$TEXT_PID" || fail "the text trace did not exit"
wait "$TEXT_PID" || fail "the text trace exited with $?"
wait_for 10 pid_dead "$SUM_PID" || fail "the summary trace did not exit"
wait "$SUM_PID" || fail "the summary trace exited with $?"
# The row of burst: task, host, program, events, calls, ...
expect_eq "burst's row in the summary" "burst $((2 * (N + 1))) $((N + 1))" \
    "$(awk -v t="t$(printf %x "$tid")" '$1 == t { print $3, $4, $5 }' \
    "$RUN/summary.txt")"
pass
