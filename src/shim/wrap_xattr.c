/*
 * Extended attributes and capabilities.  The names a real filesystem
 * refuses to an unprivileged user (security.*, trusted.*,
 * system.posix_acl_access, system.posix_acl_default: "daemon names") are
 * kept by the daemon per inode and never written for real; every other
 * name goes to the real file untouched.  Reading is free of round trips
 * for a file the shared table does not mark FE_REC_XATTR, and free of any
 * extra call while no record in the session has xattrs (ls -l asks for
 * ACLs and SELinux labels of every file).  The daemon's names lie over
 * the real ones: get answers from the daemon first, then the real file;
 * list merges both without duplicates.
 *
 * capget and capset answer as for a fake root: full permitted and
 * effective sets, which capset may lower and raise again within the
 * permitted set, remembered per process (not per thread) until exec; a
 * fake non-root has no effective set until it raises one.
 */
#include "shim.h"

#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

/* The file an xattr call names: fd >= 0, else path (flags:
 * AT_SYMLINK_NOFOLLOW for the l* forms). */
struct xt {
	int fd;
	const char *path;
	int flags;
};

#define XT_PATH(p) ((struct xt){.fd = -1, .path = (p), .flags = 0})
#define XT_LINK(p)                                                             \
	((struct xt){.fd = -1, .path = (p), .flags = AT_SYMLINK_NOFOLLOW})
#define XT_FD(f) ((struct xt){.fd = (f), .path = NULL, .flags = 0})

static bool prefixed(const char *name, const char *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

static bool is_acl(const char *name)
{
	return !strcmp(name, FE_XATTR_ACL_ACCESS) ||
	       !strcmp(name, FE_XATTR_ACL_DEFAULT);
}

/* A name the daemon keeps. */
static bool daemon_name(const char *name)
{
	return name && (prefixed(name, "security.") ||
			prefixed(name, "trusted.") || is_acl(name));
}

/* The wrappers' exit for ssize_t results: fe_ret()'s rules. */
static ssize_t xret(ssize_t r, int saved)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	errno = saved;
	return r;
}

/* ---- the real calls, 0/size or -errno ---- */

static ssize_t neg(ssize_t r)
{
	return r < 0 ? -errno : r;
}

static ssize_t x_get(const struct xt *t, const char *name, void *v, size_t n)
{
	if (t->fd >= 0)
		return neg(REAL(fgetxattr, t->fd, name, v, n));
	if (t->flags)
		return neg(REAL(lgetxattr, t->path, name, v, n));
	return neg(REAL(getxattr, t->path, name, v, n));
}

static ssize_t x_set(const struct xt *t, const char *name, const void *v,
		     size_t n, int flags)
{
	if (t->fd >= 0)
		return neg(REAL(fsetxattr, t->fd, name, v, n, flags));
	if (t->flags)
		return neg(REAL(lsetxattr, t->path, name, v, n, flags));
	return neg(REAL(setxattr, t->path, name, v, n, flags));
}

static ssize_t x_list(const struct xt *t, char *list, size_t n)
{
	if (t->fd >= 0)
		return neg(REAL(flistxattr, t->fd, list, n));
	if (t->flags)
		return neg(REAL(llistxattr, t->path, list, n));
	return neg(REAL(listxattr, t->path, list, n));
}

static ssize_t x_remove(const struct xt *t, const char *name)
{
	if (t->fd >= 0)
		return neg(REAL(fremovexattr, t->fd, name));
	if (t->flags)
		return neg(REAL(lremovexattr, t->path, name));
	return neg(REAL(removexattr, t->path, name));
}

static int stat_of(const struct xt *t, struct stat *st, uint32_t *btag)
{
	return t->fd >= 0 ?
		       fe_sys_statat(t->fd, "", AT_EMPTY_PATH, st, btag) :
		       fe_sys_statat(AT_FDCWD, t->path, t->flags, st, btag);
}

/* Whether the daemon keeps xattrs for the file: 0 (no: no round trip),
 * 1, or -1 (the mapping cannot tell: ask). */
static int held(const struct stat *st, uint32_t btag)
{
	struct fe_view v;
	int r = fe_map_view_st(st, btag, &v);

	if (r == 0)
		return 0;
	if (r == 1)
		return v.xattr ? 1 : 0;
	return -1;
}

/* What the fake ids may do with a daemon name (write: set or remove), as
 * the kernel asks it of the real ones: root anything; others an ACL of
 * their own file only; trusted.* is not even readable without
 * CAP_SYS_ADMIN. */
static int may(const struct stat *st, uint32_t btag, const char *name,
	       bool write)
{
	struct fe_meta m;

	if (fe_cred_euid() == 0)
		return 0;
	if (prefixed(name, "trusted."))
		return write ? -EPERM : -ENODATA;
	if (!write)
		return 0;
	if (!is_acl(name))
		return -EPERM;
	fe_meta_faked(st, btag, &m);
	return fe_cred_fsuid() == m.uid ? 0 : -EPERM;
}

/* ---- the daemon's side ---- */

/* XGET or XLIST (name NULL) of the file of st into buf (size bytes, 0:
 * how many).  Returns the length or -errno (-EHOSTDOWN and the like when
 * the daemon cannot answer). */
static ssize_t d_read(const struct stat *st, uint32_t btag, const char *name,
		      void *buf, size_t size, size_t max)
{
	struct fe_xhdr h = {0};
	struct iovec tail[2];
	struct fe_req req;
	struct fe_rep rep;
	size_t got;
	int r;

	fe_req_init(&req, name ? FE_OP_XGET : FE_OP_XLIST, st, btag);
	h.name_len = name ? (uint32_t)strlen(name) + 1 : 0;
	h.size = (uint32_t)(size > max ? max : size);
	tail[0] = (struct iovec){&h, sizeof(h)};
	tail[1] = (struct iovec){(void *)name, h.name_len};
	r = fe_conn_xcall(&req, tail, 2, &rep, buf, h.size, &got);
	if (r < 0)
		return r;
	if (rep.err < 0)
		return rep.err;
	return h.size ? (ssize_t)got : (ssize_t)rep.count[0];
}

/* XSET (value) or XDEL (value NULL) of name for the file t names.
 * Returns 0, the daemon's -errno, or -EIO when it cannot be reached. */
static int d_write(const struct xt *t, const struct stat *st, uint32_t btag,
		   const char *name,
		   const void *value, size_t size, int flags)
{
	char pbuf[FE_PATH_MAX];
	const char *hint = NULL;
	struct fe_xhdr h = {0};
	struct iovec tail[4];
	struct fe_req req;
	struct fe_rep rep;
	int n = 2, r;

	fe_req_init(&req, value ? FE_OP_XSET : FE_OP_XDEL, st, btag);
	h.name_len = (uint32_t)strlen(name) + 1;
	tail[0] = (struct iovec){&h, sizeof(h)};
	tail[1] = (struct iovec){(void *)name, h.name_len};
	if (value) {
		if (flags & XATTR_CREATE)
			req.flags |= FE_F_XCREATE;
		if (flags & XATTR_REPLACE)
			req.flags |= FE_F_XREPLACE;
		h.value_len = (uint32_t)size;
		tail[n++] = (struct iovec){(void *)value, size};
		/* A new record needs a path for the journal's check. */
		hint = t->fd >= 0
			   ? fe_fdpath(t->fd, pbuf, sizeof(pbuf))
			   : fe_abspath(AT_FDCWD, t->path, pbuf, sizeof(pbuf));
		if (hint)
			tail[n++] =
			    (struct iovec){(void *)hint, strlen(hint) + 1};
	}
	r = fe_conn_xcall(&req, tail, n, &rep, NULL, 0, NULL);
	return r < 0 ? -EIO : rep.err;
}

/* ---- the cores ---- */

static ssize_t get_core(const struct xt *t, const char *name, void *v,
			size_t size)
{
	struct stat st;
	uint32_t btag;
	ssize_t r;

	if (!daemon_name(name) || fe_map_xattrs() == 0 || stat_of(t, &st, &btag) < 0)
		return x_get(t, name, v, size);
	r = may(&st, btag, name, false);
	if (r < 0)
		return r;
	if (held(&st, btag) == 0)
		return x_get(t, name, v, size);
	r = d_read(&st, btag, name, v, size, FE_XATTR_SIZE_MAX);
	/* Not kept (or no daemon): the real file's, if any. */
	return r >= 0 || r == -ERANGE ? r : x_get(t, name, v, size);
}

/* Drop from the daemon's names at d (n bytes) those the real list (rn
 * bytes at real) holds too, and trusted.* for a fake non-root.  Returns
 * the bytes left. */
static size_t merge(const char *real, size_t rn, char *d, size_t n)
{
	size_t in = 0, out = 0;

	while (in < n) {
		size_t len = strnlen(d + in, n - in) + 1;
		bool drop = fe_cred_euid() != 0 && prefixed(d + in, "trusted.");

		for (size_t i = 0; !drop && i < rn;
		     i += strnlen(real + i, rn - i) + 1)
			drop = !strcmp(real + i, d + in);
		if (!drop) {
			memmove(d + out, d + in, len);
			out += len;
		}
		in += len;
	}
	return out;
}

/*
 * The real list, then the daemon's names after it.  The size query (size
 * 0) answers the sum of both, which a real name the daemon also keeps
 * makes larger than the list: enough room, as callers need.
 */
static ssize_t list_core(const struct xt *t, char *list, size_t size)
{
	ssize_t n = x_list(t, list, size), d;
	struct stat st;
	uint32_t btag;

	if (fe_map_xattrs() == 0)
		return n;
	if (n == -EOPNOTSUPP)
		n = 0; /* a filesystem without xattrs: the daemon's alone */
	if (n < 0 && n != -ERANGE)
		return n;
	if (stat_of(t, &st, &btag) < 0 || held(&st, btag) == 0)
		return n;
	if (n < 0)
		return n;
	if (size == 0) {
		d = d_read(&st, btag, NULL, NULL, 0, FE_XATTR_LIST_MAX);
		return d < 0 ? n : n + d;
	}
	if ((size_t)n == size) {
		d = d_read(&st, btag, NULL, NULL, 0, FE_XATTR_LIST_MAX);
		return d > 0 ? -ERANGE : n;
	}
	d = d_read(&st, btag, NULL, list + n, size - (size_t)n, FE_XATTR_LIST_MAX);
	if (d == -ERANGE)
		return d;
	if (d <= 0)
		return n;
	return n + (ssize_t)merge(list, (size_t)n, list + n, (size_t)d);
}

static int set_core(const struct xt *t, const char *name, const void *v,
		    size_t size, int flags)
{
	struct stat st;
	uint32_t btag;
	size_t nl;
	int r;

	if (!daemon_name(name))
		return (int)x_set(t, name, v, size, flags);
	nl = strlen(name);
	if (nl == 0 || nl > FE_XATTR_NAME_MAX)
		return -ERANGE;
	if (size > FE_XATTR_SIZE_MAX)
		return -E2BIG;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	if (size && !v)
		return -EFAULT;
	r = stat_of(t, &st, &btag);
	if (r < 0)
		return r;
	r = may(&st, btag, name, true);
	if (r < 0)
		return r;
	if (is_acl(name) && S_ISLNK(st.st_mode))
		return -EOPNOTSUPP;
	r = fe_acl_as_chmod(t->fd, t->path, t->flags, name, v, size);
	if (r <= 0) {
		/* A minimal ACL replaces an extended one: the kernel keeps
		 * nothing then. */
		if (r == 0 && held(&st, btag) != 0)
			(void)d_write(t, &st, btag, name, NULL, 0, 0);
		return r;
	}
	return d_write(t, &st, btag, name, v ? v : "", size, flags);
}

static int remove_core(const struct xt *t, const char *name)
{
	struct stat st;
	uint32_t btag;
	ssize_t r;

	if (!daemon_name(name))
		return (int)x_remove(t, name);
	r = stat_of(t, &st, &btag);
	if (r < 0)
		return (int)r;
	r = may(&st, btag, name, true);
	if (r < 0)
		return (int)r;
	if (fe_map_xattrs() != 0 && held(&st, btag) != 0) {
		r = d_write(t, &st, btag, name, NULL, 0, 0);
		if (r != -ENODATA && r != -EIO)
			return (int)r;
	}
	/* Not kept: the real file's, when it has one (and its refusal). */
	r = x_get(t, name, NULL, 0);
	return r == -ENODATA ? -ENODATA : (int)x_remove(t, name);
}

/* ---- the wrappers ---- */

int setxattr(const char *path, const char *name, const void *value, size_t size,
	     int flags)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(setxattr, path, name, value, size, flags);
	return fe_ret(set_core(&XT_PATH(path), name, value, size, flags),
		      errno);
}

int lsetxattr(const char *path, const char *name, const void *value,
	      size_t size, int flags)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(lsetxattr, path, name, value, size, flags);
	return fe_ret(set_core(&XT_LINK(path), name, value, size, flags),
		      errno);
}

int fsetxattr(int fd, const char *name, const void *value, size_t size,
	      int flags)
{
	if (!fe_faking_at(fd, ""))
		return REAL(fsetxattr, fd, name, value, size, flags);
	return fe_ret(set_core(&XT_FD(fd), name, value, size, flags), errno);
}

ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(getxattr, path, name, value, size);
	return xret(get_core(&XT_PATH(path), name, value, size), errno);
}

ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(lgetxattr, path, name, value, size);
	return xret(get_core(&XT_LINK(path), name, value, size), errno);
}

ssize_t fgetxattr(int fd, const char *name, void *value, size_t size)
{
	if (!fe_faking_at(fd, ""))
		return REAL(fgetxattr, fd, name, value, size);
	return xret(get_core(&XT_FD(fd), name, value, size), errno);
}

ssize_t listxattr(const char *path, char *list, size_t size)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(listxattr, path, list, size);
	return xret(list_core(&XT_PATH(path), list, size), errno);
}

ssize_t llistxattr(const char *path, char *list, size_t size)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(llistxattr, path, list, size);
	return xret(list_core(&XT_LINK(path), list, size), errno);
}

ssize_t flistxattr(int fd, char *list, size_t size)
{
	if (!fe_faking_at(fd, ""))
		return REAL(flistxattr, fd, list, size);
	return xret(list_core(&XT_FD(fd), list, size), errno);
}

int removexattr(const char *path, const char *name)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(removexattr, path, name);
	return fe_ret(remove_core(&XT_PATH(path), name), errno);
}

int lremovexattr(const char *path, const char *name)
{
	if (!fe_faking_at(AT_FDCWD, path))
		return REAL(lremovexattr, path, name);
	return fe_ret(remove_core(&XT_LINK(path), name), errno);
}

int fremovexattr(int fd, const char *name)
{
	if (!fe_faking_at(fd, ""))
		return REAL(fremovexattr, fd, name);
	return fe_ret(remove_core(&XT_FD(fd), name), errno);
}

/* ---- capabilities ---- */

/* The sets capset left in this process (not per thread, as the kernel
 * keeps them: a fake root's threads all have everything anyway).  An
 * exec starts afresh with the full sets, as root's exec does. */
static struct {
	int set; /* 0: never capset, the sets are full */
	uint32_t eff[2], perm[2], inh[2];
} caps;

/* Every capability the kernel knows: bits 0..cap_last_cap. */
static void full_set(uint32_t out[2])
{
	static int last = -1;
	int l = __atomic_load_n(&last, __ATOMIC_RELAXED);

	if (l < 0) {
		char buf[16] = "";
		int saved = errno;
		long fd = syscall(SYS_openat, AT_FDCWD,
				  "/proc/sys/kernel/cap_last_cap",
				  O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			(void)!syscall(SYS_read, (int)fd, buf, sizeof(buf) - 1);
			syscall(SYS_close, (int)fd);
		}
		errno = saved;
		l = 0;
		for (char *p = buf; *p >= '0' && *p <= '9'; p++)
			l = l * 10 + (*p - '0');
		if (l <= 0 || l > 63)
			l = CAP_LAST_CAP;
		__atomic_store_n(&last, l, __ATOMIC_RELAXED);
	}
	out[0] = l >= 31 ? ~0u : (1u << (l + 1)) - 1;
	out[1] = l >= 63 ? ~0u : l >= 32 ? (1u << (l - 31)) - 1 : 0;
}

/* Sets a header version says the caller passes: 1 or 2, 0 unknown. */
static int cap_words(const struct __user_cap_header_struct *h)
{
	switch (h->version) {
	case _LINUX_CAPABILITY_VERSION_1:
		return 1;
	case _LINUX_CAPABILITY_VERSION_2:
	case _LINUX_CAPABILITY_VERSION_3:
		return 2;
	}
	return 0;
}

static bool cap_self(const struct __user_cap_header_struct *h)
{
	return h->pid == 0 || h->pid == getpid();
}

/*
 * The real call first (it checks the header, and answers version probes
 * and other processes), then this process's sets: what capset left, else
 * every capability permitted, and effective while the fake euid is 0.  A
 * fake non-root keeps the permitted set, as a process that set
 * PR_SET_KEEPCAPS before leaving root does (setpriv, capsh), and may
 * raise its effective set within it: looser than the kernel, which
 * clears both at such a change without KEEPCAPS and at exec.
 */
int capget(cap_user_header_t hdr, cap_user_data_t data)
{
	uint32_t full[2];
	int saved = errno, r, n;

	r = REAL(capget, hdr, data);
	if (r < 0 || !fe_faking() || !hdr || !data || !cap_self(hdr) ||
	    !(n = cap_words(hdr)))
		return r;
	full_set(full);
	for (int i = 0; i < n; i++) {
		data[i].permitted = caps.set ? caps.perm[i] : full[i];
		data[i].effective = caps.set		  ? caps.eff[i]
				    : fe_cred_euid() == 0 ? full[i]
							  : 0;
		if (caps.set)
			data[i].inheritable = caps.inh[i];
	}
	errno = saved;
	return 0;
}

/*
 * capset of this process: the new permitted set within the old one, the
 * effective set within the new permitted one, any inheritable set (root
 * has CAP_SETPCAP), else EPERM, as the kernel; never the real call,
 * which an unprivileged process could not make.  Other processes: the
 * real call.
 */
int capset(cap_user_header_t hdr, const cap_user_data_t data)
{
	uint32_t perm[2], eff[2], inh[2], old[2];
	int n;

	if (!fe_faking() || !hdr || !data || !cap_self(hdr))
		return REAL(capset, hdr, data);
	n = cap_words(hdr);
	if (!n) {
		hdr->version = _LINUX_CAPABILITY_VERSION_3;
		return fe_ret(-EINVAL, errno);
	}
	full_set(old);
	if (caps.set)
		memcpy(old, caps.perm, sizeof(old));
	for (int i = 0; i < 2; i++) {
		perm[i] = i < n ? data[i].permitted : 0;
		eff[i] = i < n ? data[i].effective : 0;
		inh[i] = i < n ? data[i].inheritable : 0;
		if ((perm[i] & ~old[i]) || (eff[i] & ~perm[i]))
			return fe_ret(-EPERM, errno);
	}
	memcpy(caps.perm, perm, sizeof(perm));
	memcpy(caps.eff, eff, sizeof(eff));
	memcpy(caps.inh, inh, sizeof(inh));
	caps.set = 1;
	return 0;
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family xattr). */
#define FE_HERE_xattr 1
#include "self.h"
