/* SPDX-License-Identifier: MIT */
/*
 * A TLS 1.3 byte stream for NVMe/TCP (NVMe/TCP Transport Specification 1.1, section 3.6):
 * OpenSSL, external PSKs only (no certificates, no session tickets, no TLS 1.2),
 * TLS_AES_128_GCM_SHA256 and TLS_AES_256_GCM_SHA384. Both sides use it under their PDU
 * code, with readv/writev semantics close to the socket calls they replace:
 *
 *   - tls_stream_readv() fills the iovecs in order until they are full, or a record ends
 *     short of them with nothing more read ahead, or the transport has no complete record
 *     left (so a return shorter than asked means "drained", as a short recv() does). Records are read ahead: after a full return,
 *     tls_stream_pending() says whether decrypted or buffered bytes wait that no poll()
 *     on the descriptor would report.
 *   - tls_stream_writev() turns small iovecs into records of up to 16 KiB through a
 *     staging buffer (larger runs are encrypted straight from the caller's memory) and
 *     writes the ciphertext of many records to the transport at once. It returns the
 *     bytes whose records have left completely; when the transport is full that is less
 *     than offered (or -1/EAGAIN), and the caller offers the rest again later, from the
 *     first byte not taken and unchanged, as after a partial sendmsg(): part of it may
 *     already be encrypted and waiting.
 *
 * The stream works on any BIO (a socket BIO in the daemons, memory BIOs in tests and
 * fuzzers); this file opens no socket. Errors and their reasons never carry key material.
 */
#ifndef NVMEOF_TLS_STREAM_H
#define NVMEOF_TLS_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <openssl/ssl.h>

#define TLS_STREAM_RECORD 16384 /* largest TLS plaintext record */

/* Cipher suites by the PSK hash of NVMe/TCP (01 SHA-256, 02 SHA-384). */
#define TLS_STREAM_CIPHERS "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"
const char *tls_stream_cipher_for_hash(uint8_t hash_id); /* NULL for another id */

/*
 * An SSL_CTX for NVMe/TCP: TLS 1.3 only, both cipher suites, no tickets, no certificate
 * verification (PSK authentication), read-ahead. The caller adds its PSK callbacks.
 * NULL with a reason in @err.
 */
SSL_CTX *tls_stream_ctx_new(bool server, char *err, size_t errlen);

/* The TLS handshake: a state machine of its own (one per stream). */
enum tls_stream_state {
	TLS_STREAM_HANDSHAKE, /* ClientHello .. Finished not done yet */
	TLS_STREAM_OPEN,      /* records flow */
	TLS_STREAM_CLOSED,    /* peer closed (close_notify or end of stream) */
	TLS_STREAM_FAILED,    /* handshake or record error: see tls_stream_reason() */
	TLS_STREAM_NSTATES
};

/* What a non-blocking step waits for. */
enum tls_stream_io {
	TLS_IO_DONE,       /* finished */
	TLS_IO_WANT_READ,  /* call again when the transport is readable */
	TLS_IO_WANT_WRITE, /* call again when the transport is writable */
	TLS_IO_ERROR,      /* failed: tls_stream_reason() */
};

struct tls_stream;

/* A stream over @bio (owned by the stream from now on), server or client side. @app is
 * returned by tls_stream_app() (from SSL_get_app_data() in the PSK callbacks too). */
struct tls_stream *tls_stream_new(SSL_CTX *ctx, BIO *bio, bool server, void *app);
void tls_stream_free(struct tls_stream *ts);

SSL *tls_stream_ssl(struct tls_stream *ts);
void *tls_stream_app(SSL *ssl);
enum tls_stream_state tls_stream_state(const struct tls_stream *ts);
bool tls_stream_transition_ok(enum tls_stream_state from, enum tls_stream_state to);
const char *tls_stream_state_name(enum tls_stream_state s);

/* One non-blocking handshake step. */
enum tls_stream_io tls_stream_handshake(struct tls_stream *ts);

/* Why the stream failed (one line, no key material), or "". */
const char *tls_stream_reason(const struct tls_stream *ts);
/* The fatal alert the peer ended the session with (a TLS AlertDescription, e.g.
 * SSL_AD_HANDSHAKE_FAILURE), or -1 when it sent none (the stream failed otherwise). */
int tls_stream_peer_alert(const struct tls_stream *ts);
/* Set the reason from a PSK callback (it wins over OpenSSL's generic one). */
void tls_stream_set_reason(struct tls_stream *ts, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Negotiated cipher suite name ("" before the handshake). */
const char *tls_stream_cipher(const struct tls_stream *ts);

/*
 * Bytes read (> 0), 0 at the end of the stream, or -1 with errno: EAGAIN (nothing
 * complete to read), ECONNRESET, EPROTO (bad record: tls_stream_reason()).
 */
ssize_t tls_stream_readv(struct tls_stream *ts, const struct iovec *iov, int cnt);
/* Bytes of @iov taken (> 0), or -1 with errno: EAGAIN (transport full, nothing taken),
 * EPIPE, EPROTO. */
ssize_t tls_stream_writev(struct tls_stream *ts, const struct iovec *iov, int cnt);
/* Send close_notify, as far as the transport takes it now (best effort). */
void tls_stream_shutdown(struct tls_stream *ts);
/* Bytes the stream holds that a poll() on the transport would not announce. */
bool tls_stream_pending(const struct tls_stream *ts);
/* Records written since the stream was made (statistics and tests). */
uint64_t tls_stream_records_out(const struct tls_stream *ts);

#endif
