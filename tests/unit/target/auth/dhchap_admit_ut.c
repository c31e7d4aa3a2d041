/* SPDX-License-Identifier: MIT */
/*
 * Admission of DH-HMAC-CHAP work to the authentication threads (target/auth/dhchap_admit.h):
 * the bounds per host NQN, per peer address and in all, in the order a refusal names them;
 * the lane of re-authentications, never refused whatever is pending; peer addresses
 * without their ports (v4, [v6], too long). Also the machine's side of a refusal: the
 * exchange ends in AUTH_Failure1 whatever message was due.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "auth/dhchap_admit.h"
#include "auth/dhchap_ctrl.h"
#include "common/endian.h"
#include "ut.h"

#define NMAX 64

static struct dhchap_admit_key keys[NMAX];
static const struct dhchap_admit_key *pend[NMAX];
static unsigned int npend;

static const char host_a[] = "nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-4000-8000-00000000000a";
static const char host_b[] = "nqn.2014-08.org.nvmexpress:uuid:aaaaaaaa-0000-4000-8000-00000000000b";

static void reset(void)
{
	memset(keys, 0, sizeof(keys));
	npend = 0;
}

static void add(const char *host, const char *addr)
{
	struct dhchap_admit_key *k = &keys[npend];

	k->hostnqn = host;
	snprintf(k->addr, sizeof(k->addr), "%s", addr);
	pend[npend++] = k;
}

static enum dhchap_admit_verdict admit(const struct dhchap_admit_limits *l, const char *host,
				       const char *addr, bool authenticated)
{
	struct dhchap_admit_key k = { .hostnqn = host, .authenticated = authenticated };

	snprintf(k.addr, sizeof(k.addr), "%s", addr);
	return dhchap_admit(l, pend, npend, &k);
}

/* Table: what is pending, who asks, and the verdict. */
static void test_bounds_table(void)
{
	static const struct dhchap_admit_limits lim = { .per_host = 3, .per_addr = 2, .total = 5 };
	static const struct {
		const char *what;
		unsigned int a_a1, a_a2, b_a2, b_a3; /* pending: host A from .1/.2, B from .2/.3 */
		const char *host, *addr;
		bool authenticated;
		enum dhchap_admit_verdict want;
	} t[] = {
		{ "empty", 0, 0, 0, 0, host_a, "10.0.0.1", false, DHCHAP_ADMIT_SHARED },
		{ "one below each", 1, 1, 0, 0, host_a, "10.0.0.3", false, DHCHAP_ADMIT_SHARED },
		{ "host full", 2, 1, 0, 0, host_a, "10.0.0.4", false, DHCHAP_ADMIT_FULL_HOST },
		{ "host full, other host", 2, 1, 0, 0, host_b, "10.0.0.4", false,
		  DHCHAP_ADMIT_SHARED },
		{ "address full", 1, 0, 0, 1, host_a, "10.0.0.1", false, DHCHAP_ADMIT_SHARED },
		{ "address full (2)", 0, 0, 0, 2, host_a, "10.0.0.3", false,
		  DHCHAP_ADMIT_FULL_ADDR },
		{ "address full, other address", 0, 0, 0, 2, host_b, "10.0.0.4", false,
		  DHCHAP_ADMIT_SHARED },
		{ "total full", 1, 1, 1, 2, host_b, "10.0.0.9", false, DHCHAP_ADMIT_FULL_TOTAL },
		{ "total before host", 2, 1, 0, 2, host_a, "10.0.0.9", false,
		  DHCHAP_ADMIT_FULL_TOTAL },
		{ "host before address", 2, 1, 1, 0, host_a, "10.0.0.2", false,
		  DHCHAP_ADMIT_FULL_HOST },
		{ "re-authentication, all full", 2, 1, 1, 1, host_a, "10.0.0.1", true,
		  DHCHAP_ADMIT_PRIORITY },
		{ "re-authentication, empty", 0, 0, 0, 0, host_b, "10.0.0.3", true,
		  DHCHAP_ADMIT_PRIORITY },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		enum dhchap_admit_verdict v;

		reset();
		for (unsigned int n = 0; n < t[i].a_a1; n++)
			add(host_a, "10.0.0.1");
		for (unsigned int n = 0; n < t[i].a_a2; n++)
			add(host_a, "10.0.0.2");
		for (unsigned int n = 0; n < t[i].b_a2; n++)
			add(host_b, "10.0.0.2");
		for (unsigned int n = 0; n < t[i].b_a3; n++)
			add(host_b, "10.0.0.3");
		v = admit(&lim, t[i].host, t[i].addr, t[i].authenticated);
		if (v != t[i].want)
			fprintf(stderr, "case '%s': %s, expected %s\n", t[i].what,
				dhchap_admit_verdict_name(v), dhchap_admit_verdict_name(t[i].want));
		CU_ASSERT_EQUAL(v, t[i].want);
	}
}

/* Filling the lane one admission at a time stops exactly at each bound. */
static void test_fill_to_bound(void)
{
	struct dhchap_admit_limits lim = { .per_host = 4, .per_addr = 64, .total = 64 };
	unsigned int n = 0;

	reset();
	while (admit(&lim, host_a, "192.0.2.1", false) == DHCHAP_ADMIT_SHARED && n++ < NMAX)
		add(host_a, "192.0.2.1");
	CU_ASSERT_EQUAL(npend, 4);
	CU_ASSERT_EQUAL(admit(&lim, host_a, "192.0.2.7", false), DHCHAP_ADMIT_FULL_HOST);
	/* per address: other host NQNs from the same address */
	lim = (struct dhchap_admit_limits){ .per_host = 64, .per_addr = 3, .total = 64 };
	reset();
	for (n = 0; n < NMAX && admit(&lim, n & 1 ? host_a : host_b, "[2001:db8::1]", false) ==
					DHCHAP_ADMIT_SHARED;
	     n++)
		add(n & 1 ? host_a : host_b, "[2001:db8::1]");
	CU_ASSERT_EQUAL(npend, 3);
	CU_ASSERT_EQUAL(admit(&lim, host_b, "2001:db8::2", false), DHCHAP_ADMIT_SHARED);
	/* in all */
	lim = (struct dhchap_admit_limits){ .per_host = 64, .per_addr = 64, .total = 7 };
	reset();
	for (n = 0; n < NMAX && admit(&lim, host_a, "192.0.2.1", false) == DHCHAP_ADMIT_SHARED; n++)
		add(host_a, "192.0.2.1");
	CU_ASSERT_EQUAL(npend, 7);
	CU_ASSERT_EQUAL(admit(&lim, host_b, "192.0.2.200", false), DHCHAP_ADMIT_FULL_TOTAL);
	CU_ASSERT_EQUAL(admit(&lim, host_b, "192.0.2.200", true), DHCHAP_ADMIT_PRIORITY);
	/* a limit of 0 refuses all work of queues not yet authenticated */
	lim = (struct dhchap_admit_limits){ .per_host = 0, .per_addr = 0, .total = 0 };
	reset();
	CU_ASSERT_EQUAL(admit(&lim, host_a, "192.0.2.1", false), DHCHAP_ADMIT_FULL_TOTAL);
	CU_ASSERT_EQUAL(admit(&lim, host_a, "192.0.2.1", true), DHCHAP_ADMIT_PRIORITY);
}

/* A free thread takes the oldest job of the host and address with the fewest running. */
static void test_pick(void)
{
	struct dhchap_admit_key q[5], r[2];
	const struct dhchap_admit_key *qp[5], *rp[2];

	memset(q, 0, sizeof(q));
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 5; i++) {
		q[i].hostnqn = i < 3 ? host_b : host_a;
		snprintf(q[i].addr, sizeof(q[i].addr), "10.0.0.%d", i < 3 ? 9 : 1);
		qp[i] = &q[i];
	}
	for (int i = 0; i < 2; i++) {
		r[i].hostnqn = host_b;
		snprintf(r[i].addr, sizeof(r[i].addr), "10.0.0.9");
		rp[i] = &r[i];
	}
	/* nothing running: the oldest */
	CU_ASSERT_EQUAL(dhchap_admit_pick(qp, 5, rp, 0), 0);
	/* host B from .9 holds both threads: host A's first job is next, though younger */
	CU_ASSERT_EQUAL(dhchap_admit_pick(qp, 5, rp, 2), 3);
	/* one of B's running: A's still goes first (0 against 2) */
	CU_ASSERT_EQUAL(dhchap_admit_pick(qp, 5, rp, 1), 3);
	/* same NQN as the runners but another address: scores 1 against 2 */
	q[1].addr[7] = '7'; /* 10.0.0.7 */
	CU_ASSERT_EQUAL(dhchap_admit_pick(qp, 3, rp, 2), 1);
	/* all alike: FIFO */
	CU_ASSERT_EQUAL(dhchap_admit_pick(qp, 1, rp, 2), 0);
	CU_ASSERT_EQUAL(dhchap_admit_pick(qp, 0, rp, 2), 0);
}

static void test_addr(void)
{
	static const struct {
		const char *peer, *want;
	} t[] = {
		{ "127.0.0.1:4420", "127.0.0.1" },
		{ "[::1]:4420", "::1" },
		{ "[fe80::1%eth0]:51000", "fe80::1%eth0" },
		{ "fe80::1", "fe80::1" },
		{ "10.1.2.3", "10.1.2.3" },
		{ "", "" },
		{ "[2001:db8:1111:2222:3333:4444:5555:6666:7777:8888:9999]:1",
		  "2001:db8:1111:2222:3333:4444:5555:6666:7777:888" }, /* cut to 47 */
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char out[DHCHAP_ADDR_LEN];

		memset(out, 'x', sizeof(out));
		dhchap_admit_addr(t[i].peer, out, sizeof(out));
		CU_ASSERT_STRING_EQUAL(out, t[i].want);
	}
}

static void test_names(void)
{
	CU_ASSERT_STRING_EQUAL(dhchap_admit_verdict_name(DHCHAP_ADMIT_FULL_HOST), "host");
	CU_ASSERT_STRING_EQUAL(dhchap_admit_verdict_name(DHCHAP_ADMIT_FULL_ADDR), "address");
	CU_ASSERT_STRING_EQUAL(dhchap_admit_verdict_name(DHCHAP_ADMIT_FULL_TOTAL), "total");
	CU_ASSERT_STRING_EQUAL(dhchap_admit_verdict_name(DHCHAP_ADMIT_NVERDICTS), "?");
}

/* A refused Challenge or Reply ends the exchange with AUTH_Failure1 "authentication
 * failed", and the machine in FAILED after the host reads it. */
static void test_refuse(void)
{
	static const char key[] = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
	struct dhchap_host_conf *conf = NULL;
	struct dhchap_ctrl m;
	uint8_t neg[NVME_AUTH_NEGOTIATE_LEN(1)] = { 0 }, out[4096];
	struct nvme_auth_negotiate *n = (void *)neg;
	struct nvme_auth_protocol_desc *d = (void *)(neg + sizeof(*n));
	char err[200];
	int len;

	CU_ASSERT_EQUAL_FATAL(
		dhchap_host_conf_create(key, NULL, NULL, NULL, &conf, err, sizeof(err)), 0);
	n->auth_type = NVME_AUTH_TYPE_COMMON;
	n->auth_id = NVME_AUTH_ID_NEGOTIATE;
	put_le16(n->t_id, 7);
	n->napd = 1;
	d->authid = NVME_AUTH_PROTO_DHCHAP;
	d->halen = 1;
	d->dhlen = 1;
	d->idlist[0] = NVME_AUTH_HASH_SHA256;
	d->idlist[NVME_AUTH_DESC_DH_OFF] = NVME_AUTH_DHGROUP_FFDHE8192;
	dhchap_ctrl_init(&m, conf, host_a, "nqn.2026-11.io.nvmeof:admit");
	dhchap_ctrl_send(&m, neg, sizeof(neg));
	CU_ASSERT_EQUAL(m.state, DHCHAP_CHALLENGE);
	dhchap_ctrl_refuse(&m, NVME_AUTH_FAIL_FAILED); /* instead of the Challenge */
	CU_ASSERT_EQUAL(m.state, DHCHAP_FAILURE1);
	len = dhchap_ctrl_recv(&m, out, sizeof(out));
	CU_ASSERT_EQUAL(len, (int)sizeof(struct nvme_auth_failure));
	CU_ASSERT_EQUAL(out[0], NVME_AUTH_TYPE_COMMON);
	CU_ASSERT_EQUAL(out[1], NVME_AUTH_ID_FAILURE1);
	CU_ASSERT_EQUAL(get_le16(out + 4), 7);
	CU_ASSERT_EQUAL(out[7], NVME_AUTH_FAIL_FAILED);
	CU_ASSERT_EQUAL(m.state, DHCHAP_FAILED);
	CU_ASSERT_PTR_NULL(m.dh);
	dhchap_ctrl_fini(&m);
	dhchap_host_conf_put(conf);
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "bounds per host, address, in all (table)", test_bounds_table },
		{ "filling stops at each bound", test_fill_to_bound },
		{ "the job a free thread takes", test_pick },
		{ "peer address without the port", test_addr },
		{ "verdict names", test_names },
		{ "a refusal ends in AUTH_Failure1", test_refuse },
		CU_TEST_INFO_NULL,
	};

	return ut_run("dhchap_admit", NULL, NULL, tests);
}
