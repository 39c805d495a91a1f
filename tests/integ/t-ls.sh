#!/bin/bash
# fakeenv ls PATH...: what the session holds for each path, inside a
# session (its daemon) and outside with --state DIR (a running daemon,
# then the journal once none runs): owner, mode, type, rdev, kept
# xattrs, or "no record"; exit 1 for a path that does not exist.
. "$(dirname "$0")/lib.sh"

CAP=0sAQAAAgAgAAAAAAAAAAAAAAAAAAA=
S=$W/st
must "files" as_user sh -c 'mkdir d && touch d/own d/su d/cap d/none "d/a b"'
SETUP='chown 7:8 d/own && chmod 4755 d/su && mknod d/tty c 4 64 &&
	mknod d/sda b 8 0 && chown 0:6 d/sda && chmod 660 d/sda &&
	setfattr -n security.capability -v '$CAP' d/cap && chown 1000:100 "d/a b" &&
	mkdir d/sub && chmod 1777 d/sub'
LS='d/own d/su d/tty d/sda d/cap d/none d/sub d/a\ b'
LSA=(d/own d/su d/tty d/sda d/cap d/none d/sub "d/a b")
WANT="-rw-r--r-- 7 8 - d/own
-rwsr-xr-x 0 0 - d/su
crw-r--r-- 0 0 4,64 d/tty
brw-rw---- 0 6 8,0 d/sda
-rw-r--r-- 0 0 - d/cap security.capability
d/none: no record
drwxrwxrwt 0 0 - d/sub
-rw-r--r-- 1000 100 - d/a\\040b"

out=$(fe sh -c "umask 022; $SETUP && \"\$FE\" ls $LS" 2>&1)
check_eq "in a session: each kind of record and no record" "$out" "$WANT"

out=$(fe sh -c '"$FE" ls d/own d/missing d/none; echo "rc=$?"' 2>&1)
check_match "a missing path: said" "$out" "fakeenv: ls: d/missing: No such file or directory"
check_match "a missing path: the others still listed, exit 1" "$out" "d/own.*d/none: no record.*rc=1"

must "tree again" as_user sh -c 'rm -rf d && mkdir d && touch d/own d/su d/cap d/none "d/a b"'
fe_opt --state "$S" --linger 60 -- sh -c "umask 022; $SETUP" >/dev/null 2>&1
out=$(as_user "$FE" ls --state "$S" "${LSA[@]}" 2>&1)
check_eq "--state, its daemon running" "$out" "$WANT"
pids=$(session_pids "$DAEMON")
[ -n "$pids" ] && kill $pids
wait_until 10 sh -c "! kill -0 $pids 2>/dev/null"
out=$(as_user "$FE" ls --state "$S" "${LSA[@]}" 2>&1)
check_eq "--state, no daemon: the journal" "$out" "$WANT"

out=$(as_user "$FE" ls d/own 2>&1); rc=$?
check_eq "outside any session, no --state: exit 125" "$rc" 125
check_match "outside any session: said" "$out" "not in a session"

out=$(as_user "$FE" ls 2>&1); rc=$?
check_eq "no PATH: usage, exit 2" "$rc" 2

done_testing
