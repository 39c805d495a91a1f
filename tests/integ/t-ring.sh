#!/bin/bash
# One-way changes through the processes' rings (include/fakeenv/ring.h):
# a stream of chowns lands whole and in order; a program that closes
# every fd mid-stream (our socket, so the daemon closes that ring) loses
# nothing; a writer killed mid-stream leaves nothing blocked; the daemon
# of a --state session killed mid-stream is replaced, and every change
# made after that lands in the new one.  Every wait here is bounded.
. "$(dirname "$0")/lib.sh"

L=$H/ringload
oneway() { sed -n 's/^one-way changes: \([0-9]*\) from the processes. rings, \([0-9]*\) as messages$/\1 \2/p'; }

must "dirs" as_user mkdir d1 d2 d3 d4
out=$(fe sh -c '"$0" d1 2000 3 && "$1" status' "$L" "$FE" 2>&1)
check_eq "3 rounds of 2000 chowns: every file shows the last" \
	"$(grep '^checks' <<<"$out")" "checks 2000 bad 0"
read -r ring msgs <<<"$(oneway <<<"$out")"
check_cmd "most of them went through the ring ($ring, $msgs as messages)" \
	test "${ring:-0}" -gt 3000

out=$(fe sh -c '"$0" d2 1000 4 closeall && "$1" status' "$L" "$FE" 2>&1)
check_eq "the program closes every fd after each round: nothing lost" \
	"$(grep '^checks' <<<"$out")" "checks 1000 bad 0"
read -r ring msgs <<<"$(oneway <<<"$out")"
check_cmd "a new ring after each close ($ring through rings)" \
	test "${ring:-0}" -gt 1000

# A writer killed mid-stream: another process then writes and reads
# every file; nothing waits on what the dead one left.
fe sh -c '"$0" d3 3000 100000 slow >w.out & w=$!
	i=0; while ! grep -q "^round 3" w.out && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
	kill -9 $w; wait $w
	timeout 120 "$0" d3 3000 2 >after.out; echo "rc $?" >>after.out
	timeout 60 stat -c %u:%g d3/f0 d3/f2999 >>after.out' "$L" 2>"$W/err3"
check_match "the writer was killed mid-stream" "$(cat w.out)" "round 3"
check_eq "a writer killed mid-stream: the next one's changes land, no wait" \
	"$(cat after.out)" "round 1
round 2
checks 3000 bad 0
rc 0
1002:2002
1002:2002"

# The daemon of a --state session killed mid-stream: the launcher starts
# a new one; the writer's changes from then on land in it.
S=$W/state
fe_opt --state "$S" --linger 0 -- sh -c '"$0" d4 3000 60 >w4.out; echo "rc $?" >>w4.out' \
	"$L" 2>"$W/err4" &
p=$!
wait_until 60 grep -q "^round 2" w4.out || bail "the writer never got to round 2"
kill -9 $(session_pids "$DAEMON")
wait $p
check_eq "the daemon killed mid-stream: the rounds after the restart all land" \
	"$(tail -2 w4.out)" "checks 3000 bad 0
rc 0"
check_match "the launcher said it restarted the daemon" "$(cat "$W/err4")" 'the daemon died \(killed by signal 9\); a new one carries on'
check_no "no process failed to reach the daemon" grep -q 'cannot reach' "$W/err4"
wait_until 20 no_procs fakeenvd

# Killed while it polled the rings (the writer never pauses): the writer
# must not go on putting changes in the dead daemon's ring.  Those made
# within a moment of the death are lost with it, as a message in its
# socket would be; those made after must reach the new daemon.
must "dir" as_user mkdir d5
fe_opt --state "$S" --linger 0 -- sh -c '"$0" d5 10 afterkill killed5 >w5.out; echo "rc $?" >>w5.out' \
	"$L" 2>"$W/err5" &
p=$!
wait_until 60 grep -q "^round 20$" w5.out || bail "the writer never got to round 20"
kill -9 $(session_pids "$DAEMON")
as_user touch killed5
wait $p
check_eq "killed while polling: the changes made after it all reach the new daemon" \
	"$(tail -2 w5.out)" "after checks 100 bad 0
rc 0"
wait_until 20 no_procs fakeenvd
done_testing
