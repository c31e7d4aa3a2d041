/* SPDX-License-Identifier: MIT */
/*
 * An iSCSI initiator for the security tests (iscsi-security.sh), on the common PDU codec
 * with its own CHAP arithmetic (OpenSSL one-shot digests, independent of the target's):
 *
 *   iscsi_chap_client PORT login TARGET INITIATOR USER SECRET [MUSER MSECRET] [CHAP_A]
 *       CHAP login (TARGET "-": a discovery session); with MUSER/MSECRET the initiator
 *       challenges the target too and checks its answer (mutual CHAP). CHAP_A is the list
 *       offered (default "8,7,6,5", open-iscsi's); prints the digest the target chose.
 *   iscsi_chap_client PORT none TARGET INITIATOR       login without authentication
 *   iscsi_chap_client PORT reflect TARGET INITIATOR USER SECRET
 *       mutual CHAP whose challenge is the target's own: must be refused
 *   iscsi_chap_client PORT stall TARGET INITIATOR LIMIT
 *       start CHAP, then say nothing after the target's challenge: the target must close
 *       the connection within LIMIT seconds
 *   iscsi_chap_client PORT silent N LIMIT
 *       N connections that never send a byte; prints "ready" once open; all must be
 *       closed by the target within LIMIT seconds
 *   iscsi_chap_client PORT hold TARGET INITIATOR USER SECRET LIMIT
 *       log in, then NOP-Out pings every 50 ms; prints "ended EPOCH-SECONDS" (and the
 *       Async Message event, if one came) when the target ends the session; fails if
 *       it is still up after LIMIT seconds
 *
 * Exit status: 0 the target behaved as the scenario expects, 1 it did not (a line on
 * stderr says why), 2 usage.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "common/iscsi_pdu.h"

#define DATA_MAX 65536

static int g_port;

struct conn {
	int fd;
	uint32_t exp_statsn, cmdsn, itt;
	uint8_t isid[6];
	uint8_t bhs[ISCSI_BHS_LEN];
	char data[DATA_MAX + 1];
	uint32_t dlen;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int tcp_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)g_port) };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int xsend(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t r = send(fd, b, n, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* 0: all bytes; 1: closed or reset; -1: timeout or error */
static int xrecv(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = recv(fd, b, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return 1;
		if (r < 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int pdu_send(struct conn *c, uint8_t *bhs, const void *data, uint32_t dlen)
{
	static uint8_t buf[ISCSI_BHS_LEN + DATA_MAX + 4];

	if (dlen > DATA_MAX)
		return -1;
	iscsi_bhs_set_dlen(bhs, dlen);
	memcpy(buf, bhs, ISCSI_BHS_LEN);
	if (dlen)
		memcpy(buf + ISCSI_BHS_LEN, data, dlen);
	memset(buf + ISCSI_BHS_LEN + dlen, 0, ISCSI_PAD(dlen) - dlen);
	return xsend(c->fd, buf, ISCSI_BHS_LEN + ISCSI_PAD(dlen));
}

/* 0, 1 when the target closed the connection, -1 on timeout or garbage */
static int pdu_recv(struct conn *c)
{
	uint8_t pad[4];
	int rc = xrecv(c->fd, c->bhs, ISCSI_BHS_LEN);

	if (rc)
		return rc;
	if (iscsi_bhs_ahs_len(c->bhs))
		return -1;
	c->dlen = iscsi_bhs_dlen(c->bhs);
	if (c->dlen > DATA_MAX)
		return -1;
	if (c->dlen && (rc = xrecv(c->fd, c->data, c->dlen)))
		return rc;
	c->data[c->dlen] = '\0';
	if (ISCSI_PAD(c->dlen) != c->dlen && (rc = xrecv(c->fd, pad, ISCSI_PAD(c->dlen) - c->dlen)))
		return rc;
	c->exp_statsn = get_be32(c->bhs + 24) + 1;
	return 0;
}

static const char *kv(const struct conn *c, const char *key)
{
	size_t kl = strlen(key);

	for (uint32_t off = 0; off < c->dlen;) {
		const char *p = c->data + off;
		size_t l = strnlen(p, c->dlen - off);

		if (l > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return p + kl + 1;
		off += (uint32_t)l + 1;
	}
	return NULL;
}

/* One login request of stage @csg (to @nsg when @transit) and its response. */
static int login_step(struct conn *c, uint8_t csg, uint8_t nsg, bool transit, const char *text,
		      size_t len)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	int rc;

	iscsi_bhs_init(bhs, ISCSI_OP_LOGIN_REQ,
		       (uint8_t)((transit ? ISCSI_LOGIN_TRANSIT | nsg : 0) |
				 csg << ISCSI_LOGIN_CSG_SHIFT));
	bhs[0] |= ISCSI_FLAG_IMMEDIATE;
	memcpy(bhs + 8, c->isid, 6);
	put_be32(bhs + 16, c->itt);
	put_be32(bhs + 24, c->cmdsn);
	put_be32(bhs + 28, c->exp_statsn);
	if (pdu_send(c, bhs, text, (uint32_t)len))
		return -1;
	rc = pdu_recv(c);
	if (rc)
		return rc;
	return iscsi_bhs_opcode(c->bhs) == ISCSI_OP_LOGIN_RSP ? 0 : -1;
}

static uint16_t login_status(const struct conn *c)
{
	return (uint16_t)(c->bhs[36] << 8 | c->bhs[37]);
}

static const char *md_name(unsigned int alg)
{
	switch (alg) {
	case 5:
		return "MD5";
	case 6:
		return "SHA1";
	case 7:
		return "SHA256";
	case 8:
		return "SHA3-256";
	default:
		return NULL;
	}
}

/* hex text of H(id || secret || challenge) into @hex; its length in bytes, or -1 */
static int chap_hash(unsigned int alg, uint8_t id, const char *secret, const uint8_t *chal,
		     size_t clen, char *hex)
{
	uint8_t msg[1 + 256 + 1024], md[64];
	size_t sl = strlen(secret);
	unsigned int len = 0;
	const char *name = md_name(alg);

	if (!name || sl > 256 || clen > 1024)
		return -1;
	msg[0] = id;
	memcpy(msg + 1, secret, sl);
	memcpy(msg + 1 + sl, chal, clen);
	if (EVP_Digest(msg, 1 + sl + clen, md, &len, EVP_get_digestbyname(name), NULL) != 1)
		return -1;
	iscsi_text_encode_hex(md, len, hex);
	return (int)len;
}

enum mode { M_NORMAL, M_REFLECT, M_STALL };

struct login_args {
	const char *target, *initiator, *user, *secret, *muser, *msecret, *algs;
	enum mode mode;
};

/* 0: full feature phase; 1: refused by the target (status printed); -1: other failure */
static int do_login(struct conn *c, const struct login_args *a)
{
	char text[2048], hex[2 * 1024 + 3], rhex[2 * 64 + 3];
	uint8_t chal[1024], mychal[32];
	size_t len = 0;
	const char *v, *ci, *cc;
	unsigned int alg;
	uint32_t id;
	int n, rc;

	memset(c, 0, sizeof(*c));
	c->fd = tcp_open();
	if (c->fd < 0) {
		fprintf(stderr, "cannot connect to 127.0.0.1:%d\n", g_port);
		return -1;
	}
	c->isid[0] = 0x80;
	RAND_bytes(c->isid + 1, 5);
	c->itt = 1;
	c->cmdsn = 1;
	iscsi_text_add(text, sizeof(text), &len, "InitiatorName", a->initiator);
	if (a->target)
		iscsi_text_add(text, sizeof(text), &len, "TargetName", a->target);
	iscsi_text_add(text, sizeof(text), &len, "SessionType", a->target ? "Normal" : "Discovery");
	iscsi_text_add(text, sizeof(text), &len, "AuthMethod", a->user ? "CHAP" : "None");
	rc = login_step(c, ISCSI_STAGE_SECURITY, ISCSI_STAGE_OPERATIONAL, !a->user, text, len);
	if (rc)
		return -1;
	if (login_status(c)) {
		printf("login status 0x%04x\n", login_status(c));
		return 1;
	}
	if (a->user) {
		len = 0;
		iscsi_text_add(text, sizeof(text), &len, "CHAP_A", a->algs ? a->algs : "8,7,6,5");
		if (login_step(c, ISCSI_STAGE_SECURITY, ISCSI_STAGE_OPERATIONAL, false, text, len))
			return -1;
		if (login_status(c)) {
			printf("login status 0x%04x (CHAP_A=%s)\n", login_status(c),
			       kv(c, "CHAP_A") ? kv(c, "CHAP_A") : "-");
			return 1;
		}
		v = kv(c, "CHAP_A");
		ci = kv(c, "CHAP_I");
		cc = kv(c, "CHAP_C");
		if (!v || !ci || !cc || iscsi_text_parse_u32(ci, &id) || id > 255) {
			fprintf(stderr, "no CHAP challenge in the target's answer\n");
			return -1;
		}
		alg = (unsigned int)atoi(v);
		printf("CHAP_A=%u (%s)\n", alg, md_name(alg) ? md_name(alg) : "?");
		n = iscsi_text_decode_binary(cc, chal, sizeof(chal));
		if (n <= 0 || chap_hash(alg, (uint8_t)id, a->secret, chal, (size_t)n, rhex) < 0) {
			fprintf(stderr, "bad CHAP_C or CHAP_A\n");
			return -1;
		}
		if (a->mode == M_STALL)
			return 0; /* and say nothing more */
		len = 0;
		iscsi_text_add(text, sizeof(text), &len, "CHAP_N", a->user);
		iscsi_text_add(text, sizeof(text), &len, "CHAP_R", rhex);
		if (a->muser || a->mode == M_REFLECT) {
			if (a->mode == M_REFLECT) {
				snprintf(hex, sizeof(hex), "%s", cc); /* its own challenge */
			} else {
				RAND_bytes(mychal, sizeof(mychal));
				iscsi_text_encode_hex(mychal, sizeof(mychal), hex);
			}
			iscsi_text_add(text, sizeof(text), &len, "CHAP_I", "99");
			iscsi_text_add(text, sizeof(text), &len, "CHAP_C", hex);
		}
		if (login_step(c, ISCSI_STAGE_SECURITY, ISCSI_STAGE_OPERATIONAL, true, text, len))
			return -1;
		if (login_status(c)) {
			printf("login status 0x%04x\n", login_status(c));
			return 1;
		}
		if (a->muser) {
			v = kv(c, "CHAP_R");
			if (!kv(c, "CHAP_N") || strcmp(kv(c, "CHAP_N"), a->muser) || !v ||
			    chap_hash(alg, 99, a->msecret, mychal, sizeof(mychal), rhex) < 0 ||
			    strcasecmp(v, rhex)) {
				fprintf(stderr, "the target's mutual CHAP answer is wrong\n");
				return -1;
			}
			printf("mutual CHAP: the target proved %s\n", a->muser);
		}
	}
	len = 0;
	iscsi_text_add(text, sizeof(text), &len, "HeaderDigest", "None");
	iscsi_text_add(text, sizeof(text), &len, "DataDigest", "None");
	iscsi_text_add(text, sizeof(text), &len, "ErrorRecoveryLevel", "0");
	if (login_step(c, ISCSI_STAGE_OPERATIONAL, ISCSI_STAGE_FULL_FEATURE, true, text, len))
		return -1;
	if (login_status(c)) {
		printf("login status 0x%04x\n", login_status(c));
		return 1;
	}
	if (!(c->bhs[1] & ISCSI_LOGIN_TRANSIT) ||
	    (c->bhs[1] & ISCSI_LOGIN_NSG_MASK) != ISCSI_STAGE_FULL_FEATURE) {
		fprintf(stderr, "no transit to the full feature phase\n");
		return -1;
	}
	printf("full feature phase (%s session)\n", a->target ? "normal" : "discovery");
	return 0;
}

/* Wait for the target to close @fd; seconds it took, or -1 after @limit. */
static double wait_closed(int fd, double t0, double limit)
{
	char b[256];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = t0 + limit - now();

		if (left <= 0)
			return -1;
		if (poll(&p, 1, (int)(left * 1000) + 1) > 0) {
			ssize_t r = recv(fd, b, sizeof(b), MSG_DONTWAIT);

			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				return now() - t0;
		}
	}
}

static int scen_silent(int n, double limit)
{
	int *fds = calloc((size_t)n, sizeof(int)), open_n = 0;
	struct rlimit rl;
	double t0, worst = 0;

	getrlimit(RLIMIT_NOFILE, &rl);
	if (!fds || (rlim_t)n + 16 > rl.rlim_cur) {
		fprintf(stderr, "silent: %d sockets need more descriptors (%llu)\n", n,
			(unsigned long long)rl.rlim_cur);
		free(fds);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		fds[i] = tcp_open();
		if (fds[i] < 0) {
			fprintf(stderr, "silent: connection %d failed\n", i);
			free(fds);
			return 1;
		}
		open_n++;
	}
	t0 = now();
	printf("ready %d\n", open_n);
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		double t = wait_closed(fds[i], t0, limit);

		if (t < 0) {
			fprintf(stderr, "silent: connection %d still open after %.1f s\n", i,
				limit);
			return 1;
		}
		if (t > worst)
			worst = t;
		close(fds[i]);
	}
	printf("all %d closed by the target within %.2f s\n", n, worst);
	free(fds);
	return 0;
}

static int scen_hold(struct conn *c, const struct login_args *a, double limit)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	double t0 = now();
	int event = -1;

	if (do_login(c, a) != 0)
		return 1;
	printf("holding\n");
	fflush(stdout);
	while (now() - t0 < limit) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };

		iscsi_bhs_init(bhs, ISCSI_OP_NOP_OUT, ISCSI_FLAG_FINAL);
		bhs[0] |= ISCSI_FLAG_IMMEDIATE;
		put_be32(bhs + 16, ++c->itt);
		put_be32(bhs + 20, 0xffffffff);
		put_be32(bhs + 24, c->cmdsn);
		put_be32(bhs + 28, c->exp_statsn);
		if (pdu_send(c, bhs, NULL, 0))
			goto ended;
		while (poll(&p, 1, 50) > 0) {
			int rc = pdu_recv(c);

			if (rc)
				goto ended;
			if (iscsi_bhs_opcode(c->bhs) == ISCSI_OP_ASYNC_MSG)
				event = c->bhs[36];
		}
	}
	fprintf(stderr, "hold: the session is still up after %.0f s\n", limit);
	return 1;
ended : {
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	printf("ended %ld.%03ld", (long)rt.tv_sec, rt.tv_nsec / 1000000);
	if (event >= 0)
		printf(" async-event %d", event);
	printf("\n");
	return 0;
}
}

int main(int argc, char **argv)
{
	static struct conn conn;
	struct login_args a = { 0 };
	struct conn *c = &conn;
	const char *sc;
	int rc;

	if (argc < 3)
		goto usage;
	g_port = atoi(argv[1]);
	sc = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(sc, "silent") && argc == 5)
		return scen_silent(atoi(argv[3]), atof(argv[4]));
	if (argc < 5)
		goto usage;
	a.target = strcmp(argv[3], "-") ? argv[3] : NULL;
	a.initiator = argv[4];
	if (!strcmp(sc, "none") && argc == 5) {
		return do_login(c, &a) == 0 ? 0 : 1;
	} else if (!strcmp(sc, "login") && argc >= 7 && argc <= 10) {
		a.user = argv[5];
		a.secret = argv[6];
		if (argc >= 9) {
			a.muser = argv[7];
			a.msecret = argv[8];
		}
		if (argc == 8 || argc == 10)
			a.algs = argv[argc - 1];
		rc = do_login(c, &a);
		return rc == 0 ? 0 : 1;
	} else if (!strcmp(sc, "reflect") && argc == 7) {
		a.user = argv[5];
		a.secret = argv[6];
		a.mode = M_REFLECT;
		rc = do_login(c, &a);
		if (rc == 0) {
			fprintf(stderr, "reflect: the target answered its own challenge\n");
			return 1;
		}
		return rc == 1 ? 0 : 1;
	} else if (!strcmp(sc, "stall") && argc == 6) {
		double t0 = now(), t;

		a.user = "stall";
		a.secret = "stall-secret-0000";
		a.mode = M_STALL;
		if (do_login(c, &a) != 0)
			return 1;
		t = wait_closed(c->fd, t0, atof(argv[5]));
		if (t < 0) {
			fprintf(stderr, "stall: still open after %s s\n", argv[5]);
			return 1;
		}
		printf("closed by the target %.2f s after the CHAP exchange began\n", t);
		return 0;
	} else if (!strcmp(sc, "hold") && argc == 8) {
		a.user = argv[5];
		a.secret = argv[6];
		return scen_hold(c, &a, atof(argv[7]));
	}
usage:
	fprintf(stderr, "usage: iscsi_chap_client PORT login|none|reflect|stall|silent|hold "
			"ARGS...\n");
	return 2;
}
