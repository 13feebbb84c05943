#!/bin/bash
# Protects the compact time encoding (pmon start --time=compact,
# doc/capture.md): the same program run under an exact and a compact
# coordinator gives, task for task, the same events in the same order
# with the same partners and tags, both streams causally complete; the
# compact times never go backwards within a task; the agents' packed,
# deflated records cost less than 1 byte per event; pmon start -R
# reaches the agent, which publishes it for its tasks; and by default an
# agent on the coordinator's host sends its stream plain, while
# --compress=always deflates it.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$PROGS/pingpong" ] || fail "missing $PROGS/pingpong"
command -v jq >/dev/null || fail "jq is needed"
start_pvmd

k=2 rounds=300

# A bad capture setting is refused by name, and nothing starts.
if "$PMON" start --compress=sometimes </dev/null >"$RUN/bad.out" 2>&1; then
	fail "pmon start took --compress=sometimes"
fi
grep -q -- "--compress sometimes: always, remote or never" "$RUN/bad.out" ||
    fail "pmon start --compress=sometimes said: $(cat "$RUN/bad.out")"
[ -z "$(sock_pid "$(coord_sock)")" ] ||
    fail "a coordinator started for --compress=sometimes"

# run MODE RING COMPRESS: pingpong traced under a coordinator of its own
# (COMPRESS "": pmon start's default).
run() {
	local mode=$1 ring=$2 compress=$3
	pmon_start -v -v -Q 268435456 -T "$mode" -R "$ring" \
	    ${compress:+-Z "$compress"}
	grep -qx "capture time=$mode agent_buffer=16777216 live_ms=20 \
ring=$ring compress=${compress:-remote} block=off" "$PVM_TMP.pmon-start.out" ||
	    fail "pmon start -v: $(cat "$PVM_TMP.pmon-start.out")"
	wait_for 10 test -s "$PVM_TMP/pmon-ring.$(id -u)" ||
	    fail "the agent published no ring size"
	expect_eq "published ring size" "$ring" \
	    "$(cat "$PVM_TMP/pmon-ring.$(id -u)")"
	pmon_trace "$RUN/$mode.json"
	pmon_exec "$PROGS/pingpong" "$k" "$rounds" 100 "$RUN/$mode.log" ||
	    fail "pingpong exited with $?: $(cat "$RUN/pingpong.err")"
	pmon_shutdown "$TRACE_PID"
	grep -qx done "$RUN/$mode.log" || fail "pingpong ($mode) did not finish"
	"$STREAMCHECK" -a "$RUN/$mode.json" || fail "$mode stream violations"
	grep -o '[0-9]* records in [0-9]* bytes ([0-9.]* B/record), [0-9]* bytes inflated' \
	    "$(coord_log)" | tail -n 1 >"$RUN/$mode.size"
	[ -s "$RUN/$mode.size" ] || fail "no size line in $(coord_log)"
	mv "$(coord_log)" "$RUN/$mode.coord.log"
	wait_for 10 test ! -e "$PVM_TMP/pmon-ring.$(id -u)" ||
	    fail "the agent left its ring size file behind"
}

# canon MODE: each task's events in seq order, tids replaced by their
# rank among the run's tids (spawn order on one host), times left out.
canon() {
	jq -r 'select(.call != null) | [.tid, .seq, .program, .call, .phase,
	    .src // "-", .dst // "-", .tag // "-"] | map(tostring) |
	    join(" ")' "$RUN/$1.json" | awk '
	    { line[NR] = $0; tid[$1] = 1 }
	    END {
		n = 0
		for (t in tid) ids[++n] = t + 0
		for (i = 1; i <= n; i++)	# insertion sort, n is tiny
			for (j = i; j > 1 && ids[j - 1] > ids[j]; j--) {
				x = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = x
			}
		for (i = 1; i <= n; i++) rank[ids[i]] = "T" i
		for (i = 1; i <= NR; i++) {
			split(line[i], f, " ")
			for (c = 1; c <= 8; c++)
				if (c != 2 && (f[c] + 0) in rank && f[c] ~ /^[0-9]+$/)
					f[c] = rank[f[c] + 0]
			print f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]
		}
	    }' | sort -k1,1 -k2,2n
}

run exact 1048576 ""
run compact 524288 always

canon exact >"$RUN/exact.canon"
canon compact >"$RUN/compact.canon"
expect_eq "pingpong sends in the compact stream" $((2 * k * rounds + k)) \
    "$(grep -c ' pvm_send begin ' "$RUN/compact.canon")"
cmp -s "$RUN/exact.canon" "$RUN/compact.canon" ||
    fail "exact and compact streams differ: $(diff "$RUN/exact.canon" \
	"$RUN/compact.canon" | head -n 5)"

# Reconstructed times go forward within each task.
back=$(jq -r 'select(.call != null) | "\(.tid) \(.seq) \(.t)"' \
    "$RUN/compact.json" | sort -k1,1n -k2,2n | awk '
	$1 == tid && $3 < t { n++ } { tid = $1; t = $3 } END { print n + 0 }')
expect_eq "compact times going backwards within a task" 0 "$back"

read -r n _ _ bytes _ _ _ inflated _ <"$RUN/compact.size"
expect_eq "records the compact agent sent" "$(grep -c '"call"' \
    "$RUN/compact.json")" "$n"
[ "$bytes" -lt "$n" ] && [ "$inflated" -gt "$bytes" ] ||
    fail "compact, deflated: $bytes bytes for $n records:" \
	"$(cat "$RUN/compact.size")"

# The exact run's agent shared the coordinator's host: a plain stream,
# nothing to inflate, and more than a byte per record.
read -r n _ _ bytes _ _ _ inflated _ <"$RUN/exact.size"
expect_eq "records the exact agent sent" "$(grep -c '"call"' \
    "$RUN/exact.json")" "$n"
expect_eq "bytes the coordinator inflated for a local agent" 0 "$inflated"
[ "$bytes" -gt "$n" ] ||
    fail "exact, plain: $bytes bytes for $n records: $(cat "$RUN/exact.size")"
pm_log "exact: $(cat "$RUN/exact.size"); compact: $(cat "$RUN/compact.size")"
pass
