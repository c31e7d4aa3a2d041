/* SPDX-License-Identifier: MIT */
/*
 * A DH-HMAC-CHAP host on raw NVMe/TCP PDUs (driven by auth-tcp.sh), written from the
 * specification with common/dhchap_crypto: what the target must do when the host it
 * talks to authenticates, fails to, or stops half way. Reuses tcp_raw_client.c.
 *
 *   auth_client PORT SUBNQN SCENARIO HOSTNQN [KEY [CTRL_KEY]]
 *
 * Scenarios:
 *   ok        admin queue: Connect answers AUTHREQ.ATR, Property Get fails with
 *             Authentication Required, then DH-HMAC-CHAP (bidirectional with CTRL_KEY),
 *             the controller is enabled; an I/O queue the same, then a write and a read;
 *             the admin queue re-authenticates and still works
 *   wrong     KEY is not the host's: AUTH_Failure1 "authentication failed", then the
 *             target closes the connection
 *   stall     Connect, then nothing: the target closes the connection (prints how long
 *             it took)
 *   stall-mid Negotiate and Challenge, then nothing: likewise
 *   hold      authenticate, print "authenticated", then wait until the target closes the
 *             connection (at most 20 s; prints how long after "authenticated")
 *   timed     authenticate the admin queue and print "authenticated in S s"; with DELAY
 *             (auth_client PORT SUBNQN timed HOSTNQN KEY DELAY), wait DELAY seconds, then
 *             re-authenticate the live queue 3 times and print "re-authenticated in S s"
 *             (the slowest), and check the queue still works
 *
 *   auth_client PORT SUBNQN flood HOSTNQN NPROC SECONDS [NADDR]
 *
 *   flood     a host without the secret, NPROC processes for SECONDS: each connects
 *             (from 127.0.0.2 ... 127.0.0.(1 + NADDR) in turn when NADDR > 0), offers
 *             ffdhe8192 only, takes the Challenge and sends a Reply with a valid DH value
 *             and a random response, reads the Failure1, and starts over on a new
 *             connection. Prints the exchanges: refused at the Challenge, failed after the
 *             Reply, broken otherwise.
 */
#define main tcp_raw_client_main
int tcp_raw_client_main(int argc, char **argv);
#include "tcp_raw_client.c"
#undef main

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "common/dhchap_crypto.h"
#include "common/dhchap_key.h"
#include "common/nvme_auth_spec.h"

#define ST_AUTH_REQUIRED \
	(NVME_STATUS(NVME_SCT_COMMAND_SPECIFIC, NVMF_SC_AUTH_REQUIRED) | NVME_STATUS_DNR)

static const char *g_hostnqn;
/* DH groups the AUTH_Negotiate offers */
static const uint8_t g_dh_all[] = { 0, 1, 2, 3, 4, 5 };
static const uint8_t *g_dh_offer = g_dh_all;
static uint8_t g_ndh_offer = sizeof(g_dh_all);
static struct nvme_dhchap_key g_key, g_ctrl_key;

/* Connect with our host NQN; *dw0 gets the response's DW0 (CNTLID | AUTHREQ). */
static int auth_connect(struct conn *c, uint16_t qid, uint16_t cntlid, uint32_t *dw0)
{
	struct nvmf_connect_cmd cmd = { 0 };
	struct nvmf_connect_data data = { 0 };
	struct nvme_cpl cpl;
	int st;

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd.qid, qid);
	put_le16(&cmd.sqsize, 31);
	put_le32(&cmd.kato, qid == 0 ? 30000 : 0);
	memset(data.hostid, 0x5b, sizeof(data.hostid));
	put_le16(&data.cntlid, cntlid);
	snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
	snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", g_hostnqn);
	st = run_cmd(c, (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0, &cpl);
	REQUIRE(st == 0, "Connect qid %u: status 0x%x", qid, st);
	*dw0 = get_le32(&cpl.dw0);
	if (qid == 0)
		c->cntlid = (uint16_t)*dw0;
	return 0;
}

static int auth_cmd(struct conn *c, bool send, void *buf, uint32_t len)
{
	struct nvmf_auth_cmd cmd = { 0 };

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = send ? NVMF_FCTYPE_AUTH_SEND : NVMF_FCTYPE_AUTH_RECV;
	cmd.secp = NVMF_AUTH_SECP;
	cmd.spsp0 = NVMF_AUTH_SPSP0;
	cmd.spsp1 = NVMF_AUTH_SPSP1;
	put_le32(cmd.len, len);
	if (send)
		return run_cmd(c, (struct nvme_cmd *)&cmd, buf, len, true, NULL, 0, NULL);
	return run_cmd(c, (struct nvme_cmd *)&cmd, NULL, 0, false, buf, len, NULL);
}

static int send_negotiate(struct conn *c, uint16_t t_id)
{
	uint8_t buf[NVME_AUTH_NEGOTIATE_LEN(1)] = { 0 };
	struct nvme_auth_negotiate *n = (void *)buf;
	struct nvme_auth_protocol_desc *d = (void *)(buf + sizeof(*n));
	static const uint8_t hashes[] = { 1, 2, 3 };

	n->auth_type = NVME_AUTH_TYPE_COMMON;
	n->auth_id = NVME_AUTH_ID_NEGOTIATE;
	put_le16(n->t_id, t_id);
	n->napd = 1;
	d->authid = NVME_AUTH_PROTO_DHCHAP;
	d->halen = sizeof(hashes);
	d->dhlen = g_ndh_offer;
	memcpy(d->idlist, hashes, sizeof(hashes));
	memcpy(d->idlist + NVME_AUTH_DESC_DH_OFF, g_dh_offer, g_ndh_offer);
	return auth_cmd(c, true, buf, sizeof(buf));
}

static int response(uint8_t hash, const struct nvme_dhchap_key *k, const char *nqn, bool ctrl,
		    const uint8_t *ch, uint32_t seq, uint16_t t_id, const struct nvme_secret *dh,
		    uint8_t *out)
{
	struct nvme_secret *kt = NULL;
	struct nvme_dhchap_resp_in in;
	int rc = nvme_dhchap_key_transform(k, nqn, &kt);

	if (rc)
		return rc;
	in = (struct nvme_dhchap_resp_in){ .hash_id = hash,
					   .key = kt,
					   .challenge = ch,
					   .seqnum = seq,
					   .t_id = t_id,
					   .hostnqn = g_hostnqn,
					   .subsysnqn = g_subnqn,
					   .dh_secret = dh };
	rc = ctrl ? nvme_dhchap_ctrl_response(&in, out) : nvme_dhchap_host_response(&in, out);
	nvme_secret_free(kt);
	return rc;
}

/*
 * One whole exchange on @c. Returns 0 when authenticated, 1 when the controller answered
 * AUTH_Failure1 (its explanation in *@fail_exp), -1 on anything else.
 */
static int authenticate(struct conn *c, uint16_t t_id, uint8_t *fail_exp)
{
	static uint8_t buf[4096], reply[NVME_DHCHAP_REPLY_LEN(64, 1024)];
	const struct nvme_dhchap_challenge *ch = (const void *)buf;
	struct nvme_dhchap_reply *r = (void *)reply;
	struct nvme_secret *dh_secret = NULL;
	struct nvme_dh *dh = NULL;
	uint8_t c2[64], r2[64], hash, hl;
	uint16_t dhvlen;
	uint32_t s1, s2 = 0;
	bool bidi = g_ctrl_key.secret != NULL;
	int st, rc = -1;

	REQUIRE(send_negotiate(c, t_id) == 0, "AUTH_Negotiate");
	memset(buf, 0, sizeof(buf));
	REQUIRE(auth_cmd(c, false, buf, sizeof(buf)) == 0, "receive the Challenge");
	if (buf[0] == NVME_AUTH_TYPE_COMMON && buf[1] == NVME_AUTH_ID_FAILURE1) {
		*fail_exp = buf[7];
		return 1;
	}
	REQUIRE(ch->auth_type == NVME_AUTH_TYPE_DHCHAP && ch->auth_id == NVME_AUTH_ID_CHALLENGE,
		"not a Challenge: %02x/%02x", ch->auth_type, ch->auth_id);
	REQUIRE(get_le16(ch->t_id) == t_id, "Challenge T_ID %u", get_le16(ch->t_id));
	hash = ch->hashid;
	hl = ch->hl;
	dhvlen = get_le16(ch->dhvlen);
	s1 = get_le32(ch->seqnum);
	REQUIRE(hl == nvme_auth_hash_len(hash) && s1 != 0, "HL %u hash %u S1 %u", hl, hash, s1);
	memset(reply, 0, sizeof(reply));
	if (ch->dhgid) {
		REQUIRE(dhvlen == nvme_dh_value_len(ch->dhgid), "DHVLEN %u", dhvlen);
		REQUIRE(nvme_dh_generate(ch->dhgid, &dh) == 0, "DH key pair");
		REQUIRE(nvme_dh_shared_secret(dh, buf + NVME_DHCHAP_CHALLENGE_DHV_OFF(hl), dhvlen,
					      &dh_secret) == 0,
			"the controller's DH value");
		REQUIRE(nvme_dh_public(dh, reply + NVME_DHCHAP_REPLY_DHV_OFF(hl), dhvlen) == 0,
			"our DH value");
	}
	REQUIRE(response(hash, &g_key, g_hostnqn, false, buf + NVME_DHCHAP_CHALLENGE_CVAL_OFF, s1,
			 t_id, dh_secret, reply + NVME_DHCHAP_REPLY_RVAL_OFF) == 0,
		"R1");
	r->auth_type = NVME_AUTH_TYPE_DHCHAP;
	r->auth_id = NVME_AUTH_ID_REPLY;
	put_le16(r->t_id, t_id);
	r->hl = hl;
	put_le16(r->dhvlen, dhvlen);
	if (bidi) {
		for (unsigned int i = 0; i < hl; i++)
			c2[i] = (uint8_t)(rand() & 0xff);
		memcpy(reply + NVME_DHCHAP_REPLY_CVAL_OFF(hl), c2, hl);
		r->cvalid = NVME_DHCHAP_REPLY_CVALID;
		s2 = 0x10000u + (uint32_t)(rand() & 0xffff);
		put_le32(r->seqnum, s2);
	}
	st = auth_cmd(c, true, reply, (uint32_t)NVME_DHCHAP_REPLY_LEN(hl, dhvlen));
	if (st != 0)
		goto out;
	memset(buf, 0, sizeof(buf));
	if (auth_cmd(c, false, buf, sizeof(buf)) != 0)
		goto out;
	if (buf[0] == NVME_AUTH_TYPE_COMMON && buf[1] == NVME_AUTH_ID_FAILURE1) {
		*fail_exp = buf[7];
		rc = 1;
		goto out;
	}
	if (buf[0] != NVME_AUTH_TYPE_DHCHAP || buf[1] != NVME_AUTH_ID_SUCCESS1 ||
	    get_le16(buf + 4) != t_id) {
		fprintf(stderr, "not a Success1: %02x/%02x\n", buf[0], buf[1]);
		goto out;
	}
	if (bidi) {
		uint8_t s2msg[16] = { NVME_AUTH_TYPE_DHCHAP, NVME_AUTH_ID_SUCCESS2 };

		if (!(buf[8] & NVME_DHCHAP_SUCCESS1_RVALID) ||
		    response(hash, &g_ctrl_key, g_subnqn, true, c2, s2, t_id, dh_secret, r2) ||
		    memcmp(r2, buf + NVME_DHCHAP_SUCCESS1_RVAL_OFF, hl)) {
			fprintf(stderr, "the controller's R2 does not verify\n");
			goto out;
		}
		put_le16(s2msg + 4, t_id);
		if (auth_cmd(c, true, s2msg, sizeof(s2msg)) != 0)
			goto out;
	}
	rc = 0;
out:
	nvme_dh_free(dh);
	nvme_secret_free(dh_secret);
	return rc;
}

/* Property Get CAP must fail with Authentication Required before authentication. */
static int expect_auth_required(struct conn *c)
{
	struct nvmf_property_cmd cmd = { 0 };
	int st;

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_PROPERTY_GET;
	cmd.attrib = 1;
	put_le32(&cmd.offset, NVME_REG_CAP);
	st = run_cmd(c, (struct nvme_cmd *)&cmd, NULL, 0, false, NULL, 0, NULL);
	REQUIRE(st == ST_AUTH_REQUIRED, "Property Get before authentication: status 0x%x", st);
	return 0;
}

/* Wait until the target closes @c; seconds waited, or -1 after @limit seconds. */
static double wait_closed(struct conn *c, double limit)
{
	double t0 = now_s();
	uint8_t b[4096];

	while (now_s() - t0 < limit) {
		ssize_t n = recv(c->fd, b, sizeof(b), 0);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return now_s() - t0;
	}
	return -1;
}

static double g_connected; /* now_s() when admin_auth()'s Connect completed */

static int admin_auth(struct conn *c)
{
	uint32_t dw0 = 0;
	uint8_t exp = 0;

	REQUIRE(conn_open(c) == 0, "open");
	REQUIRE(do_ic(c, false, false) == 0, "IC");
	REQUIRE(auth_connect(c, 0, 0xffff, &dw0) == 0, "admin Connect");
	g_connected = now_s();
	REQUIRE(dw0 & NVMF_CONNECT_AUTHREQ_ATR, "no AUTHREQ.ATR in the Connect response (0x%x)",
		dw0);
	REQUIRE(expect_auth_required(c) == 0, "Authentication Required");
	REQUIRE(authenticate(c, 1, &exp) == 0, "admin queue: DH-HMAC-CHAP (Failure1 %u)", exp);
	return 0;
}

static int scen_ok(void)
{
	struct conn admin, io;
	uint64_t cap = 0, csts = 0;
	uint32_t dw0 = 0;
	uint8_t exp = 0;

	REQUIRE(admin_auth(&admin) == 0, "admin queue");
	REQUIRE(prop_get(&admin, NVME_REG_CAP, true, &cap) == 0, "CAP after authentication");
	REQUIRE(prop_set(&admin, NVME_REG_CC,
			 NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT) == 0,
		"CC.EN");
	for (int i = 0; i < 100 && !(csts & NVME_CSTS_RDY); i++) {
		REQUIRE(prop_get(&admin, NVME_REG_CSTS, false, &csts) == 0, "CSTS");
		if (!(csts & NVME_CSTS_RDY))
			usleep(10000);
	}
	REQUIRE(csts & NVME_CSTS_RDY, "CSTS.RDY");
	REQUIRE(conn_open(&io) == 0, "I/O open");
	REQUIRE(do_ic(&io, false, false) == 0, "I/O IC");
	REQUIRE(auth_connect(&io, 1, admin.cntlid, &dw0) == 0, "I/O Connect");
	REQUIRE(dw0 & NVMF_CONNECT_AUTHREQ_ATR, "no ATR on the I/O queue (0x%x)", dw0);
	REQUIRE(authenticate(&io, 2, &exp) == 0, "I/O queue: DH-HMAC-CHAP (Failure1 %u)", exp);
	REQUIRE(rw(&io, 8, 4096, true, 11) == 0, "write and read back");
	/* re-authentication of the live admin queue */
	REQUIRE(authenticate(&admin, 3, &exp) == 0, "re-authentication (Failure1 %u)", exp);
	REQUIRE(prop_get(&admin, NVME_REG_CSTS, false, &csts) == 0, "CSTS after re-auth");
	REQUIRE(rw(&io, 16, 8192, false, 12) == 0, "I/O after re-authentication");
	conn_close(&io);
	conn_close(&admin);
	return 0;
}

static int scen_wrong(void)
{
	struct conn c;
	uint32_t dw0 = 0;
	uint8_t exp = 0;
	double t;

	REQUIRE(conn_open(&c) == 0, "open");
	REQUIRE(do_ic(&c, false, false) == 0, "IC");
	REQUIRE(auth_connect(&c, 0, 0xffff, &dw0) == 0, "admin Connect");
	REQUIRE(authenticate(&c, 9, &exp) == 1, "no AUTH_Failure1 for a wrong secret");
	REQUIRE(exp == NVME_AUTH_FAIL_FAILED, "Failure1 explanation %u, expected %u", exp,
		NVME_AUTH_FAIL_FAILED);
	t = wait_closed(&c, 5);
	REQUIRE(t >= 0, "the target kept the connection open 5 s after Failure1");
	printf("closed %.2f s after AUTH_Failure1\n", t);
	conn_close(&c);
	return 0;
}

static int scen_stall(bool mid)
{
	static uint8_t buf[4096];
	struct conn c;
	uint32_t dw0 = 0;
	double t;

	REQUIRE(conn_open(&c) == 0, "open");
	REQUIRE(do_ic(&c, false, false) == 0, "IC");
	REQUIRE(auth_connect(&c, 0, 0xffff, &dw0) == 0, "admin Connect");
	if (mid) {
		REQUIRE(send_negotiate(&c, 5) == 0, "Negotiate");
		REQUIRE(auth_cmd(&c, false, buf, sizeof(buf)) == 0, "Challenge");
	}
	t = wait_closed(&c, 30);
	REQUIRE(t >= 0, "still open 30 s after %s", mid ? "the Challenge" : "Connect");
	printf("closed %.2f s after %s\n", t, mid ? "the Challenge" : "Connect");
	conn_close(&c);
	return 0;
}

static int scen_stall_connect(void)
{
	return scen_stall(false);
}

static int scen_stall_mid(void)
{
	return scen_stall(true);
}

static int scen_hold(void)
{
	struct conn c;
	double t;

	REQUIRE(admin_auth(&c) == 0, "admin queue");
	printf("authenticated\n");
	fflush(stdout);
	t = wait_closed(&c, 20);
	REQUIRE(t >= 0, "the target kept the connection 20 s");
	printf("closed %.2f s after authenticated\n", t);
	conn_close(&c);
	return 0;
}

/* auth_client ... timed HOSTNQN KEY [DELAY] */
static int g_delay;

static int scen_timed(void)
{
	struct conn c;
	double t0 = now_s(), worst = 0;
	uint64_t csts = 0;
	uint8_t exp = 0;

	REQUIRE(admin_auth(&c) == 0, "admin queue");
	printf("authenticated in %.3f s (TCP, ICReq and Connect %.3f s of it)\n", now_s() - t0,
	       g_connected - t0);
	fflush(stdout);
	if (g_delay <= 0) {
		conn_close(&c);
		return 0;
	}
	sleep((unsigned int)g_delay);
	for (uint16_t i = 0; i < 3; i++) {
		t0 = now_s();
		REQUIRE(authenticate(&c, (uint16_t)(10 + i), &exp) == 0,
			"re-authentication %u (Failure1 %u) after %.3f s", i, exp, now_s() - t0);
		if (now_s() - t0 > worst)
			worst = now_s() - t0;
	}
	printf("re-authenticated in %.3f s\n", worst);
	REQUIRE(prop_get(&c, NVME_REG_CSTS, false, &csts) == 0, "CSTS after re-authentication");
	conn_close(&c);
	return 0;
}

/* What the flood's processes saw, in memory they share. */
struct flood_counts {
	unsigned long cycles, refused, failed, other;
};

/* One exchange of the flood: 0 refused at the Challenge, 1 failed after the Reply, -1
 * anything else. @dhv: a valid ffdhe8192 value. */
static int flood_once(const uint8_t *dhv, uint16_t t_id)
{
	static uint8_t buf[4096], reply[NVME_DHCHAP_REPLY_LEN(64, 1024)];
	const struct nvme_dhchap_challenge *ch = (const void *)buf;
	struct nvme_dhchap_reply *r = (void *)reply;
	struct conn c = { .fd = -1 };
	uint32_t dw0 = 0;
	int rc = -1;

	if (conn_open(&c) || do_ic(&c, false, false) || auth_connect(&c, 0, 0xffff, &dw0) ||
	    send_negotiate(&c, t_id))
		goto out;
	memset(buf, 0, sizeof(buf));
	if (auth_cmd(&c, false, buf, sizeof(buf)))
		goto out;
	if (buf[0] == NVME_AUTH_TYPE_COMMON && buf[1] == NVME_AUTH_ID_FAILURE1) {
		rc = 0;
		goto out;
	}
	if (ch->auth_id != NVME_AUTH_ID_CHALLENGE || ch->dhgid != NVME_AUTH_DHGROUP_FFDHE8192)
		goto out;
	memset(reply, 0, sizeof(reply));
	r->auth_type = NVME_AUTH_TYPE_DHCHAP;
	r->auth_id = NVME_AUTH_ID_REPLY;
	put_le16(r->t_id, t_id);
	r->hl = ch->hl;
	put_le16(r->dhvlen, 1024);
	for (unsigned int i = 0; i < ch->hl; i++)
		reply[NVME_DHCHAP_REPLY_RVAL_OFF + i] = (uint8_t)rand();
	memcpy(reply + NVME_DHCHAP_REPLY_DHV_OFF(ch->hl), dhv, 1024);
	if (auth_cmd(&c, true, reply, (uint32_t)NVME_DHCHAP_REPLY_LEN(ch->hl, 1024)))
		goto out;
	memset(buf, 0, sizeof(buf));
	if (auth_cmd(&c, false, buf, sizeof(buf)) == 0 && buf[0] == NVME_AUTH_TYPE_COMMON &&
	    buf[1] == NVME_AUTH_ID_FAILURE1)
		rc = 1;
out:
	conn_close(&c);
	return rc;
}

static int g_flood_procs, g_flood_secs, g_flood_addrs;

static int scen_flood(void)
{
	static const uint8_t only8192[] = { NVME_AUTH_DHGROUP_FFDHE8192 };
	struct flood_counts *fc;
	struct nvme_dh *dh = NULL;
	uint8_t dhv[1024];
	pid_t *pids;
	double end;

	REQUIRE(nvme_dh_generate(NVME_AUTH_DHGROUP_FFDHE8192, &dh) == 0 &&
			nvme_dh_public(dh, dhv, sizeof(dhv)) == 0,
		"an ffdhe8192 value");
	nvme_dh_free(dh);
	fc = mmap(NULL, sizeof(*fc), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pids = calloc((size_t)g_flood_procs, sizeof(*pids));
	REQUIRE(fc != MAP_FAILED && pids, "memory");
	g_dh_offer = only8192;
	g_ndh_offer = 1;
	end = now_s() + g_flood_secs;
	fflush(stdout);
	for (int i = 0; i < g_flood_procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "fork: %s\n", strerror(errno));
			g_flood_procs = i;
			break;
		}
		if (pids[i] == 0) {
			/* the connections this one breaks are counted, not reported */
			if (!freopen("/dev/null", "w", stderr))
				_exit(1);
			srand((unsigned int)getpid());
			if (g_flood_addrs > 0)
				g_src_addr = 0x7f000002u + (uint32_t)(i % g_flood_addrs);
			for (uint16_t t = 1; now_s() < end; t++) {
				int rc = flood_once(dhv, t);

				__atomic_add_fetch(&fc->cycles, 1, __ATOMIC_RELAXED);
				__atomic_add_fetch(rc == 0   ? &fc->refused
						   : rc == 1 ? &fc->failed
							     : &fc->other,
						   1, __ATOMIC_RELAXED);
				if (rc < 0)
					usleep(10000); /* e.g. refused at accept: do not spin */
			}
			_exit(0);
		}
	}
	/* Every process stops by itself at the end; the stragglers by PID, 10 s later. */
	for (int i = 0; i < g_flood_procs; i++) {
		while (waitpid(pids[i], NULL, WNOHANG) == 0) {
			if (now_s() > end + 10) {
				kill(pids[i], SIGKILL);
				waitpid(pids[i], NULL, 0);
				break;
			}
			usleep(20000);
		}
	}
	printf("flood: %d processes, %d s: %lu exchanges, %lu refused at the Challenge, "
	       "%lu failed after the Reply, %lu broken\n",
	       g_flood_procs, g_flood_secs, fc->cycles, fc->refused, fc->failed, fc->other);
	free(pids);
	munmap(fc, sizeof(*fc));
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} scen[] = {
		{ "ok", scen_ok },
		{ "wrong", scen_wrong },
		{ "stall", scen_stall_connect },
		{ "stall-mid", scen_stall_mid },
		{ "hold", scen_hold },
		{ "timed", scen_timed },
		{ "flood", scen_flood },
	};
	int rc = 2;

	if (argc < 5) {
		fprintf(stderr, "usage: %s PORT SUBNQN SCENARIO HOSTNQN [KEY [CTRL_KEY]]\n",
			argv[0]);
		return 2;
	}
	g_port = atoi(argv[1]);
	g_subnqn = argv[2];
	g_hostnqn = argv[4];
	srand((unsigned int)getpid());
	if (!strcmp(argv[3], "flood")) {
		if (argc < 7 || atoi(argv[5]) < 1 || atoi(argv[5]) > 1000 || atoi(argv[6]) < 1 ||
		    atoi(argv[6]) > 120) {
			fprintf(stderr,
				"usage: %s PORT SUBNQN flood HOSTNQN NPROC(1-1000) "
				"SECONDS(1-120) [NADDR]\n",
				argv[0]);
			return 2;
		}
		g_flood_procs = atoi(argv[5]);
		g_flood_secs = atoi(argv[6]);
		g_flood_addrs = argc > 7 ? atoi(argv[7]) : 0;
		if (g_flood_addrs < 0 || g_flood_addrs > 200)
			g_flood_addrs = 0;
		argc = 5; /* no secrets */
	} else if (!strcmp(argv[3], "timed") && argc > 6) {
		g_delay = atoi(argv[6]);
		argc = 6;
	}
	if ((argc > 5 && nvme_dhchap_key_parse(argv[5], &g_key, NULL, 0)) ||
	    (argc > 6 && nvme_dhchap_key_parse(argv[6], &g_ctrl_key, NULL, 0))) {
		fprintf(stderr, "bad DHHC-1 secret\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(scen) / sizeof(scen[0]); i++)
		if (!strcmp(argv[3], scen[i].name)) {
			rc = scen[i].fn() || g_failures ? 1 : 0;
			printf("%s %s\n", rc ? "FAIL" : "PASS", scen[i].name);
		}
	if (rc == 2)
		fprintf(stderr, "unknown scenario '%s'\n", argv[3]);
	nvme_dhchap_key_clear(&g_key);
	nvme_dhchap_key_clear(&g_ctrl_key);
	return rc;
}
