#!/bin/bash
# Protects pmon web (doc/web.md): attached before a real run, it must
# give a browser that comes late every task and one arrow per message,
# and the page's state model -- computed in the browser from the events
# -- must match the coordinator's snapshot, for tasks that exited and
# for a deadlocked pair blocked in pvm_recv.  Live updates reach a
# browser already connected; a wrong key or bad input is refused and the
# server keeps serving.  Headless Chromium reads what the page shows.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
need_chromium
start_pvmd
pmon_start

bg "$PMON" web --port 0 </dev/null >"$RUN/web.out" 2>"$RUN/web.err"
WEB_PID=$BG_PID
wait_for 10 grep -q '^http://' "$RUN/web.out" ||
    fail "pmon web printed no URL: $(cat "$RUN/web.err")"
URL=$(head -n 1 "$RUN/web.out")
BASE=${URL%%/\?k=*}
KEY=${URL##*k=}
# pmon web attaches before it listens; this round trip makes sure the
# coordinator has read its hello before the program starts.
timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

# A browser connected while the program runs gets the live stream.
bg curl -sN --max-time 30 "$BASE/events?k=$KEY" -o "$RUN/live.sse"
LIVE_PID=$BG_PID

pmon_exec master1 || fail "master1 exited with $?"
n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*SUCCESSFUL/\1/p' \
    "$RUN/master1.out")
[ -n "$n" ] || fail "master1 did not spawn its workers: $(cat "$RUN/master1.out")"

# msgmix: every kind of message call, a group with barriers and bcast.
mkdir -p "$RUN/mix"
pmon_exec "$PROGS/msgmix" 3 "$RUN/mix" || fail "msgmix exited with $?"

# deadpair's two tasks block in pvm_recv for each other's message.
tids=$RUN/deadpair.tids
bg timeout 60 "$PMON" exec "$PROGS/deadpair" "$tids" >"$RUN/deadpair.out" 2>&1
two_lines() { [ -f "$tids" ] && [ "$(wc -l <"$tids")" = 2 ]; }
wait_for 10 two_lines ||
    fail "deadpair did not start: $(cat "$RUN/deadpair.out")"
blocked_pair() {
	timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>/dev/null &&
	    [ "$(jq '[.tasks[] | select(.program == "deadpair" and
	        .state == "blocked")] | length' "$RUN/ps.json")" = 2 ]
}
wait_for 20 blocked_pair || fail "deadpair is not blocked: $(cat "$RUN/ps.json")"
p=$(awk '$1 == "parent" { print $2 }' "$tids")
c=$(awk '$1 == "child" { print $2 }' "$tids")
# The parent stopped as well (a notice): "stopped" on the page too.
timeout 20 "$PMON" stop "t$(printf %x "$p")" >/dev/null ||
    fail "pmon stop of the deadpair parent failed"
timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
timeout 20 "$PMON" snapshot --json >"$RUN/snap.json" ||
    fail "pmon snapshot failed"

# The live browser got master1's and deadpair's events as they came.
wait_for 10 grep -q "{\"tid\":$p,\"seq\"" "$RUN/live.sse" ||
    fail "no live deadpair events reached the connected browser"
kill -TERM "$LIVE_PID" 2>/dev/null
sed -n 's/^data: //p' "$RUN/live.sse" >"$RUN/live.json"

# chromium_model ARGS FILE: the page's model (<pre id=model>) as JSON.
chromium_model() { page_model "$URL$1" "$2"; }
chromium_model "" "$RUN/model.json"
M=$RUN/model.json

jq -e '.snapshot_diffs == []' "$M" >/dev/null ||
    fail "the page's state differs from the snapshot: $(jq -c .snapshot_diffs "$M")"
# "new" on the page: announced, no event yet (the group server).
expect_eq "tasks on the page" \
    "$(jq -c '[.tasks[] | {tid, state, program}] | sort_by(.tid)' "$RUN/snap.json")" \
    "$(jq -c '[.tasks[] | {tid, program, state: (if .state == "new"
        then "running" else .state end)} | {tid, state, program}] |
        sort_by(.tid)' "$M")"
# master1 multicasts to its n workers, each worker sends twice (to its
# neighbour and to the master); msgmix receives every message it sends
# exactly once (its counts files: every blocking receive gets one, and
# each of its K=3 workers' pvm_nrecv message is polled for); deadpair
# sends nothing.
mix=$(cat "$RUN"/mix/*.counts | awk '$1 ~ /^pvm_(recv|trecv|precv)$/ { n += $2 }
    END { print n + 0 }')
# Its master's pvm_nrecv polling gets one message from each worker.
arrows=$((3 * n + mix + 3))
expect_eq "arrows (matched messages)" $arrows "$(jq .arrows "$M")"
expect_eq "arrows drawn in the space-time diagram" $arrows \
    "$(jq .drawn.spacetime_arrows "$M")"
# Each spawned task's arrow from its parent's pvm_spawn.
expect_eq "spawn arrows in the space-time diagram" \
    "$(jq '[.tasks[] | select(.parent > 0)] | length' "$RUN/snap.json")" \
    "$(jq .drawn.spacetime_spawns "$M")"
expect_eq "task icons in the concurrency view" "$(jq '.tasks | length' "$RUN/snap.json")" \
    "$(jq .drawn.task_icons "$M")"
expect_eq "nodes of the spawn tree" "$(jq '.tasks | length' "$RUN/snap.json")" \
    "$(jq .drawn.spawn_nodes "$M")"
# Each of the pair waits for the other: one wait arrow each.
expect_eq "blocked-receive arrows" 2 "$(jq .drawn.arrows_wait "$M")"
expect_eq "deadpair parent on the page" "stopped pvm_recv $c" \
    "$(jq -r --argjson t "$p" '.tasks[] | select(.tid == $t) |
        "\(.state) \(.blocked.in) \(.blocked.from)"' "$M")"
expect_eq "events on the page" \
    "$(jq '[.position[]] | add' "$RUN/snap.json")" "$(jq .events "$M")"
# Nothing was lost: the header says so by saying nothing of losses,
# and the only snapshot is the one pmon web got when it attached.
expect_eq "the header" loaded "$(jq -r .status "$M")"
expect_eq "losses listed" 0 "$(jq '.losslist | length' "$M")"
expect_eq "snapshots kept" '[{"at":0,"why":"attach"}]' "$(jq -c .segments "$M")"

# The same through the page's live path (a streamed fetch, in chunks).
chromium_model "&sse=1" "$RUN/sse.json"
expect_eq "the model read through the live path" \
    "$(jq -c '[.events, .arrows, .tasks, .snapshot_diffs]' "$M")" \
    "$(jq -c '[.events, .arrows, .tasks, .snapshot_diffs]' "$RUN/sse.json")"

# The frontier of master1's last receive holds the send it received.
curl -s "$BASE/events?once=1&k=$KEY" >"$RUN/all.sse"
sed -n 's/^data: //p' "$RUN/all.sse" >"$RUN/all.json"
# The hello counts what pmon web kept: every line after the task lines
# but the end (the page shows its loading progress against it).
expect_eq "entries the hello announced" \
    "$(jq -s '[.[] | select(.type != "hello" and .type != "task" and
        .type != "end")] | length' "$RUN/all.json")" \
    "$(jq -s '.[0].kept' "$RUN/all.json")"
jq -e '.loaded_ms > 0' "$M" >/dev/null ||
    fail "the page did not say when it had loaded: $(jq .loaded_ms "$M")"
# pmon web's event lines leave the program to the task's line (doc/web.md).
rcv=$(jq -rs '(map(select(.type == "task") | {(.tid | tostring): .program}) |
    add) as $prog | [.[] | select(.type == null and .seq != null and
    $prog[.tid | tostring] == "master1" and .call == "pvm_recv" and
    .phase == "end")] | last | "\(.tid):\(.seq) \(.match)"' "$RUN/all.json")
set -- $rcv
[ -n "$2" ] && [ "$2" != null ] || fail "no matched receive of master1"
chromium_model "&select=$1" "$RUN/frontier.json"
sender=${2%%:*}
expect_eq "frontier of $1 in task $sender (at least the send $2)" true \
    "$(jq --arg s "$sender" --argjson q "${2##*:}" \
        '.frontier[$s] | split(":")[1] | tonumber >= $q' "$RUN/frontier.json")"
# The event's details, in words: hex ids, the exact corrected time of
# the stream (19 digits, which a JavaScript number cannot hold).
hexid() { printf 't%x:%s' "${1%%:*}" "${1##*:}"; }
# (pmon web writes tc only where it differs from t.)
line=$(grep -F "{\"tid\":${1%%:*},\"seq\":${1##*:}," "$RUN/all.json")
tc=$(printf '%s' "$line" | grep -o '"tc":[0-9]*' | cut -d: -f2)
[ -n "$tc" ] || tc=$(printf '%s' "$line" | grep -o '"t":[0-9]*' | cut -d: -f2)
[ -n "$tc" ] || fail "no time in the line of $1: $line"
for want in "event: $(hexid "$1")" "call: pvm_recv end" \
    "matched send: $(hexid "$2")" "tc (ns): $tc"; do
	jq -e --arg w "$want" '.details | index($w) != null' \
	    "$RUN/frontier.json" >/dev/null ||
	    fail "the details lack \"$want\": $(jq -c .details "$RUN/frontier.json")"
done
jq -e '.details | map(select(test("^time: \\+[0-9]+\\.[0-9]{9} s$"))) |
    length == 1' "$RUN/frontier.json" >/dev/null ||
    fail "no exact time in the details: $(jq -c .details "$RUN/frontier.json")"
# The problems in words: deadpair's deadlock, waits as pmon ps writes them.
lo=$((p < c ? p : c)) hi=$((p < c ? c : p))
want=$(printf 'deadlock of 2 tasks: t%x in pvm_recv(t%x,1), t%x in pvm_recv(t%x,1)' \
    "$lo" "$hi" "$hi" "$lo")
jq -e --arg w "$want" '.problem_lines | index($w) != null' "$M" >/dev/null ||
    fail "the problems panel lacks \"$want\": $(jq -c .problem_lines "$M")"

# Step 0 is the attach snapshot, taken before any task started.
chromium_model "&step=0" "$RUN/step0.json"
expect_eq "states at step 0" '["new"]' \
    "$(jq -c '[.tasks[].state] | unique' "$RUN/step0.json")"

# Just after master1's pvm_mcast began, each worker has its message
# queued and no other: one send arrow per worker in the concurrency view.
mc=$(jq -s '(map(select(.type == "task") | {(.tid | tostring): .program}) |
    add) as $prog | [.[] | select(.type == null and .seq != null)] |
    map($prog[.tid | tostring] == "master1" and .call == "pvm_mcast" and
    .phase == "begin") | index(true)' "$RUN/all.json")
chromium_model "&step=$((mc + 1))" "$RUN/mcast.json"
expect_eq "send arrows after the multicast" "$n" \
    "$(jq .drawn.arrows_send "$RUN/mcast.json")"
expect_eq "queues after the multicast" "$(printf '1 %.0s' $(seq "$n"))" \
    "$(jq -r '[.tasks[] | select(.program == "slave1") | .queue] |
        map(tostring + " ") | add' "$RUN/mcast.json")"

# Bad input is refused, with a reason, and the server keeps serving.
code() { curl -s -o "$RUN/body" -w '%{http_code}' "$@"; }
expect_eq "no key" 403 "$(code "$BASE/snapshot")"
expect_eq "a wrong key" 403 "$(code "$BASE/events?k=$(printf '0%.0s' $(seq 64))")"
expect_eq "a malformed key" 400 "$(code "$BASE/events?k=xyz")"
expect_eq "a bad once" 400 "$(code "$BASE/events?once=2&k=$KEY")"
expect_eq "a GET of /request" 405 "$(code "$BASE/request?k=$KEY")"
expect_eq "a request of two lines" 400 \
    "$(code --data-binary $'ps\nps' "$BASE/request?k=$KEY")"
expect_eq "a request the coordinator refuses" 400 \
    "$(code --data-binary 'frobnicate' "$BASE/request?k=$KEY")"
grep -q error "$RUN/body" || fail "no reason for the refusal: $(cat "$RUN/body")"
expect_eq "a request through the control panel" 200 \
    "$(code --data-binary 'ps' "$BASE/request?k=$KEY")"
jq -e '.tasks | length > 0' "$RUN/body" >/dev/null || fail "ps: $(cat "$RUN/body")"
expect_eq "the page" 200 "$(code "$BASE/")"
expect_eq "an unknown page" 404 "$(code "$BASE/nothing")"

# Killed from outside: no event, a notice; the page follows it.
timeout 20 "$PMON" kill "t$(printf %x "$p"),t$(printf %x "$c")" >/dev/null ||
    fail "pmon kill of deadpair failed"
timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
chromium_model "" "$RUN/killed.json"
jq -e '.snapshot_diffs == []' "$RUN/killed.json" >/dev/null ||
    fail "after the kill the page differs: $(jq -c .snapshot_diffs "$RUN/killed.json")"
expect_eq "deadpair after the kill" "killed killed" \
    "$(jq -r '[.tasks[] | select(.program == "deadpair") | .state] | join(" ")' \
        "$RUN/killed.json")"
pmon_shutdown
kill -TERM "$WEB_PID"
wait_for 10 pid_dead "$WEB_PID" || fail "pmon web did not end on SIGTERM"
wait "$WEB_PID" || fail "pmon web exited with $?: $(cat "$RUN/web.err")"
pass
