#!/bin/bash
# coord_callgrind.sh: instructions the coordinator executes per event,
# which a shared, noisy machine cannot disturb (BENCHMARKS.md).
#
#	PMON_BUILD=build bash bench/coord_callgrind.sh [N [ROUNDS]]
#
# CG_OUT names a file to keep the profile in, for callgrind_annotate.
#
# A private virtual machine (lib.sh), pmon started with pmon-coordd
# under `valgrind --tool=callgrind`, `pmon record` attached, and `storm
# N ROUNDS` (default 8 x 5000: 10 N R + 16 N + 2 = 400,130 events) run
# under pmon exec; then a flush and a shutdown.  Prints the program
# total and the instructions per event:
#	coord_callgrind events=E instructions=I per_event=P
. "$(dirname "$0")/../tests/integ/lib.sh"
N=${1:-8} R=${2:-5000}
command -v valgrind >/dev/null || fail "valgrind is needed (apt-get install valgrind)"
pm_setup
need_pmon
start_pvmd
cat >"$RUN/coordd-cg" <<EOS
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file=$RUN/cg.%p "$PMON_COORDD" "\$@"
EOS
chmod +x "$RUN/coordd-cg"
export PMON_COORDD=$RUN/coordd-cg
pmon_start
bg "$PMON" record -o "$RUN/run.pmr" </dev/null >/dev/null 2>"$RUN/record.err"
REC=$BG_PID
wait_for 60 trace_connected "$REC" || fail "pmon record did not connect"
timeout 600 "$PMON" exec "$PROGS/storm" "$N" "$R" >"$RUN/storm.out" 2>&1 ||
    fail "storm: $(cat "$RUN/storm.out")"
timeout 600 "$PMON" flush >/dev/null || fail "pmon flush failed"
timeout 600 "$PMON" shutdown >/dev/null || fail "pmon shutdown failed"
wait "$REC"
wait_for 120 pid_dead "$COORD_PID" || fail "callgrind did not finish"
events=$((10 * N * R + 16 * N + 2))
# The daemon forks once: the child that runs the loop has the most.
big=$(for f in "$RUN"/cg.*; do
	printf '%s %s\n' "$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$f")" "$f"
done | sort -n | tail -1)
ins=${big%% *}
[ -z "${CG_OUT:-}" ] || cp "${big#* }" "$CG_OUT"
[ -n "$ins" ] || fail "no callgrind output"
echo "coord_callgrind events=$events instructions=$ins per_event=$((ins / events))"
pass
