#!/bin/bash
# A pid handed out again under one filter: the supervisor keeps fake ids
# per process, and a new process must start with its parent's, not with
# those of a dead process that had its pid.  The kernel reuses a pid only
# after going round pid_max; as root the test makes it at once, through
# /proc/sys/kernel/ns_last_pid, after the dead process has been gone a
# while (as any pid would have been, after a round of pid_max).
. "$(dirname "$0")/lib.sh"

BB=/bin/busybox
S=$BUILD/tests/static
if [ ! -x "$BB" ] || [ ! -x "$S/creds" ]; then
	skip "a pid reused under the filter" "busybox-static or the static helpers are missing"
	done_testing
fi
if [ "$(id -u)" != 0 ] || [ ! -w /proc/sys/kernel/ns_last_pid ]; then
	skip "a pid reused under the filter" "needs root to set /proc/sys/kernel/ns_last_pid"
	done_testing
fi

must "a fifo" as_user mkfifo go
# Held open both ways, so that writing it never blocks: between setting
# the next pid and the shell's fork the test forks nothing either.
exec 3<>go

# busybox sh is static: it and every process it starts are under the
# launcher's one filter.  The first creds takes fake uid 7 and exits;
# once the test has set the next pid to its own, the second one starts
# and shows its ids, which are the shell's: 0.  The shell waits in a
# read of the fifo, which forks nothing that could take the pid.
run_once() {
	fe "$BB" sh -c "
		$S/creds setresuid 7 7 7 >/dev/null & echo \$! >pid1; wait
		echo >ready; read x <go
		$S/creds show >show & echo \$! >pid2; wait" &
	local sess=$!
	wait_until 20 test -s ready || { kill $sess; return 1; }
	sleep 0.5
	echo $(($(cat pid1) - 1)) >/proc/sys/kernel/ns_last_pid
	echo >&3
	wait $sess
}

got=
for try in 1 2 3 4 5; do
	rm -f pid1 pid2 show ready
	run_once && [ -s pid2 ] && [ -s show ] ||
		bail "the session did not run its two processes: $(cat pid1 pid2 show 2>&1)"
	if [ "$(cat pid1)" = "$(cat pid2)" ]; then
		got=$(grep -o 'getuid=[0-9]* geteuid=[0-9]*' show)
		break
	fi
done
if [ -n "$got" ]; then
	check_eq "a new process with a dead one's pid has its parent's ids" \
		"$got" "getuid=0 geteuid=0"
else
	skip "a pid reused under the filter" "another process took the pid in each of five runs"
fi

done_testing
