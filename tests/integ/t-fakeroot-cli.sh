#!/bin/bash
# fakeroot 1.31's command line, whole, through a symlink named fakeroot
# (as /usr/bin/fakeroot is, through /etc/alternatives, once the .deb's
# alternative is chosen) and through the name fakeenv: -l/--lib,
# --faked/-f, -s, -i, -u/--unknown-is-real, -b/--fd-base (ignored), -h,
# -v, --, and the first non-option as the command.  FAKEROOTKEY is set in
# the session, to the daemon's socket, and kept across env -i.
. "$(dirname "$0")/lib.sh"

unset FAKEROOTKEY
BIN=$T/bin
mkdir -p "$BIN" "$T/alt"
ln -s "$FE" "$BIN/fakeroot"
ln -s "$FE" "$BIN/fakeenv"
# The daemon and the library the launcher would pick (a private copy
# under make valgrind).
REAL_DAEMON=$(readlink -f "$(dirname "$FE")/fakeenvd")
REAL_LIB=$(readlink -f "$(dirname "$FE")/libfakeenv.so")
# -l: a copy of the library elsewhere, so that the session shows which
# one it preloads.  --faked: a daemon that leaves a mark, then is ours.
cp "$REAL_LIB" "$T/alt/libfakeenv.so"
cat >"$T/alt/faked" <<EOS
#!/bin/sh
echo ran >>"$W/faked-ran.\$PPID"
exec "$REAL_DAEMON" "\$@"
EOS
# A program called status: under the name fakeroot it is the command.
printf '#!/bin/sh\necho the status program "$@"\n' >"$BIN/status"
chmod 0755 "$BIN" "$T/alt" "$T/alt/faked" "$BIN/status"
chmod 0644 "$T/alt/libfakeenv.so"
ALT_LIB=$(readlink -f "$T/alt/libfakeenv.so")
VERSION=$(as_user "$FE" --version | awk '{ print $2 }')

as_user touch mine
check_eq "natively FAKEROOTKEY is not set (the checks can fail)" \
	"$(as_user printenv FAKEROOTKEY)" ""
check_eq "natively the test file is the test user's" \
	"$(as_user stat -c %u mine)" "$TUID"

for name in fakeroot fakeenv; do
	N=$BIN/$name

	# -v and --version: fakeroot's own line first under its name.
	if [ $name = fakeroot ]; then
		want="fakeroot version 1.31 (fakeenv $VERSION)"
	else
		want="fakeenv $VERSION"
	fi
	check_eq "$name -v" "$(as_user "$N" -v 2>&1; echo "rc=$?")" "$want
rc=0"
	check_eq "$name --version" "$(as_user "$N" --version 2>&1)" "$want"
	[ $name = fakeroot ] &&
		check_eq "fakeroot -v: the third word is fakeroot's version, as scripts read it" \
			"$(as_user "$N" -v | cut -d' ' -f3)" "1.31"
	check_match "$name -h" "$(as_user "$N" -h 2>&1; echo "rc=$?")" \
		"^Usage: .*--fd-base FD.*rc=0$"
	check_match "$name --help" "$(as_user "$N" --help 2>&1)" "-l, --lib LIBRARY"

	# The command, with and without --; its own options stay its own.
	check_eq "$name CMD (no --): the first non-option is the command" \
		"$(as_user "$N" stat -c %u:%g mine 2>&1)" "0:0"
	check_eq "$name -- CMD" "$(as_user "$N" -- stat -c %u:%g mine 2>&1)" "0:0"
	check_eq "$name with no CMD runs \$SHELL" \
		"$(echo 'id -u' | as_user env SHELL=/bin/sh "$N" 2>&1)" "0"

	# -u, --unknown-is-real.
	check_eq "$name -u" "$(as_user "$N" -u stat -c %u mine 2>&1)" "$TUID"
	check_eq "$name --unknown-is-real" \
		"$(as_user "$N" --unknown-is-real stat -c %u mine 2>&1)" "$TUID"

	# -s FILE, then -i FILE; and fakeroot's -i FILE -s FILE.
	as_user touch "f-$name"
	check_eq "$name -s FILE saves" \
		"$(as_user "$N" -s "j-$name" chown 7:8 "f-$name" 2>&1; echo "rc=$?")" "rc=0"
	check_eq "$name -i FILE loads" \
		"$(as_user "$N" -i "j-$name" stat -c %u:%g "f-$name" 2>&1)" "7:8"
	check_eq "$name -i FILE -s FILE updates" \
		"$(as_user "$N" -i "j-$name" -s "j-$name" chown 9:10 "f-$name" 2>&1
		   as_user "$N" -i "j-$name" stat -c %u:%g "f-$name" 2>&1)" "9:10"

	# -l LIBRARY, --lib LIBRARY: that library is the one preloaded.
	for opt in -l --lib; do
		check_eq "$name $opt LIBRARY preloads it" \
			"$(as_user "$N" $opt "$T/alt/libfakeenv.so" sh -c \
				'echo "$FAKEENV_LIB $LD_PRELOAD"; stat -c %u mine' 2>&1)" \
			"$ALT_LIB ${SAN_PRE:+$SAN_PRE:}$ALT_LIB
0"
	done
	check_eq "$name -l with a relative path: made absolute" \
		"$(cd "$T/alt" && as_user "$N" -l ./libfakeenv.so sh -c 'cd / && echo $FAKEENV_LIB && id -u' 2>&1)" \
		"$ALT_LIB
0"
	check_match "$name -l MISSING fails with 125" \
		"$(as_user "$N" -l "$T/alt/nope.so" true 2>&1; echo "rc=$?")" \
		"-l $T/alt/nope.so: No such file or directory.*rc=125$"

	# --faked BINARY, -f BINARY: that program is started as the daemon.
	for opt in --faked -f; do
		rm -f "$W"/faked-ran.*
		out=$(as_user "$N" $opt "$T/alt/faked" stat -c %u mine 2>&1)
		check_eq "$name $opt BINARY: the session works" "$out" "0"
		check_eq "$name $opt BINARY: BINARY was started as the daemon" \
			"$(cat "$W"/faked-ran.* 2>/dev/null)" "ran"
	done
	check_match "$name --faked MISSING fails with 125" \
		"$(as_user "$N" --faked "$T/alt/nope" true 2>&1; echo "rc=$?")" \
		"--faked $T/alt/nope: No such file or directory.*rc=125$"

	# -b FD, --fd-base FD: accepted and ignored.
	check_eq "$name -b FD is accepted and ignored" \
		"$(as_user "$N" -b 3 stat -c %u mine 2>&1)" "0"
	check_eq "$name --fd-base FD is accepted and ignored" \
		"$(as_user "$N" --fd-base=40 -- stat -c %u mine 2>&1)" "0"
	check_match "$name: an unknown option is an error (125)" \
		"$(as_user "$N" -Z true 2>&1; echo "rc=$?")" "unknown option '-Z'.*rc=125$"

	# FAKEROOTKEY: set, the daemon's socket, kept across env -i and
	# env -u, the same in a nested call.
	key=$(as_user "$N" sh -c 'echo "$FAKEROOTKEY|$FAKEENV_SOCKET"' 2>&1)
	check_match "$name sets FAKEROOTKEY to the daemon's socket" "$key" "^(/[^|]+)\|\1$"
	check_eq "$name: FAKEROOTKEY kept across env -i" \
		"$(as_user "$N" sh -c 'k=$FAKEROOTKEY; [ -n "$k" ] && [ "$(env -i /usr/bin/printenv FAKEROOTKEY)" = "$k" ] && echo same' 2>&1)" \
		"same"
	check_eq "$name: FAKEROOTKEY kept across env -u FAKEROOTKEY" \
		"$(as_user "$N" sh -c 'k=$FAKEROOTKEY; [ -n "$k" ] && [ "$(env -u FAKEROOTKEY printenv FAKEROOTKEY)" = "$k" ] && echo same' 2>&1)" \
		"same"
	check_eq "$name: a nested call keeps the outer FAKEROOTKEY" \
		"$(as_user "$N" sh -c 'k=$FAKEROOTKEY; [ -n "$k" ] && [ "$("$0" printenv FAKEROOTKEY)" = "$k" ] && echo same' "$N" 2>&1)" \
		"same"
done

# The commands are fakeenv's only: fakeroot's first argument is CMD.
check_eq "fakeroot status runs a program called status" \
	"$(as_user env PATH="$BIN:$PATH" "$BIN/fakeroot" status -x 2>&1)" "the status program -x"
check_ne "fakeenv status is fakeenv's command" \
	"$(as_user env PATH="$BIN:$PATH" "$BIN/fakeenv" status 2>&1)" "the status program"
check_eq "fakeroot checkpoint is a command not found, not fakeenv's checkpoint" \
	"$(as_user "$BIN/fakeroot" checkpoint 2>&1; echo "rc=$?")" "fakeenv: checkpoint: command not found
rc=127"

done_testing
