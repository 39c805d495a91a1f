#!/bin/bash
# Arch's makepkg as a real client (issue 26): Debian's makepkg (pacman
# 6.0) runs its package() step as `fakeroot -- bash ... -F`, and inside
# checks FAKEROOTKEY.  With fakeenv chosen as fakeroot (a `fakeroot` link
# to the launcher first on PATH, as the alternative makes it), a PKGBUILD
# whose package() installs a setuid root binary, a file of another owner
# and a device node gives a package whose .MTREE and listing show them;
# the same build under fakeroot 1.31 gives the same package but for the
# one line that names the tool (`# using fakeroot version ...` in
# .PKGINFO, and .MTREE's size and digests of that file).
. "$(dirname "$0")/lib.sh"

if ! command -v makepkg >/dev/null || ! command -v pacman >/dev/null; then
	skip "makepkg builds with fakeenv as fakeroot" \
		"makepkg or pacman not installed (Debian's makepkg, pacman-package-manager)"
	done_testing
fi
if [ -n "$SAN_PRE" ]; then
	# Seen with Debian 12's pacman 6.0.2 and gcc 12's libasan:
	# `LD_PRELOAD=libasan.so pacman -Qi` hangs in exit (p11-kit's
	# destructor waits in freelocale on glibc's locale lock), without
	# fakeenv.  makepkg runs it for .BUILDINFO.
	skip "makepkg builds with fakeenv as fakeroot" \
		"pacman hangs at exit under the ASan runtime alone (no fakeenv needed)"
	done_testing
fi
if ! command -v bsdtar >/dev/null; then
	skip "makepkg builds with fakeenv as fakeroot" "bsdtar not installed (libarchive-tools)"
	done_testing
fi

must "a PATH with fakeenv as fakeroot" as_user sh -c "
	mkdir -p bin p home && ln -s '$FE' bin/fakeroot"
cat >p/PKGBUILD <<'PKG'
pkgname=fetest
pkgver=1.0
pkgrel=1
pkgdesc="a package makepkg builds in a fake root"
arch=(x86_64)
license=(MIT)
options=(!strip !debug)
package() {
	install -d "$pkgdir/usr/bin" "$pkgdir/dev" "$pkgdir/srv"
	printf '#!/bin/sh\necho hi\n' >"$pkgdir/usr/bin/suidtool"
	chown root:root "$pkgdir/usr/bin/suidtool"
	chmod 4755 "$pkgdir/usr/bin/suidtool"
	echo data >"$pkgdir/srv/owned"
	chown 1234:5678 "$pkgdir/srv/owned"
	chmod 640 "$pkgdir/srv/owned"
	mknod "$pkgdir/dev/null" c 1 3
	chmod 666 "$pkgdir/dev/null"
	echo "key=${FAKEROOTKEY:+set} euid=$(id -u)" >"$pkgdir/srv/env"
}
PKG
chmod 644 p/PKGBUILD

# mkpkg PATH_HEAD: makepkg in p/ as the test user, its package moved to
# out-$1.pkg.tar.gz; p/ cleaned for the next build in the same place
# (.BUILDINFO names the build directory).
mkpkg() {
	local tag=$1 head=$2
	( cd p && as_user env -i HOME="$W/home" PATH="$head:/usr/bin:/bin" \
		LC_ALL=C SOURCE_DATE_EPOCH=1700000000 \
		makepkg --nodeps --skipinteg --noconfirm >"$W/log-$tag" 2>&1 )
	local rc=$?
	as_user sh -c "mv p/fetest-1.0-1-x86_64.pkg.tar.gz out-$tag.pkg.tar.gz 2>/dev/null;
		rm -rf p/pkg p/src"
	return $rc
}

mkpkg fe "$W/bin"
rc=$?
check_eq "makepkg with fakeenv as fakeroot exits 0" "$rc" 0 ||
	sed 's/^/# /' "log-fe"
check_match "makepkg entered the fakeroot environment" \
	"$(cat log-fe)" "Entering fakeroot environment"
list=$(bsdtar -tvf out-fe.pkg.tar.gz 2>&1 | awk '{print $1, $3, $4, $5, $NF}')
check_eq "tar tvf: the setuid binary is root's" \
	"$(grep ' usr/bin/suidtool$' <<<"$list")" "-rwsr-xr-x root root 18 usr/bin/suidtool"
check_eq "tar tvf: the file owned by 1234:5678" \
	"$(grep ' srv/owned$' <<<"$list")" "-rw-r----- 1234 5678 5 srv/owned"
check_eq "tar tvf: the device node 1,3" \
	"$(grep ' dev/null$' <<<"$list")" "crw-rw-rw- root root 1,3 dev/null"
mtree=$(bsdtar -xOf out-fe.pkg.tar.gz .MTREE 2>/dev/null | zcat 2>&1)
check_match ".MTREE: the setuid binary" "$mtree" \
	"(^|
)./usr/bin/suidtool time=[0-9.]+ mode=4755 size=18 "
check_match ".MTREE: the file of another owner" "$mtree" \
	"(^|
)./srv/owned time=[0-9.]+ mode=640 gid=5678 uid=1234 size=5 "
check_match ".MTREE: the device" "$mtree" \
	"(^|
)./dev/null time=[0-9.]+ mode=666 type=char"
check_eq "package(): FAKEROOTKEY set and a root euid" \
	"$(bsdtar -xOf out-fe.pkg.tar.gz srv/env 2>&1)" "key=set euid=0"
check_eq "outside: the package is a file of the user's" \
	"$(stat -c %u:%g out-fe.pkg.tar.gz 2>&1)" "$TUID:$TGID"

# The same PKGBUILD under fakeroot 1.31, in the same directory.
if command -v fakeroot >/dev/null; then
	mkpkg fr /nonexistent
	check_eq "makepkg with fakeroot exits 0" "$?" 0
	norm() { bsdtar -tvf "$1" | awk '$NF != ".PKGINFO" && $NF != ".MTREE"'; }
	check_eq "fakeenv and fakeroot: the same tar tvf listing" \
		"$(norm out-fe.pkg.tar.gz)" "$(norm out-fr.pkg.tar.gz)"
	meta() {
		bsdtar -xOf "$1" .PKGINFO | grep -v '^# using fakeroot'
		bsdtar -xOf "$1" .BUILDINFO
		bsdtar -xOf "$1" .MTREE | zcat | grep -v '^\./\.PKGINFO '
	}
	check_eq "fakeenv and fakeroot: the same .PKGINFO, .BUILDINFO and .MTREE but the tool's name" \
		"$(meta out-fe.pkg.tar.gz)" "$(meta out-fr.pkg.tar.gz)"
	payload() {
		for f in usr/bin/suidtool srv/owned srv/env; do
			bsdtar -xOf "$1" "$f" | md5sum
		done
	}
	check_eq "fakeenv and fakeroot: the same file contents" \
		"$(payload out-fe.pkg.tar.gz)" "$(payload out-fr.pkg.tar.gz)"
	check_match "fakeenv names itself in .PKGINFO" \
		"$(bsdtar -xOf out-fe.pkg.tar.gz .PKGINFO)" "# using fakeroot version 1.31 \(fakeenv "
else
	skip "fakeenv and fakeroot build the same package" "fakeroot is not installed"
fi
done_testing
