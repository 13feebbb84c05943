#!/bin/bash
# Protects doc/events.md's table of what pmon records of each libpvm3
# entry point (issue 17: none may be silently missing): every name of
# PMON_CALLS in common/pmon_calls.h is in it.
. "$(dirname "$0")/lib.sh"
pm_setup
root=$(cd "$(dirname "$0")/../.." && pwd)
names=$(sed -n '/define PMON_CALLS/,/^$/p' "$root/common/pmon_calls.h" |
    grep -o 'X([a-z_]*)' | sed 's/X(\(.*\))/pvm_\1/')
[ "$(echo "$names" | wc -l)" -gt 100 ] ||
    fail "could not read PMON_CALLS from common/pmon_calls.h"
missing=$(for n in $names; do
	grep -q "\`$n\`" "$root/doc/events.md" || echo "$n"
done)
[ -z "$missing" ] || fail "doc/events.md does not say what is recorded of: \
$(echo $missing)"
pass
