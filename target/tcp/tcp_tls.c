/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP over TLS 1.3 (NVMe/TCP Transport Specification 1.1, section 3.6; TP 8011) on
 * ports whose TSAS says so: a connection's first byte tells a TLS ClientHello (record
 * type 22) from a plain ICReq (PDU type 0). A plain host is served where TLS is "not
 * required" and gets a TermReq for its ICReq where it is required (tcp_recv.c). A TLS
 * host runs a non-blocking handshake on its reactor (SSL_ERROR_WANT_READ/WRITE drive the
 * connection's read and write watchers) within the connect deadline, then its PDUs flow
 * through tcp_sock_tls, which the receive and send machines use as they use the socket.
 *
 * Authentication is by external PSK only, as Linux nvmet and tlshd do it: the host's PSK
 * identity ("NVMe0R<hh> <hostnqn> <subnqn>" or "NVMe1R<hh> <hostnqn> <subnqn> <digest>")
 * names the host, whose configured PSK (nvmf_tgt_get_host_psk) gives the retained PSK and
 * from it the TLS PSK of that identity (common/tls_psk.c). <hh> picks the cipher suite
 * (01 TLS_AES_128_GCM_SHA256, 02 TLS_AES_256_GCM_SHA384). A TCP connection does not know
 * its subsystem before Connect, so the identity carries it (the discovery NQN for a
 * discovery controller); Connect must then name that host and that subsystem
 * (tcp_tls_connect_allowed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "common/log.h"
#include "common/tls_psk.h"
#include "common/tls_stream.h"
#include "tcp_internal.h"

#define TLS_RECORD_HANDSHAKE 22 /* TLS record content type of a ClientHello */
#define TLS_EXT_PSK          41 /* pre_shared_key extension */

struct tcp_tls {
	struct tls_stream *ts;
	int version;     /* PSK identity version, 0 or 1 */
	uint8_t hash_id; /* 01 SHA-256, 02 SHA-384 */
	char hostnqn[NVME_NQN_FIELD];
	char subnqn[NVME_NQN_FIELD];
	char desc[96]; /* " over TLS 1.3 (cipher, identity vN)" */
};

static SSL_CTX *g_ctx; /* one server context, made on the main thread at the first TLS listen */

/* ---- the handshake machine ------------------------------------------------------------- */

static const char *const tls_state_names[TCP_TLS_NSTATES] = {
	[TCP_TLS_NONE] = "NONE", [TCP_TLS_DETECT] = "DETECT", [TCP_TLS_HANDSHAKE] = "HANDSHAKE",
	[TCP_TLS_OPEN] = "OPEN", [TCP_TLS_FAILED] = "FAILED",
};

const char *tcp_tls_state_name(enum tcp_tls_state s)
{
	return s < TCP_TLS_NSTATES ? tls_state_names[s] : "?";
}

#define B(s) (1u << (s))
static const uint32_t tls_next[TCP_TLS_NSTATES] = {
	[TCP_TLS_NONE] = B(TCP_TLS_DETECT),
	[TCP_TLS_DETECT] = B(TCP_TLS_NONE) | B(TCP_TLS_HANDSHAKE) | B(TCP_TLS_FAILED),
	[TCP_TLS_HANDSHAKE] = B(TCP_TLS_OPEN) | B(TCP_TLS_FAILED),
	[TCP_TLS_OPEN] = 0,
	[TCP_TLS_FAILED] = 0,
};
#undef B

bool tcp_tls_transition_ok(enum tcp_tls_state from, enum tcp_tls_state to)
{
	return from < TCP_TLS_NSTATES && to < TCP_TLS_NSTATES && (tls_next[from] & (1u << to));
}

void tcp_tls_set_state(struct tcp_qpair *tq, enum tcp_tls_state s)
{
	if (tq->tls_state == s)
		return;
	if (!tcp_tls_transition_ok(tq->tls_state, s)) {
		static struct log_ratelimit rl;

		log_msg_rl(&rl, LOG_LVL_ERR, "%s: TLS state: illegal transition %s -> %s",
			   tq->qp.peer, tcp_tls_state_name(tq->tls_state), tcp_tls_state_name(s));
		assert(!"illegal NVMe/TCP TLS state transition");
	}
	tq->tls_state = s;
}

/* ---- PSK lookup (OpenSSL callbacks, on the connection's reactor) ------------------------ */

/*
 * Before the cipher suite is chosen: the first PSK identity's <hh> decides which of the
 * two suites this connection may use, so a client offering both gets the one its PSK
 * hash matches (OpenSSL ignores a PSK whose hash differs from the suite's).
 */
static int client_hello_cb(SSL *ssl, int *alert, void *arg)
{
	const unsigned char *ext;
	const char *suite;
	size_t len, idlen;

	(void)alert;
	(void)arg;
	if (SSL_client_hello_get0_ext(ssl, TLS_EXT_PSK, &ext, &len) != 1 || len < 4)
		return SSL_CLIENT_HELLO_SUCCESS; /* no PSK: the handshake fails without one */
	idlen = (size_t)ext[2] << 8 | ext[3];
	/* identities<7..2^16-1>: the first one's length, then "NVMe<v><R|G><hh>..." */
	if (idlen < 8 || 4 + idlen > len || memcmp(ext + 4, "NVMe", 4) || ext[10] != '0')
		return SSL_CLIENT_HELLO_SUCCESS;
	suite = tls_stream_cipher_for_hash((uint8_t)(ext[11] - '0'));
	if (suite)
		SSL_set_ciphersuites(ssl, suite);
	return SSL_CLIENT_HELLO_SUCCESS;
}

static int psk_find_cb(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sessp)
{
	struct tls_stream *ts = SSL_get_app_data(ssl);
	struct tcp_qpair *tq = tls_stream_app(ssl);
	static const unsigned char suite_ids[3][2] = { { 0 }, { 0x13, 0x01 }, { 0x13, 0x02 } };
	struct nvme_tls_identity ident;
	struct nvme_tls_key key = { 0 };
	struct nvme_secret *retained = NULL, *tls_psk = NULL;
	char idbuf[NVME_TLS_IDENTITY_MAX], err[160], digest[NVME_TLS_DIGEST_MAX];
	const SSL_CIPHER *cipher;
	SSL_SESSION *sess = NULL;
	int rc;

	*sessp = NULL;
	if (!idlen || idlen >= sizeof(idbuf) || memchr(id, 0, idlen)) {
		tls_stream_set_reason(ts, "PSK identity of %zu bytes refused", idlen);
		return 1;
	}
	memcpy(idbuf, id, idlen);
	idbuf[idlen] = '\0';
	if (nvme_tls_identity_parse(idbuf, &ident, err, sizeof(err))) {
		tls_stream_set_reason(ts, "bad PSK identity: %s", err);
		return 1;
	}
	if (ident.generated) {
		tls_stream_set_reason(ts,
				      "host %s offers a generated PSK (secure concatenation), "
				      "which is not supported",
				      ident.hostnqn);
		return 1;
	}
	if (nvmf_tgt_get_host_psk(tq->qp.tgt, ident.hostnqn, &key)) {
		tls_stream_set_reason(ts, "no TLS PSK configured for host %s", ident.hostnqn);
		return 1;
	}
	if (nvme_tls_key_cipher(&key) != ident.hash_id) {
		tls_stream_set_reason(ts,
				      "host %s: PSK identity hash %02u, its configured key "
				      "is for hash %02u",
				      ident.hostnqn, ident.hash_id, nvme_tls_key_cipher(&key));
		goto out;
	}
	rc = nvme_tls_retained_psk(&key, ident.hostnqn, 0, &retained);
	if (rc == 0 && ident.version == 1) {
		rc = nvme_tls_psk_digest(ident.hash_id, retained, ident.hostnqn, ident.subsysnqn,
					 digest, sizeof(digest));
		if (rc >= 0 && strcmp(digest, ident.digest)) {
			tls_stream_set_reason(ts,
					      "host %s: PSK digest differs: the host holds "
					      "another key",
					      ident.hostnqn);
			goto out;
		}
	}
	if (rc >= 0)
		rc = nvme_tls_psk_derive(retained, idbuf, 0, &tls_psk);
	cipher = SSL_CIPHER_find(ssl, suite_ids[ident.hash_id == 2 ? 2 : 1]);
	sess = rc >= 0 && cipher ? SSL_SESSION_new() : NULL;
	if (!sess || !SSL_SESSION_set1_master_key(sess, tls_psk->key, tls_psk->len) ||
	    !SSL_SESSION_set_cipher(sess, cipher) ||
	    !SSL_SESSION_set_protocol_version(sess, TLS1_3_VERSION)) {
		tls_stream_set_reason(ts, "host %s: cannot derive the TLS PSK", ident.hostnqn);
		SSL_SESSION_free(sess);
		sess = NULL;
		goto out;
	}
	tq->tls->version = ident.version;
	tq->tls->hash_id = ident.hash_id;
	snprintf(tq->tls->hostnqn, sizeof(tq->tls->hostnqn), "%s", ident.hostnqn);
	snprintf(tq->tls->subnqn, sizeof(tq->tls->subnqn), "%s", ident.subsysnqn);
	tls_stream_set_reason(ts, "host %s: wrong PSK (handshake did not verify)", ident.hostnqn);
	*sessp = sess;
out:
	nvme_secret_free(retained);
	nvme_secret_free(tls_psk);
	nvme_tls_key_clear(&key);
	OPENSSL_cleanse(digest, sizeof(digest));
	return 1;
}

int tcp_tls_port_init(const struct nvmf_port *port)
{
	char err[200];

	if (port->sectype != NVMF_TCP_SECTYPE_TLS13 || g_ctx)
		return 0;
	g_ctx = tls_stream_ctx_new(true, err, sizeof(err));
	if (!g_ctx) {
		log_err("tls://%s:%s: %s", port->traddr, port->trsvcid, err);
		return -ENOMEM;
	}
	SSL_CTX_set_psk_find_session_callback(g_ctx, psk_find_cb);
	SSL_CTX_set_client_hello_cb(g_ctx, client_hello_cb, NULL);
	return 0;
}

/* ---- the connection ------------------------------------------------------------------- */

static void watch(struct tcp_qpair *tq, bool rd, bool wr)
{
	if (rd != tq->rio_on) {
		if (rd)
			ev_io_start(tq->loop, &tq->rio);
		else
			ev_io_stop(tq->loop, &tq->rio);
		tq->rio_on = rd;
	}
	if (wr != tq->wio_on) {
		if (wr)
			ev_io_start(tq->loop, &tq->wio);
		else
			ev_io_stop(tq->loop, &tq->wio);
		tq->wio_on = wr;
	}
}

/* Back to the PDU machines' own callbacks, over @ops. */
static void to_pdus(struct tcp_qpair *tq, const struct tcp_sock_ops *ops)
{
	tq->sock = ops;
	ev_set_cb(&tq->rio, tcp_read_cb);
	ev_set_cb(&tq->wio, tcp_write_cb);
	watch(tq, true, false);
	tcp_read_cb(tq->loop, &tq->rio, EV_READ); /* what came with the handshake, if any */
}

static void handshake_step(struct tcp_qpair *tq)
{
	struct tcp_tls *t = tq->tls;

	switch (tls_stream_handshake(t->ts)) {
	case TLS_IO_DONE:
		tcp_tls_set_state(tq, TCP_TLS_OPEN);
		snprintf(t->desc, sizeof(t->desc), " over TLS 1.3 (%s, PSK identity v%d)",
			 tls_stream_cipher(t->ts), t->version);
		log_info("%s: TLS 1.3 handshake done: %s, host %s, PSK identity v%d", tq->qp.peer,
			 tls_stream_cipher(t->ts), t->hostnqn, t->version);
		to_pdus(tq, &tcp_sock_tls);
		return;
	case TLS_IO_WANT_READ:
		watch(tq, true, false);
		return;
	case TLS_IO_WANT_WRITE:
		watch(tq, true, true);
		return;
	case TLS_IO_ERROR:
		break;
	}
	tcp_tls_set_state(tq, TCP_TLS_FAILED);
	log_peer("%s: %s", tq->qp.peer, tls_stream_reason(t->ts));
	tcp_qpair_close(tq, "TLS handshake failed");
}

/* First byte of a connection on a TLS port. */
static void detect(struct tcp_qpair *tq)
{
	uint8_t b;
	ssize_t n;
	BIO *bio;

	do {
		n = recv(tq->fd, &b, 1, MSG_PEEK);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		tcp_tls_set_state(tq, TCP_TLS_FAILED);
		tcp_qpair_close(tq, n == 0 ? "peer closed" : strerror(errno));
		return;
	}
	if (b != TLS_RECORD_HANDSHAKE) {
		/* A plain host: its ICReq is served or refused by the port's TREQ. */
		tcp_tls_set_state(tq, TCP_TLS_NONE);
		to_pdus(tq, &tcp_sock_plain);
		return;
	}
	tq->tls = calloc(1, sizeof(*tq->tls));
	bio = tq->tls ? BIO_new_socket(tq->fd, BIO_NOCLOSE) : NULL;
	if (bio)
		tq->tls->ts = tls_stream_new(g_ctx, bio, true, tq);
	if (!tq->tls || !tq->tls->ts) {
		tcp_tls_set_state(tq, TCP_TLS_FAILED);
		log_err("%s: out of memory for a TLS session", tq->qp.peer);
		tcp_qpair_close(tq, "out of memory");
		return;
	}
	tcp_tls_set_state(tq, TCP_TLS_HANDSHAKE);
	handshake_step(tq);
}

static void tls_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct tcp_qpair *tq = w->data;

	(void)loop;
	(void)revents;
	if (tq->closing)
		return;
	if (tq->tls_state == TCP_TLS_DETECT)
		detect(tq);
	else if (tq->tls_state == TCP_TLS_HANDSHAKE)
		handshake_step(tq);
}

void tcp_tls_begin(struct tcp_qpair *tq)
{
	tcp_tls_set_state(tq, TCP_TLS_DETECT);
	ev_set_cb(&tq->rio, tls_io_cb);
	ev_set_cb(&tq->wio, tls_io_cb);
}

bool tcp_tls_plain_refused(const struct tcp_qpair *tq)
{
	const struct nvmf_port *port = tq->qp.port;

	return port && port->sectype == NVMF_TCP_SECTYPE_TLS13 &&
	       port->treq == NVMF_TREQ_SECURE_REQUIRED && tq->tls_state != TCP_TLS_OPEN;
}

bool tcp_tls_connect_allowed(const struct nvmf_qpair *qp, const char *hostnqn, const char *subnqn)
{
	const struct tcp_qpair *tq = container_of(qp, struct tcp_qpair, qp);

	if (tq->tls_state != TCP_TLS_OPEN) {
		/* A host with a PSK speaks TLS or nothing, whatever the port's TREQ: its NQN
		 * over plain TCP is someone else's (or a downgrade). */
		if (!nvmf_tgt_host_has_psk_locked(qp->tgt, hostnqn))
			return true;
		if (qp->port)
			__atomic_add_fetch(&qp->port->plain_refused, 1, __ATOMIC_RELAXED);
		log_peer("%s: Connect as %s to %s over plain NVMe/TCP refused: the host has a "
			 "TLS PSK and must connect with TLS",
			 qp->peer, hostnqn, subnqn);
		return false;
	}
	if (!strcmp(tq->tls->hostnqn, hostnqn) && !strcmp(tq->tls->subnqn, subnqn))
		return true;
	log_peer("%s: Connect as %s to %s, but its TLS PSK identity named %s and %s", qp->peer,
		 hostnqn, subnqn, tq->tls->hostnqn, tq->tls->subnqn);
	return false;
}

const char *tcp_tls_describe(const struct tcp_qpair *tq)
{
	return tq->tls && tq->tls_state == TCP_TLS_OPEN ? tq->tls->desc : "";
}

void tcp_tls_free(struct tcp_qpair *tq)
{
	if (!tq->tls)
		return;
	tls_stream_free(tq->tls->ts);
	free(tq->tls);
	tq->tls = NULL;
}

/* ---- the TLS byte stream ---------------------------------------------------------------- */

static void record_error(struct tcp_qpair *tq)
{
	static struct log_ratelimit rl;

	if (errno == EPROTO)
		log_msg_rl(&rl, LOG_LVL_WARN, "%s: %s", tq->qp.peer,
			   tls_stream_reason(tq->tls->ts));
}

static ssize_t tls_readv(struct tcp_qpair *tq, const struct iovec *iov, int cnt)
{
	ssize_t n = tls_stream_readv(tq->tls->ts, iov, cnt);

	if (n < 0)
		record_error(tq);
	return n;
}

static ssize_t tls_writev(struct tcp_qpair *tq, const struct iovec *iov, int cnt)
{
	ssize_t n = tls_stream_writev(tq->tls->ts, iov, cnt);

	if (n < 0)
		record_error(tq);
	return n;
}

static bool tls_pending(const struct tcp_qpair *tq)
{
	return tls_stream_pending(tq->tls->ts);
}

const struct tcp_sock_ops tcp_sock_tls = {
	.name = "tls",
	.readv = tls_readv,
	.writev = tls_writev,
	.pending = tls_pending,
};
