#!/bin/bash
# bench_scale.sh: the coordinator's ordering and state core against the
# number of tasks (BENCHMARKS.md, "Scale"; issue 20).
#
#	PMON_BUILD=build bash bench/bench_scale.sh [-e events] [-r runs]
#	    [-p "TASKS:HOSTS ..."] [-T subtrees]
#
# bench_scale (bench/bench_scale.c) at each point: a simulated message
# storm of TASKS tasks on HOSTS hosts, EVENTS events (default 10^7) at
# some 2 M events a second whatever the number of tasks, played into
# an order and a state model on one core; the median of RUNS (3),
# taken in rounds.  Points: 8:2 64:8 512:32 4096:64.  Each prints its
# line; the last line sums up:
#
#   scale ns_per_event_ratio_4096_vs_8=R peak_mb_4096=M tree_speedup=S
#
# (the median over the rounds of the ratio of the largest point's ns
# per event to the smallest's, and the largest point's peak.)  Each
# round also plays the largest point into a tree of SUBTREES (2)
# intermediates and a root, each its own process (bench_scale -T),
# then into one coordinator: tree_speedup is the median of the rounds'
# ratios of the one coordinator's wall time to the tree's.
set -e
build=${PMON_BUILD:-build}
events=10000000 runs=3 points="8:2 64:8 512:32 4096:64" subtrees=2
while getopts e:r:p:T: opt; do
	case $opt in
	e) events=$OPTARG ;;
	r) runs=$OPTARG ;;
	p) points=$OPTARG ;;
	T) subtrees=$OPTARG ;;
	*) echo "usage: bench_scale.sh [-e events] [-r runs] [-p points]" \
	       "[-T subtrees]" >&2
	   exit 2 ;;
	esac
done
bin=$build/bench/bench_scale
[ -x "$bin" ] || { echo "bench_scale.sh: no $bin (make tests)" >&2; exit 2; }
echo "bench_scale: $(nproc) cores, $(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -n 1)"
# Round k runs every point once, so that a point's runs and the ratio's
# two ends are taken minutes apart at most, not a whole run apart (this
# machine's speed drifts by more than the points differ): each point
# prints the median of its RUNS figures, and R is the median of the
# rounds' ratios.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
first=${points%% *} last=${points##* }
for k in $(seq "$runs"); do
	for p in $points; do
		echo "$k $p $("$bin" -q -r 1 -e "$events" -t "${p%:*}" \
		    -H "${p#*:}")" >>"$out"
	done
	"$bin" -r 1 -e "$events" -t "${last%:*}" -H "${last#*:}" \
	    -T "$subtrees" | sed -n "s/^run 1: tree/$k tree: tree/p;
	    s/^scale tree /$k tree /p" >>"$out"
done
grep " tree: " "$out" | sed 's/^[0-9]* tree: /bench_scale: /'
awk -v first="$first" -v last="$last" -v points="$points" '
function median(v, n,	i, j, x) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	return v[int((n + 1) / 2)]
}
$2 == "tree:" { next }
$2 == "tree" {
	for (i = 3; i <= NF; i++)
		if (split($i, kv, "=") == 2)
			tf[$1, kv[1]] = kv[2]
	next
}
{
	for (i = 3; i <= NF; i++)
		if (split($i, kv, "=") == 2)
			f[$1, $2, kv[1]] = kv[2]
	line[$2] = $0
	nk = $1 > nk ? $1 : nk
}
END {
	np = split(points, pt, " ")
	for (i = 1; i <= np; i++) {
		p = pt[i]
		for (k = 1; k <= nk; k++)
			v[k] = f[k, p, "ns_per_event"]
		split(p, th, ":")
		printf "scale tasks=%s hosts=%s events=%s ns_per_event=%d " \
		    "peak_mb=%s held_max=%s problems=%s\n", th[1], th[2],
		    f[1, p, "events"], median(v, nk), f[1, p, "peak_mb"],
		    f[1, p, "held_max"], f[1, p, "problems"]
	}
	for (k = 1; k <= nk; k++) {
		r[k] = f[k, last, "ns_per_event"] / f[k, first, "ns_per_event"]
		ts[k] = tf[k, "speedup"]
		tn[k] = tf[k, "ns_per_event"]
	}
	split(last, th, ":")
	printf "scale tree tasks=%s hosts=%s subtrees=%s ns_per_event=%d\n",
	    th[1], th[2], tf[1, "subtrees"], median(tn, nk)
	printf "scale ns_per_event_ratio_4096_vs_8=%.2f peak_mb_4096=%s " \
	    "tree_speedup=%.2f\n", median(r, nk), f[1, last, "peak_mb"],
	    median(ts, nk)
}' "$out"
