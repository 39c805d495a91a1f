#!/bin/bash
# stat reads the shared table in place (fakeenv/map.h): what one process
# records, the next stat of any other process shows, also after the table
# has grown under a process that mapped it small; a stale record is still
# caught; FAKEENV_NO_MAP=1 (every stat a round trip) gives the same
# answers; and a stat of a file without a record sends no message.
. "$(dirname "$0")/lib.sh"

must "make 3,000 files" as_user sh -c '
	mkdir -p big && cd big && for d in 0 1 2; do
		mkdir d$d && (cd d$d && seq -f "f%04g" 1 1000 | xargs touch) || exit 1
	done'
check_eq "natively statmany shows the real owner" \
	"$(as_user "$H"/statmany 1 big/d0/f0001)" "1 $TUID:$TGID"

for mode in map no-map; do
	if [ $mode = map ]; then nomap=(); else nomap=(env FAKEENV_NO_MAP=1); fi
	as_user rm -f fifo && as_user mkfifo fifo
	out=$(as_user "${nomap[@]}" "$FE" -- sh -c '
		touch one && chown 3:4 one && echo "next $(stat -c %u:%g one)"
		# A long-lived reader maps the table small; meanwhile other
		# processes record 3,000 files (the table grows several times)
		# and drop one record.
		rm -f reader.out
		$H/statmany wait one big/d*/f* <>fifo >reader.out &
		until grep -qx -- -- reader.out 2>/dev/null; do sleep 0.05; done
		find big -type f | xargs chown 7:8
		chown 0:0 one
		chmod 4711 big/d2/f1000
		echo go >fifo
		wait
		cat reader.out
		echo "fresh $($H/statmany 1 one big/d*/f* | tr "\n" " ")"
	' 2>&1)
	check_eq "$mode: a chown is seen by the next stat of another process" \
		"$(pick next <<<"$out")" "3:4"
	check_eq "$mode: a long-lived reader first sees the table as it was" \
		"$(sed -n '1,/^--$/p' <<<"$out" | sed -n '/^[0-9]* [0-9]*:[0-9]*$/p' | tr '\n' ' ')" \
		"1 3:4 3000 0:0 "
	check_eq "$mode: then every record made after the table grew, and the chown back" \
		"$(sed -n '/^--$/,$p' <<<"$out" | sed -n '/^[0-9]* [0-9]*:[0-9]*$/p' | tr '\n' ' ')" \
		"1 0:0 3000 7:8 "
	check_eq "$mode: a new process sees the same" "$(pick fresh <<<"$out")" \
		"1 0:0 3000 7:8 "
done

# Concurrent writers and readers while the table grows: 4 processes
# chown 1,000 files each to k:k, 4 others stat all 4,000 files in a loop;
# a reader only ever sees uid == gid, and afterwards everything is there.
out=$(fe sh -c '
	for k in 1 2 3 4; do mkdir c$k && (cd c$k && seq -f "f%04g" 1 1000 | xargs touch); done
	for r in 1 2 3 4; do $H/statmany same 5 c*/f* >r$r.out 2>&1 & done
	for k in 1 2 3 4; do (find c$k -type f | xargs chown $k:$k) & done
	wait
	cat r1.out r2.out r3.out r4.out | sort | uniq -c | sed "s/^ */readers /"
	echo "after $($H/statmany 1 c*/f* | tr "\n" " ")"
' 2>&1)
check_eq "concurrent growth: readers never saw a torn or mixed record" \
	"$(pick readers <<<"$out")" "4 ok"
check_eq "concurrent growth: every record is there afterwards" \
	"$(pick after <<<"$out")" "1000 1:1 1000 2:2 1000 3:3 1000 4:4 "

# A stale record: a faked device whose inode a symlink takes, removed and
# made outside the session's sight while it runs.
as_user rm -f fifo && as_user mkfifo fifo
(
	as_user "$FE" -- sh -c '
		mknod v c 1 2 && chown 9:9 v && stat -c %i v >v.ino
		read x <fifo
		echo "first $($H/st lstat $(cat reused))"
		echo "second $($H/st lstat $(cat reused))"
		echo "nomap $(env FAKEENV_NO_MAP=1 $H/st lstat $(cat reused))"
	' >stale.out 2>&1
) &
wait_until 10 test -s v.ino
must "remove the device outside the session" as_user rm v
as_user sh -c '
	ino=$(cat v.ino) i=0
	while [ $i -lt 3000 ]; do
		i=$((i + 1)); ln -s target n$i || exit 1
		if [ "$(stat -c %i n$i)" = "$ino" ]; then echo n$i >reused; exit 0; fi
	done
	echo none >reused'
echo go >fifo
wait
if [ "$(cat reused)" = none ]; then
	ok "stale record: # SKIP the inode was not reused in 3000 symlinks"
else
	check_eq "stale record under a symlink: it shows 0:0, a symlink" \
		"$(pick first <stale.out)" "0 0 120777 0 0"
	check_eq "stale record: the next stat too (the daemon dropped it)" \
		"$(pick second <stale.out)" "0 0 120777 0 0"
	check_eq "stale record: the same through the daemon" \
		"$(pick nomap <stale.out)" "0 0 120777 0 0"
fi

# Messages: strace counts what a stat loop sends.
if command -v strace >/dev/null && as_user strace -o /dev/null true 2>/dev/null; then
	for mode in map no-map; do
		if [ $mode = map ]; then nomap=(); else nomap=(env FAKEENV_NO_MAP=1); fi
		out=$(as_user "${nomap[@]}" "$FE" -- sh -c '
			chown 5:5 big/d0/f0001
			strace -f -qq -e trace=sendmsg,sendto,send -o trace.$0 \
				$H/statmany 10 big/d1/f00*
			echo "sent $(grep -c "^[0-9]* *send" trace.$0)"
		' $mode 2>&1)
		eval "sent_${mode/-/_}=\$(pick sent <<<\"\$out\")"
	done
	check_eq "990 stats of files without a record: one message (MAP), no GET" \
		"$sent_map" 1
	check_eq "with FAKEENV_NO_MAP=1, one GET per stat" "$sent_no_map" 990
else
	ok "messages: # SKIP strace cannot trace here"
fi
done_testing
