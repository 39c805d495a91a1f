#!/bin/bash
# Exec and spawn keep the child in the session whatever environment it is
# given (env -i, env -u LD_PRELOAD, an empty or tiny envp, a NULL envp),
# through every entry point and from a vfork child, and the child starts
# with the fake ids the process has at exec time.
. "$(dirname "$0")/lib.sh"

S=$H/spawn
# The library the sessions preload: a private copy under make valgrind.
LIB=$(readlink -f "$(dirname "$FE")/libfakeenv.so")
root="uid 0 gid 0 groups 0"

# The helper itself, natively: it prints the real ids, and a preloaded
# shim outside a session leaves the child's environment alone.
out=$(as_user "$S" -e A=1 execve "$S" show 2>&1)
check_eq "natively the child shows the real uid" \
	"$(sed -n 1p <<<"$out" | cut -d' ' -f2)" "$TUID"
check_eq "natively the child gets exactly its envp" "$(sed 1d <<<"$out")" "A=1"
out=$(as_user env LD_PRELOAD="${SAN_PRE:+$SAN_PRE:}$LIB" "$S" -e A=1 execve "$S" show 2>&1)
check_eq "outside a session the preloaded shim passes envp through" \
	"$(sed 1d <<<"$out")" "A=1"

check_eq "env -i /usr/bin/id -u prints 0" "$(fe env -i /usr/bin/id -u 2>&1)" 0
check_ne "natively env -i id -u is not 0 (the test can fail)" \
	"$(as_user env -i /usr/bin/id -u 2>&1)" 0
check_eq "env -u LD_PRELOAD id -u prints 0" \
	"$(fe env -u LD_PRELOAD id -u 2>&1)" 0
check_eq "env -i keeps the variables it was given" \
	"$(fe env -i FOO=bar /usr/bin/printenv FOO 2>&1)" bar

# Every entry point with an empty environment.
for how in execve execv execl execle fexecve execveat posix_spawn; do
	check_eq "$how with an empty env stays in the session" \
		"$(fe "$S" "$how" "$S" show 2>&1 | sed -n 1p)" "$root"
done
for how in execve execv execl execle fexecve execveat; do
	check_eq "$how from a vfork child stays in the session" \
		"$(fe "$S" -v "$how" "$S" show 2>&1 | sed -n 1p)" "$root"
done
# The PATH searching forms: execvp and execlp search the environ they are
# given (the -e PATH), execvpe and posix_spawnp the caller's PATH.
for how in execvp execlp; do
	check_eq "$how with only PATH in environ stays in the session" \
		"$(fe "$S" -e PATH="$H" "$how" spawn show 2>&1 | sed -n 1p)" "$root"
done
for how in execvpe posix_spawnp; do
	check_eq "$how with an empty env stays in the session" \
		"$(PATH=$H:$PATH fe "$S" "$how" spawn show 2>&1 | sed -n 1p)" "$root"
done
check_eq "execve with a NULL envp stays in the session" \
	"$(fe "$S" -n execve "$S" show 2>&1 | sed -n 1p)" "$root"
check_eq "posix_spawn with a NULL envp stays in the session" \
	"$(fe "$S" -n posix_spawn "$S" show 2>&1 | sed -n 1p)" "$root"

# The repaired environment: the caller's entries first, in order, then
# what the session needs; nothing else.
if ! not_with_san "the exact LD_PRELOAD of a repaired envp"; then
	out=$(fe "$S" -e A=1 -e B=2 execve "$S" show 2>&1 | sed 1d |
		sed 's#^\(FAKEENV_SOCKET\|FAKEROOTKEY\)=/.*/sock$#\1=SOCK#
		     s#^FAKEENV_SUPERVISOR=@fakeenv-sup-[0-9]*-[0-9a-f]*$#FAKEENV_SUPERVISOR=SUP#
		     s#^FAKEENV_LAUNCHER=/.*/fakeenv$#FAKEENV_LAUNCHER=FE#')
	check_eq "a tiny env is kept in order and completed" "$out" "A=1
B=2
LD_PRELOAD=$LIB
FAKEENV_SOCKET=SOCK
FAKEENV_LIB=$LIB
FAKEENV_SECCOMP=auto
FAKEENV_SUPERVISOR=SUP
FAKEENV_LAUNCHER=FE
FAKEROOTKEY=SOCK
FAKEENV_UIDS=0:0:0:0
FAKEENV_GIDS=0:0:0:0
FAKEENV_GROUPS=0"

	libdir=$(dirname "$(ldd /bin/true | awk '/libc\.so/ { print $3 }')")
	other=$libdir/libutil.so.1
	[ -e "$other" ] || other=$libdir/libdl.so.2
	[ -e "$other" ] || bail "no harmless library to preload in $libdir"
	check_eq "an LD_PRELOAD without the shim gets it appended" \
		"$(fe "$S" -e LD_PRELOAD="$other" execve "$S" show 2>&1 | grep '^LD_PRELOAD=')" \
		"LD_PRELOAD=$other:$LIB"
	check_eq "an LD_PRELOAD naming the shim is left as it is" \
		"$(fe "$S" -e LD_PRELOAD="$other $LIB" execve "$S" show 2>&1 | grep '^LD_PRELOAD=')" \
		"LD_PRELOAD=$other $LIB"
	check_eq "two LD_PRELOADs become one: the last (ld.so's) with the shim" \
		"$(fe "$S" -e LD_PRELOAD=/nonexistent.so -e LD_PRELOAD="$other" execve "$S" show 2>&1 |
			grep '^LD_PRELOAD=')" "LD_PRELOAD=$other:$LIB"
fi
check_eq "a FAKEENV_SOCKET in envp is not duplicated" \
	"$(fe sh -c 'exec "$0" -e FAKEENV_SOCKET="$FAKEENV_SOCKET" execve "$0" show' "$S" 2>&1 |
		grep -c '^FAKEENV_SOCKET=')" 1
check_eq "-u: FAKEENV_UNKNOWN_IS_REAL is restored" \
	"$(fe_opt -u -- "$S" execve "$S" show 2>&1 | grep '^FAKEENV_UNKNOWN')" \
	"FAKEENV_UNKNOWN_IS_REAL=1"

# Credentials follow exec: the ids at exec time, not those in envp.
check_eq "setuid(1234) then execve with an empty env: id -u is 1234" \
	"$(fe "$S" -u 1234 execve /usr/bin/id -u 2>&1)" 1234
check_eq "setgroups, setgid, setuid then each id survives posix_spawn" \
	"$(fe "$S" -G 7,8 -g 55 -u 1234 posix_spawn "$S" show 2>&1 | sed -n 1p)" \
	"uid 1234 gid 55 groups 7,8"
out=$(fe "$S" -e FAKEENV_UIDS=0:0:0:0 -u 1234 execve "$S" show 2>&1)
check_eq "a stale FAKEENV_UIDS in envp is replaced" \
	"$(sed -n 1p <<<"$out"; grep -c '^FAKEENV_UIDS=' <<<"$out")" "uid 1234 gid 0 groups 0
1"
check_eq "the ids follow a vfork child's execve" \
	"$(fe "$S" -v -u 1234 execve /usr/bin/id -u 2>&1)" 1234

# The child is really in the session: its chown is faked.
must "make f" as_user touch f
check_eq "a chown after env -i is still faked" \
	"$(fe sh -c 'env -i /bin/chown 4:5 f; stat -c %u:%g f' 2>&1)" "4:5"
check_eq "a chown through execve with an empty env is still faked" \
	"$(fe sh -c '"$0" execve /bin/chown 6:7 f; stat -c %u:%g f' "$S" 2>&1)" "6:7"

# Failures keep the real call's error.
must "make a non-executable file" as_user touch noexec
for how in execve execvpe posix_spawn fexecve; do
	check_eq "$how of a missing file: as natively" \
		"$(fe "$S" "$how" /nonexistent/x 2>&1)" "$(as_user "$S" "$how" /nonexistent/x 2>&1)"
	check_eq "$how of a non-executable file: as natively" \
		"$(fe "$S" "$how" "$W"/noexec 2>&1)" "$(as_user "$S" "$how" "$W"/noexec 2>&1)"
done
check_eq "execve of a missing file fails with ENOENT" \
	"$(fe "$S" execve /nonexistent/x 2>&1)" "ERR ENOENT"
# ldd (LD_TRACE_LOADED_OBJECTS) lists the program's libraries, not
# ours: usrmerge's conversion copies each library ldd names.
check_eq "ldd in a session lists no libfakeenv" \
	"$(fe ldd /bin/true 2>&1 | grep -c libfakeenv)" "0"
check_eq "and the session goes on after it" \
	"$(fe sh -c 'ldd /bin/true >/dev/null; id -u' 2>&1)" "0"
done_testing
