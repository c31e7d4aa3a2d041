/* SPDX-License-Identifier: MIT */
/*
 * The byte stream under the NVMe/TCP host's PDU code (host_tcp.c): the socket itself, or a
 * TLS 1.3 session over it (host_tls.c), behind one small ops table with readv()/sendmsg()
 * semantics on a non-blocking socket: bytes (> 0), 0 at the end of the stream, -1 with
 * errno (EAGAIN: later). A read shorter than asked means the stream is drained for now;
 * after a full one, pending() says whether bytes wait above the socket that poll() would
 * not report.
 */
#ifndef NVMEOF_INITIATOR_HOST_SOCK_H
#define NVMEOF_INITIATOR_HOST_SOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "queue/host_internal.h"

struct host_sock;
struct tls_stream;

struct host_sock_ops {
	const char *name; /* "tcp", "tls" */
	ssize_t (*readv)(struct host_sock *s, const struct iovec *iov, int cnt);
	ssize_t (*writev)(struct host_sock *s, const struct iovec *iov, int cnt);
	bool (*pending)(const struct host_sock *s);
};

struct host_sock {
	const struct host_sock_ops *ops;
	int fd;
	struct tls_stream *tls; /* NULL: plain */
	void *tls_ctx;          /* SSL_CTX of this connection */
	int tls_version;        /* PSK identity version used */
	char tls_cipher[40];    /* negotiated suite, "" for plain */
};

extern const struct host_sock_ops host_sock_plain, host_sock_tls;

/* Plain stream over @fd (no TLS state). */
void host_sock_init(struct host_sock *s, int fd);
/*
 * TLS 1.3 client handshake over s->fd for @ctrlr (its PSK, host NQN and the subsystem
 * NQN of its URI, the discovery NQN for a discovery controller), blocking until
 * @deadline. On success s->ops is host_sock_tls. 0 or -errno with set_error().
 */
int host_sock_tls_connect(struct host_sock *s, const struct nvmeof_ctrlr *ctrlr, uint64_t deadline);
/* Frees the TLS session (the descriptor is the caller's). */
void host_sock_tls_free(struct host_sock *s);
/* Read exactly @len bytes before @deadline. 0, -ETIMEDOUT, -ECONNRESET or -errno. */
int host_sock_recv_all(struct host_sock *s, void *buf, size_t len, uint64_t deadline);

#endif
