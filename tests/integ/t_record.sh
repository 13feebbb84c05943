#!/bin/bash
# Protects recordings (doc/recording.md) on a 2-host machine (network
# namespaces):
# - pmon record and pmon trace attached from the start of a run of
#   pingpong and unreceived across both hosts: pmon replay serves the
#   recording so that pmon trace prints byte for byte what the live one
#   printed, and a snapshot of the replay equals the live final one;
#   the same for a recording in format 1 (pmon record -F 1), which the
#   default (format 2) is not;
# - a recording started late: its replay begins with the state where it
#   attached, and ends with the live final state (but for times);
# - the record summary counts the events the live trace printed;
# - a truncated and a corrupted copy: pmon replay names the offset of the
#   damage and serves exactly a prefix of the live stream;
# - a directory and a FIFO are refused with a clear error (no hang);
# - control requests on a replay fail with a clear error, and pmon replay
#   exits with its command's status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
for p in pingpong unreceived barrierexit; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
command -v jq >/dev/null || fail "jq is needed"

netns_pmon_up 2

# Small blocks, so that damage in the middle leaves blocks before it.
REC=$RUN/run.pmr
bg $PM_ON "$PMON" record -o "$REC" -Q 4096 </dev/null >"$RUN/record.out" \
    2>"$RUN/record.err"
REC_PID=$BG_PID
wait_for 10 trace_connected "$REC_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/record.err")"
# One in format 1, the format of pmon before format 2.
V1=$RUN/v1.pmr
bg $PM_ON "$PMON" record -F 1 -o "$V1" </dev/null >"$RUN/v1.out" \
    2>"$RUN/v1.err"
V1_PID=$BG_PID
wait_for 10 trace_connected "$V1_PID" ||
    fail "pmon record -F 1 did not connect: $(cat "$RUN/v1.err")"
# A third one ends with SIGTERM before the coordinator does.
SIG=$RUN/sig.pmr
bg $PM_ON "$PMON" record -o "$SIG" </dev/null >"$RUN/sig.out" 2>"$RUN/sig.err"
SIG_PID=$BG_PID
wait_for 10 trace_connected "$SIG_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/sig.err")"
LIVE=$RUN/live.json
pmon_trace "$LIVE"

k=3 rounds=300 bytes=64
pmon_exec "$PROGS/pingpong" "$k" "$rounds" "$bytes" "$RUN/pingpong.log" ||
    fail "pingpong failed: $(cat "$RUN/pingpong.err")"
# A second recorder attaches between the two programs, once every
# pingpong event is in the stream.
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"
LATE=$RUN/late.pmr
bg $PM_ON "$PMON" record -o "$LATE" </dev/null >"$RUN/late.out" \
    2>"$RUN/late.err"
LATE_PID=$BG_PID
wait_for 10 trace_connected "$LATE_PID" ||
    fail "the late pmon record did not connect: $(cat "$RUN/late.err")"
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"
pmon_exec "$PROGS/unreceived" "$RUN/unreceived.log" ||
    fail "unreceived failed: $(cat "$RUN/unreceived.err")"
# The receiver of unreceived outlives pmon exec (its parent).
wait_for 20 eval 'grep -qs "^exited" "$RUN/unreceived.log"' ||
    fail "unreceived's receiver did not exit: $(cat "$RUN/unreceived.log")"

# barrierexit: two tasks deadlock in a barrier (a problem found between
# events, by the coordinator's check) and are killed: the model ends
# them when their last event is out, which only TASK_GONE records.
pmon_barrierexit

# The final state: every program task ended, the killed ones killed.
live_final() {
	$PM_ON timeout 20 "$PMON" snapshot --json </dev/null \
	    >"$RUN/live.snap" 2>"$RUN/live.snap.err" ||
	    fail "pmon snapshot: $(cat "$RUN/live.snap.err")"
	jq -e '[.tasks[] | select(.program != "pvmgs") | .state] |
	    (map(select(. == "exited")) | length) == 7 and
	    (map(select(. == "killed")) | length) == 2' \
	    "$RUN/live.snap" >/dev/null
}
wait_for 20 live_final || fail "the live run never ended: \
$(jq -c '[.tasks[] | {tid, program, state}], .problems' "$RUN/live.snap")"
$PM_ON timeout 20 "$PMON" ps </dev/null >"$RUN/live.ps" 2>"$RUN/live.ps.err" ||
    fail "pmon ps: $(cat "$RUN/live.ps.err")"
kill -TERM "$SIG_PID"
wait_for 10 pid_dead "$SIG_PID" || fail "pmon record ignored SIGTERM"
wait "$SIG_PID" || fail "pmon record exited with $? on SIGTERM: \
$(cat "$RUN/sig.err")"
pmon_shutdown "$TRACE_PID"
wait_for 10 pid_dead "$REC_PID" || fail "pmon record did not exit at BYE"
wait "$REC_PID" || fail "pmon record exited with $?: $(cat "$RUN/record.err")"
wait_for 10 pid_dead "$V1_PID" || fail "pmon record -F 1 did not exit"
wait "$V1_PID" || fail "pmon record -F 1 exited with $?: $(cat "$RUN/v1.err")"
wait_for 10 pid_dead "$LATE_PID" || fail "the late pmon record did not exit"
wait "$LATE_PID" || fail "the late pmon record exited with $?: \
$(cat "$RUN/late.err")"

# The live run did what the programs do, on both hosts.
events=$(grep -c '"call":' "$LIVE")
jq -e '[.tasks[] | select(.program == "pingpong")] | length == 4' \
    "$RUN/live.snap" >/dev/null || fail "live snapshot lacks pingpong"
expect_eq "hosts in the live snapshot" 2 "$(jq '.hosts | length' \
    "$RUN/live.snap")"
expect_eq "unreceived problems live" 1 "$(grep -c '"kind":"unreceived"' \
    "$LIVE")"
expect_eq "deadlocks live" 1 "$(grep -c '"kind":"deadlock"' "$LIVE")"
grep -qx "pmon record: $REC: $events events, [0-9]* tasks, [0-9]* bytes, \
[0-9.]* B/event" "$RUN/record.err" || fail "record summary should count \
$events events: $(cat "$RUN/record.err")"
pm_log "$(cat "$RUN/record.err")"

# replay FILE OUT: the replay's trace into OUT, its stderr into OUT.err.
replay() {
	TMPDIR=$RUN timeout 30 "$PMON" replay "$1" -- "$PMON" trace --json \
	    --tasks </dev/null >"$2" 2>"$2.err"
}

# --- the whole recording: the same stream, the same state -----------------------

TMPDIR=$RUN timeout 30 "$PMON" replay "$REC" -- sh -c '"$1" trace --json \
    --tasks >"$2" && "$1" snapshot --json >"$3"' sh "$PMON" \
    "$RUN/replay.json" "$RUN/replay.snap" </dev/null 2>"$RUN/replay.err" ||
    fail "pmon replay failed: $(cat "$RUN/replay.err")"
[ -s "$RUN/replay.err" ] && fail "pmon replay complained about a sound \
file: $(cat "$RUN/replay.err")"
cmp "$LIVE" "$RUN/replay.json" >/dev/null || fail "the replayed trace \
differs from the live one: $(diff "$LIVE" "$RUN/replay.json" | head -n 6)"

# The header's format version (bytes 8 and 9): 2 by default, 1 with -F 1;
# format 1 replays the same.
format_of() { od -An -tu1 -j8 -N2 "$1" | awk '{ print $1 * 256 + $2 }'; }
expect_eq "format of the default recording" 2 "$(format_of "$REC")"
expect_eq "format of pmon record -F 1" 1 "$(format_of "$V1")"
grep -qx "pmon record: $V1: $events events, [0-9]* tasks, [0-9]* bytes, \
[0-9.]* B/event" "$RUN/v1.err" || fail "record -F 1 summary should count \
$events events: $(cat "$RUN/v1.err")"
pm_log "$(cat "$RUN/v1.err")"
replay "$V1" "$RUN/v1.json" || fail "pmon replay of format 1: \
$(cat "$RUN/v1.json.err")"
cmp "$LIVE" "$RUN/v1.json" >/dev/null || fail "the replayed format 1 \
trace differs from the live one: $(diff "$LIVE" "$RUN/v1.json" | head -n 6)"
jq -S . "$RUN/live.snap" >"$RUN/live.snap.s"
jq -S . "$RUN/replay.snap" >"$RUN/replay.snap.s"
cmp "$RUN/live.snap.s" "$RUN/replay.snap.s" >/dev/null || fail "the \
replay's snapshot differs from the live one: $(diff "$RUN/live.snap.s" \
    "$RUN/replay.snap.s" | head -n 10)"

# The late recording: the state where it attached (pingpong done), then
# exactly the rest of the live stream.
TMPDIR=$RUN timeout 30 "$PMON" replay "$LATE" -- "$PMON" trace --json \
    --snapshot </dev/null >"$RUN/late.json" 2>"$RUN/late.json.err" ||
    fail "pmon replay of the late recording: $(cat "$RUN/late.json.err")"
jq -e '.type == "snapshot" and (.state.position | length) == 4 and
    ([.state.tasks[] | select(.program == "pingpong" and
    .state == "exited")] | length) == 4' <(head -n 1 "$RUN/late.json") \
    >/dev/null || fail "the late recording's snapshot is not the state \
after pingpong: $(head -c 600 "$RUN/late.json")"
n=$(($(wc -l <"$RUN/late.json") - 1))
[ "$n" -gt 10 ] || fail "the late recording holds $n lines"
grep -v '"type":"task"' "$LIVE" | tail -n "$n" |
    cmp - <(tail -n "$n" "$RUN/late.json") >/dev/null ||
    fail "the late recording's stream is not the end of the live one"
# Its state starts from that snapshot: at the end it is the live one,
# but for the times (the snapshot does not say when each task's last
# event before it happened: doc/state.md, "Resynchronising").
TMPDIR=$RUN timeout 30 "$PMON" replay "$LATE" -- sh -c '"$1" ps >"$2" &&
    "$1" snapshot --json >"$3"' sh "$PMON" "$RUN/late.ps" \
    "$RUN/late.snap" </dev/null 2>"$RUN/late.ps.err" ||
    fail "pmon replay of the late recording: $(cat "$RUN/late.ps.err")"
cmp "$RUN/live.ps" "$RUN/late.ps" >/dev/null || fail "pmon ps of the late \
recording differs from the live one: $(diff "$RUN/live.ps" "$RUN/late.ps" |
    head -n 8)"
jq -S 'del(.tasks[].time_ns)' "$RUN/live.snap" >"$RUN/live.snap.u"
jq -S 'del(.tasks[].time_ns)' "$RUN/late.snap" >"$RUN/late.snap.u"
cmp "$RUN/live.snap.u" "$RUN/late.snap.u" >/dev/null || fail "the late \
recording's final snapshot differs from the live one: $(diff \
    "$RUN/live.snap.u" "$RUN/late.snap.u" | head -n 10)"

# The one ended by SIGTERM wrote its end block.
TMPDIR=$RUN timeout 30 "$PMON" replay -v "$SIG" -- "$PMON" trace --json \
    --tasks </dev/null >"$RUN/sig.json" 2>"$RUN/sig.json.err" ||
    fail "pmon replay of the SIGTERM recording: $(cat "$RUN/sig.json.err")"
grep -q "sig.pmr: .* events, written by pmon record .*, ended cleanly$" \
    "$RUN/sig.json.err" || fail "the SIGTERM recording did not end \
cleanly: $(cat "$RUN/sig.json.err")"
n=$(wc -l <"$RUN/sig.json")
[ "$n" -gt 1000 ] && head -n "$n" "$LIVE" | cmp - "$RUN/sig.json" \
    >/dev/null || fail "the SIGTERM recording is not a prefix of the live \
stream ($n lines)"

# A tool that asks for the state at the start finds the machine's hosts,
# as a live one attaching before the program does.
TMPDIR=$RUN timeout 30 "$PMON" replay "$REC" -- "$PMON" trace --json \
    --snapshot </dev/null >"$RUN/snapfirst.json" 2>"$RUN/snapfirst.err" ||
    fail "pmon replay -- pmon trace --snapshot: $(cat "$RUN/snapfirst.err")"
expect_eq "hosts in the replay's first snapshot" 2 "$(head -n 1 \
    "$RUN/snapfirst.json" | jq '.state.hosts | length')"

# prefix_of OUT: OUT is a strict, non-empty prefix of the live trace.
prefix_of() {
	local n
	n=$(wc -l <"$1")
	[ "$n" -gt 0 ] && [ "$n" -lt "$(wc -l <"$LIVE")" ] ||
	    fail "$(basename "$1"): $n lines, not a strict prefix"
	head -n "$n" "$LIVE" | cmp - "$1" >/dev/null ||
	    fail "$(basename "$1") is not a prefix of the live trace"
}

# --- a truncated copy -----------------------------------------------------------

size=$(stat -c %s "$REC")
head -c $((size * 2 / 3)) "$REC" >"$RUN/trunc.pmr"
replay "$RUN/trunc.pmr" "$RUN/trunc.json" ||
    fail "pmon replay of a truncated file failed: $(cat "$RUN/trunc.json.err")"
grep -q "trunc.pmr: truncated at offset [0-9]*; serving the [0-9]* events" \
    "$RUN/trunc.json.err" || fail "no truncation offset reported: \
$(cat "$RUN/trunc.json.err")"
prefix_of "$RUN/trunc.json"

# --- a flipped bit ----------------------------------------------------------------

cp "$REC" "$RUN/bad.pmr"
at=$((size / 2))
byte=$(od -An -tu1 -j "$at" -N1 "$REC" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 16)))" |
    dd of="$RUN/bad.pmr" bs=1 seek="$at" conv=notrunc 2>/dev/null
replay "$RUN/bad.pmr" "$RUN/bad.json" ||
    fail "pmon replay of a corrupt file failed: $(cat "$RUN/bad.json.err")"
off=$(sed -n 's/.*bad.pmr: corrupt block at offset \([0-9]*\): .*/\1/p' \
    "$RUN/bad.json.err")
[ -n "$off" ] && [ "$off" -le "$at" ] || fail "want a corrupt block at an \
offset up to $at: $(cat "$RUN/bad.json.err")"
prefix_of "$RUN/bad.json"

# --- not a recording: a directory, a FIFO (which must not hang) ------------------

mkdir "$RUN/adir"
mkfifo "$RUN/afifo"
for f in adir afifo; do
	TMPDIR=$RUN timeout 10 "$PMON" replay "$RUN/$f" -- true </dev/null \
	    2>"$RUN/$f.err"
	expect_eq "pmon replay of $f exits 1" 1 "$?"
done
grep -q "adir: a directory, not a recording" "$RUN/adir.err" ||
    fail "pmon replay of a directory: $(cat "$RUN/adir.err")"
grep -q "afifo: not a regular file" "$RUN/afifo.err" ||
    fail "pmon replay of a FIFO: $(cat "$RUN/afifo.err")"

# --- no control on a recording; the command's status ------------------------------

TMPDIR=$RUN timeout 30 "$PMON" replay "$REC" -- "$PMON" stop '*' \
    </dev/null >"$RUN/stop.out" 2>"$RUN/stop.err" &&
    fail "pmon stop on a replay succeeded"
grep -q "replay: the program is not running" "$RUN/stop.err" ||
    fail "pmon stop on a replay: $(cat "$RUN/stop.err")"
TMPDIR=$RUN timeout 30 "$PMON" replay "$REC" -- sh -c 'exit 3' </dev/null \
    2>"$RUN/st.err"
expect_eq "pmon replay's status is its command's" 3 "$?"
expect_eq "replay directories left" 0 "$(ls -d "$RUN"/pmon-replay.* \
    2>/dev/null | wc -l)"
pass
