#!/bin/bash
# Protects the OTF2 export (doc/exports.md, "otf2") as viewers read it:
# a recording of a deadlocked pair (tests/progs/deadpair) and of a small
# message storm (tests/progs/storm) exported to OTF2, which
# - otf2-print reads without a warning, its communicator's group being
#   a COMM_GROUP of ranks over the COMM_LOCATIONS group of every task;
# - holds one MpiSend and one MpiRecv per message storm sent (N ROUNDS +
#   N - 1, from its arguments), each naming a valid rank of the
#   communicator, which is the location it went to or came from;
# - names every region by its call in full, every location "program tid";
# - keeps the deadlock's receives open until the end of the trace;
# - ViTE (Debian's vite, headless) loads and exports to SVG, printing
#   nothing but its progress and the two notices its OTF2 reader gives
#   for a communicator defined as OTF2 wants (see KNOWN below), the rank
#   notice exactly once per message record, for a rank it then takes as
#   the location (which it is); the SVG labels every task in full;
# - --format=otf2-vite, the same run with the communicator over the
#   COMM_LOCATIONS group, which ViTE loads printing only its progress.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
for p in storm deadpair; do
	[ -x "$PROGS/$p" ] || fail "missing $PROGS/$p"
done
for c in jq otf2-print; do
	command -v "$c" >/dev/null || fail "$c is needed (.ci/run installs it)"
done
command -v vite >/dev/null ||
    skip "vite is not installed (apt-get install vite): no ViTE check"

N=3 ROUNDS=20
MSGS=$((N * ROUNDS + N - 1))	# the rounds' sends and task 0's mcast

start_pvmd
pmon_start
REC=$RUN/run.pmr
pmon_record "$REC"
timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"

# The deadlock first, then the storm: the pair stays blocked while the
# trace goes on, and is killed at its end.
deadpair_start
TIDS=$DP_TIDS
timeout 60 "$PMON" exec "$PROGS/storm" "$N" "$ROUNDS" </dev/null \
    >"$RUN/storm.out" 2>"$RUN/storm.err" ||
    fail "storm failed: $(cat "$RUN/storm.err")"
grep -qx 'storm ok' "$RUN/storm.out" || fail "storm did not finish"
wait_for 60 storm_gone || fail "storm tasks still run"
timeout 20 "$PMON" flush </dev/null >/dev/null 2>"$RUN/flush.err" ||
    fail "pmon flush failed: $(cat "$RUN/flush.err")"
P=$(awk '$1 == "parent" { print $2 }' "$TIDS")
C=$(awk '$1 == "child" { print $2 }' "$TIDS")
timeout 20 "$PMON" kill "$P,$C" </dev/null >"$RUN/kill.out" 2>&1 ||
    fail "pmon kill: $(cat "$RUN/kill.out")"
wait_for 20 pid_dead "$DP_PID" || fail "deadpair did not end"
pmon_shutdown "$REC_PID"

OUT=$RUN/run.otf2
timeout 60 "$PMON" export --format=otf2 -i "$REC" -o "$OUT" </dev/null \
    >"$RUN/export.out" 2>"$RUN/export.err" ||
    fail "pmon export: $(cat "$RUN/export.err")"
[ -s "$RUN/export.err" ] && fail "pmon export complained: \
$(cat "$RUN/export.err")"

# --- otf2-print ---------------------------------------------------------------

EV=$RUN/otf2.txt DEFS=$RUN/otf2.defs
otf2-print "$OUT/traces.otf2" >"$EV" 2>"$RUN/print.err" ||
    fail "otf2-print rejects the archive: $(head -n 5 "$RUN/print.err")"
otf2-print -G "$OUT/traces.otf2" >"$DEFS" 2>>"$RUN/print.err" ||
    fail "otf2-print -G rejects the archive: $(head -n 5 "$RUN/print.err")"
[ -s "$RUN/print.err" ] && fail "otf2-print warns: $(sort -u \
"$RUN/print.err" | head -n 5)"
grep -q INVALID "$EV" "$DEFS" && fail "otf2-print finds invalid \
references: $(grep -m 3 INVALID "$EV" "$DEFS")"

NLOC=$(grep -c '^LOCATION ' "$DEFS")
expect_eq "locations (2 deadpair + $N storm tasks)" $((N + 2)) "$NLOC"
expect_eq "MpiSend records (storm's messages)" "$MSGS" \
    "$(grep -c '^MPI_SEND ' "$EV")"
expect_eq "MpiRecv records (storm's messages)" "$MSGS" \
    "$(grep -c '^MPI_RECV ' "$EV")"

# The communicator: comm 0 over a COMM_GROUP whose ranks 0..NLOC-1 are
# the COMM_LOCATIONS group's members, every location in order.
comm_group=$(sed -n \
    's/^COMM  *0  *Name: "pvm" <[0-9]*>, Group: .* <\([0-9]*\)>,.*/\1/p' \
    "$DEFS")
[ -n "$comm_group" ] || fail "no communicator 0: $(grep '^COMM' "$DEFS")"
grep -Eq "^GROUP +$comm_group +Name: .*, Type: COMM_GROUP, Paradigm: MPI, \
.*, $NLOC Members: " "$DEFS" || fail "the communicator's group is not a \
COMM_GROUP of $NLOC ranks: $(grep '^GROUP' "$DEFS")"
grep -Eq "^GROUP +[0-9]+ +Name: .*, Type: COMM_LOCATIONS, Paradigm: MPI, \
.*, $NLOC Members: " "$DEFS" || fail "no COMM_LOCATIONS group of every \
location: $(grep '^GROUP' "$DEFS")"
# Every send's receiver and receive's sender is a rank that otf2-print
# resolves to a location of the same number, in communicator "pvm".
bad=$(awk -v n="$NLOC" '$1 == "MPI_SEND" || $1 == "MPI_RECV" {
	r = $5 + 0; if ($5 !~ /^[0-9]+$/ || r >= n ||
	    index($0, "<" r ">), Communicator: \"pvm\" <0>,") == 0) print }' \
    "$EV" | head -n 3)
[ -z "$bad" ] || fail "messages with a bad rank: $bad"

# Region names: the calls the programs make, in full, each once.
want=$(printf '%s\n' pvm_exit pvm_initsend pvm_mcast pvm_mytid pvm_parent \
    pvm_pkint pvm_recv pvm_send pvm_setopt pvm_spawn pvm_upkint)
got=$(sed -n 's/^REGION .* Name: "\([^"]*\)" .*/\1/p' "$DEFS" | sort)
expect_eq "region names" "$want" "$got"
roles='Role: (FUNCTION|POINT2POINT), Paradigm: USER,'
grep '^REGION ' "$DEFS" | grep -Ev "$roles" &&
    fail "a region without its role or paradigm"
# Location names: program and tid in full.
for tid in $(awk '{ printf "%x\n", $2 }' "$TIDS"); do
	grep -q "^LOCATION .* Name: \"deadpair t$tid\" " "$DEFS" ||
	    fail "no location \"deadpair t$tid\": $(grep '^LOCATION' "$DEFS")"
done
expect_eq "storm locations" "$N" "$(grep -Ec \
    '^LOCATION .* Name: "storm t[0-9a-f]+" ' "$DEFS")"

# The deadlock: each deadpair task's last record leaves pvm_recv at the
# trace's last time.
last=$(awk '$1 ~ /^(ENTER|LEAVE|MPI_SEND|MPI_RECV)$/ { print $3 }' "$EV" |
    sort -n | tail -n 1)
for tid in $(awk '{ printf "%x\n", $2 }' "$TIDS"); do
	loc=$(awk -v n="\"deadpair t$tid\"" '$1 == "LOCATION" &&
	    $4 " " $5 == n { print $2 }' "$DEFS")
	end=$(awk -v l="$loc" '($1 == "ENTER" || $1 == "LEAVE") && $2 == l' \
	    "$EV" | tail -n 1)
	case $end in
	LEAVE*"Region: \"pvm_recv\""*) ;;
	*) fail "t$tid does not end in pvm_recv: $end" ;;
	esac
	expect_eq "t$tid leaves its deadlocked pvm_recv at the trace's end" \
	    "$last" "$(echo "$end" | awk '{ print $3 }')"
done

# --- ViTE ---------------------------------------------------------------------

# What ViTE 1.2's OTF2 reader prints for a communicator defined as OTF2
# (and otf2-print) wants: it keeps only COMM_LOCATIONS groups, so it
# says so of the COMM_GROUP, and finds no rank through it, then takes
# the rank as the location, which it is here (checked above).
KNOWN_GROUP="^New comm group: group_id $comm_group, name_id[0-9]+\$|\
^	Not yet implemented\$"
KNOWN_RANK='^Warning: cannot find rank [0-9]+ in communicator 0$'
PROGRESS='^export of .* to .* between the beginning of the trace to the end '\
'of the trace\.$|^Loading of the trace : [0-9]+%.*$|^0 errors and 0 '\
'warnings were found during parsing\.$|^Exporting trace to .* \.\.\. Please '\
'Wait *$'
mkdir -m 0700 "$RUN/xdg"
XDG_RUNTIME_DIR=$RUN/xdg QT_QPA_PLATFORM=offscreen timeout 120 \
    vite -e "$RUN/out.svg" "$OUT/traces.otf2" </dev/null \
    >"$RUN/vite.out" 2>&1 || fail "vite failed ($?): $(head -n 5 \
    "$RUN/vite.out")"
tr '\r' '\n' <"$RUN/vite.out" | grep -v '^$' >"$RUN/vite.lines"
other=$(grep -Ev "$KNOWN_GROUP|$KNOWN_RANK|$PROGRESS" "$RUN/vite.lines")
[ -z "$other" ] || fail "vite warns: $(echo "$other" | sort | uniq -c |
    sort -rn | head -n 5)"
expect_eq "ViTE's rank notices (one per message record)" $((2 * MSGS)) \
    "$(grep -Ec "$KNOWN_RANK" "$RUN/vite.lines")"
bad=$(sed -n 's/^Warning: cannot find rank \([0-9]*\) .*/\1/p' \
    "$RUN/vite.lines" | awk -v n="$NLOC" '$1 >= n' | head -n 1)
[ -z "$bad" ] || fail "ViTE was given rank $bad of $NLOC locations"
grep -q '^0 errors and 0 warnings were found during parsing\.$' \
    "$RUN/vite.lines" || fail "vite did not parse the archive cleanly: \
$(head -n 5 "$RUN/vite.lines")"
[ -s "$RUN/out.svg" ] || fail "vite wrote no SVG"
for tid in $(awk '{ printf "%x\n", $2 }' "$TIDS"); do
	grep -q ">deadpair t${tid}_[0-9]*<" "$RUN/out.svg" ||
	    fail "the SVG does not label t$tid in full"
done
expect_eq "storm labels in the SVG" "$N" \
    "$(grep -Ec '>storm t[0-9a-f]+_[0-9]+<' "$RUN/out.svg")"

# --- otf2-vite ----------------------------------------------------------------

# The same run for ViTE's users: the communicator over the COMM_LOCATIONS
# group, which ViTE reads with nothing but its progress, and with the
# same messages (otf2-print prints them, and warns of the group).
VOUT=$RUN/run-vite.otf2
timeout 60 "$PMON" export --format=otf2-vite -i "$REC" -o "$VOUT" \
    </dev/null >"$RUN/export-vite.out" 2>"$RUN/export-vite.err" ||
    fail "pmon export otf2-vite: $(cat "$RUN/export-vite.err")"
otf2-print "$VOUT/traces.otf2" >"$RUN/vite-ev.txt" 2>/dev/null ||
    fail "otf2-print cannot read the otf2-vite archive"
expect_eq "otf2-vite MpiSend records" "$MSGS" \
    "$(grep -c '^MPI_SEND ' "$RUN/vite-ev.txt")"
XDG_RUNTIME_DIR=$RUN/xdg QT_QPA_PLATFORM=offscreen timeout 120 \
    vite -e "$RUN/out-vite.svg" "$VOUT/traces.otf2" </dev/null \
    >"$RUN/vite2.out" 2>&1 || fail "vite failed on otf2-vite ($?): \
$(head -n 5 "$RUN/vite2.out")"
other=$(tr '\r' '\n' <"$RUN/vite2.out" | grep -v '^$' | grep -Ev "$PROGRESS")
[ -z "$other" ] || fail "vite warns on otf2-vite: $(echo "$other" |
    sort | uniq -c | sort -rn | head -n 5)"
expect_eq "storm labels in the otf2-vite SVG" "$N" \
    "$(grep -Ec '>storm t[0-9a-f]+_[0-9]+<' "$RUN/out-vite.svg")"
pm_log "$NLOC locations, $MSGS messages, $(wc -l <"$RUN/vite.lines") \
lines from vite"
pass
