#!/bin/bash
# fakeenv export: a rootfs built as a fake root in a --state session comes
# out of the journal, with no preload, as an mtree that bsdtar packs into
# the same archive tar makes inside the session; as a device table that
# genext2fs turns into an image with the owners, modes and device nodes;
# and as mksquashfs pseudo definitions that do the same for squashfs.
# --mtime and SOURCE_DATE_EPOCH clamp times and the output is
# reproducible; a socket is skipped out loud; a record whose file is gone
# is dropped as a load drops it; bad arguments and damaged journals are
# refused.
. "$(dirname "$0")/lib.sh"

S=$W/st
daemons() { session_pids "$DAEMON" | wc -l; }
gone() { [ "$(daemons)" = 0 ]; }
# exp ARGS...: the exporter, run as the test user outside any session.
exp() { as_user "$FE" export "$@"; }
have() { command -v "$1" >/dev/null 2>&1; }

# The daemon lingers: export must ask it for a checkpoint, since nothing
# has been written to the journal yet.  (Output to a file: a $(...) would
# wait for the lingering daemon, which holds the pipe.)
fe_opt --state "$S" --linger 60 -- bash -c '
	set -e
	umask 022
	mkdir -p rootfs/bin rootfs/dev rootfs/etc "rootfs/with space" \
		rootfs/tmp rootfs/home/user rootfs/a rootfs/a-b
	echo hello >rootfs/bin/su; echo wall >rootfs/bin/wall
	touch "rootfs/with space/a file" rootfs/etc/shadow rootfs/etc/passwd \
		rootfs/a/x rootfs/a-b/y
	chown -R 0:0 rootfs
	chown 9:9 rootfs/a-b/y
	chmod 4755 rootfs/bin/su
	chown 0:5 rootfs/bin/wall && chmod 2755 rootfs/bin/wall
	chown 0:42 rootfs/etc/shadow && chmod 640 rootfs/etc/shadow
	chmod 1777 rootfs/tmp
	chown 1000:100 "rootfs/with space/a file" rootfs/home/user
	mknod rootfs/dev/null c 1 3 && chmod 666 rootfs/dev/null
	mknod rootfs/dev/console c 5 1 && chown 0:5 rootfs/dev/console
	chmod 600 rootfs/dev/console
	mknod rootfs/dev/sda b 8 0 && chown 0:6 rootfs/dev/sda
	chmod 660 rootfs/dev/sda
	mkfifo rootfs/dev/initctl && chown 3:4 rootfs/dev/initctl
	chmod 600 rootfs/dev/initctl
	ln -s ../bin/su rootfs/etc/su-link && chown -h 7:8 rootfs/etc/su-link
	ln -s "a file" "rootfs/with space/link to"
	ln rootfs/bin/su rootfs/bin/su-hard
	tar --sort=name --mtime=@1000000000 -cf a.tar -C rootfs .' \
	>build.log 2>&1 || bail "building the rootfs failed: $(cat build.log)"
check_cmd "the daemon is still there" test "$(daemons)" = 1
check_cmd "no journal written yet" test ! -e "$S/journal"

out=$(exp --format mtree --mtime 1000000000 --state "$S" rootfs 2>"$W/err" >m.mtree); rc=$?
check_eq "mtree: status" "$rc" 0
check_eq "mtree: nothing on stderr" "$(cat "$W/err")" ""
check_cmd "export asked the daemon for a checkpoint" test -s "$S/journal"
check_eq "mtree: header" "$(head -1 m.mtree)" "#mtree"
check_eq "mtree: the root" "$(sed -n 2p m.mtree)" \
	". type=dir uid=0 gid=0 mode=0755 time=1000000000.000000000"
check_match "mtree: setuid file" "$(grep '^\./bin/su ' m.mtree)" \
	'^\./bin/su type=file uid=0 gid=0 mode=4755 time=1000000000\.000000000 size=6 contents=rootfs/bin/su$'
check_match "mtree: device" "$(grep '^\./dev/console ' m.mtree)" \
	'type=char uid=0 gid=5 mode=0600 .* device=native,5,1$'
check_match "mtree: escaped name" "$(grep '^\./with' m.mtree | tr '\n' '|')" \
	'\./with\\040space/a\\040file type=file uid=1000 gid=100 mode=0644 .*contents=rootfs/with\\040space/a\\040file\|'
check_match "mtree: symlink" "$(grep '^\./etc/su-link ' m.mtree)" \
	'type=link uid=7 gid=8 mode=0777 .*link=\.\./bin/su$'
# Each directory's entries together, in byte order (as tar --sort=name).
check_eq "mtree: sorted by directory, then name" \
	"$(grep -o '^\./a[^ ]*' m.mtree | tr '\n' ' ')" "./a ./a/x ./a-b ./a-b/y "

if have bsdtar; then
	# From $W, not from inside rootfs: there the device nodes' real
	# files would contradict their type= (see docs/export.md).
	check_cmd "bsdtar packs the mtree" as_user bsdtar -cf b.tar @m.mtree
	tar --numeric-owner -tvvf a.tar >a.list 2>&1
	tar --numeric-owner -tvvf b.tar >b.list 2>&1
	if diff a.list b.list >d.list; then
		ok "tar in a session and bsdtar from the mtree agree"
	else
		fail "tar in a session and bsdtar from the mtree agree" "$(cat d.list)"
	fi
	as_user tar --sort=name --mtime=@1000000000 -cf n.tar -C rootfs .
	tar --numeric-owner -tvvf n.tar >n.list 2>&1
	check_ne "natively the listing differs" "$(cat n.list)" "$(cat a.list)"
	check_eq "the listing is the faked one" "$(grep -c ' 0/5 *5,1 .*dev/console$' b.list)" 1
	check_eq "contents came through" "$(bsdtar -xOf b.tar ./bin/su)" "hello"
	check_match "the hard link is a hard link" "$(grep 'su-hard' b.list)" '^h.* link to \./bin/su$'
else
	ok "bsdtar packs the mtree # SKIP bsdtar (libarchive-tools) is not installed"
fi

# Reproducible: the same bytes twice, and SOURCE_DATE_EPOCH is --mtime.
exp --format mtree --mtime 1000000000 --state "$S" rootfs >m2.mtree
check_cmd "two exports are byte-identical" cmp m.mtree m2.mtree
as_user env SOURCE_DATE_EPOCH=1000000000 "$FE" export --format mtree --state "$S" rootfs >m3.mtree
check_cmd "SOURCE_DATE_EPOCH clamps as --mtime does" cmp m.mtree m3.mtree
check_eq "every time clamped" "$(grep -v '^#' m.mtree | grep -vc 'time=1000000000\.000000000')" 0
exp --format mtree --mtime 4000000000 --state "$S" rootfs >m4.mtree
real=$(stat -c %Y rootfs/etc/passwd)
check_match "older times are kept" "$(grep '^\./etc/passwd ' m4.mtree)" " time=$real\.[0-9]{9} "
exp --format mtree --state "$S" -o m5.mtree rootfs
check_cmd "-o OUT" cmp m4.mtree m5.mtree

# -i FILE reads a journal file; FAKEENV_STATE stands for --state.
as_user cp "$S/journal" j.copy
exp --format mtree --mtime 1000000000 -i j.copy rootfs >m6.mtree
check_cmd "-i FILE" cmp m.mtree m6.mtree
as_user env FAKEENV_STATE="$S" "$FE" export --format mtree --mtime 1000000000 rootfs >m7.mtree
check_cmd "FAKEENV_STATE" cmp m.mtree m7.mtree
(cd rootfs && as_user "$FE" export --format mtree --mtime 1000000000 --state "$S") >m8.mtree
check_eq "ROOT defaults to the current directory" "$(grep '^\./dev/sda ' m8.mtree)" \
	"$(grep '^\./dev/sda ' m.mtree)"
as_user ln -s rootfs rootlink
exp --format mtree --mtime 1000000000 --state "$S" rootlink >m9.mtree
check_eq "ROOT may be a symlink to the tree" "$(sed 's/contents=rootlink/contents=rootfs/' m9.mtree)" \
	"$(cat m.mtree)"

# Files without a record: 0:0 as in a session, the real owner with -u.
as_user touch rootfs/etc/later
check_match "unrecorded: 0:0" "$(exp --format mtree --state "$S" rootfs | grep '^\./etc/later ')" \
	' uid=0 gid=0 mode=0644 '
check_match "unrecorded with -u: the real owner" \
	"$(exp -u --format mtree --state "$S" rootfs | grep '^\./etc/later ')" \
	" uid=$TUID gid=$TGID mode=0644 "
check_match "-u leaves recorded files alone" \
	"$(exp -u --format mtree --state "$S" rootfs | grep '^\./etc/shadow ')" ' uid=0 gid=42 mode=0640 '
as_user rm rootfs/etc/later

# The device table: what differs from the real files.
exp --format devtable --state "$S" rootfs >devtable 2>dt.err
check_eq "devtable: the device" "$(grep '^/dev/console ' devtable)" "/dev/console c 600 0 5 5 1 - - -"
check_eq "devtable: a setgid file" "$(grep '^/bin/wall ' devtable)" "/bin/wall f 2755 0 5 - - - - -"
check_eq "devtable: the root" "$(grep '^/ ' devtable)" "/ d 755 0 0 - - - - -"
check_match "devtable: what it cannot hold is said" "$(cat dt.err)" 'devtable: \./etc/su-link: a symlink'
check_match "devtable: ... and marked" "$(grep '^# skipped' devtable | tr '\n' '|')" 'su-link: a symlink.*with\\040space: a name'
if have genext2fs && have debugfs; then
	# genext2fs keeps the type of a file it copied: the source tree
	# leaves out the device nodes' real (regular) files.
	as_user cp -a rootfs src
	awk '$2 == "c" || $2 == "b" { print "src" $1 }' devtable | as_user xargs rm -f
	check_cmd "genext2fs takes the device table" \
		as_user genext2fs -d src -D devtable -b 4096 img.ext2
	dbg() {
		debugfs -R "stat $1" img.ext2 2>/dev/null | awk '
			/Type:/ { for (i = 1; i <= NF; i++) { if ($i == "Type:") t = $(i + 1); if ($i == "Mode:") m = $(i + 1) } }
			/^User:/ { u = $2; g = $4 }
			/Device major/ { d = " " $4 }
			END { print t, m, u ":" g d }'
	}
	check_eq "ext2: /dev/console" "$(dbg /dev/console)" "character 0600 0:5 05:01"
	check_eq "ext2: /dev/sda" "$(dbg /dev/sda)" "block 0660 0:6 08:00"
	check_eq "ext2: /dev/null" "$(dbg /dev/null)" "character 0666 0:0 01:03"
	check_eq "ext2: setuid /bin/su" "$(dbg /bin/su)" "regular 04755 0:0"
	check_eq "ext2: /etc/shadow" "$(dbg /etc/shadow)" "regular 0640 0:42"
	check_eq "ext2: sticky /tmp" "$(dbg /tmp)" "directory 01777 0:0"
	check_eq "ext2: /home/user" "$(dbg /home/user)" "directory 0755 1000:100"
	check_eq "ext2: the fifo" "$(dbg /dev/initctl)" "FIFO 0600 3:4"
else
	ok "genext2fs takes the device table # SKIP genext2fs or debugfs (e2fsprogs) is not installed"
fi

# mksquashfs pseudo definitions.
exp --format squashfs-pseudo --state "$S" rootfs >pseudo
check_eq "pseudo: the device" "$(grep '^dev/console ' pseudo)" "dev/console c 600 0 5 5 1"
check_eq "pseudo: a setuid file" "$(grep '^bin/su ' pseudo)" "bin/su m 4755 0 0"
check_eq "pseudo: an escaped name" "$(grep '^with' pseudo | head -2 | tr '\n' '|')" \
	'with\ space m 755 0 0|with\ space/a\ file m 644 1000 100|'
check_eq "pseudo: the root" "$(grep '^# the root' pseudo)" "# the root: -root-mode 0755 -root-uid 0 -root-gid 0"
if have mksquashfs && have unsquashfs; then
	# The device nodes' real files are left out, so that the pseudo
	# devices can take their names.
	awk '$2 == "c" || $2 == "b" { print $1 }' pseudo >excludes
	check_cmd "mksquashfs takes the pseudo file" as_user mksquashfs rootfs img.sqfs \
		-noappend -quiet -no-progress -pf pseudo \
		$(sed -n 's/^# the root: //p' pseudo) -ef excludes
	unsquashfs -lln img.sqfs >sq.list 2>&1
	# "PATH|MODE OWNER SIZE", a device's size as MAJOR,MINOR.
	sed -E 's/^([^ ]+) +([^ ]+) +([0-9]+), +([0-9]+) /\1 \2 \3,\4 /
		s/^([^ ]+) +([^ ]+) +([^ ]+) +[^ ]+ +[^ ]+ +(.*)$/\4|\1 \2 \3/' sq.list >sq.norm
	sq() { grep -F -e "squashfs-root$1|" -e "squashfs-root$1 -> " sq.norm | sed 's/^.*|//'; }
	check_match "squashfs: the root" "$(sq '')" '^drwxr-xr-x 0/0 '

	check_match "squashfs: /dev/console" "$(sq /dev/console)" '^crw------- 0/5 5,1$'
	check_match "squashfs: /dev/sda" "$(sq /dev/sda)" '^brw-rw---- 0/6 8,0$'
	check_eq "squashfs: setuid /bin/su" "$(sq /bin/su)" "-rwsr-xr-x 0/0 6"
	check_eq "squashfs: setgid /bin/wall" "$(sq /bin/wall)" "-rwxr-sr-x 0/5 5"
	check_match "squashfs: the symlink's owner" "$(sq /etc/su-link)" '^lrwxrwxrwx 7/8 '
	check_match "squashfs: sticky /tmp" "$(sq /tmp)" '^drwxrwxrwt 0/0 '
	check_match "squashfs: a name with a space" "$(sq '/with space/a file')" '^-rw-r--r-- 1000/100 0$'
else
	ok "mksquashfs takes the pseudo file # SKIP mksquashfs (squashfs-tools) is not installed"
fi

# A socket: no archive holds one; the mtree says so, never silently.
as_user mkdir tree2
must "a socket" as_user "$H/node" mknod tree2/sock s 0755 0 0
out=$(exp --format mtree --state "$S" tree2 2>err2)
check_match "socket: a skipped line" "$(grep sock <<<"$out")" '^# skipped: \./sock: a socket'
check_match "socket: said on stderr" "$(cat err2)" 'mtree: \./sock: a socket'

# A recorded file removed outside any session: as at a load, its record
# is not dropped for its path (a file renamed outside would lose its
# own); it applies to nothing, since no other file has its birth time.
as_user rm rootfs/a-b/y
exp --format mtree --state "$S" rootfs >m10.mtree 2>err3
check_eq "a record whose file is gone: kept, applied to nothing, nothing said" \
	"$(cat err3)" ""
check_eq "... and the rest is as before" "$(grep -c . m10.mtree)" "$(($(grep -c . m4.mtree) - 1))"

# Errors: one line each; 2 for usage, 125 for the rest.
out=$(exp --format tarball --state "$S" rootfs 2>&1); rc=$?
check_eq "bad format: status" "$rc" 2
check_match "bad format: message" "$out" "unknown format .*tarball"
out=$(exp --state "$S" rootfs 2>&1); rc=$?
check_eq "no format: status" "$rc" 2
out=$(exp --format mtree rootfs 2>&1); rc=$?
check_eq "no state: status" "$rc" 2
check_match "no state: message" "$out" "which state"
out=$(exp --format mtree --state "$S" -i j.copy rootfs 2>&1); rc=$?
check_eq "--state with -i: status" "$rc" 2
out=$(exp --format mtree --state "$S" nowhere 2>&1); rc=$?
check_eq "missing ROOT: status" "$rc" 125
check_match "missing ROOT: message" "$out" "^fakeenv: export: nowhere: No such file"
out=$(exp --format mtree -i "$W/nope" rootfs 2>&1); rc=$?
check_eq "missing journal: status" "$rc" 125
check_match "missing journal: message" "$out" "^fakeenv: journal $W/nope: No such file"
as_user cp j.copy bad
printf "\\377" | dd of=bad bs=1 seek=100 conv=notrunc status=none
cp bad bad.orig
out=$(exp --format mtree -i bad -o never rootfs 2>&1); rc=$?
check_eq "damaged journal: status" "$rc" 125
check_match "damaged journal: message" "$out" "^fakeenv: journal bad: bad checksum"
check_cmd "damaged journal: left as it was" cmp bad bad.orig
check_cmd "damaged journal: no output file" test ! -e never
check_eq "damaged journal: one line" "$(printf '%s\n' "$out" | wc -l)" 1

# Done with the daemon: SIGTERM writes the journal and ends it.
for p in $(session_pids "$DAEMON"); do kill -TERM "$p"; done
wait_until 20 gone
check_cmd "the daemon left" gone

done_testing
