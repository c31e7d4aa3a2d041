/* SPDX-License-Identifier: MIT */
/*
 * NVMe/TCP hosts that behave like SPDK's (spdk_nvme_perf, spdk_nvme_identify), for
 * spdk-host.sh. Reuses the raw PDU routines of tcp_raw_client.c.
 *
 *   spdk_host_client PORT SUBNQN SCENARIO
 *
 * Scenarios:
 *   empty-hostnqn   admin and I/O Connect with an empty Host NQN, Identify, verified I/O
 *   refused-hostnqn the same Connect must be refused with Connect Invalid Host (a
 *                   subsystem with a host list)
 *   aer-cid-reuse   an Asynchronous Event Request outstanding, then Property Set CC.SHN
 *                   with the AER's command ID, as SPDK's host sends it at shutdown: the
 *                   Property Set is answered (success, and the only response with that
 *                   CID: the AER it gave up on is retired without one), shutdown
 *                   completes, the admin queue stays up and the AER slot is free again.
 */
#define main tcp_raw_client_main
int tcp_raw_client_main(int argc, char **argv);
#include "tcp_raw_client.c"
#undef main

static int connect_as(struct conn *c, uint16_t qid, uint16_t cntlid, const char *hostnqn,
		      int *status)
{
	struct nvmf_connect_cmd cmd = { 0 };
	struct nvmf_connect_data data = { 0 };
	struct nvme_cpl cpl;

	cmd.opc = NVME_OPC_FABRICS;
	cmd.fctype = NVMF_FCTYPE_CONNECT;
	put_le16(&cmd.qid, qid);
	put_le16(&cmd.sqsize, 31);
	put_le32(&cmd.kato, qid == 0 ? 30000 : 0);
	memset(data.hostid, 0x3c, sizeof(data.hostid));
	put_le16(&data.cntlid, cntlid);
	snprintf(data.subnqn, sizeof(data.subnqn), "%s", g_subnqn);
	snprintf(data.hostnqn, sizeof(data.hostnqn), "%s", hostnqn);
	*status = run_cmd(c, (struct nvme_cmd *)&cmd, &data, sizeof(data), true, NULL, 0, &cpl);
	REQUIRE(*status >= 0, "Connect qid %u: no response", qid);
	if (qid == 0 && *status == 0)
		c->cntlid = get_le16(&cpl.dw0);
	return 0;
}

/* ICReq, admin Connect as @hostnqn, CC.EN, CSTS.RDY. */
static int admin_as(struct conn *c, const char *hostnqn)
{
	uint64_t csts = 0;
	int st;

	REQUIRE(conn_open(c) == 0, "open");
	REQUIRE(do_ic(c, false, false) == 0, "IC");
	REQUIRE(connect_as(c, 0, 0xffff, hostnqn, &st) == 0 && st == 0,
		"admin Connect as \"%s\": status 0x%x", hostnqn, st);
	REQUIRE(prop_set(c, NVME_REG_CC,
			 NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT) == 0,
		"CC.EN");
	for (int i = 0; i < 100 && !(csts & NVME_CSTS_RDY); i++) {
		REQUIRE(prop_get(c, NVME_REG_CSTS, false, &csts) == 0, "CSTS");
		if (!(csts & NVME_CSTS_RDY))
			usleep(10000);
	}
	REQUIRE(csts & NVME_CSTS_RDY, "CSTS.RDY");
	return 0;
}

static int identify(struct conn *c, uint8_t cns, uint32_t nsid, void *buf)
{
	struct nvme_cmd cmd = { 0 };

	cmd.opc = NVME_ADMIN_IDENTIFY;
	put_le32(&cmd.nsid, nsid);
	put_le32(&cmd.cdw10, cns);
	return run_cmd(c, &cmd, NULL, 0, false, buf, NVME_IDENTIFY_DATA_SIZE, NULL);
}

static int scen_empty_hostnqn(void)
{
	static struct nvme_id_ctrl id;
	static struct nvme_id_ns ns;
	struct conn admin, io;
	int st;

	REQUIRE(admin_as(&admin, "") == 0, "admin queue without a Host NQN");
	st = identify(&admin, NVME_ID_CNS_CTRL, 0, &id);
	CHECK(st == 0, "Identify Controller: 0x%x", st);
	CHECK(get_le16(&id.cntlid) == admin.cntlid, "cntlid %u", get_le16(&id.cntlid));
	CHECK(get_le16(&id.oacs) & NVME_CTRL_OACS_GET_LBA_STATUS, "OACS 0x%x", get_le16(&id.oacs));
	st = identify(&admin, NVME_ID_CNS_NS, 1, &ns);
	CHECK(st == 0 && get_le64(&ns.nsze) > 0, "Identify Namespace: 0x%x", st);
	REQUIRE(conn_open(&io) == 0, "I/O open");
	REQUIRE(do_ic(&io, false, false) == 0, "I/O IC");
	REQUIRE(connect_as(&io, 1, admin.cntlid, "", &st) == 0 && st == 0,
		"I/O Connect without a Host NQN: 0x%x", st);
	rw(&io, 64, 4096, true, 3);
	rw(&io, 128, 65536, false, 4);
	conn_close(&io);
	conn_close(&admin);
	return 0;
}

static int scen_refused_hostnqn(void)
{
	struct conn c;
	int st;

	REQUIRE(conn_open(&c) == 0, "open");
	REQUIRE(do_ic(&c, false, false) == 0, "IC");
	REQUIRE(connect_as(&c, 0, 0xffff, "", &st) == 0, "Connect");
	CHECK(st == (NVME_STATUS(NVME_SCT_COMMAND_SPECIFIC, NVME_SC_CONNECT_INVALID_HOST) |
		     NVME_STATUS_DNR),
	      "Connect without a Host NQN to a host list: status 0x%x", st);
	conn_close(&c);
	return 0;
}

/* Send an Asynchronous Event Request with @cid; no response is expected yet. */
static int send_aer(struct conn *c, uint16_t cid)
{
	struct nvme_cmd cmd = { 0 };

	cmd.opc = NVME_ADMIN_ASYNC_EVENT_REQUEST;
	cmd.flags = 0x40;
	put_le16(&cmd.cid, cid);
	sgl_transport(&cmd, 0);
	REQUIRE(send_capsule(c, &cmd, NULL, 0) == 0, "send AER cid %u", cid);
	return 0;
}

/* Nothing arrives within @ms. */
static bool quiet(struct conn *c, int ms)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	return poll(&p, 1, ms) == 0;
}

static int scen_aer_cid_reuse(void)
{
	static struct nvme_id_ctrl id;
	struct nvme_cmd cmd = { 0 };
	struct conn c;
	uint64_t csts = 0;
	uint16_t aer_cid;
	int st;

	REQUIRE(admin_as(&c, HOSTNQN) == 0, "admin");
	aer_cid = c.cid++;
	REQUIRE(send_aer(&c, aer_cid) == 0, "AER");
	CHECK(quiet(&c, 200), "a response to the AER before any event");

	/* SPDK's shutdown: CC.SHN = normal, sent with the command ID of the AER */
	c.cid = aer_cid;
	st = prop_set(&c, NVME_REG_CC,
		      NVME_CC_EN | NVME_CC_SHN_NORMAL << NVME_CC_SHN_SHIFT |
			      6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT);
	REQUIRE(st == 0, "Property Set CC.SHN with the AER's command ID failed");
	CHECK(quiet(&c, 200), "another response after the Property Set's (cid %u twice)", aer_cid);
	c.cid = (uint16_t)(aer_cid + 1);
	for (int i = 0; i < 100; i++) {
		REQUIRE(prop_get(&c, NVME_REG_CSTS, false, &csts) == 0, "CSTS after CC.SHN");
		if ((csts & NVME_CSTS_SHST_MASK) >> NVME_CSTS_SHST_SHIFT == NVME_CSTS_SHST_COMPLETE)
			break;
		usleep(10000);
	}
	CHECK((csts & NVME_CSTS_SHST_MASK) >> NVME_CSTS_SHST_SHIFT == NVME_CSTS_SHST_COMPLETE,
	      "CSTS.SHST 0x%llx", (unsigned long long)csts);

	/* the queue is still up: disable, enable again, identify */
	REQUIRE(prop_set(&c, NVME_REG_CC, 0) == 0, "CC.EN = 0");
	for (int i = 0; i < 100 && (csts & NVME_CSTS_RDY); i++) {
		REQUIRE(prop_get(&c, NVME_REG_CSTS, false, &csts) == 0, "CSTS");
		if (csts & NVME_CSTS_RDY)
			usleep(10000);
	}
	REQUIRE(prop_set(&c, NVME_REG_CC,
			 NVME_CC_EN | 6u << NVME_CC_IOSQES_SHIFT | 4u << NVME_CC_IOCQES_SHIFT) == 0,
		"CC.EN again");
	for (int i = 0; i < 100 && !(csts & NVME_CSTS_RDY); i++) {
		REQUIRE(prop_get(&c, NVME_REG_CSTS, false, &csts) == 0, "CSTS");
		if (!(csts & NVME_CSTS_RDY))
			usleep(10000);
	}
	st = identify(&c, NVME_ID_CNS_CTRL, 0, &id);
	CHECK(st == 0, "Identify after the shutdown: 0x%x", st);

	/* the retired AER's slot is free: AERL + 1 AERs are held, the next one is refused */
	for (int i = 0; i <= id.aerl; i++)
		REQUIRE(send_aer(&c, (uint16_t)(1000 + i)) == 0, "AER %d", i);
	CHECK(quiet(&c, 200), "an AER answered with no event");
	cmd.opc = NVME_ADMIN_ASYNC_EVENT_REQUEST;
	c.cid = 2000;
	st = run_cmd(&c, &cmd, NULL, 0, false, NULL, 0, NULL);
	CHECK(st == (NVME_STATUS(NVME_SCT_COMMAND_SPECIFIC,
				 NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED) |
		     NVME_STATUS_DNR),
	      "AER %u: status 0x%x, expected the limit", id.aerl + 2, st);
	conn_close(&c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *s;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PORT SUBNQN SCENARIO\n", argv[0]);
		return 2;
	}
	g_port = atoi(argv[1]);
	g_subnqn = argv[2];
	s = argv[3];
	if (!strcmp(s, "empty-hostnqn"))
		scen_empty_hostnqn();
	else if (!strcmp(s, "refused-hostnqn"))
		scen_refused_hostnqn();
	else if (!strcmp(s, "aer-cid-reuse"))
		scen_aer_cid_reuse();
	else {
		fprintf(stderr, "unknown scenario %s\n", s);
		return 2;
	}
	if (g_failures)
		fprintf(stderr, "%s: %d check(s) failed\n", s, g_failures);
	return g_failures ? 1 : 0;
}
