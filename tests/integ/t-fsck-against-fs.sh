#!/bin/bash
# fakeenv fsck --against-fs: each record against the file at its path,
# as the next load treats it, changing nothing: kept (no line), gone,
# replaced by another file, of another type, re-keyed after a remount on
# another loop device, relocated; the summary's counts; exit 0 when all
# are found, 1 when not.  The remount needs root (sessions still run as
# the test user).
. "$(dirname "$0")/lib.sh"

M=$W/mnt
mkdir "$M"
img=$T/fsck.img
if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null ||
	! truncate -s 64M "$img" ||
	! mkfs.ext4 -q -E root_owner="$TUID:$TGID" "$img" 2>/dev/null ||
	! loop1=$(losetup -f --show "$img" 2>/dev/null); then
	skip "fsck --against-fs" "cannot make and mount an ext4 image here (needs root and e2fsprogs)"
	done_testing
fi
loops=("$loop1")
trap '_rc=$?; umount "$M" 2>/dev/null; for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done; (exit $_rc); _cleanup' EXIT
must "mount" mount "$loop1" "$M"

must "build" fe_opt -s "$W/j" -- sh -c "
	mkdir '$M/r' && cd '$M/r' && touch keep gone replaced retyped
	chown 1:1 keep gone replaced retyped"
sum() { tail -n 1 <<<"$1"; }

out=$(as_user "$FE" fsck --against-fs "$W/j" 2>&1); rc=$?
check_eq "all there: exit 0" "$rc" 0
check_eq "all there: the summary only" "$out" "$W/j: 4 records: 4 kept as they are, 0 re-keyed (st_dev changed), 0 relocated, 0 gone, 0 replaced, 0 of another type, 0 with a bad device number"

# Outside any session: one removed, one replaced by another file (made
# first, so that it is another inode), one by a directory.
must "change the files" as_user sh -c "cd '$M/r' && rm gone && touch new && mv new replaced && rm retyped && mkdir retyped"
cp "$W/j" "$T/before"
out=$(as_user "$FE" fsck --against-fs "$W/j" 2>&1); rc=$?
check_eq "gone and replaced: exit 1" "$rc" 1
check_match "gone: its line" "$out" "(^|
)$M/r/gone: gone: nothing at its path; the load keeps it by its inode number"
check_match "replaced: its line" "$out" "(^|
)$M/r/replaced: replaced: another file at its path \(st_dev [0-9]+:[0-9]+ inode [0-9]+, the record's is inode [0-9]+\);"
check_match "type changed: its line" "$out" "(^|
)$M/r/retyped: type changed: a directory at its path, the record is of a regular file;"
check_no "kept: no line" grep -q "$M/r/keep:" <<<"$out"
check_eq "gone and replaced: the summary" "$(sum "$out")" "$W/j: 4 records: 1 kept as they are, 0 re-keyed (st_dev changed), 0 relocated, 1 gone, 1 replaced, 1 of another type, 0 with a bad device number"
check_cmd "nothing changed" cmp "$W/j" "$T/before"
check_eq "a session agrees: only the kept one shows its owner" \
	"$(fe_opt -i "$W/j" -- stat -c %u:%g "$M/r/keep" "$M/r/replaced" "$M/r/retyped" 2>/dev/null)" "1:1
0:0
0:0"

# Relocated records are found by their paths (and are listed as such).
must "a fresh journal" fe_opt -s "$W/j2" -- sh -c "cd '$M/r' && rm -rf retyped && touch retyped && chown 2:2 keep replaced retyped"
must "move it" as_user mv "$M/r" "$M/r2"
must "relocate" as_user "$FE" state relocate "$M/r" "$M/r2" "$W/j2"
out=$(as_user "$FE" fsck --against-fs "$W/j2" 2>&1); rc=$?
check_eq "relocated: exit 0" "$rc" 0
check_match "relocated: its line" "$out" "(^|
)$M/r2/keep: relocated: found at its path \(inode [0-9]+\)"
check_match "relocated: the summary" "$(sum "$out")" ": 3 records: 0 kept as they are, 0 re-keyed \(st_dev changed\), 3 relocated, 0 gone"

# The same image on another loop device: another st_dev, same inodes.
dev1=$(stat -c %d "$M/r2/keep")
must "umount" umount "$M"
must "detach" losetup -d "$loop1"
truncate -s 1M "$T/hold.img"
hold=$(losetup -f --show "$T/hold.img") && loops+=("$hold")
loop2=$(losetup -f --show "$img") && loops+=("$loop2")
must "mount again" mount "$loop2" "$M"
check_ne "the device changed" "$(stat -c %d "$M/r2/keep")" "$dev1"
must "move back" as_user mv "$M/r2" "$M/r"
out=$(as_user "$FE" fsck --against-fs "$W/j" 2>&1); rc=$?
check_match "re-keyed: its line" "$out" "(^|
)$M/r/keep: re-keyed: its filesystem is st_dev [0-9]+:[0-9]+ now, was [0-9]+:[0-9]+; the load keeps it there"
check_match "re-keyed: the summary" "$(sum "$out")" ": 4 records: 0 kept as they are, 1 re-keyed \(st_dev changed\), 0 relocated, 1 gone, 2 replaced, 0 of another type"

# --state DIR, and usage.
S=$W/state
must "a state" fe_opt --state "$S" --linger 0 -- chown 5:5 "$M/r/keep"
wait_until 20 test -z "$(session_pids "$DAEMON")"
check_cmd "--state DIR" as_user "$FE" fsck --against-fs --state "$S"
check_cmd "FAKEENV_STATE" as_user env FAKEENV_STATE="$S" "$FE" fsck --against-fs
out=$(as_user "$FE" fsck --against-fs "$W/nonexistent" 2>&1); rc=$?
check_eq "a missing journal: exit 2" "$rc" 2
out=$(as_user "$FE" fsck --against-fs --salvage "$W/j" 2>&1); rc=$?
check_eq "with --salvage: usage" "$rc" 2
done_testing
