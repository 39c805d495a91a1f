#!/bin/bash
# 16 threads chowning, chmodding and statting their own and shared files
# at once, and a signal handler doing lstat+chown at 20 kHz while the
# interrupted code is inside a wrapper: no deadlock (the runner's timeout
# bounds it), no interleaved message (the daemon would drop the
# connection), every result exact.
. "$(dirname "$0")/lib.sh"

X=$H/hostile
must "mkdir th" as_user mkdir th
check_eq "16 threads: every chown, chmod and stat exact" "$(fe "$X" threads th 2>&1)" ok
must "mkdir sg" as_user mkdir sg
check_eq "a handler's lstat+chown inside wrappers: exact, no deadlock" \
	"$(fe "$X" signals sg 2>&1)" ok
check_eq "after the signal storm the main loop's last chown stands" \
	"$(fe sh -c '"$0" signals sg >/dev/null && stat -c %u sg/m' "$X" 2>&1)" "$((10 + 2999 % 7))"
check_ne "natively the threads fail (the test can fail)" "$(as_user "$X" threads th 2>&1)" ok
done_testing
