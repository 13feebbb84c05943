#!/bin/bash
# Protects pvm_sendsig and pvm_kill as causal edges (issue 17;
# doc/events.md, "Signals"; doc/ordering.md): tests/progs/signals'
# master sends its catcher R signals with pvm_sendsig (SIGUSR1 through
# a sigaction handler, SIGUSR2 through a signal handler), and kills a
# victim blocked in pvm_recv with pvm_kill.  In the stream each signal
# the catcher's pvmd delivered is a "signal" event after the
# pvm_sendsig that sent it, matched to it, of its number; the one it
# raised itself is there unmatched, not from the pvmd; every call each
# task makes is there once (counted from the source); the program
# behaves as without pmon (its handlers see every signal and get their
# own old actions back).  pmon ps shows the victim killed by the
# master's pvm_kill, the notify of its exit names its last event; no
# problem is reported.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"
r=6
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
pmon_exec "$PROGS/signals" $r
PROG_RC=$?
"$PMON" flush >/dev/null || fail "pmon flush failed"
"$PMON" ps --json >"$RUN/ps.json" || fail "pmon ps failed"
"$PMON" problems --json >"$RUN/problems.json" || fail "pmon problems failed"
pmon_shutdown "$TRACE_PID"
[ "$PROG_RC" = 0 ] || fail "signals exited with $PROG_RC: \
$(cat "$RUN/signals.out" "$RUN/signals.err")"
expect_eq "signals' output" "signals ok $r" "$(cat "$RUN/signals.out")"

T=$RUN/trace.json
# first_id CALL: the id of CALL's first begin; tid_of: its tid; peer_of.
first() { jq -r --arg c "$1" "select(.call == \$c and .phase == \"begin\") |
    .$2" "$T" | head -n 1; }
master=$(first pvm_spawn tid)
catcher=$(first pvm_sendsig peer)
victim=$(first pvm_kill peer)
kill_id=$(first pvm_kill id)
[ -n "$master" ] && [ -n "$catcher" ] && [ -n "$victim" ] ||
    fail "no master, catcher or victim in the stream"
"$STREAMCHECK" -a -k "$victim" "$T" || fail "stream violations"

# calls_of TID: "call phase count" of the task, sorted.
calls_of() {
	jq -r --argjson t "$1" 'select(.tid == $t and .call) |
	    "\(.call) \(.phase)"' "$T" | sort | uniq -c |
	    awk '{ print $2, $3, $1 }'
}
# want "CALL N"...: both phases of each, sorted.
want() {
	local c n
	for c in "$@"; do
		n=${c##* }
		echo "${c% *} begin $n"
		echo "${c% *} end $n"
	done | sort
}
expect_eq "the master's calls" "$(want "pvm_mytid 1" "pvm_spawn 2" \
    "pvm_recv $((r + 3))" "pvm_sendsig $r" "pvm_initsend $r" "pvm_pkint $r" \
    "pvm_send $r" "pvm_upkint $r" "pvm_notify 1" "pvm_kill 1" \
    "pvm_exit 1")" "$(calls_of "$master")"
expect_eq "the catcher's calls" "$(want "pvm_mytid 1" "pvm_parent 1" \
    "pvm_initsend $((r + 1))" "pvm_send $((r + 1))" "pvm_recv $r" \
    "pvm_upkint $r" "pvm_pkint $r" "pvm_exit 1" "signal $((r + 1))")" \
    "$(calls_of "$catcher")"
expect_eq "the victim's calls" "$( (want "pvm_mytid 1" "pvm_parent 1" \
    "pvm_initsend 1" "pvm_send 1"; echo "pvm_recv begin 1") | sort)" \
    "$(calls_of "$victim")"

# The signals: R from the pvmd, each matched to a pvm_sendsig of its
# number (SIGUSR1 10, SIGUSR2 12, alternating); one raised, unmatched.
expect_eq "signals from the pvmd, matched" \
    "$(for i in $(seq 0 $((r - 1))); do echo $((i % 2 ? 12 : 10)); done)" \
    "$(jq -r 'select(.call == "signal" and .phase == "begin" and
    .pvmd == true and .match != null) | .signal' "$T")"
expect_eq "signals not from the pvmd" "10 null" "$(jq -r \
    'select(.call == "signal" and .phase == "begin" and .pvmd != true) |
    "\(.signal) \(.match)"' "$T")"
expect_eq "the victim in pmon ps" "killed $kill_id" "$(jq -r \
    --argjson t "$victim" '.tasks[] | select(.tid == $t) |
    "\(.state) \(.killed_by)"' "$RUN/ps.json")"
# The notify of the victim's exit names the victim's last event.
expect_eq "the exit notify's match" "$(jq -r --argjson t "$victim" \
    'select(.tid == $t and .call) | .id' "$T" | tail -n 1)" \
    "$(jq -r --argjson t "$master" 'select(.tid == $t and
    .call == "pvm_recv" and .phase == "end" and .tag == 3) | .match' "$T")"
expect_eq "problems" "[]" "$(jq -c '.problems' "$RUN/problems.json")"
pass
