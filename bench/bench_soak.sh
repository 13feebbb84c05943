#!/bin/bash
# bench_soak.sh: a busy program under pmon with a recorder attached, as
# a user runs it (BENCHMARKS.md, "make bench-soak"; issue 15).
#
#	PMON_BUILD=build bash bench/bench_soak.sh [-n tasks] [-r rounds]
#	    [-k runs] [-- PMON_START_ARGS...]
#
# A private virtual machine (tests/integ/lib.sh: run directory, PVM_TMP,
# and the cleanup trap that stops everything, also on failure or ^C).
# The load is tests/progs/storm: N tasks, each sends one small message
# to its successor and takes one with pvm_recv(-1, tag), R rounds, which
# makes 10 N R + 16 N + 2 events (its header comment).  Defaults: 8 tasks,
# 50000 rounds (4,000,130 events), 3 runs of each variant, interleaved:
#
#   plain  storm alone (no pmon);
#   pmon   `pmon start` with default settings (or PMON_START_ARGS), then
#          `pmon record -o run.pmr` attached, then `pmon exec storm`;
#          `pmon flush` and `pmon shutdown` after it.  Each run has its
#          own coordinator, so its peak RSS is the run's.
#
# Per pmon run: the program's wall time; the events the recording holds
# and the events it lost (what the program made, from the formula, less
# what the recording holds that is not a lost marker); the
# coordinator's CPU time (utime + stime, /proc/PID/stat, before the
# shutdown) per event and its peak RSS (VmHWM); pmon record's CPU; the
# agent's peak RSS and CPU (on stderr).
# After the last run, the recording is replayed to time the tools on
# their own CPU (GNU time's user + system): `pmon record -o copy.pmr`
# and `pmon trace --json >/dev/null`, as events per second; and pmon
# web's CPU until it has the whole recording (on stderr).
#
# The last line is the summary (medians over the runs; lost is the
# largest):
#	soak events=E lost=L slowdown=S coord_ns_per_event=C
#	    coord_peak_mb=M record_ev_s=W trace_json_ev_s=J
. "$(dirname "$0")/../tests/integ/lib.sh"

tasks=8 rounds=50000 runs=3
while getopts "k:n:r:" o; do
	case $o in
	k) runs=$OPTARG ;;
	n) tasks=$OPTARG ;;
	r) rounds=$OPTARG ;;
	*) echo "usage: bench_soak.sh [-n tasks] [-r rounds] [-k runs]" \
	       "[-- pmon-start-args]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
START_ARGS=("$@")

pm_setup
need_pmon
need_built "$PROGS/storm"
command -v /usr/bin/time >/dev/null || fail "GNU time (/usr/bin/time) is needed"
start_pvmd
events=$((10 * tasks * rounds + 16 * tasks + 2))
hz=$(getconf CLK_TCK)

now() { date +%s.%N; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

run_plain() {
	local t0 t1
	t0=$(now)
	timeout 600 "$PROGS/storm" "$tasks" "$rounds" >"$RUN/plain.out" \
	    2>&1 || fail "storm: $(cat "$RUN/plain.out")"
	t1=$(now)
	echo "$t1 - $t0" | bc >>"$RUN/plain.wall"
	pm_log "plain $(tail -n 1 "$RUN/plain.wall") s"
}

# The recording's events, and the events its lost markers stand for.
recording_counts() {
	"$PMON" replay "$1" -- "$PMON" trace --json >"$RUN/replay.json" \
	    2>"$RUN/replay.err" || fail "replay: $(cat "$RUN/replay.err")"
	awk -F'"call":"' 'NF > 1 { if ($2 ~ /^lost"/) { lost++;
		match($0, /"count":[0-9]+/)
		lc += substr($0, RSTART + 8, RLENGTH - 8) } else ev++ }
	    END { print ev + 0, lost + 0, lc + 0 }' "$RUN/replay.json"
}

run_pmon() {
	local i=$1 t0 t1 c0 c1 rec_pid ev markers lc agent_pid
	local hwm rec_ticks agent_hwm agent_ticks
	pmon_start -v "${START_ARGS[@]}"
	bg "$PMON" record -o "$RUN/run.pmr" </dev/null 2>"$RUN/record.err"
	rec_pid=$BG_PID
	wait_for 10 trace_connected "$rec_pid" ||
	    fail "pmon record did not connect: $(cat "$RUN/record.err")"
	timeout 20 "$PMON" flush </dev/null >/dev/null 2>&1 || fail "flush"
	c0=$(cpu_ticks "$COORD_PID")
	t0=$(now)
	timeout 600 "$PMON" exec "$PROGS/storm" "$tasks" "$rounds" \
	    </dev/null >"$RUN/storm.out" 2>&1 ||
	    fail "storm under pmon: $(cat "$RUN/storm.out")"
	t1=$(now)
	timeout 600 "$PMON" flush </dev/null >/dev/null 2>&1 || fail "flush"
	c1=$(cpu_ticks "$COORD_PID")
	agent_pid=$(sock_pid "$(agent_sock)")
	echo "$(hwm_kb "$COORD_PID") $(cpu_ticks "$rec_pid")" \
	    "$(hwm_kb "$agent_pid") $(cpu_ticks "$agent_pid")" >"$RUN/hwm"
	timeout 600 "$PMON" shutdown </dev/null >/dev/null 2>&1 ||
	    fail "shutdown"
	wait_for 600 pid_dead "$rec_pid" || fail "pmon record did not end"
	wait "$rec_pid" || fail "pmon record: $(cat "$RUN/record.err")"
	wait_for 10 pid_dead "$COORD_PID"
	read -r ev markers lc <<<"$(recording_counts "$RUN/run.pmr")"
	read -r hwm rec_ticks agent_hwm agent_ticks <"$RUN/hwm"
	echo "$t1 - $t0" | bc >>"$RUN/pmon.wall"
	echo "$((events - ev))" >>"$RUN/lost"
	awk -v c=$((c1 - c0)) -v hz="$hz" -v e="$events" \
	    'BEGIN { printf "%.0f\n", c * 1e9 / hz / e }' >>"$RUN/coordns"
	echo "$hwm" >>"$RUN/hwm_kb"
	pm_log "pmon run $i: $(tail -n 1 "$RUN/pmon.wall") s, recorded" \
	    "$ev of $events events ($markers lost markers for $lc)," \
	    "coordinator $(tail -n 1 "$RUN/coordns") ns/event," \
	    "peak $((hwm / 1024)) MB, pmon record" \
	    "$((rec_ticks * 1000 / hz)) ms CPU, agent peak" \
	    "$((agent_hwm / 1024)) MB and $((agent_ticks * 1000 / hz)) ms CPU"
}

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Events per second of the tool's own CPU, reading the recording.
tool_rate() {
	local out=$RUN/tool.time
	"$PMON" replay "$RUN/run.pmr" -- /usr/bin/time -f '%U %S' -o "$out" \
	    "$@" >/dev/null 2>"$RUN/tool.err" ||
	    fail "$*: $(cat "$RUN/tool.err")"
	awk -v e="$events" '{ printf "%.0f\n", e / ($1 + $2) }' "$out"
}

# Events per second of pmon web's CPU, loading the recording from a
# replay (it keeps serving after the replay's end: we stop it then).
web_rate() {
	local dir=$RUN/webreplay web_pid ticks
	mkdir -p "$dir"
	PVM_TMP=$dir "$PMON" replay "$RUN/run.pmr" >/dev/null 2>"$dir/replay.err" ||
	    fail "replay: $(cat "$dir/replay.err")"
	bg env PVM_TMP="$dir" "$PMON" web --port 0 >/dev/null 2>"$dir/web.err"
	web_pid=$BG_PID
	wait_for 600 grep -q "coordinator is gone" "$dir/web.err" ||
	    fail "pmon web did not load the recording: $(cat "$dir/web.err")"
	ticks=$(cpu_ticks "$web_pid")
	kill "$web_pid"
	wait "$web_pid" 2>/dev/null
	PVM_TMP=$dir "$PMON" shutdown >/dev/null 2>&1
	awk -v e="$events" -v t="$ticks" -v hz="$hz" \
	    'BEGIN { printf "%.0f\n", e * hz / (t > 0 ? t : 1) }'
}

for i in $(seq 1 "$runs"); do
	run_plain
	run_pmon "$i"
done
record_rate=$(tool_rate "$PMON" record -o "$RUN/copy.pmr")
json_rate=$(tool_rate "$PMON" trace --json)
pm_log "pmon web loads the recording at $(web_rate) events per CPU second"
awk -v e="$events" -v l="$(sort -n "$RUN/lost" | tail -n 1)" \
    -v p="$(median "$RUN/plain.wall")" -v m="$(median "$RUN/pmon.wall")" \
    -v c="$(median "$RUN/coordns")" -v h="$(sort -n "$RUN/hwm_kb" | tail -n 1)" \
    -v w="$record_rate" -v j="$json_rate" 'BEGIN {
	printf "soak events=%d lost=%d slowdown=%.3f coord_ns_per_event=%d " \
	    "coord_peak_mb=%.1f record_ev_s=%d trace_json_ev_s=%d\n",
	    e, l, m / p, c, h / 1024, w, j }'
