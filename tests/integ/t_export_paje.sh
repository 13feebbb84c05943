#!/bin/bash
# Protects what a Paje viewer shows of pmon export --format=paje
# (doc/exports.md, "paje"), on recordings of master1, gexample and
# deadpair (a planted deadlock, ended by pmon kill): ViTE renders each
# file headless (vite -e) without a word on stderr or stdout, and in
# each file time 0 is the first event, the task rows are in tid order,
# one per task that had events (pvmgs has none), a call's state is its
# name, messages and spawns are links of their own types (one per
# matched receive, one per spawned task), and the deadlocked tasks stay
# in pvm_recv until the trace's end, where a deadlock and their kills
# are marked.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$PROGS/deadpair" ] || fail "missing $PROGS/deadpair"
for c in jq pj_dump; do
	command -v "$c" >/dev/null || fail "$c is needed (.ci/run installs it)"
done
command -v vite >/dev/null ||
    skip "ViTE is not installed (apt-get install vite; make test installs it)"

PROBLEM_SECS=10		# how long the planted deadlock may take to show

# vm_start NAME: a fresh pvmd with pmon, a recorder and a trace (the
# reference), in $RUN/NAME.
vm_start() {
	VM=$1
	export PVM_TMP=$RUN/$VM
	mkdir -p "$PVM_TMP"
	start_pvmd
	pmon_start
	pmon_record "$RUN/$VM.pmr" "$RUN/$VM.rec"
	pmon_trace "$RUN/$VM.json"
}

# vm_stop: pmon (the recorder and the trace end), then pvmd; then the
# export of the recording, which must say nothing.
vm_stop() {
	pmon_shutdown "$TRACE_PID"
	wait_for 10 pid_dead "$REC_PID" || fail "$VM: pmon record did not exit"
	wait "$REC_PID" || fail "$VM: pmon record exited with $?"
	stop_pid "$PVMD_PID" 5 || pm_log "pvmd $PVMD_PID needed SIGKILL"
	timeout 30 "$PMON" export --format=paje -i "$RUN/$VM.pmr" \
	    -o "$RUN/$VM.paje" </dev/null >"$RUN/$VM.export.out" \
	    2>"$RUN/$VM.export.err" ||
	    fail "$VM: pmon export: $(cat "$RUN/$VM.export.err")"
	[ -s "$RUN/$VM.export.err" ] && fail "$VM: pmon export complained: \
$(cat "$RUN/$VM.export.err")"
}

# --- the runs ------------------------------------------------------------------------

vm_start master1
pmon_exec master1 || fail "master1 failed: $(cat "$RUN/master1.err")"
NSLAVES=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*SUCCESSFUL/\1/p' \
    "$RUN/master1.out")
[ -n "$NSLAVES" ] || fail "master1 did not spawn: $(cat "$RUN/master1.out")"
vm_stop

GEXAMPLE=""
if command -v gexample >/dev/null; then
	GEXAMPLE=gexample
	vm_start gexample
	printf '3\n2\n' >"$RUN/gexample.in"
	pmon_exec gexample <"$RUN/gexample.in" ||
	    fail "gexample failed: $(cat "$RUN/gexample.err")"
	grep -q 'Using 2 processors' "$RUN/gexample.out" ||
	    fail "gexample did not use 2 tasks: $(cat "$RUN/gexample.out")"
	vm_stop
else
	pm_log "gexample is not installed (pvm-examples): not checked"
fi

# deadpair: both tasks block in pvm_recv for ever; once pmon sees the
# deadlock, pmon kill ends both.
vm_start deadpair
deadpair_start "$PROBLEM_SECS"
f=$DP_TIDS
EXEC_PID=$DP_PID
DEAD=$(awk '{ printf "%s%d", (NR > 1 ? "," : ""), $2 }' "$f")
timeout 20 "$PMON" kill "$DEAD" </dev/null >"$RUN/kill.out" 2>&1 ||
    fail "pmon kill $DEAD: $(cat "$RUN/kill.out")"
wait_for 10 pid_dead "$EXEC_PID" || fail "deadpair did not end when killed"
wait "$EXEC_PID" 2>/dev/null
vm_stop

# --- the checks ------------------------------------------------------------------------

mkdir -m 0700 "$RUN/xdg"
# vite_check VM: ViTE loads VM.paje and draws it into VM.svg (its
# export, headless) and says nothing but its progress; the rows it drew
# are the tasks with events, in tid order (ROWS).
vite_check() {
	local v=$1 bad rows
	QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$RUN/xdg timeout 60 \
	    vite "$RUN/$v.paje" -e "$RUN/$v.svg" </dev/null >"$RUN/$v.vite" \
	    2>&1 || fail "$v: vite failed ($?): $(cat "$RUN/$v.vite")"
	grep -qx '0 errors and 0 warnings were found during parsing.' \
	    "$RUN/$v.vite" || fail "$v: ViTE found errors or warnings: \
$(cat "$RUN/$v.vite")"
	bad=$(grep -v -e '^export of .* to .* between the beginning of the trace to the end of the trace\.$' \
	    -e '^Loading of the trace : 100%' \
	    -e '^0 errors and 0 warnings were found during parsing\.$' \
	    -e '^Exporting trace to .* Please Wait *$' "$RUN/$v.vite")
	[ -z "$bad" ] || fail "$v: ViTE says: $bad"
	grep -q '>min: 0</text>' "$RUN/$v.svg" ||
	    fail "$v: ViTE's view does not start at 0"
	rows=$(grep -o '<text [^>]*y="[0-9.]*"[^>]*>[^<]* t[0-9a-f]*</text>' \
	    "$RUN/$v.svg" | sed 's/.* y="\([0-9.]*\)".*>.* t\([0-9a-f]*\)<.*/\1 \2/' |
	    sort -g | awk '{ printf "%st%s", (NR > 1 ? " " : ""), $2 }')
	expect_eq "$v: the rows ViTE drew" "$ROWS" "$rows"
}

# paje_check VM SPAWNS: what the file and pj_dump hold, against the
# trace of the same run: SPAWNS tasks were spawned.
paje_check() {
	local v=$1 spawns=$2 P=$RUN/$1.paje D=$RUN/$1.dump T=$RUN/$1.json
	local tasks bad
	pj_dump "$P" >"$D" 2>"$D.err" ||
	    fail "$v: pj_dump rejects it: $(head -n 5 "$D.err")"
	[ -s "$D.err" ] && fail "$v: pj_dump complains: $(head -n 5 "$D.err")"
	# Time 0 is the first event: the first line and a state are at 0.
	expect_eq "$v: the first line's time" 0.000000000 "$(grep -v '^%' "$P" |
	    grep -v '^[0-4] ' | head -n 1 | cut -d ' ' -f 2)"
	grep -q '^7 0\.000000000 STATE ' "$P" || fail "$v: no state at time 0"
	# One row per task with events, in tid order.
	tasks=$(grep -v '"type":' "$T" | jq -r 'select(.call) | .tid' |
	    sort -un | xargs printf 't%x ' | sed 's/ $//')
	ROWS=$tasks
	expect_eq "$v: task containers in file order" "$tasks" "$(sed -n \
	    's/^5 [0-9.]* k[0-9]* TASK h[0-9]* ".* \(t[0-9a-f]*\)"$/\1/p' "$P" |
	    paste -sd ' ')"
	bad=$(awk -F', ' '$1 == "Container" && $3 == "Task" { c[$7] = 1 }
	    $1 == "State" { s[$2] = 1 }
	    END { for (k in c) if (!(k in s)) print k }' "$D")
	[ -z "$bad" ] || fail "$v: containers with no state: $bad"
	# Each call's begin is a state named as the call; each end computing.
	grep -v '"type":' "$T" | jq -r 'select(.call) | if .phase == "begin"
	    then .call else "computing" end' | sort | uniq -c >"$D.want"
	awk -F', ' '$1 == "State" { print $8 }' "$D" | sort | uniq -c >"$D.got"
	cmp -s "$D.want" "$D.got" || fail "$v: state values (count value) \
differ from the trace's calls: $(diff "$D.want" "$D.got" | head -n 8)"
	# Messages and spawns: links of two types.
	expect_eq "$v: Message links (matched receives)" \
	    "$(grep -v '"type":' "$T" | grep -c '"match":')" \
	    "$(grep -c '^Link, 0, Message, ' "$D")"
	expect_eq "$v: Spawn links (spawned tasks)" "$spawns" \
	    "$(grep -c '^Link, 0, Spawn, ' "$D")"
	expect_eq "$v: link types" "2 MSG 0 TASK TASK \"Message\"
2 SPAWN 0 TASK TASK \"Spawn\"" "$(grep '^2 ' "$P")"
	vite_check "$v"
}

paje_check master1 "$NSLAVES"
expect_eq "master1: problem events" 0 "$(grep -c '^Event, .*, Problem, ' \
    "$RUN/master1.dump")"
if [ -n "$GEXAMPLE" ]; then
	# Instance 0 spawns the other; pvmgs has no events and no row.
	paje_check gexample 1
	grep -q '"pvmgs ' "$RUN/gexample.paje" && fail "gexample: pvmgs has a row"
	expect_eq "gexample: problem events" 0 "$(grep -c \
	    '^Event, .*, Problem, ' "$RUN/gexample.dump")"
fi

# deadpair: the parent spawns the child; both stay in pvm_recv until the
# trace's end (after their last event), where they are marked.
paje_check deadpair 1
D=$RUN/deadpair.dump
# The trace's end: its containers' destruction, the file's last line.
END=$(tail -n 1 "$RUN/deadpair.paje" | cut -d ' ' -f 2)
for tid in $(awk '{ print $2 }' "$f"); do
	name="deadpair $(printf 't%x' "$tid")"
	last=$(awk -F', ' -v n="$name" '$1 == "State" && $2 == n' "$D" |
	    sort -t ',' -k 5 -g | tail -n 1)
	expect_eq "$name: its last state" pvm_recv "$(echo "$last" |
	    awk -F', ' '{ print $8 }')"
	# pj_dump prints 6 decimals.
	awk -F', ' -v e="$END" '{ d = $5 - e; exit !(d < 1e-6 && d > -1e-6) }' \
	    <<<"$last" || fail "$name: pvm_recv does not last until the \
trace's end ($END): $last"
	awk -F', ' -v e="$END" '{ exit !($4 < e - 0.0005) }' <<<"$last" ||
	    fail "$name: pvm_recv has no width: $last"
	for ev in "deadlock of 2 tasks" "killed (pmon kill)" \
	    "ended in pvm_recv"; do
		expect_eq "$name: events '$ev'" 1 "$(grep -c \
		    "^Event, $name, Problem, [0-9.]*, $ev\$" "$D")"
	done
done
pass
