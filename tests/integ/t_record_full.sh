#!/bin/bash
# Protects recordings on a full disk (issue 16): pmon record writing to a
# 256 KiB file system fails with an error that names the problem and
# says how many events the file surely holds; it does not claim more
# than pmon replay then serves, and the coordinator and the program go
# on unharmed.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
FS=$RUN/full
mkdir "$FS"
mount -t tmpfs -o size=256k pmontest "$FS" 2>"$RUN/mount.err" ||
    skip "cannot mount a small tmpfs: $(cat "$RUN/mount.err")"
umount_full() { umount "$FS" 2>/dev/null; }
PM_HOOKS="$PM_HOOKS umount_full"

start_pvmd
pmon_start
bg "$PMON" record -o "$FS/run.pmr" </dev/null >/dev/null 2>"$RUN/record.err"
REC_PID=$BG_PID
wait_for 10 trace_connected "$REC_PID" ||
    fail "pmon record did not connect: $(cat "$RUN/record.err")"
pmon_exec "$PROGS/storm" 4 20000 || fail "storm failed: $(cat "$RUN/storm.err")"
grep -qx "storm ok" "$RUN/storm.out" || fail "storm did not finish"
wait_for 20 pid_dead "$REC_PID" || fail "pmon record still runs on a full disk"
wait "$REC_PID" && fail "pmon record exited 0 on a full disk"
pm_log "$(cat "$RUN/record.err")"
said=$(sed -n "s/.*No space left on device; it holds at least the first \
\([0-9]*\) events.*/\1/p" "$RUN/record.err" | tr -d '\n')
[ -n "$said" ] || fail "pmon record did not name the problem: \
$(cat "$RUN/record.err")"
TMPDIR=$RUN "$PMON" replay "$FS/run.pmr" -- "$PMON" trace --json \
    </dev/null >"$RUN/replay.json" 2>"$RUN/replay.err" ||
    fail "pmon replay: $(cat "$RUN/replay.err")"
served=$(grep -c '"call"' "$RUN/replay.json")
pm_log "the file holds $served events; pmon record said at least $said"
[ "$said" -gt 0 ] && [ "$said" -le "$served" ] || fail "pmon record said \
the file holds at least $said events; pmon replay serves $served"
pmon_shutdown ""
pass
