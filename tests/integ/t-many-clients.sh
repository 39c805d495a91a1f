#!/bin/bash
# 64 client processes at once in one session, each doing 10,000 mixed
# chown/chmod/stat operations on its own files (checked as it goes and at
# its end) and on four shared files (uid from even processes, gid from odd
# ones, the same mode from all): no update is lost, and the daemon's
# memory stays bounded (not checked in the valgrind and sanitizer
# flavours, whose RSS is theirs).  Under make valgrind each does 1,000.
. "$(dirname "$0")/lib.sh"

X=$H/hostile
OPS=10000
[ "$FAKEENV_VALGRIND" = 1 ] && OPS=1000
must "make m" as_user mkdir m
must "make the shared files" as_user touch m/shared.0 m/shared.1 m/shared.2 m/shared.3

rss() { awk '/^VmRSS:/ { print $2 }' /proc/"$1"/status 2>/dev/null; }

fe sh -c 'touch ready; while [ ! -e go ]; do sleep 0.05; done
	for k in $(seq 0 63); do "$0" mixed '$OPS' m $k >m/out.$k 2>&1 & done
	wait
	stat -c "%n %u %g %a" m/shared.0 m/shared.1 m/shared.2 m/shared.3 >final
	touch finished; while [ ! -e leave ]; do sleep 0.05; done' "$X" >/dev/null 2>&1 &
pid=$!
wait_until 20 test -e ready || bail "the session never started"
d=$(session_pids "$DAEMON")
[ "$(echo $d | wc -w)" = 1 ] || bail "not exactly one daemon: '$d'"
before=$(rss "$d")
as_user touch go
wait_until 300 test -e finished || fail "64 clients" "not finished after 300 s"
after=$(rss "$d")
as_user touch leave
wait $pid

check_eq "all 64 clients saw every own result exact" \
	"$(cat m/out.* 2>&1 | sort | uniq -c | sed 's/^ *//')" "64 ok"
check_eq "no update to a shared file is lost" "$(cat final 2>&1)" "m/shared.0 7000 8000 640
m/shared.1 7001 8001 640
m/shared.2 7002 8002 640
m/shared.3 7003 8003 640"
if [ "$FAKEENV_VALGRIND" = 1 ]; then
	echo "# skipped under valgrind: the daemon's RSS is valgrind's"
elif [ "$FAKEENV_SAN" = 1 ]; then
	echo "# skipped in the sanitizer flavour: ASan's shadow and quarantine are most of the RSS"
else
	if [ -n "$before" ] && [ -n "$after" ] && [ "$after" -lt 65536 ]; then
		ok "the daemon's RSS stays under 64 MiB (${before} kB before, ${after} kB after)"
	else
		fail "the daemon's RSS stays under 64 MiB" "before '${before}' kB, after '${after}' kB"
	fi
fi
done_testing
