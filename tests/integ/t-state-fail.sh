#!/bin/bash
# A --state session whose journal cannot be written is never silent.
# On a full tmpfs (root mounts it, 64 KiB, then fills it as the test
# user): the launcher says so and exits 125 when the interval checkpoints
# failed and its own last try failed too; `fakeenv status` shows the
# failure; the daemon that leaves with unwritten changes says so in
# DIR/unsaved, which the offline status, `fakeenv checkpoint --state` and
# the next launcher (once) report.  And a lingering daemon whose DIR was
# removed and made again writes nothing into the new one.
. "$(dirname "$0")/lib.sh"

daemons_gone() { no_procs "$DAEMON"; }

# --- a full disk -----------------------------------------------------------

if ! small_tmpfs FULL; then
	skip "a full disk is reported" "needs root to mount a small tmpfs"
else
	S=$FULL/st
	must "state dir" as_user mkdir "$S"
	# Until ENOSPC: dd's failure is the point.
	as_user dd if=/dev/zero of="$FULL/fill" bs=4k >/dev/null 2>&1
	must "the disk is full" test "$(stat -f -c %a "$FULL")" = 0
	must "files" as_user sh -c 'mkdir t && for i in $(seq 1 2000); do : >t/f$i; done'
	cat >run.sh <<'EOS'
chown -R 5:5 t
# Wait (polling, no deadline that matters) for an interval checkpoint to
# have failed, then show the status from inside the session.
i=0
while ! "$FE" status | grep -q '^last failure:' && [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1))
done
"$FE" status >status.out
exit 0
EOS
	out=$(fe_opt --state "$S" --checkpoint-interval 1 --linger 0 -- sh run.sh 2>&1); rc=$?
	check_eq "full disk: the launcher exits 125" "$rc" 125
	check_match "full disk: and says why" "$out" "fakeenv: cannot write the state to $S/journal: [0-9]+ changes not on disk .*No space left on device"
	check_match "full disk: status shows the failure" "$(grep '^last failure:' status.out)" \
		'^last failure: +checkpoint: No space left on device, at .* \([0-9]+ failed writes?, none written since\)'
	check_match "full disk: status keeps the changes unsaved" "$(grep '^unsaved changes:' status.out)" \
		'^unsaved changes: [1-9][0-9]* \(the last write failed'

	# The daemon leaves (linger 0) with its changes unwritten.
	wait_until 30 daemons_gone
	check_cmd "full disk: the daemon left" daemons_gone
	check_cmd "full disk: it left DIR/unsaved" test -f "$S/unsaved"
	out=$(as_user "$FE" status --state "$S" 2>&1)
	check_match "full disk: the offline status says changes were lost" "$out" \
		"not written: +.*could not be written to $S/journal( \\([^)]*\\))? by the daemon that left at .*: they are lost"
	out=$(as_user "$FE" checkpoint --state "$S" 2>&1); rc=$?
	check_ne "full disk: checkpoint afterwards fails" "$rc" 0
	if [[ $out == *"already on disk"* ]]; then
		fail "full disk: checkpoint afterwards does not say 'already on disk'" "$out"
	else
		ok "full disk: checkpoint afterwards does not say 'already on disk'"
	fi

	# Room again: the next launcher says it once, and the note goes.
	must "free the disk" rm -f "$FULL/fill"
	out=$(fe_opt --state "$S" --linger 0 -- true 2>&1); rc=$?
	check_eq "next launcher: exits 125" "$rc" 125
	check_match "next launcher: says the changes are lost" "$out" \
		"could not be written to $S/journal( \\([^)]*\\))? by the daemon that left at .*: they are lost"
	check_no "next launcher: its save removed DIR/unsaved" test -e "$S/unsaved"
	wait_until 30 daemons_gone
	out=$(fe_opt --state "$S" --linger 0 -- true 2>&1); rc=$?
	check_eq "the one after: exits 0 and says nothing" "$rc:$out" "0:"
	out=$(fe_opt --state "$S" --linger 0 -- false 2>&1); rc=$?
	check_eq "a failing command keeps its status" "$rc" 1
	wait_until 30 daemons_gone
fi

# --- a state directory removed and made again while its daemon lingers -----

R=$W/rst
must "files" as_user touch f g
must "old session" fe_opt --state "$R" --linger 3 -- chown 5:5 f
must "rm -rf DIR while its daemon lingers" as_user rm -rf "$R"
must "a new session in a new DIR" fe_opt --state "$R" --linger 0 -- chown 7:7 g
wait_until 30 daemons_gone
check_cmd "replaced DIR: the old daemon left" daemons_gone
out=$(fe_opt --state "$R" --linger 0 -- stat -c '%n %u:%g' f g 2>&1)
check_eq "replaced DIR: the new session's change survives, the old state does not come back" \
	"$(echo $out)" "f 0:0 g 7:7"
wait_until 30 daemons_gone
done_testing
