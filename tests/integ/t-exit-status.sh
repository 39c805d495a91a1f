#!/bin/bash
# The launcher's exit status: CMD's own; 127 not found; 126 not
# executable; 128+N when CMD dies of signal N; 125 for a bad option.  It
# also runs CMD given without "--", and $SHELL without CMD.
. "$(dirname "$0")/lib.sh"

st() { "$@" >/dev/null 2>&1; echo $?; }
check_eq "true exits 0" "$(st fe true)" 0
check_eq "exit 3 is passed on" "$(st fe sh -c 'exit 3')" 3
check_eq "natively sh -c 'exit 3' is 3 too" "$(st as_user sh -c 'exit 3')" 3
check_eq "a missing command exits 127" "$(st fe ./no-such-command)" 127
check_eq "a missing command in PATH exits 127" "$(st fe no-such-command-fakeenv)" 127
check_match "a missing command gets a message naming it" \
	"$(fe no-such-command-fakeenv 2>&1 >/dev/null)" "no-such-command-fakeenv"
as_user sh -c 'echo "#!/bin/sh" >noexec; chmod 644 noexec'
check_eq "a non-executable command exits 126" "$(st fe ./noexec)" 126
check_eq "a directory as command exits 126" "$(st fe /)" 126
check_eq "killed by SIGKILL exits 137" "$(st fe sh -c 'kill -9 $$')" 137
check_eq "killed by SIGTERM exits 143" "$(st fe sh -c 'kill -TERM $$')" 143
check_eq "an unknown option exits 125" "$(st fe_opt --no-such-option -- true)" 125
check_match "an unknown option prints a usage message on stderr" \
	"$(fe_opt --no-such-option -- true 2>&1 >/dev/null)" "[Uu]sage|--help"
check_eq "-h exits 0" "$(st fe_opt -h)" 0
check_eq "--help exits 0" "$(st fe_opt --help)" 0
check_match "--version prints a version" "$(fe_opt --version 2>&1)" "[0-9]+\.[0-9]+"
check_eq "CMD without -- (as dpkg-buildpackage -rfakeenv calls it)" \
	"$(fe_opt id -u 2>&1)" 0
check_eq "CMD with options, without --" "$(fe_opt sh -c 'id -u; exit 4' 2>&1; echo $?)" "0
4"
check_eq "no CMD runs \$SHELL" \
	"$(echo 'id -u; exit 5' | SHELL=/bin/sh as_user "$FE" 2>&1; echo $?)" "0
5"
done_testing
