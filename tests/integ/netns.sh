# A virtual machine of several hosts on this one machine, built from Linux
# network namespaces (sourced after lib.sh, bash).
#
#	netns_setup H		H hosts named ${NS_PREFIX}h1..hH; host 1 is
#				the master.  SKIPs the test when namespaces
#				are not permitted.
#	on_host I CMD...	runs CMD on host I (its namespace, hostname
#				and PVM_TMP)
#	netns_host_env I NAME VALUE
#				NAME=VALUE in the environment of host I's
#				pvmd, hence of every task it spawns (pmon's
#				agent among them); before netns_start_pvmd
#	netns_start_pvmd	the master pvmd on host 1, which adds the
#				others through $NS_RSH; sets PVMD_PID
#
# Layout: a dedicated switch namespace holds a bridge; every host
# namespace has one veth (eth0) into it, with an address from
# 198.18.0.0/24 (a benchmarking range, never routed).  The root namespace
# is never touched.  /etc/netns/<ns>/hosts maps every host name to its
# 198.18.0.x address (the master's name must not resolve to 127.x: pvmd
# would kill itself when a host is added).  Every host has its own
# PVM_TMP below $RUN: a shared one attaches tasks to the wrong pvmd.
# The cleanup trap deletes the namespaces and their /etc/netns dirs.

NS_HOSTS=""
NS_SWITCH=""

# A fresh lowercase prefix: host names must be valid hostnames, and
# interface names stay short.
netns_prefix() {
	local hex
	hex=$(od -An -tx1 -N3 /dev/urandom | tr -d ' \n')
	NS_PREFIX=pm$hex
	! ip netns list 2>/dev/null | grep -q "^$NS_PREFIX"
}

ns_name() { echo "${NS_PREFIX}h$1"; }
ns_addr() { echo "198.18.0.$((10 + $1))"; }
host_tmp() { echo "$RUN/h$1"; }

netns_add() {
	local err
	err=$(ip netns add "$1" 2>&1) ||
	    skip "network namespaces not permitted: $err"
	[ -n "$PMON_TEST_LEDGER" ] && echo "netns $1" >>"$PMON_TEST_LEDGER"
	NS_ALL="$NS_ALL $1"
	ip -n "$1" link set lo up || fail "lo up in $1"
}

netns_setup() {
	local n=$1 i ns
	wait_for 2 netns_prefix || fail "no free namespace prefix"
	PM_HOOKS="$PM_HOOKS netns_cleanup"
	NS_SWITCH=${NS_PREFIX}sw
	netns_add "$NS_SWITCH"
	ip -n "$NS_SWITCH" link add br0 type bridge &&
	    ip -n "$NS_SWITCH" link set br0 up || fail "bridge"
	for i in $(seq 1 "$n"); do
		ns=$(ns_name "$i")
		netns_add "$ns"
		NS_HOSTS="$NS_HOSTS $ns"
		netns_link "$i" "$ns"
		mkdir -p "$(host_tmp "$i")"
		netns_on_script "$i"
	done
	for ns in $NS_HOSTS; do netns_hosts_file "$ns"; done
	netns_rsh_script
	write_hostfile "$RUN/hostfile" $NS_HOSTS
}

# One veth pair, created inside the switch namespace; one end moves into
# the host namespace and becomes its eth0.
netns_link() {
	local i=$1 ns=$2
	ip -n "$NS_SWITCH" link add "h$i" type veth peer name "p$i" &&
	    ip -n "$NS_SWITCH" link set "p$i" master br0 &&
	    ip -n "$NS_SWITCH" link set "p$i" up &&
	    ip -n "$NS_SWITCH" link set "h$i" netns "$ns" &&
	    ip -n "$ns" link set "h$i" name eth0 &&
	    ip -n "$ns" addr add "$(ns_addr "$i")/24" dev eth0 &&
	    ip -n "$ns" link set eth0 up || fail "veth for $ns"
}

netns_hosts_file() {
	local ns=$1 i=1 h
	[ -n "$PMON_TEST_LEDGER" ] &&
	    echo "etc /etc/netns/$ns" >>"$PMON_TEST_LEDGER"
	mkdir -p "/etc/netns/$ns" || fail "mkdir /etc/netns/$ns"
	{
		echo "127.0.0.1 localhost"
		for h in $NS_HOSTS; do
			echo "$(ns_addr "$i") $h"
			i=$((i + 1))
		done
	} >"/etc/netns/$ns/hosts"
}

# pvmd adds a host by running "$PVM_RSH HOST [-l USER] 'CMD'" with the
# slave pvmd's stdin and stdout on the pipe.  The script runs CMD in the
# host's namespace, with its hostname and PVM_TMP.
netns_rsh_script() {
	NS_RSH=$RUN/rsh
	sed -e "s|@PREFIX@|$NS_PREFIX|g" -e "s|@RUN@|$RUN|g" >"$NS_RSH" <<'EOF'
#!/bin/sh
# PVM_RSH of one test run: SCRIPT HOST [-l USER] "CMD"
host=$1
shift
[ "$1" = -l ] && shift 2
case $host in
@PREFIX@h[0-9]*) ;;
*) echo "rsh: not a host of this run: $host" >&2; exit 1 ;;
esac
export PVM_TMP=@RUN@/${host#@PREFIX@}
# The host's own environment (netns_host_env), if the test gave it one.
[ -f "$PVM_TMP.env" ] && . "$PVM_TMP.env"
exec ip netns exec "$host" unshare --uts \
    sh -c 'hostname "$0" && exec sh -c "$1"' "$host" "$1"
EOF
	chmod 755 "$NS_RSH"
}

# on_host I CMD...: CMD runs in host I's namespace as host I.  Each host
# has a script $RUN/onI doing this with exec all the way down, so the pid
# of a background `$RUN/onI CMD &` is the pid of CMD.
on_host() {
	local i=$1
	shift
	"$RUN/on$i" "$@"
}

netns_on_script() {
	local i=$1 ns
	ns=$(ns_name "$i")
	cat >"$RUN/on$i" <<EOF
#!/bin/sh
export PVM_TMP=$(host_tmp "$i")
exec ip netns exec $ns unshare --uts sh -c 'hostname "\$0" && exec "\$@"' \
    $ns "\$@"
EOF
	chmod 755 "$RUN/on$i"
}

# netns_host_env I NAME VALUE: pvmd passes its environment to the tasks
# it spawns, so this is how a variable reaches one host's tasks and
# agent.  The slave pvmds are started by $NS_RSH and the master by
# netns_start_pvmd; both read $(host_tmp I).env.
netns_host_env() {
	local i=$1 name=$2 value=$3
	case $name in
	'' | [0-9]* | *[!A-Za-z0-9_]*) fail "netns_host_env: bad name $name" ;;
	esac
	case $value in
	*"'"*) fail "netns_host_env: a quote in the value of $name" ;;
	esac
	echo "export $name='$value'" >>"$(host_tmp "$i").env"
}

netns_start_pvmd() {
	local uid hf=$RUN/hostfile
	uid=$(id -u)
	export PVM_TMP
	PVM_TMP=$(host_tmp 1)
	PVM_RSH=$NS_RSH setsid ip netns exec "$(ns_name 1)" unshare --uts \
	    sh -c '[ -f "$2" ] && . "$2"; hostname "$0" && exec pvmd "$1"' \
	    "$(ns_name 1)" "$hf" "$PVM_TMP.env" \
	    </dev/null >"$RUN/pvmd.out" 2>&1 &
	PVMD_PID=$!
	PM_PVMD_PIDS="$PM_PVMD_PIDS $PVMD_PID"
	wait_for 10 test -s "$PVM_TMP/pvmd.$uid" ||
	    fail "pvmd did not start: $(cat "$RUN/pvmd.out")"
	[ "$(pvmd_pid_of "$PVM_TMP")" = "$PVMD_PID" ] ||
	    fail "pvmd.$uid does not name pvmd $PVMD_PID"
}

# netns_wait_hosts N: the console of host 1 lists N hosts.
netns_wait_hosts() {
	wait_for 20 eval "on_host 1 sh -c 'printf \"conf\\nquit\\n\" |
	    timeout 10 pvm 2>&1' | grep -q '^$1 hosts*,'" ||
	    fail "the machine did not reach $1 hosts: $(on_host 1 sh -c \
	    'printf "conf\nquit\n" | timeout 10 pvm 2>&1')"
}

# netns_wait_hosts_quiet N: as netns_wait_hosts, but the console, a PVM
# task that takes a tid on host 1, runs once the other hosts' pvmds
# logged that they are ready, not in a loop: a machine started this way
# gives a program the same tids every time, as a rerun at a stopline
# needs.  Their logs must be gone before the machine starts.
netns_wait_hosts_quiet() {
	_i=2
	while [ "$_i" -le "$1" ]; do
		wait_for 20 grep -qs ' ready ' \
		    "$(host_tmp "$_i")/pvml.$(id -u)" ||
		    fail "the pvmd of host $_i never got ready"
		_i=$((_i + 1))
	done
	sleep 0.5
	netns_wait_hosts "$1"
}

netns_cleanup() {
	local ns p
	for ns in $NS_ALL; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			pm_log "killing $p left in $ns"
			kill -KILL "$p" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	rmdir /etc/netns 2>/dev/null	# only if no other run uses it
	return 0
}

# netns_wait_agents N: an agent socket appears in each host's PVM_TMP.
netns_wait_agents() {
	_i=1
	while [ "$_i" -le "$1" ]; do
		wait_for 10 test -S "$(host_tmp "$_i")/pmon-agent.$(id -u)" ||
		    fail "no agent socket on host $_i"
		_i=$((_i + 1))
	done
}

# netns_pmon_up N [ARGS]: an N-host virtual machine of namespaces, pmon
# started on host 1 (PM_ON runs a command there; ARGS go to pmon start)
# and an agent on every host.
netns_pmon_up() {
	local n=$1
	shift
	netns_setup "$n"
	netns_start_pvmd
	netns_wait_hosts "$n"
	PM_ON="$RUN/on1"
	pmon_start "$@"
	netns_wait_agents "$n"
}
