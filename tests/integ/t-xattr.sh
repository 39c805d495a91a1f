#!/bin/bash
# Extended attributes, capabilities and ACLs.  The names a real filesystem
# refuses to an unprivileged user (security.*, trusted.*,
# system.posix_acl_*) are kept by the daemon and read back in the session,
# never on the real file; user.* lands on the real file.  setcap, getcap,
# setfacl, getfacl, setfattr, getfattr, ls, tar and bsdtar as the users,
# and the helper xat for each of the twelve entry points and their
# errors.  Outside the session, getfattr shows what is real.
. "$(dirname "$0")/lib.sh"

for _p in setfattr getfattr setfacl getfacl setcap getcap bsdtar; do
	command -v "$_p" >/dev/null ||
		bail "$_p is not installed (.ci/run installs attr, acl, libcap2-bin, libarchive-tools)"
done
X=$H/xat
export X

# What the real file holds, as root would list it (outside any session).
real_names() { getfattr --absolute-names -d -m - "$1" 2>/dev/null | awk -F= '/=/ { print $1 }' | sort | tr '\n' ' '; }

# --- the tools ----------------------------------------------------------------

out=$(fe sh -c '
	cp /bin/true ping && setcap cap_net_raw+ep ping && echo "getcap $(getcap ping)"
	mkdir d && setfacl -m u:1000:rwx d && echo "getfacl $(getfacl -n d 2>/dev/null | grep -v "^#" | grep . | tr "\t\n" "  ")"
	echo "ls $(ls -ld d | cut -c1-11)"
	echo "stat $(stat -c %a d)"
	chmod 750 d && echo "chmod $(getfacl -n d 2>/dev/null | grep -v "^#" | grep . | tr "\t\n" "  ")"
	echo "ls-plain $(ls -ld ping | cut -c1-11)"
	touch f && setfattr -n security.fake -v hello f && setfattr -n user.real -v yes f &&
		echo "getfattr $(getfattr --absolute-names -d -m - f | grep = | sort | tr "\n" " ")"
' 2>&1)
check_eq "setcap cap_net_raw+ep f && getcap f" "$(pick getcap <<<"$out")" "ping cap_net_raw=ep"
check_eq "setfacl -m u:1000:rwx d && getfacl d shows the ACL" "$(pick getfacl <<<"$out")" \
	"user::rwx user:1000:rwx group::r-x mask::rwx other::r-x "
check_eq "ls -l shows the ACL's '+' and the mask as group bits" "$(pick ls <<<"$out")" "drwxrwxr-x+"
check_eq "stat shows the mask as the group bits" "$(pick stat <<<"$out")" "775"
check_eq "chmod 750 rewrites the ACL's mask and other entries" "$(pick chmod <<<"$out")" \
	"user::rwx user:1000:rwx #effective:r-x group::r-x mask::r-x other::--- "
check_eq "a file with only a capability has no '+'" "$(pick ls-plain <<<"$out")" "-rwxr-xr-x "
check_eq "setfattr/getfattr: security.* and user.* read back in the session" \
	"$(pick getfattr <<<"$out")" 'security.fake="hello" user.real="yes" '
check_eq "outside: user.* is on the real file, security.* is not" "$(real_names f)" "user.real "
check_eq "outside: no capability and no ACL on the real files" "$(real_names ping)$(real_names d)" ""
check_eq "outside: getcap sees no capability" "$(getcap ping)" ""

# --- each entry point, and the errors -----------------------------------------

must "files" as_user sh -c 'touch e && ln -s e lnk'
big=$(printf 'n%.0s' $(seq 256))
out=$(fe sh -c '
	for c in set lset fset sys-set; do echo "$c $($X $c e security.$c v-$c)"; done
	for c in get lget fget sys-get; do echo "$c $($X $c e security.set)"; done
	$X set e user.u 1 >/dev/null
	for c in list llist flist sys-list; do echo "$c $($X $c e)"; done
	echo "size $($X list e 0)"
	echo "erange-list $($X list e 10)"
	echo "getsize $($X get e security.set 0)"
	echo "erange-get $($X get e security.set 2)"
	echo "create-exists $($X set e security.set x create)"
	echo "replace-absent $($X set e security.none x replace)"
	echo "replace $($X set e security.set v-new replace) $($X get e security.set)"
	echo "create $($X set e security.new x create)"
	echo "absent $($X get e security.none)"
	echo "64k $($X setn e security.big 65536) $($X get e security.big)"
	echo "64k+1 $($X setn e security.big2 65537)"
	echo "f64k+1 $($X fsetn e security.big2 65537)"
	echo "name256 $($X set e security.'"$big"' x)"
	echo "emptyname $($X set e "" x)"
	for c in rm lrm frm sys-rm; do
		n=security.$c; [ $c = rm ] && n=security.set; [ $c = lrm ] && n=security.lset
		[ $c = frm ] && n=security.fset; [ $c = sys-rm ] && n=security.sys-set
		echo "$c $($X $c e $n)"
	done
	echo "rm-again $($X rm e security.set)"
	echo "after $($X list e)"
	echo "symlink $($X lset lnk trusted.t 1) $($X llist lnk) $($X list lnk)"
	echo "acl-symlink $($X lset lnk system.posix_acl_access x)"
	echo "bad-acl $($X set e system.posix_acl_access garbage)"
	echo "default-on-file $(setfacl -d -m u:1000:rwx e 2>&1 >/dev/null | grep -c .)"
' 2>&1)
for c in set lset fset sys-set; do check_eq "$c of security.*" "$(pick $c <<<"$out")" ok; done
for c in get lget fget sys-get; do check_eq "$c of security.*" "$(pick $c <<<"$out")" v-set; done
for c in list llist flist sys-list; do
	check_eq "$c merges the real user.* and the daemon's names" "$(pick $c <<<"$out")" \
		"security.fset,security.lset,security.set,security.sys-set,user.u"
done
check_eq "listxattr size query: the whole list's length" "$(pick size <<<"$out")" \
	$((14 + 14 + 13 + 17 + 7))
check_eq "listxattr into a small buffer: ERANGE" "$(pick erange-list <<<"$out")" "ERR ERANGE"
check_eq "getxattr size query" "$(pick getsize <<<"$out")" 5
check_eq "getxattr into a small buffer: ERANGE" "$(pick erange-get <<<"$out")" "ERR ERANGE"
check_eq "XATTR_CREATE of an existing name: EEXIST" "$(pick create-exists <<<"$out")" "ERR EEXIST"
check_eq "XATTR_REPLACE of an absent name: ENODATA" "$(pick replace-absent <<<"$out")" "ERR ENODATA"
check_eq "XATTR_REPLACE of an existing name" "$(pick replace <<<"$out")" "ok v-new"
check_eq "XATTR_CREATE of a new name" "$(pick create <<<"$out")" "ok"
check_eq "getxattr of an absent name: ENODATA" "$(pick absent <<<"$out")" "ERR ENODATA"
check_eq "a 64 KiB value is kept" "$(pick 64k <<<"$out")" "ok 65536 bytes"
check_eq "64 KiB + 1: E2BIG" "$(pick 64k+1 <<<"$out")" "ERR E2BIG"
check_eq "fsetxattr of 64 KiB + 1: E2BIG" "$(pick f64k+1 <<<"$out")" "ERR E2BIG"
check_eq "a name past 255 bytes: ERANGE" "$(pick name256 <<<"$out")" "ERR ERANGE"
check_eq "an empty name: ERANGE" "$(pick emptyname <<<"$out")" "ERR ERANGE"
for c in rm lrm frm sys-rm; do check_eq "$c of security.*" "$(pick $c <<<"$out")" ok; done
check_eq "removexattr of a removed name: ENODATA" "$(pick rm-again <<<"$out")" "ERR ENODATA"
check_eq "what is left" "$(pick after <<<"$out")" "security.big,security.new,user.u"
check_eq "lsetxattr on a symlink: its own, not its target's" "$(pick symlink <<<"$out")" \
	"ok trusted.t security.big,security.new,user.u"
check_eq "an ACL on a symlink: EOPNOTSUPP" "$(pick acl-symlink <<<"$out")" "ERR EOPNOTSUPP"
check_eq "a malformed ACL: EINVAL" "$(pick bad-acl <<<"$out")" "ERR EINVAL"
check_eq "a default ACL on a file is refused" "$(pick default-on-file <<<"$out")" 1
check_eq "outside: only user.u is real" "$(real_names e)" "user.u "

# --- a default ACL, and a minimal ACL set over an extended one ----------------

out=$(fe sh -c '
	mkdir dd && setfacl -d -m u:1000:rx dd && echo "default $(getfacl -n dd 2>/dev/null | grep ^default: | tr "\n" " ")"
	touch m && setfacl -m u:1000:rw m && setfacl -b m && echo "minimal $(ls -l m | cut -c1-11)$(getfacl -n m 2>/dev/null | grep -v "^#" | grep . | tr "\t\n" "  ")"
' 2>&1)
check_eq "setfacl -d: the default ACL is kept" "$(pick default <<<"$out")" \
	"default:user::rwx default:user:1000:r-x default:group::r-x default:mask::r-x default:other::r-x "
check_eq "setfacl -b: back to a minimal ACL, nothing kept" "$(pick minimal <<<"$out")" \
	"-rw-r--r-- user::rw- group::r-- other::r-- "

# --- hard links, renames, the last unlink, a reused inode ---------------------

out=$(fe sh -c '
	touch h && $X set h security.s 1 >/dev/null && ln h h2 && echo "link $($X get h2 security.s)"
	mv h h3 && echo "rename $($X get h3 security.s)"
	rm h3 && echo "one-left $($X get h2 security.s)"
	ino=$(stat -c %i h2); rm h2
	i=0
	while [ $i -lt 3000 ]; do
		i=$((i + 1)); n=n-$i; touch $n
		if [ "$(stat -c %i $n)" = "$ino" ]; then
			echo "reuse $($X get $n security.s) $($X list $n)"; break
		fi
	done
	[ $i -lt 3000 ] || echo "reuse no-reuse"
	mkdir rd && $X set rd security.s 1 >/dev/null && ino=$(stat -c %i rd) && rmdir rd
	i=0
	while [ $i -lt 3000 ]; do
		i=$((i + 1)); n=m-$i; mkdir $n
		if [ "$(stat -c %i $n)" = "$ino" ]; then
			echo "reuse-dir $($X get $n security.s)"; break
		fi
	done
	[ $i -lt 3000 ] || echo "reuse-dir no-reuse"
' 2>&1)
check_eq "xattrs follow a hard link" "$(pick link <<<"$out")" 1
check_eq "xattrs follow a rename" "$(pick rename <<<"$out")" 1
check_eq "an unlink that leaves a link keeps them" "$(pick one-left <<<"$out")" 1
for k in reuse reuse-dir; do
	if [ "$(pick $k <<<"$out")" = no-reuse ]; then
		ok "$k: a reused inode has no xattrs # SKIP the inode was not reused in 3000 creations"
	else
		check_match "$k: the last unlink took them; a reused inode has none" \
			"$(pick $k <<<"$out")" "^ERR ENODATA"
	fi
done

# --- archives -----------------------------------------------------------------

out=$(fe sh -c '
	mkdir a && cp /bin/true a/ping && setcap cap_net_raw+ep a/ping &&
	setfacl -m u:1000:rwx a &&
	tar --xattrs --xattrs-include="*" --acls -cf gnu.tar a &&
	bsdtar --xattrs --acls -cf bsd.tar a && echo packed
' 2>&1)
check_eq "tar --xattrs and bsdtar --xattrs pack in the session" "$out" packed
for a in gnu.tar bsd.tar; do
	check_match "$a: tar --xattrs -tvvf shows security.capability outside" \
		"$(tar --xattrs --xattrs-include='*' -tvvf "$a" 2>/dev/null | tr '\n' '|')" \
		"a/ping\|  x: [0-9]+ security\.capability"
done
for a in gnu.tar bsd.tar; do
	if [ $a = gnu.tar ]; then
		x="tar --xattrs --xattrs-include=* --acls -xpf ../$a"
	else
		x="bsdtar --xattrs --acls -xpf ../$a"
	fi
	out=$(fe sh -c "mkdir x-$a && cd x-$a && $x && getcap a/ping && getfacl -n a 2>/dev/null | grep ^user:" 2>&1)
	check_eq "$a extracted in a second session: getcap and getfacl" "$(echo $out)" \
		"a/ping cap_net_raw=ep user::rwx user:1000:rwx"
done

# --- -s then -i ---------------------------------------------------------------

st=$T/state.jnl
as_user touch "$T/keep"
out=$(fe_opt -s "$st" -- sh -c 'mkdir k && cp /bin/true k/ping && setcap cap_net_raw+ep k/ping &&
	setfacl -m u:1000:rwx k && setfattr -n trusted.t -v 1 k && echo saved' 2>&1)
check_eq "-s: a session with a capability and an ACL saves" "$out" saved
check_match "fsck counts the records with xattrs" "$(as_user "$FE" fsck "$st" 2>&1)" "with xattrs 2"
out=$(fe_opt -i "$st" -- sh -c 'getcap k/ping; getfacl -n k 2>/dev/null | grep ^user:; getfattr --only-values -n trusted.t k; echo; ls -ld k | cut -c1-11' 2>&1)
check_eq "-i: the capability, the ACL and trusted.* are back" "$(echo $out)" \
	"k/ping cap_net_raw=ep user::rwx user:1000:rwx 1 drwxrwxr-x+"

# --- capabilities as a fake root ----------------------------------------------

last=$(cat /proc/sys/kernel/cap_last_cap)
full=$(printf '%016x' $(( (1 << (last + 1)) - 1 )))
out=$(fe sh -c '$X caps; $X capset-drop; $X capset-raise' 2>&1)
check_eq "capget: full effective and permitted sets; capset drops and raises" "$(echo $out)" \
	"eff $full perm $full eff 0000000000000000 perm $full eff $full perm $full"

# --- a fake non-root ----------------------------------------------------------

out=$(fe sh -c 'touch o p && chown 1000 o && $X set p trusted.t 1 >/dev/null &&
	$H/creds setgroups - setresgid 1000 1000 1000 setresuid 1000 1000 1000 run sh -c "
	echo \"sec \$($X set o security.x 1)\"
	echo \"trusted \$($X set o trusted.x 1)\"
	echo \"read-trusted \$($X get p trusted.t)\"
	echo \"list-trusted \$($X list p)\"
	echo \"caps \$($X caps)\"
	echo \"own-acl \$(setfacl -m u:5:r o 2>&1 && getfacl -n o 2>/dev/null | grep ^user:5)\"
	echo \"other-acl \$(setfacl -m u:5:r p 2>&1 >/dev/null | grep -c .)\"
"' 2>&1)
check_eq "uid 1000: security.* needs privilege: EPERM" "$(pick sec <<<"$out")" "ERR EPERM"
check_eq "uid 1000: trusted.* needs privilege: EPERM" "$(pick trusted <<<"$out")" "ERR EPERM"
check_eq "uid 1000: trusted.* is not readable: ENODATA" "$(pick read-trusted <<<"$out")" "ERR ENODATA"
check_eq "uid 1000: trusted.* is not listed" "$(pick list-trusted <<<"$out")" ""
check_eq "uid 1000: no effective capability" "$(pick caps <<<"$out")" "eff 0000000000000000 perm $full"
check_eq "uid 1000: an ACL on its own file" "$(pick own-acl <<<"$out")" "user:5:r--"
check_eq "uid 1000: no ACL on root's file" "$(pick other-acl <<<"$out")" 1

# --- no round trip for files without daemon xattrs ----------------------------

if command -v strace >/dev/null && as_user strace -o /dev/null true 2>/dev/null; then
	must "make 100 files" as_user sh -c 'mkdir t && cd t && seq -f "f%03g" 1 100 | xargs touch'
	out=$(fe sh -c '
		strace -f -qq -e trace=sendmsg,sendto,send,writev -o tr.none ls -l t >/dev/null
		echo "none $(grep -c "^[0-9]* *\(send\|writev\)" tr.none)"
		setfattr -n security.x -v 1 t/f001
		strace -f -qq -e trace=sendmsg,sendto,send,writev -o tr.some ls -l t >/dev/null
		echo "some $(grep -c "^[0-9]* *\(send\|writev\)" tr.some)"
	' 2>&1)
	check_eq "ls -l of 100 files, no xattrs in the session: only MAP is sent" "$(pick none <<<"$out")" 1
	check_match "ls -l with one file holding xattrs: MAP and that file's lookups only" \
		"$(pick some <<<"$out")" "^[1-4]$"
else
	ok "messages # SKIP strace cannot trace here"
fi
done_testing
