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

expect_master1 "$RUN/trace.json" "$n"
pass
