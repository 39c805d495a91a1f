/*
 * Resolvers for the next definition of every wrapped name.  Each symbol is
 * looked up on its first use only, never in a burst at start-up: dlsym
 * takes the loader lock and may allocate.  A missing symbol is
 * remembered as missing and yields NULL, unless the kernel has the call
 * (statx, renameat2, close_range, closefrom and execveat, which musl
 * 1.2.3 lacks, and glibc before 2.28 to 2.34): then the system call
 * below, fe_raw_<name>, is the next definition.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdatomic.h>

/* 0: not looked up yet; 1: looked up, absent; else the address.  Load
 * data: the real execve is looked up at load (session.c). */
#define WRAP(ret, name, params)                                              \
	extern fe_##name##_fn fe_raw_##name                                  \
		__attribute__((weak, visibility("hidden")));                 \
	fe_##name##_fn *real_##name(void)                                    \
	{                                                                    \
		FE_LOAD_DATA static _Atomic uintptr_t cache;                 \
		uintptr_t f = atomic_load_explicit(&cache,                   \
						   memory_order_acquire);    \
		if (!f) {                                                    \
			int saved = errno;                                   \
			void *p;                                             \
			fe_depth++;                                          \
			p = dlsym(RTLD_NEXT, #name);                         \
			fe_depth--;                                          \
			errno = saved;                                       \
			if (!p)                                              \
				p = (void *)fe_raw_##name;                   \
			f = p ? (uintptr_t)p : 1;                            \
			atomic_store_explicit(&cache, f,                     \
					      memory_order_release);         \
		}                                                            \
		return f == 1 ? NULL : (fe_##name##_fn *)f;                  \
	}
#include "wrap.def"

int fe_enosys(void)
{
	errno = ENOSYS;
	return -1;
}

void *fe_enosys_ptr(void)
{
	errno = ENOSYS;
	return NULL;
}

/* The calls a libc may lack, as the kernel makes them (see above), by
 * fe_syscall(), libc's conventions: none of them comes back into a
 * wrapper. */
fe_statx_fn fe_raw_statx;
fe_renameat2_fn fe_raw_renameat2;
fe_close_range_fn fe_raw_close_range;
fe_closefrom_fn fe_raw_closefrom;
fe_execveat_fn fe_raw_execveat;

int fe_raw_statx(int dirfd, const char *path, int flags, unsigned int mask,
		 struct statx *stx)
{
	return (int)syscall(SYS_statx, dirfd, path, flags, mask, stx);
}

int fe_raw_renameat2(int olddirfd, const char *old, int newdirfd,
		     const char *path, unsigned int flags)
{
	return (int)syscall(SYS_renameat2, olddirfd, old, newdirfd, path,
			    flags);
}

int fe_raw_close_range(unsigned int first, unsigned int last, int flags)
{
	return (int)syscall(SYS_close_range, first, last, flags);
}

void fe_raw_closefrom(int lowfd)
{
	syscall(SYS_close_range, lowfd, ~0U, 0);
}

int fe_raw_execveat(int dirfd, const char *path, char *const argv[],
		    char *const envp[], int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}
