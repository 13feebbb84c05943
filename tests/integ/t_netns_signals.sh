#!/bin/bash
# Protects pvm_sendsig and pvm_kill across hosts (doc/events.md,
# "Signals"): on a 2-host machine, tests/progs/signals' master runs on
# host 1, its catcher and its victim on host 2, so host 2's pvmd
# delivers the signals and the kill.  Each signal the catcher's handler
# got is a "signal" from its pvmd, after the pvm_sendsig on host 1 that
# sent it and matched to it; the victim on host 2 is killed by the
# master's pvm_kill; the stream is causal.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"
r=4
netns_pmon_up 2
pmon_trace "$RUN/trace.json"
$PM_ON timeout 60 "$PMON" exec "$PROGS/signals" $r "$(ns_name 2)" \
    >"$RUN/signals.out" 2>&1 ||
    fail "signals failed: $(cat "$RUN/signals.out")"
expect_eq "signals' output" "signals ok $r" "$(cat "$RUN/signals.out")"
timeout 20 "$PMON" flush >/dev/null || fail "pmon flush failed"
$PM_ON "$PMON" ps --json >"$RUN/ps.json" || fail "pmon ps failed"
stop_pid "$TRACE_PID"
T=$RUN/trace.json
first() { jq -r --arg c "$1" "select(.call == \$c and .phase == \"begin\") |
    .$2" "$T" | head -n 1; }
catcher=$(first pvm_sendsig peer)
victim=$(first pvm_kill peer)
for t in "$catcher" "$victim"; do
	expect_eq "host of t$t" "$(ns_name 2)" "$(jq -r --argjson t "$t" \
	    'select(.type == "task" and .tid == $t) | .host' "$T")"
done
"$STREAMCHECK" -a -k "$victim" "$T" || fail "stream violations"
expect_eq "signals from host 2's pvmd, each matched to its pvm_sendsig" \
    "$(jq -r 'select(.call == "pvm_sendsig" and .phase == "begin") |
    "\(.id) \(.signal)"' "$T")" "$(jq -r 'select(.call == "signal" and
    .phase == "begin" and .pvmd == true) | "\(.match) \(.signal)"' "$T")"
expect_eq "the victim" "killed $(first pvm_kill id)" "$(jq -r \
    --argjson t "$victim" '.tasks[] | select(.tid == $t) |
    "\(.state) \(.killed_by)"' "$RUN/ps.json")"
pass
