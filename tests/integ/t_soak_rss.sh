#!/bin/bash
# Protects "memory bounded over any run length" (doc/state.md, "Memory"):
# pmon-coordd's resident set stops growing while a message storm runs,
# and pmon frontier answers within the horizon and says so beyond it.
#
# storm 16 30000 (4.8 M events, tests/progs/storm.c: 10 N R + 16 N + 2)
# runs under pmon with no tool attached; every 0.25 s the test samples
# the coordinator's VmRSS and its CPU time (utime + stime).  Over the
# second half of the samples (the first half holds the warm-up: the
# order's window, the histories filling up to their horizon) it fits
# RSS against CPU time by least squares.  CPU time, not wall time, is
# the x axis: the coordinator spends a fixed CPU time per event
# (~450 ns here, bench/bench_coordcpu.sh), so the slope is bytes per
# event whatever the load of the machine.
#
# The threshold: before the horizon, the model kept a clock copy per
# receive and grew by ~17 B per event, ~35 MB per coordinator CPU
# second (139 MB after 8 M events of storm 16 50000, BENCHMARKS.md).
# With it, RSS is flat after the warm-up (11.5 MB from the third second
# to the end of the same run); the remaining wobble is malloc's (a few
# hundred KB at most, in steps).  The test fails above 2 MB per CPU
# second, under 1 B per event: 17 times below the old growth, far above
# what the allocator's steps give a fit over several CPU seconds.
#
# Then, with the default horizon (the last 16384 events of each task),
# the frontier of task 0's first event must be beyond the horizon with
# the error naming -H, and that of its event 10 before its last must be
# answered; and pmon saw every event of the run (the per-task last
# sequence numbers add up to the program's count).
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || fail "jq is needed"
N=16
R=${SOAK_ROUNDS:-30000}
LIMIT_KB_PER_CPU_S=2048

start_pvmd
pmon_start
hz=$(getconf CLK_TCK)

bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" "$N" "$R" \
    </dev/null >"$RUN/storm.out" 2>"$RUN/storm.err"
STORM_PID=$BG_PID
: >"$RUN/rss"
while pid_alive "$STORM_PID"; do
	# CPU seconds and RSS in KB; a coordinator that died fails below.
	t=$(awk -v hz="$hz" '{ printf "%.3f", ($14 + $15) / hz }' \
	    "/proc/$COORD_PID/stat" 2>/dev/null) || break
	r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$COORD_PID/status" \
	    2>/dev/null) || break
	echo "$t $r" >>"$RUN/rss"
	sleep 0.25
done
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -qx "storm ok" "$RUN/storm.out" || fail "storm: $(cat "$RUN/storm.out")"
pid_alive "$COORD_PID" || fail "pmon-coordd died during the storm"

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

# Every event was seen (lost ones count in last_seq too).
$PM_ON timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
expect_eq "events of storm's tasks (sum of last_seq)" \
    $((10 * N * R + 16 * N + 2)) "$(jq '[.tasks[] |
    select(.program | endswith("storm")) | .last_seq] | add' "$RUN/ps.json")"

# The frontiers: the first task of storm (the one without a storm parent).
t0=$(jq -r '[.tasks[] | select(.program | endswith("storm"))] as $s |
    [$s[] | .tid] as $tids | $s[] | select(.parent as $p |
    $tids | index($p) | not) | "\(.tid) \(.last_seq)"' "$RUN/ps.json")
read -r tid last <<<"$t0"
[ -n "$last" ] || fail "no first storm task in $(cat "$RUN/ps.json")"
if $PM_ON "$PMON" frontier "$tid:1" >"$RUN/old.out" 2>"$RUN/old.err"; then
	fail "the frontier of $tid:1, 10 * $R events ago, was answered"
fi
grep -q "beyond the horizon" "$RUN/old.err" && grep -q -- "-H" "$RUN/old.err" ||
    fail "pmon frontier $tid:1: not the horizon's error: $(cat "$RUN/old.err")"
$PM_ON "$PMON" frontier "$tid:$((last - 10))" >"$RUN/new.json" \
    2>"$RUN/new.err" ||
    fail "pmon frontier $tid:$((last - 10)): $(cat "$RUN/new.err")"
expect_eq "tasks in the frontier of a recent event (those of ps)" \
    "$(jq '.tasks | length' "$RUN/ps.json")" \
    "$(jq '.past | length' "$RUN/new.json")"
pmon_shutdown
pass
