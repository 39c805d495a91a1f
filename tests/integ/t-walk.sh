#!/bin/bash
# glibc's tree walkers (fts_read, fts_children, ftw, nftw and their 64
# forms) stat internally, past the PLT: each must still show faked data.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	umask 022
	mkdir -p r/s && touch r/a && chown 1:2 r/a && chmod 4711 r/a &&
	chown 3:4 r/s && mknod r/s/c c 1 3 && chown 5:6 r || exit 9
	for c in fts fts64 fts-children fts64-children ftw ftw64 nftw nftw64; do
		$H/walk $c r | sort | sed "s/^/$c /"
	done
' 2>&1)
check_eq "session setup exits 0" "$?" 0

tree="r 5 6 40755
r/a 1 2 104711
r/s 3 4 40755
r/s/c 0 0 20644"
kids="r/a 1 2 104711
r/s 3 4 40755"
for c in fts fts64 ftw ftw64 nftw nftw64; do
	check_eq "$c shows faked metadata for every entry" \
		"$(grep "^$c " <<<"$out" | cut -d' ' -f2-)" "$tree"
done
for c in fts-children fts64-children; do
	check_eq "$c shows faked metadata for every child" \
		"$(grep "^$c " <<<"$out" | cut -d' ' -f2-)" "$kids"
done
check_eq "outside: nftw shows the real owners" \
	"$(as_user "$H"/walk nftw r | sort | cut -d' ' -f2,3 | sort -u)" "$TUID $TGID"
done_testing
