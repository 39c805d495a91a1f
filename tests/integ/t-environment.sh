#!/bin/bash
# The session's environment: an LD_PRELOAD already set is kept (ours is
# added); a session starts under ulimit -n 1048576 (no loop over every
# possible fd: not timed here, speed belongs to bench/); programs that
# clear their environment or drop LD_PRELOAD stay in the session.
. "$(dirname "$0")/lib.sh"

libdir=$(dirname "$(ldd /bin/true | awk '/libc\.so/ { print $3 }')")
other=$libdir/libutil.so.1
[ -e "$other" ] || other=$libdir/libdl.so.2
[ -e "$other" ] || bail "no harmless library to preload in $libdir"

out=$(LD_PRELOAD=$other fe sh -c 'echo "$LD_PRELOAD"; id -u; cat /proc/self/maps' 2>&1)
check_match "a preset LD_PRELOAD is kept" "$(sed -n 1p <<<"$out")" "$other"
check_match "and libfakeenv.so is added to it" "$(sed -n 1p <<<"$out")" "libfakeenv\.so"
check_eq "the session fakes with a preset LD_PRELOAD" "$(sed -n 2p <<<"$out")" 0
check_match "both libraries are loaded in the command" \
	"$(grep -c -e "$(basename "$other")" -e libfakeenv <<<"$out" | tr -d ' ')" "^[1-9]"
check_eq "the preset library is mapped" "$(grep -c "$(basename "$other")" <<<"$out" | sed 's/^[1-9][0-9]*$/yes/')" yes

# ulimit -n 1048576, raised before dropping privilege; where even root may
# not raise it (no CAP_SYS_RESOURCE in a container), the hard limit.
if (ulimit -n 1048576) 2>/dev/null; then lim=1048576; else lim=$(ulimit -Hn); fi
out=$(ulimit -n "$lim" && as_user sh -c 'ulimit -n; "$FE" -- sh -c "id -u; touch u; chown 1:2 u; stat -c %u:%g u"' 2>&1)
check_eq "a session under ulimit -n $lim starts and fakes" "$out" "$lim
0
1:2"
[ "$lim" = 1048576 ] || echo "# ulimit -n 1048576 not allowed here: tested with the hard limit $lim"

# env -i and LD_PRELOAD= drop the session's variables: the exec wrappers
# must restore them.
check_eq "env -i keeps the command in the session" "$(fe env -i /usr/bin/id -u 2>&1)" 0
check_eq "env -u LD_PRELOAD keeps the command in the session" \
	"$(fe env -u LD_PRELOAD /usr/bin/id -u 2>&1)" 0
check_eq "a chown after env -i is still faked" \
	"$(fe sh -c 'touch ei; env -i /bin/chown 4:5 ei; stat -c %u:%g ei' 2>&1)" "4:5"
done_testing
