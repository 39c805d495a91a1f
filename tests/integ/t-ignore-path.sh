#!/bin/bash
# --ignore-path PREFIX and FAKEENV_IGNORE_PATHS: files under an ignored
# prefix are never recorded and always read as real (a chown there fails
# with EPERM, as natively), matched on path-component boundaries after
# the path is made absolute (cwd, dirfd) and lexically normal; symbolic
# links are not resolved.  The list survives env -i.
. "$(dirname "$0")/lib.sh"

D=$H/dis
must "the trees" as_user mkdir ign ignfoo out ign2
must "the files" as_user touch ign/b ignfoo/c out/a ign2/d
must "a link into the ignored tree" as_user ln -s ../ign/b out/to-ign
must "a link out of it" as_user ln -s ../out/a ign/to-out
I=$W/ign


out=$(fe_opt --ignore-path "$I" -- sh -c '
	chown 5:5 ign/b 2>/dev/null; echo "chown-in $?"
	chown 5:5 out/a; echo "chown-out $?"
	chown 5:5 ignfoo/c
	chown 5:5 ign 2>/dev/null; echo "chown-prefix $?"
	echo "stat $(stat -c %u ign/b) $(stat -c %u out/a) $(stat -c %u ignfoo/c) $(stat -c %u ign)"
	echo "lexical $(stat -c %u ./ign//b) $(stat -c %u ign/../out/a) $(stat -c %u out/../ign/b)"
	echo "links $(stat -c %u out/to-ign) $(stat -c %u ign/to-out)"
	cd ign && echo "relative $(stat -c %u b) $(chown 5 b 2>/dev/null; echo $?) $(stat -c %u ../out/a)"
' 2>&1)
check_eq "chown under the prefix fails, as natively" "$(pick chown-in <<<"$out")" 1
check_eq "chown outside it succeeds" "$(pick chown-out <<<"$out")" 0
check_eq "chown of the prefix itself fails" "$(pick chown-prefix <<<"$out")" 1
check_eq "a file under the prefix keeps its real owner" \
	"$(pick stat <<<"$out" | cut -d' ' -f1)" "$TUID"
check_eq "one outside shows the chown" "$(pick stat <<<"$out" | cut -d' ' -f2)" 5
check_eq "the boundary: $I does not hold ${I}foo" \
	"$(pick stat <<<"$out" | cut -d' ' -f3)" 5
check_eq "the prefix itself is real" "$(pick stat <<<"$out" | cut -d' ' -f4)" "$TUID"
check_eq "./ign//b is under it" "$(pick lexical <<<"$out" | cut -d' ' -f1)" "$TUID"
check_eq "ign/../out/a is not" "$(pick lexical <<<"$out" | cut -d' ' -f2)" 5
check_eq "out/../ign/b is" "$(pick lexical <<<"$out" | cut -d' ' -f3)" "$TUID"
check_eq "a link outside to a file inside is faked (the path as given)" \
	"$(pick links <<<"$out" | cut -d' ' -f1)" 0
check_eq "a link inside to a recorded file outside reads as real" \
	"$(pick links <<<"$out" | cut -d' ' -f2)" "$TUID"
check_eq "a relative path from a cwd inside is under it" \
	"$(pick relative <<<"$out")" "$TUID 1 5"

# *at calls with a dirfd inside the prefix, and an fd opened there.
check_eq "fchownat with a dirfd inside: EPERM, real owner" \
	"$(fe_opt --ignore-path "$I" -- "$D" at ign b 2>&1)" "chown EPERM owner $TUID"
check_eq "fchownat with a dirfd outside fakes" \
	"$(fe_opt --ignore-path "$I" -- "$D" at out a 2>&1)" "chown ok owner 0"
check_eq "fchownat with a dirfd of the parent and a name inside" \
	"$(fe_opt --ignore-path "$I" -- "$D" at . ign/b 2>&1)" "chown EPERM owner $TUID"
check_eq "fchown of an fd opened inside: EPERM, fstat real" \
	"$(fe_opt --ignore-path "$I" -- "$D" fd ign/b 2>&1)" "chown EPERM owner $TUID"
check_eq "fchown of an fd opened outside fakes" \
	"$(fe_opt --ignore-path "$I" -- "$D" fd out/a 2>&1)" "chown ok owner 0"
check_eq "natively fchownat fails the same way (the test can fail)" \
	"$(as_user "$D" at ign b 2>&1)" "chown EPERM owner $TUID"

# No record is ever made under the prefix: files, dirs, fifos, chmods,
# a rename inside it, a temporary file.
out=$(fe_opt --ignore-path "$I" -- sh -c '
	"$0" status | awk "/^records:/ { print \$2 }"
	touch ign/n1; mkdir ign/n2; mkfifo ign/n3; chmod 4755 ign/n1
	chown 0:0 ign/n1 2>/dev/null; mknod ign/n4 c 1 3 2>/dev/null
	mv ign/n1 ign/n5; mktemp -p ign >/dev/null; mkdir -p ign/n6/n7
	"$0" status | awk "/^records:/ { print \$2 }"
	echo "mode $(stat -c "%u %a" ign/n5)"
	touch out/m1; chown 7:7 out/m1
	"$0" status | awk "/^records:/ { print \$2 }"
' "$FE" 2>&1)
check_eq "no record under the prefix" "$(sed -n 2p <<<"$out")" "$(sed -n 1p <<<"$out")"
check_eq "its files read as real" "$(pick mode <<<"$out")" "$TUID 4755"
check_cmd "mknod there went to the kernel (no node)" test ! -e ign/n4
check_eq "outside it the session records" "$(sed -n 4p <<<"$out")" \
	"$(($(sed -n 1p <<<"$out") + 1))"

# A saved state holds nothing under the prefix; a record from before (a
# session without the option) is not consulted under it.
must "a record from a session without the option" \
	fe_opt -s "$T/j1" -- sh -c 'chown 5:5 ign/b out/a'
check_eq "without the option the record shows" \
	"$(fe_opt -i "$T/j1" -- stat -c %u ign/b 2>&1)" 5
check_eq "with it the same record is not consulted" \
	"$(fe_opt -i "$T/j1" --ignore-path "$I" -- stat -c %u ign/b out/a 2>&1 | tr '\n' ' ')" \
	"$TUID 5 "
must "a session with the option, saved" \
	fe_opt --ignore-path "$I" -s "$T/j2" -- sh -c 'touch ign/s1 out/s2; chmod 4755 ign/s1 out/s2; chown 3:3 ign/s1 2>/dev/null; chown 3:3 out/s2'
check_eq "its journal has the file outside only" \
	"$(as_user "$H/jdump" "$T/j2" "$W" | sort | tr '\n' ' ')" "out/s2 3:3 "

# env -i keeps the list, as it keeps the session.
check_eq "env -i keeps FAKEENV_IGNORE_PATHS" \
	"$(fe_opt --ignore-path "$I" -- env -i /usr/bin/printenv FAKEENV_IGNORE_PATHS 2>&1)" "$I"
check_eq "and a child of env -i still reads the prefix as real" \
	"$(fe_opt --ignore-path "$I" -- sh -c 'chown 5 out/a; env -i /usr/bin/stat -c %u '"$I"'/b '"$W"'/out/a' 2>&1 | tr '\n' ' ')" \
	"$TUID 5 "

# A list longer than the library keeps in its own image (FAKEENV_* and
# LD_PRELOAD past 1 KiB, then held in a mapping): env -i still restores
# the whole of it, its last prefix included.
long=$(for i in $(seq 20); do printf '/nonexistent/%0160d:' "$i"; done)
check_eq "a 3.5 KB list survives env -i whole" \
	"$(fe_opt --ignore-path "$I" -- env FAKEENV_IGNORE_PATHS="$long$I" sh -c 'env -i /usr/bin/printenv FAKEENV_IGNORE_PATHS | wc -c; chown 5 out/a; env -i /usr/bin/stat -c %u '"$I"'/b '"$W"'/out/a' 2>&1 | tr '\n' ' ')" \
	"$(( ${#long} + ${#I} + 1 )) $TUID 5 "

# The variable and the option together: the option's prefixes are
# appended to the inherited list, and both hold.
out=$(as_user env FAKEENV_IGNORE_PATHS="$W/ign2" "$FE" --ignore-path "$I/" -- sh -c '
	printenv FAKEENV_IGNORE_PATHS
	chown 5 ign/b ign2/d out/a 2>/dev/null
	stat -c %u ign/b ign2/d out/a | tr "\n" " "
' 2>&1)
check_eq "the option is appended to the variable, made normal" \
	"$(sed -n 1p <<<"$out")" "$W/ign2:$I"
check_eq "both prefixes are ignored, the rest is not" \
	"$(sed -n 2p <<<"$out")" "$TUID $TUID 5 "
check_eq "the variable alone works" \
	"$(as_user env FAKEENV_IGNORE_PATHS="$W/ign2" "$FE" -- sh -c 'chown 5 ign2/d 2>/dev/null; stat -c %u ign2/d' 2>&1)" "$TUID"
check_no "a relative --ignore-path is refused" fe_opt --ignore-path ign -- true
check_match "and says why" "$(fe_opt --ignore-path ign -- true 2>&1)" \
	'ignore-path ign: not an absolute path'

done_testing
