#!/bin/bash
# Protects the multi-host harness, without pmon: two namespace hosts form
# one virtual machine, tasks run on both, and teardown leaves nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
[ -x "$PROGS/msgmix" ] || fail "missing $PROGS/msgmix (build it first)"

netns_setup 2
netns_start_pvmd
netns_wait_hosts 2

on_host 1 timeout 60 master1 >"$RUN/master1.out" 2>&1 || fail "master1 failed"
n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*/\1/p' "$RUN/master1.out")
expect_eq "master1 workers (3 per host)" 6 "$n"
expect_eq "master1 replies" 6 "$(count_lines '^I got' "$RUN/master1.out")"

# msgmix names its count files by tid; the host number is in bits 18-29.
mkdir "$RUN/counts"
on_host 1 timeout 60 "$PROGS/msgmix" 4 "$RUN/counts" >"$RUN/msgmix.out" 2>&1 ||
    fail "msgmix failed: $(cat "$RUN/msgmix.out")"
wait_for 10 eval '[ "$(ls "$RUN/counts" | grep -c "\.counts$")" = 5 ]' ||
    fail "expected 5 count files, got: $(ls "$RUN/counts")"
hosts=$(for f in "$RUN/counts"/*.counts; do
	t=$(basename "$f" .counts)
	echo $(((0x$t >> 18) & 0xfff))
done | sort -u | wc -l)
expect_eq "hosts with msgmix tasks" 2 "$hosts"
pass
