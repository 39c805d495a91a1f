#!/bin/bash
# A launcher killed before its command starts (SIGKILL between binding the
# socket and starting the daemon) cannot remove its private directory; the
# next launcher removes such leftovers of ours: a directory named like
# ours, ours, 0700, older than 10 s, with no daemon answering.  A live
# session's directory and another user's are never touched.
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || bail "strace is not installed (.ci/run installs it)"
if ! as_user strace -o /dev/null true 2>/dev/null; then
	skip "a killed launcher's directory is removed" "strace cannot trace here"
	done_testing
	exit 0
fi

# strace kills the launcher as it enters listen(2): bound, no daemon yet.
as_user strace -o /dev/null -e trace=listen -e inject=listen:signal=KILL \
	"$FE" -- true 2>/dev/null
left=$(ls -d "$TMPDIR"/fakeenv.* 2>/dev/null)
check_match "a launcher killed before its daemon leaves its directory" "$left" "fakeenv\."
check_cmd "with a socket nobody answers" test -S "$left/sock"

# A live session, its directory made to look old.
fe sh -c 'echo "$FAKEENV_SOCKET" >live; while [ ! -e done ]; do sleep 0.05; done; chown 5:6 f; stat -c %u:%g f >after' &
p=$!
wait_until 10 test -s live
livedir=$(dirname "$(cat live)")
must "a file" as_user touch f
must "age the leftover" as_user touch -d "1 minute ago" "$left"
must "age the live directory" as_user touch -d "1 minute ago" "$livedir"
if [ "$(id -u)" = 0 ]; then
	mkdir -m 700 "$TMPDIR/fakeenv.other1" && chown 1:1 "$TMPDIR/fakeenv.other1" &&
		touch -d "1 minute ago" "$TMPDIR/fakeenv.other1"
fi
young=$TMPDIR/fakeenv.young1
must "a young directory like ours" as_user mkdir -m 700 "$young"

check_eq "the next session runs" "$(fe sh -c 'chown 1:2 f && stat -c %u:%g f')" "1:2"
check_no "the leftover is gone" test -e "$left"
check_cmd "the live session's directory stays" test -S "$livedir/sock"
check_cmd "a directory made less than 10 s ago stays" test -d "$young"
if [ "$(id -u)" = 0 ]; then
	check_cmd "another user's directory stays" test -d "$TMPDIR/fakeenv.other1"
	rmdir "$TMPDIR/fakeenv.other1"
else
	skip "another user's directory stays" "not root: no second user"
fi
touch done
wait $p
check_eq "the live session went on" "$(cat after)" "5:6"
done_testing
