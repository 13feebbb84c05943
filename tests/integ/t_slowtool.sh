#!/bin/bash
# Protects the slow tool case (doc/control.md), on a 2-host machine
# (network namespaces): a tool that stops reading while pingpong runs
# over both hosts holds up neither the program nor another tool;
# once it reads again it is told exactly what it lost: its events and
# the lost windows of its "lost" notices are, per task, exactly the
# events the other tool got, none twice.  The tools' queues are 256 KiB
# (pmon start -Q), and pingpong keeps a steady rate a trace can follow,
# so that the fast tool is not slow too on a loaded machine.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/pingpong" ] || fail "missing $PROGS/pingpong"
command -v jq >/dev/null || fail "jq is needed"

netns_setup 2
netns_start_pvmd
netns_wait_hosts 2
PM_ON="$RUN/on1"
pmon_start -Q 262144
netns_wait_agents 2
pmon_trace "$RUN/fast.json"
FAST_PID=$TRACE_PID

# The slow tool: a pmon trace writing into a pipe nobody reads yet.
mkfifo "$RUN/slow.fifo"
exec 3<>"$RUN/slow.fifo"
bg $PM_ON "$PMON" trace --json </dev/null >"$RUN/slow.fifo" 2>"$RUN/slow.err"
SLOW_PID=$BG_PID
wait_for 10 trace_connected "$SLOW_PID" ||
    fail "the slow pmon trace did not connect: $(cat "$RUN/slow.err")"

k=2 rounds=1500
pmon_exec "$PROGS/pingpong" "$k" "$rounds" 100 "$RUN/pingpong.log" 1000 ||
    fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
grep -qx done "$RUN/pingpong.log" || fail "pingpong did not finish"
pm_log "pingpong $(grep rtt_ns "$RUN/pingpong.log") with a stalled tool"
grep -q "dropping its events" "$(coord_log)" ||
    fail "the coordinator never found the slow tool full (the test \
proves nothing): $(tail -n 5 "$(coord_log)")"

# Now read the slow tool's pipe; then end both tools.
cat "$RUN/slow.fifo" 3>&- >"$RUN/slow.json" &
CAT_PID=$!
wait_for 20 grep -q '"notice":"lost"' "$RUN/slow.json" ||
    fail "the slow tool caught up without a lost notice"
pmon_shutdown "$FAST_PID"
wait_for 20 pid_dead "$SLOW_PID" || fail "the slow pmon trace did not end"
wait "$SLOW_PID" || fail "the slow pmon trace exited with $?"
exec 3>&-
wait_for 10 pid_dead "$CAT_PID"
wait "$CAT_PID" 2>/dev/null

expect_eq "hosts of pingpong's tasks" 2 "$(jq -r 'select(.type == "task" and
    .program == "pingpong") | .tid' "$RUN/fast.json" | while read -r t; do
	echo $(((t >> 18) & 0xfff)); done | sort -u | wc -l)"

# The fast tool got everything: every message matched.
"$STREAMCHECK" -a "$RUN/fast.json" || fail "the fast tool's stream"
ids() { grep -o '^{"id":"[0-9]*:[0-9]*"' "$1" | cut -d'"' -f4; }
ids "$RUN/fast.json" | sort >"$RUN/fast.ids"
nfast=$(wc -l <"$RUN/fast.ids")
expect_eq "pingpong messages in the fast tool's stream" \
    $((2 * k * rounds + k)) "$(grep -c '"call":"pvm_send","phase":"begin"' \
    "$RUN/fast.json")"

# The slow tool's events and the windows it was told it lost.
jq -r 'select(.type == "notice" and .notice == "lost") | .tasks[] |
    "\(.tid) \(.first) \(.last)"' "$RUN/slow.json" >"$RUN/lost.windows"
[ -s "$RUN/lost.windows" ] || fail "the slow tool was told of no loss"
{
	ids "$RUN/slow.json"
	while read -r tid first last; do
		seq "$first" "$last" | sed "s/^/$tid:/"
	done <"$RUN/lost.windows"
} | sort >"$RUN/slow.ids"
dups=$(uniq -d "$RUN/slow.ids" | head -n 3)
[ -z "$dups" ] || fail "events both received and reported lost: $dups"
cmp -s "$RUN/fast.ids" "$RUN/slow.ids" || fail "received + lost is not \
what the fast tool got: $(diff "$RUN/fast.ids" "$RUN/slow.ids" | head -n 5)"
told=$(jq -s '[.[] | select(.type == "notice" and .notice == "lost") |
    .events] | add' "$RUN/slow.json")
got=$(ids "$RUN/slow.json" | wc -l)
expect_eq "events received + events the notices count" "$nfast" \
    $((got + told))
pm_log "slow tool: $got events received, $told lost, of $nfast"
pass
