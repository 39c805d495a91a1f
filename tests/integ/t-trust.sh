#!/bin/bash
# What a session must not trust: a daemon of another user (SO_PEERCRED,
# in the shim and the launcher), a state directory in a place another
# user can change, a socket file another user may connect to; and what
# another user's attempts may write to the daemon's log.  Uid 1 plays
# the other user; root sets the stage and knocks on the socket.
. "$(dirname "$0")/lib.sh"

must "a file" as_user touch f
LIB=$BUILD/libfakeenv.so

# --- the socket: 0600 whatever the umask -------------------------------
got=$(umask 000; fe sh -c 'stat -c %a "$FAKEENV_SOCKET"')
check_eq "socket file 0600 under umask 000" "$got" 600
got=$(umask 000; fe_opt --state st0 -- sh -c 'stat -c %a st0/sock' 2>/dev/null)
check_eq "--state socket file 0600 under umask 000" "$got" 600

# A TMPDIR another user may write is passed over for the next base.
must "an open TMPDIR" as_user mkdir -m 0777 opentmp
must "chmod (umask)" chmod 0777 opentmp
got=$(TMPDIR=$W/opentmp fe sh -c 'echo "$FAKEENV_SOCKET"')
check_match "a TMPDIR writable by others is not used" "$got" '^/tmp/fakeenv\.'

# --- one refusal, one message ------------------------------------------
# A daemon that refuses its journal resets the launcher's connection and
# exits a moment later; a slow exit (valgrind's leak check, a loaded
# machine) must not add "Connection reset by peer" to its own message.
# The launcher runs the fakeenvd beside it: here one that lingers 2 s
# after the real one has closed its socket and exited.
must "a launcher dir" mkdir "$T/slow"
cp "$BUILD/fakeenv" "$BUILD/libfakeenv.so" "$T/slow/"
cat >"$T/slow/fakeenvd" <<EOS
#!/bin/bash
"$BUILD/fakeenvd" "\$@" &
exec 3<&-
wait \$!
rc=\$?
sleep 2
exit \$rc
EOS
chmod 0755 "$T/slow" "$T/slow/fakeenvd"
as_user sh -c "printf %s 'not a journal at all' >bad.j"
as_user "$T/slow/fakeenv" -i bad.j -- true 2>err2; rc=$?
check_eq "a refused journal, a slow daemon exit: 125" "$rc" 125
check_match "... the refusal said" "$(cat err2)" 'journal bad.j: not a journal'
check_eq "... and nothing else" "$(wc -l <err2)" 1

if [ "$(id -u)" != 0 ]; then
	for c in "state dir in a directory uid 1 may write: refused" \
		"a shim pointed at uid 1's daemon: no faked owner" \
		"status of uid 1's state dir: refused" \
		"the launcher joining uid 1's daemon: refused" \
		"refusals do not fill the log"; do
		skip "$c" "needs root (a second user, and root to connect)"
	done
	done_testing
fi

# --- a place uid 1 can write --------------------------------------------
must "a directory anyone may write" as_user mkdir -m 0777 pub
must "chmod (umask)" chmod 0777 pub
must "the user's state dir in it" as_user mkdir -m 0700 pub/mine
out=$(fe_opt --state pub/mine -- true 2>&1); rc=$?
check_eq "state dir in a directory uid 1 may write: refused" "$rc" 125
check_match "... naming that directory" "$out" "$W/pub above it is writable by others \\(mode 0777\\)"
out=$(as_user "$FE" status --state pub/mine 2>&1); rc=$?
check_eq "... by status too" "$rc" 125
out=$(as_user "$FE" checkpoint --state pub/mine 2>&1); rc=$?
check_eq "... by checkpoint too" "$rc" 125
out=$(as_user "$FE" export --format mtree --state pub/mine . 2>&1); rc=$?
check_eq "... by export --state too" "$rc" 125
check_match "... each naming it" "$out" "$W/pub above it"

# Sticky, with the state dir's own parent ours: fine (as in /tmp).
must "sticky" chmod 1777 pub
must "a dir of ours in it" as_user mkdir -m 0755 pub/ours
out=$(fe_opt --state pub/ours/st -- true 2>&1); rc=$?
check_eq "below a sticky dir, in a dir of ours: accepted" "$rc:$out" "0:"
# ... but not when what is below the sticky dir is another user's.
must "uid 1's dir" setpriv --reuid=1 --regid=1 --clear-groups mkdir -m 0777 pub/theirs
out=$(fe_opt --state pub/theirs/st -- true 2>&1); rc=$?
check_eq "below a sticky dir, in uid 1's dir: refused" "$rc" 125
check_match "... naming it" "$out" "$W/pub/theirs above it is owned by uid 1"
must "not sticky" chmod 0777 pub

# --- uid 1's fake daemon ------------------------------------------------
must "uid 1's state dir" setpriv --reuid=1 --regid=1 --clear-groups mkdir -m 0755 pub/evil
setpriv --reuid=1 --regid=1 --clear-groups "$H/fakedaemon" "$W/pub/evil/sock" >fake.out 2>&1 &
fake=$!
wait_until 10 grep -qx ready fake.out || bail "the fake daemon did not start: $(cat fake.out)"
S=$W/pub/evil/sock

out=$(as_user env FAKEENV_SOCKET="$S" LD_PRELOAD="${SAN_PRE:+$SAN_PRE:}$LIB" stat -c %u:%g:%a f 2>err1)
check_eq "a shim pointed at uid 1's daemon: no faked owner" "$out" "0:0:$(stat -c %a f)"
check_match "... and it says why" "$(cat err1)" "refused: the daemon at $S runs as uid 1, not as this process \\(uid $TUID\\)"
out=$(as_user env FAKEENV_SOCKET="$S" LD_PRELOAD="${SAN_PRE:+$SAN_PRE:}$LIB" chown 7:7 f 2>&1); rc=$?
check_ne "... a chown there fails" "$rc" 0

out=$(as_user "$FE" status --state pub/evil 2>&1); rc=$?
check_eq "status of uid 1's state dir: refused" "$rc" 125
check_no "... and shows nothing of it" grep -q 4242 <<<"$out"
out=$(as_user env FAKEENV_SOCKET="$S" "$FE" status 2>&1); rc=$?
check_eq "status of uid 1's daemon as the session: refused" "$rc" 125
check_match "... saying why" "$out" "refused the daemon at $S: it runs as uid 1, not as you \\(uid $TUID\\)"
out=$(as_user env FAKEENV_SOCKET="$S" "$FE" checkpoint 2>&1); rc=$?
check_eq "checkpoint of uid 1's daemon: refused" "$rc" 125
out=$(as_user env FAKEENV_SOCKET="$S" "$FE" -- stat -c %u:%g f 2>&1); rc=$?
check_eq "the launcher joining uid 1's daemon: refused" "$rc" 125
check_match "... saying why" "$out" "refused the daemon at $S: it runs as uid 1"
kill "$fake"; wait "$fake" 2>/dev/null

# --- a process of another user given the session's socket -------------
fe sh -c 'echo "$FAKEENV_SOCKET" >sock2; while [ ! -e done2 ]; do sleep 0.05; done' 2>/dev/null &
p=$!
wait_until 10 test -s sock2
env FAKEENV_SOCKET="$(cat sock2)" LD_PRELOAD="${SAN_PRE:+$SAN_PRE:}$LIB" stat -c %u f >/dev/null 2>err3
check_match "root in the user's session: told it was refused" "$(cat err3)" "refused: the daemon at $(cat sock2) runs as uid $TUID, not as this process \(uid 0\)"
touch done2
wait $p

# --- other users knocking: the log stays small --------------------------
fe sh -c 'echo "$FAKEENV_SOCKET" >sock; while [ ! -e done ]; do sleep 0.05; done' 2>"$W/err" &
p=$!
wait_until 10 test -s sock
D=$(cat sock)
check_eq "root knocks 5000 times: refused each time" "$("$H/peer" "$D" many 5000 stats)" "answered 0 closed 5000"
check_eq "the user sends 5000 bad requests: each closed" "$(as_user "$H/peer" "$D" many 5000 short)" "answered 0 closed 5000"
check_match "the user is still served" "$(as_user "$H/peer" "$D" stats)" '^records 0 '
touch done
wait $p
# The daemon leaves after the launcher (which never waits for it), and
# writes its last summaries as it goes: on a loaded machine, after.
wait_until 10 grep -q 'more bad requests.*since the start' "$W/err"
lines=$(wc -l <"$W/err")
[ "$lines" -le 30 ] && ok "refusals do not fill the log ($lines lines)" ||
	fail "refusals do not fill the log" "$lines lines: $(head -c 600 "$W/err")"
check_eq "the first refusals are logged one by one" "$(grep -c 'refusing pid [0-9]*: uid 0 is not ours' "$W/err")" 5
check_match "the last summary counts them all" "$(grep 'more refused connections' "$W/err" | tail -1)" '\(5000 since the start\)$'
check_match "... and the bad requests" "$(grep 'more bad requests' "$W/err" | tail -1)" '\(5000 since the start\)$'
done_testing
