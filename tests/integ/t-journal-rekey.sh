#!/bin/bash
# A tree whose filesystem changed between sessions (a reboot, a remount,
# the tree copied to another filesystem at the same path): st_dev and the
# inode numbers differ, the paths are the same.  Every record is re-keyed
# by its path, the count is reported, and the owners read back.  Needs
# root for the mounts (the sessions still run as the test user).
. "$(dirname "$0")/lib.sh"

M=$W/mnt
mkdir "$M"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o mode=0777 fe-a "$M" 2>/dev/null; then
	ok "re-keyed after a remount # SKIP cannot mount a tmpfs here (needs root)"
	done_testing
fi
trap '_rc=$?; umount "$M" 2>/dev/null; (exit $_rc); _cleanup' EXIT

must "build" fe_opt -s "$W/j" -- sh -c "
	mkdir -p '$M/r/dev' '$M/r/bin' && touch '$M/r/bin/su' '$M/r/x'
	chown -R 0:0 '$M/r' && chmod 4755 '$M/r/bin/su'
	mknod '$M/r/dev/console' c 5 1 && chown 3:4 '$M/r/x'"
dev1=$(stat -c %d "$M/r/x")
# A second filesystem, mounted while the first still is, so that it gets
# another device number; the same tree copied into it by root (the real
# owner stays the test user), then moved to the same path.
M2=$W/mnt2
mkdir "$M2"
must "second mount" mount -t tmpfs -o mode=0777 fe-b "$M2"
trap '_rc=$?; umount "$M" "$M2" 2>/dev/null; (exit $_rc); _cleanup' EXIT
tar -C "$M" -cf - r | tar -C "$M2" -xpf -
umount "$M"
must "move" mount --move "$M2" "$M"
dev2=$(stat -c %d "$M/r/x")
check_ne "the device changed" "$dev2" "$dev1"

err=$(fe_opt -i "$W/j" -- sh -c "stat -c '%u:%g %a %F %t,%T %n' '$M/r/x' '$M/r/bin/su' '$M/r/dev/console' >'$W/out'" 2>&1)
check_match "re-keying reported" "$err" 'journal .*/j: [0-9]+ records: [0-9]+ kept, [1-9][0-9]* re-keyed \(st_dev changed\), 0 dropped'
check_eq "owners and modes follow the paths" "$(cat "$W/out")" "3:4 644 regular empty file 0,0 $M/r/x
0:0 4755 regular empty file 0,0 $M/r/bin/su
0:0 644 character special file 5,1 $M/r/dev/console"
umount "$M"
done_testing
