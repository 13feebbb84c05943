#!/bin/sh
# Runs every integration test (tests/integ/t_*.sh, or those named on the
# command line), each in its own bash with a time limit, and checks after
# each that it left nothing behind: no process of its run, no namespace,
# no /etc/netns dir, no run directory.  A leak counts as a failure.
# Ends with the line "N passed, N failed, N skipped"; exits 1 if any
# test failed.

[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"

dir=$(cd "$(dirname "$0")" && pwd)
export PMON_BUILD=${PMON_BUILD:-$(pwd)/build}
limit=${PMON_TEST_TIMEOUT:-300}
passed=0 failed=0 skipped=0

# Every resource a test creates is listed in its ledger by lib.sh and
# netns.sh: "dir PATH", "netns NAME", "etc PATH".  Processes are found
# by the run marker lib.sh exports (PMON_TEST_RUN=<run dir>).
leaks() {
	local kind what p
	while read -r kind what; do
		case $kind in
		dir)
			[ -e "$what" ] && echo "run dir $what" && rm -rf "$what"
			for p in $(run_pids "$what"); do
				echo "process $p: $(tr '\0' ' ' 2>/dev/null \
				    </proc/$p/cmdline)"
				kill -KILL "$p" 2>/dev/null
			done ;;
		netns)
			ip netns list 2>/dev/null | grep -q "^$what\b" &&
			    echo "namespace $what" &&
			    ip netns del "$what" 2>/dev/null ;;
		etc)
			[ -e "$what" ] && echo "$what" && rm -rf "$what" ;;
		esac
	done <"$1"
}

run_pids() {
	grep -lzE "^(PMON_TEST_RUN=$1|PVM_TMP=$1(/.*)?)\$" \
	    /proc/[0-9]*/environ 2>/dev/null |
	    sed 's|^/proc/\([0-9]*\)/environ$|\1|'
}

if [ $# -gt 0 ]; then
	tests="$*"
else
	tests=$(ls "$dir"/t_*.sh)
fi

ledger=$(mktemp /tmp/pmledgerXXXXXX)
times=$(mktemp /tmp/pmtimesXXXXXX)
trap 'rm -f "$ledger" "$times"' EXIT
for t in $tests; do
	name=$(basename "$t" .sh)
	: >"$ledger"
	start=$(date +%s)
	PMON_TEST_LEDGER=$ledger timeout -k 30 "$limit" bash "$t" \
	    >"$ledger.out" 2>&1
	rc=$?
	echo "$(($(date +%s) - start)) $name" >>"$times"
	cat "$ledger.out"
	rm -f "$ledger.out"
	left=$(leaks "$ledger")
	if [ -n "$left" ]; then
		echo "FAIL: $name: left behind:"
		echo "$left" | sed 's/^/    /'
		failed=$((failed + 1))
	elif [ "$rc" = 0 ]; then
		passed=$((passed + 1))
	elif [ "$rc" = 77 ]; then
		skipped=$((skipped + 1))
	else
		[ "$rc" = 124 ] && echo "FAIL: $name: timed out after ${limit}s"
		echo "FAIL: $name (exit status $rc)"
		failed=$((failed + 1))
	fi
done
echo "slowest: $(sort -rn "$times" | head -n 8 | awk '{ printf "%s%s %ss",
    (NR > 1 ? ", " : ""), $2, $1 }'); all: $(awk '{ s += $1 } END { print s }' \
    "$times")s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
