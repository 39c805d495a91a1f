#!/bin/bash
# fakeenv export shows what a session shows: for one journal, the view
# export prints of every file equals a session's stat of it, and both
# report the load alike.  The journal is written by hand (helpers/mkjnl.c)
# with records a checkpoint never writes in that order: a relocated record
# and a filesystem renumbered since (both re-keyed) before a record already
# at their key (the later one holds the key), the same after it (the
# re-keyed one is dropped), a key past 32 bits (dropped, and the rest
# still load), a stale birth time, a record without a birth time, a faked
# device.
. "$(dirname "$0")/lib.sh"

mkdir -p r/sub
touch r/a r/b r/c r/d r/f r/g r/h r/none r/sub/x
chown -R "$TUID:$TGID" r
dev=$(stat -c %d r/a)
old=$((dev + 7))
as_user "$H/mkjnl" "$W/j" <<EOF || bail "mkjnl failed"
bypath $W/r/a 5 5
real $W/r/a 7 7 mode=600
real $W/r/b 7 7
bypath $W/r/b 5 5 mode=4755
dev=$old $W/r/c 3 3
real $W/r/c 8 8
dev=$old $W/r/d 3 3 mode=4755
real $W/r/d 9 9
dev=4294967297,ino=12,btag=77 $W/r/gone 1 1
btag=12345 $W/r/f 4 4 mode=600
real $W/r/g 0 5 chr=5,1 mode=600
nobtag $W/r/h 6 6 mode=640
real $W/r/sub 2 2 mode=700
real $W/r/sub/x 1 2
EOF

# NAME UID GID MODE TYPE DEVICE, one line a file, from a session's stat.
fe_opt -i "$W/j" -- sh -c 'cd r && find . | sort |
	xargs stat -c "%n %u %g %04a %F %t,%T"' >sess.raw 2>sess.err
check_eq "the session starts" "$?" 0
awk '{ t = "file"; d = "-"
	if ($5 == "directory") t = "dir"
	if ($5 == "character") { t = "char"; d = $NF }
	if ($5 == "block") { t = "block"; d = $NF }
	print $1, $2, $3, $4, t, d }' sess.raw >sess.view
# The same from export's mtree.
as_user "$FE" export --format mtree -i "$W/j" r >exp.mtree 2>exp.err
check_eq "export succeeds" "$?" 0
awk 'NR > 1 { n = $1 == "." ? "." : $1; u = g = m = t = ""; d = "-"
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "uid") u = kv[2]
		if (kv[1] == "gid") g = kv[2]
		if (kv[1] == "mode") m = kv[2]
		if (kv[1] == "type") t = kv[2]
		if (kv[1] == "device") { sub("native,", "", kv[2]); d = kv[2] }
	}
	print n, u, g, m, t, d }' exp.mtree | sort >exp.view
if diff sess.view exp.view >view.diff; then
	ok "export's view equals the session's stat of every file"
else
	fail "export's view equals the session's stat of every file" \
		"$(cat view.diff)"
fi
check_eq "both load the journal alike" "$(grep 'records:' exp.err)" \
	"$(grep 'records:' sess.err)"

# What the view is, so that both agreeing on nothing cannot pass.
check_eq "the session's view" "$(cat sess.view)" ". 0 0 0755 dir -
./a 7 7 0600 file -
./b 7 7 0644 file -
./c 8 8 0644 file -
./d 9 9 0644 file -
./f 0 0 0644 file -
./g 0 5 0600 char 5,1
./h 6 6 0640 file -
./none 0 0 0644 file -
./sub 2 2 0700 dir -
./sub/x 1 2 0644 file -"
check_match "the load's counts" "$(cat sess.err)" \
	"journal $W/j: 14 records: 12 kept, 2 re-keyed \(st_dev changed\), 1 relocated \(found at their new paths\), 2 dropped"
# fsck --against-fs says the same of the record no table can hold.
out=$(as_user "$FE" fsck --against-fs "$W/j" 2>&1)
check_match "fsck: the st_dev past 32 bits" "$out" \
	"$W/r/gone: bad device number: an st_dev of 0x100000001, which no filesystem has; the load drops it"
done_testing
