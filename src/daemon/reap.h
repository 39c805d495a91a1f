/*
 * Reaping orphans: the records of inodes that lost their last name
 * (DROP) stay while a process may still have the file open, since fstat
 * through that fd must still show the faked owner.  An inode with no
 * name and no open fd is gone for good: nobody can stat it again, and its
 * number may go to a new file, whose birth time differs.  Which inodes
 * are open is read from /proc: the fds, cwd and root of every process of
 * the daemon's user.
 */
#ifndef FE_DAEMON_REAP_H
#define FE_DAEMON_REAP_H

#include "serve.h"

/*
 * Drop every orphan record that no process of this user has open now.
 * When some process of the user cannot be looked into (its /proc fd
 * directory refused us: a set-id program), nothing is dropped: it might
 * hold them.  Returns how many were dropped (also added to s->reaped), or
 * -errno (/proc unreadable, no memory), the table then unchanged.
 */
long fe_reap_orphans(struct fe_srv *s);

/* Orphans at which the loop reaps between checkpoints: at least 4096, and
 * twice those that the last reap found still open, so that open orphans
 * never make every request pay a scan. */
uint64_t fe_reap_next(const struct fe_srv *s);

#endif
