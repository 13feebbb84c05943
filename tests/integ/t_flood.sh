#!/bin/bash
# Protects the coordinator against floods (issue 16): (1) idle
# connections to the agents' port, more than its descriptors, neither
# spin it nor flood its log, nor do they spin the agent at its socket
# for tasks, and a program run right after is traced whole; (2) connections that send their hello one byte a second, more
# than it may keep, do not keep an agent out: one killed meanwhile is
# back within seconds and its task loses nothing; (3) connections whose
# first frame, not a hello, declares 1 MiB cost it nothing; (4) a tool that
# pipelines requests without reading the replies is held at its queue's
# bound, and gets every reply once it reads.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
FLOOD=$TOOLS/flood
[ -x "$FLOOD" ] || fail "missing $FLOOD"
command -v prlimit >/dev/null || fail "prlimit (util-linux) is needed"
# The flood itself needs more descriptors than a shell has by default.
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)"

Q=2097152		# the tools' queue: replies are held beyond it
start_pvmd
pmon_start -v -Q $Q	# -v -v: the coordinator logs agents' hellos
pmon_trace "$RUN/trace.json"
tcp=$COORD_ADDR
port=${tcp##*:}
case ${tcp%:*} in
'*' | 0.0.0.0 | '[::]' | '::') tcp=127.0.0.1:$port ;;
esac
LOG=$(coord_log)
cpu_ms() { awk '{ print ($14 + $15) * 10 }' "/proc/$COORD_PID/stat"; }
hwm_kb() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$COORD_PID/status"; }
log_bytes() { stat -c %s "$LOG" 2>/dev/null || echo 0; }

# --- (1) idle connections beyond the descriptor limit -------------------
# 16 descriptors more than it uses: fewer than the connections one
# address may keep waiting for their hello, so accepts fail (EMFILE).
fds=$(ls "/proc/$COORD_PID/fd" | wc -l)
prlimit --nofile=$((fds + 16)): --pid "$COORD_PID" ||
    fail "prlimit"
cpu0=$(cpu_ms) log0=$(log_bytes)
"$FLOOD" -n 400 -t 3 "$tcp" idle >"$RUN/idle.out" 2>&1 ||
    fail "flood idle: $(cat "$RUN/idle.out")"
cpu1=$(cpu_ms) log1=$(log_bytes)
pm_log "idle flood: $(tail -1 "$RUN/idle.out"); coordinator CPU $((cpu1 - cpu0)) \
ms, log +$((log1 - log0)) bytes"
pid_alive "$COORD_PID" || fail "pmon-coordd died in the idle flood"
# A spinning accept loop took 10 s of CPU in 8 s, and logged 221 MB.
[ $((cpu1 - cpu0)) -lt 1500 ] || fail "the coordinator used \
$((cpu1 - cpu0)) ms of CPU in a 3 s idle flood"
[ $((log1 - log0)) -lt 65536 ] || fail "the idle flood grew the log by \
$((log1 - log0)) bytes: $(tail -5 "$LOG")"
grep -q "accepting an agent: Too many open files" "$LOG" ||
    fail "the log does not say why accepts failed: $(tail -5 "$LOG")"
prlimit --nofile=1024: --pid "$COORD_PID" || fail "prlimit"
# The same at the agent's socket for tasks.
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"
fds=$(ls "/proc/$AGENT_PID/fd" | wc -l)
prlimit --nofile=$((fds + 16)): --pid "$AGENT_PID" || fail "prlimit"
acpu() { awk '{ print ($14 + $15) * 10 }' "/proc/$AGENT_PID/stat"; }
cpu0=$(acpu)
"$FLOOD" -n 400 -t 3 "$(agent_sock)" idle >"$RUN/aidle.out" 2>&1 ||
    fail "flood idle (agent): $(cat "$RUN/aidle.out")"
cpu1=$(acpu)
pm_log "idle flood of the agent: $(tail -1 "$RUN/aidle.out"); agent CPU \
$((cpu1 - cpu0)) ms"
[ $((cpu1 - cpu0)) -lt 1500 ] || fail "the agent used $((cpu1 - cpu0)) ms \
of CPU in a 3 s idle flood"
prlimit --nofile=1024: --pid "$AGENT_PID" || fail "prlimit"
# The flood's connections are gone once the agent has accepted and
# closed them all: until then a program's tasks could find the backlog
# full and run unmonitored (as with no agent).
agent_flood_gone() {
	[ "$(ls "/proc/$AGENT_PID/fd" | wc -l)" -le "$fds" ] &&
	    [ "$(ss -xln | awk -v p="$(agent_sock)" '$5 == p { print $3 }')" \
	    = 0 ]
}
wait_for 20 agent_flood_gone || fail "the agent still holds $(ls \
"/proc/$AGENT_PID/fd" | wc -l) descriptors (had $fds) after the flood"
pmon_exec master1 || fail "master1 failed after the idle flood"
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"

# --- (2) slow hellos while an agent is killed -------------------------------
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"
bg "$FLOOD" -a -n 1100 -t 25 "$tcp" slow >"$RUN/slow.out" 2>&1
SLOW_PID=$BG_PID
wait_for 20 grep -q "^flood: connected" "$RUN/slow.out" ||
    fail "the slow flood did not connect: $(cat "$RUN/slow.out")"
N=3000			# pvm_getsbuf calls, 1 ms apart
burst_start $N
kill -KILL "$AGENT_PID"
new_agent() {
	NEW_PID=$(sock_pid "$(agent_sock)")
	[ -n "$NEW_PID" ] && [ "$NEW_PID" != "$AGENT_PID" ]
}
wait_for 10 new_agent || fail "no agent was started again"
t0=$(date +%s%N)
rejoined() { grep -q "agent .*: host .*pid $NEW_PID\$" "$LOG"; }
wait_for 10 rejoined || fail "the new agent did not get in within 10 s of \
a slow-hello flood: $(grep -c . "$LOG") log lines, last: $(tail -3 "$LOG")"
pm_log "$(head -1 "$RUN/slow.out") slowly; the new agent was in \
$((($(date +%s%N) - t0) / 1000000)) ms after it started"
[ "$(burst_did)" -lt "$N" ] ||
    fail "burst finished before its new agent came"
wait "$BURST" || fail "burst failed"
read -r _ tid _ <"$BURST_LOG"

# --- (3) first frames that declare 1 MiB ----------------------------------
hwm0=$(hwm_kb)
"$FLOOD" -n 1000 -t 5 "$tcp" big >"$RUN/big.out" 2>&1 ||
    fail "flood big: $(cat "$RUN/big.out")"
hwm1=$(hwm_kb)
pm_log "1 MiB first frames: $(tail -1 "$RUN/big.out"); coordinator peak \
RSS $hwm0 -> $hwm1 kB"
[ $((hwm1 - hwm0)) -lt 65536 ] || fail "1000 first frames of 1 MiB took \
the coordinator's peak RSS from $hwm0 to $hwm1 kB"
read -r made closed < <(awk '$2 == "kind" { print $5, $7 }' "$RUN/big.out")
# At least 50 (under ASan on a busy CI machine, 88 in 5 s were seen).
[ "${made:-0}" -ge 50 ] && [ "$closed" = "$made" ] ||
    fail "the coordinator kept connections whose first frame was 1 MiB \
of records: $(cat "$RUN/big.out")"

# --- (4) a tool that does not read its replies -----------------------------
SECRET=$(cat "$PVM_TMP/pmon-secret.$(id -u)")
bg "$FLOOD" -s "$SECRET" -r 100000 -t 6 "$(coord_sock)" pipeline \
    >"$RUN/pipe.out" 2>&1
PIPE_PID=$BG_PID
# What waits for it, as the coordinator counts it, while it writes.
max=0
for i in 1 2 3 4 5 6 7 8; do
	sleep 0.5
	q=$($PM_ON "$PMON" tools --json 2>/dev/null |
	    jq '[.tools[] | select(.name == "flood") | .queued] | max // 0')
	[ "${q:-0}" -gt "$max" ] && max=$q
done
wait "$PIPE_PID" || fail "flood pipeline: $(cat "$RUN/pipe.out")"
pm_log "pipeline: $(cat "$RUN/pipe.out"); at most $max bytes queued for it"
read -r written replies < <(awk '{ print $9, $11 }' "$RUN/pipe.out")
[ "${written:-0}" -gt 1000 ] || fail "the tool wrote too few requests to \
test anything: $(cat "$RUN/pipe.out")"
expect_eq "replies to the pipelined requests" "$written" "$replies"
# It was held at its queue (Q) plus at most one reply, not 1 GB.
[ "$max" -gt $((Q / 2)) ] || fail "the tool's replies never filled its \
queue ($max bytes): nothing was tested"
[ "$max" -le $((Q + 1048576)) ] || fail "$max bytes of replies waited for a \
tool that did not read (its queue is $Q)"

stop_pid "$SLOW_PID" 5
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
expect_eq "master1 pvm_mcast after the idle flood" 1 \
    "$(count_of master1 pvm_mcast begin "$RUN/got")"
expect_eq "slave1 pvm_exit after the idle flood" 3 \
    "$(count_of slave1 pvm_exit begin "$RUN/got")"
sel="select(.tid == $tid and .call)"
expect_eq "records of burst across the agent's restart, none lost" \
    "$((2 * (N + 2))) 0" "$(jq -s "[.[] | $sel | select(.call != \"lost\")]
    | length" "$RUN/trace.json") $(jq -s "[.[] | $sel | select(.call ==
    \"lost\") | .count] | add // 0" "$RUN/trace.json")"
pass
