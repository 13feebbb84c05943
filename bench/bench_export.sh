#!/bin/bash
# bench_export.sh: pmon export's speed and memory on a big recording.
#
#	PMON_BUILD=build bash bench/bench_export.sh [-i RECORDING]
#	    [-n rounds] [-k tasks] [-r runs] [-f "formats"] [-B OTHER_BUILD]
#	    [-K DIR] [-N]
#
# Without -i it first records a message storm: a private virtual
# machine (lib.sh's record_storm: `pmon start`, `pmon record` attached)
# before `pmon exec storm K ROUNDS` (defaults 8 and 50000: 10 K ROUNDS +
# 16 K + 2 = 4,000,130 events), then `pmon shutdown`.  -K DIR keeps the
# recording there (as DIR/storm-K-ROUNDS.pmr) and reuses it next time.
#
# Then, RUNS times each: export_floor (the recording read by recfile and
# decoded by libpmon, what every export costs before its format does
# anything), and for every format `pmon export --format=F -i RECORDING`
# to a file in the run directory (-N: to /dev/null, but otf2), deleted
# after each run.  The CPU time (user + system) and the peak RSS of each
# run come from /usr/bin/time.  With -B the same exports of a second
# build (e.g. of the main branch) run in turn with this one's, A B A B,
# so that both see the same machine.
#
# Each run prints `run F/BUILD events=E cpu_s=S ev_s=X peak_kb=M`; the
# last lines, one per format (and the floor), are the medians, with the
# other build's after this one's:
#	export format=F events=E ev_s=X cpu_s=S peak_kb=M \
#	    [other_ev_s=X other_cpu_s=S other_peak_kb=M]
. "$(dirname "$0")/../tests/integ/lib.sh"

rec= rounds=50000 k=8 runs=3 formats="chrome paje otf2 shiviz" other=
keep= devnull= given=
while getopts "B:f:i:k:K:Nn:r:" o; do
	case $o in
	B) other=$OPTARG ;;
	N) devnull=1 ;;
	f) formats=$OPTARG ;;
	i) rec=$OPTARG given=1 ;;
	k) k=$OPTARG ;;
	K) keep=$OPTARG ;;
	n) rounds=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) echo "usage: bench_export.sh [-i RECORDING] [-n rounds]" \
	       "[-k tasks] [-r runs] [-f formats] [-B OTHER_BUILD]" \
	       "[-K DIR] [-N]" >&2
	   exit 2 ;;
	esac
done

EXPORT_FLOOR=$PMON_BUILD/bench/export_floor
pm_setup
need_built "$PMON"
[ -z "$other" ] || need_built "$other/bin/pmon"
[ -x /usr/bin/time ] || fail "/usr/bin/time is needed (Debian's time)"

# The storm under pmon record (lib.sh's record_storm), into a file
# that appears only once complete.
record_storm_bench() {
	need_pmon
	start_pvmd
	record_storm "$1.tmp" "$k" "$rounds"
	pm_log "$(tail -n 1 "$1.tmp.err")"
	mv "$1.tmp" "$1"
}

if [ -z "$rec" ]; then
	if [ -n "$keep" ]; then
		mkdir -p "$keep" || fail "cannot make $keep"
		rec=$keep/storm-$k-$rounds.pmr
	else
		rec=$RUN/storm.pmr
	fi
	[ -s "$rec" ] || record_storm_bench "$rec"
fi
[ -s "$rec" ] || fail "no recording $rec"
need_built "$EXPORT_FLOOR"
want=$((10 * k * rounds + 16 * k + 2))

# one_run LABEL COMMAND...: runs it under /usr/bin/time; one line to res.
one_run() {
	local label=$1
	shift
	/usr/bin/time -f '%U %S %M' -o "$RUN/time" "$@" </dev/null \
	    >"$RUN/run.out" 2>"$RUN/run.err" ||
	    fail "$label: $*: $(cat "$RUN/run.err")"
	awk -v l="$label" -v e="$events" '{
		cpu = $1 + $2
		printf "run %s events=%d cpu_s=%.2f ev_s=%.0f peak_kb=%d\n",
		    l, e, cpu, (cpu > 0 ? e / cpu : 0), $3 }' "$RUN/time" |
	    tee -a "$RUN/res"
}

# export_run BUILD_LABEL PMON FORMAT: one export, its output deleted.
export_run() {
	local out=$RUN/out.$3
	[ -n "$devnull" ] && [ "$3" != otf2 ] && out=/dev/null
	rm -rf "$RUN/out.$3"
	one_run "$3/$1" "$2" export --format="$3" -i "$rec" -o "$out"
	[ -s "$RUN/run.err" ] && fail "$1: pmon export --format=$3" \
	    "complained: $(cat "$RUN/run.err")"
	rm -rf "$RUN/out.$3"
}

# median LABEL FIELD: the median of FIELD over the runs of LABEL.
median() {
	grep "^run $1 " "$RUN/res" | sed "s/.* $2=\([0-9.]*\).*/\1/" |
	    sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# The floor: the recording read and decoded, no format (export_floor).
"$EXPORT_FLOOR" "$rec" >"$RUN/floor.out" 2>&1 ||
    fail "export_floor: $(cat "$RUN/floor.out")"
events=$(sed -n 's/^floor events=\([0-9]*\) .*/\1/p' "$RUN/floor.out")
[ -n "$given" ] || [ "$events" = "$want" ] || pm_log "the recording" \
    "holds $events events, the storm made $want (a loss)"
for i in $(seq 1 "$runs"); do
	one_run floor "$EXPORT_FLOOR" "$rec"
done
for f in $formats; do
	for i in $(seq 1 "$runs"); do
		export_run this "$PMON" "$f"
		[ -z "$other" ] || export_run other "$other/bin/pmon" "$f"
	done
done

# One line per format: this build's medians, then the other's.
for f in floor $formats; do
	l=$f/this
	[ "$f" = floor ] && l=floor
	line="export format=$f events=$events ev_s=$(median "$l" ev_s)"
	line="$line cpu_s=$(median "$l" cpu_s) peak_kb=$(median "$l" peak_kb)"
	if [ -n "$other" ] && [ "$f" != floor ]; then
		line="$line other_ev_s=$(median "$f/other" ev_s)"
		line="$line other_cpu_s=$(median "$f/other" cpu_s)"
		line="$line other_peak_kb=$(median "$f/other" peak_kb)"
	fi
	echo "$line"
done
