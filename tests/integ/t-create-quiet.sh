#!/bin/bash
# A new regular file that needs no record is made without a look at it
# (no statx), by open(O_CREAT) as by fopen, but only while nothing could
# need one:
#   umask  a process learns from the first file it makes that its umask
#          keeps owner read and write; umask(2), by libc's name or by
#          syscall(), makes it learn again.  A file made under umask 0277
#          shows 0400 and still gets owner access for the real user, so
#          that root writes it as it may write any file.  A process that
#          only rewrites files reads its umask from /proc instead.
#   blind  a record without a birth time (a filesystem without them) left
#          at an inode number by a file deleted out of the session's
#          sight: a new file the kernel gives that number is new, 0:0.
#          While the table holds such a record every creation looks.
. "$(dirname "$0")/lib.sh"

out=$(fe "$H/ops" umask 022 , create a 0644 , create b 0644 , fopen c , \
	mode a , mode b , mode c , \
	umask 0277 , create d 0644 , fopen e , mode d , mode e , write d , \
	write e , sysumask 022 , create f 0644 , sysumask 0277 , \
	create g 0644 , mode f , mode g , write g 2>&1)
check_eq "umask: the session ran" "$?" 0
check_eq "umask: what the session shows" "$out" "0:0 0644
0:0 0644
0:0 0644
0:0 0400
0:0 0400
0:0 0644
0:0 0400"
check_eq "umask 022: real modes as made" "$(stat -c %a a b c f)" "644
644
644
644"
check_eq "umask 0277: owner access for the real user (open, fopen, syscall)" "$(stat -c %a d e g)" "600
600
600"

# A process that only rewrites a file asks /proc for its umask after a
# few fopens: under 0277, inherited, a new file still gets owner access.
out=$(fe sh -c 'umask 0277; set -- create x 0600; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do set -- "$@" , fopen x; done; exec "$H/ops" "$@" , fopen y , mode y , write y' 2>&1)
check_eq "umask 0277 inherited: fopen after rewrites" "$out" "0:0 0400"
check_eq "umask 0277 inherited: owner access for the real user" \
	"$(stat -c %a y)" "600"
out=$(fe sh -c 'umask 022; set -- create z 0600; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do set -- "$@" , fopen z; done; exec "$H/ops" "$@" , fopen w , mode w , write w' 2>&1)
check_eq "umask 022 inherited: fopen after rewrites" "$out" "0:0 0644"

# blind: on an ext4 without birth times (128-byte inodes), which hands a
# freed inode number out again at once, two files get records and are
# removed outside the session while it runs; then one new file by open,
# one by fopen.
if ! fs_dir D ext4-nobtime; then
	skip "blind: a new file at a dead blind record's inode" \
		"no ext4 without birth times (made as root only)"
	done_testing
fi
as_user touch "$D/old1" "$D/old2"
inos=$(stat -c %i "$D/old1" "$D/old2" | sort -n | tr '\n' ' ')
fe "$H/ops" chown "$D/old1" 77 77 , chown "$D/old2" 78 78 , \
	touch "$W/ready" , wait "$W/removed" , create "$D/new1" 0644 , \
	fopen "$D/new2" , stat "$D/new1" , stat "$D/new2" >"$W/blind" 2>&1 &
p=$!
wait_until 30 test -e "$W/ready"
as_user rm "$D/old1" "$D/old2"
touch "$W/removed"
wait $p
check_eq "blind: the session ran" "$?" 0
if [ "$(stat -c %i "$D/new1" "$D/new2" | sort -n | tr '\n' ' ')" != "$inos" ]; then
	skip "blind: a new file at a dead blind record's inode" \
		"the kernel gave the new files other inode numbers"
	done_testing
fi
check_eq "blind: new files at the dead records' inodes are new (open, fopen)" \
	"$(cat "$W/blind")" "0:0
0:0"
done_testing
