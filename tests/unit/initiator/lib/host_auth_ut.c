/* SPDX-License-Identifier: MIT */
/*
 * initiator/lib/nvme/host_auth.c: the host's DH-HMAC-CHAP.
 *
 * Message level, against the scripted controller of fake_auth.c, which checks every field
 * the host sends byte by byte: each hash with the NULL group and ffdhe2048, uni- and
 * bidirectional; AUTH_Failure1 from the controller; a wrong host secret; a wrong or
 * missing controller response (the host sends AUTH_Failure2); malformed and truncated
 * Challenges, table-driven, each ending in a clean error and the right AUTH_Failure2.
 *
 * Queue level, over NVMe/TCP against fake_ctrlr.c playing fake_auth on every connection:
 * the admin and I/O queues authenticate before anything else, data moves, the result is
 * reported, re-authentication on request, a reconnect authenticates again, a missing or
 * wrong secret and a stalled controller fail connect with a clear message, and no secret
 * reaches an error message or the log.
 */
#include <CUnit/Basic.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dhchap_key.h"
#include "common/endian.h"
#include "fake_auth.h"
#include "fake_ctrlr.h"
#include "lib/nvme/host_auth.h"
#include "lib/queue/host_internal.h"

#define HOSTNQN "nqn.2014-08.io.nvmeof:auth-host"
#define HOSTID  "0a1b2c3d-0000-4000-8000-0000000000a1"
#define SUBNQN  "nqn.2026-11.io.nvmeof:auth"

static char host_key[NVME_DHCHAP_KEY_TEXT_MAX], ctrl_key[NVME_DHCHAP_KEY_TEXT_MAX];
static char other_key[NVME_DHCHAP_KEY_TEXT_MAX], host_key_sha512[NVME_DHCHAP_KEY_TEXT_MAX];

static struct nvme_secret *transformed(const char *text, const char *nqn)
{
	struct nvme_dhchap_key k = { 0 };
	struct nvme_secret *s = NULL;

	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_parse(text, &k, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(nvme_dhchap_key_transform(&k, nqn, &s), 0);
	nvme_dhchap_key_clear(&k);
	return s;
}

/* ---- Message level ---------------------------------------------------------------------- */
struct msg_run {
	struct host_auth ha;
	struct fake_auth fa;
	struct fake_auth_cfg cfg;
	struct nvme_secret *kh, *kc;
	int host_rc; /* first error the host's state machine returned */
};

static void run_setup(struct msg_run *r, uint8_t hash, uint8_t dh, bool bidir,
		      const char *fake_host_key, const char *host_ctrl_key, enum fa_fault fault)
{
	memset(r, 0, sizeof(*r));
	r->cfg = (struct fake_auth_cfg){ .hostnqn = HOSTNQN,
					 .subnqn = SUBNQN,
					 .host_key = fake_host_key,
					 .ctrl_key = ctrl_key,
					 .hash_id = hash,
					 .dhgid = dh,
					 .fault = fault };
	CU_ASSERT_EQUAL_FATAL(fa_init(&r->fa, &r->cfg), 0);
	r->kh = transformed(host_key, HOSTNQN);
	r->kc = bidir ? transformed(host_ctrl_key, SUBNQN) : NULL;
	host_auth_init(&r->ha, r->kh, r->kc, HOSTNQN, SUBNQN, 0x1234);
}

/* Alternate the host's sends and the controller's answers until the host is done. */
static void run_exchange(struct msg_run *r)
{
	uint8_t buf[HOST_AUTH_BUF];

	for (int steps = 0; !host_auth_finished(&r->ha) && steps < 10; steps++) {
		if (host_auth_sending(&r->ha)) {
			int n = host_auth_build(&r->ha, buf, sizeof(buf));

			CU_ASSERT_FATAL(n > 0);
			fa_send(&r->fa, buf, (size_t)n);
		} else {
			int n = fa_recv(&r->fa, buf, sizeof(buf));
			int rc;

			CU_ASSERT_FATAL(n >= 0);
			rc = host_auth_receive(&r->ha, buf, sizeof(buf));
			if (rc && !r->host_rc)
				r->host_rc = rc;
		}
	}
	CU_ASSERT_TRUE(host_auth_finished(&r->ha));
	if (r->fa.err[0])
		fprintf(stderr, "\n  fake controller: %s\n", r->fa.err);
	CU_ASSERT_STRING_EQUAL(r->fa.err, "");
}

static void run_teardown(struct msg_run *r)
{
	host_auth_fini(&r->ha);
	fa_fini(&r->fa);
	nvme_secret_free(r->kh);
	nvme_secret_free(r->kc);
}

static void test_every_hash_and_group(void)
{
	static const uint8_t hashes[] = { NVME_AUTH_HASH_SHA256, NVME_AUTH_HASH_SHA384,
					  NVME_AUTH_HASH_SHA512 };
	static const uint8_t groups[] = { NVME_AUTH_DHGROUP_NULL, NVME_AUTH_DHGROUP_FFDHE2048 };

	for (size_t h = 0; h < 3; h++)
		for (size_t g = 0; g < 2; g++)
			for (int bidir = 0; bidir < 2; bidir++) {
				struct msg_run r;

				run_setup(&r, hashes[h], groups[g], bidir, host_key, ctrl_key,
					  FA_NONE);
				run_exchange(&r);
				if (r.ha.state != HA_DONE)
					fprintf(stderr, "\n  hash %u group %u bidir %d: %s\n",
						hashes[h], groups[g], bidir, r.ha.msg);
				CU_ASSERT_EQUAL(r.ha.state, HA_DONE);
				CU_ASSERT_EQUAL(r.host_rc, 0);
				CU_ASSERT_TRUE(r.fa.authenticated);
				CU_ASSERT_EQUAL(r.fa.bidirectional, bidir);
				CU_ASSERT_FALSE(r.fa.got_failure2);
				CU_ASSERT_EQUAL(r.ha.hash_id, hashes[h]);
				CU_ASSERT_EQUAL(r.ha.dhgid, groups[g]);
				run_teardown(&r);
			}
}

/* A transformed (NN = 03) host secret works as well, and so does a larger group. */
static void test_transformed_key_ffdhe4096(void)
{
	struct msg_run r;

	memset(&r, 0, sizeof(r));
	r.cfg = (struct fake_auth_cfg){ .hostnqn = HOSTNQN,
					.subnqn = SUBNQN,
					.host_key = host_key_sha512,
					.ctrl_key = ctrl_key,
					.hash_id = NVME_AUTH_HASH_SHA512,
					.dhgid = NVME_AUTH_DHGROUP_FFDHE4096 };
	CU_ASSERT_EQUAL_FATAL(fa_init(&r.fa, &r.cfg), 0);
	r.kh = transformed(host_key_sha512, HOSTNQN);
	r.kc = transformed(ctrl_key, SUBNQN);
	host_auth_init(&r.ha, r.kh, r.kc, HOSTNQN, SUBNQN, 7);
	run_exchange(&r);
	CU_ASSERT_EQUAL(r.ha.state, HA_DONE);
	CU_ASSERT_TRUE(r.fa.authenticated);
	run_teardown(&r);
}

static void test_failure1(void)
{
	struct msg_run r;

	run_setup(&r, NVME_AUTH_HASH_SHA256, 0, false, host_key, ctrl_key, FA_FAILURE1_HASH);
	run_exchange(&r);
	CU_ASSERT_EQUAL(r.ha.state, HA_FAILED);
	CU_ASSERT_EQUAL(r.ha.err, -EPROTONOSUPPORT);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.ha.msg, "AUTH_Failure1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.ha.msg, "hash function not usable (reason 01h, explanation "
						"04h)"));
	CU_ASSERT_FALSE(r.fa.got_failure2); /* nothing more after a Failure1 */
	run_teardown(&r);
}

static void test_wrong_host_secret(void)
{
	struct msg_run r;

	run_setup(&r, NVME_AUTH_HASH_SHA384, NVME_AUTH_DHGROUP_FFDHE2048, false, other_key,
		  ctrl_key, FA_NONE);
	run_exchange(&r);
	CU_ASSERT_TRUE(r.fa.r1_bad);
	CU_ASSERT_EQUAL(r.ha.state, HA_FAILED);
	CU_ASSERT_EQUAL(r.ha.err, -EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.ha.msg, "authentication failed (reason 01h, explanation "
						"01h)"));
	CU_ASSERT_FALSE(r.fa.got_failure2);
	run_teardown(&r);
}

/* Bidirectional, and the controller proves a key other than the one the host expects,
 * or corrupts its response, or leaves it out: Failure2, and the error. */
static void test_bad_controller_response(void)
{
	static const struct {
		const char *host_ctrl_key;
		enum fa_fault fault;
		int err;
		uint8_t exp;
		const char *msg;
	} cases[] = {
		{ ctrl_key, FA_BAD_R2, -EACCES, NVME_AUTH_FAIL_FAILED, "does not match" },
		{ other_key, FA_NONE, -EACCES, NVME_AUTH_FAIL_FAILED, "does not match" },
		{ ctrl_key, FA_NO_R2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD, "RVALID 0" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct msg_run r;

		run_setup(&r, NVME_AUTH_HASH_SHA512, NVME_AUTH_DHGROUP_FFDHE2048, true, host_key,
			  cases[i].host_ctrl_key, cases[i].fault);
		run_exchange(&r);
		CU_ASSERT_EQUAL(r.ha.state, HA_FAILED);
		CU_ASSERT_EQUAL(r.ha.err, cases[i].err);
		CU_ASSERT_EQUAL(r.host_rc, cases[i].err);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.ha.msg, cases[i].msg));
		CU_ASSERT_TRUE(r.fa.got_failure2);
		CU_ASSERT_EQUAL(r.fa.failure2_exp, cases[i].exp);
		CU_ASSERT_FALSE(r.fa.authenticated);
		run_teardown(&r);
	}
}

/* A valid Challenge (SHA-256, ffdhe2048) taken apart: every malformation is refused with
 * a clean error, and the AUTH_Failure2 that follows carries the right explanation. */
static void test_malformed_challenge(void)
{
	enum { TRUNC, HL, HASHID, DHGID, DHVLEN, TID, MSGID, TYPE, DHV_ZERO, DHV_ONE, DHV_P };
	static const struct {
		int kind;
		size_t arg;
		int err;
		uint8_t exp;
	} cases[] = {
		{ TRUNC, 0, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ TRUNC, 7, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ TRUNC, 15, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ TRUNC, 16 + 31, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ TRUNC, 16 + 32 + 255, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ HL, 200, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ HL, 48, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ HASHID, 0, -EPROTONOSUPPORT, NVME_AUTH_FAIL_HASH_UNUSABLE },
		{ HASHID, 4, -EPROTONOSUPPORT, NVME_AUTH_FAIL_HASH_UNUSABLE },
		{ DHGID, 6, -EPROTONOSUPPORT, NVME_AUTH_FAIL_DHGROUP_UNUSABLE },
		{ DHVLEN, 0, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ DHVLEN, 255, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ DHVLEN, 0xffff, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ TID, 0, -EPROTO, NVME_AUTH_FAIL_INCORRECT_MESSAGE },
		{ MSGID, NVME_AUTH_ID_SUCCESS1, -EPROTO, NVME_AUTH_FAIL_INCORRECT_MESSAGE },
		{ TYPE, 0x02, -EPROTO, NVME_AUTH_FAIL_INCORRECT_MESSAGE },
		{ DHV_ZERO, 0, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ DHV_ONE, 0, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
		{ DHV_P, 0, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD },
	};
	const size_t hl = 32, full = 16 + 32 + 256;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t buf[HOST_AUTH_BUF], out[64];
		size_t len = full;
		struct msg_run r;
		int n, rc;

		run_setup(&r, NVME_AUTH_HASH_SHA256, NVME_AUTH_DHGROUP_FFDHE2048, false, host_key,
			  ctrl_key, FA_NONE);
		n = host_auth_build(&r.ha, buf, sizeof(buf));
		fa_send(&r.fa, buf, (size_t)n);
		CU_ASSERT_EQUAL((size_t)fa_recv(&r.fa, buf, sizeof(buf)), full);
		switch (cases[i].kind) {
		case TRUNC:
			len = cases[i].arg;
			break;
		case HL:
			buf[6] = (uint8_t)cases[i].arg;
			break;
		case HASHID:
			buf[8] = (uint8_t)cases[i].arg;
			break;
		case DHGID:
			buf[9] = (uint8_t)cases[i].arg;
			break;
		case DHVLEN:
			put_le16(buf + 10, (uint16_t)cases[i].arg);
			break;
		case TID:
			put_le16(buf + 4, 0x1235);
			break;
		case MSGID:
			buf[1] = (uint8_t)cases[i].arg;
			break;
		case TYPE:
			buf[0] = (uint8_t)cases[i].arg;
			break;
		case DHV_ZERO:
			memset(buf + 16 + hl, 0, 256);
			break;
		case DHV_ONE:
			memset(buf + 16 + hl, 0, 256);
			buf[16 + hl + 255] = 1;
			break;
		case DHV_P:
			memset(buf + 16 + hl, 0xff, 256); /* above p */
			break;
		}
		/* what lies past a truncation is not there */
		memset(buf + len, 0xee, sizeof(buf) - len);
		rc = host_auth_receive(&r.ha, buf, len);
		if (rc != cases[i].err)
			fprintf(stderr, "\n  case %zu: rc %d '%s'\n", i, rc, r.ha.msg);
		CU_ASSERT_EQUAL(rc, cases[i].err);
		CU_ASSERT_EQUAL(r.ha.state, HA_SEND_FAILURE2);
		CU_ASSERT_NOT_EQUAL(r.ha.msg[0], '\0');
		n = host_auth_build(&r.ha, out, sizeof(out));
		CU_ASSERT_EQUAL(n, 8);
		CU_ASSERT_EQUAL(out[0], NVME_AUTH_TYPE_COMMON);
		CU_ASSERT_EQUAL(out[1], NVME_AUTH_ID_FAILURE2);
		CU_ASSERT_EQUAL(get_le16(out + 4), 0x1234);
		CU_ASSERT_EQUAL(out[6], NVME_AUTH_FAIL_REASON_FAILED);
		CU_ASSERT_EQUAL(out[7], cases[i].exp);
		fa_send(&r.fa, out, (size_t)n);
		CU_ASSERT_TRUE(r.fa.got_failure2);
		CU_ASSERT_STRING_EQUAL(r.fa.err, "");
		CU_ASSERT_EQUAL(r.ha.state, HA_FAILED);
		run_teardown(&r);
	}
}

/* The machine refuses steps out of order, and a build into a short buffer. */
static void test_out_of_order(void)
{
	struct msg_run r;
	uint8_t buf[64] = { 0 };

	run_setup(&r, NVME_AUTH_HASH_SHA256, 0, false, host_key, ctrl_key, FA_NONE);
	CU_ASSERT_EQUAL(host_auth_receive(&r.ha, buf, sizeof(buf)), -EINVAL);
	CU_ASSERT_EQUAL(host_auth_build(&r.ha, buf, 16), -ENOSPC);
	CU_ASSERT_EQUAL(host_auth_build(&r.ha, buf, sizeof(buf)), -ENOSPC); /* needs 72 */
	CU_ASSERT_EQUAL(r.ha.state, HA_SEND_NEGOTIATE);
	run_teardown(&r);
}

/* ---- Queue level, over NVMe/TCP ------------------------------------------------------------ */
#define MAX_CONNS 32
struct auth_env {
	struct fake_auth_cfg cfg;
	pthread_mutex_t lock;
	struct fake_auth *fas[MAX_CONNS];
	uint16_t qids[MAX_CONNS];
	int n;
};

static void *env_start(void *arg, uint16_t qid)
{
	struct auth_env *e = arg;
	struct fake_auth *fa = calloc(1, sizeof(*fa));

	fa_init(fa, &e->cfg);
	pthread_mutex_lock(&e->lock);
	if (e->n < MAX_CONNS) {
		e->qids[e->n] = qid;
		e->fas[e->n++] = fa;
	}
	pthread_mutex_unlock(&e->lock);
	return fa;
}

static void env_send(void *st, const uint8_t *m, size_t tl)
{
	fa_send(st, m, tl);
}

static int env_recv(void *st, uint8_t *out, size_t al)
{
	return fa_recv(st, out, al);
}

static bool env_authenticated(void *st)
{
	return ((struct fake_auth *)st)->authenticated;
}

static void env_end(void *st)
{
	(void)st; /* kept for the checks; freed by env_fini() */
}

static const struct fc_auth_ops env_ops = {
	.start = env_start,
	.send = env_send,
	.recv = env_recv,
	.authenticated = env_authenticated,
	.end = env_end,
};

static void env_init(struct auth_env *e, struct fake_ctrlr *fc, uint8_t hash, uint8_t dh,
		     const char *fake_host_key, enum fa_fault fault)
{
	memset(e, 0, sizeof(*e));
	pthread_mutex_init(&e->lock, NULL);
	e->cfg = (struct fake_auth_cfg){ .hostnqn = HOSTNQN,
					 .subnqn = SUBNQN,
					 .host_key = fake_host_key,
					 .ctrl_key = ctrl_key,
					 .hash_id = hash,
					 .dhgid = dh,
					 .fault = fault };
	memset(fc, 0, sizeof(*fc));
	fc->subnqn = SUBNQN;
	fc->auth = &env_ops;
	fc->auth_arg = e;
}

/* No field the host sent was wrong on any connection. */
static void env_check_clean(struct auth_env *e)
{
	pthread_mutex_lock(&e->lock);
	for (int i = 0; i < e->n; i++) {
		if (e->fas[i]->err[0])
			fprintf(stderr, "\n  connection %d (qid %u): %s\n", i, e->qids[i],
				e->fas[i]->err);
		CU_ASSERT_STRING_EQUAL(e->fas[i]->err, "");
	}
	pthread_mutex_unlock(&e->lock);
}

static void env_fini(struct auth_env *e)
{
	for (int i = 0; i < e->n; i++) {
		fa_fini(e->fas[i]);
		free(e->fas[i]);
	}
	pthread_mutex_destroy(&e->lock);
}

static void opts_for_test(struct nvmeof_opts *o)
{
	nvmeof_opts_init(o);
	o->hostnqn = HOSTNQN;
	o->hostid = HOSTID;
	o->connect_timeout_ms = 3000;
	o->admin_timeout_ms = 3000;
	o->reconnect_delay = 1;
	o->ctrl_loss_tmo = 10;
}

static char uri_buf[256];
static const char *uri_for(const struct fake_ctrlr *fc)
{
	snprintf(uri_buf, sizeof(uri_buf), "nvme+tcp://127.0.0.1:%u/%s/1", fc->port, SUBNQN);
	return uri_buf;
}

/* The log, to show that no secret is ever in it. */
static char log_text[65536];
static size_t log_len;
static void log_fn(enum nvmeof_log_level level, const char *msg, void *arg)
{
	size_t n = strlen(msg);

	(void)level;
	(void)arg;
	if (log_len + n + 2 < sizeof(log_text)) {
		memcpy(log_text + log_len, msg, n);
		log_len += n;
		log_text[log_len++] = '\n';
		log_text[log_len] = '\0';
	}
}

/* No part of any secret's text in @s. */
static bool no_secret_in(const char *s)
{
	const char *keys[] = { host_key, ctrl_key, other_key, host_key_sha512 };

	for (size_t i = 0; i < 4; i++) {
		char b64[24];

		memcpy(b64, keys[i] + 10, 16); /* a piece of the base64 */
		b64[16] = '\0';
		if (strstr(s, b64))
			return false;
	}
	return true;
}

static void test_queues_authenticate(void)
{
	struct fake_ctrlr fc;
	struct auth_env e;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c = NULL;
	struct nvmeof_ctrlr_info info;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint8_t out[4096], in[4096];

	env_init(&e, &fc, NVME_AUTH_HASH_SHA512, NVME_AUTH_DHGROUP_FFDHE2048, host_key, FA_NONE);
	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	log_len = 0;
	log_text[0] = '\0';
	nvmeof_set_log_fn(log_fn, NULL, NVMEOF_LOG_DEBUG);
	opts_for_test(&o);
	o.io_queues = 2;
	o.dhchap_secret = host_key;
	o.dhchap_ctrl_secret = ctrl_key;
	if (nvmeof_ctrlr_connect(uri_for(&fc), &o, &c)) {
		fprintf(stderr, "\n  connect: %s\n", nvmeof_last_error());
		fc_dump(&fc);
	}
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	/* every queue authenticated before anything else, none was refused */
	CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 0"), 1);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 1"), 1);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 2"), 1);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth required"), 0);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth error"), 0);
	CU_ASSERT(fc_find(&fc, "auth ok qid 0", 0) < fc_find(&fc, "prop get", 0));
	env_check_clean(&e);
	for (int i = 0; i < e.n; i++)
		CU_ASSERT_TRUE(e.fas[i]->bidirectional);

	nvmeof_ctrlr_get_info(c, &info);
	CU_ASSERT_STRING_EQUAL(info.dhchap_hash, "sha512");
	CU_ASSERT_STRING_EQUAL(info.dhchap_dhgroup, "ffdhe2048");
	CU_ASSERT_TRUE(info.dhchap_bidirectional);

	qp = nvmeof_ctrlr_get_qpair(c, 1);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 3);
	CU_ASSERT_EQUAL(nvmeof_write_sync(qp, ns, 16, 8, out, 0), 0);
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 16, 8, in, 0), 0);
	CU_ASSERT_EQUAL(memcmp(in, out, sizeof(in)), 0);

	/* re-authentication on the admin queue: a second transaction on qid 0 */
	CU_ASSERT_EQUAL(nvmeof_ctrlr_reauthenticate(c), 0);
	pthread_mutex_lock(&e.lock);
	{
		int t0 = 0;

		for (int i = 0; i < e.n; i++)
			if (e.qids[i] == 0)
				t0 += e.fas[i]->transactions;
		CU_ASSERT_EQUAL(t0, 2);
	}
	pthread_mutex_unlock(&e.lock);
	env_check_clean(&e);
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 16, 8, in, 0), 0);

	nvmeof_ctrlr_disconnect(c);
	nvmeof_set_log_fn(NULL, NULL, NVMEOF_LOG_ERR);
	CU_ASSERT_PTR_NOT_NULL(strstr(log_text, "authenticated with DH-HMAC-CHAP"));
	CU_ASSERT_TRUE(no_secret_in(log_text));
	fc_stop(&fc);
	env_fini(&e);
}

static void test_reconnect_authenticates(void)
{
	struct fake_ctrlr fc;
	struct auth_env e;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c = NULL;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	uint8_t out[512], in[512];

	env_init(&e, &fc, NVME_AUTH_HASH_SHA256, NVME_AUTH_DHGROUP_NULL, host_key, FA_NONE);
	fc.drop_at_write = 2;
	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.dhchap_secret = host_key;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	memset(out, 0x5a, sizeof(out));
	CU_ASSERT_EQUAL(nvmeof_write_sync(qp, ns, 0, 1, out, 0), 0);
	/* the second write drops every connection: held, reconnected, authenticated again */
	CU_ASSERT_EQUAL(nvmeof_write_sync(qp, ns, 1, 1, out, 0), 0);
	CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, 1, 1, in, 0), 0);
	CU_ASSERT_EQUAL(memcmp(in, out, sizeof(in)), 0);
	CU_ASSERT_EQUAL(fc_count(&fc, "drop at write"), 1);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 0"), 2);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 1"), 2);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth required"), 0);
	env_check_clean(&e);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
	env_fini(&e);
}

struct wio {
	bool done;
	struct nvmeof_cpl cpl;
};

static void wio_cb(void *arg, const struct nvmeof_cpl *cpl)
{
	struct wio *w = arg;

	w->cpl = *cpl;
	w->done = true;
}

/* Every wire slot busy when the connection drops: the reconnect's Connect and its
 * authentication share the one slot lent to them, then the held writes go again. */
static void test_reconnect_full_queue(void)
{
	enum { QD = 4 };
	struct fake_ctrlr fc;
	struct auth_env e;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c = NULL;
	struct nvmeof_qpair *qp;
	struct nvmeof_ns *ns;
	static uint8_t out[QD][512], in[512];
	struct wio w[QD] = { 0 };

	env_init(&e, &fc, NVME_AUTH_HASH_SHA384, NVME_AUTH_DHGROUP_FFDHE2048, host_key, FA_NONE);
	fc.drop_at_write = 1;
	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.queue_depth = QD;
	o.dhchap_secret = host_key;
	o.dhchap_ctrl_secret = ctrl_key;
	CU_ASSERT_EQUAL_FATAL(nvmeof_ctrlr_connect(uri_for(&fc), &o, &c), 0);
	qp = nvmeof_ctrlr_get_qpair(c, 0);
	ns = nvmeof_ctrlr_get_ns(c, 1);
	for (int i = 0; i < QD; i++) {
		struct iovec v = { out[i], sizeof(out[i]) };

		memset(out[i], 0x30 + i, sizeof(out[i]));
		CU_ASSERT_EQUAL(nvmeof_write(qp, ns, (uint64_t)i, 1, &v, 1, 0, wio_cb, &w[i]), 0);
	}
	CU_ASSERT_EQUAL(nvmeof_qpair_drain(qp), 0);
	for (int i = 0; i < QD; i++) {
		CU_ASSERT_TRUE(w[i].done);
		CU_ASSERT_TRUE(nvmeof_cpl_ok(&w[i].cpl));
		CU_ASSERT_EQUAL(nvmeof_read_sync(qp, ns, (uint64_t)i, 1, in, 0), 0);
		CU_ASSERT_EQUAL(memcmp(in, out[i], sizeof(in)), 0);
	}
	CU_ASSERT_EQUAL(fc_count(&fc, "drop at write"), 1);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 1"), 2);
	CU_ASSERT_EQUAL(fc_count(&fc, "auth required"), 0);
	env_check_clean(&e);
	nvmeof_ctrlr_disconnect(c);
	fc_stop(&fc);
	env_fini(&e);
}

/* A controller that does not ask: a host secret alone does not authenticate, a controller
 * secret does (the host wants the controller proven); ASCR is refused. */
static void test_not_required(void)
{
	for (int mode = 0; mode < 3; mode++) {
		struct fake_ctrlr fc;
		struct auth_env e;
		struct nvmeof_opts o;
		struct nvmeof_ctrlr *c = NULL;
		struct nvmeof_ctrlr_info info;
		int rc;

		env_init(&e, &fc, NVME_AUTH_HASH_SHA256, NVME_AUTH_DHGROUP_NULL, host_key, FA_NONE);
		fc.auth_optional = mode < 2;
		fc.auth_ascr = mode == 2;
		CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
		opts_for_test(&o);
		o.dhchap_secret = host_key;
		o.dhchap_ctrl_secret = mode == 1 ? ctrl_key : NULL;
		rc = nvmeof_ctrlr_connect(uri_for(&fc), &o, &c);
		if (mode == 2) {
			CU_ASSERT_EQUAL(rc, -EPROTONOSUPPORT);
			CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "AUTHREQ.ASCR"));
			CU_ASSERT_EQUAL(fc_count(&fc, "auth send"), 0);
		} else {
			CU_ASSERT_EQUAL_FATAL(rc, 0);
			nvmeof_ctrlr_get_info(c, &info);
			if (mode == 0) {
				CU_ASSERT_EQUAL(fc_count(&fc, "auth send"), 0);
				CU_ASSERT_STRING_EQUAL(info.dhchap_hash, "");
			} else {
				CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 0"), 1);
				CU_ASSERT_EQUAL(fc_count(&fc, "auth ok qid 1"), 1);
				CU_ASSERT_STRING_EQUAL(info.dhchap_hash, "sha256");
				CU_ASSERT_TRUE(info.dhchap_bidirectional);
			}
			nvmeof_ctrlr_disconnect(c);
		}
		env_check_clean(&e);
		fc_stop(&fc);
		env_fini(&e);
	}
}

/* connect fails with @err and a message holding @msg (and no secret). */
static void connect_fails(enum fa_fault fault, const char *fake_host_key, const char *secret,
			  const char *csecret, int err, const char *msg, bool want_failure2)
{
	struct fake_ctrlr fc;
	struct auth_env e;
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c = (void *)1;
	uint64_t t0;
	int rc;

	env_init(&e, &fc, NVME_AUTH_HASH_SHA512, NVME_AUTH_DHGROUP_FFDHE2048, fake_host_key, fault);
	CU_ASSERT_EQUAL_FATAL(fc_start(&fc), 0);
	opts_for_test(&o);
	o.connect_timeout_ms = 1000;
	o.dhchap_secret = secret;
	o.dhchap_ctrl_secret = csecret;
	t0 = now_ms();
	rc = nvmeof_ctrlr_connect(uri_for(&fc), &o, &c);
	if (rc != err || !strstr(nvmeof_last_error(), msg))
		fprintf(stderr, "\n  rc %d: '%s'\n", rc, nvmeof_last_error());
	CU_ASSERT_EQUAL(rc, err);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), msg));
	CU_ASSERT_TRUE(no_secret_in(nvmeof_last_error()));
	CU_ASSERT(now_ms() - t0 < 2500);
	CU_ASSERT_EQUAL(fc_count(&fc, "prop get"), 0); /* nothing past the Connect */
	if (want_failure2)
		CU_ASSERT_EQUAL(fc_count(&fc, "auth send qid 0 type 0 id 0xf0"), 1);
	env_check_clean(&e);
	fc_stop(&fc);
	env_fini(&e);
}

static void test_connect_refused(void)
{
	/* the controller requires authentication, the host has no secret */
	connect_fails(FA_NONE, host_key, NULL, NULL, -EACCES, "no secret was given", false);
	/* wrong host secret: AUTH_Failure1 */
	connect_fails(FA_NONE, other_key, host_key, NULL, -EACCES,
		      "AUTH_Failure1 instead of DH-HMAC-CHAP_Success1: authentication failed",
		      false);
	/* the controller's response is wrong: the host sends AUTH_Failure2 */
	connect_fails(FA_BAD_R2, host_key, host_key, ctrl_key, -EACCES,
		      "the controller failed authentication", true);
	/* malformed Challenges: a DH value longer than the group's, a bad hash length */
	connect_fails(FA_CHALLENGE_TRUNC, host_key, host_key, NULL, -EPROTO,
		      "DH value of 264 bytes for group ffdhe2048 (must be 256)", true);
	connect_fails(FA_CHALLENGE_HL, host_key, host_key, NULL, -EPROTO,
		      "hash length 200 for sha512 (must be 64)", true);
	/* AUTH_Failure1 in place of the Challenge */
	connect_fails(FA_FAILURE1_HASH, host_key, host_key, NULL, -EPROTONOSUPPORT,
		      "hash function not usable", false);
	/* a controller that never answers: the deadline */
	connect_fails(FA_STALL, host_key, host_key, NULL, -ETIMEDOUT,
		      "did not finish within 1000 ms", false);
}

static void test_bad_secrets(void)
{
	struct nvmeof_opts o;
	struct nvmeof_ctrlr *c = (void *)1;
	char bad_crc[NVME_DHCHAP_KEY_TEXT_MAX];
	size_t n;

	opts_for_test(&o);
	o.dhchap_secret = "DHHC-1:00:notbase64!:";
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1:1/" SUBNQN, &o, &c), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "DH-HMAC-CHAP host secret"));
	CU_ASSERT_PTR_NULL(c);

	snprintf(bad_crc, sizeof(bad_crc), "%s", ctrl_key);
	n = strlen(bad_crc);
	bad_crc[n - 3] = bad_crc[n - 3] == 'A' ? 'B' : 'A'; /* inside the CRC */
	opts_for_test(&o);
	o.dhchap_secret = host_key;
	o.dhchap_ctrl_secret = bad_crc;
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1:1/" SUBNQN, &o, &c), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "DH-HMAC-CHAP controller secret"));
	CU_ASSERT_TRUE(no_secret_in(nvmeof_last_error()));

	opts_for_test(&o);
	o.dhchap_ctrl_secret = ctrl_key;
	CU_ASSERT_EQUAL(nvmeof_ctrlr_connect("nvme+tcp://127.0.0.1:1/" SUBNQN, &o, &c), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(nvmeof_last_error(), "needs a host secret"));
}

static void test_failure_names(void)
{
	CU_ASSERT_STRING_EQUAL(auth_failure_name(NVME_AUTH_FAIL_FAILED), "authentication failed");
	CU_ASSERT_STRING_EQUAL(auth_failure_name(NVME_AUTH_FAIL_DHGROUP_UNUSABLE), "DH group not "
										   "usable");
	CU_ASSERT_STRING_EQUAL(auth_failure_name(0x99), "unknown reason");
	CU_ASSERT_STRING_EQUAL(connect_status_name(NVMEOF_STATUS(1, NVMF_SC_AUTH_REQUIRED)), "Authe"
											     "ntica"
											     "tion "
											     "Requi"
											     "red");
}

int main(void)
{
	CU_pSuite s;
	int fails;

	fa_key_text(0x10, 32, 0, NULL, host_key, sizeof(host_key));
	fa_key_text(0x60, 48, 0, NULL, ctrl_key, sizeof(ctrl_key));
	fa_key_text(0xa0, 32, 0, NULL, other_key, sizeof(other_key));
	fa_key_text(0x30, 64, NVME_AUTH_HASH_SHA512, HOSTNQN, host_key_sha512,
		    sizeof(host_key_sha512));
	if (!host_key[0] || !ctrl_key[0] || !other_key[0] || !host_key_sha512[0])
		return 1;
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("host_auth", NULL, NULL);
	CU_add_test(s, "every hash, NULL and ffdhe2048, uni- and bidirectional",
		    test_every_hash_and_group);
	CU_add_test(s, "transformed secret, ffdhe4096", test_transformed_key_ffdhe4096);
	CU_add_test(s, "AUTH_Failure1 from the controller", test_failure1);
	CU_add_test(s, "wrong host secret", test_wrong_host_secret);
	CU_add_test(s, "bad controller response: Failure2", test_bad_controller_response);
	CU_add_test(s, "malformed and truncated Challenges", test_malformed_challenge);
	CU_add_test(s, "steps out of order", test_out_of_order);
	CU_add_test(s, "admin and I/O queues authenticate, reauth", test_queues_authenticate);
	CU_add_test(s, "a reconnect authenticates again", test_reconnect_authenticates);
	CU_add_test(s, "a reconnect with every slot held", test_reconnect_full_queue);
	CU_add_test(s, "a controller that does not ask", test_not_required);
	CU_add_test(s, "connect refused with a clear error", test_connect_refused);
	CU_add_test(s, "bad secrets", test_bad_secrets);
	CU_add_test(s, "failure reason names", test_failure_names);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
