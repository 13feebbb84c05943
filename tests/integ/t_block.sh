#!/bin/bash
# Protects blocking mode (doc/capture.md, "Blocking mode"): under `pmon
# start --block` with 4 KiB rings, tasks whose agent is stopped wait for
# it instead of dropping, go on when it continues (or when the agent
# that replaces a killed one adopts their rings), and the stream holds
# every record of every task (seq 1 to the last, no lost marker, as many
# as the programs made); with --block=TIMEOUT and the agent stopped for
# longer, a task waits once, then drops without waiting until the agent
# makes room again, and the lost markers are exactly its ring's dropped.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"

N=3000			# burst calls: 6004 records, ~85 fit a 4 KiB ring
NB=3			# bursts at once
STORM_N=4		# storm tasks...
STORM_R=2000		# ...and rounds: about 20000 records per task
STOP_S=3		# the agent stopped, in seconds
TN=20000		# burst calls with a timeout
TIMEOUT_MS=300

agent_log() { echo "$PVM_TMP/pvml.$(id -u)"; }

# The rings the agent holds (tasks running, or ended and not acked).
agent_rings() {
	ls -l "/proc/$AGENT_PID/fd" 2>/dev/null | grep -c 'memfd:pmon-ring'
}

# The agent's line about what blocking cost task $1 (hex, no t).
waited_line() {
	grep "pmon-agentd: task t$1 ([a-z]*) waited " "$(agent_log)"
}

# streamcheck -e of $1: "tid events last-seq" per task (tids in hex,
# as streamcheck prints them).
task_seqs() {
	"$STREAMCHECK" -l -e "$1" | awk '{ n[$1]++; if ($2 > m[$1]) m[$1] = $2 }
	    END { for (t in n) print t, n[t], m[t] }'
}

# expect_complete SEQS TID RECORDS: the task's events are seq 1..RECORDS.
expect_complete() {
	local got
	got=$(awk -v t="$2" '$1 == t { print $2 " " $3 }' "$1")
	expect_eq "events and last seq of t$2" "$3 $3" "$got"
}

start_pvmd
pmon_start -Q 268435456 -R 4096 --block
grep -q ' ring=4096 compress=remote block=forever$' "$PVM_TMP.pmon-start.out" ||
    fail "pmon start -v: $(cat "$PVM_TMP.pmon-start.out")"
pmon_trace "$RUN/trace.json"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"

# 1. Bursts that wait for their stopped agent, then finish.
for i in $(seq $NB); do
	bg $PM_ON timeout 120 "$PMON" exec "$PROGS/burst" $N "$RUN/b$i.log"
	eval "BURST$i=\$BG_PID"
done
for i in $(seq $NB); do
	wait_for 20 grep -qs '^ready ' "$RUN/b$i.log" ||
	    fail "burst $i never got ready"
done
kill -STOP "$AGENT_PID"
for i in $(seq $NB); do touch "$RUN/b$i.log.go"; done
sleep $STOP_S
for i in $(seq $NB); do
	if grep -q '^did ' "$RUN/b$i.log"; then
		kill -CONT "$AGENT_PID"
		fail "burst $i finished its calls while its agent was stopped"
	fi
done
kill -CONT "$AGENT_PID"
for i in $(seq $NB); do
	eval "wait \$BURST$i" || fail "burst $i failed"
	expect_eq "burst $i's ring (written, dropped)" \
	    "$((2 * (N + 2))) 0" \
	    "$(awk '$1 == "ring" { print $3, $5 }' "$RUN/b$i.log")"
done

# 2. A storm of STORM_N tasks, its agent stopped for a while once it
# holds all their rings (if the storm has not finished by then).
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
base=$(agent_rings)
bg $PM_ON timeout 120 "$PMON" exec "$PROGS/storm" $STORM_N $STORM_R \
    "$RUN/storm.calls"
STORM=$BG_PID
wait_for 20 eval '[ "$(agent_rings)" -ge $((base + STORM_N)) ] ||
    ! pid_alive $STORM' || fail "the storm's tasks never registered"
kill -STOP "$AGENT_PID"
sleep 2
stopped_calls=$(cat "$RUN/storm.calls" 2>/dev/null | wc -l)
kill -CONT "$AGENT_PID"
[ "$stopped_calls" = 0 ] ||
    pm_log "the storm finished before its agent was stopped"
wait "$STORM" || fail "storm failed"
expect_eq "storm tasks that counted their calls" $STORM_N \
    "$(wc -l <"$RUN/storm.calls")"

# 3. A burst waits for its stopped agent, which is then killed: the
# coordinator starts another, which adopts the ring, sets blocking mode
# in it again and drains it, and the burst goes on.
log=$RUN/adopt.log
bg $PM_ON timeout 120 "$PMON" exec "$PROGS/burst" $N "$log"
BURST=$BG_PID
wait_for 20 grep -qs '^ready ' "$log" || fail "burst (adopted) never got ready"
kill -STOP "$AGENT_PID"
touch "$log.go"
sleep 1
grep -q '^did ' "$log" &&
    { kill -CONT "$AGENT_PID"; fail "burst did not wait for its stopped agent"; }
kill -KILL "$AGENT_PID"
wait_for 30 grep -qs '^ring ' "$log" ||
    fail "burst did not go on once a new agent adopted its ring"
wait "$BURST" || fail "burst (adopted) failed"
expect_eq "adopted burst's ring (written, dropped)" "$((2 * (N + 2))) 0" \
    "$(awk '$1 == "ring" { print $3, $5 }' "$log")"
AGENT_PID=$(sock_pid "$(agent_sock)")

# pmon trace --json may be far behind the coordinator, which gives its
# tools only a few seconds at shutdown: let it write every event first.
events=$(awk -v b=$(((NB + 1) * 2 * (N + 2))) '{ n += 2 * $3 }
    END { print n + b }' "$RUN/storm.calls")
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
wait_for 120 eval '[ "$(grep -c "\"seq\":" "$RUN/trace.json")" -ge $events ]' ||
    fail "pmon trace wrote fewer than the $events events made"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" "$RUN/trace.json" >"$RUN/check.out" 2>&1 ||
    fail "stream check (lost markers are violations): $(head -20 "$RUN/check.out")"
task_seqs "$RUN/trace.json" >"$RUN/seqs"
for i in $(seq $NB); do
	tid=$(awk '$1 == "ready" { printf "%x", $2 }' "$RUN/b$i.log")
	expect_complete "$RUN/seqs" "$tid" $((2 * (N + 2)))
	line=$(waited_line "$tid") || fail "no waits logged for burst t$tid"
	# It waited from its first full ring until the agent continued.
	echo "$line" | awk -v min=$(((STOP_S - 1) * 1000)) \
	    '{ for (i = 1; i < NF; i++) if ($(i + 1) == "ms" && $(i + 2) == "at") m = $i }
	    END { exit !(m >= min) }' ||
	    fail "burst t$tid waited less than its agent was stopped: $line"
done
while read -r _ tid calls; do
	expect_complete "$RUN/seqs" "$tid" $((2 * calls))
done <"$RUN/storm.calls"
expect_complete "$RUN/seqs" "$(awk '$1 == "ready" { printf "%x", $2 }' \
    "$RUN/adopt.log")" $((2 * (N + 2)))

# 4. --block=TIMEOUT, the agent stopped for all of the run: one wait,
# then drops, counted; the program does not wait for the agent.
pmon_start -Q 268435456 -R 4096 --block=${TIMEOUT_MS}ms
grep -q " block=${TIMEOUT_MS}ms$" "$PVM_TMP.pmon-start.out" ||
    fail "pmon start -v: $(cat "$PVM_TMP.pmon-start.out")"
pmon_trace "$RUN/trace2.json"
AGENT_PID=$(sock_pid "$(agent_sock)")
log=$RUN/timeout.log
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/burst" $TN "$log"
BURST=$BG_PID
wait_for 20 grep -qs '^ready ' "$log" || fail "burst never got ready"
tid=$(awk '$1 == "ready" { printf "%x", $2 }' "$log")
kill -STOP "$AGENT_PID"
touch "$log.go"
wait_for 30 grep -qs '^ring ' "$log" ||
    { kill -CONT "$AGENT_PID"; fail "burst waited for its stopped agent past its timeout"; }
wait "$BURST" || { kill -CONT "$AGENT_PID"; fail "burst failed"; }
kill -CONT "$AGENT_PID"
written=$(awk '$1 == "ring" { print $3 }' "$log")
dropped=$(awk '$1 == "ring" { print $5 }' "$log")
expect_eq "records burst made (written + dropped)" $((2 * (TN + 2))) \
    $((written + dropped))
[ "$dropped" -gt 0 ] || fail "the ring dropped nothing (written $written)"
$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
wait_for 120 eval '[ "$(grep -c "\"seq\":" "$RUN/trace2.json")" -ge $written ]' ||
    fail "pmon trace wrote fewer than the $written events kept"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" -l "$RUN/trace2.json" >"$RUN/check2.out" 2>&1 ||
    fail "stream check: $(head -20 "$RUN/check2.out")"
lost=$(jq -s '[.[] | select(.call == "lost") | .count] | add // 0' \
    "$RUN/trace2.json")
expect_eq "events lost in the stream (the ring's dropped)" "$dropped" "$lost"
task_seqs "$RUN/trace2.json" >"$RUN/seqs2"
expect_eq "events delivered (the ring's written)" "$written" \
    "$(awk -v t="$tid" '$1 == t { print $2 }' "$RUN/seqs2")"
line=$(waited_line "$tid") || fail "no wait logged for burst t$tid"
echo "$line" | grep -q " waited 1 times " ||
    fail "burst waited more than once for an agent that never moved: $line"
pass
