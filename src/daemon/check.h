/*
 * The wire checks: every message a client sends passes fe_req_check()
 * before anything acts on it, so that a bad message changes nothing and
 * closes only its own connection.  Pure: no table, no socket.
 */
#ifndef FE_DAEMON_CHECK_H
#define FE_DAEMON_CHECK_H

#include <stddef.h>

/*
 * Check a whole message of len bytes (buf need not be aligned): length ==
 * header + tail_len; version; op known; flags within the op's mask; btag
 * zero on an op that names no file (FE_OPK_FILE); the op's tail rule,
 * and a tail is a path of 2..FE_PATH_MAX bytes ending in its only NUL;
 * real_mode has no bits outside S_IFMT | 07777 and a valid file type
 * (type 0 allowed for the ops that name no file); an xattr op's tail
 * follows FE_TAIL_X (proto.h: lengths within the limits and adding up,
 * the name's only NUL its last byte, size within the op's limit, pad
 * zero, an XSET path as above); CHMOD and CREATE's FE_F_MODE mode has no
 * bits outside 07777; MKNOD's FE_F_MODE mode is a CHR, BLK, FIFO, SOCK or
 * REG type with no bits outside S_IFMT | 07777; SESSION's pid and group
 * are within pid_t.  Returns 0 or -EPROTO; *why (if given) then names the
 * broken rule.  Pure: reads buf only.
 */
int fe_req_check(const void *buf, size_t len, const char **why);

#endif
