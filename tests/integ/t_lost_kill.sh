#!/bin/bash
# Protects "nothing lost silently" for a task killed with SIGKILL in the
# middle of its calls (doc/capture.md): its ring outlives it because the
# agent maps it, so every record it wrote is delivered -- seqs 1 to the
# ring's last write, nothing lost -- and the task is then reported
# killed.  The agent is stopped while the task runs and dies, so the
# records are drained from the ring of a process that no longer exists.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"

start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"

# ring_field FD OFFSET TYPE: one field of a ring header (common/ring.h:
# tid is an i32 at 12, written a u64 at 80, dropped a u64 at 72) read
# through the agent's descriptor.
ring_field() {
	od -An -t "$3" -j "$2" -N "${3#?}" "/proc/$AGENT_PID/fd/$1" | tr -d ' '
}

# ring_of TID: the agent's descriptor of the ring of task TID.
ring_of() {
	local f
	for f in /proc/$AGENT_PID/fd/*; do
		case $(readlink "$f") in "/memfd:pmon-ring"*) ;; *) continue ;; esac
		[ "$(ring_field "${f##*/}" 12 d4)" = "$1" ] && echo "${f##*/}" &&
		    return 0
	done
	return 1
}

log=$RUN/burst.log
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/burst" -w -p 200 1000000 "$log"
wait_for 20 grep -qs '^ready ' "$log" || fail "burst never got ready"
read -r _ tid pid <"$log"
fd=$(ring_of "$tid") || fail "the agent maps no ring of t$tid"
kill -STOP "$AGENT_PID"
touch "$log.go"
wait_for 30 eval '[ "$(awk '\''$1 == "did" { n = $2 } END { print n + 0 }'\'' \
    "$log")" -ge 500 ]' || { kill -CONT "$AGENT_PID"; fail "burst stalled"; }
kill -KILL "$pid"
wait_for 10 pid_dead "$pid" || { kill -CONT "$AGENT_PID"; fail "burst survived SIGKILL"; }
did=$(awk '$1 == "did" { n = $2 } END { print n }' "$log")
written=$(ring_field "$fd" 80 u8)
dropped=$(ring_field "$fd" 72 u8)
kill -CONT "$AGENT_PID"
expect_eq "records the ring dropped" 0 "$dropped"
# mytid and at least the calls it logged, begun and ended.
[ "$written" -ge $((2 * (did + 1))) ] ||
    fail "the ring holds $written records, burst logged $did calls"

$PM_ON timeout 20 "$PMON" flush >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush: $(cat "$RUN/flush.err")"
$PM_ON timeout 20 "$PMON" ps --json >"$RUN/ps.json" 2>"$RUN/ps.err" ||
    fail "pmon ps: $(cat "$RUN/ps.err")"
pmon_shutdown "$TRACE_PID"

# Killed between a begin and its end, the task leaves that call open.
"$STREAMCHECK" "$RUN/trace.json" >"$RUN/check.out" 2>&1
grep -v "^streamcheck: .*: 1 violations$" "$RUN/check.out" |
    grep -v "$(printf '%x' "$tid"): pvm_getsbuf began and never ended" \
    >"$RUN/check.bad"
[ -s "$RUN/check.bad" ] && fail "stream check: $(head "$RUN/check.bad")"
if [ $((written % 2)) = 1 ]; then
	grep -q "began and never ended" "$RUN/check.out" ||
	    fail "the last record $written is a begin, yet no call is open"
fi
expect_eq "lost markers of burst" 0 "$(jq -s --argjson t "$tid" \
    '[.[] | select(.tid == $t and .call == "lost")] | length' \
    "$RUN/trace.json")"
expect_eq "events of burst (the ring's written)" "$written" \
    "$(jq -s --argjson t "$tid" '[.[] | select(.tid == $t and .call)] |
    length' "$RUN/trace.json")"
expect_eq "last seq of burst" "$written" "$(jq -s --argjson t "$tid" \
    '[.[] | select(.tid == $t and .call) | .seq] | max' "$RUN/trace.json")"
expect_eq "state of burst in pmon ps" killed "$(jq -r --argjson t "$tid" \
    '.tasks[] | select(.tid == $t) | .state' "$RUN/ps.json")"
expect_eq "lost of burst in pmon ps" 0 "$(jq -r --argjson t "$tid" \
    '.tasks[] | select(.tid == $t) | .lost' "$RUN/ps.json")"
pass
