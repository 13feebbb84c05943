#!/bin/bash
# bench_block.sh: what each capture mode costs the application
# (doc/capture.md, "Blocking mode").
#
#	bench_block.sh [-n N] [-r ROUNDS] [-k RUNS] [MODE...]
#
# tests/progs/storm N ROUNDS (default 8 50000) on a private virtual
# machine (tests/integ/lib.sh: everything started is stopped by pid),
# RUNS times (default 5) in each MODE, the modes interleaved run by run:
#	plain		no pmon
#	default		pmon start, no tool
#	block		pmon start --block
#	ringNNN		pmon start -R NNN (drops when full)
#	blockNNN	pmon start -R NNN --block
# (default: plain default block).  Each run prints "run MODE wall cpu
# lost": the program's wall time, the CPU time of all its tasks (task 0
# is pmon exec's child; pvmd reaps the others: its cutime + cstime),
# and the records its rings dropped (the coordinator's log, once it
# has caught up).  Then one line per mode with the medians:
#	block MODE wall_s=W cpu_s=C lost=L runs=K
. "$(dirname "$0")/../tests/integ/lib.sh"

N=8
ROUNDS=50000
RUNS=5
while getopts n:r:k: ch; do
	case $ch in
	n) N=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	k) RUNS=$OPTARG ;;
	*) echo "usage: bench_block.sh [-n N] [-r ROUNDS] [-k RUNS] [MODE...]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
MODES=${*:-plain default block}

pm_setup
need_pmon
need_built "$PROGS/storm"
start_pvmd
TICK=$(getconf CLK_TCK)

# pvmd's reaped children's CPU, in clock ticks.
pvmd_cticks() { awk '{ print $16 + $17 }' "/proc/$PVMD_PID/stat"; }

# No storm task of this run is left (pvmd has reaped them all).
storm_gone() {
	local p
	for p in $(pm_run_pids); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = storm ] && return 1
	done
	return 0
}

mode_args() {
	case $1 in
	default) echo "-Q 268435456" ;;
	block) echo "-Q 268435456 --block" ;;
	ring*) echo "-Q 268435456 -R ${1#ring}" ;;
	block*) echo "-Q 268435456 -R ${1#block} --block" ;;
	esac
}

# one MODE: runs storm once; prints "run MODE wall cpu".
one() {
	local mode=$1 c0 c1 out=$RUN/time.out exe lost=0 log
	if [ "$mode" = plain ]; then
		exe="$PROGS/storm"
	else
		# shellcheck disable=SC2046
		pmon_start $(mode_args "$mode")
		exe="$PMON exec $PROGS/storm"
	fi
	c0=$(pvmd_cticks)
	/usr/bin/time -f '%e %U %S' -o "$out" timeout 600 $exe $N $ROUNDS \
	    >"$RUN/storm.out" 2>&1 || fail "storm ($mode): $(cat "$RUN/storm.out")"
	wait_for 30 storm_gone || fail "storm tasks still run"
	c1=$(pvmd_cticks)
	if [ "$mode" != plain ]; then
		# The coordinator may be far behind the program.
		timeout 900 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
		    fail "pmon flush: $(cat "$RUN/flush.err")"
		timeout 300 "$PMON" shutdown >/dev/null 2>"$RUN/shutdown.err" ||
		    fail "pmon shutdown: $(cat "$RUN/shutdown.err")"
		wait_for 300 pid_dead "$COORD_PID" ||
		    fail "pmon-coordd $COORD_PID still runs after shutdown"
		log=$(coord_log)
		lost=$(awk '/lost [0-9]+ records to a full ring/ {
		    for (i = 1; i < NF; i++) if ($i == "lost") n += $(i + 1) }
		    END { print n + 0 }' "$log")
		mv "$log" "$log.$mode.$$.$RANDOM"
	fi
	awk -v m="$mode" -v c=$((c1 - c0)) -v t="$TICK" -v l="$lost" \
	    '{ printf "run %s %.2f %.2f %d\n", m, $1, $2 + $3 + c / t, l }' \
	    "$out"
}

for k in $(seq "$RUNS"); do
	for m in $MODES; do one "$m"; done
done | tee "$RUN/runs"
echo "bench_block: storm $N $ROUNDS, $(nproc) CPUs," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for m in $MODES; do
	awk -v m="$m" 'BEGIN { n = 0 }
	    $2 == m { w[n] = $3; c[n] = $4; l[n] = $5; n++ }
	    function med(a, n,   i, j, t) {
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2
	    }
	    END { printf "block %s wall_s=%.2f cpu_s=%.2f lost=%d runs=%d\n",
		m, med(w, n), med(c, n), med(l, n), n }' "$RUN/runs"
done
