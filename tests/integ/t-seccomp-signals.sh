#!/bin/bash
# Signals that land while a static program's call waits on the seccomp
# supervisor (issue 13): sigloop chowns and stats one file for 2 seconds
# under a SIGALRM every 200 us, with SA_RESTART (every call must succeed)
# and without (EINTR allowed, retried); every answer must be exact and the
# program must end.  The dynamic build, through the shim, is the control.
. "$(dirname "$0")/lib.sh"

S=$BUILD/tests/static
[ -x "$S/sigloop" ] || bail "$S/sigloop is not built (make)"

for b in "$S" "$H"; do
	case $b in "$S") what=static ;; *) what=dynamic ;; esac
	for how in restart intr; do
		out=$(fe sh -c 'touch f && timeout 60 "$0" '$how' 2 3 4 f; echo "rc $?"' "$b/sigloop" 2>&1)
		check_eq "$what $how: every chown and stat exact under SIGALRM" \
			"$(head -1 <<<"$out") $(pick rc <<<"$out")" "ok 0"
		check_match "$what $how: the handler ran often (the case means something)" \
			"$(pick signals <<<"$out")" "^[0-9]{3,}$"
	done
done
check_eq "never: the static build's chown escapes (the case can fail)" \
	"$(as_user env FAKEENV_SECCOMP=never "$FE" -- "$S/sigloop" restart 1 3 4 f 2>&1)" "round 0: ERR EPERM"
check_eq "outside: the file keeps its real owner" "$(stat -c %u:%g f)" "$TUID:$TGID"
done_testing
