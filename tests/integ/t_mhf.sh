#!/bin/bash
# Protects message handlers, the mailbox and contexts together, with
# PVM's own example of them (pvm-examples' mhf_server and mhf_tickle, as
# mhf_server.c says to run them: the server from the console, a tickle
# from the shell).  The server takes a new context, registers in the
# mailbox, and serves requests; the tickle finds it in the mailbox, has
# it load int_catcher6 as a handler for tag 20 in context 0, sends the
# handler a number (the "hit"), tells the server which, and stops it.
# In the stream: the tickle's pvm_recvinfo follows the server's
# pvm_putinfo, matched to it; the handler's run is a "handler" in the
# server, matched to the tickle's send of tag 20 in context 0, with its
# unpacks inside; the requests travel in the server's new context; the
# stream is causal; the server says the handler got the number; no
# problem is reported.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v pvm >/dev/null || skip "no pvm console (apt-get install pvm)"
command -v mhf_server >/dev/null ||
    skip "no mhf_server (apt-get install pvm-examples)"
command -v jq >/dev/null || skip "jq is not installed"
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
(console_job "$RUN/console" "spawn -> mhf_server") &
CONSOLE=$!
wait_for 20 eval '"$PMON" mailbox --json | jq -e ".mailbox[] |
    select(.name == \"mhf_server\")" >/dev/null' ||
    fail "mhf_server did not register: $(cat "$RUN/console")"
# LMH (1): tag 20, context 0, int_catcher6; HIT (4): tag 20, context 0,
# handler 6, the number 4242; SEAT (9): stop the server, and the tickle.
printf '1\n20\n0\n6\n4\n20\n0\n6\n4242\n9\n' |
    timeout 30 "$PMON" exec "$(command -v mhf_tickle)" >"$RUN/tickle.out" \
    2>&1 || fail "mhf_tickle failed: $(tail -5 "$RUN/tickle.out")"
wait "$CONSOLE" || fail "the console job failed"
grep -q 'HIT:  ping target 6 - IC1   magic_numbers match 4242' \
    "$RUN/console" || fail "the handler did not get 4242: $(cat "$RUN/console")"
trace_when_exited 'mhf_' 2
"$STREAMCHECK" -a "$RUN/trace.json" || fail "stream violations"
T=$RUN/trace.json
server=$(jq -r 'select(.call == "pvm_putinfo") | .tid' "$T" | head -n 1)
tickle=$(jq -r 'select(.call == "pvm_recvinfo") | .tid' "$T" | head -n 1)
[ -n "$server" ] && [ -n "$tickle" ] || fail "no put or no read in the stream"
expect_eq "the tickle's read of the mailbox, matched to the put" \
    "$(jq -r 'select(.call == "pvm_putinfo" and .phase == "begin") |
    .id' "$T")" "$(jq -r 'select(.call == "pvm_recvinfo" and
    .phase == "end") | .match' "$T")"
expect_eq "handler runs in the server (tag 20, context 0, from the tickle)" \
    "1 $tickle 20 0" "$(jq -r --argjson s "$server" 'select(.tid == $s and
    .call == "handler" and .phase == "begin") | "\(.src) \(.tag) \(.ctx)"' \
    "$T" | sort | uniq -c | awk '{ print $1, $2, $3, $4 }')"
send20=$(jq -r --argjson t "$tickle" 'select(.tid == $t and
    .call == "pvm_send" and .phase == "begin" and .tag == 20) | .id' "$T")
expect_eq "the handler's message" "$send20" "$(jq -r --argjson s "$server" \
    'select(.tid == $s and .call == "handler" and .phase == "begin") |
    .match' "$T")"
# What the handler did, inside its run: int_catcher6's calls.
expect_eq "int_catcher6's calls" \
    "pvm_setrbuf pvm_upkint pvm_upkint pvm_setrbuf pvm_freebuf" \
    "$(jq -r --argjson s "$server" 'select(.tid == $s and .call)' "$T" |
    jq -rs '[.[] | select(.phase == "begin")] | map(.call) |
    .[index("handler") + 1:] | .[:5] | join(" ")')"
ctx=$(jq -r --argjson s "$server" 'select(.tid == $s and
    .call == "pvm_newcontext" and .phase == "end") | .rc' "$T")
[ -n "$ctx" ] && [ "$ctx" -gt 0 ] || fail "no new context in the server"
expect_eq "requests to the server in its context (LMH 1, HIT 4, SEAT 9)" \
    "1 4 9" "$(jq -r --argjson t "$tickle" --argjson c "$ctx" \
    'select(.tid == $t and .call == "pvm_send" and .phase == "begin" and
    .ctx == $c) | .tag' "$T" | paste -sd' ')"
"$PMON" problems --json >"$RUN/problems.json" || fail "pmon problems failed"
expect_eq "problems" "[]" "$(jq -c '.problems' "$RUN/problems.json")"
pass
