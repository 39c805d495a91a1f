#!/bin/bash
# The fake credentials: all 0 in a new session; the set*id family follows
# the kernel's rules applied to the fake ids; the ids survive exec.
. "$(dirname "$0")/lib.sh"

C=$H/creds
zero="getuid=0 geteuid=0 getgid=0 getegid=0 resuid=0,0,0 resgid=0,0,0 groups=0"
check_eq "every get*id reports root, groups [0]" "$(fe "$C" show 2>&1)" "$zero"
check_ne "natively the same helper reports the real ids" "$(as_user "$C" show)" "$zero"
check_eq "id -u is 0" "$(fe id -u 2>&1)" 0
check_eq "id -g is 0" "$(fe id -g 2>&1)" 0
check_eq "id -G is 0" "$(fe id -G 2>&1)" 0
check_eq "whoami is root" "$(fe whoami 2>&1)" root

check_eq "setuid(1000) then setuid(0) fails with EPERM" \
	"$(fe "$C" setuid 1000 show setuid 0 show 2>&1)" \
"setuid 1000: ok
getuid=1000 geteuid=1000 getgid=0 getegid=0 resuid=1000,1000,1000 resgid=0,0,0 groups=0
setuid 0: ERR EPERM
getuid=1000 geteuid=1000 getgid=0 getegid=0 resuid=1000,1000,1000 resgid=0,0,0 groups=0"

check_eq "the dropped uid survives exec, and root stays lost" \
	"$(fe "$C" setuid 1000 exec show setuid 0 2>&1)" \
"setuid 1000: ok
getuid=1000 geteuid=1000 getgid=0 getegid=0 resuid=1000,1000,1000 resgid=0,0,0 groups=0
setuid 0: ERR EPERM"

check_eq "the ids survive exec into a shell and id" \
	"$(fe "$C" setgid 44 setuid 33 run sh -c 'id -u; id -g' 2>&1)" \
"setgid 44: ok
setuid 33: ok
33
44"
check_eq "seteuid(1000) keeps the saved root: seteuid(0) works" \
	"$(fe "$C" seteuid 1000 show seteuid 0 show 2>&1)" \
"seteuid 1000: ok
getuid=0 geteuid=1000 getgid=0 getegid=0 resuid=0,1000,0 resgid=0,0,0 groups=0
seteuid 0: ok
$zero"
check_eq "setresuid(1,2,3) then setresuid(0,0,0) fails" \
	"$(fe "$C" setresuid 1 2 3 show setresuid 0 0 0 setresuid 3 1 2 show 2>&1)" \
"setresuid 1 2 3: ok
getuid=1 geteuid=2 getgid=0 getegid=0 resuid=1,2,3 resgid=0,0,0 groups=0
setresuid 0 0 0: ERR EPERM
setresuid 3 1 2: ok
getuid=3 geteuid=1 getgid=0 getegid=0 resuid=3,1,2 resgid=0,0,0 groups=0"
check_eq "setreuid(5,6)" "$(fe "$C" setreuid 5 6 show 2>&1)" \
"setreuid 5 6: ok
getuid=5 geteuid=6 getgid=0 getegid=0 resuid=5,6,6 resgid=0,0,0 groups=0"
check_eq "setgid, setegid, setregid, setresgid as root" \
	"$(fe "$C" setgid 7 setegid 8 setregid 9 10 setresgid 11 12 13 show 2>&1)" \
"setgid 7: ok
setegid 8: ok
setregid 9 10: ok
setresgid 11 12 13: ok
getuid=0 geteuid=0 getgid=11 getegid=12 resuid=0,0,0 resgid=11,12,13 groups=0"
check_eq "a non-root uid cannot setgid to a foreign gid" \
	"$(fe "$C" setuid 1000 setgid 5 2>&1)" \
"setuid 1000: ok
setgid 5: ERR EPERM"
check_eq "setgroups as root; refused after dropping root" \
	"$(fe "$C" setgroups 1,2,3 show setgroups - show setuid 9 setgroups 4 2>&1)" \
"setgroups 1,2,3: ok
getuid=0 geteuid=0 getgid=0 getegid=0 resuid=0,0,0 resgid=0,0,0 groups=1,2,3
setgroups -: ok
getuid=0 geteuid=0 getgid=0 getegid=0 resuid=0,0,0 resgid=0,0,0 groups=-
setuid 9: ok
setgroups 4: ERR EPERM"
check_eq "setgroups survive exec" "$(fe "$C" setgroups 4,5 exec show 2>&1)" \
"setgroups 4,5: ok
getuid=0 geteuid=0 getgid=0 getegid=0 resuid=0,0,0 resgid=0,0,0 groups=4,5"
check_eq "setfsuid/setfsgid return the previous fake id" \
	"$(fe "$C" setfsuid 1234 setfsuid 0 setfsgid 55 setfsgid 0 2>&1)" \
"setfsuid 1234: 0
setfsuid 0: 1234
setfsgid 55: 0
setfsgid 0: 55"
check_eq "seteuid moves the fake fsuid" \
	"$(fe "$C" seteuid 77 setfsuid 77 2>&1)" \
"seteuid 77: ok
setfsuid 77: 77"
done_testing
