#!/bin/bash
# The musl build (docs/musl.md): `make musl-min` builds the shim, the
# launcher, the daemon and five helpers with musl-gcc into build-musl/,
# and the helpers, musl programs, are faked under that build's launcher
# as the test user: chown, chmod, mknod, stat and a security.* xattr, each
# shown by a later session of the same state and never on disk.
FE_OWN_PROGRAMS=1 # its sessions run the musl build's helpers alone
. "$(dirname "$0")/lib.sh"
# The musl build is never a sanitizer build, and the glibc ASan runtime
# of make asan cannot load into its programs: they run without it.
SAN_PRE=

if ! command -v "${MUSL_CC:-musl-gcc}" >/dev/null 2>&1; then
	skip "musl build" "musl-gcc not installed (apt-get install musl-tools)"
	done_testing
fi

# Not the calling make's variables (make asan's SAN=1, BUILD=...).
out=$(env -u MAKEFLAGS -u MFLAGS make -s -C "$_root" -j2 musl-min 2>&1)
rc=$?
check_eq "make musl-min builds with no warning" "$rc:$out" "0:"
[ $rc = 0 ] || done_testing
M=$_root/build-musl
MH=$M/tests/helpers
check_match "the launcher is a musl program" \
	"$(LC_ALL=C readelf -l "$M/fakeenv" 2>&1)" "ld-musl"
check_cmd "check-exports: the musl shim exports wrap.def's musl rows" \
	env -u MAKEFLAGS -u MFLAGS make -s -C "$_root" CC="${MUSL_CC:-musl-gcc}" BUILD=build-musl check-exports

# One session a step, the state kept in st: each later session shows
# what the earlier ones did.
mf() { as_user "$M/fakeenv" --state st -- "$@" 2>&1; }
must "touch f" as_user touch f
check_eq "chown 0:0 in a musl program" "$(mf "$MH/own" chown f 0 0)" ok
check_eq "chmod 4755" "$(mf "$MH/mode" chmod f 4755)" ok
check_eq "mknod c 5 1" "$(mf "$MH/node" mknod dev c 0644 5 1)" ok
check_eq "stat shows 0:0 4755" "$(mf "$MH/st" stat f)" "0 0 104755 0 0"
check_eq "lstat shows the device 5,1 of root's" "$(mf "$MH/st" lstat dev)" \
	"0 0 20644 5 1"
check_eq "statx shows 0:0 4755 (musl 1.2.3 has no statx: the kernel's)" \
	"$(mf "$MH/st" statx f)" "0 0 104755 0 0"
check_eq "setxattr security.x, refused to the user, is kept" \
	"$(mf "$MH/xat" set f security.x v1)" ok
check_eq "getxattr security.x" "$(mf "$MH/xat" get f security.x)" v1
check_eq "on disk the file is the user's, no set-uid bit" \
	"$(stat -c '%u %g %a' f)" "$TUID $TGID 755"
check_eq "on disk dev is a regular file" "$(stat -c %F dev)" \
	"regular empty file"
check_eq "outside a session, the musl stat shows the truth" \
	"$("$MH/st" stat f)" "$TUID $TGID 100755 0 0"

done_testing
