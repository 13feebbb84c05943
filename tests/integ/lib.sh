# Shared helpers of the integration tests, sourced by every t_*.sh (bash).
#
# A test calls pm_setup first: it makes a private run directory and
# PVM_TMP, and installs a trap that stops everything the test started --
# pmon daemons, pvmd and every task of its virtual machine, background
# jobs, network namespaces -- whether the test passes, fails or is killed.
# Processes are stopped by pid only: other runs may be live on the machine.

PMON_BUILD=${PMON_BUILD:-$(pwd)/build}
# Absolute: pvmd's hostfile and spawned tasks do not share our cwd.
PMON_BUILD=$(cd "$PMON_BUILD" 2>/dev/null && pwd || echo "$PMON_BUILD")
PMON=$PMON_BUILD/bin/pmon
PMON_COORDD=$PMON_BUILD/bin/pmon-coordd
PMON_AGENTD=$PMON_BUILD/bin/pmon-agentd
PMON_PRELOAD=$PMON_BUILD/lib/libpmon-pvm.so
PROGS=$PMON_BUILD/tests/progs
TOOLS=$PMON_BUILD/tests/tools
STREAMCHECK=$TOOLS/streamcheck
SENDFRAME=$TOOLS/sendframe

TEST=$(basename "$0" .sh)
PM_BG_PIDS=""		# background jobs of the test (pmon trace, ...)
PM_PVMD_PIDS=""		# every master pvmd this test started
PM_HOOKS=""		# cleanup functions registered by helpers (netns)
PM_FAILED=0
PM_FAIL_WHY=""		# what fail() said, repeated after the logs
PM_COORD_PIDS=""	# every coordinator this test started
PM_ON=""		# command prefix that runs on the master host (netns)
PM_CLEANING=0

pm_log() { printf '%s: %s\n' "$TEST" "$*" >&2; }

# fail prints the reason and ends the test; the trap cleans up.
fail() {
	printf 'FAIL: %s: %s\n' "$TEST" "$*"
	PM_FAIL_WHY=$*
	PM_FAILED=1
	exit 1
}

pass() {
	printf 'PASS: %s\n' "$TEST"
	exit 0
}

# skip ends the test as skipped (exit 77, as automake does).
skip() {
	printf 'SKIP: %s: %s\n' "$TEST" "$*"
	exit 77
}

# wait_for SECONDS CMD...: polls CMD every 50 ms until it succeeds; returns
# 1 when SECONDS pass first.
wait_for() {
	local limit=$(($1 * 20)) i=0
	shift
	while ! "$@"; do
		i=$((i + 1))
		[ "$i" -ge "$limit" ] && return 1
		sleep 0.05
	done
	return 0
}

pid_alive() {
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null &&
	    ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

pid_dead() { ! pid_alive "$1"; }

# stop_pid PID [SECONDS]: TERM, wait, then KILL.  Returns 1 if it had to
# use KILL.
stop_pid() {
	local pid=$1 secs=${2:-5}
	pid_alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	wait_for "$secs" pid_dead "$pid" && return 0
	kill -KILL "$pid" 2>/dev/null
	wait_for 2 pid_dead "$pid"
	return 1
}

# The processes of this run: every process whose environment names this
# run (PVM_TMP below $RUN, or the run marker).  Tasks spawned by pvmd get
# pvmd's environment, so this finds tasks, agents and the coordinator
# even after they were re-parented.  The test shell itself never matches:
# /proc/PID/environ shows the environment a process was executed with.
pm_run_pids() {
	[ -n "$RUN" ] || return 0
	(
		unset PVM_TMP PMON_TEST_RUN
		grep -lzE "^(PMON_TEST_RUN=$RUN|PVM_TMP=$RUN(/.*)?)\$" \
		    /proc/[0-9]*/environ 2>/dev/null |
		    sed 's|^/proc/\([0-9]*\)/environ$|\1|' | grep -vx "$$"
	)
}

pm_cleanup() {
	local rc=$? p left
	[ "$PM_CLEANING" = 1 ] && return
	PM_CLEANING=1
	trap - EXIT
	trap '' INT TERM HUP	# finish cleaning even if signalled again
	[ "$rc" = 0 ] || [ "$rc" = 77 ] || PM_FAILED=1
	for p in $PM_BG_PIDS; do stop_pid "$p" 3; done
	pmon_stop_daemons
	for p in $PM_PVMD_PIDS; do
		stop_pid "$p" 5 || pm_log "pvmd $p needed SIGKILL"
	done
	# pvmd kills its tasks on SIGTERM: give them a moment, then verify.
	if ! wait_for 5 pm_no_run_pids; then
		left=$(pm_run_pids)
		for p in $left; do
			pm_log "left behind: $p $(tr '\0' ' ' 2>/dev/null \
			    </proc/$p/cmdline)"
			kill -KILL "$p" 2>/dev/null
		done
		printf 'FAIL: %s: processes survived the virtual machine\n' \
		    "$TEST"
		PM_FAILED=1
	fi
	for p in $PM_HOOKS; do "$p"; done
	pm_check_sanitizers
	if [ "$PM_FAILED" = 1 ] && [ -n "$RUN" ]; then
		pm_dump_logs
		# Again after the logs: CI shows the end of the output.
		[ -n "$PM_FAIL_WHY" ] &&
		    printf 'FAIL: %s: %s\n' "$TEST" "$PM_FAIL_WHY"
	fi
	if [ -n "$PM_KEEP" ]; then	# for debugging one test by hand
		pm_log "kept $RUN"
	elif [ -n "$RUN" ]; then
		rm -rf "$RUN"
	fi
	[ "$PM_FAILED" = 1 ] && exit 1
	exit "$rc"
}

pm_no_run_pids() { [ -z "$(pm_run_pids)" ]; }

# Under `make check` the daemons report to their logs, not to the test
# (pvmd collects its tasks' stderr): a sanitizer report anywhere in the
# run's files fails the test.
pm_check_sanitizers() {
	local hits
	[ -n "$RUN" ] && [ -d "$RUN" ] || return 0
	hits=$(grep -rlE 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
	    "$RUN" 2>/dev/null)
	[ -z "$hits" ] && return 0
	for p in $hits; do
		pm_log "sanitizer report in $p:"
		grep -A12 -E 'Sanitizer|runtime error:' "$p" | head -40 >&2
	done
	printf 'FAIL: %s: sanitizer report\n' "$TEST"
	PM_FAILED=1
}

# On failure, the last lines of every log help whoever reads the output.
pm_dump_logs() {
	local f
	for f in $(find "$RUN" -maxdepth 3 -type f \( -name 'pvml.*' \
	    -o -name '*.log' -o -name '*.err' -o -name '*.out' \) 2>/dev/null); do
		echo "--- $f (last 15 lines)"
		tail -n 15 "$f"
	done
}

# pm_setup: the run directory, a private PVM_TMP and the cleanup trap.
pm_setup() {
	RUN=$(mktemp -d /tmp/pmXXXXXX) || fail "mktemp"
	[ -n "$PMON_TEST_LEDGER" ] && echo "dir $RUN" >>"$PMON_TEST_LEDGER"
	export PMON_TEST_RUN=$RUN
	export PVM_TMP=$RUN/vm
	export PVM_ALLOW_ROOT=1 PVM_ROOT=/usr/lib/pvm3
	unset PVM_EXPORT PVM_DEBUGGER PVM_RSH
	mkdir -p "$PVM_TMP"
	trap pm_cleanup EXIT
	trap 'exit 1' INT TERM HUP
}

# bg CMD...: runs CMD in the background and registers it for cleanup;
# its pid is in $BG_PID.
bg() {
	"$@" &
	BG_PID=$!
	PM_BG_PIDS="$PM_BG_PIDS $BG_PID"
}

# write_hostfile FILE [HOST...]: the executable path of every host must
# reach the PVM examples, pvmgs and our test programs.
write_hostfile() {
	local f=$1 h
	shift
	echo "* ep=/usr/bin:/usr/lib/pvm3/lib:$PROGS" >"$f"
	for h in "$@"; do echo "$h" >>"$f"; done
}

# The pid of the pvmd of directory $1, from its socket name in pvmd.UID
# (the socket path holds the pid), if that process is alive.
pvmd_pid_of() {
	local f=$1/pvmd.$(id -u) p
	[ -s "$f" ] || return 1
	p=$(sed -n 's/.*pvmtmp0*\([0-9][0-9]*\)\.0.*/\1/p' "$f")
	[ -n "$p" ] && pid_alive "$p" && echo "$p"
}

# start_pvmd [HOSTFILE]: starts a master pvmd for $PVM_TMP and waits
# until it accepts tasks.  Sets PVMD_PID.
start_pvmd() {
	local hf=${1:-$RUN/hostfile} uid
	uid=$(id -u)
	[ -n "$1" ] || write_hostfile "$hf"
	rm -f "$PVM_TMP/pvmd.$uid" "$PVM_TMP/pvml.$uid"
	setsid pvmd "$hf" </dev/null >"$PVM_TMP.pvmd.out" 2>&1 &
	PVMD_PID=$!
	PM_PVMD_PIDS="$PM_PVMD_PIDS $PVMD_PID"
	wait_for 10 test -s "$PVM_TMP/pvmd.$uid" ||
	    fail "pvmd did not start: $(cat "$PVM_TMP.pvmd.out")"
	[ "$(pvmd_pid_of "$PVM_TMP")" = "$PVMD_PID" ] ||
	    fail "pvmd.$uid does not name pvmd $PVMD_PID"
}

# pvm_console CMDS: runs console commands against this run's pvmd.
pvm_console() {
	printf '%s\nquit\n' "$*" | timeout 20 pvm 2>&1
}

# trace_when_exited REGEX N: once pmon ps shows N tasks whose program
# matches REGEX exited, the trace of pmon_trace gets everything (a
# flush) and ends.
trace_when_exited() {
	local tw_re=$1 tw_n=$2

	wait_for 30 eval '[ "$("$PMON" ps | awk -v re="$tw_re" "\$3 ~ re &&
	    \$4 == \"exited\"" | wc -l)" = "$tw_n" ]' ||
	    fail "not $tw_n tasks of $tw_re ended: $("$PMON" ps)"
	timeout 20 "$PMON" flush >/dev/null || fail "pmon flush failed"
	kill -TERM "$TRACE_PID"
	wait_for 10 pid_dead "$TRACE_PID" || fail "pmon trace did not end"
	wait "$TRACE_PID" || fail "pmon trace exited with $?"
}

# console_job OUT CMD: CMD in the console (on $PM_ON's host), which
# prints its job's output (spawn ->) into OUT as it comes (line
# buffered: stdbuf), until the job has finished (40 s at most).
console_job() {
	local out=$1 i
	shift
	(echo "$*"
	for i in $(seq 1 400); do
		grep -q '\[1\] finished' "$out" 2>/dev/null && break
		sleep 0.1
	done
	echo quit) | $PM_ON timeout 60 stdbuf -oL pvm >"$out" 2>&1 ||
	    fail "the console failed: $(cat "$out")"
}

# --- pmon ------------------------------------------------------------------

# need_built FILE...: each must exist, or the test (or bench) fails.
need_built() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || fail "missing $f (make all first)"
	done
}

need_pmon() {
	need_built "$PMON" "$PMON_COORDD" "$PMON_AGENTD" "$PMON_PRELOAD" \
	    "$STREAMCHECK"
}

# problems_hold JQ: `pmon problems --json`, kept in $RUN/problems.json,
# makes JQ true.
problems_hold() {
	timeout 20 "$PMON" problems --json </dev/null >"$RUN/problems.json" \
	    2>&1 && jq -e "$1" "$RUN/problems.json" >/dev/null
}

# deadpair_start [SECS]: tests/progs/deadpair (a deadlocked pair) in the
# background, DP_PID its pmon exec and DP_TIDS its tids file; back once
# pmon problems reports its one deadlock (within SECS, default 20).
deadpair_start() {
	DP_TIDS=$RUN/deadpair.tids
	bg timeout 60 "$PMON" exec "$PROGS/deadpair" "$DP_TIDS" </dev/null \
	    >"$RUN/deadpair.out" 2>"$RUN/deadpair.err"
	DP_PID=$BG_PID
	wait_for 20 eval '[ -f "$DP_TIDS" ] && [ "$(wc -l <"$DP_TIDS")" -ge 2 ]' ||
	    fail "deadpair did not start: $(cat "$RUN/deadpair.err")"
	wait_for "${1:-20}" problems_hold '[.problems[] |
	    select(.kind == "deadlock")] | length == 1' ||
	    fail "no deadlock reported: $(cat "$RUN/problems.json")"
}

# need_chromium: headless Chromium ($CHROMIUM), curl and jq for the
# tests of pmon web's page; skips without Chromium or curl.
need_chromium() {
	CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
	[ -n "$CHROMIUM" ] || skip "no chromium (apt-get install chromium)"
	command -v curl >/dev/null || skip "no curl"
	command -v jq >/dev/null || fail "jq is needed"
}

# page_model URL OUT [BUDGET]: the model pmon web's page at URL writes
# with &test=1 (doc/web.md, "Tests"), as JSON in OUT; Chromium runs
# where $PM_ON runs commands, with BUDGET ms of virtual time (10000).
page_model() {
	$PM_ON timeout 90 "$CHROMIUM" --headless=new --no-sandbox \
	    --disable-gpu --user-data-dir="$RUN/chrome" \
	    --virtual-time-budget="${3:-10000}" --dump-dom "$1&test=1" \
	    >"$RUN/dom.html" 2>"$RUN/chrome.err" ||
	    fail "chromium failed: $(tail -5 "$RUN/chrome.err")"
	sed -n 's/.*<pre id="model" hidden="">\(.*\)<\/pre>.*/\1/p' \
	    "$RUN/dom.html" | sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g' >"$2"
	jq -e . "$2" >/dev/null 2>&1 ||
	    fail "the page wrote no model: $(head -c 600 "$RUN/dom.html")"
}

coord_sock() { echo "$PVM_TMP/pmon-coord.$(id -u)"; }
agent_sock() { echo "$PVM_TMP/pmon-agent.$(id -u)"; }
coord_log() { echo "$PVM_TMP/pmon-coordd.$(id -u).log"; }

# The pid of the process listening on unix socket $1, from ss.
sock_pid() {
	$PM_ON ss -xlpn 2>/dev/null | awk -v p="$1" '$5 == p' |
	    sed -n 's/.*pid=\([0-9][0-9]*\).*/\1/p' | head -n 1
}

# pmon_start: starts the coordinator (and its agents) for $PVM_TMP.
# Sets COORD_PID, and COORD_ADDR (the TCP address for agents, which
# `pmon start -v` prints).
# pmon_start [ARGS...]: pmon start -v ARGS.  Without ARGS the tools'
# queues are 256 MiB, not 8: the tests check complete streams, also of
# fast programs on a slow (sanitized, loaded) machine, so their tools
# must not lose events; t_slowtool checks what a full queue does.
pmon_start() {
	[ $# -gt 0 ] || set -- -Q 268435456
	$PM_ON timeout 30 "$PMON" start -v "$@" </dev/null \
	    >"$PVM_TMP.pmon-start.out" 2>&1 ||
	    fail "pmon start failed: $(cat "$PVM_TMP.pmon-start.out")"
	COORD_PID=$(sock_pid "$(coord_sock)")
	[ -n "$COORD_PID" ] || fail "no process listens on $(coord_sock)"
	PM_COORD_PIDS="$PM_COORD_PIDS $COORD_PID"
	COORD_ADDR=$(grep -E ':[0-9]+$' "$PVM_TMP.pmon-start.out" | tail -n 1)
}

# pmon_trace FILE [ARGS]: a subscribed tool writing the JSON stream
# (with task lines) to FILE, ARGS (--lossless) added to its command
# line.  pmon trace prints nothing until events come, so wait until its
# socket is connected (its hello follows at once), then make a flush
# round trip through the coordinator and every agent: by its end the
# coordinator has read the earlier hello.  Sets TRACE_PID.
pmon_trace() {
	local out=$1
	shift
	bg $PM_ON "$PMON" trace --json --tasks "$@" </dev/null >"$out" \
	    2>"$out.err"
	TRACE_PID=$BG_PID
	wait_for 10 trace_connected "$TRACE_PID" ||
	    fail "pmon trace did not connect: $(cat "$out.err")"
	$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
	    fail "pmon flush failed: $(cat "$RUN/flush.err")"
	pid_alive "$TRACE_PID" || fail "pmon trace exited: $(cat "$out.err")"
}

# restart_streams_check A B EVENTS: A, the JSON stream of a coordinator
# that died; B, that of the one started after it, attached before the
# agents sent it anything.  In B, each task's records are a run without
# a gap or a lost marker that starts no later than A's last + 1, and A
# and B together hold EVENTS records (tid and seq) once each.
restart_streams_check() {
	local t
	for t in "$1" "$2"; do
		jq -r 'select(.call) | "\(.tid) \(.seq) \(.call)"' "$t" >"$t.seq"
	done
	awk 'NR == FNR { if (!($1 in alast) || $2 > alast[$1]) alast[$1] = $2
		next }
	    $3 == "lost" { print "lost marker of t" $1; bad = 1 }
	    ($1 in bprev) && $2 != bprev[$1] + 1 {
		print "t" $1 ": B jumps from " bprev[$1] " to " $2; bad = 1 }
	    !($1 in bprev) && ($1 in alast) && $2 > alast[$1] + 1 {
		print "t" $1 ": B starts at " $2 ", A ended at " alast[$1]
		bad = 1 }
	    { bprev[$1] = $2 }
	    END { exit bad }' "$1.seq" "$2.seq" >"$RUN/restart_check.out" ||
	    fail "the new coordinator's stream: $(head "$RUN/restart_check.out")"
	expect_eq "records in both streams" "$3" "$(cat "$1.seq" "$2.seq" |
	    awk '{ print $1, $2 }' | sort -u | wc -l)"
}

# pmon_record FILE [OUT]: pmon record -o FILE in the background, its
# output in OUT.out and OUT.err (default $RUN/record), until its socket
# is connected.  Sets REC_PID.
pmon_record() {
	local out=${2:-$RUN/record}
	bg $PM_ON "$PMON" record -o "$1" </dev/null >"$out.out" 2>"$out.err"
	REC_PID=$BG_PID
	wait_for 10 trace_connected "$REC_PID" ||
	    fail "pmon record did not connect: $(cat "$out.err")"
}

trace_connected() {
	pid_alive "$1" || return 1
	$PM_ON ss -xpn state established 2>/dev/null | grep -q "pid=$1,"
}

# pmon_exec PROG ARGS: runs an instrumented program; its output goes to
# $RUN/PROG.out.  Returns the program's status.
pmon_exec() {
	local name
	name=$(basename "$1")
	$PM_ON timeout 60 "$PMON" exec "$@" >"$RUN/$name.out" 2>"$RUN/$name.err"
}

# pmon_shutdown TRACE_PID: flush, stop the daemons; the trace must end.
pmon_shutdown() {
	$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
	    fail "pmon flush failed: $(cat "$RUN/flush.err")"
	$PM_ON timeout 20 "$PMON" shutdown </dev/null >/dev/null 2>"$RUN/shutdown.err" ||
	    fail "pmon shutdown failed: $(cat "$RUN/shutdown.err")"
	if [ -n "$1" ]; then
		wait_for 10 pid_dead "$1" || fail "pmon trace did not exit"
		wait "$1" || fail "pmon trace exited with status $?"
	fi
	[ -z "$COORD_PID" ] || wait_for 10 pid_dead "$COORD_PID" ||
	    fail "pmon-coordd $COORD_PID still runs after shutdown"
}

# Stops whatever pmon daemons are left, by pid: a polite shutdown of the
# current machine's first, then every coordinator this test started.
pmon_stop_daemons() {
	local pid
	pid=$(sock_pid "$(coord_sock)" 2>/dev/null)
	if [ -n "$pid" ] && [ -x "$PMON" ]; then
		$PM_ON timeout 5 "$PMON" shutdown </dev/null >/dev/null 2>&1
	fi
	for pid in $pid $PM_COORD_PIDS; do stop_pid "$pid" 5; done
}

# count_lines PATTERN FILE: how many lines of FILE match PATTERN.
count_lines() { grep -c -- "$1" "$2" || true; }

# expect_count WHAT EXPECTED ACTUAL
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected $2, got $3"
}

# counts_of PROGRAM CALL PHASE COUNTSFILE: from `streamcheck --counts`
# output (lines "program call phase count"), 0 when absent.
count_of() {
	awk -v p="$1" -v c="$2" -v ph="$3" \
	    '$1 == p && $2 == c && $3 == ph { n = $4 } END { print n + 0 }' "$4"
}

# expect_counts PROGRAM EXPECTED COUNTS: EXPECTED holds "pvm_CALL N"
# lines (the program's own calls, summed over its tasks); COUNTS is
# `streamcheck -c` output.  pmon must report exactly these calls: N
# begins and N ends of each (pvm_exit may lack its end), and no other
# call of PROGRAM.
expect_counts() {
	local prog=$1 exp=$2 got=$3 bad
	bad=$(awk -v p="$prog" '
	    FNR == NR { want[$1] += $2; next }
	    $1 == p { have[$2 " " $3] = $4; calls[$2] = 1 }
	    END {
		for (c in want) {
			b = have[c " begin"] + 0; e = have[c " end"] + 0
			if (b != want[c])
				print c " begin: expected " want[c] ", got " b
			if (e != want[c] && !(c == "pvm_exit" && e == 0))
				print c " end: expected " want[c] ", got " e
		}
		for (c in calls)
			if (!(c in want))
				print c ": not called by " p ", reported " \
				    have[c " begin"] + 0 " times"
	    }' "$exp" "$got")
	[ -z "$bad" ] || fail "$prog counts differ:
$bad"
}

# pmon_run_traced PROG ARGS: the usual single-host run: a trace started
# before the program, then flush and shutdown, and a checked stream in
# $RUN/trace.json.  Returns the program's status in PROG_RC.
pmon_run_traced() {
	pmon_start
	pmon_trace "$RUN/trace.json"
	pmon_exec "$@"
	PROG_RC=$?
	pmon_shutdown "$TRACE_PID"
}

# expect_master1 TRACE N: TRACE (pmon trace --json) holds one run of
# pvm-examples' master1 with its N slave1 workers: causal, every call
# each makes once (from master1.c and slave1.c), and nothing else.
expect_master1() {
	local trace=$1 n=$2 progs
	"$STREAMCHECK" -a "$trace" || fail "stream violations"
	"$STREAMCHECK" -c "$trace" >"$RUN/counts"
	"$STREAMCHECK" -t "$trace" >"$RUN/tasks"
	cat >"$RUN/want.master1" <<EOF
pvm_mytid 1
pvm_config 1
pvm_spawn 1
pvm_initsend 1
pvm_pkint 3
pvm_pkfloat 1
pvm_mcast 1
pvm_recv $n
pvm_upkint $n
pvm_upkfloat $n
pvm_exit 1
EOF
	cat >"$RUN/want.slave1" <<EOF
pvm_mytid $n
pvm_recv $((2 * n))
pvm_upkint $((3 * n))
pvm_upkfloat $((2 * n))
pvm_initsend $((2 * n))
pvm_pkfloat $((2 * n))
pvm_pkint $n
pvm_send $((2 * n))
pvm_parent $n
pvm_exit $n
EOF
	expect_counts master1 "$RUN/want.master1" "$RUN/counts"
	expect_counts slave1 "$RUN/want.slave1" "$RUN/counts"
	expect_eq "master1 tasks" 1 \
	    "$(awk '$2 == "master1" && $4 > 0' "$RUN/tasks" | wc -l)"
	expect_eq "slave1 tasks" "$n" \
	    "$(awk '$2 == "slave1" && $4 > 0' "$RUN/tasks" | wc -l)"
	progs=$(awk '$4 > 0 { print $2 }' "$RUN/tasks" | sort -u | tr '\n' ' ')
	expect_eq "programs in the stream" "master1 slave1 " "$progs"
}

# expect_task_counts DIR EVENTS: DIR holds one TID.counts file per task
# (TID in hex, lines "pvm_CALL N", as msgmix and grouprace write them);
# EVENTS is `streamcheck -e` output.  Each task's begins of each call
# must be exactly its own count, and it must have made no other call.
expect_task_counts() {
	local dir=$1 events=$2 f tid bad
	for f in "$dir"/*.counts; do
		tid=$(basename "$f" .counts)
		bad=$(awk -v t="$tid" '
		    FNR == NR { want[$1] += $2; next }
		    $1 == t && $5 == "begin" { have[$4]++ }
		    END {
			for (c in want)
				if (have[c] + 0 != want[c])
					print c ": expected " want[c] \
					    ", got " have[c] + 0
			for (c in have)
				if (!(c in want))
					print c ": not called, reported " \
					    have[c] " times"
		    }' "$f" "$events")
		[ -z "$bad" ] || fail "task $tid counts differ:
$bad"
	done
}

# stat_of FILE KEY: the value of "KEY N" in a stats file, 0 when absent.
stat_of() {
	awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$1"
}

# grouprace_check DIR K EVENTS: what grouprace (a master and K workers)
# says it did, in DIR/TID.counts and DIR/TID.stats, against pmon's stream
# (EVENTS: `streamcheck -e`): every task's calls, the master's
# broadcasts (and those that found the group empty), and for every
# worker the broadcasts it received against the bcast ends naming it.
grouprace_check() {
	local dir=$1 k=$2 ev=$3 f tid n
	n=$(ls "$dir" | grep -c '\.stats$')
	expect_eq "grouprace stats files" $((k + 1)) "$n"
	expect_task_counts "$dir" "$ev"
	awk '$4 == "pvm_bcast" && $5 == "end" && $7 != "-" {
		n = split($7, d, ",")
		for (i = 1; i <= n; i++)
			c[d[i]]++
	    }
	    END { for (t in c) printf "%x %d\n", t, c[t] }' "$ev" \
	    >"$ev.bcast_recv"
	for f in "$dir"/*.stats; do
		tid=$(basename "$f" .stats)
		expect_eq "errors grouprace task $tid saw" 0 \
		    "$(stat_of "$f" errors)"
		if grep -qx 'role master' "$f"; then
			expect_eq "broadcasts of the master (bcast ends)" \
			    "$(stat_of "$f" bcasts)" "$(awk -v t="$tid" \
			    '$1 == t && $4 == "pvm_bcast" && $5 == "end"' \
			    "$ev" | wc -l)"
			expect_eq "broadcasts to an empty group (no dst)" \
			    "$(stat_of "$f" bcast_empty)" "$(awk -v t="$tid" \
			    '$1 == t && $4 == "pvm_bcast" && $5 == "end" &&
			    $7 == "-"' "$ev" | wc -l)"
		else
			expect_eq "broadcasts worker $tid received (bcast ends naming it)" \
			    "$(stat_of "$f" bcast_recv)" \
			    "$(stat_of "$ev.bcast_recv" "$tid")"
		fi
	done
}

# gexample_want FILE: the calls gexample makes with 2 tasks, from
# gexample.c: instance 0 spawns and mcasts, the other receives; both
# join, freeze, reduce twice, barrier, leave.
gexample_want() {
	cat >"$1" <<EOF
pvm_mytid 2
pvm_siblings 2
pvm_joingroup 2
pvm_parent 1
pvm_spawn 1
pvm_initsend 1
pvm_pkint 2
pvm_mcast 1
pvm_recv 1
pvm_upkint 2
pvm_freezegroup 2
pvm_reduce 4
pvm_barrier 2
pvm_lvgroup 2
pvm_exit 2
EOF
}

# wait_calls N CALLS: storm's tasks append their "calls" lines just
# before pvm_exit, and may still run when task 0 has returned: wait for
# all N lines and until no storm process of this run is left.
wait_calls() {
	wait_for 20 calls_lines "$1" "$2" ||
	    fail "expected $1 tasks' calls lines in $2, got \
$(grep -c "^calls " "$2" 2>/dev/null)"
	wait_for 20 storm_gone || fail "storm tasks still run"
}

calls_lines() { [ "$(grep -c "^calls " "$2" 2>/dev/null)" = "$1" ]; }

# burst_start N: `burst -p 1000 N` (a call a millisecond) in the
# background (on $PM_ON), its log in $BURST_LOG, its pid in $BURST;
# returns once it has made 300 calls.  burst_did: the calls made so far.
burst_start() {
	BURST_LOG=$RUN/burst.log
	: >"$BURST_LOG"
	touch "$BURST_LOG.go"
	bg $PM_ON timeout 60 "$PMON" exec "$PROGS/burst" -p 1000 "$1" \
	    "$BURST_LOG"
	BURST=$BG_PID
	wait_for 20 eval '[ "$(burst_did)" -ge 300 ]' ||
	    fail "burst did not start its calls"
}

burst_did() {
	awk '$1 == "did" { n = $2 } END { print n + 0 }' "$BURST_LOG" \
	    2>/dev/null
}

# agent_kill PID: SIGKILLs the agent PID; the coordinator must start
# another on the host, whose pid is then in NEW_PID.
agent_kill() {
	kill -KILL "$1"
	wait_for 10 pid_dead "$1" || fail "the agent survived SIGKILL"
	AGENT_KILLED=$1
	wait_for 10 agent_is_new || fail "no agent was started again"
}

agent_is_new() {
	NEW_PID=$(sock_pid "$(agent_sock)")
	[ -n "$NEW_PID" ] && [ "$NEW_PID" != "$AGENT_KILLED" ]
}

# expect_burst_whole TRACE PS TID N BEFORE: TRACE (pmon trace --json)
# and PS (pmon ps --json, after a flush) hold burst's task TID, which
# made N calls (BEFORE of them before the test's fault), whole: every
# seq up to its last, none lost, one task line, exited.
expect_burst_whole() {
	local trace=$1 ps=$2 tid=$3 n=$4 sel lost events last
	"$STREAMCHECK" -l "$trace" >"$RUN/check.out" 2>&1 ||
	    fail "stream check: $(head -20 "$RUN/check.out")"
	sel="select(.tid == $tid and .call)"
	lost=$(jq -s "[.[] | $sel | select(.call == \"lost\") | .count] |
	    add // 0" "$trace")
	events=$(jq -s "[.[] | $sel | select(.call != \"lost\")] | length" \
	    "$trace")
	last=$(jq -s "[.[] | $sel | .seq + (if .call == \"lost\" then
	    .count - 1 else 0 end)] | max" "$trace")
	pm_log "burst: $5 calls when its new agent was up, $events events, $lost lost"
	expect_eq "last seq of burst" $((2 * (n + 2))) "$last"
	expect_eq "events plus lost of burst" $((2 * (n + 2))) \
	    $((events + lost))
	expect_eq "events lost (the ring held what was not acknowledged)" 0 \
	    "$lost"
	expect_eq "task lines of burst" 1 "$(jq -s "[.[] |
	    select(.type == \"task\" and .tid == $tid)] | length" "$trace")"
	expect_eq "state of burst in pmon ps" exited "$(jq -r ".tasks[] |
	    select(.tid == $tid) | .state" "$ps")"
	expect_eq "lost of burst in pmon ps" "$lost" "$(jq -r ".tasks[] |
	    select(.tid == $tid) | .lost" "$ps")"
}

storm_gone() {
	local p
	for p in $(pm_run_pids); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = storm ] &&
		    pid_alive "$p" && return 1
	done
	return 0
}

# pmon_barrierexit: runs tests/progs/barrierexit (on $PM_ON), waits
# until pmon problems reports its deadlock (found by the coordinator's
# check between events) and kills the two waiters, which never end on
# their own: the model ends them, killed, when their last event is out.
pmon_barrierexit() {
	local f=$RUN/barrierexit.tids pid
	bg $PM_ON timeout 60 "$PMON" exec "$PROGS/barrierexit" "$f" \
	    >"$RUN/barrierexit.out" 2>"$RUN/barrierexit.err"
	pid=$BG_PID
	wait_for 20 eval '[ -f "$f" ] && [ "$(wc -l <"$f")" -ge 4 ]' ||
	    fail "barrierexit did not start: $(cat "$f" \
	    "$RUN/barrierexit.err" 2>&1)"
	wait_for 20 barrierexit_deadlock ||
	    fail "no deadlock reported: $(cat "$RUN/problems.json")"
	kill $(awk '$1 == "parent" || $1 == "waiter" { print $3 }' "$f")
	wait_for 10 pid_dead "$pid" || fail "barrierexit did not end"
	wait "$pid" 2>/dev/null
}

barrierexit_deadlock() {
	$PM_ON timeout 20 "$PMON" problems --json </dev/null \
	    >"$RUN/problems.json" 2>&1 &&
	    jq -e '[.problems[] | select(.kind == "deadlock")] | length >= 1' \
	    "$RUN/problems.json" >/dev/null
}

# expect_calls_complete WHAT STREAM CALLS: STREAM (`pmon trace --json`)
# holds every event of every task CALLS names ("calls TID K" lines, TID
# in hex: tests/progs/storm's count of its own calls): 2 K of them
# (pvm_exit's end may be missing), numbered from 1 without a gap, and
# streamcheck -a accepts it (no lost marker, every message matched).
expect_calls_complete() {
	local what=$1 stream=$2 calls=$3 bad
	"$STREAMCHECK" -a "$stream" >"$stream.check" 2>&1 ||
	    fail "$what: $(head -n 5 "$stream.check")"
	bad=$(awk -F'"' 'FNR == NR { split($0, f, " "); calls[f[2]] = f[3]
		next }
	    $2 == "id" { split($4, a, ":"); t = sprintf("%x", a[1]); n[t]++
		if (a[2] + 0 > last[t]) last[t] = a[2] + 0 }
	    END { for (t in calls) { want = 2 * calls[t]
		if (n[t] != last[t] || (n[t] != want && n[t] != want - 1))
			print "t" t ": " n[t] + 0 " events, last seq " \
			    last[t] + 0 ", " calls[t] " calls" } }' \
	    "$calls" "$stream")
	[ -z "$bad" ] || fail "$what is not complete:
$bad"
}

# record_storm FILE TASKS ROUNDS: a coordinator of its own (pmon start
# with lib.sh's big tool queue), `pmon record -o FILE` attached, one run
# of tests/progs/storm TASKS ROUNDS, then shutdown.  pmon record is a
# lossless tool: the recording holds every event the storm made, 10
# TASKS ROUNDS + 16 TASKS + 2 (the caller checks what it needs).  A
# pvmd must run.
record_storm() {
	local out=$1 tasks=$2 rounds=$3 rec
	need_built "$PROGS/storm"
	pmon_start
	bg "$PMON" record -o "$out" </dev/null >"$out.out" 2>"$out.err"
	rec=$BG_PID
	wait_for 10 trace_connected "$rec" ||
	    fail "pmon record did not connect: $(cat "$out.err")"
	timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
	    fail "pmon flush failed: $(cat "$RUN/flush.err")"
	timeout 3000 "$PMON" exec "$PROGS/storm" "$tasks" "$rounds" \
	    </dev/null >"$RUN/storm.out" 2>"$RUN/storm.err" ||
	    fail "storm failed: $(cat "$RUN/storm.err")"
	grep -qx 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
	wait_for 60 storm_gone || fail "storm tasks still run"
	pmon_shutdown "$rec"
}
