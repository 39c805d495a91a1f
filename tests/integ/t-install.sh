#!/bin/bash
# make install PREFIX=... DESTDIR=...: the installed launcher finds its own
# library and daemon, with no LD_LIBRARY_PATH and nothing of ours on PATH,
# also when the whole tree is moved; make uninstall removes what install
# put there.  make is told the build's three files are up to date, so
# that it installs what this run tests (the sanitizer build too).
. "$(dirname "$0")/lib.sh"

command -v make >/dev/null || bail "make is not installed"
D=$T/dest
P=/opt/fakeenv
inst() {
	make -s -C "$_root" BUILD="$BUILD" PREFIX=$P DESTDIR="$D" \
		-o "$BUILD/fakeenv" -o "$BUILD/fakeenvd" -o "$BUILD/libfakeenv.so" "$@"
}
must "make install" inst install
chmod -R a+rX "$D"

for f in bin/fakeenv libexec/fakeenv/fakeenvd lib/fakeenv/libfakeenv.so \
	share/man/man1/fakeenv.1; do
	check_cmd "installed: $f" test -s "$D$P/$f"
done
check_cmd "the installed launcher and daemon are executable" \
	test -x "$D$P/bin/fakeenv" -a -x "$D$P/libexec/fakeenv/fakeenvd"

# A clean environment: PATH without the build or the install, no
# LD_LIBRARY_PATH, nothing of a session (in the sanitizer flavour, only
# its runtime, which must come first in LD_PRELOAD).
clean() {
	as_user env -i PATH=/usr/bin:/bin HOME="$T" TMPDIR="$T/tmp" \
		${SAN_PRE:+LD_PRELOAD="$SAN_PRE" ASAN_OPTIONS=detect_leaks=0} "$@"
}
# The library ld.so loads last: ours, after anything already preloaded.
last_preload() { sed -n 3p <<<"$1" | sed 's/.*://'; }
# The daemons' command lines from /proc (pgrep hangs under the ASan
# runtime, with or without us).
job='touch f && chown 0:0 f && chmod 4755 f && mknod c c 5 1 &&
	stat -c "%u:%g %a %F %t,%T" f c && printenv LD_PRELOAD &&
	for p in /proc/[0-9]*; do
		tr "\0" " " <$p/cmdline 2>/dev/null && echo
	done | grep "[f]akeenvd --listen-fd"'
out=$(clean "$D$P/bin/fakeenv" -- sh -c "$job" 2>&1)
check_eq "the installed fakeenv fakes owners, modes and devices" \
	"$(sed -n 1,2p <<<"$out")" "0:0 4755 regular empty file 0,0
0:0 644 character special file 5,1"
check_eq "the session preloads the installed library" \
	"$(last_preload "$out")" "$D$P/lib/fakeenv/libfakeenv.so"
check_match "the session's daemon is the installed one" \
	"$(sed -n '4,$p' <<<"$out")" "$D$P/libexec/fakeenv/fakeenvd"

# Moved as a whole (a relocated prefix, an unpacked tarball): it still
# finds its own files, not the build's, not the first install's.
must "move the tree" cp -a "$D$P" "$T/moved"
must "remove the first install" inst uninstall
out=$(clean "$T/moved/bin/fakeenv" -- sh -c 'rm -f f c; '"$job" 2>&1)
check_eq "a moved install still fakes" "$(sed -n 1,2p <<<"$out")" \
	"0:0 4755 regular empty file 0,0
0:0 644 character special file 5,1"
check_eq "a moved install preloads its own library" \
	"$(last_preload "$out")" "$T/moved/lib/fakeenv/libfakeenv.so"

check_eq "make uninstall leaves no file behind" \
	"$(find "$D" -type f | wc -l)" 0
check_no "natively the same chown fails (the test can fail)" \
	as_user sh -c 'touch g && chown 0:0 g'
done_testing
