#!/bin/sh
# Build a small root filesystem as a fake root with the build tree's
# fakeenv and list the tarball made from it: root-owned files, set-uid and
# set-gid binaries, device nodes, a sticky /tmp, files of other users, a
# symlink and a hard link, all made without privilege.  Run by `make demo`
# (usage: scripts/demo.sh [BUILD-DIR]).
#
# As real root every fake would succeed for real and the demo would prove
# nothing, so it then runs as nobody (setpriv), in a temp dir given to
# nobody.  Run as any other user it works in a fresh temp dir under
# $TMPDIR or /tmp, never in the source tree (which that user may not be
# able to write).  At the end it checks the archive itself: it exits 1
# if the listing does not hold what the session made.
set -eu
build=$(cd "${1:-build}" && pwd)
fe=$build/fakeenv
[ -x "$fe" ] || { echo "demo: $fe is not built (make)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fakeenv-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"

if [ "$(id -u)" = 0 ]; then
	who="nobody (uid 65534, through setpriv)"
	chown 65534:65534 "$work"
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups \
		test -x "$fe" -a -r "$build/libfakeenv.so"; then
		echo "demo: nobody cannot reach $build: make its parent dirs o+x, or build elsewhere" >&2
		exit 1
	fi
else
	who="$(id -un 2>/dev/null || id -u) (uid $(id -u))"
fi

# run CMD...: as nobody when we are root, else as ourselves; in $work,
# with the session's socket dir there too.
run() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			env -u XDG_RUNTIME_DIR HOME="$work" TMPDIR="$work" "$@"
	else
		env -u XDG_RUNTIME_DIR TMPDIR="$work" "$@"
	fi
}

cd "$work"
run "$fe" -- sh -eu -c '
	umask 022
	mkdir -p rootfs/bin rootfs/dev rootfs/etc rootfs/home/alice \
		rootfs/tmp rootfs/usr/bin rootfs/var/www
	printf "#!/bin/sh\necho hello\n" >rootfs/bin/hello
	cp rootfs/bin/hello rootfs/bin/su
	cp rootfs/bin/hello rootfs/usr/bin/wall
	echo "root:x:0:0:root:/root:/bin/sh" >rootfs/etc/passwd
	chown -R 0:0 rootfs
	chmod 0755 rootfs/bin/hello
	chmod 4755 rootfs/bin/su
	chown 0:5 rootfs/usr/bin/wall && chmod 2755 rootfs/usr/bin/wall
	chmod 1777 rootfs/tmp
	mknod -m 0600 rootfs/dev/console c 5 1
	mknod -m 0666 rootfs/dev/null c 1 3
	mknod -m 0660 rootfs/dev/sda b 8 0 && chown 0:6 rootfs/dev/sda
	mkfifo rootfs/dev/initctl
	chown 1000:1000 rootfs/home/alice && chmod 0750 rootfs/home/alice
	echo "<p>hello</p>" >rootfs/var/www/index.html
	chown -R 33:33 rootfs/var/www
	ln -s hello rootfs/bin/hi && chown -h 1000:1000 rootfs/bin/hi
	ln rootfs/bin/hello rootfs/bin/hello-again
	tar cf rootfs.tar rootfs
'
echo "== tar tvf rootfs.tar   (made as a fake root by $who)"
tar tvf rootfs.tar
echo "== the real files on disk, outside the session: yours, nothing set-id, no device"
ls -ln rootfs/bin rootfs/dev rootfs/usr/bin

# The archive must hold what the session made: a demo that cannot fail
# would prove nothing either.
got=$(tar --numeric-owner -tvf rootfs.tar | awk '{ print $1, $2, ($1 ~ /^[cb]/ ? $3 " " : "") $6 }' | sort -k3)
bad=
for want in "-rwsr-xr-x 0/0 rootfs/bin/su" "-rwxr-sr-x 0/5 rootfs/usr/bin/wall" \
	"crw------- 0/0 5,1 rootfs/dev/console" "brw-rw---- 0/6 8,0 rootfs/dev/sda" \
	"drwxrwxrwt 0/0 rootfs/tmp/" "drwxr-x--- 1000/1000 rootfs/home/alice/" \
	"lrwxrwxrwx 1000/1000 rootfs/bin/hi" "-rw-r--r-- 33/33 rootfs/var/www/index.html"; do
	printf '%s\n' "$got" | grep -qxF -- "$want" || bad="$bad
  missing: $want"
done
tar tvf rootfs.tar | grep -Eq " rootfs/bin/hello(-again)? link to rootfs/bin/hello(-again)?$" ||
	bad="$bad
  missing: the hard link rootfs/bin/hello-again"
if [ -n "$bad" ]; then
	echo "demo: FAILED: the archive does not hold what the session made:$bad" >&2
	exit 1
fi
echo "== demo: ok: the tarball holds root owners, set-id bits, devices and other users' files;"
echo "   on disk everything belongs to uid $(stat -c %u rootfs/bin/su) and nothing is set-id"
