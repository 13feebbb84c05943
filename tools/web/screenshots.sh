#!/bin/bash
# make screenshots: one PNG of each view of pmon web (doc/web.md) into
# DIR (doc/screenshots), for the README.  A private virtual machine runs
# msgmix (messages, a group, barriers) and deadpair (a deadlocked pair);
# headless Chromium draws the page attached to it.  Then a second pmon
# web watches a storm of a million events (storm 8 12500), drawn whole
# in real time: the picture of a busy run.
set -e
out=$(cd "${1:-doc/screenshots}" 2>/dev/null && pwd || { mkdir -p "$1"; cd "$1" && pwd; })
cd "$(dirname "$0")/../.."
. tests/integ/lib.sh
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
[ -n "$CHROMIUM" ] || { echo "screenshots: no chromium" >&2; exit 1; }
set +e
pm_setup
need_pmon
start_pvmd
pmon_start
bg "$PMON" web --port 0 </dev/null >"$RUN/web.out" 2>"$RUN/web.err"
wait_for 10 grep -q '^http://' "$RUN/web.out" || fail "pmon web: $(cat "$RUN/web.err")"
URL=$(head -n 1 "$RUN/web.out")
BASE=${URL%%/\?k=*}
timeout 20 "$PMON" flush >/dev/null || fail "flush"
mkdir -p "$RUN/mix"
pmon_exec "$PROGS/msgmix" 3 "$RUN/mix" || fail "msgmix failed"
bg timeout 60 "$PMON" exec "$PROGS/deadpair" "$RUN/deadpair.tids"
sleep 2
timeout 20 "$PMON" flush >/dev/null || fail "flush"

# The concurrency view while msgmix's barrier fills: the step just after
# the last barrier entry before the first barrier exit.
curl -s "$BASE/events?once=1&k=${URL##*k=}" | sed -n 's/^data: //p' >"$RUN/all.json"
mid=$(jq -s '[.[] | select(.call != null)] | to_entries |
    (map(select(.value.call == "pvm_barrier" and .value.phase == "end")) |
    first.key) as $e | [.[] | select(.key < $e and
    .value.call == "pvm_barrier")] | last.key + 1' "$RUN/all.json")

# The space-time diagram with an event selected: a receive of msgmix's
# master, its details and its frontier.
sel=$(jq -rs '[.[] | select(.call == "pvm_recv" and .phase == "end" and
    .match != null)] | .[length / 2 | floor].id' "$RUN/all.json")

shot() {
	timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
	    --user-data-dir="$RUN/chrome" --hide-scrollbars \
	    --virtual-time-budget=60000 --window-size=1280,720 \
	    --screenshot="$out/$1.png" "$URL&test=1&view=$2" \
	    >/dev/null 2>&1 || fail "chromium: $1"
	echo "screenshots: $out/$1.png"
}
shot spacetime "spacetime&select=$sel"
shot spacetime-real "spacetime&time=real"
shot concurrency "concurrency&step=$mid"
shot spawn spawn
shot system system
shot queues "queues&step=$mid"
shot activity activity
timeout 10 "$PMON" kill "$(awk '{ printf "%st%x", (NR > 1 ? "," : ""), $2 }' \
    "$RUN/deadpair.tids")" >/dev/null

bg "$PMON" web --port 0 --keep 2000000 </dev/null >"$RUN/web2.out" 2>"$RUN/web2.err"
wait_for 10 grep -q '^http://' "$RUN/web2.out" || fail "pmon web: $(cat "$RUN/web2.err")"
URL=$(head -n 1 "$RUN/web2.out")
timeout 20 "$PMON" flush >/dev/null || fail "flush"
pmon_exec "$PROGS/storm" 8 12500 || fail "storm failed"
timeout 20 "$PMON" flush >/dev/null || fail "flush"
shot storm-real "spacetime&time=real"
pass
