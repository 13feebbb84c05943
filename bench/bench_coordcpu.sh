#!/bin/bash
# bench_coordcpu.sh: the coordinator's CPU time per event in a real run.
#
#	PMON_BUILD=build bash bench/bench_coordcpu.sh [-n rounds] [-r runs]
#	    [-t] [-P perf.data]
#
# A private virtual machine (lib.sh), pmon started on it, and `pmon exec
# smallpp ROUNDS 4 100` run RUNS times (20 events per round trip, the
# warm-up rounds included); around each run, pmon-coordd's utime+stime
# from /proc/PID/stat, with a `pmon flush` before the second reading so
# that every event of the run has been ordered and released.  -t
# subscribes a tool (`pmon trace --json` to /dev/null) for the whole
# bench, so that every event is also framed and queued to it; pmon trace
# formats slower than smallpp makes events, so with long runs the
# coordinator drops it as too slow and the bench fails (-n 30000 -r 3
# keeps it).  -P records the coordinator with `perf record -g` during the
# runs.  The CPU times have the kernel's tick resolution (10 ms here):
# use runs of 100 ms of coordinator time or more.
#
# Each run prints `run I events=N coord_cpu_ms=M ns_per_event=X`; the
# last line is the median:
#	coordcpu ns_per_event=X
. "$(dirname "$0")/../tests/integ/lib.sh"

rounds=30000 runs=5 tool=0 perfdata=
while getopts "n:P:r:t" o; do
	case $o in
	n) rounds=$OPTARG ;;
	P) perfdata=$OPTARG ;;
	r) runs=$OPTARG ;;
	t) tool=1 ;;
	*) echo "usage: bench_coordcpu.sh [-n rounds] [-r runs] [-t]" \
	       "[-P perf.data]" >&2
	   exit 2 ;;
	esac
done

SMALLPP=$PMON_BUILD/bench/smallpp
WARMUP=100
pm_setup
need_pmon
need_built "$SMALLPP"
write_hostfile "$RUN/hostfile"
sed -i "1s|\$|:$PMON_BUILD/bench|" "$RUN/hostfile"
start_pvmd "$RUN/hostfile"
pmon_start
if [ "$tool" = 1 ]; then
	bg "$PMON" trace --json </dev/null >/dev/null 2>"$RUN/tool.err"
	TOOL_PID=$BG_PID
fi
if [ -n "$perfdata" ]; then
	bg perf record -q -g -o "$perfdata" -p "$COORD_PID" \
	    >"$RUN/perf.out" 2>&1
	PERF_PID=$BG_PID
	sleep 1
fi

# The coordinator's CPU time so far, in clock ticks.
coord_ticks() {
	awk '{ print $14 + $15 }' "/proc/$COORD_PID/stat"
}

pmon_flush() {
	timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
	    fail "pmon flush failed: $(cat "$RUN/flush.err")"
}

hz=$(getconf CLK_TCK)
events=$((20 * (rounds + WARMUP)))
for i in $(seq 1 "$runs"); do
	pmon_flush
	before=$(coord_ticks)
	timeout 300 "$PMON" exec "$SMALLPP" "$rounds" 4 "$WARMUP" \
	    </dev/null >"$RUN/pp$i.out" 2>"$RUN/pp$i.err" ||
	    fail "smallpp failed: $(cat "$RUN/pp$i.err")"
	pmon_flush
	after=$(coord_ticks)
	awk -v i="$i" -v e="$events" -v t=$((after - before)) -v hz="$hz" \
	    'BEGIN { printf "run %d events=%d coord_cpu_ms=%.0f ns_per_event=%.0f\n",
		i, e, t * 1000 / hz, t * 1e9 / hz / e }' | tee -a "$RUN/res"
done

# pmon saw every message of every run.
"$PMON" ps </dev/null >"$RUN/ps.out" 2>&1 || fail "pmon ps: $(cat "$RUN/ps.out")"
seen=$(awk -v n=$((WARMUP + rounds)) '$3 == "smallpp" &&
    ($6 ~ "^" n + 1 "/" || $6 ~ "^" n "/")' "$RUN/ps.out" | wc -l)
expect_eq "smallpp tasks pmon saw with every message" $((2 * runs)) "$seen"
if [ -n "$PERF_PID" ]; then
	kill -INT "$PERF_PID"
	wait "$PERF_PID"
fi
[ "$tool" = 1 ] && { pid_alive "$TOOL_PID" || fail "pmon trace exited"; }
pmon_shutdown ${TOOL_PID:+"$TOOL_PID"}
sort -t= -k4 -n "$RUN/res" | awk '{ v[NR] = $5 } END {
	sub("ns_per_event=", "", v[int((NR + 1) / 2)])
	print "coordcpu ns_per_event=" v[int((NR + 1) / 2)] }'
