/*
 * The POSIX ACL codec; see acl.h.  Linked into the shim: no libc call
 * that could allocate, lock or be wrapped.
 */
#include "acl.h"

#include <errno.h>

/* Tags (linux/posix_acl.h); each a bit, so that a set of them is a mask. */
enum {
	ACL_USER_OBJ = 0x01,
	ACL_USER = 0x02,
	ACL_GROUP_OBJ = 0x04,
	ACL_GROUP = 0x08,
	ACL_MASK = 0x10,
	ACL_OTHER = 0x20,
};

#define ACL_ONE_EACH (ACL_USER_OBJ | ACL_GROUP_OBJ | ACL_OTHER)

static uint32_t le16(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

/* Whether entry tag (id) may follow the entries seen so far. */
static bool entry_ok(uint32_t tag, uint32_t id, uint32_t prev_tag,
		     uint32_t prev_id, unsigned seen)
{
	if (tag < prev_tag)
		return false;
	switch (tag) {
	case ACL_USER:
	case ACL_GROUP:
		return tag != prev_tag || id > prev_id;
	case ACL_USER_OBJ:
	case ACL_GROUP_OBJ:
	case ACL_MASK:
	case ACL_OTHER:
		return !(seen & tag);
	}
	return false;
}

int fe_acl_parse(const void *value, size_t len, uint32_t *perm,
		 bool *minimal)
{
	const unsigned char *v = value;
	uint32_t prev_tag = 0, prev_id = 0, u = 0, g = 0, o = 0, m = 0;
	unsigned seen = 0;

	if (len < 4 || (len - 4) % 8 || le32(v) != 2)
		return -EINVAL;
	if (len == 4)
		return 0;
	for (size_t off = 4; off < len; off += 8) {
		uint32_t tag = le16(v + off), bits = le16(v + off + 2);
		uint32_t id = le32(v + off + 4);

		if (bits & ~7u || !entry_ok(tag, id, prev_tag, prev_id, seen))
			return -EINVAL;
		if (tag == ACL_USER_OBJ)
			u = bits;
		else if (tag == ACL_GROUP_OBJ)
			g = bits;
		else if (tag == ACL_MASK)
			m = bits;
		else if (tag == ACL_OTHER)
			o = bits;
		seen |= tag;
		prev_tag = tag;
		prev_id = id;
	}
	if ((seen & ACL_ONE_EACH) != ACL_ONE_EACH)
		return -EINVAL;
	if ((seen & (ACL_USER | ACL_GROUP)) && !(seen & ACL_MASK))
		return -EINVAL;
	*perm = u << 6 | ((seen & ACL_MASK) ? m : g) << 3 | o;
	*minimal = !(seen & (ACL_USER | ACL_GROUP | ACL_MASK));
	return 1;
}

void fe_acl_chmod(unsigned char *v, size_t len, uint32_t perm)
{
	bool mask = false;

	for (size_t off = 4; off + 8 <= len; off += 8)
		mask |= le16(v + off) == ACL_MASK;
	for (size_t off = 4; off + 8 <= len; off += 8) {
		uint32_t tag = le16(v + off), bits;

		if (tag == ACL_USER_OBJ)
			bits = perm >> 6 & 7;
		else if (tag == (mask ? ACL_MASK : ACL_GROUP_OBJ))
			bits = perm >> 3 & 7;
		else if (tag == ACL_OTHER)
			bits = perm & 7;
		else
			continue;
		v[off + 2] = (unsigned char)bits;
		v[off + 3] = 0;
	}
}
