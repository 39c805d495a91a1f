#!/bin/bash
# Debian's packaging tools under fakeenv, as the test user:
# - dpkg-deb --build of a tree made in a session (set-id bits, a device,
#   files of root and of another uid), without --root-owner-group: the
#   owners in the .deb come from the session;
# - dpkg-buildpackage -rfakeenv -us -uc -b of tests/data/hello-fakeenv, a
#   native debhelper package whose rules chown and chmod; with fakeroot
#   installed, the same build with -rfakeroot must give the same listing.
. "$(dirname "$0")/lib.sh"

command -v dpkg-deb >/dev/null || bail "dpkg-deb is not installed (dpkg)"

# A .deb's data as "NAME MODE UID/GID [MAJ,MIN]", one line each, sorted;
# dates and sizes left out.
deb_list() {
	dpkg-deb --fsys-tarfile "$1" | tar --numeric-owner -tvf - |
		awk '{ print $6, $1, $2 ($1 ~ /^[cb]/ ? " " $3 : "") }' | LC_ALL=C sort
}

# --- dpkg-deb --build -------------------------------------------------------

out=$(fe sh -ec '
	umask 022
	mkdir -p p/DEBIAN p/usr/bin p/usr/sbin p/dev p/var/lib/fe-demo
	printf "Package: fe-demo\nVersion: 1.0\nArchitecture: all\nMaintainer: fakeenv tests <fakeenv@example.invalid>\nDescription: a package built as the fake root\n" >p/DEBIAN/control
	printf "#!/bin/sh\n" >p/usr/bin/fe-su && chmod 4755 p/usr/bin/fe-su
	printf "#!/bin/sh\n" >p/usr/sbin/fe-mail
	chown 0:8 p/usr/sbin/fe-mail && chmod 2755 p/usr/sbin/fe-mail
	mknod -m 0640 p/dev/fe0 c 10 200 && chown 0:6 p/dev/fe0
	echo state >p/var/lib/fe-demo/state
	chown -R 1234:4321 p/var/lib/fe-demo && chmod 0700 p/var/lib/fe-demo
	dpkg-deb --build p fe-demo.deb >/dev/null
' 2>&1)
check_eq "dpkg-deb --build of a tree made in the session" "$?:$out" "0:"
check_eq "dpkg-deb: the .deb holds the session's owners, modes and device" \
	"$(deb_list fe-demo.deb 2>&1)" \
"./ drwxr-xr-x 0/0
./dev/ drwxr-xr-x 0/0
./dev/fe0 crw-r----- 0/6 10,200
./usr/ drwxr-xr-x 0/0
./usr/bin/ drwxr-xr-x 0/0
./usr/bin/fe-su -rwsr-xr-x 0/0
./usr/sbin/ drwxr-xr-x 0/0
./usr/sbin/fe-mail -rwxr-sr-x 0/8
./var/ drwxr-xr-x 0/0
./var/lib/ drwxr-xr-x 0/0
./var/lib/fe-demo/ drwx------ 1234/4321
./var/lib/fe-demo/state -rw-r--r-- 1234/4321"
check_match "dpkg-deb -c shows root/root and the set-uid bit" \
	"$(dpkg-deb -c fe-demo.deb | grep ' ./usr/bin/fe-su$')" "^-rwsr-xr-x root/root "
check_match "dpkg-deb -c shows the other owner numerically" \
	"$(dpkg-deb -c fe-demo.deb | grep ' ./var/lib/fe-demo/state$')" "^-rw-r--r-- 1234/4321 "
check_eq "outside: the package tree is the test user's, nothing set-id, no device" \
	"$(find p \( ! -user "$TUID" -o -perm /6000 -o -type c \) | head -3)" ""
# The same tree packed natively carries the test user: the check can fail.
check_match "natively, dpkg-deb stores the real owner (the checks can fail)" \
	"$(as_user dpkg-deb --build p native.deb >/dev/null 2>&1; deb_list native.deb | grep '^./var/lib/fe-demo/state ')" \
	"^./var/lib/fe-demo/state -rw-r--r-- $TUID/$TGID$"

# --- dpkg-buildpackage -rfakeenv --------------------------------------------

data=$_root/tests/data/hello-fakeenv
want_hello="./ drwxr-xr-x 0/0
./etc/ drwxr-xr-x 0/0
./etc/hello-fakeenv.conf -rw-r----- 0/4
./usr/ drwxr-xr-x 0/0
./usr/bin/ drwxr-xr-x 0/0
./usr/bin/hello-fakeenv -rwxr-xr-x 0/0
./usr/bin/hello-fakeenv-mail -rwxr-sr-x 0/8
./usr/bin/hello-fakeenv-su -rwsr-xr-x 0/0
./usr/share/ drwxr-xr-x 0/0
./usr/share/doc/ drwxr-xr-x 0/0
./usr/share/doc/hello-fakeenv/ drwxr-xr-x 0/0
./usr/share/doc/hello-fakeenv/changelog.gz -rw-r--r-- 0/0
./usr/share/doc/hello-fakeenv/copyright -rw-r--r-- 0/0
./var/ drwxr-xr-x 0/0
./var/lib/ drwxr-xr-x 0/0
./var/lib/hello-fakeenv/ drwxr-x--- 1234/4321"

# build DIR ROOTCMD [PATH-PREFIX]: copy the package to DIR and build it
# there as the test user; the .deb lands in DIR.
build() {
	local dir=$1 rootcmd=$2 pre=${3:-}
	build_with "$dir" env PATH="$pre$PATH" dpkg-buildpackage -r"$rootcmd" -us -uc -b
}

# build_with DIR CMD...: the same with any build command.
build_with() {
	local dir=$1; shift
	as_user mkdir -p "$dir" && as_user cp -R "$data" "$dir/" || return 1
	(cd "$dir/hello-fakeenv" && as_user "$@" >"$dir/log" 2>&1)
}

if ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null; then
	fail "dpkg-buildpackage -rfakeenv" "dpkg-dev or debhelper is not installed (.ci/run installs them)"
else
	# The launcher the script uses (a private copy under valgrind).
	build "$W/fe" fakeenv "$(dirname "$FE"):"
	rc=$?
	check_eq "dpkg-buildpackage -rfakeenv -us -uc -b succeeds" "$rc" 0
	[ "$rc" = 0 ] || tail -20 "$W/fe/log" | sed 's/^/# /'
	check_match "dpkg-buildpackage ran debian/rules binary through fakeenv" \
		"$(grep 'debian/rules binary' "$W/fe/log")" "^ fakeenv debian/rules binary$"
	deb=$W/fe/hello-fakeenv_1.0_all.deb
	check_eq "the .deb built with -rfakeenv holds what debian/rules asks for" \
		"$(deb_list "$deb" 2>&1)" "$want_hello"
	check_match "dpkg-deb -c: hello-fakeenv-su is -rwsr-xr-x root/root" \
		"$(dpkg-deb -c "$deb" 2>&1 | grep ' ./usr/bin/hello-fakeenv-su$')" "^-rwsr-xr-x root/root "
	check_eq "outside: the built tree is the test user's, nothing set-id" \
		"$(find "$W/fe/hello-fakeenv/debian/hello-fakeenv" \( ! -user "$TUID" -o -perm /6000 \) | head -3)" ""

	if command -v fakeroot >/dev/null; then
		# fakeroot is the peer, not ours: never with the sanitizer runtime.
		SAN_PRE= build "$W/fr" fakeroot
		rc=$?
		check_eq "dpkg-buildpackage -rfakeroot -us -uc -b succeeds" "$rc" 0
		[ "$rc" = 0 ] || tail -20 "$W/fr/log" | sed 's/^/# /'
		check_eq "-rfakeenv and -rfakeroot build the same listing" \
			"$(deb_list "$deb")" "$(deb_list "$W/fr/hello-fakeenv_1.0_all.deb" 2>&1)"
	else
		ok "-rfakeenv and -rfakeroot build the same listing # SKIP fakeroot is not installed"
	fi

	# debuild clears PATH (unless -ePATH): give it the launcher's full path.
	# It clears LD_PRELOAD too, which the sanitizer flavour's launcher needs.
	if command -v debuild >/dev/null; then
		build_with "$W/db" debuild ${SAN_PRE:+-eLD_PRELOAD -eASAN_OPTIONS} --no-lintian --rootcmd="$FE" -us -uc -b
		rc=$?
		check_eq "debuild --rootcmd=$FE -us -uc -b succeeds" "$rc" 0
		[ "$rc" = 0 ] || tail -20 "$W/db/log" | sed 's/^/# /'
		check_eq "the .deb built by debuild --rootcmd=fakeenv holds what debian/rules asks for" \
			"$(deb_list "$W/db/hello-fakeenv_1.0_all.deb" 2>&1)" "$want_hello"
	else
		ok "debuild --rootcmd=fakeenv # SKIP debuild is not installed (devscripts)"
	fi
fi

done_testing
