#!/bin/bash
# A file's record lives as long as its inode, whatever other processes do
# to its names at the same time.  First one by one: a chowned file held
# open keeps its owner when another process unlinks its last name or
# renames another file over it (the kernel keeps the inode, so fstat of
# the open file still shows it).  Then the churn helper: 16 processes
# create, fchown, rename, link and unlink in one directory for 5 s
# (FAKEENV_CHURN_SECONDS), on ext4 and on tmpfs; every file a process
# still holds open must show its last fchown, and every new file 0:0.
# Run natively as root, where the chowns are real, churn finds no
# mismatch: it asserts only what the kernel guarantees.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	touch f && chown 7:8 f && exec 3<f || exit 1
	$H/rmv unlink f >/dev/null || exit 1
	echo "unlinked $($H/churn --fstat 3)"
	touch g h && chown 9:10 g && exec 4<g || exit 1
	$H/rmv rename h g >/dev/null || exit 1
	echo "renamed-over $($H/churn --fstat 4)"
	echo "rename-winner $($H/st lstat g)"
' 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }
check_eq "a held file whose last name another process unlinked keeps its owner" \
	"$(get unlinked)" "7 8"
check_eq "a held file another process renamed a file over keeps its owner" \
	"$(get renamed-over)" "9 10"
check_eq "the file renamed over it shows its own owner at the name" \
	"$(get rename-winner)" "0 0 100644 0 0"

secs=${FAKEENV_CHURN_SECONDS:-5}
for kind in ext4 tmpfs; do
	name="churn on $kind: 16 processes for $secs s, every live file keeps its last chown"
	if ! fs_dir d "$kind"; then
		skip "$name" "no $kind directory here (as root: no loop mount or tmpfs mount)"
		continue
	fi
	out=$(fe "$H/churn" "$d" 16 "$secs" 2>&1)
	rc=$?
	tot=$(pick totals <<<"$out")
	echo "# $kind: $tot"
	if [ $rc -eq 0 ]; then
		ok "$name"
	else
		fail "$name" "exit $rc: ${tot:-no totals}; $(grep -v '^totals' <<<"$out" | head -5)"
	fi
done

# Records of files whose last name went are reclaimed: 300 made, chowned
# and removed in a --state session leave orphans (or are replaced where
# the filesystem hands their inode numbers out again), which the
# checkpoint reaps since no process has them open; one still held open
# stays, and shows its owner.
S=$W/reap-state
must "reap: the churn" fe_opt --state "$S" --linger 30 -- sh -c '
	for i in $(seq 1 300); do touch f$i; chown 5:5 f$i; rm f$i; done
	touch held; chown 6:6 held; exec 3<held; rm held
	"$FE" checkpoint >/dev/null && "$FE" status >st1 &&
	"$H/churn" --fstat 3 >held-owner'
check_match "reap: the checkpoint drops the orphans no process has open" \
	"$(grep -E '^(records|orphans):' st1 | tr -s ' ' | tr '\n' ' ')" \
	'^records: 1 orphans: 1 kept '
check_eq "reap: the one held open keeps its owner" "$(cat held-owner)" "6 6"
as_user "$FE" checkpoint --state "$S" >/dev/null
check_match "reap: once closed, it goes too" \
	"$(as_user "$FE" status --state "$S" | grep -E '^(records|orphans):' | tr -s ' ' | tr '\n' ' ')" \
	'^records: 0 orphans: 0 kept '
done_testing
