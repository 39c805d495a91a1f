#!/bin/bash
# Raw system calls in a dynamic program (issue 13): rawsc makes getuid,
# fchownat and newfstatat with the syscall instruction itself, which no
# preload can wrap.  Under --seccomp=always every program of the session
# is under the filter, so they are faked; under auto (the default) a
# dynamic program is not, so they escape: the real uid, EPERM, the real
# owner.  x86_64 only (the helper's inline asm).
. "$(dirname "$0")/lib.sh"

R=$H/rawsc
export R
if [ "$(uname -m)" != x86_64 ]; then
	skip "raw syscall instructions" "rawsc's inline asm is x86_64's, this is $(uname -m)"
	done_testing
fi

# The same steps under each mode: g is chowned by coreutils (the shim),
# f by the raw fchownat.
steps='umask 022
	touch f g && chown 3:4 g || exit 9
	echo "ids $($R ids)"
	echo "chown $($R fchownat f 7 8)"
	echo "stat-f $($R newfstatat f)"
	echo "coreutils-f $(stat -c %u:%g f)"
	echo "stat-g $($R newfstatat g)"
	echo "coreutils-g $(stat -c %u:%g g)"
	echo "missing $($R fchownat nope 1 1)"'

out=$(fe_opt --seccomp=always -- sh -c "$steps" 2>&1)
check_eq "always: the session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }
check_eq "always: raw getuid, geteuid, getgid, getegid are 0" "$(get ids)" "0 0 0 0"
check_eq "always: raw fchownat succeeds as fake root" "$(get chown)" ok
check_eq "always: raw newfstatat shows the raw chown" "$(get stat-f)" "7 8 100644 0 0"
check_eq "always: coreutils stat sees the raw chown (it was recorded)" "$(get coreutils-f)" "7:8"
check_eq "always: raw newfstatat shows coreutils' chown" "$(get stat-g)" "3 4 100644 0 0"
check_eq "always: raw fchownat of a missing file is ENOENT" "$(get missing)" "ERR ENOENT"
check_eq "always: outside, f keeps its real owner" "$(stat -c %u:%g f)" "$TUID:$TGID"

for how in auto default never; do
	rm -f f g
	case $how in
	default) out=$(fe sh -c "$steps" 2>&1) ;;
	never) out=$(as_user env FAKEENV_SECCOMP=never "$FE" -- sh -c "$steps" 2>&1) ;;
	*) out=$(fe_opt --seccomp=$how -- sh -c "$steps" 2>&1) ;;
	esac
	check_eq "$how: the session exits 0" "$?" 0
	check_eq "$how: raw getuid escapes: the real ids" "$(get ids)" "$TUID $TUID $TGID $TGID"
	check_eq "$how: raw fchownat escapes: EPERM" "$(get chown)" "ERR EPERM"
	check_eq "$how: raw newfstatat escapes: the real owner" "$(get stat-g)" "$TUID $TGID 100644 0 0"
	check_eq "$how: coreutils in the session still sees its own chown" "$(get coreutils-g)" "3:4"
	check_eq "$how: nothing recorded for the failed raw chown" "$(get coreutils-f)" "0:0"
done
done_testing
