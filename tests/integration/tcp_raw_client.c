/* SPDX-License-Identifier: MIT */
/*
 * Raw NVMe/TCP client for the daemon's integration test: speaks PDUs built with the
 * common codec over a plain socket to 127.0.0.1:PORT and checks every field it gets back.
 *
 *   tcp_raw_client PORT SUBNQN SCENARIO
 *
 * Scenarios: ic, admin, io, io-digest, malformed (each malformed PDU on its own
 * connection, answered with a C2HTermReq and a close, while a second, healthy connection
 * keeps working), stress (32 commands in flight, 4-128 KiB writes and reads of the same
 * ranges, every byte compared, with and without digests), all (those six). Exit status 0 when every check passed; each failed
 * check prints one line. Load runs, not in "all": perf-read, perf-read-nosqflow and
 * perf-write (4 KiB, queue depth 32, one I/O queue, 5 s): they print IOPS. Also not in
 * "all": read (admin and I/O Connect, then a 4 KiB Read of LBA 0 printed as
 * "read 4096 bytes: HEX..."), kato-max (admin Connect with KATO FFFFFFFFh, then after
 * 1.5 s the controller must still answer Get Features KATO and Keep Alive).
 *
 * disc-aer (SUBNQN is the discovery NQN): TCP_RAW_DISC_HOLD (64) discovery controllers
 * held as one host, then one more as TCP_RAW_HOSTNQN with the discovery log change notice
 * enabled and an Asynchronous Event Request outstanding; prints "ready", then waits up to
 * TCP_RAW_WAIT_S (10) seconds for the AER to complete.
 *
 * Environment: TCP_RAW_HOSTNQN replaces the host NQN the Connects carry, TCP_RAW_KATO the
 * admin Connect's KATO (ms; 30000 by default).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/nvme_spec.h"
#include "common/nvme_tcp_pdu.h"

#define HOSTNQN "nqn.2014-08.org.nvmexpress:uuid:6b3a1f52-0d3c-4e5b-9a61-3c2f7d9e0a11"

static int g_port;
static const char *g_subnqn;
static const char *g_hostnqn = HOSTNQN; /* the host this client plays */
static uint32_t g_admin_kato = 30000;   /* KATO of its admin Connects (ms) */
static int g_failures;
static uint32_t g_src_addr; /* host order; 0: let the kernel pick the source address */

#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "FAIL %s:%d: %s: ", __func__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                     \
			fprintf(stderr, "\n");                                            \
			g_failures++;                                                     \
		}                                                                         \
	} while (0)

#define REQUIRE(cond, ...)                                                                \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "FAIL %s:%d: %s: ", __func__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                     \
			fprintf(stderr, "\n");                                            \
			g_failures++;                                                     \
			return -1;                                                        \
		}                                                                         \
	} while (0)

struct conn {
	int fd;
	struct nvme_tcp_params p;
	uint32_t maxh2cdata;
	uint16_t cid;
	uint16_t cntlid;
};

/* A connection to the target with receives timing out after @timeout_s, and a receive
 * buffer of @rcvbuf bytes from the start when not 0 (a window shrunk on a live connection
 * makes the kernel drop segments already in flight, and retransmissions back off). */
static int conn_open_opts(struct conn *c, int rcvbuf, int timeout_s)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)g_port) };
	struct timeval tv = { timeout_s, 0 };
	int one = 1;

	memset(c, 0, sizeof(*c));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	REQUIRE(c->fd >= 0, "socket: %s", strerror(errno));
	if (rcvbuf)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (g_src_addr) { /* another loopback address, so the target sees another peer */
		struct sockaddr_in src = { .sin_family = AF_INET,
					   .sin_addr.s_addr = htonl(g_src_addr) };

		REQUIRE(bind(c->fd, (struct sockaddr *)&src, sizeof(src)) == 0, "bind: %s",
			strerror(errno));
	}
	REQUIRE(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect: %s",
		strerror(errno));
	c->cid = 1;
	return 0;
}

static int conn_open(struct conn *c)
{
	return conn_open_opts(c, 0, 5);
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int xsend(struct conn *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int xrecv(struct conn *c, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(c->fd, p, len, 0);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One whole PDU; returns its length or -1. */
static int recv_pdu(struct conn *c, uint8_t *buf, size_t max)
{
	uint32_t plen;

	if (xrecv(c, buf, 8) != 0)
		return -1;
	plen = get_le32(buf + 4);
	if (plen < 8 || plen > max)
		return -1;
	if (xrecv(c, buf + 8, plen - 8) != 0)
		return -1;
	return (int)plen;
}

static int do_ic(struct conn *c, bool hdgst, bool ddgst)
{
	uint8_t buf[256];
	const struct nvme_tcp_icresp *r = (const void *)buf;

	nvme_tcp_build_icreq(buf, hdgst, ddgst, 0, 0);
	REQUIRE(xsend(c, buf, 128) == 0, "send ICReq");
	REQUIRE(recv_pdu(c, buf, sizeof(buf)) == 128, "ICResp of 128 bytes");
	CHECK(r->ch.pdu_type == NVME_TCP_PDU_ICRESP, "type %u", r->ch.pdu_type);
	CHECK(r->ch.hlen == 128 && r->ch.pdo == 0 && r->ch.flags == 0, "hlen %u pdo %u flags %u",
	      r->ch.hlen, r->ch.pdo, r->ch.flags);
	CHECK(get_le16(&r->pfv) == 0, "pfv %u", get_le16(&r->pfv));
	CHECK(r->cpda == 0, "cpda %u", r->cpda);
	CHECK(r->dgst == ((hdgst ? 1 : 0) | (ddgst ? 2 : 0)), "dgst %u", r->dgst);
	c->maxh2cdata = get_le32(&r->maxh2cdata);
	CHECK(c->maxh2cdata >= 4096 && c->maxh2cdata % 4 == 0, "maxh2cdata %u", c->maxh2cdata);
	c->p.hdgst = hdgst;
	c->p.ddgst = ddgst;
	c->p.maxh2cdata = c->maxh2cdata;
	c->p.max_icdata = UINT32_MAX;
	return 0;
}

static void sgl_transport(struct nvme_cmd *cmd, uint32_t len)
{
	put_le32(cmd->dptr.sgl1.length, len);
	cmd->dptr.sgl1.type =
		NVME_SGL_TYPE(NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK, NVME_SGL_SUBTYPE_TRANSPORT);
}

static void sgl_incapsule(struct nvme_cmd *cmd, uint32_t len)
{
	put_le32(cmd->dptr.sgl1.length, len);
	cmd->dptr.sgl1.type = NVME_SGL_TYPE(NVME_SGL_TYPE_DATA_BLOCK, NVME_SGL_SUBTYPE_OFFSET);
}

static int send_capsule(struct conn *c, const struct nvme_cmd *cmd, const void *data,
			uint32_t len)
{
	uint8_t hdr[NVME_TCP_PSH_MAX + 128], dg[4];
	size_t hl = nvme_tcp_build_capsule_cmd(hdr, cmd, len, &c->p);

	if (xsend(c, hdr, hl) != 0 || (len && xsend(c, data, len) != 0))
		return -1;
	if (len && c->p.ddgst) {
		put_le32(dg, crc32c(data, len));
		if (xsend(c, dg, 4) != 0)
			return -1;
	}
	return 0;
}

/*
 * Run one command to completion: in-capsule data or R2T/H2CData for writes, C2HData for
 * reads (into @in). Returns the CQE status without the phase bit, or -1.
 */
static int run_cmd(struct conn *c, struct nvme_cmd *cmd, const void *out, uint32_t outlen,
		   bool incapsule, void *in, uint32_t inlen, struct nvme_cpl *cpl_out)
{
	static uint8_t buf[1 << 20];
	uint16_t cid = c->cid++;
	uint32_t got = 0;

	put_le16(&cmd->cid, cid);
	cmd->flags = 0x40;
	if (outlen && incapsule)
		sgl_incapsule(cmd, outlen);
	else
		sgl_transport(cmd, outlen ? outlen : inlen);
	REQUIRE(send_capsule(c, cmd, incapsule ? out : NULL, incapsule ? outlen : 0) == 0,
		"send capsule");
	for (;;) {
		const struct nvme_tcp_common_hdr *ch = (const void *)buf;
		int plen = recv_pdu(c, buf, sizeof(buf));

		REQUIRE(plen > 0, "connection closed waiting for cid %u", cid);
		if (c->p.hdgst && ch->pdu_type != NVME_TCP_PDU_C2H_TERM_REQ)
			CHECK((ch->flags & NVME_TCP_F_HDGST) && nvme_tcp_hdgst_ok(buf, ch->hlen),
			      "header digest of a %s", nvme_tcp_pdu_type_name(ch->pdu_type));
		switch (ch->pdu_type) {
		case NVME_TCP_PDU_CAPSULE_RESP: {
			const struct nvme_tcp_rsp *r = (const void *)buf;

			REQUIRE(get_le16(&r->cqe.cid) == cid, "cid %u", get_le16(&r->cqe.cid));
			CHECK(got == 0 || got == inlen, "read %u of %u bytes", got, inlen);
			if (cpl_out)
				*cpl_out = r->cqe;
			return get_le16(&r->cqe.status) & ~1;
		}
		case NVME_TCP_PDU_R2T: {
			const struct nvme_tcp_r2t_hdr *r = (const void *)buf;
			uint32_t r2to = get_le32(&r->r2to), r2tl = get_le32(&r->r2tl), sent = 0;
			uint16_t ttag = get_le16(&r->ttag);

			REQUIRE(get_le16(&r->cccid) == cid, "R2T cccid");
			REQUIRE(r2tl > 0 && r2to + r2tl <= outlen, "R2T %u+%u of %u", r2to, r2tl,
				outlen);
			while (sent < r2tl) {
				uint8_t hdr[256], dg[4];
				uint32_t n = r2tl - sent;
				size_t hl;

				if (n > c->maxh2cdata)
					n = c->maxh2cdata;
				hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, cid, ttag,
							 r2to + sent, n,
							 sent + n == r2tl ? NVME_TCP_F_DATA_LAST : 0,
							 &c->p);
				REQUIRE(xsend(c, hdr, hl) == 0, "send H2CData");
				REQUIRE(xsend(c, (const uint8_t *)out + r2to + sent, n) == 0, "data");
				if (c->p.ddgst) {
					put_le32(dg, crc32c((const uint8_t *)out + r2to + sent, n));
					REQUIRE(xsend(c, dg, 4) == 0, "ddgst");
				}
				sent += n;
			}
			break;
		}
		case NVME_TCP_PDU_C2H_DATA: {
			const struct nvme_tcp_data_hdr *d = (const void *)buf;
			uint32_t datao = get_le32(&d->datao), datal = get_le32(&d->datal);

			REQUIRE(get_le16(&d->cccid) == cid, "C2HData cccid");
			REQUIRE(datao == got && datao + datal <= inlen, "C2HData %u+%u, expected %u",
				datao, datal, got);
			REQUIRE(nvme_tcp_data_len(ch, c->p.ddgst) == datal, "C2HData DATAL");
			memcpy((uint8_t *)in + datao, buf + ch->pdo, datal);
			if (c->p.ddgst)
				CHECK(get_le32(buf + ch->pdo + datal) == crc32c(buf + ch->pdo, datal),
				      "C2HData data digest");
			got += datal;
			if (d->ch.flags & NVME_TCP_F_DATA_SUCCESS)
				return 0;
			break;
		}
		default:
			REQUIRE(0, "unexpected %s PDU", nvme_tcp_pdu_type_name(ch->pdu_type));
		}
	}
}

static int fabrics_connect(struct conn *c, uint16_t qid, uint16_t sqsize, uint16_t cntlid)
{
	struct nvmf_connect_cmd cmd = { 0 };
	struct nvmf_connect_data data = { 0 };
	struct nvme_cpl cpl;
	int st;

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd.qid, qid);
	put_le16(&cmd.sqsize, (uint16_t)(sqsize - 1));
	put_le32(&cmd.kato, qid == 0 ? g_admin_kato : 0);
	memset(data.hostid, 0x5a, sizeof(data.hostid));
	put_le16(&data.cntlid, cntlid);
	snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
	snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", g_hostnqn);
	/* The connect data goes in-capsule when it fits (admin: 8 KiB), by R2T otherwise. */
	st = run_cmd(c, (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0, &cpl);
	REQUIRE(st == 0, "Connect qid %u: status 0x%x", qid, st);
	if (qid == 0)
		c->cntlid = get_le16(&cpl.dw0);
	return 0;
}

static int prop_get(struct conn *c, uint32_t off, bool eight, uint64_t *val)
{
	struct nvmf_property_cmd cmd = { 0 };
	struct nvme_cpl cpl;
	int st;

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_PROPERTY_GET;
	cmd.attrib = eight ? 1 : 0;
	put_le32(&cmd.offset, off);
	st = run_cmd(c, (struct nvme_cmd *)&cmd, NULL, 0, false, NULL, 0, &cpl);
	REQUIRE(st == 0, "Property Get 0x%x: status 0x%x", off, st);
	*val = (uint64_t)get_le32(&cpl.dw0) | ((uint64_t)get_le32(&cpl.dw1) << 32);
	return 0;
}

static int prop_set(struct conn *c, uint32_t off, uint32_t v)
{
	struct nvmf_property_cmd cmd = { 0 };
	int st;

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_PROPERTY_SET;
	put_le32(&cmd.offset, off);
	put_le64(&cmd.value, v);
	st = run_cmd(c, (struct nvme_cmd *)&cmd, NULL, 0, false, NULL, 0, NULL);
	REQUIRE(st == 0, "Property Set 0x%x: status 0x%x", off, st);
	return 0;
}

/* ICReq, admin Connect, CAP, enable, Identify Controller. */
static int admin_up(struct conn *c, bool hdgst, bool ddgst)
{
	uint64_t cap = 0, csts = 0;
	static struct nvme_id_ctrl id;
	struct nvme_cmd cmd = { 0 };
	int st;

	REQUIRE(conn_open(c) == 0, "open");
	REQUIRE(do_ic(c, hdgst, ddgst) == 0, "IC");
	REQUIRE(fabrics_connect(c, 0, 32, 0xffff) == 0, "admin connect");
	CHECK(c->cntlid >= 1 && c->cntlid <= 0xffef, "cntlid %u", c->cntlid);
	REQUIRE(prop_get(c, NVME_REG_CAP, true, &cap) == 0, "CAP");
	CHECK(cap & NVME_CAP_CQR, "CAP.CQR 0x%llx", (unsigned long long)cap);
	CHECK(cap & NVME_CAP_CSS_NVM, "CAP.CSS NVM");
	CHECK(NVME_CAP_MQES(cap) >= 1, "MQES");
	REQUIRE(prop_set(c, NVME_REG_CC,
			 NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT) == 0,
		"CC.EN");
	for (int i = 0; i < 100 && !(csts & NVME_CSTS_RDY); i++) {
		REQUIRE(prop_get(c, NVME_REG_CSTS, false, &csts) == 0, "CSTS");
		if (!(csts & NVME_CSTS_RDY))
			usleep(10000);
	}
	REQUIRE(csts & NVME_CSTS_RDY, "CSTS.RDY");

	cmd.opc = NVME_ADMIN_IDENTIFY;
	put_le32(&cmd.cdw10, NVME_ID_CNS_CTRL);
	st = run_cmd(c, &cmd, NULL, 0, false, &id, sizeof(id), NULL);
	REQUIRE(st == 0, "Identify Controller: 0x%x", st);
	CHECK(get_le16(&id.cntlid) == c->cntlid, "id.cntlid %u", get_le16(&id.cntlid));
	CHECK(id.sqes == 0x66 && id.cqes == 0x44, "sqes 0x%x cqes 0x%x", id.sqes, id.cqes);
	CHECK(get_le16(&id.maxcmd) >= 32, "maxcmd %u", get_le16(&id.maxcmd));
	CHECK(get_le32(&id.ioccsz) >= 4 && get_le32(&id.iorcsz) == 1, "ioccsz %u iorcsz %u",
	      get_le32(&id.ioccsz), get_le32(&id.iorcsz));
	CHECK(get_le32(&id.sgls) & 3, "sgls 0x%x", get_le32(&id.sgls));
	CHECK(get_le32(&id.nn) >= 1, "nn");
	return 0;
}

/* ---- scenarios ---------------------------------------------------------------------------- */

static int scen_ic(void)
{
	for (int m = 0; m < 4; m++) {
		struct conn c;

		REQUIRE(conn_open(&c) == 0, "open");
		do_ic(&c, m & 1, m & 2);
		conn_close(&c);
	}
	return 0;
}

static int scen_admin(void)
{
	struct conn c;
	static struct nvme_id_ns ns;
	struct nvme_cmd cmd = { 0 };
	int st;

	REQUIRE(admin_up(&c, false, false) == 0, "admin");
	cmd.opc = NVME_ADMIN_IDENTIFY;
	put_le32(&cmd.nsid, 1);
	put_le32(&cmd.cdw10, NVME_ID_CNS_NS);
	st = run_cmd(&c, &cmd, NULL, 0, false, &ns, sizeof(ns), NULL);
	CHECK(st == 0, "Identify Namespace: 0x%x", st);
	CHECK(get_le64(&ns.nsze) > 0 && get_le64(&ns.ncap) > 0, "nsze %llu",
	      (unsigned long long)get_le64(&ns.nsze));
	conn_close(&c);
	return 0;
}

static void pattern(uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)((i * 131) ^ (i >> 8) ^ seed);
}

static int rw(struct conn *io, uint64_t slba, uint32_t len, bool incapsule, unsigned int seed)
{
	static uint8_t w[1 << 17], r[1 << 17];
	struct nvme_cmd cmd = { 0 };
	uint32_t nlb = len / 512;
	int st;

	pattern(w, len, seed);
	cmd.opc = NVME_OPC_WRITE;
	put_le32(&cmd.nsid, 1);
	put_le64(&cmd.cdw10, slba);
	put_le32(&cmd.cdw12, nlb - 1);
	st = run_cmd(io, &cmd, w, len, incapsule, NULL, 0, NULL);
	REQUIRE(st == 0, "write %u bytes at LBA %llu (%s): 0x%x", len, (unsigned long long)slba,
		incapsule ? "in-capsule" : "R2T", st);
	memset(&cmd, 0, sizeof(cmd));
	memset(r, 0, len);
	cmd.opc = NVME_OPC_READ;
	put_le32(&cmd.nsid, 1);
	put_le64(&cmd.cdw10, slba);
	put_le32(&cmd.cdw12, nlb - 1);
	st = run_cmd(io, &cmd, NULL, 0, false, r, len, NULL);
	REQUIRE(st == 0, "read %u bytes at LBA %llu: 0x%x", len, (unsigned long long)slba, st);
	CHECK(memcmp(w, r, len) == 0, "data read back differs (%u bytes at LBA %llu)", len,
	      (unsigned long long)slba);
	return 0;
}

static int scen_io_with(bool hdgst, bool ddgst)
{
	struct conn admin, io;

	REQUIRE(admin_up(&admin, hdgst, ddgst) == 0, "admin");
	REQUIRE(conn_open(&io) == 0, "open I/O");
	REQUIRE(do_ic(&io, hdgst, ddgst) == 0, "I/O IC");
	io.cntlid = admin.cntlid;
	REQUIRE(fabrics_connect(&io, 1, 64, admin.cntlid) == 0, "I/O connect");
	rw(&io, 0, 512, true, 1);
	rw(&io, 8, 4096, true, 2);
	rw(&io, 16, 8192, true, 3);
	rw(&io, 32, 4096, false, 4);
	rw(&io, 64, 65536, false, 5);
	rw(&io, 256, 131072, false, 6);
	conn_close(&io);
	conn_close(&admin);
	return 0;
}

static int scen_io(void)
{
	return scen_io_with(false, false);
}

static int scen_io_digest(void)
{
	scen_io_with(true, true);
	scen_io_with(true, false);
	return scen_io_with(false, true);
}


/* ---- stress: 32 commands in flight, mixed sizes, every byte checked ------------------------ */

#define ST_SLOTS 32
#define ST_MAX (128 * 1024)

struct st_slot {
	bool writing;
	uint32_t len;
	uint64_t slba;
	unsigned int gen;
	uint8_t w[ST_MAX], r[ST_MAX];
	uint32_t got;
};

struct st {
	struct conn *c;
	uint8_t *tx;
	size_t tx_len, tx_off, tx_cap;
	struct st_slot slot[ST_SLOTS];
	unsigned int issued, completed, target;
	unsigned int seed;
};

static void st_put(struct st *s, const void *p, size_t n)
{
	if (s->tx_len + n > s->tx_cap) {
		memmove(s->tx, s->tx + s->tx_off, s->tx_len - s->tx_off);
		s->tx_len -= s->tx_off;
		s->tx_off = 0;
	}
	memcpy(s->tx + s->tx_len, p, n);
	s->tx_len += n;
}

static unsigned int st_rand(struct st *s)
{
	s->seed = s->seed * 1103515245u + 12345u;
	return s->seed >> 8;
}

static void st_issue(struct st *s, int i)
{
	struct st_slot *sl = &s->slot[i];
	struct nvme_cmd cmd = { 0 };
	uint8_t hdr[NVME_TCP_PSH_MAX + 128], dg[4];
	bool inc;
	size_t hl;

	if (sl->writing) {
		/* 4 KiB .. 128 KiB, in its own 128 KiB region of the namespace */
		sl->len = (st_rand(s) % 32 + 1) * 4096;
		sl->gen++;
		pattern(sl->w, sl->len, (unsigned int)i * 977u + sl->gen);
	}
	inc = sl->writing && sl->len <= 8192;
	cmd.opc = sl->writing ? NVME_OPC_WRITE : NVME_OPC_READ;
	cmd.flags = 0x40;
	put_le16(&cmd.cid, (uint16_t)i);
	put_le32(&cmd.nsid, 1);
	put_le64(&cmd.cdw10, sl->slba);
	put_le32(&cmd.cdw12, sl->len / 512 - 1);
	if (inc)
		sgl_incapsule(&cmd, sl->len);
	else
		sgl_transport(&cmd, sl->len);
	hl = nvme_tcp_build_capsule_cmd(hdr, &cmd, inc ? sl->len : 0, &s->c->p);
	st_put(s, hdr, hl);
	if (inc) {
		st_put(s, sl->w, sl->len);
		if (s->c->p.ddgst) {
			put_le32(dg, crc32c(sl->w, sl->len));
			st_put(s, dg, 4);
		}
	}
	sl->got = 0;
	s->issued++;
}

/* Handle one PDU; -1 on a protocol or data error. */
static int st_pdu(struct st *s, const uint8_t *pdu)
{
	const struct nvme_tcp_common_hdr *ch = (const void *)pdu;
	struct conn *c = s->c;

	if (c->p.hdgst)
		REQUIRE(nvme_tcp_hdgst_ok(pdu, ch->hlen), "header digest");
	if (ch->pdu_type == NVME_TCP_PDU_R2T) {
		const struct nvme_tcp_r2t_hdr *r = (const void *)pdu;
		uint16_t cid = get_le16(&r->cccid);
		uint32_t r2to = get_le32(&r->r2to), r2tl = get_le32(&r->r2tl);
		struct st_slot *sl;
		uint8_t hdr[256], dg[4];

		REQUIRE(cid < ST_SLOTS && s->slot[cid].writing, "R2T for cid %u", cid);
		sl = &s->slot[cid];
		REQUIRE(r2tl && r2to + r2tl <= sl->len, "R2T range %u+%u of %u", r2to, r2tl, sl->len);
		for (uint32_t off = 0; off < r2tl;) {
			uint32_t n = r2tl - off > 16384 ? 16384 : r2tl - off;
			size_t hl = nvme_tcp_build_data(hdr, NVME_TCP_PDU_H2C_DATA, cid,
							get_le16(&r->ttag), r2to + off, n,
							off + n == r2tl ? NVME_TCP_F_DATA_LAST : 0,
							&c->p);

			st_put(s, hdr, hl);
			st_put(s, sl->w + r2to + off, n);
			if (c->p.ddgst) {
				put_le32(dg, crc32c(sl->w + r2to + off, n));
				st_put(s, dg, 4);
			}
			off += n;
		}
		return 0;
	}
	if (ch->pdu_type == NVME_TCP_PDU_C2H_DATA) {
		const struct nvme_tcp_data_hdr *d = (const void *)pdu;
		uint16_t cid = get_le16(&d->cccid);
		uint32_t datao = get_le32(&d->datao), datal = get_le32(&d->datal);
		struct st_slot *sl;

		REQUIRE(cid < ST_SLOTS && !s->slot[cid].writing, "C2HData for cid %u", cid);
		sl = &s->slot[cid];
		REQUIRE(datao == sl->got && datao + datal <= sl->len, "C2HData %u+%u", datao, datal);
		memcpy(sl->r + datao, pdu + ch->pdo, datal);
		if (c->p.ddgst)
			REQUIRE(get_le32(pdu + ch->pdo + datal) == crc32c(pdu + ch->pdo, datal),
				"C2HData digest");
		sl->got += datal;
		return 0;
	}
	if (ch->pdu_type == NVME_TCP_PDU_CAPSULE_RESP) {
		const struct nvme_tcp_rsp *r = (const void *)pdu;
		uint16_t cid = get_le16(&r->cqe.cid);
		struct st_slot *sl;

		REQUIRE(cid < ST_SLOTS, "response cid %u", cid);
		sl = &s->slot[cid];
		REQUIRE((get_le16(&r->cqe.status) & ~1) == 0, "cid %u status 0x%x", cid,
			get_le16(&r->cqe.status));
		if (!sl->writing) {
			REQUIRE(sl->got == sl->len, "read %u of %u", sl->got, sl->len);
			REQUIRE(memcmp(sl->r, sl->w, sl->len) == 0, "cid %u: data differs", cid);
		}
		sl->writing = !sl->writing;
		s->completed++;
		if (s->issued < s->target)
			st_issue(s, cid);
		return 0;
	}
	REQUIRE(0, "unexpected %s", nvme_tcp_pdu_type_name(ch->pdu_type));
}

static int stress_with(bool hdgst, bool ddgst, unsigned int ops)
{
	static struct st s;
	static uint8_t rbuf[1 << 19];
	struct conn admin, io;
	size_t have = 0;

	REQUIRE(admin_up(&admin, false, false) == 0, "admin");
	REQUIRE(conn_open(&io) == 0, "open I/O");
	REQUIRE(do_ic(&io, hdgst, ddgst) == 0, "I/O IC");
	REQUIRE(fabrics_connect(&io, 1, 64, admin.cntlid) == 0, "I/O connect");
	memset(&s, 0, sizeof(s));
	s.c = &io;
	s.tx_cap = 8u << 20;
	s.tx = malloc(s.tx_cap);
	s.target = ops;
	s.seed = 12345;
	REQUIRE(s.tx, "memory");
	for (int i = 0; i < ST_SLOTS; i++) {
		s.slot[i].writing = true;
		s.slot[i].slba = (uint64_t)i * (ST_MAX / 512);
		st_issue(&s, i);
	}
	while (s.completed < s.target) {
		struct pollfd pfd = { .fd = io.fd, .events = POLLIN };
		size_t off = 0;

		if (s.tx_off < s.tx_len)
			pfd.events |= POLLOUT;
		REQUIRE(poll(&pfd, 1, 5000) == 1, "stalled with %u of %u done", s.completed,
			s.target);
		if (pfd.revents & POLLOUT) {
			ssize_t n = send(io.fd, s.tx + s.tx_off, s.tx_len - s.tx_off,
					 MSG_DONTWAIT | MSG_NOSIGNAL);

			REQUIRE(n > 0 || errno == EAGAIN, "send: %s", strerror(errno));
			if (n > 0)
				s.tx_off += (size_t)n;
			if (s.tx_off == s.tx_len)
				s.tx_off = s.tx_len = 0;
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(io.fd, rbuf + have, sizeof(rbuf) - have, MSG_DONTWAIT);

			REQUIRE(n > 0 || (n < 0 && errno == EAGAIN), "recv: %s",
				n ? strerror(errno) : "closed");
			if (n > 0)
				have += (size_t)n;
			while (have - off >= 8) {
				uint32_t plen = get_le32(rbuf + off + 4);

				REQUIRE(plen >= 8 && plen <= sizeof(rbuf), "plen %u", plen);
				if (have - off < plen)
					break;
				if (st_pdu(&s, rbuf + off) != 0)
					return -1;
				off += plen;
			}
			memmove(rbuf, rbuf + off, have - off);
			have -= off;
		}
	}
	free(s.tx);
	conn_close(&io);
	conn_close(&admin);
	return 0;
}

static int scen_stress(void)
{
	if (stress_with(false, false, 3000) != 0)
		return -1;
	return stress_with(true, true, 1000);
}

/* ---- malformed PDUs ------------------------------------------------------------------------ */

struct bad {
	const char *name;
	bool ic, hdgst, io;
	size_t (*build)(struct conn *c, uint8_t *buf);
	uint16_t fes;
	int fei; /* -1: not checked */
};

static size_t bad_before_ic(struct conn *c, uint8_t *buf)
{
	struct nvme_cmd cmd = { 0 };
	struct nvme_tcp_params p = { 0 };

	cmd.opc = NVME_ADMIN_IDENTIFY;
	return nvme_tcp_build_capsule_cmd(buf, &cmd, 0, &p);
}

static size_t bad_hlen(struct conn *c, uint8_t *buf)
{
	struct nvme_cmd cmd = { 0 };
	size_t n = nvme_tcp_build_capsule_cmd(buf, &cmd, 0, &c->p);

	buf[2] = 70;
	return n;
}

static size_t bad_hdgst(struct conn *c, uint8_t *buf)
{
	struct nvme_cmd cmd = { 0 };
	size_t n = nvme_tcp_build_capsule_cmd(buf, &cmd, 0, &c->p);

	buf[72] ^= 0x5a;
	return n;
}

static size_t bad_plen(struct conn *c, uint8_t *buf)
{
	struct nvme_cmd cmd = { 0 };

	cmd.opc = NVME_OPC_WRITE;
	sgl_incapsule(&cmd, 1 << 20);
	/* Announces 1 MiB of in-capsule data: far over the negotiated limit. */
	return nvme_tcp_build_capsule_cmd(buf, &cmd, 1 << 20, &c->p);
}

static size_t bad_ttag(struct conn *c, uint8_t *buf)
{
	return nvme_tcp_build_data(buf, NVME_TCP_PDU_H2C_DATA, 1, 0x1234, 0, 512,
				   NVME_TCP_F_DATA_LAST, &c->p);
}

static size_t bad_type(struct conn *c, uint8_t *buf)
{
	struct nvme_cpl cqe = { 0 };

	return nvme_tcp_build_capsule_resp(buf, &cqe, c->p.hdgst);
}

static const struct bad bads[] = {
	{ "PDU before ICReq", false, false, false, bad_before_ic, NVME_TCP_FES_PDU_SEQ_ERR, -1 },
	{ "bad HLEN", true, false, false, bad_hlen, NVME_TCP_FES_INVALID_PDU_HDR, 2 },
	{ "bad header digest", true, true, false, bad_hdgst, NVME_TCP_FES_HDR_DIGEST_ERR, -1 },
	{ "PLEN over the in-capsule limit", true, false, true, bad_plen,
	  NVME_TCP_FES_DATA_LIMIT_EXCEEDED, -1 },
	{ "H2CData for an unknown TTAG", true, false, true, bad_ttag, NVME_TCP_FES_INVALID_PDU_HDR,
	  10 },
	{ "CapsuleResp from the host", true, false, false, bad_type, NVME_TCP_FES_INVALID_PDU_HDR,
	  0 },
};

static int scen_malformed(void)
{
	struct conn good;
	uint64_t cap;

	/* A healthy connection that must survive everything below. */
	REQUIRE(admin_up(&good, false, false) == 0, "healthy connection");
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];
		uint8_t buf[512], out[512];
		const struct nvme_tcp_term_req *t = (const void *)buf;
		struct conn c, adm = { .fd = -1 };
		size_t n;
		int plen;
		ssize_t r;

		if (b->io) {
			/* The admin queue stays up: without it the controller goes away. */
			REQUIRE(admin_up(&adm, false, false) == 0, "admin for %s", b->name);
			REQUIRE(conn_open(&c) == 0, "open");
			REQUIRE(do_ic(&c, b->hdgst, false) == 0, "IC");
			REQUIRE(fabrics_connect(&c, 1, 32, adm.cntlid) == 0, "I/O connect");
		} else {
			REQUIRE(conn_open(&c) == 0, "open");
			if (b->ic)
				REQUIRE(do_ic(&c, b->hdgst, false) == 0, "IC");
		}
		n = b->build(&c, out);
		REQUIRE(xsend(&c, out, n) == 0, "%s: send", b->name);
		plen = recv_pdu(&c, buf, sizeof(buf));
		CHECK(plen >= 24, "%s: no C2HTermReq", b->name);
		if (plen >= 24) {
			CHECK(t->ch.pdu_type == NVME_TCP_PDU_C2H_TERM_REQ, "%s: got %s", b->name,
			      nvme_tcp_pdu_type_name(t->ch.pdu_type));
			CHECK(get_le16(&t->fes) == b->fes, "%s: FES %u, expected %u", b->name,
			      get_le16(&t->fes), b->fes);
			if (b->fei >= 0)
				CHECK(get_le32(t->fei) == (uint32_t)b->fei, "%s: FEI %u, expected %d",
				      b->name, get_le32(t->fei), b->fei);
			CHECK(plen > 24 && memcmp(buf + 24, out, 8) == 0,
			      "%s: offending header not quoted", b->name);
		}
		/* Then the target closes the connection. */
		do {
			r = recv(c.fd, buf, sizeof(buf), 0);
		} while (r > 0);
		CHECK(r == 0, "%s: connection not closed (%s)", b->name,
		      r < 0 ? strerror(errno) : "data");
		conn_close(&c);
		if (adm.fd >= 0) {
			CHECK(prop_get(&adm, NVME_REG_CAP, true, &cap) == 0,
			      "%s: admin queue broken by its I/O queue's error", b->name);
			conn_close(&adm);
		}
		CHECK(prop_get(&good, NVME_REG_CAP, true, &cap) == 0,
		      "healthy connection broken after %s", b->name);
	}
	conn_close(&good);
	return 0;
}


/* ---- load: 4 KiB reads at a fixed queue depth (not part of "all") ---------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One I/O queue, @qd 4 KiB commands in flight (reads, or in-capsule writes), for @secs
 * seconds after a 1 s warm-up. Requests are batched into one send; responses parsed out of
 * a large receive buffer. @nosqflow asks for SQ flow control off (C2HData SUCCESS, no
 * CapsuleResp for reads).
 */
static int perf(int qd, int secs, bool write, bool nosqflow)
{
	static uint8_t rbuf[1 << 18], sbuf[1 << 20];
	static uint8_t wdata[4096];
	struct conn admin, io;
	uint64_t done = 0, counted = 0;
	size_t have = 0;
	double t0, tw, t1;
	int inflight = 0;
	uint16_t next_cid = 0;

	REQUIRE(admin_up(&admin, false, false) == 0, "admin");
	REQUIRE(conn_open(&io) == 0, "open I/O");
	REQUIRE(do_ic(&io, false, false) == 0, "I/O IC");
	{
		struct nvmf_connect_cmd cmd = { 0 };
		struct nvmf_connect_data data = { 0 };
		int st;

		cmd.opc = NVME_OPC_FABRICS;
		cmd.fctype = NVMF_FCTYPE_CONNECT;
		put_le16(&cmd.qid, 1);
		put_le16(&cmd.sqsize, 127);
		cmd.cattr = nosqflow ? NVMF_CONNECT_CATTR_DISABLE_SQFLOW : 0;
		put_le16(&data.cntlid, admin.cntlid);
		memset(data.hostid, 0x5a, sizeof(data.hostid));
		snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
		snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", g_hostnqn);
		st = run_cmd(&io, (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0, NULL);
		REQUIRE(st == 0, "I/O connect 0x%x", st);
	}
	t0 = now_s();
	tw = t0 + 1.0;
	t1 = tw + secs;
	for (;;) {
		size_t slen = 0, off = 0;
		double t;
		ssize_t n;

		while (inflight < qd) {
			struct nvme_cmd cmd = { 0 };
			uint16_t cid = next_cid++ % 1024;

			cmd.opc = write ? NVME_OPC_WRITE : NVME_OPC_READ;
			cmd.flags = 0x40;
			put_le16(&cmd.cid, cid);
			put_le32(&cmd.nsid, 1);
			put_le64(&cmd.cdw10, (uint64_t)(cid % 1024) * 8);
			put_le32(&cmd.cdw12, 7);
			if (write)
				sgl_incapsule(&cmd, 4096);
			else
				sgl_transport(&cmd, 4096);
			slen += nvme_tcp_build_capsule_cmd(sbuf + slen, &cmd, write ? 4096 : 0, &io.p);
			if (write) {
				memcpy(sbuf + slen, wdata, 4096);
				slen += 4096;
			}
			inflight++;
		}
		if (slen)
			REQUIRE(xsend(&io, sbuf, slen) == 0, "send");
		n = recv(io.fd, rbuf + have, sizeof(rbuf) - have, 0);
		REQUIRE(n > 0, "recv: %s", n ? strerror(errno) : "closed");
		have += (size_t)n;
		while (have - off >= 8) {
			const struct nvme_tcp_common_hdr *ch = (const void *)(rbuf + off);
			uint32_t plen = get_le32(&ch->plen);

			if (have - off < plen)
				break;
			if (ch->pdu_type == NVME_TCP_PDU_CAPSULE_RESP ||
			    (ch->pdu_type == NVME_TCP_PDU_C2H_DATA &&
			     (ch->flags & NVME_TCP_F_DATA_SUCCESS))) {
				if (ch->pdu_type == NVME_TCP_PDU_CAPSULE_RESP)
					REQUIRE(get_le16(&((const struct nvme_tcp_rsp *)ch)->cqe.status) <= 1,
						"status");
				inflight--;
				done++;
			}
			off += plen;
		}
		memmove(rbuf, rbuf + off, have - off);
		have -= off;
		t = now_s();
		if (t >= tw && counted == 0)
			counted = done ? done : 1;
		if (t >= t1)
			break;
	}
	printf("%s 4K QD%d%s: %.0f IOPS\n", write ? "write" : "read", qd,
	       nosqflow ? " (SQ flow control off)" : "", (double)(done - counted) / secs);
	conn_close(&io);
	conn_close(&admin);
	return 0;
}

static int scen_perf(void)
{
	return perf(32, 5, false, false);
}

static int scen_perf_nosqflow(void)
{
	return perf(32, 5, false, true);
}

static int scen_perf_write(void)
{
	return perf(32, 5, true, false);
}

/* A host reading the namespace: admin and I/O Connect, one 4 KiB Read of LBA 0. */
static int scen_read(void)
{
	static uint8_t r[4096];
	struct conn admin, io;
	struct nvme_cmd cmd = { 0 };
	int st;

	REQUIRE(admin_up(&admin, false, false) == 0, "admin");
	REQUIRE(conn_open(&io) == 0, "open I/O");
	REQUIRE(do_ic(&io, false, false) == 0, "I/O IC");
	REQUIRE(fabrics_connect(&io, 1, 32, admin.cntlid) == 0, "I/O connect");
	cmd.opc = NVME_OPC_READ;
	put_le32(&cmd.nsid, 1);
	put_le32(&cmd.cdw12, 4096 / 512 - 1);
	st = run_cmd(&io, &cmd, NULL, 0, false, r, sizeof(r), NULL);
	REQUIRE(st == 0, "read: 0x%x", st);
	printf("read %zu bytes: ", sizeof(r));
	for (int i = 0; i < 16; i++)
		printf("%02x", r[i]);
	printf("...\n");
	conn_close(&io);
	conn_close(&admin);
	return 0;
}

/* An enabled discovery controller on a new connection as @hostnqn. */
static int disc_up(struct conn *c, const char *hostnqn)
{
	const char *saved = g_hostnqn;
	uint64_t csts = 0;
	int rc;

	REQUIRE(conn_open(c) == 0, "open");
	REQUIRE(do_ic(c, false, false) == 0, "IC");
	g_hostnqn = hostnqn;
	rc = fabrics_connect(c, 0, 8, 0xffff);
	g_hostnqn = saved;
	REQUIRE(rc == 0, "discovery connect");
	REQUIRE(prop_set(c, NVME_REG_CC, NVME_CC_EN) == 0, "CC.EN");
	for (int i = 0; i < 100 && !(csts & NVME_CSTS_RDY); i++) {
		REQUIRE(prop_get(c, NVME_REG_CSTS, false, &csts) == 0, "CSTS");
		if (!(csts & NVME_CSTS_RDY))
			usleep(10000);
	}
	REQUIRE(csts & NVME_CSTS_RDY, "CSTS.RDY");
	return 0;
}

/* One host holds many discovery controllers; another's AER must still see the change. */
static int scen_disc_aer(void)
{
	static struct conn hold[256];
	unsigned int n = getenv("TCP_RAW_DISC_HOLD") ? atoi(getenv("TCP_RAW_DISC_HOLD")) : 64;
	int wait_s = getenv("TCP_RAW_WAIT_S") ? atoi(getenv("TCP_RAW_WAIT_S")) : 10;
	const char *attacker = "nqn.2014-08.org.nvmeof.test:disc-holder";
	struct nvme_cmd cmd = { 0 };
	struct conn v;
	uint8_t buf[256];
	int st, plen;

	if (n > 256)
		n = 256;
	for (unsigned int i = 0; i < n; i++)
		REQUIRE(disc_up(&hold[i], attacker) == 0, "holder %u", i);
	REQUIRE(disc_up(&v, g_hostnqn) == 0, "victim");
	cmd.opc = NVME_ADMIN_SET_FEATURES;
	put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_DISC_CHANGE);
	st = run_cmd(&v, &cmd, NULL, 0, false, NULL, 0, NULL);
	REQUIRE(st == 0, "Set Features Async Event Configuration: 0x%x", st);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADMIN_ASYNC_EVENT_REQUEST;
	put_le16(&cmd.cid, 0x7a);
	cmd.flags = 0x40;
	sgl_transport(&cmd, 0);
	REQUIRE(send_capsule(&v, &cmd, NULL, 0) == 0, "send AER");
	printf("ready: %u discovery controllers held, AER outstanding\n", n);
	fflush(stdout);
	{
		struct timeval tv = { wait_s, 0 };

		setsockopt(v.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	plen = recv_pdu(&v, buf, sizeof(buf));
	REQUIRE(plen > 0, "no AER completion within %d s", wait_s);
	REQUIRE(buf[0] == NVME_TCP_PDU_CAPSULE_RESP, "PDU type %u", buf[0]);
	{
		const struct nvme_tcp_rsp *r = (const void *)buf;

		CHECK(get_le16(&r->cqe.cid) == 0x7a, "cid %u", get_le16(&r->cqe.cid));
		printf("AER completed: dw0 0x%08x\n", get_le32(&r->cqe.dw0));
	}
	for (unsigned int i = 0; i < n; i++)
		conn_close(&hold[i]);
	conn_close(&v);
	return 0;
}

/* KATO FFFFFFFFh: the controller gets the largest KATO the target grants, not a wrapped
 * few milliseconds. */
static int scen_kato_max(void)
{
	struct nvme_cmd cmd = { 0 };
	struct nvme_cpl cpl;
	struct conn c;
	int st;

	g_admin_kato = 0xffffffffu;
	REQUIRE(admin_up(&c, false, false) == 0, "admin");
	usleep(1500000);
	cmd.opc = NVME_ADMIN_GET_FEATURES;
	put_le32(&cmd.cdw10, NVME_FEAT_KATO);
	st = run_cmd(&c, &cmd, NULL, 0, false, NULL, 0, &cpl);
	REQUIRE(st == 0, "Get Features KATO after 1.5 s: 0x%x", st);
	printf("KATO granted: %u ms\n", get_le32(&cpl.dw0));
	CHECK(get_le32(&cpl.dw0) >= 60000 && get_le32(&cpl.dw0) % 100 == 0, "KATO granted %u ms",
	      get_le32(&cpl.dw0));
	memset(&cmd, 0, sizeof(cmd));
	cmd.opc = NVME_ADMIN_KEEP_ALIVE;
	st = run_cmd(&c, &cmd, NULL, 0, false, NULL, 0, NULL);
	CHECK(st == 0, "Keep Alive: 0x%x", st);
	conn_close(&c);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
	bool in_all;
} scenarios[] = {
	{ "ic", scen_ic, true },
	{ "admin", scen_admin, true },
	{ "io", scen_io, true },
	{ "io-digest", scen_io_digest, true },
	{ "malformed", scen_malformed, true },
	{ "stress", scen_stress, true },
	{ "perf-read", scen_perf, false },
	{ "perf-read-nosqflow", scen_perf_nosqflow, false },
	{ "perf-write", scen_perf_write, false },
	{ "read", scen_read, false },
	{ "kato-max", scen_kato_max, false },
	{ "disc-aer", scen_disc_aer, false },
};

int main(int argc, char **argv)
{
	bool all, found = false;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PORT SUBNQN SCENARIO|all\n", argv[0]);
		return 2;
	}
	g_port = atoi(argv[1]);
	if (getenv("TCP_RAW_HOSTNQN"))
		g_hostnqn = getenv("TCP_RAW_HOSTNQN");
	if (getenv("TCP_RAW_KATO"))
		g_admin_kato = (uint32_t)strtoul(getenv("TCP_RAW_KATO"), NULL, 0);
	g_subnqn = argv[2];
	all = strcmp(argv[3], "all") == 0;
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		int before = g_failures;

		if (all ? !scenarios[i].in_all : strcmp(argv[3], scenarios[i].name) != 0)
			continue;
		found = true;
		if (scenarios[i].fn() != 0 && g_failures == before)
			g_failures++;
		printf("%s %s\n", g_failures == before ? "PASS" : "FAIL", scenarios[i].name);
	}
	if (!found) {
		fprintf(stderr, "unknown scenario '%s'\n", argv[3]);
		return 2;
	}
	return g_failures ? 1 : 0;
}
