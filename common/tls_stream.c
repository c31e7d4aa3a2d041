/* SPDX-License-Identifier: MIT */
/* TLS 1.3 byte stream for NVMe/TCP over OpenSSL (see tls_stream.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "common/iov.h"
#include "common/tls_stream.h"

/*
 * Writes: SSL encrypts records into a BIO pair (ssl_w -> net_w) of TLS_STREAM_WBUF bytes,
 * only when a whole record fits, so SSL_write_ex() never stops half way; the ciphertext
 * goes to the transport from the pair in as few calls as it takes. The plaintext of a
 * record counts as taken once its last ciphertext byte has left: until then the caller
 * still owns it and offers it again at the head of its next writev(). A small ring
 * remembers where each record ends in the ciphertext stream.
 */
#define TLS_STREAM_WBUF     (64 * 1024)
#define TLS_RECORD_OVERHEAD 256 /* header, content type, tag: 22 bytes; room to spare */
#define TLS_RING            32

struct tls_record {
	uint32_t plain; /* plaintext bytes of the caller's in it */
	uint64_t end;   /* its end in the ciphertext stream */
};

struct tls_stream {
	SSL *ssl;
	BIO *net;   /* the transport (reads by SSL, ciphertext writes by us) */
	BIO *net_w; /* our end of the pair SSL writes into */
	enum tls_stream_state state;
	bool hs_done; /* SSL finished the handshake; its last flight may still be queued */
	void *app;
	uint64_t queued, sent; /* ciphertext bytes put into the pair / written out */
	size_t unreported;     /* plaintext encrypted but not yet reported as taken */
	struct tls_record ring[TLS_RING];
	unsigned int rhead, rcount;
	uint64_t records_out;
	int peer_alert; /* the fatal alert the peer sent (TLS AlertDescription), -1: none */
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
	SSL_CTX_set_options(ctx,
			    SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
	/* PDUs frame themselves: a peer closing without close_notify is an end of stream. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_read_ahead(ctx, 1);
	/* Read ahead up to four full records per read() (128K of data: 2 or 3 calls). */
	SSL_CTX_set_default_read_buffer_len(ctx, 4 * (TLS_STREAM_RECORD + TLS_RECORD_OVERHEAD));
	return ctx;
}

struct tls_stream *tls_stream_new(SSL_CTX *ctx, BIO *bio, bool server, void *app)
{
	struct tls_stream *ts = calloc(1, sizeof(*ts));

	if (!ts) {
		BIO_free(bio);
		return NULL;
	}
	ts->peer_alert = -1;
	ts->ssl = SSL_new(ctx);
	if (!ts->ssl) {
		BIO_free(bio);
		free(ts);
		return NULL;
	}
	{
		BIO *ssl_w;

		if (BIO_new_bio_pair(&ssl_w, TLS_STREAM_WBUF, &ts->net_w, TLS_STREAM_WBUF) != 1) {
			SSL_free(ts->ssl);
			BIO_free(bio);
			free(ts);
			return NULL;
		}
		SSL_set_bio(ts->ssl, bio, ssl_w); /* SSL owns both */
		ts->net = bio;
	}
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
	SSL_free(ts->ssl); /* wipes the session keys; frees the transport BIO and ssl_w */
	BIO_free(ts->net_w);
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

int tls_stream_peer_alert(const struct tls_stream *ts)
{
	return ts->peer_alert;
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

	/* OpenSSL reports a fatal alert from the peer as reason SSL_AD_REASON_OFFSET + code. */
	if (e && ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) >= SSL_AD_REASON_OFFSET &&
	    ERR_GET_REASON(e) < SSL_AD_REASON_OFFSET + 256)
		ts->peer_alert = ERR_GET_REASON(e) - SSL_AD_REASON_OFFSET;
	if (!ts->reason[0]) {
		const char *r = e ? ERR_reason_error_string(e) : NULL;

		snprintf(ts->reason, sizeof(ts->reason), "%s: %s", what,
			 r ? r : (errno ? strerror(errno) : "connection closed"));
	}
	ERR_clear_error();
}

/* Ciphertext SSL wrote that belongs to no record of ours (handshake, alerts, key
 * updates): appended to the last record in the ring, or a record of no plaintext. */
static void take_extra(struct tls_stream *ts)
{
	uint64_t extra = BIO_ctrl_pending(ts->net_w) - (ts->queued - ts->sent);

	if (!extra)
		return;
	ts->queued += extra;
	if (ts->rcount) {
		ts->ring[(ts->rhead + ts->rcount - 1) % TLS_RING].end = ts->queued;
	} else {
		ts->ring[ts->rhead] = (struct tls_record){ .plain = 0, .end = ts->queued };
		ts->rcount = 1;
	}
}

/* Write queued ciphertext to the transport. Returns the plaintext bytes whose records
 * have now left completely; *@blocked when the transport took less than offered. */
static size_t flush(struct tls_stream *ts, bool *blocked, int *err)
{
	size_t done = 0;

	*blocked = false;
	*err = 0;
	take_extra(ts);
	while (ts->sent < ts->queued) {
		char *p;
		int n = BIO_nread0(ts->net_w, &p), w;

		if (n <= 0)
			break;
		errno = 0;
		w = BIO_write(ts->net, p, n);
		if (w <= 0) {
			if (BIO_should_retry(ts->net))
				*blocked = true;
			else
				*err = errno ? errno : EPIPE;
			break;
		}
		BIO_nread(ts->net_w, &p, w);
		ts->sent += (uint64_t)w;
		while (ts->rcount && ts->ring[ts->rhead].end <= ts->sent) {
			done += ts->ring[ts->rhead].plain;
			ts->rhead = (ts->rhead + 1) % TLS_RING;
			ts->rcount--;
		}
		if (w < n) {
			*blocked = true;
			break;
		}
	}
	ts->unreported -= done;
	return done;
}

enum tls_stream_io tls_stream_handshake(struct tls_stream *ts)
{
	bool blocked;
	int rc, err;

	if (ts->state == TLS_STREAM_OPEN)
		return TLS_IO_DONE;
	if (ts->state != TLS_STREAM_HANDSHAKE)
		return TLS_IO_ERROR;
	if (!ts->hs_done) {
		ERR_clear_error();
		errno = 0;
		rc = SSL_do_handshake(ts->ssl);
		if (rc == 1) {
			ts->hs_done = true;
		} else {
			int e = SSL_get_error(ts->ssl, rc);

			if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
				flush(ts, &blocked, &err); /* the alert, as far as it goes */
				take_reason(ts, "TLS handshake failed");
				set_state(ts, TLS_STREAM_FAILED);
				return TLS_IO_ERROR;
			}
		}
	}
	flush(ts, &blocked, &err);
	if (err) {
		tls_stream_set_reason(ts, "TLS handshake: %s", strerror(err));
		set_state(ts, TLS_STREAM_FAILED);
		return TLS_IO_ERROR;
	}
	if (blocked)
		return TLS_IO_WANT_WRITE;
	if (!ts->hs_done)
		return TLS_IO_WANT_READ;
	set_state(ts, TLS_STREAM_OPEN);
	ts->reason[0] = '\0'; /* what a callback expected to go wrong did not */
	return TLS_IO_DONE;
}

void tls_stream_shutdown(struct tls_stream *ts)
{
	bool blocked;
	int err;

	if (ts->state != TLS_STREAM_OPEN)
		return;
	ERR_clear_error();
	SSL_shutdown(ts->ssl);
	ERR_clear_error();
	flush(ts, &blocked, &err);
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
				/* A record shorter than asked and nothing read ahead: the
				 * transport is very likely empty, as after a short recv(); do
				 * not spend a read() to hear EAGAIN. */
				if (off < iov[i].iov_len && !SSL_has_pending(ts->ssl))
					return (ssize_t)total;
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

ssize_t tls_stream_writev(struct tls_stream *ts, const struct iovec *iov, int cnt)
{
	size_t taken = 0;
	bool blocked;
	int err;

	if (ts->state != TLS_STREAM_OPEN) {
		errno = EPIPE;
		return -1;
	}
	for (;;) {
		/* Encrypt what follows the caller's bytes already in records, while whole
		 * records fit in the pair. */
		while (ts->rcount < TLS_RING) {
			size_t off = taken + ts->unreported, left = iov_length(iov, cnt) - off;
			const uint8_t *p = NULL;
			size_t len, before, n = 0;

			if (!left || BIO_ctrl_get_write_guarantee(SSL_get_wbio(ts->ssl)) <
					     (left < TLS_STREAM_RECORD ? left : TLS_STREAM_RECORD) +
						     TLS_RECORD_OVERHEAD)
				break;
			len = next_chunk(ts, iov, cnt, off, &p);
			take_extra(ts);
			before = BIO_ctrl_pending(ts->net_w);
			ERR_clear_error();
			if (SSL_write_ex(ts->ssl, p, len, &n) != 1 || n != len) {
				take_reason(ts, "TLS send");
				set_state(ts, TLS_STREAM_FAILED);
				errno = EPROTO;
				return taken ? (ssize_t)taken : -1;
			}
			ts->queued += BIO_ctrl_pending(ts->net_w) - before;
			ts->ring[(ts->rhead + ts->rcount) % TLS_RING] =
				(struct tls_record){ .plain = (uint32_t)len, .end = ts->queued };
			ts->rcount++;
			ts->unreported += len;
			ts->records_out++;
		}
		taken += flush(ts, &blocked, &err);
		if (err) {
			tls_stream_set_reason(ts, "TLS send: %s", strerror(err));
			set_state(ts, TLS_STREAM_FAILED);
			errno = err;
			return taken ? (ssize_t)taken : -1;
		}
		if (blocked || ts->sent < ts->queued)
			break;
		/* all out: more to encrypt? */
		if (iov_length(iov, cnt) <= taken + ts->unreported)
			break;
	}
	if (taken)
		return (ssize_t)taken;
	errno = EAGAIN;
	return -1;
}
