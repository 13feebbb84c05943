#!/bin/bash
# Protects `pmon start --tasker` (node-agent/tasker.c, doc/tasker.md):
# the agent starts its host's task starter, which pvmd hands every spawn
# on the host, so a program started from the PVM console -- master1, as
# pvm-examples' README runs it -- and the workers it spawns are
# monitored without pmon exec: the stream holds every call each makes,
# causal, as under pmon exec (t_master1.sh).  A spawn of a missing
# program fails in the console as without pmon; a program that never
# enrols (true) leaves pvmd's task table, its exit reported by the
# starter.  At shutdown the starter unregisters and goes, and pvmd
# starts the next master1 itself.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
start_pvmd
pmon_start --tasker
PIDFILE=$PVM_TMP/pmon-tasker.$(id -u)
wait_for 10 test -s "$PIDFILE" || fail "no task starter registered: \
$(tail -n 5 "$PVM_TMP/pvml.$(id -u)")"
STARTER=$(cat "$PIDFILE")
pid_alive "$STARTER" || fail "the task starter $STARTER is not running"
pmon_trace "$RUN/trace.json"
PVML=$PVM_TMP/pvml.$(id -u)

# master1's output goes to the pvmd log (no redirection asked).
pvm_console "spawn master1" >"$RUN/console1" ||
    fail "the console failed: $(cat "$RUN/console1")"
grep -q '1 successful' "$RUN/console1" ||
    fail "spawn master1: $(cat "$RUN/console1")"
wait_for 30 grep -q 'Spawning [0-9]* worker tasks.*SUCCESSFUL' "$PVML" ||
    fail "master1 spawned no workers: $(tail -n 5 "$PVML")"
n=$(sed -n 's/.*Spawning \([0-9]*\) worker tasks.*SUCCESSFUL.*/\1/p' "$PVML")
wait_for 30 eval '[ "$(grep -c "I got" "$PVML")" -ge "$n" ]' ||
    fail "master1 got $(grep -c "I got" "$PVML") of $n replies"
# Every task has ended (pmon ps) before the stream is taken.
wait_for 30 eval '[ "$("$PMON" ps | awk "\$3 ~ /master1|slave1/ &&
    \$4 == \"exited\"" | wc -l)" = $((n + 1)) ]' ||
    fail "master1 and its $n workers did not all end: $("$PMON" ps)"

# A program pvmd cannot find never reaches the starter.
pvm_console "spawn nosuchprog" >"$RUN/console2"
grep -q 'No such file' "$RUN/console2" ||
    fail "spawn nosuchprog: $(cat "$RUN/console2")"
# One that never enrols: the starter tells pvmd it ended.
pvm_console "spawn true" >"$RUN/console3"
grep -q '1 successful' "$RUN/console3" || fail "spawn true: $(cat "$RUN/console3")"
wait_for 10 eval '! pvm_console "ps -a" | grep -qw true' ||
    fail "true stayed in pvmd's tasks: $(pvm_console "ps -a")"
pmon_shutdown "$TRACE_PID"
expect_master1 "$RUN/trace.json" "$n"

# Shut down: the starter unregistered and left; pvmd starts tasks itself.
wait_for 10 pid_dead "$STARTER" || fail "the task starter outlived pmon"
[ ! -e "$PIDFILE" ] || fail "the task starter left $PIDFILE"
before=$(grep -c 'I got' "$PVML")
pvm_console "spawn master1" >"$RUN/console4"
wait_for 30 eval '[ "$(grep -c "I got" "$PVML")" -ge $((before + n)) ]' ||
    fail "master1 without pmon: $(tail -n 5 "$PVML")"
pass
