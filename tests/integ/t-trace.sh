#!/bin/bash
# --trace FILE (and FAKEENV_TRACE): one whole line per faked change, from
# the daemon alone: each kind of change with its old and new values, the
# program that made it, 8 processes at once with every line whole and the
# count right; a FIFO or another user's file refused as the trace; a full
# disk stops the trace (one message) and nothing else.
. "$(dirname "$0")/lib.sh"

TR=$W/trace
# One line: time, pid, program, op, path, then what changed.
LINE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z [0-9]+ [^ ]+ (chown|chmod|mknod|create|drop|rename|renamedir|xset|xdel) [^ ]+( [^ ]+)*$'
# A capability (v2, cap_net_raw), as setcap writes it.
CAP=0sAQAAAgAgAAAAAAAAAAAAAAAAAAA=
# line OP PATH: the trace's lines for OP on PATH.
line() { grep -E "^[^ ]+ [0-9]+ [^ ]+ $1 $2( |\$)" "$TR"; }

must "files" as_user sh -c 'mkdir d && touch d/su d/own d/cap d/gone d/old'
fe_opt --trace "$TR" -- sh -c '
	chown 7:8 d/own
	chmod 4755 d/su
	mknod d/tty c 4 64
	setfattr -n security.capability -v '"$CAP"' d/cap
	setfattr -x security.capability d/cap
	chown 3:3 d/gone && rm d/gone
	chown 5:5 d/old && mv d/old d/new
	install -m 2755 -o 0 -g 50 /dev/null d/inst
	touch d/plain'
check_eq "the command ran" "$?" 0
bad=$(grep -Ecv "$LINE" "$TR")
check_eq "every line is well-formed" "$bad" 0
check_match "chown: old and new owner" "$(line chown "$W/d/own")" " chown chown $W/d/own owner 0:0 -> 7:8\$"
check_match "chmod: the set-uid bit" "$(line chmod "$W/d/su")" " chmod chmod $W/d/su mode 0644 -> 4755\$"
check_match "mknod: type, rdev, owner, mode" "$(line mknod "$W/d/tty")" " mknod mknod $W/d/tty owner 0:0 -> 0:0 mode 0[0-7]{3} -> 0[0-7]{3} type - -> c rdev - -> 4,64\$"
check_match "a kept xattr set" "$(line xset "$W/d/cap")" " setfattr xset $W/d/cap xattr \\+security.capability\$"
check_match "a kept xattr removed" "$(line xdel "$W/d/cap")" " setfattr xdel $W/d/cap xattr -security.capability\$"
check_match "unlink of a recorded file" "$(line drop "$W/d/gone")" " rm drop $W/d/gone record live -> orphan\$"
check_match "rename of a recorded file" "$(line rename "$W/d/new")" " mv rename $W/d/new path $W/d/old -> $W/d/new\$"
check_match "install: its name, its chown and chmod" "$(line '(chown|chmod)' "$W/d/inst" | tr '\n' '|')" " install (chown|chmod) $W/d/inst "
check_eq "a file made as root, nothing faked: no line" "$(grep -c " $W/d/plain" "$TR")" 0

# The pid is the process that made the change.
out=$(fe_opt --trace "$W/t2" -- sh -c 'chown 9:9 d/su & echo $!; wait')
check_match "the pid is the changer's" "$(cat "$W/t2")" "^[^ ]+ $out chown chown "

# tar, and a directory's rename.
must "tree" as_user sh -c 'mkdir -p src/a && touch src/a/f src/g'
fe_opt --trace "$W/t3" -- sh -c '
	chown -R 4:4 src && tar cf src.tar src && rm -rf src2 && mkdir x &&
	tar xf src.tar -C x --same-owner && mv x/src x/moved' 2>&1
check_match "tar: its name" "$(grep " chown " "$W/t3" | grep "$W/x/src/g")" " tar chown $W/x/src/g owner 0:0 -> 4:4"
check_match "a directory's rename moves its records" "$(grep ' renamedir ' "$W/t3")" " mv renamedir $W/x/moved path $W/x/src -> $W/x/moved records 4\$"

# FAKEENV_TRACE does the same.
as_user env FAKEENV_TRACE="$W/t4" "$FE" -- chmod 1777 d
check_match "FAKEENV_TRACE" "$(cat "$W/t4" 2>&1)" " chmod chmod $W/d mode 0755 -> 1777\$"

# Off: no file, and no line anywhere.
fe chown 1:1 d/su
check_eq "off: no trace" "$(ls "$W" | grep -c '^t5')" 0

# 8 processes at once, 200 files each: every line whole, none lost.
must "many files" as_user sh -c 'for k in 1 2 3 4 5 6 7 8; do mkdir m$k; (cd m$k && touch $(seq -f f%g 1 200)); done'
fe_opt --trace "$W/t8" -- sh -c '
	for k in 1 2 3 4 5 6 7 8; do chown -R $k:$k m$k & done; wait'
check_eq "8 writers: every line" "$(grep -c ' chown chown ' "$W/t8")" 1608
check_eq "8 writers: every line well-formed" "$(grep -Ecv "$LINE" "$W/t8")" 0
per=$(awk '{ print $2 }' "$W/t8" | sort | uniq -c | awk '{ print $1 }' | sort -u | tr '\n' ' ')
check_eq "8 writers: 201 lines from each pid" "$per" "201 "
wrong=$(awk '{ split($5, p, "/"); d = p[length(p) - 1]; if ($6 != "owner") next;
	if (p[length(p)] ~ /^m[0-9]$/) d = p[length(p)];
	if ("m" substr($9, 1, index($9, ":") - 1) != d) print }' "$W/t8" | wc -l)
check_eq "8 writers: each line's owner matches its path" "$wrong" 0

# Refused: a FIFO (whose open would block), another user's file.
must "fifo" as_user mkfifo "$W/fifo"
out=$(fe_opt --trace "$W/fifo" -- true 2>&1); rc=$?
check_eq "a FIFO as the trace: exit 125" "$rc" 125
check_match "a FIFO as the trace: said" "$out" "trace $W/fifo: a FIFO, not a regular file"
if [ "$(id -u)" = 0 ]; then
	touch "$W/other" && chown 1:1 "$W/other" && chmod 666 "$W/other"
	out=$(fe_opt --trace "$W/other" -- true 2>&1); rc=$?
	check_eq "another user's file as the trace: exit 125" "$rc" 125
	check_match "another user's file as the trace: said" "$out" "owned by uid 1, not by you"
	check_eq "another user's file: untouched" "$(stat -c %s "$W/other")" 0
else
	skip "another user's file as the trace" "needs root to make one"
fi

# A full disk: the trace stops, the session does not.
if ! small_tmpfs FULL; then
	skip "a full disk stops the trace only" "needs root to mount a small tmpfs"
else
	must "trace file" as_user touch "$FULL/trace"
	as_user dd if=/dev/zero of="$FULL/fill" bs=4k >/dev/null 2>&1
	must "the disk is full" test "$(stat -f -c %a "$FULL")" = 0
	out=$(fe_opt --trace "$FULL/trace" -- sh -c '
		chown -R 6:6 m1 && stat -c %u:%g m1/f7 && exit 3' 2>&1); rc=$?
	check_eq "full disk: the command's exit status" "$rc" 3
	check_match "full disk: the changes landed" "$out" "(^|$(printf '\n'))6:6($(printf '\n')|\$)"
	check_eq "full disk: one message" "$(grep -c 'trace' <<<"$out")" 1
	check_match "full disk: it says why" "$out" "trace $FULL/trace: cannot write: No space left on device; the trace stops here"
	check_eq "full disk: no partial line" "$(as_user sh -c "tail -c1 '$FULL/trace' | od -An -c | tr -d ' '")" ""
fi

done_testing
