/*
 * Launcher helpers: messages, fatal exits and checked allocation.  The
 * launcher is an ordinary single-threaded program, so unlike src/common it
 * may use malloc and libc's strerror; it must still never print from a
 * forked child with exit() (stdio buffers would be flushed twice).
 */
#ifndef FE_LAUNCHER_UTILS_H
#define FE_LAUNCHER_UTILS_H

#include <stddef.h>

#include "fakeenv/daemon.h"

/* Exit statuses of our own, as env(1) and timeout(1) use them; and
 * FE_EXIT_FAIL (fakeenv/daemon.h): fakeenv itself failed. */
#define FE_EXIT_NOEXEC   126 /* CMD found but could not be executed */
#define FE_EXIT_NOTFOUND 127 /* CMD not found */

/* Print "fakeenv: <message>" and, when err is not 0, ": <strerror(err)>",
 * in one write(2) to stderr.  errno is kept. */
__attribute__((format(printf, 2, 3)))
void fe_msg(int err, const char *fmt, ...);

/* fe_msg() then exit(FE_EXIT_FAIL).  die_errno() reports the errno current
 * at the call, saved before anything else runs. */
__attribute__((noreturn, format(printf, 1, 2)))
void die(const char *fmt, ...);
__attribute__((noreturn, format(printf, 1, 2)))
void die_errno(const char *fmt, ...);

/* Allocation that cannot fail: out of memory is fatal (exit 125). */
void *xmalloc(size_t size);
char *xstrdup(const char *s);
__attribute__((format(printf, 1, 2)))
char *xasprintf(const char *fmt, ...);

#endif
