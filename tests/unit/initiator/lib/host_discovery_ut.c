/* SPDX-License-Identifier: MIT */
/*
 * initiator/discovery.c: discovery log entries decoded from the wire, the whole log read
 * through a discovery controller (fake_ctrlr.c), re-read when GENCTR moves mid-read, and
 * the name tables the CLI prints.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

#include "common/endian.h"
#include "fake_ctrlr.h"
#include "lib/host_ctrlr.h"
#include "ut.h"

static void test_entry_from_wire(void)
{
	struct nvmf_disc_log_entry w;
	struct nvmeof_disc_entry e;

	memset(&w, 0, sizeof(w));
	w.trtype = NVMF_TRTYPE_TCP;
	w.adrfam = NVMF_ADRFAM_IPV6;
	w.subtype = NVMF_SUBTYPE_NVME;
	w.treq = NVMF_TREQ_SECURE_NOT_REQUIRED | NVMF_TREQ_DISABLE_SQFLOW;
	put_le16(&w.portid, 0x1234);
	put_le16(&w.cntlid, 0xffff);
	put_le16(&w.asqsz, 32);
	put_le16(&w.eflags, 3);
	memset(w.trsvcid, ' ', sizeof(w.trsvcid));
	memcpy(w.trsvcid, "4420", 4);
	memset(w.traddr, ' ', sizeof(w.traddr));
	memcpy(w.traddr, "fe80::1", 7);
	memset(w.subnqn, 'q', sizeof(w.subnqn)); /* not NUL-terminated on the wire */
	w.tsas[0] = NVMF_TCP_SECTYPE_TLS13;
	disc_entry_from_wire(&w, &e);
	CU_ASSERT_EQUAL(e.trtype, 3);
	CU_ASSERT_EQUAL(e.adrfam, 2);
	CU_ASSERT_EQUAL(e.subtype, 2);
	CU_ASSERT_EQUAL(e.treq, 6);
	CU_ASSERT_EQUAL(e.portid, 0x1234);
	CU_ASSERT_EQUAL(e.cntlid, 0xffff);
	CU_ASSERT_EQUAL(e.asqsz, 32);
	CU_ASSERT_EQUAL(e.eflags, 3);
	CU_ASSERT_EQUAL(e.sectype, 2);
	CU_ASSERT_STRING_EQUAL(e.trsvcid, "4420");
	CU_ASSERT_STRING_EQUAL(e.traddr, "fe80::1");
	CU_ASSERT_EQUAL(strlen(e.subnqn), 256);
	/* TSAS means something else for RDMA: no TCP security type */
	w.trtype = NVMF_TRTYPE_RDMA;
	disc_entry_from_wire(&w, &e);
	CU_ASSERT_EQUAL(e.sectype, 0);
}

static struct nvmeof_ctrlr *connect_disc(struct fake_ctrlr *fc)
{
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c = NULL;
	char uri[64];

	nvmeof_opts_init(&o);
	o.hostnqn = "nqn.2014-08.io.nvmeof:test-host";
	o.hostid = "0a1b2c3d-0000-4000-8000-000000000001";
	snprintf(uri, sizeof(uri), "nvme+tcp://127.0.0.1:%u", fc->port);
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect(uri, &o, &c), 0);
	return c;
}

static void test_discover(void)
{
	static const int records[] = { 0, 1, 3, 70 };

	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++) {
		struct fake_ctrlr fc = { .subnqn = NVME_DISCOVERY_NQN, .disc_records = records[i],
					 .mdts = 3 };
		struct nvmeof_disc_entry *e = NULL;
		struct nvmeof_ctrlr *c;
		unsigned int n = 99;
		uint64_t gen = 0;

		CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
		c = connect_disc(&fc);
		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		CU_ASSERT_EQUAL(nvmeof_discover(c, &e, &n, &gen), 0);
		CU_ASSERT_EQUAL(n, (unsigned int)records[i]);
		CU_ASSERT_EQUAL(gen, 5);
		CU_ASSERT_PTR_NOT_NULL(e);
		for (unsigned int k = 0; k < n; k++) {
			char nqn[64];

			snprintf(nqn, sizeof(nqn), "nqn.2026-11.io.nvmeof:disc%u", k);
			CU_ASSERT_STRING_EQUAL(e[k].subnqn, nqn);
			CU_ASSERT_STRING_EQUAL(e[k].traddr, "127.0.0.1");
			CU_ASSERT_STRING_EQUAL(e[k].trsvcid, "4420");
			CU_ASSERT_EQUAL(e[k].portid, k + 1);
			CU_ASSERT_EQUAL(e[k].subtype, k ? 2 : 3);
		}
		/* 70 records = 71 KiB: more than MDTS (32 KiB), read at increasing offsets */
		if (records[i] == 70)
			CU_ASSERT(fc_find(&fc, "get log 0x70 off 32768 len 32768", 0) >= 0);
		nvmeof_disc_free(e);
		nvmeof_ctrlr_disconnect(c);
		fc_stop(&fc);
	}
}

static void test_discover_generation_moves(void)
{
	struct fake_ctrlr fc = { .subnqn = NVME_DISCOVERY_NQN, .disc_records = 2,
				 .disc_bump_once = 3 };
	struct nvmeof_disc_entry *e;
	struct nvmeof_ctrlr *c;
	unsigned int n;
	uint64_t gen;

	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	c = connect_disc(&fc);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* reads: header (gen 5), log (gen 5), header again (gen 6: moved) -> read again */
	CU_ASSERT_EQUAL(nvmeof_discover(c, &e, &n, &gen), 0);
	CU_ASSERT_EQUAL(gen, 6);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT(fc.disc_reads >= 5);
	nvmeof_disc_free(e);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
}

static void test_names(void)
{
	CU_ASSERT_STRING_EQUAL(nvmeof_trtype_name(3), "tcp");
	CU_ASSERT_STRING_EQUAL(nvmeof_trtype_name(1), "rdma");
	CU_ASSERT_STRING_EQUAL(nvmeof_trtype_name(99), "unrecognized");
	CU_ASSERT_STRING_EQUAL(nvmeof_adrfam_name(1), "ipv4");
	CU_ASSERT_STRING_EQUAL(nvmeof_adrfam_name(2), "ipv6");
	CU_ASSERT_STRING_EQUAL(nvmeof_subtype_name(2), "nvme subsystem");
	CU_ASSERT_STRING_EQUAL(nvmeof_subtype_name(3), "current discovery subsystem");
	CU_ASSERT_STRING_EQUAL(nvmeof_subtype_name(1), "discovery subsystem referral");
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "entry decoding", test_entry_from_wire },
		{ "whole log through a discovery controller", test_discover },
		{ "log re-read when GENCTR moves", test_discover_generation_moves },
		{ "names", test_names },
		CU_TEST_INFO_NULL,
	};

	return ut_run("initiator_discovery", NULL, NULL, tests);
}
