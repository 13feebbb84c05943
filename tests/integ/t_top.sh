#!/bin/bash
# Protects pmon top (batch mode, doc/exports.md) on one host:
# - while pingpong runs at a steady rate: every refresh lists the host
#   and the program's tasks, and each rate is the difference of the
#   task's counters between two refreshes over the interval printed;
# - after it ended: every pingpong task exited, with exactly the
#   messages and bytes it sent and received (from pingpong.c);
# - a message not received yet shows in its receiver's queue, and tasks
#   a breakpoint stopped show as stopped (unreceived, both stopped as
#   they enter pvm_exit);
# - deadpair's two tasks are blocked in pvm_recv waiting for each other
#   (WHERE names the call, the partner and the tag);
# - bad options are refused with a clear error.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
for p in pingpong unreceived deadpair; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
start_pvmd
pmon_start

# top_rows FILE REFRESH PROGRAM: the task rows of one refresh.
top_rows() {
	awk -v r="$2" -v p="$3" '/^pmon top / { n++ } n == r && $2 == p' "$1"
}

# --- while pingpong runs -------------------------------------------------------

k=2 rounds=1000 bytes=64 pause=2000
bg timeout 60 "$PMON" exec "$PROGS/pingpong" $k $rounds $bytes \
    "$RUN/pingpong.log" $pause >"$RUN/pingpong.out" 2>"$RUN/pingpong.err"
PP_PID=$BG_PID
wait_for 10 eval '[ "$(grep -c "^worker" "$RUN/pingpong.log" 2>/dev/null)" = $k ]' ||
    fail "pingpong did not start: $(cat "$RUN/pingpong.err")"
timeout 30 "$PMON" top -b -n 3 -d 0.3 </dev/null >"$RUN/top1.txt" \
    2>"$RUN/top1.err" || fail "pmon top failed: $(cat "$RUN/top1.err")"
expect_eq "refreshes" 3 "$(grep -c '^pmon top ' "$RUN/top1.txt")"
for r in 1 2 3; do
	expect_eq "pingpong tasks in refresh $r" $((k + 1)) \
	    "$(top_rows "$RUN/top1.txt" $r pingpong | wc -l)"
	expect_eq "host lines in refresh $r" 1 "$(awk -v r=$r \
	    '/^pmon top / { n++ } n == r && /^host /' "$RUN/top1.txt" | wc -l)"
done
# Rates: (SENT, SENT_B, RECV, RECV_B now - before) / interval, per task.
for r in 2 3; do
	iv=$(awk -v r=$r '/^pmon top / && ++n == r { print $7 }' \
	    "$RUN/top1.txt")
	bad=$(awk -v r=$r -v iv="$iv" '
	    /^pmon top / { n++ }
	    $2 == "pingpong" && (n == r - 1 || n == r) {
		for (i = 0; i < 4; i++) v[n, $1, i] = $(7 + i)
		for (i = 0; i < 4; i++) rate[n, $1, i] = $(11 + i)
		tids[$1] = 1
	    }
	    END {
		for (t in tids) for (i = 0; i < 4; i++) {
			want = (v[r, t, i] - v[r - 1, t, i]) / iv
			got = rate[r, t, i]
			# the interval is printed to 0.01 s
			if (got - want > 0.05 * want + 0.1 ||
			    want - got > 0.05 * want + 0.1)
				print t " column " i ": rate " got ", counts say " want
		}
	    }' "$RUN/top1.txt")
	[ -z "$bad" ] || fail "refresh $r rates: $bad"
done
top_rows "$RUN/top1.txt" 1 pingpong | awk '$11 != "-" { exit 1 }' ||
    fail "the first refresh has rates: $(top_rows "$RUN/top1.txt" 1 pingpong)"
moved=$(top_rows "$RUN/top1.txt" 3 pingpong | awk '$11 > 0' | wc -l)
[ "$moved" -ge 1 ] || fail "no pingpong task sent anything between \
refreshes: $(cat "$RUN/top1.txt")"
wait_for 30 pid_dead "$PP_PID" || fail "pingpong did not end"
wait "$PP_PID" || fail "pingpong failed: $(cat "$RUN/pingpong.err")"

# --- after it: the totals pingpong.c implies ------------------------------------------

timeout 20 "$PMON" top -b -n 1 </dev/null >"$RUN/top2.txt" 2>"$RUN/top2.err" ||
    fail "pmon top failed: $(cat "$RUN/top2.err")"
master=$(awk '$1 == "master" { printf "t%x", $2 }' "$RUN/pingpong.log")
top_rows "$RUN/top2.txt" 1 pingpong >"$RUN/pp.rows"
expect_eq "exited pingpong tasks" $((k + 1)) \
    "$(awk '$3 == "exited"' "$RUN/pp.rows" | wc -l)"
# TID PROGRAM STATE WHERE QUEUE QBYTES SENT SENT_B RECV RECV_B ...
expect_eq "master's messages" "0 0 $((k * rounds + k)) $((k * rounds))" \
    "$(awk -v m="$master" '$1 == m { print $5, $6, $7, $9 }' "$RUN/pp.rows")"
expect_eq "workers' messages" "$k" "$(awk -v m="$master" -v r=$rounds \
    -v b=$bytes '$1 != m && $5 == 0 && $7 == r && $8 == r * b &&
    $9 == r + 1' "$RUN/pp.rows" | wc -l)"
# Bytes: the master sent what the workers received, and got their pongs.
expect_eq "master's bytes received" $((k * rounds * bytes)) "$(awk \
    -v m="$master" '$1 == m { print $10 }' "$RUN/pp.rows")"
expect_eq "master's bytes sent" "$(awk -v m="$master" '$1 != m { s += $10 }
    END { print s }' "$RUN/pp.rows")" "$(awk -v m="$master" \
    '$1 == m { print $8 }' "$RUN/pp.rows")"

# --- a queue, and stopped tasks -------------------------------------------------------

# unreceived's receiver exits with the message in its queue: a
# breakpoint stops both tasks as they enter pvm_exit, so that top can
# show the queue (and the stops) before the model ends them.
WATCH=$RUN/watch.json
bg "$PMON" watch --json 'on enter pvm_exit do stop' </dev/null >"$WATCH" \
    2>"$WATCH.err"
WATCH_PID=$BG_PID
wait_for 10 grep -q '"what":"added"' "$WATCH" ||
    fail "pmon watch did not set its request: $(cat "$WATCH" "$WATCH.err")"
bg timeout 60 "$PMON" exec "$PROGS/unreceived" "$RUN/unreceived.log" \
    >"$RUN/unreceived.out" 2>&1
UR_PID=$BG_PID
wait_for 20 eval 'grep -qs "^exited" "$RUN/unreceived.log"' ||
    fail "unreceived's receiver did not get its message"
read -r tag size < <(awk '$1 == "sent" { print $2, $3 }' \
    "$RUN/unreceived.log")
recv=$(awk '$1 == "receiver" { printf "t%x", $2 }' "$RUN/unreceived.log")
send=$(awk '$1 == "sender" { printf "t%x", $2 }' "$RUN/unreceived.log")
queued() {
	timeout 20 "$PMON" top -b -n 1 </dev/null >"$RUN/top3.txt" 2>&1 &&
	    [ "$(awk -v t="$recv" '$1 == t { print $3, $5, $6 }' \
	    "$RUN/top3.txt")" = "stopped 1 $size" ] &&
	    [ "$(awk -v t="$send" '$1 == t { print $3, $7, $8 }' \
	    "$RUN/top3.txt")" = "stopped 1 $size" ]
}
wait_for 10 queued || fail "the receiver's queue (1 message of $size \
bytes, tag $tag) and the two stops are not shown: $(cat "$RUN/top3.txt")"
timeout 20 "$PMON" kill "$recv,$send" >"$RUN/kill.out" 2>&1 ||
    fail "pmon kill failed: $(cat "$RUN/kill.out")"
wait_for 10 pid_dead "$UR_PID" || fail "unreceived did not end when killed"
wait "$UR_PID" 2>/dev/null
kill -TERM "$WATCH_PID"
wait "$WATCH_PID" || fail "pmon watch exited with $?: $(cat "$WATCH.err")"

# --- blocked ---------------------------------------------------------------------------

f=$RUN/deadpair.tids
bg timeout 60 "$PMON" exec "$PROGS/deadpair" "$f" >"$RUN/deadpair.out" 2>&1
DP_PID=$BG_PID
wait_for 20 eval '[ "$(wc -l 2>/dev/null <"$f")" = 2 ]' ||
    fail "deadpair did not start"
p=$(awk '$1 == "parent" { printf "t%x", $2 }' "$f")
c=$(awk '$1 == "child" { printf "t%x", $2 }' "$f")
blocked_pair() {
	timeout 20 "$PMON" top -b -n 1 </dev/null >"$RUN/top4.txt" 2>&1 &&
	    [ "$(awk -v p="$p" -v c="$c" '($1 == p && $4 == "pvm_recv(" c ",1)") ||
	    ($1 == c && $4 == "pvm_recv(" p ",1)") { if ($3 == "blocked") n++ }
	    END { print n + 0 }' "$RUN/top4.txt")" = 2 ]
}
wait_for 10 blocked_pair || fail "deadpair is not shown blocked: \
$(cat "$RUN/top4.txt")"
timeout 20 "$PMON" kill "$p,$c" >"$RUN/kill.out" 2>&1 ||
    fail "pmon kill failed: $(cat "$RUN/kill.out")"
wait_for 10 pid_dead "$DP_PID" || fail "deadpair did not end when killed"
wait "$DP_PID" 2>/dev/null

# --- bad options -----------------------------------------------------------------------

"$PMON" top -d 0 >/dev/null 2>"$RUN/bad.err" && fail "-d 0 was accepted"
grep -q "bad delay '0'" "$RUN/bad.err" || fail "no clear error for -d 0: \
$(cat "$RUN/bad.err")"
"$PMON" top -n x >/dev/null 2>"$RUN/bad.err" && fail "-n x was accepted"
grep -q "bad count 'x'" "$RUN/bad.err" || fail "no clear error for -n x: \
$(cat "$RUN/bad.err")"

pmon_shutdown ""
pass
