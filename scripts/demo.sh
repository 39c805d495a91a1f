#!/bin/sh
# Build a small root filesystem as a fake root and list the archive made
# from it: root-owned files, a setuid binary, device nodes, a file owned by
# another user, all made without privilege.  Run by `make demo`.
#
# As real root every fake would succeed for real and the demo would prove
# nothing, so it then runs as nobody, from a directory nobody can use.
set -eu
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/fakeenv-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"

run() {
	if [ "$(id -u)" = 0 ]; then
		chown 65534:65534 "$work"
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			env -u XDG_RUNTIME_DIR TMPDIR="$work" "$@"
	else
		"$@"
	fi
}

cd "$work"
run "$build/fakeenv" -- sh -eu -c '
	mkdir -p rootfs/bin rootfs/dev rootfs/etc rootfs/home/alice rootfs/tmp
	printf "#!/bin/sh\necho hello\n" > rootfs/bin/hello
	cp rootfs/bin/hello rootfs/bin/su
	echo "root:x:0:0:root:/root:/bin/sh" > rootfs/etc/passwd
	chown -R 0:0 rootfs
	chmod 0755 rootfs/bin/hello
	chmod 4755 rootfs/bin/su
	chmod 1777 rootfs/tmp
	mknod -m 0600 rootfs/dev/console c 5 1
	mknod -m 0666 rootfs/dev/null c 1 3
	mknod -m 0660 rootfs/dev/sda b 8 0
	mkfifo rootfs/dev/initctl
	chown 1000:1000 rootfs/home/alice
	ln -s hello rootfs/bin/hi
	tar cf rootfs.tar rootfs
'
echo "== tar tvf rootfs.tar (made as a fake root by $(id -un 65534 2>/dev/null || echo an unprivileged user))"
tar tvf rootfs.tar
echo "== the real files on disk, outside the session"
ls -ln rootfs/bin rootfs/dev
