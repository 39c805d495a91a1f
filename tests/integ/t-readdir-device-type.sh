#!/bin/bash
# readdir reports a faked device with its faked type (DT_CHR, DT_BLK),
# though for real it is a regular file, through every readdir entry
# point; find -type c and -type b find faked devices, -type f does not.
# Real regular files, fifos and directories keep their types.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	mkdir d && mknod d/c c 1 2 && mknod d/b b 8 1 && touch d/f &&
		mkfifo d/p && mkdir d/sub || exit 1
	for c in readdir readdir64 readdir_r readdir64_r; do
		echo "$c $($H/dent $c d | sort | tr "\n" " ")"
	done
	echo "find-c $(find d -type c)"
	echo "find-b $(find d -type b)"
	echo "find-f $(find d -type f)"
	echo "nomap $(FAKEENV_NO_MAP=1 $H/dent readdir d | sort | tr "\n" " ")"
' 2>&1)
check_eq "session exits 0" "$?" 0
for c in readdir readdir64 readdir_r readdir64_r; do
	check_eq "$c: devices show their faked types, the rest their own" \
		"$(pick $c <<<"$out")" "b blk c chr f reg p fifo sub dir "
	check_eq "$c natively: the devices are regular files" \
		"$(as_user "$H"/dent $c d | sort | tr '\n' ' ')" \
		"b reg c reg f reg p fifo sub dir "
done
check_eq "find -type c finds the faked character device" "$(pick find-c <<<"$out")" "d/c"
check_eq "find -type b finds the faked block device" "$(pick find-b <<<"$out")" "d/b"
check_eq "find -type f finds only the regular file" "$(pick find-f <<<"$out")" "d/f"
check_eq "without the mapping (FAKEENV_NO_MAP=1) entries keep their real types" \
	"$(pick nomap <<<"$out")" "b reg c reg f reg p fifo sub dir "

# A directory's device is kept while its fd's token holds (no fstat per
# entry): a directory on another filesystem, opened after the first is
# closed, under the same fd number, must be looked up by its own device
# (the other one's would show its device as a regular file).
if fs_dir X ext4 && fs_dir Y tmpfs; then
	out=$(fe sh -c '
		for d in "$1" "$2"; do mknod "$d/c" c 1 2 && touch "$d/f" || exit 1; done
		for o in o d; do
			for c in readdir readdir64 readdir_r readdir64_r; do
				echo "$o$c $($H/dent -$o $c "$1" "$2" "$1" | sed "s#^$1 #X #; s#^$2 #Y #" | sort -u | tr "\n" " ")"
			done
		done
	' sh "$X" "$Y" 2>&1)
	for c in readdir readdir64 readdir_r readdir64_r; do
		check_eq "$c, fdopendir: ext4, tmpfs, ext4 under one fd number: each device shows" \
			"$(pick o$c <<<"$out")" "X c chr X f reg Y c chr Y f reg "
		check_eq "$c, opendir: the same" \
			"$(pick d$c <<<"$out")" "X c chr X f reg Y c chr Y f reg "
	done
else
	skip "one fd number over two filesystems" "no ext4 and tmpfs directory for the test user here"
fi
done_testing
