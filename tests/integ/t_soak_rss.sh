#!/bin/bash
# Protects "memory bounded over any run length" (doc/state.md, "Memory"):
# pmon-coordd's resident set stops growing while a message storm runs,
# and pmon frontier answers within the horizon and says so beyond it.
#
# storm 16 40000 (6.4 M events, tests/progs/storm.c: 10 N R + 16 N + 2)
# runs under pmon with no tool attached, and rings and agent buffers
# that lose none of them (all must arrive); every 0.25 s, until a flush
# after the storm says the coordinator took every event, the test
# samples the coordinator's VmRSS and its CPU time (utime + stime).
# Over the second half of the samples (the first half holds the
# warm-up: the order's window, the histories filling up to their
# horizon) it fits RSS against CPU time by least squares.  CPU time,
# not wall time, is the x axis: the coordinator spends a fixed CPU time
# per event (~450 ns here, bench/bench_coordcpu.sh), so the slope is
# bytes per event whatever the load of the machine.
#
# The threshold: before the horizon, the model kept a clock copy per
# receive and grew by ~17 B per event: this test measured 34 MB per
# CPU second (and 139 MB after the 8 M events of storm 16 50000,
# doc/state.md).  With it the fitted slope was 7 to 590 KB per CPU
# second in five runs on the loaded 2-core machine (83 under ASan): the
# RSS is flat but for malloc's steps, up to ~4 MB once, when a burst of
# frames arrives.  The test fails above 8 MB per CPU second, about 4 B
# per event: four times below the old growth, and more than ten times
# above what the steps gave.
#
# Then, with a horizon of the last 8192 events of each task and 10
# minutes (pmon start -H 8192,10m, passed on as pmon-coordd -H), the
# frontier of task 0's first event must be beyond the horizon with the
# error naming both and -H, and that of its event 10 before its last
# must be answered; and pmon saw every event of the run (the per-task
# last sequence numbers add up to the program's count).  A bad -H is
# refused by pmon start.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || fail "jq is needed"
N=16
R=${SOAK_ROUNDS:-40000}
LIMIT_KB_PER_CPU_S=8192

# ASan holds freed blocks in a quarantine of up to 256 MB, which would
# read as growth: let this run's daemons reuse them at once.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
start_pvmd
# Rings and agent buffers that hold the whole backlog of a slow (loaded,
# sanitized) coordinator: a record dropped from a full ring stalls the
# receives that wait for its send, and the order's window would grow
# with that, not with the model (doc/ordering.md, "Losses").
# A horizon that is not one is refused by name, before anything starts.
if $PM_ON "$PMON" start -H 100,2 >"$RUN/badh.out" 2>&1; then
	fail "pmon start -H 100,2 was taken"
fi
grep -q -- "--horizon 100,2" "$RUN/badh.out" ||
    fail "pmon start -H 100,2: $(cat "$RUN/badh.out")"
pmon_start -Q 268435456 -R 16777216 -B 1073741824 -H 8192,10m
hz=$(getconf CLK_TCK)

# Samples "CPU-seconds RSS-KB" until killed.
sample_coord() {
	while :; do
		awk -v hz="$hz" '{ printf "%.3f ", ($14 + $15) / hz }' \
		    "/proc/$COORD_PID/stat" &&
		    awk '/^VmRSS:/ { print $2 }' "/proc/$COORD_PID/status" ||
		    break
		sleep 0.25
	done
}
bg sample_coord >"$RUN/rss" 2>/dev/null
SAMPLER=$BG_PID
$PM_ON timeout 120 "$PMON" exec "$PROGS/storm" "$N" "$R" \
    </dev/null >"$RUN/storm.out" 2>"$RUN/storm.err" ||
    fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -qx "storm ok" "$RUN/storm.out" || fail "storm: $(cat "$RUN/storm.out")"
# Until the coordinator has taken every event of the run.
$PM_ON timeout 300 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
stop_pid "$SAMPLER"
pid_alive "$COORD_PID" || fail "pmon-coordd died during the storm"

# Every event was seen (lost ones count in last_seq too), none lost.
$PM_ON timeout 60 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
expect_eq "events lost" 0 "$(jq '[.tasks[] | .lost] | add' "$RUN/ps.json")"
expect_eq "events of storm's tasks (sum of last_seq)" \
    $((10 * N * R + 16 * N + 2)) "$(jq '[.tasks[] |
    select(.program | endswith("storm")) | .last_seq] | add' "$RUN/ps.json")"

n=$(wc -l <"$RUN/rss")
[ "$n" -ge 16 ] || fail "only $n samples of the coordinator: too short"
# Least squares over the second half: KB per CPU second.
slope=$(awk -v n="$n" 'NR > n / 2 {
	k++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
    END {
	d = k * sxx - sx * sx
	printf "%.0f", (d > 0 ? (k * sxy - sx * sy) / d : 1e9) }' "$RUN/rss")
peak=$(sort -n -k2 "$RUN/rss" | tail -n 1 | awk '{ print $2 }')
cpu=$(tail -n 1 "$RUN/rss" | awk '{ print $1 }')
pm_log "$n samples over $cpu CPU s; RSS peak $peak KB, slope over the" \
    "second half $slope KB per CPU s (limit $LIMIT_KB_PER_CPU_S)"
[ "$slope" -le "$LIMIT_KB_PER_CPU_S" ] ||
    fail "pmon-coordd's RSS grows by $slope KB per CPU second: $(tr '\n' ';' <"$RUN/rss")"

# The frontiers: the first task of storm (the one without a storm parent).
t0=$(jq -r '[.tasks[] | select(.program | endswith("storm"))] as $s |
    [$s[] | .tid] as $tids | $s[] | select(.parent as $p |
    $tids | index($p) | not) | "\(.tid) \(.last_seq)"' "$RUN/ps.json")
read -r tid last <<<"$t0"
[ -n "$last" ] || fail "no first storm task in $(cat "$RUN/ps.json")"
if $PM_ON "$PMON" frontier "$tid:1" >"$RUN/old.out" 2>"$RUN/old.err"; then
	fail "the frontier of $tid:1, 10 * $R events ago, was answered"
fi
grep -q "beyond the horizon of the frontiers, the last 8192 events of each task and the last 600 s of the stream (pmon start -H" "$RUN/old.err" ||
    fail "pmon frontier $tid:1: not the horizon's error: $(cat "$RUN/old.err")"
$PM_ON "$PMON" frontier "$tid:$((last - 10))" >"$RUN/new.json" \
    2>"$RUN/new.err" ||
    fail "pmon frontier $tid:$((last - 10)): $(cat "$RUN/new.err")"
expect_eq "tasks in the frontier of a recent event (those of ps)" \
    "$(jq '.tasks | length' "$RUN/ps.json")" \
    "$(jq '.past | length' "$RUN/new.json")"
pmon_shutdown
pass
