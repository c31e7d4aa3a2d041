/* SPDX-License-Identifier: MIT */
/*
 * The NVMe/TCP host's byte stream (host_sock.h): plain socket calls, or TLS 1.3 with an
 * external PSK (NVMe/TCP Transport Specification 1.1, section 3.6; TP 8011) as nvme-cli
 * and the Linux host use it: the configured PSK (interchange format) gives the retained
 * PSK for the host NQN, the PSK identity of version 1 ("NVMe1R<hh> <hostnqn> <subnqn>
 * <digest>", the default) or 0 ("NVMe0R<hh> <hostnqn> <subnqn>") and the TLS PSK of that
 * identity (common/tls_psk.c). The subsystem NQN is the URI's, the discovery NQN for a
 * discovery controller. The one cipher suite offered follows the PSK's hash: 01
 * TLS_AES_128_GCM_SHA256, 02 TLS_AES_256_GCM_SHA384. The handshake is blocking, within
 * the connect timeout, as the rest of queue-pair setup is.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "common/key_file.h"
#include "common/tls_psk.h"
#include "common/tls_stream.h"
#include "host_nvme.h"
#include "host_sock.h"

struct host_tls_key {
	struct nvme_tls_key key;
	int version; /* PSK identity version */
};

void host_tls_key_free(struct host_tls_key *k)
{
	if (!k)
		return;
	nvme_tls_key_clear(&k->key);
	free(k);
}

int host_tls_ctrlr_init(struct nvmeof_ctrlr *ctrlr)
{
	struct nvmeof_opts *o = &ctrlr->opts;
	struct host_tls_key *k;
	char err[200];
	int rc;

	char text[NVME_TLS_KEY_TEXT_MAX + 2];

	if (!o->tls && !o->tls_key && !o->tls_key_file)
		return 0;
	o->tls = true; /* a key means TLS */
	if (o->tls_key && o->tls_key_file)
		return set_error(-EINVAL, "TLS: give the key or its file, not both");
	if (o->tls_key_file) {
		rc = nvme_key_file_read(o->tls_key_file, text, sizeof(text), err, sizeof(err));
		if (rc < 0) /* a bad option, as a bad key is */
			return set_error(-EINVAL, "TLS: %s", err);
		o->tls_key = text;
	}
	if (!o->tls_key || !o->tls_key[0])
		return set_error(-EINVAL, "TLS needs the host's PSK (tls_key, --tls-key)");
	if (ctrlr->uri.transport != URI_TRANSPORT_TCP)
		return set_error(-EINVAL, "TLS is for nvme+tcp:// controllers only");
	if (o->tls_identity != 0 && o->tls_identity != 1)
		return set_error(-EINVAL, "TLS PSK identity version %d: expected 0 or 1",
				 o->tls_identity);
	k = calloc(1, sizeof(*k));
	rc = k ? nvme_tls_key_parse(o->tls_key, &k->key, err, sizeof(err)) : -ENOMEM;
	o->tls_key = o->tls_key_file = NULL; /* the caller's strings are not kept */
	OPENSSL_cleanse(text, sizeof(text));
	if (rc) {
		free(k);
		return rc == -ENOMEM ? set_error(rc, "out of memory")
				     : set_error(-EINVAL, "%s", err);
	}
	k->version = o->tls_identity;
	ctrlr->tls_key = k;
	return 0;
}

/* ---- plain ------------------------------------------------------------------------------ */

static ssize_t plain_readv(struct host_sock *s, const struct iovec *iov, int cnt)
{
	ssize_t n;

	do {
		n = readv(s->fd, iov, cnt);
	} while (n < 0 && errno == EINTR);
	return n;
}

static ssize_t plain_writev(struct host_sock *s, const struct iovec *iov, int cnt)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };
	ssize_t n;

	do {
		n = sendmsg(s->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	return n;
}

static bool plain_pending(const struct host_sock *s)
{
	(void)s;
	return false;
}

const struct host_sock_ops host_sock_plain = {
	.name = "tcp",
	.readv = plain_readv,
	.writev = plain_writev,
	.pending = plain_pending,
};

void host_sock_init(struct host_sock *s, int fd)
{
	host_sock_tls_free(s);
	memset(s, 0, sizeof(*s));
	s->ops = &host_sock_plain;
	s->fd = fd;
}

/* ---- TLS -------------------------------------------------------------------------------- */

static ssize_t tls_readv(struct host_sock *s, const struct iovec *iov, int cnt)
{
	ssize_t n = tls_stream_readv(s->tls, iov, cnt);

	if (n < 0 && errno == EPROTO)
		nlog_warn("%s", tls_stream_reason(s->tls));
	return n;
}

static ssize_t tls_writev(struct host_sock *s, const struct iovec *iov, int cnt)
{
	ssize_t n = tls_stream_writev(s->tls, iov, cnt);

	if (n < 0 && errno == EPROTO)
		nlog_warn("%s", tls_stream_reason(s->tls));
	return n;
}

static bool tls_pending(const struct host_sock *s)
{
	return tls_stream_pending(s->tls);
}

const struct host_sock_ops host_sock_tls = {
	.name = "tls",
	.readv = tls_readv,
	.writev = tls_writev,
	.pending = tls_pending,
};

void host_sock_tls_free(struct host_sock *s)
{
	tls_stream_free(s->tls);
	s->tls = NULL;
	SSL_CTX_free(s->tls_ctx);
	s->tls_ctx = NULL;
	s->tls_cipher[0] = '\0';
	if (s->ops == &host_sock_tls)
		s->ops = &host_sock_plain;
}

/* What the PSK callback offers; lives for the handshake only. */
struct tls_offer {
	char identity[NVME_TLS_IDENTITY_MAX];
	struct nvme_secret *psk;
	uint8_t hash_id;
};

static int psk_use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		      SSL_SESSION **sessp)
{
	static const unsigned char suite_ids[3][2] = { { 0 }, { 0x13, 0x01 }, { 0x13, 0x02 } };
	const struct tls_offer *offer = tls_stream_app(ssl);
	const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, suite_ids[offer->hash_id == 2 ? 2 : 1]);
	SSL_SESSION *sess;

	*sessp = NULL;
	if (!cipher || (md && md != SSL_CIPHER_get_handshake_digest(cipher)))
		return 1; /* no PSK for that hash */
	sess = SSL_SESSION_new();
	if (!sess || !SSL_SESSION_set1_master_key(sess, offer->psk->key, offer->psk->len) ||
	    !SSL_SESSION_set_cipher(sess, cipher) ||
	    !SSL_SESSION_set_protocol_version(sess, TLS1_3_VERSION)) {
		SSL_SESSION_free(sess);
		return 0;
	}
	*id = (const unsigned char *)offer->identity;
	*idlen = strlen(offer->identity);
	*sessp = sess; /* OpenSSL owns it now */
	return 1;
}

int host_sock_tls_connect(struct host_sock *s, const struct nvmeof_ctrlr *ctrlr, uint64_t deadline)
{
	const struct host_tls_key *k = ctrlr->tls_key;
	const char *subnqn = ctrlr->uri.discovery || !ctrlr->uri.name[0] ? NVME_DISCOVERY_NQN
									 : ctrlr->uri.name;
	struct tls_offer offer = { .hash_id = nvme_tls_key_cipher(&k->key) };
	char err[200];
	SSL_CTX *ctx;
	BIO *bio;
	int rc;

	rc = nvme_tls_derive(&k->key, k->version, ctrlr->hostnqn, subnqn, 0, offer.identity,
			     sizeof(offer.identity), &offer.psk);
	if (rc < 0)
		return set_error(rc, "TLS: cannot derive the PSK of identity version %d: %s",
				 k->version, strerror(-rc));
	ctx = tls_stream_ctx_new(false, err, sizeof(err));
	if (!ctx || SSL_CTX_set_ciphersuites(ctx, tls_stream_cipher_for_hash(offer.hash_id)) != 1) {
		nvme_secret_free(offer.psk);
		SSL_CTX_free(ctx);
		return set_error(-ENOMEM, "TLS: %s", ctx ? "cannot set the cipher suite" : err);
	}
	SSL_CTX_set_psk_use_session_callback(ctx, psk_use_cb);
	rc = 0;
	s->tls_ctx = ctx;
	bio = BIO_new_socket(s->fd, BIO_NOCLOSE);
	s->tls = bio ? tls_stream_new(ctx, bio, false, &offer) : NULL;
	if (!s->tls) {
		nvme_secret_free(offer.psk);
		host_sock_tls_free(s);
		return set_error(-ENOMEM, "out of memory");
	}
	for (;;) {
		enum tls_stream_io io = tls_stream_handshake(s->tls);

		if (io == TLS_IO_DONE)
			break;
		if (io == TLS_IO_ERROR) {
			/* A controller that ends the handshake with a fatal alert has decided
			 * (no PSK for this identity, or another key): a refusal, which
			 * reconnecting will not change. A reset or a closed socket is an
			 * outage. */
			rc = set_error(tls_stream_peer_alert(s->tls) >= 0 ? -EACCES : -ECONNREFUSED,
				       "TLS handshake with %s:%u failed: %s (does the controller "
				       "hold this host's PSK?)",
				       ctrlr->uri.host, ctrlr->uri.port, tls_stream_reason(s->tls));
			break;
		}
		rc = sock_wait_fd(s->fd, io == TLS_IO_WANT_READ ? POLLIN : POLLOUT, deadline);
		if (rc) {
			rc = set_error(rc, "TLS handshake with %s:%u: %s", ctrlr->uri.host,
				       ctrlr->uri.port,
				       rc == -ETIMEDOUT ? "no answer in time" : strerror(-rc));
			break;
		}
	}
	nvme_secret_free(offer.psk);
	if (rc) {
		host_sock_tls_free(s);
		return rc;
	}
	s->ops = &host_sock_tls;
	s->tls_version = k->version;
	snprintf(s->tls_cipher, sizeof(s->tls_cipher), "%s", tls_stream_cipher(s->tls));
	nlog_debug("TLS 1.3 with %s, PSK identity v%d: %s", s->tls_cipher, k->version,
		   offer.identity);
	return 0;
}

int host_sock_recv_all(struct host_sock *s, void *buf, size_t len, uint64_t deadline)
{
	size_t done = 0;

	while (done < len) {
		struct iovec v = { .iov_base = (uint8_t *)buf + done, .iov_len = len - done };
		ssize_t n = s->ops->readv(s, &v, 1);
		int rc;

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (s->ops->pending(s))
			continue;
		rc = sock_wait_fd(s->fd, POLLIN, deadline);
		if (rc)
			return rc;
	}
	return 0;
}
