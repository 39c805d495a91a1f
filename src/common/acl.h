/*
 * POSIX ACLs in their xattr form, for the shim (a minimal ACL is a chmod)
 * and the daemon (an ACL it keeps stands for permission bits, and follows
 * a chmod): one reading of the kernel's format, so that what the shim
 * takes for a chmod is what the daemon would have taken.  Pure functions
 * on caller buffers: async-signal-safe, no allocation.
 */
#ifndef FE_COMMON_ACL_H
#define FE_COMMON_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The ACL at v (len bytes; linux/posix_acl_xattr.h: a u32 version 2,
 * then 8-byte entries {u16 tag, u16 perm, u32 id}, little-endian),
 * checked as the kernel does (posix_acl_from_xattr, posix_acl_valid):
 * entries in tag order, USER and GROUP ids increasing, one each of
 * USER_OBJ, GROUP_OBJ and OTHER, at most one MASK and one whenever there
 * are USER or GROUP entries, perms within rwx.  *perm gets the permission
 * bits it stands for (owner, mask or else group, other); *minimal whether
 * it is only USER_OBJ, GROUP_OBJ and OTHER, i.e. nothing but a chmod.
 * Returns 1, 0 for an ACL with no entry at all (the kernel takes it as
 * "remove the ACL"; *perm and *minimal untouched), or -EINVAL.
 */
int fe_acl_parse(const void *v, size_t len, uint32_t *perm, bool *minimal);

/* A chmod of a file with the access ACL at v: its owner, mask (or group)
 * and other entries take the bits of perm, as the kernel's
 * posix_acl_chmod.  Only whole entries are touched, so that a block that
 * is not a valid ACL (a journal may hold anything) is no danger. */
void fe_acl_chmod(unsigned char *v, size_t len, uint32_t perm);

#endif
