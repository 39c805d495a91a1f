#!/bin/bash
# Where the kernel or a container refuses seccomp user notification
# (issue 13): nonotif runs the session under a filter that fails seccomp(2)
# with SECCOMP_FILTER_FLAG_NEW_LISTENER as EINVAL, as a kernel before 5.0
# does.  A static program must then run unfaked, as today, with one line
# on stderr saying why; dynamic programs keep the preload's answers; never
# a failure or a hang.
. "$(dirname "$0")/lib.sh"

S=$BUILD/tests/static
N=$H/nonotif
[ -x "$S/creds" ] || bail "$S/creds is not built (make)"
check_eq "nonotif lets a plain program run (the helper works)" \
	"$(as_user "$N" "$H/creds" show 2>&1 | cut -d' ' -f1)" "getuid=$TUID"

real="getuid=$TUID geteuid=$TUID "
for how in auto always; do
	as_user timeout 60 "$N" "$FE" --seccomp=$how -- "$S/creds" show >out 2>err
	check_eq "$how, refused: the static program runs and the session exits 0" "$?" 0
	check_match "$how, refused: the static program runs unfaked" "$(cat out)" "^$real"
	check_eq "$how, refused: one line on stderr" "$(wc -l <err)" 1
	check_match "$how, refused: the line says seccomp" "$(cat err)" "[Ss][Ee][Cc][Cc][Oo][Mm][Pp]"
	as_user timeout 60 "$N" "$FE" --seccomp=$how -- sh -c 'id -u; touch f; chown 7:8 f; stat -c %u:%g f' >out 2>/dev/null
	check_eq "$how, refused: a dynamic program is still faked" "$(tr '\n' ' ' <out)" "0 7:8 "
done
as_user env FAKEENV_SECCOMP=never timeout 60 "$N" "$FE" -- "$S/creds" show >out 2>err
check_eq "never, refused: nothing to say on stderr" "$?:$(cat err)" 0:
check_match "never, refused: the static program runs unfaked" "$(cat out)" "^$real"
done_testing
