#!/bin/bash
# Debian's busybox-static in a session (issue 13): a static program the
# preload never reaches, faked below libc.  Its id, chown, chmod 4755,
# mknod, stat, ls -ln, tar cf and cp -a must give what coreutils gives in
# the same session; its children (busybox sh running coreutils' stat, a
# dynamic program under the static one's inherited filter) too, and in a
# nested session, also when busybox sh starts it.  With
# FAKEENV_SECCOMP=never it escapes as before: real ids, EPERM.
. "$(dirname "$0")/lib.sh"

BB=/bin/busybox
export BB
if [ ! -x "$BB" ]; then
	skip "busybox in a session" "busybox-static is not installed"
	done_testing
fi
if readelf -l "$BB" 2>/dev/null | grep -q 'Requesting program interpreter'; then
	skip "busybox in a session" "$BB is dynamic (package busybox); the test wants busybox-static"
	done_testing
fi

F='%u:%g %a %F %t,%T'
export F
# ls -ln's mode, owner and group (and major,minor for a device): busybox
# pads its columns as coreutils does not.
lsn='awk '\''{ d = $1 ~ /^[cb]/ ? " " $5 $6 : ""; print $1, $3 ":" $4 d, $NF }'\'
# GNU tar -tv, one line an entry: mode, owner, device, name.
tarv='awk '\''{ print $1, $2, ($1 ~ /^[cb]/ ? $3 " " : "") $NF }'\'
export lsn tarv

out=$(fe sh -c '
	umask 022
	echo "id-u $($BB id -u)"
	echo "id-g $($BB id -g)"
	echo "id $($BB id)"
	echo "coreutils-id $(id)"
	touch f; echo "chown $($BB chown 7:8 f && echo ok)"
	echo "chmod $($BB chmod 4755 f && echo ok)"
	echo "mknod $($BB mknod c0 c 1 3 && echo ok)"
	mkdir dir; touch dir/x dir/y
	$BB chown 7:8 dir/x && $BB chmod 4755 dir/x && $BB mknod dir/c0 c 4 64 &&
		$BB chown -h 3:4 dir/c0 && $BB mkdir dir/sub && $BB chown 1000:1000 dir/sub &&
		$BB chmod 2750 dir/sub && echo "tree ok"
	chown 11:12 dir/y && chmod 6711 dir/y
	for p in f c0 dir dir/x dir/y dir/c0 dir/sub; do
		echo "bb $p $($BB stat -c "$F" $p)"
		echo "cu $p $(stat -c "$F" $p)"
	done
	echo "bb-ls $($BB ls -ln f c0 | eval "$lsn" | tr "\n" "|")"
	echo "cu-ls $(ls -ln f c0 | eval "$lsn" | tr "\n" "|")"
	$BB tar cf a.tar dir && echo "bb-tar ok"
	tar cf b.tar dir
	echo "bb-tarv $(tar --numeric-owner -tvf a.tar | eval "$tarv" | LC_ALL=C sort | tr "\n" "|")"
	echo "cu-tarv $(tar --numeric-owner -tvf b.tar | eval "$tarv" | LC_ALL=C sort | tr "\n" "|")"
	$BB cp -a dir dir2 && echo "cp ok"
	for p in dir2/x dir2/y dir2/c0 dir2/sub; do echo "cp $p $(stat -c "$F" $p)"; done
	echo "child $($BB sh -c "/usr/bin/stat -c %u:%g f; /usr/bin/id -u" | tr "\n" " ")"
	echo "grandchild $($BB sh -c "/bin/sh -c \"$BB stat -c %u:%g dir/y\"")"
	echo "bb-chown-child $($BB sh -c "$BB chown 21:22 f; /usr/bin/stat -c %u:%g f")"
	touch n; chown 5:6 n
	echo "nested $($FE -- $BB stat -c %u:%g n)"
	echo "nested-from-static $( ($BB sh -c "$FE -- $BB stat -c %u:%g n; $FE -- $BB chown 6:7 n"
		stat -c %u:%g n) | tr "\n" " ")"
' 2>&1)
check_eq "the session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }

check_eq "busybox id -u is 0" "$(get id-u)" 0
check_eq "busybox id -g is 0" "$(get id-g)" 0
check_eq "busybox id shows what coreutils' id shows (names aside)" \
	"$(get id | sed 's/([^)]*)//g')" "$(get coreutils-id | sed 's/([^)]*)//g')"
check_eq "busybox chown 7:8 f succeeds" "$(get chown)" ok
check_eq "busybox chmod 4755 f succeeds" "$(get chmod)" ok
check_eq "busybox mknod c0 c 1 3 succeeds" "$(get mknod)" ok
check_eq "busybox chown, chmod, mknod and mkdir build a tree" "$(get tree)" ok
check_eq "coreutils stat sees busybox's chown and chmod" "$(get "cu f")" \
	"7:8 4755 regular empty file 0,0"
check_eq "coreutils stat sees busybox's device" "$(get "cu c0")" \
	"0:0 644 character special file 1,3"
for p in f c0 dir dir/x dir/y dir/c0 dir/sub; do
	check_eq "busybox stat = coreutils stat: $p" "$(get "bb $p")" "$(get "cu $p")"
done
check_eq "busybox ls -ln shows the faked owners, modes and device" "$(get bb-ls)" \
	"crw-r--r-- 0:0 1,3 c0|-rwsr-xr-x 7:8 f|"
check_eq "busybox ls -ln = coreutils ls -ln" "$(get bb-ls)" "$(get cu-ls)"
tree='-rws--s--x 11/12 dir/y|-rwsr-xr-x 7/8 dir/x|crw-r--r-- 3/4 4,64 dir/c0|drwxr-s--- 1000/1000 dir/sub/|drwxr-xr-x 0/0 dir/|'
check_eq "busybox tar cf succeeds" "$(get bb-tar)" ok
check_eq "busybox tar: GNU tar lists the faked owners, modes and device" "$(get bb-tarv)" \
	"$tree"
check_eq "busybox tar's archive lists as GNU tar's of the same tree" "$(get bb-tarv)" "$(get cu-tarv)"
check_eq "busybox tar's archive read outside the session" \
	"$(tar --numeric-owner -tvf a.tar 2>&1 | eval "$tarv" | LC_ALL=C sort | tr '\n' '|')" "$tree"
check_eq "busybox cp -a succeeds" "$(get cp)" ok
check_eq "busybox cp -a keeps the set-uid file's owner and mode" "$(get "cp dir2/x")" \
	"7:8 4755 regular empty file 0,0"
check_eq "busybox cp -a keeps the other owner and set-id bits" "$(get "cp dir2/y")" \
	"11:12 6711 regular empty file 0,0"
check_eq "busybox cp -a copies the device as a device" "$(get "cp dir2/c0")" \
	"3:4 644 character special file 4,40"
check_eq "busybox cp -a keeps the directory's owner and setgid" "$(get "cp dir2/sub")" \
	"1000:1000 2750 directory 0,0"
check_eq "busybox sh's dynamic children (coreutils stat, id) are faked" \
	"$(get child)" "7:8 0 "
check_eq "static, then dynamic, then static again: busybox stat" "$(get grandchild)" "11:12"
check_eq "a chown by busybox under busybox sh, seen by coreutils" "$(get bb-chown-child)" "21:22"
check_eq "nested session: busybox in the inner one sees the outer's chown" "$(get nested)" "5:6"
check_eq "nested session launched by busybox sh: busybox stat, then chown seen outside it" \
	"$(get nested-from-static)" "5:6 6:7 "

# Outside: nothing real.
check_eq "outside: f is the test user's, not set-uid" "$(stat -c '%u:%g %a' f)" "$TUID:$TGID 755"
check_eq "outside: c0 is a plain file" "$(stat -c %F c0)" "regular empty file"

# --- spawned, not exec'd: glibc's posix_spawn child runs no code of ours ----
rm -rf "$W"/*
printf 'all:\n\t%s chown 3:4 mk\n\t%s stat -c %%u:%%g mk\n' "$BB" "$BB" >"$W/Makefile"
out=$(fe sh -c '
	touch mk
	echo "spawn $($H/spawn -e PATH=/usr/bin:/bin posix_spawn '"$BB"' id -u)"
	echo "spawnp $(PATH=/bin:/usr/bin $H/spawn -e PATH=/bin posix_spawnp busybox id -u)"
	echo "spawn-ids $($H/spawn -u 1234 -g 55 -G 55,56 -e PATH=/usr/bin:/bin posix_spawn '"$BB"' id)"
	echo "make $(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory 2>&1)"
	echo "made $(stat -c %u:%g mk)"
' 2>&1)
check_eq "posix_spawn of busybox id -u: faked" "$(get spawn)" 0
check_eq "posix_spawnp of busybox id -u: faked" "$(get spawnp)" 0
check_match "posix_spawn after setuid: the armed program has the spawner's fake ids" \
	"$(get spawn-ids)" "^uid=1234 gid=55 groups=55,56"
check_eq "make runs a recipe's busybox without a shell: faked" "$(get make)" "3:4"
check_eq "... and the chown it made is the session's" "$(get made)" "3:4"

# --- files made by a static program -----------------------------------------
rm -rf "$W"/*
out=$(fe sh -c '
	'"$BB"' sh -c "umask 027; echo x > made; touch t2; mkdir d; mkfifo p"
	echo "modes $(stat -c %a made t2 d | tr "\n" " ")"
	'"$BB"' sh -c "(sleep 1; echo hi > p) & cat p"
	echo "owner $(stat -c %u:%g made)"
	'"$BB"' ln -s /proc/self/mounts mtab
	echo "link $(readlink mtab)"
' 2>&1)
check_eq "busybox sh's files take its umask" "$(get modes)" "640 640 750 "
check_eq "a FIFO opened with O_CREAT by a static program works (the kernel's open)" \
	"$(sed -n 2p <<<"$out")" "hi"
check_eq "a file a static program made is root's in the session" "$(get owner)" "0:0"
check_eq "a symlink a static program makes keeps its text (/proc/self is not rewritten)" \
	"$(get link)" "/proc/self/mounts"

# --- a process of the user hands the supervisor a fd that is no listener ----
# It must be refused, not polled for ever: the launcher (the supervisor's
# process) stays idle, and the next static program is served.
rm -rf "$W"/*
out=$(fe sh -c '
	echo "arm $($H/fakearm)"
	set -- $(cut -d" " -f14,15 /proc/$PPID/stat); before=$(($1 + $2))
	sleep 1
	set -- $(cut -d" " -f14,15 /proc/$PPID/stat); after=$(($1 + $2))
	echo "ticks $((after - before))"
	echo "id '"$($BB id -u)"'"
' 2>&1)
check_eq "a bogus listener is handed over" "$(get arm)" "handed"
ticks=$(get ticks)
[ "${ticks:-999}" -le 20 ] && ok "... and refused: the launcher stays idle ($ticks ticks in 1 s)" ||
	fail "... and refused: the launcher stays idle" "$ticks clock ticks in 1 s: $out"
check_eq "... and the next static program is served" "$(get id)" 0

# --- the supervisor dies: its targets get an error, never a hang --------------
rm -rf "$W"/*
# The launcher is the supervisor: kill it under a static program that goes
# on (setsid: out of CMD's group, which the daemon kills), then that
# program's next trapped call must fail at once (ENOSYS); it reports on an
# fd opened while the supervisor lived, since opening one is trapped too.
# CMD's parent is the launcher.  The kill waits for that fd ("ready"):
# before it, the program's own open would meet the dead supervisor (an
# ASan build under load lost that race).
as_user sh -c '"$1" -- sh -c "setsid $2 sh -c \"exec 3>$3/after; $2 touch $3/x; echo ready >&3; sleep 3; $2 chown 1:1 $3/x 2>&3; echo rc \\\$? >&3\" & echo \$PPID >$3/launcher; sleep 30"' \
	sh "$FE" "$BB" "$W" >/dev/null 2>&1 &
for _ in $(seq 100); do [ -s "$W/launcher" ] && grep -q "^ready" "$W/after" 2>/dev/null && break; sleep 0.1; done
kill -9 "$(cat "$W/launcher")" 2>/dev/null
for _ in $(seq 100); do grep -q "^rc" "$W/after" 2>/dev/null && break; sleep 0.1; done
check_match "a static program left after the supervisor died: its chown fails (ENOSYS), nothing hangs" \
	"$(cat "$W/after" 2>/dev/null)" "Function not implemented.*rc 1"

# --- never: busybox escapes -------------------------------------------------
rm -rf "$W"/*
out=$(as_user env FAKEENV_SECCOMP=never "$FE" -- sh -c '
	touch f g && chown 7:8 g
	echo "id-u $($BB id -u)"
	echo "chown $($BB chown 7:8 f 2>&1 >/dev/null | grep -c "Operation not permitted")"
	echo "mknod $($BB mknod c0 c 1 3 2>&1 >/dev/null | grep -c "Operation not permitted")"
	echo "stat $($BB stat -c %u:%g g)"
	echo "cu-stat $(stat -c %u:%g g)"
' 2>&1)
check_eq "never: busybox id -u prints the real uid" "$(get id-u)" "$TUID"
check_eq "never: busybox chown 7:8 fails with EPERM" "$(get chown)" 1
check_eq "never: busybox mknod fails with EPERM" "$(get mknod)" 1
check_eq "never: busybox stat shows the real owner" "$(get stat)" "$TUID:$TGID"
check_eq "never: coreutils in the same session is still faked" "$(get cu-stat)" "7:8"
done_testing
