#!/bin/bash
# Protects the stream checker the other tests rely on: it accepts a
# causal stream in the format of doc/events.md, counts its calls, and
# rejects each kind of violation (so a broken pmon cannot pass).
. "$(dirname "$0")/lib.sh"
pm_setup
[ -x "$STREAMCHECK" ] || fail "missing $STREAMCHECK"

# master 262145 spawns 262146, mcasts tag 0 to it; the slave receives it.
good=$RUN/good.json
cat >"$good" <<'EOF'
{"type":"task","tid":262145,"host":"h","program":"/usr/bin/master1","pid":1,"parent":0,"spawn_seq":0}
{"id":"262145:1","tid":262145,"host":"h","program":"master1","seq":1,"t":1,"call":"pvm_spawn","phase":"begin"}
{"type":"task","tid":262146,"host":"h","program":"slave1","pid":2,"parent":262145,"spawn_seq":1}
{"id":"262146:1","tid":262146,"host":"h","program":"slave1","seq":1,"t":1,"call":"pvm_recv","phase":"begin","src":-1,"dst":262146,"tag":0,"ctx":0,"bytes":0}
{"id":"262145:2","tid":262145,"host":"h","program":"master1","seq":2,"t":2,"call":"pvm_spawn","phase":"end","rc":1,"children":[262146]}
{"id":"262145:3","tid":262145,"host":"h","program":"master1","seq":3,"t":3,"call":"pvm_mcast","phase":"begin","src":262145,"dst":[262146],"tag":0,"ctx":0,"bytes":4}
{"id":"262145:4","tid":262145,"host":"h","program":"master1","seq":4,"t":4,"call":"pvm_mcast","phase":"end","rc":0,"src":262145,"dst":[262146],"tag":0,"ctx":0,"bytes":4}
{"id":"262146:2","tid":262146,"host":"h","program":"slave1","seq":2,"t":5,"call":"pvm_recv","phase":"end","rc":1,"src":262145,"dst":262146,"tag":0,"ctx":0,"bytes":4,"match":"262145:3","msg":true}
{"id":"262146:3","tid":262146,"host":"h","program":"slave1","seq":3,"t":6,"call":"pvm_exit","phase":"begin"}
EOF
"$STREAMCHECK" -a "$good" || fail "a good stream was rejected"
"$STREAMCHECK" -c "$good" >"$RUN/counts" || fail "counts of a good stream"
expect_eq "pvm_recv ends" 1 "$(count_of slave1 pvm_recv end "$RUN/counts")"
expect_eq "pvm_mcast begins" 1 \
    "$(count_of master1 pvm_mcast begin "$RUN/counts")"

# Each edit of the good stream must be caught, with the right message.
bad() {
	local why=$1 msg=$2 opts=$3 n
	shift 3
	if [ "$1" = --order ]; then	# the good lines in this order
		shift
		for n in "$@"; do sed -n "${n}p" "$good"; done
	else
		sed "$@" "$good"
	fi >"$RUN/bad.json"
	if "$STREAMCHECK" $opts "$RUN/bad.json" 2>"$RUN/bad.err"; then
		fail "streamcheck accepted: $why"
	fi
	grep -q -- "$msg" "$RUN/bad.err" ||
	    fail "$why: expected \"$msg\", got: $(cat "$RUN/bad.err")"
	[ -z "$SC_VERBOSE" ] || { echo "== $why"; cat "$RUN/bad.err"; }
}
bad "match names a non-send" "is not a send" "" \
    -e 's/"match":"262145:3"/"match":"262145:4"/'
bad "match of an unknown event" "has not come before it" "" \
    -e 's/"match":"262145:3"/"match":"9:9"/'
bad "receive end without match" "without match" "" \
    -e 's/,"match":"262145:3"//'
bad "unmatched receive" "released unmatched" "" \
    -e 's/"match":"262145:3"/"unmatched":true/'
bad "tag differs from the send" "matched send has tag" "" \
    -e '8s/"tag":0/"tag":5/'
bad "src differs from the sender" "matched send is from" "" \
    -e '8s/"src":262145/"src":7/'
bad "send not to this task" "not sent to this task" "" \
    -e '6s/"dst":\[262146\]/"dst":[262147]/'
bad "receive before its send" "has not come before it" "" \
    --order 1 2 3 4 5 8 6 7 9
bad "duplicate id" "duplicate event id" "" \
    -e '9s/"262146:3"/"262146:2"/' -e '9s/"seq":3/"seq":2/'
bad "id not TID:SEQ" "is not TID:SEQ" "" -e '9s/"262146:3"/"262146:9"/'
bad "seq gap" "seq follows 2" "" \
    -e '9s/"262146:3"/"262146:4"/' -e '9s/"seq":3/"seq":4/'
bad "end of another call" "ends, but pvm_mytid was open" "" \
    -e '4s/pvm_recv/pvm_mytid/'
bad "never-ending call" "began and never ended" "" \
    -e '9s/pvm_exit/pvm_barrier/'
bad "child before its parent's spawn" "before its parent's spawn" "" \
    --order 1 3 4 2 5 6 7 8 9
bad "send never matched (-a)" "never matched" "-a" \
    -e '4s/pvm_recv/pvm_mytid/' -e '8s/pvm_recv/pvm_mytid/'
bad "lost marker" "records lost" "" \
    -e '9s/"call":"pvm_exit","phase":"begin"/"call":"lost","count":3/'
bad "not JSON" "not a JSON object" "" -e '$a garbage'
sed 's/"match":"262145:3"/"unmatched":true/' "$good" >"$RUN/u.json"
"$STREAMCHECK" -u "$RUN/u.json" || fail "-u does not allow unmatched"

# Groups (-g), corrected times (-T), raw times going backwards (-B).
# Workers 262146 (host h1) and 524289 (host h2, whose clock is 5000 ns
# early: its raw t lags its tc) join group g; the master 262145 checks
# its size, broadcasts to both (line 8), both pass a barrier of count 2,
# 262146 leaves, the master broadcasts to 524289 alone (line 18), which
# leaves; the group is gone (gsize: PvmNoGroup).  Line n has tc
# 1000000 + 100 n.
good=$RUN/groups.json
cat >"$good" <<'EOF'
{"id":"262146:1","tid":262146,"host":"h1","program":"grw","seq":1,"t":1000100,"tc":1000100,"call":"pvm_joingroup","phase":"begin","group":"g"}
{"id":"262146:2","tid":262146,"host":"h1","program":"grw","seq":2,"t":1000200,"tc":1000200,"call":"pvm_joingroup","phase":"end","rc":0,"group":"g"}
{"id":"524289:1","tid":524289,"host":"h2","program":"grw","seq":1,"t":995300,"tc":1000300,"call":"pvm_joingroup","phase":"begin","group":"g"}
{"id":"524289:2","tid":524289,"host":"h2","program":"grw","seq":2,"t":995400,"tc":1000400,"call":"pvm_joingroup","phase":"end","rc":1,"group":"g"}
{"id":"262145:1","tid":262145,"host":"h1","program":"grm","seq":1,"t":1000500,"tc":1000500,"call":"pvm_gsize","phase":"begin","group":"g"}
{"id":"262145:2","tid":262145,"host":"h1","program":"grm","seq":2,"t":1000600,"tc":1000600,"call":"pvm_gsize","phase":"end","rc":2,"group":"g"}
{"id":"262145:3","tid":262145,"host":"h1","program":"grm","seq":3,"t":1000700,"tc":1000700,"call":"pvm_bcast","phase":"begin","src":262145,"dst":[],"tag":5,"ctx":0,"bytes":4,"group":"g"}
{"id":"262145:4","tid":262145,"host":"h1","program":"grm","seq":4,"t":1000800,"tc":1000800,"call":"pvm_bcast","phase":"end","rc":0,"src":262145,"dst":[262146,524289],"tag":5,"ctx":0,"bytes":4,"group":"g"}
{"id":"262146:3","tid":262146,"host":"h1","program":"grw","seq":3,"t":1000900,"tc":1000900,"call":"pvm_barrier","phase":"begin","group":"g","inst":2}
{"id":"524289:3","tid":524289,"host":"h2","program":"grw","seq":3,"t":996000,"tc":1001000,"call":"pvm_barrier","phase":"begin","group":"g","inst":2}
{"id":"262146:4","tid":262146,"host":"h1","program":"grw","seq":4,"t":1001100,"tc":1001100,"call":"pvm_barrier","phase":"end","rc":0,"group":"g","inst":2}
{"id":"524289:4","tid":524289,"host":"h2","program":"grw","seq":4,"t":996200,"tc":1001200,"call":"pvm_barrier","phase":"end","rc":0,"group":"g","inst":2}
{"id":"262146:5","tid":262146,"host":"h1","program":"grw","seq":5,"t":1001300,"tc":1001300,"call":"pvm_recv","phase":"begin","src":-1,"dst":262146,"tag":5,"ctx":0,"bytes":-1}
{"id":"262146:6","tid":262146,"host":"h1","program":"grw","seq":6,"t":1001400,"tc":1001400,"call":"pvm_recv","phase":"end","rc":1,"src":262145,"dst":262146,"tag":5,"ctx":0,"bytes":4,"match":"262145:4","msg":true}
{"id":"262146:7","tid":262146,"host":"h1","program":"grw","seq":7,"t":1001500,"tc":1001500,"call":"pvm_lvgroup","phase":"begin","group":"g"}
{"id":"262146:8","tid":262146,"host":"h1","program":"grw","seq":8,"t":1001600,"tc":1001600,"call":"pvm_lvgroup","phase":"end","rc":0,"group":"g"}
{"id":"262145:5","tid":262145,"host":"h1","program":"grm","seq":5,"t":1001700,"tc":1001700,"call":"pvm_bcast","phase":"begin","src":262145,"dst":[],"tag":5,"ctx":0,"bytes":4,"group":"g"}
{"id":"262145:6","tid":262145,"host":"h1","program":"grm","seq":6,"t":1001800,"tc":1001800,"call":"pvm_bcast","phase":"end","rc":0,"src":262145,"dst":[524289],"tag":5,"ctx":0,"bytes":4,"group":"g"}
{"id":"524289:5","tid":524289,"host":"h2","program":"grw","seq":5,"t":996900,"tc":1001900,"call":"pvm_recv","phase":"begin","src":-1,"dst":524289,"tag":5,"ctx":0,"bytes":-1}
{"id":"524289:6","tid":524289,"host":"h2","program":"grw","seq":6,"t":997000,"tc":1002000,"call":"pvm_recv","phase":"end","rc":1,"src":262145,"dst":524289,"tag":5,"ctx":0,"bytes":4,"match":"262145:4","msg":true}
{"id":"524289:7","tid":524289,"host":"h2","program":"grw","seq":7,"t":997100,"tc":1002100,"call":"pvm_recv","phase":"begin","src":-1,"dst":524289,"tag":5,"ctx":0,"bytes":-1}
{"id":"524289:8","tid":524289,"host":"h2","program":"grw","seq":8,"t":997200,"tc":1002200,"call":"pvm_recv","phase":"end","rc":1,"src":262145,"dst":524289,"tag":5,"ctx":0,"bytes":4,"match":"262145:6","msg":true}
{"id":"524289:9","tid":524289,"host":"h2","program":"grw","seq":9,"t":997300,"tc":1002300,"call":"pvm_lvgroup","phase":"begin","group":"g"}
{"id":"524289:10","tid":524289,"host":"h2","program":"grw","seq":10,"t":997400,"tc":1002400,"call":"pvm_lvgroup","phase":"end","rc":0,"group":"g"}
{"id":"262145:7","tid":262145,"host":"h1","program":"grm","seq":7,"t":1002500,"tc":1002500,"call":"pvm_gsize","phase":"begin","group":"g"}
{"id":"262145:8","tid":262145,"host":"h1","program":"grm","seq":8,"t":1002600,"tc":1002600,"call":"pvm_gsize","phase":"end","rc":-19,"group":"g"}
{"id":"262145:9","tid":262145,"host":"h1","program":"grm","seq":9,"t":1002700,"tc":1002700,"call":"pvm_exit","phase":"begin"}
{"id":"262146:9","tid":262146,"host":"h1","program":"grw","seq":9,"t":1002800,"tc":1002800,"call":"pvm_exit","phase":"begin"}
{"id":"524289:11","tid":524289,"host":"h2","program":"grw","seq":11,"t":997900,"tc":1002900,"call":"pvm_exit","phase":"begin"}
EOF
"$STREAMCHECK" -a -g -T -B 2 "$good" 2>"$RUN/g.err" ||
    fail "a good group stream was rejected: $(cat "$RUN/g.err")"
grep -q "2 of 3 messages go backwards in t" "$RUN/g.err" ||
    fail "-B does not count backward messages: $(cat "$RUN/g.err")"
bad "bcast missed a member" "bcast missed 80001, a member of g" -g \
    -e '8s/"dst":\[262146,524289\]/"dst":[262146]/'
bad "bcast to a task that left" "bcast to 40002, not a member of g" -g \
    -e '18s/"dst":\[524289\]/"dst":[524289,262146]/'
bad "join shown after the bcast that reached it (VISTOP Fig. 3)" \
    "bcast to 80001, not a member of g" -g --order 1 2 5 6 7 8 3 4 \
    $(seq 9 29)
bad "gsize differs from the members" "gsize g returned 3, the group has 2" \
    -g -e '6s/"rc":2/"rc":3/'
bad "gsize found no group with members" "gsize g found no group" -g \
    -e '6s/"rc":2/"rc":-19/'
bad "gsize of a group that is gone" "gsize g returned 1, the group has 0" \
    -g -e '26s/"rc":-19/"rc":1/'
bad "barrier exit before its episode's entries" \
    "barrier g (count 2) ends after 1 entries, its episode has 2" -g \
    --order $(seq 1 9) 11 10 $(seq 12 29)
bad "inconsistent event" "released inconsistent" -g \
    -e '8s/}$/,"inconsistent":true}/'
bad "join by a member" "joins g, of which it is a member" -g \
    -e '15,16s/pvm_lvgroup/pvm_joingroup/'
bad "leave by a non-member" "leaves g, of which it is not a member" -g \
    -e '1,2s/pvm_joingroup/pvm_lvgroup/'
# A barrier without "inst" (count -1) waits for the whole group, here 2.
sed -e 's/,"inst":2//' "$good" >"$RUN/noinst.json"
"$STREAMCHECK" -g "$RUN/noinst.json" || fail "-g: barriers without inst"
good=$RUN/noinst.json
bad "barrier without inst, exit before the group's entries" \
    "barrier g (count 2) ends after 1 entries" -g \
    --order $(seq 1 9) 11 10 $(seq 12 29)
good=$RUN/groups.json
bad "group call without a group" "pvm_gsize without a group" -g \
    -e '6s/,"group":"g"//'
bad "tc goes back in a task" "before the task's previous tc" -T \
    -e '11s/"tc":1001100/"tc":1000850/'
bad "receive tc before its send's tc" \
    "tc 1002200 is before the tc 1002250 of its send 40001:6" -T \
    -e '18s/"tc":1001800/"tc":1002250/'
bad "event without tc" "40001:1: no tc" -T -e '5s/,"tc":1000500//'
bad "too few messages backwards in t" \
    "only 2 messages go backwards in t, expected at least 3" "-B 3" -e ''
# A member that exits without leaving stays one until pvmgs notices: a
# bcast may leave it out and a gsize may count it or not; a task_end
# line ends its memberships.
sed -e '23s/"pvm_lvgroup","phase":"begin","group":"g"/"pvm_exit","phase":"begin"/' \
    -e '24d' -e '29d' "$good" >"$RUN/exit.json"
"$STREAMCHECK" -g "$RUN/exit.json" || fail "-g: an exiting member"
sed -i '26s/"rc":-19/"rc":1/' "$RUN/exit.json"
"$STREAMCHECK" -g "$RUN/exit.json" || fail "-g: an exiting member counted"
sed -e '23s/"pvm_lvgroup","phase":"begin","group":"g"/"pvm_exit","phase":"begin"/' \
    -e '24s/.*/{"type":"task_end","tid":524289}/' -e '29d' \
    -e '26s/"rc":-19/"rc":1/' "$good" >"$RUN/end.json"
bad_end=$("$STREAMCHECK" -g "$RUN/end.json" 2>&1) &&
    fail "-g: a task_end line does not end memberships"
echo "$bad_end" | grep -q "gsize g returned 1, the group has 0" ||
    fail "-g task_end: $bad_end"
pass
