#!/bin/bash
# Protects message handlers (pvm_addmhf; node-agent/preload_calls.c,
# doc/events.md): tests/progs/handlers' master takes its K workers' M
# requests each in a handler that answers from inside it, while it waits
# in pvm_recv for their last words.  Every handler run is in the stream
# as a "handler" begin that receives its request, matched to the
# worker's send, with the handler's own calls before its end; every
# answer sent from a handler is matched to the worker's receive; the
# stream is causal with the handlers nested in the receives they
# interrupted; every call each task makes is there once (counted from
# the source); no problem is reported (no request is "unreceived").
# The Chrome export of a recording draws every message, those the
# handlers took too.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
k=4 m=50
start_pvmd
pmon_start
bg "$PMON" record -o "$RUN/run.pmr" </dev/null >"$RUN/record.out" \
    2>"$RUN/record.err"
REC_PID=$BG_PID
wait_for 10 trace_connected "$REC_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/record.err")"
pmon_trace "$RUN/trace.json"
pmon_exec "$PROGS/handlers" $k $m
PROG_RC=$?
pmon_shutdown "$TRACE_PID"
wait_for 10 pid_dead "$REC_PID" || fail "pmon record did not exit at BYE"
[ "$PROG_RC" = 0 ] || fail "handlers exited with $PROG_RC: \
$(cat "$RUN/handlers.out" "$RUN/handlers.err")"
expect_eq "handlers' output" "handlers ok $((k * m))" "$(cat "$RUN/handlers.out")"

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/counts"
km=$((k * m))
cat >"$RUN/want" <<EOF
pvm_mytid $((1 + k))
pvm_getcontext 1
pvm_addmhf 1
pvm_spawn 1
pvm_recv $((k + km))
pvm_exit $((1 + k))
handler $km
pvm_upkint $((2 * km))
pvm_bufinfo $km
pvm_initsend $((km + k * (m + 1)))
pvm_pkint $((2 * km))
pvm_send $((km + k * (m + 1)))
pvm_parent $k
EOF
expect_counts handlers "$RUN/want" "$RUN/counts"
expect_eq "handler runs that received a request" $km "$(jq -c \
    'select(.call == "handler" and .phase == "begin" and .tag == 5 and
    .match != null)' "$RUN/trace.json" | wc -l)"
expect_eq "unmatched receives" 0 "$(jq -c 'select(.unmatched == true)' \
    "$RUN/trace.json" | wc -l)"
expect_eq "problems" 0 "$(jq -c 'select(.type == "problem")' \
    "$RUN/trace.json" | wc -l)"
"$PMON" export --format=chrome -i "$RUN/run.pmr" -o "$RUN/run.json" ||
    fail "pmon export failed"
expect_eq "messages drawn (requests, answers, last words)" \
    $((2 * km + k)) "$(jq '[.traceEvents[] | select(.ph == "f" and
    .cat != "spawn")] | length' "$RUN/run.json")"
expect_eq "handler runs drawn" $km "$(jq '[.traceEvents[] |
    select(.name == "handler")] | length' "$RUN/run.json")"
pass
