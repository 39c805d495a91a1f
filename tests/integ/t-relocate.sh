#!/bin/bash
# fakeenv state relocate OLD NEW: a tree moved (mv) or restored (tar c |
# tar x, new inodes) outside any session keeps its records, found by
# their new paths at the next load.  Without it a restored tree loses
# them.  Refused while a daemon runs on the state directory.  OLD and NEW
# are made absolute against the working directory, no symlink resolved.
. "$(dirname "$0")/lib.sh"

if ! fs_dir D ext4; then
	skip "relocate" "no ext4 here (needs root for an image, or /tmp on ext4)"
	done_testing
fi
S=$W/state
daemons() { session_pids "$DAEMON" | wc -l; }
gone() { [ "$(daemons)" = 0 ]; }
show() { fe_opt --state "$S" --linger 0 -- stat -c '%u:%g %a %F %t,%T' "$@"; }
want='3:4 644 regular empty file 0,0
0:0 4755 regular empty file 0,0
0:0 644 character special file 5,1
7:7 750 directory 0,0'

must "build" fe_opt --state "$S" --linger 0 -- sh -c "
	mkdir -p '$D/src/dev' '$D/src/bin' '$D/src/sub' && touch '$D/src/bin/su' '$D/src/x'
	chown -R 0:0 '$D/src' && chmod 4755 '$D/src/bin/su' && chown 3:4 '$D/src/x'
	mknod '$D/src/dev/console' c 5 1 && chown 7:7 '$D/src/sub' && chmod 750 '$D/src/sub'"
wait_until 20 gone

# A plain mv on one filesystem: the inodes stay, only the path hints go
# stale; relocate (given relative paths, with '.', '..' and a trailing
# '/') rewrites them and the owners show under the new path.
must "mv" as_user mv "$D/src" "$D/moved"
out=$(as_user sh -c "cd '$D/moved/sub' && '$FE' state relocate ../../src ./../../moved/ --state '$S'" 2>&1)
check_match "relocate after mv: count" "$out" "^relocated 4 records from $D/src to $D/moved in $S/journal$"
check_eq "after mv and relocate: owners under the new path" \
	"$(show "$D/moved/x" "$D/moved/bin/su" "$D/moved/dev/console" "$D/moved/sub" 2>/dev/null)" "$want"
wait_until 20 gone
check_cmd "the session rewrote the journal: every record at its path" \
	as_user "$FE" fsck --against-fs --state "$S"

# A restore at another path: new inodes, new birth times.
must "pack" as_user tar -C "$D/moved" -cf "$T/cache.tar" .
must "remove" as_user rm -rf "$D/moved"
must "restore" as_user sh -c "mkdir '$D/restored' && tar -C '$D/restored' -xf '$T/cache.tar'"
as_user cp "$S/journal" "$W/j"
check_eq "restored without relocate: the records are lost" \
	"$(fe_opt -i "$W/j" -- stat -c '%u:%g %a' "$D/restored/x" "$D/restored/bin/su" 2>/dev/null)" "0:0 644
0:0 755"

# Refused while a daemon runs on DIR: the journal stays as it was.
fe_opt --state "$S" --linger 0 -- sh -c "touch '$W/up'; while [ ! -e '$W/stop' ]; do sleep 0.1; done" &
bg=$!
wait_until 20 test -e "$W/up"
cp "$S/journal" "$T/before"
out=$(as_user "$FE" state relocate "$D/moved" "$D/restored" --state "$S" 2>&1); rc=$?
check_eq "relocate while a daemon runs: exit 125" "$rc" 125
check_match "relocate while a daemon runs: says why" "$out" "a daemon runs on $S"
check_cmd "relocate while a daemon runs: journal untouched" cmp "$S/journal" "$T/before"
touch "$W/stop"
wait $bg
wait_until 20 gone

out=$(as_user "$FE" state relocate "$D/moved" "$D/restored" --state "$S" 2>&1)
check_match "relocate after a restore: count" "$out" "^relocated 4 records"
err=$(fe_opt --state "$S" --linger 0 -- stat -c '%u:%g %a %F %t,%T' "$D/restored/x" "$D/restored/bin/su" "$D/restored/dev/console" "$D/restored/sub" 2>&1 >"$W/out")
check_eq "after a restore and relocate: owners back" "$(cat "$W/out")" "$want"
wait_until 20 gone
check_match "the load says what it relocated" "$(cat "$S/log" 2>/dev/null) $err" "4 relocated \(found at their new paths\)"
check_cmd "and the journal holds them by their new inodes" \
	as_user "$FE" fsck --against-fs --state "$S"

# A journal FILE (-s FILE), relocated in place (OLD = NEW): a tree
# restored at its own path.
must "pack again" as_user tar -C "$D/restored" -cf "$T/cache2.tar" .
as_user cp "$S/journal" "$W/j2"
must "restore in place" as_user sh -c "rm -rf '$D/restored' && mkdir '$D/restored' && tar -C '$D/restored' -xf '$T/cache2.tar'"
out=$(as_user "$FE" state relocate "$D/restored" "$D/restored" "$W/j2" 2>&1)
check_match "relocate a FILE in place: count" "$out" "^relocated 4 records"
check_eq "restored in place and relocated: owners back" \
	"$(fe_opt -i "$W/j2" -- stat -c '%u:%g %a' "$D/restored/x" "$D/restored/bin/su" 2>/dev/null)" "3:4 644
0:0 4755"

# Component boundaries: /a is not /ab's parent.
out=$(as_user "$FE" state relocate "$D/restore" "$D/elsewhere" "$W/j2" 2>&1)
check_match "a prefix that is not a component: nothing moved" "$out" "^no record under $D/restore in"
out=$(as_user "$FE" state relocate "$D/a" 2>&1); rc=$?
check_eq "usage: OLD without NEW" "$rc" 2
done_testing
