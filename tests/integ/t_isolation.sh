#!/bin/bash
# Protects the isolation of virtual machines: two pvmds with different
# PVM_TMP, each with its own pmon; a program traced in one never appears
# in the other's stream.
. "$(dirname "$0")/lib.sh"
pm_setup
need_pmon
[ -x "$PROGS/msgmix" ] || fail "missing $PROGS/msgmix"

# Machine A runs master1, machine B runs msgmix, at the same time.
vm_a=$RUN/vm
vm_b=$RUN/vmb
mkdir -p "$vm_b"
start_pvmd
PVM_TMP=$vm_b
write_hostfile "$RUN/hostfile.b"
start_pvmd "$RUN/hostfile.b"
[ "$(pvmd_pid_of "$vm_a")" != "$(pvmd_pid_of "$vm_b")" ] ||
    fail "both machines share one pvmd"

for vm in a b; do
	eval "PVM_TMP=\$vm_$vm"
	pmon_start
	eval "coord_$vm=$COORD_PID"
	pmon_trace "$RUN/trace.$vm.json"
	eval "trace_$vm=$TRACE_PID"
done
[ "$coord_a" != "$coord_b" ] || fail "one coordinator serves both machines"

mkdir "$RUN/counts"
PVM_TMP=$vm_a pmon_exec master1 &
pa=$!
PVM_TMP=$vm_b pmon_exec "$PROGS/msgmix" 3 "$RUN/counts" &
pb=$!
wait "$pa" || fail "master1 failed"
wait "$pb" || fail "msgmix failed"

for vm in a b; do
	eval "PVM_TMP=\$vm_$vm COORD_PID=\$coord_$vm"
	eval "pmon_shutdown \$trace_$vm"
	"$STREAMCHECK" -a "$RUN/trace.$vm.json" ||
	    fail "stream violations in machine $vm"
	"$STREAMCHECK" -t "$RUN/trace.$vm.json" >"$RUN/tasks.$vm"
done
PVM_TMP=$vm_a COORD_PID=""

progs_a=$(awk '$4 > 0 { print $2 }' "$RUN/tasks.a" | sort -u | tr '\n' ' ')
progs_b=$(awk '$4 > 0 { print $2 }' "$RUN/tasks.b" | sort -u | tr '\n' ' ')
expect_eq "programs traced in machine A" "master1 slave1 " "$progs_a"
expect_eq "programs traced in machine B" "msgmix " "$progs_b"
expect_eq "msgmix tasks in machine B" 4 \
    "$(awk '$2 == "msgmix" && $4 > 0' "$RUN/tasks.b" | wc -l)"
pass
