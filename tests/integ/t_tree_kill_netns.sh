#!/bin/bash
# An intermediate coordinator killed mid-run (issue 20): 8 hosts
# (network namespaces) under `pmon start --fanout 4`; while a paced
# message storm runs on every host, the intermediate of hosts 5-8 is
# killed (SIGKILL).  The root starts it again through PVM, on the same
# host and address; its four agents dial it again and send what the
# root had not acknowledged; the root drops what it already had.  A
# lossless `pmon trace --json` then holds every event storm.c makes,
# once each (streamcheck: causal, complete, every send matched), and no
# receive is released without its send, although the new intermediate
# never saw the sends its predecessor forwarded (the root matches those
# receives).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

hosts=8 n=${TREE_TASKS:-64} rounds=${TREE_ROUNDS:-1500} pace=2000
netns_setup $hosts
netns_start_pvmd
netns_wait_hosts $hosts
PM_ON="$RUN/on1"
pmon_start -v -Q 268435456 --fanout 4
netns_wait_agents $hosts

relay_pid() { pgrep -f -- "pmon-coordd -U .* -S 1:"; }
first=$(relay_pid)
[ -n "$first" ] || fail "no intermediate for hosts 5-8"

bg $PM_ON "$PMON" trace --json --tasks --lossless </dev/null \
    >"$RUN/trace.json" 2>"$RUN/trace.err"
TRACE_PID=$BG_PID
wait_for 10 trace_connected "$TRACE_PID" ||
    fail "pmon trace did not connect: $(cat "$RUN/trace.err")"
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" -p $pace $n $rounds \
    >"$RUN/storm.out" 2>"$RUN/storm.err"
STORM_PID=$BG_PID
calls_over() { [ "$(grep -c '"call"' "$RUN/trace.json")" -gt "$1" ]; }
wait_for 20 calls_over $((n * 100)) ||
    fail "the storm did not get going"
kill -KILL "$first"
restarted() { p=$(relay_pid) && [ -n "$p" ] && [ "$p" != "$first" ]; }
wait_for 10 restarted || fail "the intermediate was not started again"
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
grep -q "intermediate 1 .* exited; starting it again" \
    "$(host_tmp 1)/pmon-coordd.$(id -u).log" ||
    fail "the root did not say it restarted the intermediate"

pmon_shutdown "$TRACE_PID"
pm_log "$(grep -o 'shutdown: of the receives.*' \
    "$(host_tmp 1)/pmon-coordd.$(id -u).log")"
events=$((10 * n * rounds + 16 * n + 2))
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
expect_eq "events in the stream" $events \
    "$(grep -c '"call"' "$RUN/trace.json")"
expect_eq "receives released unmatched" 0 \
    "$(grep -c '"unmatched":true' "$RUN/trace.json")"
expect_eq "lost markers" 0 "$(grep -c '"lost"' "$RUN/trace.json")"
pass
