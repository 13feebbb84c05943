#!/bin/bash
# Protects the promise that a host added to the virtual machine after
# `pmon start` gets an agent too: the coordinator hears of the new host
# from pvmd (PvmHostAdd) and spawns one there, and a program run
# afterwards is traced on both hosts.
#
# With HOSTADD_FANOUT=1 (t_tree_hostadd.sh), under `pmon start --fanout
# 1`: one host is no tree, but the added one makes two, so its agent
# comes up under an intermediate the root starts on it, and its tasks'
# records reach the root through it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
netns_setup 2
# Start with host 1 alone; "&" gives host 2's options for when it is added.
write_hostfile "$RUN/hostfile" "$(ns_name 1)"
echo "&$(ns_name 2) ep=/usr/bin:/usr/lib/pvm3/lib:$PROGS" >>"$RUN/hostfile"
netns_start_pvmd
netns_wait_hosts 1
PM_ON="$RUN/on1"

pmon_start ${HOSTADD_FANOUT:+--fanout $HOSTADD_FANOUT}
wait_for 10 test -S "$(host_tmp 1)/pmon-agent.$(id -u)" ||
    fail "no agent socket on host 1"
[ -e "$(host_tmp 2)/pmon-agent.$(id -u)" ] &&
    fail "an agent on host 2 before it was added"

on_host 1 sh -c "printf 'add $(ns_name 2)\nquit\n' | timeout 20 pvm" \
    >"$RUN/add.out" 2>&1
netns_wait_hosts 2
wait_for 10 test -S "$(host_tmp 2)/pmon-agent.$(id -u)" ||
    fail "no agent on the added host: $(cat "$RUN/add.out")"
if [ -n "${HOSTADD_FANOUT:-}" ]; then
	via() { $PM_ON "$PMON" hosts >"$RUN/hosts.out" 2>&1 &&
	    grep -q " $(ns_name 2) .* up via $(ns_name 2)\$" "$RUN/hosts.out"; }
	wait_for 10 via || fail "the added host's agent is not up under an \
intermediate: $(cat "$RUN/hosts.out")"
	grep -q " $(ns_name 1) .* up\$" "$RUN/hosts.out" ||
	    fail "host 1's agent is not up at the root: $(cat "$RUN/hosts.out")"
fi

pmon_trace "$RUN/trace.json"
pmon_exec master1
rc=$?
pmon_shutdown "$TRACE_PID"
[ "$rc" = 0 ] || fail "master1 exited with $rc"

n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*SUCCESSFUL/\1/p' \
    "$RUN/master1.out")
expect_eq "master1 workers (3 per host)" 6 "$n"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"
expect_eq "slave1 tasks traced on the added host" 3 \
    "$(awk -v h="$(ns_name 2)" '$2 == "slave1" && $3 == h && $4 > 0' \
    "$RUN/tasks" | wc -l)"
pass
