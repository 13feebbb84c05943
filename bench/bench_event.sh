#!/bin/bash
# bench_event.sh: ns per recorded event inside an instrumented task
# (BENCHMARKS.md, "make bench-event").
#
#	bench_event.sh [bench_event options: -b calls -n bursts -r runs -v]
#
# A private virtual machine (run directory, PVM_TMP and the cleanup trap
# of tests/integ/lib.sh: everything started here is stopped by pid, also
# on failure or ^C), pmon on it, and bench_event under `pmon exec`: its
# agent drains its ring while it calls pvm_getsbuf through the
# instrumentation and around it.  The last line on stdout is
#	event ns_per_event=N
. "$(dirname "$0")/../tests/integ/lib.sh"

BENCH=$PMON_BUILD/bench/bench_event
pm_setup
need_pmon
need_built "$BENCH"

start_pvmd
pmon_start
timeout 300 "$PMON" exec "$BENCH" "$@" </dev/null >"$RUN/bench.out" ||
    fail "bench_event exited with $?"
pmon_shutdown

echo "bench_event: $(nproc) CPUs," \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
tail -n 1 "$RUN/bench.out"
