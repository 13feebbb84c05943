#!/bin/bash
# Protects the tasks pmon does not instrument (node-agent/agent_others.c,
# doc/tasker.md): a PVM task that enrolled from a shell before `pmon
# start` is shown by pmon ps and the snapshot as "unmonitored", with its
# pid and program, learnt from pvmd's task list; a monitored program
# talks to it (tests/progs/outsider: one request, N answers, a last
# word), and the stream explains each of its N receives as from an
# unmonitored sender, with no problem reported (the messages it sent the
# server are not "unreceived"); when the server leaves pvmd's tasks it
# is "ended".  A recording made meanwhile replays to the same ps, and to
# no problem.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
n=7
start_pvmd
# The server enrols first, from a shell: pmon never instruments it.
bg "$PROGS/outsider" serve "$RUN/server.tid" >"$RUN/server.out" 2>&1
SERVER=$BG_PID
wait_for 10 test -s "$RUN/server.tid" ||
    fail "the server did not enrol: $(cat "$RUN/server.out")"
tid=$(cat "$RUN/server.tid")
htid=$(printf 't%x' "$tid")
pmon_start
REC=$RUN/run.pmr
pmon_record "$REC"
pmon_trace "$RUN/trace.json"

# pmon ps shows it, from pvmd's list, once seen twice (a second apart).
wait_for 10 eval '"$PMON" ps | grep -q "^$htid .* unmonitored "' ||
    fail "pmon ps does not show the server $htid: $("$PMON" ps)"
"$PMON" snapshot --json >"$RUN/snap1.json" || fail "pmon snapshot failed"
expect_eq "the server in the snapshot" "unmonitored $SERVER outsider" \
    "$(jq -r --argjson t "$tid" '.tasks[] | select(.tid == $t) |
    "\(.state) \(.pid) \(.program)"' "$RUN/snap1.json")"
expect_eq "tasks in the snapshot" 1 "$(jq '.tasks | length' "$RUN/snap1.json")"

pmon_exec "$PROGS/outsider" ask "$tid" $n || fail "the asker failed: \
$(cat "$RUN/outsider.out" "$RUN/outsider.err")"
grep -qx 'outsider ok' "$RUN/outsider.out" || fail "the asker got wrong answers"
wait "$SERVER" || fail "the server exited with $?"
wait_for 10 eval '"$PMON" ps | grep -q "^$htid .* ended "' ||
    fail "pmon ps does not show the server ended: $("$PMON" ps)"
timeout 20 "$PMON" flush >/dev/null || fail "pmon flush failed"
"$PMON" ps >"$RUN/live.ps" || fail "pmon ps failed"
"$PMON" problems --json >"$RUN/live.problems.json" ||
    fail "pmon problems failed"
expect_eq "problems live" 0 "$(jq '.problems | length' "$RUN/live.problems.json")"

kill -TERM "$TRACE_PID"
wait_for 10 pid_dead "$TRACE_PID" || fail "pmon trace did not end"
# The asker's receives from the server: each unmatched, from an
# unmonitored sender, and no other receive unmatched.
expect_eq "receives from the unmonitored server" $n "$(jq -c --argjson t "$tid" \
    'select(.call == "pvm_recv" and .phase == "end" and .src == $t and
    .unmatched == true and .sender == "unmonitored")' "$RUN/trace.json" | wc -l)"
expect_eq "unmatched receives" $n "$(jq -c 'select(.unmatched == true)' \
    "$RUN/trace.json" | wc -l)"
expect_eq "the notices of the server" "unmonitored
unmonitored_ended" "$(jq -r --argjson t "$tid" 'select(.type == "notice" and
    .tid == $t) | .notice' "$RUN/trace.json")"

pmon_shutdown ""
wait_for 10 pid_dead "$REC_PID" || fail "pmon record did not exit at BYE"
wait "$REC_PID" || fail "pmon record exited with $?: $(cat "$RUN/record.err")"
TMPDIR=$RUN timeout 60 "$PMON" replay "$REC" -- sh -c '"$1" ps >"$2/replay.ps" &&
    "$1" problems --json >"$2/replay.problems.json"' sh "$PMON" "$RUN" \
    >"$RUN/replay.out" 2>&1 || fail "pmon replay failed: $(cat "$RUN/replay.out")"
expect_eq "pmon ps of the replay" "$(cat "$RUN/live.ps")" "$(cat "$RUN/replay.ps")"
expect_eq "problems in the replay" 0 \
    "$(jq '.problems | length' "$RUN/replay.problems.json")"
pass
