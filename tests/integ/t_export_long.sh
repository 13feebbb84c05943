#!/bin/bash
# Protects pmon export's bounded memory (doc/exports.md, "What each
# format keeps"): the export of a recording four times longer than
# another, of the same program, has the same peak RSS within a small
# margin, for every format.  Two recordings of tests/progs/storm (K
# tasks, each sending to its successor and taking one message with a
# wildcard receive, R and 4 R rounds) on one virtual machine; each holds
# the 10 K R + 16 K + 2 events storm makes, and each export of them is
# measured with /usr/bin/time.  An exporter that kept anything per
# event (as they once did: a line per event, every send and its vector
# clock, libotf2's default 128 MiB per location) grows by megabytes
# between the two: chrome kept 12 bytes per event, so 3 x 200,000 more
# events were 7 MB more.  libotf2 keeps each task's current 4 MiB chunk:
# until it is full, an OTF2 export grows by what the files show.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
need_built "$PROGS/storm"
[ -x /usr/bin/time ] || fail "/usr/bin/time is needed (Debian's time)"
command -v otf2-print >/dev/null || fail "otf2-print is needed"
FORMATS="shiviz chrome paje otf2"	# shiviz first: its lines count the events
K=4 R=5000
# What may differ between two exports of any length: where the heap's
# top lands after the few buffers of a format (256 KiB of output, the
# tables of tasks and messages in flight) were made; nothing per event.
MARGIN_KB=1024

start_pvmd
record_storm "$RUN/short.pmr" "$K" "$R"
record_storm "$RUN/long.pmr" "$K" $((4 * R))

# otf2_kb NAME: what libotf2 holds of NAME.otf2 at most: one 4 MiB
# chunk per location, or its events when they are fewer.
otf2_kb() {
	KB=0
	for e in "$RUN/$1.otf2"/traces/*.evt; do
		n=$(($(stat -c %s "$e") / 1024))
		[ "$n" -gt 4096 ] && n=4096
		KB=$((KB + n))
	done
}

# peak_kb FORMAT NAME: exports NAME.pmr; its peak RSS goes to $KB.
# Built with ASan (make check), the export would keep what it frees in
# ASan's quarantine (256 MiB), growing with the events: none here.
peak_kb() {
	rm -rf "$RUN/$2.$1"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 \
	    /usr/bin/time -f %M -o "$RUN/$2.$1.kb" "$PMON" export --format="$1" \
	    -i "$RUN/$2.pmr" -o "$RUN/$2.$1" </dev/null >/dev/null \
	    2>"$RUN/$2.$1.err" ||
	    fail "pmon export --format=$1 -i $2.pmr: $(cat "$RUN/$2.$1.err")"
	[ -s "$RUN/$2.$1.err" ] && fail "pmon export --format=$1 -i $2.pmr \
complained: $(cat "$RUN/$2.$1.err")"
	KB=$(tail -n 1 "$RUN/$2.$1.kb")
}

for f in $FORMATS; do
	peak_kb "$f" short
	s=$KB
	peak_kb "$f" long
	l=$KB
	# Each export holds the whole run: one ShiViz line per event.
	if [ "$f" = shiviz ]; then
		expect_eq "events of the short run" $((10 * K * R + 16 * K + 2)) \
		    "$(wc -l <"$RUN/short.shiviz")"
		expect_eq "events of the long run" $((40 * K * R + 16 * K + 2)) \
		    "$(wc -l <"$RUN/long.shiviz")"
	fi
	# libotf2 keeps each task's current chunk, filling up to 4 MiB:
	# that much may grow, what the archive's files say.
	allow=$MARGIN_KB
	if [ "$f" = otf2 ]; then
		otf2_kb short
		allow=$((allow - KB))
		otf2_kb long
		allow=$((allow + KB))
	fi
	pm_log "$f: peak RSS $s KB for $((10 * K * R)) events," \
	    "$l KB for $((40 * K * R)) (at most $allow KB more)"
	[ $((l - s)) -le "$allow" ] || fail "$f: the export of a run 4 \
times longer needs $((l - s)) KB more (peak $s KB, then $l KB; at most \
$allow KB)"
	rm -rf "$RUN/short.$f" "$RUN/long.$f"
done
pass
