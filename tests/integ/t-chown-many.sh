#!/bin/bash
# chown -R over 10,000 files, checked with find -printf in the session;
# then 8 concurrent processes, each chowning (and stat-checking) its own
# files and, all to 5:6, one shared file, checked after they all end.
. "$(dirname "$0")/lib.sh"

must "make 10,000 files" as_user sh -c '
	mkdir -p big && cd big && for d in 0 1 2 3 4 5 6 7 8 9; do
		mkdir d$d && (cd d$d && seq -f "f%04g" 1 1000 | xargs touch) || exit 1
	done'
check_eq "natively find counts 10,011 entries" "$(find big | wc -l)" 10011
out=$(fe sh -c 'chown -R 7:8 big && find big -printf "%U:%G\n" | sort | uniq -c' 2>&1)
check_eq "chown -R 7:8 of 10,000 files: every entry shows 7:8" \
	"$(echo "$out" | sed 's/^ *//')" "10011 7:8"
out=$(fe sh -c 'chown -R 7:8 big && chmod -R 4750 big/d3 && chown 9:9 big/d5/f0500 &&
	find big -printf "%U:%G %m\n" | sort | uniq -c' 2>&1)
check_eq "chown -R, chmod -R of a subtree, one chown: counts by owner and mode" \
	"$(echo "$out" | sed 's/^ *//')" \
"1001 7:8 4750
8999 7:8 644
10 7:8 755
1 9:9 644"
check_eq "outside, the real owners are unchanged" \
	"$(find big -printf '%U:%G\n' | sort -u)" "$TUID:$TGID"

must "make 8 x 200 files" as_user sh -c '
	mkdir conc && cd conc && touch shared && for p in 1 2 3 4 5 6 7 8; do
		mkdir p$p && (cd p$p && seq -f "f%03g" 1 200 | xargs touch) || exit 1
	done'
out=$(fe sh -c '
	cd conc
	for p in 1 2 3 4 5 6 7 8; do
		( $H/own many 10$p 20$p 3 p$p/* >res$p 2>&1
		  $H/own many 5 6 20 shared >>res$p 2>&1 ) &
	done
	wait
	cat res1 res2 res3 res4 res5 res6 res7 res8 | sort | uniq -c
	for p in 1 2 3 4 5 6 7 8; do
		echo "p$p $(find p$p -type f -printf "%U:%G\n" | sort | uniq -c | sed "s/^ *//")"
	done
	echo "shared $(stat -c %u:%g shared)"
' 2>&1)
check_eq "8 concurrent processes: every chown was seen by its own stat" \
	"$(echo "$out" | sed -n 1p | sed 's/^ *//')" "16 ok"
for p in 1 2 3 4 5 6 7 8; do
	check_eq "process $p's 200 files all show 10$p:20$p afterwards" \
		"$(pick "p$p" <<<"$out")" "200 10$p:20$p"
done
check_eq "the shared file, chowned 5:6 by all 8 at once, shows 5:6" \
	"$(pick shared <<<"$out")" "5:6"
done_testing
