#!/bin/bash
# The shim across fork (also before the process's first call, and while
# other threads are mid-call; glibc's fork and a raw one), a vfork child
# that calls in (also while threads are mid-call, and one made by a fork
# child before its own first call, also while its parent's threads were
# mid-call at the fork), vfork+exec,
# posix_spawn, threads, a signal handler calling stat during the main
# thread's round trips, closefrom and dup2 over the shim's fd.
. "$(dirname "$0")/lib.sh"

for c in fork fork-quiet fork-busy rawfork-busy fork-vfork fork-vfork-busy \
	vfork-call vfork-quiet vfork-busy vfork-exec spawn threads signal \
	closefrom dup2; do
	must "mkdir $c" as_user mkdir -p "$c"
	check_eq "$c: chown and stat stay faked" "$(fe "$H"/proc $c "$c" "$H"/st 2>&1)" ok
done
# The fallback for kernels without MADV_WIPEONFORK: an atfork handler.
for c in fork fork-quiet fork-busy rawfork-busy fork-vfork fork-vfork-busy \
	vfork-call vfork-quiet vfork-busy; do
	must "mkdir atfork-$c" as_user mkdir -p "atfork-$c"
	check_eq "$c with FAKEENV_ATFORK=1 (the pre-4.14 kernel path)" \
		"$(fe env FAKEENV_ATFORK=1 "$H"/proc $c "atfork-$c" 2>&1)" ok
done
check_ne "natively the same helper fails (the test can fail)" \
	"$(as_user "$H"/proc fork fork 2>&1)" ok
done_testing
