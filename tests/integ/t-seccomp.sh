#!/bin/bash
# Programs under a seccomp filter: file(1) (Debian's sandboxes itself
# with libseccomp when built so), and a helper whose filter allows little
# more than read, write and fstat and kills on anything else.  The shim
# connects before the filter goes in and its round trip is writev+read.
. "$(dirname "$0")/lib.sh"

X=$H/hostile
command -v file >/dev/null || bail "file(1) is not installed (.ci/run installs it)"
check_match "fakeenv -- file /bin/ls works" "$(fe file /bin/ls 2>&1)" "^/bin/ls: .*ELF"
must "make sf" as_user touch sf
check_eq "file reads a faked file's type in a session" \
	"$(fe sh -c 'chown 3:4 sf; file -b sf' 2>&1)" "empty"
for how in seccomp-prctl seccomp-syscall; do
	out=$(fe sh -c 'chown 3:4 sf; chmod 4755 sf; "$0" '$how' sf; echo "rc $?"' "$X" 2>&1)
	check_eq "$how: stat and lstat faked under the filter, not killed" "$out" "3 4 104755
3 4 104755
rc 0"
done
check_eq "natively the filter lets stat through (the helper itself works)" \
	"$(as_user "$X" seccomp-prctl sf 2>&1 | head -1 | cut -d' ' -f1)" "$TUID"
done_testing
