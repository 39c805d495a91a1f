#!/bin/bash
# A set-gid directory gives its group to every inode made in it and its
# S_ISGID to new directories, as the kernel's inode_init_owner() does;
# a new set-gid file keeps S_ISGID only for a creator in the group or
# with CAP_FSETID (the fake fsuid 0).  The same script, run by the real
# root in a scratch directory, shows what the kernel does: the session
# must agree with it line for line.  A directory set-gid for real passes
# on the group the session shows.
. "$(dirname "$0")/lib.sh"

make_tree='
	umask 022
	mkdir d e o && chown 0:50 d e o && chmod 2775 d && chmod 2777 o
	touch d/f e/f
	mkdir d/sub
	mknod d/dev c 1 3
	ln -s x d/l
	mkdir -p d/sub/deeper
	mkfifo d/fifo
	$H/mk fopen d/fopen >/dev/null
	$H/mk open d/open >/dev/null
	$H/mk mkdirat d/mkdirat >/dev/null
	$H/mk tmpfile d d/tmpfile >/dev/null
	n=$($H/mk mkstemp d/tmpXXXXXX) && mv "$n" d/mkstemp
	$H/mk open d/root-sgid 2755 >/dev/null
	$H/mk -f 1234:55 open o/other-sgid 2755 >/dev/null
	$H/mk -f 1234:50 open o/member-sgid 2755 >/dev/null
	$H/mk -f 1234:55 open o/other-nox 2745 >/dev/null
	$H/mk -f 1234:55 mkdir o/other-dir >/dev/null
	$H/mk -f 1234:55 fopen o/other-fopen >/dev/null
	chmod g-s d
	touch d/after
	mkdir d/after-dir
	$H/mk fopen d/after-fopen >/dev/null
	find d e o | LC_ALL=C sort | while read -r f; do
		stat -c "%n %u %g %a %F" "$f"
	done
'
export make_tree

out=$(fe sh -c "$make_tree" 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }

for f in f dev l fopen open tmpfile mkstemp fifo; do
	check_match "d/$f made in the set-gid d takes its group 50" \
		"$(get "d/$f")" "^0 50 "
done
check_eq "mkdir: d/sub takes the group and the set-gid bit" \
	"$(get d/sub)" "0 50 2755 directory"
check_eq "mkdir -p: d/sub/deeper, made in d/sub, takes them too" \
	"$(get d/sub/deeper)" "0 50 2755 directory"
check_eq "mkdirat: d/mkdirat takes them too" \
	"$(get d/mkdirat)" "0 50 2755 directory"
check_eq "mknod: the faked device d/dev takes the group" \
	"$(get d/dev)" "0 50 644 character special file"
check_eq "symlink: lstat of d/l shows the group" \
	"$(get d/l)" "0 50 777 symbolic link"
check_eq "the fake root keeps S_ISGID of a new set-gid file (CAP_FSETID)" \
	"$(get d/root-sgid)" "0 50 2755 regular empty file"
check_eq "a fake non-root outside group 50 loses it" \
	"$(get o/other-sgid)" "1234 50 755 regular empty file"
check_eq "a fake non-root whose fsgid is 50 keeps it" \
	"$(get o/member-sgid)" "1234 50 2755 regular empty file"
check_eq "S_ISGID without group-exec (mandatory locking) stays" \
	"$(get o/other-nox)" "1234 50 2745 regular empty file"
check_eq "a fake non-root's new directory takes group and bit" \
	"$(get o/other-dir)" "1234 50 2755 directory"
check_eq "fopen as a fake non-root takes the group" \
	"$(get o/other-fopen)" "1234 50 644 regular empty file"
check_eq "e, not set-gid: its new file keeps the creator's group 0" \
	"$(get e/f)" "0 0 644 regular empty file"
for f in after after-fopen; do
	check_match "after chmod g-s d: d/$f gets group 0 again" \
		"$(get "d/$f")" "^0 0 644 "
done
check_eq "after chmod g-s d: d/after-dir gets group 0, no set-gid bit" \
	"$(get d/after-dir)" "0 0 755 directory"
check_eq "outside: the real d/sub is not set-gid" \
	"$(stat -c %a d/sub)" 755

if [ "$(id -u)" = 0 ]; then
	mkdir "$T/native"
	native=$(cd "$T/native" && sh -c "$make_tree" 2>&1)
	check_eq "the session shows what the kernel does as real root" \
		"$out" "$native"
else
	skip "the session shows what the kernel does as real root" "not root"
fi

# A directory that is set-gid for real.  Made by the real root with a
# group the test user is not in: the kernel gives that group to what the
# user makes in it.
if [ "$(id -u)" = 0 ]; then
	mkdir r && chown "$TUID:50" r && chmod 2775 r
	out=$(fe sh -c '
		umask 022
		touch r/a; mkdir r/adir
		echo "a $(stat -c "%g %a" r/a)"
		echo "adir $(stat -c "%g %a" r/adir)"
		chown 0:7 r
		touch r/b; $H/mk fopen r/c >/dev/null; mkdir r/bdir
		for f in b c bdir; do echo "$f $(stat -c "%g %a" r/$f)"; done
	' 2>&1)
	check_eq "real set-gid r without a record shows group 0: so does r/a" \
		"$(pick a <<<"$out")" "0 644"
	check_eq "r/adir keeps the set-gid bit the kernel gave it" \
		"$(pick adir <<<"$out")" "0 2755"
	check_eq "after chown 0:7 r: touch r/b takes group 7" \
		"$(pick b <<<"$out")" "7 644"
	check_eq "after chown 0:7 r: fopen r/c takes group 7" \
		"$(pick c <<<"$out")" "7 644"
	check_eq "after chown 0:7 r: mkdir r/bdir takes group 7 and the bit" \
		"$(pick bdir <<<"$out")" "7 2755"
	check_eq "outside: r/a has the real group the kernel gave it" \
		"$(stat -c %g r/a)" 50
else
	skip "a directory set-gid for real" "not root"
fi

# The count of set-gid directories is the table's: a loaded journal
# brings it back.
fe_opt -s "$T/st" -- sh -c 'mkdir j && chown 0:50 j && chmod 2775 j' >/dev/null 2>&1
out=$(fe_opt -i "$T/st" -- sh -c '
	umask 022
	touch j/f; $H/mk fopen j/g >/dev/null
	for f in j/f j/g; do echo "$f $(stat -c "%g %a" $f)"; done
' 2>&1)
check_eq "after a load: touch in the set-gid j takes its group" \
	"$(pick j/f <<<"$out")" "50 644"
check_eq "after a load: fopen in it too" "$(pick j/g <<<"$out")" "50 644"

# With -u a file without a record shows its real owner: a set-gid
# directory of the user's own group gives that group, where the fake
# root's new files otherwise get 0.
as_user mkdir u p && as_user chmod 2775 u
out=$(fe_opt -u -- sh -c '
	umask 022
	touch u/f p/f; mkdir u/d
	for f in u/f u/d p/f; do echo "$f $(stat -c "%u %g %a" $f)"; done
' 2>&1)
check_eq "-u: u/f made in the user's set-gid u takes the user's group" \
	"$(pick u/f <<<"$out")" "0 $TGID 644"
check_eq "-u: u/d takes the group and the bit" \
	"$(pick u/d <<<"$out")" "0 $TGID 2755"
check_eq "-u: p/f, in a directory that is not set-gid, gets group 0" \
	"$(pick p/f <<<"$out")" "0 0 644"
done_testing
