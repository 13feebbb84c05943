#!/bin/bash
# Protects the limits of the agent restart (doc/capture.md): the
# coordinator starts a lost agent again COORD_AGENT_RESPAWNS (3) times
# per host and no more; a task nobody adopts within the grace period is
# ended; an agent started by hand that adopts it later is not dropped
# for it (its records are dropped, and counted in the log), and serves
# a new task normally.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon

start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
log=$RUN/burst.log
: >"$log"
touch "$log.go"
bg $PM_ON timeout 60 "$PMON" exec "$PROGS/burst" -p 1000 100000 "$log"
BURST=$BG_PID
wait_for 20 grep -q '^ready ' "$log" || fail "burst never got ready"
read -r _ tid pid <"$log"
maps_ring() {
	local f
	for f in /proc/$1/fd/*; do
		case $(readlink "$f") in "/memfd:pmon-ring"*) ;; *) continue ;; esac
		[ "$(od -An -t d4 -j 12 -N 4 "$f" | tr -d ' ')" = "$2" ] &&
		    return 0
	done
	return 1
}
agent_new() { A=$(sock_pid "$(agent_sock)"); [ -n "$A" ] && [ "$A" != "$1" ]; }

A=$(sock_pid "$(agent_sock)")
for i in 1 2 3; do
	old=$A
	kill -KILL "$old"
	wait_for 10 agent_new "$old" || fail "agent not started again ($i)"
	wait_for 10 maps_ring "$A" "$tid" || fail "agent $i did not adopt burst"
done
kill -KILL "$A"
wait_for 10 pid_dead "$A" || fail "the agent survived SIGKILL"
sleep 1
[ -z "$(sock_pid "$(agent_sock)")" ] || fail "a 4th agent was started"
clog=$(coord_log)
wait_for 10 grep -q "task t$(printf %x "$tid") (burst): no agent adopted it; ended" \
    "$clog" || fail "burst was not ended after the grace period"
pid_alive "$pid" || fail "burst died"

# By hand: it adopts burst, too late.
bg $PM_ON "$PMON_AGENTD" -c "$COORD_ADDR" </dev/null >"$RUN/agent.out" 2>&1
wait_for 10 grep -q "was adopted by agent .* after its grace period" "$clog" ||
    fail "the late adoption is not in the log: $(cat "$clog")"
touch "$log.stop"
wait "$BURST" || fail "burst failed"
wait_for 10 grep -q "task t$(printf %x "$tid") (burst) ended; [0-9]* records of it came too late" \
    "$clog" || fail "the late records are not counted in the log"
grep -q "dropping it" "$clog" && fail "an agent was dropped: $(cat "$clog")"

# The hand-started agent serves a new task as any agent does.
: >"$RUN/b2.log"
touch "$RUN/b2.log.go"
pmon_exec "$PROGS/burst" 10 "$RUN/b2.log" || fail "second burst failed"
read -r _ tid2 _ <"$RUN/b2.log"
pmon_shutdown "$TRACE_PID"
expect_eq "events of the second burst" 24 "$(grep -c "\"tid\":$tid2,.*\"call\"" \
    "$RUN/trace.json")"
pass
