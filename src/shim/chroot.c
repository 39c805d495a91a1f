/*
 * chroot(2) for a fake root (docs/chroot.md).  The kernel does the
 * chroot: every path any program of the image resolves, static ones too,
 * is then resolved inside the new root by the kernel itself.  What an
 * unprivileged user lacks is CAP_SYS_CHROOT; the first chroot of a
 * process that is refused it moves the process into a user namespace of
 * its own (its uid and gid mapped to themselves, nothing else: the
 * kernel's view of ownership does not change) with a mount namespace,
 * keeps CAP_SYS_CHROOT and CAP_SYS_ADMIN there as ambient capabilities
 * (its children chroot again by the kernel alone, and bind what they
 * need), binds the host's /proc onto the new root's /proc and the host's
 * character devices onto the placeholders a fake mknod left in its /dev,
 * and chroots.
 *
 * What the session needs from outside the new root (our library, the
 * daemon's socket, the launcher) is reached through an O_PATH fd on the
 * host's root that the process keeps open across exec:
 * "/proc/self/fd/H/<host path>".  FAKEENV_ROOT ("H:n:host path of the
 * root", n for our namespace, k for a chroot the kernel granted) tells each new image where it is; the exec wrappers always
 * give a child the current value, as they do the fake ids.  The
 * environment keeps host paths (FAKEENV_LIB, _SOCKET, _LAUNCHER); only
 * LD_PRELOAD, which the dynamic loader reads, names the library as seen
 * inside.
 *
 * A chroot that the kernel grants (real root, or a process in our
 * namespace) is the kernel's, and only the session's bookkeeping is
 * added.  chroot is not a security boundary here any more than the
 * kernel's is: fchdir to an fd opened outside, a cwd left outside, or
 * the host fd itself lead out, as they do for root.
 */
#include "shim.h"

#include <linux/capability.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fakeenv/env.h"

#define HERE_PREFIX "/proc/self/fd/"

/* Written by chroot() and at load only, before any child exists that
 * could read them; read by the exec wrappers in vfork children. */
static int host_fd = -1;
static bool in_ns; /* in the user namespace chroot() made */
static char host_root[FE_PATH_MAX];      /* "" for the host's own root */
static char root_ent[FE_PATH_MAX + 64];  /* "FAKEENV_ROOT=H:F:path" */
static char lib_here[FE_PATH_MAX + 32];
static char sock_here[FE_PATH_MAX + 32];
static char launcher_here[FE_PATH_MAX + 32];

int fe_root_fd(void)
{
	return host_fd;
}

FE_HOT const char *fe_root_ent(void)
{
	return host_fd >= 0 ? root_ent : NULL;
}

/* host as seen inside: through the host fd once rooted. */
static void here(char *buf, size_t size, const char *host)
{
	if (!host || host[0] != '/')
		buf[0] = '\0';
	else if (host_fd < 0)
		fe_fmt(buf, size, "%s", host);
	else
		fe_fmt(buf, size, HERE_PREFIX "%d%s", host_fd, host);
}

FE_HOT const char *fe_root_lib(void)
{
	return host_fd >= 0 ? lib_here : fe_env_initial(FE_ENV_LIB);
}

const char *fe_root_sock(const char *host)
{
	return host_fd >= 0 ? sock_here : host;
}

const char *fe_root_launcher(void)
{
	return host_fd >= 0 ? launcher_here : fe_env_initial(FE_ENV_LAUNCHER);
}

/* The strings derived from host_fd and host_root. */
static void derive(void)
{
	fe_fmt(root_ent, sizeof(root_ent), "%s=%d:%c:%s", FE_ENV_ROOT, host_fd,
	       in_ns ? 'n' : 'k', host_root);
	here(lib_here, sizeof(lib_here), fe_env_initial(FE_ENV_LIB));
	here(sock_here, sizeof(sock_here), fe_env_initial(FE_ENV_SOCKET));
	here(launcher_here, sizeof(launcher_here),
	     fe_env_initial(FE_ENV_LAUNCHER));
}

FE_HOT void fe_root_load(void)
{
	const char *v = fe_env_initial(FE_ENV_ROOT);
	int saved = errno;
	struct stat st;
	char *end;
	long fd;

	if (!v || !*v)
		return;
	fd = strtol(v, &end, 10);
	if (end == v || end[0] != ':' || (end[1] != 'n' && end[1] != 'k') ||
	    end[2] != ':' || fd < 0 || fd > 1 << 20 ||
	    fe_sys_fstat((int)fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fe_log("%s=%s: no such directory fd; paths outside this "
		       "root are not reached", FE_ENV_ROOT, v);
		errno = saved;
		return;
	}
	fe_fmt(host_root, sizeof(host_root), "%s", end + 3);
	in_ns = end[1] == 'n';
	host_fd = (int)fd;
	derive();
	errno = saved;
}

void fe_root_outside(char *buf, size_t size)
{
	size_t n = fe_slen(host_root), len;

	if (n == 0 || buf[0] != '/')
		return;
	len = fe_slen(buf);
	if (n + len + 1 > size) {
		buf[0] = '\0'; /* a hint that does not fit is no hint */
		return;
	}
	memmove(buf + n, buf, len + 1);
	memcpy(buf, host_root, n);
}

/* Write s to the /proc file path: 0 or -errno. */
static int put_file(const char *path, const char *s)
{
	int fd = (int)fe_syscall(SYS_openat, AT_FDCWD, path,
				 O_WRONLY | O_CLOEXEC);
	long w;
	int e;

	if (fd < 0)
		return -errno;
	w = fe_syscall(SYS_write, fd, s, strlen(s));
	e = w < 0 ? -errno : 0;
	fe_close(fd);
	return e;
}

/* Into a user namespace of our own, with a mount namespace, keeping the
 * capabilities a chroot and its binds take.  0 or -errno. */
static int enter_ns(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	static const int keep[] = { CAP_SYS_CHROOT, CAP_SYS_ADMIN };
	long uid = fe_syscall(SYS_getuid), gid = fe_syscall(SYS_getgid);
	char map[64];
	int e;

	if (fe_syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	if ((e = put_file("/proc/self/setgroups", "deny")) < 0)
		return e;
	fe_fmt(map, sizeof(map), "%ld %ld 1\n", uid, uid);
	if ((e = put_file("/proc/self/uid_map", map)) < 0)
		return e;
	fe_fmt(map, sizeof(map), "%ld %ld 1\n", gid, gid);
	if ((e = put_file("/proc/self/gid_map", map)) < 0)
		return e;
	if (fe_syscall(SYS_capget, &h, d) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		d[keep[i] / 32].inheritable |= 1u << (keep[i] % 32);
	if (fe_syscall(SYS_capset, &h, d) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (fe_syscall(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE,
			       keep[i], 0, 0) < 0)
			return -errno;
	return 0;
}

/* Bind host path src (below the host fd) onto fd's file: 0 or -errno. */
static int bind_onto(const char *src, int fd, unsigned long flags)
{
	char from[FE_PATH_MAX + 32], onto[32];

	fe_fmt(from, sizeof(from), HERE_PREFIX "%d%s", host_fd, src);
	fe_fmt(onto, sizeof(onto), HERE_PREFIX "%d", fd);
	if (fe_syscall(SYS_mount, from, onto, NULL, MS_BIND | flags, NULL) < 0)
		return -errno;
	return 0;
}

/* name below dir, not followed if a symlink: an O_PATH fd or -1. */
static int below(int dir, const char *name)
{
	return (int)fe_syscall(SYS_openat, dir, name,
			       O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

/* The host devices a root's programs cannot do without, where a fake
 * mknod left a placeholder (a regular file). */
static void bind_devices(int root)
{
	static const char *const dev[] = { "null", "zero", "full", "random",
					   "urandom", "tty", "ptmx" };
	int d = below(root, "dev"), f;
	struct statfs sf;
	struct stat st;

	if (d < 0)
		return;
	for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++) {
		char src[16];

		f = below(d, dev[i]);
		if (f < 0)
			continue;
		fe_fmt(src, sizeof(src), "/dev/%s", dev[i]);
		if (fe_sys_fstat(f, &st) == 0 && S_ISREG(st.st_mode))
			(void)bind_onto(src, f, 0);
		fe_close(f);
	}
	/* The terminals ptmx opens: the host's, where the root has the
	 * directory. */
	f = below(d, "pts");
	if (f >= 0 && fe_sys_fstat(f, &st) == 0 && S_ISDIR(st.st_mode) &&
	    fe_syscall(SYS_fstatfs, f, &sf) == 0 &&
	    sf.f_type != DEVPTS_SUPER_MAGIC)
		(void)bind_onto("/dev/pts", f, 0);
	if (f >= 0)
		fe_close(f);
	fe_close(d);
}

/* Whether root's "proc" (fd p) is the symbolic link "/proc". */
static bool self_link(int root, int p)
{
	struct stat st;
	char t[8];
	long n;

	if (fe_sys_fstat(p, &st) < 0 || !S_ISLNK(st.st_mode))
		return false;
	n = fe_syscall(SYS_readlinkat, root, "proc", t, sizeof(t));
	return n == 5 && memcmp(t, "/proc", 5) == 0;
}

/* The host's /proc on root's /proc unless a proc is there already: what
 * the session reaches the host by.  A root with no /proc gets an empty
 * directory for it, as every Linux root has (a rootfs being unpacked has
 * none before base-files; the package's own directory then lands on
 * it), and so does one whose /proc is the symbolic link "/proc", which
 * can lead nowhere inside (debootstrap's first stage in a container
 * makes it, and its second stage makes it a directory again).  Without
 * it, programs run inside are not faked, and that is
 * said. */
static void bind_proc(int root, const char *path)
{
	struct statfs sf;
	struct stat st;
	int p = below(root, "proc");

	if (p >= 0 && self_link(root, p)) {
		fe_close(p);
		p = fe_syscall(SYS_unlinkat, root, "proc", 0) == 0 ? -1 : -2;
		errno = ENOENT;
	}
	if (p == -1 && errno == ENOENT &&
	    fe_syscall(SYS_mkdirat, root, "proc", 0777) == 0)
		p = below(root, "proc");
	if (p >= 0 && fe_sys_fstat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
	    ((fe_syscall(SYS_fstatfs, p, &sf) == 0 &&
	      sf.f_type == PROC_SUPER_MAGIC) ||
	     bind_onto("/proc", p, MS_REC) == 0)) {
		fe_close(p);
		return;
	}
	if (p >= 0)
		fe_close(p);
	fe_log("chroot %s: no /proc directory to bind the host's onto: "
	       "programs run inside are not faked", path);
}

/* The host fd, above the usual fds and kept across exec: opened once,
 * and again once in the new mount namespace, whose mounts a bind and a
 * chroot must name (an fd opened before the unshare names the old
 * namespace's). */
static int open_host(bool again)
{
	int fd, hi;

	if (host_fd >= 0 && !again)
		return 0;
	fd = (int)fe_syscall(SYS_openat, AT_FDCWD, "/",
			     O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The same number again: children may have it already. */
	hi = host_fd >= 0 ? (int)fe_syscall(SYS_dup3, fd, host_fd, 0) :
			    (int)fe_syscall(SYS_fcntl, fd, F_DUPFD, 990);
	fe_close(fd);
	if (hi < 0)
		return -errno;
	host_fd = hi;
	return 0;
}

/* The host path of the directory fd, to be the new root: into next
 * (before the chroot, when the path is still seen from the old root). */
static void next_root(int fd, char *next, size_t size)
{
	char link[32], rel[FE_PATH_MAX];
	ssize_t n;

	fe_fmt(next, size, "%s", host_root);
	fe_fmt(link, sizeof(link), HERE_PREFIX "%d", fd);
	n = (ssize_t)fe_syscall(SYS_readlinkat, AT_FDCWD, link, rel,
				sizeof(rel) - 1);
	if (n <= 0 || rel[0] != '/')
		return; /* unreachable from here: keep what we had */
	rel[n] = '\0';
	if (strcmp(rel, "/") != 0 &&
	    fe_slen(host_root) + (size_t)n + 1 <= size)
		memcpy(next + fe_slen(host_root), rel, (size_t)n + 1);
}

/* chroot to the directory fd: 0 or -errno; on success the new root's
 * host path is kept. */
static int chroot_fd(int fd)
{
	char at[32], next[FE_PATH_MAX];

	next_root(fd, next, sizeof(next));
	fe_fmt(at, sizeof(at), HERE_PREFIX "%d", fd);
	if (fe_syscall(SYS_chroot, at) < 0)
		return -errno;
	memcpy(host_root, next, fe_slen(next) + 1);
	derive();
	return 0;
}

/* The process's own LD_PRELOAD and FAKEENV_ROOT, for what reads environ
 * directly (system(), popen(), a child's envp copied from it). */
static void environ_update(void)
{
	const char *host_lib = fe_env_initial(FE_ENV_LIB);
	const char *pre = getenv("LD_PRELOAD");
	char buf[FE_PATH_MAX * 2], *q = buf;

	setenv(FE_ENV_ROOT, root_ent + sizeof(FE_ENV_ROOT), 1);
	if (!host_lib || !pre)
		return;
	/* Our library as seen inside, in place of every other name for
	 * it; the rest as it was. */
	while (*pre) {
		const char *e = pre;
		size_t n;

		while (*e && *e != ':' && *e != ' ')
			e++;
		n = (size_t)(e - pre);
		if (n && (size_t)(q - buf) + n + fe_slen(lib_here) + 2 < sizeof(buf)) {
			bool ours = (n == fe_slen(host_lib) &&
				     !memcmp(pre, host_lib, n)) ||
				    !memcmp(pre, lib_here, n);

			if (ours) {
				q = fe_scopy(q, lib_here);
			} else {
				memcpy(q, pre, n);
				q += n;
			}
			*q++ = ':';
		}
		pre = *e ? e + 1 : e;
	}
	if (q > buf)
		q--;
	*q = '\0';
	setenv("LD_PRELOAD", buf, 1);
}

static int open_dir(const char *path)
{
	return (int)fe_syscall(SYS_openat, AT_FDCWD, path,
			       O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* Into our namespace, with path and the host fd opened again in it:
 * 0 or -errno. */
static int move_in(const char *path, int *fd)
{
	int e = enter_ns();

	if (e < 0) {
		fe_log("chroot %s: cannot make a user namespace (%s): a fake "
		       "chroot needs unprivileged user namespaces "
		       "(user.max_user_namespaces)", path, fe_strerror(-e));
		return -EPERM;
	}
	in_ns = true;
	fe_close(*fd);
	*fd = open_dir(path);
	if (*fd < 0)
		return -errno;
	return open_host(true);
}

/* chroot(path) and the session's part in it: 0 or -errno. */
static int do_chroot(const char *path)
{
	int fd = open_dir(path), e;

	if (fd < 0)
		return fe_syscall(SYS_chroot, path) < 0 ? -errno : 0;
	e = open_host(false);
	if (!e && !in_ns) {
		/* Granted by the kernel (real root): the kernel's alone. */
		e = chroot_fd(fd);
		if (e == -EPERM)
			e = move_in(path, &fd);
		else
			goto out;
	}
	if (!e) {
		bind_proc(fd, path);
		bind_devices(fd);
		e = chroot_fd(fd);
	}
out:
	if (fd >= 0)
		fe_close(fd);
	return e;
}

int chroot(const char *path)
{
	int saved = errno, r;

	if (!fe_in_session())
		return (int)fe_syscall(SYS_chroot, path);
	r = do_chroot(path);
	if (r == 0)
		environ_update();
	return fe_ret(r, saved);
}

/*
 * In our namespace the kernel mounts what a user namespace may (tmpfs,
 * binds); a proc, sysfs or devpts it refuses (their namespaces are the
 * host's) is the host's own, bound there: what a root's
 * `mount -t proc proc /proc` inside a chroot gives it to see.
 */
static const char *host_fs(const char *type)
{
	static const char *const fs[][2] = { { "proc", "/proc" },
					     { "sysfs", "/sys" },
					     { "devpts", "/dev/pts" } };

	for (size_t i = 0; type && i < sizeof(fs) / sizeof(fs[0]); i++)
		if (strcmp(type, fs[i][0]) == 0)
			return fs[i][1];
	return NULL;
}

static int mount_core(const char *src, const char *target, const char *type,
		      unsigned long flags, const void *data)
{
	const char *host;
	struct statfs sf, hf;
	char at[FE_PATH_MAX + 32];
	int fd, r;

	if (fe_syscall(SYS_mount, src, target, type, flags, data) == 0)
		return 0;
	host = host_fs(type);
	if (errno != EPERM || !in_ns || !host || !target ||
	    (flags & (MS_REMOUNT | MS_BIND | MS_MOVE)))
		return -errno;
	fd = open_dir(target);
	if (fd < 0)
		return -EPERM;
	fe_fmt(at, sizeof(at), HERE_PREFIX "%d%s", host_fd, host);
	/* There already (the chroot's own /proc): nothing to do. */
	if (fe_syscall(SYS_fstatfs, fd, &sf) == 0 &&
	    fe_syscall(SYS_statfs, at, &hf) == 0 && sf.f_type == hf.f_type)
		r = 0;
	else
		r = bind_onto(host, fd, MS_REC);
	fe_close(fd);
	return r < 0 ? -EPERM : 0;
}

int mount(const char *source, const char *target, const char *type,
	  unsigned long flags, const void *data)
{
	int saved = errno;

	if (!fe_in_session())
		return (int)fe_syscall(SYS_mount, source, target, type, flags,
				       data);
	return fe_ret(mount_core(source, target, type, flags, data), saved);
}

/* The second names syscall() reaches chroot() and mount() by (wrap.def). */
#define FE_HERE_chroot 1
#include "self.h"
