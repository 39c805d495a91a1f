#!/bin/bash
# Static programs are faked below libc (issue 13): the shim tests' helpers
# linked -static ($BUILD/tests/static) make each call of the chown,
# chmod, mknod, stat, xattr, access and credential families in the same
# session as their dynamic builds, on files of their own, and must print
# the same; so do the calls that keep records right (creation with fake
# fs ids, links, the rename family, removal).  With FAKEENV_SECCOMP=never the static ones escape, as before
# the filter: the comparison can fail.  Also the --seccomp option itself:
# its values, a bad one, and that it wins over FAKEENV_SECCOMP.
. "$(dirname "$0")/lib.sh"

S=$BUILD/tests/static
for _p in own st node mode xat acc creds mk rmv; do
	[ -x "$S/$_p" ] || bail "$S/$_p is not built (make)"
done
export S

calls="stat lstat fstat fstatat fstatat-nofollow fstatat-empty stat64
	lstat64 fstat64 fstatat64 xstat lxstat fxstat fxstatat xstat64
	lxstat64 fxstat64 fxstatat64 statx statx-nofollow"
export calls

# Files both builds read: faked by coreutils in the session, and made
# 0000 for real for the access family.
prepare='umask 022
	touch f && chown 12:34 f && chmod 4755 f && mknod d c 5 1 &&
	mknod b b 8 17 && chown 3:4 b && ln -s f l && chown -h 7:8 l || exit 9'
must "files for the access family" as_user sh -c '
	touch a0 ax && chmod 000 a0 && chmod 010 ax && mkdir d0 && chmod 000 d0'

# steps DIR TAG: every entry point once, through the helpers in DIR, on
# files named TAG-*; each line "KEY: RESULT", where RESULT never names a
# file, so that the two builds' lines compare as they are.
steps='P=$1 x=$2
	umask 022
	for c in chown lchown fchown fchownat fchownat-nofollow fchownat-empty; do
		touch $x-o-$c; echo "own $c: $($P/own $c $x-o-$c 12 34) $($P/st stat $x-o-$c)"
	done
	ln -s $x-o-chown $x-l
	echo "own lchown-link: $($P/own lchown $x-l 7 8) $($P/st lstat $x-l) $($P/st stat $x-l)"
	ln -s $x-o-chown $x-l2
	echo "own nofollow-link: $($P/own fchownat-nofollow $x-l2 7 8) $($P/st lstat $x-l2)"
	touch $x-k; chown 5:6 $x-k
	echo "own keep-uid: $($P/own chown $x-k -1 9) $($P/st stat $x-k)"
	touch $x-s; chmod 4755 $x-s
	echo "own clear-suid: $($P/own chown $x-s 1 1) $($P/st stat $x-s)"
	echo "own missing: $($P/own chown $x-nope 1 1)"
	for c in chmod fchmod fchmodat fchmodat-nofollow; do
		touch $x-m-$c; echo "mode $c: $($P/mode $c $x-m-$c 4751) $($P/st stat $x-m-$c)"
	done
	echo "mode missing: $($P/mode chmod $x-nope 755)"
	for c in mknod mknodat xmknod xmknodat; do
		echo "node $c c: $($P/node $c $x-c-$c c 620 4 64) $($P/st stat $x-c-$c)"
		echo "node $c b: $($P/node $c $x-b-$c b 660 8 1) $($P/st lstat $x-b-$c)"
		echo "node $c p: $($P/node $c $x-p-$c p 640 0 0) $($P/st stat $x-p-$c)"
	done
	echo "node mkfifo: $($P/node mkfifo $x-fifo 600) $($P/st stat $x-fifo)"
	echo "node exists: $($P/node mknod $x-c-mknod c 600 1 3)"
	for c in $calls; do
		echo "st $c f: $($P/st $c f)"; echo "st $c d: $($P/st $c d)"
		echo "st $c b: $($P/st $c b)"
	done
	for c in lstat fstatat-nofollow statx-nofollow; do echo "st $c l: $($P/st $c l)"; done
	touch $x-e; ln -s $x-e $x-el
	for c in set lset fset sys-set; do echo "xat $c: $($P/xat $c $x-e security.$c v-$c)"; done
	for c in get lget fget sys-get; do echo "xat $c: $($P/xat $c $x-e security.set)"; done
	echo "xat lset-link: $($P/xat lset $x-el trusted.l on-link) $($P/xat lget $x-el trusted.l)"
	for c in list llist flist sys-list; do echo "xat $c: $($P/xat $c $x-e)"; done
	echo "xat size: $($P/xat list $x-e 0)"
	echo "xat erange: $($P/xat get $x-e security.set 2)"
	echo "xat create-exists: $($P/xat set $x-e security.set x create)"
	for c in rm:set lrm:lset frm:fset sys-rm:sys-set; do
		echo "xat ${c%:*}: $($P/xat ${c%:*} $x-e security.${c#*:})"
	done
	echo "xat rm-missing: $($P/xat rm $x-e security.set)"
	echo "xat after-rm: $($P/xat list $x-e)"
	echo "xat caps: $($P/xat caps)"
	echo "xat capset-drop: $($P/xat capset-drop)"
	echo "xat capset-raise: $($P/xat capset-raise)"
	for c in access faccessat faccessat-eaccess euidaccess eaccess; do
		for w in r w rw x; do echo "acc $c a0 $w: $($P/acc $c a0 $w)"; done
		echo "acc $c ax x: $($P/acc $c ax x)"
		echo "acc $c d0 rwx: $($P/acc $c d0 rwx)"
		echo "acc $c missing f: $($P/acc $c $x-nope f)"
	done
	for c in open openat open-excl creat mkdir mkdirat; do
		echo "mk fs $c: $($P/mk -f 1234:55 $c $x-fs-$c) $($P/st stat $x-fs-$c)"
		echo "mk eu $c: $($P/mk -e 1234:55 $c $x-eu-$c) $($P/st stat $x-eu-$c)"
	done
	for c in symlink symlinkat; do
		echo "mk fs $c: $($P/mk -f 1234:55 $c target $x-sl-$c) $($P/st lstat $x-sl-$c)"
	done
	touch $x-old && chown 5:6 $x-old && chmod 640 $x-old
	echo "mk existing: $($P/mk -f 1234:55 open $x-old) $($P/st stat $x-old)"
	for c in link linkat; do
		echo "mk $c: $($P/mk $c $x-old $x-ln-$c) $($P/st stat $x-ln-$c)"
	done
	for c in rename renameat renameat2 renameat2-noreplace; do
		touch $x-r-$c && chown 5:6 $x-r-$c && chmod 751 $x-r-$c
		echo "rmv $c: $($P/rmv $c $x-r-$c $x-rr-$c) $($P/st stat $x-rr-$c)"
	done
	touch $x-e1 && mkdir $x-e2 && chown 9:10 $x-e1 && chown 11:12 $x-e2
	echo "rmv exchange: $($P/rmv renameat2-exchange $x-e1 $x-e2) $($P/st stat $x-e1) $($P/st stat $x-e2)"
	for c in unlink unlinkat remove; do
		touch $x-u-$c && chown 3:3 $x-u-$c
		echo "rmv $c: $($P/rmv $c $x-u-$c) $($P/st stat $x-u-$c)"
	done
	for c in rmdir unlinkat-dir; do
		mkdir $x-d-$c; echo "rmv $c: $($P/rmv $c $x-d-$c) $($P/st stat $x-d-$c)"
	done
	C=$P/creds
	echo "creds show: $($C show)"
	echo "creds setuid: $($C setuid 1000 show setuid 0 show | tr "\n" "|")"
	echo "creds seteuid: $($C seteuid 1000 show seteuid 0 show | tr "\n" "|")"
	echo "creds setresuid: $($C setresuid 1 2 3 show setresuid 0 0 0 setresuid 3 1 2 show | tr "\n" "|")"
	echo "creds setreuid: $($C setreuid 5 6 show | tr "\n" "|")"
	echo "creds gids: $($C setgid 7 setegid 8 setregid 9 10 setresgid 1 2 3 show | tr "\n" "|")"
	echo "creds groups: $($C setgroups 4,5,6 show setgroups - show | tr "\n" "|")"
	echo "creds fsids: $($C setfsuid 11 setfsuid 12 setfsgid 13 setfsgid 14 | tr "\n" "|")"
	echo "creds exec: $($C setuid 1000 exec show setuid 0 | tr "\n" "|")"
	echo "creds run: $($C setgid 44 setuid 33 run sh -c "id -u; id -g; id -G" | tr "\n" "|")"
'
export steps

# session [ENV...]: one session running the steps with both builds.
session() {
	as_user env "$@" "$FE" -- sh -c "$prepare"'
		sh -c "$steps" - "$H" dyn >dyn.out 2>&1
		sh -c "$steps" - "$S" sta >sta.out 2>&1'
}

session
check_eq "the session (coreutils' chown, chmod, mknod) exits 0" "$?" 0
dyn=$(cat dyn.out 2>/dev/null)
sta=$(cat sta.out 2>/dev/null)
d() { pick "$1:" <<<"$dyn"; }
s() { pick "$1:" <<<"$sta"; }

# A few answers the dynamic build gives (the shim's own tests hold them
# all): equal but wrong on both sides must not pass.
check_eq "dynamic: chown works as fake root" "$(d "own chown")" "ok 12 34 100644 0 0"
check_eq "dynamic: stat shows the shell's chown and chmod" "$(d "st stat f")" "12 34 104755 0 0"
check_eq "dynamic: mknod makes a faked char device" "$(d "node mknod c")" "ok 0 0 20600 4 64"
check_eq "dynamic: the ids are root's" "$(d "creds show")" \
	"getuid=0 geteuid=0 getgid=0 getegid=0 resuid=0,0,0 resgid=0,0,0 groups=0"

n=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	key=${line%%: *}
	check_eq "static = dynamic: $key" "$(s "$key")" "$(d "$key")"
	n=$((n + 1))
done <<<"$dyn"
check_match "every entry point was compared" "$n" "^(1[0-9][0-9]|[2-9][0-9][0-9])$"
check_eq "the static build printed as many lines as the dynamic one" \
	"$(wc -l <<<"$sta")" "$(wc -l <<<"$dyn")"

# Outside, nothing the static helpers did is real.
check_eq "outside: the static chown left the real owner" \
	"$(stat -c %u:%g sta-o-chown 2>&1)" "$TUID:$TGID"
check_eq "outside: the static mknod made a plain file" \
	"$(stat -c %F sta-c-mknod 2>&1)" "regular empty file"

# --- never: the static helpers escape ------------------------------------
rm -rf "$W"/*
must "files for the access family again" as_user sh -c '
	touch a0 ax && chmod 000 a0 && chmod 010 ax && mkdir d0 && chmod 000 d0'
session FAKEENV_SECCOMP=never
check_eq "never: the session exits 0" "$?" 0
dyn=$(cat dyn.out 2>/dev/null)
sta=$(cat sta.out 2>/dev/null)
check_eq "never: the dynamic build is still faked" "$(d "own chown")" "ok 12 34 100644 0 0"
check_eq "never: static chown fails as the user's would" "$(s "own chown")" "ERR EPERM $TUID $TGID 100644 0 0"
check_eq "never: static stat shows the real owner and mode" "$(s "st stat f")" "$TUID $TGID 100755 0 0"
check_match "never: static ids are the real ones" "$(s "creds show")" "^getuid=$TUID geteuid=$TUID "
check_ne "never: static output differs from dynamic" "$sta" "$dyn"

# A relative path of 4090 bytes, within PATH_MAX from the cwd: the
# supervisor reaches a stat's relative path by /proc/TID/cwd/PATH, which
# would pass PATH_MAX here, so this one goes through the cwd's fd; and an
# empty path with AT_EMPTY_PATH names the cwd itself.
d200=$(printf 'd%.0s' {1..200})
long=$(for _i in {1..20}; do printf '%s/' "$d200"; done)$(printf 'f%.0s' {1..70})
must "a 4090-byte relative path" as_user sh -c "mkdir -p '${long%/*}' && touch '$long'"
check_eq "a relative path near PATH_MAX: static as dynamic" \
	"$(fe sh -c "chown 5:6 '$long' && '$S/st' stat '$long' && '$S/st' lstat '$long'" 2>&1)" \
	"5 6 100644 0 0
5 6 100644 0 0"
mkdir -p cwdst && chown "$TUID:$TGID" cwdst
check_eq "fstatat(AT_FDCWD, \"\", AT_EMPTY_PATH): the cwd" \
	"$(cd cwdst && fe sh -c "chown 7:8 . && '$S/st' cwd-empty -" 2>&1)" \
	"7 8 40755 0 0"

# --- the option -------------------------------------------------------------
zero="getuid=0 geteuid=0 getgid=0 getegid=0 resuid=0,0,0 resgid=0,0,0 groups=0"
for v in auto always; do
	check_eq "--seccomp=$v: a static program is faked" \
		"$(fe_opt --seccomp=$v -- "$S/creds" show 2>&1)" "$zero"
done
check_eq "--seccomp=always: a dynamic program still is" \
	"$(fe_opt --seccomp=always -- "$H/creds" show 2>&1)" "$zero"
check_match "--seccomp=never: a static program escapes" \
	"$(fe_opt --seccomp=never -- "$S/creds" show 2>&1)" "^getuid=$TUID "
check_eq "--seccomp wins over FAKEENV_SECCOMP=never" \
	"$(as_user env FAKEENV_SECCOMP=never "$FE" --seccomp=auto -- "$S/creds" show 2>&1)" "$zero"
check_match "--seccomp=never wins over FAKEENV_SECCOMP=always" \
	"$(as_user env FAKEENV_SECCOMP=always "$FE" --seccomp=never -- "$S/creds" show 2>&1)" "^getuid=$TUID "
check_eq "FAKEENV_SECCOMP=auto is the default's answer" \
	"$(as_user env FAKEENV_SECCOMP=auto "$FE" -- "$S/creds" show 2>&1)" "$zero"
out=$(fe_opt --seccomp=sometimes -- true 2>&1)
check_eq "--seccomp=sometimes exits 125" "$?" 125
check_match "--seccomp=sometimes: the message names the option" "$out" "--seccomp"
out=$(as_user env FAKEENV_SECCOMP=sometimes "$FE" -- true 2>&1)
check_eq "FAKEENV_SECCOMP=sometimes exits 125" "$?" 125
check_match "FAKEENV_SECCOMP=sometimes: the message names it" "$out" "FAKEENV_SECCOMP|--seccomp"
done_testing
