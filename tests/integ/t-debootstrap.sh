#!/bin/bash
# debootstrap and mmdebstrap as real clients of chroot in a session
# (docs/chroot.md):
# both stages of a minbase Debian as the test user, every package
# configured; its tar listing (owners, modes, device numbers; dates
# aside) the same as real root's debootstrap of the same release; then
# apt-get in the chroot installs a package with a setuid binary whose
# maintainer script chowns; and mmdebstrap --mode=root's tarball, the
# same as root's.  Needs the Debian mirror: skipped, and
# counted as a skip, when it cannot be reached, and in the ASan flavour.  FAKEENV_TEST_MIRROR and
# FAKEENV_TEST_SUITE choose another mirror or release.
. "$(dirname "$0")/lib.sh"

MIRROR=${FAKEENV_TEST_MIRROR:-http://deb.debian.org/debian}
SUITE=${FAKEENV_TEST_SUITE:-bookworm}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

if ! command -v debootstrap >/dev/null; then
	skip "debootstrap in a session" "debootstrap is not installed (.ci/run installs it)"
elif [ -n "$SAN_PRE" ]; then
	# The ASan shim needs libasan.so.8 where the target's loader looks,
	# and a minbase Debian has none; t-chroot runs the same paths under
	# ASan in a root that carries the runtime.
	skip "debootstrap in a session" "the ASan build's shim needs libasan in the target root"
elif ! as_user unshare -U true 2>/dev/null; then
	skip "debootstrap in a session" "no unprivileged user namespaces here"
elif ! wget -q -T 15 -t 2 -O /dev/null "$MIRROR/dists/$SUITE/Release"; then
	skip "debootstrap in a session" "the mirror $MIRROR cannot be reached"
else
	# tar tv of a tar on stdin without dates: mode, owner/group, size
	# (device numbers for nodes), name.
	listing() {
		tar tvf - | awk '{ s = $3; if ($1 ~ /^[dl]/) s = "-"
			n = $6; for (i = 7; i <= NF; i++) n = n " " $i
			print $1, $2, s, n }' |
			grep -v ' \./var/log/bootstrap\.log$' | sort -k4
	}
	out=$(as_user env HOME="$W" "$FE" -s st -- debootstrap \
		--variant=minbase "$SUITE" "$W/t" "$MIRROR" 2>&1)
	check_match "debootstrap --variant=minbase $SUITE, both stages, as the test user" \
		"$(tail -1 <<<"$out")" "Base system installed successfully"
	st=$(grep '^Status:' t/var/lib/dpkg/status | sort | uniq -c)
	check_match "every package configured" "$st" "^ *[0-9]+ Status: install ok installed$"
	fe_opt -i st -- tar -C t -cf - . | listing >fe.lst
	if [ "$(id -u)" = 0 ]; then
		must "real root's debootstrap" debootstrap --variant=minbase \
			"$SUITE" "$W/rt" "$MIRROR"
		tar -C rt -cf - . | listing >root.lst
		check_eq "the tar listing is root's (owners, modes, devices)" \
			"$(diff root.lst fe.lst | head -20)" ""
		check_eq "and as long" "$(wc -l <fe.lst)" "$(wc -l <root.lst)"
	else
		skip "the tar listing is root's" "not root: no reference debootstrap"
	fi
	check_match "device nodes in the tar" "$(grep ' \./dev/null$' fe.lst)" \
		"^crw-rw-rw- root/root 1,3 \./dev/null$"
	out=$(as_user env HOME=/root "$FE" -i st -s st2 -- chroot t \
		apt-get install -y --no-install-recommends at 2>&1)
	check_match "apt-get install in the chroot" "$(tail -3 <<<"$out")" "Setting up at"
	check_eq "its setuid binary and the files its postinst chowns" \
		"$(fe_opt -i st2 -- stat -c '%A %U:%G %n' t/usr/bin/at \
			t/var/spool/cron/atjobs 2>&1)" \
		"-rwsr-sr-x daemon:daemon t/usr/bin/at
drwxrwx--T daemon:daemon t/var/spool/cron/atjobs"
	if ! command -v mmdebstrap >/dev/null; then
		skip "mmdebstrap --mode=root" "mmdebstrap is not installed (.ci/run installs it)"
	else
		out=$(as_user env HOME="$W" TMPDIR="$W" "$FE" -- mmdebstrap \
			--variant=minbase --mode=root "$SUITE" "$W/mm.tar" \
			"$MIRROR" 2>&1)
		check_match "mmdebstrap --mode=root in a session" \
			"$(tail -2 <<<"$out")" "I: success in"
		listing <mm.tar >mmfe.lst
		if [ "$(id -u)" = 0 ]; then
			must "real root's mmdebstrap" mmdebstrap --variant=minbase \
				--mode=root "$SUITE" "$W/mmroot.tar" "$MIRROR"
			listing <mmroot.tar >mmroot.lst
			check_eq "its tarball lists as root's (sizes too)" \
				"$(diff mmroot.lst mmfe.lst | head -20)" ""
			check_eq "and as long" "$(wc -l <mmfe.lst)" "$(wc -l <mmroot.lst)"
		else
			skip "mmdebstrap's tarball is root's" "not root: no reference run"
		fi
	fi
fi
done_testing
