#!/bin/bash
# bench_size.sh: bytes per event (BENCHMARKS.md, "make bench-size").
#
#	bench_size.sh [bench_size's options]
#
# First real runs on a private virtual machine (run directory, PVM_TMP
# and the cleanup trap of tests/integ/lib.sh: everything started here is
# stopped by pid, also on failure or ^C): pingpong and master1 under
# pmon, once with --time=exact and once with --time=compact, each with a
# coordinator of its own whose log says, for every agent that leaves,
# the records it sent and the bytes on the wire.  Then bench_size, the
# synthetic NAS SP trace through the agent's packer and deflate stream,
# whose last line ends the output:
#	size compact_B_per_event=X exact_B_per_event=Y
. "$(dirname "$0")/../tests/integ/lib.sh"

BENCH=$PMON_BUILD/bench/bench_size
pm_setup
need_pmon
need_built "$PROGS/pingpong" "$BENCH"

start_pvmd

# real_run MODE NAME PROG ARGS...: one program under a coordinator of
# its own; prints what the agent shipped.
real_run() {
	local mode=$1 name=$2 line
	shift 2
	pmon_start -v -v -Q 268435456 -T "$mode" -Z always
	grep -qx "capture time=$mode .*" "$PVM_TMP.pmon-start.out" ||
	    fail "pmon start -v did not show time=$mode"
	pmon_exec "$@" || fail "$name exited with $?: $(cat "$RUN/$(basename \
	    "$1").err")"
	pmon_shutdown
	line=$(grep -o '[0-9]* records in [0-9]* bytes ([0-9.]* B/record)' \
	    "$(coord_log)" | tail -n 1)
	[ -n "$line" ] || fail "the coordinator reported no agent's bytes"
	printf '%-8s %-28s %s\n' "$mode" "$name" "$line"
	rm -f "$(coord_log)"
}

for mode in exact compact; do
	real_run "$mode" "pingpong 2 x 5000 x 100 B" \
	    "$PROGS/pingpong" 2 5000 100 "$RUN/pingpong.log"
	real_run "$mode" "master1" master1
done

echo "bench_size: $(nproc) CPUs," \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
"$BENCH" "$@" || fail "bench_size exited with $?"
