#!/bin/bash
# A damaged journal is refused: the session does not start (status 125),
# the message names the file and the problem, and the file is left exactly
# as it was; the same through --state.  fakeenv fsck names the problem;
# --salvage writes what can be trusted to a new file, which loads.
. "$(dirname "$0")/lib.sh"

must "files" as_user sh -c 'mkdir -p r; for i in $(seq 1 40); do touch r/f$i; done'
must "journal" fe_opt -s "$W/good" -- sh -c 'for i in $(seq 1 40); do chown $i:$i r/f$i; done'
size=$(stat -c %s good)
check_cmd "the good journal passes fsck" as_user "$FE" fsck good

# poke FILE OFFSET BYTE-IN-OCTAL: overwrite one byte in place.
poke() { printf "\\$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# flip FILE OFFSET: change one byte to another value.
flip() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	poke "$1" "$2" "$(printf '%03o' $(( (b + 1) % 256 )))"
}
mk() { as_user cp good "$1"; }

mk trunc-header;  as_user truncate -s 40 trunc-header
mk trunc-records; as_user truncate -s $((64 + 64 * 10 + 3)) trunc-records
mk trunc-tail;    as_user truncate -s $((size - 3)) trunc-tail
mk flipped;       flip flipped $((64 + 64 * 20 + 5))
mk flipped-str;   flip flipped-str $((size - 40))
mk magic;         poke magic 0 130
mk version;       poke version 8 143
mk sizes;         for o in 24 25 26 27 28 29 30 31; do poke sizes $o 377; done
as_user touch empty

declare -A want=(
	[trunc-header]=truncated [trunc-records]=truncated [trunc-tail]=truncated
	[flipped]='bad checksum' [flipped-str]='bad checksum'
	[magic]='not a journal' [version]='newer version'
	[sizes]='impossible sizes' [empty]=truncated
)
for f in "${!want[@]}"; do
	cp "$f" "$W/copy"
	out=$(fe_opt -i "$W/$f" -- touch "$W/ran-$f" 2>&1); rc=$?
	check_eq "$f: refused with 125" "$rc" 125
	check_match "$f: message names file and problem" "$out" "journal $W/$f: ${want[$f]}"
	check_cmd "$f: CMD did not run" test ! -e "$W/ran-$f"
	check_cmd "$f: file untouched" cmp "$f" "$W/copy"
	out=$(as_user "$FE" fsck "$f" 2>&1); rc=$?
	check_eq "$f: fsck fails" "$rc" 1
	check_match "$f: fsck names the problem" "$out" "$f: ${want[$f]}"
done

# The same refusal for a --state directory's journal, also untouched.
as_user mkdir -m 700 st
as_user cp flipped st/journal
out=$(fe_opt --state "$W/st" -- touch ran-st 2>&1); rc=$?
check_eq "--state: refused with 125" "$rc" 125
check_match "--state: message" "$out" "journal $W/st/journal: bad checksum"
check_cmd "--state: journal untouched" cmp st/journal flipped
check_cmd "--state: no socket left" test ! -e st/sock
check_cmd "--state: CMD did not run" test ! -e ran-st

# Salvage: what can be trusted goes to a new file, which loads.
cp flipped "$W/flipped.orig"
out=$(as_user "$FE" fsck --salvage flipped 2>&1); rc=$?
check_eq "salvage of a flipped byte: status" "$rc" 0
check_match "salvage of a flipped byte: counts" "$out" 'kept [1-9][0-9]*, lost [0-9]+'
check_cmd "salvage: input untouched" cmp flipped "$W/flipped.orig"
check_cmd "salvaged journal passes fsck" as_user "$FE" fsck flipped.salvaged
check_eq "salvaged journal loads" "$(fe_opt -i "$W/flipped.salvaged" -- stat -c %u:%g r/f1 r/f40)" "1:1
40:40"
out=$(as_user "$FE" fsck --salvage -o "$W/out" trunc-tail 2>&1); rc=$?
check_eq "salvage of a cut tail: status" "$rc" 0
check_cmd "salvage -o: written" as_user "$FE" fsck out
out=$(as_user "$FE" fsck --salvage -o "$W/out" trunc-tail 2>&1); rc=$?
check_ne "salvage never replaces OUT" "$rc" 0
out=$(as_user "$FE" fsck --salvage magic 2>&1); rc=$?
check_eq "salvage of garbage: nothing to trust" "$rc" 1

# Bad use.
out=$(as_user "$FE" fsck 2>&1); rc=$?
check_eq "fsck without FILE" "$rc" 2
out=$(as_user "$FE" fsck "$W/none" 2>&1); rc=$?
check_eq "fsck of a missing file" "$rc" 2
check_match "fsck of a missing file: message" "$out" 'none'
done_testing
