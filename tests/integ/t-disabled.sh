#!/bin/bash
# FAKEENV_DISABLED=1 opts one process tree out of the session: real ids,
# real owners, a chown that fails as it does natively, nothing recorded;
# a child that unsets it (or sets it to 0) fakes again and sees the
# session's records.  Read at load, so it holds across fork, exec and
# posix_spawn as far as the environment carries it; env -i clears it.
. "$(dirname "$0")/lib.sh"

D=$H/dis
S=$H/spawn
must "a file" as_user touch f

# Natively, so that each case below can fail.
check_eq "natively chown to root fails with EPERM" \
	"$(as_user "$D" fork f | sed -n 1p)" "parent uid $TUID owner $TUID chown EPERM"

# One session for every case: the chown of f is recorded first.
out=$(fe sh -c '
	chown 5:5 f || exit 1
	echo "id $(id -u) $(FAKEENV_DISABLED=1 id -u) $(FAKEENV_DISABLED=0 id -u)"
	echo "stat $(stat -c %u f) $(FAKEENV_DISABLED=1 stat -c %u f)"
	FAKEENV_DISABLED=1 chown 6:6 f 2>/dev/null; echo "chown-rc $?"
	echo "after $(stat -c %u:%g f)"
	FAKEENV_DISABLED=1 sh -c "echo \"unset \$(env -u FAKEENV_DISABLED stat -c %u f)\"
		echo \"zero \$(FAKEENV_DISABLED=0 stat -c %u f)\"
		echo \"env-i \$(env -i /usr/bin/id -u) \$(env -i /usr/bin/stat -c %u f)\"
		echo \"sub \$(sh -c \"id -u\")\""
	export FAKEENV_DISABLED=1
	echo "export $(id -u)"
' 2>&1)
check_eq "in the session id -u is 0" "$(pick id <<<"$out" | cut -d' ' -f1)" 0
check_eq "a disabled child sees the real uid" "$(pick id <<<"$out" | cut -d' ' -f2)" "$TUID"
check_eq "FAKEENV_DISABLED=0 fakes" "$(pick id <<<"$out" | cut -d' ' -f3)" 0
check_eq "the session shows the chowned owner" "$(pick stat <<<"$out" | cut -d' ' -f1)" 5
check_eq "a disabled child stats the real owner" "$(pick stat <<<"$out" | cut -d' ' -f2)" "$TUID"
check_eq "a disabled chown fails" "$(pick chown-rc <<<"$out")" 1
check_eq "and changes no record" "$(pick after <<<"$out")" 5:5
check_eq "a disabled parent's child with env -u fakes again, with the records" \
	"$(pick unset <<<"$out")" 5
check_eq "a disabled parent's child with FAKEENV_DISABLED=0 fakes again" \
	"$(pick zero <<<"$out")" 5
check_eq "env -i clears it: the child fakes again" "$(pick env-i <<<"$out")" "0 5"
check_eq "a disabled shell's children stay disabled" "$(pick sub <<<"$out")" "$TUID"
check_eq "a shell that exports it disables its next child" "$(pick export <<<"$out")" "$TUID"

# fork without exec: the child is the same image, disabled too.
out=$(fe sh -c 'chown 5:5 f; FAKEENV_DISABLED=1 "$0" fork f' "$D" 2>&1)
check_eq "a disabled process sees real ids, owners and chown" \
	"$(sed -n 1p <<<"$out")" "parent uid $TUID owner $TUID chown EPERM"
check_eq "so does its fork child" \
	"$(sed -n 2p <<<"$out")" "child uid $TUID owner $TUID chown EPERM"
out=$(fe "$D" fork f 2>&1)
check_eq "an enabled fork child fakes" "$(sed -n 2p <<<"$out")" "child uid 0 owner 0 chown ok"

# setenv after start, then exec: the child is disabled; unsetenv in a
# disabled process, then exec: the child fakes again (the exec wrapper
# never puts the variable back).
check_eq "setenv(FAKEENV_DISABLED, 1) then exec: the child is disabled" \
	"$(fe "$D" setenv 1 id -u 2>&1)" "$TUID"
check_eq "unsetenv in a disabled process then exec: the child fakes" \
	"$(fe env FAKEENV_DISABLED=1 "$D" setenv - id -u 2>&1)" 0
check_eq "setenv 0 in a disabled process then exec: the child fakes" \
	"$(fe env FAKEENV_DISABLED=1 "$D" setenv 0 id -u 2>&1)" 0

# Explicit envp through execve and posix_spawn, from a disabled process:
# the session is repaired (LD_PRELOAD, the socket), the variable is not.
for how in execve posix_spawn; do
	check_eq "$how from a disabled process, empty envp: the child fakes" \
		"$(fe env FAKEENV_DISABLED=1 "$S" "$how" "$S" show 2>&1 | sed -n 1p)" \
		"uid 0 gid 0 groups 0"
	check_eq "$how with FAKEENV_DISABLED=1 in envp: the child is disabled" \
		"$(fe "$S" -e FAKEENV_DISABLED=1 "$how" "$S" show 2>&1 | sed -n 1p | cut -d' ' -f1-2)" \
		"uid $TUID"
	check_match "$how from a disabled process keeps the shim in LD_PRELOAD" \
		"$(fe env FAKEENV_DISABLED=1 "$S" "$how" "$S" show 2>&1 | grep '^LD_PRELOAD=')" \
		'libfakeenv\.so'
done

# A disabled process's changes are never recorded: its new files, dirs,
# fifos, chmods and chowns leave the table as it was.
out=$(fe sh -c '
	"$0" status | awk "/^records:/ { print \$2 }"
	FAKEENV_DISABLED=1 sh -c "touch n1; mkdir n2; mkfifo n3; chmod 750 n1; chown 0:0 n1 2>/dev/null; mknod n4 c 1 3 2>/dev/null; ln -s n1 n5"
	"$0" status | awk "/^records:/ { print \$2 }"
	stat -c "%u:%g %a" n1
	touch m1; chown 7:7 m1
	"$0" status | awk "/^records:/ { print \$2 }"
' "$FE" 2>&1)
check_eq "no record from a disabled process" "$(sed -n 2p <<<"$out")" "$(sed -n 1p <<<"$out")"
check_eq "its file is unrecorded: 0:0 and its real mode in the session" \
	"$(sed -n 3p <<<"$out")" "0:0 750"
check_eq "the session still records afterwards" "$(sed -n 4p <<<"$out")" \
	"$(($(sed -n 1p <<<"$out") + 1))"
check_cmd "the disabled mknod made no node" test ! -e n4

done_testing
