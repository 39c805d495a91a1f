#!/bin/bash
# Hard links share one record; a rename (rename, renameat, renameat2 with
# no flag, RENAME_NOREPLACE, RENAME_EXCHANGE) keeps it; unlinking one link
# keeps it for the others.  (The record going with the last link is in
# t-inode-reuse.sh.)
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	umask 022
	touch a && ln a b && chown 3:4 a && echo "link chown $($H/st stat b)"
	chmod 4711 b && echo "link chmod $($H/st stat a)"
	rm a && echo "link survives $($H/st stat b)"
	for c in rename renameat renameat2 renameat2-noreplace; do
		touch x-$c && chown 5:6 x-$c && chmod 751 x-$c
		echo "$c $($H/rmv $c x-$c y-$c) $($H/st stat y-$c)"
	done
	touch o1 o2 && chown 1:1 o1 && chown 2:2 o2
	echo "over $($H/rmv rename o1 o2) $($H/st stat o2)"
	touch n1 n2 && chown 7:7 n1 && chown 8:8 n2
	echo "noreplace $($H/rmv renameat2-noreplace n1 n2) $($H/st stat n1) $($H/st stat n2)"
	touch e1 && mkdir e2 && chown 9:10 e1 && chown 11:12 e2
	echo "exchange $($H/rmv renameat2-exchange e1 e2) $($H/st stat e1) $($H/st stat e2)"
	mkdir dd && chown 13:14 dd && touch dd/f && chown 15:16 dd/f
	echo "dir rename $($H/rmv rename dd de) $($H/st stat de) $($H/st stat de/f)"
	for c in unlink unlinkat remove; do
		touch u-$c; echo "$c $($H/rmv $c u-$c) $($H/st stat u-$c)"
	done
	for c in rmdir unlinkat-dir remove; do
		mkdir r-$c; echo "$c dir $($H/rmv $c r-$c) $($H/st stat r-$c)"
	done
	echo "missing $($H/rmv unlink nope)"
' 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }

check_eq "chown of one hard link shows on the other" "$(get "link chown")" "3 4 100644 0 0"
check_eq "chmod of one hard link shows on the other" "$(get "link chmod")" "3 4 104711 0 0"
check_eq "unlinking one link keeps the record for the other" \
	"$(get "link survives")" "3 4 104711 0 0"
for c in rename renameat renameat2 renameat2-noreplace; do
	check_eq "$c keeps the record" "$(get "$c")" "ok 5 6 100751 0 0"
done
check_eq "rename over a file: the moved record wins" "$(get over)" "ok 1 1 100644 0 0"
check_eq "RENAME_NOREPLACE over a file: EEXIST, both unchanged" \
	"$(get noreplace)" "ERR EEXIST 7 7 100644 0 0 8 8 100644 0 0"
check_eq "RENAME_EXCHANGE swaps the records with the files" \
	"$(get exchange)" "ok 11 12 40755 0 0 9 10 100644 0 0"
check_eq "renaming a directory keeps its record and its children's" \
	"$(get "dir rename")" "ok 13 14 40755 0 0 15 16 100644 0 0"
for c in unlink unlinkat remove; do
	check_eq "$c removes the file" "$(get "$c")" "ok ERR ENOENT"
done
for c in rmdir unlinkat-dir remove; do
	check_eq "$c removes the directory" "$(get "$c dir")" "ok ERR ENOENT"
done
check_eq "unlink of a missing file is ENOENT" "$(get missing)" "ERR ENOENT"
done_testing
