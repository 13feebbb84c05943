#!/bin/bash
# Protects pmon export (doc/exports.md) on a 2-host machine (network
# namespaces), master1, pingpong and grouprace (whose broadcasts leave
# at pvm_bcast's end): for every format (chrome, paje, otf2, shiviz) a
# live export and an export of a recording of the same run are the
# same, the format's own validator accepts it (pj_dump, otf2-print, jq),
# and what it holds is what the programs did and what pmon trace --json
# printed of the same run:
# - chrome: one complete event per begin/end pair, one per call left
#   open (pvm_exit), a flow per matched receive, none ending before it
#   starts, each flow start inside its send's slice and each end inside
#   its receive's;
# - paje: one link per matched receive, a state change per event;
# - otf2: an Enter and a Leave per call, a send per destination, a
#   receive per matched receive;
# - shiviz: a line per event, each matching the documented regex, every
#   task's own clock entry counting its events, and a receive's clock at
#   least its send's;
# - an export ended by SIGTERM is a finished file; without a coordinator
#   or with a missing or damaged recording, a clear error.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netns.sh"
pm_setup
need_pmon
[ -x "$PROGS/pingpong" ] || fail "missing $PROGS/pingpong"
for c in jq pj_dump otf2-print; do
	command -v "$c" >/dev/null || fail "$c is needed (.ci/run installs it)"
done
FORMATS="chrome paje otf2 shiviz"

netns_pmon_up 2

# The live tools, all attached before the programs: a trace (the
# reference), a recorder, and one export per format.
REC=$RUN/run.pmr
bg $PM_ON "$PMON" record -o "$REC" </dev/null >"$RUN/record.out" \
    2>"$RUN/record.err"
REC_PID=$BG_PID
wait_for 10 trace_connected "$REC_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/record.err")"
EXPORT_PIDS=""
for f in $FORMATS; do
	bg $PM_ON "$PMON" export --format=$f -o "$RUN/live.$f" </dev/null \
	    >"$RUN/live.$f.out" 2>"$RUN/live.$f.err"
	EXPORT_PIDS="$EXPORT_PIDS $BG_PID"
	wait_for 10 trace_connected "$BG_PID" ||
	    fail "pmon export --format=$f did not connect: \
$(cat "$RUN/live.$f.err")"
done
# One more ends with SIGTERM before the coordinator does.
bg $PM_ON "$PMON" export --format=chrome -o "$RUN/sig.chrome" </dev/null \
    >"$RUN/sig.out" 2>"$RUN/sig.err"
SIG_PID=$BG_PID
wait_for 10 trace_connected "$SIG_PID" ||
    fail "pmon export did not connect: $(cat "$RUN/sig.err")"
LIVE=$RUN/trace.json
pmon_trace "$LIVE"	# its flush also covers the exports' hellos

$PM_ON timeout 60 "$PMON" exec master1 >"$RUN/master1.out" \
    2>"$RUN/master1.err" || fail "master1 failed: $(cat "$RUN/master1.err")"
k=3 rounds=20 bytes=100
pmon_exec "$PROGS/pingpong" "$k" "$rounds" "$bytes" "$RUN/pingpong.log" ||
    fail "pingpong failed: $(cat "$RUN/pingpong.err")"
grep -qx done "$RUN/pingpong.log" || fail "pingpong did not finish"
# grouprace broadcasts to a group (a pvm_bcast's message leaves at its
# end) while its workers join and leave it.
mkdir "$RUN/counts"
pmon_exec "$PROGS/grouprace" 3 4 "$RUN/counts" ||
    fail "grouprace failed: $(cat "$RUN/grouprace.err")"
grep -qx 'grouprace: ok' "$RUN/grouprace.out" || fail "grouprace did not say ok"

$PM_ON timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"
kill -TERM "$SIG_PID"
wait_for 10 pid_dead "$SIG_PID" || fail "pmon export ignored SIGTERM"
wait "$SIG_PID" || fail "pmon export exited with $? on SIGTERM: \
$(cat "$RUN/sig.err")"
# What it had read when the signal came (all of it, usually), finished.
n=$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$RUN/sig.chrome") ||
    fail "the export ended by SIGTERM is not finished JSON: $(tail -c 300 \
    "$RUN/sig.chrome")"
pm_log "the export ended by SIGTERM holds $n calls"

pmon_shutdown "$TRACE_PID"
for p in $REC_PID $EXPORT_PIDS; do
	wait_for 10 pid_dead "$p" || fail "a tool did not exit at BYE"
	wait "$p" || fail "a tool exited with $?: $(cat "$RUN"/*.err)"
done

# --- from the recording: the same files -------------------------------------------

for f in $FORMATS; do
	timeout 30 "$PMON" export --format=$f -i "$REC" -o "$RUN/rec.$f" \
	    </dev/null >"$RUN/rec.$f.out" 2>"$RUN/rec.$f.err" ||
	    fail "pmon export -i --format=$f: $(cat "$RUN/rec.$f.err")"
	[ -s "$RUN/rec.$f.err" ] && fail "pmon export -i --format=$f \
complained: $(cat "$RUN/rec.$f.err")"
	[ "$f" = otf2 ] && continue
	cmp "$RUN/live.$f" "$RUN/rec.$f" >/dev/null || fail "the $f \
export of the recording differs from the live one: $(diff \
"$RUN/live.$f" "$RUN/rec.$f" | head -n 6)"
done
# An OTF2 anchor file holds a random trace identifier: everything else
# is the same, byte for byte, and so is what otf2-print reads.
diff -r -x traces.otf2 "$RUN/live.otf2" "$RUN/rec.otf2" >/dev/null ||
    fail "the otf2 archives differ: $(diff -rq "$RUN/live.otf2" \
    "$RUN/rec.otf2" | head -n 3)"
for a in live rec; do
	otf2-print -A "$RUN/$a.otf2/traces.otf2" 2>&1 |
	    grep -v '^Trace identifier' >"$RUN/$a.anchor"
done
cmp "$RUN/live.anchor" "$RUN/rec.anchor" >/dev/null || fail "the otf2 \
anchor files differ: $(diff "$RUN/live.anchor" "$RUN/rec.anchor" | head)"

# The programs had ended, so no call was open: the export ended by
# SIGTERM is the start of the whole one (up to the commas).
n=$(($(wc -l <"$RUN/sig.chrome") - 1))
head -n "$n" "$RUN/sig.chrome" | sed 's/,$//' >"$RUN/sig.head"
head -n "$n" "$RUN/live.chrome" | sed 's/,$//' | cmp - "$RUN/sig.head" \
    >/dev/null || fail "the export ended by SIGTERM is not the start of \
the live one"

# --- what the run did, from the trace ------------------------------------------------

ev() { grep -v '"type":' "$LIVE"; }
EVENTS=$(ev | grep -c '"call":')
ENDS=$(ev | grep -c '"phase":"end"')
BEGINS=$(ev | grep -c '"phase":"begin"')
MATCHED=$(ev | grep -c '"match":')
# Sends, one per destination (a bcast's at its end, others at the begin).
SENDS=$(ev | jq -s '[(.[] | select((.call == "pvm_send" or
    .call == "pvm_psend") and .phase == "begin")),
    (.[] | select(.call == "pvm_mcast" and .phase == "begin") | .dst[]),
    (.[] | select(.call == "pvm_bcast" and .phase == "end") | .dst[])] |
    length')
[ "$(grep -c '"call":"lost"' "$LIVE")" = 0 ] ||
    fail "the trace lost events: the counts below would not hold"
# pingpong: 2 * K * ROUNDS messages and K start messages, all received.
pp=$(ev | jq -s --slurpfile t <(grep '"type":"task"' "$LIVE" | jq -s .) \
    '[$t[0][] | select(.program == "pingpong") | .tid] as $pp |
    [.[] | select(.match != null and (.src as $s | $pp | index($s)))] |
    length')
expect_eq "pingpong messages received" $((2 * k * rounds + k)) "$pp"
n=$(sed -n 's/^Spawning \([0-9]*\) worker tasks.*SUCCESSFUL/\1/p' \
    "$RUN/master1.out")
expect_eq "replies master1 printed" "$n" "$(grep -c '^I got' \
    "$RUN/master1.out")"
pm_log "$EVENTS events, $MATCHED matched receives, $SENDS sends"

# --- chrome ------------------------------------------------------------------------

C=$RUN/live.chrome
jq -e '.traceEvents | length > 0' "$C" >/dev/null || fail "chrome: not JSON"
expect_eq "chrome: complete events for begin/end pairs" "$ENDS" "$(jq \
    '[.traceEvents[] | select(.ph == "X" and .args.unfinished == null)] |
    length' "$C")"
expect_eq "chrome: complete events for calls left open" \
    $((BEGINS - ENDS)) "$(jq '[.traceEvents[] | select(.ph == "X" and
    .args.unfinished)] | length' "$C")"
expect_eq "chrome: message flows (starts)" "$MATCHED" "$(jq \
    '[.traceEvents[] | select(.ph == "s" and .cat == "msg")] | length' "$C")"
expect_eq "chrome: message flows (ends)" "$MATCHED" "$(jq \
    '[.traceEvents[] | select(.ph == "f" and .cat == "msg")] | length' "$C")"
expect_eq "chrome: hosts (process_name)" 2 "$(jq '[.traceEvents[] |
    select(.name == "process_name")] | length' "$C")"
expect_eq "chrome: tasks (thread_name)" \
    "$(grep -c '"type":"task"' "$LIVE")" "$(jq '[.traceEvents[] |
    select(.name == "thread_name")] | length' "$C")"
# ts are decimal strings of microseconds: compare them in ns.
bad=$(jq -r '[.traceEvents[] | select(.ph == "s" or .ph == "f")] |
    group_by(.id)[] | select(length != 2 or .[0].ph != "s" or
    .[1].ph != "f" or (.[1].ts * 1000 | round) < (.[0].ts * 1000 | round)) |
    .[0].id' "$C" | head -n 3)
[ -z "$bad" ] || fail "chrome: flows ending before they start: $bad"
# Every message flow ends inside a receive slice of its thread.
bad=$(jq -r '[.traceEvents[] | select(.ph == "X")] as $x |
    .traceEvents[] | select(.ph == "f" and .cat == "msg") | . as $f |
    select([$x[] | select(.tid == $f.tid and .ts <= $f.ts and
    .ts + .dur >= $f.ts and (.name | test("recv|probe")))] |
    length != 1) | .id' "$C" | head -n 3)
[ -z "$bad" ] || fail "chrome: flow ends outside a receive: $bad"
# ...and starts inside a send slice (a pvm_bcast's just before its end).
bad=$(jq -r '[.traceEvents[] | select(.ph == "X")] as $x |
    .traceEvents[] | select(.ph == "s" and .cat == "msg") | . as $s |
    select([$x[] | select(.tid == $s.tid and .ts <= $s.ts and
    .ts + .dur >= $s.ts and (.name | test("send|mcast|bcast")))] |
    length != 1) | .id' "$C" | head -n 3)
[ -z "$bad" ] || fail "chrome: flow starts outside a send: $bad"

# --- paje ----------------------------------------------------------------------------

P=$RUN/live.paje
# Debian's pajeng (1.3.6) has no pj_validate: pj_dump, strict by
# default, simulates the whole trace and fails on any error in it.
pj_dump "$P" >"$RUN/pj_dump.out" 2>"$RUN/pj_dump.err" ||
    fail "pj_dump rejects the paje export: $(head -n 5 "$RUN/pj_dump.err")"
[ -s "$RUN/pj_dump.err" ] && fail "pj_dump complains: $(head -n 5 \
    "$RUN/pj_dump.err")"
expect_eq "paje (pj_dump): links" "$MATCHED" \
    "$(grep -c '^Link, 0, Message,' "$RUN/pj_dump.out")"
expect_eq "paje (pj_dump): states" "$EVENTS" \
    "$(grep -c '^State, ' "$RUN/pj_dump.out")"
expect_eq "paje: message links started" "$MATCHED" \
    "$(grep -c '^8 [0-9.]* MSG ' "$P")"
expect_eq "paje: message links ended" "$MATCHED" \
    "$(grep -c '^9 [0-9.]* MSG ' "$P")"
expect_eq "paje: state changes" "$EVENTS" "$(grep -c '^7 ' "$P")"
# One container per task with events: none for pvmgs (issue 19).
expect_eq "paje: task containers" "$(ev | jq -r 'select(.call) | .tid' |
    sort -u | wc -l)" "$(grep -c '^5 [0-9.]* k[0-9]* TASK ' "$P")"
# Times never go backwards.
sed -n 's/^[5-9] \([0-9.]*\) .*/\1/p; s/^10 \([0-9.]*\) .*/\1/p' "$P" |
    sort -c -g 2>/dev/null || fail "paje: events out of time order"

# --- otf2 ----------------------------------------------------------------------------

otf2-print "$RUN/live.otf2/traces.otf2" >"$RUN/otf2.txt" 2>"$RUN/otf2.err" ||
    fail "otf2-print rejects the archive: $(head -n 5 "$RUN/otf2.err")"
[ -s "$RUN/otf2.err" ] && fail "otf2-print warns: $(head -n 5 \
    "$RUN/otf2.err")"
otf2_count() { grep -c "^$1 " "$RUN/otf2.txt"; }
expect_eq "otf2: Enter records" "$BEGINS" "$(otf2_count ENTER)"
expect_eq "otf2: Leave records" "$BEGINS" "$(otf2_count LEAVE)"
expect_eq "otf2: MpiSend records" "$SENDS" "$(otf2_count MPI_SEND)"
expect_eq "otf2: MpiRecv records" "$MATCHED" "$(otf2_count MPI_RECV)"
otf2-print -G "$RUN/live.otf2/traces.otf2" >"$RUN/otf2.defs" 2>&1 ||
    fail "otf2-print -G failed: $(head -n 5 "$RUN/otf2.defs")"
expect_eq "otf2: locations (tasks)" "$(grep -c '"type":"task"' "$LIVE")" \
    "$(grep -c '^LOCATION ' "$RUN/otf2.defs")"
expect_eq "otf2: location groups (hosts)" 2 \
    "$(grep -c '^LOCATION_GROUP ' "$RUN/otf2.defs")"

# --- shiviz --------------------------------------------------------------------------

S=$RUN/live.shiviz
expect_eq "shiviz: lines (events)" "$EVENTS" "$(wc -l <"$S")"
# The regex of doc/exports.md, in ERE.
expect_eq "shiviz: lines the regex does not parse" 0 \
    "$(grep -cvE '^[^ ]+ \{[^}]*\} .*$' "$S")"
sed -E 's/^([^ ]+) (\{[^}]*\}) ([^ ]+) ([a-z]+) \(t([0-9a-f]+):([0-9]+)\)(.*)$/{"host":"\1","clock":\2,"id":"\5:\6","rest":"\7"}/' \
    "$S" >"$RUN/shiviz.json"
bad=$(jq -rs '
    (reduce .[] as $e ({}; .[$e.id] = $e.clock)) as $clock |
    # own entries count 1, 2, 3... per process
    ([group_by(.host)[] | select([.[] | .clock[.host]] !=
      [range(1; length + 1)]) | .[0].host]) +
    # a receive is at least its send
    ([.[] | select(.rest | test(" match ")) |
      (.rest | capture(" match t(?<t>[0-9a-f]+):(?<s>[0-9]+)")) as $m |
      . as $r | $clock[$m.t + ":" + $m.s] as $sc |
      select($sc == null or ([$sc | to_entries[] |
        select(.value > ($r.clock[.key] // 0))] | length > 0)) | .id])
    | .[]' "$RUN/shiviz.json" | head -n 3)
[ -z "$bad" ] || fail "shiviz: clocks wrong at: $bad"
expect_eq "shiviz: receives naming their send" "$MATCHED" \
    "$(grep -c ' match t' "$S")"

# --- bad input ------------------------------------------------------------------------

"$PMON" export --format=vcd -o "$RUN/x" >/dev/null 2>"$RUN/bad.err" &&
    fail "an unknown format was accepted"
grep -q "unknown format 'vcd'" "$RUN/bad.err" ||
    fail "no clear error for an unknown format: $(cat "$RUN/bad.err")"
# Without a coordinator or a recording: an error, and no file.
PVM_TMP=$RUN/novm "$PMON" export --format=paje -o "$RUN/none.paje" \
    >/dev/null 2>"$RUN/none.err" && fail "an export without a coordinator \
succeeded"
[ -s "$RUN/none.err" ] && [ ! -e "$RUN/none.paje" ] || fail "an export \
without a coordinator: no error or a file: $(cat "$RUN/none.err")"
"$PMON" export --format=paje -i "$RUN/missing.pmr" -o "$RUN/none.paje" \
    >/dev/null 2>"$RUN/none.err" && fail "an export of a missing \
recording succeeded"
grep -q "missing.pmr" "$RUN/none.err" && [ ! -e "$RUN/none.paje" ] ||
    fail "an export of a missing recording: $(cat "$RUN/none.err")"
head -c 100 "$REC" >"$RUN/cut.pmr"
"$PMON" export --format=chrome -i "$RUN/cut.pmr" -o "$RUN/cut.json" \
    >/dev/null 2>"$RUN/cut.err" ||
    fail "a truncated recording was not exported: $(cat "$RUN/cut.err")"
grep -q "truncated at offset" "$RUN/cut.err" ||
    fail "no offset for a truncated recording: $(cat "$RUN/cut.err")"
jq -e '.traceEvents' "$RUN/cut.json" >/dev/null ||
    fail "the export of a truncated recording is not finished JSON"
pass
