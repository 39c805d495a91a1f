#!/bin/sh
# Compare the shim's dynamic symbols with src/shim/wrap.def: it must export
# exactly the wrapped names (no helper leaking out, no wrapper missing), and
# import none of them (a wrapped name imported would be a call that can come
# back into the shim).  Usage: check-exports.sh build/libfakeenv.so
set -eu
so=${1:?usage: check-exports.sh LIBFAKEENV.SO}
top=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Besides the wrappers, one entry of our own: the supervisor's
# (src/shim/supervise.c), which the launcher finds with dlsym.
{ printf '#define WRAP(r, n, p) n\n#include "wrap.def"\n' |
	$cc -E -P -I"$top/src/shim" - | tr -d ' ' | grep -v '^$'
  echo fakeenv_supervise; } | sort -u >"$tmp/table"
nm -D --defined-only "$so" | awk '$2 ~ /^[TWi]$/ {print $3}' | sort -u >"$tmp/exported"
nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u >"$tmp/imported"

status=0
if ! cmp -s "$tmp/table" "$tmp/exported"; then
	echo "check-exports: exports differ from wrap.def (< table only, > .so only):"
	diff "$tmp/table" "$tmp/exported" | grep '^[<>]' || true
	status=1
fi
loops=$(comm -12 "$tmp/table" "$tmp/imported")
if [ -n "$loops" ]; then
	echo "check-exports: wrapped names imported by the shim: $loops"
	status=1
fi
[ $status = 0 ] && echo "check-exports: $(wc -l <"$tmp/table") wrapped names, exports match, none imported"
exit $status
