#!/bin/bash
# Protects the harness itself, without pmon: a private pvmd starts and
# stops cleanly, master1 and the test program msgmix run correctly on it
# and write the counts the pmon tests compare against.
. "$(dirname "$0")/lib.sh"
pm_setup

[ -x "$PROGS/msgmix" ] || fail "missing $PROGS/msgmix (build it first)"
start_pvmd

timeout 60 master1 >"$RUN/master1.out" 2>&1 || fail "master1 failed"
n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*/\1/p' "$RUN/master1.out")
expect_eq "master1 workers" 3 "$n"
expect_eq "master1 replies" 3 "$(count_lines '^I got' "$RUN/master1.out")"

mkdir "$RUN/counts"
timeout 60 "$PROGS/msgmix" 4 "$RUN/counts" >"$RUN/msgmix.out" 2>&1 ||
    fail "msgmix failed: $(cat "$RUN/msgmix.out")"
grep -qx 'msgmix: ok' "$RUN/msgmix.out" || fail "msgmix did not say ok"
wait_for 10 eval '[ "$(ls "$RUN/counts" | grep -c "\.counts$")" = 5 ]' ||
    fail "expected 5 count files, got: $(ls "$RUN/counts")"
# The master's counts follow from its logic: 1 spawn, 1 mcast, 4 precv,
# 4 + 1 sends, 1 bcast, 2 barriers.
m=$(grep -l '^pvm_spawn 1$' "$RUN/counts"/*.counts)
[ -n "$m" ] || fail "no count file of the master"
expect_eq "master mcast" 1 "$(awk '$1 == "pvm_mcast" { print $2 }' "$m")"
expect_eq "master precv" 4 "$(awk '$1 == "pvm_precv" { print $2 }' "$m")"
expect_eq "master send" 4 "$(awk '$1 == "pvm_send" { print $2 }' "$m")"
expect_eq "master barrier" 2 "$(awk '$1 == "pvm_barrier" { print $2 }' "$m")"
sends=$(cat "$RUN/counts"/*.counts | awk '$1 == "pvm_send" { n += $2 }
    END { print n }')
expect_eq "sends of all tasks" $((4 + 4 * 4)) "$sends"

# The console sees no task of ours left once the programs ended.
wait_for 10 eval '! pvm_console ps -a | grep -qE "slave1|msgmix"' ||
    fail "tasks still listed: $(pvm_console ps -a)"
pass
