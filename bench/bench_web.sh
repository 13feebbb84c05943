#!/bin/bash
# bench_web.sh: what pmon web's page costs with 10,000, 100,000 and
# 1,000,000 events loaded (BENCHMARKS.md, "make bench-web"), side by side
# in one run.
#
#	bench_web.sh [-n RUNS] [-s SIZES]
#
# SIZES (default "p250 p2500 s12500"): pN is `pingpong 2 N 64` (48 N + 44
# events), sN is `storm 8 N` (80 N + 130 events).
#
# A private virtual machine (tests/integ/lib.sh: everything started here
# is stopped by pid, also on failure), pmon on it; for each size a fresh
# `pmon web --port 0` attaches, the program makes the events, and headless Chromium loads the page RUNS times with ?bench=1:
# the page times parsing and modelling the stream, drawing each view,
# one step back (the state recomputed from the snapshot), one step
# forward, and the frontier of the last event.  Then the page as a
# user opens it (web_live.py: the stream read in chunks, drawn as it
# comes), RUNS times: live_loaded_ms is the time from the navigation
# until it had modelled and drawn every kept event, the transfer
# included.  Prints, per size, the median of each over the RUNS loads.
. "$(dirname "$0")/../tests/integ/lib.sh"

runs=5
sizes="p250 p2500 s12500"
while getopts "n:s:" o; do
	case $o in
	n) runs=$OPTARG ;;
	s) sizes=$OPTARG ;;
	*) echo "usage: bench_web.sh [-n runs] [-s sizes]" >&2; exit 2 ;;
	esac
done
CHROMIUM=${CHROMIUM:-$(command -v chromium)}
[ -n "$CHROMIUM" ] || { echo "bench_web.sh: no chromium" >&2; exit 1; }
pm_setup
need_pmon
start_pvmd
pmon_start

# measure SIZE: one size, RUNS page loads; prints one line of medians.
measure() {
	local rounds=${1#?} url web i
	bg "$PMON" web --port 0 --keep 2000000 </dev/null >"$RUN/web.out" 2>"$RUN/web.err"
	web=$BG_PID
	wait_for 10 grep -q '^http://' "$RUN/web.out" || fail "pmon web"
	url=$(head -n 1 "$RUN/web.out")
	timeout 20 "$PMON" flush >/dev/null || fail "flush"
	case $1 in
	p*) pmon_exec "$PROGS/pingpong" 2 "$rounds" 64 "$RUN/pp.$rounds" ||
	    fail "pingpong failed" ;;
	s*) pmon_exec "$PROGS/storm" 8 "$rounds" || fail "storm failed" ;;
	*) fail "bad size $1" ;;
	esac
	timeout 20 "$PMON" flush >/dev/null || fail "flush"
	: >"$RUN/t.$rounds"
	for i in $(seq "$runs"); do
		timeout 120 "$CHROMIUM" --headless=new --no-sandbox \
		    --disable-gpu --user-data-dir="$RUN/chrome" \
		    --window-size=1280,720 \
		    --dump-dom "$url&test=1&bench=1" 2>/dev/null |
		    sed -n 's/.*<pre id="model" hidden="">\(.*\)<\/pre>.*/\1/p' \
		    >>"$RUN/t.$rounds"
	done
	live=$(timeout 600 python3 "$(dirname "$0")/web_live.py" "$CHROMIUM" \
	    "$url" "$runs") || fail "web_live.py failed"
	kill -TERM "$web"
	wait "$web"
	jq -rs --arg live "$live" '(.[0].events) as $n | [.[].timing_ms] as $t |
	    ($t[0] | keys_unsorted) as $k |
	    "events=\($n) " + ([$k[] as $x | [$t[][$x]] | sort |
	    "\($x)=\(.[length / 2 | floor])"] | join(" ")) + " live_" +
	    ($live | sub(" events=.*"; ""))' "$RUN/t.$rounds"
}
for size in $sizes; do
	measure "$size"
done
pass
