/* SPDX-License-Identifier: MIT */
/*
 * The controller's DH-HMAC-CHAP machine of one queue (see dhchap_ctrl.h): negotiation of
 * the hash function and DH group, the Challenge, checking the host's response R1, the
 * controller's response R2 for bidirectional authentication, and the Failure1 reason
 * codes. Every state change goes through set_state(), which asserts that it is legal.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <string.h>

#include "auth_internal.h"
#include "common/dhchap_crypto.h"

const char *dhchap_state_name(enum dhchap_state st)
{
	static const char *const names[DHCHAP_NSTATES] = {
		[DHCHAP_NEGOTIATE] = "negotiate", [DHCHAP_CHALLENGE] = "challenge",
		[DHCHAP_REPLY] = "reply",         [DHCHAP_SUCCESS1] = "success1",
		[DHCHAP_SUCCESS2] = "success2",   [DHCHAP_FAILURE1] = "failure1",
		[DHCHAP_DONE] = "done",           [DHCHAP_FAILED] = "failed",
	};

	return (unsigned int)st < DHCHAP_NSTATES ? names[st] : "?";
}

#define BIT(s) (1u << (s))
/* States each state may move to. AUTH_Negotiate (-> CHALLENGE) restarts from any state but
 * FAILURE1 and FAILED; a host's AUTH_Failure2 (-> FAILED) ends any state. */
static const unsigned int legal[DHCHAP_NSTATES] = {
	[DHCHAP_NEGOTIATE] = BIT(DHCHAP_CHALLENGE) | BIT(DHCHAP_FAILURE1) | BIT(DHCHAP_FAILED),
	[DHCHAP_CHALLENGE] = BIT(DHCHAP_CHALLENGE) | BIT(DHCHAP_REPLY) | BIT(DHCHAP_FAILURE1) |
			     BIT(DHCHAP_FAILED),
	[DHCHAP_REPLY] = BIT(DHCHAP_CHALLENGE) | BIT(DHCHAP_SUCCESS1) | BIT(DHCHAP_FAILURE1) |
			 BIT(DHCHAP_FAILED),
	[DHCHAP_SUCCESS1] = BIT(DHCHAP_CHALLENGE) | BIT(DHCHAP_SUCCESS2) | BIT(DHCHAP_DONE) |
			    BIT(DHCHAP_FAILURE1) | BIT(DHCHAP_FAILED),
	[DHCHAP_SUCCESS2] = BIT(DHCHAP_CHALLENGE) | BIT(DHCHAP_DONE) | BIT(DHCHAP_FAILURE1) |
			    BIT(DHCHAP_FAILED),
	[DHCHAP_FAILURE1] = BIT(DHCHAP_FAILED),
	[DHCHAP_DONE] = BIT(DHCHAP_CHALLENGE) | BIT(DHCHAP_FAILURE1) | BIT(DHCHAP_FAILED),
	[DHCHAP_FAILED] = 0,
};

static void set_state(struct dhchap_ctrl *m, enum dhchap_state st)
{
	assert(legal[m->state] & BIT(st));
	m->state = st;
	m->transitions++;
	if (st == DHCHAP_DONE)
		m->authenticated = true;
	else if (st == DHCHAP_FAILURE1 || st == DHCHAP_FAILED)
		m->authenticated = false;
}

/* Forget the transaction's values (the keys stay). */
static void end_transaction(struct dhchap_ctrl *m)
{
	nvme_dh_free(m->dh);
	m->dh = NULL;
	nvme_secret_free(m->dh_secret);
	m->dh_secret = NULL;
	OPENSSL_cleanse(m->c1, sizeof(m->c1));
	OPENSSL_cleanse(m->c2, sizeof(m->c2));
	m->bidi = false;
	m->s2 = 0;
}

void dhchap_ctrl_init(struct dhchap_ctrl *m, struct dhchap_host_conf *conf, const char *hostnqn,
		      const char *subnqn)
{
	memset(m, 0, sizeof(*m));
	m->state = DHCHAP_NEGOTIATE;
	m->hostnqn = hostnqn;
	m->subnqn = subnqn;
	if (conf)
		dhchap_host_conf_get(conf);
	m->conf = conf;
}

void dhchap_ctrl_set_conf(struct dhchap_ctrl *m, struct dhchap_host_conf *conf)
{
	if (conf)
		dhchap_host_conf_get(conf);
	dhchap_host_conf_put(m->conf);
	m->conf = conf;
}

void dhchap_ctrl_fini(struct dhchap_ctrl *m)
{
	end_transaction(m);
	dhchap_host_conf_put(m->conf);
	m->conf = NULL;
}

/* The exchange fails: the next Receive returns AUTH_Failure1 with @exp. The first reason
 * stays when more go wrong before the host reads it. */
static void fail1(struct dhchap_ctrl *m, uint8_t exp)
{
	if (m->state == DHCHAP_FAILURE1 || m->state == DHCHAP_FAILED)
		return;
	end_transaction(m);
	m->fail_exp = exp;
	set_state(m, DHCHAP_FAILURE1);
}

void dhchap_ctrl_refuse(struct dhchap_ctrl *m, uint8_t exp)
{
	fail1(m, exp);
}

/* The id of @ids the controller uses: @want when the host lists it (@want < 0: the first
 * one @usable accepts); -1 when none. */
static int pick_id(const uint8_t *ids, unsigned int n, int want, bool (*usable)(uint8_t))
{
	for (unsigned int i = 0; i < n; i++)
		if (want >= 0 ? ids[i] == want : usable(ids[i]))
			return ids[i];
	return -1;
}

static bool hash_usable(uint8_t id)
{
	return nvme_auth_hash_len(id) != 0;
}

static bool dhgroup_usable(uint8_t id)
{
	return id == NVME_AUTH_DHGROUP_NULL || nvme_dh_value_len(id) != 0;
}

static void on_negotiate(struct dhchap_ctrl *m, const struct dhchap_host_msg *h)
{
	int hash, dh;

	end_transaction(m);
	m->t_id = h->t_id;
	if (!m->conf)
		return fail1(m, NVME_AUTH_FAIL_FAILED); /* no secret for this host here */
	if (h->sc_c != NVME_AUTH_SC_C_NONE)
		return fail1(m, NVME_AUTH_FAIL_CONCAT_MISMATCH);
	hash = dhchap_conf_hash(m->conf);
	hash = pick_id(h->hash_ids, h->nhash, hash ? hash : -1, hash_usable);
	if (hash < 0)
		return fail1(m, NVME_AUTH_FAIL_HASH_UNUSABLE);
	dh = pick_id(h->dh_ids, h->ndh, dhchap_conf_dhgroup(m->conf), dhgroup_usable);
	if (dh < 0)
		return fail1(m, NVME_AUTH_FAIL_DHGROUP_UNUSABLE);
	m->hash_id = (uint8_t)hash;
	m->hl = (uint8_t)nvme_auth_hash_len(m->hash_id);
	m->dhgid = (uint8_t)dh;
	set_state(m, DHCHAP_CHALLENGE);
}

/* R1 as the host must have computed it, into @out. */
static int expected_r1(struct dhchap_ctrl *m, uint8_t *out)
{
	struct nvme_secret *kh = NULL;
	struct nvme_dhchap_resp_in in;
	int rc;

	rc = nvme_dhchap_key_transform(dhchap_conf_key(m->conf, false), m->hostnqn, &kh);
	if (rc)
		return rc;
	in = (struct nvme_dhchap_resp_in){
		.hash_id = m->hash_id,
		.key = kh,
		.challenge = m->c1,
		.seqnum = m->s1,
		.t_id = m->t_id,
		.sc_c = NVME_AUTH_SC_C_NONE,
		.hostnqn = m->hostnqn,
		.subsysnqn = m->subnqn,
		.dh_secret = m->dh_secret,
	};
	rc = nvme_dhchap_host_response(&in, out);
	nvme_secret_free(kh);
	return rc;
}

static void on_reply(struct dhchap_ctrl *m, const struct dhchap_host_msg *h)
{
	uint8_t r1[NVME_AUTH_HASH_MAX_LEN];
	size_t dhvlen = m->dhgid == NVME_AUTH_DHGROUP_NULL ? 0 : nvme_dh_value_len(m->dhgid);
	int rc;

	if (h->t_id != m->t_id || h->hl != m->hl || h->dhvlen != dhvlen)
		return fail1(m, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	/* S2 = 0 with C2 asks for a generated PSK, which needs secure channel concatenation. */
	if (h->cvalid && !h->seqnum)
		return fail1(m, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	if (dhvlen) {
		rc = nvme_dh_shared_secret(m->dh, h->dhv, dhvlen, &m->dh_secret);
		if (rc)
			return fail1(m, NVME_AUTH_FAIL_DHGROUP_UNUSABLE);
	}
	rc = expected_r1(m, r1);
	if (rc || nvme_dhchap_response_check(r1, h->rval, m->hl)) {
		OPENSSL_cleanse(r1, sizeof(r1));
		return fail1(m, NVME_AUTH_FAIL_FAILED);
	}
	OPENSSL_cleanse(r1, sizeof(r1));
	/* The host is authentic; it may also want the controller to prove itself. */
	if (h->cvalid && !dhchap_host_conf_has_ctrl_key(m->conf))
		return fail1(m, NVME_AUTH_FAIL_FAILED);
	m->bidi = h->cvalid;
	if (m->bidi) {
		m->s2 = h->seqnum;
		memcpy(m->c2, h->cval, m->hl);
	}
	set_state(m, DHCHAP_SUCCESS1);
}

void dhchap_ctrl_send(struct dhchap_ctrl *m, const uint8_t *msg, size_t len)
{
	struct dhchap_host_msg h;
	uint8_t exp;
	int id;

	if (m->state == DHCHAP_FAILED)
		return;
	id = dhchap_msg_parse(msg, len, &h, &exp);
	if (id < 0)
		return fail1(m, exp);
	switch (id) {
	case NVME_AUTH_ID_NEGOTIATE:
		if (m->state != DHCHAP_FAILURE1)
			on_negotiate(m, &h);
		return;
	case NVME_AUTH_ID_REPLY:
		if (m->state != DHCHAP_REPLY)
			return fail1(m, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
		return on_reply(m, &h);
	case NVME_AUTH_ID_SUCCESS2:
		if (m->state != DHCHAP_SUCCESS2)
			return fail1(m, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
		if (h.t_id != m->t_id)
			return fail1(m, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
		end_transaction(m);
		set_state(m, DHCHAP_DONE);
		return;
	case NVME_AUTH_ID_FAILURE2:
		/* The host refused the controller's response, or gave up. */
		end_transaction(m);
		m->host_failed = true;
		m->fail_exp = h.rescode_exp;
		set_state(m, DHCHAP_FAILED);
		return;
	default:
		return fail1(m, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	}
}

static int random_bytes(void *buf, size_t len)
{
	return RAND_bytes(buf, (int)len) == 1 ? 0 : -EIO;
}

/* The Challenge into @buf (room checked): C1, S1 and our DH value. */
static int build_challenge(struct dhchap_ctrl *m, uint8_t *buf, size_t dhvlen, size_t *len)
{
	uint8_t *dhv = buf + NVME_DHCHAP_CHALLENGE_DHV_OFF(m->hl);
	int rc;

	rc = random_bytes(m->c1, m->hl);
	while (!rc && !m->s1) /* S1 is never 0 */
		rc = random_bytes(&m->s1, sizeof(m->s1));
	if (!rc && dhvlen) {
		rc = nvme_dh_generate(m->dhgid, &m->dh);
		if (!rc)
			rc = nvme_dh_public(m->dh, dhv, dhvlen);
	}
	if (rc)
		return rc;
	*len = dhchap_msg_challenge(buf, m->t_id, m->hash_id, m->hl, m->dhgid, m->s1, m->c1, dhv,
				    (uint16_t)dhvlen);
	return 0;
}

static int build_r2(struct dhchap_ctrl *m, uint8_t *r2)
{
	struct nvme_secret *kc = NULL;
	struct nvme_dhchap_resp_in in;
	int rc;

	rc = nvme_dhchap_key_transform(dhchap_conf_key(m->conf, true), m->subnqn, &kc);
	if (rc)
		return rc;
	in = (struct nvme_dhchap_resp_in){
		.hash_id = m->hash_id,
		.key = kc,
		.challenge = m->c2,
		.seqnum = m->s2,
		.t_id = m->t_id,
		.sc_c = NVME_AUTH_SC_C_NONE,
		.hostnqn = m->hostnqn,
		.subsysnqn = m->subnqn,
		.dh_secret = m->dh_secret,
	};
	rc = nvme_dhchap_ctrl_response(&in, r2);
	nvme_secret_free(kc);
	return rc;
}

int dhchap_ctrl_recv(struct dhchap_ctrl *m, uint8_t *buf, size_t al)
{
	uint8_t r2[NVME_AUTH_HASH_MAX_LEN];
	size_t need, dhvlen, len = 0;

	switch (m->state) {
	case DHCHAP_CHALLENGE:
		dhvlen = m->dhgid == NVME_AUTH_DHGROUP_NULL ? 0 : nvme_dh_value_len(m->dhgid);
		need = NVME_DHCHAP_CHALLENGE_LEN(m->hl, dhvlen);
		if (al < need)
			return -EMSGSIZE;
		m->s1 = 0;
		if (build_challenge(m, buf, dhvlen, &len)) {
			fail1(m, NVME_AUTH_FAIL_FAILED);
			break;
		}
		set_state(m, DHCHAP_REPLY);
		return (int)len;
	case DHCHAP_SUCCESS1:
		need = m->bidi ? NVME_DHCHAP_SUCCESS1_LEN(m->hl)
			       : sizeof(struct nvme_dhchap_success1);
		if (al < need)
			return -EMSGSIZE;
		if (m->bidi && build_r2(m, r2)) {
			fail1(m, NVME_AUTH_FAIL_FAILED);
			break;
		}
		len = dhchap_msg_success1(buf, m->t_id, m->hl, m->bidi ? r2 : NULL);
		OPENSSL_cleanse(r2, sizeof(r2));
		if (m->bidi) {
			set_state(m, DHCHAP_SUCCESS2);
		} else {
			end_transaction(m);
			set_state(m, DHCHAP_DONE);
		}
		return (int)len;
	case DHCHAP_FAILURE1:
	case DHCHAP_FAILED:
		break;
	default: /* the host asks for a message when none is due */
		if (al < sizeof(struct nvme_auth_failure))
			return -EMSGSIZE;
		fail1(m, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
		break;
	}
	if (al < sizeof(struct nvme_auth_failure))
		return -EMSGSIZE;
	len = dhchap_msg_failure1(buf, m->t_id, m->fail_exp);
	if (m->state == DHCHAP_FAILURE1)
		set_state(m, DHCHAP_FAILED);
	return (int)len;
}
