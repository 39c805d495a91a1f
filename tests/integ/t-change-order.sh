#!/bin/bash
# The order of recorded changes: once a change call (the chown and chmod
# families, mknod, setxattr of a kept name, rename and unlink of a
# recorded file) has returned in one process of a session, every read
# that starts afterwards in any process sees it, however the reader
# learnt of the change (a pipe, a signal, wait(), shared memory), and a
# process always reads its own changes.  The helper `order` checks the
# stat family, readdir's d_type and getxattr after each change (see
# helpers/order.c); natively as root, where chown is real, it passes
# too, so it asserts only what the kernel guarantees.  Then the readers
# outside the stat family right after a burst of changes: `fakeenv
# export`, `fakeenv checkpoint` and the journal it writes, the `-s` save
# and the next `-i` session, `fakeenv status`.
#
# Sizes (env overrides for longer runs): ORDER_N files x ORDER_ROUNDS
# rounds for pipe and thread, ORDER_FORKS children, ORDER_SIGNALS
# signals, ORDER_NPROC processes x ORDER_MANY_ROUNDS chowns, ORDER_SELF
# rounds of one process, ORDER_TREE files in the bursts; ORDER_TIMEOUT
# seconds before the helper's watchdog ends a hung run.
. "$(dirname "$0")/lib.sh"

N=${ORDER_N:-2000}
ROUNDS=${ORDER_ROUNDS:-3}
FORKS=${ORDER_FORKS:-2000}
SIGNALS=${ORDER_SIGNALS:-2000}
NPROC=${ORDER_NPROC:-16}
MANY_ROUNDS=${ORDER_MANY_ROUNDS:-300}
SELF=${ORDER_SELF:-1000}
TREE=${ORDER_TREE:-2000}
export ORDER_TIMEOUT=${ORDER_TIMEOUT:-120}

# The helper's subcommands and their arguments.
runs=(
	"pipe $N $ROUNDS"
	"thread $N $ROUNDS"
	"fork $FORKS"
	"signal $SIGNALS"
	"many $NPROC $MANY_ROUNDS"
	"self $SELF"
)

# order_ok NAME RC OUTPUT: the helper exited 0 and its last line counts
# some checks and no stale read.
order_ok() {
	local name=$1 rc=$2 out=$3 last
	last=$(tail -n1 <<<"$out")
	if [ "$rc" = 0 ] && [[ $last =~ ^checks\ [1-9][0-9]*\ stale\ 0$ ]]; then
		ok "$name: $last"
	else
		fail "$name" "exit $rc: $(head -c 1200 <<<"$out")"
	fi
}

# Where the helper runs: a tmpfs and an ext4 (which hands out a freed
# inode number again at once), as there are; the working dir otherwise.
dirs=()
if fs_dir d tmpfs; then dirs+=("tmpfs:$d"); fi
if fs_dir d ext4; then dirs+=("ext4:$d"); fi
[ ${#dirs[@]} -gt 0 ] || dirs=("workdir:$W")

for fd in "${dirs[@]}"; do
	kind=${fd%%:*} base=${fd#*:}
	for r in "${runs[@]}"; do
		set -- $r
		sub=$1; shift
		if [ "$(id -u)" = 0 ]; then
			# Natively, as real root: the kernel's own order.
			mkdir "$base/nat-$sub"
			out=$("$H/order" "$sub" "$base/nat-$sub" "$@" 2>&1); rc=$?
			order_ok "natively as root, $kind: order $sub $*" "$rc" "$out"
		else
			skip "natively, $kind: order $sub $*" "not root: a real chown needs it"
		fi
		must "mkdir $base/ses-$sub" as_user mkdir "$base/ses-$sub"
		out=$(fe "$H/order" "$sub" "$base/ses-$sub" "$@" 2>&1); rc=$?
		order_ok "in a session, $kind: order $sub $*" "$rc" "$out"
	done
done

# --- readers after a burst --------------------------------------------------

# owners_in FILE: "COUNT UID:GID" per owner of jdump's lines in FILE.
owners_in() {
	awk '{ print $2 }' "$1" | sort | uniq -c | sed 's/^ *//'
}
jd() { as_user "$H/jdump" "$@"; }
want="$((TREE + 1)) 5:6"

must "make tree, $TREE files" as_user sh -c "
	mkdir tree && cd tree && seq -f f%05g 1 $TREE | xargs touch"
# One session: each reader right after the burst, in the same script.
# jdump reads copies of the journal, outside the session.
fe_opt -s J -- sh -c '
	chown -R 5:6 tree && "$FE" status >st1 &&
	"$FE" checkpoint >/dev/null && cp J J1 &&
	mv tree moved && "$FE" checkpoint >/dev/null && cp J J2 &&
	mv moved tree' >s1.log 2>&1
check_eq "the first session ran" "$?:$(cat s1.log)" "0:"
check_eq "status right after chown -R: every entry a record" \
	"$(awk '/^records:/ { print $2 }' st1)" "$((TREE + 1))"
check_eq "checkpoint right after chown -R: every entry 5:6 in the journal" \
	"$(jd J1 "$W/tree" >j1; owners_in j1)" "$want"
check_eq "checkpoint right after mv: every record under the new name" \
	"$(jd J2 "$W/moved" >j2; owners_in j2)" "$want"
check_eq "checkpoint right after mv: none under the old name" \
	"$(jd J2 "$W/tree" | wc -l)" 0
check_eq "the -s save at the end: every entry 5:6, back at tree" \
	"$(jd J "$W/tree" >j3; owners_in j3)" "$want"

out=$(fe_opt -i J -s J -- sh -c '
	find tree -printf "%U:%G\n" | sort | uniq -c | sed "s/^ *//"
	rm -rf tree && "$FE" status >st2 &&
	"$FE" checkpoint >/dev/null && cp J J4 && "$FE" status >st3' 2>&1)
check_eq "the next -i session: every entry shows 5:6" "$out" "$want"
# Each record goes, or stays as an orphan (no name left), at once.
check_eq "status right after rm -rf: no record with a name left" \
	"$(awk '/^records:/ { r = $2 } /^orphans:/ { o = $2 } END { print r - o }' st2)" 0
check_eq "checkpoint right after rm -rf: no record left under tree" \
	"$(jd J4 "$W/tree" | wc -l)" 0
check_eq "status after that checkpoint: no record" \
	"$(awk '/^records:/ { print $2 }' st3)" 0

# Export reads a --state session's journal after a checkpoint it asks
# for: in the session's own script, right after the burst, and from
# outside once it has ended.
must "make tree2, $TREE files" as_user sh -c "
	mkdir tree2 && cd tree2 && seq -f f%05g 1 $TREE | xargs touch"
fe_opt --state "$W/st" --linger 0 -- sh -c '
	chown -R 5:6 tree2 && chmod 4750 tree2/f0000* &&
	for i in 1 2 3 4 5 6 7 8 9; do mknod tree2/dev$i c 240 $i || exit 1; done &&
	"$FE" export --format mtree --mtime 1000000000 tree2 >m1' >s3.log 2>&1
check_eq "the export session ran" "$?:$(cat s3.log)" "0:"
check_eq "export right after chown -R: every file and dir 5:6" \
	"$(grep -Ec '^\.[^ ]* type=(file|dir) uid=5 gid=6 ' m1)" "$((TREE + 1))"
check_eq "export right after chmod: the set-uid files" \
	"$(grep -c ' mode=4750 ' m1)" 9
check_eq "export right after mknod: the devices" \
	"$(grep -o '^\./dev[0-9] type=char .*device=native,240,[0-9]$' m1 |
		sed 's/ uid.*device=/ /' | tr '\n' ' ')" \
	"$(for i in 1 2 3 4 5 6 7 8 9; do printf './dev%s type=char native,240,%s ' $i $i; done)"
as_user "$FE" export --format mtree --mtime 1000000000 --state "$W/st" tree2 \
	>m2 2>s4.log
check_eq "export from outside, after the session: the same mtree" \
	"$?:$(cat s4.log):$(cmp m1 m2 2>&1)" "0::"
done_testing
