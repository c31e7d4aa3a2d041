/* SPDX-License-Identifier: MIT */
/*
 * Fault injection against the daemon's iSCSI portal (driven by fault-iscsi.sh): a raw
 * initiator built on the common PDU codec, plain login (optionally CRC32C digests), then
 * one broken or hostile behaviour per scenario on its own session. Every scenario that
 * writes checks afterwards, from a fresh session, that the blocks it aimed at still hold
 * what a healthy session wrote there before (no acknowledged data lost, nothing written
 * from a rejected transfer).
 *
 *   iscsi_fault_client PORT TARGET-IQN SCENARIO [ARG...]
 *
 * Scenarios: healthy [digest], mid-pdu, mid-transfer, bad-hdgst, bad-ddgst, big-dseg,
 * short-dseg, edtl-short, r2t-bad-ttt, r2t-bad-offset, r2t-bad-datasn, r2t-beyond,
 * data-after-done, first-burst-imm, first-burst-unsol, no-read PID RSS-MIB, login-stall;
 * stalled sessions (tests/security): hoard SESSIONS WRITES HOLD-S, dataout-stall TIMEOUT-S,
 * nop-answer INTERVAL-S TIMEOUT-S, nop-silent INTERVAL-S TIMEOUT-S, initiator-limit MAX,
 * idle SESSIONS HOLD-S.
 * Exit status 0 when the target behaved, 1 otherwise (one line on stderr says why).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "common/iscsi_pdu.h"
#include "common/scsi_spec.h"

#define BS     512u /* the RAM namespace's logical block size */
#define RX_MAX (1u << 20)

static int g_port;
static const char *g_iqn;
static const char *g_initiator = "iqn.2026-11.io.nvmeof:fault";
static int g_timeout_s = 10; /* receive and send timeout of every socket */
static int g_isid_seq = -1;  /* >= 0: the next login reuses this ISID (reinstatement) */

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "iscsi_fault_client: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

#define REQUIRE(cond, ...)                 \
	do {                               \
		if (!(cond)) {             \
			fail(__VA_ARGS__); \
			return -1;         \
		}                          \
	} while (0)

struct sess {
	int fd;
	bool hd, dd;
	uint32_t itt, cmdsn, exp_statsn, max_cmdsn;
	uint32_t mrdsl; /* what the target accepts per PDU */
	uint32_t fbl, mbl;
	bool immediate, initial_r2t;
	uint8_t rx_bhs[ISCSI_BHS_LEN];
	uint8_t *rx; /* data segment of the last PDU received */
	uint32_t rx_dlen;
};

static int tcp_open(int rcvbuf)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)g_port) };
	struct timeval tv = { .tv_sec = g_timeout_s };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
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

/* 0: all @n bytes; 1: orderly close or reset; -1: timeout or error. */
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

/* A PDU as it travels, digests in effect (or corrupted on request). */
enum { BAD_NONE, BAD_HDGST, BAD_DDGST };

static int pdu_build(const struct sess *s, uint8_t *bhs, const void *data, uint32_t dlen, int bad,
		     uint8_t *out, size_t *outlen)
{
	size_t n = 0;

	iscsi_bhs_set_dlen(bhs, dlen);
	memcpy(out, bhs, ISCSI_BHS_LEN);
	n = ISCSI_BHS_LEN;
	if (s->hd) {
		iscsi_put_digest(out + n, iscsi_header_digest(bhs, ISCSI_BHS_LEN) ^
						  (bad == BAD_HDGST ? 0x5a : 0));
		n += ISCSI_DIGEST_LEN;
	}
	if (dlen) {
		struct iovec v = { (void *)data, dlen };

		memcpy(out + n, data, dlen);
		memset(out + n + dlen, 0, ISCSI_PAD(dlen) - dlen);
		n += ISCSI_PAD(dlen);
		if (s->dd) {
			iscsi_put_digest(out + n, iscsi_data_digest(&v, 1, dlen) ^
							  (bad == BAD_DDGST ? 0x5a : 0));
			n += ISCSI_DIGEST_LEN;
		}
	}
	*outlen = n;
	return 0;
}

static uint8_t g_tx[RX_MAX + 1024];

static int pdu_send(struct sess *s, uint8_t *bhs, const void *data, uint32_t dlen, int bad)
{
	size_t n;

	pdu_build(s, bhs, data, dlen, bad, g_tx, &n);
	return xsend(s->fd, g_tx, n);
}

/* Receive one PDU (digests checked). 0, 1 on close, -1 on timeout/garbage. */
static int pdu_recv(struct sess *s)
{
	uint8_t dg[4], trailer[8];
	uint32_t dlen;
	uint8_t op;
	int rc = xrecv(s->fd, s->rx_bhs, ISCSI_BHS_LEN);

	if (rc)
		return rc;
	if (iscsi_bhs_ahs_len(s->rx_bhs))
		return -1;
	if (s->hd) {
		if (xrecv(s->fd, dg, 4))
			return -1;
		if (iscsi_get_digest(dg) != iscsi_header_digest(s->rx_bhs, ISCSI_BHS_LEN)) {
			fail("header digest of a target PDU is wrong");
			return -1;
		}
	}
	dlen = iscsi_bhs_dlen(s->rx_bhs);
	if (dlen > RX_MAX)
		return -1;
	s->rx_dlen = dlen;
	if (dlen) {
		uint32_t tl = ISCSI_PAD(dlen) - dlen + (s->dd ? 4 : 0);
		struct iovec v = { s->rx, dlen };

		if (xrecv(s->fd, s->rx, dlen) || (tl && xrecv(s->fd, trailer, tl)))
			return -1;
		if (s->dd && iscsi_get_digest(trailer + tl - 4) != iscsi_data_digest(&v, 1, dlen)) {
			fail("data digest of a target PDU is wrong");
			return -1;
		}
	}
	op = iscsi_bhs_opcode(s->rx_bhs);
	/* StatSN advances with every status-bearing PDU (a Data-In only with its S bit) */
	if (op != ISCSI_OP_R2T && op != ISCSI_OP_ASYNC_MSG &&
	    (op != ISCSI_OP_DATA_IN || (s->rx_bhs[1] & ISCSI_DATA_STATUS)))
		s->exp_statsn = get_be32(s->rx_bhs + 24) + 1;
	if (op != ISCSI_OP_LOGIN_RSP)
		s->max_cmdsn = get_be32(s->rx_bhs + 32);
	return 0;
}

static void sess_close(struct sess *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->rx);
	s->rx = NULL;
}

static const char *kv_get(char *data, uint32_t len, const char *key)
{
	size_t kl = strlen(key);

	for (uint32_t off = 0; off < len;) {
		char *p = data + off;
		size_t l = strnlen(p, len - off);

		if (l > kl && !strncmp(p, key, kl) && p[kl] == '=')
			return p + kl + 1;
		off += (uint32_t)l + 1;
	}
	return NULL;
}

/*
 * Plain login straight into the operational stage: digests when asked, ImmediateData=Yes,
 * InitialR2T=No (so unsolicited data is allowed), our MaxRecvDataSegmentLength 256 KiB.
 */
static int sess_login(struct sess *s, bool digest, int rcvbuf)
{
	static uint32_t isid_seq;
	uint8_t bhs[ISCSI_BHS_LEN];
	char text[1024];
	size_t len = 0;
	const char *v;
	int rc;

	memset(s, 0, sizeof(*s));
	s->fd = tcp_open(rcvbuf);
	REQUIRE(s->fd >= 0, "cannot connect to 127.0.0.1:%d", g_port);
	s->rx = malloc(RX_MAX);
	REQUIRE(s->rx, "out of memory");
	s->itt = 1;
	s->cmdsn = 1;
	iscsi_text_add(text, sizeof(text), &len, "InitiatorName", g_initiator);
	iscsi_text_add(text, sizeof(text), &len, "TargetName", g_iqn);
	iscsi_text_add(text, sizeof(text), &len, "SessionType", "Normal");
	iscsi_text_add(text, sizeof(text), &len, "HeaderDigest", digest ? "CRC32C" : "None");
	iscsi_text_add(text, sizeof(text), &len, "DataDigest", digest ? "CRC32C" : "None");
	iscsi_text_add(text, sizeof(text), &len, "ImmediateData", "Yes");
	iscsi_text_add(text, sizeof(text), &len, "InitialR2T", "No");
	iscsi_text_add_u32(text, sizeof(text), &len, "MaxRecvDataSegmentLength", 262144);
	iscsi_text_add_u32(text, sizeof(text), &len, "FirstBurstLength", 65536);
	iscsi_text_add_u32(text, sizeof(text), &len, "MaxBurstLength", 262144);
	iscsi_text_add(text, sizeof(text), &len, "ErrorRecoveryLevel", "0");
	iscsi_bhs_init(bhs, ISCSI_OP_LOGIN_REQ,
		       ISCSI_LOGIN_TRANSIT | ISCSI_STAGE_OPERATIONAL << ISCSI_LOGIN_CSG_SHIFT |
			       ISCSI_STAGE_FULL_FEATURE);
	bhs[0] |= ISCSI_FLAG_IMMEDIATE;
	bhs[8] = 0x80; /* ISID: random format */
	put_be32(bhs + 9, (uint32_t)getpid() << 8 |
				  ((g_isid_seq >= 0 ? (uint32_t)g_isid_seq : ++isid_seq) & 0xff));
	put_be32(bhs + 16, 0);
	put_be32(bhs + 24, s->cmdsn);
	REQUIRE(pdu_send(s, bhs, text, (uint32_t)len, BAD_NONE) == 0, "login send");
	rc = pdu_recv(s);
	REQUIRE(rc == 0, "no login response within %d s", g_timeout_s);
	REQUIRE(iscsi_bhs_opcode(s->rx_bhs) == ISCSI_OP_LOGIN_RSP, "opcode %#x for login",
		iscsi_bhs_opcode(s->rx_bhs));
	REQUIRE(s->rx_bhs[36] == 0 && s->rx_bhs[37] == 0, "login status %u/%u", s->rx_bhs[36],
		s->rx_bhs[37]);
	REQUIRE((s->rx_bhs[1] & ISCSI_LOGIN_TRANSIT) &&
			(s->rx_bhs[1] & ISCSI_LOGIN_NSG_MASK) == ISCSI_STAGE_FULL_FEATURE,
		"login did not reach the full feature phase in one step");
	s->mrdsl = 8192;
	s->fbl = 65536;
	s->mbl = 262144;
	s->immediate = true;
	s->initial_r2t = false;
	if ((v = kv_get((char *)s->rx, s->rx_dlen, "MaxRecvDataSegmentLength")))
		s->mrdsl = (uint32_t)strtoul(v, NULL, 0);
	if ((v = kv_get((char *)s->rx, s->rx_dlen, "FirstBurstLength")))
		s->fbl = (uint32_t)strtoul(v, NULL, 0);
	if ((v = kv_get((char *)s->rx, s->rx_dlen, "MaxBurstLength")))
		s->mbl = (uint32_t)strtoul(v, NULL, 0);
	if ((v = kv_get((char *)s->rx, s->rx_dlen, "ImmediateData")))
		s->immediate = !strcmp(v, "Yes");
	if ((v = kv_get((char *)s->rx, s->rx_dlen, "InitialR2T")))
		s->initial_r2t = !strcmp(v, "Yes");
	v = kv_get((char *)s->rx, s->rx_dlen, "HeaderDigest");
	s->hd = v && !strcmp(v, "CRC32C");
	v = kv_get((char *)s->rx, s->rx_dlen, "DataDigest");
	s->dd = v && !strcmp(v, "CRC32C");
	REQUIRE(s->hd == digest && s->dd == digest, "digests %s not negotiated",
		digest ? "CRC32C" : "None");
	s->exp_statsn = get_be32(s->rx_bhs + 24) + 1;
	s->max_cmdsn = get_be32(s->rx_bhs + 32);
	return 0;
}

static void cmd_init(struct sess *s, uint8_t *bhs, uint8_t flags, uint32_t edtl, uint8_t op,
		     uint32_t lba, uint16_t nblocks)
{
	iscsi_bhs_init(bhs, ISCSI_OP_SCSI_CMD, flags | 1 /* SIMPLE */);
	put_be32(bhs + 16, s->itt++);
	put_be32(bhs + 20, edtl);
	put_be32(bhs + 24, s->cmdsn++);
	put_be32(bhs + 28, s->exp_statsn);
	bhs[32] = op;
	put_be32(bhs + 34, lba);
	put_be16(bhs + 39, nblocks);
}

static void data_out_init(struct sess *s, uint8_t *bhs, uint32_t itt, uint32_t ttt, uint32_t datasn,
			  uint32_t off, bool final)
{
	iscsi_bhs_init(bhs, ISCSI_OP_DATA_OUT, final ? ISCSI_FLAG_FINAL : 0);
	put_be32(bhs + 16, itt);
	put_be32(bhs + 20, ttt);
	put_be32(bhs + 28, s->exp_statsn);
	put_be32(bhs + 36, datasn);
	put_be32(bhs + 40, off);
}

/* Wait for the SCSI Response of @itt, skipping NOP-Ins; returns its status or -1. */
static int wait_rsp(struct sess *s, uint32_t itt)
{
	for (int i = 0; i < 1000; i++) {
		REQUIRE(pdu_recv(s) == 0, "no SCSI Response for ITT %#x", itt);
		if (iscsi_bhs_opcode(s->rx_bhs) == ISCSI_OP_REJECT) {
			fail("Reject (reason %#x) for ITT %#x", s->rx_bhs[2], itt);
			return -1;
		}
		if (iscsi_bhs_opcode(s->rx_bhs) == ISCSI_OP_SCSI_RSP &&
		    iscsi_bhs_itt(s->rx_bhs) == itt) {
			REQUIRE(s->rx_bhs[2] == ISCSI_RESPONSE_COMPLETED, "iSCSI response %#x",
				s->rx_bhs[2]);
			return s->rx_bhs[3];
		}
	}
	fail("too many PDUs before the response of ITT %#x", itt);
	return -1;
}

/* Sense key of a CHECK CONDITION in the last SCSI Response (fixed or descriptor). */
static int sense_key(const struct sess *s)
{
	if (s->rx_dlen < 2 + 3)
		return -1;
	if ((s->rx[2] & 0x7f) >= 0x72)
		return s->rx[3] & 0x0f;
	return s->rx[4] & 0x0f;
}

/* WRITE(10) the normal way: immediate data, unsolicited Data-Out, then R2Ts. */
static int scsi_write(struct sess *s, uint32_t lba, const uint8_t *data, uint32_t len)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t itt = s->itt, imm = 0, sent, unsol_end, datasn = 0;
	int st;

	unsol_end = s->initial_r2t ? 0 : (len < s->fbl ? len : s->fbl);
	if (s->immediate)
		imm = unsol_end < s->mrdsl ? unsol_end : s->mrdsl;
	cmd_init(s, bhs, ISCSI_SCSI_CMD_WRITE | (imm == unsol_end ? ISCSI_FLAG_FINAL : 0), len,
		 SCSI_OP_WRITE10, lba, (uint16_t)(len / BS));
	REQUIRE(pdu_send(s, bhs, data, imm, BAD_NONE) == 0, "write send");
	for (sent = imm; sent < unsol_end;) {
		uint32_t n = unsol_end - sent < s->mrdsl ? unsol_end - sent : s->mrdsl;

		data_out_init(s, bhs, itt, ISCSI_TAG_RESERVED, datasn++, sent,
			      sent + n == unsol_end);
		REQUIRE(pdu_send(s, bhs, data + sent, n, BAD_NONE) == 0, "Data-Out send");
		sent += n;
	}
	for (int i = 0; i < 4096; i++) {
		uint32_t off, want, ttt;

		REQUIRE(pdu_recv(s) == 0, "write: connection lost");
		if (iscsi_bhs_opcode(s->rx_bhs) == ISCSI_OP_SCSI_RSP) {
			REQUIRE(iscsi_bhs_itt(s->rx_bhs) == itt, "response for another ITT");
			st = s->rx_bhs[3];
			REQUIRE(st == SCSI_STATUS_GOOD, "write status %#x", st);
			return 0;
		}
		REQUIRE(iscsi_bhs_opcode(s->rx_bhs) == ISCSI_OP_R2T, "opcode %#x during a write",
			iscsi_bhs_opcode(s->rx_bhs));
		ttt = get_be32(s->rx_bhs + 20);
		off = get_be32(s->rx_bhs + 40);
		want = get_be32(s->rx_bhs + 44);
		REQUIRE(off + want <= len, "R2T beyond the transfer (%u+%u)", off, want);
		datasn = 0;
		for (uint32_t got = 0; got < want;) {
			uint32_t n = want - got < s->mrdsl ? want - got : s->mrdsl;

			data_out_init(s, bhs, itt, ttt, datasn++, off + got, got + n == want);
			REQUIRE(pdu_send(s, bhs, data + off + got, n, BAD_NONE) == 0, "Data-Out");
			got += n;
		}
	}
	fail("write never completed");
	return -1;
}

static int scsi_read(struct sess *s, uint32_t lba, uint8_t *data, uint32_t len)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t itt = s->itt, got = 0;

	cmd_init(s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_READ, len, SCSI_OP_READ10, lba,
		 (uint16_t)(len / BS));
	REQUIRE(pdu_send(s, bhs, NULL, 0, BAD_NONE) == 0, "read send");
	for (int i = 0; i < 4096; i++) {
		uint8_t op;

		REQUIRE(pdu_recv(s) == 0, "read: connection lost");
		op = iscsi_bhs_opcode(s->rx_bhs);
		REQUIRE(iscsi_bhs_itt(s->rx_bhs) == itt, "opcode %#x for ITT %#x during a read", op,
			iscsi_bhs_itt(s->rx_bhs));
		if (op == ISCSI_OP_DATA_IN) {
			uint32_t off = get_be32(s->rx_bhs + 40);

			REQUIRE(off + s->rx_dlen <= len, "Data-In beyond the buffer");
			memcpy(data + off, s->rx, s->rx_dlen);
			got += s->rx_dlen;
			if (s->rx_bhs[1] & ISCSI_DATA_STATUS) {
				REQUIRE(s->rx_bhs[3] == SCSI_STATUS_GOOD, "read status %#x",
					s->rx_bhs[3]);
				break;
			}
			continue;
		}
		REQUIRE(op == ISCSI_OP_SCSI_RSP, "opcode %#x during a read", op);
		REQUIRE(s->rx_bhs[3] == SCSI_STATUS_GOOD, "read status %#x", s->rx_bhs[3]);
		break;
	}
	REQUIRE(got == len, "read %u of %u bytes", got, len);
	return 0;
}

static void logout(struct sess *s)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	iscsi_bhs_init(bhs, ISCSI_OP_LOGOUT_REQ, ISCSI_FLAG_FINAL);
	bhs[0] |= ISCSI_FLAG_IMMEDIATE;
	put_be32(bhs + 16, s->itt++);
	put_be32(bhs + 24, s->cmdsn);
	put_be32(bhs + 28, s->exp_statsn);
	if (pdu_send(s, bhs, NULL, 0, BAD_NONE) == 0)
		pdu_recv(s);
	sess_close(s);
}

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i += 4)
		put_be32(p + i, seed * 2654435761u + i);
}

/* Write @len bytes of pattern @seed at @lba and read them back, on a fresh session. */
static int fill(uint32_t lba, uint32_t len, uint32_t seed, bool digest)
{
	static uint8_t w[1 << 20], r[1 << 20];
	struct sess s;

	if (sess_login(&s, digest, 0))
		return -1;
	pattern(w, len, seed);
	if (scsi_write(&s, lba, w, len) || scsi_read(&s, lba, r, len)) {
		sess_close(&s);
		return -1;
	}
	logout(&s);
	REQUIRE(!memcmp(w, r, len), "read back differs from what was written at LBA %u", lba);
	return 0;
}

/* The blocks at @lba still hold pattern @seed (a fresh session reads them). */
static int verify(uint32_t lba, uint32_t len, uint32_t seed)
{
	static uint8_t w[1 << 20], r[1 << 20];
	struct sess s;

	if (sess_login(&s, false, 0))
		return -1;
	pattern(w, len, seed);
	if (scsi_read(&s, lba, r, len)) {
		sess_close(&s);
		return -1;
	}
	logout(&s);
	for (uint32_t i = 0; i < len; i += BS)
		REQUIRE(!memcmp(w + i, r + i, BS), "LBA %u changed (expected pattern %u)",
			lba + i / BS, seed);
	return 0;
}

static int healthy(bool digest)
{
	return fill(4096, 4096, 11, digest) || fill(8192, 262144, 12, digest);
}

/* The target ends the connection (after an optional Reject): 0 when it closed within the
 * receive timeout; *@reject gets the reason of a Reject seen first (0: none). */
static int expect_close(struct sess *s, int *reject)
{
	*reject = 0;
	for (int i = 0; i < 1000; i++) {
		int rc = pdu_recv(s);

		if (rc == 1)
			return 0;
		REQUIRE(rc == 0, "connection neither closed nor answered");
		if (iscsi_bhs_opcode(s->rx_bhs) == ISCSI_OP_REJECT && !*reject)
			*reject = s->rx_bhs[2];
	}
	fail("connection not closed");
	return -1;
}

static int expect_reject_close(struct sess *s, int reason, const char *what)
{
	int got;

	if (expect_close(s, &got))
		return -1;
	REQUIRE(got == reason, "%s: Reject reason %#x before the close, expected %#x", what, got,
		reason);
	return 0;
}

/* ---- scenarios ----------------------------------------------------------------------------- */

#define LBA_F 20000u /* region the faulty writes aim at */

static int scen_mid_pdu(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;

	if (sess_login(&s, false, 0))
		return -1;
	cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_READ, 4096, SCSI_OP_READ10, 0, 8);
	REQUIRE(xsend(s.fd, bhs, 20) == 0, "send");
	usleep(100000);
	sess_close(&s);
	return 0;
}

static int scen_mid_transfer(void)
{
	static uint8_t d[65536];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	uint32_t itt;

	if (fill(LBA_F, 65536, 21, false) || sess_login(&s, false, 0))
		return -1;
	itt = s.itt;
	/* no immediate data, no unsolicited burst: everything through one R2T */
	cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, 65536, SCSI_OP_WRITE10, LBA_F,
		 128);
	REQUIRE(pdu_send(&s, bhs, NULL, 0, BAD_NONE) == 0, "send");
	REQUIRE(pdu_recv(&s) == 0 && iscsi_bhs_opcode(s.rx_bhs) == ISCSI_OP_R2T, "no R2T");
	pattern(d, sizeof(d), 22);
	data_out_init(&s, bhs, itt, get_be32(s.rx_bhs + 20), 0, 0, true);
	iscsi_bhs_set_dlen(bhs, 65536);
	REQUIRE(xsend(s.fd, bhs, ISCSI_BHS_LEN) == 0 && xsend(s.fd, d, 30000) == 0, "send");
	usleep(100000);
	sess_close(&s);
	/* the command never got its data: nothing of it may reach the medium */
	return verify(LBA_F, 65536, 21);
}

static int scen_bad_hdgst(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	int reject;

	if (sess_login(&s, true, 0))
		return -1;
	cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_READ, 4096, SCSI_OP_READ10, 0, 8);
	REQUIRE(pdu_send(&s, bhs, NULL, 0, BAD_HDGST) == 0, "send");
	if (expect_close(&s, &reject)) {
		sess_close(&s);
		return -1;
	}
	sess_close(&s);
	/* the header cannot be trusted: nothing may answer it */
	REQUIRE(reject == 0, "Reject %#x for a PDU whose header failed its digest", reject);
	return 0;
}

static int scen_bad_ddgst(void)
{
	static uint8_t d[4096];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	int rc;

	if (fill(LBA_F, 4096, 31, true) || sess_login(&s, true, 0))
		return -1;
	pattern(d, sizeof(d), 32);
	cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, 4096, SCSI_OP_WRITE10, LBA_F, 8);
	REQUIRE(pdu_send(&s, bhs, d, 4096, BAD_DDGST) == 0, "send");
	rc = expect_reject_close(&s, ISCSI_REJECT_DATA_DIGEST, "bad data digest");
	sess_close(&s);
	return rc || verify(LBA_F, 4096, 31);
}

static int scen_big_dseg(void)
{
	static uint8_t d[RX_MAX];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	int rc;

	if (sess_login(&s, false, 0))
		return -1;
	REQUIRE(s.mrdsl + 4096 <= sizeof(d), "MaxRecvDataSegmentLength %u too large", s.mrdsl);
	/* a NOP-Out ping one 4 KiB page over what the target declared it receives */
	iscsi_bhs_init(bhs, ISCSI_OP_NOP_OUT, ISCSI_FLAG_FINAL);
	bhs[0] |= ISCSI_FLAG_IMMEDIATE;
	put_be32(bhs + 16, s.itt++);
	put_be32(bhs + 20, ISCSI_TAG_RESERVED);
	put_be32(bhs + 24, s.cmdsn);
	put_be32(bhs + 28, s.exp_statsn);
	REQUIRE(pdu_send(&s, bhs, d, s.mrdsl + 4096, BAD_NONE) == 0 || 1, "send");
	rc = expect_reject_close(&s, ISCSI_REJECT_PROTOCOL_ERROR, "oversized data segment");
	sess_close(&s);
	return rc;
}

/* A WRITE whose data segment is cut short: the header promises 4 KiB, 1,000 bytes come,
 * then the connection closes. Nothing of it may reach the medium. */
static int scen_short_dseg(void)
{
	static uint8_t d[4096];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;

	if (fill(LBA_F, 4096, 41, false) || sess_login(&s, false, 0))
		return -1;
	pattern(d, sizeof(d), 42);
	cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, 4096, SCSI_OP_WRITE10, LBA_F, 8);
	iscsi_bhs_set_dlen(bhs, 4096);
	REQUIRE(xsend(s.fd, bhs, ISCSI_BHS_LEN) == 0 && xsend(s.fd, d, 1000) == 0, "send");
	usleep(100000);
	sess_close(&s);
	return verify(LBA_F, 4096, 41);
}

/* EDTL shorter than the CDB's transfer: only what the initiator sends may be written
 * (GOOD with an overflow residual) or nothing (CHECK CONDITION); never beyond. */
static int scen_edtl_short(void)
{
	static uint8_t d[4096], r[4096], old[4096];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	int st;

	if (fill(LBA_F, 4096, 43, false) || sess_login(&s, false, 0))
		return -1;
	pattern(d, sizeof(d), 44);
	pattern(old, sizeof(old), 43);
	cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, 2048, SCSI_OP_WRITE10, LBA_F, 8);
	REQUIRE(pdu_send(&s, bhs, d, 2048, BAD_NONE) == 0, "send");
	st = wait_rsp(&s, get_be32(bhs + 16));
	if (st < 0)
		return -1;
	if (st == SCSI_STATUS_GOOD) {
		REQUIRE((s.rx_bhs[1] & ISCSI_RSP_OVERFLOW) && get_be32(s.rx_bhs + 44) == 2048,
			"GOOD without an overflow residual of 2048 (flags %#x, residual %u)",
			s.rx_bhs[1], get_be32(s.rx_bhs + 44));
	} else {
		REQUIRE(st == SCSI_STATUS_CHECK_CONDITION, "status %#x", st);
	}
	if (scsi_read(&s, LBA_F, r, 4096))
		return -1;
	logout(&s);
	REQUIRE(!memcmp(r + 2048, old + 2048, 2048), "blocks beyond the EDTL were written");
	REQUIRE(!memcmp(r, st == SCSI_STATUS_GOOD ? d : old, 2048), "the first blocks hold neither "
								    "the old nor the new data as "
								    "the status says");
	return 0;
}

/* A write waiting for its R2T's data, ready for abuse; returns the R2T's TTT. */
static int r2t_setup(struct sess *s, uint32_t seed, uint32_t *itt, uint32_t *ttt)
{
	uint8_t bhs[ISCSI_BHS_LEN];

	if (fill(LBA_F, 65536, seed, false) || sess_login(s, false, 0))
		return -1;
	*itt = s->itt;
	cmd_init(s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, 65536, SCSI_OP_WRITE10, LBA_F,
		 128);
	REQUIRE(pdu_send(s, bhs, NULL, 0, BAD_NONE) == 0, "send");
	REQUIRE(pdu_recv(s) == 0 && iscsi_bhs_opcode(s->rx_bhs) == ISCSI_OP_R2T, "no R2T");
	REQUIRE(get_be32(s->rx_bhs + 40) == 0 && get_be32(s->rx_bhs + 44) == 65536,
		"R2T for %u+%u, expected the whole 64 KiB", get_be32(s->rx_bhs + 40),
		get_be32(s->rx_bhs + 44));
	*ttt = get_be32(s->rx_bhs + 20);
	return 0;
}

/* Data-Out the R2T did not ask for: the target must refuse it and drop the connection
 * (a protocol error at ErrorRecoveryLevel 0), with the write never reaching the LUN. */
static int r2t_violation(const char *what, uint32_t seed, int kind)
{
	static uint8_t d[65536 + 4096];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	uint32_t itt, ttt;
	int rc;

	if (r2t_setup(&s, seed, &itt, &ttt))
		return -1;
	pattern(d, sizeof(d), seed + 1);
	switch (kind) {
	case 0: /* a TTT never issued */
		data_out_init(&s, bhs, itt, ttt ^ 0x5a5a0000, 0, 0, true);
		rc = pdu_send(&s, bhs, d, 8192, BAD_NONE);
		break;
	case 1: /* wrong offset */
		data_out_init(&s, bhs, itt, ttt, 0, 4096, true);
		rc = pdu_send(&s, bhs, d, 8192, BAD_NONE);
		break;
	default: /* one PDU with the whole R2T plus 4 KiB more */
		data_out_init(&s, bhs, itt, ttt, 0, 0, true);
		rc = pdu_send(&s, bhs, d, 65536 + 4096, BAD_NONE);
		break;
	}
	(void)rc; /* the target may close while we send */
	rc = expect_reject_close(&s, ISCSI_REJECT_PROTOCOL_ERROR, what);
	sess_close(&s);
	return rc || verify(LBA_F, 65536, seed);
}

/* Out-of-order DataSN: the command must fail (CHECK CONDITION) and write nothing. */
static int scen_r2t_bad_datasn(void)
{
	static uint8_t d[65536];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	uint32_t itt, ttt;
	int st;

	if (r2t_setup(&s, 61, &itt, &ttt))
		return -1;
	pattern(d, sizeof(d), 62);
	for (uint32_t off = 0, sn = 0; off < 65536; off += 16384, sn++) {
		data_out_init(&s, bhs, itt, ttt, sn == 2 ? 7 : sn, off, off + 16384 == 65536);
		REQUIRE(pdu_send(&s, bhs, d + off, 16384, BAD_NONE) == 0, "send");
	}
	st = wait_rsp(&s, itt);
	REQUIRE(st == SCSI_STATUS_CHECK_CONDITION, "status %#x after a DataSN gap", st);
	REQUIRE(sense_key(&s) == SCSI_SK_ABORTED_COMMAND, "sense key %d", sense_key(&s));
	logout(&s);
	return verify(LBA_F, 65536, 61);
}

/* Data-Out for a command that already completed: dropped, the session goes on. */
static int scen_data_after_done(void)
{
	static uint8_t d[4096], r[4096];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	uint32_t itt;

	if (sess_login(&s, false, 0))
		return -1;
	itt = s.itt;
	pattern(d, sizeof(d), 71);
	if (scsi_write(&s, LBA_F, d, 4096))
		return -1;
	pattern(d, sizeof(d), 72);
	data_out_init(&s, bhs, itt, ISCSI_TAG_RESERVED, 0, 0, true);
	REQUIRE(pdu_send(&s, bhs, d, 4096, BAD_NONE) == 0, "send");
	data_out_init(&s, bhs, itt, 0x1234, 0, 0, true);
	REQUIRE(pdu_send(&s, bhs, d, 4096, BAD_NONE) == 0, "send");
	if (scsi_read(&s, LBA_F, r, 4096))
		return -1;
	logout(&s);
	pattern(d, sizeof(d), 71);
	REQUIRE(!memcmp(d, r, 4096), "late Data-Out changed the LUN");
	return 0;
}

/* Unsolicited data beyond FirstBurstLength: a protocol error (RFC 7143 13.14), refused
 * with a Reject before the connection is dropped; the LUN keeps its old data. */
static int scen_first_burst(bool immediate_only)
{
	static uint8_t d[262144];
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	uint32_t itt, len = 131072, seed = immediate_only ? 81 : 83;
	int rc;

	if (fill(LBA_F, len, seed, false) || sess_login(&s, false, 0))
		return -1;
	REQUIRE(!s.initial_r2t && s.immediate && s.fbl < len,
		"target did not negotiate unsolicited data (FirstBurstLength %u)", s.fbl);
	pattern(d, len, seed + 1);
	itt = s.itt;
	if (immediate_only) {
		uint32_t imm = s.fbl + 4096;

		REQUIRE(imm <= s.mrdsl, "FirstBurstLength %u, MaxRecvDataSegmentLength %u", s.fbl,
			s.mrdsl);
		cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, len, SCSI_OP_WRITE10,
			 LBA_F, (uint16_t)(len / BS));
		rc = pdu_send(&s, bhs, d, imm, BAD_NONE);
	} else {
		uint32_t imm = s.fbl / 2;

		cmd_init(&s, bhs, ISCSI_SCSI_CMD_WRITE, len, SCSI_OP_WRITE10, LBA_F,
			 (uint16_t)(len / BS));
		rc = pdu_send(&s, bhs, d, imm, BAD_NONE);
		/* one unsolicited Data-Out reaching 4 KiB past FirstBurstLength */
		data_out_init(&s, bhs, itt, ISCSI_TAG_RESERVED, 0, imm, true);
		rc |= pdu_send(&s, bhs, d + imm, s.fbl - imm + 4096, BAD_NONE);
	}
	(void)rc;
	rc = expect_reject_close(&s, ISCSI_REJECT_PROTOCOL_ERROR,
				 "unsolicited data beyond "
				 "FirstBurstLength");
	sess_close(&s);
	return rc || verify(LBA_F, len, seed);
}

static long rss_kib(int pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * Initiators that never read: each fills its whole command window with 2 MiB READs (and
 * more beyond the window, which the target must ignore) and then reads nothing. The
 * daemon must stay within @rss_mib and keep serving other sessions on every reactor.
 */
static int scen_no_read(int pid, long rss_mib)
{
	enum { STUCK = 4 };
	struct sess st[STUCK];
	long before = rss_kib(pid), with;
	int rc = 0;

	for (int i = 0; i < STUCK; i++) {
		uint8_t bhs[ISCSI_BHS_LEN];
		struct timeval tv = { .tv_sec = 2 };
		int sent = 0;

		if (sess_login(&st[i], false, 4096)) {
			while (i--)
				sess_close(&st[i]);
			return -1;
		}
		setsockopt(st[i].fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		for (int k = 0; k < 512; k++, sent++) {
			cmd_init(&st[i], bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_READ, 2u << 20,
				 SCSI_OP_READ10, (uint32_t)k * 4096 % 120000, 4096);
			if (pdu_send(&st[i], bhs, NULL, 0, BAD_NONE))
				break;
		}
		printf("stuck session %d: %d READs of 2 MiB sent, window was %u\n", i, sent,
		       st[i].max_cmdsn);
	}
	sleep(1);
	with = rss_kib(pid);
	printf("daemon VmRSS %ld KiB before, %ld KiB with %d sessions not reading\n", before, with,
	       STUCK);
	if (with > rss_mib * 1024) {
		fail("VmRSS %ld KiB over the %ld MiB limit", with, rss_mib);
		rc = -1;
	}
	/* sessions that do read are served meanwhile (they land on every reactor) */
	for (int i = 0; i < 4 && !rc; i++)
		rc |= fill(4096 + 1024 * (uint32_t)i, 65536, 90 + (uint32_t)i, false);
	for (int i = 0; i < STUCK; i++)
		sess_close(&st[i]);
	return rc;
}

/* A login that stops half way: the target must go on serving other initiators. */
static int scen_login_stall(void)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	char text[256];
	size_t len = 0;
	int a, b, rc;

	a = tcp_open(0);
	b = tcp_open(0);
	REQUIRE(a >= 0 && b >= 0, "connect");
	/* a: half a BHS; b: a whole header announcing text that never comes */
	iscsi_text_add(text, sizeof(text), &len, "InitiatorName", "iqn.2026-11.io.nvmeof:stall");
	iscsi_bhs_init(bhs, ISCSI_OP_LOGIN_REQ, ISCSI_STAGE_OPERATIONAL << ISCSI_LOGIN_CSG_SHIFT);
	bhs[0] |= ISCSI_FLAG_IMMEDIATE;
	bhs[8] = 0x80;
	iscsi_bhs_set_dlen(bhs, 4096);
	rc = xsend(a, bhs, 24) | xsend(b, bhs, ISCSI_BHS_LEN) | xsend(b, text, len);
	REQUIRE(rc == 0, "send");
	rc = healthy(false);
	close(a);
	close(b);
	return rc;
}

/* ---- stalled sessions ------------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One initiator hoards: @nsess sessions (InitiatorName iqn.2026-11.io.nvmeof:hoard), each
 * with @nwrites WRITE(10)s of 1 MiB announced without data, their R2Ts never answered and
 * nothing read, held @hold_s seconds (or until killed; the kernel then closes every socket,
 * as an initiator that gives up would). Every login must be answered within 3 s. Prints
 * "hoarding" once all is sent (tests/security/iscsi-hoard.sh waits for that line).
 */
static int scen_hoard(int nsess, int nwrites, int hold_s)
{
	struct sess *st = calloc((size_t)nsess, sizeof(*st));
	int n = 0, rc = 0;

	REQUIRE(st, "out of memory");
	g_initiator = "iqn.2026-11.io.nvmeof:hoard";
	g_timeout_s = 3;
	for (; n < nsess; n++) {
		double t0 = now_s();

		if (sess_login(&st[n], false, 4096)) {
			fail("login %d of %d not answered (%.1f s)", n + 1, nsess, now_s() - t0);
			rc = -1;
			break;
		}
		for (int k = 0; k < nwrites; k++) {
			uint8_t bhs[ISCSI_BHS_LEN];

			cmd_init(&st[n], bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, 1u << 20,
				 SCSI_OP_WRITE10, 200000 + (uint32_t)k * 2048, 2048);
			if (pdu_send(&st[n], bhs, NULL, 0, BAD_NONE)) {
				fail("session %d: WRITE %d not sent", n + 1, k + 1);
				rc = -1;
				break;
			}
		}
		if (rc)
			break;
	}
	if (!rc) {
		printf("hoarding: %d sessions, %d WRITEs of 1 MiB, R2Ts unanswered\n", nsess,
		       nsess * nwrites);
		for (double end = now_s() + hold_s; now_s() < end;)
			sleep(1);
	}
	for (int i = 0; i < n && i < nsess; i++)
		sess_close(&st[i]);
	free(st);
	return rc;
}

/*
 * A WRITE whose R2T is never answered, on a session that stays open: the target must
 * drop the connection within @timeout_s (its dataout_timeout) plus 2 s.
 */
static int scen_dataout_stall(int timeout_s)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct sess s;
	double t0;
	int rc;

	g_timeout_s = timeout_s + 2;
	if (sess_login(&s, false, 0))
		return -1;
	cmd_init(&s, bhs, ISCSI_FLAG_FINAL | ISCSI_SCSI_CMD_WRITE, 65536, SCSI_OP_WRITE10, 300000,
		 128);
	REQUIRE(pdu_send(&s, bhs, NULL, 0, BAD_NONE) == 0, "WRITE send");
	REQUIRE(pdu_recv(&s) == 0 && iscsi_bhs_opcode(s.rx_bhs) == ISCSI_OP_R2T, "no R2T");
	t0 = now_s();
	do {
		rc = pdu_recv(&s);
	} while (rc == 0);
	printf("R2T unanswered: connection %s after %.1f s\n", rc == 1 ? "closed" : "still open",
	       now_s() - t0);
	sess_close(&s);
	REQUIRE(rc == 1, "the target did not drop the connection within %d s", g_timeout_s);
	return 0;
}

/*
 * NOP-In pings of an idle session (the target's nopin_interval @interval_s, nopin_timeout
 * @timeout_s). @answer: answer each (NOP-Out, ITT 0xffffffff, the ping's TTT) and the
 * session must outlive interval + timeout + 2 s and still serve a command; else stay
 * silent and the target must end the session within interval + timeout + 2 s.
 */
static int scen_nop(int interval_s, int timeout_s, bool answer)
{
	double t0, limit = interval_s + timeout_s + 2;
	struct sess s;
	int pings = 0, rc = 0;

	g_timeout_s = 1;
	if (sess_login(&s, false, 0))
		return -1;
	t0 = now_s();
	while (now_s() - t0 < limit) {
		uint8_t bhs[ISCSI_BHS_LEN];

		rc = pdu_recv(&s);
		if (rc == -1)
			continue; /* nothing this second */
		if (rc == 1)
			break;
		REQUIRE(iscsi_bhs_opcode(s.rx_bhs) == ISCSI_OP_NOP_IN,
			"opcode %#x on an idle session", iscsi_bhs_opcode(s.rx_bhs));
		REQUIRE(iscsi_bhs_itt(s.rx_bhs) == ISCSI_TAG_RESERVED &&
				get_be32(s.rx_bhs + 20) != ISCSI_TAG_RESERVED,
			"a NOP-In that is no ping (ITT %#x, TTT %#x)", iscsi_bhs_itt(s.rx_bhs),
			get_be32(s.rx_bhs + 20));
		pings++;
		printf("ping %d (TTT %#x) after %.1f s\n", pings, get_be32(s.rx_bhs + 20),
		       now_s() - t0);
		if (!answer)
			continue;
		iscsi_bhs_init(bhs, ISCSI_OP_NOP_OUT, ISCSI_FLAG_FINAL);
		bhs[0] |= ISCSI_FLAG_IMMEDIATE;
		put_be32(bhs + 16, ISCSI_TAG_RESERVED);
		put_be32(bhs + 20, get_be32(s.rx_bhs + 20));
		put_be32(bhs + 24, s.cmdsn);
		put_be32(bhs + 28, s.exp_statsn);
		REQUIRE(pdu_send(&s, bhs, NULL, 0, BAD_NONE) == 0, "NOP-Out send");
	}
	printf("%s session: %d pings, %s after %.1f s\n", answer ? "answering" : "silent", pings,
	       rc == 1 ? "closed" : "open", now_s() - t0);
	if (answer) {
		static uint8_t w[4096], r[4096];

		g_timeout_s = 10;
		REQUIRE(rc != 1, "the target ended a session that answered its pings");
		REQUIRE(pings > 0, "no ping in %.0f s", limit);
		pattern(w, sizeof(w), 77);
		rc = scsi_write(&s, 310000, w, sizeof(w)) || scsi_read(&s, 310000, r, sizeof(r));
		REQUIRE(!rc && !memcmp(w, r, sizeof(w)), "I/O after the pings failed");
		logout(&s);
		return 0;
	}
	sess_close(&s);
	REQUIRE(pings > 0, "no ping in %.0f s", limit);
	REQUIRE(rc == 1, "the target kept a session that never answered its pings");
	return 0;
}

/*
 * @nsess idle sessions, as an initiator leaves them after its first scan: each logs in
 * (50 per InitiatorName, under max_sessions_per_initiator) and reads 4 KiB once, then
 * nothing for @hold_s seconds (or until killed). Prints "idle" once all are in
 * (tests/security/iscsi-idle-cost.sh measures the daemon then).
 */
static int scen_idle(int nsess, int hold_s)
{
	struct sess *st = calloc((size_t)nsess, sizeof(*st));
	static uint8_t r[4096];
	char name[64];
	int n, rc = 0;

	REQUIRE(st, "out of memory");
	for (n = 0; n < nsess && !rc; n++) {
		snprintf(name, sizeof(name), "iqn.2026-11.io.nvmeof:idle-%d", n / 50);
		g_initiator = name;
		rc = sess_login(&st[n], false, 0) || scsi_read(&st[n], 0, r, sizeof(r));
		if (rc)
			fail("idle session %d of %d", n + 1, nsess);
		free(st[n].rx); /* the client's own memory, not the target's */
		st[n].rx = NULL;
	}
	if (!rc) {
		printf("idle: %d sessions\n", nsess);
		for (double end = now_s() + hold_s; now_s() < end;)
			sleep(1);
	}
	while (n--)
		sess_close(&st[n]);
	free(st);
	return rc;
}

/* @max sessions of one initiator log in; one more is refused (Out of Resources). */
static int scen_initiator_limit(int max)
{
	struct sess *st = calloc((size_t)max + 1, sizeof(*st));
	int n, rc = 0;

	REQUIRE(st, "out of memory");
	g_initiator = "iqn.2026-11.io.nvmeof:many";
	g_timeout_s = 3;
	for (n = 0; n < max && !rc; n++)
		rc = sess_login(&st[n], false, 0);
	if (!rc) {
		rc = sess_login(&st[max], false, 0) == 0 ? -1 : 0;
		if (rc)
			fail("session %d of one initiator accepted (max %d)", max + 1, max);
		else if (st[max].rx_bhs[36] != 3 || st[max].rx_bhs[37] != 2)
			rc = -1, fail("refused with status %u/%u, not 3/2", st[max].rx_bhs[36],
				      st[max].rx_bhs[37]);
		else
			printf("session %d of one initiator refused: Out of Resources\n", max + 1);
		sess_close(&st[max]);
	}
	if (!rc) {
		/* the same I_T nexus again (ISID of the first session) reinstates it: at the
		 * limit, that is still allowed */
		g_isid_seq = 1;
		rc = sess_login(&st[max], false, 0);
		g_isid_seq = -1;
		if (rc)
			fail("reinstating a session at the limit refused");
		else
			printf("reinstating session 1 at the limit: accepted\n");
		sess_close(&st[max]);
	}
	while (n--)
		sess_close(&st[n]);
	free(st);
	/* another initiator is not affected */
	g_initiator = "iqn.2026-11.io.nvmeof:fault";
	return rc || healthy(false);
}

int main(int argc, char **argv)
{
	const char *sc;
	int rc;

	if (argc < 4) {
		fprintf(stderr, "usage: %s PORT TARGET-IQN SCENARIO [ARG...]\n", argv[0]);
		return 2;
	}
	g_port = atoi(argv[1]);
	g_iqn = argv[2];
	sc = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(sc, "healthy"))
		rc = healthy(argc > 4 && !strcmp(argv[4], "digest"));
	else if (!strcmp(sc, "mid-pdu"))
		rc = scen_mid_pdu();
	else if (!strcmp(sc, "mid-transfer"))
		rc = scen_mid_transfer();
	else if (!strcmp(sc, "bad-hdgst"))
		rc = scen_bad_hdgst();
	else if (!strcmp(sc, "bad-ddgst"))
		rc = scen_bad_ddgst();
	else if (!strcmp(sc, "big-dseg"))
		rc = scen_big_dseg();
	else if (!strcmp(sc, "short-dseg"))
		rc = scen_short_dseg();
	else if (!strcmp(sc, "edtl-short"))
		rc = scen_edtl_short();
	else if (!strcmp(sc, "r2t-bad-ttt"))
		rc = r2t_violation("Data-Out for a TTT never issued", 51, 0);
	else if (!strcmp(sc, "r2t-bad-offset"))
		rc = r2t_violation("Data-Out at the wrong offset", 53, 1);
	else if (!strcmp(sc, "r2t-beyond"))
		rc = r2t_violation("Data-Out beyond the R2T", 55, 2);
	else if (!strcmp(sc, "r2t-bad-datasn"))
		rc = scen_r2t_bad_datasn();
	else if (!strcmp(sc, "data-after-done"))
		rc = scen_data_after_done();
	else if (!strcmp(sc, "first-burst-imm"))
		rc = scen_first_burst(true);
	else if (!strcmp(sc, "first-burst-unsol"))
		rc = scen_first_burst(false);
	else if (!strcmp(sc, "no-read") && argc > 5)
		rc = scen_no_read(atoi(argv[4]), atol(argv[5]));
	else if (!strcmp(sc, "login-stall"))
		rc = scen_login_stall();
	else if (!strcmp(sc, "hoard") && argc > 6)
		rc = scen_hoard(atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
	else if (!strcmp(sc, "dataout-stall") && argc > 4)
		rc = scen_dataout_stall(atoi(argv[4]));
	else if (!strcmp(sc, "nop-answer") && argc > 5)
		rc = scen_nop(atoi(argv[4]), atoi(argv[5]), true);
	else if (!strcmp(sc, "nop-silent") && argc > 5)
		rc = scen_nop(atoi(argv[4]), atoi(argv[5]), false);
	else if (!strcmp(sc, "idle") && argc > 5)
		rc = scen_idle(atoi(argv[4]), atoi(argv[5]));
	else if (!strcmp(sc, "initiator-limit") && argc > 4)
		rc = scen_initiator_limit(atoi(argv[4]));
	else {
		fprintf(stderr, "unknown scenario %s\n", sc);
		return 2;
	}
	if (rc)
		fprintf(stderr, "FAIL: %s\n", sc);
	return rc ? 1 : 0;
}
