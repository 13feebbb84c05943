#!/bin/bash
# Protects corrected times across hosts: on a 2-host machine (network
# namespaces) host 2's agent ships every time 50 ms early (the test-only
# PMON_TEST_CLOCK_OFFSET_NS, which reaches it through host 2's pvmd), so
# in raw time "t" messages from host 1 to host 2 arrive before they were
# sent.  grouprace and msgmix run across both hosts; the stream must
# show raw times going backwards (-B: the offset took effect), corrected
# times "tc" that never do (-T), and stay causal and state-consistent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
for p in grouprace msgmix; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done

offset=-50000000
netns_setup 2
netns_host_env 2 PMON_TEST_CLOCK_OFFSET_NS "$offset"
netns_start_pvmd
netns_wait_hosts 2
PM_ON="$RUN/on1"

pmon_start
netns_wait_agents 2
# The offset must reach host 2's agent only (through its pvmd).
agent_env() {
	local pid
	pid=$(on_host "$1" ss -xlpn 2>/dev/null |
	    awk -v p="$(host_tmp "$1")/pmon-agent.$(id -u)" '$5 == p' |
	    sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p' | head -n 1)
	[ -n "$pid" ] || fail "no agent process on host $1"
	tr '\0' '\n' <"/proc/$pid/environ" |
	    sed -n 's/^PMON_TEST_CLOCK_OFFSET_NS=//p'
}
expect_eq "clock offset of host 2's agent" "$offset" "$(agent_env 2)"
expect_eq "clock offset of host 1's agent" "" "$(agent_env 1)"

k=4 rounds=30
mkdir "$RUN/counts" "$RUN/mcounts"
pmon_trace "$RUN/trace.json"
pmon_exec "$PROGS/grouprace" "$k" "$rounds" "$RUN/counts"
rc=$?
pmon_exec "$PROGS/msgmix" "$k" "$RUN/mcounts"
mrc=$?
pmon_shutdown "$TRACE_PID"

[ "$rc" = 0 ] || fail "grouprace exited with $rc: $(cat "$RUN/grouprace.err")"
grep -qx 'grouprace: ok' "$RUN/grouprace.out" || fail "grouprace did not say ok"
grep -qx "grouprace: $k workers on 2 hosts" "$RUN/grouprace.out" ||
    fail "grouprace did not use both hosts: $(cat "$RUN/grouprace.out")"
[ "$mrc" = 0 ] || fail "msgmix exited with $mrc: $(cat "$RUN/msgmix.err")"
grep -qx 'msgmix: ok' "$RUN/msgmix.out" || fail "msgmix did not say ok"
nfiles() { ls "$1" | grep -c "\\.$2\$"; }
wait_for 10 eval '[ "$(nfiles "$RUN/counts" stats)" = $((k + 1)) ] &&
    [ "$(nfiles "$RUN/mcounts" counts)" = $((k + 1)) ]' ||
    fail "missing count files: $(ls "$RUN/counts" "$RUN/mcounts")"

# grouprace's workers on host 2 receive dozens of broadcasts from host 1,
# each 50 ms "before" it was sent in raw time unless it waited longer
# than that in the queue: at least 10 must show it.  (-u: unmatched
# receives are the next check's business.)
"$STREAMCHECK" -u -B 10 "$RUN/trace.json" 2>"$RUN/backwards" ||
    fail "raw times do not show the offset: $(cat "$RUN/backwards")"
pm_log "$(tail -n 1 "$RUN/backwards")"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -T "$RUN/trace.json" || fail "corrected time violations (-T)"
"$STREAMCHECK" -g -i 0 "$RUN/trace.json" ||
    fail "group state violations (-g)"

# Tasks of both programs ran on both hosts (the host is in tid bits
# 18-29).
"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"
for p in grouprace msgmix; do
	expect_eq "hosts with $p tasks" 2 "$(awk -v p="$p" \
	    '$2 == p && $4 > 0 { print $1 }' "$RUN/tasks" |
	    while read -r t; do echo $(((0x$t >> 18) & 0xfff)); done |
	    sort -u | wc -l)"
done

"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
"$STREAMCHECK" -e "$RUN/trace.json" >"$RUN/events"
cat "$RUN/counts"/*.counts >"$RUN/want"
expect_counts grouprace "$RUN/want" "$RUN/got"
grouprace_check "$RUN/counts" "$k" "$RUN/events"
cat "$RUN/mcounts"/*.counts >"$RUN/mwant"
expect_counts msgmix "$RUN/mwant" "$RUN/got"
expect_task_counts "$RUN/mcounts" "$RUN/events"
pass
