#!/bin/bash
# What a request can make the daemon store is bounded: RENAMEDIRs that
# move 1,000 records under a 4 KiB longer prefix, again and again, would
# grow every path by 4 KiB a time (25 of them: 188 MB of daemon, 100 MB
# of journal).  A path of FE_PATH_MAX (4096) bytes or more is not kept:
# the record stays, without its path hint, the log says so once, and the
# daemon's memory and the journal stay small.
. "$(dirname "$0")/lib.sh"

S=$W/st
fe_opt --state "$S" --linger 1 -- sh -c '
	"$H/peer" "$FAKEENV_SOCKET" renamedir 1000 25 4000 >peer.out 2>&1
	"$FE" checkpoint >ckpt.out 2>&1
	"$FE" status >status.out 2>&1
	pid=$(sed -n "s/^daemon: *pid \([0-9]*\),.*/\1/p" status.out)
	awk "/^VmHWM:/ { print \$2 }" /proc/$pid/status >rss.out' 2>"$W/err"
check_match "the daemon answers to the end" "$(cat peer.out)" '^records 1000 '
check_match "the checkpoint works" "$(cat ckpt.out)" '^checkpoint: 1000 records'
rss=$(cat rss.out)
echo "# daemon peak VmRSS (VmHWM) ${rss:-?} kB, journal $(stat -c %s "$S/journal" 2>/dev/null) bytes"
if [ "$FAKEENV_VALGRIND" = 1 ]; then
	skip "daemon peak VmRSS (VmHWM) under 32 MB" "valgrind's own memory counts"
elif [ -n "$SAN_PRE" ]; then
	skip "daemon peak VmRSS (VmHWM) under 32 MB" "AddressSanitizer's shadow memory counts"
else
	check_cmd "daemon peak VmRSS (VmHWM) under 32 MB" test "${rss:-999999}" -lt 32768
fi
# Each record: 64 bytes, and its path of less than 4096 bytes at most.
check_cmd "journal under 1000 * (64 + 4096) bytes" \
	test "$(stat -c %s "$S/journal" 2>/dev/null || echo 999999999)" -lt $((1000 * (64 + 4096)))
wait_until 10 test -z "$(session_pids "$DAEMON")"
check_match "the log says the paths were dropped" "$(cat "$S/log" 2>&1)" \
	'path hints of 4096 bytes or more not kept'
check_eq "... once" "$(grep -c 'path hints of' "$S/log" 2>&1)" 1
check_match "the records are kept" "$(as_user "$FE" fsck "$S/journal" 2>&1)" '1000 records'
done_testing
