/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP over TLS: record boundaries. Every input is the byte stream a host sends on
 * one connection to a TLS port, cut into TLS records at points the input chooses and
 * written to the socket in pieces the input chooses, so that PDU headers, payloads and
 * digests straddle records and reads in every way. A real TLS 1.3 client (the common
 * tls_stream, with a PSK identity of version 0 or 1 and either suite) does the handshake
 * with a real NVMe/TCP queue pair (target/tcp_*.c) on a real reactor, whose receive path
 * (tcp_sock_tls, read-ahead, deferred runs) feeds the PDU machine. As in fuzz_tcp_recv,
 * whatever the bytes, the connection must end cleanly with everything released.
 *
 * Input: [mode][split][stream...]. Mode bit 0: identity v1 (else v0); bit 1: the SHA-384
 * PSK and TLS_AES_256_GCM_SHA384 (else SHA-256 and AES-128); bit 2: no TLS at all (a
 * plain host where TLS is optional); bits 7:3: ciphertext piece size in units of 13 bytes
 * (0: as much as the socket takes). @split seeds the record sizes (0: 16 KiB records;
 * bit 7 set: up to 16 KiB, else up to 300 bytes).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "common/log.h"
#include "common/tls_psk.h"
#include "common/tls_stream.h"
#include "core/nvmf.h"
#include "fuzz.h"
#include "reactor/reactor.h"
#include "tcp/tcp_internal.h"

#define SUBNQN     "nqn.2026-11.io.nvmeof:fuzz"
#define HOSTNQN    "nqn.2014-08.org.nvmexpress:uuid:0f0f0f0f-1111-2222-3333-444444444444"
#define TIMEOUT_MS 5000

static struct nvmf_tgt *g_tgt;
static struct nvmf_subsys *g_sub;
static struct nvmf_port *g_port;
static struct reactor *g_r;
static struct nvme_tls_key g_keys[2]; /* SHA-256, SHA-384 */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int setup(void)
{
	struct nvmf_tgt_opts o;
	struct nvmf_port_opts po = {
		.portid = 1,
		.trtype = "tcp",
		.adrfam = "ipv4",
		.traddr = "127.0.0.1",
		.trsvcid = "4420",
		.sectype = NVMF_TCP_SECTYPE_TLS13,
		.treq = NVMF_TREQ_SECURE_NOT_REQUIRED,
	};
	struct nvmf_ns_opts no = { .path = "ram:1M", .enabled = true };
	char err[256];

	log_set_level(getenv("FUZZ_VERBOSE") ? LOG_LVL_INFO : LOG_LVL_ERR);
	reactors_configure(128 * 1024, 64, REACTOR_PIN_OFF);
	if (reactors_start(1) != 0)
		return -1;
	g_r = reactor_get(0);
	if (!nvmf_transport_find("tcp") && nvmf_transport_register(&nvmf_tcp_transport_ops) != 0)
		return -1;
	nvmf_tgt_opts_default(&o);
	g_tgt = nvmf_tgt_create(&o);
	g_sub = g_tgt ? nvmf_subsys_create(g_tgt, SUBNQN) : NULL;
	if (!g_sub)
		return -1;
	nvmf_subsys_set_allow_any_host(g_sub, true);
	if (nvmf_subsys_add_ns(g_sub, &no, err, sizeof(err)) != 1)
		return -1;
	g_port = nvmf_port_create(g_tgt, &po, err, sizeof(err));
	if (!g_port || nvmf_port_add_subsys(g_port, g_sub) != 0 || tcp_tls_port_init(g_port))
		return -1;
	for (int i = 0; i < 2; i++) {
		size_t len = i ? 48 : 32;

		g_keys[i].hmac = (uint8_t)(i + 1);
		g_keys[i].psk = nvme_secret_alloc(len);
		if (!g_keys[i].psk)
			return -1;
		memset(g_keys[i].psk->key, 0x5a + i, len);
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (setup() != 0) {
		fprintf(stderr, "fuzz_tls_recv: cannot set up the target\n");
		return 1;
	}
	return 0;
}

/* ---- the TLS client, over a BIO pair whose far end this file moves to the socket ------- */

struct client {
	struct tls_stream *ts;
	SSL_CTX *ctx;
	BIO *net; /* our end: ciphertext to send is read here, received is written here */
	char identity[NVME_TLS_IDENTITY_MAX];
	struct nvme_secret *psk;
	uint8_t hash_id;
	uint8_t *out; /* ciphertext queued for the socket */
	size_t out_len, out_cap;
};

static int psk_use_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		      SSL_SESSION **sessp)
{
	struct client *c = tls_stream_app(ssl);
	const unsigned char suite[2] = { 0x13, c->hash_id == 2 ? 0x02 : 0x01 };
	const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, suite);
	SSL_SESSION *s = SSL_SESSION_new();

	(void)md;
	*sessp = NULL;
	if (!s || !cipher || !SSL_SESSION_set1_master_key(s, c->psk->key, c->psk->len) ||
	    !SSL_SESSION_set_cipher(s, cipher) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return 0;
	}
	*id = (const unsigned char *)c->identity;
	*idlen = strlen(c->identity);
	*sessp = s;
	return 1;
}

/* Move what the client produced into c->out. */
static void client_drain(struct client *c)
{
	for (;;) {
		size_t pend = BIO_ctrl_pending(c->net);
		int n;

		if (!pend)
			return;
		if (c->out_len + pend > c->out_cap) {
			c->out_cap = (c->out_len + pend) * 2;
			c->out = realloc(c->out, c->out_cap);
			if (!c->out)
				abort();
		}
		n = BIO_read(c->net, c->out + c->out_len, (int)pend);
		if (n <= 0)
			return;
		c->out_len += (size_t)n;
	}
}

static int client_init(struct client *c, uint8_t mode)
{
	const struct nvme_tls_key *k = &g_keys[(mode >> 1) & 1];
	char err[128];
	BIO *ssl_end;

	memset(c, 0, sizeof(*c));
	c->hash_id = k->hmac;
	if (nvme_tls_derive(k, mode & 1, HOSTNQN, SUBNQN, 0, c->identity, sizeof(c->identity),
			    &c->psk) < 0)
		return -1;
	c->ctx = tls_stream_ctx_new(false, err, sizeof(err));
	if (!c->ctx ||
	    SSL_CTX_set_ciphersuites(c->ctx, tls_stream_cipher_for_hash(c->hash_id)) != 1)
		return -1;
	SSL_CTX_set_psk_use_session_callback(c->ctx, psk_use_cb);
	if (BIO_new_bio_pair(&ssl_end, 1 << 17, &c->net, 1 << 17) != 1)
		return -1;
	c->ts = tls_stream_new(c->ctx, ssl_end, false, c);
	return c->ts ? 0 : -1;
}

static void client_fini(struct client *c)
{
	tls_stream_free(c->ts);
	BIO_free(c->net);
	SSL_CTX_free(c->ctx);
	nvme_secret_free(c->psk);
	free(c->out);
}

static int xfer(int fd, struct client *c, uint64_t t0)
{
	uint8_t buf[65536];
	size_t off = 0;

	while (off < c->out_len || tls_stream_state(c->ts) == TLS_STREAM_HANDSHAKE) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		enum tls_stream_io io = tls_stream_handshake(c->ts);

		if (io == TLS_IO_ERROR)
			return -1;
		client_drain(c);
		if (io == TLS_IO_DONE && off == c->out_len)
			break;
		if (off < c->out_len)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
			abort();
		if (pfd.revents & POLLOUT) {
			ssize_t n = send(fd, c->out + off, c->out_len - off, MSG_NOSIGNAL);

			if (n > 0)
				off += (size_t)n;
		}
		if (pfd.revents & (POLLIN | POLLHUP)) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);

			if (n <= 0)
				return -1;
			BIO_write(c->net, buf, (int)n);
		}
		if (now_ms() - t0 > TIMEOUT_MS)
			return -1;
	}
	c->out_len = 0;
	return 0;
}

/* ---- connections ----------------------------------------------------------------------- */

struct kill_arg {
	struct tcp_qpair *tq;
	volatile int done;
};

static void kill_msg(void *p)
{
	struct kill_arg *ka = p;
	struct tcp_reactor *trr = tcp_reactor_get(reactor_self());
	struct tcp_qpair *it;

	if (trr)
		TAILQ_FOREACH(it, &trr->conns, link)
	if (it == ka->tq && !it->closing)
		tcp_qpair_close(it, "fuzz: stream ended");
	__atomic_store_n(&ka->done, 1, __ATOMIC_RELEASE);
}

static uint64_t closed_count(void)
{
	struct nvmf_tcp_stats st;

	nvmf_tcp_get_stats(&st);
	return st.closed;
}

/* Send @len bytes in pieces of @piece, dropping what comes back; then half-close and read
 * until the target closes (closing it from the reactor if it waits for more). */
static void pump(int fd, struct tcp_qpair *tq, const uint8_t *d, size_t len, size_t piece,
		 uint64_t t0)
{
	bool wr_open = true, killed = false;
	uint8_t sink[65536];
	size_t off = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (wr_open && off == len) {
			shutdown(fd, SHUT_WR);
			wr_open = false;
		}
		if (wr_open)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
			abort();
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, sink, sizeof(sink), 0);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;
		}
		if (wr_open && (pfd.revents & POLLOUT)) {
			size_t want = len - off;
			ssize_t n;

			if (piece && want > piece)
				want = piece;
			n = send(fd, d + off, want, MSG_NOSIGNAL);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EINTR)
				wr_open = false;
		}
		if (!killed && now_ms() - t0 > TIMEOUT_MS) {
			struct kill_arg ka = { .tq = tq };

			killed = true;
			if (reactor_send_msg(g_r, kill_msg, &ka) != 0)
				abort();
			while (!__atomic_load_n(&ka.done, __ATOMIC_ACQUIRE))
				usleep(100);
		}
	}
	close(fd);
}

/* Record lengths from @seed: xorshift, small records unless bit 7. */
static size_t next_record(uint32_t *state, uint8_t seed)
{
	uint32_t x = *state;

	if (!seed)
		return TLS_STREAM_RECORD;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return 1 + x % (seed & 0x80 ? TLS_STREAM_RECORD : 300);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t before = closed_count(), t0 = now_ms();
	struct tcp_qpair *tq;
	struct client c;
	uint32_t rs;
	size_t piece;
	int sv[2], fd;

	if (size < 2)
		return 0;
	if (size > FUZZ_MAX_INPUT)
		size = FUZZ_MAX_INPUT;
	piece = (size_t)(data[0] >> 3) * 13;
	rs = 0x9e3779b9u ^ data[1];
	/* the host's key for this input: SHA-256 or SHA-384 */
	if (nvmf_tgt_set_host_psk(g_tgt, HOSTNQN, &g_keys[(data[0] >> 1) & 1]) != 0)
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	tq = tcp_qpair_create(sv[0], g_tgt, g_port, "fuzz");
	if (!tq || reactor_send_msg(g_r, tcp_qpair_start, tq) != 0)
		abort();
	fd = sv[1];
	if (data[0] & 4) { /* plain host */
		pump(fd, tq, data + 2, size - 2, piece, t0);
	} else {
		if (client_init(&c, data[0]) != 0 || xfer(fd, &c, t0) != 0) {
			fprintf(stderr, "fuzz_tls_recv: TLS handshake failed\n");
			abort();
		}
		for (size_t off = 2; off < size;) {
			size_t n = next_record(&rs, data[1]);
			struct iovec v;

			if (n > size - off)
				n = size - off;
			v.iov_base = (void *)(data + off);
			v.iov_len = n;
			if (tls_stream_writev(c.ts, &v, 1) != (ssize_t)n)
				abort();
			client_drain(&c);
			off += n;
		}
		pump(fd, tq, c.out, c.out_len, piece, t0);
		client_fini(&c);
	}
	while (closed_count() < before + 1) {
		if (now_ms() - t0 > 15000) {
			fprintf(stderr, "fuzz_tls_recv: connection not torn down\n");
			abort();
		}
		usleep(200);
	}
	return 0;
}
