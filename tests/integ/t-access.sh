#!/bin/bash
# access, faccessat (plain and AT_EACCESS), euidaccess, eaccess answer as
# for root: read and write allowed whatever the mode, execute when any x
# bit is set on a file, directories searchable.  The files are made 0000
# for real beforehand, so the native answers differ.
. "$(dirname "$0")/lib.sh"

must "make the files" as_user sh -c '
	touch a0 ax && chmod 000 a0 && chmod 010 ax &&
	mkdir d0 && chmod 000 d0'
calls="access faccessat faccessat-eaccess euidaccess eaccess"
export calls
out=$(fe sh -c '
	for c in $calls; do
		for w in r w rw x; do echo "$c a0 $w $($H/acc $c a0 $w)"; done
		echo "$c ax x $($H/acc $c ax x)"
		echo "$c d0 rwx $($H/acc $c d0 rwx)"
		echo "$c missing f $($H/acc $c missing f)"
	done
' 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }
for c in $calls; do
	check_eq "$c: read of a 0000 file allowed" "$(get "$c a0 r")" ok
	check_eq "$c: write of a 0000 file allowed" "$(get "$c a0 w")" ok
	check_eq "$c: rw of a 0000 file allowed" "$(get "$c a0 rw")" ok
	check_eq "$c: execute of a 0000 file refused" "$(get "$c a0 x")" "ERR EACCES"
	check_eq "$c: execute of a file with only g+x allowed" "$(get "$c ax x")" ok
	check_eq "$c: a 0000 directory is searchable (rwx)" "$(get "$c d0 rwx")" ok
	check_eq "$c: a missing file is ENOENT" "$(get "$c missing f")" "ERR ENOENT"
done
check_eq "natively, read of the 0000 file is refused (the test can fail)" \
	"$(as_user "$H"/acc access a0 r)" "ERR EACCES"
check_eq "natively, execute of the g+x file is refused" \
	"$(as_user "$H"/acc access ax x)" "ERR EACCES"
done_testing
