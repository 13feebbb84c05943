#!/bin/bash
# Protects the task starter over several hosts (doc/tasker.md): on a
# 2-host machine (network namespaces), master1 spawned from host 1's
# console, as pvm-examples' README runs it, spawns 3 slave1 per host;
# each host's starter starts that host's tasks, so all 7 are monitored
# without pmon exec, and the one stream holds every call each makes
# (expect_master1), causal, with the workers on both hosts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
netns_pmon_up 2
pmon_trace "$RUN/trace.json"
console_job "$RUN/console" "spawn -> master1"
n=$(sed -n 's/.*\] Spawning \([0-9]*\) worker tasks.*SUCCESSFUL.*/\1/p' \
    "$RUN/console")
expect_eq "master1 workers (3 per host)" 6 "$n"
expect_eq "replies master1 printed in the console" 6 \
    "$(grep -c '^\[1:t[0-9a-f]*\] I got' "$RUN/console")"
trace_when_exited 'master1|slave1' $((n + 1))
expect_master1 "$RUN/trace.json" "$n"
for i in 1 2; do
	expect_eq "slave1 tasks on $(ns_name "$i")" 3 \
	    "$(awk -v h="$(ns_name "$i")" \
	    '$2 == "slave1" && $3 == h && $4 > 0' "$RUN/tasks" | wc -l)"
done
pass
