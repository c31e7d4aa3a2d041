/* SPDX-License-Identifier: MIT */
/*
 * common/tls_stream.c between two in-memory endpoints (an OpenSSL BIO pair, no socket):
 * the handshake with an external PSK for each suite, readv/writev semantics (short read
 * = drained, small iovecs coalesced into records, large ones sent in place, a full
 * transport taking part of a write and the rest offered again), the read-ahead report of
 * tls_stream_pending(), the end of the stream, and refusals (wrong PSK, TLS 1.2 only) with
 * the alert that tells the client so.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/ssl.h>

#include "common/tls_stream.h"
#include "ut.h"

struct side {
	SSL_CTX *ctx;
	struct tls_stream *ts;
	uint8_t key[48];
	size_t keylen;
	uint8_t hash_id;
};

static const char g_identity[] = "NVMe0R01 nqn.2014-08.x:host nqn.2014-08.x:subsys";

static SSL_SESSION *session(SSL *ssl, const struct side *s)
{
	const unsigned char suite[2] = { 0x13, s->hash_id == 2 ? 0x02 : 0x01 };
	SSL_SESSION *ss = SSL_SESSION_new();

	SSL_SESSION_set1_master_key(ss, s->key, s->keylen);
	SSL_SESSION_set_cipher(ss, SSL_CIPHER_find(ssl, suite));
	SSL_SESSION_set_protocol_version(ss, TLS1_3_VERSION);
	return ss;
}

static int use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		  SSL_SESSION **sess)
{
	(void)md;
	*id = (const unsigned char *)g_identity;
	*idlen = strlen(g_identity);
	*sess = session(ssl, tls_stream_app(ssl));
	return 1;
}

static int find_cb(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
	*sess = idlen == strlen(g_identity) && !memcmp(id, g_identity, idlen)
			? session(ssl, tls_stream_app(ssl))
			: NULL;
	return 1;
}

/* A client and a server joined by a BIO pair of @bufsz bytes each way. */
static void pair(struct side *c, struct side *s, uint8_t hash_id, uint8_t ckey, size_t bufsz)
{
	char err[128];
	BIO *a, *b;

	memset(c, 0, sizeof(*c));
	memset(s, 0, sizeof(*s));
	c->hash_id = s->hash_id = hash_id;
	c->keylen = s->keylen = hash_id == 2 ? 48 : 32;
	memset(c->key, ckey, c->keylen);
	memset(s->key, 0x11, s->keylen);
	c->ctx = tls_stream_ctx_new(false, err, sizeof(err));
	s->ctx = tls_stream_ctx_new(true, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->ctx);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->ctx);
	SSL_CTX_set_ciphersuites(c->ctx, tls_stream_cipher_for_hash(hash_id));
	SSL_CTX_set_psk_use_session_callback(c->ctx, use_cb);
	SSL_CTX_set_psk_find_session_callback(s->ctx, find_cb);
	CU_ASSERT_FATAL(BIO_new_bio_pair(&a, bufsz, &b, bufsz) == 1);
	c->ts = tls_stream_new(c->ctx, a, false, c);
	s->ts = tls_stream_new(s->ctx, b, true, s);
}

static enum tls_stream_io handshake(struct side *c, struct side *s)
{
	enum tls_stream_io ci = TLS_IO_WANT_READ, si = TLS_IO_WANT_READ;

	for (int i = 0; i < 20 && !(ci == TLS_IO_DONE && si == TLS_IO_DONE); i++) {
		ci = tls_stream_handshake(c->ts);
		si = tls_stream_handshake(s->ts);
		if (ci == TLS_IO_ERROR || si == TLS_IO_ERROR)
			return TLS_IO_ERROR;
	}
	return ci == TLS_IO_DONE && si == TLS_IO_DONE ? TLS_IO_DONE : TLS_IO_WANT_READ;
}

static void unpair(struct side *c, struct side *s)
{
	tls_stream_free(c->ts);
	tls_stream_free(s->ts);
	SSL_CTX_free(c->ctx);
	SSL_CTX_free(s->ctx);
}

/* Read until @len bytes arrived or the stream says EAGAIN. */
static size_t drain(struct side *s, uint8_t *buf, size_t len, size_t piece)
{
	size_t got = 0;

	while (got < len) {
		struct iovec v = { buf + got, len - got < piece ? len - got : piece };
		ssize_t n = tls_stream_readv(s->ts, &v, 1);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static void test_suites(void)
{
	for (uint8_t h = 1; h <= 2; h++) {
		struct side c, s;

		pair(&c, &s, h, 0x11, 1 << 16);
		CU_ASSERT_EQUAL(handshake(&c, &s), TLS_IO_DONE);
		CU_ASSERT_EQUAL(tls_stream_state(c.ts), TLS_STREAM_OPEN);
		CU_ASSERT_STRING_EQUAL(tls_stream_cipher(s.ts), tls_stream_cipher_for_hash(h));
		CU_ASSERT_STRING_EQUAL(tls_stream_reason(s.ts), "");
		unpair(&c, &s);
	}
	CU_ASSERT_PTR_NULL(tls_stream_cipher_for_hash(3));
}

static void test_wrong_psk(void)
{
	struct side c, s;

	pair(&c, &s, 1, 0x22, 1 << 16);
	CU_ASSERT_EQUAL(handshake(&c, &s), TLS_IO_ERROR);
	CU_ASSERT_TRUE(tls_stream_state(s.ts) == TLS_STREAM_FAILED ||
		       tls_stream_state(c.ts) == TLS_STREAM_FAILED);
	CU_ASSERT_NOT_EQUAL(tls_stream_reason(s.ts)[0] | tls_stream_reason(c.ts)[0], 0);
	/* The server's alert reaches the client: a refusal it can tell from a lost socket. */
	for (int i = 0; i < 5 && tls_stream_state(c.ts) != TLS_STREAM_FAILED; i++)
		tls_stream_handshake(c.ts);
	CU_ASSERT_EQUAL(tls_stream_state(c.ts), TLS_STREAM_FAILED);
	CU_ASSERT(tls_stream_peer_alert(c.ts) >= 0);
	CU_ASSERT_EQUAL(tls_stream_peer_alert(s.ts), -1);
	unpair(&c, &s);
}

static void test_records_and_reads(void)
{
	struct side c, s;
	static uint8_t big[100000], out[100000];
	struct iovec v[64];
	size_t total = 0;
	ssize_t n;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + (i >> 9));
	pair(&c, &s, 2, 0x11, 1 << 18);
	CU_ASSERT_EQUAL_FATAL(handshake(&c, &s), TLS_IO_DONE);

	/* 60 PDU-sized pieces: coalesced into one record */
	for (int i = 0; i < 60; i++) {
		v[i].iov_base = big + total;
		v[i].iov_len = 24 + (size_t)(i % 3) * 8;
		total += v[i].iov_len;
	}
	CU_ASSERT_EQUAL(tls_stream_writev(c.ts, v, 60), (ssize_t)total);
	CU_ASSERT_EQUAL(tls_stream_records_out(c.ts), 1);
	/* a short read of what is there, then EAGAIN: drained */
	memset(out, 0, sizeof(out));
	CU_ASSERT_EQUAL(drain(&s, out, sizeof(out), 7), total);
	CU_ASSERT_EQUAL(memcmp(out, big, total), 0);
	n = tls_stream_readv(s.ts, &(struct iovec){ out, 10 }, 1);
	CU_ASSERT_EQUAL(n, -1);
	CU_ASSERT_EQUAL(errno, EAGAIN);

	/* a large buffer goes out in full records; read into odd iovecs */
	v[0].iov_base = big;
	v[0].iov_len = 70000;
	CU_ASSERT_EQUAL(tls_stream_writev(c.ts, v, 1), 70000);
	CU_ASSERT_EQUAL(tls_stream_records_out(c.ts), 1 + 5);
	{
		struct iovec r[3] = { { out, 1000 },
				      { out + 1000, 33333 },
				      { out + 34333, 40000 } };

		/* at least the first record; a short read says "drained for now" */
		n = tls_stream_readv(s.ts, r, 3);
		CU_ASSERT_TRUE_FATAL(n >= 16384 && n <= 70000);
		CU_ASSERT_EQUAL(drain(&s, out + n, 70000 - (size_t)n, 33333), 70000 - (size_t)n);
		CU_ASSERT_EQUAL(memcmp(out, big, 70000), 0);
	}
	/* a read smaller than a record leaves the rest pending above the transport */
	v[0].iov_len = 5000;
	CU_ASSERT_EQUAL(tls_stream_writev(c.ts, v, 1), 5000);
	CU_ASSERT_EQUAL(tls_stream_readv(s.ts, &(struct iovec){ out, 100 }, 1), 100);
	CU_ASSERT_TRUE(tls_stream_pending(s.ts));
	CU_ASSERT_EQUAL(drain(&s, out + 100, 4900, 4900), 4900);
	CU_ASSERT_EQUAL(memcmp(out, big, 5000), 0);
	unpair(&c, &s);
}

static void test_write_retry(void)
{
	struct side c, s;
	static uint8_t buf[64 * 1024], out[64 * 1024];
	struct iovec v = { buf, sizeof(buf) };
	size_t sent = 0, got = 0;
	ssize_t n;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i ^ (i >> 8));
	pair(&c, &s, 1, 0x11, 20000); /* the pipe holds about one record */
	CU_ASSERT_EQUAL_FATAL(handshake(&c, &s), TLS_IO_DONE);
	n = tls_stream_writev(c.ts, &v, 1);
	CU_ASSERT_TRUE(n >= 0 || errno == EAGAIN);
	CU_ASSERT_TRUE(n < (ssize_t)sizeof(buf));
	sent = n > 0 ? (size_t)n : 0;
	/* the transport is full: nothing more taken, EAGAIN */
	v.iov_base = buf + sent;
	v.iov_len = sizeof(buf) - sent;
	n = tls_stream_writev(c.ts, &v, 1);
	CU_ASSERT_EQUAL(n, -1);
	CU_ASSERT_EQUAL(errno, EAGAIN);
	/* the peer reads; the same bytes are offered again and go out */
	while (sent < sizeof(buf)) {
		got += drain(&s, out + got, sizeof(out) - got, sizeof(out));
		v.iov_base = buf + sent;
		v.iov_len = sizeof(buf) - sent;
		n = tls_stream_writev(c.ts, &v, 1);
		if (n > 0)
			sent += (size_t)n;
		else
			CU_ASSERT_EQUAL_FATAL(errno, EAGAIN);
	}
	got += drain(&s, out + got, sizeof(out) - got, sizeof(out));
	CU_ASSERT_EQUAL(got, sizeof(buf));
	CU_ASSERT_EQUAL(memcmp(out, buf, sizeof(buf)), 0);

	unpair(&c, &s);
}

static void test_end_of_stream(void)
{
	struct side c, s;
	uint8_t b[16];

	pair(&c, &s, 1, 0x11, 1 << 16);
	CU_ASSERT_EQUAL_FATAL(handshake(&c, &s), TLS_IO_DONE);
	tls_stream_shutdown(c.ts); /* close_notify */
	CU_ASSERT_EQUAL(tls_stream_readv(s.ts, &(struct iovec){ b, sizeof(b) }, 1), 0);
	CU_ASSERT_EQUAL(tls_stream_state(s.ts), TLS_STREAM_CLOSED);
	CU_ASSERT_EQUAL(tls_stream_writev(s.ts, &(struct iovec){ b, sizeof(b) }, 1), -1);
	CU_ASSERT_EQUAL(errno, EPIPE);
	unpair(&c, &s);
}

static void test_no_tls12(void)
{
	struct side c, s;
	BIO *a, *b;

	pair(&c, &s, 1, 0x11, 1 << 16);
	/* a client that offers only TLS 1.2 */
	tls_stream_free(c.ts);
	tls_stream_free(s.ts);
	SSL_CTX_free(c.ctx);
	c.ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_max_proto_version(c.ctx, TLS1_2_VERSION);
	BIO_new_bio_pair(&a, 1 << 16, &b, 1 << 16);
	s.ts = tls_stream_new(s.ctx, b, true, &s);
	c.ts = tls_stream_new(c.ctx, a, false, &c);
	CU_ASSERT_EQUAL(handshake(&c, &s), TLS_IO_ERROR);
	CU_ASSERT_EQUAL(tls_stream_state(s.ts), TLS_STREAM_FAILED);
	unpair(&c, &s);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "both suites, PSK handshake", test_suites },
		{ "wrong PSK", test_wrong_psk },
		{ "records and reads", test_records_and_reads },
		{ "a full transport, the rest offered again", test_write_retry },
		{ "end of stream", test_end_of_stream },
		{ "TLS 1.2 refused", test_no_tls12 },
		CU_TEST_INFO_NULL,
	};

	return ut_run("tls_stream", NULL, NULL, tests);
}
