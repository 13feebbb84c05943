#!/bin/bash
# Protects "a recorder stopped by a signal holds what was released before
# it" (issue 16; what a `pmon flush` before the signal covered): a
# lossless recorder that fell behind (stopped, its queue full, the agents
# held back) gets SIGINT.  Its recording holds, for every task, every
# event the coordinator had released before the signal (a snapshot taken
# just before says up to which seq; records the rings dropped meanwhile
# are there as lost markers); the tasks replay as running (the program
# went on), not killed.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || fail "jq is needed"

Q=1048576		# the recorder's queue: full in a fraction of a second
start_pvmd
pmon_start -Q $Q
REC=$RUN/run.pmr
bg "$PMON" record -o "$REC" </dev/null >"$RUN/record.out" 2>"$RUN/record.err"
REC_PID=$BG_PID
wait_for 10 trace_connected "$REC_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/record.err")"
timeout 20 "$PMON" flush </dev/null || fail "pmon flush failed"

bg timeout 300 "$PMON" exec "$PROGS/storm" -p 100 4 200000 </dev/null \
    >"$RUN/storm.out" 2>&1
STORM=$BG_PID
sleep 1
kill -STOP "$REC_PID"
held() {
	"$PMON" tools --json 2>/dev/null | jq -e '.tools[] |
	    select(.name == "pmon-record") | .queued > 0' >/dev/null
}
wait_for 10 held || fail "the recorder's queue did not fill"
sleep 1
"$PMON" snapshot --json >"$RUN/before.json" 2>"$RUN/snap.err" ||
    fail "pmon snapshot: $(cat "$RUN/snap.err")"
# The signal finds it with its queue full of what the snapshot shows.
kill -INT "$REC_PID"
kill -CONT "$REC_PID"
wait "$REC_PID" || fail "pmon record exited with $?: $(cat "$RUN/record.err")"
pm_log "$(cat "$RUN/record.err")"

# The recording against the snapshot from before the flush.
"$PMON" replay "$REC" -- "$PMON" ps --json >"$RUN/replay.json" \
    2>"$RUN/replay.err" || fail "pmon replay: $(cat "$RUN/replay.err")"
want='[.tasks[] | select(.program == "storm") | {key: (.tid | tostring),
    value: .last_seq}] | from_entries'
jq -n --slurpfile b "$RUN/before.json" --slurpfile r "$RUN/replay.json" "
    (\$b[0] | $want) as \$before | (\$r[0] | $want) as \$rec |
    [\$before | to_entries[] | select((\$rec[.key] // 0) < .value) |
    \"t\(.key): recorded up to \(\$rec[.key] // 0), released \(.value)\"]
    " >"$RUN/short.json"
expect_eq "storm tasks in the snapshot" 4 "$(jq "$want | length" \
    "$RUN/before.json")"
[ "$(jq length "$RUN/short.json")" = 0 ] || fail "the recording misses \
what was released before the signal: $(jq -c . "$RUN/short.json")"
pm_log "lost in the rings while the recorder held the agents back: \
$(jq '[.tasks[] | .lost] | add' "$RUN/replay.json")"
expect_eq "storm tasks replayed as killed" 0 "$(jq '[.tasks[] |
    select(.program == "storm" and .state == "killed")] | length' \
    "$RUN/replay.json")"

"$PMON" kill '*' >/dev/null 2>&1
wait "$STORM" 2>/dev/null
pmon_shutdown ""
pass
