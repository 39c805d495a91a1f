/*
 * The exec wrappers' part in --seccomp (fakeenv/seccomp.h): a program the
 * preload cannot reach is armed with the session's filter before it runs.
 * Dynamic programs pay one open and two reads here (is it static?), and
 * nothing at all with FAKEENV_SECCOMP=never.  May run in a vfork child:
 * stack buffers and raw calls only (common/secarm.c).
 */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/secarm.h"
#include "common/util.h"
#include "fakeenv/env.h"

/* The file execve(2) will open for the call: into buf. */
static const char *target(int how, const char *path, int fd, int flags,
			  char *buf, size_t size)
{
	switch (how) {
	case FE_EXEC_PATH:
		return path;
	case FE_EXEC_SEARCH:
		return fe_sec_which(fe_syscall, path, getenv("PATH"), buf, size)
			       ? buf
			       : NULL;
	case FE_EXEC_FD:
		fe_fmt(buf, size, "/proc/self/fd/%d", fd);
		return buf;
	case FE_EXEC_AT:
		if (path && path[0] == '/')
			return path;
		if ((flags & AT_EMPTY_PATH) && path && !path[0])
			fe_fmt(buf, size, "/proc/self/fd/%d", fd);
		else if (fd == AT_FDCWD)
			return path;
		else
			fe_fmt(buf, size, "/proc/self/fd/%d/%s", fd,
			       path ? path : "");
		return buf;
	}
	return NULL;
}

/* fe_sec_reach() of the file the call will open, when that takes a name
 * built in buf: in a frame of its own, so that the common case (a path
 * as it is) runs on less stack.  This runs in fork children, where each
 * page of stack touched is a page fault. */
static __attribute__((noinline)) enum fe_sec_reach
reach_built(int how, const char *path, int fd, int flags)
{
	char buf[PATH_MAX];
	const char *file = target(how, path, fd, flags, buf, sizeof(buf));

	return file ? fe_sec_reach(fe_syscall, file) : FE_SEC_REACHED;
}

/* Armed here: out of the common path for the same reason. */
static __attribute__((noinline)) void arm(const char *path)
{
	static bool said;
	struct fe_sec_hello h;
	const char *why;
	int r;

	/* Armed already in this image (the launcher's spawn trampoline):
	 * the load-time answer is stale. */
	if (fe_sec_filtered(fe_syscall))
		return;
	h = (struct fe_sec_hello){ .magic = FE_SEC_MAGIC,
				   .pid = (int)fe_syscall(SYS_getpid) };
	fe_cred_give(&h);
	r = fe_sec_arm(fe_syscall, fe_env_initial(FE_ENV_SUPERVISOR), &h,
		       &why);
	if (r < 0 && !said) {
		said = true;
		fe_log("%s (%s): %s runs with the preload alone, which it "
		       "bypasses", why, fe_strerror(-r), path ? path : "it");
	}
}

FE_HOT bool fe_sec_exec(int how, const char *path, int fd, int flags)
{
	int saved = errno;
	enum fe_sec_mode mode;
	enum fe_sec_reach reach;

	if (!fe_in_session())
		return false;
	mode = fe_sec_mode_of(fe_env_initial(FE_ENV_SECCOMP));
	if (mode == FE_SEC_NEVER)
		return false;
	/* Under the filter already, or always: the verdict decides only
	 * whether the library stays in LD_PRELOAD. */
	reach = how == FE_EXEC_PATH ? fe_sec_reach(fe_syscall, path) :
				      reach_built(how, path, fd, flags);
	if (!fe_sec_under() && (mode == FE_SEC_ALWAYS || reach != FE_SEC_REACHED))
		arm(path);
	errno = saved;
	return reach == FE_SEC_FOREIGN;
}

const char *fe_sec_spawn_via(bool search, const char *path, char *buf,
			     size_t size, bool *foreign)
{
	const char *via = fe_root_launcher();
	const char *file;
	int saved = errno;
	enum fe_sec_mode mode;
	enum fe_sec_reach reach;
	bool arm;

	*foreign = false;
	if (!fe_in_session())
		return NULL;
	mode = fe_sec_mode_of(fe_env_initial(FE_ENV_SECCOMP));
	if (mode == FE_SEC_NEVER)
		return NULL;
	file = target(search ? FE_EXEC_SEARCH : FE_EXEC_PATH, path, -1, 0,
		      buf, size);
	if (file && file != buf) {
		fe_fmt(buf, size, "%s", file);
		file = buf;
	}
	reach = file ? fe_sec_reach(fe_syscall, file) : FE_SEC_REACHED;
	*foreign = reach == FE_SEC_FOREIGN;
	arm = mode == FE_SEC_AUTO && reach != FE_SEC_REACHED &&
	      !fe_sec_under() && via && via[0] == '/' &&
	      !fe_sec_filtered(fe_syscall);
	errno = saved;
	return arm ? via : NULL;
}
