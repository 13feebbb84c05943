#!/bin/bash
# Protects authentication (doc/protocol.md, "Authentication"): the
# coordinator makes the virtual machine's secret, a file of our user's
# with mode 0600 that is on no command line and in no log; a tool or an
# agent with a wrong or missing secret gets an ERROR that says so and is
# dropped, while everyone else is still served (a trace attached before
# gets a later program's events, pmon ps works); pmon refuses to run
# without a readable secret file and names it; on a one-host machine the
# agents' listener is on loopback only; the file goes with the
# coordinator.  An agent started by hand takes the secret from -s FILE
# (and is refused with a wrong one).
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$SENDFRAME" ] || fail "missing $SENDFRAME"
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
SECRET=$PVM_TMP/pmon-secret.$(id -u)
wait_for 10 test -S "$(agent_sock)" || fail "no agent socket"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no process listens on $(agent_sock)"

# (1) The secret's file: a regular file of ours, mode 0600, 64 hex digits.
[ -f "$SECRET" ] && [ ! -L "$SECRET" ] || fail "no secret file $SECRET"
read -r mode _ owner _ <<<"$(ls -ln "$SECRET")"
expect_eq "mode of $SECRET" "-rw-------" "$mode"
expect_eq "owner of $SECRET" "$(id -u)" "$owner"
grep -qxE '[0-9a-f]{64}' "$SECRET" || fail "$SECRET holds no secret"
value=$(cat "$SECRET")
# Neither on a command line nor left in the agent's environment.
for p in "$COORD_PID" "$AGENT_PID"; do
	tr '\0' '\n' <"/proc/$p/cmdline" | grep -qF "$value" &&
	    fail "the secret is on the command line of $p"
done
# The agent got it in PMON_SECRET and wiped the value where it lay.
tr '\0' '\n' <"/proc/$AGENT_PID/environ" >"$RUN/agent.environ"
grep -qx 'PMON_SECRET=' "$RUN/agent.environ" ||
    fail "the agent did not get the secret in PMON_SECRET"
grep -qF "$value" "$RUN/agent.environ" &&
    fail "the secret is still in the agent's environment"
rm -f "$RUN/agent.environ"

# (5) One host: the agents' listener is on loopback, and only there.
case $COORD_ADDR in
127.0.0.1:[0-9]*) ;;
*) fail "agents' listener on $COORD_ADDR, not on loopback" ;;
esac
ss -Htlnp 2>/dev/null | grep "pid=$COORD_PID," | awk '{ print $4 }' \
    >"$RUN/listen"
[ -s "$RUN/listen" ] || fail "ss shows no TCP listener of pmon-coordd"
grep -qv '^127\.0\.0\.1:' "$RUN/listen" &&
    fail "pmon-coordd listens beyond loopback: $(cat "$RUN/listen")"

wrong=$(printf '%064d' 0)
long=${value}0
# hello KIND ADDRESS [SECRET]: sends a hello with sendframe, which must
# see the coordinator's ERROR and its close; the ERROR line is in $got.
hello() {
	local out
	out=$("$SENDFRAME" -w 5 ${3+-s "$3"} "$2" "$1") ||
	    fail "$2 kept a $1 with secret '${3-}': $out"
	grep -qx closed <<<"$out" || fail "$1 to $2: not closed: $out"
	pid_alive "$COORD_PID" || fail "pmon-coordd died after a $1"
	pid_alive "$AGENT_PID" || fail "pmon-agentd died after a $1"
	got=$(grep '^got ERROR: ' <<<"$out" | head -n 1)
}

# (2) Tools: a wrong secret, none, one too long.
hello toolhello "$(coord_sock)" "$wrong"
[[ $got == "got ERROR: wrong secret"* ]] || fail "wrong tool secret: $got"
hello toolhello "$(coord_sock)"
expect_eq "tool without a secret" "got ERROR: no secret: read $SECRET" "$got"
hello toolhello "$(coord_sock)" "$long"
[[ $got == *"secret longer than 64 bytes"* ]] ||
    fail "too long a tool secret: $got"

# (3) Agents over TCP: a wrong secret, none.
hello agenthello "$COORD_ADDR" "$wrong"
[[ $got == "got ERROR: wrong secret"* ]] || fail "wrong agent secret: $got"
hello agenthello "$COORD_ADDR"
expect_eq "agent without a secret" "got ERROR: no secret: read $SECRET" "$got"
log=$(coord_log)
wait_for 5 eval '[ "$(grep -c "wrong secret" "$log")" -ge 2 ]' ||
    fail "the coordinator logged no wrong secret"
grep -q 'agent .*no secret: read' "$log" ||
    fail "the coordinator logged no agent without a secret"
# A second agent for this host (t40000), with the secret, is refused:
# it must not take the host, nor mark it down when it goes.
hello agenthello "$COORD_ADDR" "$(cat "$SECRET")"
[[ $got == "got ERROR: host "*" (t40000) has an agent already: "* ]] ||
    fail "a second agent for the host: $got"
$PM_ON timeout 20 "$PMON" hosts --json >"$RUN/hosts.json" ||
    fail "pmon hosts failed"
jq -e '[.hosts[] | select(.host_tid == 262144)] | length == 1 and
    .[0].agent == "up"' "$RUN/hosts.json" >/dev/null ||
    fail "the host lost its agent to the refused one: $(cat "$RUN/hosts.json")"

# Everyone else is still served.
pmon_exec master1 || fail "master1 failed after the refused peers"
$PM_ON timeout 20 "$PMON" ps >"$RUN/ps.out" 2>"$RUN/ps.err" ||
    fail "pmon ps failed after the refused peers: $(cat "$RUN/ps.err")"
grep -q master1 "$RUN/ps.out" || fail "pmon ps shows no master1"

# (4) pmon without the secret: moved away (as root, chmod 000 would not
# stop a read), readable by others, or another one.
ps_fails() {
	timeout 20 "$PMON" ps >/dev/null 2>"$RUN/ps.err" &&
	    fail "pmon ps worked $1"
	grep -qF "$2" "$RUN/ps.err" ||
	    fail "pmon ps $1 said: $(cat "$RUN/ps.err") (wanted '$2')"
}
mv "$SECRET" "$SECRET.away"
ps_fails "without the secret file" "$SECRET"
grep -q 'No such file' "$RUN/ps.err" || fail "unclear: $(cat "$RUN/ps.err")"
if [ "$(id -u)" != 0 ]; then
	cp -p "$SECRET.away" "$SECRET" && chmod 000 "$SECRET"
	ps_fails "with the secret file unreadable" "$SECRET"
	rm -f "$SECRET"
fi
cp -p "$SECRET.away" "$SECRET" && chmod 644 "$SECRET"
ps_fails "with the secret file readable by others" "mode 0600"
rm -f "$SECRET"
(umask 077 && echo "$wrong" | tr 0 a >"$SECRET")
ps_fails "with another secret" "wrong secret"
mv -f "$SECRET.away" "$SECRET"
timeout 20 "$PMON" ps >/dev/null 2>"$RUN/ps.err" ||
    fail "pmon ps with the secret back: $(cat "$RUN/ps.err")"

pmon_shutdown "$TRACE_PID"
[ -e "$SECRET" ] && fail "$SECRET outlived the coordinator"
grep -rqaF "$value" "$PVM_TMP" "$RUN"/*.json "$RUN"/*.out "$RUN"/*.err \
    2>/dev/null && fail "the secret is in a log or output"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
expect_eq "master1 pvm_mcast after the refused peers" 1 \
    "$(count_of master1 pvm_mcast begin "$RUN/got")"
expect_eq "slave1 pvm_exit after the refused peers" 3 \
    "$(count_of slave1 pvm_exit begin "$RUN/got")"

# An agent started by hand: a coordinator that spawns none (-N), told
# where to listen (-l), and pmon-agentd with a wrong PMON_SECRET, with
# -s FILE of the wrong mode, then with -s FILE, which is monitored.
"$PMON_COORDD" -N -l 127.0.0.2 -r 3 3>"$RUN/ready" </dev/null >/dev/null \
    2>"$RUN/coordd.err" || fail "pmon-coordd -N: $(cat "$RUN/coordd.err")"
COORD_PID=$(sock_pid "$(coord_sock)")
[ -n "$COORD_PID" ] || fail "no process listens on $(coord_sock)"
PM_COORD_PIDS="$PM_COORD_PIDS $COORD_PID"
addr=$(sed -n 's/^ready //p' "$RUN/ready")
[[ $addr == 127.0.0.2:* ]] || fail "pmon-coordd -l 127.0.0.2 said '$addr'"
cmp -s "$SECRET" <(echo "$value") && fail "the secret was not made anew"
PMON_SECRET=$wrong timeout 20 "$PMON_AGENTD" -c "$addr" \
    </dev/null >/dev/null 2>"$RUN/agent.err" &&
    fail "an agent with a wrong PMON_SECRET ran"
grep -q 'coordinator dropped us: wrong secret' "$RUN/agent.err" ||
    fail "agent with a wrong secret: $(cat "$RUN/agent.err")"
cp "$SECRET" "$RUN/secret" && chmod 644 "$RUN/secret"
timeout 20 "$PMON_AGENTD" -s "$RUN/secret" -c "$addr" </dev/null \
    >/dev/null 2>"$RUN/agent.err" && fail "an agent read a 0644 secret"
grep -q "$RUN/secret: .*mode 0600" "$RUN/agent.err" ||
    fail "agent with a 0644 secret: $(cat "$RUN/agent.err")"
chmod 600 "$RUN/secret"
bg "$PMON_AGENTD" -s "$RUN/secret" -c "$addr" </dev/null \
    >/dev/null 2>"$RUN/agent.err"
wait_for 10 test -S "$(agent_sock)" ||
    fail "the agent did not start: $(cat "$RUN/agent.err")"
pmon_trace "$RUN/trace2.json"
pmon_exec master1 || fail "master1 failed with a hand-started agent"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" -c "$RUN/trace2.json" >"$RUN/got2"
expect_eq "slave1 pvm_exit with a hand-started agent" 3 \
    "$(count_of slave1 pvm_exit begin "$RUN/got2")"
pass
