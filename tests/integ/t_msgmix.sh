#!/bin/bash
# Protects the per-call accounting of every message call whose order the
# stream must get right (mcast, psend/precv, send/trecv, nrecv polling,
# probe then recv, wildcard source and tag, group bcast and barriers):
# pmon's counts per call equal the program's own, and every message is
# matched to its send.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$PROGS/msgmix" ] || fail "missing $PROGS/msgmix"
start_pvmd

k=4
mkdir "$RUN/counts"
pmon_run_traced "$PROGS/msgmix" "$k" "$RUN/counts"
[ "$PROG_RC" = 0 ] || fail "msgmix exited with $PROG_RC: $(cat "$RUN/msgmix.err")"
grep -qx 'msgmix: ok' "$RUN/msgmix.out" || fail "msgmix did not say ok"
nfiles() { ls "$RUN/counts" | grep -c '\.counts$'; }
wait_for 10 eval '[ "$(nfiles)" = $((k + 1)) ]' ||
    fail "expected $((k + 1)) count files, got $(nfiles)"
cat "$RUN/counts"/*.counts >"$RUN/want"

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/got"
expect_counts msgmix "$RUN/want" "$RUN/got"

"$STREAMCHECK" -t "$RUN/trace.json" >"$RUN/tasks"
expect_eq "msgmix tasks" $((k + 1)) \
    "$(awk '$2 == "msgmix" && $4 > 0' "$RUN/tasks" | wc -l)"
# The group server is spawned by libgpvm, preloaded, and must stay silent.
expect_eq "tasks other than msgmix" 0 \
    "$(awk '$2 != "msgmix" && $4 > 0' "$RUN/tasks" | wc -l)"
pass
