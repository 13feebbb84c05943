#!/bin/bash
# Protects the message mailbox (doc/state.md, doc/ordering.md):
# tests/progs/mailbox's putter stores N entries and a persistent one;
# a getter, another program that never exchanged a message with it,
# reads the N entries.  Each pvm_recvinfo end is matched to the
# pvm_putinfo that stored what it read (a causal edge: the stream is
# causal), every call is counted as the source makes it, pmon mailbox
# shows the entries while the putter lives and only the persistent one
# after it exited and deleted entry 0.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
n=6 name=pmon-work keep=pmon-keep
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
bg timeout 60 "$PMON" exec "$PROGS/mailbox" put $name $n $keep "$RUN/put" \
    >"$RUN/put.out" 2>&1
PUTTER=$BG_PID
wait_for 20 test -s "$RUN/put" || fail "the putter did not put: $(cat "$RUN/put.out")"
timeout 20 "$PMON" flush >/dev/null || fail "pmon flush failed"
"$PMON" mailbox --json >"$RUN/mbox1.json" || fail "pmon mailbox failed"
expect_eq "mailbox entries while the putter lives" \
    "$( (for i in $(seq 0 $((n - 1))); do echo "$name $i"; done
    echo "$keep 0") | sort)" \
    "$(jq -r '.mailbox[] | "\(.name) \(.index)"' "$RUN/mbox1.json" | sort)"
pmon_exec "$PROGS/mailbox" get $name $n || fail "the getter failed: \
$(cat "$RUN/mailbox.out" "$RUN/mailbox.err")"
expect_eq "the getter's output" "got $n" "$(cat "$RUN/mailbox.out")"
wait "$PUTTER" || fail "the putter exited with $?: $(cat "$RUN/put.out")"
wait_for 20 eval '[ "$("$PMON" ps | awk "\$3 == \"mailbox\" &&
    \$4 == \"exited\"" | wc -l)" = 2 ]' ||
    fail "the two tasks did not end: $("$PMON" ps)"
timeout 20 "$PMON" flush >/dev/null || fail "pmon flush failed"
"$PMON" mailbox --json >"$RUN/mbox2.json" || fail "pmon mailbox failed"
"$PMON" mailbox >"$RUN/mbox2.txt" || fail "pmon mailbox failed"
putter=$(jq -r 'select(.call == "pvm_putinfo") | .tid' "$RUN/trace.json" |
    head -n 1)
expect_eq "the mailbox after the putter's end" "$keep 0 $putter" \
    "$(jq -r '.mailbox[] | "\(.name) \(.index) \(.owner)"' "$RUN/mbox2.json")"
grep -q "^$keep " "$RUN/mbox2.txt" || fail "pmon mailbox: $(cat "$RUN/mbox2.txt")"
kill -TERM "$TRACE_PID"
wait_for 10 pid_dead "$TRACE_PID" || fail "pmon trace did not end"

"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
# Each read is matched to the put of its index: the putter's i-th
# pvm_putinfo begin.
expect_eq "reads matched to their puts" \
    "$(jq -r 'select(.call == "pvm_putinfo" and .phase == "begin") | .id' \
    "$RUN/trace.json" | head -n $n)" \
    "$(jq -r 'select(.call == "pvm_recvinfo" and .phase == "end") | .match' \
    "$RUN/trace.json")"
"$STREAMCHECK" -c "$RUN/trace.json" >"$RUN/counts"
cat >"$RUN/want" <<EOT
pvm_mytid 2
pvm_initsend $((n + 2))
pvm_pkint $((n + 1))
pvm_putinfo $((n + 1))
pvm_getsbuf $((n + 1))
pvm_recv 1
pvm_delinfo 1
pvm_exit 2
pvm_recvinfo $n
pvm_upkint $n
pvm_bufinfo 1
pvm_send 1
EOT
expect_counts mailbox "$RUN/want" "$RUN/counts"
pass
