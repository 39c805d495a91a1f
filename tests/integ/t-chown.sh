#!/bin/bash
# chown, lchown, fchown, fchownat (plain, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH):
# recorded, seen by later processes, never applied for real; -1 keeps a
# field; a chown clears setuid (and setgid with g+x) on non-directories.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	umask 022
	for c in chown lchown fchown fchownat fchownat-nofollow fchownat-empty; do
		touch f-$c; echo "$c call $($H/own $c f-$c 12 34)"
		echo "$c stat $($H/st stat f-$c)"
		echo "$c coreutils $(stat -c %u:%g f-$c)"
	done
	ln -s f-chown l1; ln -s f-chown l2; ln -s f-chown l3
	$H/own lchown l1 7 8 >/dev/null; $H/own fchownat-nofollow l2 7 8 >/dev/null
	$H/own fchownat-empty l3 7 8 >/dev/null
	for l in l1 l2 l3; do echo "$l $($H/st lstat $l) target $($H/st stat $l)"; done
	touch k; chown 5:6 k; $H/own chown k -1 9 >/dev/null; echo "keep-uid $($H/st stat k)"
	$H/own chown k 7 -1 >/dev/null; echo "keep-gid $($H/st stat k)"
	for m in 4755 6755 2745 6745; do
		touch s$m; chmod $m s$m; chown 1:1 s$m; echo "clear $m $($H/st stat s$m)"
	done
	mkdir d; chmod 6755 d; chown 1:1 d; echo "dir $($H/st stat d)"
	echo "missing $($H/own chown nope 1 1)"
	echo end
' 2>&1)
check_eq "the session ran the whole script" "$(tail -n 1 <<<"$out")" end
get() { pick "$1" <<<"$out"; }

for c in chown lchown fchown fchownat fchownat-nofollow fchownat-empty; do
	check_eq "$c succeeds as fake root" "$(get "$c call")" "ok"
	check_eq "$c: the owner is seen by another process" "$(get "$c stat")" "12 34 100644 0 0"
	check_eq "$c: coreutils stat sees it" "$(get "$c coreutils")" "12:34"
	check_eq "$c: outside, the real owner is unchanged" \
		"$(stat -c %u:%g "f-$c")" "$TUID:$TGID"
done
check_eq "lchown changes the link, not its target" "$(get l1)" \
	"7 8 120777 0 0 target 12 34 100644 0 0"
check_eq "fchownat(AT_SYMLINK_NOFOLLOW) changes the link only" "$(get l2)" \
	"7 8 120777 0 0 target 12 34 100644 0 0"
check_eq "fchownat(AT_EMPTY_PATH) on an O_PATH fd of a link changes the link" \
	"$(get l3)" "7 8 120777 0 0 target 12 34 100644 0 0"
check_eq "chown -1 keeps the uid" "$(get keep-uid)" "5 9 100644 0 0"
check_eq "chown -1 keeps the gid" "$(get keep-gid)" "7 9 100644 0 0"
check_eq "chown clears setuid" "$(get "clear 4755")" "1 1 100755 0 0"
check_eq "chown clears setuid and setgid when g+x" "$(get "clear 6755")" "1 1 100755 0 0"
check_eq "chown keeps setgid without g+x" "$(get "clear 2745")" "1 1 102745 0 0"
check_eq "chown clears setuid, keeps setgid without g+x" "$(get "clear 6745")" "1 1 102745 0 0"
check_eq "chown of a directory keeps setuid/setgid" "$(get dir)" "1 1 46755 0 0"
check_eq "chown of a missing file fails with ENOENT" "$(get missing)" "ERR ENOENT"
done_testing
