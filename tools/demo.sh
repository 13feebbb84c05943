#!/bin/sh
# make demo: monitors the unmodified PVM example master1 on a private
# virtual machine and shows its event stream live, then a summary.
#
# On a fresh Debian machine it installs what the build needs (as root) or
# prints the apt-get line to run.  Everything it starts -- pvmd, the pmon
# daemons, the traces -- is stopped by pid and its directory removed when
# it exits, also on failure or Ctrl-C.  Exit status 0 only if master1
# succeeded and the trace shows its events.

MAKE=${MAKE:-make}
BUILD=${BUILD:-build}

DIR=""			# the private PVM_TMP, removed at exit
PVMD_PID=""
LIVE_PID=""		# pmon trace, text to the terminal
JSON_PID=""		# pmon trace --json --summary, for counting

say() { printf '\n== %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# wait_gone SECONDS PID: polls until PID is gone; 1 if it is not.
wait_gone() {
	n=$(($1 * 10))
	while alive "$2"; do
		n=$((n - 1))
		[ "$n" -le 0 ] && return 1
		sleep 0.1
	done
	return 0
}

# stop PID: TERM, a moment, then KILL.
stop() {
	alive "$1" || return 0
	kill -TERM "$1" 2>/dev/null
	wait_gone 5 "$1" || kill -KILL "$1" 2>/dev/null
}

# Processes of this virtual machine: the pmon daemons and any task were
# started with PVM_TMP=$DIR (pvmd passes its environment to its tasks).
# shellcheck disable=SC2317  # called by cleanup
vm_pids() {
	[ -n "$DIR" ] || return 0
	grep -lzx "PVM_TMP=$DIR" /proc/[0-9]*/environ 2>/dev/null |
	    sed 's|^/proc/\([0-9]*\)/environ$|\1|' | grep -vx "$$"
}

# shellcheck disable=SC2317  # called by the trap
cleanup() {
	rc=$?
	trap - EXIT INT TERM
	if [ -n "$DIR" ] && [ -S "$DIR/pmon-coord.$(id -u)" ]; then
		timeout 10 "$PMON" shutdown >/dev/null 2>&1
	fi
	stop "$LIVE_PID"
	stop "$JSON_PID"
	stop "$PVMD_PID"
	for p in $(vm_pids); do stop "$p"; done
	[ -n "$DIR" ] && rm -rf "$DIR"
	exit "$rc"
}

trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- packages and build ----------------------------------------------------

sh "$(dirname "$0")/deps.sh" demo || exit 1

say "building ($MAKE BUILD=$BUILD)"
$MAKE BUILD="$BUILD" all || die "the build failed"
BUILD=$(cd "$BUILD" && pwd) || die "no build directory $BUILD"
PMON=$BUILD/bin/pmon

# --- a private virtual machine ---------------------------------------------

DIR=$(mktemp -d /tmp/pmon-demo.XXXXXX) || die "mktemp failed"
export PVM_TMP="$DIR" PVM_ROOT=/usr/lib/pvm3
[ "$(id -u)" = 0 ] && export PVM_ALLOW_ROOT=1
echo "* ep=$BUILD/bin:/usr/bin:/usr/lib/pvm3/lib" >"$DIR/hostfile"

say "starting pvmd (PVM_TMP=$DIR)"
setsid pvmd "$DIR/hostfile" </dev/null >"$DIR/pvmd.out" 2>&1 &
PVMD_PID=$!
n=100
while [ ! -s "$DIR/pvmd.$(id -u)" ]; do
	alive "$PVMD_PID" || die "pvmd failed: $(cat "$DIR/pvmd.out")"
	n=$((n - 1))
	[ "$n" -le 0 ] && die "pvmd did not start within 10 s"
	sleep 0.1
done

say "pmon start"
timeout 30 "$PMON" start -v || die "pmon start failed"

# A trace is subscribed once it holds its socket to the coordinator.
wait_connected() {
	n=100
	until readlink "/proc/$1/fd/"* 2>/dev/null | grep -q '^socket:'; do
		alive "$1" || die "pmon trace ended early"
		n=$((n - 1))
		[ "$n" -le 0 ] && die "pmon trace did not connect"
		sleep 0.1
	done
}

say "pmon trace (live) and pmon exec master1"
"$PMON" trace &
LIVE_PID=$!
"$PMON" trace --json --summary >"$DIR/trace.json" 2>"$DIR/summary.txt" &
JSON_PID=$!
wait_connected "$LIVE_PID"
wait_connected "$JSON_PID"
sleep 0.2	# let the coordinator read both hellos before any event

timeout 120 "$PMON" exec master1
master_rc=$?

timeout 30 "$PMON" flush || echo "demo: pmon flush failed" >&2
timeout 30 "$PMON" shutdown || echo "demo: pmon shutdown failed" >&2
wait_gone 10 "$LIVE_PID" || echo "demo: the live trace did not end" >&2
wait_gone 10 "$JSON_PID" || echo "demo: the JSON trace did not end" >&2
wait "$LIVE_PID" 2>/dev/null
wait "$JSON_PID" 2>/dev/null
LIVE_PID="" JSON_PID=""

# --- the summary -------------------------------------------------------------

events=$(grep -c '"call":' "$DIR/trace.json")
say "summary"
cat "$DIR/summary.txt"
echo "master1 exited with status $master_rc; the trace holds $events events"

stop "$PVMD_PID"
PVMD_PID=""
if [ "$master_rc" = 0 ] && [ "$events" -gt 0 ]; then
	echo "demo: ok"
	exit 0
fi
echo "demo: FAILED" >&2
exit 1
