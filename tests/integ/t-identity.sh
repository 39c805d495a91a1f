#!/bin/bash
# Record identity across sessions: a record is its file's (dev, ino,
# birth time), not its last known path.  Each case makes a record in one
# session, maybe changes the tree outside any session, and looks at the
# file in a later session that loaded the journal, in two modes:
#   -s/-i    -s J, then -i J;
#   --state  --state S, "fakeenv checkpoint", the daemon killed with -9
#            (what came after the checkpoint is lost with it, nothing
#            else), then a new --state S session whose daemon loads it;
# on ext4 (which hands a freed inode number out again at once) and tmpfs
# (which never does).  The cases:
#   symlink    a chown or chmod through a symlink reaches the target's
#              record, and the load keeps it (0 dropped);
#   hard link  the name the record was made through is removed (rm, or
#              rm -r of its directory): the other name keeps the record;
#   renamed    a tree moved outside any session (or, with --state, a
#              file renamed after the last checkpoint) keeps its owners
#              and modes, as with fakeroot;
#   replaced   a file removed outside any session and replaced by a new
#              one at the same path and inode number is a new file: 0:0,
#              its real mode.  The birth time tells them apart.
# (A file replaced at the same inode number inside a session is
# t-inode-reuse.sh's.)
. "$(dirname "$0")/lib.sh"

gone() { [ -z "$(session_pids "$DAEMON")" ]; }

# prep NAME SETUP: a fresh case dir $c on the filesystem under test, the
# case's journal $J or state dir $S (on $W, so that nothing the daemons
# write takes an inode on the filesystem under test), and SETUP run in $c
# outside any session.
prep() {
	c=$D/$tag-$1
	J=$W/$kind-$tag-$1.j
	S=$W/$kind-$tag-$1.s
	as_user mkdir "$c" || return 1
	(cd "$c" && as_user sh -c "umask 022; $2") || return 1
}

# first SCRIPT: SCRIPT in $c in the session that makes the records: -s
# $J, or --state $S.  With --state, SCRIPT says "$FE" checkpoint itself
# (what it does after that is lost); the daemon, lingering after the
# command, is then killed with -9.  Status 1 and the why in $why when the
# session or the kill failed.
first() {
	local out rc pid
	why=
	case $mode in
	-s/-i)
		out=$(cd "$c" && fe_opt -s "$J" -- sh -c "umask 022; $1" 2>&1); rc=$?
		[ $rc = 0 ] || { why="first session: exit $rc: $out"; return 1; }
		;;
	--state)
		out=$(cd "$c" && fe_opt --state "$S" --linger 60 -- sh -c "umask 022; $1" 2>&1); rc=$?
		[ $rc = 0 ] || { why="first session: exit $rc: $out"; return 1; }
		pid=$(session_pids "$DAEMON")
		[ -n "$pid" ] || { why="no daemon lingering after the first session"; return 1; }
		kill -9 $pid
		wait_until 10 gone || { why="the daemon outlived kill -9"; return 1; }
		;;
	esac
	return 0
}

# outside SCRIPT: SCRIPT in $c as the test user, without fakeenv.
outside() {
	(cd "$c" && as_user sh -c "umask 022; $1")
}

# next SCRIPT: SCRIPT in $c in a session that loads what first left;
# its output in $got, and "N dropped" from what the load reported in
# $dropped: the launcher's stderr for -i, fakeenv status for --state.
next() {
	local st=$T/status
	rm -f "$st"
	case $mode in
	-s/-i)
		got=$(cd "$c" && fe_opt -i "$J" -- sh -c "$1" 2>"$T/err")
		dropped=$(grep -o '[0-9]* dropped' "$T/err" || echo "0 dropped")
		;;
	--state)
		got=$(cd "$c" && fe_opt --state "$S" --linger 0 -- \
			sh -c "$1; \"\$FE\" status >'$st'" 2>"$T/err")
		dropped=$(sed -n 's/^loaded at start: .* \([0-9]*\) dropped$/\1 dropped/p' "$st" 2>/dev/null)
		wait_until 20 gone
		;;
	esac
	return 0
}

# check_got NAME WANT: $got must be WANT; the load's stderr goes with a
# failure, to show what it said.
check_got() {
	if [ "$got" = "$2" ]; then
		ok "$1"
	else
		fail "$1" "got '$got', want '$2'; the load said: $(head -c 300 "$T/err")"
	fi
}

# 1. Through a symlink.  The record is the target's; its path must not
# make the load drop it (today: it is the link's, and lstat of the link
# finds a symlink: "1 dropped", the target 0:0).
case_symlink() {
	local what=$1 cmd=$2 fmt=$3 want=$4
	local n="$kind, $mode: symlink: $what through the link"
	prep "symlink-$what" 'touch target && ln -s target link' || { fail "$n" "setup"; return; }
	local ck=
	[ "$mode" = --state ] && ck='&& "$FE" checkpoint >/dev/null'
	first "$cmd link $ck" || { fail "$n" "$why"; return; }
	next "stat -c '$fmt' target"
	got="$got; $dropped"
	check_got "$n: the target is $want after the load, 0 dropped" "$want; 0 dropped"
}

# 2. Hard links: the name the record was made through goes, the other
# stays (today the record keeps the removed name and the load drops it).
case_hardlink() {
	local n="$kind, $mode: hard link: the name chowned is removed"
	prep hardlink 'true' || { fail "$n" "setup"; return; }
	local ck=
	[ "$mode" = --state ] && ck='&& "$FE" checkpoint >/dev/null'
	first "touch a && ln a b && chown 5:6 a && chmod 4711 a && rm a $ck" ||
		{ fail "$n" "$why"; return; }
	next "stat -c '%u:%g %a %h' b"
	check_got "$n: the other name is 5:6 4711 after the load" "5:6 4711 1"

	n="$kind, $mode: hard link: rm -r of the dir holding the name chowned"
	prep hardlink-rmr 'true' || { fail "$n" "setup"; return; }
	first "mkdir dir && touch dir/x && ln dir/x y && chown 5:6 dir/x &&
		chmod 4711 dir/x && rm -r dir $ck" || { fail "$n" "$why"; return; }
	next "stat -c '%u:%g %a %h' y"
	check_got "$n: the name outside is 5:6 4711 after the load" "5:6 4711 1"
}

# 3. Renames the daemon did not see.  The listing of the tree after the
# load must be the one the session that made it saw, under the new name.
TREE='mkdir -p tree/sub/deep && touch tree/f tree/sub/g tree/sub/deep/h &&
	ln -s f tree/l && mknod tree/sub/null c 1 3 && chown -R 7:8 tree &&
	chmod 4755 tree/f && chmod 2755 tree/sub && chown 0:9 tree/sub/deep/h'
LIST='find "$1" | sort | while read -r p; do
		stat -c "%n %u:%g %a %F %t,%T" "$p"
	done'
TREE_WANT="moved 7:8 755 directory 0,0
moved/f 7:8 4755 regular empty file 0,0
moved/l 7:8 777 symbolic link 0,0
moved/sub 7:8 2755 directory 0,0
moved/sub/deep 7:8 755 directory 0,0
moved/sub/deep/h 0:9 644 regular empty file 0,0
moved/sub/g 7:8 644 regular empty file 0,0
moved/sub/null 7:8 644 character special file 1,3"
case_renamed() {
	local n="$kind, $mode: renamed: a tree moved outside any session"
	prep renamed-tree 'true' || { fail "$n" "setup"; return; }
	local ck=
	[ "$mode" = --state ] && ck='&& "$FE" checkpoint >/dev/null'
	# The session's own listing, with the new name, is what the load
	# must give (and must be what this script expects).
	first "$TREE && sh -c '$LIST' - tree | sed 's/^tree/moved/' >seen $ck" ||
		{ fail "$n" "$why"; return; }
	outside 'mv tree moved' || { fail "$n" "mv outside"; return; }
	next "sh -c '$LIST' - moved"
	if [ "$(cat "$c/seen")" != "$TREE_WANT" ]; then
		fail "$n" "the first session saw '$(cat "$c/seen")', want '$TREE_WANT'"
	elif [ "$got" = "$TREE_WANT" ]; then
		ok "$n: every file under it keeps its owner and mode"
	else
		fail "$n: every file under it keeps its owner and mode" \
			"lines that differ from the first session's: $(grep -vxF "$TREE_WANT" <<<"$got")"
	fi
	[ "$mode" = --state ] || return

	# Inside the session, after the checkpoint: the journal holds the
	# old name; the kill loses only the rename, not the chown.
	n="$kind, $mode: renamed after the last checkpoint, then kill -9"
	prep renamed-after-ckpt 'touch a' || { fail "$n" "setup"; return; }
	first 'chown 5:5 a && "$FE" checkpoint >/dev/null && mv a b' ||
		{ fail "$n" "$why"; return; }
	next "stat -c '%u:%g' b"
	check_got "$n: the new name keeps the checkpointed chown" "5:5"
}

# 5. A file replaced outside any session at the same path.  On ext4 new
# files are made until one gets the old inode number, and that one is
# renamed to f: same (dev, ino), same type, another birth time.  tmpfs
# never hands a number out again: the one new file is another inode.
case_replaced() {
	local n="$kind, $mode: replaced outside any session" tries=10000 r
	[ "$kind" = tmpfs ] && tries=1
	prep replaced 'true' || { fail "$n" "setup"; return; }
	local ck=
	[ "$mode" = --state ] && ck='&& "$FE" checkpoint >/dev/null'
	first "touch f && chown 33:44 f && chmod 4755 f $ck" ||
		{ fail "$n" "$why"; return; }
	r=$(outside 'ino=$(stat -c %i f) && rm f || exit 1
		i=0 how=new
		while [ $i -lt '"$tries"' ]; do
			i=$((i + 1))
			touch n$i || exit 1
			if [ "$(stat -c %i n$i)" = "$ino" ]; then how="reused after $i"; break; fi
		done
		mv n$i f && rm -f n* && echo "$how"') || { fail "$n" "the replacement outside: $r"; return; }
	case $r in
	reused*) n="$n by a file at the same inode number ($r)" ;;
	*)
		if [ "$kind" != tmpfs ]; then
			skip "$n by a file at the same inode number" "$kind did not hand the number out again in $tries files"
			return
		fi
		n="$n (tmpfs gives the new file a new inode number)" ;;
	esac
	next "stat -c '%u:%g %a' f"
	check_got "$n: the new file is 0:0 with its real mode, no set-uid" "0:0 644"
}

for kind in ext4 tmpfs; do
	if ! fs_dir D "$kind"; then
		skip "$kind: the identity cases" "no $kind filesystem to be had here"
		continue
	fi
	for mode in -s/-i --state; do
		case $mode in -s/-i) tag=si ;; *) tag=st ;; esac
		case_symlink chown 'chown 5:5' '%u:%g' 5:5
		case_symlink chmod 'chmod 4711' '%a' 4711
		case_hardlink
		case_renamed
		case_replaced
	done
done

done_testing
