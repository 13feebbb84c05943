#!/bin/bash
# Protects task times (doc/clock.md, "How a task's raw times are taken"):
# whether the tasks stamp TSC ticks that their agent converts, or read
# CLOCK_REALTIME themselves, every raw time "t" in the stream is a
# CLOCK_REALTIME time between the shell's clock readings around the run,
# and per task raw times never go backwards in seq order.
. "$(dirname "$0")/lib.sh"
pm_setup

[ -x "$PROGS/pingpong" ] || fail "missing $PROGS/pingpong (build it first)"
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"

# Two workers, 500 rounds of 4 bytes: 2 * 2 * 500 messages.
before=$(date +%s%N)
pmon_exec "$PROGS/pingpong" 2 500 4 "$RUN/pp.log" ||
    fail "pingpong failed: $(cat "$RUN/pingpong.err")"
grep -qx done "$RUN/pp.log" || fail "pingpong did not finish"
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"
after=$(date +%s%N)
pmon_shutdown "$TRACE_PID"

# tid seq t, one line per event, in stream order.
jq -r 'select(.call != null and .call != "lost") | "\(.tid) \(.seq) \(.t)"' \
    "$RUN/trace.json" >"$RUN/times" || fail "trace is not JSON lines"
sends=$(jq -r 'select(.call == "pvm_send" and .phase == "end")' \
    "$RUN/trace.json" | grep -c '"tid"')
[ "$sends" -ge 2000 ] || fail "expected at least 2000 send ends, got $sends"

# Every time within the run (the shell's reads bracket the tasks' own).
awk -v lo="$before" -v hi="$after" '
    $3 < lo || $3 > hi { bad++; if (bad <= 5) print "out of run: " $0 }
    END { exit bad > 0 }' "$RUN/times" >"$RUN/out_of_run" ||
    fail "raw times outside [$before, $after]: $(cat "$RUN/out_of_run")"
# Per task, in seq order, raw times never go backwards.
sort -k1,1n -k2,2n "$RUN/times" | awk '
    $1 == tid && $3 < t { bad++; if (bad <= 5) print "backwards: " $0 }
    { tid = $1; t = $3 }
    END { exit bad > 0 }' >"$RUN/backwards" ||
    fail "raw times go backwards: $(cat "$RUN/backwards")"
pass
