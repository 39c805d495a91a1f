#!/bin/bash
# chmod, fchmod, fchmodat: the full mode is recorded and seen by later
# processes; the real file gets owner rw (rwx for dirs) forced on and never
# setuid, setgid or sticky.  Files created 0000 or 0444 stay usable.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	umask 022
	for c in chmod fchmod fchmodat fchmodat-nofollow; do
		touch f-$c; echo "$c call $($H/mode $c f-$c 4755)"
		echo "$c stat $($H/st stat f-$c)"
		echo "$c ls $(ls -l f-$c | cut -c1-10)"
	done
	touch z; chmod 0 z; echo "zero $($H/st stat z)"
	touch g; chmod 2644 g; echo "sgid $($H/st stat g)"
	mkdir d0 d1; chmod 0 d0; chmod 1777 d1
	echo "dir0 $($H/st stat d0)"; echo "dir1 $($H/st stat d1)"
	touch d0/inside && echo "dir0 usable yes"
	$H/mk open c0 0000 >/dev/null; echo hi >c0; echo "c0 content $(cat c0)"
	echo "c0 stat $($H/st stat c0)"
	$H/mk creat c4 0444 >/dev/null; echo hi4 >c4; echo "c4 content $(cat c4)"
	echo "c4 stat $($H/st stat c4)"
	echo "missing $($H/mode chmod nope 755)"
' 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }

for c in chmod fchmod fchmodat fchmodat-nofollow; do
	check_eq "$c succeeds" "$(get "$c call")" "ok"
	check_eq "$c 4755 seen by another process" "$(get "$c stat")" "0 0 104755 0 0"
	check_eq "$c 4755: ls -l shows -rwsr-xr-x" "$(get "$c ls")" "-rwsr-xr-x"
	check_eq "$c 4755: outside, the real file is 0755, not setuid" \
		"$(stat -c %a "f-$c")" "755"
done
check_eq "chmod 0 shown as 0" "$(get zero)" "0 0 100000 0 0"
check_eq "chmod 0: the real file keeps owner rw" "$(stat -c %a z)" "600"
check_eq "chmod 2644 shown" "$(get sgid)" "0 0 102644 0 0"
check_eq "chmod 2644: the real file is not setgid" "$(stat -c %a g)" "644"
check_eq "dir chmod 0 shown" "$(get dir0)" "0 0 40000 0 0"
check_eq "dir chmod 0: real dir keeps owner rwx" "$(stat -c %a d0)" "700"
check_eq "dir chmod 0 stays usable" "$(get "dir0 usable")" "yes"
check_eq "dir chmod 1777 shown" "$(get dir1)" "0 0 41777 0 0"
check_eq "dir chmod 1777: the real dir is not sticky" "$(stat -c %a d1)" "777"
check_eq "a file created 0000 stays writable and readable" "$(get "c0 content")" "hi"
check_eq "a file created 0000 shows 0000" "$(get "c0 stat")" "0 0 100000 0 0"
check_eq "a file created 0444 stays writable" "$(get "c4 content")" "hi4"
check_eq "a file created 0444 shows 0444" "$(get "c4 stat")" "0 0 100444 0 0"
check_eq "chmod of a missing file fails with ENOENT" "$(get missing)" "ERR ENOENT"
# The comparison: natively, a file created 0000 is not writable.
as_user "$H"/mk open n0 0000 >/dev/null
check_no "natively a file created 0000 is not writable (the test can fail)" \
	as_user sh -c 'echo x > n0'
# A chmod right after a chown of the same file in one process (tar x's
# order): the chown is still on its way when the chmod asks whether it
# would change anything (d: not while its own chmod to 0000, which the
# real file cannot have, is on its way too).  300 files each, past the first changes, which
# go as messages, so that most go through the ring.
must "files for chown + chmod" as_user mkdir cc
out=$(fe perl -e '
	for my $i (1 .. 300) {
		for my $k ("a", "b", "c", "d") {
			open(my $f, ">", "cc/$k$i") or die;
			close($f);
		}
		chmod(04755, "cc/a$i"); chown(7, 8, "cc/a$i"); chmod(0755, "cc/a$i");
		chown(7, 8, "cc/b$i"); chmod(0644, "cc/b$i");
		chmod(02755, "cc/c$i"); chown(7, 8, "cc/c$i"); chmod(02755, "cc/c$i");
		chmod(0, "cc/d$i"); chown(7, 8, "cc/d$i"); chmod(0600, "cc/d$i");
	}
	for my $k ("a", "b", "c", "d") {
		my %seen;
		for my $i (1 .. 300) {
			my @s = lstat("cc/$k$i");
			$seen{sprintf("%d:%d %o", $s[4], $s[5], $s[2] & 07777)}++;
		}
		print "$k ", join(",", sort keys %seen), "\n";
	}' 2>&1)
check_eq "chmod after chown in one process: every file shows the last mode" "$out" "a 7:8 755
b 7:8 644
c 7:8 2755
d 7:8 600"
done_testing
