#!/bin/bash
# A filesystem whose device number changed between sessions (a reboot, a
# remount on another device): st_dev differs, the inodes and their birth
# times are the same.  The load finds the filesystem again from a few
# records' paths and re-keys all its records at once, the count is
# reported, and the owners read back.  A copy of the tree is new files,
# with new birth times: the records do not follow it.  Needs root for the
# mounts (the sessions still run as the test user).
. "$(dirname "$0")/lib.sh"

M=$W/mnt
mkdir "$M"
img=$T/rekey.img
if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null ||
	! truncate -s 64M "$img" ||
	! mkfs.ext4 -q -E root_owner="$TUID:$TGID" "$img" 2>/dev/null ||
	! loop1=$(losetup -f --show "$img" 2>/dev/null); then
	skip "re-keyed after a remount" "cannot make and mount an ext4 image here (needs root and e2fsprogs)"
	done_testing
fi
loops=("$loop1")
trap '_rc=$?; umount "$M" 2>/dev/null; for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done; (exit $_rc); _cleanup' EXIT
must "mount" mount "$loop1" "$M"

must "build" fe_opt -s "$W/j" -- sh -c "
	mkdir -p '$M/r/dev' '$M/r/bin' && touch '$M/r/bin/su' '$M/r/x'
	chown -R 0:0 '$M/r' && chmod 4755 '$M/r/bin/su'
	mknod '$M/r/dev/console' c 5 1 && chown 3:4 '$M/r/x'"
dev1=$(stat -c %d "$M/r/x")
must "umount" umount "$M"
# The same image on another loop device: another st_dev, same inodes.
# The freed device is taken by a second image first, so that the kernel
# cannot hand the first one its old number back.
must "detach" losetup -d "$loop1"
truncate -s 1M "$T/hold.img"
hold=$(losetup -f --show "$T/hold.img") && loops+=("$hold")
loop2=$(losetup -f --show "$img") && loops+=("$loop2")
must "mount again" mount "$loop2" "$M"
dev2=$(stat -c %d "$M/r/x")
check_ne "the device changed" "$dev2" "$dev1"

err=$(fe_opt -i "$W/j" -s "$W/j" -- sh -c "stat -c '%u:%g %a %F %t,%T %n' '$M/r/x' '$M/r/bin/su' '$M/r/dev/console' >'$W/out'" 2>&1)
check_match "re-keying reported" "$err" 'journal .*/j: [0-9]+ records: [0-9]+ kept, [1-9][0-9]* re-keyed \(st_dev changed\), 0 dropped'
check_eq "owners and modes follow the filesystem" "$(cat "$W/out")" "3:4 644 regular empty file 0,0 $M/r/x
0:0 4755 regular empty file 0,0 $M/r/bin/su
0:0 644 character special file 5,1 $M/r/dev/console"

# Renamed outside any session after that session saved the new st_dev:
# still found, by its inode and birth time, not its path.
as_user mv "$M/r" "$M/moved"
out=$(fe_opt -i "$W/j" -- stat -c '%u:%g %a' "$M/moved/x" "$M/moved/bin/su" 2>&1)
check_eq "a remounted and renamed tree keeps its records" "$out" "3:4 644
0:0 4755"

# A copy is new files: nothing of the records applies to it.
as_user cp -a "$M/moved" "$M/copy"
out=$(fe_opt -i "$W/j" -- stat -c '%u:%g %a' "$M/copy/x" "$M/copy/bin/su" 2>&1)
check_eq "a copy of the tree is new files, with no record" "$out" "0:0 644
0:0 755"
done_testing
