#!/bin/bash
# A change that the shared table shows to be a no-op is not sent, and the
# results are the same as when it is (FAKEENV_NO_MAP=1 sends everything):
# chown to the owner a file without a record shows, except where the
# kernel's chown would clear a set-id bit; chmod to the mode the real file
# gets; creation needing no record; removal of a file without one.  Under
# -u the owner a file without a record shows is its real one, so a chown
# to 0:0 is a change.
. "$(dirname "$0")/lib.sh"

must "make files" as_user sh -c 'touch plain suid sgidx && chmod 4755 suid && chmod 2775 sgidx'
script='
	chown 0:0 plain suid sgidx && echo "chown $(stat -c "%u:%g:%a" plain suid sgidx | tr "\n" " ")"
	touch m && chmod 644 m && chmod 600 m && echo "chmod-same $(stat -c %a m)"
	chmod 4755 m && echo "chmod-setuid $(stat -c %a m)"
	chown 3:3 m && chown 0:0 m && echo "chown-back $(stat -c %u:%g:%a m)"
	mkdir d && touch d/x && rm d/x && rmdir d && echo "gone $(ls -A | tr "\n" " ")"
'
for mode in map no-map; do
	if [ $mode = map ]; then nomap=(); else nomap=(env FAKEENV_NO_MAP=1); fi
	as_user rm -rf w-$mode && as_user mkdir w-$mode && as_user cp -p plain suid sgidx w-$mode/
	out=$(cd w-$mode && as_user "${nomap[@]}" "$FE" -- sh -c "$script" 2>&1)
	check_eq "$mode: chown 0:0 clears setuid and setgid-with-group-exec as the kernel does" \
		"$(pick chown <<<"$out")" "0:0:644 0:0:755 0:0:775 "
	check_eq "$mode: chmod to the real mode shows it" "$(pick chmod-same <<<"$out")" "600"
	check_eq "$mode: chmod 4755 is recorded" "$(pick chmod-setuid <<<"$out")" "4755"
	check_eq "$mode: chown away and back to 0:0" "$(pick chown-back <<<"$out")" "0:0:755"
	check_eq "$mode: made and removed" "$(pick gone <<<"$out")" "m plain sgidx suid "
done
check_eq "-u: chown 0:0 of a file without a record is a change" \
	"$(fe_opt -u -- sh -c 'chown 0:0 plain && stat -c %u:%g plain' 2>&1)" "0:0"
check_eq "-u: chown to its real owner shows the real owner" \
	"$(fe_opt -u -- sh -c "chown $TUID:$TGID plain && stat -c %u:%g plain" 2>&1)" "$TUID:$TGID"

# What is sent: strace counts the messages of chown -R 0:0 over files
# without a record, and of a create + chmod + unlink loop.
if command -v strace >/dev/null && as_user strace -o /dev/null true 2>/dev/null; then
	must "make 200 files" as_user sh -c 'mkdir t && cd t && seq -f "f%03g" 1 200 | xargs touch'
	out=$(fe sh -c '
		strace -f -qq -e trace=sendmsg,sendto,send -o tr.chown chown -R 0:0 t
		echo "chown $(grep -c "^[0-9]* *send" tr.chown)"
		strace -f -qq -e trace=sendmsg,sendto,send -o tr.ccu '"$BUILD"'/bench/ccu 200 t
		echo "ccu $(grep -c "^[0-9]* *send" tr.ccu)"
		chown -R 0:5 t
		echo "owners $(find t -printf "%U:%G\n" | sort -u | tr "\n" " ")"
		'"$BUILD"'/fakeenv status | sed -n "s/^one-way changes: \([0-9]*\) from the processes. rings, \([0-9]*\) as messages/oneway \1 \2/p"
	' 2>&1)
	check_eq "chown -R 0:0 of 201 entries without a record: only MAP is sent" \
		"$(pick chown <<<"$out")" 1
	check_eq "200 x create + chmod + unlink needing no record: only MAP is sent" \
		"$(pick ccu <<<"$out")" 1
	# A change goes one-way, as a message or through the process's
	# ring (after its first few messages, while the daemon polls).
	check_eq "chown -R 0:5 (a change): every entry shows it" \
		"$(pick owners <<<"$out")" "0:5 "
	# A few may wait for their reply instead: one whose bucket still
	# held a change in flight that the process could not tell its own.
	read -r ring msgs <<<"$(pick oneway <<<"$out")"
	check_cmd "chown -R 0:5: one-way CHOWNs through the ring ($ring) and as messages ($msgs), 201 at most" \
		test "$ring" -gt 0 -a "$((ring + msgs))" -le 201 -a "$((ring + msgs))" -ge 190
else
	ok "messages: # SKIP strace cannot trace here"
fi
done_testing
