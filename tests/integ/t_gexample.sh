#!/bin/bash
# Protects group calls: gexample's joingroup, freezegroup, reduce,
# barrier and lvgroup appear with the group name, the stream stays
# causal, and the traffic between libgpvm and the group server (pvmgs)
# never shows up as application events.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
start_pvmd

# 2 tasks, dimension 3: gexample prints the 1-norm 6 and 3! = 6.
printf '3\n2\n' >"$RUN/gexample.in"
pmon_run_traced gexample <"$RUN/gexample.in"
[ "$PROG_RC" = 0 ] || fail "gexample exited with $PROG_RC"
out=$RUN/gexample.out
grep -q 'Using 2 processors' "$out" || fail "gexample did not use 2 tasks"
grep -q 'The 1-Norm is 6 ' "$out" || fail "wrong 1-norm: $(cat "$out")"

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
"$STREAMCHECK" -e "$RUN/trace.json" >"$RUN/events"
"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"

gexample_want "$RUN/want"
expect_counts gexample "$RUN/want" "$RUN/got"

for c in joingroup freezegroup reduce barrier lvgroup; do
	bad=$(awk -v c="pvm_$c" '$4 == c && $9 != "matrix"' "$RUN/events")
	[ -z "$bad" ] || fail "pvm_$c without the group name: $bad"
done
expect_eq "gexample tasks" 2 \
    "$(awk '$2 == "gexample" && $4 > 0' "$RUN/tasks" | wc -l)"
expect_eq "events of other programs (pvmgs)" 0 \
    "$(awk '$2 != "gexample" && $4 > 0' "$RUN/tasks" | wc -l)"
pass
