#!/bin/bash
# --state DIR: a persistent session.  Concurrent launchers share one
# daemon and see each other's changes at once; a later one sees
# everything; the daemon lingers, then writes its journal and exits;
# checkpoint, SIGUSR1, the interval, SIGTERM and SIGINT each write it;
# status tells what is held; kill -9 of the daemon in the middle of a
# chown -R leaves the last checkpoint on disk, whole.
. "$(dirname "$0")/lib.sh"

S=$W/state
daemons() { session_pids "$DAEMON" | wc -l; }
gone() { [ "$(daemons)" = 0 ]; }

must "files" as_user sh -c 'touch a b c; mkdir tree; for i in $(seq 1 300); do touch tree/f$i; done'

# Two sessions at once, each waiting for the other's chown.
fe_opt --state "$S" --linger 1 -- sh -c '
	chown 100:100 a; touch a-done
	i=0; while [ ! -e b-done ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	stat -c %u:%g b >seen-by-a' &
pa=$!
fe_opt --state "$S" --linger 1 -- sh -c '
	i=0; while [ ! -e a-done ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	stat -c %u:%g a >seen-by-b
	test "$(ls "$FAKEENV_SOCKET")" = "$FAKEENV_SOCKET" && echo "$FAKEENV_SOCKET" >sock-b
	chown 200:200 b; touch b-done' &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
check_eq "concurrent sessions: both succeed" "$ra $rb" "0 0"
check_eq "B sees A's chown" "$(cat seen-by-b 2>&1)" "100:100"
check_eq "A sees B's chown" "$(cat seen-by-a 2>&1)" "200:200"
check_eq "one socket, in DIR" "$(cat sock-b 2>&1)" "$S/sock"
check_eq "state dir is private" "$(stat -c %a "$S")" 700

# The daemon lingers, then writes the journal and exits.
wait_until 20 gone
check_cmd "daemon left after its linger" gone
check_cmd "journal written at exit" as_user "$FE" fsck "$S/journal"
check_no "socket removed" test -e "$S/sock"
out=$(as_user "$FE" status --state "$S" 2>&1)
check_match "status offline: not running" "$out" 'daemon: +not running'
check_match "status offline: records" "$out" 'records: +2'

check_eq "a third session sees everything" \
	"$(fe_opt --state "$S" --linger 0 -- stat -c %u:%g a b)" "100:100
200:200"
wait_until 20 gone

# FAKEENV_STATE works as --state does.
check_eq "FAKEENV_STATE" "$(as_user env FAKEENV_STATE="$S" "$FE" -- stat -c %u b)" 200
wait_until 20 gone

# Launchers started at once: one daemon.
for i in 1 2 3 4; do
	fe_opt --state "$S" --linger 2 -- sh -c "chown $i:$i c; sleep 1" &
done
sleep 0.5
check_eq "four launchers, one daemon" "$(daemons)" 1
wait
wait_until 20 gone

# status, checkpoint, SIGUSR1, the interval, SIGTERM, SIGINT.
fe_opt --state "$S" --linger 0 -- sh -c '
	chown 5:5 c
	"$FE" status >status-1
	"$FE" checkpoint >ckpt-1
	"$FE" status >status-2
	chown 6:6 c
	"$FE" status --state "'"$S"'" >status-3'
check_match "status: records" "$(cat status-1)" 'records: +3'
check_match "status: unsaved" "$(cat status-1)" 'unsaved changes: +[1-9]'
check_match "status: clients" "$(cat status-1)" 'daemon: +pid [0-9]+, up [0-9]+ s, [2-9] clients'
check_match "checkpoint prints" "$(cat ckpt-1)" '^checkpoint: 3 records, [0-9]+ bytes$'
check_match "status after checkpoint: nothing unsaved" "$(cat status-2)" 'unsaved changes: +0'
check_match "status after checkpoint: time" "$(cat status-2)" 'last checkpoint: +20[0-9-]+ [0-9:]+ UTC \(1 written'
check_match "status --state from inside" "$(cat status-3)" 'unsaved changes: +1'
wait_until 20 gone

# A signal's checkpoint is seen in the file while the daemon still runs:
# chown, signal, wait for the journal to hold the change (fsck's count of
# faked modes is not enough: compare the bytes of two journals).
sig_test() {
	local sig=$1 uid=$2
	cp "$S/journal" "$W/before-$sig"
	fe_opt --state "$S" --linger 30 -- chown $uid:$uid c
	local pid
	pid=$(session_pids "$DAEMON")
	kill -"$sig" $pid
	if wait_until 10 sh -c "! cmp -s '$S/journal' '$W/before-$sig'"; then
		ok "SIG$sig writes the journal"
	else
		fail "SIG$sig writes the journal" "unchanged"
	fi
}
sig_test USR1 21
check_cmd "SIGUSR1: daemon still running" test "$(daemons)" = 1
sig_test TERM 22
wait_until 10 gone
check_cmd "SIGTERM: daemon left" gone
check_eq "SIGTERM: state kept" "$(fe_opt --state "$S" --linger 30 -- stat -c %u c)" 22
sig_test INT 23
wait_until 10 gone
check_cmd "SIGINT: daemon left" gone

cp "$S/journal" "$W/before-interval"
fe_opt --state "$S" --linger 30 --checkpoint-interval 1 -- chown 31:31 c
if wait_until 10 sh -c "! cmp -s '$S/journal' '$W/before-interval'"; then
	ok "interval writes the journal"
else
	fail "interval writes the journal" "unchanged"
fi
kill -TERM $(session_pids "$DAEMON") 2>/dev/null
wait_until 10 gone

# kill -9 in the middle of a chown -R: the journal on disk is the last
# checkpoint, whole; the launcher starts a new daemon from it and the
# command carries on (t-state-restart.sh looks closer at that).
must "baseline" fe_opt --state "$S" --linger 0 -- chown -R 1:1 tree
wait_until 20 gone
cp "$S/journal" "$W/last-good"
fe_opt --state "$S" --linger 0 -- sh -c 'touch started; for i in $(seq 1 300); do chown -R 2:2 tree && chown -R 3:3 tree || exit 3; done' 2>"$W/kill-err" &
pk=$!
wait_until 10 test -e started
sleep 0.3
victim=$(session_pids "$DAEMON")
[ -n "$victim" ] || bail "the chown -R loop ended before the kill: make it longer"
kill -9 $victim
check_cmd "killed daemon: journal is the last checkpoint" cmp "$S/journal" "$W/last-good"
check_cmd "killed daemon: journal passes fsck" as_user "$FE" fsck "$S/journal"
wait $pk; rc=$?
if [ "$rc" = 0 ]; then ok "killed daemon: the command carried on"
else fail "killed daemon: the command carried on" "exit $rc: $(cat "$W/kill-err")"; fi
check_match "killed daemon: the restart was reported" "$(cat "$W/kill-err")" 'the daemon died'
wait_until 20 gone
check_eq "killed daemon: no temp file left behind" "$(ls "$S" | grep -c tmp)" 0
check_eq "killed daemon: the next session loads the end state" \
	"$(fe_opt --state "$S" --linger 0 -- stat -c %u:%g tree/f1 tree/f300 | sort -u)" "3:3"
wait_until 20 gone

# kill -9 while a checkpoint is being written, at different moments: the
# journal on disk is always whole, and the next daemon removes the
# temporary file a killed one may have left.
must "many files" as_user sh -c 'mkdir big && cd big && seq 1 5000 | xargs touch'
must "many records" fe_opt --state "$S" --linger 0 -- chown -R 7:7 big
wait_until 20 gone
bad=0
for i in 0 1 2 3 4 5 6 7 8 9 10 12 15 20 30; do
	fe_opt --state "$S" --linger 30 -- chown $i:$i c
	pid=$(session_pids "$DAEMON")
	kill -USR1 $pid
	sleep "$(printf '0.%03d' $i)"
	kill -9 $pid
	wait_until 10 gone
	as_user "$FE" fsck "$S/journal" >/dev/null 2>&1 || bad=$((bad + 1))
done
check_eq "kill -9 during checkpoints: the journal is always whole" "$bad" 0
check_eq "after kill -9 during checkpoints: records all there" 	"$(fe_opt --state "$S" --linger 0 -- sh -c 'stat -c %u:%g big/* | sort -u; ls '"$S"' | grep -c tmp')" "7:7
0"
wait_until 20 gone

# Bad --state directories.
as_user mkdir -m 777 "$W/open"
out=$(fe_opt --state "$W/open" -- true 2>&1); rc=$?
check_eq "world-writable state dir: status" "$rc" 125
check_match "world-writable state dir: message" "$out" 'writable by others'
as_user touch "$W/file"
out=$(fe_opt --state "$W/file" -- true 2>&1)
check_match "state dir that is a file" "$out" 'not a directory'
out=$(fe_opt --state "$S" -s x -- true 2>&1)
check_match "--state with -s" "$out" 'does not go with'

done_testing
