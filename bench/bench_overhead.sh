#!/bin/bash
# bench_overhead.sh: what watching costs a real program's small-message
# round trip (BENCHMARKS.md, "make bench-overhead").
#
#	bench_overhead.sh [-r REPS] [-n ROUNDS] [-s BYTES] [-N REPEATS]
#	    [-B TRACEBUF] [-p NICE] [-c CPUS] [-t]
#
# A private virtual machine (run directory, PVM_TMP and the cleanup trap
# of tests/integ/lib.sh: everything started here is stopped by pid, also
# on failure or ^C) with pmon started on it.  Two programs, each in
# three variants, interleaved a b c a b c ... REPS times after one
# warm-up round that is not counted:
#
#   a  uninstrumented: the program as it is (pmon's daemons idle);
#   b  under pmon: `pmon exec PROGRAM`, every task preloaded, its agent
#      draining and the coordinator ordering the records; `pmon flush`
#      after the run so that no backlog runs into the next one;
#   c  under PVM's own tracing: bench/pvmtracer registered as the
#      machine's tracer (pvm_reg_tracer, every event kind, full
#      records, a TRACEBUF-byte trace buffer: XPVM's mechanism) while
#      the program runs, unregistered after.
#
# The programs:
#   smallpp ROUNDS BYTES (bench/smallpp.c): master and one worker, PVM's
#      default route (task - pvmd - task), 100 untimed rounds first;
#      the mean round trip of the timed rounds, rtt_mean_ns (and their
#      median, rtt_p50_ns, for the details).
#   NPpvm (Debian's netpipe-pvm) with BYTES-byte messages, REPEATS
#      round trips per trial (direct task-to-task route); its latency
#      (half the best trial's round trip) doubled.  NPpvm insists on a
#      machine of exactly two tasks: bench/nptasks.so, preloaded in every
#      variant, shows it only the NPpvm tasks.  Without NPpvm installed
#      the bench says so and measures smallpp only (NPPVM= skips it too).
#
# Defaults: 21 repetitions, 3000 rounds, 4 bytes, 3000 NPpvm repeats, a
# 4096-byte trace buffer.  The machine is shared: the bench renices
# itself to NICE (-10; 0 leaves it) before it starts pvmd, so that the
# program, pvmd, pmon's daemons and the tracer all run at that priority
# and other jobs disturb the runs less.  -c CPUS (taskset's list) binds
# them all to those CPUs: with one, every cycle pmon or the tracer
# spends, in the task or beside it, is taken from the ping-pong.
#
# -t attaches a tool for the whole bench (`pmon trace --json` to
# /dev/null): under pmon the events then also reach a subscriber.
#
# Each run's numbers go to stderr.  The medians per variant follow, and
# the ratios of the medians, instrumented over uninstrumented.  pmon's
# `pmon ps` must show every monitored smallpp task with every message,
# and the tracer must have received trace messages from both tasks of
# each traced run, or the bench fails.  The last line on stdout is
#	overhead rtt_ratio_pmon=R rtt_ratio_pvmtrace=R2
# (smallpp's mean round trip).
. "$(dirname "$0")/../tests/integ/lib.sh"

reps=21 rounds=3000 bytes=4 nprepeats=3000 tracebuf=4096 tool=0 nice=-10
cpus=
while getopts "B:c:n:N:p:r:s:t" o; do
	case $o in
	B) tracebuf=$OPTARG ;;
	c) cpus=$OPTARG ;;
	n) rounds=$OPTARG ;;
	p) nice=$OPTARG ;;
	N) nprepeats=$OPTARG ;;
	r) reps=$OPTARG ;;
	s) bytes=$OPTARG ;;
	t) tool=1 ;;
	*) echo "usage: bench_overhead.sh [-r reps] [-n rounds] [-s bytes]" \
	       "[-N nppvm_repeats] [-B tracebuf] [-p nice] [-c cpus] [-t]" >&2
	   exit 2 ;;
	esac
done

TRACER=$PMON_BUILD/bench/pvmtracer
NPTASKS=$PMON_BUILD/bench/nptasks.so
SMALLPP=$PMON_BUILD/bench/smallpp
WARMUP=100
pm_setup
need_pmon
need_built "$SMALLPP" "$TRACER" "$NPTASKS"
# NPPVM names the binary; set but empty, it skips NPpvm.
NPPVM=${NPPVM-$(command -v NPpvm)}
[ -n "$NPPVM" ] || echo "bench_overhead: NPpvm not found: install Debian's" \
    "netpipe-pvm (apt-get install netpipe-pvm) to measure it too;" \
    "measuring smallpp only" >&2

# Everything started from here on inherits the priority: the program,
# pvmd, pmon's daemons and the tracer alike.
[ "$nice" = 0 ] || renice -n "$nice" -p $$ >/dev/null ||
    fail "cannot renice to $nice"
[ -z "$cpus" ] || taskset -pc "$cpus" $$ >/dev/null ||
    fail "cannot bind to CPUs $cpus"
# pvmd spawns smallpp's worker from the bench directory.
write_hostfile "$RUN/hostfile"
sed -i "1s|\$|:$PMON_BUILD/bench|" "$RUN/hostfile"
start_pvmd "$RUN/hostfile"
pmon_start
if [ "$tool" = 1 ]; then
	bg "$PMON" trace --json </dev/null >/dev/null 2>"$RUN/tool.err"
	TOOL_PID=$BG_PID
fi
RES=$RUN/results		# lines: PROGRAM VARIANT REP RTT_NS
: >"$RES"

# tracer_start N / tracer_stop N: variant c's tracer around one run.
tracer_start() {
	bg "$TRACER" -b "$tracebuf" -R "$RUN/tracer$1.ready" \
	    -o "$RUN/tracer$1.stats" </dev/null 2>"$RUN/tracer$1.err"
	TRACER_PID=$BG_PID
	wait_for 10 test -e "$RUN/tracer$1.ready" ||
	    fail "pvmtracer did not register: $(cat "$RUN/tracer$1.err")"
}

# The tracer must have had trace messages from at least two tasks, and
# must be gone (unregistered) before the next run enrols.
tracer_stop() {
	local msgs senders
	kill -TERM "$TRACER_PID"
	wait "$TRACER_PID" ||
	    fail "pvmtracer exited with $?: $(cat "$RUN/tracer$1.err")"
	msgs=$(stat_of "$RUN/tracer$1.stats" trace_msgs)
	senders=$(stat_of "$RUN/tracer$1.stats" tasks)
	[ "$msgs" -gt 0 ] && [ "$senders" -ge 2 ] ||
	    fail "run $1 was not traced: $msgs trace messages from" \
		"$senders tasks"
	cat "$RUN/tracer$1.stats" >>"$RUN/tracer.all"
}

# prefix VARIANT: the command prefix of a variant.
prefix() { [ "$1" = b ] && echo "$PMON exec"; }

run_smallpp() {
	local v=$1 id=$2 out=$RUN/pp-$1-$2.out rtt p50
	[ "$v" = c ] && tracer_start "pp$id"
	timeout 120 $(prefix "$v") "$SMALLPP" "$rounds" "$bytes" "$WARMUP" \
	    </dev/null >"$out" 2>"$out.err" ||
	    fail "smallpp ($v) failed: $(cat "$out.err")"
	[ "$v" = c ] && tracer_stop "pp$id"
	[ "$v" = b ] && pmon_flush
	rtt=$(stat_of "$out" rtt_mean_ns)
	p50=$(stat_of "$out" rtt_p50_ns)
	[ "$rtt" -gt 0 ] || fail "smallpp ($v) printed no rtt_mean_ns"
	echo "smallpp $v $id $rtt" >>"$RES"
	echo "smallpp_p50 $v $id $p50" >>"$RES"
}

# NPpvm: the receiver first, then the transmitter (-h this host).  Its
# output file holds "BYTES Mbps SECONDS", SECONDS half a round trip.
run_nppvm() {
	local v=$1 id=$2 out=$RUN/np-$1-$2 rpid lat
	local args="-l $bytes -u $bytes -p 0 -n $nprepeats"
	[ -n "$NPPVM" ] || return 0
	[ "$v" = c ] && tracer_start "np$id"
	LD_PRELOAD=$NPTASKS timeout 120 $(prefix "$v") "$NPPVM" $args \
	    -o "$out.recv" </dev/null >"$out.recv.log" 2>&1 &
	rpid=$!
	LD_PRELOAD=$NPTASKS timeout 120 $(prefix "$v") "$NPPVM" \
	    -h "$(hostname)" $args -o "$out.txt" </dev/null >"$out.log" 2>&1 ||
	    fail "NPpvm ($v) failed: $(cat "$out.log")"
	wait "$rpid" || fail "NPpvm receiver ($v) failed: $(cat "$out.recv.log")"
	[ "$v" = c ] && tracer_stop "np$id"
	[ "$v" = b ] && pmon_flush
	lat=$(awk -v b="$bytes" '$1 == b { printf "%.0f", $3 * 2e9 }' "$out.txt")
	[ -n "$lat" ] || fail "NPpvm ($v) wrote no result for $bytes bytes"
	echo "nppvm $v $id $lat" >>"$RES"
}

pmon_flush() {
	timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
	    fail "pmon flush failed: $(cat "$RUN/flush.err")"
}

for i in $(seq 0 "$reps"); do		# 0: the warm-up
	for v in a b c; do run_smallpp "$v" "$i"; done
	for v in a b c; do run_nppvm "$v" "$i"; done
	pm_log "round $i: $(awk -v i="$i" '$3 == i { printf "%s %s %s  ", $1, $2, $4 }' "$RES")"
done

# pmon saw every monitored smallpp: a master that sent the init and
# a ping each round, a worker that sent a pong each round.
"$PMON" ps </dev/null >"$RUN/ps.out" 2>&1 || fail "pmon ps: $(cat "$RUN/ps.out")"
seen=$(awk -v n=$((WARMUP + rounds)) '$3 == "smallpp" &&
    ($6 ~ "^" n + 1 "/" || $6 ~ "^" n "/")' "$RUN/ps.out" | wc -l)
expect_eq "smallpp tasks pmon saw with every message" \
    $((2 * (reps + 1))) "$seen"
[ "$tool" = 1 ] && { pid_alive "$TOOL_PID" || fail "pmon trace exited"; }
pmon_shutdown ${TOOL_PID:+"$TOOL_PID"}

# Medians (the lower middle value) and ratios; the warm-up is left out.
# Besides the ratio of the medians (the summary line), the median of
# each repetition's own ratio: a, b and c of one repetition ran within
# seconds of each other, under much the same load from the rest of the
# machine.
awk '
    $3 > 0 { t[$1, $2, $3] = $4; n[$1, $2] = n[$1, $2] " " $4; reps[$3] = 1 }
    function median(s,   a, k, i, j, x) {
	k = split(s, a, " ")
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			x = a[j]; a[j] = a[j - 1]; a[j - 1] = x
		}
	return a[int((k + 1) / 2)]
    }
    function paired(prog, v,   r, s) {
	s = ""
	for (r in reps)
		if ((prog, v, r) in t && (prog, "a", r) in t)
			s = s " " t[prog, v, r] / t[prog, "a", r]
	return median(s)
    }
    END {
	for (p = 0; p < 3; p++) {
		prog = p == 0 ? "smallpp" : p == 1 ? "smallpp_p50" : "nppvm"
		if (!((prog, "a") in n))
			continue
		ma = median(n[prog, "a"]); mb = median(n[prog, "b"])
		mc = median(n[prog, "c"])
		printf "%s rtt_ns medians: plain %d, pmon %d, pvmtrace %d;" \
		    " ratios of the medians: pmon %.4f, pvmtrace %.4f;" \
		    " medians of the ratios: pmon %.4f, pvmtrace %.4f\n",
		    prog, ma, mb, mc, mb / ma, mc / ma, paired(prog, "b"),
		    paired(prog, "c") > "/dev/stderr"
		if (prog == "smallpp") {
			rp = mb / ma; rt = mc / ma
		}
	}
	printf "overhead rtt_ratio_pmon=%.4f rtt_ratio_pvmtrace=%.4f\n", rp, rt
    }' "$RES" >"$RUN/summary"
echo "bench_overhead: $reps repetitions (+1 warm-up), smallpp $rounds" \
    "$bytes $WARMUP, NPpvm ${NPPVM:+-n $nprepeats }${NPPVM:-not run}, trace buffer" \
    "$tracebuf B, nice $nice, CPUs ${cpus:-all}; $(grep -c ^processor /proc/cpuinfo) CPUs," \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
cat "$RUN/summary"
