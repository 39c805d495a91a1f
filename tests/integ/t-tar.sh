#!/bin/bash
# The issue's example: build a tree with root owners, a setuid binary, a
# device and a foreign-owned dir, archive it with tar inside the session,
# and list the archive inside and outside: the archive holds the faked
# metadata.  Also cpio, cp -a and install -o -g -m.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	umask 022
	mkdir -p r/dev r/bin; touch r/bin/su; chown 0:0 -R r; chmod 4755 r/bin/su
	mknod r/dev/console c 5 1; chown 1000:100 r/bin; tar cf r.tar r
' 2>&1)
check_eq "the issue example runs in the session" "$?:$out" "0:"

outside=$(tar tvf r.tar 2>&1 | awk '{ print $1, $2, $NF }' | sort)
check_match "outside: su is -rwsr-xr-x root/root" "$outside" "-rwsr-xr-x root/root r/bin/su"
check_match "outside: console is crw------- root/root" "$outside" "crw-r--r-- root/root r/dev/console|crw------- root/root r/dev/console"
check_match "outside: r is root/root" "$outside" "drwxr-xr-x root/root r/"
check_match "outside: console is device 5,1" "$(tar tvf r.tar r/dev/console)" " 5,1 "
check_eq "outside, numeric: every entry's owner" \
	"$(tar tvf r.tar --numeric-owner | awk '{ print $2, $NF }' | sort)" \
"0/0 r/
0/0 r/bin/su
0/0 r/dev/
0/0 r/dev/console
1000/100 r/bin/"
inside=$(fe tar tvf r.tar 2>&1 | awk '{ print $1, $2, $NF }' | sort)
check_eq "tar tvf inside the session lists the same" "$inside" "$outside"

# Extraction inside the session records what the archive says.
out=$(fe sh -c 'mkdir x && cd x && tar xpf ../r.tar && stat -c "%A %u:%g %t,%T %n" r/bin/su r/dev/console r/bin' 2>&1)
check_eq "tar x inside the session restores owners, setuid and the device" "$out" \
"-rwsr-xr-x 0:0 0,0 r/bin/su
crw-r--r-- 0:0 5,1 r/dev/console
drwxr-xr-x 1000:100 0,0 r/bin"
check_eq "outside, the extracted su is not setuid" "$(stat -c %a x/r/bin/su)" 755

# A natively made archive of the same tree shows the real owner.
check_match "natively, tar shows the real owner (the test can fail)" \
	"$(as_user tar cf - r | tar tvf - --numeric-owner r/bin/su)" "$TUID/$TGID"

# The session's records die with it: each of the following rebuilds the
# tree in its own session.
mktree='umask 022; rm -rf r; mkdir -p r/dev r/bin; touch r/bin/su; chmod 4755 r/bin/su; mknod r/dev/console c 5 1; chown 1000:100 r/bin'

out=$(fe sh -c "$mktree"'; find r | cpio -o -H newc 2>/dev/null | cpio -itv 2>/dev/null' 2>&1)
check_match "cpio: su is -rwsr-xr-x root" "$out" "-rwsr-xr-x +1 root +root .* r/bin/su"
check_match "cpio: console is a char device 5, 1" "$out" "crw-r--r-- +1 root +root +5, +1 .* r/dev/console"
check_match "cpio: bin is owned 1000 100" "$out" "drwxr-xr-x +2 [^ ]+ +[^ ]+ .* r/bin"

# cp -a keeps the faked owners and modes; install -o -g -m sets them.
out=$(fe sh -c "$mktree"'; cp -a r c && stat -c "%A %u:%g %t,%T %n" c/bin/su c/dev/console c/bin' 2>&1)
check_eq "cp -a preserves faked owners, setuid and devices" "$out" \
"-rwsr-xr-x 0:0 0,0 c/bin/su
crw-r--r-- 0:0 5,1 c/dev/console
drwxr-xr-x 1000:100 0,0 c/bin"
check_eq "outside, the copy's owner is the test user and not setuid" \
	"$(stat -c '%u %a %F' c/bin/su)" "$TUID 755 regular empty file"
out=$(fe sh -c 'echo x >src && install -o 12 -g 34 -m 4755 src inst && stat -c "%A %u:%g" inst && install -d -o 5 -g 6 -m 2750 idir && stat -c "%A %u:%g" idir' 2>&1)
check_eq "install -o 12 -g 34 -m 4755 / install -d -o 5 -g 6 -m 2750" "$out" \
"-rwsr-xr-x 12:34
drwxr-s--- 5:6"
check_eq "outside, the installed file is not setuid" "$(stat -c '%u %a' inst)" "$TUID 755"
done_testing
