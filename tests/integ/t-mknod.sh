#!/bin/bash
# mknod, mknodat, __xmknod, __xmknodat of devices: an empty regular file
# for real, the device in the session; fifos are real; an existing path
# gives EEXIST and keeps its content.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	umask 022
	for c in mknod mknodat xmknod xmknodat; do
		echo "$c c $($H/node $c c-$c c 620 4 64) $($H/st stat c-$c)"
		echo "$c b $($H/node $c b-$c b 660 8 1) $($H/st lstat b-$c)"
		echo "$c p $($H/node $c p-$c p 640 0 0) $($H/st stat p-$c)"
		echo data >e-$c
		echo "$c exists $($H/node $c e-$c c 600 1 3) $($H/st stat e-$c)"
	done
	for c in mkfifo mkfifoat; do
		echo "$c p $($H/node $c p-$c 640) $($H/st stat p-$c)"
	done
	mknod cu c 5 1 && chown 0:5 cu && echo "chowned device $($H/st stat cu)"
	echo "ls $(ls -l cu | cut -d" " -f1,5,6)"
' 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }

for c in mknod mknodat xmknod xmknodat; do
	check_eq "$c char device 0620 & ~umask 022 shown as 4,64" "$(get "$c c")" "ok 0 0 20600 4 64"
	check_eq "$c char device: a regular empty file for real" \
		"$(stat -c '%F %u' "c-$c")" "regular empty file $TUID"
	check_eq "$c block device 0660 & ~umask shown as 8,1" "$(get "$c b")" "ok 0 0 60640 8 1"
	check_eq "$c block device: a regular empty file for real" \
		"$(stat -c %F "b-$c")" "regular empty file"
	check_eq "$c fifo shown" "$(get "$c p")" "ok 0 0 10640 0 0"
	check_eq "$c fifo is a real fifo" "$(stat -c %F "p-$c")" "fifo"
	check_eq "$c over an existing file: EEXIST, file unchanged" \
		"$(get "$c exists")" "ERR EEXIST 0 0 100644 0 0"
	check_eq "$c over an existing file: content kept" "$(cat "e-$c")" "data"
done
for c in mkfifo mkfifoat; do
	check_eq "$c shown" "$(get "$c p")" "ok 0 0 10640 0 0"
	check_eq "$c is a real fifo" "$(stat -c %F "p-$c")" "fifo"
done
check_eq "a chowned device keeps its type and rdev" "$(get "chowned device")" "0 5 20644 5 1"
check_eq "ls -l shows crw-r--r-- 5, 1" "$(get ls)" "crw-r--r-- 5, 1"
done_testing
