#!/bin/bash
# chroot inside a session (docs/chroot.md): a fake root's chroot(2) is
# the kernel's, in a user namespace the shim makes; each call family
# inside, exec of the root's own programs (PATH, #!, env -i), nested
# chroots, the kernel's escapes, a static program under the supervisor
# (chrooted, and moving its own root), and records made inside as seen
# outside and in a later session.
. "$(dirname "$0")/lib.sh"

S=$BUILD/tests/static
CHR=$H/chr
[ -x "$CHR" ] || bail "$CHR is not built (make)"
if ! as_user unshare -U true 2>/dev/null; then
	skip "chroot in a session" "no unprivileged user namespaces here (user.max_user_namespaces)"
	done_testing
	exit 0
fi

# mkroot DIR: a root of the host's own programs and libraries, at the
# host's paths (merged /usr kept as symbolic links), made by the test
# user; the shim's libraries too (a sanitizer build's runtime).
mkroot() {
	local r=$1 p l
	mkdir -p "$r/proc" "$r/dev" "$r/tmp" "$r/etc" || return 1
	for p in bin sbin lib lib64; do
		[ -L "/$p" ] || continue
		mkdir -p "$r/$(readlink "/$p")" && ln -s "$(readlink "/$p")" "$r/$p"
	done
	for p in sh cat chown chmod mknod mkdir ln ls mv readlink realpath \
		rm stat touch id env cp true mount chroot "$H/chr" "$H/own" "$H/st" \
		"$H/xat" "$S/own" "$S/st"; do
		p=$(type -P "$p") || continue
		mkdir -p "$r$(dirname "$p")" && cp -L "$p" "$r$p" || return 1
		for l in $(ldd "$p" 2>/dev/null | grep -o '/[^ ]*'); do
			[ -e "$r$l" ] && continue
			mkdir -p "$r$(dirname "$l")" && cp -L "$l" "$r$l" || return 1
		done
	done
	for l in $(ldd "$BUILD/libfakeenv.so" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$r$l" ] || { mkdir -p "$r$(dirname "$l")" && cp -L "$l" "$r$l"; }
	done
}
export -f mkroot
export H S BUILD
must "a root" as_user bash -c 'mkroot r'
R=$W/r

check_no "natively the test user cannot chroot (the cases below mean something)" \
	as_user chroot r /usr/bin/true

check_eq "id inside a chroot is root" "$(fe chroot r id -u 2>&1)" "0"

out=$(fe_opt --state st -- sh -c 'chroot r sh -c "
	touch /f && chown 12:34 /f && chmod 4711 /f && stat -c \"%u %g %a\" /f
	mknod /dev/d c 4 5 && stat -c \"%F %t,%T\" /dev/d
	ln -s /f /l && readlink /l && chown -h 7:8 /l && stat -c \"%u %g\" /l
	mv /f /g && stat -c \"%u %g %a\" /g
	ln -s /g /abs && chown 5:6 /abs && stat -c \"%u %g\" /g
	mkdir -p /d/e && cd /d/e && pwd && realpath ../../g && cd / &&
	readlink /proc/self/root /proc/self/cwd
	cd /d/e && stat -c \"%u\" ../../../../g
"' 2>&1)
check_eq "the call families inside (create, chown, chmod, mknod, symlink, rename, getcwd, realpath, /proc/self)" "$out" "12 34 4711
character special file 4,5
/f
7 8
12 34 4711
5 6
/d/e
/g
/
/
5"

check_eq "records made inside are seen outside by identity, in the next session" \
	"$(fe_opt --state st -- stat -c '%u %g %a' r/g r/dev/d 2>&1)" "5 6 711
0 0 644"
check_eq "the node's type and numbers outside" \
	"$(fe_opt --state st -- stat -c '%F %t,%T' r/dev/d 2>&1)" "character special file 4,5"
check_eq "xattrs inside (security.capability kept by the daemon)" \
	"$(fe chroot r sh -c "touch /x && $H/xat set /x security.capability v && $H/xat get /x security.capability" 2>&1)" \
	"$(fe sh -c 'touch xx && '"$H"'/xat set xx security.capability v && '"$H"'/xat get xx security.capability' 2>&1)"

must "a script" as_user sh -c "printf '#!/bin/sh\nid -u\n' >r/s.sh && chmod 755 r/s.sh"
check_eq "a #! script inside runs the root's interpreter, faked" \
	"$(fe chroot r /s.sh 2>&1)" "0"
check_eq "exec by PATH search inside" \
	"$(fe chroot r sh -c 'PATH=/usr/bin:/bin; id -u' 2>&1)" "0"
check_eq "env -i inside stays in the session" \
	"$(fe chroot r env -i /usr/bin/id -u 2>&1)" "0"
check_eq "syscall(SYS_chroot) is chroot()" \
	"$(fe "$CHR" syscall r id -u 2>&1)" "0"

# Nested: the inner root is a copy made inside; its host path composes.
out=$(fe_opt --state st -- chroot r sh -c '
	mkdir -p /n && cp -a /usr /etc /n/ && for p in bin lib lib64 sbin; do
		[ -L /$p ] && ln -s "$(readlink /$p)" /n/$p; done
	chroot /n sh -c "touch /y && chown 7:8 /y && stat -c \"%u %g\" /y; echo \${FAKEENV_ROOT#*:}"' 2>&1)
check_eq "nested chroot: chown inside, and the root's host path" "$out" "7 8
n:$R/n"
check_eq "nested chroot's record outside" \
	"$(fe_opt --state st -- stat -c '%u %g' r/n/y 2>&1)" "7 8"

# The kernel's escapes, as real root has them: not a security boundary.
must "an inner root" as_user mkdir -p r/e/proc
check_eq "chroot with the cwd left outside, then .. and chroot(.)" \
	"$(fe "$CHR" up r/e sh -c "test -d '$W/r/e' && echo out" 2>&1)" "out"
check_eq "fchdir to an fd from outside, then chroot(.)" \
	"$(fe "$CHR" fchdir r/e sh -c "test -d '$W/r/e' && echo out" 2>&1)" "out"
check_eq "chroot relative to the cwd" \
	"$(fe "$CHR" in r ls /s.sh 2>&1)" "/s.sh"

# A static program inside: the supervisor resolves its paths in the
# root (absolute, .., and an absolute symlink).
if [ -x "$S/own" ] && [ -x "$S/st" ]; then
	out=$(fe chroot r sh -c "
		cd / && touch /sf && $S/own chown /sf 12 34 && $S/st stat /sf
		mkdir -p /sd && cd /sd && $S/st stat ../../../sf
		ln -s /sf /sl && $S/own chown /sl 3 4 && $S/st stat /sf
		touch /sf2 && $S/own lchown /sf2 9 9 && stat -c '%u %g' /sf2
		stat -c '%u %g' /sf" 2>&1)
	check_eq "a static program inside, under the supervisor" "$out" "ok
12 34 100644 0 0
12 34 100644 0 0
ok
3 4 100644 0 0
ok
9 9
3 4"

else
	skip "a static program inside" "static helpers not built (no static libc)"
fi

# A static program that moves its own root by the kernel (a user
# namespace of its own, then chroot, pivot_root in a mount namespace of
# its own, or setns into another process's), or binds a directory in a
# mount namespace of its own: the supervisor, which had seen it at the
# session's root, resolves its paths where it now has them.
if [ -x "$S/nsroot" ]; then
	must "a root to move to" as_user sh -c 'mkdir -p nr && touch nr/nsroot-mark'
	for how in chroot pivot setns; do
		check_eq "a static program's own $how: its paths at its new root" \
			"$(fe sh -c "chown 12:34 nr/nsroot-mark &&
				$S/nsroot $how '$W/nr' /nsroot-mark" 2>&1)" "ERR ENOENT
12 34 100644 0 0"
	done
	must "a directory to bind on" as_user mkdir -p nb
	check_eq "a static program's own mount namespace: its paths in its mounts" \
		"$(fe sh -c "chown 12:34 nr/nsroot-mark &&
			$S/nsroot bind '$W/nr' '$W/nb/nsroot-mark'" 2>&1)" "ERR ENOENT
12 34 100644 0 0"
else
	skip "a static program's own chroot" "static helpers not built (no static libc)"
fi

check_eq "a --state session's records read inside a chroot" \
	"$(fe_opt --state st -- chroot r stat -c '%u %g' /g 2>&1)" "5 6"

# mount inside: proc is there already (bound); sysfs is the host's.
check_eq "mount -t proc and -t sysfs inside" \
	"$(fe chroot r sh -c 'mkdir -p /sys && mount -t proc proc /proc &&
		mount -t sysfs sysfs /sys && test -e /sys/kernel && echo ok' 2>&1)" "ok"

check_eq "real chroot outside a session is still refused" \
	"$(as_user "$CHR" in r true 2>&1)" "ERR EPERM"
done_testing
