#!/bin/sh
# The commit rule of docs/hacking.md, for every commit after BASE (the
# first commit of the issue that made the rule; before it, subjects were
# not held to it): a subject of at most 72 characters, and when there is
# a body, a blank line between the two.  A tree with no history to read
# (no git, not a git checkout, a shallow clone without BASE, BASE not an
# ancestor of HEAD) is skipped with a line saying why, never passed in
# silence.  Usage: scripts/check-commits.sh [BASE]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-218471f}
max=72

skip() {
	echo "check-commits: SKIP: $*"
	exit 0
}

command -v git >/dev/null 2>&1 || skip "no git to read the history with"
# A checkout owned by another user (CI's copy, a bind mount) is one git
# refuses to read unless told it is safe; we only read.
g() { git -C "$top" -c safe.directory="$top" "$@"; }
g rev-parse --git-dir >/dev/null 2>&1 || skip "$top is not a git checkout"
g cat-file -e "$base^{commit}" 2>/dev/null ||
	skip "commit $base is not in this clone (shallow?): nothing to check against"
g merge-base --is-ancestor "$base" HEAD ||
	skip "commit $base is not an ancestor of HEAD: no range to check"

bad=0 n=0
for c in $(g rev-list "$base..HEAD"); do
	n=$((n + 1))
	subject=$(g log -1 --format=%s "$c")
	# %B is the message as written; its second line must be empty when
	# there is more than a subject.
	second=$(g log -1 --format=%B "$c" | sed -n 2p)
	len=$(printf '%s' "$subject" | wc -m)
	if [ "$len" -gt "$max" ]; then
		echo "check-commits: $(g log -1 --format=%h "$c"): subject is $len characters (at most $max): $subject"
		bad=$((bad + 1))
	fi
	if [ -n "$second" ]; then
		echo "check-commits: $(g log -1 --format=%h "$c"): no blank line after the subject: $subject"
		bad=$((bad + 1))
	fi
done
if [ "$bad" -gt 0 ]; then
	echo "check-commits: $bad problem(s) in $n commits after $base"
	exit 1
fi
echo "check-commits: $n commits after $base, every subject <= $max characters, a blank line before each body"
