# tests/integ/lib.sh: sourced by every tests/integ/t-*.sh.
#
# Gives each script:
#   BUILD  absolute build dir ($FAKEENV_BUILD, default build/)
#   FE     the launcher;  H  the helper programs' dir
#   T      a private temp dir (removed on exit); W=$T/w, the working dir
#          (the script runs in it), writable by the test user;
#          TMPDIR=$T/tmp, where the launcher puts its socket dir
#   TUID, TGID  the unprivileged test user (65534 when run as root)
# and functions:
#   as_user CMD...  run CMD as the test user (setpriv when we are root:
#                   under real root every fake succeeds for real)
#   fe CMD...       as_user $FE -- CMD...: one fake-root session
#   fe_opt OPT... -- CMD...   the same with launcher options
#   ok NAME / fail NAME WHY / check_eq NAME GOT WANT / check_ne /
#   check_match NAME GOT ERE / check_cmd NAME CMD... / check_no NAME CMD...
#   must WHAT CMD...  setup that must work: on failure "not ok", exit 1
#   wait_until SECS CMD...    poll CMD every 0.1 s, at most SECS
#   session_pids NAME         pids of process NAME of the test user that
#                             belong to this script (env, cwd or socket)
#   pick KEY <<<TEXT          rest of the line of TEXT starting "KEY "
#   skip NAME WHY   a case that cannot run here: "ok - NAME # SKIP WHY",
#                   counted apart by the runner
#   small_tmpfs VAR as root, a 64 KiB tmpfs the test user owns (full-disk
#                   cases), in VAR; status 1 otherwise (not in a $(...))
#   fs_dir VAR KIND a fresh directory the test user owns on a filesystem
#                   of KIND (ext4 or tmpfs, or ext4-nobtime: 128-byte
#                   inodes, no birth times), in VAR; as root an ext4
#                   image or a tmpfs mounted for the script (unmounted at
#                   exit), else under /tmp or /dev/shm when they are of
#                   KIND; status 1 when there is none (not in a $(...):
#                   the unmount is registered in this shell)
#   done_testing    the last line of each script
# A script whose sessions run nothing but the build's own programs
# ($H/..., and programs of the same libc) sets FE_OWN_PROGRAMS=1 before
# sourcing this; every other script ends here with one counted skip when
# the system's programs cannot load the build's shim (a musl build on a
# glibc system, docs/musl.md).
# A script that ends before done_testing (set -u, a crash, exit) prints a
# "not ok" line: no script can pass silently.

set -u
set -o pipefail

SCRIPT=$(basename "$0" .sh)
_n_ok=0
_n_fail=0
_n_skip=0
_done=0

ok() {
	echo "ok - $1"
	_n_ok=$((_n_ok + 1))
}

fail() {
	local name=$1; shift
	# One line per case: the runner counts lines.
	echo "not ok - $name: $(printf '%s' "$*" | tr '\n' '|' | cut -c1-600)"
	_n_fail=$((_n_fail + 1))
}

check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

check_ne() {
	if [ "$2" != "$3" ]; then ok "$1"; else fail "$1" "got '$2', which it must not be"; fi
}

check_match() {
	if [[ $2 =~ $3 ]]; then ok "$1"; else fail "$1" "got '$2', want a match of /$3/"; fi
}

# check_cmd NAME CMD...: CMD must exit 0.
check_cmd() {
	local name=$1 out rc; shift
	out=$("$@" 2>&1); rc=$?
	if [ $rc -eq 0 ]; then ok "$name"; else fail "$name" "exit $rc: $out"; fi
}

# check_no NAME CMD...: CMD must exit non-zero.
check_no() {
	local name=$1 out rc; shift
	out=$("$@" 2>&1); rc=$?
	if [ $rc -ne 0 ]; then ok "$name"; else fail "$name" "exit 0, want failure: $out"; fi
}

# pick KEY <<<TEXT: the rest of the first line of TEXT that starts with
# "KEY " (KEY taken literally).
pick() {
	awk -v k="$1 " 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }'
}

skip() {
	echo "ok - $1 # SKIP $2"
	_n_skip=$((_n_skip + 1))
}

bail() {
	fail "$SCRIPT" "$*"
	exit 1
}

# must WHAT CMD...: a setup step; its failure ends the script.
must() {
	local what=$1 out rc; shift
	out=$("$@" 2>&1); rc=$?
	[ $rc -eq 0 ] || bail "setup failed: $what: exit $rc: $out"
}

done_testing() {
	_done=1
	if [ $((_n_ok + _n_fail + _n_skip)) -eq 0 ]; then
		fail "$SCRIPT" "no test case ran"
	fi
	[ "$FAKEENV_VALGRIND" = 1 ] && _valgrind_verdict
	[ "$_n_fail" -eq 0 ] && exit 0
	exit 1
}

wait_until() {
	local secs=$1 i; shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	"$@" >/dev/null 2>&1
}

# --- where things are -------------------------------------------------------

_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
_b=${FAKEENV_BUILD:-build}
case $_b in /*) ;; *) _b=$_root/$_b ;; esac
BUILD=$(cd "$_b" 2>/dev/null && pwd) || { echo "not ok - $SCRIPT: no build dir $_b (run make)"; exit 1; }
FE=$BUILD/fakeenv
H=$BUILD/tests/helpers
export FE H
unset _b

if [ "$(id -u)" = 0 ]; then
	TUID=${FAKEENV_TEST_UID:-65534}
	TGID=${FAKEENV_TEST_GID:-65534}
	as_user() {
		_san_env
		setpriv --reuid="$TUID" --regid="$TGID" --clear-groups -- \
			"${_san[@]}" "$@"
	}
else
	TUID=$(id -u)
	TGID=$(id -g)
	as_user() { _san_env; "${_san[@]}" "$@"; }
fi

fe() { as_user "$FE" -- "$@"; }
fe_opt() { as_user "$FE" "$@"; }

# FAKEENV_VALGRIND=1 (make valgrind): every daemon of the script runs
# under valgrind.  The launcher finds its daemon beside its own real path,
# so the script gets a private copy of the launcher and library next to a
# fakeenvd that execs valgrind on the real one; done_testing then checks
# each daemon's log.  FAKEENV_SAN=1 (make asan): the shim is an ASan
# build, whose runtime must come first in LD_PRELOAD; leak detection is
# off in sessions, where every uninstrumented program (sh, tar) would
# report its own leaks.  The unit tests keep it.
: "${FAKEENV_VALGRIND:=0}"
: "${FAKEENV_SAN:=0}"
# The daemon's process name, for counting daemons (valgrind's under it).
DAEMON=fakeenvd

_valgrind_setup() {
	local vg=$T/vg
	command -v valgrind >/dev/null || bail "FAKEENV_VALGRIND=1 but no valgrind"
	mkdir -p "$vg/logs"
	cp "$BUILD/fakeenv" "$BUILD/libfakeenv.so" "$vg/"
	cat >"$vg/fakeenvd" <<EOS
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full \\
	--errors-for-leak-kinds=definite --show-leak-kinds=definite \\
	--log-file=$vg/logs/vg.%p "$BUILD/fakeenvd" "\$@"
EOS
	chmod 0755 "$vg" "$vg/fakeenvd"
	chmod 0777 "$vg/logs"
	FE=$vg/fakeenv
	DAEMON=memcheck-amd64-
}

# Every daemon has left (its log is complete) and none reported an error.
_valgrind_verdict() {
	local logs=$T/vg/logs f bad=
	_vg_done() {
		local f
		for f in "$logs"/vg.*; do
			[ -e "$f" ] || continue
			pgrep -f "log-file=$logs/vg" >/dev/null && return 1
		done
		return 0
	}
	wait_until 30 _vg_done || { fail "valgrind" "daemons still running after 30 s"; return; }
	for f in "$logs"/vg.*; do
		[ -s "$f" ] && bad="$bad $(basename "$f"): $(head -c 300 "$f")"
	done
	if [ -n "$bad" ]; then fail "valgrind: the daemon is clean" "$bad"; else ok "valgrind: the daemon is clean"; fi
}

# --- the temp dir -----------------------------------------------------------

T=$(mktemp -d /tmp/fakeenv-"$SCRIPT".XXXXXX) || { echo "not ok - $SCRIPT: mktemp failed"; exit 1; }
W=$T/w
mkdir -p "$W" "$T/tmp"
chmod 0755 "$T" "$W" "$T/tmp"
[ "$(id -u)" = 0 ] && chown -R "$TUID:$TGID" "$T"
export TMPDIR=$T/tmp HOME=$T
# A PATH the test user can search (root's may hold dirs under /root: a
# dir it may not search turns "not found" into EACCES, 126).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
unset XDG_RUNTIME_DIR FAKEENV_SOCKET FAKEENV_UIDS FAKEENV_GIDS FAKEENV_GROUPS FAKEENV_LIB
unset FAKEENV_UNKNOWN_IS_REAL LD_PRELOAD
# What as_user puts before a command, in _san: nothing, or the ASan
# runtime ahead of any LD_PRELOAD the caller set, in the sanitizer flavour
# (only there: the script's own pgrep and awk run without it).  SAN_PRE
# is that runtime, for a test that writes an LD_PRELOAD of its own into a
# command line; SAN_PRE is empty in the plain flavour.
SAN_PRE=
if [ "$FAKEENV_SAN" = 1 ]; then
	SAN_PRE=$(${CC:-cc} -print-file-name=libasan.so)
	[ -f "$SAN_PRE" ] || bail "FAKEENV_SAN=1 but no libasan.so from ${CC:-cc}"
fi
_san_env() {
	_san=(env)
	[ -n "$SAN_PRE" ] &&
		_san=(env LD_PRELOAD="$SAN_PRE${LD_PRELOAD:+:$LD_PRELOAD}" ASAN_OPTIONS=detect_leaks=0)
}

# not_with_san WHY: true (and a note) in the sanitizer flavour, for checks
# of exact LD_PRELOAD contents that cannot hold when a runtime must come
# first.  A skipped check prints no "ok": it is not counted as passed.
not_with_san() {
	[ -n "$SAN_PRE" ] || return 1
	echo "# skipped in the sanitizer flavour: $*"
}
[ "$FAKEENV_VALGRIND" = 1 ] && _valgrind_setup

# --- filesystems ------------------------------------------------------------

_mounts=()
_fs_n=0

fs_dir() {
	local _fs_var=$1 _fs_kind=$2 _fs_m _fs_d
	_fs_n=$((_fs_n + 1))
	_fs_m=$T/fs.$_fs_kind.$_fs_n
	if [ "$(id -u)" = 0 ]; then
		mkdir "$_fs_m" || return 1
		case $_fs_kind in
		ext4 | ext4-nobtime)
			truncate -s 256M "$T/fs.$_fs_n.img" &&
				mkfs.ext4 -q -E root_owner="$TUID:$TGID" \
					$([ "$_fs_kind" = ext4 ] || echo "-I 128") \
					"$T/fs.$_fs_n.img" >/dev/null 2>&1 &&
				mount -o loop "$T/fs.$_fs_n.img" "$_fs_m" 2>/dev/null || return 1 ;;
		tmpfs)
			mount -t tmpfs -o mode=0755,uid="$TUID",gid="$TGID" fe-test "$_fs_m" 2>/dev/null || return 1 ;;
		*) return 1 ;;
		esac
		_mounts+=("$_fs_m")
		_fs_d=$_fs_m/d
		as_user mkdir "$_fs_d" || return 1
		printf -v "$_fs_var" %s "$_fs_d"
		return 0
	fi
	case $_fs_kind in
	ext4) _fs_d=$W ;;
	tmpfs) _fs_d=/dev/shm ;;
	*) return 1 ;;
	esac
	case $(stat -f -c %T "$_fs_d" 2>/dev/null) in
	ext2/ext3) [ "$_fs_kind" = ext4 ] || return 1 ;;
	tmpfs) [ "$_fs_kind" = tmpfs ] || return 1 ;;
	*) return 1 ;;
	esac
	_fs_d=$(mktemp -d "$_fs_d/fe-fs.XXXXXX") || return 1
	_mounts+=("rm:$_fs_d")
	printf -v "$_fs_var" %s "$_fs_d"
}

# small_tmpfs VAR: as root, a 64 KiB tmpfs the test user owns, mounted for
# the script (unmounted at exit), in VAR, for the full-disk cases (the
# caller fills it); status 1 when not root or the mount fails.  Not in a
# $(...), like fs_dir.
small_tmpfs() {
	local _st_m=$T/small.$((_fs_n += 1))
	[ "$(id -u)" = 0 ] || return 1
	mkdir "$_st_m" || return 1
	mount -t tmpfs -o size=64k,mode=0755,uid="$TUID",gid="$TGID" fe-small "$_st_m" 2>/dev/null || return 1
	_mounts+=("$_st_m")
	printf -v "$1" %s "$_st_m"
}

# Unmount what fs_dir mounted, newest first.
_fs_cleanup() {
	local i m
	for ((i = ${#_mounts[@]} - 1; i >= 0; i--)); do
		m=${_mounts[i]}
		case $m in
		rm:*) rm -rf "${m#rm:}" ;;
		*) umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ;;
		esac
	done
	_mounts=()
}

# Inodes of the listening sockets under $T (the daemon's).
_sock_inodes() {
	awk -v t="$T/" 'index($8, t) == 1 { print $7 }' /proc/net/unix 2>/dev/null
}

# _mine PID: the process belongs to this script's sessions.
_mine() {
	local pid=$1 fd l ino
	# grep -q exits at the first match; with pipefail the writer's SIGPIPE
	# would then fail the pipeline, so grep reads from a file or a
	# process substitution, never from a pipe.
	grep -qxF "TMPDIR=$T/tmp" < <(tr "\0" "\n" 2>/dev/null </proc/"$pid"/environ) && return 0
	case $(readlink /proc/"$pid"/cwd 2>/dev/null) in "$T"/*|"$T") return 0 ;; esac
	for fd in /proc/"$pid"/fd/*; do
		l=$(readlink "$fd" 2>/dev/null) || continue
		case $l in socket:\[*\])
			ino=${l#socket:[}; ino=${ino%]}
			grep -qx "$ino" < <(_sock_inodes) && return 0 ;;
		esac
	done
	return 1
}

session_pids() {
	local p
	for p in $(pgrep -u "$TUID" -x "$1"); do
		_mine "$p" && echo "$p"
	done
}

# no_procs NAME...: none of these processes of this script is alive.
no_procs() {
	local n
	for n in "$@"; do
		[ -z "$(session_pids "$n")" ] || return 1
	done
}

_cleanup() {
	local rc=$? p
	trap '' INT TERM HUP PIPE
	# Whatever a failed test left running as the test user in our dir.
	# (Run as the test user itself, this script is one of them.)
	for p in $(pgrep -u "$TUID"); do
		[ "$p" = $$ ] && continue
		_mine "$p" && kill -9 "$p" 2>/dev/null
	done
	cd /
	_fs_cleanup
	chmod -R u+rwX "$T" 2>/dev/null
	rm -rf "$T"
	if [ "$_done" != 1 ]; then
		echo "not ok - $SCRIPT: ended before done_testing (exit $rc)" 2>/dev/null
		rc=1
	fi
	exit $rc
}
trap _cleanup EXIT
# Killed by a signal (a closed pipe, ^C, the runner's timeout): clean up too.
trap 'exit 1' INT TERM HUP PIPE

# --- preconditions ----------------------------------------------------------

for _f in "$FE" "$BUILD/fakeenvd" "$BUILD/libfakeenv.so"; do
	[ -e "$_f" ] || bail "$_f is not built (make)"
done
as_user test -x "$FE" -a -r "$BUILD/libfakeenv.so" -a -x "$H" || \
	bail "the build dir $BUILD is not readable/executable by uid $TUID: make every parent dir o+x, or build elsewhere (see .ci/run)"
as_user test -w "$W" || bail "$W is not writable by uid $TUID"
unset _f

if [ "${FE_OWN_PROGRAMS:-0}" != 1 ] &&
   ! env ${SAN_PRE:+ASAN_OPTIONS=detect_leaks=0} \
	LD_PRELOAD="${SAN_PRE:+$SAN_PRE:}$BUILD/libfakeenv.so" /bin/true \
	>/dev/null 2>&1; then
	skip "$SCRIPT" "the system's programs cannot load $BUILD/libfakeenv.so (another libc's build: docs/musl.md)"
	done_testing
fi

cd "$W" || bail "cannot cd to $W"
