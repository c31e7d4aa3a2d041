/* SPDX-License-Identifier: MIT */
/* Socket helpers shared by the stream transports (NVMe/TCP, iSCSI): dialling a target with
 * a deadline, waiting for a descriptor, and moving an exact length before a deadline.
 * (NVMe/TCP's handshake reads through its plain-or-TLS stream: nvme/host_tls.c's
 * host_sock_recv_all.) */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host_internal.h"

int sock_wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	uint64_t now = now_ms();
	int rc;

	if (now >= deadline)
		return -ETIMEDOUT;
	rc = poll(&pfd, 1, (int)(deadline - now));
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	return rc == 0 ? -ETIMEDOUT : 0;
}

int sock_xfer_all(int fd, void *buf, size_t len, bool out, uint64_t deadline)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? send(fd, (uint8_t *)buf + done, len - done,
				       MSG_NOSIGNAL | MSG_DONTWAIT)
				: recv(fd, (uint8_t *)buf + done, len - done, MSG_DONTWAIT);
		int rc;

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return errno == EPIPE ? -ECONNRESET : -errno;
		rc = sock_wait_fd(fd, out ? POLLOUT : POLLIN, deadline);
		if (rc)
			return rc;
	}
	return 0;
}

int sock_dial(const struct uri_target *u, int timeout_ms, uint64_t deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
	struct addrinfo *res, *ai;
	char port[8];
	int rc, fd = -1, err = ECONNREFUSED;

	snprintf(port, sizeof(port), "%u", u->port);
	rc = getaddrinfo(u->host, port, &hints, &res);
	if (rc)
		return set_error(-EHOSTUNREACH, "cannot resolve '%s': %s", u->host,
				 gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		socklen_t len = sizeof(err);

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		if (errno != EINPROGRESS) {
			err = errno;
			close(fd);
			fd = -1;
			continue;
		}
		rc = sock_wait_fd(fd, POLLOUT, deadline);
		if (rc == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
			break;
		if (rc)
			err = -rc;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		if (err == ETIMEDOUT)
			return set_error(-ETIMEDOUT, "cannot connect to %s:%u: no answer in %d ms",
					 u->host, u->port, timeout_ms);
		return set_error(-err, "cannot connect to %s:%u: %s", u->host, u->port,
				 strerror(err));
	}
	return fd;
}
