#!/bin/bash
# Go programs are faked below libc (issue 13): Go's runtime makes its
# system calls itself, with or without cgo, so only the seccomp filter
# sees them.  tests/integ/go/gofake.go is built here with Debian's
# golang-go, as the test user, with CGO_ENABLED=0 (a static ELF) and,
# where cgo builds, with cgo (a dynamic ELF the preload is loaded into
# but never called by: auto must know it by its Go build id).  Each build
# in a session: os.Getuid, os.Chown, os.Lchown, os.Lstat, syscall.Mknod,
# 8 threads chowning at once, and archive/tar of a tree the shell faked,
# listed with GNU tar.  With FAKEENV_SECCOMP=never they escape.
src=$(cd "$(dirname "$0")" && pwd)/go/gofake.go
. "$(dirname "$0")/lib.sh"

if ! command -v go >/dev/null; then
	skip "Go programs in a session" "no Go toolchain (golang-go)"
	done_testing
fi
GO=$T/go
must "a dir for the Go builds" as_user mkdir -p "$GO/cache" "$GO/path" "$GO/home"
# A build as the test user, in dirs it owns (a lone file needs no go.mod;
# nothing is fetched: stdlib only, GOPROXY=off),
# without the sanitizer flavour's runtime preloaded into the toolchain.
gobuild_as() {
	local out=$1; shift
	as_user env -u LD_PRELOAD GOCACHE="$GO/cache" GOPATH="$GO/path" HOME="$GO/home" \
		GOFLAGS= GOPROXY=off GOTOOLCHAIN=local "$@" go build -o "$GO/$out" "$src" 2>&1
}
must "go build with CGO_ENABLED=0" gobuild_as gofake-nocgo CGO_ENABLED=0
builds=gofake-nocgo
if out=$(gobuild_as gofake-cgo CGO_ENABLED=1); then
	builds="$builds gofake-cgo"
else
	skip "gofake built with cgo" "go build with cgo failed: $(echo $out | cut -c1-200)"
fi
check_eq "the CGO_ENABLED=0 build is a static ELF" \
	"$(readelf -l "$GO/gofake-nocgo" 2>&1 | grep -c 'program interpreter')" 0

F='%u:%g %a %F %t,%T'
export F
# GNU tar -tv, one line an entry: mode, owner, device or link, name.
tarv() {
	tar --numeric-owner -tvf - | awk '{
		x = $1 ~ /^[cb]/ ? $3 " " : ""
		n = $NF; if ($1 ~ /^l/) n = $(NF - 2) " -> " $NF
		print $1, $2, x n }' | LC_ALL=C sort | tr '\n' '|'
}
tree='-rw-r--r-- 0/0 tree/plain|-rwsr-xr-x 11/12 tree/suid|crw--w---- 0/5 4,1 tree/tty|drwxr-s--- 1000/1000 tree/home/|drwxr-xr-x 0/0 tree/|lrwxrwxrwx 3/4 tree/ln -> plain|'

for b in $builds; do
	G=$GO/$b
	rm -rf "$W"/*
	out=$(fe sh -c '
		umask 022
		G=$0
		echo "ids $($G ids)"
		touch f; echo "chown $($G chown f 7 8)"; echo "cu-f $(stat -c %u:%g f)"
		ln -s f l; echo "lchown $($G lchown l 9 10)"
		echo "lstat-l $($G lstat l)"; echo "stat-l $($G stat l)"
		echo "cu-l $(stat -c %u:%g l) $(stat -L -c %u:%g l)"
		echo "mknod $($G mknod c0 c 620 4 64)"; echo "cu-c0 $(stat -c "$F" c0)"
		mkdir tree && touch tree/plain tree/suid && chown 11:12 tree/suid &&
			chmod 4755 tree/suid && mknod -m 620 tree/tty c 4 1 &&
			chown 0:5 tree/tty && mkdir tree/home && chown 1000:1000 tree/home &&
			chmod 2750 tree/home && ln -s plain tree/ln && chown -h 3:4 tree/ln &&
			echo "tree ok"
		echo "lstat-suid $($G lstat tree/suid)"
		echo "lstat-tty $($G lstat tree/tty)"
		$G tar tree >t.tar && echo "tar ok"
		touch th; echo "threads $($G threads 8 th 21 22)"; echo "cu-th $(stat -c %u:%g th)"
	' "$G" 2>&1)
	check_eq "$b: the session exits 0" "$?" 0
	get() { pick "$1" <<<"$out"; }
	check_eq "$b: os.Getuid, Geteuid, Getgid, Getegid, Getgroups are root's" "$(get ids)" "0 0 0 0 [0]"
	check_eq "$b: os.Chown succeeds as fake root" "$(get chown)" ok
	check_eq "$b: coreutils stat sees os.Chown's owner" "$(get cu-f)" 7:8
	check_eq "$b: os.Lchown succeeds" "$(get lchown)" ok
	check_eq "$b: os.Lstat shows the link's new owner" "$(get lstat-l)" "9 10 120777 0 0"
	check_eq "$b: os.Stat follows to the target's owner" "$(get stat-l)" "7 8 100644 0 0"
	check_eq "$b: coreutils sees the Lchown on the link only" "$(get cu-l)" "9:10 7:8"
	check_eq "$b: syscall.Mknod of a char device succeeds" "$(get mknod)" ok
	check_eq "$b: coreutils stat sees the device" "$(get cu-c0)" \
		"0:0 600 character special file 4,40"
	check_eq "$b: the shell faked the tree" "$(get tree)" ok
	check_eq "$b: os.Lstat shows the shell's chown and chmod 4755" "$(get lstat-suid)" "11 12 104755 0 0"
	check_eq "$b: os.Lstat shows the shell's device" "$(get lstat-tty)" "0 5 20620 4 1"
	check_eq "$b: archive/tar of the tree succeeds" "$(get tar)" ok
	check_eq "$b: tar tvf of the archive/tar stream shows the faked tree" \
		"$(tarv <t.tar 2>&1)" "$tree"
	check_eq "$b: 8 threads chown and lstat at once, each exact" "$(get threads)" ok
	check_eq "$b: coreutils sees the threads' chown" "$(get cu-th)" 21:22
	check_eq "$b: outside, f keeps its real owner" "$(stat -c %u:%g f 2>&1)" "$TUID:$TGID"

	rm -rf "$W"/*
	out=$(as_user env FAKEENV_SECCOMP=never "$FE" -- sh -c '
		G=$0
		touch f g && chown 7:8 g
		echo "ids $($G ids)"
		echo "chown $($G chown f 1 2)"
		echo "lstat-g $($G lstat g)"
		echo "mknod $($G mknod c0 c 600 1 3)"
	' "$G" 2>&1)
	check_match "$b never: os.Getuid is the real uid" "$(get ids)" "^$TUID $TUID $TGID $TGID "
	check_eq "$b never: os.Chown fails with EPERM" "$(get chown)" "ERR EPERM"
	check_eq "$b never: os.Lstat shows the real owner" "$(get lstat-g)" "$TUID $TGID 100644 0 0"
	check_eq "$b never: syscall.Mknod fails with EPERM" "$(get mknod)" "ERR EPERM"
done
done_testing
