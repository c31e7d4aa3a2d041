/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP over TLS on the target (tcp_tls.c), over a socketpair with the fake core: the
 * handshake state machine's transitions, the first-byte detection (plain ICReq refused
 * where TLS is required, served where it is not), a TLS 1.3 handshake with each PSK
 * identity version and suite followed by ICReq/ICResp through the socket seam, a wrong
 * PSK and an unknown host refused, and Connect held to the identity's NQNs.
 */
#include <CUnit/Basic.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "common/endian.h"
#include "common/nvme_tcp_pdu.h"
#include "common/tls_psk.h"
#include "common/tls_stream.h"
#include "tcp/tcp_internal.h"
#include "tcp_ut_host.h"
#include "ut.h"

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:00000000-1111-2222-3333-444444444444"
#define SUBNQN  "nqn.2026-11.io.nvmeof:ut"

/* ---- a TLS client on the host end of the socketpair ------------------------------------ */

struct client {
	SSL_CTX *ctx;
	struct tls_stream *ts;
	char identity[NVME_TLS_IDENTITY_MAX];
	struct nvme_secret *psk;
	uint8_t hash_id;
};

static int psk_use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		      SSL_SESSION **sessp)
{
	struct client *c = tls_stream_app(ssl);
	const unsigned char suite[2] = { 0x13, c->hash_id == 2 ? 0x02 : 0x01 };
	SSL_SESSION *s = SSL_SESSION_new();

	(void)md;
	SSL_SESSION_set1_master_key(s, c->psk->key, c->psk->len);
	SSL_SESSION_set_cipher(s, SSL_CIPHER_find(ssl, suite));
	SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION);
	*id = (const unsigned char *)c->identity;
	*idlen = strlen(c->identity);
	*sessp = s;
	return 1;
}

static struct nvme_tls_key make_key(uint8_t hmac, uint8_t fill)
{
	struct nvme_tls_key k = { .hmac = hmac };

	k.psk = nvme_secret_alloc(hmac == 2 ? 48 : 32);
	memset(k.psk->key, fill, k.psk->len);
	return k;
}

/* Handshake as HOSTNQN to SUBNQN with @k; returns the handshake's outcome. */
static enum tls_stream_io client_connect(struct client *c, int fd, const struct nvme_tls_key *k,
					 int version)
{
	char err[128];
	enum tls_stream_io io;

	memset(c, 0, sizeof(*c));
	c->hash_id = nvme_tls_key_cipher(k);
	CU_ASSERT_FATAL(nvme_tls_derive(k, version, HOSTNQN, SUBNQN, 0, c->identity,
					sizeof(c->identity), &c->psk) >= 0);
	c->ctx = tls_stream_ctx_new(false, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->ctx);
	SSL_CTX_set_ciphersuites(c->ctx, tls_stream_cipher_for_hash(c->hash_id));
	SSL_CTX_set_psk_use_session_callback(c->ctx, psk_use_cb);
	c->ts = tls_stream_new(c->ctx, BIO_new_socket(fd, BIO_NOCLOSE), false, c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->ts);
	do
		io = tls_stream_handshake(c->ts); /* blocking socket, 3 s receive timeout */
	while (io == TLS_IO_WANT_READ || io == TLS_IO_WANT_WRITE);
	return io;
}

static void client_free(struct client *c)
{
	tls_stream_free(c->ts);
	SSL_CTX_free(c->ctx);
	nvme_secret_free(c->psk);
}

/* Read exactly @len decrypted bytes. */
static int client_read(struct client *c, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct iovec v = { buf + got, len - got };
		ssize_t n = tls_stream_readv(c->ts, &v, 1);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static void set_port(uint8_t treq)
{
	port.sectype = NVMF_TCP_SECTYPE_TLS13;
	port.treq = treq;
	CU_ASSERT_EQUAL_FATAL(tcp_tls_port_init(&port), 0);
}

static void set_host_key(const struct nvme_tls_key *k)
{
	nvme_tls_key_clear(&ut_psk);
	snprintf(ut_psk_host, NVME_NQN_FIELD, "%s", HOSTNQN);
	ut_psk.hmac = k->hmac;
	ut_psk.psk = nvme_secret_from(k->psk->key, k->psk->len);
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_transitions(void)
{
	static const struct {
		enum tcp_tls_state from, to;
		bool ok;
	} cases[] = {
		{ TCP_TLS_NONE, TCP_TLS_DETECT, true },
		{ TCP_TLS_DETECT, TCP_TLS_NONE, true },
		{ TCP_TLS_DETECT, TCP_TLS_HANDSHAKE, true },
		{ TCP_TLS_DETECT, TCP_TLS_FAILED, true },
		{ TCP_TLS_HANDSHAKE, TCP_TLS_OPEN, true },
		{ TCP_TLS_HANDSHAKE, TCP_TLS_FAILED, true },
		{ TCP_TLS_NONE, TCP_TLS_OPEN, false },   /* never without a handshake */
		{ TCP_TLS_DETECT, TCP_TLS_OPEN, false }, /* likewise */
		{ TCP_TLS_OPEN, TCP_TLS_NONE, false },   /* no way back to plain */
		{ TCP_TLS_OPEN, TCP_TLS_HANDSHAKE, false },
		{ TCP_TLS_FAILED, TCP_TLS_OPEN, false },
		{ TCP_TLS_HANDSHAKE, TCP_TLS_NONE, false },
		{ TCP_TLS_NSTATES, TCP_TLS_NONE, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CU_ASSERT_EQUAL(tcp_tls_transition_ok(cases[i].from, cases[i].to), cases[i].ok);
	CU_ASSERT_STRING_EQUAL(tcp_tls_state_name(TCP_TLS_HANDSHAKE), "HANDSHAKE");
	CU_ASSERT_STRING_EQUAL(tcp_tls_state_name(TCP_TLS_NSTATES), "?");
	CU_ASSERT_TRUE(tls_stream_transition_ok(TLS_STREAM_HANDSHAKE, TLS_STREAM_OPEN));
	CU_ASSERT_FALSE(tls_stream_transition_ok(TLS_STREAM_FAILED, TLS_STREAM_OPEN));
	CU_ASSERT_FALSE(tls_stream_transition_ok(TLS_STREAM_OPEN, TLS_STREAM_HANDSHAKE));
}

static void test_plain_refused_where_required(void)
{
	struct host h;
	uint8_t ic[128], buf[256];
	int before = atomic_load(&n_fini), n;

	set_port(NVMF_TREQ_SECURE_REQUIRED);
	host_open(&h);
	nvme_tcp_build_icreq(ic, false, false, 0, 0);
	host_send(&h, ic, sizeof(ic));
	n = host_recv(&h, buf, sizeof(buf));
	CU_ASSERT_TRUE(n > 0);
	CU_ASSERT_EQUAL(buf[0], NVME_TCP_PDU_C2H_TERM_REQ);
	CU_ASSERT_EQUAL(get_le16(buf + 8), NVME_TCP_FES_UNSUPPORTED_PARAM);
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}

static void test_plain_served_where_optional(void)
{
	struct host h;
	int before = atomic_load(&n_fini);

	struct nvme_tls_key k = make_key(1, 0x42);

	set_port(NVMF_TREQ_SECURE_NOT_REQUIRED);
	set_host_key(&k);
	host_open(&h);
	host_ic(&h, false, false, 0); /* asserts an ICResp */
	/* plain: a host without a PSK may connect, the host with one may not */
	CU_ASSERT_EQUAL(tcp_qpair_of(last_qp)->tls_state, TCP_TLS_NONE);
	CU_ASSERT_TRUE(tcp_tls_connect_allowed(last_qp, "nqn.2014-08.x:other", SUBNQN));
	CU_ASSERT_FALSE(tcp_tls_connect_allowed(last_qp, HOSTNQN, SUBNQN));
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	nvme_tls_key_clear(&k);
}

/* Handshake with @hmac's key and identity @version, then ICReq/ICResp inside TLS. */
static void tls_session(uint8_t hmac, int version, bool digests)
{
	struct nvme_tls_key k = make_key(hmac, 0x42);
	struct client c;
	struct host h;
	uint8_t ic[128], rsp[256];
	struct iovec v = { ic, sizeof(ic) };
	int before = atomic_load(&n_fini);

	set_port(NVMF_TREQ_SECURE_REQUIRED);
	set_host_key(&k);
	host_open(&h);
	CU_ASSERT_EQUAL_FATAL(client_connect(&c, h.fd, &k, version), TLS_IO_DONE);
	CU_ASSERT_STRING_EQUAL(tls_stream_cipher(c.ts), tls_stream_cipher_for_hash(hmac));
	nvme_tcp_build_icreq(ic, digests, digests, 0, 0);
	CU_ASSERT_EQUAL(tls_stream_writev(c.ts, &v, 1), (ssize_t)sizeof(ic));
	CU_ASSERT_EQUAL_FATAL(client_read(&c, rsp, 8), 0);
	CU_ASSERT_EQUAL(rsp[0], NVME_TCP_PDU_ICRESP);
	CU_ASSERT_EQUAL_FATAL(client_read(&c, rsp + 8, get_le32(rsp + 4) - 8), 0);
	CU_ASSERT_EQUAL(rsp[offsetof(struct nvme_tcp_icresp, dgst)] != 0, digests);
	/* ICResp came back: the handshake state is settled on the reactor. */
	CU_ASSERT_EQUAL(tcp_qpair_of(last_qp)->tls_state, TCP_TLS_OPEN);
	CU_ASSERT_TRUE(tcp_tls_connect_allowed(last_qp, HOSTNQN, SUBNQN));
	CU_ASSERT_FALSE(tcp_tls_connect_allowed(last_qp, HOSTNQN, "nqn.2026-11.io.nvmeof:other"));
	CU_ASSERT_FALSE(tcp_tls_connect_allowed(last_qp, "nqn.2014-08.x:other", SUBNQN));
	client_free(&c);
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
	nvme_tls_key_clear(&k);
}

static void test_v1_sha256(void)
{
	tls_session(1, 1, false);
}

static void test_v0_sha256(void)
{
	tls_session(1, 0, true);
}

static void test_v1_sha384(void)
{
	tls_session(2, 1, true);
}

static void test_v0_sha384(void)
{
	tls_session(2, 0, false);
}

static void refused(const struct nvme_tls_key *host_key, const struct nvme_tls_key *target_key,
		    int version)
{
	struct client c;
	struct host h;
	int before = atomic_load(&n_fini);

	set_port(NVMF_TREQ_SECURE_REQUIRED);
	set_host_key(target_key);
	host_open(&h);
	CU_ASSERT_EQUAL(client_connect(&c, h.fd, host_key, version), TLS_IO_ERROR);
	CU_ASSERT_EQUAL(tls_stream_state(c.ts), TLS_STREAM_FAILED);
	CU_ASSERT_TRUE(host_eof(&h));
	client_free(&c);
	close(h.fd);
	CU_ASSERT_EQUAL(wait_fini(before), 0);
}

static void test_wrong_psk(void)
{
	struct nvme_tls_key good = make_key(1, 0x42), bad = make_key(1, 0x43);

	refused(&bad, &good, 1); /* v1: the digest differs */
	refused(&bad, &good, 0); /* v0: the binder does not verify */
	nvme_tls_key_clear(&good);
	nvme_tls_key_clear(&bad);
}

static void test_hash_mismatch(void)
{
	struct nvme_tls_key k256 = make_key(1, 0x42), k384 = make_key(2, 0x42);

	refused(&k384, &k256, 1);
	nvme_tls_key_clear(&k256);
	nvme_tls_key_clear(&k384);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "state transitions", test_transitions },
		{ "plain ICReq refused where TLS is required", test_plain_refused_where_required },
		{ "plain ICReq served where TLS is optional", test_plain_served_where_optional },
		{ "TLS, identity v1, SHA-256", test_v1_sha256 },
		{ "TLS, identity v0, SHA-256, digests", test_v0_sha256 },
		{ "TLS, identity v1, SHA-384, digests", test_v1_sha384 },
		{ "TLS, identity v0, SHA-384", test_v0_sha384 },
		{ "wrong PSK refused", test_wrong_psk },
		{ "PSK hash mismatch refused", test_hash_mismatch },
		CU_TEST_INFO_NULL,
	};

	return ut_run("tcp_tls", tcp_ut_suite_init, tcp_ut_suite_fini, tests);
}
