#!/bin/bash
# Protects the request language's breakpoint control, objects, flush and
# actions (doc/requests.md, doc/control.md) with two tools at once, a
# debugger-like owner A (subscribed) and another tool B, both reqtool:
# - enable, disable and delete of a breakpoint by its owner, refused to
#   the other tool with the reason; `breakpoints` shows on/off and hits;
#   a disabled breakpoint never hits, an enabled one hits at each pong;
# - the snapshot, notify and count actions: the owner alone gets the
#   snapshot and the hit, counts are exact (pingpong's rounds);
# - the flush request: with the agent held (SIGSTOP) while groupwait's
#   tasks make their calls, the reply waits for it, and by the reply A
#   has every event each task recorded (2 per call made plus the begun
#   receive: groupwait's own count);
# - host:NAME and group:NAME in stop, continue and kill: one result per
#   task, exactly the members (the kernel agrees), never pvmgs;
# - a tool that leaves: the others are told (detached, its breakpoints
#   deleted, its stops continued), nothing of it is left;
# - on a second virtual machine whose pvmgs started before pmon (so its
#   group calls wait rounds for pvmgs records that never come), the
#   flush still delivers everything, and a tool killed while its stop
#   waits for the (held) agent has that stop released once it is done.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
REQTOOL=$TOOLS/reqtool
for p in "$PROGS/pingpong" "$PROGS/groupwait" "$REQTOOL"; do
	[ -x "$p" ] || fail "missing $p"
done
command -v jq >/dev/null || fail "jq is needed"
start_pvmd
pmon_start

# --- two reqtools, fed through fifos ------------------------------------------

declare -A RT_FD RT_LINE RT_PID
# rt_start NAME [FLAGS]: reqtool NAME, its input the fifo $RUN/NAME.in,
# its output $RUN/NAME.out.
rt_start() {
	local name=$1 fd
	shift
	mkfifo "$RUN/$name.in" || fail "mkfifo"
	# Opened read-write first, so that neither open waits for the other.
	exec {fd}<>"$RUN/$name.in"
	RT_FD[$name]=$fd
	# Not through bg: a background job's stdin would be /dev/null.
	"$REQTOOL" "$@" "$name" <"$RUN/$name.in" >"$RUN/$name.out" \
	    2>"$RUN/$name.err" &
	RT_PID[$name]=$!
	PM_BG_PIDS="$PM_BG_PIDS $!"
	RT_LINE[$name]=0
	rt "$name" breakpoints	# its hello has been read
}

# rt_send NAME LINE: one input line, not waited for; its number in RT_N.
rt_send() {
	RT_LINE[$1]=$((RT_LINE[$1] + 1))
	RT_N=${RT_LINE[$1]}
	printf '%s\n' "$2" >&"${RT_FD[$1]}"
}

# rt_result NAME N: the output line of input line N, if it came.
rt_result() { grep -m1 "^{\"line\":$2," "$RUN/$1.out"; }

# rt NAME LINE: sends LINE and waits for its result, in $R.
rt() {
	rt_send "$1" "$2"
	wait_for 20 rt_result "$1" "$RT_N" >/dev/null ||
	    fail "$1: no answer to \"$2\": $(tail -n 5 "$RUN/$1.out") $(cat "$RUN/$1.err")"
	R=$(rt_result "$1" "$RT_N")
}

# ok NAME LINE: rt, and the request must succeed; its reply in $R.
ok() {
	rt "$1" "$2"
	jq -e '.status == "ok"' <<<"$R" >/dev/null || fail "$1: $2: $R"
	R=$(jq -c .reply <<<"$R")
}

# refused NAME LINE PATTERN: the request must fail with an error matching
# PATTERN.
refused() {
	rt "$1" "$2"
	jq -e --arg p "$3" '.status == "error" and (.error | test($p))' \
	    <<<"$R" >/dev/null || fail "$1: $2: want an error like \"$3\": $R"
}

# waited NAME KIND: the tool takes its next notice of KIND (or its next
# "snapshot"), waiting for it if need be; the notice in $R.
waited() {
	if [ "$2" = snapshot ]; then rt "$1" wait-snapshot
	else rt "$1" "wait-notice $2"; fi
	jq -e 'has("waited")' <<<"$R" >/dev/null ||
	    fail "$1: no $2: $(tail -n 5 "$RUN/$1.out")"
	R=$(jq -c '.notice // .snapshot' <<<"$R")
}

# notices NAME KIND: how many notices of KIND the tool got so far.
notices() {
	jq -s --arg k "$2" 'map(select(.notice == $k)) | length' \
	    <"$RUN/$1.out"
}

rt_start A -s
rt_start B
expect_eq "breakpoints at the start" '{"breakpoints":[]}' \
    "$(jq -c .reply <<<"$R")"
a_id=$(jq -s 'map(select(.notice == "attached" and .name == "A"))[0].tool' \
    <"$RUN/A.out")
b_id=$(jq -s 'map(select(.notice == "attached" and .name == "B"))[0].tool' \
    <"$RUN/A.out")
[ "$a_id" -gt 0 ] && [ "$b_id" -gt 0 ] && [ "$a_id" != "$b_id" ] ||
    fail "tool ids: A $a_id, B $b_id: $(cat "$RUN/A.out")"

# --- 1. enable, disable, delete: the owner's alone ---------------------------

ok A 'on enter pvm_send tag 3 do notify'
bp=$(jq .id <<<"$R")
waited B breakpoint
jq -e --argjson a "$a_id" --argjson b "$bp" '.what == "added" and .tool == $a
    and .id == $b and .text == "on enter pvm_send tag 3 do notify"' \
    <<<"$R" >/dev/null || fail "B's notice of A's breakpoint: $R"
ok A "disable $bp"
waited B breakpoint
jq -e '.what == "disabled"' <<<"$R" >/dev/null || fail "disable notice: $R"
for verb in enable disable delete; do
	refused B "$verb $bp" "^breakpoint $bp belongs to tool $a_id\$"
done
refused B "delete 999" '^no breakpoint 999$'
ok B breakpoints
jq -e --argjson a "$a_id" --argjson b "$bp" '.breakpoints == [{"id": $b,
    "tool": $a, "enabled": false, "hits": 0,
    "text": "on enter pvm_send tag 3 do notify"}]' <<<"$R" >/dev/null ||
    fail "B's list with A's disabled breakpoint: $R"

# Disabled: pingpong's worker sends its pongs (tag 3) unhindered.
rounds=4
pmon_exec "$PROGS/pingpong" 1 "$rounds" 16 "$RUN/pp1.log" ||
    fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
ok A flush
ok A breakpoints
expect_eq "hits while disabled" 0 "$(jq '.breakpoints[0].hits' <<<"$R")"
expect_eq "hit notices while disabled" 0 "$(notices A hit)"

ok A "enable $bp"
waited B breakpoint
jq -e '.what == "enabled"' <<<"$R" >/dev/null || fail "enable notice: $R"
ok B breakpoints
jq -e '.breakpoints[0].enabled == true' <<<"$R" >/dev/null ||
    fail "B's list after enable: $R"
pmon_exec "$PROGS/pingpong" 1 "$rounds" 16 "$RUN/pp2.log" ||
    fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
worker=$(awk '$1 == "worker" { print $2 }' "$RUN/pp2.log")
ok A flush
ok A breakpoints
expect_eq "hits while enabled (one per pong)" "$rounds" \
    "$(jq '.breakpoints[0].hits' <<<"$R")"
expect_eq "A's hit notices (hits 1 to $rounds, all the worker's)" \
    "$(seq -s, 1 "$rounds")" "$(jq -rs --argjson b "$bp" --argjson w "$worker" \
    '[.[] | select(.notice == "hit" and .breakpoint == $b and .tid == $w) |
    .hits] | map(tostring) | join(",")' <"$RUN/A.out")"
ok A "delete $bp"
waited B breakpoint
jq -e '.what == "deleted"' <<<"$R" >/dev/null || fail "delete notice: $R"
ok B breakpoints
expect_eq "breakpoints after delete" '{"breakpoints":[]}' "$R"
refused A "enable $bp" "^no breakpoint $bp\$"
expect_eq "hit notices B got (notify is for the owner)" 0 "$(notices B hit)"

# --- 2. snapshot, notify and count actions -------------------------------------

# The worker stops before its first pong: A, alone, gets the state there
# and a hit; the recv trigger and the in-task leave trigger count on to
# the end.
rt A clear
ok A 'on enter pvm_send tag 3 do stop, snapshot, notify'
bp=$(jq .id <<<"$R")
ok A 'on recv tag 2 do count'
recv_bp=$(jq .id <<<"$R")
ok A 'on leave pvm_recv tag 2 do count'
leave_bp=$(jq .id <<<"$R")
for i in 1 2 3; do waited B breakpoint; done
f=$RUN/pp3.log
bg timeout 60 "$PMON" exec "$PROGS/pingpong" 1 "$rounds" 16 "$f" \
    >"$RUN/pp3.out" 2>"$RUN/pp3.err"
EXEC_PID=$BG_PID
waited A snapshot
snap=$R
waited A hit
hit=$R
waited A stopped
wait_for 10 eval '[ "$(grep -c "^[mw]" "$f")" = 2 ]' ||
    fail "pingpong did not start: $(cat "$f" "$RUN/pp3.err")"
worker=$(awk '$1 == "worker" { print $2 }' "$f")
master=$(awk '$1 == "master" { print $2 }' "$f")
jq -e --argjson w "$worker" --argjson b "$bp" '.tasks == [$w] and
    .breakpoint == $b' <<<"$R" >/dev/null || fail "A's stop notice: $R"
jq -e --argjson w "$worker" --argjson b "$bp" '.breakpoint == $b and
    .tid == $w and .hits == 1' <<<"$hit" >/dev/null || fail "the hit: $hit"
# The snapshot is the state at the breakpoint: the worker stopped before
# its pong (INIT and a ping received, nothing sent), the BREAK its last
# event; the master has sent INIT and the ping and received nothing
# (waiting for the pong, unless it has not got to pvm_recv yet).
jq -e --argjson w "$worker" --argjson m "$master" --argjson b "$bp" \
    --argjson a "$a_id" '.tasks[] | select(.tid == $w) |
    .state == "stopped" and .stopped.tool == $a and
    .stopped.breakpoint == $b and .stopped.at.call == "pvm_send" and
    .stopped.at.phase == "before" and .stopped.at.peer == $m and
    .stopped.at.tag == 3 and .sent.msgs == 0 and .received.msgs == 2 and
    .stopped.at.event == "\($w):\(.last_seq)"' <<<"$snap" >/dev/null ||
    fail "the worker in the snapshot: $(jq -c --argjson w "$worker" \
    '.tasks[] | select(.tid == $w)' <<<"$snap")"
jq -e --argjson w "$worker" --argjson m "$master" '(.tasks[] |
    select(.tid == $m) | .sent.msgs == 2 and .received.msgs == 0 and
    (.state == "running" or (.state == "blocked" and .blocked.in ==
    "pvm_recv" and .blocked.from == $w and .blocked.tag == 3))) and
    .position["\($w)"] == (.tasks[] | select(.tid == $w) | .last_seq)' \
    <<<"$snap" >/dev/null ||
    fail "the master in the snapshot: $(jq -c --argjson m "$master" \
    '.tasks[] | select(.tid == $m)' <<<"$snap")"
# B is told of the stop, not of the hit.
waited B stopped
jq -e --argjson w "$worker" --argjson a "$a_id" '.tasks == [$w] and
    .tool == $a' <<<"$R" >/dev/null || fail "B's stop notice: $R"
# Once disabled, the breakpoint lets the other pongs go.
ok A "disable $bp"
ok A "continue t$(printf %x "$worker")"
jq -e --arg o "t$(printf %x "$worker")" --argjson w "$worker" '.results ==
    [{"object": $o, "tid": $w, "status": "continued"}]' <<<"$R" >/dev/null ||
    fail "A's continue: $R"
wait "$EXEC_PID" || fail "pingpong exited with $?: $(cat "$RUN/pp3.err")"
EXEC_PID=""
ok A flush
ok A breakpoints
jq -e --argjson b "$bp" --argjson r "$recv_bp" --argjson l "$leave_bp" \
    --argjson n "$rounds" '[.breakpoints[] | {id, hits}] == [{"id": $b,
    "hits": 1}, {"id": $r, "hits": $n}, {"id": $l, "hits": $n}]' \
    <<<"$R" >/dev/null || fail "hits: one stop, $rounds pings received: $R"
expect_eq "snapshots A got" 1 "$(grep -c '^{"snapshot"' "$RUN/A.out")"
expect_eq "hit notices A got in all" $((rounds + 1)) "$(notices A hit)"
expect_eq "snapshots B got" 0 "$(grep -c '^{"snapshot"' "$RUN/B.out")"
expect_eq "hit notices B got" 0 "$(notices B hit)"
for b in "$bp" "$recv_bp" "$leave_bp"; do ok A "delete $b"; done

# --- 3. flush: the reply waits for the events ---------------------------------

# held_flush TOOL: groupwait, a master and k workers.  With the agent
# held, the first g workers join a group and every task makes its burst
# of calls; TOOL's flush request cannot be answered until the agent
# drains their rings, and when it is, TOOL has every event they
# recorded, the joins (which the coordinator may hold for rounds) and
# all that follows them included, and the model has the group.  Leaves
# groupwait blocked in pvm_recv (EXEC_PID), its log in $f, its tids in
# $members and $others.
k=3 g=2 n=150
held_flush() {
	local tool=$1 line pids
	f=$RUN/gw.$VM_N.log
	bg timeout 60 "$PMON" exec "$PROGS/groupwait" "$k" "$g" "$n" "$f" \
	    >"$RUN/gw.out" 2>"$RUN/gw.err"
	EXEC_PID=$BG_PID
	wait_for 20 eval '[ "$(grep -c "^task" "$f" 2>/dev/null)" = $((k + 1)) ]' ||
	    fail "groupwait did not start: $(cat "$f" "$RUN/gw.err" 2>&1)"
	members=$(awk '$1 == "task" && $5 == "member" { print $3 }' "$f" | sort -n)
	others=$(awk '$1 == "task" && $5 == "other" { print $3 }' "$f" | sort -n)
	expect_eq "groupwait members" "$g" "$(echo "$members" | wc -w)"
	AGENT_PID=$(sock_pid "$(agent_sock)")
	[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"
	kill -STOP "$AGENT_PID"
	: >"$f.go"
	wait_for 20 eval '[ "$(grep -c "^burst" "$f")" = $((k + 1)) ]' ||
	    held_fail "no burst: $(cat "$f" "$RUN/gw.err")"
	pids=$(awk '$1 == "task" { print $4 }' "$f")
	wait_for 10 in_recv $pids || held_fail "groupwait's tasks are not \
in pvm_recv: $(for p in $pids; do echo "$p: $(cat /proc/$p/syscall)"; done)"
	rt_send "$tool" flush
	line=$RT_N
	sleep 0.5
	rt_result "$tool" "$line" >/dev/null && held_fail "the flush was \
answered with the agent stopped: $(tail -n 3 "$RUN/$tool.out")"
	kill -CONT "$AGENT_PID"
	wait_for 20 rt_result "$tool" "$line" >/dev/null ||
	    fail "no reply to the flush: $(tail -n 3 "$RUN/$tool.out")"
	R=$(rt_result "$tool" "$line")
	jq -e '.status == "ok" and .reply == {}' <<<"$R" >/dev/null ||
	    fail "the flush reply: $R"
	# Each task: a begin and an end per call it made, and the begun
	# pvm_recv; nothing missing before (the last seq is the count).
	want=$(awk '$1 == "burst" { printf "%s %d\n", $3, 2 * $4 + 1 }' "$f" |
	    sort)
	got=$(jq -r --argjson t "$(awk '$1 == "burst" { print $3 }' "$f" |
	    jq -s .)" '$t[] as $x | "\($x) \(.events["\($x)"] // 0)"' \
	    <<<"$R" | sort)
	expect_eq "events $tool has of each groupwait task by the flush reply" \
	    "$want" "$got"
	jq -e '. as $r | all(.events | keys[]; $r.events[.] == $r.last[.])' \
	    <<<"$R" >/dev/null || fail "a task's events have gaps: $R"
	ok "$tool" groups
	expect_eq "the group's members by the flush reply" \
	    "$(jq -sc . <<<"$members")" "$(jq -c '[.groups[] |
	    select(.name == "groupwait") | .members[].tid] | sort' <<<"$R")"
}
# Until the agent continues, a failure must continue it first.
held_fail() {
	kill -CONT "$AGENT_PID"
	fail "$@"
}
# A task has begun its last call when it sleeps in select() without a
# timeout (libpvm's wait in pvm_recv).
in_recv() {
	local p
	for p in "$@"; do
		awk '($1 == 23 || $1 == 270) && $6 == "0x0" { ok = 1 }
		    END { exit !ok }' "/proc/$p/syscall" 2>/dev/null || return 1
	done
}
VM_N=1
held_flush A

# --- 4. host: and group: objects; a tool that leaves ---------------------------

proc_state() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $1 }'; }
pid_of() { awk -v t="$1" '$1 == "task" && $3 == t { print $4 }' "$f"; }
# states TIDS...: the kernel's state of each task, "T" when stopped.
states() {
	local t
	for t in "$@"; do printf '%s ' "$(proc_state "$(pid_of "$t")")"; done
}
# Waits until the tasks TIDS show STATE (T) or do not (!T).
in_state() {
	local want=$1 t s
	shift
	for t in "$@"; do
		s=$(proc_state "$(pid_of "$t")")
		if [ "$want" = T ]; then [ "$s" = T ] || return 1
		else [ -n "$s" ] && [ "$s" != T ] || return 1; fi
	done
}
# results OP TIDS: the reply of OP has exactly one result per task of
# TIDS, each with that status, for the object named in OBJ.
results() {
	jq -e --arg o "$OBJ" --arg st "$1" --argjson t "$(jq -sc 'sort' <<<"$2")" \
	    '([.results[].tid] | sort) == $t and all(.results[]; .object == $o
	    and .status == $st)' <<<"$R" >/dev/null
}
all=$(printf '%s\n' $members $others | sort -n)
ok B snapshot
host=$(jq -r --argjson t "$(echo "$all" | head -n 1)" '.tasks[] |
    select(.tid == $t) | .host' <<<"$R")
gs=$(jq '[.tasks[] | select(.program == "pvmgs" and .state != "exited")] |
    if length == 1 then .[0].pid else empty end' <<<"$R")
[ -n "$host" ] && [ -n "$gs" ] || fail "no host or pvmgs in B's snapshot: $R"

# B stops the group: its members, and no other task.
OBJ=group:groupwait
ok B "stop $OBJ"
results stopped "$members" || fail "stop $OBJ: $R"
wait_for 5 in_state T $members || fail "members not stopped: $(states $members)"
in_state '!T' $others || fail "non-members stopped: $(states $others)"
waited A stopped
jq -e --argjson b "$b_id" --argjson t "$(jq -sc . <<<"$members")" \
    '.tool == $b and (.tasks | sort) == $t' <<<"$R" >/dev/null ||
    fail "A's notice of B's stop: $R"
rt A "continue $OBJ"
jq -e --argjson t "$(jq -sc . <<<"$members")" '.reply.results | length ==
    ($t | length) and all(.[]; .status == "error" and .error ==
    "stopped by another tool: \"continue force\" overrides")' <<<"$R" \
    >/dev/null || fail "A may not continue B's stop: $R"
in_state T $members || fail "members continued by A: $(states $members)"
ok B "continue $OBJ"
results continued "$members" || fail "continue $OBJ: $R"
wait_for 5 in_state '!T' $members || fail "members still stopped: $(states $members)"

# A stops the host: every task of it but pvmgs.
OBJ=host:$host
ok A "stop $OBJ"
results stopped "$all" || fail "stop $OBJ: $R"
wait_for 5 in_state T $all || fail "tasks not stopped: $(states $all)"
[ "$(proc_state "$gs")" != T ] || fail "pvmgs stopped"
rt B "continue $OBJ"
jq -e --argjson t "$(jq -sc . <<<"$all")" '.reply.results | length ==
    ($t | length) and all(.[]; .status == "error")' <<<"$R" >/dev/null ||
    fail "B may not continue A's stop: $R"
ok B "stop host:nosuch, group:nosuch"
expect_eq "objects that name no task" \
    '[{"object":"host:nosuch","status":"error","error":"names no live task"},{"object":"group:nosuch","status":"error","error":"names no live task"}]' \
    "$(jq -c .results <<<"$R")"

# A leaves with its stops and breakpoints: B is told, nothing is left.
rt B clear
ok A 'on enter pvm_send do stop'
ok A 'on exit do notify'
for i in 1 2; do
	waited B breakpoint
	jq -e '.what == "added"' <<<"$R" >/dev/null || fail "added: $R"
done
rt_send A quit
wait "${RT_PID[A]}" || fail "reqtool A exited with $?: $(cat "$RUN/A.err")"
waited B detached
jq -e --argjson a "$a_id" '.tool == $a and .name == "A"' <<<"$R" \
    >/dev/null || fail "detached notice: $R"
for i in 1 2; do
	waited B breakpoint
	jq -e --argjson a "$a_id" '.tool == $a and .what == "deleted"' \
	    <<<"$R" >/dev/null || fail "A's breakpoints should go: $R"
done
waited B continued
jq -e --argjson a "$a_id" --argjson t "$(jq -sc . <<<"$all")" '.tool == $a
    and (.tasks | sort) == $t' <<<"$R" >/dev/null ||
    fail "A's stops should be released: $R"
wait_for 5 in_state '!T' $all || fail "tasks still stopped: $(states $all)"
ok B breakpoints
expect_eq "breakpoints after A left" '{"breakpoints":[]}' "$R"

# B kills the host's tasks; pvmgs lives on.
ok B "kill $OBJ"
results killed "$all" || fail "kill $OBJ: $R"
for t in $all; do
	wait_for 5 pid_dead "$(pid_of "$t")" || fail "t$t not killed"
done
pid_alive "$gs" || fail "pvmgs was killed"
wait "$EXEC_PID" 2>/dev/null
EXEC_PID=""
rt_send B quit
wait "${RT_PID[B]}" || fail "reqtool B exited with $?: $(cat "$RUN/B.err")"
pmon_shutdown
stop_pid "$PVMD_PID"

# --- 5. flush with pvmgs not monitored; a tool leaves during its stop -----------

# A virtual machine whose pvmgs started before pmon (gexample, run
# plainly): groupwait's joins then wait rounds for pvmgs records that
# never come, and the flush must still deliver them.
export PVM_TMP=$RUN/vm2
mkdir -p "$PVM_TMP"
start_pvmd
printf '3\n2\n' | timeout 20 gexample >"$RUN/gexample.out" 2>&1 ||
    fail "gexample without pmon: $(cat "$RUN/gexample.out")"
pmon_start
rt_start C -s
VM_N=2
held_flush C
all=$(printf '%s\n' $members $others | sort -n)

# A tool that leaves while its stop is under way: once the stop is done,
# the tasks go on (the agent is held so that the stop cannot end first).
rt_start D
d_id=$(jq -s 'map(select(.notice == "attached" and .name == "D"))[0].tool' \
    <"$RUN/C.out")
rt C clear
kill -STOP "$AGENT_PID"
rt_send D 'stop *'
sleep 0.3
kill -TERM "${RT_PID[D]}"
wait "${RT_PID[D]}" 2>/dev/null
waited C detached
kill -CONT "$AGENT_PID"
waited C stopped
jq -e --argjson d "$d_id" --argjson t "$(jq -sc . <<<"$all")" '.tool == $d
    and (.tasks | sort) == $t' <<<"$R" >/dev/null || fail "D's stop: $R"
waited C continued
jq -e --argjson d "$d_id" --argjson t "$(jq -sc . <<<"$all")" '.tool == $d
    and (.tasks | sort) == $t' <<<"$R" >/dev/null ||
    fail "D's stop should be released: $R"
wait_for 5 in_state '!T' $all || fail "tasks still stopped: $(states $all)"
OBJ='*'
ok C "kill $OBJ"
results killed "$all" || fail "kill *: $R"
wait "$EXEC_PID" 2>/dev/null
EXEC_PID=""
rt_send C quit
wait "${RT_PID[C]}" || fail "reqtool C exited with $?: $(cat "$RUN/C.err")"
pmon_shutdown
pass
