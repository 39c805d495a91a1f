#!/bin/bash
# Inode reuse: a file chowned 1234 and chmod 4755 (or a faked device) is
# removed, then new files are made until one gets the same inode number
# (ext4 and tmpfs reuse freed inodes at once).  The new file must show
# 0:0 and its own real mode: the record went with the last link, or the
# creation cleared it.  One case per removal entry point and per creator.
. "$(dirname "$0")/lib.sh"

out=$(fe sh -c '
	umask 022
	# reuse NAME KIND(f|d|c) REMOVE CREATE: REMOVE and CREATE are shell
	# snippets using $v (the victim) and $n (the new name).
	reuse() {
		name=$1 kind=$2 remove=$3 create=$4 v=v-$1
		case $kind in
		f) touch $v && chown 1234:1234 $v && chmod 4755 $v ;;
		d) mkdir $v && chown 1234:1234 $v && chmod 6755 $v ;;
		c) mknod $v c 5 1 && chown 1234:1234 $v ;;
		esac || { echo "$name setup-failed"; return; }
		ino=$(stat -c %i $v)
		eval "$remove" >/dev/null || { echo "$name remove-failed"; return; }
		i=0
		while [ $i -lt 3000 ]; do
			i=$((i + 1)); n=n-$name-$i
			eval "$create" >/dev/null || { echo "$name create-failed"; return; }
			if [ "$(stat -c %i $n)" = "$ino" ]; then
				echo "$name $($H/st lstat $n)"
				return
			fi
		done
		echo "$name no-reuse"
	}
	reuse unlink-touch f "\$H/rmv unlink \$v" "touch \$n"
	reuse unlinkat-open f "\$H/rmv unlinkat \$v" "\$H/mk open \$n"
	reuse remove-creat f "\$H/rmv remove \$v" "\$H/mk creat \$n"
	reuse rm-fopen f "rm -f \$v" "\$H/mk fopen \$n"
	reuse rename-over-open64 f "touch w; \$H/rmv rename w \$v" "\$H/mk open64 \$n"
	reuse renameat2-over-creat64 f "touch w2; \$H/rmv renameat2 w2 \$v" "\$H/mk creat64 \$n"
	reuse unlink-mkfifo f "\$H/rmv unlink \$v" "\$H/node mkfifo \$n 644"
	reuse unlink-symlink f "\$H/rmv unlink \$v" "ln -s target \$n"
	reuse device-touch c "\$H/rmv unlink \$v" "touch \$n"
	reuse rmdir-mkdir d "\$H/rmv rmdir \$v" "mkdir \$n"
	reuse unlinkat-dir-mkdirat d "\$H/rmv unlinkat-dir \$v" "\$H/mk mkdirat \$n"
	reuse rmdir-touch d "\$H/rmv rmdir \$v" "touch \$n"
' 2>&1)
check_eq "session exits 0" "$?" 0
get() { pick "$1" <<<"$out"; }

expect() {
	local name=$1 want=$2 got
	got=$(get "$name")
	if [ "$got" = no-reuse ]; then
		ok "$name: new file at a reused inode is clean # SKIP the inode was not reused in 3000 creations"
	else
		check_eq "$name: new file at a reused inode is 0:0, not setuid" "$got" "$want"
	fi
}
expect unlink-touch "0 0 100644 0 0"
expect unlinkat-open "0 0 100644 0 0"
expect remove-creat "0 0 100644 0 0"
expect rm-fopen "0 0 100644 0 0"
expect rename-over-open64 "0 0 100644 0 0"
expect renameat2-over-creat64 "0 0 100644 0 0"
expect unlink-mkfifo "0 0 10644 0 0"
expect unlink-symlink "0 0 120777 0 0"
expect device-touch "0 0 100644 0 0"
expect rmdir-mkdir "0 0 40755 0 0"
expect unlinkat-dir-mkdirat "0 0 40755 0 0"
expect rmdir-touch "0 0 100644 0 0"
done_testing
