#!/bin/bash
# coord_stages.sh: the coordinator's CPU by stage, from perf samples
# taken with call graphs (perf record --call-graph dwarf -p COORD_PID).
#
#	bash bench/coord_stages.sh PERF_DATA [NS_PER_EVENT]
#
# Each sample goes to the innermost stage on its call chain, from the
# leaf up: a malloc or a page fault inside the state model counts for
# the state model.  The stages and the functions that open them:
#
#   tool output  coord_tools_send_event, coord_frame_event,
#                coord_tools_send, coord_tools_send_problem, and the
#                writes to the tools' sockets (evbuffer_write_atmost
#                reached from a tool's bufferevent)
#   state        state_event, state_task_gone, state_check
#   order        order_add, order_run, order_synced, order_release_all
#                (the causal order, clock correction and release)
#   unpack       unpack_record, coord_parse_task_packed (what is not in
#                an inner stage: the order is reached from here)
#   acks         coord_ack_released, coord_ack_done, the ACK timer
#   input        coord_conn_read, coord_agent_read, inflate, the reads
#                from the agents' sockets (bufferevent reads)
#   loop         what is left: the event loop, epoll, timers
#
# Prints one line per stage: its share of the samples and, with
# NS_PER_EVENT (the coordinator's CPU per event measured without perf),
# its ns per event.  perf itself slows what it samples; the shares are
# what to compare.
set -e
data=$1 ns=${2:-0}
[ -r "$data" ] || { echo "usage: coord_stages.sh PERF_DATA [NS_PER_EVENT]" >&2; exit 2; }

perf script -i "$data" -F ip,sym 2>/dev/null | awk -v ns="$ns" '
function stage_of(sym) {
	if (sym ~ /^(coord_tools_send_event|coord_frame_event|coord_tools_send|coord_tools_send_problem|coord_tools_send_gone)$/)
		return "tool output"
	if (sym ~ /^(state_event|state_task_gone|state_check|state_task)$/)
		return "state"
	if (sym ~ /^(order_add|order_run|order_synced|order_release_all|order_task_end)$/)
		return "order"
	if (sym ~ /^(unpack_record|coord_parse_task_packed|coord_parse_task_records)$/)
		return "unpack"
	if (sym ~ /^(coord_ack_released|coord_ack_done|ack_timer_cb|ack_send)$/)
		return "acks"
	if (sym ~ /^(coord_conn_read|coord_agent_read|zs_in_|inflate|bufferevent_readcb|evbuffer_read)/)
		return "input"
	if (sym ~ /^evbuffer_write/)
		return "write"
	return ""
}
/^$/ { if (n > 0) count(); n = 0; next }
{ $1 = ""; sub(/^ /, ""); sub(/ \(inlined\)$/, ""); chain[n++] = $0 }
function count(   i, s, w) {
	s = ""
	w = 0
	for (i = 0; i < n && s == ""; i++) {
		s = stage_of(chain[i])
		if (s == "write") { w = 1; s = "" }
	}
	if (s == "" && w)
		s = "tool output"	# the agents get only small frames
	if (s == "")
		s = "loop"
	hits[s]++
	total++
}
END {
	if (n > 0) count()
	split("unpack order state tool output acks input loop", order_, " ")
	for (k = 1; k in order_; k++) {
		s = order_[k]
		if (s == "tool") { s = "tool output"; k++ }
		printf "stage %-12s %5.1f%%", s, 100 * hits[s] / total
		if (ns > 0)
			printf " %6.0f ns/event", ns * hits[s] / total
		printf "\n"
	}
}'
