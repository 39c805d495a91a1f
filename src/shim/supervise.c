/*
 * The supervisor: it answers the calls the session's seccomp filter traps
 * (fakeenv/seccomp.h) in programs the preload cannot reach.  It runs as a
 * thread of the launcher, which loads this library with dlopen for it and
 * calls fakeenv_supervise(): the launcher is every session process's
 * ancestor (a subreaper), so that Yama's ptrace_scope 1 lets it read and
 * write their memory.  Nothing else of the launcher calls into the
 * library, so this thread may take the shim's process-wide fake ids as
 * each target's in turn.
 *
 * A call is answered by the shim's own wrapper, through syscall(2)'s
 * router: the target's strings and buffers copied over, its fds taken
 * with pidfd_getfd, its cwd opened through /proc, a call on a path
 * relative to the cwd turned into its *at form on that fd, the target's
 * fake ids in place; then the results written back into its memory.  One
 * set of rules, the shim's, for both kinds of program.  The
 * notification's id is checked once the arguments are read, before
 * anything is done: a target killed meanwhile (its pid maybe reused) gets
 * nothing done in its name.
 *
 * Every system call of its own is raw (fe_syscall): as the shim's,
 * never a wrapper.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/secarm.h"
#include "common/util.h"
#include "fakeenv/seccomp.h"

#ifdef FE_SEC_ARCH
#define FE_SEC_ARCH_OR_0 FE_SEC_ARCH
#else
#define FE_SEC_ARCH_OR_0 0
#endif

#define MAX_BUF (64 * 1024)   /* XATTR_SIZE_MAX: the kernel's bound */
#define MAX_GIDS 65536        /* NGROUPS_MAX */
#define STR_BUF (4096 + 64)   /* a string argument's buffer, PATH_MAX and
				 room for /proc/self made /proc/PID */

/* A trapped call's shape (fakeenv/seccomp.h). */
struct row {
	long nr;
	unsigned flags;
	unsigned char kind[6];
	unsigned char size; /* the size argument's index */
};

static const struct row rows[] = {
#define FE_SEC_ROW(nr, fl, k0, k1, k2, k3, k4, k5, sz) \
	{ nr, fl, { k0, k1, k2, k3, k4, k5 }, sz },
	FE_SEC_CALLS(FE_SEC_ROW)
#undef FE_SEC_ROW
};

static const struct row *row_of(long nr)
{
	for (size_t i = 0; i < FE_ARRAY_LEN(rows); i++)
		if (rows[i].nr == nr)
			return &rows[i];
	return NULL;
}

/* ---- one call ---- */

/* A call being answered: the arguments as the wrapper takes them, and
 * what must go back or be closed after. */
struct call {
	long nr;
	long a[6];
	const struct row *row;
	pid_t tid;
	struct proc *p;
	const struct lst *l; /* p's listener */
	int cwd;        /* the target's cwd, -1 until needed */
	int rfds[2];    /* directories in a chrooted target's root */
	int fds[6];     /* ours, to close */
	void *bufs[6];  /* ours, to free */
	size_t lens[6]; /* their sizes */
	char xpath[64 + 4096]; /* a path-only xattr call's path via cwd */
};

static long cwd_fd(struct call *c)
{
	char path[64];
	long fd;

	if (c->cwd >= 0)
		return c->cwd;
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)c->tid);
	fd = fe_sup_sys(SYS_openat, AT_FDCWD, (long)path,
		 O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0);
	if (fd < 0)
		return fd;
	c->cwd = (int)fd;
	return fd;
}

static void *buf_for(struct call *c, int i, size_t n)
{
	c->lens[i] = n;
	c->bufs[i] = calloc(1, n ? n : 1);
	return c->bufs[i];
}

static size_t size_arg(const struct call *c, const struct seccomp_notif *n)
{
	return (size_t)n->data.args[c->row->size];
}

/* The target's "/proc/self" and "/proc/thread-self" are not ours: name
 * its own (glibc's fchmodat with AT_SYMLINK_NOFOLLOW chmods
 * /proc/self/fd/N). */
static int proc_self(const struct call *c, char *s, size_t size)
{
	static const char self[] = "/proc/self", thr[] = "/proc/thread-self";
	char tail[4096];
	size_t n;

	if (!strncmp(s, self, sizeof(self) - 1) &&
	    (s[sizeof(self) - 1] == '/' || !s[sizeof(self) - 1]))
		n = sizeof(self) - 1;
	else if (!strncmp(s, thr, sizeof(thr) - 1) &&
		 (s[sizeof(thr) - 1] == '/' || !s[sizeof(thr) - 1]))
		n = sizeof(thr) - 1;
	else
		return 0;
	snprintf(tail, sizeof(tail), "%s", s + n);
	if (n == sizeof(self) - 1)
		n = (size_t)snprintf(s, size, "/proc/%d%s", (int)c->p->tgid,
				     tail);
	else
		n = (size_t)snprintf(s, size, "/proc/%d/task/%d%s",
				     (int)c->p->tgid, (int)c->tid, tail);
	return n < size ? 0 : -ENAMETOOLONG;
}

/* Whether argument i is a symbolic link's text (symlink's first
 * argument), which is stored as it is, never resolved nor rewritten:
 * /etc/mtab -> /proc/self/mounts must stay so. */
static bool link_text(const struct call *c, int i)
{
	if (i != 0)
		return false;
#ifdef SYS_symlink
	if (c->nr == SYS_symlink)
		return true;
#endif
	return c->nr == SYS_symlinkat;
}

/* Bytes of capget/capset's data for the header in arg 0 (read first):
 * one struct for version 1, two for the later ones. */
static size_t capd_len(const struct call *c)
{
	const struct __user_cap_header_struct *h = c->bufs[0];

	return (h && h->version == _LINUX_CAPABILITY_VERSION_1 ? 1 : 2) *
	       sizeof(struct __user_cap_data_struct);
}

/* Argument i brought over: 0 or -errno (the call's answer). */
/* A string argument: read, and /proc/self made the target's (not in a
 * symlink's text). */
static int str_in(struct call *c, int i, unsigned long v)
{
	void *b = buf_for(c, i, STR_BUF);
	int e;

	if (!b)
		return -ENOMEM;
	c->a[i] = (long)b;
	e = fe_sup_read_str(c->tid, b, v, 4096);
	if (e || link_text(c, i))
		return e;
	return proc_self(c, b, STR_BUF);
}

/* A buffer argument of n bytes (the kind says in, out or both): ours in
 * its place, filled from the target's for the ones read.  null: a NULL
 * pointer stays NULL (an out buffer the call may leave alone). */
static int buf_in(struct call *c, int i, unsigned long v, size_t n, bool in,
		  bool null)
{
	void *b = buf_for(c, i, n);

	if (!b)
		return -ENOMEM;
	c->a[i] = null && !v ? 0 : (long)b;
	return in ? fe_sup_read_mem(c->tid, b, v, n) : 0;
}

/* Argument i brought over: 0 or -errno (the call's answer). */
static int arg_in(struct call *c, const struct seccomp_notif *n, int i)
{
	unsigned long v = (unsigned long)n->data.args[i];
	size_t sz = size_arg(c, n);
	unsigned char k = c->row->kind[i];
	long fd;

	switch (k) {
	case SA_NONE:
	case SA_VAL:
		c->a[i] = (long)v;
		return 0;
	case SA_STR:
		return str_in(c, i, v);
	case SA_DIRFD:
		if ((int)v == AT_FDCWD) {
			c->a[i] = AT_FDCWD; /* made the cwd's fd below */
			return 0;
		}
		/* fallthrough */
	case SA_FD:
		fd = fe_sup_take_fd(c->p, (int)v);
		if (fd < 0)
			return (int)fd;
		c->fds[i] = (int)fd;
		c->a[i] = fd;
		return 0;
	case SA_STAT:
	case SA_STATX:
		if (!v)
			return -EFAULT;
		return buf_in(c, i, v, k == SA_STAT ? sizeof(struct stat) :
						      sizeof(struct statx),
			      false, false);
	case SA_IBUF:
	case SA_OBUF:
		if (sz > MAX_BUF && k == SA_IBUF)
			return -E2BIG;
		return buf_in(c, i, v, sz > MAX_BUF ? MAX_BUF : sz,
			      k == SA_IBUF, true);
	case SA_ID:
		return buf_in(c, i, v, sizeof(uid_t), false, false);
	case SA_IGIDS:
	case SA_OGIDS:
		if (sz > MAX_GIDS)
			return -EINVAL;
		return buf_in(c, i, v, sz * sizeof(gid_t), k == SA_IGIDS,
			      false);
	case SA_CAPH:
		return buf_in(c, i, v, sizeof(struct __user_cap_header_struct),
			      true, false);
	case SA_CAPDI:
	case SA_CAPDO:
		/* Read by what the header (argument 0) says. */
		if (buf_in(c, i, v, 2 * sizeof(struct __user_cap_data_struct),
			   false, true) < 0)
			return -ENOMEM;
		return k == SA_CAPDI ?
			       fe_sup_read_mem(c->tid, c->bufs[i], v, capd_len(c)) :
			       0;
	}
	return -ENOSYS;
}

static void set_at(struct call *c, long nr, long a0, long a1, long a2, long a3,
		   long a4)
{
	c->nr = nr;
	c->a[0] = a0;
	c->a[1] = a1;
	c->a[2] = a2;
	c->a[3] = a3;
	c->a[4] = a4;
}

/* The calls on a path alone in their *at form, whose dirfd can be the
 * target's cwd. */
static void to_at(struct call *c)
{
	long *a = c->a;

	switch (c->nr) {
#ifdef SYS_chown
	case SYS_chown:
		set_at(c, SYS_fchownat, AT_FDCWD, a[0], a[1], a[2], 0);
		break;
#endif
#ifdef SYS_lchown
	case SYS_lchown:
		set_at(c, SYS_fchownat, AT_FDCWD, a[0], a[1], a[2],
		       AT_SYMLINK_NOFOLLOW);
		break;
#endif
#ifdef SYS_chmod
	case SYS_chmod:
		set_at(c, SYS_fchmodat, AT_FDCWD, a[0], a[1], 0, 0);
		break;
#endif
#ifdef SYS_mknod
	case SYS_mknod:
		set_at(c, SYS_mknodat, AT_FDCWD, a[0], a[1], a[2], 0);
		break;
#endif
#ifdef SYS_stat
	case SYS_stat:
		set_at(c, SYS_newfstatat, AT_FDCWD, a[0], a[1], 0, 0);
		break;
	case SYS_lstat:
		set_at(c, SYS_newfstatat, AT_FDCWD, a[0], a[1],
		       AT_SYMLINK_NOFOLLOW, 0);
		break;
#endif
#ifdef SYS_access
	case SYS_access:
		set_at(c, SYS_faccessat, AT_FDCWD, a[0], a[1], 0, 0);
		break;
#endif
#ifdef SYS_open
	case SYS_open:
		set_at(c, SYS_openat, AT_FDCWD, a[0], a[1], a[2], 0);
		break;
#endif
#ifdef SYS_creat
	case SYS_creat:
		set_at(c, SYS_openat, AT_FDCWD, a[0],
		       O_CREAT | O_WRONLY | O_TRUNC, a[1], 0);
		break;
#endif
#ifdef SYS_mkdir
	case SYS_mkdir:
		set_at(c, SYS_mkdirat, AT_FDCWD, a[0], a[1], 0, 0);
		break;
	case SYS_rmdir:
		set_at(c, SYS_unlinkat, AT_FDCWD, a[0], AT_REMOVEDIR, 0, 0);
		break;
	case SYS_unlink:
		set_at(c, SYS_unlinkat, AT_FDCWD, a[0], 0, 0, 0);
		break;
	case SYS_symlink:
		set_at(c, SYS_symlinkat, a[0], AT_FDCWD, a[1], 0, 0);
		break;
	case SYS_rename:
		set_at(c, SYS_renameat2, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
		break;
	case SYS_renameat:
		set_at(c, SYS_renameat2, a[0], a[1], a[2], a[3], 0);
		break;
#endif
	}
}

/* Whether the call follows a symbolic link at its path's last name. */
static bool follows(const struct call *c)
{
	const long *a = c->a;

	switch (c->nr) {
	case SYS_fchownat:
		return !(a[4] & AT_SYMLINK_NOFOLLOW);
	case SYS_newfstatat:
		return !(a[3] & AT_SYMLINK_NOFOLLOW);
	case SYS_statx:
		return !(a[2] & AT_SYMLINK_NOFOLLOW);
#ifdef SYS_fchmodat2
	case SYS_fchmodat2:
		return !(a[3] & AT_SYMLINK_NOFOLLOW);
#endif
	case SYS_faccessat2:
		return !(a[3] & AT_SYMLINK_NOFOLLOW);
	case SYS_openat:
		return !(a[2] & O_NOFOLLOW) &&
		       (a[2] & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
	case SYS_fchmodat:
	case SYS_faccessat:
	case SYS_setxattr:
	case SYS_getxattr:
	case SYS_listxattr:
	case SYS_removexattr:
		return true;
	}
	return false;
}

/* Path a[p] of a chrooted target as a directory of ours in its root
 * (sup_root.c): 1 with *fd set, 0 when it is not such a path. */
static int in_root_for(struct call *c, int p, int *fd)
{
	int slot = c->rfds[0] < 0 ? 0 : 1;
	int r;

	if (fe_sup_root_ours(c->l, c->p, c->tid))
		return 0;
	/* Every string argument's buffer is STR_BUF (str_in()); to_at()
	 * may have moved it to another index. */
	r = fe_sup_root_path(c->tid, (char *)c->a[p], STR_BUF, follows(c), fd);
	if (r > 0)
		c->rfds[slot] = *fd;
	return r;
}

/* a[d] for path a[p]: in a chrooted target's root, else the target's
 * cwd where it said AT_FDCWD and the path is relative. */
static int cwd_for(struct call *c, int d, int p)
{
	const char *path = (const char *)c->a[p];
	long fd;
	int rfd, r;

	if ((int)c->a[d] != AT_FDCWD || !path)
		return 0;
	r = in_root_for(c, p, &rfd);
	if (r > 0)
		c->a[d] = rfd;
	if (r != 0 || path[0] == '/')
		return r < 0 ? r : 0;
	if ((c->nr == SYS_newfstatat || c->nr == SYS_statx) &&
	    fe_sup_cwd_prefix(c->tid, (char *)c->a[p]))
		return 0;
	fd = cwd_fd(c);
	if (fd < 0)
		return -ENOENT;
	c->a[d] = fd;
	return 0;
}

/* A path-only xattr call on a relative path: through the cwd's fd. */
static int xattr_path(struct call *c)
{
	const char *path = (const char *)c->a[0];
	long fd;
	int rfd, r;

	if (!path)
		return 0;
	r = in_root_for(c, 0, &rfd);
	if (r > 0) {
		if (path[0] != '/' &&
		    (size_t)snprintf(c->xpath, sizeof(c->xpath),
				     "/proc/self/fd/%d/%s", rfd,
				     path) >= sizeof(c->xpath))
			return -ENAMETOOLONG;
		if (path[0] != '/')
			c->a[0] = (long)c->xpath;
		return 0;
	}
	if (r < 0 || path[0] == '/')
		return r < 0 ? r : 0;
	fd = cwd_fd(c);
	if (fd < 0)
		return -ENOENT;
	if ((size_t)snprintf(c->xpath, sizeof(c->xpath), "/proc/self/fd/%d/%s",
			     (int)fd, path) >= sizeof(c->xpath))
		return -ENAMETOOLONG;
	c->a[0] = (long)c->xpath;
	return 0;
}

static int with_cwd(struct call *c)
{
	int r = 0;

	switch (c->nr) {
	case SYS_renameat2:
		r = cwd_for(c, 2, 3);
		return r ? r : cwd_for(c, 0, 1);
	case SYS_symlinkat:
		return cwd_for(c, 1, 2);
	case SYS_setxattr:
	case SYS_lsetxattr:
	case SYS_getxattr:
	case SYS_lgetxattr:
	case SYS_listxattr:
	case SYS_llistxattr:
	case SYS_removexattr:
	case SYS_lremovexattr:
		return xattr_path(c);
	}
	if (c->row->kind[0] == SA_DIRFD || c->nr != (long)c->row->nr)
		return cwd_for(c, 0, 1);
	return 0;
}

/* mkdir, mknod and open as the target's umask makes them (the call runs
 * with ours at 0: run_call()). */
static void apply_umask(struct call *c)
{
	int i = c->nr == SYS_openat ? 3 : 2;
	unsigned um = 022;

	fe_sup_status(c->tid, NULL, NULL, &um);
	c->a[i] = (c->a[i] & S_IFMT) | (c->a[i] & 07777 & ~(long)um);
}

/*
 * An open with O_CREAT is ours to make only when it makes a regular file
 * or opens one: the open of a FIFO, a device or a socket would block or
 * act in the supervisor, and it makes no file, so it goes to the kernel
 * (true).  The launcher never takes a terminal of the target's.
 */
static bool open_not_ours(struct call *c)
{
	struct stat st;

	c->a[2] |= O_NOCTTY;
	return fe_sup_sys(SYS_newfstatat, c->a[0], c->a[1], (long)&st, 0, 0) == 0 &&
	       !S_ISREG(st.st_mode);
}

/* Give the target our fd, as the call's answer: the kernel sends it. */
static bool send_fd(int lfd, const struct seccomp_notif *n, long fd,
		    long flags, struct seccomp_notif_resp *r)
{
	struct seccomp_notif_addfd add = {
		.id = n->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = (uint32_t)(flags & O_CLOEXEC),
	};
	long got = ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);

	if (got < 0 && errno == EINVAL) {
		/* Before Linux 5.14: add, then answer with its number. */
		add.flags = 0;
		got = ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
		if (got >= 0) {
			r->val = got;
			fe_sup_sys(SYS_close, fd, 0, 0, 0, 0);
			return true;
		}
	}
	if (got < 0)
		r->error = -errno;
	fe_sup_sys(SYS_close, fd, 0, 0, 0, 0);
	return got < 0;
}

/* The results into the target's memory: 0 or -EFAULT. */
static int copy_out(struct call *c, const struct seccomp_notif *n, long ret)
{
	size_t sz = size_arg(c, n);
	int r = 0;

	for (int i = 0; i < 6; i++) {
		unsigned long v = (unsigned long)n->data.args[i];
		size_t len = c->lens[i];

		switch (c->row->kind[i]) {
		case SA_STAT:
		case SA_STATX:
		case SA_ID:
			break;
		case SA_OBUF:
			len = sz && v && ret > 0 ? (size_t)ret : 0;
			break;
		case SA_OGIDS:
			len = sz ? (size_t)ret * sizeof(gid_t) : 0;
			break;
		case SA_CAPDO:
			len = v ? capd_len(c) : 0;
			break;
		default:
			continue;
		}
		if (len > c->lens[i])
			len = c->lens[i];
		if (!r && len)
			r = fe_sup_write_mem(c->tid, c->bufs[i], v, len);
	}
	return r;
}

static void call_done(struct call *c)
{
	for (int i = 0; i < 6; i++) {
		if (c->fds[i] >= 0)
			fe_sup_sys(SYS_close, c->fds[i], 0, 0, 0, 0);
		free(c->bufs[i]);
	}
	if (c->cwd >= 0)
		fe_sup_sys(SYS_close, c->cwd, 0, 0, 0, 0);
	for (int i = 0; i < 2; i++)
		if (c->rfds[i] >= 0)
			fe_sup_sys(SYS_close, c->rfds[i], 0, 0, 0, 0);
}

/* The shim's answer to the call, as the target: into *r; false when the
 * answer went with the fd (send_fd()). */
static bool run_call(struct call *c, const struct seccomp_notif *n,
		     struct seccomp_notif_resp *r, int lfd)
{
	mode_t um = 0;
	int e;
	long ret;
	bool done;

	/* capget's header goes back whatever the answer: the kernel
	 * writes the version it prefers there. */
	/* A creation's mode is the target's umask applied already
	 * (apply_umask()): the launcher's own umask stays out of it for the
	 * call alone, since the launcher's main thread makes files too. */
	if (c->row->flags & FE_SEC_UMASK)
		um = (mode_t)fe_sup_sys(SYS_umask, 0, 0, 0, 0, 0);
	errno = 0;
	fe_cred_take(&c->p->ids);
	ret = fe_route_syscall(c->nr, c->a, &done);
	e = errno;
	fe_cred_give(&c->p->ids);
	if (c->row->flags & FE_SEC_UMASK)
		fe_sup_sys(SYS_umask, um, 0, 0, 0, 0);
	if (c->row->kind[0] == SA_CAPH)
		fe_sup_write_mem(c->tid, c->bufs[0], (unsigned long)n->data.args[0],
			  c->lens[0]);
	if (!done) {
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return true;
	}
	if (ret == -1 && e) {
		r->error = -e;
		return true;
	}
	if (c->row->flags & FE_SEC_FD)
		return send_fd(lfd, n, ret, c->a[2], r);
	e = copy_out(c, n, ret);
	if (e < 0)
		r->error = e;
	else
		r->val = ret;
	return true;
}

/* Answer notification n of listener lst into *r; false when the target
 * is gone and nothing is to be sent. */
bool fe_sup_answer(struct sup *sp, int lst, const struct seccomp_notif *n,
		   struct seccomp_notif_resp *r)
{
	struct call c = { .nr = n->data.nr, .tid = (pid_t)n->pid, .cwd = -1,
			  .rfds = { -1, -1 },
			  .fds = { -1, -1, -1, -1, -1, -1 } };
	int lfd = sp->pfd[1 + lst].fd, e = 0;
	bool send = true;

	c.row = row_of(c.nr);
	if (c.row && (c.row->flags & FE_SEC_ROOT) &&
	    n->data.arch == FE_SEC_ARCH_OR_0) {
		sp->lst[lst].vary = true;
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return true;
	}
	c.l = &sp->lst[lst];
	c.p = c.row ? fe_sup_proc_of(sp, lst, c.tid) : NULL;
	if (!c.row || !c.p || n->data.arch != FE_SEC_ARCH_OR_0) {
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return true;
	}
	for (int i = 0; i < 6 && !e; i++)
		e = arg_in(&c, n, i);
	if (!e) {
		to_at(&c);
		e = with_cwd(&c);
	}
	if (!e && (c.row->flags & FE_SEC_UMASK))
		apply_umask(&c);
	if (!e && (c.row->flags & FE_SEC_FD) && open_not_ours(&c)) {
		call_done(&c);
		r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		return true;
	}
	if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id) < 0) {
		call_done(&c);
		return false;
	}
	if (e)
		r->error = e;
	else
		send = run_call(&c, n, r, lfd);
	call_done(&c);
	return send;
}
