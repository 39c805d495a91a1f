/*
 * Putting a program under the session's seccomp filter (fakeenv/seccomp.h)
 * before it runs: deciding which programs need it, and arming the process
 * that is about to exec one.  Linked into the shim (its exec wrappers) and
 * the launcher (CMD itself).  Everything here may run in a vfork child:
 * no allocation, no libc call that the shim wraps, every system call
 * through the caller's sys (the shim's raw fe_syscall, libc's syscall in
 * the launcher), buffers on the stack, errno untouched.
 */
#ifndef FE_COMMON_SECARM_H
#define FE_COMMON_SECARM_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/audit.h>

#include "fakeenv/seccomp.h"

typedef long fe_sys_fn(long nr, ...);

/* The one ABI the filter traps: another's calls (x32, 32-bit) pass. */
#if defined(__x86_64__)
#define FE_SEC_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FE_SEC_ARCH AUDIT_ARCH_AARCH64
#endif

/* --seccomp and FAKEENV_SECCOMP. */
enum fe_sec_mode { FE_SEC_NEVER, FE_SEC_AUTO, FE_SEC_ALWAYS };

/* "never", "auto", "always": the mode, or -1. */
int fe_sec_mode_parse(const char *s);

/* FAKEENV_SECCOMP's value in this process (absent: auto; unknown: auto). */
enum fe_sec_mode fe_sec_mode_of(const char *value);

/* What the preload can do for a program. */
enum fe_sec_reach {
	FE_SEC_REACHED, /* it loads into it (or execve will fail) */
	FE_SEC_BELOW,   /* it loads, but the program calls the kernel
			   itself: static (no PT_INTERP) or Go */
	FE_SEC_FOREIGN, /* another libc's loader (musl's in a glibc
			   build, any other in a musl one): it cannot load
			   at all, and must be left out of LD_PRELOAD */
};

/*
 * The verdict on the program at path (as execve(2) would take it:
 * relative to the cwd); a "#!" script gets its interpreter's.  A file
 * that cannot be read or is no ELF: FE_SEC_REACHED (execve says what it
 * is).  Both but FE_SEC_REACHED are put under the filter in auto mode.
 */
enum fe_sec_reach fe_sec_reach(fe_sys_fn *sys, const char *path);

/*
 * execvp's search, for fe_sec_reach(): the first PATH entry (path
 * NULL: the default) where file is an executable regular file, into buf.
 * file with a slash: itself.  False when there is none (execvp fails).
 */
bool fe_sec_which(fe_sys_fn *sys, const char *file, const char *path,
		  char *buf, size_t size);

/*
 * Arm the calling process: connect to the supervisor at sock (a name
 * starting with '@' is in the abstract namespace), check that it is ours
 * (SO_PEERCRED: our real uid), install the filter with a listener, send
 * it with *hello and wait for the supervisor's byte.  0, or -errno with
 * *why saying what failed (nothing installed, but when the supervisor
 * went away after the filter was in: -EPIPE).
 */
int fe_sec_arm(fe_sys_fn *sys, const char *sock,
	       const struct fe_sec_hello *hello, const char **why);

/* True when this process runs under a session's filter (the probe). */
bool fe_sec_filtered(fe_sys_fn *sys);

/* Fill a sockaddr_un for sock ('@': abstract); its length, or 0 when sock
 * does not fit. */
struct sockaddr_un;
unsigned fe_sec_addr(const char *sock, struct sockaddr_un *sa);

#endif
