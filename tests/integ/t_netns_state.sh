#!/bin/bash
# Protects the state model on a 2-host machine (network namespaces):
# - every query (hosts, ps, queues, groups, problems, frontier,
#   snapshot) answers for the tasks of both hosts;
# - a tool that attaches while pingpong sends as fast as PVM lets it
#   gets a snapshot and then exactly the events after it: replaying them
#   on the snapshot gives the coordinator's final snapshot
#   (tests/tools/replaystate), and the final counts are the program's;
# - a token ring stopped with SIGSTOP: the snapshot shows each task
#   where the kernel and the program's own log say it is.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
for p in pingpong ring barrierexit; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
REPLAYSTATE=$PMON_BUILD/tests/tools/replaystate
[ -x "$REPLAYSTATE" ] || fail "missing $REPLAYSTATE"
command -v jq >/dev/null || fail "jq is needed"

netns_pmon_up 2

# query CMD FILE [ARGS]: `pmon CMD ARGS --json` into FILE, one JSON object.
query() {
	local cmd=$1 out=$2
	shift 2
	$PM_ON timeout 20 "$PMON" "$cmd" --json "$@" </dev/null >"$out" \
	    2>"$out.err" || fail "pmon $cmd $* --json failed: $(cat "$out.err")"
	jq -e 'type == "object"' "$out" >/dev/null 2>&1 ||
	    fail "pmon $cmd $*: not a JSON object: $(head -c 2000 "$out")"
}

# The host part of a tid (bits 18-29).
host_of() { echo $((($1 >> 18) & 0xfff)); }

# --- hosts --------------------------------------------------------------------

query hosts "$RUN/hosts.json"
jq -e --arg h1 "$(ns_name 1)" --arg h2 "$(ns_name 2)" '.hosts |
    length == 2 and (map(.name) | sort) == ([$h1, $h2] | sort) and
    all(.agent == "up")' "$RUN/hosts.json" >/dev/null ||
    fail "pmon hosts should list $(ns_name 1) and $(ns_name 2) with their \
agents up: $(jq -c .hosts "$RUN/hosts.json")"

# --- pingpong: queries while it runs, and a tool attaching late ----------------

k=4 rounds=4000 bytes=100
log=$RUN/pingpong.log
bg $PM_ON timeout 120 "$PMON" exec "$PROGS/pingpong" "$k" "$rounds" \
    "$bytes" "$log" >"$RUN/pingpong.out" 2>"$RUN/pingpong.err"
EXEC_PID=$BG_PID
wait_for 20 eval '[ "$(grep -c "^worker" "$log" 2>/dev/null)" = "$k" ]' ||
    fail "pingpong did not start its $k workers: $(cat "$log" \
    "$RUN/pingpong.err" 2>&1)"
master=$(awk '$1 == "master" { print $2 }' "$log")
workers=$(awk '$1 == "worker" { print $2 }' "$log" | sort -n)

# Mid-run: the master has sent, and not everything.
sent_by_master() {
	query ps "$RUN/ps.json"
	jq --argjson m "$master" '.tasks[] | select(.tid == $m) | .sent.msgs' \
	    "$RUN/ps.json"
}
wait_for 20 eval '[ "$(sent_by_master)" -gt $((k * 10)) ]' ||
    fail "pmon ps never showed the master sending: $(cat "$RUN/ps.json")"

TRACE=$RUN/late.json
bg $PM_ON "$PMON" trace --json --tasks --snapshot </dev/null >"$TRACE" \
    2>"$TRACE.err"
TRACE_PID=$BG_PID
wait_for 10 trace_connected "$TRACE_PID" ||
    fail "the late pmon trace did not connect: $(cat "$TRACE.err")"

# The ps, queues and frontier queries name tasks of both hosts.
query ps "$RUN/ps.json"
expect_eq "hosts of pingpong tasks in pmon ps" 2 "$(jq -r '.tasks[] |
    select(.program == "pingpong") | .tid' "$RUN/ps.json" |
    while read -r t; do host_of "$t"; done | sort -u | wc -l)"
query queues "$RUN/queues.json"
jq -e '.queues | type == "array"' "$RUN/queues.json" >/dev/null ||
    fail "pmon queues: no queue list: $(cat "$RUN/queues.json")"

wait "$EXEC_PID" || fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
EXEC_PID=""
grep -qx done "$log" || fail "pingpong did not finish: $(cat "$log")"
query snapshot "$RUN/final.json"
# The late tool has everything once the last event of every task is in
# its file; SIGTERM then ends it cleanly.
last_ids=$(jq -r '.position | to_entries[] | "\"id\":\"\(.key):\(.value)\""' \
    "$RUN/final.json")
trace_has_all() {
	local id
	for id in $last_ids; do
		grep -qF "$id" "$TRACE" || return 1
	done
}
wait_for 20 trace_has_all || fail "the late tool never got the last events"
kill -TERM "$TRACE_PID"
wait "$TRACE_PID" || fail "the late pmon trace exited with $?: \
$(cat "$TRACE.err")"

"$REPLAYSTATE" "$TRACE" "$RUN/final.json" >"$RUN/replay.out" \
    2>"$RUN/replay.err" || fail "the late tool's replayed state differs \
from the final snapshot: $(head -n 20 "$RUN/replay.err")"
pm_log "$(cat "$RUN/replay.out")"
read -r e0 e1 <<<"$(sed -n \
    's/^replaystate: snapshot at \([0-9]*\) of \([0-9]*\) events$/\1 \2/p' \
    "$RUN/replay.out")"
[ -n "$e1" ] && [ "$e0" -gt 0 ] && [ "$e0" -lt "$e1" ] ||
    fail "the late tool did not attach mid-run: $(cat "$RUN/replay.out")"

# What pingpong does: the master sends each worker its start message and
# ROUNDS pings, each worker answers with ROUNDS pongs.
jq -e --argjson m "$master" --argjson k "$k" --argjson r "$rounds" \
    --argjson b "$bytes" '
    (.tasks | map(select(.program == "pingpong"))) as $t |
    ($t | length) == $k + 1 and all($t[]; .state == "exited" and
	.exit_status == 0) and
    ($t[] | select(.tid == $m) | .sent.msgs == $k * ($r + 1) and
	.received == {msgs: ($k * $r), bytes: ($k * $r * $b)}) and
    all($t[] | select(.tid != $m); .sent == {msgs: $r, bytes: ($r * $b)} and
	.received.msgs == $r + 1) and
    (.queues | length) == 0 and .problems == []' "$RUN/final.json" \
    >/dev/null || fail "the final snapshot does not count what pingpong \
did: $(jq -c '[.tasks[] | {tid, state, sent, received}], .queues, .problems' \
    "$RUN/final.json")"
expect_eq "hosts of pingpong tasks" 2 "$(for t in $master $workers; do
	host_of "$t"; done | sort -u | wc -l)"

# The frontier of a ping sent across hosts after the attach: the worker's
# first event after it is the receive that took it.  The last ping: the
# frontiers of the first ones, tens of thousands of the master's events
# ago, are beyond the horizon (doc/state.md, "Memory").
remote=""
for w in $workers; do
	[ "$(host_of "$w")" != "$(host_of "$master")" ] && remote=$w && break
done
[ -n "$remote" ] || fail "no worker on the other host"
# (grep first: jq alone on the whole trace took seconds.)
ping=$({ grep -F '"call":"pvm_send"' "$TRACE" || true; } |
    jq -r --argjson w "$remote" 'select(.call == "pvm_send" and
    .phase == "begin" and .dst == $w and .tag == 2) | .id' | tail -n 1)
recv=$({ grep -F "\"match\":\"$ping\"" "$TRACE" || true; } |
    jq -r --arg p "$ping" 'select(.match == $p) | .seq')
[ -n "$ping" ] && [ -n "$recv" ] ||
    fail "no ping to $remote and its receive in the late trace"
query frontier "$RUN/frontier.json" "$ping"
jq -e --argjson w "$remote" --argjson m "$master" --argjson r "$recv" \
    --arg p "$ping" '.event == $p and
    .future[($w | tostring)] == $r and
    .past[($m | tostring)] == ($p | split(":")[1] | tonumber) - 1' \
    "$RUN/frontier.json" >/dev/null || fail "frontier of $ping: want \
$remote's first event after it $recv: $(cat "$RUN/frontier.json")"

# --- barrierexit: groups and problems across hosts ------------------------------

f=$RUN/barrierexit.tids
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/barrierexit" "$f" \
    >"$RUN/barrierexit.out" 2>"$RUN/barrierexit.err"
EXEC_PID=$BG_PID
wait_for 20 eval '[ -f "$f" ] && [ "$(wc -l <"$f")" -ge 4 ]' ||
    fail "barrierexit did not start: $(cat "$f" "$RUN/barrierexit.err" 2>&1)"
tid_of() { awk -v r="$2" '$1 == r { print $2; exit }' "$1"; }
p=$(tid_of "$f" parent) w=$(tid_of "$f" waiter) q=$(tid_of "$f" quitter)
have_deadlock() {
	query problems "$RUN/problems.json"
	jq -e '[.problems[] | select(.kind == "deadlock")] | length >= 1' \
	    "$RUN/problems.json" >/dev/null
}
wait_for 10 have_deadlock ||
    fail "no deadlock reported: $(cat "$RUN/problems.json")"
jq -e --argjson p "$p" --argjson w "$w" --argjson q "$q" '
    [.problems[] | select(.kind == "waits_on_exited")] |
    (map(.tid) | sort) == ([$p, $w] | sort) and all(.exited == $q)' \
    "$RUN/problems.json" >/dev/null ||
    fail "want $p and $w waiting on exited $q: $(cat "$RUN/problems.json")"
query groups "$RUN/groups.json"
jq -e --argjson p "$p" --argjson w "$w" '.groups[] | select(.name == "bx") |
    (.members | map(.tid) | sort) == ([$p, $w] | sort) and
    (.barrier.waiting | sort) == ([$p, $w] | sort)' "$RUN/groups.json" \
    >/dev/null || fail "group bx should hold $p and $w, both in the \
barrier: $(cat "$RUN/groups.json")"
expect_eq "hosts of barrierexit tasks" 2 "$(for t in $p $w $q; do
	host_of "$t"; done | sort -u | wc -l)"
# The two blocked in the barrier are killed; pmon exec then ends.
kill $(awk '$1 == "parent" || $1 == "waiter" { print $3 }' "$f")
wait_for 10 pid_dead "$EXEC_PID" || fail "barrierexit did not end"
wait "$EXEC_PID" 2>/dev/null
EXEC_PID=""

# --- ring: a stopped application, as the kernel and its log see it -------------

# syscall_of PID: the system call a stopped process sits in (the first
# field of /proc/PID/syscall; "running" if none).
syscall_of() { awk '{ print $1 }' "/proc/$1/syscall"; }
# x86-64: select, poll, pselect6, ppoll, epoll_wait, epoll_pwait: PVM
# waiting for a message; nanosleep, clock_nanosleep: the token held.
is_waiting() { case $1 in 23 | 7 | 270 | 271 | 232 | 281) true ;; *) false ;; esac }
is_holding() { case $1 in 35 | 230) true ;; *) false ;; esac }

n=4 ring_rounds=12
f=$RUN/ring.log
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/ring" "$n" "$ring_rounds" "$f" \
    >"$RUN/ring.out" 2>"$RUN/ring.err"
EXEC_PID=$BG_PID
wait_for 20 eval '[ "$(grep -c "^ring" "$f" 2>/dev/null)" = "$n" ]' ||
    fail "ring did not start: $(cat "$f" "$RUN/ring.err" 2>&1)"
expect_eq "hosts of ring tasks" 2 "$(awk '$1 == "ring" { print $3 }' "$f" |
    while read -r t; do host_of "$t"; done | sort -u | wc -l)"
pids=$(awk '$1 == "ring" { print $4 }' "$f")

# stop_and_check I: stops every ring task, flushes, and checks the
# snapshot against /proc and the log; then continues the ring.
stop_and_check() {
	local snap=$RUN/ring.stop$1.json i tid pid prev sc holds got st exact=0
	kill -STOP $pids
	for pid in $pids; do
		wait_for 5 eval '[ "$(proc_state "$pid")" = T ]' ||
		    fail "ring pid $pid did not stop"
	done
	query snapshot "$snap"
	for i in $(seq 0 $((n - 1))); do
		tid=$(awk -v i="$i" '$1 == "ring" && $2 == i { print $3 }' "$f")
		pid=$(awk -v i="$i" '$1 == "ring" && $2 == i { print $4 }' "$f")
		prev=$(awk -v i=$(((i + n - 1) % n)) \
		    '$1 == "ring" && $2 == i { print $3 }' "$f")
		sc=$(syscall_of "$pid")
		holds=$(awk -v i="$i" '$1 == "hold" && $2 == i' "$f" | wc -l)
		# Tokens received: all messages but the start multicast.
		got=$(jq --argjson t "$tid" --argjson i "$i" '.tasks[] |
		    select(.tid == $t) | .received.msgs - (if $i > 0 then 1
		    else 0 end)' "$snap")
		st=$(jq -c --argjson t "$tid" '.tasks[] | select(.tid == $t) |
		    {state, blocked}' "$snap")
		if is_waiting "$sc"; then
			jq -e --argjson p "$prev" '.state == "blocked" and
			    .blocked.in == "pvm_recv" and .blocked.from == $p and
			    .blocked.tag == 2' <<<"$st" >/dev/null || fail "stop \
$1: ring task $i ($tid) waits in system call $sc, the snapshot says $st"
			expect_eq "stop $1: tokens task $i got, snapshot vs log" \
			    "$holds" "$got"
			exact=$((exact + 1))
		elif is_holding "$sc"; then
			jq -e '.state == "running"' <<<"$st" >/dev/null ||
			    fail "stop $1: ring task $i ($tid) holds the token \
(system call $sc), the snapshot says $st"
			expect_eq "stop $1: tokens task $i got, snapshot vs log" \
			    "$holds" "$got"
			exact=$((exact + 1))
		else
			# Stopped between two calls: its last log line may lag
			# the receive just recorded.
			[ "$got" -ge "$holds" ] && [ "$got" -le $((holds + 1)) ] ||
			    fail "stop $1: ring task $i ($tid) got $got tokens, \
its log says $holds"
		fi
	done
	[ "$exact" -ge $((n - 1)) ] ||
	    fail "stop $1: only $exact ring tasks were in a known system call"
	pm_log "stop $1: $(jq -c '[.tasks[] | select(.program == "ring") |
	    [.tid, .state, .received.msgs]]' "$snap")"
	kill -CONT $pids
}
proc_state() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $1 }'; }

for i in 1 2 3; do
	sleep 0.$((3 * i + 2))
	stop_and_check "$i"
done
wait "$EXEC_PID" || fail "ring exited with $?: $(cat "$RUN/ring.err")"
EXEC_PID=""
expect_eq "ring tasks done" "$n" "$(grep -c '^done' "$f")"
pass
