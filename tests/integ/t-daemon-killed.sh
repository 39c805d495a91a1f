#!/bin/bash
# The daemon killed with SIGKILL during a session: no client hangs (every
# wait here is bounded), each process prints one line on stderr at its
# next faked call, and then behaves as docs/hostile.md says: a stat shows the
# file as having no record (0:0), a chown fails with EIO, and the command
# runs on to its own exit status, which the launcher returns.
. "$(dirname "$0")/lib.sh"

X=$H/hostile
must "make f1 f2 f3" as_user touch f1 f2 f3
# The third loop runs under a seccomp filter, so the shim talks with
# writev and read, and pauses between rounds: its next writev meets the
# dead daemon, which must fail with EPIPE and no SIGPIPE.
fe sh -c '"$0" until-fail f1 >o1 2>e1 & p1=$!; "$0" until-fail f2 >o2 2>e2 & p2=$!
	"$0" open-filter-until-fail f3 >o3 2>e5 & p3=$!
	touch started; wait $p1; r1=$?; wait $p2; r2=$?; wait $p3; r3=$?
	echo "$r1 $r2 $r3" >rcs
	chown 1:1 f1 2>e3; echo "chown $?" >>rcs; stat -c %u:%g f1 >>rcs 2>e4
	exit 3' "$X" >/dev/null 2>launcher.err &
pid=$!
wait_until 20 test -e started || bail "the session never started"
d=$(session_pids "$DAEMON")
[ "$(echo $d | wc -w)" = 1 ] || bail "not exactly one daemon: '$d'"
sleep 0.5
kill -9 "$d"
if wait_until 30 test -e rcs -a -s o1 -a -s o2 -a -s o3; then
	ok "the three looping clients ended after the daemon died"
else
	fail "the three looping clients ended after the daemon died" "still running after 30 s"
fi
wait_until 30 no_procs hostile
# kill -9 $pid would leave the session's processes: wait, bounded above.
wait $pid
check_eq "the launcher returns the command's status" "$?" 3
check_eq "each loop exited 1, none died of a signal" "$(sed -n 1p rcs)" "1 1 1"
for o in o1 o2 o3; do
	check_match "$o: the loop stopped at a chown failing with EIO or a stat showing 0:0" \
		"$(cat $o)" "^(stopped: chown ERR EIO|stopped after [0-9]+: stat shows 0, not [0-9]+)$"
done
msg="fakeenv: cannot reach the daemon at .*: no daemon is listening; files read as having no record and ownership changes fail"
for e in e1 e2 e4 e5; do
	check_eq "$e: one line from that process" "$(wc -l <$e)" 1
	check_match "$e: the line says what happened" "$(cat $e)" "^$msg$"
done
check_match "chown(1) after the death: our line, then its own EIO message" \
	"$(tr '\n' '|' <e3)" "^$msg\\|chown: .*Input/output error\\|$"
check_eq "after the death: chown fails, stat shows no record" "$(sed 1d rcs)" "chown 1
0:0"
check_match "the launcher reports the death" "$(cat launcher.err)" "daemon died"

# With -u, a file read with no daemon keeps its real owner, as a file
# without a record does in such a session.
must "a file" as_user touch fu
fe_opt -u -- sh -c 'touch ready-u; while [ ! -e killed-u ]; do sleep 0.05; done; stat -c %u fu >after-u' 2>/dev/null &
pu=$!
wait_until 10 test -e ready-u
kill -9 $(session_pids "$DAEMON")
touch killed-u
wait $pu
check_eq "-u after the death: the real owner" "$(cat after-u)" "$TUID"
done_testing
