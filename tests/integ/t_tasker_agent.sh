#!/bin/bash
# Protects the task starter across an agent restart (doc/tasker.md):
# pvmd ends the PVM life of every task a tasker started when the tasker
# goes, so the starter is a process of its own.  burst, spawned from the
# console under `pmon start --tasker`, makes calls while its agent is
# SIGKILLed; the coordinator starts another agent (through the starter,
# uninstrumented), whose own starter finds the host taken and leaves.
# The first starter stays; burst keeps its PVM connection (its
# pvm_exit succeeds and it writes its ring counters), the new agent
# adopts its ring, and its stream is whole, as in t_lost_agent.sh.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"

N=3000			# pvm_getsbuf calls, 1 ms apart
start_pvmd
pmon_start --tasker
PIDFILE=$PVM_TMP/pmon-tasker.$(id -u)
wait_for 10 test -s "$PIDFILE" || fail "no task starter registered"
STARTER=$(cat "$PIDFILE")
pmon_trace "$RUN/trace.json"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"

BURST_LOG=$RUN/burst.log
: >"$BURST_LOG"
touch "$BURST_LOG.go"
pvm_console "spawn $PROGS/burst -p 1000 $N $BURST_LOG" >"$RUN/console" ||
    fail "the console: $(cat "$RUN/console")"
grep -q '1 successful' "$RUN/console" || fail "spawn burst: $(cat "$RUN/console")"
wait_for 20 eval '[ "$(burst_did)" -ge 300 ]' ||
    fail "burst did not start its calls: $(cat "$BURST_LOG")"
agent_kill "$AGENT_PID"
before=$(burst_did)
[ "$(burst_did)" -lt "$N" ] || fail "burst finished before its new agent came"
wait_for 30 grep -q '^ring written' "$BURST_LOG" ||
    fail "burst did not end: $(tail -n 3 "$BURST_LOG")"
read -r _ tid _ <"$BURST_LOG"
written=$(awk '$1 == "ring" { print $3 }' "$BURST_LOG")
dropped=$(awk '$1 == "ring" { print $5 }' "$BURST_LOG")
expect_eq "records burst made (written + dropped)" $((2 * (N + 2))) \
    $((written + dropped))
pid_alive "$STARTER" || fail "the task starter died with the agent"
expect_eq "the host's task starter" "$STARTER" "$(cat "$PIDFILE")"
# The starter started the new agent as it is.
tr '\0' '\n' <"/proc/$NEW_PID/environ" | grep -q '^LD_PRELOAD=.*libpmon-pvm' &&
    fail "the new agent runs with the instrumentation preloaded"

$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
pmon_shutdown "$TRACE_PID"
expect_burst_whole "$RUN/trace.json" "$RUN/ps.json" "$tid" "$N" "$before"
wait_for 10 pid_dead "$STARTER" || fail "the task starter outlived pmon"
pass
