#!/bin/bash
# Protects the multi-host path: on a 2-host machine (network namespaces)
# pmon starts an agent on each host, master1 spawns 3 slaves per host,
# and the one merged stream is causal and holds the events of both hosts.
# The agent on the coordinator's host sends its stream plain, the other
# one deflated (pmon start --compress=remote, the default).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
netns_setup 2
netns_start_pvmd
netns_wait_hosts 2
PM_ON="$RUN/on1"

# -v -v: the coordinator logs what each agent sent (checked at the end).
pmon_start -v -v -Q 268435456
# One agent per host: each host's agent socket appears in its PVM_TMP.
netns_wait_agents 2
pmon_trace "$RUN/trace.json"
pmon_exec master1
rc=$?
pmon_shutdown "$TRACE_PID"
[ "$rc" = 0 ] || fail "master1 exited with $rc"

out=$RUN/master1.out
n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*SUCCESSFUL/\1/p' "$out")
expect_eq "master1 workers (3 per host)" 6 "$n"
expect_eq "replies master1 printed" 6 "$(count_lines '^I got' "$out")"

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
expect_eq "slave1 tasks" 6 \
    "$(awk '$2 == "slave1" && $4 > 0' "$RUN/tasks" | wc -l)"
# The host of a task, as pmon names it, and as its tid says (bits 18-29).
for i in 1 2; do
	expect_eq "slave1 tasks on $(ns_name "$i")" 3 \
	    "$(awk -v h="$(ns_name "$i")" \
	    '$2 == "slave1" && $3 == h && $4 > 0' "$RUN/tasks" | wc -l)"
done
hosts=$(awk '$2 == "slave1" && $4 > 0 { print $1 }' "$RUN/tasks" |
    while read -r t; do echo $(((0x$t >> 18) & 0xfff)); done | sort -u |
    wc -l)
expect_eq "hosts in slave1 tids" 2 "$hosts"
expect_eq "slave1 sends" 12 "$(count_of slave1 pvm_send begin "$RUN/got")"
expect_eq "slave1 receives" 12 "$(count_of slave1 pvm_recv end "$RUN/got")"

# The coordinator's last word on each agent: N records in B bytes (...),
# I bytes inflated.  Host 1 is the coordinator's.
for i in 1 2; do
	grep -o "($(ns_name "$i")): [0-9]* records in [0-9]* bytes .*, [0-9]* bytes inflated" \
	    "$(coord_log)" | tail -n 1 >"$RUN/agent$i.size"
	[ -s "$RUN/agent$i.size" ] ||
	    fail "no size line for $(ns_name "$i")'s agent in $(coord_log)"
	read -r _ n _ _ bytes _ _ _ inflated _ <"$RUN/agent$i.size"
	pm_log "agent $i: $(cat "$RUN/agent$i.size")"
	[ "$n" -gt 0 ] || fail "agent $i sent no records"
	if [ "$i" = 1 ]; then
		expect_eq "bytes inflated for the local agent" 0 "$inflated"
	else
		[ "$inflated" -gt "$bytes" ] ||
		    fail "the remote agent's stream was not deflated:" \
			"$(cat "$RUN/agent$i.size")"
	fi
done
pass
