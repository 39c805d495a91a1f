#!/bin/bash
# fakeroot's idiom for a persistent build, `-i F -s F`: load F if it is
# there, save to F at the end.  With F missing (the first run) the session
# starts empty with a warning naming F, and F is written at the end.  F
# missing without `-s F` stays an error (a typo must not start empty),
# said in one line; an F that is there but cannot be loaded is refused and
# left as it is, idiom or not.
. "$(dirname "$0")/lib.sh"

must "files" as_user touch x

# The first run: warned, run, saved.
out=$(fe_opt -i j -s j -- sh -c 'chown 3:4 x && mknod dev c 5 1' 2>&1); rc=$?
check_eq "first run: status" "$rc" 0
check_match "first run: the warning names the file" "$out" \
	'^fakeenv: journal j: no such file; starting with an empty state, it will be saved there$'
check_cmd "first run: the journal is written" test -s j
check_cmd "first run: the journal passes fsck" as_user "$FE" fsck j

# The second run loads what the first recorded, quietly, and saves on.
out=$(fe_opt -i j -s j -- sh -c 'stat -c "%u:%g" x; stat -c "%F %t,%T" dev; chown 5:6 dev' 2>&1); rc=$?
check_eq "second run: status" "$rc" 0
check_eq "second run: loaded" "$out" "3:4
character special file 5,1"
check_eq "second run: its change saved" \
	"$(fe_opt -i j -- stat -c '%u:%g %t,%T' dev 2>&1)" "5:6 5,1"

# Spellings of one file: compared as absolute paths, lexically.
out=$(fe_opt -i ./j2 -s "$W/j2" -- chown 7:7 x 2>&1); rc=$?
check_eq "./F and \$PWD/F: status" "$rc" 0
check_match "./F and \$PWD/F: warned" "$out" 'journal \./j2: no such file; starting with an empty state'
check_eq "./F and \$PWD/F: saved" "$(fe_opt -i j2 -- stat -c %u x 2>&1)" 7
must "sub" as_user mkdir sub
out=$(fe_opt -i sub/../j3 -s j3 -- true 2>&1); rc=$?
check_eq "sub/../F and F: status" "$rc" 0
check_cmd "sub/../F and F: saved" test -s j3

# A directory the build itself makes: the journal is saved there at the
# end, as fakeroot does.
out=$(fe_opt -i out/j -s out/j -- mkdir out 2>&1); rc=$?
check_eq "F in a directory CMD makes: status" "$rc" 0
check_cmd "F in a directory CMD makes: saved" test -s out/j

# -i F alone, F missing: refused in one line naming F, nothing made, CMD
# not run.  Several times: the daemon's exit used to race with the
# launcher's report of it ("cannot start the daemon ...: Connection reset
# by peer", or "daemon: No such file or directory").
for i in 1 2 3 4 5; do
	out=$(fe_opt -i nope -- touch ran 2>&1); rc=$?
	[ "$rc" = 125 ] && [ "$out" = "fakeenv: journal nope: no such file" ] || break
done
check_eq "-i F alone: status" "$rc" 125
check_eq "-i F alone: one line naming F" "$out" "fakeenv: journal nope: no such file"
check_cmd "-i F alone: F not made" test ! -e nope
check_cmd "-i F alone: CMD not run" test ! -e ran

# -i F -s G, F missing: the same refusal; G is not written either.
out=$(fe_opt -i nope -s other -- touch ran 2>&1); rc=$?
check_eq "-i F -s G: status" "$rc" 125
check_eq "-i F -s G: message" "$out" "fakeenv: journal nope: no such file"
check_cmd "-i F -s G: neither made" test ! -e nope -a ! -e other
check_cmd "-i F -s G: CMD not run" test ! -e ran
# In another directory, F and G may share their last component.
out=$(fe_opt -i sub/j -s j -- touch ran 2>&1); rc=$?
check_eq "-i D/F -s F: status" "$rc" 125
check_cmd "-i D/F -s F: CMD not run" test ! -e ran

# The idiom with F there but not loadable: refused, F untouched.
must "dir" as_user mkdir isdir
out=$(fe_opt -i isdir -s isdir -- touch ran 2>&1); rc=$?
check_eq "F a directory: status" "$rc" 125
check_match "F a directory: message" "$out" '^fakeenv: journal isdir: a directory, not a regular file$'
check_cmd "F a directory: still one, empty" test -d isdir -a -z "$(ls -A isdir)"
must "a journal" fe_opt -s good -- chown 1:1 x
must "unreadable" as_user cp good unreadable
must "chmod" as_user chmod 0 unreadable
cp unreadable "$T/unreadable.copy"
if as_user test -r unreadable; then
	skip "F unreadable" "the test user reads a mode 0 file"
else
	out=$(fe_opt -i unreadable -s unreadable -- touch ran 2>&1); rc=$?
	check_eq "F unreadable: status" "$rc" 125
	check_match "F unreadable: message" "$out" '^fakeenv: journal unreadable: cannot read it: Permission denied$'
	check_cmd "F unreadable: untouched" cmp unreadable "$T/unreadable.copy"
fi
must "corrupt" as_user sh -c 'head -c -3 good >corrupt'
cp corrupt "$T/corrupt.copy"
out=$(fe_opt -i corrupt -s corrupt -- touch ran 2>&1); rc=$?
check_eq "F corrupt: status" "$rc" 125
check_match "F corrupt: message" "$out" '^fakeenv: journal corrupt: truncated'
check_cmd "F corrupt: untouched" cmp corrupt "$T/corrupt.copy"
check_cmd "refused idioms: CMD not run" test ! -e ran

done_testing
