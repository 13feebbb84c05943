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
pass
