#!/bin/bash
# Protects the problem reports: programs with one planted problem each
# (a deadlocked pair, a cycle of three, a message race, a barrier left by
# an exited member, a message never received, a message unpacked with
# other types than it was packed with) are reported exactly --
# the right kind, the right tasks, nothing else -- by `pmon problems`,
# the same objects reach `pmon trace` once each, `pmon snapshot` shows
# the blocked tasks as the kernel sees them, and programs without
# problems (master1, gexample, msgmix, a token ring polled while it
# runs) are reported clean.  Every program runs in a fresh virtual
# machine.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
for p in deadpair cycle3 wildrace barrierexit unreceived badunpack ring \
    msgmix; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
command -v jq >/dev/null || fail "jq is needed"

PROBLEM_SECS=10		# how long a planted problem may take to show up

# --- one virtual machine per program ----------------------------------------

# vm_start NAME: a fresh pvmd with pmon and a trace, in $RUN/NAME.
vm_start() {
	VM=$1
	export PVM_TMP=$RUN/$VM
	mkdir -p "$PVM_TMP"
	start_pvmd
	pmon_start
	pmon_trace "$RUN/$VM.trace.json"
	EXEC_PID=""
}

# The processes of the current virtual machine (tasks, agents, daemons).
vm_pids() {
	(
		unset PVM_TMP PMON_TEST_RUN
		grep -lzE "^PVM_TMP=$RUN/$VM\$" /proc/[0-9]*/environ \
		    2>/dev/null | sed 's|^/proc/\([0-9]*\)/environ$|\1|' |
		    grep -vx "$$"
	)
}
vm_empty() { [ -z "$(vm_pids)" ]; }

# vm_stop: pmon first (its trace must end cleanly), then pvmd, which
# kills the tasks still blocked; the program's pmon exec then ends.
vm_stop() {
	pmon_shutdown "$TRACE_PID"
	stop_pid "$PVMD_PID" 5 || pm_log "pvmd $PVMD_PID needed SIGKILL"
	if [ -n "$EXEC_PID" ]; then
		wait_for 10 pid_dead "$EXEC_PID" ||
		    fail "$VM: pmon exec still runs after pvmd halted"
		wait "$EXEC_PID" 2>/dev/null
	fi
	wait_for 5 vm_empty ||
	    fail "$VM: processes survived the virtual machine: $(vm_pids)"
}

# exec_bg PROG ARGS: a program that never ends, in the background.
exec_bg() {
	local name
	name=$(basename "$1")
	bg $PM_ON timeout 60 "$PMON" exec "$@" >"$RUN/$name.out" \
	    2>"$RUN/$name.err"
	EXEC_PID=$BG_PID
}

# lines_of FILE N: FILE exists and has at least N lines.
lines_of() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

# wait_tids FILE N: waits until the program wrote its N lines.
wait_tids() {
	wait_for 20 lines_of "$1" "$2" ||
	    fail "$VM: expected $2 lines in $1, got: $(cat "$1" 2>&1)
$(cat "$RUN/$VM.err" 2>/dev/null)"
}

# tid_of FILE ROLE [FIELD]: field FIELD (default 2: the tid) of the line
# of ROLE.
tid_of() { awk -v r="$2" -v f="${3:-2}" '$1 == r { print $f; exit }' "$1"; }

# --- queries -----------------------------------------------------------------

# query CMD FILE: `pmon CMD --json` into FILE; fails on an error or
# output that is not one JSON object.
query() {
	$PM_ON timeout 20 "$PMON" "$1" --json </dev/null >"$2" 2>"$2.err" ||
	    fail "pmon $1 --json failed ($?): $(cat "$2.err")"
	jq -e 'type == "object" and (.position | type == "object")' "$2" \
	    >/dev/null 2>&1 ||
	    fail "pmon $1 --json: not an object with a position: $(head -c 2000 "$2")"
}

problems_match() {
	query problems "$1"
	jq -e "$2" "$1" >/dev/null
}

# wait_problems FILE JQ: polls `pmon problems --json` into FILE until the
# jq condition JQ holds (PROBLEM_SECS at most), then queries once more:
# the final answer must be the same list -- a problem is found once.
wait_problems() {
	local i=0 limit=$((PROBLEM_SECS * 4))
	until problems_match "$1" "$2"; do
		i=$((i + 1))
		[ "$i" -ge "$limit" ] && fail "$VM: no problems matching $2 \
after ${PROBLEM_SECS}s; pmon problems said: $(jq -c .problems "$1")"
		sleep 0.25
	done
	cp "$1" "$1.first"
	query problems "$1"
	[ "$(jq -cS '.problems | sort' "$1.first")" = \
	    "$(jq -cS '.problems | sort' "$1")" ] ||
	    fail "$VM: problems changed on a second query:
first:  $(jq -c .problems "$1.first")
second: $(jq -c .problems "$1")"
	pm_log "$VM: $(jq -c .problems "$1")"
}

# expect_jq WHAT FILE JQ [ARGS...]: the jq condition holds for FILE.
expect_jq() {
	local what=$1 file=$2 cond=$3
	shift 3
	jq -e "$@" "$cond" "$file" >/dev/null ||
	    fail "$VM: $what; pmon said: $(jq -c .problems "$file")"
}

# expect_no_problems WHEN: `pmon problems` lists nothing.
expect_no_problems() {
	local f=$RUN/$VM.clean.json
	query problems "$f"
	[ "$(jq '.problems | length' "$f")" = 0 ] ||
	    fail "$VM: problems reported $1: $(jq -c .problems "$f")"
}

# trace_problems_agree FILE: after vm_stop, the problem lines of the
# trace are exactly the problems `pmon problems` listed in FILE, each
# once.
trace_problems_agree() {
	local tr=$RUN/$VM.trace.json
	jq -cS 'select(.type == "problem") | del(.type)' "$tr" | sort \
	    >"$tr.problems"
	jq -cS '.problems[] | del(.over)' "$1" | sort >"$1.lines"
	cmp -s "$tr.problems" "$1.lines" || fail "$VM: the trace's problem \
lines differ from pmon problems:
trace: $(cat "$tr.problems")
pmon problems: $(cat "$1.lines")"
}

# The jq helpers: ids are "TID:SEQ" strings.
JQ_DEFS='
def tid_of: split(":")[0] | tonumber;
def open_cycle: if length > 1 and .[0] == .[-1] then .[:-1] else . end;
def rotation_of($e): . as $c | ($c | length) == ($e | length) and
    any(range(0; $e | length); ($e[.:] + $e[:.]) == $c);
'

# --- the state of a blocked task, in the snapshot and in the kernel ----------

# expect_blocked SNAP TID PID JQ: the snapshot's task TID is blocked as
# JQ says (a condition on .blocked), with pid PID, and the kernel agrees
# that the process sleeps and uses no CPU.
expect_blocked() {
	local snap=$1 tid=$2 pid=$3 cond=$4 t
	t=$(jq -c --argjson t "$tid" '.tasks[] | select(.tid == $t)' "$snap")
	[ -n "$t" ] || fail "$VM: task $tid not in the snapshot"
	jq -e --argjson p "$pid" ".state == \"blocked\" and .pid == \$p and
	    (.blocked | $cond)" <<<"$t" >/dev/null ||
	    fail "$VM: task $tid (pid $pid) should be blocked with $cond: $t"
	expect_sleeping "$pid" "$tid"
}

# The process sleeps (state S in /proc/PID/stat) at every look over half
# a second and its CPU time stays the same (1 tick of slack): it waits,
# it does not poll.  /proc/PID/wchan reads 0 in containers, so the state
# letter is the kernel's word here.
expect_sleeping() {
	local pid=$1 tid=$2 i st cpu0 cpu1
	cpu0=$(proc_cpu "$pid")
	for i in 1 2 3 4 5; do
		st=$(proc_state "$pid")
		[ "$st" = S ] || fail "$VM: task $tid (pid $pid) is in state \
'$st', not sleeping"
		sleep 0.1
	done
	cpu1=$(proc_cpu "$pid")
	[ $((cpu1 - cpu0)) -le 1 ] ||
	    fail "$VM: task $tid (pid $pid) used CPU while blocked: $cpu0 -> $cpu1"
}

# Fields of /proc/PID/stat after the command name (which may hold spaces):
# 1 is the state, 12 and 13 utime and stime.
proc_stat() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null; }
proc_state() { proc_stat "$1" | awk '{ print $1 }'; }
proc_cpu() { proc_stat "$1" | awk '{ print $12 + $13 }'; }

# --- deadpair: two tasks each receiving from the other ----------------------

test_deadpair() {
	local f=$RUN/deadpair.tids p c pp cp lo hi line
	vm_start deadpair
	exec_bg "$PROGS/deadpair" "$f"
	wait_tids "$f" 2
	p=$(tid_of "$f" parent) c=$(tid_of "$f" child)
	pp=$(tid_of "$f" parent 3) cp=$(tid_of "$f" child 3)
	wait_problems "$RUN/deadpair.json" \
	    '[.problems[] | select(.kind == "deadlock")] | length >= 1'
	expect_jq "one deadlock and nothing else" "$RUN/deadpair.json" \
	    '.problems | length == 1 and .[0].kind == "deadlock"'
	expect_jq "the deadlock is the cycle of parent $p and child $c" \
	    "$RUN/deadpair.json" "$JQ_DEFS"'.problems[0] |
	    .tasks == ([$p, $c] | sort) and (has("chain") | not) and
	    (.cycle | open_cycle | rotation_of([$p, $c])) and
	    (.waits | map({tid, in, from, tag}) | sort_by(.tid)) ==
	    ([{tid: $p, in: "pvm_recv", from: $c, tag: 1},
	    {tid: $c, in: "pvm_recv", from: $p, tag: 1}] | sort_by(.tid))' \
	    --argjson p "$p" --argjson c "$c"

	query snapshot "$RUN/deadpair.snap"
	expect_blocked "$RUN/deadpair.snap" "$p" "$pp" \
	    ".in == \"pvm_recv\" and .from == $c and .tag == 1"
	expect_blocked "$RUN/deadpair.snap" "$c" "$cp" \
	    ".in == \"pvm_recv\" and .from == $p and .tag == 1"

	# A kill ends the deadlock: it is history, listed as over after the
	# problems of now, and so is anything the first death left behind
	# (the other waiting on an exited task) once both are gone.
	$PM_ON timeout 20 "$PMON" kill "$p,$c" </dev/null \
	    >"$RUN/deadpair.kill" 2>&1 ||
	    fail "pmon kill $p,$c: $(cat "$RUN/deadpair.kill")"
	wait_problems "$RUN/deadpair.over.json" '([.problems[] |
	    select(.kind == "deadlock" and .over == true)] | length == 1) and
	    ([.problems[] | select(.over != true)] | length == 0)'
	$PM_ON timeout 20 "$PMON" problems </dev/null \
	    >"$RUN/deadpair.over.txt" 2>&1 ||
	    fail "pmon problems: $(cat "$RUN/deadpair.over.txt")"
	lo=$((p < c ? p : c)) hi=$((p < c ? c : p))
	line='deadlock (over) t%x t%x: t%x in pvm_recv(t%x,1) t%x in pvm_recv(t%x,1)'
	# shellcheck disable=SC2059
	expect_eq "the deadlock's line once over" "$(printf "$line" "$lo" "$hi" \
	    "$lo" "$hi" "$hi" "$lo")" "$(grep '^deadlock' \
	    "$RUN/deadpair.over.txt")"
	vm_stop
	trace_problems_agree "$RUN/deadpair.over.json"
}

# --- cycle3: A waits for B, B for C, C for A --------------------------------

test_cycle3() {
	local f=$RUN/cycle3.tids a b c r
	vm_start cycle3
	exec_bg "$PROGS/cycle3" "$f"
	wait_tids "$f" 3
	a=$(tid_of "$f" a) b=$(tid_of "$f" b) c=$(tid_of "$f" c)
	wait_problems "$RUN/cycle3.json" \
	    '[.problems[] | select(.kind == "deadlock")] | length >= 1'
	expect_jq "one deadlock and nothing else" "$RUN/cycle3.json" \
	    '.problems | length == 1 and .[0].kind == "deadlock"'
	expect_jq "the deadlock is the cycle $a -> $b -> $c -> $a (each \
waits for the next)" "$RUN/cycle3.json" "$JQ_DEFS"'.problems[0] |
	    .tasks == ([$a, $b, $c] | sort) and (has("chain") | not) and
	    (.cycle | open_cycle | rotation_of([$a, $b, $c])) and
	    (.waits | map({tid, in, from, tag}) | sort_by(.tid)) ==
	    ([{tid: $a, in: "pvm_recv", from: $b, tag: 2},
	    {tid: $b, in: "pvm_recv", from: $c, tag: 2},
	    {tid: $c, in: "pvm_recv", from: $a, tag: 2}] | sort_by(.tid))' \
	    --argjson a "$a" --argjson b "$b" --argjson c "$c"
	query snapshot "$RUN/cycle3.snap"
	for r in a b c; do
		expect_blocked "$RUN/cycle3.snap" "$(tid_of "$f" $r)" \
		    "$(tid_of "$f" $r 3)" \
		    ".in == \"pvm_recv\" and .from == $(tid_of "$f" $r 4) and
		    .tag == 2"
	done
	vm_stop
	trace_problems_agree "$RUN/cycle3.json"
}

# --- wildrace: a wildcard receive between two concurrent sends --------------

test_wildrace() {
	local f=$RUN/wildrace.tids j=$RUN/wildrace.json tr r s1 s2 s first recv
	vm_start wildrace
	pmon_exec "$PROGS/wildrace" "$f" ||
	    fail "wildrace exited with $?: $(cat "$RUN/wildrace.err")"
	wait_tids "$f" 5
	r=$(tid_of "$f" receiver) first=$(tid_of "$f" first)
	s1=$(awk '$1 == "sender" { print $2 }' "$f" | sort -n | head -n 1)
	s2=$(awk '$1 == "sender" { print $2 }' "$f" | sort -n | tail -n 1)
	wait_problems "$j" '[.problems[] | select(.kind == "race")] |
	    length >= 1'
	expect_jq "one race and nothing else" "$j" \
	    '.problems | length == 1 and .[0].kind == "race"'
	expect_jq "the race is at receiver $r between senders $s1 and $s2" \
	    "$j" "$JQ_DEFS"'.problems[0] | .tid == $r and
	    (.recv | tid_of) == $r and
	    (.sends | length == 2 and (map(tid_of) | sort) == [$s1, $s2])' \
	    --argjson r "$r" --argjson s1 "$s1" --argjson s2 "$s2"
	vm_stop
	trace_problems_agree "$j"

	# The ids name the events: the receiver's wildcard pvm_recv (begin or
	# end), which got the message of the sender wildrace saw first, and
	# the two pvm_sends to the receiver.
	tr=$RUN/wildrace.trace.json
	recv=$(jq -r '.problems[0].recv' "$j")
	jq -se --arg id "$recv" --argjson r "$r" --argjson first "$first" '
	    (map(select(.id == $id))[0]) as $e |
	    $e.call == "pvm_recv" and $e.tid == $r and
	    (map(select(.tid == $r and .call == "pvm_recv" and
	    (.seq == $e.seq or .seq == $e.seq + 1 or .seq == $e.seq - 1)))
	    as $pair | ($pair | map(select(.phase == "begin"))[0].src) == -1
	    and ($pair | map(select(.phase == "end"))[0].src) == $first)' \
	    "$tr" >/dev/null ||
	    fail "wildrace: recv $recv is not the wildcard pvm_recv of $r \
that got $first's message: $(grep "\"id\":\"$recv\"" "$tr")"
	for s in $(jq -r '.problems[0].sends[]' "$j"); do
		jq -se --arg id "$s" --argjson r "$r" '
		    map(select(.id == $id))[0] | .call == "pvm_send" and
		    .dst == $r and .tag == 1' "$tr" >/dev/null ||
		    fail "wildrace: $s is not a pvm_send to $r with tag 1: \
$(grep "\"id\":\"$s\"" "$tr")"
	done
}

# --- barrierexit: two wait in a barrier for a task that exited --------------

test_barrierexit() {
	local f=$RUN/barrierexit.tids j=$RUN/barrierexit.json p w q
	vm_start barrierexit
	exec_bg "$PROGS/barrierexit" "$f"
	wait_tids "$f" 4
	p=$(tid_of "$f" parent) w=$(tid_of "$f" waiter) q=$(tid_of "$f" quitter)
	wait_problems "$j" '
	    ([.problems[] | select(.kind == "waits_on_exited")] | length) >= 2
	    and ([.problems[] | select(.kind == "deadlock")] | length) >= 1'
	expect_jq "only waits_on_exited and deadlock" "$j" \
	    '[.problems[].kind] | unique == ["deadlock", "waits_on_exited"]'
	expect_jq "parent $p and waiter $w wait in pvm_barrier on exited $q" \
	    "$j" '[.problems[] | select(.kind == "waits_on_exited")] |
	    length == 2 and (map(.tid) | sort) == ([$p, $w] | sort) and
	    all(.exited == $q and .in == "pvm_barrier")' \
	    --argjson p "$p" --argjson w "$w" --argjson q "$q"
	# One deadlock of both or one each: neither waits for the other.
	expect_jq "deadlocks of $p and $w in barrier bx, chains ending at $q" "$j" '
	    [.problems[] | select(.kind == "deadlock")] |
	    all((has("cycle") | not) and .chain[-1] == $q and
		(.chain - [$p, $w, $q] | length == 0) and
		(.tasks - [$p, $w] | length == 0) and
		(.waits | map({tid, in, group}) | sort_by(.tid)) ==
		(.tasks | map({tid: ., in: "pvm_barrier", group: "bx"}))) and
	    ([.[].tasks[]] | sort) == ([$p, $w] | sort)' \
	    --argjson p "$p" --argjson w "$w" --argjson q "$q"

	query snapshot "$RUN/barrierexit.snap"
	expect_blocked "$RUN/barrierexit.snap" "$p" "$(tid_of "$f" parent 3)" \
	    '.in == "pvm_barrier" and .group == "bx"'
	expect_blocked "$RUN/barrierexit.snap" "$w" "$(tid_of "$f" waiter 3)" \
	    '.in == "pvm_barrier" and .group == "bx"'
	jq -e --argjson q "$q" '.tasks[] | select(.tid == $q) |
	    .state == "exited"' "$RUN/barrierexit.snap" >/dev/null ||
	    fail "barrierexit: quitter $q is not exited in the snapshot: \
$(jq -c --argjson q "$q" '.tasks[] | select(.tid == $q)' \
	    "$RUN/barrierexit.snap")"
	vm_stop
	trace_problems_agree "$j"
}

# --- unreceived: a message its receiver never takes --------------------------

test_unreceived() {
	local f=$RUN/unreceived.tids j=$RUN/unreceived.json tr s r tag bytes send
	vm_start unreceived
	pmon_exec "$PROGS/unreceived" "$f" ||
	    fail "unreceived exited with $?: $(cat "$RUN/unreceived.err")"
	wait_tids "$f" 4
	s=$(tid_of "$f" sender) r=$(tid_of "$f" receiver)
	tag=$(tid_of "$f" sent 2) bytes=$(tid_of "$f" sent 3)
	wait_problems "$j" '[.problems[] | select(.kind == "unreceived")] |
	    length >= 1'
	expect_jq "one unreceived message and nothing else" "$j" \
	    '.problems | length == 1 and .[0].kind == "unreceived"'
	expect_jq "the message $s -> $r, tag $tag" "$j" "$JQ_DEFS"'
	    .problems[0] | .tid == $r and .from == $s and .tag == $tag and
	    (.send | tid_of) == $s' \
	    --argjson r "$r" --argjson s "$s" --argjson tag "$tag"
	vm_stop
	trace_problems_agree "$j"

	# The send id names the pvm_send, and the size is the one it had.
	tr=$RUN/unreceived.trace.json
	send=$(jq -r '.problems[0].send' "$j")
	jq -se --arg id "$send" --argjson r "$r" --argjson tag "$tag" \
	    --slurpfile p "$j" '
	    map(select(.id == $id))[0] as $e | $e.call == "pvm_send" and
	    $e.dst == $r and $e.tag == $tag and $e.bytes == $p[0].problems[0].bytes' \
	    "$tr" >/dev/null ||
	    fail "unreceived: send $send is not a pvm_send of \
$(jq -c '.problems[0].bytes' "$j") bytes to $r: $(grep "\"id\":\"$send\"" "$tr")"
	[ "$(jq '.problems[0].bytes' "$j")" = "$bytes" ] ||
	    fail "unreceived: $bytes raw bytes were sent, pmon says \
$(jq '.problems[0].bytes' "$j")"
}

# --- badunpack: a double unpacked as an int -----------------------------------

test_badunpack() {
	local f=$RUN/badunpack.tids j=$RUN/badunpack.json tr p c tag id
	vm_start badunpack
	pmon_exec "$PROGS/badunpack" "$f" ||
	    fail "badunpack exited with $?: $(cat "$RUN/badunpack.err")"
	wait_tids "$f" 3
	p=$(tid_of "$f" parent) c=$(tid_of "$f" child) tag=$(tid_of "$f" sent)
	wait_problems "$j" '[.problems[] | select(.kind == "unpack_mismatch")] |
	    length >= 1'
	expect_jq "one unpack mismatch and nothing else" "$j" \
	    '.problems | length == 1 and .[0].kind == "unpack_mismatch"'
	expect_jq "child $c read parent $p's double (tag $tag) as an int, \
8 bytes in" "$j" "$JQ_DEFS"'.problems[0] | .tid == $c and .from == $p and
	    .tag == $tag and .packed == "pvm_pkdouble" and
	    .unpacked == "pvm_upkint" and .offset == 8 and
	    (.send | tid_of) == $p and (.recv | tid_of) == $c and
	    (.at | tid_of) == $c' \
	    --argjson c "$c" --argjson p "$p" --argjson tag "$tag"
	vm_stop
	trace_problems_agree "$j"

	# The ids name the events: the pvm_send of the message, the
	# child's pvm_recv end that got it, and one of the child's
	# pvm_upkint events after that receive.
	tr=$RUN/badunpack.trace.json
	id=$(jq -r '.problems[0].send' "$j")
	jq -se --arg id "$id" --argjson c "$c" --argjson tag "$tag" '
	    map(select(.id == $id))[0] | .call == "pvm_send" and
	    .dst == $c and .tag == $tag' "$tr" >/dev/null ||
	    fail "badunpack: send $id is not a pvm_send to $c with tag $tag: \
$(grep "\"id\":\"$id\"" "$tr")"
	id=$(jq -r '.problems[0].recv' "$j")
	jq -se --arg id "$id" --slurpfile q "$j" '
	    map(select(.id == $id))[0] | .call == "pvm_recv" and
	    .phase == "end" and .match == $q[0].problems[0].send' \
	    "$tr" >/dev/null ||
	    fail "badunpack: recv $id is not the pvm_recv end that got \
$(jq -r '.problems[0].send' "$j"): $(grep "\"id\":\"$id\"" "$tr")"
	id=$(jq -r '.problems[0].at' "$j")
	jq -se --arg id "$id" --argjson c "$c" --slurpfile q "$j" '
	    def seq_of: split(":")[1] | tonumber;
	    map(select(.id == $id))[0] | .call == "pvm_upkint" and
	    .tid == $c and .seq > ($q[0].problems[0].recv | seq_of)' \
	    "$tr" >/dev/null ||
	    fail "badunpack: at $id is not a pvm_upkint of $c after the \
receive: $(grep "\"id\":\"$id\"" "$tr")"
}

# --- programs without problems -----------------------------------------------

# The ring runs in the background while pmon is asked for problems over
# and over: tasks blocked on a chain that ends at a running task are no
# deadlock.  The snapshots must show blocked ring tasks at least once,
# or the check proved nothing.
ring_while_running() {
	local f=$RUN/ring.tids snap=$RUN/clean.ring.snap n=4 blocked max=0
	exec_bg "$PROGS/ring" "$n" 10 "$f"
	wait_tids "$f" "$n"
	while pid_alive "$EXEC_PID"; do
		expect_no_problems "while ring runs"
		query snapshot "$snap"
		blocked=$(jq '[.tasks[] | select(.program == "ring" and
		    .state == "blocked" and .blocked.in == "pvm_recv")] |
		    length' "$snap")
		[ "${blocked:-0}" -gt "$max" ] && max=$blocked
		sleep 0.2
	done
	wait "$EXEC_PID" || fail "ring exited with $?: $(cat "$RUN/ring.err")"
	EXEC_PID=""
	expect_eq "ring tasks done" "$n" "$(grep -c '^done' "$f")"
	[ "$max" -ge 2 ] ||
	    fail "clean: the snapshots never showed 2 ring tasks blocked"
}

test_clean() {
	vm_start clean
	pmon_exec master1 || fail "master1 exited with $?"
	expect_no_problems "after master1"
	printf '3\n2\n' >"$RUN/gexample.in"
	pmon_exec gexample <"$RUN/gexample.in" || fail "gexample exited with $?"
	expect_no_problems "after gexample"
	mkdir "$RUN/msgmix"
	pmon_exec "$PROGS/msgmix" 4 "$RUN/msgmix" ||
	    fail "msgmix exited with $?: $(cat "$RUN/msgmix.err")"
	expect_no_problems "after msgmix"
	ring_while_running
	expect_no_problems "after ring"
	vm_stop
	expect_eq "problem lines in the trace" 0 \
	    "$(count_lines '"type":"problem"' "$RUN/clean.trace.json")"
}

test_deadpair
test_cycle3
test_wildrace
test_barrierexit
test_unreceived
test_badunpack
test_clean
pass
