/*
 * The shim's paths of open fds and of dirfd+path pairs (fdpath.c), as the
 * daemon's path hints want them, and what each thread keeps of its fds
 * so that a tree walker pays no readlink or fstat per entry.  Included by
 * shim.h.
 */
#ifndef FE_SHIM_FDPATH_H
#define FE_SHIM_FDPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Absolute form of dirfd+path for the daemon's path hint, in buf.  Returns
 * buf, or NULL when it cannot be built or does not fit FE_PATH_MAX (the
 * hint is then simply not sent). */
const char *fe_abspath(int dirfd, const char *path, char *buf, size_t size);

/* Path of an open fd (readlink of /proc/self/fd/N) into buf, or NULL. */
const char *fe_fdpath(int fd, char *buf, size_t size);

/* fd's path, for a file st that the caller found behind it (tok: fd's
 * token read before that stat), from this thread's cache when it holds
 * it, else by fe_fdpath() (and then kept). */
const char *fe_fd_hint(int fd, uint32_t tok, const struct stat *st, char *buf,
		       size_t size);

/* fe_abspath() where it costs no system call, but once per directory fd
 * with a token (whose path is then kept): an absolute path, or one
 * relative to such an fd; else NULL. */
const char *fe_cheap_abspath(int dirfd, const char *path, char *buf,
			     size_t size);

/* Remember hint as the path of fd, whose file is st, for this thread's
 * next fe_target_hint() of that fd (a creation's fd, which fchown and
 * fchmod follow: tar x).  tok: fd's token (fe_fd_token()) read before st
 * was.  st NULL: a regular file not statted, kept only with a token. */
void fe_fd_hint_keep(int fd, uint32_t tok, const struct stat *st,
		     const char *hint);

/* Forget what this thread kept of its fds (fe_fd_hint_keep(),
 * fe_fd_stat_keep(), fe_fd_dev()): in an exec wrapper, which a vfork
 * child runs in its parent's memory.  Async-signal-safe. */
void fe_fd_caches_drop(void);

/* st_dev of fd's file into *dev: 0, or the fstat's negative errno
 * (errno untouched).  While fd's token holds, what this thread found
 * last, with no fstat: readdir's d_type fix-up asks once per regular
 * entry. */
int fe_fd_dev(int fd, dev_t *dev);

/* This process renamed a directory: the fd paths kept so far may name
 * what is no longer there. */
void fe_fd_paths_moved(void);

/* The stat this thread kept for fd (fe_fd_stat_keep()), if fd's token
 * says it is still that file's: *st and *btag, true.  The real mode is
 * what it was when kept, but for this thread's chmods since
 * (fe_fd_stat_mode()). */
bool fe_fd_stat_cached(int fd, struct stat *st, uint32_t *btag);
void fe_fd_stat_keep(int fd, uint32_t tok, const struct stat *st,
		     uint32_t btag);

/* A chmod of ours gave the real inode dev:ino this mode (type bits
 * included): the kept stat follows. */
void fe_fd_stat_mode(dev_t dev, ino_t ino, mode_t mode);

#endif
