#!/bin/bash
# The shared table cannot be written by the session: a process that gets
# the memfds (MAP) and tries every way to a writable view of root and the
# slot arrays (a read-write reopen through /proc/self/fd, write, a shared
# writable mmap, mprotect, /proc/self/mem) is refused each time; the
# pending counters, which readers write by design, it may fill with junk,
# and the daemon still serves every change right, checkpoints, and the
# next session finds the state as it was made.
. "$(dirname "$0")/lib.sh"

S=$W/st
must "files" as_user sh -c 'touch a b; mkdir d'
fe_opt --state "$S" --linger 1 -- sh -c '
	chown 1234:5678 a; chmod 4755 b
	"$H/shmw" >shmw.out 2>&1
	chown 77:76 d
	stat -c %u:%g a >a.in; stat -c %u:%g d >d.in
	"$FE" checkpoint >ckpt.out 2>&1; echo $? >ckpt.rc
	stat -c %u:%g:%a a b d >after.in' 2>"$W/err"
out=$(cat shmw.out)
echo "$out" | sed "s/^/# /"
if [ "$out" = "ERR ENOSYS" ]; then
	# A kernel that cannot seal (before 5.1): the table is not shared.
	skip "the memfds refuse every write" "the daemon shares no table here (MAP: ENOSYS)"
else
	for f in root cur; do
		for r in write mmap-rw mprotect mem; do
			check_match "$f: $r refused" "$(pick "$f $r" <<<"$out")" '^ERR '
		done
	done
	check_eq "the pending counters are writable, by design" "$(pick "pend mmap-rw" <<<"$out")" "ok"
	check_eq "no slot scribbled" "$(pick scribbled <<<"$out")" "0"
fi
check_eq "a chown before: seen" "$(cat a.in 2>&1)" "1234:5678"
check_eq "a chown after the junk counters: seen" "$(cat d.in 2>&1)" "77:76"
check_eq "the checkpoint works" "$(cat ckpt.rc 2>&1)" "0"
check_match "... and says so" "$(cat ckpt.out 2>&1)" '^checkpoint: [0-9]+ records'
check_eq "the session still sees its state" "$(cat after.in 2>&1 | tr '\n' ' ')" \
	"1234:5678:644 0:0:4755 77:76:755 "
check_eq "the next session finds it" \
	"$(fe_opt --state "$S" --linger 0 -- stat -c %u:%g:%a a b d 2>&1 | tr '\n' ' ')" \
	"1234:5678:644 0:0:4755 77:76:755 "
check_cmd "the journal is whole" as_user "$FE" fsck "$S/journal"
done_testing
