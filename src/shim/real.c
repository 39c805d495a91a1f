/*
 * Resolvers for the next definition of every wrapped name.  Each symbol is
 * looked up on its first use only, never in a burst at start-up: dlsym
 * takes the loader lock and may allocate.  A missing symbol (statx on
 * glibc < 2.28) is remembered as missing and yields NULL.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdatomic.h>

/* 0: not looked up yet; 1: looked up, absent; else the address.  Load
 * data: the real execve is looked up at load (session.c). */
#define WRAP(ret, name, params)                                              \
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
