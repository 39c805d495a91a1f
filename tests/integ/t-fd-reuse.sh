#!/bin/bash
# What the shim learnt of an fd (its file, its path) holds only while the
# fd is the one it saw opened: closed by any of the ways a program has
# (close, dup2, dup3, close_range, closefrom, fclose of an fdopen'd
# stream, syscall(SYS_close), close of a dup, and libc's other names
# __close, __dup2, _IO_fclose) and its number given to another
# file behind the wrappers' back, an fchown and fchmod of that number
# land on the other file.  Then tar x and chown -R, which the kept
# paths serve, give the records and paths they gave before.
. "$(dirname "$0")/lib.sh"

if [ "$(uname -m)" != x86_64 ]; then
	skip "fd numbers reused behind the wrappers" "the helper's raw openat is x86_64 only"
	done_testing
	exit 0
fi

for how in close __close dup2 __dup2 dup3 close_range closefrom fclose _IO_fclose syscall fcntl; do
	must "B for $how" as_user touch "b.$how"
	out=$(fe sh -c '"$0" "$1" "a.$1" "b.$1" && stat -c "%u:%g %a" "a.$1" "b.$1"' \
		"$H/fdreuse" "$how" 2>&1)
	check_eq "$how, then the number reused: fchown and fchmod go to the new file" \
		"$out" "same fd
done
0:0 600
1234:5678 4755"
done

# tar x through the kept paths: every entry's owner and mode as tar cf
# reads them back, and every record under the path it has.
must "tree" as_user sh -c 'mkdir -p src/a/b && for i in 1 2 3 4 5 6; do echo $i >src/a/b/f$i; done && mkfifo src/a/p'
out=$(fe_opt -s "$W/x.fe" -- sh -c 'chown -R 7:8 src && chmod 4711 src/a/b/f2 &&
	chown 9:10 src/a/b/f3 && tar cf t.tar src && mkdir x &&
	tar xpf t.tar -C x && cd x && find . -printf "%U:%G %m %p\n" | sort' 2>&1)
check_eq "tar x: owners and modes as archived" "$out" \
"0:0 755 .
7:8 4711 ./src/a/b/f2
7:8 644 ./src/a/b/f1
7:8 644 ./src/a/b/f4
7:8 644 ./src/a/b/f5
7:8 644 ./src/a/b/f6
7:8 644 ./src/a/p
7:8 755 ./src
7:8 755 ./src/a
7:8 755 ./src/a/b
9:10 644 ./src/a/b/f3"
check_eq "tar x: each record under its own path" \
	"$(as_user "$H/jdump" "$W/x.fe" "$W/x" | sort)" \
"src 7:8
src/a 7:8
src/a/b 7:8
src/a/b/f1 7:8
src/a/b/f2 7:8
src/a/b/f3 9:10
src/a/b/f4 7:8
src/a/b/f5 7:8
src/a/b/f6 7:8
src/a/p 7:8"

# A directory renamed in the session while an fd of it is open: a file
# made through the fd afterwards is recorded under the new name.
must "dir" as_user mkdir -p r/old
fe_opt -s "$W/r.fe" -- "$H/renfd" r/old r/new >renfd.out 2>&1
check_eq "renfd ran" "$(cat renfd.out)" "done"
check_eq "files made through the fd of a renamed directory: their new paths" \
	"$(as_user "$H/jdump" "$W/r.fe" "$W/r" | sort)" \
"new 0:5
new/after 3:3
new/before 3:3"

done_testing
