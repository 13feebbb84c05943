#!/bin/bash
# Protects the single-host stream of an unmodified PVM program: every
# call master1 and slave1 make appears once, begin and end, in a causal
# order, with every message matched to its send, and nothing internal
# (libpvm's own calls, the group server) leaks into it.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
start_pvmd

pmon_run_traced master1
[ "$PROG_RC" = 0 ] || fail "master1 exited with $PROG_RC"
out=$RUN/master1.out
n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*SUCCESSFUL/\1/p' "$out")
[ -n "$n" ] || fail "master1 did not spawn its workers: $(cat "$out")"
expect_eq "replies master1 printed" "$n" "$(count_lines '^I got' "$out")"

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/counts"
"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"

# From master1.c and slave1.c: the calls each task makes.
cat >"$RUN/want.master1" <<EOF
pvm_mytid 1
pvm_config 1
pvm_spawn 1
pvm_initsend 1
pvm_pkint 3
pvm_pkfloat 1
pvm_mcast 1
pvm_recv $n
pvm_upkint $n
pvm_upkfloat $n
pvm_exit 1
EOF
cat >"$RUN/want.slave1" <<EOF
pvm_mytid $n
pvm_recv $((2 * n))
pvm_upkint $((3 * n))
pvm_upkfloat $((2 * n))
pvm_initsend $((2 * n))
pvm_pkfloat $((2 * n))
pvm_pkint $n
pvm_send $((2 * n))
pvm_parent $n
pvm_exit $n
EOF
expect_counts master1 "$RUN/want.master1" "$RUN/counts"
expect_counts slave1 "$RUN/want.slave1" "$RUN/counts"

expect_eq "master1 tasks" 1 "$(awk '$2 == "master1" && $4 > 0' "$RUN/tasks" | wc -l)"
expect_eq "slave1 tasks" "$n" "$(awk '$2 == "slave1" && $4 > 0' "$RUN/tasks" | wc -l)"
progs=$(awk '$4 > 0 { print $2 }' "$RUN/tasks" | sort -u | tr '\n' ' ')
expect_eq "programs in the stream" "master1 slave1 " "$progs"
pass
