#!/bin/bash
# Programs of another libc in a glibc session (issue 26): a musl program
# cannot load the glibc shim (its loader refuses the library: "Error
# relocating ... symbol not found", exit 127), so in --seccomp=auto (and
# always) the exec wrappers and the launcher see its PT_INTERP, leave the
# shim out of its LD_PRELOAD and put it under the supervisor, which fakes
# it with the same rules and records as every other process.  mh
# (tests/integ/musl/mh.c, built dynamic and static with musl-gcc) makes
# the calls; glibc's coreutils read and make the same files around it,
# and each libc execs the other.
. "$(dirname "$0")/lib.sh"

M=$BUILD/tests/musl
if [ ! -x "$M/mh" ] || [ ! -x "$M/mh-static" ]; then
	skip "musl programs in a glibc session" \
		"musl-gcc not installed (Debian's musl-tools): $M/mh not built"
	done_testing
fi
if [ -n "$SAN_PRE" ]; then
	skip "musl programs in a glibc session" \
		"the sanitizer runtime first in LD_PRELOAD is glibc's: no musl program loads with it"
	done_testing
fi
export M

must "a file of the user's" as_user sh -c 'umask 022; touch f g h'

# Outside a session the fakes fail for real: the checks below can fail.
check_eq "outside: a musl chown fails as the user's would" \
	"$(as_user "$M/mh" chown f 12 34)" "ERR EPERM"

for v in mh mh-static; do
	P=$M/$v
	must "$v: a fresh file" as_user sh -c "umask 022; rm -f $v-*; touch $v-f"
	check_eq "$v: the ids are root's" "$(fe "$P" id 2>&1)" "0 0 0 0"
	out=$(fe sh -c "
		$P chown $v-f 12 34; $P stat $v-f
		$P chmod $v-f 4755; $P stat $v-f; stat -c '%u:%g %a' $v-f
		$P mknod $v-c 20600 4 64; $P stat $v-c; stat -c '%F %t,%T %u:%g' $v-c
		chown 7:8 $v-c; $P lstat $v-c
		$P setxattr $v-f security.musl v-$v; $P getxattr $v-f security.musl
		getfattr --absolute-names -n security.musl --only-values $v-f 2>/dev/null || echo no-getfattr
		echo" 2>&1)
	check_eq "$v: chown, chmod, mknod, xattr, seen by both libcs" "$out" \
"ok
12 34 100644 0 0
ok
12 34 104755 0 0
12:34 4755
ok
0 0 20600 4 64
character special file 4,40 0:0
7 8 20600 4 64
ok
v-$v
v-$v"
	check_eq "$v: outside, the owner is still the user's" \
		"$(stat -c %u:%g $v-f)" "$TUID:$TGID"
	check_eq "$v: outside, the node is a plain file" \
		"$(stat -c %F $v-c)" "regular empty file"
done

# A musl program's environment lacks the shim (its loader would refuse
# it); a glibc program it execs runs under the filter, faked all the same.
out=$(fe "$M/mh" exec sh -c 'echo "pre=$LD_PRELOAD"; chown 21:22 g; stat -c %u:%g g; id -u')
check_no "musl: LD_PRELOAD without the shim" grep -q libfakeenv.so <<<"$out"
check_eq "musl -> glibc: the glibc child fakes chown and ids" \
	"$(sed 1d <<<"$out")" "21:22
0"
# And back: glibc (the shim) -> musl -> glibc -> musl, one record seen by all.
out=$(fe sh -c "chown 31:32 h && $M/mh exec sh -c '$M/mh-static chown h 41 42 && $M/mh exec stat -c %u:%g h' && $M/mh stat h && stat -c %u:%g h")
check_eq "glibc -> musl -> glibc -> musl, and back" "$out" "ok
41:42
41 42 100644 0 0
41:42"

# Each way into exec: the launcher's CMD (above), execve by the shell,
# posix_spawn (through the launcher's trampoline), a #! script whose
# interpreter is a musl program.
check_eq "posix_spawn of a musl program" \
	"$(fe "$H/spawn" posix_spawn "$M/mh" id 2>&1)" "0 0 0 0"
check_eq "posix_spawnp of a musl program" \
	"$(fe env PATH="$M:/usr/bin:/bin" "$H/spawn" posix_spawnp mh id 2>&1)" "0 0 0 0"
check_eq "execve of a musl program from a vfork child" \
	"$(fe "$H/spawn" -v -e PATH=/usr/bin:/bin execve "$M/mh" id 2>&1)" "0 0 0 0"
must "a script run by a musl program" as_user sh -c "
	printf '#!%s id\n' '$M/mh' >scr && chmod 755 scr"
check_eq "a #! script whose interpreter is a musl program" \
	"$(fe ./scr 2>&1)" "0 0 0 0"
check_eq "--seccomp=always: a musl program is faked" \
	"$(fe_opt --seccomp=always -- "$M/mh" id 2>&1)" "0 0 0 0"
check_eq "--seccomp=always: a musl program's glibc child is faked" \
	"$(fe_opt --seccomp=always -- "$M/mh" exec sh -c 'chown 51:52 g && stat -c %u:%g g' 2>&1)" "51:52"

# A root of another libc (an Alpine-like tree: musl's loader and a
# musl program) entered with the shim's chroot: its programs are foreign
# there too, faked through the supervisor, their records the session's.
if as_user unshare -U true 2>/dev/null; then
	must "a musl root" as_user sh -c "mkdir -p mr/lib mr/bin &&
		cp -L /lib/ld-musl-x86_64.so.1 mr/lib/ && cp '$M/mh' mr/bin/ && touch mr/f"
	check_eq "chroot into a musl root: chown inside, seen outside" \
		"$(fe sh -c 'chroot mr /bin/mh chown /f 3 4 && chroot mr /bin/mh exec /bin/mh stat /f && stat -c %u:%g mr/f' 2>&1)" \
		"ok
3 4 100644 0 0
3:4"
else
	skip "chroot into a musl root" "no unprivileged user namespaces here (user.max_user_namespaces)"
fi

# --seccomp=never looks at nothing: the musl loader gets the shim and
# refuses it, as with fakeroot.
out=$(fe_opt --seccomp=never -- "$M/mh" id 2>&1)
check_eq "--seccomp=never: the musl program cannot start (127)" "$?" 127
check_match "--seccomp=never: its loader says why" "$out" "libfakeenv.so"
done_testing
