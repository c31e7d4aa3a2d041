/* SPDX-License-Identifier: MIT */
/*
 * The plain byte stream of an NVMe/TCP connection: the socket itself. The PDU machines
 * (tcp_recv.c, tcp_send.c) read and write only through tq->sock, so a TLS session
 * (tcp_tls.c, tcp_sock_tls) slides in under them without changing them.
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "tcp_internal.h"

#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

static ssize_t plain_readv(struct tcp_qpair *tq, const struct iovec *iov, int cnt)
{
	ssize_t n;

	do {
		n = cnt == 1 ? recv(tq->fd, iov[0].iov_base, iov[0].iov_len, 0)
			     : readv(tq->fd, iov, cnt);
	} while (n < 0 && errno == EINTR);
	return n;
}

static ssize_t plain_writev(struct tcp_qpair *tq, const struct iovec *iov, int cnt)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
	int flags = MSG_NOSIGNAL | MSG_DONTWAIT;
	ssize_t n;

	if (tq->zc.arm) /* tcp_zerocopy.c decided; it learns the outcome from zc.used */
		flags |= MSG_ZEROCOPY;
	do {
		n = sendmsg(tq->fd, &msg, flags);
		if (n < 0 && errno == ENOBUFS && (flags & MSG_ZEROCOPY)) {
			flags &= ~MSG_ZEROCOPY; /* no room for the notification: copy this one */
			errno = EINTR;
		}
	} while (n < 0 && errno == EINTR);
	tq->zc.used = n > 0 && (flags & MSG_ZEROCOPY);
	return n;
}

static bool plain_pending(const struct tcp_qpair *tq)
{
	(void)tq;
	return false; /* the socket's own buffer: the read watcher sees it */
}

const struct tcp_sock_ops tcp_sock_plain = {
	.name = "tcp",
	.readv = plain_readv,
	.writev = plain_writev,
	.pending = plain_pending,
};
