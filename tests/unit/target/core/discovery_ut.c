/* SPDX-License-Identifier: MIT */
/* The discovery log page: entries, host filtering, addresses, LPO windows, GENCTR and the
 * discovery log change notice. */
#include <string.h>

#include "common/endian.h"
#include "common/secret.h"
#include "common/tls_psk.h"
#include "tests/unit/target/core/fakes.h"

#define SUB_A "nqn.2026-11.io.nvmeof:a"
#define SUB_B "nqn.2026-11.io.nvmeof:b"
#define HDR sizeof(struct nvmf_disc_log_hdr)
#define ENT sizeof(struct nvmf_disc_log_entry)

static struct nvmf_tgt *tgt;
static struct nvmf_port *p1, *p2, *p3, *p4;
static uint8_t page[16 * 1024];

static void setup(void)
{
	struct nvmf_tgt_opts o;
	struct nvmf_subsys *a, *b;
	char err[64];

	fake_bdev_reset();
	fake_msg_defer = false;
	nvmf_tgt_opts_default(&o);
	tgt = nvmf_tgt_create(&o);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tgt);
	a = nvmf_subsys_create(tgt, SUB_A);
	b = nvmf_subsys_create(tgt, SUB_B);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	nvmf_subsys_set_allow_any_host(a, true);
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(b, FAKE_HOSTNQN2), 0);
	{
		struct nvmf_port_opts po = { .portid = 1, .traddr = "127.0.0.1",
					     .trsvcid = "4420" };

		p1 = nvmf_port_create(tgt, &po, err, sizeof(err));
	}
	{
		struct nvmf_port_opts po = { .portid = 2, .traddr = "127.0.0.1",
					     .discovery_only = true };

		p2 = nvmf_port_create(tgt, &po, err, sizeof(err));
	}
	{
		struct nvmf_port_opts po = { .portid = 3, .traddr = "0.0.0.0", .trsvcid = "4421",
					     .advertise = "192.0.2.7" };

		p3 = nvmf_port_create(tgt, &po, err, sizeof(err));
	}
	{
		struct nvmf_port_opts po = { .portid = 4, .traddr = "::", .trsvcid = "4422" };

		p4 = nvmf_port_create(tgt, &po, err, sizeof(err));
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(p1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p3);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p4);
	CU_ASSERT_EQUAL(p2->trsvcid[0], '8'); /* discovery listener defaults to 8009 */
	CU_ASSERT_EQUAL(p4->adrfam, NVMF_ADRFAM_IPV6);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p1, a), 0);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p1, b), 0);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p1, a), 0); /* idempotent */
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p2, a), -EINVAL);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p3, a), 0);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p4, a), 0);
	CU_ASSERT_EQUAL(nvmf_referral_add(tgt, 9, "tcp", "ipv4", "192.0.2.99", "8009"), 0);
}

static void disc_connect(struct fake_qpair *q, struct nvmf_port *port, const char *hostnqn)
{
	struct fake_connect c;

	fake_qpair_init(q, tgt, port, &fake_reactor[0]);
	fake_connect_defaults(&c, 0);
	c.subnqn = NVME_DISCOVERY_NQN;
	c.hostnqn = hostnqn;
	CU_ASSERT_EQUAL_FATAL(fake_connect(q, &c, NULL), 0);
	CU_ASSERT_EQUAL_FATAL(fake_prop_set(q, NVME_REG_CC, NVME_CC_EN), 0);
}

static uint16_t disc_log(struct fake_qpair *q, uint32_t len, uint64_t lpo)
{
	struct nvme_cmd cmd;
	uint32_t numd = len / 4 - 1;

	fake_cmd(&cmd, NVME_ADMIN_GET_LOG_PAGE, 0);
	put_le32(&cmd.cdw10, NVME_LOG_DISCOVERY | (numd & 0xffff) << 16);
	put_le32(&cmd.cdw11, numd >> 16);
	put_le32(&cmd.cdw12, (uint32_t)lpo);
	put_le32(&cmd.cdw13, (uint32_t)(lpo >> 32));
	memset(page, 0xcc, sizeof(page));
	return fake_exec(q, &cmd, page, len, NULL);
}

static const struct nvmf_disc_log_entry *entry(unsigned int i)
{
	return (const struct nvmf_disc_log_entry *)(page + HDR + i * ENT);
}

static void test_entries(void)
{
	struct fake_qpair q;
	const struct nvmf_disc_log_entry *e;
	const struct nvmf_disc_log_hdr *h = (const void *)page;

	setup();
	disc_connect(&q, p1, FAKE_HOSTNQN);
	CU_ASSERT_EQUAL(disc_log(&q, HDR + 8 * ENT, 0), 0);
	/* p1: current + A (B is not for this host); p2: current; p3: current + A; p4: current
	 * + A; one referral */
	CU_ASSERT_EQUAL(get_le64(&h->numrec), 8);
	CU_ASSERT_EQUAL(get_le16(&h->recfmt), 0);

	e = entry(0);
	CU_ASSERT_EQUAL(e->subtype, NVMF_SUBTYPE_DISCOVERY_CURRENT);
	CU_ASSERT_STRING_EQUAL(e->subnqn, NVME_DISCOVERY_NQN);
	e = entry(1);
	CU_ASSERT_EQUAL(e->trtype, NVMF_TRTYPE_TCP);
	CU_ASSERT_EQUAL(e->adrfam, NVMF_ADRFAM_IPV4);
	CU_ASSERT_EQUAL(e->subtype, NVMF_SUBTYPE_NVME);
	CU_ASSERT_EQUAL(e->treq, NVMF_TREQ_SECURE_NOT_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW);
	CU_ASSERT_EQUAL(get_le16(&e->portid), 1);
	CU_ASSERT_EQUAL(get_le16(&e->cntlid), 0xffff);
	CU_ASSERT_EQUAL(get_le16(&e->asqsz), 32);
	CU_ASSERT_STRING_EQUAL(e->trsvcid, "4420");
	CU_ASSERT_STRING_EQUAL(e->traddr, "127.0.0.1");
	CU_ASSERT_STRING_EQUAL(e->subnqn, SUB_A);
	CU_ASSERT_EQUAL(e->tsas[0], NVMF_TCP_SECTYPE_NONE);
	CU_ASSERT_EQUAL(e->tsas[1], 0x5a); /* the transport's disc_entry hook ran */
	e = entry(2);
	CU_ASSERT_EQUAL(e->subtype, NVMF_SUBTYPE_DISCOVERY_CURRENT);
	CU_ASSERT_EQUAL(get_le16(&e->portid), 2);
	CU_ASSERT_STRING_EQUAL(e->trsvcid, "8009");
	e = entry(4);
	CU_ASSERT_EQUAL(e->subtype, NVMF_SUBTYPE_NVME);
	CU_ASSERT_STRING_EQUAL(e->traddr, "192.0.2.7"); /* advertised address */
	e = entry(6);
	CU_ASSERT_EQUAL(e->adrfam, NVMF_ADRFAM_IPV6);
	CU_ASSERT_STRING_EQUAL(e->traddr, "::"); /* wildcard, host came in elsewhere */
	e = entry(7);
	CU_ASSERT_EQUAL(e->subtype, NVMF_SUBTYPE_DISCOVERY_REFERRAL);
	CU_ASSERT_EQUAL(get_le16(&e->portid), 9);
	CU_ASSERT_STRING_EQUAL(e->traddr, "192.0.2.99");
	CU_ASSERT_STRING_EQUAL(e->subnqn, NVME_DISCOVERY_NQN);
	fake_qpair_close(&q);

	/* the other host sees B too; through the wildcard port it sees its local address */
	disc_connect(&q, p4, FAKE_HOSTNQN2);
	CU_ASSERT_EQUAL(disc_log(&q, HDR + 10 * ENT, 0), 0);
	CU_ASSERT_EQUAL(get_le64(&h->numrec), 9);
	CU_ASSERT_STRING_EQUAL(entry(2)->subnqn, SUB_B);
	CU_ASSERT_STRING_EQUAL(entry(7)->traddr, "127.0.0.1");
	CU_ASSERT_EQUAL(entry(9)->subtype, 0); /* beyond the log: zeroes */
	fake_qpair_close(&q);
	nvmf_tgt_destroy(tgt);
}

static void test_lpo_and_genctr(void)
{
	struct fake_qpair q;
	static uint8_t whole[HDR + 8 * ENT];
	uint64_t gen;
	struct nvmf_disc_log_entry e2;

	setup();
	disc_connect(&q, p1, FAKE_HOSTNQN);
	CU_ASSERT_EQUAL(disc_log(&q, sizeof(whole), 0), 0);
	memcpy(whole, page, sizeof(whole));
	gen = get_le64(whole);

	/* header alone, then the log in pieces at various offsets */
	CU_ASSERT_EQUAL(disc_log(&q, 16, 0), 0);
	CU_ASSERT_EQUAL(get_le64(page), gen);
	CU_ASSERT_EQUAL(get_le64(page + 8), 8);
	CU_ASSERT_EQUAL(page[16], 0xcc); /* nothing beyond the requested length */
	for (uint64_t off = 0; off < sizeof(whole); off += 1020) {
		uint32_t n = sizeof(whole) - off < 1020 ? (uint32_t)(sizeof(whole) - off) : 1020;

		CU_ASSERT_EQUAL(disc_log(&q, n, off), 0);
		CU_ASSERT(!memcmp(page, whole + off, n));
	}
	CU_ASSERT_EQUAL(disc_log(&q, ENT, HDR + 2 * ENT), 0);
	memcpy(&e2, page, sizeof(e2));
	CU_ASSERT_EQUAL(e2.subtype, NVMF_SUBTYPE_DISCOVERY_CURRENT);
	CU_ASSERT_EQUAL(get_le16(&e2.portid), 2);
	/* exactly at the end: zeroes; beyond: Invalid Field; unaligned: Invalid Field */
	CU_ASSERT_EQUAL(disc_log(&q, 64, sizeof(whole)), 0);
	CU_ASSERT_EQUAL(page[0], 0);
	CU_ASSERT_EQUAL(disc_log(&q, 64, sizeof(whole) + 4), ST_INVALID_FIELD);
	CU_ASSERT_EQUAL(disc_log(&q, 64, 6), ST_INVALID_FIELD);

	/* stable while nothing changes */
	CU_ASSERT_EQUAL(disc_log(&q, 16, 0), 0);
	CU_ASSERT_EQUAL(get_le64(page), gen);
	/* any change moves it */
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(nvmf_subsys_find(tgt, SUB_B), FAKE_HOSTNQN), 0);
	CU_ASSERT_EQUAL(disc_log(&q, 16, 0), 0);
	CU_ASSERT(get_le64(page) > gen);
	CU_ASSERT_EQUAL(get_le64(page + 8), 9);
	gen = get_le64(page);
	CU_ASSERT_EQUAL(nvmf_referral_remove(tgt, "192.0.2.99", "8009"), 0);
	CU_ASSERT_EQUAL(disc_log(&q, 16, 0), 0);
	CU_ASSERT(get_le64(page) > gen);
	CU_ASSERT_EQUAL(get_le64(page + 8), 8);
	gen = get_le64(page);
	CU_ASSERT_EQUAL(nvmf_port_remove_subsys(p3, nvmf_subsys_find(tgt, SUB_A)), 0);
	CU_ASSERT_EQUAL(disc_log(&q, 16, 0), 0);
	CU_ASSERT(get_le64(page) > gen);
	/* p3 lost A and its discovery entry with it: nothing there this host can use */
	CU_ASSERT_EQUAL(get_le64(page + 8), 6);
	fake_msgs_run();
	fake_qpair_close(&q);
	nvmf_tgt_destroy(tgt);
}

static void test_change_notice(void)
{
	struct fake_qpair q;
	struct fake_req *aer;
	struct nvme_cmd cmd;

	setup();
	disc_connect(&q, p2, FAKE_HOSTNQN);
	fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
	put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
	put_le32(&cmd.cdw11, NVME_AEN_CFG_DISC_CHANGE);
	CU_ASSERT_EQUAL(fake_exec(&q, &cmd, NULL, 0, NULL), 0);
	aer = fake_req_alloc(&q);
	fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(aer->completions, 0);
	CU_ASSERT_EQUAL(nvmf_referral_add(tgt, 10, "tcp", NULL, "192.0.2.100", NULL), 0);
	CU_ASSERT_EQUAL(fake_msgs_run(), 1); /* posted, never run inside the change */
	CU_ASSERT_EQUAL(aer->completions, 1);
	CU_ASSERT_EQUAL(fake_dw0(aer), nvme_aer_dw0(NVME_AER_TYPE_NOTICE,
						    NVME_AER_NOTICE_DISC_CHANGED,
						    NVME_LOG_DISCOVERY));
	/* masked until the log is read */
	fake_req_prep(aer, &cmd, NULL, 0);
	nvmf_req_exec(&aer->req);
	CU_ASSERT_EQUAL(nvmf_referral_remove(tgt, "192.0.2.100", NULL), 0);
	fake_msgs_run();
	CU_ASSERT_EQUAL(aer->completions, 0);
	CU_ASSERT_EQUAL(disc_log(&q, 1024, 0), 0);
	CU_ASSERT_EQUAL(nvmf_subsys_add_host(nvmf_subsys_find(tgt, SUB_B), "nqn.x:y"), 0);
	fake_msgs_run();
	CU_ASSERT_EQUAL(aer->completions, 1);
	fake_req_free(aer);
	fake_qpair_close(&q);
	nvmf_tgt_destroy(tgt);
}

/* More discovery controllers than the 64 once collected per change: every one of them
 * gets the notice, one posted message each however many changes come before it runs. */
static void test_notice_reaches_all(void)
{
	enum { N = 100 };
	static struct fake_qpair q[N];
	static struct fake_req *aer[N];
	struct nvme_cmd cmd;
	unsigned int done = 0, sent;

	setup();
	for (unsigned int i = 0; i < N; i++) {
		disc_connect(&q[i], p2, i < N - 1 ? FAKE_HOSTNQN : FAKE_HOSTNQN2);
		fake_cmd(&cmd, NVME_ADMIN_SET_FEATURES, 0);
		put_le32(&cmd.cdw10, NVME_FEAT_ASYNC_EVENT);
		put_le32(&cmd.cdw11, NVME_AEN_CFG_DISC_CHANGE);
		CU_ASSERT_EQUAL(fake_exec(&q[i], &cmd, NULL, 0, NULL), 0);
		aer[i] = fake_req_alloc(&q[i]);
		fake_cmd(&cmd, NVME_ADMIN_ASYNC_EVENT_REQUEST, 0);
		fake_req_prep(aer[i], &cmd, NULL, 0);
		nvmf_req_exec(&aer[i]->req);
	}
	sent = fake_msgs_sent;
	CU_ASSERT_EQUAL(nvmf_referral_add(tgt, 10, "tcp", NULL, "192.0.2.100", NULL), 0);
	CU_ASSERT_EQUAL(nvmf_referral_add(tgt, 11, "tcp", NULL, "192.0.2.101", NULL), 0);
	CU_ASSERT_EQUAL(fake_msgs_sent - sent, N); /* the second change rode on the first */
	CU_ASSERT_EQUAL(fake_msgs_run(), N);
	for (unsigned int i = 0; i < N; i++)
		done += aer[i]->completions == 1 &&
			fake_dw0(aer[i]) == nvme_aer_dw0(NVME_AER_TYPE_NOTICE,
							 NVME_AER_NOTICE_DISC_CHANGED,
							 NVME_LOG_DISCOVERY);
	CU_ASSERT_EQUAL(done, N);
	CU_ASSERT_EQUAL(aer[N - 1]->completions, 1); /* the last one connected, other host */
	for (unsigned int i = 0; i < N; i++) {
		fake_req_free(aer[i]);
		fake_qpair_close(&q[i]);
	}
	nvmf_tgt_destroy(tgt);
}

static bool has_port(uint16_t portid, uint8_t subtype)
{
	const struct nvmf_disc_log_hdr *h = (const void *)page;

	for (uint64_t i = 0; i < get_le64(&h->numrec); i++)
		if (get_le16(&entry((unsigned int)i)->portid) == portid &&
		    entry((unsigned int)i)->subtype == subtype)
			return true;
	return false;
}

/* A port whose only subsystem the host may not use is not listed to that host, unless it
 * asks through it; an allowed host sees it whole. */
static void test_port_filter(void)
{
	struct fake_qpair q;
	struct nvmf_port *p5;
	char err[64];
	struct nvmf_port_opts po = { .portid = 5, .traddr = "127.0.0.1", .trsvcid = "4425" };

	setup();
	p5 = nvmf_port_create(tgt, &po, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(p5);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p5, nvmf_subsys_find(tgt, SUB_B)), 0);

	disc_connect(&q, p1, FAKE_HOSTNQN); /* not allowed on B */
	CU_ASSERT_EQUAL(disc_log(&q, HDR + 10 * ENT, 0), 0);
	CU_ASSERT_EQUAL(get_le64(page + 8), 8); /* as before p5 came */
	CU_ASSERT(!has_port(5, NVMF_SUBTYPE_DISCOVERY_CURRENT));
	CU_ASSERT(!has_port(5, NVMF_SUBTYPE_NVME));
	CU_ASSERT(has_port(2, NVMF_SUBTYPE_DISCOVERY_CURRENT)); /* discovery-only: kept */
	CU_ASSERT(has_port(9, NVMF_SUBTYPE_DISCOVERY_REFERRAL));
	fake_qpair_close(&q);

	disc_connect(&q, p5, FAKE_HOSTNQN); /* asks through p5: its own entry, no B */
	CU_ASSERT_EQUAL(disc_log(&q, HDR + 10 * ENT, 0), 0);
	CU_ASSERT(has_port(5, NVMF_SUBTYPE_DISCOVERY_CURRENT));
	CU_ASSERT(!has_port(5, NVMF_SUBTYPE_NVME));
	fake_qpair_close(&q);

	disc_connect(&q, p1, FAKE_HOSTNQN2); /* allowed on B */
	CU_ASSERT_EQUAL(disc_log(&q, HDR + 12 * ENT, 0), 0);
	CU_ASSERT(has_port(5, NVMF_SUBTYPE_DISCOVERY_CURRENT));
	CU_ASSERT(has_port(5, NVMF_SUBTYPE_NVME));
	fake_qpair_close(&q);
	nvmf_tgt_destroy(tgt);
}

/* TLS: "not specified" on a TLS 1.3 port is required; a host with a PSK is not shown
 * plain NVMe/TCP ports, one without is not shown TLS-required ports. */
static void test_tls_filter(void)
{
	static const uint8_t raw[32] = { 1, 2, 3 };
	struct nvme_tls_key key = { .hmac = 1 };
	struct fake_qpair q;
	struct nvmf_port *p6, *p7;
	char err[64];
	struct nvmf_port_opts o6 = { .portid = 6,
				     .traddr = "127.0.0.1",
				     .trsvcid = "4426",
				     .sectype = NVMF_TCP_SECTYPE_TLS13 };
	struct nvmf_port_opts o7 = { .portid = 7,
				     .traddr = "127.0.0.1",
				     .trsvcid = "4427",
				     .sectype = NVMF_TCP_SECTYPE_TLS13,
				     .treq = NVMF_TREQ_SECURE_NOT_REQUIRED };

	CU_ASSERT_EQUAL(nvmf_port_treq_resolve(NVMF_TCP_SECTYPE_TLS13,
					       NVMF_TREQ_SECURE_NOT_SPECIFIED),
			NVMF_TREQ_SECURE_REQUIRED);
	CU_ASSERT_EQUAL(nvmf_port_treq_resolve(NVMF_TCP_SECTYPE_TLS13,
					       NVMF_TREQ_SECURE_NOT_REQUIRED),
			NVMF_TREQ_SECURE_NOT_REQUIRED);
	CU_ASSERT_EQUAL(nvmf_port_treq_resolve(NVMF_TCP_SECTYPE_TLS13, NVMF_TREQ_SECURE_REQUIRED),
			NVMF_TREQ_SECURE_REQUIRED);
	CU_ASSERT_EQUAL(nvmf_port_treq_resolve(NVMF_TCP_SECTYPE_NONE,
					       NVMF_TREQ_SECURE_NOT_SPECIFIED),
			NVMF_TREQ_SECURE_NOT_SPECIFIED);

	setup();
	p6 = nvmf_port_create(tgt, &o6, err, sizeof(err));
	p7 = nvmf_port_create(tgt, &o7, err, sizeof(err));
	CU_ASSERT_PTR_NOT_NULL_FATAL(p6);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p7);
	CU_ASSERT_EQUAL(p6->treq, NVMF_TREQ_SECURE_REQUIRED);
	CU_ASSERT_EQUAL(p7->treq, NVMF_TREQ_SECURE_NOT_REQUIRED);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p6, nvmf_subsys_find(tgt, SUB_A)), 0);
	CU_ASSERT_EQUAL(nvmf_port_add_subsys(p7, nvmf_subsys_find(tgt, SUB_A)), 0);
	key.psk = nvme_secret_from(raw, sizeof(raw));
	CU_ASSERT_EQUAL(nvmf_tgt_set_host_psk(tgt, FAKE_HOSTNQN2, &key), 0);
	nvme_secret_free(key.psk);

	disc_connect(&q, p7, FAKE_HOSTNQN); /* no PSK: the optional port, the plain ones */
	CU_ASSERT_EQUAL(disc_log(&q, HDR + 12 * ENT, 0), 0);
	CU_ASSERT(!has_port(6, NVMF_SUBTYPE_NVME));
	CU_ASSERT(!has_port(6, NVMF_SUBTYPE_DISCOVERY_CURRENT));
	CU_ASSERT(has_port(7, NVMF_SUBTYPE_NVME));
	CU_ASSERT(has_port(1, NVMF_SUBTYPE_NVME));
	fake_qpair_close(&q);

	disc_connect(&q, p6, FAKE_HOSTNQN2); /* a PSK: the TLS ports only */
	CU_ASSERT_EQUAL(disc_log(&q, HDR + 12 * ENT, 0), 0);
	CU_ASSERT(has_port(6, NVMF_SUBTYPE_NVME));
	CU_ASSERT(has_port(7, NVMF_SUBTYPE_NVME));
	CU_ASSERT(!has_port(1, NVMF_SUBTYPE_NVME));
	CU_ASSERT(!has_port(2, NVMF_SUBTYPE_DISCOVERY_CURRENT));
	CU_ASSERT(!has_port(4, NVMF_SUBTYPE_NVME));
	CU_ASSERT(has_port(9, NVMF_SUBTYPE_DISCOVERY_REFERRAL));
	fake_qpair_close(&q);
	nvmf_tgt_destroy(tgt);
}

static const CU_TestInfo tests[] = {
	{ "entries", test_entries },
	{ "LPO and GENCTR", test_lpo_and_genctr },
	{ "discovery log change notice", test_change_notice },
	{ "change notice reaches every discovery controller", test_notice_reaches_all },
	{ "ports a host cannot use are not listed", test_port_filter },
	{ "TLS ports: TREQ default and PSK filtering", test_tls_filter },
	CU_TEST_INFO_NULL,
};

int main(void)
{
	return fake_run_suite("discovery", tests);
}
