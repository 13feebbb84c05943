#!/bin/bash
# Protects the problems in the Chrome export (doc/exports.md, "chrome"):
# a message race (tests/progs/wildrace) and a message left unreceived
# (tests/progs/unreceived), each an instant event in the thread of the
# task it concerns, named in words from what the programs logged -- the
# two senders of the race, the sender and tag of the unreceived message
# -- with the problem itself in its args, once each; in the Paje export
# a Problem event on the same task, once each.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
for p in wildrace unreceived; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
command -v jq >/dev/null || fail "jq is needed"

start_pvmd
pmon_start
bg "$PMON" export --format=chrome -o "$RUN/out.json" </dev/null \
    >"$RUN/export.out" 2>"$RUN/export.err"
EXPORT_PID=$BG_PID
wait_for 10 trace_connected "$EXPORT_PID" ||
    fail "pmon export did not connect: $(cat "$RUN/export.err")"
bg "$PMON" export --format=paje -o "$RUN/out.paje" </dev/null \
    >"$RUN/paje.out" 2>"$RUN/paje.err"
PAJE_PID=$BG_PID
wait_for 10 trace_connected "$PAJE_PID" ||
    fail "pmon export (paje) did not connect: $(cat "$RUN/paje.err")"
timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"

pmon_exec "$PROGS/wildrace" "$RUN/race.tids" ||
    fail "wildrace exited with $?: $(cat "$RUN/wildrace.err")"
pmon_exec "$PROGS/unreceived" "$RUN/unrecv.tids" ||
    fail "unreceived exited with $?: $(cat "$RUN/unreceived.err")"
# tid_of FILE ROLE [FIELD]: field FIELD (default 2) of ROLE's line.
tid_of() { awk -v r="$2" -v f="${3:-2}" '$1 == r { print $f; exit }' "$1"; }
hex() { printf 't%x' "$1"; }
wait_for 20 problems_hold '[.problems[].kind] | index("race") != null and
    index("unreceived") != null' || fail "pmon problems lacks the race or the \
unreceived message: $(cat "$RUN/problems.json")"
pmon_shutdown "$EXPORT_PID"
wait "$EXPORT_PID" || fail "pmon export exited with $?: $(cat "$RUN/export.err")"
wait_for 10 pid_dead "$PAJE_PID" || fail "the Paje export did not end"
wait "$PAJE_PID" || fail "pmon export (paje) exited with $?: $(cat "$RUN/paje.err")"
jq -e '.traceEvents | length > 0' "$RUN/out.json" >/dev/null ||
    fail "not a Chrome trace: $(tail -c 300 "$RUN/out.json")"

# instants KIND: the export's instants of problems of that kind.
instants() {
	jq -c --arg k "$1" '[.traceEvents[] | select(.ph == "i" and
	    .cat == "problem" and .args.problem.kind == $k)]' "$RUN/out.json"
}

# The race: at the receiver, naming both senders' sends.
r=$(tid_of "$RUN/race.tids" receiver)
s1=$(awk '$1 == "sender" { print $2 }' "$RUN/race.tids" | sort -n | head -n 1)
s2=$(awk '$1 == "sender" { print $2 }' "$RUN/race.tids" | sort -n | tail -n 1)
race=$(instants race)
expect_eq "race instants" 1 "$(jq length <<<"$race")"
expect_eq "the race's thread (the receiver)" "$r" "$(jq '.[0].tid' <<<"$race")"
re="^message race: a wildcard receive got the message of (t[0-9a-f]+):[0-9]+; that of (t[0-9a-f]+):[0-9]+ could have come first$"
name=$(jq -r '.[0].name' <<<"$race")
[[ $name =~ $re ]] || fail "the race is not named in words: $name"
expect_eq "the senders the race names" "$(printf '%s\n' "$(hex "$s1")" "$(hex "$s2")" | sort)" \
    "$(printf '%s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" | sort)"

# The unreceived message: at its receiver, naming its sender and tag.
u=$(instants unreceived)
ur=$(tid_of "$RUN/unrecv.tids" receiver) us=$(tid_of "$RUN/unrecv.tids" sender)
tag=$(tid_of "$RUN/unrecv.tids" sent 2) bytes=$(tid_of "$RUN/unrecv.tids" sent 3)
expect_eq "unreceived instants" 1 "$(jq length <<<"$u")"
expect_eq "the unreceived message's thread (the receiver)" "$ur" "$(jq '.[0].tid' <<<"$u")"
expect_eq "the unreceived message's name" \
    "exited with a message from $(hex "$us") unreceived: tag $tag, $bytes B" \
    "$(jq -r '.[0].name' <<<"$u")"
# Paje: a Problem event on the task (container kN of the tid's task).
paje_problems() {
	awk -v v="$1" '$0 ~ /PROBLEM/ && index($0, v) { print }' "$RUN/out.paje"
}
container_of() {
	awk -v t="$(hex "$1")" '$0 ~ / TASK h[0-9]+ / && index($0, t) { print $3 }' \
	    "$RUN/out.paje"
}
expect_eq "Paje: race events" 1 "$(paje_problems '"message race' | wc -l)"
expect_eq "Paje: the race's task" "$(container_of "$r")" \
    "$(paje_problems '"message race' | awk '{ print $4 }')"
expect_eq "Paje: unreceived events" 1 \
    "$(paje_problems "\"exited with a message from $(hex "$us") unreceived\"" | wc -l)"
expect_eq "Paje: the unreceived message's task" "$(container_of "$ur")" \
    "$(paje_problems '"exited with a message' | awk '{ print $4 }')"
pm_log "race and unreceived message drawn as instants"
pass
