/*
 * The paths of a chrooted target, resolved inside its root.  The
 * supervisor runs the shim's wrappers in the launcher, whose root is the
 * host's: a target's absolute path, its ".." at its root or an absolute
 * symbolic link on the way would be read from the host.  So a path of a
 * target whose root is not ours becomes a directory fd and a last name:
 * the directory opened under /proc/TID/root with RESOLVE_IN_ROOT (the
 * kernel's own chroot rules), the last name looked up by the call.  A
 * last name the call follows that is a symbolic link is resolved whole
 * the same way and named by its fd (/proc/self/fd/N).
 *
 * Left to the caller's own way: targets at our root, a relative path of
 * a target whose cwd is outside its root (it left by fchdir; the kernel
 * too resolves it from there), and /proc, which the chroot's is the
 * host's.  The caller's way for a relative path of a stat is the last
 * function here: through /proc/TID/cwd.
 */
#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

/* The readlink of /proc/TID/NAME (tid 0: /proc/self/NAME) into buf: its
 * length, or -errno. */
static long proc_link(pid_t tid, const char *name, char *buf, size_t size)
{
	char link[64];
	long n;

	if (tid)
		snprintf(link, sizeof(link), "/proc/%d/%s", (int)tid, name);
	else
		snprintf(link, sizeof(link), "/proc/self/%s", name);
	n = fe_sup_sys(SYS_readlinkat, AT_FDCWD, (long)link, (long)buf,
		       (long)size - 1, 0);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/*
 * A target's root is ours for good when it is ours now, it is in our
 * user and mount namespaces and we (so it: a filter brings no_new_privs)
 * have neither CAP_SYS_CHROOT nor CAP_SYS_ADMIN there: nothing in them
 * can then chroot, pivot_root, setns or unshare (and mount) but a
 * process under the filter, whose call the supervisor sees (FE_SEC_ROOT)
 * before the kernel makes it.  A process that shares the target's root
 * (CLONE_FS) shares its user namespace too, since entering another
 * unshares it; a child made in new namespaces (clone, clone3: flags the
 * filter cannot always read) is a new process, looked at anew.  So
 * three readlinks a process, at its first path, instead of one for
 * every path: bb-stat's supervisor made 8 system calls an answer, now 7.
 */
static bool privileged(void)
{
	static int known = -1;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0, 0, 0 } };
	unsigned long long want = 1ULL << CAP_SYS_CHROOT | 1ULL << CAP_SYS_ADMIN;

	if (known < 0)
		known = fe_sup_sys(SYS_capget, (long)&h, (long)d, 0, 0, 0) < 0 ||
			(d[0].permitted & want);
	return known;
}

/* Whether target tid is in our namespace of kind ns ("user", "mnt"). */
static bool our_ns(pid_t tid, const char *ns)
{
	static char ours[2][64];
	char *o = ours[strcmp(ns, "user") != 0], link[64], name[16];

	snprintf(name, sizeof(name), "ns/%s", ns);
	if (!o[0] && proc_link(0, name, o, sizeof(ours[0])) < 0)
		return false;
	return proc_link(tid, name, link, sizeof(link)) >= 0 &&
	       !strcmp(link, o);
}

static bool at_our_root(pid_t tid)
{
	char root[4096];

	return proc_link(tid, "root", root, sizeof(root)) >= 0 &&
	       !strcmp(root, "/") && our_ns(tid, "user") && our_ns(tid, "mnt");
}

bool fe_sup_root_ours(const struct lst *l, struct proc *p, pid_t tid)
{
	if (l->vary || privileged())
		return false;
	if (p->root == ROOT_UNKNOWN)
		p->root = at_our_root(tid) ? ROOT_OURS : ROOT_VARIES;
	return p->root == ROOT_OURS;
}

static long in_root(int root, const char *path, long oflags)
{
	struct open_how how = { .flags = (unsigned long)oflags | O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT |
					   RESOLVE_NO_MAGICLINKS };

	return fe_sup_sys(SYS_openat2, root, (long)path, (long)&how,
			  sizeof(how), 0);
}

/* path (absolute inside the root) as *dirfd and the last name into
 * name (size bytes). */
static int split_in(int root, char *path, char *name, size_t size,
		    bool follow, int *dirfd)
{
	char *slash = strrchr(path, '/');
	const char *last = slash + 1;
	struct stat st;
	long fd;

	if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) {
		last = ".";
		fd = in_root(root, path, O_DIRECTORY);
	} else {
		*slash = '\0';
		fd = in_root(root, path[0] ? path : "/", O_DIRECTORY);
		*slash = '/';
	}
	if (fd < 0)
		return (int)fd;
	if (follow && fe_sup_sys(SYS_newfstatat, fd, (long)last, (long)&st,
				 AT_SYMLINK_NOFOLLOW, 0) == 0 &&
	    S_ISLNK(st.st_mode)) {
		long whole = in_root(root, path, 0);

		fe_sup_sys(SYS_close, fd, 0, 0, 0, 0);
		if (whole < 0)
			return (int)whole;
		*dirfd = (int)whole;
		snprintf(name, size, "/proc/self/fd/%d", (int)whole);
		return 1;
	}
	if (strlen(last) + 1 > size) {
		fe_sup_sys(SYS_close, fd, 0, 0, 0, 0);
		return -ENAMETOOLONG;
	}
	memmove(name, last, strlen(last) + 1);
	*dirfd = (int)fd;
	return 1;
}

int fe_sup_root_path(pid_t tid, char *name, size_t size, bool follow,
		     int *dirfd)
{
	char root[4096], cwd[4096], path[2 * 4096 + 2];
	size_t rn;
	long root_fd;
	int r;

	if (proc_link(tid, "root", root, sizeof(root)) < 0)
		return 0;
	/* A root that reads "/" is ours only in our mount namespace: after
	 * a pivot_root in another it reads "/" too.  A relative path there
	 * goes the caller's way, from the target's own cwd. */
	if (!strcmp(root, "/") && (name[0] != '/' || our_ns(tid, "mnt")))
		return 0;
	if (name[0] == '/') {
		snprintf(path, sizeof(path), "%s", name);
	} else {
		rn = strlen(root);
		if (proc_link(tid, "cwd", cwd, sizeof(cwd)) < 0 ||
		    strncmp(cwd, root, rn) || (cwd[rn] && cwd[rn] != '/'))
			return 0;
		snprintf(path, sizeof(path), "%s/%s", cwd + rn, name);
	}
	if (!strncmp(path, "/proc", 5) && (!path[5] || path[5] == '/'))
		return 0;
	snprintf(cwd, sizeof(cwd), "/proc/%d/root", (int)tid);
	root_fd = fe_sup_sys(SYS_openat, AT_FDCWD, (long)cwd,
			     O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0);
	if (root_fd < 0)
		return (int)root_fd;
	r = split_in((int)root_fd, path, name, size, follow, dirfd);
	fe_sup_sys(SYS_close, root_fd, 0, 0, 0, 0);
	return r;
}

/*
 * Where the target's cwd would otherwise be opened and closed, two
 * system calls fewer on a path the supervisor only reads (a stat).  Not
 * when the path would pass PATH_MAX, nor with ignored paths, which are
 * matched by what a directory fd names.  The link is followed after
 * fe_sup_answer()'s check that the call is still waiting, as the answer
 * is written into the target's memory after it: what it reads goes
 * nowhere else.
 */
bool fe_sup_cwd_prefix(pid_t tid, char *path)
{
	char pre[32];
	size_t n = strlen(path), k;

	if (fe_ignore_n)
		return false;
	k = (size_t)snprintf(pre, sizeof(pre), "/proc/%d/cwd/", (int)tid);
	if (k >= sizeof(pre) || n + k >= 4096)
		return false;
	memmove(path + k, path, n + 1);
	memcpy(path, pre, k);
	return true;
}
