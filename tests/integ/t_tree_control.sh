#!/bin/bash
# Protects breakpoints through a tree of coordinators (issue 20):
# t_netns_control.sh under `pmon start --fanout 1`, an intermediate on
# each of its 2 hosts.
CONTROL_FANOUT=1
. "$(dirname "$0")/t_netns_control.sh"
