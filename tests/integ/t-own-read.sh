#!/bin/bash
# A process reads back its own changes without waiting for the daemon:
# a stat whose bucket holds only this process's changes still in its
# ring lays them over the shared table (include/fakeenv/rec.h).  Each
# chown is read back right after it, with the right owner; strace shows
# that those stats do not wait (a wait for the daemon is a sched_yield
# loop, then a GET).  That others' changes still come in order is
# t-change-order's (order many, pipe, thread); fakeenv/rec.h's rules
# against the daemon's are unit/test_overlay's.
. "$(dirname "$0")/lib.sh"

must "make 1,000 files" as_user sh -c '
	mkdir d && cd d && seq -f "f%04g" 1 1000 | xargs touch'

check_eq "1,000 chowns, each read back at once by stat" \
	"$(fe "$H/own" many 7 8 1 d/f* 2>&1)" "ok"
check_eq "and again to other owners, chown and stat in turn" \
	"$(fe sh -c '"$0" many 9 10 2 d/f* && "$0" many 0 0 1 d/f*' "$H/own" 2>&1)" "ok
ok"
check_eq "a later process sees the last owner" \
	"$(fe "$H/statmany" 1 d/f* 2>&1)" "1000 0:0"

# --seccomp-bpf: only the calls traced stop the program, so that the
# daemon is not given the time to take each change before its stat.
if [ "$FAKEENV_VALGRIND" = 1 ]; then
	ok "waits: # SKIP the daemon runs under valgrind"
elif command -v strace >/dev/null &&
	as_user strace --seccomp-bpf -f -o /dev/null true 2>/dev/null; then
	out=$(fe sh -c 'strace --seccomp-bpf -f -qq \
		-e trace=sched_yield,sendmsg -o trace "$0" many 5 6 1 d/f* &&
		echo "waits $(grep -c sched_yield trace)"' "$H/own" 2>&1)
	waits=$(pick waits <<<"$out")
	# Waiting, each stat yields a few times: 1,883-2,386 for these
	# 1,000.  Without waiting, a few of the first stats (before the
	# ring) and one where the daemon took the change mid-read.
	check_cmd "1,000 stats after their own chown: few waits ($waits)" \
		test "${waits:-99999}" -lt 250
else
	ok "waits: # SKIP strace --seccomp-bpf cannot trace here"
fi
done_testing
