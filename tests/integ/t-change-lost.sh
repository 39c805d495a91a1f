#!/bin/bash
# A one-way change that the daemon cannot store (out of memory) is never
# silently lost: the launcher says how many, and a run that would have
# succeeded exits 125.  The daemon's address space is capped from inside
# the session (prlimit on the session's own daemon, a process of the same
# user), just above what it uses, then 5000 new records are asked for.
. "$(dirname "$0")/lib.sh"

command -v prlimit >/dev/null || { skip "lost changes are said" "prlimit (util-linux) is not installed"; done_testing; }
if [ "$FAKEENV_VALGRIND" = 1 ] || [ "$FAKEENV_SAN" = 1 ]; then
	# Under valgrind or ASan the daemon's address space is not its own.
	skip "lost changes are said" "the address-space cap means nothing under valgrind or ASan"
	done_testing
fi
cat >lost.sh <<'EOS'
d=$(dirname "$FAKEENV_SOCKET")
pid=$(pgrep -f "fakeenvd .*--dir $d( |$)" | head -n1)
mkdir t && for i in $(seq 1 5000); do : >t/f$i; done
vm=$(awk '/^VmSize/ { print $2 }' "/proc/$pid/status")
prlimit --as=$(( (vm + 16) * 1024 )) --pid "$pid" || exit 3
chown -R 5:5 t 2>/dev/null
"$FE" status >status.out
exit 0
EOS
out=$(fe sh lost.sh 2>&1); rc=$?
check_eq "a run whose changes were lost exits 125" "$rc" 125
check_match "and says how many" "$out" 'fakeenv: [0-9]+ recorded changes? could not be kept by the daemon \(out of memory\)'
check_match "fakeenv status counts them" "$(grep '^lost changes:' status.out)" '^lost changes: +[1-9][0-9]* '

# mknod is one-way too: a device node the daemon could not record is
# counted as lost the same way (the real file stays a plain one).
sed -e 's|^mkdir t && .*|mkdir t|' \
    -e 's|^chown -R 5:5 t .*|i=0; while [ $i -lt 3000 ]; do mknod t/n$i c 1 $((i % 256)) 2>/dev/null; i=$((i+1)); done|' \
    lost.sh >lostnod.sh
out=$(fe sh lostnod.sh 2>&1); rc=$?
check_eq "mknods lost: the run exits 125" "$rc" 125
check_match "and says how many" "$out" 'fakeenv: [0-9]+ recorded changes? could not be kept by the daemon \(out of memory\)'

out=$(fe sh -c 'mkdir u && : >u/f && chown 5:5 u/f' 2>&1); rc=$?
check_eq "a run with nothing lost exits 0 and says nothing" "$rc:$out" "0:"
done_testing
