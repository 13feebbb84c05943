#!/bin/bash
# Protects issue 17's first scenario: pvm-examples' spmd started from the
# console as its README runs it (`spawn -4 -> spmd`), after `pmon
# start`: pmon ps lists the four tasks, the stream holds every call each
# makes (counted from spmd.c: pvm_siblings, a token around the ring), is
# causal, and no problem is reported.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
command -v spmd >/dev/null || skip "no spmd (apt-get install pvm-examples)"
n=4
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
console_job "$RUN/console" "spawn -$n -> spmd"
grep -q '\] token ring done' "$RUN/console" ||
    fail "spmd did not pass its token: $(cat "$RUN/console")"
trace_when_exited '^spmd$' $n
"$PMON" problems --json >"$RUN/problems.json" || fail "pmon problems failed"
expect_eq "problems" 0 "$(jq '.problems | length' "$RUN/problems.json")"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/counts"
cat >"$RUN/want" <<EOT
pvm_mytid $n
pvm_siblings $n
pvm_initsend $n
pvm_pkint $n
pvm_send $n
pvm_recv $n
pvm_upkint $((n - 1))
pvm_exit $n
EOT
expect_counts spmd "$RUN/want" "$RUN/counts"
pass
