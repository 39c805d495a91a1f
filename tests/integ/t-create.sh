#!/bin/bash
# Every creating entry point gives the new inode the fake fsuid/fsgid
# (set by setfsuid/setfsgid, or moved by seteuid/setegid); O_CREAT on an
# existing file changes nothing; hard links share the record; the
# fortified __open_2 family opens as open does.
. "$(dirname "$0")/lib.sh"

files="open open64 openat openat64 open-excl creat creat64 fopen fopen64
	freopen freopen64 fopen-x"
export files
out=$(fe sh -c '
	umask 022
	for c in $files; do
		echo "fs $c $($H/mk -f 1234:55 $c fs-$c) $($H/st stat fs-$c)"
		echo "eu $c $($H/mk -e 1234:55 $c eu-$c) $($H/st stat eu-$c)"
		echo "root $c $($H/mk $c r-$c) $($H/st stat r-$c)"
	done
	for c in mkdir mkdirat; do
		echo "fs $c $($H/mk -f 1234:55 $c fs-$c) $($H/st stat fs-$c)"
		echo "eu $c $($H/mk -e 1234:55 $c eu-$c) $($H/st stat eu-$c)"
	done
	for c in symlink symlinkat; do
		echo "fs $c $($H/mk -f 1234:55 $c target fs-$c) $($H/st lstat fs-$c)"
		echo "eu $c $($H/mk -e 1234:55 $c target eu-$c) $($H/st lstat eu-$c)"
	done
	n=$($H/mk -f 1234:55 mkstemp tmpXXXXXX); echo "fs mkstemp $($H/st stat $n)"
	touch old && chown 5:6 old && chmod 640 old
	for c in open creat fopen; do
		echo "existing $c $($H/mk -f 1234:55 $c old) $($H/st stat old)"
	done
	for c in link linkat; do
		echo "link $c $($H/mk -f 1234:55 $c old l-$c) $($H/st stat l-$c)"
	done
	ln -s old sl; $H/mk linkat-follow sl l-follow >/dev/null
	echo "link linkat-follow $($H/st lstat l-follow)"
	for c in __open_2 __open64_2 __openat_2 __openat64_2; do
		echo "fortified $c $($H/mk $c old)"
	done
' 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }

for c in $files; do
	check_eq "$c after setfsuid(1234)/setfsgid(55): new file is 1234:55" \
		"$(get "fs $c")" "ok 1234 55 100644 0 0"
	check_eq "$c after seteuid(1234)/setegid(55): new file is 1234:55" \
		"$(get "eu $c")" "ok 1234 55 100644 0 0"
	check_eq "$c as fake root: new file is 0:0" "$(get "root $c")" "ok 0 0 100644 0 0"
	check_eq "$c: outside, the real owner is the test user" \
		"$(stat -c %u:%g "fs-$c")" "$TUID:$TGID"
done
for c in mkdir mkdirat; do
	check_eq "$c after setfsuid/setfsgid: new dir is 1234:55" \
		"$(get "fs $c")" "ok 1234 55 40755 0 0"
	check_eq "$c after seteuid/setegid: new dir is 1234:55" \
		"$(get "eu $c")" "ok 1234 55 40755 0 0"
done
for c in symlink symlinkat; do
	check_eq "$c after setfsuid/setfsgid: new link is 1234:55" \
		"$(get "fs $c")" "ok 1234 55 120777 0 0"
	check_eq "$c after seteuid/setegid: new link is 1234:55" \
		"$(get "eu $c")" "ok 1234 55 120777 0 0"
done
check_eq "mkstemp after setfsuid/setfsgid: new file is 1234:55" \
	"$(get "fs mkstemp")" "1234 55 100600 0 0"
for c in open creat fopen; do
	check_eq "$c of an existing file keeps its recorded owner and mode" \
		"$(get "existing $c")" "ok 5 6 100640 0 0"
done
for c in link linkat; do
	check_eq "$c: a hard link shares the record" "$(get "link $c")" "ok 5 6 100640 0 0"
done
check_eq "linkat(AT_SYMLINK_FOLLOW) links the target and shares its record" \
	"$(get "link linkat-follow")" "5 6 100640 0 0"
for c in __open_2 __open64_2 __openat_2 __openat64_2; do
	check_eq "$c opens and fstat shows the record" "$(get "fortified $c")" "5 6 100640 0 0"
done
done_testing
