#!/bin/bash
# renameat2(RENAME_EXCHANGE) of two directories, and of a directory with a
# file: the records below each directory take the other's path, so that
# the journal's check at the next load finds them (a stale path drops the
# record).  The paths are read from the journal itself (helpers/jdump.c);
# a second session loads it and shows the owners.
. "$(dirname "$0")/lib.sh"

must "session" fe_opt -s "$W/j" -- sh -c '
	set -e
	mkdir -p a/sub b ab d k
	touch a/x a/sub/z b/y ab/w d/f g h k/m
	chown 1:1 a/x && chown 2:2 b/y && chown 3:3 a/sub/z
	chown 4:4 a && chown 5:5 b && chown 6:6 ab/w
	chown 7:7 d/f && chown 8:8 g && chown 9:9 d
	chown 10:10 h && chown 11:11 k/m && chown 12:12 k
	'"$H"'/rmv renameat2-exchange a b
	'"$H"'/rmv renameat2-exchange d g
	'"$H"'/rmv renameat2-exchange h k
'
W=$(cd "$W" && pwd -P)
paths=$("$H/jdump" "$W/j" "$W" | sort)
want=$(sort <<'EOF'
a 5:5
a/y 2:2
ab/w 6:6
b 4:4
b/sub/z 3:3
b/x 1:1
d 8:8
g 9:9
g/f 7:7
h 12:12
h/m 11:11
k 10:10
EOF
)
check_eq "the journal's paths follow both sides of each exchange" \
	"$(tr '\n' ' ' <<<"$paths")" "$(tr '\n' ' ' <<<"$want")"

out=$(fe_opt -i "$W/j" -- sh -c '
	for f in a a/y b b/x b/sub/z ab/w d g g/f h h/m k; do
		echo "$f $(stat -c %u:%g "$f")"
	done' 2>&1)
check_eq "a later session finds every record by its path" \
	"$(tr '\n' ' ' <<<"$out")" \
	"a 5:5 a/y 2:2 b 4:4 b/x 1:1 b/sub/z 3:3 ab/w 6:6 d 8:8 g 9:9 g/f 7:7 h 12:12 h/m 11:11 k 10:10 "
done_testing
