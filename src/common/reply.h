/*
 * The one check of a reply from the daemon, for both its clients (the
 * shim's connection and the launcher's session): what a well-formed
 * reply is must not differ between them.  Linked into the shim: no
 * allocation, errno left alone.
 */
#ifndef FE_COMMON_REPLY_H
#define FE_COMMON_REPLY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Whether the len bytes received at rep make a well-formed reply to a
 * request of op: STATUS's is one struct fe_status; every other is one
 * struct fe_rep, followed, for XGET and XLIST only, by exactly the
 * count[0] bytes it announces (or by none: a caller with no room asks
 * for the size).  Its err must be 0 or a -errno (-4095 to -1).  Only the
 * header is read at rep: the bytes after it may have gone to another
 * buffer of the same receive.  Returns 0, or -EPROTO; the caller then
 * takes the daemon's answer from err.
 */
int fe_rep_check(uint16_t op, const void *rep, size_t len);

#endif
