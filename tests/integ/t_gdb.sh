#!/bin/bash
# Protects the gdb glue, tools/gdb/pmon.py (README: Debugging with gdb),
# with a real gdb attached to a task of a running ring (3 tasks):
# - `gdb -p PID -x pmon.py -ex 'pmon snapshot'`: the summary names the
#   task (tid, program, host, pid) and its state, sent and received
#   messages and calls exactly as pmon's own snapshot, taken while gdb
#   still holds the task, shows them; the application line counts the 3
#   ring tasks.  The stop hook does not fire on that attach (gdb reads
#   -x after it attached);
# - sourced before the attach (-iex), the hook fires on the attach; once
#   the ring froze around the held task, `pmon snapshot` agrees with
#   pmon's snapshot in everything (state, where blocked, queue, traffic,
#   the application's tasks by state), and a separately attached tool
#   (pmon trace, the "visualizer") has every event up to the stop;
# - `pmon stop-all` stops every ring task (the kernel shows T, t for the
#   one gdb holds; pmon shows them stopped), `pmon continue-all` lets the
#   ring go on;
# - a breakpoint stop (pvm_send) prints the summary through the hook;
# - after `pmon stop-all` and detach the ring stays stopped; a later gdb
#   session's `pmon continue-all` lets it finish (every task "done");
# - a process pmon does not monitor, pmon hanging (a timeout), no pmon
#   command, pmon not running: one line each.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$PROGS/ring" ] || fail "missing $PROGS/ring"
command -v jq >/dev/null || fail "jq is needed"
command -v gdb >/dev/null || fail "gdb is needed (.ci/run installs it)"
GDBPY=$(cd "$(dirname "$0")/../.." && pwd)/tools/gdb/pmon.py
[ -r "$GDBPY" ] || fail "missing $GDBPY"

# run_gdb NAME ARGS...: gdb -batch -nx ARGS, its output in $RUN/NAME.gdb;
# the extension runs $GDB_PMON if set, else $PMON.  In the background so
# that the cleanup trap stops it if the test is interrupted.
run_gdb() {
	local out=$RUN/$1.gdb rc
	shift
	bg env -u DEBUGINFOD_URLS PMON="${GDB_PMON:-$PMON}" timeout -k 5 60 \
	    gdb -batch -nx "$@" </dev/null >"$out" 2>&1
	wait "$BG_PID"
	rc=$?
	PM_BG_PIDS=${PM_BG_PIDS% "$BG_PID"}
	[ "$rc" = 0 ] || fail "gdb $* exited with $rc: $(cat "$out")"
	! grep -E 'Traceback|Python Exception|internal error' "$out" ||
	    fail "gdb $*: python errors: $(cat "$out")"
}

# May this process ptrace others?  (Yama's ptrace_scope 3 forbids it
# even to root; a container may lack CAP_SYS_PTRACE.)
if [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)" = 3 ]; then
	skip "ptrace is disabled (kernel.yama.ptrace_scope = 3)"
fi
bg sleep 300
SLEEP_PID=$BG_PID
env -u DEBUGINFOD_URLS timeout 30 gdb -batch -nx -p "$SLEEP_PID" \
    -ex detach </dev/null >"$RUN/probe.gdb" 2>&1
grep -q 'ptrace: Operation not permitted' "$RUN/probe.gdb" &&
    skip "ptrace attach is not permitted here: $(head -n 3 "$RUN/probe.gdb")"
grep -q "process $SLEEP_PID) detached" "$RUN/probe.gdb" ||
    fail "gdb cannot attach: $(cat "$RUN/probe.gdb")"

start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"

# 60 rounds of 0.3 s: the ring must outlive the gdb sessions below, which
# take seconds each on a loaded machine (and hold the ring still); once
# they are done, a stop file ends it.
n=3 f=$RUN/ring.log
bg timeout 120 "$PMON" exec "$PROGS/ring" "$n" 60 "$f" \
    >"$RUN/ring.out" 2>"$RUN/ring.err"
EXEC_PID=$BG_PID
wait_for 20 eval '[ "$(grep -c "^ring" "$f" 2>/dev/null)" = "$n" ]' ||
    fail "ring did not start: $(cat "$f" "$RUN/ring.err" 2>&1)"
pids=$(awk '$1 == "ring" { printf "%s ", $4 }' "$f")
read -r tid pid <<<"$(awk '$1 == "ring" && $2 == 1 { print $3, $4 }' "$f")"
tx=t$(printf %x "$tid")
pm_log "gdb attaches to ring task 1: $tx, pid $pid"

# probe NAME, run by gdb's `shell` while it holds the task: pmon's
# snapshot and the kernel's state of every ring task.
cat >"$RUN/probe.sh" <<EOF
#!/bin/sh
timeout 20 "$PMON" snapshot --json >"$RUN/\$1.snap" 2>"$RUN/\$1.snap.err"
for p in $pids; do
	echo "\$p \$(sed 's/^.*) //' /proc/\$p/stat | cut -d' ' -f1)"
done >"$RUN/\$1.states"
EOF
# frozen, run by gdb's `shell`: waits (up to 20 s) until the ring stands
# still around the task gdb holds: every other ring task blocked in a
# receive that no queued message satisfies.
cat >"$RUN/frozen.sh" <<EOF
#!/bin/sh
i=0
while [ \$i -lt 100 ]; do
	timeout 20 "$PMON" snapshot --json 2>/dev/null | jq -e --argjson t "$tid" '
	    . as \$s | [.tasks[] | select(.program == "ring" and .tid != \$t)] |
	    length == $((n - 1)) and all(.state == "blocked" and (.tid as \$r |
	    .blocked as \$b | [\$s.queues[] | select(.tid == \$r) | .messages[] |
	    select(.from == \$b.from and .tag == \$b.tag)] | length == 0))' \
	    >/dev/null && exit 0
	sleep 0.2
	i=\$((i + 1))
done
echo "the ring did not freeze" >"$RUN/not-frozen"
EOF
chmod +x "$RUN/probe.sh" "$RUN/frozen.sh"
probe() { echo "shell $RUN/probe.sh $1"; }

# The summary lines of task $tx in gdb output $1 (head line, then the
# queue/traffic line after each).
heads() { grep -E "^pmon: $tx ring on [^ ]+, pid $pid: " "$1"; }
traffic() { grep -A1 -E "^pmon: $tx ring on " "$1" | grep '^pmon:   queue: '; }
apps() { grep '^pmon: application: ' "$1"; }

# want_head SNAP: the head line the summary should print for the task, as
# pmon's snapshot SNAP shows it (running or blocked in pvm_recv).
want_head() {
	local t from seq
	t=$(jq -c --argjson t "$tid" '.tasks[] | select(.tid == $t)' "$1")
	[ -n "$t" ] || fail "$tx not in $1"
	case $(jq -r .state <<<"$t") in
	running)
		echo "pmon: $tx ring on $(jq -r .host <<<"$t"), pid $pid: running" ;;
	blocked)
		from=$(jq .blocked.from <<<"$t")
		seq=$(jq -r '.blocked.since | split(":")[1]' <<<"$t")
		printf 'pmon: %s ring on %s, pid %s: blocked in %s from t%x tag %s (since %s:%s)\n' \
		    "$tx" "$(jq -r .host <<<"$t")" "$pid" \
		    "$(jq -r .blocked.in <<<"$t")" "$from" \
		    "$(jq .blocked.tag <<<"$t")" "$tx" "$seq" ;;
	*)
		fail "$tx in $1: unexpected state $(jq -c . <<<"$t")" ;;
	esac
}

# want_traffic SNAP: "sent ..., received ..., N calls" of the task.
want_traffic() {
	jq -r --argjson t "$tid" '.tasks[] | select(.tid == $t) |
	    "sent \(.sent.msgs) msgs (\(.sent.bytes) B), received " +
	    "\(.received.msgs) msgs (\(.received.bytes) B), \(.calls) calls"' "$1"
}

# want_queue SNAP: "queue: N message(s)" of the task.
want_queue() {
	jq -r --argjson t "$tid" '[.queues[] | select(.tid == $t) |
	    .messages[]] | length | "queue: \(.) message" +
	    (if . == 1 then "" else "s" end)' "$1"
}

# want_app SNAP: the application line: the ring tasks by state.
want_app() {
	jq -r '[.tasks[] | select(.program == "ring") | .state] as $s |
	    "pmon: application: \($s | length) tasks (\($s | length) ring): " +
	    ([["running", "blocked", "stopped", "exited", "killed"][] as $k |
	    ($s | map(select(. == $k)) | length) as $c | select($c > 0) |
	    "\($c) \($k)"] | join(", "))' "$1"
}

# --- 1. the README's command line: -x after -p -----------------------------

run_gdb a -p "$pid" -x "$GDBPY" -ex 'pmon snapshot' -ex "$(probe a)" \
    -ex detach
expect_eq "summaries printed (the hook does not fire on this attach)" 1 \
    "$(heads "$RUN/a.gdb" | wc -l)"
# The task's own state, traffic and calls cannot change while gdb holds
# it (the others may still send it messages: its queue can grow).
expect_eq "the task's state, as pmon's snapshot shows it" \
    "$(want_head "$RUN/a.snap")" "$(heads "$RUN/a.gdb")"
traffic "$RUN/a.gdb" | grep -qF "; $(want_traffic "$RUN/a.snap")" ||
    fail "traffic: want $(want_traffic "$RUN/a.snap"): $(cat "$RUN/a.gdb")"
apps "$RUN/a.gdb" | grep -qE '^pmon: application: 3 tasks \(3 ring\): ' ||
    fail "the application line: $(cat "$RUN/a.gdb")"
grep -q "^ring .* $pid\$" "$f" || fail "pid $pid not in the ring's log"

# --- 2. sourced before the attach: the hook fires; the ring freezes --------

# After continue-all, the SIGCONT pmon sent the held task is reported by
# gdb when it resumes the task: a stop, and the hook prints again.
run_gdb b -iex "source $GDBPY" -p "$pid" -ex "shell $RUN/frozen.sh" \
    -ex 'pmon snapshot' -ex "$(probe b)" \
    -ex 'pmon stop-all' -ex "$(probe stopped)" \
    -ex 'pmon continue-all' -ex continue -ex detach
[ ! -e "$RUN/not-frozen" ] || fail "the ring did not stand still: $(cat \
    "$RUN/b.gdb")"
expect_eq "summaries (the hook's on the attach, pmon snapshot, the hook's at the SIGCONT)" \
    3 "$(heads "$RUN/b.gdb" | wc -l)"
expect_eq "application lines" 3 "$(apps "$RUN/b.gdb" | wc -l)"
apps "$RUN/b.gdb" | grep -vE '^pmon: application: 3 tasks \(3 ring\): ' &&
    fail "application lines: $(cat "$RUN/b.gdb")"
grep -q '^Program received signal SIGCONT' "$RUN/b.gdb" ||
    fail "gdb did not report pmon's SIGCONT: $(cat "$RUN/b.gdb")"
# Once every other task waits (for the held one, or for one that waits
# for it), the summary is pmon's snapshot, exactly.
expect_eq "state (frozen ring)" "$(want_head "$RUN/b.snap")" \
    "$(heads "$RUN/b.gdb" | sed -n 2p)"
expect_eq "queue and traffic (frozen ring)" \
    "pmon:   $(want_queue "$RUN/b.snap"); $(want_traffic "$RUN/b.snap")" \
    "$(traffic "$RUN/b.gdb" | sed -n 2p | sed 's/ (t[0-9a-f]* tag [^)]*)//')"
expect_eq "application (frozen ring)" "$(want_app "$RUN/b.snap")" \
    "$(apps "$RUN/b.gdb" | sed -n 2p)"
# The visualizer's view: the flush of the stop brought every event up to
# it to the separately attached tool (pmon trace).
trace_has() {
	local t s
	for t in $(jq -r '.position | keys[]' "$RUN/b.snap"); do
		s=$(jq --arg t "$t" '.position[$t]' "$RUN/b.snap")
		grep -q "\"id\":\"$t:$s\"" "$RUN/trace.json" || return 1
	done
}
wait_for 5 trace_has || fail "the trace lacks events up to the stop"
# stop-all: every ring task stopped, for the kernel and for pmon.
expect_eq "ring tasks in /proc after stop-all" "$n" \
    "$(wc -l <"$RUN/stopped.states")"
awk -v p="$pid" '($1 == p) != ($2 == "t") || ($2 != "t" && $2 != "T")' \
    "$RUN/stopped.states" | grep -q . &&
    fail "after stop-all, /proc: $(cat "$RUN/stopped.states") (want T, t for $pid)"
expect_eq "ring tasks stopped in pmon's snapshot" "$n" "$(jq '[.tasks[] |
    select(.program == "ring" and .state == "stopped")] | length' \
    "$RUN/stopped.snap")"
grep -q '^\* t[0-9a-f]*: continued' "$RUN/b.gdb" ||
    fail "continue-all: $(cat "$RUN/b.gdb")"
holds=$(grep -c '^hold' "$f")
wait_for 10 eval '[ "$(grep -c "^hold" "$f")" -gt "$holds" ]' ||
    fail "the ring did not go on after continue-all"

# --- 3. a breakpoint: the stop hook ------------------------------------------

run_gdb c -x "$GDBPY" -p "$pid" -ex 'break pvm_send' -ex continue \
    -ex "$(probe c)" -ex delete -ex detach
grep -q '^Breakpoint 1\.[0-9], .*pvm_send' "$RUN/c.gdb" ||
    fail "no stop at pvm_send: $(cat "$RUN/c.gdb")"
expect_eq "summaries (the hook's at the breakpoint)" 1 \
    "$(heads "$RUN/c.gdb" | wc -l)"
expect_eq "state at the breakpoint" "$(want_head "$RUN/c.snap")" \
    "$(heads "$RUN/c.gdb")"
traffic "$RUN/c.gdb" | grep -qF "; $(want_traffic "$RUN/c.snap")" ||
    fail "traffic: want $(want_traffic "$RUN/c.snap"): $(cat "$RUN/c.gdb")"

# --- 4. stop-all and detach: the ring stays stopped; continue-all later -------

run_gdb d -x "$GDBPY" -p "$pid" -ex 'pmon stop-all' -ex detach
all_stopped() { for p in $pids; do
	[ "$(sed 's/^.*) //' /proc/$p/stat | cut -d' ' -f1)" = T ] || return 1
done; }
wait_for 5 all_stopped || fail "after stop-all and detach: $(for p in $pids; do
    echo "$p $(sed 's/^.*) //' /proc/$p/stat | cut -d' ' -f1)"; done)"
holds=$(grep -c '^hold' "$f")
sleep 0.5
expect_eq "tokens held while stopped" "$holds" "$(grep -c '^hold' "$f")"
run_gdb e -x "$GDBPY" -p "$pid" -ex 'pmon continue-all' -ex detach
# The ring has done its part: its task 0 ends it (tests/progs/ring.c).
touch "$f.stop"
wait "$EXEC_PID" || fail "ring exited with $?: $(cat "$RUN/ring.err")"
EXEC_PID=""
expect_eq "ring tasks done" "$n" "$(grep -c '^done' "$f")"

# --- 5. one line when there is nothing to show ------------------------------

# (The hook in place before the attach: a stepi of sleep would wait for
# its nanosleep to end.)
run_gdb f -iex "source $GDBPY" -p "$SLEEP_PID" -ex detach
expect_eq "pmon lines for a process pmon does not monitor" \
    "pmon: pid $SLEEP_PID is not a task pmon monitors (3 tasks known)" \
    "$(grep '^pmon' "$RUN/f.gdb")"
# A pmon that does not answer (its coordinator stopped) costs a stop the
# timeout, and one line; a pmon command that cannot run, one line.
kill -STOP "$COORD_PID"
run_gdb h -iex "source $GDBPY" -iex 'set pmon timeout 2' -p "$SLEEP_PID" \
    -ex detach
kill -CONT "$COORD_PID"
expect_eq "pmon lines when pmon hangs" \
    "pmon: \`pmon flush\` did not answer within 2 s (PVM_TMP=$PVM_TMP)" \
    "$(grep '^pmon' "$RUN/h.gdb")"
GDB_PMON=$RUN/no-pmon run_gdb i -iex "source $GDBPY" -p "$SLEEP_PID" \
    -ex detach
expect_eq "pmon lines without a pmon command" \
    "pmon: cannot run $RUN/no-pmon: No such file or directory" \
    "$(grep '^pmon' "$RUN/i.gdb")"
pmon_shutdown "$TRACE_PID"
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
run_gdb g -iex "source $GDBPY" -p "$SLEEP_PID" -ex detach
expect_eq "pmon lines when pmon is not running" \
    "pmon: not running for this virtual machine (PVM_TMP=$PVM_TMP)" \
    "$(grep '^pmon' "$RUN/g.gdb")"
pass
