#!/bin/bash
# -s FILE and -i FILE: the state survives the session.  A tree with every
# kind of record (owners, modes, device nodes, a fifo, symlinks, hard
# links, names with spaces and newlines, a deep path, a renamed
# directory) is listed in the session that made it and again in a later
# session that loaded the journal: the listings must match.  Between the
# two, a file is deleted and its inode reused outside any session: its
# record is dropped (and counted on stderr), and the new file reads 0:0.
. "$(dirname "$0")/lib.sh"

# The listing: "uid:gid mode type major,minor name" for every entry;
# the names may hold newlines, so each ends in NUL and is shown with %q.
list() {
	find r -printf '%U:%G %m %y %p\0' | while IFS= read -r -d '' l; do
		p=${l#* * * }
		case $l in
		*" c "*|*" b "*) dev=$(stat -c '%t,%T' "$p") ;;
		*) dev=- ;;
		esac
		printf '%s %s %q\n' "${l%% r*}" "$dev" "$p"
	done | sort
}
export -f list

deep=r/deep
for i in $(seq 1 30); do deep=$deep/$(printf 'd%03d%.0s' $i; printf 'x%.0s' $(seq 1 90)); done

must "build" fe_opt -s "$W/j" -- bash -c '
	set -e
	umask 022
	mkdir -p r/bin r/dev r/etc "r/with space" r/tmp "r/old dir/sub"
	touch r/bin/su r/bin/wall "r/with space/a file" r/etc/shadow \
		"r/old dir/sub/f" r/victim "r/new
line"
	chown -R 0:0 r
	chmod 4755 r/bin/su
	chown 0:5 r/bin/wall && chmod 2755 r/bin/wall
	chown 0:42 r/etc/shadow && chmod 640 r/etc/shadow
	chmod 1777 r/tmp
	chown 1000:100 "r/with space/a file" "r/new
line"
	mknod r/dev/null c 1 3 && chmod 666 r/dev/null
	mknod r/dev/sda b 8 0 && chown 0:6 r/dev/sda
	mkfifo r/dev/initctl && chmod 600 r/dev/initctl
	ln -s ../bin/su r/etc/su-link && chown -h 7:8 r/etc/su-link
	ln r/bin/su r/bin/su-hard
	chown 1234:1234 r/victim && chmod 6755 r/victim
	chown 3:4 "r/old dir/sub/f"
	chown 9:9 "r/old dir/sub"
	mv "r/old dir" "r/new dir"
	mkdir -p "'"$deep"'" && touch "'"$deep"'/leaf" && chown 11:12 "'"$deep"'/leaf"
	list >before
'
check_cmd "journal written by -s" test -s "$W/j"
check_match "deep path made" "$(grep -c leaf "$W/before")" '^1$'

# Outside any session: the victim goes and new files are made until one
# takes its inode (ext4 and tmpfs reuse freed inodes at once).
vino=$(stat -c %i r/victim)
as_user rm r/victim
reused=
for i in $(seq 1 2000); do
	as_user touch "r/n$i"
	if [ "$(stat -c %i "r/n$i")" = "$vino" ]; then reused=r/n$i; break; fi
done

err=$(fe_opt -i "$W/j" -- bash -c 'list >after' 2>&1 >/dev/null)
check_cmd "-i session" test -s "$W/after"
grep -v victim "$W/before" >"$W/want"
grep -v ' r/n[0-9]' "$W/after" >"$W/got"
if diff "$W/want" "$W/got" >"$W/diff"; then ok "listing after load"; else fail "listing after load" "$(cat "$W/diff")"; fi
check_match "spot check: su" "$(grep ' r/bin/su$' "$W/after")" '^0:0 4755 f - '
check_match "spot check: sda" "$(grep ' r/dev/sda$' "$W/after")" '^0:6 644 b 8,0 '
check_match "spot check: renamed dir's child" "$(grep 'sub/f$' "$W/after")" '^3:4 644 f - r/new\\ dir/sub/f$'
# The dead file's record is not dropped for its path: it waits for its
# own birth time, which no new file has (the reused inode reads 0:0).
check_eq "nothing dropped by path at load" "$(grep -c 'dropped' <<<"$err")" 0
if [ -n "$reused" ]; then
	check_match "reused inode reads 0:0" "$(grep " $reused\$" "$W/after")" '^0:0 644 f '
else
	ok "reused inode reads 0:0 # SKIP the filesystem did not reuse the inode"
fi

# -i and -s together: load, change, save over the same file.
must "update" fe_opt -i "$W/j" -s "$W/j" -- chown 77:77 r/bin/wall
check_eq "update kept" "$(fe_opt -i "$W/j" -- stat -c %u:%g r/bin/wall)" "77:77"
check_eq "update did not lose the rest" "$(fe_opt -i "$W/j" -- stat -c '%u:%g %a' r/bin/su)" "0:0 4755"

# -i of a file that is not there: refused, nothing run.
out=$(fe_opt -i "$W/nope" -- touch ran 2>&1); rc=$?
check_eq "-i missing: status" "$rc" 125
check_match "-i missing: message" "$out" 'journal .*/nope: no such file'
check_cmd "-i missing: CMD not run" test ! -e ran

# -s of a session that changed nothing still writes a journal that loads.
must "empty save" fe_opt -s "$W/empty" -- true
check_eq "empty journal loads" "$(fe_opt -i "$W/empty" -- stat -c %u r/bin/su)" "0"
check_cmd "empty journal: fsck" as_user "$FE" fsck "$W/empty"

# A session without -s writes nothing, and checkpoint says why.
out=$(fe sh -c '"$FE" checkpoint' 2>&1); rc=$?
check_eq "checkpoint without a journal: status" "$rc" 125
check_match "checkpoint without a journal: message" "$out" 'memory only'

done_testing
