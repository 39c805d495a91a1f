#!/bin/bash
# A huge RLIMIT_NOFILE (1,048,576 where the hard limit can be raised,
# else the hard limit) changes nothing: no part loops over fds up to the
# limit, the shim's socket still sits above the program's fds, and the
# session works.  No timing is asserted.
. "$(dirname "$0")/lib.sh"

X=$H/hostile
# Root can raise the hard limit up to fs.nr_open; anyone can raise the
# soft one to the hard one.
want=1048576
[ "$(id -u)" = 0 ] && ulimit -Hn "$want" 2>/dev/null
ulimit -Sn "$(ulimit -Hn)" || bail "cannot raise the soft limit"
lim=$(ulimit -Sn)
echo "# RLIMIT_NOFILE: $lim"
must "make f" as_user touch f
check_eq "the session sees the raised limit" "$(fe sh -c 'ulimit -n' 2>&1)" "$lim"
check_eq "chown and stat work in it" "$(fe sh -c 'chown 3:4 f && stat -c %u:%g f' 2>&1)" "3:4"
must "mkdir cr" as_user mkdir cr
check_eq "close_range and reconnection work in it" "$(fe "$X" closerange cr 2>&1)" ok
must "mkdir d2" as_user mkdir d2
check_eq "dup2 over the shim's fd in it" "$(fe "$X" dup2shim d2 2>&1)" ok
check_eq "nested launchers work in it" "$(fe "$FE" -- id -u 2>&1)" 0
done_testing
