/*
 * The wire checks; see check.h and proto.h.  Each op's mask and tail rule
 * come from FE_OPS, its kind (which fields name a file) from
 * fe_op_kind(): a new op is checked by its table line.
 */
#include "check.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "fakeenv/map.h"
#include "fakeenv/proto.h"

#define PERM_BITS 07777u

static const uint32_t op_flags[FE_OP_COUNT] = {
#define OP_FLAGS(name, flags, tail, kind) [FE_OP_##name] = (flags),
	FE_OPS(OP_FLAGS)
#undef OP_FLAGS
};

static const unsigned char op_tail[FE_OP_COUNT] = {
#define OP_TAIL(name, flags, tail, kind) [FE_OP_##name] = (tail),
	FE_OPS(OP_TAIL)
#undef OP_TAIL
};

/* One path of a tail: 2..FE_PATH_MAX bytes whose only NUL is the last. */
static const char *path_problem(const char *p, uint32_t n)
{
	if (n < 2)
		return "empty path";
	if (n > FE_PATH_MAX)
		return "path too long";
	if (p[n - 1] != '\0')
		return "unterminated path";
	if (memchr(p, '\0', n - 1))
		return "NUL inside path";
	return NULL;
}

/* The check of the tail alone: one path (two for FE_TAIL_TWO), or
 * nothing when the op's rule allows. */
static const char *tail_problem(unsigned rule, const char *tail, uint32_t n)
{
	const char *nul;
	uint32_t first;

	if (n == 0)
		return rule == FE_TAIL_REQ || rule == FE_TAIL_TWO ?
			       "missing path" : NULL;
	if (rule == FE_TAIL_NONE)
		return "tail on an op that takes none";
	if (rule != FE_TAIL_TWO)
		return path_problem(tail, n);
	nul = memchr(tail, '\0', n);
	if (!nul || nul == tail + n - 1)
		return "missing second path";
	first = (uint32_t)(nul - tail) + 1;
	return path_problem(tail, first) ?: path_problem(nul + 1, n - first);
}

/* An xattr op's tail (FE_TAIL_X in proto.h). */
static const char *xtail_problem(uint16_t op, const char *tail, uint32_t n)
{
	struct fe_xhdr x;
	const char *name;
	uint32_t rest;

	if (n < sizeof(x))
		return "short xattr tail";
	memcpy(&x, tail, sizeof(x));
	if (x.pad)
		return "non-zero xattr padding";
	if (op == FE_OP_XLIST) {
		if (x.name_len || x.value_len)
			return "name or value on XLIST";
		if (x.size > FE_XATTR_LIST_MAX)
			return "xattr list size too large";
		return n == sizeof(x) ? NULL : "bytes after the xattr header";
	}
	if (x.name_len < 2 || x.name_len > FE_XATTR_NAME_MAX + 1)
		return "bad xattr name length";
	if (op != FE_OP_XSET && x.value_len)
		return "xattr value on an op that takes none";
	if (x.value_len > FE_XATTR_SIZE_MAX)
		return "xattr value too long";
	if (op == FE_OP_XGET ? x.size > FE_XATTR_SIZE_MAX : x.size != 0)
		return "bad xattr size";
	if ((uint64_t)n - sizeof(x) < (uint64_t)x.name_len + x.value_len)
		return "xattr tail shorter than its lengths";
	name = tail + sizeof(x);
	if (name[x.name_len - 1] != '\0')
		return "unterminated xattr name";
	if (memchr(name, '\0', x.name_len - 1))
		return "NUL inside xattr name";
	rest = n - (uint32_t)sizeof(x) - x.name_len - x.value_len;
	if (!rest)
		return NULL;
	if (op != FE_OP_XSET)
		return "bytes after the xattr name";
	return path_problem(name + x.name_len + x.value_len, rest);
}

static const char *req_problem(const void *buf, size_t len)
{
	struct fe_req req;
	bool names_file;
	uint32_t type;

	if (len < sizeof(req))
		return "short message";
	/* Copied out: buf need not be aligned. */
	memcpy(&req, buf, sizeof(req));
	if (len - sizeof(req) != req.tail_len)
		return "length does not match tail_len";
	if (req.tail_len > FE_TAIL_MAX)
		return "tail too long";
	if (req.version != FE_PROTO_VERSION)
		return "wrong protocol version";
	if (req.op == FE_OP_NONE || req.op >= FE_OP_COUNT)
		return "unknown op";
	if (req.flags & ~op_flags[req.op])
		return "flags outside the op's mask";
	names_file = fe_op_kind(req.op) & FE_OPK_FILE;
	if (req.btag && !names_file)
		return "birth-time tag on an op that names no file";
	if (req.real_mode & ~(uint32_t)(S_IFMT | PERM_BITS))
		return "bad real_mode";
	type = req.real_mode & S_IFMT;
	if (!fe_type_valid(type) && !(type == 0 && !names_file))
		return "bad real_mode type";
	if ((req.op == FE_OP_CHMOD || req.op == FE_OP_CREATE) &&
	    (req.flags & FE_F_MODE) && (req.mode & ~PERM_BITS))
		return "mode outside 07777";
	if (req.op == FE_OP_MKNOD && (req.flags & FE_F_MODE)) {
		if (req.mode & ~(uint32_t)(S_IFMT | PERM_BITS))
			return "bad mknod mode";
		switch (req.mode & S_IFMT) {
		case S_IFCHR:
		case S_IFBLK:
		case S_IFIFO:
		case S_IFSOCK:
		case S_IFREG:
			break;
		default:
			return "bad mknod type";
		}
	}
	/* Keys and devices fit the kernel's 32-bit dev_t (fakeenv/map.h):
	 * the slots keep 32 bits of them. */
	if (names_file && req.dev > FE_DEV_MAX)
		return "dev past 32 bits";
	if (req.op == FE_OP_MKNOD && (req.flags & FE_F_RDEV) &&
	    req.rdev > FE_DEV_MAX)
		return "rdev past 32 bits";
	/* (pid_t)ino must not turn negative: kill(-1, ...) would reach
	 * every process of the user. */
	if (req.op == FE_OP_SESSION && (req.ino > INT_MAX || req.dev > INT_MAX))
		return "session pid out of range";
	if (op_tail[req.op] == FE_TAIL_X)
		return xtail_problem(req.op, (const char *)buf + sizeof(req),
				     req.tail_len);
	return tail_problem(op_tail[req.op], (const char *)buf + sizeof(req),
			    req.tail_len);
}

int fe_req_check(const void *buf, size_t len, const char **why)
{
	const char *problem = req_problem(buf, len);

	if (why)
		*why = problem;
	return problem ? -EPROTO : 0;
}
