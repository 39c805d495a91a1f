#!/bin/bash
# Files given as journals or logs that are not journals or logs of ours:
# a FIFO, a device, a symbolic link, a huge file, another user's file.
# Each is refused with a message naming the file and the reason, within
# bounded time (a FIFO used to hang every reader, and the daemon with
# it), without reading more of the file than its header (a 1.5 GB file
# used to be read whole to reject its first 8 bytes), and without
# importing another user's records.
. "$(dirname "$0")/lib.sh"

must "files" as_user sh -c 'mkdir r && touch r/f1 r/f2'
must "a journal" fe_opt -s "$W/j" -- chown 4242:4242 r/f1
check_eq "the journal loads" "$(fe_opt -i j -- stat -c %u r/f1 2>&1)" 4242

# A build that reads /dev/zero until memory runs out must fail here, not
# eat the machine: the address space is bounded, except in the sanitizer
# and valgrind flavours, which reserve far more than that up front.
limit=
[ "$FAKEENV_SAN" = 0 ] && [ "$FAKEENV_VALGRIND" = 0 ] && limit=4194304

# bounded NAME STATUS ERE CMD...: CMD, as the test user, ends within 20 s
# (a timeout is a failure) with STATUS and a message matching ERE.  Its
# output goes through a file: a daemon it leaves blocked holds it open.
bounded() {
	local name=$1 want=$2 ere=$3 out rc
	shift 3
	(
		[ -n "$limit" ] && ulimit -v "$limit"
		as_user timeout 20 "$@"
	) >"$T/out" 2>&1 </dev/null
	rc=$?
	out=$(cat "$T/out")
	if [ "$rc" = 124 ]; then
		fail "$name" "still running after 20 s: $out"
		return
	fi
	check_eq "$name: status" "$rc" "$want"
	check_match "$name: message" "$out" "$ere"
}

# --- a FIFO as DIR/journal ---------------------------------------------------
must "state dir" as_user mkdir -m 700 st
must "fifo journal" as_user mkfifo st/journal
fifo="journal ($W/)?st/journal: a FIFO, not a regular file"
bounded "FIFO journal: --state" 125 "^fakeenv: $fifo" "$FE" --state st -- touch ran
check_cmd "FIFO journal: --state: CMD did not run" test ! -e ran
bounded "FIFO journal: -i" 125 "^fakeenv: $fifo" "$FE" -i st/journal -- touch ran
bounded "FIFO journal: fsck" 2 "^fakeenv: $fifo" "$FE" fsck st/journal
bounded "FIFO journal: fsck --salvage" 2 "^fakeenv: $fifo" "$FE" fsck --salvage -o "$W/salv" st/journal
bounded "FIFO journal: export -i" 125 "^fakeenv: $fifo" "$FE" export --format mtree -i st/journal r
bounded "FIFO journal: export --state" 125 "^fakeenv: $fifo" "$FE" export --format mtree --state st r
bounded "FIFO journal: status" 1 "fakeenv: $fifo" "$FE" status --state st
check_cmd "FIFO journal: still a FIFO" test -p st/journal

# --- a FIFO (or a symbolic link) as DIR/log ----------------------------------
must "state dir" as_user mkdir -m 700 st2
must "fifo log" as_user mkfifo st2/log
bounded "FIFO log: --state" 125 "^fakeenv: log ($W/)?st2/log: a FIFO, not a regular file" \
	"$FE" --state st2 -- touch ran
check_cmd "FIFO log: CMD did not run" test ! -e ran
must "state dir" as_user mkdir -m 700 st3
must "symlink log" as_user ln -s "$W/elsewhere" st3/log
bounded "symlink log: --state" 125 "^fakeenv: log ($W/)?st3/log: a symbolic link, not followed" \
	"$FE" --state st3 -- touch ran
check_cmd "symlink log: not followed" test ! -e elsewhere
must "rm log" as_user rm st3/log
bounded "a regular log again: --state runs" 0 "^$" "$FE" --state st3 --linger 0 -- touch ran
check_cmd "a regular log again: CMD ran" test -e ran
rm -f ran

# --- /dev/zero, directly and through symbolic links -----------------------
bounded "-i /dev/zero" 125 "^fakeenv: journal /dev/zero: a character device, not a regular file" \
	"$FE" -i /dev/zero -- touch ran
must "link to /dev/zero" as_user ln -s /dev/zero z
bounded "-i a link to /dev/zero" 125 \
	"^fakeenv: journal z \(a symbolic link to /dev/zero\): a character device, not a regular file" \
	"$FE" -i z -- touch ran
bounded "fsck a link to /dev/zero" 2 "character device, not a regular file" "$FE" fsck z
must "state dir" as_user mkdir -m 700 st4
must "link journal" as_user ln -s /dev/zero st4/journal
bounded "--state, journal a link to /dev/zero" 125 \
	"^fakeenv: journal ($W/)?st4/journal: a symbolic link, not followed" \
	"$FE" --state st4 -- touch ran
check_cmd "/dev/zero cases: CMD did not run" test ! -e ran

# A symbolic link the user gives to a journal of the user's own is
# followed, for convenience; the checks apply to its target.
must "own link" as_user ln -s j own-link
check_eq "-i a link to one's own journal loads" \
	"$(fe_opt -i own-link -- stat -c %u r/f1 2>&1)" 4242

# --- a 1.5 GB file -------------------------------------------------------
must "garbage" as_user sh -c 'head -c 4096 /dev/urandom >big && truncate -s 1500M big'
bounded "1.5 GB of garbage: -i" 125 "^fakeenv: journal big: not a journal" "$FE" -i big -- touch ran
bounded "1.5 GB of garbage: fsck" 1 "^fakeenv: journal big: not a journal" "$FE" fsck big
# A sound header on a file of another size: both sizes said.
must "long" as_user sh -c 'cp j long && truncate -s 1500M long'
jsize=$(stat -c %s j)
bounded "a journal padded to 1.5 GB: -i" 125 \
	"^fakeenv: journal long: impossible sizes: 1572864000 bytes, the header says $jsize:" "$FE" -i long -- touch ran
bounded "a journal padded to 1.5 GB: fsck" 1 "1572864000 bytes, the header says $jsize" "$FE" fsck long
# How much of them was read: the header, not the file (strace -y names
# the file behind each fd).
# read_of FILE CMD...: bytes read(2) from FILE by CMD and its children.
read_of() {
	local f=$1
	shift
	as_user strace -f -qq -y -s 0 -e trace=read,pread64,readv,preadv \
		-o "$T/trace" "$@" >/dev/null 2>&1
	awk -v f="/$f>" 'index($0, f) && $NF ~ /^[0-9]+$/ { n += $NF } END { print n + 0 }' "$T/trace"
}
at_most() {
	if [ "$2" -le "$3" ]; then ok "$1"; else fail "$1" "read $2 bytes"; fi
}
if command -v strace >/dev/null && as_user strace -o /dev/null true 2>/dev/null; then
	for f in big long; do
		n=$(read_of "$f" "$FE" -i "$f" -- true)
		at_most "$f: the daemon read at most 64 KiB of it" "$n" 65536
		n=$(read_of "$f" "$FE" fsck "$f")
		at_most "$f: fsck read at most 64 KiB of it" "$n" 65536
	done
else
	skip "1.5 GB files: bytes read" "strace cannot trace here"
fi
rm -f big long

# --- another user's journal ----------------------------------------------
if [ "$(id -u)" = 0 ]; then
	mkdir -m 755 "$T/u1"
	cp j "$T/u1/journal"
	chmod 644 "$T/u1/journal"
	chown -R 1:1 "$T/u1"
	own1="owned by uid 1, not by you \(uid $TUID\)"
	bounded "uid 1's journal: -i" 125 "^fakeenv: journal $T/u1/journal: $own1" \
		"$FE" -i "$T/u1/journal" -- stat -c %u r/f1
	bounded "uid 1's journal: fsck" 2 "$own1" "$FE" fsck "$T/u1/journal"
	bounded "uid 1's journal: export -i" 125 "$own1" \
		"$FE" export --format mtree -i "$T/u1/journal" r
	must "link to uid 1's" as_user ln -s "$T/u1/journal" l1
	bounded "a link to uid 1's journal: -i" 125 \
		"^fakeenv: journal l1 \(a symbolic link to $T/u1/journal\): $own1" \
		"$FE" -i l1 -- stat -c %u r/f1
	must "state dir" as_user mkdir -m 700 st5
	must "state journal a link to uid 1's" as_user ln -s "$T/u1/journal" st5/journal
	bounded "--state, journal a link to uid 1's" 125 \
		"^fakeenv: journal ($W/)?st5/journal: a symbolic link, not followed" \
		"$FE" --state st5 -- stat -c %u r/f1
	# root's, as ssh treats its files: refused too (copy it to use it).
	cp j "$W/rootj"
	chmod 644 "$W/rootj"
	bounded "root's journal: -i" 125 "^fakeenv: journal rootj: owned by uid 0, not by you" \
		"$FE" -i rootj -- stat -c %u r/f1
	bounded "a copy of root's journal loads" 0 '^4242$' \
		sh -c 'cp rootj mine && "$1" -i mine -- stat -c %u r/f1' _ "$FE"
	check_cmd "uid 1's journal untouched" cmp j "$T/u1/journal"
else
	skip "another user's journal" "not root"
fi

# No daemon is left blocked on a FIFO (one used to stay in open for ever).
wait_until 15 no_procs "$DAEMON"
check_eq "no daemon left" "$(session_pids "$DAEMON")" ""
# Release anything a broken build left blocked in an open of the FIFOs.
for p in st/journal st2/log; do exec 3<>"$p"; exec 3>&-; done
done_testing
