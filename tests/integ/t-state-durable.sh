#!/bin/bash
# A --state run that returns 0 has its changes on disk: the daemon it
# leaves lingering may be killed with -9 at once and the next run sees
# them (they went to DIR/delta, docs in the man page's STATE section).
# Runs killed at random moments lose nothing a returned run saved; a
# torn append is cut away; a damaged or hostile delta refuses the start
# and is left as it is; a delta an earlier journal folded in is not
# played again; a checkpoint and a normal exit empty it; what is
# appended is what changed, not the state.
. "$(dirname "$0")/lib.sh"

S=$W/st
gone() { no_procs "$DAEMON"; }
kill9() {
	local p
	p=$(session_pids "$DAEMON")
	[ -n "$p" ] && kill -9 $p
	wait_until 20 gone
}
# What the next run shows (the daemon's start's messages, "kept", aside).
owner() { fe_opt --state "$S" --linger 0 -- stat -c %u:%g "$@" 2>/dev/null; }
# The same with them.
owner_said() { fe_opt --state "$S" --linger 0 -- stat -c %u:%g "$@" 2>&1; }
dsize() { stat -c %s "$S/delta"; }

must "files" as_user sh -c 'touch a b c && mkdir t && for i in $(seq 1 1000); do : >t/f$i; done'

# --- returned means on disk --------------------------------------------------

out=$(fe_opt --state "$S" -- chown 7:8 a 2>&1); rc=$?
check_eq "a --state run returns 0" "$rc:$out" "0:"
kill9
out=$(owner_said a)
check_eq "its change survives kill -9 of the daemon it left lingering" "$(tail -1 <<<"$out")" "7:8"
check_match "the start says where it came from" "$out" "^fakeenv: delta $S/delta: 1 record of 1 append not yet in the journal \(its daemon did not leave normally\): kept"
wait_until 20 gone
check_eq "a normal exit folds the delta into the journal" "$(dsize)" 64

# Without a daemon, the commands that read a state read its delta too;
# relocate, which rewrites the journal, asks for a session first.
must "a change" fe_opt --state "$S" -- chown 7:9 b
kill9
check_match "ls without a daemon shows the delta's change" \
	"$(as_user "$FE" ls --state "$S" b 2>&1)" "^-rw-r--r-- 7 9 - b$"
check_match "and so does export" \
	"$(as_user "$FE" export --format mtree --state "$S" . 2>&1 | grep '^\./b ')" "uid=7 gid=9"
out=$(as_user "$FE" state relocate "$W/b" "$W/b2" --state "$S" 2>&1); rc=$?
check_eq "relocate with a delta pending: refused" "$rc" 125
check_match "and says how to fold it" "$out" "holds changes not yet in the journal .*fakeenv --state $S true.*nothing relocated"
check_eq "a session folds it" "$(owner b)" "7:9"
wait_until 20 gone

# What is appended grows with the changes, not the state: 1,000 records,
# then one change.
must "1,000 records" fe_opt --state "$S" --linger 0 -- chown -R 3:3 t
wait_until 20 gone
j0=$(stat -c %s "$S/journal")
must "one change" fe_opt --state "$S" -- chown 4:4 b
d1=$(dsize)
check_cmd "one change appends one record's bytes ($d1 of a $j0-byte journal)" \
	test "$d1" -lt 400
must "another" fe_opt --state "$S" -- chmod 4755 c
check_cmd "the next run appends after it" test "$(dsize)" -gt "$d1"
out=$(as_user "$FE" checkpoint --state "$S" 2>&1)
check_eq "fakeenv checkpoint empties the delta" "$(dsize)" 64
kill9
check_eq "and the journal has it all" "$(owner b c t/f1000)" "4:4
0:0
3:3"
wait_until 20 gone

# --- kill -9 at any moment ---------------------------------------------------

# Each run has a killer that waits a random time, up to half again as
# long as one run takes here (valgrind's daemons take seconds), then
# kills the script's daemons: some runs die before they return, some
# daemons die lingering after a run returned, mid-append or not.
ms() { echo $(($(date +%s%N) / 1000000)); }
t=$(ms)
must "a run timed" fe_opt --state "$S" --linger 0 -- chown 10:10 a
span=$(( ($(ms) - t) * 3 / 2 + 1 ))
wait_until 20 gone
last=0
for i in $(seq 11 40); do
	d=$((RANDOM * span / 32768))
	( sleep "$((d / 1000)).$(printf %03d $((d % 1000)))"
	  p=$(session_pids "$DAEMON"); [ -n "$p" ] && kill -9 $p ) &
	killer=$!
	fe_opt --state "$S" --linger 1 -- chown "$i:$i" a >/dev/null 2>&1 && last=$i
	wait $killer 2>/dev/null
done
kill9
got=$(owner a); got=${got%%:*}
check_cmd "killed at random: the last returned run's change ($last) or a later one ($got)" \
	test "$last" -gt 0 -a "$got" -ge "$last"
wait_until 20 gone

# --- a torn append, a damaged delta, an old one, a hostile one ---------------

must "a change" fe_opt --state "$S" -- chown 9:9 b
kill9
must "another" fe_opt --state "$S" -- chown 9:9 c
kill9
good=$(dsize)
cp "$S/delta" two-segments
# An append cut short: the first 100 bytes of a segment.
as_user sh -c "tail -c +65 '$S/delta' | head -c 100 >>'$S/delta'"
out=$(owner_said b c)
check_match "a torn append is said" "$out" "delta $S/delta: an append that never finished \(100 bytes at offset $good, of a segment of [0-9]+\): cut away"
check_eq "and what was whole is kept" "$(tail -2 <<<"$out")" "9:9
9:9"
wait_until 20 gone

# A damaged segment with another after it: no crash makes that.
must "a change" fe_opt --state "$S" -- chown 5:5 b
kill9
must "another" fe_opt --state "$S" -- chown 5:5 c
kill9
cp "$S/delta" two-segments
# (dd without the ASan runtime the sanitizer flavour preloads: it trips
# on dd's aligned_alloc.)
printf '\377' | as_user env -u LD_PRELOAD dd of="$S/delta" bs=1 seek=140 conv=notrunc status=none
cp "$S/delta" damaged
out=$(owner_said b); rc=$?
check_eq "a damaged delta: the session does not start" "$rc" 125
check_match "and says why" "$out" "delta $S/delta: segment at offset 64: bad checksum.*; refusing to start \(the file is left as it is\)"
check_cmd "it is left as it is" cmp -s "$S/delta" damaged
wait_until 20 gone
cp two-segments "$S/delta"
check_eq "put back, it is taken again" "$(owner b c)" "5:5
5:5"
wait_until 20 gone

# A delta whose journal was replaced since is not played again.
must "a change" fe_opt --state "$S" -- chown 1:1 a
kill9
cp "$S/delta" old-delta
must "folded" fe_opt --state "$S" --linger 0 -- chown 2:2 a
wait_until 20 gone
cp old-delta "$S/delta"
check_eq "an old delta, folded already, is not played over a newer journal" \
	"$(owner a)" "2:2"
wait_until 20 gone
check_eq "and is emptied" "$(dsize)" 64

# Not ours: a symbolic link, or another user's file.
as_user sh -c "rm '$S/delta' && ln -s '$W/target' '$S/delta'"
out=$(owner_said a); rc=$?
check_eq "a symbolic link at DIR/delta: the session does not start" "$rc" 125
check_match "and says why" "$out" "delta $S/delta: a symbolic link; refusing to start"
check_no "the link is not followed" test -e "$W/target"
wait_until 20 gone
if [ "$(id -u)" = 0 ]; then
	rm -f "$S/delta"; touch "$S/delta"
	out=$(owner_said a); rc=$?
	check_eq "root's file at DIR/delta: the session does not start" "$rc" 125
	check_match "and says why" "$out" "delta $S/delta: .*refusing to start"
	rm -f "$S/delta"
else
	skip "another user's delta" "needs root to make one"
fi
wait_until 20 gone

# --- a full disk -------------------------------------------------------------

if ! small_tmpfs FULL; then
	skip "an append on a full disk is said" "needs root to mount a small tmpfs"
else
	S2=$FULL/st
	must "a state on a small disk" fe_opt --state "$S2" --linger 0 -- true
	wait_until 20 gone
	as_user dd if=/dev/zero of="$FULL/fill" bs=1k >/dev/null 2>&1
	out=$(fe_opt --state "$S2" --linger 0 -- chown -R 6:6 t 2>&1); rc=$?
	check_eq "an append that finds the disk full: 125" "$rc" 125
	check_match "and it is said" "$out" "cannot write the state to $S2.*not on disk.*No space left on device"
	wait_until 20 gone
	as_user rm -f "$FULL/fill"
fi
done_testing
