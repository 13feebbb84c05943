#!/bin/bash
# Protects pmon web after a loss (doc/web.md, "Losses"): when the
# coordinator drops events for pmon web (its queue is tiny, the storm is
# busy), the page must say so -- in the header, at the step of the loss,
# on the lines of the tasks that lost events -- and start over from the
# snapshot that follows the loss: at that step every task's state and
# counts are that snapshot's, before it they never exceed it, and at the
# last step they are the coordinator's final snapshot.  A second pmon web
# with a small --keep no longer holds the start of the run, and must
# still start from a true state and end at the coordinator's.  Both are
# --lossy; a third, lossless as pmon web is by default, keeps every
# event of the same run and says so.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
need_chromium
start_pvmd
# 64 KiB: pmon web (a lossy tool) falls behind the storm and loses.
pmon_start -Q 65536

# web_start NAME ARGS: a pmon web; its URL in $RUN/NAME.url.
web_start() {
	local name=$1
	shift
	bg "$PMON" web --port 0 "$@" </dev/null >"$RUN/$name.out" \
	    2>"$RUN/$name.err"
	wait_for 10 grep -q '^http://' "$RUN/$name.out" ||
	    fail "pmon web printed no URL: $(cat "$RUN/$name.err")"
	head -n 1 "$RUN/$name.out" >"$RUN/$name.url"
}
web_start a --lossy
WEB_A=$BG_PID
keep=3000
web_start b --keep $keep --lossy
WEB_B=$BG_PID
web_start c
# Both attached before the program (see t_web.sh).
timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

n=8 rounds=2000
pmon_exec "$PROGS/storm" $n $rounds || fail "storm exited with $?"
grep -q 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
grep -q '(pmon-web).*dropping its events' "$(coord_log)" ||
    fail "the coordinator never dropped events for pmon web (the test \
proves nothing): $(tail -n 5 "$(coord_log)")"
timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
timeout 20 "$PMON" snapshot --json >"$RUN/snap.json" ||
    fail "pmon snapshot failed"
# The storm's events (tests/progs/storm.c): the coordinator got them all.
expect_eq "events of the storm in the coordinator's snapshot" \
    $((10 * n * rounds + 16 * n + 2)) "$(jq '[.position[]] | add' "$RUN/snap.json")"

# kept NAME: what pmon web NAME keeps, as JSON lines in $RUN/NAME.json.
kept() {
	local url
	url=$(cat "$RUN/$1.url")
	curl -s "${url%%/\?k=*}/events?once=1&k=${url##*k=}" |
	    sed -n 's/^data: //p' >"$RUN/$1.json"
}
# caught_up NAME: pmon web NAME has, per task, the coordinator's last
# event: in an event or in a snapshot's position (its queue drains
# after the program ended, then the last loss is told).
caught_up() {
	kept "$1"
	jq -se --slurpfile s "$RUN/snap.json" '
	    (reduce (.[] | select(.type == null and .seq != null)) as $e ({};
	        .[$e.tid | tostring] = ([.[$e.tid | tostring] // 0,
	        $e.seq + (($e.count // 1) - 1)] | max))) as $ev |
	    ([.[] | select(.type == "snapshot")] | last.state.position) as $p |
	    $s[0].position | to_entries |
	    all(.value == ([$ev[.key] // 0, $p[.key] // 0] | max))' \
	    "$RUN/$1.json" >/dev/null
}
# (Each look reads everything kept: a deadline, not a count of looks;
# under ASan on a loaded 2-core machine 90 s was once too few.)
deadline=$((SECONDS + 240))
for w in a b c; do
	until caught_up $w; do
		[ $SECONDS -lt $deadline ] ||
		    fail "pmon web ($w) did not catch up: $(tail -n 3 "$RUN/$w.err")"
		sleep 0.5
	done
done

# The losses as pmon web kept them, independently of the page: the
# step of each (the events before its notice) and the coordinator's
# snapshot that follows it.
jq -sc '[foreach .[] as $m ({n: 0, loss: null, out: null};
    .out = null |
    if $m.type == null and $m.seq != null then .n += 1
    elif $m.type == "notice" and $m.notice == "lost" then
	.loss = {at: .n, events: $m.events}
    elif $m.type == "snapshot" and $m.why != "checkpoint" and .loss != null
	then .out = (.loss + {snap: $m.state}) | .loss = null
    else . end; .out // empty)]' "$RUN/a.json" >"$RUN/losses.json"
nloss=$(jq length "$RUN/losses.json")
[ "$nloss" -gt 0 ] || fail "pmon web (a) kept no loss with its snapshot"
nnotice=$(jq -s '[.[] | select(.type == "notice" and .notice == "lost")] |
    length' "$RUN/a.json")
expect_eq "lost notices followed by a snapshot" "$nnotice" "$nloss"
lost=$(jq '[.[].events] | add' "$RUN/losses.json")

# The steps to look at: 0, and around each of the first four losses.
steps=$(jq -r '[0] + ([.[:4][].at | (. - 1), ., (. + 1)] | map(select(. >= 0)))
    | unique | map(tostring) | join(",")' "$RUN/losses.json")

# chromium_model NAME ARGS FILE: the page of pmon web NAME, as JSON.
chromium_model() { page_model "$(cat "$RUN/$1.url")$2" "$3" 20000; }
chromium_model a "&steps=$steps" "$RUN/a.model"
M=$RUN/a.model

# Tasks as the coordinator's snapshot says them, and as the page does.
norm_snap='def norm_snap: (.queues // [] | map({key: (.tid | tostring),
    value: (.messages | length)}) | from_entries) as $q |
    [.tasks[] | {tid, state, sent: .sent.msgs, received: .received.msgs,
    last_seq, queue: ($q[.tid | tostring] // 0)}] | sort_by(.tid);'
norm_page='def norm_page($tids): [.tasks[] | select(.tid | IN($tids[])) |
    {tid, state: (if .state == "new" then "running" else .state end),
    sent, received, last_seq, queue}] | sort_by(.tid);'

# The last step: the coordinator's final snapshot, task by task.
expect_eq "the page's tasks at the last step" \
    "$(jq -c "$norm_snap norm_snap" "$RUN/snap.json")" \
    "$(jq -c --slurpfile s "$RUN/snap.json" "$norm_page
        norm_page([\$s[0].tasks[].tid])" "$M")"
jq -e '.snapshot_diffs == []' "$M" >/dev/null ||
    fail "the page differs from /snapshot: $(jq -c .snapshot_diffs "$M")"

# The page shows the losses: where they happened, how many, and that
# the run is not complete.
expect_eq "losses on the page (steps)" "$(jq -c 'map(.at)' "$RUN/losses.json")" \
    "$(jq -c '[.losses[].at]' "$M")"
expect_eq "events lost, on the page" "$lost" "$(jq .lost.events "$M")"
expect_eq "losses listed beside the views" "$nloss" "$(jq '.losslist | length' "$M")"
jq -e --slurpfile l "$RUN/losses.json" '[.losslist, $l[0]] | transpose |
    all(.[0] | test("^step [0-9,]+: lost [0-9,]+ events of t"))' "$M" >/dev/null ||
    fail "a loss is not listed as one: $(jq -c '.losslist[:2]' "$M")"
expect_eq "marks of losses on the step slider" "$nloss" "$(jq .drawn.slider_marks "$M")"
jq -e '.drawn.spacetime_losses > 0' "$M" >/dev/null ||
    fail "no loss marked in the space-time diagram"
jq -e '.status | test("^loaded, [0-9,]+ events lost \\(last at ")' "$M" >/dev/null ||
    fail "the header does not say events were lost: $(jq .status "$M")"

# Stepping across each loss: at its step the state is the snapshot that
# followed it; before, no task is further than that snapshot (nothing
# from later in the run); after, none is behind it.
for i in $(seq 0 $(($(jq '.[:4] | length' "$RUN/losses.json") - 1))); do
	at=$(jq ".[$i].at" "$RUN/losses.json")
	jq ".[$i].snap" "$RUN/losses.json" >"$RUN/loss.snap"
	step_tasks() {
		jq -c --argjson s "$1" --slurpfile sn "$RUN/loss.snap" \
		    "$norm_page .steps[] | select(.step == \$s) |
		    norm_page([\$sn[0].tasks[].tid])" "$M"
	}
	expect_eq "tasks at step $at (loss $i) against its snapshot" \
	    "$(jq -c "$norm_snap norm_snap" "$RUN/loss.snap")" "$(step_tasks "$at")"
	if [ "$at" -gt 0 ]; then
		bad=$(jq -nc --argjson p "$(step_tasks $((at - 1)))" \
		    --argjson s "$(jq -c "$norm_snap norm_snap" "$RUN/loss.snap")" \
		    '[$p, $s] | transpose | map(select(.[0].sent > .[1].sent or
		    .[0].received > .[1].received or .[0].last_seq > .[1].last_seq or
		    (.[0].state == "exited" and .[1].state != "exited")))')
		expect_eq "tasks at step $((at - 1)) ahead of the snapshot after it" \
		    "[]" "$bad"
	fi
	after=$(step_tasks $((at + 1)))
	if [ -n "$after" ]; then
		bad=$(jq -nc --argjson p "$after" \
		    --argjson s "$(jq -c "$norm_snap norm_snap" "$RUN/loss.snap")" \
		    '[$p, $s] | transpose | map(select(.[0].sent < .[1].sent or
		    .[0].received < .[1].received or .[0].last_seq < .[1].last_seq))')
		expect_eq "tasks at step $((at + 1)) behind the snapshot before it" \
		    "[]" "$bad"
	fi
done
jq -e '.steps[] | select(.step == 0) | .base.why == "attach"' "$M" >/dev/null ||
    fail "step 0 of pmon web (a) is not the attach snapshot"
# At the step of the first loss the step line says what was lost.
at=$(jq '.[0].at' "$RUN/losses.json")
chromium_model a "&step=$at" "$RUN/a.step"
jq -e --argjson n "$(jq '.[0].events' "$RUN/losses.json")" '.lossinfo |
    test("^here: lost ([0-9],?)+ events of t") and
    (capture("lost (?<n>[0-9,]+) events").n | gsub(",";"") | tonumber) == $n' \
    "$RUN/a.step" >/dev/null ||
    fail "step $at does not say what was lost: $(jq .lossinfo "$RUN/a.step")"

# The live path (a streamed fetch) shows the same.
chromium_model a "&sse=1" "$RUN/a.sse"
expect_eq "the page read through the live path" \
    "$(jq -c '[.events, .tasks, .losses, .lost.events, .snapshot_diffs]' "$M")" \
    "$(jq -c '[.events, .tasks, .losses, .lost.events, .snapshot_diffs]' "$RUN/a.sse")"

# pmon web (b) kept at most about --keep events (a snapshot counts as its
# size in event lines; twice that while a checkpoint is on its way) and
# starts from a snapshot, not from the attach one with a hole after it.
# pmon web (b) may still move to a later snapshot after it caught up
# (the last loss is told then, and its snapshot follows): the page and
# what pmon web keeps are compared once they show the same first one.
# The page's step 0 is the last snapshot before the first event (a loss
# can put a lost notice and its snapshot right after the first one).
step0_snap='. as $a | ([$a | to_entries[] | select(.value.type == null and
    .value.seq != null) | .key][0] // length) as $i |
    [$a[:$i][] | select(.type == "snapshot")] | last | .state'
first_snap() {
	jq -s -c "$step0_snap | .position" "$RUN/b.json"
}
# Under ASan on a loaded machine the last loss can take several seconds
# to come (CI): up to 20 tries, and a clear failure if it never settles.
stable=0
for try in $(seq 1 20); do
	kept b
	before=$(first_snap)
	chromium_model b "&steps=0" "$RUN/b.model"
	kept b
	[ "$(first_snap)" = "$before" ] && { stable=1; break; }
	sleep 1
done
[ "$stable" = 1 ] || fail "pmon web (b)'s first snapshot kept moving: $before"
B=$RUN/b.model
kept_b=$(jq -s '[.[] | select(.type == null and .seq != null)] | length' "$RUN/b.json")
[ "$kept_b" -le $((2 * keep)) ] || fail "pmon web --keep $keep kept $kept_b events"
jq -e '.dropped > 0 and .gap == 0' "$B" >/dev/null ||
    fail "pmon web (b) dropped nothing or left a gap: $(jq -c '[.dropped, .gap]' "$B")"
jq -e '.segments[0].at == 0 and .segments[0].why != "attach"' "$B" >/dev/null ||
    fail "pmon web (b) does not start from a later snapshot: $(jq -c '.segments[:2]' "$B")"
expect_eq "pmon web (b): the first state is its first snapshot" \
    "$(jq -s -c "$norm_snap $step0_snap | norm_snap" "$RUN/b.json")" \
    "$(jq -c --slurpfile s "$RUN/snap.json" "$norm_page .steps[0] |
        norm_page([\$s[0].tasks[].tid])" "$B")"
expect_eq "pmon web (b): the page's tasks at the last step" \
    "$(jq -c "$norm_snap norm_snap" "$RUN/snap.json")" \
    "$(jq -c --slurpfile s "$RUN/snap.json" "$norm_page
        norm_page([\$s[0].tasks[].tid])" "$B")"
jq -e '.snapshot_diffs == []' "$B" >/dev/null ||
    fail "pmon web (b) differs from /snapshot: $(jq -c .snapshot_diffs "$B")"

# pmon web (c), lossless: every event of the run, no loss, and the page
# says how it subscribed.
# (grep first: jq -s on the whole run took seconds.)
expect_eq "pmon web (c): lost notices" 0 \
    "$({ grep -F '"notice"' "$RUN/c.json" || true; } | jq -s '[.[] |
    select(.type == "notice" and .notice == "lost")] | length')"
expect_eq "pmon web (c): events kept" "$(jq '[.position[]] | add' "$RUN/snap.json")" \
    "$(jq -c 'select(.type == null and .seq != null) | 1' "$RUN/c.json" | wc -l)"
chromium_model c "" "$RUN/c.model"
expect_eq "pmon web (c): the page's tasks at the last step" \
    "$(jq -c "$norm_snap norm_snap" "$RUN/snap.json")" \
    "$(jq -c --slurpfile s "$RUN/snap.json" "$norm_page
        norm_page([\$s[0].tasks[].tid])" "$RUN/c.model")"
expect_eq "pmon web (c): the header" "loaded" "$(jq -r .status "$RUN/c.model")"
jq -e '.mode | startswith("lossless")' "$RUN/c.model" >/dev/null ||
    fail "pmon web (c) does not say it is lossless: $(jq .mode "$RUN/c.model")"
jq -e '.mode | startswith("lossy")' "$M" >/dev/null ||
    fail "pmon web (a) does not say it is lossy: $(jq .mode "$M")"

# WEB_LOSS_SHOTS=DIR: what the page looks like just after the first loss.
if [ -n "$WEB_LOSS_SHOTS" ]; then
	at=$(jq '.[0].at' "$RUN/losses.json")
	for v in spacetime activity; do
		timeout 90 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
		    --user-data-dir="$RUN/chrome" --hide-scrollbars \
		    --virtual-time-budget=20000 --window-size=1400,800 \
		    --screenshot="$WEB_LOSS_SHOTS/loss-$v.png" \
		    "$(cat "$RUN/a.url")&test=1&view=$v&step=$((at + 50))" \
		    >/dev/null 2>&1 || fail "chromium screenshot"
	done
fi
pm_log "pmon web (a): $nloss losses, $lost events lost, $(jq .events "$M") kept;" \
    "(b): $kept_b events kept, $(jq .dropped "$B") dropped"

pmon_shutdown
for p in $WEB_A $WEB_B; do
	kill -TERM "$p"
	wait_for 10 pid_dead "$p" || fail "pmon web did not end on SIGTERM"
	wait "$p" || fail "pmon web exited with $?"
done
pass
