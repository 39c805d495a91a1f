#!/bin/sh
# Compare the shim's dynamic symbols with src/shim/wrap.def: it must export
# exactly the wrapped names (no helper leaking out, no wrapper missing), and
# import none of them (a wrapped name imported would be a call that can come
# back into the shim).  Usage: check-exports.sh build/libfakeenv.so
# CC and CPPFLAGS (the Makefile passes its own) say which libc the shim
# was built for: wrap.def's glibc-only rows follow fakeenv/libc.h.
set -eu
so=${1:?usage: check-exports.sh LIBFAKEENV.SO}
top=$(cd "$(dirname "$0")/.." && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Besides the wrappers, one entry of our own: the supervisor's
# (src/shim/supervise.c), which the launcher finds with dlsym.
{ printf '#include "fakeenv/libc.h"\n#define WRAP(r, n, p) fe_export: n\n#include "wrap.def"\n' |
	$cc ${CPPFLAGS:-} -D_GNU_SOURCE -E -P -I"$top/include" \
		-I"$top/src/shim" -x c - | sed -n 's/^fe_export: *//p'
  echo fakeenv_supervise; } | sort -u >"$tmp/table"
# _init and _fini: the object's own (musl-gcc's crti.o exports them).
nm -D --defined-only "$so" | awk '$2 ~ /^[TWi]$/ {print $3}' |
	grep -vx '_init\|_fini' | sort -u >"$tmp/exported"
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
