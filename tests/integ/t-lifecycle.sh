#!/bin/bash
# No process is left behind: after CMD exits, after CMD is killed, after
# the launcher is killed with SIGTERM or SIGKILL while CMD runs, and after
# a background child that still talks to the daemon once CMD has exited.
# Nested sessions join the outer daemon.  Waits are bounded polls.
. "$(dirname "$0")/lib.sh"

gone() { wait_until 10 no_procs "$DAEMON" fakeenv sleep; }
left() { echo "left: $(for n in "$DAEMON" fakeenv sleep; do session_pids $n | sed "s/^/$n:/"; done | tr '\n' ' ')"; }

fe true
if gone; then ok "CMD exits: no daemon left"; else fail "CMD exits: no daemon left" "$(left)"; fi

fe sh -c 'kill -9 $$'
if gone; then ok "CMD killed: no daemon left"; else fail "CMD killed: no daemon left" "$(left)"; fi

has() { [ -n "$(session_pids "$1")" ]; }

# The launcher killed while CMD runs sleep 300.  ($! is a subshell running
# setpriv: the launcher is found by name.)
for sig in TERM KILL; do
	as_user "$FE" -- sleep 300 &
	pid=$!
	if wait_until 10 has sleep; then
		lpid=$(session_pids fakeenv)
		if [ "$(echo $lpid | wc -w)" != 1 ]; then
			fail "launcher killed by SIG$sig" "not exactly one launcher running: '$lpid'"
			kill -9 $(session_pids sleep) $lpid 2>/dev/null
			wait $pid 2>/dev/null
			continue
		fi
		kill -s $sig $lpid
		wait $pid 2>/dev/null
		if gone; then
			ok "launcher killed by SIG$sig: no sleep and no daemon left"
		else
			fail "launcher killed by SIG$sig: no sleep and no daemon left" "$(left)"
		fi
	else
		fail "launcher killed by SIG$sig" "sleep 300 never started in the session"
		kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
	fi
done

# CMD killed from outside while it sleeps.
as_user "$FE" -- sleep 300 &
pid=$!
if wait_until 10 has sleep; then
	kill -9 $(session_pids sleep)
	wait $pid; rc=$?
	check_eq "CMD killed from outside: the launcher exits 137" "$rc" 137
	if gone; then ok "CMD killed from outside: no daemon left"; else fail "CMD killed from outside: no daemon left" "$(left)"; fi
else
	fail "CMD killed from outside" "sleep 300 never started in the session"
	kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
fi

# A background child still using the daemon for 2 s after CMD has exited.
as_user touch bgf
fe sh -c '"$H"/own loop 2 9 9 bgf >bg.out 2>&1 </dev/null & sleep 0.3; exit 0' >/dev/null 2>&1
rc=$?
check_eq "CMD leaving a background child exits 0" "$rc" 0
wait_until 5 has own
wait_until 15 no_procs own
check_match "the background child's chown/stat kept working after CMD exited" \
	"$(cat bg.out 2>&1)" "^ok [1-9][0-9]*$"
if gone; then ok "after the background child: no daemon left"; else fail "after the background child: no daemon left" "$(left)"; fi

# Nested: the inner launcher joins the outer session.
rm -f inner.ready
fe sh -c '"$FE" -- sh -c "id -u >inner.out; touch inner.ready; sleep 2"' >/dev/null 2>&1 &
pid=$!
if wait_until 10 test -e inner.ready; then
	check_eq "nested: one daemon during the inner command" "$(session_pids "$DAEMON" | wc -l)" 1
else
	fail "nested: one daemon during the inner command" "the inner command never ran"
fi
wait $pid
check_eq "nested: the outer launcher exits 0" "$?" 0
check_eq "nested fakeenv -- fakeenv -- id -u prints 0" "$(cat inner.out 2>&1)" 0
check_eq "nested: fakeenv -- fakeenv -- id -u, directly" "$(fe "$FE" -- id -u 2>&1)" 0
check_eq "nested: the inner session sees the outer records" \
	"$(fe sh -c 'touch nf; chown 3:4 nf; "$FE" -- stat -c %u:%g nf' 2>&1)" "3:4"
check_eq "nested: the outer session sees the inner's records" \
	"$(fe sh -c 'touch nf2; "$FE" -- chown 5:6 nf2; stat -c %u:%g nf2' 2>&1)" "5:6"
if gone; then ok "nested: no daemon left"; else fail "nested: no daemon left" "$(left)"; fi
done_testing
