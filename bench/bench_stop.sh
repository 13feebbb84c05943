#!/bin/bash
# bench_stop.sh: how fast a breakpoint stops the task that hits it and
# the others its action names (BENCHMARKS.md, "make bench-stop").
#
#	bench_stop.sh [-k WORKERS] [-r ROUNDS] [-n HITS] [-w WARMUP] [-I] [-v]
#
# A private virtual machine (run directory, PVM_TMP and the cleanup trap
# of tests/integ/lib.sh: everything started here is stopped by pid, also
# on failure or ^C), pmon on it, and bench_stop (a libpmon tool) setting
# "on enter pvm_send tag 3 do stop *" before `pmon exec pingpong K
# ROUNDS 100`: every pong stops the worker before its send, and every
# other task.  bench_stop measures each hit and continues; when it
# leaves, its breakpoint goes and pingpong finishes.  The last line on
# stdout is
#	stop own_us_p50=A others_us_p50=B others_us_p99=C
. "$(dirname "$0")/../tests/integ/lib.sh"

k=4 rounds=300 hits=200 warmup=5 flags=()
while getopts "Ik:n:r:vw:" o; do
	case $o in
	I) flags+=(-I) ;;
	k) k=$OPTARG ;;
	n) hits=$OPTARG ;;
	r) rounds=$OPTARG ;;
	v) flags+=(-v) ;;
	w) warmup=$OPTARG ;;
	*) echo "usage: bench_stop.sh [-k workers] [-r rounds] [-n hits]" \
	       "[-w warmup] [-I] [-v]" >&2
	   exit 2 ;;
	esac
done
[ $((k * rounds)) -gt $((hits + warmup + 50)) ] ||
    { echo "bench_stop.sh: $k workers x $rounds rounds give too few" \
	"pongs for $hits hits" >&2; exit 2; }

BENCH=$PMON_BUILD/bench/bench_stop
pm_setup
need_pmon
need_built "$PROGS/pingpong" "$BENCH"

start_pvmd
pmon_start

# The tool first: its breakpoint is armed (ready file) before pingpong
# starts.  Its stderr is the run's report.
bg timeout 300 "$BENCH" -n "$hits" -w "$warmup" -T $((k + 1)) \
    -R "$RUN/ready" "${flags[@]}" </dev/null >"$RUN/bench.out"
BENCH_PID=$BG_PID
wait_for 10 test -e "$RUN/ready" ||
    fail "bench_stop did not set its breakpoint"
bg timeout 120 "$PMON" exec "$PROGS/pingpong" "$k" "$rounds" 100 \
    "$RUN/pingpong.log" </dev/null >"$RUN/pingpong.out" 2>"$RUN/pingpong.err"
EXEC_PID=$BG_PID

wait "$BENCH_PID" || fail "bench_stop exited with $?"
# Its breakpoint and stops went with it: pingpong runs to its end.
wait "$EXEC_PID" || fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
grep -qx 'done' "$RUN/pingpong.log" || fail "pingpong did not finish"
pmon_shutdown

echo "bench_stop: $k workers, $rounds rounds; $(nproc) CPUs," \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
tail -n 1 "$RUN/bench.out"
