#!/bin/bash
# Protects a tree for hosts added after `pmon start --fanout` (issue
# 20): t_hostadd.sh under `pmon start --fanout 1`.
HOSTADD_FANOUT=1
. "$(dirname "$0")/t_hostadd.sh"
