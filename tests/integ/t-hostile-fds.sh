#!/bin/bash
# Programs that close every fd (a loop to 1023, close_range, closefrom) or
# dup2/dup3 a file of their own over the shim's socket: the shim never
# writes into the program's file, notices the fd is no longer its socket,
# and connects again.
FE_OWN_PROGRAMS=1 # the build's helpers alone
. "$(dirname "$0")/lib.sh"

X=$H/hostile
for c in closeloop closerange closefrom dup2shim dup3shim; do
	must "mkdir $c" as_user mkdir -p "$c"
	check_eq "$c: the shim reconnects, records survive" "$(fe "$X" $c "$c" 2>&1)" ok
done
check_eq "after dup2 over the shim's fd the program's file is untouched" \
	"$(cat dup2shim/precious)" "the program's own data"
check_ne "natively the helper fails (the test can fail)" \
	"$(as_user "$X" closefrom closefrom 2>&1)" ok
done_testing
