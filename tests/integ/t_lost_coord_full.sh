#!/bin/bash
# Protects "every tool still tells the truth" when its coordinator dies
# (doc/control.md, "Slow tools"): a lossy pmon trace, stopped while a
# storm runs, is dropping events (its queue is full) when pmon-coordd is
# SIGKILLed, so neither the "lost" notice that would count them nor what
# was queued for it ever comes.  Read on afterwards, its stream holds
# every task's events from 1 without a gap up to where it stops, and
# pmon trace says on stderr that the coordinator went without a goodbye
# and the stream is incomplete, and exits non-zero.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || fail "jq is needed"
start_pvmd
# 64 KiB: the stopped trace's queue fills within the storm's first rounds.
pmon_start -Q 65536
pmon_trace "$RUN/t.json"
kill -STOP "$TRACE_PID"
n=4 rounds=2000
pmon_exec "$PROGS/storm" $n $rounds
rc=$?
[ "$rc" = 0 ] || { kill -CONT "$TRACE_PID"
	fail "storm exited with $rc: $(cat "$RUN/storm.err")"; }
grep -q '(pmon-trace).*dropping its events' "$(coord_log)" ||
    { kill -CONT "$TRACE_PID"; fail "the coordinator never dropped events \
for the trace (the test proves nothing): $(tail -n 5 "$(coord_log)")"; }
kill -KILL "$COORD_PID"
wait_for 10 pid_dead "$COORD_PID" ||
    { kill -CONT "$TRACE_PID"; fail "the coordinator survived SIGKILL"; }
kill -CONT "$TRACE_PID"
wait_for 20 pid_dead "$TRACE_PID" || fail "pmon trace outlived its coordinator"
wait "$TRACE_PID" && fail "pmon trace exited 0 after its coordinator died"

T=$RUN/t.json
jq -e . "$T" >/dev/null || fail "the trace is not JSON lines: $(tail -c 300 "$T")"
# Each task's events from 1 on, none missing, none twice.
bad=$(jq -s '[.[] | select(.seq != null)] | group_by(.tid) |
    map(select((map(.seq) | sort) != [range(1; length + 1)]) | .[0].tid)' "$T")
expect_eq "tasks with a gap in the trace" "[]" "$bad"
got=$(jq -s '[.[] | select(.seq != null)] | length' "$T")
# The storm's events (tests/progs/storm.c): the trace missed some.
[ "$got" -lt $((10 * n * rounds + 16 * n + 2)) ] ||
    fail "the trace got all $got events: nothing was dropped"
grep -q 'went without a goodbye (was it killed?): the stream ends here' "$T.err" ||
    fail "pmon trace did not say its stream is incomplete: $(cat "$T.err")"
pm_log "$got events in the trace; pmon trace said: $(cat "$T.err")"
pass
