#!/bin/bash
# Protects Fortran programs (libfpvm3's pvmf* calls): pvm-examples'
# fmaster1 spawned from the console, as its README runs it, with its
# fslave1 workers, all started by the task starter.  Each pvmf* call is
# recorded once, under the C call it makes (pvmfpack INTEGER4 as
# pvm_pkint, REAL8 as pvm_pkdouble, ...); the counts come from
# master1.f and slave1.f, with the workers' number from what fmaster1
# printed; the stream is causal.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
command -v fmaster1 >/dev/null || skip "no fmaster1 (apt-get install pvm-examples)"
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
console_job "$RUN/console" "spawn -> fmaster1"
n=$(grep -c '\] *I got' "$RUN/console")
[ "$n" -gt 0 ] || fail "fmaster1 printed no result: $(cat "$RUN/console")"
trace_when_exited 'fmaster1|fslave1' $((n + 1))

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/counts"
cat >"$RUN/want.fmaster1" <<EOT
pvm_mytid 1
pvm_config 1
pvm_spawn 1
pvm_initsend 1
pvm_pkint 3
pvm_pkdouble 1
pvm_mcast 1
pvm_recv $n
pvm_upkint $n
pvm_upkdouble $n
pvm_exit 1
EOT
cat >"$RUN/want.fslave1" <<EOT
pvm_mytid $n
pvm_parent $n
pvm_recv $((2 * n))
pvm_upkint $((3 * n))
pvm_upkdouble $((2 * n))
pvm_initsend $((2 * n))
pvm_pkint $n
pvm_pkdouble $((2 * n))
pvm_send $((2 * n))
pvm_exit $n
EOT
expect_counts fmaster1 "$RUN/want.fmaster1" "$RUN/counts"
expect_counts fslave1 "$RUN/want.fslave1" "$RUN/counts"
pass
