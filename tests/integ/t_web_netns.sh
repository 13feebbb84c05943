#!/bin/bash
# Protects pmon web on a virtual machine of 3 hosts (network
# namespaces): a message storm whose tasks PVM spreads over the hosts,
# watched by pmon web (lossless, its default) and read by headless
# Chromium in host 1's namespace.  The page holds every event and every
# message of the run, its tasks at the end are the coordinator's
# snapshot, its concurrency view draws one container per host that ran
# tasks, and its space-time diagram draws every matched message.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
need_chromium
[ -x "$PROGS/storm" ] || fail "missing $PROGS/storm"

hosts=3
netns_pmon_up $hosts

bg $PM_ON "$PMON" web --port 0 </dev/null >"$RUN/web.out" 2>"$RUN/web.err"
wait_for 10 grep -q '^http://' "$RUN/web.out" ||
    fail "pmon web printed no URL: $(cat "$RUN/web.err")"
URL=$(head -n 1 "$RUN/web.out")
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

n=9 rounds=300
pmon_exec "$PROGS/storm" $n $rounds || fail "storm exited with $?: $(cat "$RUN/storm.err")"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" snapshot --json >"$RUN/snap.json" ||
    fail "pmon snapshot failed"
events=$((10 * n * rounds + 16 * n + 2))
expect_eq "events of the storm in the coordinator's snapshot" $events \
    "$(jq '[.position[]] | add' "$RUN/snap.json")"
used=$(jq '[.tasks[] | select(.program == "storm") | .tid / 262144 | floor] |
    unique | length' "$RUN/snap.json")
[ "$used" -ge 2 ] || fail "PVM put the storm on $used host(s): the test proves nothing"

# pmon web has the whole run once its kept events reach the count.
kept() {
	$PM_ON curl -s "${URL%%/\?k=*}/events?once=1&k=${URL##*k=}" |
	    sed -n 's/^data: //p' >"$RUN/web.json"
	jq -s '[.[] | select(.type == null and .seq != null)] | length' "$RUN/web.json"
}
wait_for 60 eval '[ "$(kept)" = $events ]' ||
    fail "pmon web kept $(kept) of $events events: $(tail -n 3 "$RUN/web.err")"
expect_eq "lost notices in pmon web" 0 \
    "$(jq -s '[.[] | select(.type == "notice" and .notice == "lost")] | length' "$RUN/web.json")"

page_model "$URL" "$RUN/model.json" 30000
M=$RUN/model.json

expect_eq "events on the page" $events "$(jq .events "$M")"
jq -e '.snapshot_diffs == []' "$M" >/dev/null ||
    fail "the page differs from /snapshot: $(jq -c .snapshot_diffs "$M")"
expect_eq "the page's tasks" \
    "$(jq -c '[.tasks[] | {tid, state, sent: .sent.msgs, received: .received.msgs}] |
        sort_by(.tid)' "$RUN/snap.json")" \
    "$(jq -c '[.tasks[] | {tid, state, sent, received}] | sort_by(.tid)' "$M")"
# storm.c: task 0 multicasts the start to the n - 1 others (an arrow
# per receiver), then every round each task sends one message that
# another receives.
arrows=$((n - 1 + n * rounds))
expect_eq "matched messages on the page" $arrows "$(jq .arrows "$M")"
expect_eq "messages drawn in the space-time diagram" $arrows \
    "$(jq .drawn.spacetime_arrows "$M")"
expect_eq "host containers in the concurrency view" \
    "$(jq '[.tasks[] | .tid / 262144 | floor] | unique | length' "$RUN/snap.json")" \
    "$(jq .drawn.container "$M")"
expect_eq "the header" loaded "$(jq -r .status "$M")"
# WEB_NETNS_SHOTS=DIR: what the page looks like.
if [ -n "$WEB_NETNS_SHOTS" ]; then
	for v in spacetime concurrency activity; do
		$PM_ON timeout 90 "$CHROMIUM" --headless=new --no-sandbox \
		    --disable-gpu --user-data-dir="$RUN/chrome" --hide-scrollbars \
		    --virtual-time-budget=30000 --window-size=1400,900 \
		    --screenshot="$WEB_NETNS_SHOTS/netns-$v.png" \
		    "$URL&test=1&view=$v&time=real" >/dev/null 2>&1 ||
		    fail "chromium screenshot"
	done
fi
pm_log "pmon web on $hosts hosts: $events events, $arrows messages, $used hosts ran the storm"
pass
