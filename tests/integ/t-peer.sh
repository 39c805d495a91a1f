#!/bin/bash
# Who may talk to a session's daemon: the socket's directory is 0700 and
# the user's; another unprivileged user cannot reach the socket; root,
# who can, is refused by the daemon (SO_PEERCRED); malformed messages
# close only their own connection and change nothing.
. "$(dirname "$0")/lib.sh"

must "a file" as_user touch f
fe sh -c 'chown 7:7 f; echo "$FAKEENV_SOCKET" >sock; while [ ! -e done ]; do sleep 0.05; done; stat -c %u:%g f >after' 2>"$W/err" &
p=$!
wait_until 10 test -s sock
S=$(cat sock)
D=$(dirname "$S")
check_eq "socket directory: mode 0700" "$(stat -c %a "$D")" 700
check_eq "socket directory: the user's" "$(stat -c %u "$D")" "$TUID"
check_match "the user is served" "$(as_user "$H/peer" "$S" stats)" '^records 1 clients [0-9]+$'

if [ "$(id -u)" = 0 ]; then
	check_eq "another user cannot reach the socket" \
		"$(setpriv --reuid=1 --regid=1 --clear-groups "$H/peer" "$S" stats)" "ERR EACCES"
	check_eq "root reaches it and is refused" "$("$H/peer" "$S" stats)" "closed"
else
	ok "another user cannot reach the socket # SKIP not root"
	ok "root reaches it and is refused # SKIP not root"
fi
check_eq "a short message: closed" "$(as_user "$H/peer" "$S" short)" "closed"
check_eq "an unknown op: closed" "$(as_user "$H/peer" "$S" badop)" "closed"
check_match "still serving, nothing changed" "$(as_user "$H/peer" "$S" stats)" '^records 1 '
# A drain that closes a connection whose own wake-up is later in the same
# epoll batch (it was freed there, then read: a use after free).
check_eq "a drain closes a bad one-way sender of the same batch" \
	"$(as_user "$H/peer" "$S" drainclose)" "get answered bad closed
daemon serving"
# The change rings: entries are taken as the one-way messages they stand
# for, several times round the ring; a bad one closes its connection
# alone and changes nothing.
check_eq "a ring's entries are taken, round and round" \
	"$(as_user "$H/ringpeer" "$S" good 5000)" "records 5001"
for kind in badframe badlen badhead badwrap notoneway badversion badclose; do
	check_eq "a ring entry ($kind): closed" \
		"$(as_user "$H/ringpeer" "$S" "$kind")" "closed"
done
check_match "still serving after bad rings" "$(as_user "$H/peer" "$S" stats)" '^records 5001 '
touch done
wait $p
check_eq "the session's record intact" "$(cat after)" "7:7"
err=$(cat "$W/err")
if [ "$(id -u)" = 0 ]; then
	check_match "the refusal is logged" "$err" 'refusing pid [0-9]+: uid 0 is not ours'
fi
check_match "a bad ring entry is logged" "$err" 'bad ring entry \(bad frame\): closing'
check_match "the bad messages are logged" "$err" 'bad request \(short message, 10 bytes\)'
check_match "... each with its reason" "$err" 'bad request \(unknown op'
done_testing
