#!/bin/bash
# Protects `make install` and libpmon as a third party uses it (README,
# "A tool of your own"): make test installs into $PMON_BUILD/install
# (PREFIX /usr/local).  The tree holds the commands, the instrumentation
# library, libpmon.so.1 (soname libpmon.so.1, libpmon.so beside it),
# pmon.h and pmon.pc, the gdb extension, and the man pages: pmon(1)
# with a section for every command pmon help lists, pmon-coordd(8),
# pmon-agentd(8), libpmon(3), pmon-requests(7), each rendered by groff
# without a warning.  The library exports exactly the functions pmon.h
# (and pmon_calls.h beside it) declares.  tests/install/msgcount.c,
# built with nothing but `pkg-config pmon`, runs against the installed
# library beside an installed pmon (start, trace, exec master1): the
# messages it counts per task are master1's, and the trace is
# master1's, call by call.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
command -v pkg-config >/dev/null || skip "no pkg-config (apt-get install pkg-config)"
I=$PMON_BUILD/install
P=$I/usr/local
for f in bin/pmon bin/pmon-agentd bin/pmon-coordd lib/libpmon-pvm.so \
    lib/libpmon.so.1 include/pmon.h include/pmon_calls.h lib/pkgconfig/pmon.pc \
    share/pmon/gdb/pmon.py share/man/man1/pmon.1 share/man/man3/libpmon.3 \
    share/man/man7/pmon-requests.7 share/man/man8/pmon-coordd.8 \
    share/man/man8/pmon-agentd.8; do
	[ -f "$P/$f" ] || fail "make install left no $f in $P"
done
expect_eq "libpmon.so" libpmon.so.1 "$(readlink "$P/lib/libpmon.so")"
expect_eq "soname" "libpmon.so.1" "$(objdump -p "$P/lib/libpmon.so.1" |
    awk '$1 == "SONAME" { print $2 }')"
expect_eq "functions libpmon.so exports (those of pmon.h)" \
    "$(grep '^[a-z]' "$P/include/pmon.h" | grep -o '\<pmon_[a-z_]*(' |
    tr -d '(' | sort)" \
    "$(nm -D --defined-only "$P/lib/libpmon.so.1" | awk '{ print $3 }' |
    sed 's/@.*//' | grep -vx PMON_1 | sort)"

command -v groff >/dev/null || skip "no groff (apt-get install groff-base)"
for m in "$P"/share/man/man*/*; do
	groff -ww -man -z "$m" >"$RUN/groff.err" 2>&1 ||
	    fail "groff failed on $m: $(cat "$RUN/groff.err")"
	[ -s "$RUN/groff.err" ] && fail "groff warns on $m: $(cat "$RUN/groff.err")"
done
expect_eq "commands in pmon(1)" \
    "$("$P/bin/pmon" help | awk '/^Commands:/ { on = 1; next }
    on && /^  [a-z]/ && $1 != "help" { print $1 }')" \
    "$(sed -n 's/^\.SS //p' "$P/share/man/man1/pmon.1")"

export PKG_CONFIG_PATH=$P/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$I
# shellcheck disable=SC2046  # pkg-config's flags are words
cc -Wall -Werror -o "$RUN/msgcount" "$(dirname "$0")/../install/msgcount.c" \
    $(pkg-config --cflags --libs pmon) 2>"$RUN/cc.err" ||
    fail "msgcount does not build against the installed pmon: $(cat "$RUN/cc.err")"
export LD_LIBRARY_PATH=$P/lib
ldd "$RUN/msgcount" | grep -q "libpmon.so.1 => $P/lib/libpmon.so.1" ||
    fail "msgcount is not linked with the installed libpmon.so.1: $(ldd "$RUN/msgcount")"

PMON=$P/bin/pmon
start_pvmd
pmon_start
pmon_trace "$RUN/trace.json"
bg "$RUN/msgcount" >"$RUN/msgcount.out" 2>"$RUN/msgcount.err"
EVC=$BG_PID
wait_for 10 grep -q ready "$RUN/msgcount.err" ||
    fail "msgcount did not connect: $(cat "$RUN/msgcount.err")"
pmon_exec master1 || fail "master1 failed: $(cat "$RUN/master1.err")"
timeout 20 "$PMON" flush >/dev/null || fail "pmon flush failed"
kill -TERM "$EVC"
wait "$EVC" || fail "msgcount exited with $?: $(cat "$RUN/msgcount.err")"
pmon_shutdown "$TRACE_PID"
expect_master1 "$RUN/trace.json" 3
# On one host master1 spawns 3 slave1s and multicasts them the data; each
# slave sends its neighbour one message and takes one (tag 22), then sends
# the master its result, which takes the 3.
expect_eq "messages msgcount counted per task" \
    "master1 sent 3 received 3
slave1 sent 2 received 2
slave1 sent 2 received 2
slave1 sent 2 received 2" \
    "$(cut -d' ' -f2- "$RUN/msgcount.out" | sort)"
expect_eq "tasks msgcount counted (the trace's)" \
    "$(jq -r 'select(.tid) | .tid' "$RUN/trace.json" | sort -u |
    xargs printf 't%x\n' | sort)" \
    "$(cut -d' ' -f1 "$RUN/msgcount.out" | sort -u)"
pass
