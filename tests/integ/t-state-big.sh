#!/bin/bash
# 200,000 records (bench/mkjournal's synthetic journal: every record with
# a birth time, so kept without a stat) go through a --state session's
# load, a checkpoint written by the daemon's thread from its snapshot
# while the session goes on changing, and a second load: every record
# comes back as it was, and the records added come too.  Not timed.
. "$(dirname "$0")/lib.sh"

N=200000
S=$W/state
gone() { [ -z "$(session_pids "$DAEMON")" ]; }
must "state dir" as_user mkdir -m 700 "$S"
must "a journal of $N records" as_user "$BUILD/bench/mkjournal" "$S/journal" $N
"$H/jdump" "$S/journal" | sort >"$W/before"
check_eq "the journal holds them" "$(wc -l <"$W/before")" $N
must "three files" as_user touch f0 f1 f2

fe_opt --state "$S" --linger 0 -- sh -c '
	chown 7:7 f0 && "$FE" checkpoint >"'"$W"'/ckpt" &&
	chown 8:8 f1 && "$FE" checkpoint >>"'"$W"'/ckpt" &&
	chown 9:9 f2' 2>"$W/err"
check_eq "the session ran, said nothing" "$?:$(cat "$W/err")" "0:"
check_match "checkpoints wrote every record" "$(cat "$W/ckpt")" \
	"checkpoint: $((N + 1)) records, [0-9]+ bytes.*checkpoint: $((N + 2)) records"
wait_until 20 gone
"$H/jdump" "$S/journal" | sort >"$W/after"
check_eq "all the records and the three new" \
	"$(comm -3 "$W/before" "$W/after" | tr -d '\t' | sort)" \
	"$(printf '%s\n' "$W/f0 7:7" "$W/f1 8:8" "$W/f2 9:9")"
st=$(fe_opt --state "$S" --linger 0 -- sh -c '"$FE" status; stat -c %u:%g f0 f1 f2')
check_match "loaded again, none dropped" "$st" \
	"loaded at start: $((N + 3)) records: $((N + 3)) kept, 0 re-keyed, 0 dropped"
check_match "the new records shown" "$st" '7:7
8:8
9:9$'
wait_until 20 gone
done_testing
