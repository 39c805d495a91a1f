#!/bin/sh
# The size rules of docs/hacking.md: no file in src/ or include/ over
# MAX_FILE lines, no function over MAX_FUNC lines.  A function runs from
# the first column-0 line of its definition (the line naming it, or its
# return type when that line comes first) to the `}` in column 0 that
# closes the body; the body opens with `{` in column 0, as our style has
# it.  Usage: scripts/check-size.sh [DIR...]  (default: src include)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
MAX_FILE=${MAX_FILE:-700}
MAX_FUNC=${MAX_FUNC:-80}
[ $# -gt 0 ] || set -- src include

files=$(find "$@" -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
[ -n "$files" ] || { echo "check-size: no sources under $*" >&2; exit 2; }

# shellcheck disable=SC2086
awk -v maxfile="$MAX_FILE" -v maxfunc="$MAX_FUNC" '
FNR == 1 { if (prev != "") endfile(prev); prev = FILENAME; start = 0; inbody = 0 }
function endfile(f) {
	if (lines[f] > maxfile) {
		printf "check-size: %s: %d lines (at most %d)\n", f, lines[f], maxfile
		bad++
	}
}
{ lines[FILENAME] = FNR }
# A column-0 line that can begin a definition: not blank, not a brace,
# not a comment, not a preprocessor line.
!inbody && /^[A-Za-z_]/ { start = FNR; name = $0 }
!inbody && /^\{/ && start { inbody = 1 }
inbody && /^\}/ {
	n = FNR - start + 1
	if (n > maxfunc) {
		sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
		printf "check-size: %s:%d: %s: %d lines (at most %d)\n",
			FILENAME, start, name, n, maxfunc
		bad++
	}
	inbody = 0; start = 0
}
END { if (prev != "") endfile(prev); exit bad ? 1 : 0 }
' $files && echo "check-size: $(echo "$files" | wc -l) files, none over $MAX_FILE lines, no function over $MAX_FUNC"
