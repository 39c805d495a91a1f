#!/bin/bash
# Without a record a file reads as 0:0; with -u/--unknown-is-real it keeps
# its real owner; a recorded file shows its record either way.
. "$(dirname "$0")/lib.sh"

must "make a file natively" as_user touch pre
check_eq "natively the file is the test user's" "$(as_user stat -c %u:%g pre)" "$TUID:$TGID"
check_eq "default: an unrecorded file reads 0:0" "$(fe stat -c %u:%g pre 2>&1)" "0:0"
check_eq "-u: an unrecorded file keeps its real owner" \
	"$(fe_opt -u -- stat -c %u:%g pre 2>&1)" "$TUID:$TGID"
check_eq "--unknown-is-real: the same" \
	"$(fe_opt --unknown-is-real -- "$H"/st stat pre 2>&1)" "$TUID $TGID 100644 0 0"
check_eq "-u: a chowned file shows its record" \
	"$(fe_opt -u -- sh -c 'chown 3:4 pre && stat -c %u:%g pre' 2>&1)" "3:4"
check_eq "-u: a device made in the session shows root-owned" \
	"$(fe_opt -u -- sh -c 'mknod dev c 1 3 && stat -c %u:%g:%t,%T dev' 2>&1)" "0:0:1,3"
check_eq "-u: a new file belongs to the fake fsuid 0" \
	"$(fe_opt -u -- sh -c 'touch new && stat -c %u:%g new' 2>&1)" "0:0"
done_testing
