#!/bin/bash
# Protects the group state model (VISTOP's state-consistent order, paper
# 003 section 3.3) on one host: grouprace's workers join and leave a group
# while its master broadcasts to it, pass barriers whose count changes,
# and poll group sizes; gexample forms a frozen group.  The group server
# pvmgs is instrumented too, and its records give the order of the group
# changes, so the stream must be causal and state-consistent with no
# event flagged (streamcheck -g -i 0: every bcast reaches exactly the
# members shown, every gsize returns the size shown, no barrier ends
# before its episode began) with corrected times that never go backwards
# (-T), and every count must equal the programs' own.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$PROGS/grouprace" ] || fail "missing $PROGS/grouprace"
start_pvmd

k=4 rounds=30
mkdir "$RUN/counts"
pmon_start
pmon_trace "$RUN/trace.json"
pmon_exec "$PROGS/grouprace" "$k" "$rounds" "$RUN/counts"
rc=$?
printf '3\n2\n' >"$RUN/gexample.in"
pmon_exec gexample <"$RUN/gexample.in"
grc=$?
pmon_shutdown "$TRACE_PID"

[ "$rc" = 0 ] || fail "grouprace exited with $rc: $(cat "$RUN/grouprace.err")"
grep -qx 'grouprace: ok' "$RUN/grouprace.out" || fail "grouprace did not say ok"
[ "$grc" = 0 ] || fail "gexample exited with $grc"
grep -q 'The 1-Norm is 6 ' "$RUN/gexample.out" ||
    fail "wrong 1-norm: $(cat "$RUN/gexample.out")"
nfiles() { ls "$RUN/counts" | grep -c '\.stats$'; }
wait_for 10 eval '[ "$(nfiles)" = $((k + 1)) ]' ||
    fail "expected $((k + 1)) stats files, got $(nfiles)"

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -g -i 0 "$RUN/trace.json" ||
    fail "group state violations (-g)"
"$STREAMCHECK" -T "$RUN/trace.json" || fail "corrected time violations (-T)"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
"$STREAMCHECK" -e "$RUN/trace.json" >"$RUN/events"
"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"

cat "$RUN/counts"/*.counts >"$RUN/want"
expect_counts grouprace "$RUN/want" "$RUN/got"
grouprace_check "$RUN/counts" "$k" "$RUN/events"

gexample_want "$RUN/gwant"
expect_counts gexample "$RUN/gwant" "$RUN/got"

expect_eq "grouprace tasks" $((k + 1)) \
    "$(awk '$2 == "grouprace" && $4 > 0' "$RUN/tasks" | wc -l)"
expect_eq "gexample tasks" 2 \
    "$(awk '$2 == "gexample" && $4 > 0' "$RUN/tasks" | wc -l)"
expect_eq "pvmgs announced" 1 "$(grep -c '"program":"pvmgs","pid"' "$RUN/trace.json")"
expect_eq "tasks of other programs (pvmgs)" 0 \
    "$(awk '$2 != "grouprace" && $2 != "gexample" && $4 > 0' \
    "$RUN/tasks" | wc -l)"
pass
