#!/bin/bash
# Stray signals to the daemon during a session (a terminal's SIGWINCH and
# SIGHUP, a careless kill's SIGUSR2 or SIGALRM, SIGPIPE) do not kill it:
# the session's records and its next calls are unaffected.
. "$(dirname "$0")/lib.sh"

must "make f" as_user touch f
fe sh -c 'chown 3:4 f; touch ready; while [ ! -e go ]; do sleep 0.05; done
	stat -c %u:%g f; chown 5:6 f; stat -c %u:%g f' >out 2>&1 &
pid=$!
wait_until 20 test -e ready || bail "the session never started"
d=$(session_pids "$DAEMON")
[ "$(echo $d | wc -w)" = 1 ] || bail "not exactly one daemon: '$d'"
for sig in PIPE WINCH HUP USR2 ALRM; do
	kill -s $sig "$d" 2>/dev/null
	sleep 0.2
	if kill -0 "$d" 2>/dev/null; then ok "the daemon survives SIG$sig"; else fail "the daemon survives SIG$sig" "it is gone"; fi
done
as_user touch go
wait $pid
check_eq "the session exits 0" "$?" 0
check_eq "records kept and new calls answered after the signals" "$(cat out)" "3:4
5:6"
done_testing
