#!/bin/bash
# bench_record.sh: what pmon record costs per event, in recording formats
# 1 and 2 (doc/recording.md, BENCHMARKS.md, "make bench-record").
#
#	bench_record.sh [-i run.pmr] [-r runs] [-t tasks] [-R rounds]
#
# The recording to work on is -i, or one made first: tests/progs/storm
# TASKS ROUNDS (default 8 50000, about 4 M events) on a private virtual
# machine (tests/integ/lib.sh: everything started here is stopped by
# pid, also on failure or ^C) under pmon start -Q 256M with pmon record
# attached from the start.  Then, each -r times (default 5), the two
# formats in turn:
#   - bench_record: the writer alone and the reader alone, in events per
#     CPU second of their process, and bytes per event;
#   - pmon record end to end: pmon replay run.pmr -- /usr/bin/time pmon
#     record -F N: events per CPU second (user + system) of the record
#     process itself, reading the stream from a replay coordinator;
#   - the replay of what it wrote: wall seconds of pmon replay out.pmr
#     -- pmon flush (read, served to the final state).
# It prints the medians; the last line is
#	record v1_ev_s=E1 v2_ev_s=E2 v1_B_ev=B1 v2_B_ev=B2
#	    v1_writer_ev_s=W1 v2_writer_ev_s=W2 v1_read_ev_s=R1
#	    v2_read_ev_s=R2 v1_replay_s=S1 v2_replay_s=S2
. "$(dirname "$0")/../tests/integ/lib.sh"

BENCH=$PMON_BUILD/bench/bench_record
IN="" RUNS=5 TASKS=8 ROUNDS=50000
while getopts i:r:t:R: o; do
	case $o in
	i) IN=$(realpath "$OPTARG") ;;
	r) RUNS=$OPTARG ;;
	t) TASKS=$OPTARG ;;
	R) ROUNDS=$OPTARG ;;
	*) echo "usage: bench_record.sh [-i run.pmr] [-r runs] [-t tasks]" \
	    "[-R rounds]" >&2; exit 2 ;;
	esac
done
pm_setup
need_pmon
need_built "$BENCH" "$PROGS/storm"

# The recorder's own CPU so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

# make_recording OUT: a storm under pmon, recorded whole.
make_recording() {
	local prev=-1 now
	start_pvmd
	pmon_start -Q 268435456
	bg "$PMON" record -o "$1" </dev/null >"$RUN/rec.out" 2>"$RUN/rec.err"
	REC_PID=$BG_PID
	wait_for 10 trace_connected "$REC_PID" ||
	    fail "pmon record did not connect: $(cat "$RUN/rec.err")"
	timeout 20 "$PMON" flush </dev/null >/dev/null ||
	    fail "pmon flush failed"
	timeout 600 "$PMON" exec "$PROGS/storm" "$TASKS" "$ROUNDS" \
	    >"$RUN/storm.out" 2>"$RUN/storm.err" ||
	    fail "storm failed: $(cat "$RUN/storm.err")"
	# Lossless: the recorder may still be writing what is queued.
	while now=$(cpu_ticks "$REC_PID") && [ "$now" != "$prev" ]; do
		prev=$now
		sleep 2
	done
	pmon_shutdown
	wait_for 60 pid_dead "$REC_PID" || fail "pmon record did not exit"
	wait "$REC_PID" || fail "pmon record: $(cat "$RUN/rec.err")"
	pm_log "$(cat "$RUN/rec.err")"
}

if [ -z "$IN" ]; then
	IN=$RUN/run.pmr
	make_recording "$IN"
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? \
    v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

"$BENCH" -i "$IN" -r "$RUNS" -d "$RUN" >"$RUN/writer.out" ||
    fail "bench_record failed"
cat "$RUN/writer.out"
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$RUN/writer.out" | tail -n 1; }

: >"$RUN/e2e"
for i in $(seq "$RUNS"); do
	for f in 1 2; do
		out=$RUN/out$f.pmr
		TMPDIR=$RUN timeout 600 "$PMON" replay "$IN" -- /usr/bin/time \
		    -f 'cpu %U %S' "$PMON" record -F "$f" -o "$out" \
		    </dev/null >/dev/null 2>"$RUN/e2e.err" ||
		    fail "pmon record -F $f: $(cat "$RUN/e2e.err")"
		ev=$(sed -n 's/^pmon record: .*: \([0-9]*\) events, .*/\1/p' \
		    "$RUN/e2e.err")
		cpu=$(awk '$1 == "cpu" { print $2 + $3 }' "$RUN/e2e.err")
		[ -n "$ev" ] && [ -n "$cpu" ] ||
		    fail "no summary: $(cat "$RUN/e2e.err")"
		bytes=$(stat -c %s "$out")
		start=$(date +%s.%N)
		TMPDIR=$RUN timeout 600 "$PMON" replay "$out" -- "$PMON" flush \
		    </dev/null >/dev/null 2>"$RUN/replay.err" ||
		    fail "pmon replay: $(cat "$RUN/replay.err")"
		end=$(date +%s.%N)
		echo "$f $ev $cpu $bytes $start $end" |
		    awk '{ print $1, $2, $3, $4, $6 - $5 }' >>"$RUN/e2e"
	done
done
for f in 1 2; do
	awk -v f=$f '$1 == f { print $2 / $3 }' "$RUN/e2e" | median \
	    >"$RUN/ev_s.$f"
	awk -v f=$f '$1 == f { print $4 / $2 }' "$RUN/e2e" | median \
	    >"$RUN/b_ev.$f"
	awk -v f=$f '$1 == f { print $5 }' "$RUN/e2e" | median \
	    >"$RUN/replay_s.$f"
	printf 'format %s: pmon record %.2f M events/CPU s, %.2f B/event, ' \
	    "$f" "$(awk '{ print $1 / 1e6 }' "$RUN/ev_s.$f")" \
	    "$(cat "$RUN/b_ev.$f")"
	printf 'pmon replay -- pmon flush %.2f s (medians of %s)\n' \
	    "$(cat "$RUN/replay_s.$f")" "$RUNS"
	printf 'format %s: pmon record, each run: %s M events/CPU s\n' "$f" \
	    "$(awk -v f=$f '$1 == f { printf "%s%.2f", n++ ? " " : "", \
	    $2 / $3 / 1e6 }' "$RUN/e2e")"
done
echo "bench_record: $(nproc) CPUs," \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
printf 'record v1_ev_s=%.0f v2_ev_s=%.0f v1_B_ev=%.2f v2_B_ev=%.2f ' \
    "$(cat "$RUN/ev_s.1")" "$(cat "$RUN/ev_s.2")" "$(cat "$RUN/b_ev.1")" \
    "$(cat "$RUN/b_ev.2")"
printf 'v1_writer_ev_s=%s v2_writer_ev_s=%s v1_read_ev_s=%s ' \
    "$(field v1_ev_s)" "$(field v2_ev_s)" "$(field v1_read_ev_s)"
printf 'v2_read_ev_s=%s v1_replay_s=%.2f v2_replay_s=%.2f\n' \
    "$(field v2_read_ev_s)" "$(cat "$RUN/replay_s.1")" \
    "$(cat "$RUN/replay_s.2")"
