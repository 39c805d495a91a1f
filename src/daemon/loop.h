/*
 * The daemon's event loop: one thread, one epoll set holding the listening
 * socket, a signalfd and every client.  It owns the sockets and the
 * session rules (who may connect, when to exit, whom to kill when the
 * launcher dies); serve.c owns what a request does.
 */
#ifndef FE_DAEMON_LOOP_H
#define FE_DAEMON_LOOP_H

#include <stdbool.h>

/* Seconds to wait for a first client before concluding that the launcher
 * died first. */
#define FE_LOOP_FIRST_CLIENT_SEC 30

/*
 * Serve clients accepted on listen_fd (a listening AF_UNIX SOCK_SEQPACKET
 * socket) until SIGTERM, until the last client leaves (after at least one
 * came), or until no client came within FE_LOOP_FIRST_CLIENT_SEC.  Takes
 * over the signal dispositions: SIGTERM ends the loop, the other signals a
 * terminal or a parent may send are ignored.  Closes listen_fd.  Returns 0
 * on one of those ends, or -errno when the loop could not be set up.
 */
int fe_loop_run(int listen_fd, bool unknown_is_real);

#endif
