#!/bin/bash
# Calls made through syscall(3) are faked as the libc calls are: each
# routed number (the chown, chmod, stat, mknod, creation, removal, rename
# and credential families) gives what its libc call gives in a session,
# and any other number passes straight through.
. "$(dirname "$0")/lib.sh"

X=$H/sysc
# in_fe SCRIPT: run sh -c SCRIPT in one session, $X as $0.
in_fe() { fe sh -c "$1" "$X" 2>&1; }

for c in chown lchown fchown fchownat fchownat-nofollow; do
	check_eq "syscall $c is recorded" \
		"$(in_fe "touch $c; \"\$0\" $c $c 3 4 && stat -c %u:%g $c")" "ok
3:4"
done
check_eq "syscall lchown of a symlink changes the link, not its target" \
	"$(in_fe 'touch t; ln -s t l; "$0" lchown l 5 6 && stat -c %u:%g t l')" "ok
0:0
5:6"
check_eq "syscall chown leaving both ids (-1 -1) changes nothing" \
	"$(in_fe 'touch n; chown 7:8 n; "$0" chown n -1 -1 && stat -c %u:%g n')" "ok
7:8"
check_eq "natively syscall chown fails (the test can fail)" \
	"$(as_user touch nat; as_user "$X" chown nat 3 4 2>&1)" "ERR EPERM"

for c in chmod fchmod fchmodat fchmodat2 fchmodat2-empty; do
	check_eq "syscall $c records the set-id bits" \
		"$(in_fe "touch $c; \"\$0\" $c $c 4751 && stat -c %a $c")" "ok
4751"
done
check_eq "syscall chmod keeps the real file usable and not set-id" \
	"$(in_fe 'touch rm; "$0" chmod rm 4000' >/dev/null; stat -c %a rm)" 600

for c in stat lstat fstat newfstatat statx; do
	check_eq "syscall $c shows the record" \
		"$(in_fe "touch $c.s; chown 9:10 $c.s; chmod 2755 $c.s; \"\$0\" $c $c.s")" \
		"9 10 102755 0 0"
done
check_eq "syscall stat of a file without a record shows 0:0" \
	"$(in_fe 'touch plain; "$0" stat plain' | cut -d' ' -f1,2)" "0 0"
check_ne "natively syscall stat shows the real owner (the test can fail)" \
	"$(as_user "$X" stat nat | cut -d' ' -f1,2)" "0 0"
check_eq "syscall stat of a missing file: ENOENT" \
	"$(in_fe '"$0" stat /nonexistent/x')" "ERR ENOENT"

check_eq "syscall mknod of a char device is recorded" \
	"$(in_fe '"$0" mknod c0 20644 4 300 && stat -c "%F %t:%T %u" c0')" "ok
character special file 4:12c 0"
check_eq "syscall mknodat of a block device is recorded" \
	"$(in_fe '"$0" mknodat b0 60600 8 1 && stat -c "%F %t:%T" b0')" "ok
block special file 8:1"
check_eq "syscall mknod made a plain file for real" "$(stat -c %F c0)" "regular empty file"

# With -u a file without a record shows its real owner: only a file the
# shim saw being made shows the fake fsuid.
for c in openat2 open openat creat mkdir mkdirat; do
	check_eq "syscall $c: the new file belongs to the fake root" \
		"$(fe_opt -u -- sh -c "\"\$0\" $c new.$c 0640 && stat -c %u:%g new.$c" "$X" 2>&1)" "ok
0:0"
done
for c in symlink symlinkat; do
	check_eq "syscall $c: the new link belongs to the fake root" \
		"$(fe_opt -u -- sh -c "\"\$0\" $c new.$c target && stat -c %u:%g new.$c" "$X" 2>&1)" "ok
0:0"
done
check_ne "with -u a file made by touch natively shows its real owner (the test can fail)" \
	"$(as_user touch nat.u; fe_opt -u -- stat -c %u:%g nat.u 2>&1)" "0:0"
# A new file after setfsuid: created by syscall, owned by the fake ids.
check_eq "syscall openat2 after a chown of an old inode: fresh record" \
	"$(in_fe 'touch o2; chown 5:5 o2; rm o2; "$0" openat2 o2 0600 && stat -c %u:%g o2')" "ok
0:0"
check_eq "syscall openat2 of an existing file leaves its record" \
	"$(in_fe 'touch o3; chown 5:6 o3; "$0" openat2 o3 0600 && stat -c %u:%g o3')" "ok
5:6"

check_eq "syscall unlink drops the record with the last name" \
	"$(in_fe 'touch u1; chown 3:3 u1; "$0" unlink u1 && "$0" openat2 u1 0644 >/dev/null && stat -c %u:%g u1')" "ok
0:0"
for c in rename renameat renameat2; do
	check_eq "syscall $c: the record follows the file" \
		"$(in_fe "touch $c.a; chown 11:12 $c.a; \"\$0\" $c $c.a $c.b && stat -c %u:%g $c.b")" "ok
11:12"
done
check_eq "syscall unlinkat and rmdir succeed" \
	"$(in_fe 'touch ua; mkdir rd; "$0" unlinkat ua && "$0" rmdir rd')" "ok
ok"

must "make a read-only file" as_user sh -c 'touch ro && chmod 0444 ro'
for c in access faccessat faccessat2; do
	check_eq "syscall $c: the fake root may write a 0444 file" "$(in_fe "\"\$0\" $c ro")" ok
done
check_eq "natively syscall access W_OK of a 0444 file fails (the test can fail)" \
	"$(as_user "$X" access ro 2>&1)" "ERR EACCES"
check_eq "syscall execve with an empty envp stays in the session" \
	"$(in_fe '"$0" execve /usr/bin/id -u')" 0
check_ne "natively that execve shows the real uid (the test can fail)" \
	"$(as_user "$X" execve /usr/bin/id -u 2>&1)" 0

check_eq "syscall credentials follow the kernel's rules on the fake ids" \
	"$(in_fe '"$0" creds')" "start: uid 0 euid 0 gid 0 egid 0 resuid 0,0,0 resgid 0,0,0 groups 0
setgroups 7,8 setresgid 10,11,12: uid 0 euid 0 gid 10 egid 11 resuid 0,0,0 resgid 10,11,12 groups 7,8
setregid 20,21 setgid 30: uid 0 euid 0 gid 30 egid 30 resuid 0,0,0 resgid 30,30,30 groups 7,8
setfsgid 31: old 30
setresuid 1,2,3: uid 1 euid 2 gid 30 egid 30 resuid 1,2,3 resgid 30,30,30 groups 7,8
setuid 0: EPERM
setreuid 3,1: EPERM
setreuid 2,1: uid 2 euid 1 gid 30 egid 30 resuid 2,1,1 resgid 30,30,30 groups 7,8
setfsuid 2: old 1
setfsuid -1: old 2
setuid 3: EPERM
setuid 2: uid 2 euid 2 gid 30 egid 30 resuid 2,2,1 resgid 30,30,30 groups 7,8"
check_eq "the same sequence through libc agrees (getuid after syscall setuid)" \
	"$(in_fe '"$0" creds >/dev/null; id -u')" 0
check_eq "syscall getpid passes straight through" "$(in_fe '"$0" getpid')" ok
done_testing
