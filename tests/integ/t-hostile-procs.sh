#!/bin/bash
# Children keep faking however they are made: fork (t-processes),
# vfork+exec, posix_spawn with a tiny envp, execve with an empty envp,
# system(), popen(), and a raw clone() with no atfork handler.
. "$(dirname "$0")/lib.sh"

X=$H/hostile
must "make f" as_user touch f

check_eq "vfork+exec child: chown and stat stay faked" \
	"$(as_user mkdir -p v; fe "$H"/proc vfork-exec v "$H"/st 2>&1)" ok
check_eq "system(): the shell's chown is recorded and the parent sees it" \
	"$(fe sh -c '"$0" system "chown 3:4 f && stat -c %u:%g f" && stat -c %u:%g f' "$X" 2>&1)" "3:4
3:4"
check_eq "popen(): the child's chown is recorded, its stat read back" \
	"$(fe sh -c '"$0" popen "chown 5:6 f; id -u; stat -c %u:%g f" && stat -c %u:%g f' "$X" 2>&1)" "0
5:6
5:6"
check_eq "system() returns the command's status" \
	"$(fe "$X" system "exit 7" >/dev/null 2>&1; echo $?)" 7
check_eq "posix_spawn with a tiny envp (A=1): the child's chown is recorded" \
	"$(fe sh -c '"$0" -e A=1 posix_spawn /bin/chown 7:8 f && stat -c %u:%g f' "$H"/spawn 2>&1)" "7:8"
check_eq "execve with an empty envp: the child's chown is recorded" \
	"$(fe sh -c '"$0" execve /bin/chown 9:10 f; stat -c %u:%g f' "$H"/spawn 2>&1)" "9:10"
check_eq "vfork then execve with an empty envp: still faked" \
	"$(fe sh -c '"$0" -v execve /usr/bin/id -u' "$H"/spawn 2>&1)" 0
check_eq "a child of the raw clone system call (no atfork handler): faked" \
	"$(as_user mkdir -p rc; fe "$X" rawclone rc 2>&1)" ok
check_ne "natively system() chown fails (the test can fail)" \
	"$(as_user "$X" system "chown 3:4 f" 2>&1; echo $?)" 0
done_testing
