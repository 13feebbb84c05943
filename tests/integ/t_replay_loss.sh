#!/bin/bash
# Protects the replay of a recording that lost events (doc/recording.md,
# "Losses"): a recorder stopped in the middle of a message storm is
# degraded (pmon start -W 1), loses part of the run, and records the
# "lost" notice and the snapshot the coordinator sends when it reads
# again; the replay's model resynchronises there, so that pmon ps,
# problems, queues, groups and the snapshot of the replay show the
# states, counts and problems the live model ended with, and no
# unreceived message or killed task that the live run never had.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
for p in storm unreceived barrierexit msgmix; do
	need_built "$PROGS/$p"
done
need_built "$TOOLS/recframes"
command -v jq >/dev/null || fail "jq is needed"

# Rings big enough for the whole storm: what the tasks record reaches
# the coordinator, and only the stopped recorder loses events.
tasks=8 rounds=20000
start_pvmd
pmon_start -Q 1048576 -W 1 -R 16777216

REC=$RUN/run.pmr
pmon_record "$REC"
timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"

# Before the loss: an unreceived message the recording holds whole.
pmon_exec "$PROGS/unreceived" "$RUN/unreceived1.log" ||
    fail "unreceived failed: $(cat "$RUN/unreceived.err")"
wait_for 20 eval 'grep -qs "^exited" "$RUN/unreceived1.log"' ||
    fail "unreceived's receiver did not exit"

# The storm; once it runs, the recorder stops reading until it is
# degraded, and a while after.  Meanwhile a second unreceived message:
# its problem reaches the recording only through the snapshot.
bg "$PMON" exec "$PROGS/storm" "$tasks" "$rounds" "$RUN/calls" \
    </dev/null >"$RUN/storm.out" 2>"$RUN/storm.err"
STORM_PID=$BG_PID
storm_busy() {
	timeout 10 "$PMON" ps --json </dev/null >"$RUN/ps.json" 2>/dev/null &&
	    jq -e '[.tasks[] | select(.program | endswith("storm")) |
	    .calls] | length == '"$tasks"' and min > 2000' "$RUN/ps.json" \
	    >/dev/null
}
wait_for 60 storm_busy || fail "storm did not get going: $(cat \
    "$RUN/storm.err" "$RUN/ps.json")"
kill -STOP "$REC_PID"
recorder_degraded() {
	timeout 10 "$PMON" tools --json </dev/null >"$RUN/tools.json" \
	    2>/dev/null && [ "$(jq -r '.tools[] | select(.name ==
	    "pmon-record") | .stream' "$RUN/tools.json")" = degraded ]
}
wait_for 30 recorder_degraded || fail "the stopped recorder was not \
degraded: $(cat "$RUN/tools.json")"
pmon_exec "$PROGS/unreceived" "$RUN/unreceived2.log" ||
    fail "unreceived failed: $(cat "$RUN/unreceived.err")"
wait_for 20 eval 'grep -qs "^exited" "$RUN/unreceived2.log"' ||
    fail "the second unreceived's receiver did not exit"
sleep 1
kill -CONT "$REC_PID"
wait_for 120 pid_dead "$STORM_PID" || fail "storm did not finish"
wait "$STORM_PID" || fail "storm exited with $?: $(cat "$RUN/storm.err")"
STORM_PID=""
grep -qx "storm ok" "$RUN/storm.out" || fail "storm did not finish"
wait_calls "$tasks" "$RUN/calls"

# After the loss: groups, a barrier deadlock found by the coordinator's
# check, and tasks killed without pvm_exit (as in t_record.sh).
mkdir -p "$RUN/mix"
pmon_exec "$PROGS/msgmix" 3 "$RUN/mix" ||
    fail "msgmix failed: $(cat "$RUN/msgmix.err")"
pmon_barrierexit

# The live final state, once every task ended: storm's, msgmix's and
# unreceived's exited, barrierexit's two waiters killed.
live_final() {
	timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
	    fail "pmon flush failed: $(cat "$RUN/flush.err")"
	timeout 20 "$PMON" snapshot --json </dev/null >"$RUN/live.snap" \
	    2>"$RUN/live.snap.err" ||
	    fail "pmon snapshot: $(cat "$RUN/live.snap.err")"
	jq -e '[.tasks[] | select(.program != "pvmgs") | .state] |
	    (map(select(. == "exited")) | length) == '$((tasks + 4 + 4 + 1))' and
	    (map(select(. == "killed")) | length) == 2' \
	    "$RUN/live.snap" >/dev/null
}
wait_for 20 live_final || fail "the live run never ended: \
$(jq -c '[.tasks[] | {tid, program, state}], .problems' "$RUN/live.snap")"
"$PMON" ps >"$RUN/live.ps" 2>"$RUN/live.q.err" &&
    "$PMON" problems >"$RUN/live.problems" 2>>"$RUN/live.q.err" &&
    "$PMON" problems --json >"$RUN/live.problems.json" \
    2>>"$RUN/live.q.err" &&
    "$PMON" queues --json >"$RUN/live.queues.json" 2>>"$RUN/live.q.err" &&
    "$PMON" groups --json >"$RUN/live.groups.json" 2>>"$RUN/live.q.err" ||
    fail "live queries: $(cat "$RUN/live.q.err")"
pmon_shutdown ""
wait_for 10 pid_dead "$REC_PID" || fail "pmon record did not exit at BYE"
wait "$REC_PID" || fail "pmon record exited with $?: $(cat "$RUN/record.err")"
pm_log "$(cat "$RUN/record.err")"

# The live run: the expected problems (two unreceived messages, one
# deadlock and each waiter waiting on the quitter), and the recorder
# lost part of it.
expect_eq "unreceived problems live" 2 "$(jq '[.problems[] |
    select(.kind == "unreceived")] | length' "$RUN/live.snap")"
expect_eq "deadlocks live" 1 "$(jq '[.problems[] |
    select(.kind == "deadlock")] | length' "$RUN/live.snap")"
expect_eq "waits on the exited live" 2 "$(jq '[.problems[] |
    select(.kind == "waits_on_exited")] | length' "$RUN/live.snap")"
expect_eq "problems live" 5 "$(jq '.problems | length' "$RUN/live.snap")"
expect_eq "lost events live (rings)" 0 "$(jq '[.tasks[].lost] | add' \
    "$RUN/live.snap")"

# The recording: a lost notice, and right after it the snapshot the
# coordinator sent (only hosts may come between); otherwise this test
# proves nothing.  The second unreceived message's problem came while
# the recorder lost events: only the snapshot has it.
"$TOOLS/recframes" "$REC" >"$RUN/frames" 2>"$RUN/frames.err" ||
    fail "recframes: $(cat "$RUN/frames.err")"
lost=$(grep -n '^NOTICE {"notice":"lost"' "$RUN/frames" | head -n 1 |
    cut -d: -f1)
[ -n "$lost" ] || fail "the recording holds no lost notice: the recorder \
lost nothing ($(grep -c '^EVENT' "$RUN/frames") events recorded)"
sed -n "$((lost + 1)),\$p" "$RUN/frames" | grep -v '^REC_HOST' |
    head -n 1 | grep -q '^REC_SNAPSHOT' ||
    fail "no snapshot follows the lost notice: $(sed -n \
    "$lost,$((lost + 3))p" "$RUN/frames" | cut -c 1-200)"
missed=$(sed -n "${lost}s/^NOTICE //p" "$RUN/frames" | jq .events)
pm_log "the recorder missed $missed events, $(grep -c '^EVENT' \
    "$RUN/frames") recorded"
[ "$missed" -gt 0 ] || fail "the lost notice counts no event"
expect_eq "unreceived problems recorded as frames" 1 "$(grep -c \
    '^PROBLEM {"kind":"unreceived"' "$RUN/frames")"

# The replay's final state.
TMPDIR=$RUN timeout 60 "$PMON" replay "$REC" -- sh -c '"$1" snapshot \
    --json >"$2/replay.snap" && "$1" ps >"$2/replay.ps" &&
    "$1" problems >"$2/replay.problems" &&
    "$1" problems --json >"$2/replay.problems.json" &&
    "$1" queues --json >"$2/replay.queues.json" &&
    "$1" groups --json >"$2/replay.groups.json"' sh "$PMON" "$RUN" \
    </dev/null 2>"$RUN/replay.err" ||
    fail "pmon replay failed: $(cat "$RUN/replay.err")"
[ -s "$RUN/replay.err" ] && fail "pmon replay complained: \
$(cat "$RUN/replay.err")"

# What must be equal: everything but the tasks' time_ns.  A resync sets
# each task's times from the snapshot, which does not say when the
# task's last event before it happened: the time between that event and
# its first one after the resync is not counted (doc/state.md).
for q in ps problems; do
	cmp "$RUN/live.$q" "$RUN/replay.$q" >/dev/null || fail "pmon $q of \
the replay differs from the live one: $(diff "$RUN/live.$q" \
	    "$RUN/replay.$q" | head -n 12)"
done
for q in problems queues groups; do
	jq -S . "$RUN/live.$q.json" >"$RUN/live.$q.s"
	jq -S . "$RUN/replay.$q.json" >"$RUN/replay.$q.s"
	cmp "$RUN/live.$q.s" "$RUN/replay.$q.s" >/dev/null || fail "pmon $q \
--json of the replay differs from the live one: $(diff "$RUN/live.$q.s" \
	    "$RUN/replay.$q.s" | head -n 12)"
done
untimed='del(.tasks[].time_ns)'
jq -S "$untimed" "$RUN/live.snap" >"$RUN/live.snap.s"
jq -S "$untimed" "$RUN/replay.snap" >"$RUN/replay.snap.s"
cmp "$RUN/live.snap.s" "$RUN/replay.snap.s" >/dev/null || fail "the \
replay's snapshot differs from the live one: $(diff "$RUN/live.snap.s" \
    "$RUN/replay.snap.s" | head -n 12)"

pass
