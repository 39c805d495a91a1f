#!/bin/bash
# Every stat entry point (stat, lstat, fstat, fstatat, the *64 forms, the
# old __xstat forms declared by hand, statx) shows the faked owner, mode and
# device numbers, each from a process other than the one that made them.
. "$(dirname "$0")/lib.sh"

calls="stat lstat fstat fstatat fstatat-nofollow fstatat-empty stat64
	lstat64 fstat64 fstatat64 xstat lxstat fxstat fxstatat xstat64
	lxstat64 fxstat64 fxstatat64 statx statx-nofollow"
nofollow="lstat fstatat-nofollow lstat64 lxstat lxstat64 statx-nofollow"
export calls nofollow

out=$(fe sh -c '
	umask 022
	touch f && chown 12:34 f && chmod 4755 f &&
	mknod d c 5 1 && mknod b b 8 17 && chown 3:4 b &&
	ln -s f l && chown -h 7:8 l || exit 9
	for c in $calls; do
		echo "f $c $($H/st $c f)"
		echo "d $c $($H/st $c d)"
		echo "b $c $($H/st $c b)"
	done
	for c in $nofollow; do echo "l $c $($H/st $c l)"; done
	echo "l stat-follow $($H/st stat l)"
	echo "l statx-follow $($H/st statx l)"
' 2>&1)
rc=$?
check_eq "session setup (chown, chmod, mknod, ln -s) exits 0" "$rc" 0

get() { grep -m1 "^$1 $2 " <<<"$out" | cut -d' ' -f3-; }
for c in $calls; do
	check_eq "$c: chown 12:34 + chmod 4755 shown" "$(get f "$c")" "12 34 104755 0 0"
	check_eq "$c: char device 5,1 shown" "$(get d "$c")" "0 0 20644 5 1"
	check_eq "$c: block device 8,17 owned 3:4 shown" "$(get b "$c")" "3 4 60644 8 17"
done
for c in $nofollow; do
	check_eq "$c: symlink chown -h 7:8 shown" "$(get l "$c")" "7 8 120777 0 0"
done
check_eq "stat follows the symlink to its faked target" "$(get l stat-follow)" "12 34 104755 0 0"
check_eq "statx follows the symlink to its faked target" "$(get l statx-follow)" "12 34 104755 0 0"

# Outside the session nothing was applied: the real files.
check_eq "outside: f keeps its real owner, not setuid" \
	"$(as_user "$H"/st stat f)" "$TUID $TGID 100755 0 0"
check_eq "outside: the char device is a regular file" \
	"$(as_user "$H"/st stat d)" "$TUID $TGID 100644 0 0"
check_eq "outside: l keeps its real owner" \
	"$(as_user "$H"/st lstat l)" "$TUID $TGID 120777 0 0"
done_testing
