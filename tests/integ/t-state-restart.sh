#!/bin/bash
# The daemon of a --state session is killed with -9 while the command
# runs: the launcher starts a new one from the last journal and says what
# was lost; the command's processes reconnect and carry on.  What was
# checkpointed survives, what came after the checkpoint and before the
# kill is lost, what comes after the restart is kept.
. "$(dirname "$0")/lib.sh"

S=$W/state
gone() { [ -z "$(session_pids "$DAEMON")" ]; }
# A killed process still holds its socket until its exit has closed its
# fds (a zombie has); a change sent before that is in flight when the
# daemon dies and is lost, as the launcher says.  Under valgrind the
# exit takes long enough for the command to send one.
exited() {
	local st
	st=$(cut -d")" -f2 "/proc/$1/stat" 2>/dev/null) || return 0
	case $st in " Z "* | " X "*) return 0 ;; esac
	return 1
}
must "files" as_user touch saved lost after

fe_opt --state "$S" --linger 0 -- sh -c '
	chown 1:1 saved && "$FE" checkpoint >/dev/null || exit 1
	chown 2:2 lost || exit 2
	touch ready
	i=0; while [ ! -e killed ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	chown 3:3 after || exit 3
	stat -c %u:%g saved lost after >seen
	echo "$FAKEENV_STATE" >state-env' 2>"$W/err" &
p=$!
wait_until 30 test -e ready
old=$(session_pids "$DAEMON")
kill -9 $old
wait_until 20 exited $old
touch killed
wait $p; rc=$?
check_eq "the command ran on" "$rc" 0
check_eq "checkpointed kept, later lost, after the restart kept" "$(cat seen 2>&1)" "1:1
0:0
3:3"
check_match "the launcher said what was lost" "$(cat "$W/err")" 'the daemon died \(killed by signal 9\); a new one carries on from .*/state/journal, written at [0-9:]+ \([0-9]+ s ago\): changes made since then are lost'
check_no "no process failed to reach the daemon" grep -q 'cannot reach' "$W/err"
check_eq "FAKEENV_STATE set for CMD" "$(cat state-env)" "$S"
wait_until 20 gone
check_eq "the new daemon's journal has it all" \
	"$(fe_opt --state "$S" --linger 0 -- stat -c %u:%g saved lost after)" "1:1
0:0
3:3"
wait_until 20 gone

# One process lives across the restart: it had the old daemon's table
# mapped, and must not go on reading it.  Its change before the kill was
# never checkpointed, so after the restart the file reads 0:0 again.
must "files" as_user touch one two
fe_opt --state "$S" --linger 0 -- "$H/ops" chown one 5 5 , stat one , \
	touch ready2 , wait killed2 , chown two 6 6 , stat two , stat one \
	>"$W/ops-out" 2>"$W/ops-err" &
p=$!
wait_until 30 test -e ready2
old=$(session_pids "$DAEMON")
kill -9 $old
wait_until 20 exited $old
touch killed2
wait $p; rc=$?
check_eq "one process across the restart: status" "$rc" 0
check_eq "it reads the new daemon's table, not the dead one's" "$(cat "$W/ops-out")" "5:5
6:6
0:0"
wait_until 20 gone
done_testing
