#!/bin/bash
# bench_scale.sh: the coordinator's ordering and state core against the
# number of tasks (BENCHMARKS.md, "Scale"; issue 20).
#
#	PMON_BUILD=build bash bench/bench_scale.sh [-e events] [-r runs]
#	    [-p "TASKS:HOSTS ..."]
#
# bench_scale (bench/bench_scale.c) at each point: a simulated message
# storm of TASKS tasks on HOSTS hosts, EVENTS events (default 10^7) at
# some 2 M events a second whatever the number of tasks, played into
# an order and a state model on one core; the median of RUNS (3).
# Points: 8:2 64:8 512:32 4096:64.  Each prints its line; the last
# line sums up:
#
#   scale ns_per_event_ratio_4096_vs_8=R peak_mb_4096=M tree_speedup=S
#
# (ratio of the largest point's ns per event to the smallest's, and the
# largest point's peak; tree_speedup is "none" while pmon has no tree of
# coordinators to compare with.)
set -e
build=${PMON_BUILD:-build}
events=10000000 runs=3 points="8:2 64:8 512:32 4096:64"
while getopts e:r:p: opt; do
	case $opt in
	e) events=$OPTARG ;;
	r) runs=$OPTARG ;;
	p) points=$OPTARG ;;
	*) echo "usage: bench_scale.sh [-e events] [-r runs] [-p points]" >&2
	   exit 2 ;;
	esac
done
bin=$build/bench/bench_scale
[ -x "$bin" ] || { echo "bench_scale.sh: no $bin (make tests)" >&2; exit 2; }
echo "bench_scale: $(nproc) cores, $(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -n 1)"
first= last=
for p in $points; do
	line=$("$bin" -q -r "$runs" -e "$events" -t "${p%:*}" -H "${p#*:}")
	echo "$line"
	[ -n "$first" ] || first=$line
	last=$line
done
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
awk -v a="$(field ns_per_event "$first")" -v b="$(field ns_per_event "$last")" \
    -v m="$(field peak_mb "$last")" 'BEGIN {
	printf "scale ns_per_event_ratio_4096_vs_8=%.2f peak_mb_4096=%s tree_speedup=none\n", b / a, m }'
