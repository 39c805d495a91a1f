#!/bin/bash
# The helpers themselves fake nothing: run natively (outside any session)
# they show the real owner, and a chown by the unprivileged user fails.  So
# a faked result seen through them comes from the shim.
FE_OWN_PROGRAMS=1 # the build's helpers alone
. "$(dirname "$0")/lib.sh"

must "create f" as_user touch f
for c in stat lstat fstat fstatat fstatat-nofollow fstatat-empty stat64 \
	lstat64 fstat64 fstatat64 xstat lxstat fxstat fxstatat xstat64 \
	lxstat64 fxstat64 fxstatat64 statx statx-nofollow; do
	check_eq "native st $c shows the real owner" \
		"$(as_user "$H"/st $c f)" "$TUID $TGID 100644 0 0"
done
check_eq "native walk nftw shows the real owner" \
	"$(as_user "$H"/walk nftw f)" "f $TUID $TGID 100644"
check_eq "native chown by the test user is refused" \
	"$(as_user "$H"/own chown f 0 0)" "ERR EPERM"
check_eq "native mknod of a device by the test user is refused" \
	"$(as_user "$H"/node mknod d c 600 1 3)" "ERR EPERM"
check_eq "native creds show the real ids" "$(as_user "$H"/creds show)" \
	"getuid=$TUID geteuid=$TUID getgid=$TGID getegid=$TGID resuid=$TUID,$TUID,$TUID resgid=$TGID,$TGID,$TGID groups=-"
if [ "$(id -u)" = 0 ]; then
	check_eq "the test user is not root" "$(as_user id -u)" "$TUID"
	check_ne "the test user is unprivileged" "$TUID" 0
fi
done_testing
