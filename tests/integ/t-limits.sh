#!/bin/bash
# The limits of the machine (issue 12): 1,100 live processes each holding
# a connection, with the usual soft fd limit of 1,024 and with a hard
# limit of 100, all get their answers and every chown is recorded (a
# `timeout` around each: a hang fails, nothing is timed); an environment
# whose FAKEENV_* or LD_PRELOAD entries pass 8 KiB keeps its session and
# its whole LD_PRELOAD; execve from a thread with a 128 KiB stack and
# 20,000 environment entries works as it does natively; what vfork
# children's execs were handed is given back.
. "$(dirname "$0")/lib.sh"

B=$H/big
N=1100

# forkchown_with ULIMIT-ARGS: N children chown their files, hold their
# connections until all have, then chown again; the session's view of
# every file after.  Prints the helper's line, the files whose owner is
# wrong, then what was said on stderr.
forkchown_with() {
	rm -rf fc && as_user mkdir fc || return
	as_user sh -c 'ulimit '"$1"' || exit 99
		exec timeout 300 "$0" -- sh -c '\''"$0" forkchown '$N' fc &&
		stat -c "%n %u %g" fc/f.* | awk '\''\'\'''\''{ split($1, p, "."); k = p[2];
			if ($2 != k + 3 || $3 != k + 4) print "wrong: " $0 }'\''\'\'''\'''\'' "$1"' \
		"$FE" "$B" >out 2>err
	echo "status $?"
	cat out
	sed 's/^/stderr: /' err
}

if [ "$FAKEENV_VALGRIND" = 1 ]; then
	# Valgrind keeps the top of the fd range for itself and closes any fd
	# a syscall returns there: an accepted connection, with its first
	# message unread, which its process sees reset.  Not the daemon's.
	skip "$N live processes at the fd limit" "valgrind drops the connections it accepts above its own lower limit"
else
	out=$(forkchown_with "-Sn 1024")
	check_eq "$N live processes, soft fd limit 1024: all answer, every chown recorded" \
		"$(grep -v '^stderr: ' <<<"$out")" "status 0
ok $N"
	check_eq "... and nothing is said" "$(grep '^stderr: ' <<<"$out")" ""

	out=$(forkchown_with "-n 100")
	check_eq "$N live processes, hard fd limit 100: all answer, every chown recorded" \
		"$(grep -v '^stderr: ' <<<"$out")" "status 0
ok $N"
	check_match "... and the daemon says it closes idle connections" \
		"$(grep '^stderr: ' <<<"$out" | head -1)" \
		"daemon: [0-9]+ clients at once, 50 at most with 100 open files \(RLIMIT_NOFILE\): closing the connections of the least recently active ones"
	check_eq "... once" "$(grep -c 'clients at once' <<<"$out")" 1
	check_eq "... and no process says it cannot reach the daemon" \
		"$(grep -c 'cannot reach' <<<"$out")" 0
fi

# The environment.  Natively the helper shows the real ids.
check_eq "natively big ids shows the real uid" \
	"$(as_user "$B" ids | cut -d' ' -f1)" "$TUID"
for v in FAKEENV_PAD LD_PRELOAD; do
	for size in 8100 8140 20000; do
		if [ "$v" = LD_PRELOAD ] && [ -n "$SAN_PRE" ]; then
			skip "a child whose environment starts with $v of $size bytes stays in the session" \
				"the sanitizer runtime must come first in LD_PRELOAD"
			continue
		fi
		check_eq "a child whose environment starts with $v of $size bytes stays in the session" \
			"$(fe "$B" envfirst $v $size "$B" ids 2>&1 | cut -d' ' -f1-2)" "0 0"
	done
done
LIB=$(readlink -f "$(dirname "$FE")/libfakeenv.so")
pad=$(head -c 14000 /dev/zero | tr '\0' ':')
out=$(as_user env LD_PRELOAD="$pad${SAN_PRE:+:$SAN_PRE}" "$FE" -- sh -c \
	'id -u; env -i sh -c "echo \${#LD_PRELOAD}"' 2>&1)
check_eq "a session started with a 14 KB LD_PRELOAD fakes" "$(sed -n 1p <<<"$out")" 0
want=$((14000 + ${SAN_PRE:+1 + ${#SAN_PRE}} + 1 + ${#LIB}))
check_eq "... and env -i gives its children the whole list back" \
	"$(sed -n 2p <<<"$out")" "$want"

# Small stacks.
for m in keep clear; do
	out=$(as_user "$B" smallstack 20000 $m "$B" ids 2>&1)
	check_match "natively execve from a 128 KiB thread with 20,000 more entries ($m)" \
		"$out" "^$TUID $TUID 200[0-9][0-9]\$"
	out=$(fe "$B" smallstack 20000 $m "$B" ids 2>&1; echo "status $?")
	check_match "in a session too, and the child fakes ($m)" "$out" \
		"^0 0 200[0-9][0-9]
status 0\$"
done
# execl builds its argv on the stack only up to 32 entries (STACK_LIST).
check_eq "execl with 300 arguments passes them all, in the session" \
	"$(fe "$B" execl "$B" 2>&1)" "0 0 302"
# Such lists (and a repaired environment past 2 KiB) are mapped; a vfork
# child's exec that succeeds leaves its mapping to the parent to unmap.
check_eq "200 vfork children exec with mapped lists: the parent keeps none" \
	"$(fe "$B" vforkleak 200 /bin/true 2>&1)" ok
done_testing
