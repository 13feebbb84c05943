#!/bin/bash
# Protects authentication across hosts (issue 5): on a 2-host machine
# (network namespaces) the coordinator listens for agents beyond
# loopback, where host 2's real agent reaches it with the secret it got
# through its spawn; an agent from host 2 with a wrong secret, or none,
# is refused with a clear error, and the machine is still served: a
# trace attached before gets master1's events from both hosts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
SENDFRAME=$PMON_BUILD/tests/tools/sendframe
[ -x "$SENDFRAME" ] || fail "missing $SENDFRAME"

netns_pmon_up 2
pmon_trace "$RUN/trace.json"
SECRET=$(host_tmp 1)/pmon-secret.$(id -u)
[ -f "$SECRET" ] || fail "no secret file $SECRET"
case $COORD_ADDR in
"$(ns_addr 1)":*) ;;
*) fail "agents' listener on $COORD_ADDR, not on host 1's address" ;;
esac

# rogue [SECRET]: an AGENT_HELLO from host 2, which must be refused; the
# coordinator's ERROR line is in $got.
rogue() {
	local out
	out=$(on_host 2 "$SENDFRAME" -w 5 ${1+-s "$1"} "$COORD_ADDR" \
	    agenthello) || fail "the coordinator kept a rogue agent: $out"
	grep -qx closed <<<"$out" || fail "rogue agent not closed: $out"
	got=$(grep '^got ERROR: ' <<<"$out" | head -n 1)
}
rogue "$(printf '%064d' 0)"
[[ $got == "got ERROR: wrong secret"* ]] || fail "wrong secret: $got"
rogue
expect_eq "no secret" "got ERROR: no secret: read $SECRET" "$got"
pid_alive "$COORD_PID" || fail "pmon-coordd died"

# The machine is still served, on both hosts.
pmon_exec master1 || fail "master1 failed after the refused agents"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"
expect_eq "hosts with master1's tasks" 2 "$(awk '$2 == "slave1" { print $1 }' \
    "$RUN/tasks" | while read -r t; do echo $(((0x$t >> 18) & 0xfff)); done |
    sort -u | wc -l)"
pass
