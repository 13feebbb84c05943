#!/bin/bash
# Protects "nothing lost silently" across a coordinator restart
# (doc/capture.md): agents keep each task's records in its ring until
# the coordinator has released them (ACK).  The coordinator is
# SIGKILLed while a task makes calls; the agent keeps the task and dials
# the same address again; a new coordinator there (which takes over the
# secret) gets TASK_NEW, TASK_RESUME and every record not acknowledged.
# Its stream continues the task from the first record the ring holds
# unacknowledged (or from a later one the old coordinator's last ACK
# freed, if A got it), up to the ring's last write, nothing lost; the
# first coordinator's stream reaches at least the record before (it may
# have released a few more than it acknowledged: those come twice), and
# the two together are one complete stream.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v jq >/dev/null || skip "jq is not installed"

N=3000			# pvm_getsbuf calls, 1 ms apart
start_pvmd
pmon_start -Q 268435456 -l 127.0.0.1
port=${COORD_ADDR##*:}
[ -n "$port" ] || fail "no agent address from pmon start"
pmon_trace "$RUN/a.json"
TRACE_A=$TRACE_PID
AGENT_PID=$(sock_pid "$(agent_sock)")
[ -n "$AGENT_PID" ] || fail "no agent listens on $(agent_sock)"

burst_start $N
log=$BURST_LOG
read -r _ tid _ <"$log"

# The agent waits (stopped) while the coordinator dies and another
# comes, so that the new one's tool is attached before anything is
# sent again.
kill -STOP "$AGENT_PID"
kill -KILL "$COORD_PID"
wait_for 10 pid_dead "$COORD_PID" || fail "the coordinator survived SIGKILL"
wait_for 10 pid_dead "$TRACE_A" || fail "trace A outlived its coordinator"

# What the ring holds unacknowledged: its tail (u64 at 128 of the
# header) is frozen without a coordinator; the record there (its seq is
# a big-endian u64 at byte 4) is the first the new coordinator must get.
ringfd() {
	local f
	for f in /proc/$AGENT_PID/fd/*; do
		case $(readlink "$f") in "/memfd:pmon-ring"*) ;; *) continue ;; esac
		[ "$(od -An -t d4 -j 12 -N 4 "$f" | tr -d ' ')" = "$tid" ] &&
		    echo "$f" && return 0
	done
	return 1
}
u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }
ring=$(ringfd) || { kill -CONT "$AGENT_PID"; fail "the agent maps no ring of burst"; }
tail=$(u64 "$ring" 128)
size=$(od -An -t u4 -j 8 -N 4 "$ring" | tr -d ' ')
wait_for 5 eval '[ "$(u64 "$ring" 64)" -gt "$tail" ]' ||
    { kill -CONT "$AGENT_PID"; fail "burst wrote nothing after the last ACK"; }
first=$(od -An -t u1 -j $((4096 + tail % size + 4)) -N 8 "$ring" |
    awk '{ for (i = 1; i <= NF; i++) v = v * 256 + $i } END { print v }')
[ "$(u64 "$ring" 128)" = "$tail" ] ||
    { kill -CONT "$AGENT_PID"; fail "the ring's tail moved without a coordinator"; }

"$PMON_COORDD" -N -Q 268435456 -l "127.0.0.1:$port" -r 3 3>"$RUN/ready" \
    </dev/null >/dev/null 2>"$RUN/coordd.err" ||
    { kill -CONT "$AGENT_PID"; fail "second pmon-coordd: $(cat "$RUN/coordd.err")"; }
COORD_PID=$(sock_pid "$(coord_sock)")
PM_COORD_PIDS="$PM_COORD_PIDS $COORD_PID"
pmon_trace "$RUN/b.json"
kill -CONT "$AGENT_PID"
wait "$BURST" || fail "burst failed"
written=$(awk '$1 == "ring" { print $3 }' "$log")
dropped=$(awk '$1 == "ring" { print $5 }' "$log")
expect_eq "records burst made (written + dropped)" $((2 * (N + 2))) \
    $((written + dropped))
expect_eq "records the ring dropped" 0 "$dropped"
pid_alive "$AGENT_PID" || fail "the agent did not stay"
pmon_shutdown "$TRACE_PID"

sel="select(.tid == $tid and .call)"
a_last=$(jq -s "[.[] | $sel | .seq] | max" "$RUN/a.json")
b_first=$(jq -s "[.[] | $sel | .seq] | min" "$RUN/b.json")
b_last=$(jq -s "[.[] | $sel | .seq] | max" "$RUN/b.json")
b_events=$(jq -s "[.[] | $sel] | length" "$RUN/b.json")
pm_log "trace A: up to $a_last; the ring held from $first; trace B: $b_first to $b_last"
# An ACK the old coordinator sent just before it died may still wait in
# the stopped agent's socket: the agent applies it when it goes on, and
# the new coordinator starts after it, but never past what A received.
[ "$b_first" -ge "$first" ] && [ "$b_first" -le $((a_last + 1)) ] ||
    fail "the new coordinator's first record of burst is $b_first:" \
	"the ring held from $first, trace A got up to $a_last"
expect_eq "the new coordinator's last record of burst" "$written" "$b_last"
expect_eq "events of burst at the new coordinator" $((written - b_first + 1)) \
    "$b_events"
[ "$a_last" -ge $((first - 1)) ] ||
    fail "records $((a_last + 1)) to $((first - 1)) reached neither coordinator"
expect_eq "lost markers at the new coordinator" 0 "$(jq -s "[.[] | $sel |
    select(.call == \"lost\")] | length" "$RUN/b.json")"
# A, then what B had beyond it: one complete stream of burst.
{ cat "$RUN/a.json"; jq -c "select(.type == \"task\" or .tid != $tid or
    .seq > $a_last)" "$RUN/b.json"; } >"$RUN/ab.json"
"$STREAMCHECK" "$RUN/ab.json" >"$RUN/check.out" 2>&1 ||
    fail "the two streams together: $(head -20 "$RUN/check.out")"
expect_eq "events of burst in both streams" "$written" "$(jq -s "[.[] |
    $sel] | length" "$RUN/ab.json")"
pass
