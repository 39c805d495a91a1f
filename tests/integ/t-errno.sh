#!/bin/bash
# errno is left as it was by a faked success (EILSEQ set before the call
# stays), and a failed call sets its own errno.  Natively the same calls
# fail with EPERM, so the test can fail.
. "$(dirname "$0")/lib.sh"

calls="chown lchown fchown fchownat chmod fchmod stat lstat fstat statx
	open-creat access-w rename unlink setuid0 setgid0 setgroups"
export calls
out=$(fe sh -c '
	for c in $calls; do touch e-$c; echo "$c $($H/eno $c e-$c)"; done
	echo "mknod $($H/eno mknod dev1)"; echo "mknodat $($H/eno mknodat dev2)"
	echo "mkdir $($H/eno mkdir dir1)"
	echo "open-creat-new $($H/eno open-creat newfile)"
	for c in chown lchown fchownat chmod stat lstat statx unlink rename; do
		echo "missing $c $($H/eno $c missing)"
	done
	echo "exists mknod $($H/eno mknod e-chown)"
	echo "exists mkdir $($H/eno mkdir e-chown)"
	echo end
' 2>&1)
check_eq "the session ran the whole script" "$(tail -n 1 <<<"$out")" end
get() { pick "$1" <<<"$out"; }
for c in $calls mknod mknodat mkdir open-creat-new; do
	check_eq "$c: a faked success leaves errno unchanged" "$(get "$c")" "0 EILSEQ"
done
for c in chown lchown fchownat chmod stat lstat statx unlink rename; do
	check_eq "$c of a missing file: -1 ENOENT" "$(get "missing $c")" "-1 ENOENT"
done
check_eq "mknod over an existing file: -1 EEXIST" "$(get "exists mknod")" "-1 EEXIST"
check_eq "mkdir over an existing file: -1 EEXIST" "$(get "exists mkdir")" "-1 EEXIST"
as_user touch native
check_eq "natively chown fails with EPERM (the test can fail)" \
	"$(as_user "$H"/eno chown native)" "-1 EPERM"
done_testing
