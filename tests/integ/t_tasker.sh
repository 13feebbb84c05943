#!/bin/bash
# Protects the task starter that `pmon start` runs by default
# (node-agent/tasker.c, doc/tasker.md): the agent starts its host's task
# starter, which pvmd hands every spawn on the host, so a program started
# from the PVM console -- master1, as pvm-examples' README runs it -- and
# the workers it spawns are monitored without pmon exec: the stream holds
# every call each makes, causal, as under pmon exec (t_master1.sh).
# Their output goes where pvmd would send it: the console's `spawn ->`
# prints master1's lines, a line printed after pvm_exit (storm) and
# every line of a pvm_catchout parent's workers, as without pmon; a
# pvm_catchout parent prints every line of its workers;
# without a collector, lines reach the pvmd log.  A spawn of a missing
# program fails in the console as without pmon; a program that never
# enrols (true) leaves pvmd's task table, its exit reported by the
# starter; `spawn -?` runs the program under $PVM_DEBUGGER.  At shutdown
# the starter unregisters and goes, and pvmd starts the next master1
# itself; `pmon start --no-tasker` starts none.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
# The debugger of `spawn -?` (PvmTaskDebug), from pvmd's environment:
# it notes its arguments and runs the program.
cat >"$RUN/debugger" <<EOF
#!/bin/sh
echo "\$@" >"$RUN/debugger.args"
exec "\$@"
EOF
chmod +x "$RUN/debugger"
export PVM_DEBUGGER=$RUN/debugger
start_pvmd
pmon_start			# --tasker is the default
PIDFILE=$PVM_TMP/pmon-tasker.$(id -u)
wait_for 10 test -s "$PIDFILE" || fail "no task starter registered: \
$(tail -n 5 "$PVM_TMP/pvml.$(id -u)")"
STARTER=$(cat "$PIDFILE")
pid_alive "$STARTER" || fail "the task starter $STARTER is not running"
pmon_trace "$RUN/trace.json"
PVML=$PVM_TMP/pvml.$(id -u)

# master1 from the console, its output to the console.
console_job "$RUN/console1" "spawn -> master1"
grep -q '1 successful' "$RUN/console1" ||
    fail "spawn master1: $(cat "$RUN/console1")"
n=$(sed -n 's/.*\] Spawning \([0-9]*\) worker tasks.*SUCCESSFUL.*/\1/p' \
    "$RUN/console1")
[ -n "$n" ] || fail "the console printed no master1 output: $(cat "$RUN/console1")"
expect_eq "replies master1 printed in the console" "$n" \
    "$(grep -c '^\[1:t[0-9a-f]*\] I got' "$RUN/console1")"
grep -q '^\[1\] finished' "$RUN/console1" ||
    fail "the console did not see master1's job end: $(cat "$RUN/console1")"
# Every task has ended (pmon ps) before the stream is taken.
trace_when_exited 'master1|slave1' $((n + 1))
expect_master1 "$RUN/trace.json" "$n"

# A parent that catches its workers' output (pvm_catchout), the workers
# started by the starter: every line of every worker, as without pmon.
k=3 lines=5
pmon_exec "$PROGS/catchout" $k $lines || fail "catchout exited with $?"
grep -qx 'catchout ok' "$RUN/catchout.out" || fail "catchout did not finish"
for i in $(seq 0 $((k - 1))); do
	expect_eq "lines of catchout's worker $i" "$(seq 1 $lines |
	    sed "s/^/child $i line /")" "$(sed -n "s/^\[t[0-9a-f]*\] \(child $i line\)/\1/p" \
	    "$RUN/catchout.out")"
done
expect_eq "catchout's workers' ends of output" $k \
    "$(grep -c '^\[t[0-9a-f]*\] EOF$' "$RUN/catchout.out")"

# The same from the console: the parent's own collector gets every line
# of every worker (at the parent's end, after its own last line: see
# doc/tasker.md), and the job ends.
console_job "$RUN/console7" "spawn -> catchout $k $lines"
for i in $(seq 0 $((k - 1))); do
	expect_eq "lines of catchout's worker $i in the console" "$(seq 1 $lines |
	    sed "s/^/child $i line /")" "$(sed -n \
	    "s/.*\[1:t[0-9a-f]*\] \[t[0-9a-f]*\] \(child $i line\)/\1/p" \
	    "$RUN/console7")"
done
grep -q '\[1:t[0-9a-f]*\] catchout ok$' "$RUN/console7" ||
    fail "catchout's own line is not in the console: $(cat "$RUN/console7")"
grep -q '^\[1\] finished' "$RUN/console7" ||
    fail "the console did not see catchout's job end: $(cat "$RUN/console7")"
# What a task prints after pvm_exit reaches its console: storm's task 0
# prints its last line then.
console_job "$RUN/console8" "spawn -> storm 4 50"
grep -q '\[1:t[0-9a-f]*\] storm ok$' "$RUN/console8" ||
    fail "storm's line after pvm_exit is not in the console: $(cat "$RUN/console8")"

# Without a collector, a task's lines go to the pvmd log.
pvm_console "spawn catchout 1 2" >"$RUN/console5"
wait_for 20 grep -q 'catchout ok' "$PVML" ||
    fail "catchout's output is not in the pvmd log: $(tail -n 5 "$PVML")"

# spawn -? starts the program under the debugger, as pvmd would.
pvm_console "spawn -? catchout 1 3" >"$RUN/console6"
wait_for 20 test -s "$RUN/debugger.args" ||
    fail "spawn -? did not start the debugger: $(cat "$RUN/console6")"
expect_eq "the debugger's arguments" "$PROGS/catchout 1 3" \
    "$(cat "$RUN/debugger.args")"
wait_for 20 grep -q '\] child 0 line 3$' "$PVML" ||
    fail "catchout under the debugger: $(tail -n 5 "$PVML")"

# A spawn with a string longer than the starter reads (a variable of
# 2 MB that its spawner exported): not started, and pvmd hears it ended.
pmon_exec "$PROGS/bigenv" 2000000 true || fail "bigenv exited with $?"
expect_eq "bigenv's spawn and the task's end" "spawned 1
ended" "$(cat "$RUN/bigenv.out")"
grep -q 'a spawn pvmd handed over is malformed' "$PVML" ||
    fail "the starter did not say it left the spawn out: $(tail -n 3 "$PVML")"

# A program pvmd cannot find never reaches the starter.
pvm_console "spawn nosuchprog" >"$RUN/console2"
grep -q 'No such file' "$RUN/console2" ||
    fail "spawn nosuchprog: $(cat "$RUN/console2")"
# One that never enrols: the starter tells pvmd it ended.
pvm_console "spawn true" >"$RUN/console3"
grep -q '1 successful' "$RUN/console3" || fail "spawn true: $(cat "$RUN/console3")"
wait_for 10 eval '! pvm_console "ps -a" | grep -qw true' ||
    fail "true stayed in pvmd's tasks: $(pvm_console "ps -a")"
pmon_shutdown

# Shut down: the starter unregistered and left; pvmd starts tasks itself.
wait_for 10 pid_dead "$STARTER" || fail "the task starter outlived pmon"
[ ! -e "$PIDFILE" ] || fail "the task starter left $PIDFILE"
pvm_console "spawn master1" >"$RUN/console4"
wait_for 30 eval '[ "$(grep -c "I got" "$PVML")" -ge $n ]' ||
    fail "master1 without pmon: $(tail -n 5 "$PVML")"

pmon_start --no-tasker
wait_for 10 eval '[ -n "$(sock_pid "$(agent_sock)")" ]' || fail "no agent"
sleep 1
[ ! -e "$PIDFILE" ] || fail "pmon start --no-tasker started a task starter"
pvm_console "ps -a" | grep -q '/T' &&
    fail "pvmd has a tasker after pmon start --no-tasker"
pmon_shutdown
pass
