#!/bin/bash
# Protects "nothing falls between two coordinators" (issue 16, doc/
# capture.md "A coordinator restart"): a steady storm (4 tasks, paced)
# runs while its coordinator is SIGKILLed and started again on the same
# address, three times, each with a `pmon trace` attached that lags
# (stopped for 0.3 s) when its coordinator dies.  Together the
# four traces hold every record of every task, each either as an event
# or inside a lost marker (none unaccounted for), and the last one
# reaches the program's end: every task's last record, as the program
# counted its calls.  Records two traces share (a restart delivers
# again what the dead one had sent but not yet acknowledged) must carry
# the again flag in the later one (EVENT_AGAIN), so that a tool joining
# the streams can drop them: none is there twice unflagged.  A `pmon
# record` attached from the start waits for each new coordinator and
# goes on in the same file: its replay holds every record exactly once
# (or inside a lost marker), and its replayed model reports no problem.
# At the first restart it is stopped until the new coordinator has
# released events: those must be inside a lost notice of the recording.  The program has no problem, and the last
# coordinator reports none.  Messages keep being matched after a
# restart (each receive names its message, doc/ordering.md "Message
# ids"): every match in every trace names a send to that receiver with
# its tag, no message is matched twice, and in a restarted trace only the
# messages in flight at the restart go unmatched: a task's unmatched
# receives from a sender all come before its first matched one (unless
# the sender lost records from its ring in that trace).
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon

K=3			# restarts
start_pvmd
# 16 MiB rings: about 10 s of a task's records while its agent waits.
pmon_start -Q 268435456 -R 16777216 -l 127.0.0.1
port=${COORD_ADDR##*:}
[ -n "$port" ] || fail "no agent address from pmon start"
pmon_trace "$RUN/t0.json"
REC=$RUN/run.pmr
bg $PM_ON "$PMON" record -o "$REC" </dev/null >"$RUN/record.out" \
    2>"$RUN/record.err"
REC_PID=$BG_PID
wait_for 10 trace_connected "$REC_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/record.err")"

bg timeout 300 "$PMON" exec "$PROGS/storm" -p 300 4 20000 "$RUN/calls" \
    </dev/null >"$RUN/storm.out" 2>&1
STORM=$BG_PID
# last_seq TID FILE: the seq of TID's last event in FILE (a task's
# events come in order).
last_seq() {
	grep "\"tid\":$1,.*\"seq\":" "$2" | tail -n 1 |
	    sed 's/.*"seq":\([0-9]*\).*/\1/'
}
# past TID SEQ FILE: FILE holds an event of TID after SEQ.
past() { [ "$(last_seq "$1" "$3")" -gt "$2" ] 2>/dev/null; }
for i in $(seq 1 $K); do
	sleep 1
	# The trace lags (a slow viewer): what waits for it in the
	# coordinator dies with it, and must come from the next one.  At
	# the first restart the recorder is late instead: the new
	# coordinator releases events before it is back, which it must
	# mark (the trace, not stopped, acknowledges them).
	if [ "$i" = 1 ]; then
		kill -STOP "$REC_PID"
	else
		kill -STOP "$TRACE_PID"
	fi
	sleep 0.3
	# The agent waits until the new coordinator's tools are attached:
	# what a coordinator releases before a tool attaches is not that
	# tool's (pmon record says so, doc/capture.md), and on a loaded
	# machine the agent could be back first.
	AGENT_PID=$(sock_pid "$(agent_sock)")
	[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"
	kill -STOP "$AGENT_PID"
	kill -KILL "$COORD_PID"
	# The next one starts the log afresh: keep this one's.
	cp "$(coord_log)" "$RUN/coordd$((i - 1)).log" 2>/dev/null || true
	kill -CONT "$TRACE_PID"
	wait_for 10 pid_dead "$COORD_PID" ||
	    fail "the coordinator survived SIGKILL"
	wait_for 30 pid_dead "$TRACE_PID" ||
	    fail "trace $((i - 1)) outlived its coordinator"
	[ "$i" = 1 ] || pid_alive "$REC_PID" ||
	    fail "pmon record ended with its coordinator: $(cat "$RUN/record.err")"
	"$PMON_COORDD" -N -Q 268435456 -l "127.0.0.1:$port" -r 3 \
	    3>"$RUN/ready$i" </dev/null >/dev/null 2>"$RUN/coordd$i.err" ||
	    fail "pmon-coordd $i: $(cat "$RUN/coordd$i.err")"
	COORD_PID=$(sock_pid "$(coord_sock)")
	PM_COORD_PIDS="$PM_COORD_PIDS $COORD_PID"
	pmon_trace "$RUN/t$i.json"
	if [ "$i" = 1 ]; then
		# The recorder cannot have more of a task than the last
		# trace got: wait until the new one is well past that.
		tid=$(grep -m 1 '"seq"' "$RUN/t$((i - 1)).json" |
		    sed 's/.*"tid":\([0-9]*\),.*/\1/')
		last=$(last_seq "$tid" "$RUN/t$((i - 1)).json")
		kill -CONT "$AGENT_PID"
		wait_for 30 past "$tid" $((last + 1000)) "$RUN/t$i.json" ||
		    fail "coordinator $i released too little"
		kill -CONT "$REC_PID"
	fi
	wait_for 20 eval '[ "$(grep -c "took over" "$RUN/record.err")" = $i ]' ||
	    fail "pmon record did not follow coordinator $i: \
$(cat "$RUN/record.err")"
	kill -CONT "$AGENT_PID"
done
wait "$STORM" || fail "storm failed: $(cat "$RUN/storm.out")"
grep -qx "storm ok" "$RUN/storm.out" || fail "storm did not finish"
wait_for 30 storm_gone || fail "storm tasks still run"
# The last coordinator never saw the sends the first ones released: it
# reports no false problem for them.
$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>&1
$PM_ON timeout 20 "$PMON" problems --json </dev/null >"$RUN/problems.json" \
    2>&1 || fail "pmon problems: $(cat "$RUN/problems.json")"
expect_eq "problems after the restarts" 0 "$(jq ".problems | length" \
    "$RUN/problems.json")"
pmon_shutdown "$TRACE_PID"
wait_for 10 pid_dead "$REC_PID" || fail "pmon record did not end at BYE"
wait "$REC_PID" || fail "pmon record failed: $(cat "$RUN/record.err")"
expect_eq "coordinators pmon record followed" $K "$(grep -c \
    'a coordinator took over' "$RUN/record.err")"
grep -q "[1-9][0-9]* events were released by a coordinator that took over \
before this recorder was back" "$RUN/record.err" ||
    fail "the late recorder did not count what it missed: \
$(cat "$RUN/record.err")"
grep -q "$K coordinators took over; [0-9]* events they delivered again \
were in it already" "$RUN/record.err" ||
    fail "no summary of the takeovers: $(cat "$RUN/record.err")"
TMPDIR=$RUN timeout 60 "$PMON" replay "$REC" -- sh -c '"$1" trace --json \
    --tasks >"$2" && "$1" problems --json >"$3"' sh "$PMON" \
    "$RUN/replay.json" "$RUN/replay.problems" </dev/null \
    2>"$RUN/replay.err" || fail "pmon replay: $(cat "$RUN/replay.err")"
expect_eq "problems in the replay" 0 "$(jq ".problems | length" \
    "$RUN/replay.problems")"

# One pass over each trace, in awk (jq took most of this test's time;
# pmon trace --json writes its fields in a fixed order, trace_fmt.c):
# "Q tid seq call file-index again" of every event, for the coverage
# below; "S tid:seq src tag dst..." of sends and multicasts, "R trace
# dst src tag match|-" of receive ends and "L trace tid" of lost
# markers, for the matches; "N tid first count" of the lost notices.
# A line that is no JSON object fails it.
scan() {
	awk -v i="$1" '
function num(k,   p, v) {
	if ((p = index($0, "\"" k "\":")) == 0)
		return ""
	v = substr($0, p + length(k) + 3)
	match(v, /^-?[0-9]+/)
	return substr(v, 1, RLENGTH)
}
function str(k,   p, v) {
	if ((p = index($0, "\"" k "\":\"")) == 0)
		return ""
	v = substr($0, p + length(k) + 4)
	return substr(v, 1, index(v, "\"") - 1)
}
!/^\{.*\}$/ { bad = 1; exit }
{
	call = str("call"); phase = str("phase"); seq = num("seq")
	if (seq != "")
		print "Q", num("tid"), seq, call, i,
		    (index($0, "\"again\":true") ? "true" : "false")
	if (phase == "begin" && (call == "pvm_send" || call == "pvm_mcast")) {
		d = $0; sub(/.*"dst":/, "", d)
		if (substr(d, 1, 1) == "[") {
			sub(/^\[/, "", d); sub(/\].*/, "", d); gsub(/,/, " ", d)
		} else
			sub(/[,}].*/, "", d)
		print "S " str("id") " " num("src") " " num("tag") " " d
	}
	if (phase == "end" && index($0, "\"msg\":true") && (call == \
	    "pvm_recv" || call == "pvm_nrecv" || call == "pvm_trecv")) {
		m = str("match")
		print "R", i, num("tid"), num("src"), num("tag"),
		    (m == "" ? "-" : m)
	}
	if (call == "lost")
		print "L", i, num("tid")
	if (str("notice") == "lost") {
		v = $0
		while (match(v, /\{"tid":-?[0-9]+,"first":[0-9]+,"last":[0-9]+,"events":[0-9]+\}/)) {
			t = substr(v, RSTART, RLENGTH); v = substr(v, RSTART + RLENGTH)
			gsub(/[^0-9,-]/, "", t); split(t, f, ",")
			print "N", f[1], f[2], f[4]
		}
	}
}
END { exit bad }' "$2"
}
for i in $(seq 0 $K); do
	scan "$i" "$RUN/t$i.json" || fail "trace $i is not JSON lines"
done >"$RUN/scan"
# Per task: every seq from 1 to its last (twice its calls) in some trace,
# as an event or inside a lost marker.
sed -n 's/^Q //p' "$RUN/scan" >"$RUN/seqs"
grep -h '"call":"lost"' "$RUN"/t*.json >"$RUN/lost.json" || true
while read -r w tid n; do
	[ "$w" = calls ] && echo "$((16#$tid)) $((2 * n))"
done <"$RUN/calls" >"$RUN/want"
expect_eq "storm tasks that counted their calls" 4 "$(wc -l <"$RUN/want")"
# cover SEQS LOST: per task, every seq from 1 to its last in some file
# of SEQS or inside a marker of LOST; none twice in one file, none twice
# across files unless the later one flags it again.
cover() {
	awk -v lostf="$2" '
FNR == NR { want[$1] = $2; next }
{
	if (!(($1, $2) in have))
		have[$1, $2] = $4
	else if (have[$1, $2] != $4) {
		dup[$1]++
		if ($5 != "true")
			unflagged[$1]++
	} else
		same[$1]++
	if ($5 == "true")
		again[$1]++
}
END {
	while ((getline l < lostf) > 0) {
		match(l, /"tid":[0-9]+/); t = substr(l, RSTART + 6, RLENGTH - 6)
		match(l, /"seq":[0-9]+/); s = substr(l, RSTART + 6, RLENGTH - 6) + 0
		match(l, /"count":[0-9]+/); n = substr(l, RSTART + 8, RLENGTH - 8) + 0
		for (k = 0; k < n; k++)
			have[t, s + k] = 1
		lost[t] += n
	}
	bad = 0
	for (t in want) {
		miss = 0
		for (s = 1; s <= want[t]; s++)
			if (!((t, s) in have))
				miss++
		printf "t%x: %d records, %d unaccounted for, %d in lost markers, %d twice in one stream, %d in two (%d of them not flagged again), %d flagged again\n",
		    t, want[t], miss, lost[t] + 0, same[t] + 0, dup[t] + 0,
		    unflagged[t] + 0, again[t] + 0
		if (miss > 0 || unflagged[t] > 0 || same[t] > 0)
			bad = 1
	}
	exit bad
}' "$RUN/want" "$1"
}
cover "$RUN/seqs" "$RUN/lost.json" >"$RUN/cover.out"
rc=$?
while read -r l; do pm_log "$l"; done <"$RUN/cover.out"
[ "$rc" = 0 ] || fail "records in no trace and no lost marker, or twice \
without the again flag: $(cat "$RUN/cover.out")"
# The recording across the restarts: each record once, or inside a lost
# marker, or inside a lost notice of the recorder (what a coordinator
# that took over released before the recorder was back; a loaded
# machine).
scan 0 "$RUN/replay.json" >"$RUN/rscan" ||
    fail "the replay is not JSON lines"
sed -n 's/^Q //p' "$RUN/rscan" >"$RUN/rseqs"
{
	grep -h '"call":"lost"' "$RUN/replay.json"
	awk '$1 == "N" { printf "{\"tid\":%s,\"seq\":%s,\"count\":%s}\n",
	    $2, $3, $4 }' "$RUN/rscan"
} >"$RUN/rlost.json" || true
cover "$RUN/rseqs" "$RUN/rlost.json" >"$RUN/rcover.out"
rc=$?
while read -r l; do pm_log "recording: $l"; done <"$RUN/rcover.out"
[ "$rc" = 0 ] || fail "the recording misses records or holds some twice: \
$(cat "$RUN/rcover.out")"

# Matches, in each trace's order.
grep '^[SRL] ' "$RUN/scan" >"$RUN/matches"
awk '
$1 == "L" { lossy[$2, $3] = 1; next }
$1 == "S" {
	src[$2] = $3; tag[$2] = $4
	for (k = 5; k <= NF; k++)
		dst[$2, $k] = 1
	next
}
{ r[++n] = $0 }
END {
	bad = 0
	for (k = 1; k <= n; k++) {
		split(r[k], f, " ")
		tr = f[2]; d = f[3]; s = f[4]; tg = f[5]; m = f[6]
		ch = tr " " d " " s
		if (m == "-") {
			unm[tr]++
			# A send lost in its sender ring goes unmatched too.
			if (seen[ch] && !((tr, s) in lossy)) {
				print "trace " tr ": t" sprintf("%x", d) \
				    " unmatched after a match from t" \
				    sprintf("%x", s); bad = 1
			}
			continue
		}
		seen[ch] = 1
		mat[tr]++
		if (!((m, d) in dst) || src[m] != s || tag[m] != tg) {
			print "trace " tr ": receive of t" sprintf("%x", d) \
			    " matched to " m ", not a send to it"; bad = 1
		}
		if (used[tr, m, d]++) {
			print "trace " tr ": message " m " to t" \
			    sprintf("%x", d) " matched twice"; bad = 1
		}
	}
	for (tr in mat)
		printf "trace %s: %d receives matched, %d unmatched\n",
		    tr, mat[tr], unm[tr] + 0
	exit bad
}' "$RUN/matches" >"$RUN/match.out"
rc=$?
while read -r l; do pm_log "$l"; done <"$RUN/match.out"
[ "$rc" = 0 ] || fail "wrong matches: $(grep -v receives "$RUN/match.out" |
    head -5)"
# The last coordinator runs to the program's end (one that lived 1.3 s
# on a loaded machine may have released only what came again).
grep -q "^trace $K: [1-9][0-9]* receives matched" "$RUN/match.out" ||
    fail "trace $K matched no receive after its restart"
pass
