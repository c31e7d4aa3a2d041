/* SPDX-License-Identifier: MIT */
/* TLS 1.3 byte stream for NVMe/TCP over OpenSSL (see tls_stream.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "common/tls_stream.h"

struct tls_stream {
	SSL *ssl;
	enum tls_stream_state state;
	void *app;
	/* Bytes given to an SSL_write_ex() that asked to be called again: the next
	 * writev() offers the same bytes, and they are sent from here. */
	size_t retry_len;
	uint64_t records_out;
	char reason[160];
	uint8_t stage[TLS_STREAM_RECORD];
};

static const char *const state_names[TLS_STREAM_NSTATES] = {
	[TLS_STREAM_HANDSHAKE] = "HANDSHAKE",
	[TLS_STREAM_OPEN] = "OPEN",
	[TLS_STREAM_CLOSED] = "CLOSED",
	[TLS_STREAM_FAILED] = "FAILED",
};

const char *tls_stream_state_name(enum tls_stream_state s)
{
	return s < TLS_STREAM_NSTATES ? state_names[s] : "?";
}

#define B(s) (1u << (s))
static const uint32_t next_ok[TLS_STREAM_NSTATES] = {
	[TLS_STREAM_HANDSHAKE] = B(TLS_STREAM_OPEN) | B(TLS_STREAM_CLOSED) | B(TLS_STREAM_FAILED),
	[TLS_STREAM_OPEN] = B(TLS_STREAM_CLOSED) | B(TLS_STREAM_FAILED),
	[TLS_STREAM_CLOSED] = B(TLS_STREAM_FAILED),
	[TLS_STREAM_FAILED] = 0,
};
#undef B

bool tls_stream_transition_ok(enum tls_stream_state from, enum tls_stream_state to)
{
	return from < TLS_STREAM_NSTATES && to < TLS_STREAM_NSTATES && (next_ok[from] & (1u << to));
}

static void set_state(struct tls_stream *ts, enum tls_stream_state s)
{
	if (ts->state == s || !tls_stream_transition_ok(ts->state, s))
		return; /* a failed or closed stream stays so */
	ts->state = s;
}

const char *tls_stream_cipher_for_hash(uint8_t hash_id)
{
	switch (hash_id) {
	case 1:
		return "TLS_AES_128_GCM_SHA256";
	case 2:
		return "TLS_AES_256_GCM_SHA384";
	default:
		return NULL;
	}
}

SSL_CTX *tls_stream_ctx_new(bool server, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());

	if (!ctx) {
		snprintf(err, errlen, "cannot create a TLS context: %s",
			 ERR_reason_error_string(ERR_get_error()));
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_ciphersuites(ctx, TLS_STREAM_CIPHERS) != 1) {
		snprintf(err, errlen, "cannot restrict TLS to 1.3 with %s", TLS_STREAM_CIPHERS);
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* External PSKs only: no resumption tickets, nothing to verify, no compression. */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION |
					 SSL_OP_NO_RENEGOTIATION);
	/* PDUs frame themselves: a peer closing without close_notify is an end of stream. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_read_ahead(ctx, 1);
	return ctx;
}

struct tls_stream *tls_stream_new(SSL_CTX *ctx, BIO *bio, bool server, void *app)
{
	struct tls_stream *ts = calloc(1, sizeof(*ts));

	if (!ts) {
		BIO_free(bio);
		return NULL;
	}
	ts->ssl = SSL_new(ctx);
	if (!ts->ssl) {
		BIO_free(bio);
		free(ts);
		return NULL;
	}
	SSL_set_bio(ts->ssl, bio, bio);
	SSL_set_app_data(ts->ssl, ts);
	ts->app = app;
	if (server)
		SSL_set_accept_state(ts->ssl);
	else
		SSL_set_connect_state(ts->ssl);
	ts->state = TLS_STREAM_HANDSHAKE;
	return ts;
}

void tls_stream_free(struct tls_stream *ts)
{
	if (!ts)
		return;
	SSL_free(ts->ssl); /* wipes the session keys */
	OPENSSL_cleanse(ts->stage, sizeof(ts->stage));
	free(ts);
}

SSL *tls_stream_ssl(struct tls_stream *ts)
{
	return ts->ssl;
}

void *tls_stream_app(SSL *ssl)
{
	struct tls_stream *ts = SSL_get_app_data(ssl);

	return ts ? ts->app : NULL;
}

enum tls_stream_state tls_stream_state(const struct tls_stream *ts)
{
	return ts->state;
}

const char *tls_stream_reason(const struct tls_stream *ts)
{
	return ts->reason;
}

void tls_stream_set_reason(struct tls_stream *ts, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ts->reason, sizeof(ts->reason), fmt, ap);
	va_end(ap);
}

const char *tls_stream_cipher(const struct tls_stream *ts)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(ts->ssl);

	return c ? SSL_CIPHER_standard_name(c) : "";
}

uint64_t tls_stream_records_out(const struct tls_stream *ts)
{
	return ts->records_out;
}

/* OpenSSL's reason for the failure, unless a callback has said something better. */
static void take_reason(struct tls_stream *ts, const char *what)
{
	unsigned long e = ERR_peek_last_error();

	if (!ts->reason[0]) {
		const char *r = e ? ERR_reason_error_string(e) : NULL;

		snprintf(ts->reason, sizeof(ts->reason), "%s: %s", what,
			 r ? r : (errno ? strerror(errno) : "connection closed"));
	}
	ERR_clear_error();
}

enum tls_stream_io tls_stream_handshake(struct tls_stream *ts)
{
	int rc;

	if (ts->state == TLS_STREAM_OPEN)
		return TLS_IO_DONE;
	if (ts->state != TLS_STREAM_HANDSHAKE)
		return TLS_IO_ERROR;
	ERR_clear_error();
	errno = 0;
	rc = SSL_do_handshake(ts->ssl);
	if (rc == 1) {
		set_state(ts, TLS_STREAM_OPEN);
		ts->reason[0] = '\0'; /* what a callback expected to go wrong did not */
		return TLS_IO_DONE;
	}
	switch (SSL_get_error(ts->ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return TLS_IO_WANT_READ;
	case SSL_ERROR_WANT_WRITE:
		return TLS_IO_WANT_WRITE;
	default:
		take_reason(ts, "TLS handshake failed");
		set_state(ts, TLS_STREAM_FAILED);
		return TLS_IO_ERROR;
	}
}

ssize_t tls_stream_readv(struct tls_stream *ts, const struct iovec *iov, int cnt)
{
	size_t total = 0;

	if (ts->state == TLS_STREAM_CLOSED)
		return 0;
	if (ts->state != TLS_STREAM_OPEN) {
		errno = EPROTO;
		return -1;
	}
	for (int i = 0; i < cnt; i++) {
		size_t off = 0;

		while (off < iov[i].iov_len) {
			size_t n = 0;
			int rc, err;

			ERR_clear_error();
			errno = 0;
			rc = SSL_read_ex(ts->ssl, (uint8_t *)iov[i].iov_base + off,
					 iov[i].iov_len - off, &n);
			if (rc == 1) {
				off += n;
				total += n;
				continue;
			}
			err = SSL_get_error(ts->ssl, rc);
			if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
				if (total)
					return (ssize_t)total;
				errno = EAGAIN;
				return -1;
			}
			if (err == SSL_ERROR_ZERO_RETURN ||
			    (err == SSL_ERROR_SYSCALL && errno == 0 && !ERR_peek_error())) {
				/* close_notify, or the transport ended */
				set_state(ts, TLS_STREAM_CLOSED);
				ERR_clear_error();
				return (ssize_t)total;
			}
			if (err == SSL_ERROR_SYSCALL && errno) {
				int e = errno;

				take_reason(ts, "TLS receive");
				set_state(ts, TLS_STREAM_FAILED);
				errno = e == EPIPE ? ECONNRESET : e;
				return total ? (ssize_t)total : -1;
			}
			take_reason(ts, "TLS record error");
			set_state(ts, TLS_STREAM_FAILED);
			if (total)
				return (ssize_t)total;
			errno = EPROTO;
			return -1;
		}
	}
	return (ssize_t)total;
}

bool tls_stream_pending(const struct tls_stream *ts)
{
	return ts->state == TLS_STREAM_OPEN && SSL_has_pending(ts->ssl);
}

/* One record's worth of @iov from byte @skip: staged when it is made of small pieces, or
 * pointed at when one piece holds a whole record. Returns its length. */
static size_t next_chunk(struct tls_stream *ts, const struct iovec *iov, int cnt, size_t skip,
			 const uint8_t **out)
{
	size_t len = 0;
	int i = 0;

	while (i < cnt && skip >= iov[i].iov_len)
		skip -= iov[i++].iov_len;
	if (i == cnt)
		return 0;
	if (iov[i].iov_len - skip >= TLS_STREAM_RECORD) {
		*out = (const uint8_t *)iov[i].iov_base + skip;
		return TLS_STREAM_RECORD;
	}
	for (; i < cnt && len < TLS_STREAM_RECORD; i++) {
		size_t n = iov[i].iov_len - skip;

		if (n > TLS_STREAM_RECORD - len)
			n = TLS_STREAM_RECORD - len;
		memcpy(ts->stage + len, (const uint8_t *)iov[i].iov_base + skip, n);
		len += n;
		skip = 0;
	}
	*out = ts->stage;
	return len;
}

/* The caller offers again the bytes of a write that has to be repeated. */
static bool same_bytes(const struct tls_stream *ts, const struct iovec *iov, int cnt)
{
	size_t off = 0;

	for (int i = 0; i < cnt && off < ts->retry_len; i++) {
		size_t n = iov[i].iov_len;

		if (n > ts->retry_len - off)
			n = ts->retry_len - off;
		if (memcmp(ts->stage + off, iov[i].iov_base, n))
			return false;
		off += n;
	}
	return off == ts->retry_len;
}

ssize_t tls_stream_writev(struct tls_stream *ts, const struct iovec *iov, int cnt)
{
	size_t total = 0;

	if (ts->state != TLS_STREAM_OPEN) {
		errno = EPIPE;
		return -1;
	}
	if (ts->retry_len && !same_bytes(ts, iov, cnt)) {
		tls_stream_set_reason(ts, "TLS send: the bytes of a repeated write changed");
		set_state(ts, TLS_STREAM_FAILED);
		errno = EPROTO;
		return -1;
	}
	for (;;) {
		const uint8_t *p = NULL;
		size_t len, n = 0;
		int rc, err;

		if (ts->retry_len) {
			p = ts->stage;
			len = ts->retry_len;
		} else {
			len = next_chunk(ts, iov, cnt, total, &p);
			if (!len)
				return (ssize_t)total;
		}
		ERR_clear_error();
		errno = 0;
		rc = SSL_write_ex(ts->ssl, p, len, &n);
		if (rc == 1) {
			ts->retry_len = 0;
			ts->records_out++;
			total += len;
			continue;
		}
		err = SSL_get_error(ts->ssl, rc);
		if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
			/* The record is made: it must be offered again, byte for byte. */
			if (p != ts->stage)
				memcpy(ts->stage, p, len);
			ts->retry_len = len;
			if (total)
				return (ssize_t)total;
			errno = EAGAIN;
			return -1;
		}
		take_reason(ts, "TLS send");
		set_state(ts, TLS_STREAM_FAILED);
		errno = err == SSL_ERROR_SYSCALL && errno ? errno : EPROTO;
		return total ? (ssize_t)total : -1;
	}
}
