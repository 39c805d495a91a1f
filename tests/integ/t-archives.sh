#!/bin/bash
# Archives, both directions, with the real archivers.
#
# Out: a small rootfs built as the fake root (several owners, setuid and
# setgid binaries, a sticky /tmp, char and block devices, a fifo, symlinks
# lchown'd to another owner, hard links) packed with GNU tar, bsdtar and
# cpio -H newc inside the session; each archive is listed outside the
# session by two readers (bsdtar's mtree writer, and GNU tar or GNU cpio)
# and every listing, normalised to one form, must equal one expected list.
#
# In: an archive holding other owners, set-id bits and device nodes (made
# by real root from real files when we are root; from an mtree spec by
# bsdtar otherwise), extracted as the fake root with tar xpf --same-owner
# and cpio -idm, then read back with stat by a second process of the same
# --state session, and within one session.
#
# Capabilities (security.capability through setcap/getcap) and find -type
# c/b (readdir's d_type for faked devices) are asserted in full.
. "$(dirname "$0")/lib.sh"

for _p in bsdtar cpio tar stat; do
	command -v "$_p" >/dev/null ||
		bail "$_p is not installed (.ci/run installs libarchive-tools, cpio, tar)"
done

# --- the normal form --------------------------------------------------------
#
# One line per entry, sorted: PATH TYPE MODE UID:GID [MAJ,MIN | -> TARGET]
# PATH without a leading "./" (the top is "."), TYPE one of dir file link
# char block fifo, MODE in octal with the set-id and sticky bits.  Hard
# links are listed apart, as "A = B" with A < B.

# bsdtar reads any of the three and writes what it read as mtree.
norm_mtree() {
	bsdtar -cf - --format=mtree \
		--options='!all,type,uid,gid,mode,device,link' @"$1" |
		awk '
		/^#/ { next }
		{
			p = $1; sub(/^\/?\.\//, "", p); if (p == "/.") p = "."
			t = m = u = g = x = ""
			for (i = 2; i <= NF; i++) {
				k = $i; v = k; sub(/=.*/, "", k); sub(/^[^=]*=/, "", v)
				if (k == "type") t = v
				else if (k == "mode") m = v
				else if (k == "uid") u = v
				else if (k == "gid") g = v
				else if (k == "device") { sub(/^native,/, "", v); x = v }
				else if (k == "link") x = "-> " v
			}
			print p, t, m, u ":" g (x == "" ? "" : " " x)
		}' | sort
}

# The awk shared by the two ls-style readers: type and octal mode from a
# mode string such as -rwsr-xr-x.
AWK_PERM='
function ptype(s,  c) {
	c = substr(s, 1, 1)
	return c == "d" ? "dir" : c == "l" ? "link" : c == "c" ? "char" : \
	       c == "b" ? "block" : c == "p" ? "fifo" : "file"
}
function pmode(s,  m, i, c) {
	m = 0
	for (i = 0; i < 3; i++) {
		c = substr(s, 2 + 3 * i, 1); if (c == "r") m += 4 * 8 ^ (2 - i)
		c = substr(s, 3 + 3 * i, 1); if (c == "w") m += 2 * 8 ^ (2 - i)
		c = substr(s, 4 + 3 * i, 1)
		if (c == "x" || c == "s" || c == "t") m += 8 ^ (2 - i)
		if (c == "s" || c == "S") m += (i == 0 ? 2048 : 1024)
		if (c == "t" || c == "T") m += 512
	}
	return sprintf("%o", m)
}
function cut(n,  i, s) {
	s = $0
	for (i = 0; i < n; i++) sub(/^[ \t]*[^ \t]+/, "", s)
	sub(/^[ \t]+/, "", s)
	return s
}
function path(p) { sub(/^\.\//, "", p); sub(/\/$/, "", p); return p == "" ? "." : p }
'

# GNU tar --numeric-owner -tv: MODE UID/GID SIZE|MAJ,MIN DATE TIME NAME...
norm_gnutar() {
	tar --numeric-owner -tvf "$1" | awk "$AWK_PERM"'
	{
		t = ptype($1); n = cut(5); x = ""; ug = $2; sub("/", ":", ug)
		if (t == "link") { x = n; sub(/^.* -> /, "", x); x = "-> " x; sub(/ -> .*$/, "", n) }
		if (substr($1, 1, 1) == "h") sub(/ link to .*$/, "", n)
		if (t == "char" || t == "block") x = $3
		print path(n), t, pmode($1), ug (x == "" ? "" : " " x)
	}' | sort
}

# GNU cpio -itv --numeric-uid-gid: MODE NLINK UID GID SIZE|MAJ, MIN
# MON DAY TIME|YEAR NAME...
norm_cpio() {
	cpio -itv --numeric-uid-gid --quiet <"$1" | awk "$AWK_PERM"'
	{
		t = ptype($1); x = ""
		if (t == "char" || t == "block") { x = $5 $6; n = cut(9) } else n = cut(8)
		if (t == "link") { x = n; sub(/^.* -> /, "", x); x = "-> " x; sub(/ -> .*$/, "", n) }
		print path(n), t, pmode($1), $3 ":" $4 (x == "" ? "" : " " x)
	}' | sort
}

# Hard links as bsdtar (any format) or GNU tar (tar) report them:
# "NAME link to OTHER", as sorted pairs "A = B".
links_of() {
	"$@" | awk '
	/ link to / {
		s = $0; sub(/^.* [0-9][0-9]:[0-9][0-9] /, "", s); sub(/^[0-9][0-9][0-9][0-9] /, "", s)
		a = s; sub(/ link to .*$/, "", a); b = s; sub(/^.* link to /, "", b)
		sub(/^\.\//, "", a); sub(/^\.\//, "", b)
		print (a < b ? a " = " b : b " = " a)
	}' | sort
}

# --- out: a rootfs built as the fake root, packed three ways ----------------

mkrootfs='
	set -e
	umask 022
	mkdir -p r/bin r/dev r/etc r/home/alice r/srv/www r/tmp r/usr/bin
	printf "#!/bin/sh\necho su\n" >r/bin/su
	printf "#!/bin/sh\necho wall\n" >r/usr/bin/wall
	echo "root:x:0:0:root:/root:/bin/sh" >r/etc/passwd
	chown -R 0:0 r
	chmod 4755 r/bin/su
	chown 0:5 r/usr/bin/wall && chmod 2755 r/usr/bin/wall
	chmod 1777 r/tmp
	chown 1000:1000 r/home/alice && chmod 0750 r/home/alice
	echo "<p>hi</p>" >r/srv/www/index.html
	chown 33:33 r/srv/www r/srv/www/index.html && chmod 0640 r/srv/www/index.html
	mknod -m 0666 r/dev/null c 1 3
	mknod -m 0600 r/dev/console c 5 1
	mknod -m 0660 r/dev/sda b 8 0 && chown 0:6 r/dev/sda
	mkfifo -m 0620 r/dev/initctl
	ln -s su r/bin/sudo && chown -h 1000:1001 r/bin/sudo
	ln -s ../../bin/su r/usr/bin/su
	ln r/bin/su r/bin/su-hard
	ln r/etc/passwd r/etc/passwd-
'
expect_out='. dir 755 0:0
bin dir 755 0:0
bin/su file 4755 0:0
bin/su-hard file 4755 0:0
bin/sudo link 777 1000:1001 -> su
dev dir 755 0:0
dev/console char 600 0:0 5,1
dev/initctl fifo 620 0:0
dev/null char 666 0:0 1,3
dev/sda block 660 0:6 8,0
etc dir 755 0:0
etc/passwd file 644 0:0
etc/passwd- file 644 0:0
home dir 755 0:0
home/alice dir 750 1000:1000
srv dir 755 0:0
srv/www dir 755 33:33
srv/www/index.html file 640 33:33
tmp dir 1777 0:0
usr dir 755 0:0
usr/bin dir 755 0:0
usr/bin/su link 777 0:0 -> ../../bin/su
usr/bin/wall file 2755 0:5'
expect_links='bin/su = bin/su-hard
etc/passwd = etc/passwd-'

out=$(fe sh -c "$mkrootfs"'
	tar cf gnu.tar -C r .
	bsdtar cf bsd.tar -C r .
	(cd r && find . | cpio -o -H newc --quiet) >newc.cpio
' 2>&1)
check_eq "build the rootfs as the fake root and pack it with tar, bsdtar and cpio" "$?:$out" "0:"

for a in gnu.tar bsd.tar newc.cpio; do
	[ -s "$a" ] || { fail "$a: listed" "no archive $a"; continue; }
	check_eq "$a: bsdtar's listing equals the expected list" "$(norm_mtree "$a" 2>&1)" "$expect_out"
	case $a in
	*.tar) check_eq "$a: GNU tar --numeric-owner -tv equals the expected list" \
		"$(norm_gnutar "$a" 2>&1)" "$expect_out"
	       check_eq "$a: GNU tar sees the hard links" \
		"$(links_of tar --numeric-owner -tvf "$a")" "$expect_links" ;;
	*) check_eq "$a: cpio -itv --numeric-uid-gid equals the expected list" \
		"$(norm_cpio "$a" 2>&1)" "$expect_out" ;;
	esac
	check_eq "$a: bsdtar sees the hard links" "$(links_of bsdtar -tvf "$a")" "$expect_links"
done

# Outside, the files are the test user's: no set-id or sticky bit, no
# device, and the "devices" are empty regular files.
check_eq "outside: every real file belongs to the test user" \
	"$(find r ! -user "$TUID" | head -3)" ""
check_eq "outside: no real set-id or sticky bit, no real device" \
	"$(find r \( -perm /7000 -o -type c -o -type b \) | head -3)" ""
check_eq "outside: a faked device is an empty regular file" \
	"$(stat -c '%F' r/dev/sda)" "regular empty file"
# The same tree packed natively holds the real owner: the listing checks
# above can fail.
check_match "natively, tar stores the real owner (the checks can fail)" \
	"$(as_user tar --numeric-owner -cf - r/bin/su | tar --numeric-owner -tvf -)" \
	"^-rwxr-xr-x $TUID/$TGID "

# find -type c / -type b see the faked devices: readdir must report
# DT_CHR/DT_BLK for them, or find takes the d_type for the answer.
out=$(fe sh -c "rm -rf r; $mkrootfs"'
	echo c: $(find r -type c | sort); echo b: $(find r -type b | sort)' 2>&1)
want="c: r/dev/console r/dev/null
b: r/dev/sda"
check_eq "find -type c and find -type b find the faked devices" "$out" "$want"

# --- security.capability ----------------------------------------------------
#
# setcap needs CAP_SETFCAP in its (fake) effective set before it writes
# the xattr, and getcap reads it back: a capability that does not read
# back in the session is a failure.  Skipped only without libcap2-bin.
if command -v setcap >/dev/null && command -v getcap >/dev/null; then
	out=$(fe sh -c 'rm -rf c; mkdir c && cp /bin/true c/ping &&
		setcap cap_net_raw+ep c/ping; echo "setcap: $?"; getcap c/ping' 2>&1)
	if [[ $out == *"c/ping cap_net_raw=ep"* ]]; then
		ok "setcap cap_net_raw+ep reads back with getcap in the session"
		out=$(fe sh -c 'rm -rf c; mkdir c && cp /bin/true c/ping &&
			setcap cap_net_raw+ep c/ping &&
			tar --xattrs --xattrs-include="security.*" -cf cap-gnu.tar c &&
			bsdtar cf cap-bsd.tar c' 2>&1)
		check_eq "pack a file with a capability with tar --xattrs and bsdtar" "$?:$out" "0:"
		for a in cap-gnu.tar cap-bsd.tar; do
			check_match "$a: the archive holds security.capability for c/ping" \
				"$(tar --xattrs --xattrs-include='*' -tvvf "$a" 2>/dev/null | tr '\n' '|')" \
				"c/ping\|  x: [0-9]+ security\.capability"
			# fakeroot shows a file with an xattr as its real owner; not us.
			check_match "$a: c/ping is still root's after setcap" \
				"$(tar --numeric-owner -tvf "$a" c/ping 2>/dev/null)" "^-rwxr-xr-x 0/0 "
			if [ "$(id -u)" = 0 ]; then
				rm -rf "$T/capx"; mkdir "$T/capx"
				tar --xattrs --xattrs-include='*' -xpf "$a" -C "$T/capx" 2>/dev/null
				check_eq "$a: extracted by real root, getcap shows cap_net_raw=ep" \
					"$(getcap "$T/capx/c/ping" | sed "s|$T/capx/||")" "c/ping cap_net_raw=ep"
			fi
		done
	else
		fail "setcap cap_net_raw+ep reads back with getcap in the session" \
			"setcap and getcap said: $out"
	fi
else
	ok "setcap cap_net_raw+ep reads back with getcap in the session # SKIP setcap/getcap not installed (libcap2-bin)"
fi

# --- in: an archive with other owners, set-id bits and devices, extracted --

# What stat -c '%n %u:%g %a %F %t,%T' must show for each entry (major
# and minor in hex: ttyS0 is 4,64).
expect_in='. 0:0 755 directory 0,0
bin 0:0 755 directory 0,0
bin/ping 0:0 4755 regular file 0,0
bin/ping-hard 0:0 4755 regular file 0,0
dev 0:0 755 directory 0,0
dev/fifo 0:0 600 fifo 0,0
dev/null 0:0 666 character special file 1,3
dev/sda 0:6 660 block special file 8,0
dev/ttyS0 0:20 620 character special file 4,40
home 0:0 755 directory 0,0
home/bob 1001:1002 700 directory 0,0
home/bob/link 1001:1002 777 symbolic link 0,0
home/bob/notes 1001:1002 600 regular file 0,0
srv 33:33 2775 directory 0,0
tmp 0:0 1777 directory 0,0
usr 0:0 755 directory 0,0
usr/bin 0:0 755 directory 0,0
usr/bin/crontab 0:102 2755 regular file 0,0'
in_paths=". bin bin/ping bin/ping-hard dev dev/fifo dev/null dev/sda dev/ttyS0 home home/bob home/bob/link home/bob/notes srv tmp usr usr/bin usr/bin/crontab"
STATF='%n %u:%g %a %F %t,%T'

if [ "$(id -u)" = 0 ]; then
	# Real files with real owners and real devices, made by real root in
	# a scratch dir of ours.
	how="made by real root"
	s=$T/src
	(
		set -e
		umask 022
		mkdir -p "$s"/bin "$s"/dev "$s"/home/bob "$s"/srv "$s"/tmp "$s"/usr/bin
		echo "ping" >"$s"/bin/ping && chmod 4755 "$s"/bin/ping
		ln "$s"/bin/ping "$s"/bin/ping-hard
		echo "crontab" >"$s"/usr/bin/crontab
		chown 0:102 "$s"/usr/bin/crontab && chmod 2755 "$s"/usr/bin/crontab
		mknod -m 0666 "$s"/dev/null c 1 3
		mknod -m 0660 "$s"/dev/sda b 8 0 && chown 0:6 "$s"/dev/sda
		mknod -m 0620 "$s"/dev/ttyS0 c 4 64 && chown 0:20 "$s"/dev/ttyS0
		mkfifo -m 0600 "$s"/dev/fifo
		echo "notes" >"$s"/home/bob/notes && chmod 0600 "$s"/home/bob/notes
		ln -s notes "$s"/home/bob/link
		chown -h 1001:1002 "$s"/home/bob "$s"/home/bob/notes "$s"/home/bob/link
		chmod 0700 "$s"/home/bob
		chown 33:33 "$s"/srv && chmod 2775 "$s"/srv
		chmod 1777 "$s"/tmp
		tar --numeric-owner -cf "$W"/in.tar -C "$s" .
		(cd "$s" && find . | cpio -o -H newc --quiet) >"$W"/in.cpio
		chown "$TUID:$TGID" "$W"/in.tar "$W"/in.cpio
	) || bail "setup failed: real root could not make the source tree"
	check_eq "the source tree (real, by real root) is what the archive must hold" \
		"$(cd "$s" && stat -c "$STATF" $in_paths)" "$expect_in"
else
	# Without privilege, bsdtar writes the same archive from a spec.
	how="written by bsdtar from an mtree spec"
	echo "crontab" >crontab.data; echo "notes" >notes.data
	cat >in.mtree <<'EOF'
#mtree
. type=dir uid=0 gid=0 mode=0755
./bin type=dir uid=0 gid=0 mode=0755
./dev type=dir uid=0 gid=0 mode=0755
./dev/fifo type=fifo uid=0 gid=0 mode=0600
./dev/null type=char uid=0 gid=0 mode=0666 device=native,1,3
./dev/sda type=block uid=0 gid=6 mode=0660 device=native,8,0
./dev/ttyS0 type=char uid=0 gid=20 mode=0620 device=native,4,64
./home type=dir uid=0 gid=0 mode=0755
./home/bob type=dir uid=1001 gid=1002 mode=0700
./home/bob/link type=link uid=1001 gid=1002 mode=0777 link=notes
./home/bob/notes type=file uid=1001 gid=1002 mode=0600 contents=notes.data
./srv type=dir uid=33 gid=33 mode=02775
./tmp type=dir uid=0 gid=0 mode=01777
./usr type=dir uid=0 gid=0 mode=0755
./usr/bin type=dir uid=0 gid=0 mode=0755
./usr/bin/crontab type=file uid=0 gid=102 mode=02755 contents=crontab.data
EOF
	# mtree has no hard links: bin/ping and its hard link come from GNU
	# tar, told the owner and mode to store.
	must "bsdtar from the spec" bsdtar -cf in0.tar --format=pax @in.mtree
	must "a hard link" sh -c 'mkdir -p hl/bin && echo ping >hl/bin/ping && ln hl/bin/ping hl/bin/ping-hard'
	must "the hard link's tar" tar -cf hl.tar --numeric-owner --owner=0 --group=0 --mode=4755 -C hl ./bin/ping ./bin/ping-hard
	must "the tar" bsdtar -cf in.tar --format=pax @in0.tar @hl.tar
	# bsdtar writes a tar hard link into newc as an entry of no type: the
	# pair goes in with GNU cpio, appended, its owner told (-R 0:0) and its
	# set-uid bit real (a file of ours in our scratch dir).
	must "the cpio" bsdtar -cf in.cpio --format=newc @in0.tar
	must "the cpio's hard link" sh -c 'chmod 4755 hl/bin/ping && cd hl && printf "./bin/ping\n./bin/ping-hard\n" | cpio -o -A -H newc -R 0:0 --quiet -F ../in.cpio'
fi

# The archive holds what we expect (listing, outside any session).
check_eq "the archive ($how): bsdtar lists its set-id bits, owners and devices" \
	"$(norm_mtree in.tar | grep -E '^(bin/ping|bin/ping-hard|dev/ttyS0|dev/sda|srv|home/bob/link) ')" \
"bin/ping file 4755 0:0
bin/ping-hard file 4755 0:0
dev/sda block 660 0:6 8,0
dev/ttyS0 char 620 0:20 4,64
home/bob/link link 777 1001:1002 -> notes
srv dir 2775 33:33"

S=$T/state
# The --state daemon keeps the launcher's stderr for its messages and
# outlives it by --linger seconds: its stderr goes to a file, not into a
# command substitution that would wait for the daemon.
fe_state() {
	fe_opt --state "$S" --linger 2 -- "$@" 2>"$T/state.err"
	local rc=$?
	cat "$T/state.err"
	return $rc
}
stat_in() { echo "cd $1 && stat -c '$STATF' $in_paths"; }

# Extract in one process of a --state session; stat from another.
out=$(fe_state sh -c 'mkdir xt && cd xt && tar -xpf ../in.tar --same-owner' 2>&1)
check_eq "tar -xpf --same-owner as the fake root" "$?:$out" "0:"
check_eq "tar: a second process of the --state session stats what the archive holds" \
	"$(fe_state sh -c "$(stat_in xt)" 2>&1)" "$expect_in"
out=$(fe_state sh -c 'mkdir xc && cd xc && cpio -idm --quiet <../in.cpio' 2>&1)
check_eq "cpio -idm as the fake root" "$?:$out" "0:"
check_eq "cpio: a second process of the --state session stats what the archive holds" \
	"$(fe_state sh -c "$(stat_in xc)" 2>&1)" "$expect_in"
check_eq "the extracted hard links are one inode" \
	"$(fe_state stat -c '%h %i' xt/bin/ping xt/bin/ping-hard | uniq -c | awk '{ print $1, $2 }')" "2 2"

# Within one session: extract, then stat and find.
out=$(fe sh -c 'mkdir x1 && cd x1 && tar -xpf ../in.tar --same-owner && '"$(stat_in .)" 2>&1)
check_eq "tar -xpf --same-owner then stat, in one session" "$out" "$expect_in"
out=$(fe sh -c 'mkdir x2 && cd x2 && cpio -idm --quiet <../in.cpio && '"$(stat_in .)" 2>&1)
check_eq "cpio -idm then stat, in one session" "$out" "$expect_in"

# Outside, the extracted files are the test user's, with no set-id bits.
check_eq "outside: the extracted files belong to the test user, no set-id bits, no devices" \
	"$(find xt xc x1 x2 \( ! -user "$TUID" -o -perm /7000 -o -type c -o -type b \) | head -3)" ""

out=$(fe_state sh -c 'echo c: $(find xt -type c | sort); echo b: $(find xt -type b | sort)' 2>&1)
want="c: xt/dev/null xt/dev/ttyS0
b: xt/dev/sda"
check_eq "extracted devices: find -type c and -type b find them" "$out" "$want"

# --- Yocto-style: one persistent state per recipe ---------------------------
#
# do_install and do_package run as separate sessions of one FAKEENV_STATE
# directory; after do_install a checkpoint puts the state on disk, then
# the daemon is killed with SIGKILL (a build machine's crash): do_package
# starts a new daemon, which loads the journal, and packs the image with
# its owners, set-id bits and device.  A fresh session without the state
# packs the same files as plain root-owned files: the state is what
# carries them.
Y=$T/recipe-state
yocto() { as_user env FAKEENV_STATE="$Y" "$FE" "$@"; }
yocto --linger 60 -- sh -c '
	umask 022
	mkdir -p image/usr/bin image/dev image/var/spool
	echo x >image/usr/bin/at && chown 1:1 image/usr/bin/at && chmod 6755 image/usr/bin/at
	mknod -m 0620 image/dev/tty1 c 4 1 && chown 0:5 image/dev/tty1
	chown 1:1 image/var/spool && chmod 1770 image/var/spool
' >"$T/yocto.err" 2>&1
check_eq "do_install in FAKEENV_STATE's session" "$?:$(cat "$T/yocto.err")" "0:"
check_match "fakeenv checkpoint writes the recipe's journal" \
	"$(yocto checkpoint 2>&1)" "^checkpoint: [0-9]+ records, [0-9]+ bytes$"
pids=$(session_pids "$DAEMON")
check_ne "the recipe's daemon lingers after do_install" "$pids" ""
for p in $pids; do kill -9 "$p"; done
wait_until 10 no_procs "$DAEMON"
check_cmd "the recipe's daemon is gone" no_procs "$DAEMON"
yocto --linger 0 -- tar --numeric-owner -cf image.tar image >"$T/yocto.err" 2>&1
check_eq "do_package in a new daemon of the same state" "$?:$(cat "$T/yocto.err")" "0:"
check_eq "the image's tarball holds what do_install made" \
	"$(norm_gnutar image.tar | grep -v ' dir 755 0:0$')" \
"image/dev/tty1 char 620 0:5 4,1
image/usr/bin/at file 6755 1:1
image/var/spool dir 1770 1:1"
check_eq "without the state, the same files are plain root files" \
	"$(fe tar --numeric-owner -cf - image 2>&1 | norm_gnutar /dev/stdin | grep -v ' dir 755 0:0$')" \
"image/dev/tty1 file 620 0:0
image/usr/bin/at file 755 0:0
image/var/spool dir 770 0:0"

done_testing
