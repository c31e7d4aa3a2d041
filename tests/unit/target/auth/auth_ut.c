/* SPDX-License-Identifier: MIT */
/*
 * The controller's DH-HMAC-CHAP machine (target/auth/dhchap_ctrl.h), driven by a host
 * side written here from common/dhchap_crypto: every hash and DH group, unidirectional and
 * bidirectional, transformed secrets, re-authentication; and the failures with their
 * reason code explanations: wrong response, wrong transaction id, S2 = 0, messages out of
 * order, truncated and oversized messages, hash or DH group not offered.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "auth/dhchap_ctrl.h"
#include "common/dhchap_crypto.h"
#include "common/dhchap_key.h"
#include "common/endian.h"
#include "ut.h"

static const char hostnqn[] = "nqn.2014-08.org.nvmexpress:uuid:0f0e0d0c-0b0a-0908-0706-"
			      "050403020100";
static const char subnqn[] = "nqn.2026-11.io.nvmeof:auth";

/* ---- Keys ----------------------------------------------------------------------------- */

/* A fresh secret in text form: @nn 0 (as is) or 1..3 (transformed with @nqn). */
static void gen_key(size_t len, uint8_t nn, const char *nqn, char *text, size_t tlen)
{
	struct nvme_dhchap_key k = { 0 };

	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_generate(NULL, len, nn, nqn, &k), 0);
	CU_ASSERT_FATAL(nvme_dhchap_key_format(&k, text, tlen) > 0);
	nvme_dhchap_key_clear(&k);
}

/* ---- The host side ---------------------------------------------------------------------- */

struct host {
	struct nvme_dhchap_key key, ctrl_key; /* ctrl_key.secret NULL: unidirectional */
	uint16_t t_id;
	uint8_t hash_id, dhgid, hl;
	uint8_t c1[64], c2[64];
	uint32_t s1, s2;
	struct nvme_dh *dh;
	struct nvme_secret *dh_secret;
	uint8_t buf[DHCHAP_MSG_MAX + 64];
	size_t len;
};

static void host_init(struct host *h, const char *key, const char *ctrl_key)
{
	memset(h, 0, sizeof(*h));
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(key, &h->key, NULL, 0), 0);
	if (ctrl_key)
		CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(ctrl_key, &h->ctrl_key, NULL, 0), 0);
	h->t_id = 0x1234;
}

static void host_fini(struct host *h)
{
	nvme_dhchap_key_clear(&h->key);
	nvme_dhchap_key_clear(&h->ctrl_key);
	nvme_dh_free(h->dh);
	nvme_secret_free(h->dh_secret);
	memset(h, 0, sizeof(*h));
}

static const uint8_t all_hashes[] = { 1, 2, 3 };
static const uint8_t all_dh[] = { 0, 1, 2, 3, 4, 5 };

/* AUTH_Negotiate offering @hashes and @dhs (what the Linux host offers by default). */
static size_t negotiate(uint8_t *buf, uint16_t t_id, const uint8_t *hashes, size_t nh,
			const uint8_t *dhs, size_t nd)
{
	struct nvme_auth_negotiate *n = (void *)buf;
	struct nvme_auth_protocol_desc *d = (void *)(buf + sizeof(*n));

	memset(buf, 0, NVME_AUTH_NEGOTIATE_LEN(1));
	n->auth_type = NVME_AUTH_TYPE_COMMON;
	n->auth_id = NVME_AUTH_ID_NEGOTIATE;
	put_le16(n->t_id, t_id);
	n->napd = 1;
	d->authid = NVME_AUTH_PROTO_DHCHAP;
	d->halen = (uint8_t)nh;
	d->dhlen = (uint8_t)nd;
	memcpy(d->idlist, hashes, nh);
	memcpy(d->idlist + NVME_AUTH_DESC_DH_OFF, dhs, nd);
	return NVME_AUTH_NEGOTIATE_LEN(1);
}

static int recv_msg(struct dhchap_ctrl *m, struct host *h)
{
	int n = dhchap_ctrl_recv(m, h->buf, sizeof(h->buf));

	h->len = n > 0 ? (size_t)n : 0;
	return n;
}

/* Take the Challenge in h->buf; build the Reply (with a wrong R1 when @corrupt). */
static void host_reply(struct host *h, bool corrupt, size_t *len)
{
	const struct nvme_dhchap_challenge *c = (const void *)h->buf;
	uint8_t out[DHCHAP_MSG_MAX];
	struct nvme_dhchap_reply *r = (void *)out;
	struct nvme_secret *kh = NULL;
	size_t dhvlen = get_le16(c->dhvlen);
	struct nvme_dhchap_resp_in in;

	CU_ASSERT_EQUAL_FATAL(c->auth_type, NVME_AUTH_TYPE_DHCHAP);
	CU_ASSERT_EQUAL_FATAL(c->auth_id, NVME_AUTH_ID_CHALLENGE);
	CU_ASSERT_EQUAL(get_le16(c->t_id), h->t_id);
	h->hash_id = c->hashid;
	h->dhgid = c->dhgid;
	h->hl = c->hl;
	CU_ASSERT_EQUAL_FATAL(h->hl, nvme_auth_hash_len(h->hash_id));
	CU_ASSERT_EQUAL_FATAL(h->len, NVME_DHCHAP_CHALLENGE_LEN(h->hl, dhvlen));
	h->s1 = get_le32(c->seqnum);
	CU_ASSERT_NOT_EQUAL(h->s1, 0);
	memcpy(h->c1, h->buf + NVME_DHCHAP_CHALLENGE_CVAL_OFF, h->hl);

	memset(out, 0, sizeof(out));
	if (h->dhgid) {
		CU_ASSERT_EQUAL_FATAL(dhvlen, nvme_dh_value_len(h->dhgid));
		CU_ASSERT_EQUAL_FATAL(nvme_dh_generate(h->dhgid, &h->dh), 0);
		CU_ASSERT_EQUAL_FATAL(
			nvme_dh_shared_secret(h->dh, h->buf + NVME_DHCHAP_CHALLENGE_DHV_OFF(h->hl),
					      dhvlen, &h->dh_secret),
			0);
		CU_ASSERT_EQUAL_FATAL(
			nvme_dh_public(h->dh, out + NVME_DHCHAP_REPLY_DHV_OFF(h->hl), dhvlen), 0);
	} else {
		CU_ASSERT_EQUAL(dhvlen, 0);
	}
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_transform(&h->key, hostnqn, &kh), 0);
	in = (struct nvme_dhchap_resp_in){ .hash_id = h->hash_id,
					   .key = kh,
					   .challenge = h->c1,
					   .seqnum = h->s1,
					   .t_id = h->t_id,
					   .hostnqn = hostnqn,
					   .subsysnqn = subnqn,
					   .dh_secret = h->dh_secret };
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_host_response(&in, out + NVME_DHCHAP_REPLY_RVAL_OFF), 0);
	nvme_secret_free(kh);
	if (corrupt)
		out[NVME_DHCHAP_REPLY_RVAL_OFF] ^= 0x01;
	r->auth_type = NVME_AUTH_TYPE_DHCHAP;
	r->auth_id = NVME_AUTH_ID_REPLY;
	put_le16(r->t_id, h->t_id);
	r->hl = h->hl;
	put_le16(r->dhvlen, (uint16_t)dhvlen);
	if (h->ctrl_key.secret) {
		for (unsigned int i = 0; i < h->hl; i++)
			h->c2[i] = (uint8_t)(0x5a ^ i);
		memcpy(out + NVME_DHCHAP_REPLY_CVAL_OFF(h->hl), h->c2, h->hl);
		h->s2 = 0x00c0ffee;
		r->cvalid = NVME_DHCHAP_REPLY_CVALID;
	}
	put_le32(r->seqnum, h->s2);
	*len = NVME_DHCHAP_REPLY_LEN(h->hl, dhvlen);
	memcpy(h->buf, out, *len);
}

/* Check the Success1 in h->buf; true when R2 (if any) is right. */
static bool host_success1(struct host *h)
{
	const struct nvme_dhchap_success1 *s = (const void *)h->buf;
	uint8_t r2[64];
	struct nvme_secret *kc = NULL;
	struct nvme_dhchap_resp_in in;
	bool ok;

	CU_ASSERT_EQUAL_FATAL(s->auth_type, NVME_AUTH_TYPE_DHCHAP);
	CU_ASSERT_EQUAL_FATAL(s->auth_id, NVME_AUTH_ID_SUCCESS1);
	CU_ASSERT_EQUAL(get_le16(s->t_id), h->t_id);
	CU_ASSERT_EQUAL(s->hl, h->hl);
	if (!h->ctrl_key.secret) {
		CU_ASSERT_EQUAL(s->rvalid, 0);
		CU_ASSERT_EQUAL(h->len, sizeof(*s));
		return true;
	}
	CU_ASSERT_EQUAL_FATAL(s->rvalid, NVME_DHCHAP_SUCCESS1_RVALID);
	CU_ASSERT_EQUAL_FATAL(h->len, NVME_DHCHAP_SUCCESS1_LEN(h->hl));
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_transform(&h->ctrl_key, subnqn, &kc), 0);
	in = (struct nvme_dhchap_resp_in){ .hash_id = h->hash_id,
					   .key = kc,
					   .challenge = h->c2,
					   .seqnum = h->s2,
					   .t_id = h->t_id,
					   .hostnqn = hostnqn,
					   .subsysnqn = subnqn,
					   .dh_secret = h->dh_secret };
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_ctrl_response(&in, r2), 0);
	nvme_secret_free(kc);
	ok = !memcmp(r2, h->buf + NVME_DHCHAP_SUCCESS1_RVAL_OFF, h->hl);
	return ok;
}

static size_t success2(uint8_t *buf, uint16_t t_id)
{
	struct nvme_dhchap_success2 *s = (void *)buf;

	memset(s, 0, sizeof(*s));
	s->auth_type = NVME_AUTH_TYPE_DHCHAP;
	s->auth_id = NVME_AUTH_ID_SUCCESS2;
	put_le16(s->t_id, t_id);
	return sizeof(*s);
}

static size_t failure2(uint8_t *buf, uint16_t t_id, uint8_t exp)
{
	struct nvme_auth_failure *f = (void *)buf;

	memset(f, 0, sizeof(*f));
	f->auth_type = NVME_AUTH_TYPE_COMMON;
	f->auth_id = NVME_AUTH_ID_FAILURE2;
	put_le16(f->t_id, t_id);
	f->rescode = NVME_AUTH_FAIL_REASON_FAILED;
	f->rescode_exp = exp;
	return sizeof(*f);
}

/* The next Receive must be an AUTH_Failure1 with @exp, and the machine then FAILED. */
static void expect_failure1(struct dhchap_ctrl *m, struct host *h, uint8_t exp)
{
	const struct nvme_auth_failure *f = (const void *)h->buf;

	CU_ASSERT_EQUAL_FATAL(m->state, DHCHAP_FAILURE1);
	CU_ASSERT_EQUAL(recv_msg(m, h), (int)sizeof(*f));
	CU_ASSERT_EQUAL(f->auth_type, NVME_AUTH_TYPE_COMMON);
	CU_ASSERT_EQUAL(f->auth_id, NVME_AUTH_ID_FAILURE1);
	CU_ASSERT_EQUAL(f->rescode, NVME_AUTH_FAIL_REASON_FAILED);
	CU_ASSERT_EQUAL(f->rescode_exp, exp);
	if (f->rescode_exp != exp)
		fprintf(stderr, "\n  expected %s, got %s\n", dhchap_failure_name(exp),
			dhchap_failure_name(f->rescode_exp));
	CU_ASSERT_EQUAL(m->state, DHCHAP_FAILED);
	CU_ASSERT_FALSE(m->authenticated);
}

/* ---- One whole exchange ----------------------------------------------------------------- */

struct run {
	const char *hash, *dhgroup; /* the controller's settings */
	uint8_t want_hash, want_dh;
	bool bidi;
	uint8_t nn; /* secrets transformed with NN = 1..3, or 0 */
};

static void run_exchange(const struct run *r)
{
	char hk[NVME_DHCHAP_KEY_TEXT_MAX], ck[NVME_DHCHAP_KEY_TEXT_MAX], err[200];
	size_t klen = r->nn ? nvme_auth_hash_len(r->nn) : 32;
	struct dhchap_host_conf *conf = NULL;
	struct dhchap_ctrl m;
	struct host h;
	size_t len;

	gen_key(klen, r->nn, hostnqn, hk, sizeof(hk));
	gen_key(klen, r->nn, subnqn, ck, sizeof(ck));
	CU_ASSERT_EQUAL_FATAL(dhchap_host_conf_create(hk, r->bidi ? ck : NULL, r->hash, r->dhgroup,
						      &conf, err, sizeof(err)),
			      0);
	dhchap_ctrl_init(&m, conf, hostnqn, subnqn);
	dhchap_host_conf_put(conf); /* the machine holds its own reference */
	host_init(&h, hk, r->bidi ? ck : NULL);

	len = negotiate(h.buf, h.t_id, all_hashes, 3, all_dh, 6);
	dhchap_ctrl_send(&m, h.buf, len);
	CU_ASSERT_EQUAL_FATAL(m.state, DHCHAP_CHALLENGE);
	CU_ASSERT_FATAL(recv_msg(&m, &h) > 0);
	CU_ASSERT_EQUAL(m.state, DHCHAP_REPLY);
	CU_ASSERT_EQUAL(((struct nvme_dhchap_challenge *)(void *)h.buf)->hashid, r->want_hash);
	CU_ASSERT_EQUAL(((struct nvme_dhchap_challenge *)(void *)h.buf)->dhgid, r->want_dh);
	host_reply(&h, false, &len);
	dhchap_ctrl_send(&m, h.buf, len);
	CU_ASSERT_EQUAL_FATAL(m.state, DHCHAP_SUCCESS1);
	CU_ASSERT_FATAL(recv_msg(&m, &h) > 0);
	CU_ASSERT_TRUE(host_success1(&h));
	if (r->bidi) {
		CU_ASSERT_EQUAL(m.state, DHCHAP_SUCCESS2);
		CU_ASSERT_FALSE(m.authenticated);
		len = success2(h.buf, h.t_id);
		dhchap_ctrl_send(&m, h.buf, len);
	}
	CU_ASSERT_EQUAL(m.state, DHCHAP_DONE);
	CU_ASSERT_TRUE(m.authenticated);
	CU_ASSERT_PTR_NULL(m.dh);
	CU_ASSERT_PTR_NULL(m.dh_secret);
	dhchap_ctrl_fini(&m);
	host_fini(&h);
}

static void test_hashes(void)
{
	static const struct run runs[] = {
		{ "hmac(sha256)", "null", 1, 0, false, 0 },
		{ "hmac(sha384)", "null", 2, 0, false, 0 },
		{ "hmac(sha512)", "null", 3, 0, false, 0 },
		{ "hmac(sha256)", "null", 1, 0, true, 0 },
		{ NULL, NULL, 1, 0, false, 0 }, /* nothing set: the host's first choices */
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		run_exchange(&runs[i]);
}

static void test_dh_groups(void)
{
	static const struct run runs[] = {
		{ "hmac(sha256)", "ffdhe2048", 1, 1, false, 0 },
		{ "hmac(sha384)", "ffdhe3072", 2, 2, true, 0 },
		{ "hmac(sha512)", "ffdhe4096", 3, 3, true, 0 },
		{ "hmac(sha256)", "ffdhe6144", 1, 4, false, 0 },
		{ "hmac(sha512)", "ffdhe8192", 3, 5, true, 0 },
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		run_exchange(&runs[i]);
}

static void test_transformed_keys(void)
{
	static const struct run runs[] = {
		{ "hmac(sha256)", "null", 1, 0, true, 1 },
		{ "hmac(sha384)", "ffdhe2048", 2, 1, true, 2 },
		{ "hmac(sha512)", "null", 3, 0, true, 3 },
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		run_exchange(&runs[i]);
}

/* ---- Failures ----------------------------------------------------------------------------- */

struct fixture {
	struct dhchap_ctrl m;
	struct host h;
	char hk[NVME_DHCHAP_KEY_TEXT_MAX], ck[NVME_DHCHAP_KEY_TEXT_MAX];
};

static void fx_init(struct fixture *f, const char *hash, const char *dh, bool ctrl_conf,
		    bool host_bidi)
{
	struct dhchap_host_conf *conf = NULL;

	gen_key(32, 0, NULL, f->hk, sizeof(f->hk));
	gen_key(32, 0, NULL, f->ck, sizeof(f->ck));
	CU_ASSERT_EQUAL_FATAL(dhchap_host_conf_create(f->hk, ctrl_conf ? f->ck : NULL, hash, dh,
						      &conf, NULL, 0),
			      0);
	dhchap_ctrl_init(&f->m, conf, hostnqn, subnqn);
	dhchap_host_conf_put(conf);
	host_init(&f->h, f->hk, host_bidi ? f->ck : NULL);
}

static void fx_fini(struct fixture *f)
{
	dhchap_ctrl_fini(&f->m);
	host_fini(&f->h);
}

/* Negotiate and fetch the Challenge; h.buf then holds the Reply, *len its length. */
static void fx_to_reply(struct fixture *f, bool corrupt, size_t *len)
{
	*len = negotiate(f->h.buf, f->h.t_id, all_hashes, 3, all_dh, 6);
	dhchap_ctrl_send(&f->m, f->h.buf, *len);
	CU_ASSERT_FATAL(recv_msg(&f->m, &f->h) > 0);
	host_reply(&f->h, corrupt, len);
}

static void test_wrong_response(void)
{
	struct fixture f;
	size_t len;

	fx_init(&f, "hmac(sha256)", "ffdhe2048", false, false);
	fx_to_reply(&f, true, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_FAILED);
	/* A final state: nothing more is accepted, not even a new Negotiate. */
	len = negotiate(f.h.buf, 7, all_hashes, 3, all_dh, 6);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_EQUAL(f.m.state, DHCHAP_FAILED);
	fx_fini(&f);

	/* The host's secret differs from the configured one. */
	fx_init(&f, "hmac(sha512)", "null", false, false);
	nvme_dhchap_key_clear(&f.h.key);
	gen_key(32, 0, NULL, f.hk, sizeof(f.hk));
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(f.hk, &f.h.key, NULL, 0), 0);
	fx_to_reply(&f, false, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_FAILED);
	fx_fini(&f);
}

static void test_bad_transaction(void)
{
	struct fixture f;
	size_t len;

	fx_init(&f, NULL, NULL, false, false);
	fx_to_reply(&f, false, &len);
	put_le16(((struct nvme_dhchap_reply *)(void *)f.h.buf)->t_id, 0x4321);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	/* The Failure1 carries the transaction's own T_ID. */
	CU_ASSERT_EQUAL(get_le16(((struct nvme_auth_failure *)(void *)f.h.buf)->t_id), 0x1234);
	fx_fini(&f);

	/* Success2 of another transaction. */
	fx_init(&f, NULL, NULL, true, true);
	fx_to_reply(&f, false, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_FATAL(recv_msg(&f.m, &f.h) > 0);
	CU_ASSERT_TRUE(host_success1(&f.h));
	len = success2(f.h.buf, 0x1235);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	fx_fini(&f);
}

static void test_bad_seqnum(void)
{
	struct fixture f;
	size_t len;

	/* C2 with S2 = 0 asks for a generated PSK: not without secure channel concatenation. */
	fx_init(&f, NULL, NULL, true, true);
	fx_to_reply(&f, false, &len);
	put_le32(((struct nvme_dhchap_reply *)(void *)f.h.buf)->seqnum, 0);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	fx_fini(&f);

	/* S1 is part of R1: a response computed for another S1 is wrong. */
	fx_init(&f, NULL, NULL, false, false);
	len = negotiate(f.h.buf, f.h.t_id, all_hashes, 3, all_dh, 6);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_FATAL(recv_msg(&f.m, &f.h) > 0);
	put_le32(((struct nvme_dhchap_challenge *)(void *)f.h.buf)->seqnum, 1);
	host_reply(&f.h, false, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_FAILED);
	fx_fini(&f);
}

static void test_out_of_order(void)
{
	struct fixture f;
	size_t len;

	/* A Reply before any Negotiate. */
	fx_init(&f, NULL, NULL, false, false);
	memset(f.h.buf, 0, 64);
	f.h.buf[0] = NVME_AUTH_TYPE_DHCHAP;
	f.h.buf[1] = NVME_AUTH_ID_REPLY;
	f.h.buf[6] = 32;
	dhchap_ctrl_send(&f.m, f.h.buf, NVME_DHCHAP_REPLY_LEN(32, 0));
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	fx_fini(&f);

	/* A Receive when no message is due: Failure1 right away. */
	fx_init(&f, NULL, NULL, false, false);
	CU_ASSERT_EQUAL(recv_msg(&f.m, &f.h), (int)sizeof(struct nvme_auth_failure));
	CU_ASSERT_EQUAL(f.h.buf[1], NVME_AUTH_ID_FAILURE1);
	CU_ASSERT_EQUAL(f.h.buf[7], NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	CU_ASSERT_EQUAL(f.m.state, DHCHAP_FAILED);
	fx_fini(&f);

	/* Negotiate twice without reading the Challenge: the second restarts, new T_ID. */
	fx_init(&f, NULL, NULL, false, false);
	len = negotiate(f.h.buf, 1, all_hashes, 3, all_dh, 6);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	f.h.t_id = 2;
	fx_to_reply(&f, false, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_EQUAL(f.m.state, DHCHAP_SUCCESS1);
	fx_fini(&f);

	/* Success2 in a unidirectional exchange, after Success1. */
	fx_init(&f, NULL, NULL, false, false);
	fx_to_reply(&f, false, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_FATAL(recv_msg(&f.m, &f.h) > 0);
	CU_ASSERT_EQUAL(f.m.state, DHCHAP_DONE);
	len = success2(f.h.buf, f.h.t_id);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	fx_fini(&f);

	/* A controller's message sent by the host; an unknown AUTH-Type. */
	fx_init(&f, NULL, NULL, false, false);
	memset(f.h.buf, 0, 16);
	f.h.buf[0] = NVME_AUTH_TYPE_DHCHAP;
	f.h.buf[1] = NVME_AUTH_ID_CHALLENGE;
	dhchap_ctrl_send(&f.m, f.h.buf, 16);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	fx_fini(&f);
	fx_init(&f, NULL, NULL, false, false);
	memset(f.h.buf, 0, 16);
	f.h.buf[0] = 0x7f;
	dhchap_ctrl_send(&f.m, f.h.buf, 16);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	fx_fini(&f);
}

static void test_truncated_oversized(void)
{
	struct fixture f;
	size_t len;

	for (int i = 0; i < 4; i++) {
		fx_init(&f, NULL, NULL, false, false);
		len = negotiate(f.h.buf, f.h.t_id, all_hashes, 3, all_dh, 6);
		switch (i) {
		case 0:
			len -= 1;
			break; /* truncated descriptor */
		case 1:
			len += 1;
			break; /* a byte past it */
		case 2:
			len = 4;
			break; /* not even the header */
		case 3:
			f.h.buf[7] = 2;
			break; /* NAPD 2, one descriptor there */
		}
		dhchap_ctrl_send(&f.m, f.h.buf, len);
		expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
		fx_fini(&f);
	}
	for (int i = 0; i < 4; i++) {
		fx_init(&f, "hmac(sha256)", "ffdhe2048", false, false);
		fx_to_reply(&f, false, &len);
		switch (i) {
		case 0:
			len -= 1;
			break;
		case 1:
			len += 16;
			break;
		case 2:
			put_le16(((struct nvme_dhchap_reply *)(void *)f.h.buf)->dhvlen, 0);
			len -= 256;
			break; /* no DH value in an ffdhe exchange */
		case 3:
			f.h.buf[6] = 48;
			len += 32;
			break; /* HL of another hash */
		}
		dhchap_ctrl_send(&f.m, f.h.buf, len);
		expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
		fx_fini(&f);
	}
	/* A Receive with too little room: nothing lost, the full one still works. */
	fx_init(&f, NULL, "ffdhe2048", false, false);
	len = negotiate(f.h.buf, f.h.t_id, all_hashes, 3, all_dh, 6);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_EQUAL(dhchap_ctrl_recv(&f.m, f.h.buf, 100), -EMSGSIZE);
	CU_ASSERT_EQUAL(f.m.state, DHCHAP_CHALLENGE);
	CU_ASSERT_EQUAL(recv_msg(&f.m, &f.h), (int)NVME_DHCHAP_CHALLENGE_LEN(32, 256));
	fx_fini(&f);
}

static void test_negotiation(void)
{
	static const uint8_t sha256[] = { 1 }, null_dh[] = { 0 }, junk[] = { 9, 0x40 };
	struct fixture f;
	size_t len;

	fx_init(&f, "hmac(sha512)", NULL, false, false);
	len = negotiate(f.h.buf, 1, sha256, 1, all_dh, 6);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_HASH_UNUSABLE);
	fx_fini(&f);

	fx_init(&f, NULL, NULL, false, false);
	len = negotiate(f.h.buf, 1, junk, 2, all_dh, 6);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_HASH_UNUSABLE);
	fx_fini(&f);

	fx_init(&f, NULL, "ffdhe4096", false, false);
	len = negotiate(f.h.buf, 1, all_hashes, 3, null_dh, 1);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_DHGROUP_UNUSABLE);
	fx_fini(&f);

	fx_init(&f, NULL, NULL, false, false);
	len = negotiate(f.h.buf, 1, all_hashes, 3, all_dh, 6);
	f.h.buf[6] = NVME_AUTH_SC_C_NEWTLSPSK;
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_CONCAT_MISMATCH);
	fx_fini(&f);

	fx_init(&f, NULL, NULL, false, false);
	len = negotiate(f.h.buf, 1, all_hashes, 3, all_dh, 6);
	f.h.buf[8] = 0x02; /* a protocol that is not DH-HMAC-CHAP */
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_PROTOCOL_UNUSABLE);
	fx_fini(&f);

	/* No secret configured for the host. */
	{
		struct dhchap_ctrl m;
		struct host h;

		dhchap_ctrl_init(&m, NULL, hostnqn, subnqn);
		memset(&h, 0, sizeof(h));
		len = negotiate(h.buf, 1, all_hashes, 3, all_dh, 6);
		dhchap_ctrl_send(&m, h.buf, len);
		expect_failure1(&m, &h, NVME_AUTH_FAIL_FAILED);
		dhchap_ctrl_fini(&m);
	}
}

static void test_bidirectional_failures(void)
{
	struct fixture f;
	size_t len;

	/* The host asks for R2 but no controller secret is configured. */
	fx_init(&f, NULL, NULL, false, true);
	fx_to_reply(&f, false, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	expect_failure1(&f.m, &f.h, NVME_AUTH_FAIL_FAILED);
	fx_fini(&f);

	/* The host holds another controller secret: R2 does not verify, it sends Failure2. */
	fx_init(&f, NULL, "ffdhe2048", true, true);
	nvme_dhchap_key_clear(&f.h.ctrl_key);
	gen_key(32, 0, NULL, f.ck, sizeof(f.ck));
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(f.ck, &f.h.ctrl_key, NULL, 0), 0);
	fx_to_reply(&f, false, &len);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_FATAL(recv_msg(&f.m, &f.h) > 0);
	CU_ASSERT_FALSE(host_success1(&f.h));
	len = failure2(f.h.buf, f.h.t_id, NVME_AUTH_FAIL_FAILED);
	dhchap_ctrl_send(&f.m, f.h.buf, len);
	CU_ASSERT_EQUAL(f.m.state, DHCHAP_FAILED);
	CU_ASSERT_TRUE(f.m.host_failed);
	CU_ASSERT_EQUAL(f.m.fail_exp, NVME_AUTH_FAIL_FAILED);
	CU_ASSERT_FALSE(f.m.authenticated);
	fx_fini(&f);
}

static void test_reauthentication(void)
{
	struct dhchap_host_conf *conf2 = NULL;
	struct fixture f;
	size_t len;

	fx_init(&f, "hmac(sha384)", "ffdhe2048", true, true);
	for (int round = 0; round < 3; round++) {
		if (round == 2) {
			/* The keys changed meanwhile: the next exchange uses the new ones. */
			gen_key(32, 0, NULL, f.hk, sizeof(f.hk));
			CU_ASSERT_EQUAL_FATAL(dhchap_host_conf_create(f.hk, f.ck, "hmac(sha384)",
								      "ffdhe2048", &conf2, NULL, 0),
					      0);
			dhchap_ctrl_set_conf(&f.m, conf2);
			dhchap_host_conf_put(conf2);
			nvme_dhchap_key_clear(&f.h.key);
			CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(f.hk, &f.h.key, NULL, 0), 0);
		}
		nvme_dh_free(f.h.dh);
		f.h.dh = NULL;
		nvme_secret_free(f.h.dh_secret);
		f.h.dh_secret = NULL;
		f.h.t_id = (uint16_t)(100 + round);
		fx_to_reply(&f, false, &len);
		dhchap_ctrl_send(&f.m, f.h.buf, len);
		CU_ASSERT_FATAL(recv_msg(&f.m, &f.h) > 0);
		CU_ASSERT_TRUE(host_success1(&f.h));
		len = success2(f.h.buf, f.h.t_id);
		dhchap_ctrl_send(&f.m, f.h.buf, len);
		CU_ASSERT_EQUAL(f.m.state, DHCHAP_DONE);
		CU_ASSERT_TRUE(f.m.authenticated);
	}
	fx_fini(&f);
}

static void test_conf(void)
{
	char hk[NVME_DHCHAP_KEY_TEXT_MAX], err[200];
	struct dhchap_host_conf *a = NULL, *b = NULL;

	gen_key(48, 0, NULL, hk, sizeof(hk));
	CU_ASSERT_EQUAL(dhchap_host_conf_create(hk, NULL, "sha256", NULL, &a, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "hash \"sha256\""));
	CU_ASSERT_EQUAL(dhchap_host_conf_create(hk, NULL, NULL, "ffdhe1024", &a, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "dhgroup \"ffdhe1024\""));
	CU_ASSERT_EQUAL(dhchap_host_conf_create(NULL, hk, NULL, NULL, &a, err, sizeof(err)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "key: missing"));
	CU_ASSERT(dhchap_host_conf_create(hk, "DHHC-1:00:abc:", NULL, NULL, &a, err, sizeof(err)) <
		  0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "ctrl_key:"));
	/* A bad CRC: the message names the problem, never the key. */
	hk[12] = hk[12] == 'A' ? 'B' : 'A';
	CU_ASSERT(dhchap_host_conf_create(hk, NULL, NULL, NULL, &a, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NULL(strstr(err, hk + 10));
	CU_ASSERT_PTR_NULL(a);

	gen_key(32, 0, NULL, hk, sizeof(hk));
	CU_ASSERT_EQUAL_FATAL(
		dhchap_host_conf_create(hk, NULL, "hmac(sha256)", "null", &a, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(
		dhchap_host_conf_create(hk, NULL, "hmac(sha256)", "null", &b, NULL, 0), 0);
	CU_ASSERT_TRUE(dhchap_host_conf_equal(a, b));
	dhchap_host_conf_put(b);
	CU_ASSERT_EQUAL_FATAL(
		dhchap_host_conf_create(hk, NULL, "hmac(sha256)", "ffdhe2048", &b, NULL, 0), 0);
	CU_ASSERT_FALSE(dhchap_host_conf_equal(a, b));
	CU_ASSERT_FALSE(dhchap_host_conf_has_ctrl_key(a));
	dhchap_host_conf_put(a);
	dhchap_host_conf_put(b);

	CU_ASSERT_EQUAL(dhchap_hash_from_name("hmac(sha384)"), NVME_AUTH_HASH_SHA384);
	CU_ASSERT_EQUAL(dhchap_hash_from_name("hmac(md5)"), 0);
	CU_ASSERT_EQUAL(dhchap_dhgroup_from_name("ffdhe6144"), NVME_AUTH_DHGROUP_FFDHE6144);
	CU_ASSERT_EQUAL(dhchap_dhgroup_from_name("null"), NVME_AUTH_DHGROUP_NULL);
	CU_ASSERT_EQUAL(dhchap_dhgroup_from_name("ffdhe"), -1);
	CU_ASSERT_STRING_EQUAL(dhchap_failure_name(NVME_AUTH_FAIL_DHGROUP_UNUSABLE), "DH group not "
										     "usable");
}

int main(void)
{
	static const CU_TestInfo tests[] = {
		{ "SHA-256/384/512, NULL group", test_hashes },
		{ "ffdhe2048..8192, uni- and bidirectional", test_dh_groups },
		{ "transformed secrets (NN 01/02/03)", test_transformed_keys },
		{ "wrong response -> Failure1", test_wrong_response },
		{ "transaction id", test_bad_transaction },
		{ "sequence numbers", test_bad_seqnum },
		{ "messages out of order", test_out_of_order },
		{ "truncated and oversized messages", test_truncated_oversized },
		{ "hash, DH group, protocol, concatenation", test_negotiation },
		{ "bidirectional failures", test_bidirectional_failures },
		{ "re-authentication", test_reauthentication },
		{ "settings", test_conf },
		CU_TEST_INFO_NULL,
	};

	return ut_run("dhchap_ctrl", NULL, NULL, tests);
}
