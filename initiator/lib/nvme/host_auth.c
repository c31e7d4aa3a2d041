/* SPDX-License-Identifier: MIT */
/*
 * DH-HMAC-CHAP on the host (see host_auth.h): the message state machine, its driver over
 * Authentication Send / Receive, the secrets of a controller, and re-authentication.
 *
 * Nothing here logs key material: messages name the step, the field and the values a
 * controller sent in the clear (ids and lengths), never a key, a response or a challenge.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "common/dhchap_key.h"
#include "common/endian.h"
#include "host_auth.h"
#include "queue/host_transport.h"
#include "queue/host_internal.h"

/* What we offer in AUTH_Negotiate, in the order the Linux host offers them. */
static const uint8_t offer_hashes[] = {
	NVME_AUTH_HASH_SHA256,
	NVME_AUTH_HASH_SHA384,
	NVME_AUTH_HASH_SHA512,
};
static const uint8_t offer_dhgroups[] = {
	NVME_AUTH_DHGROUP_NULL,      NVME_AUTH_DHGROUP_FFDHE2048, NVME_AUTH_DHGROUP_FFDHE3072,
	NVME_AUTH_DHGROUP_FFDHE4096, NVME_AUTH_DHGROUP_FFDHE6144, NVME_AUTH_DHGROUP_FFDHE8192,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const ha_state_names[] = {
	[HA_SEND_NEGOTIATE] = "negotiate",
	[HA_WAIT_CHALLENGE] = "challenge",
	[HA_SEND_REPLY] = "reply",
	[HA_WAIT_SUCCESS1] = "success1",
	[HA_SEND_SUCCESS2] = "success2",
	[HA_SEND_FAILURE2] = "failure2",
	[HA_DONE] = "done",
	[HA_FAILED] = "failed",
};

const char *host_auth_state_name(enum host_auth_state state)
{
	return (unsigned int)state < N(ha_state_names) ? ha_state_names[state] : "unknown";
}

/* Legal moves; everything else is a bug in this file. */
static bool ha_transition_ok(enum host_auth_state from, enum host_auth_state to)
{
	switch (to) {
	case HA_WAIT_CHALLENGE:
		return from == HA_SEND_NEGOTIATE;
	case HA_SEND_REPLY:
		return from == HA_WAIT_CHALLENGE;
	case HA_WAIT_SUCCESS1:
		return from == HA_SEND_REPLY;
	case HA_SEND_SUCCESS2:
		return from == HA_WAIT_SUCCESS1;
	case HA_SEND_FAILURE2:
		return from == HA_WAIT_CHALLENGE || from == HA_WAIT_SUCCESS1;
	case HA_DONE:
		return from == HA_WAIT_SUCCESS1 || from == HA_SEND_SUCCESS2;
	case HA_FAILED:
		return from != HA_DONE && from != HA_FAILED;
	case HA_SEND_NEGOTIATE:
		break;
	}
	return false;
}

static void ha_set_state(struct host_auth *ha, enum host_auth_state to)
{
	if (!ha_transition_ok(ha->state, to)) {
		nlog_err("DH-HMAC-CHAP: illegal step %s -> %s", host_auth_state_name(ha->state),
			 host_auth_state_name(to));
		to = HA_FAILED;
		if (!ha->err) {
			ha->err = -EPROTO;
			snprintf(ha->msg, sizeof(ha->msg), "internal state error");
		}
	}
	nlog_debug("DH-HMAC-CHAP: %s -> %s", host_auth_state_name(ha->state),
		   host_auth_state_name(to));
	ha->state = to;
}

static void ha_fail(struct host_auth *ha, enum host_auth_state to, int err, uint8_t exp,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void ha_fail(struct host_auth *ha, enum host_auth_state to, int err, uint8_t exp,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ha->msg, sizeof(ha->msg), fmt, ap);
	va_end(ap);
	ha->err = err;
	ha->fail_exp = exp;
	ha_set_state(ha, to);
}

void host_auth_init(struct host_auth *ha, const struct nvme_secret *kh,
		    const struct nvme_secret *kc, const char *hostnqn, const char *subnqn,
		    uint16_t t_id)
{
	memset(ha, 0, sizeof(*ha));
	ha->state = HA_SEND_NEGOTIATE;
	ha->kh = kh;
	ha->kc = kc;
	ha->hostnqn = hostnqn;
	ha->subnqn = subnqn;
	ha->t_id = t_id;
}

void host_auth_fini(struct host_auth *ha)
{
	nvme_dh_free(ha->dh);
	nvme_secret_free(ha->dh_secret);
	ha->dh = NULL;
	ha->dh_secret = NULL;
	OPENSSL_cleanse(ha->c1, sizeof(ha->c1));
	OPENSSL_cleanse(ha->c2, sizeof(ha->c2));
}

bool host_auth_sending(const struct host_auth *ha)
{
	return ha->state == HA_SEND_NEGOTIATE || ha->state == HA_SEND_REPLY ||
	       ha->state == HA_SEND_SUCCESS2 || ha->state == HA_SEND_FAILURE2;
}

bool host_auth_finished(const struct host_auth *ha)
{
	return ha->state == HA_DONE || ha->state == HA_FAILED;
}

/* ---- Messages the host sends ---------------------------------------------------------- */
static int build_negotiate(struct host_auth *ha, uint8_t *buf, size_t len)
{
	size_t n = NVME_AUTH_NEGOTIATE_LEN(1);
	struct nvme_auth_negotiate *m = (void *)buf;
	struct nvme_auth_protocol_desc *d = (void *)(buf + sizeof(*m));

	if (len < n)
		return -ENOSPC;
	memset(buf, 0, n);
	m->auth_type = NVME_AUTH_TYPE_COMMON;
	m->auth_id = NVME_AUTH_ID_NEGOTIATE;
	put_le16(m->t_id, ha->t_id);
	m->sc_c = NVME_AUTH_SC_C_NONE;
	m->napd = 1;
	d->authid = NVME_AUTH_PROTO_DHCHAP;
	d->halen = (uint8_t)N(offer_hashes);
	d->dhlen = (uint8_t)N(offer_dhgroups);
	memcpy(d->idlist, offer_hashes, N(offer_hashes));
	memcpy(d->idlist + NVME_AUTH_DESC_DH_OFF, offer_dhgroups, N(offer_dhgroups));
	ha_set_state(ha, HA_WAIT_CHALLENGE);
	return (int)n;
}

static int build_reply(struct host_auth *ha, uint8_t *buf, size_t len)
{
	size_t dhvlen = ha->dh ? nvme_dh_value_len(ha->dhgid) : 0;
	size_t n = NVME_DHCHAP_REPLY_LEN(ha->hl, dhvlen);
	struct nvme_dhchap_reply *m = (void *)buf;
	struct nvme_dhchap_resp_in in = {
		.hash_id = ha->hash_id,
		.key = ha->kh,
		.challenge = ha->c1,
		.seqnum = ha->s1,
		.t_id = ha->t_id,
		.sc_c = NVME_AUTH_SC_C_NONE,
		.hostnqn = ha->hostnqn,
		.subsysnqn = ha->subnqn,
		.dh_secret = ha->dh_secret,
	};
	int rc;

	if (len < n)
		return -ENOSPC;
	memset(buf, 0, n);
	m->auth_type = NVME_AUTH_TYPE_DHCHAP;
	m->auth_id = NVME_AUTH_ID_REPLY;
	put_le16(m->t_id, ha->t_id);
	m->hl = ha->hl;
	put_le16(m->dhvlen, (uint16_t)dhvlen);
	rc = nvme_dhchap_host_response(&in, buf + NVME_DHCHAP_REPLY_RVAL_OFF);
	if (rc == 0 && ha->kc) {
		/* Bidirectional: our challenge C2 and a non-zero S2 (Linux does the same). */
		do {
			rc = RAND_bytes((uint8_t *)&ha->s2, sizeof(ha->s2)) == 1 ? 0 : -EIO;
		} while (rc == 0 && ha->s2 == 0);
		if (rc == 0)
			rc = RAND_bytes(ha->c2, ha->hl) == 1 ? 0 : -EIO;
		if (rc == 0) {
			m->cvalid = NVME_DHCHAP_REPLY_CVALID;
			put_le32(m->seqnum, ha->s2);
			memcpy(buf + NVME_DHCHAP_REPLY_CVAL_OFF(ha->hl), ha->c2, ha->hl);
		}
	}
	if (rc == 0 && dhvlen)
		rc = nvme_dh_public(ha->dh, buf + NVME_DHCHAP_REPLY_DHV_OFF(ha->hl), dhvlen);
	if (rc) {
		OPENSSL_cleanse(buf, n);
		ha_fail(ha, HA_FAILED, rc, 0, "cannot compute the reply: %s", strerror(-rc));
		return rc;
	}
	ha_set_state(ha, HA_WAIT_SUCCESS1);
	return (int)n;
}

static int build_success2(struct host_auth *ha, uint8_t *buf, size_t len)
{
	struct nvme_dhchap_success2 *m = (void *)buf;

	if (len < sizeof(*m))
		return -ENOSPC;
	memset(m, 0, sizeof(*m));
	m->auth_type = NVME_AUTH_TYPE_DHCHAP;
	m->auth_id = NVME_AUTH_ID_SUCCESS2;
	put_le16(m->t_id, ha->t_id);
	ha_set_state(ha, HA_DONE);
	return (int)sizeof(*m);
}

static int build_failure2(struct host_auth *ha, uint8_t *buf, size_t len)
{
	struct nvme_auth_failure *m = (void *)buf;

	if (len < sizeof(*m))
		return -ENOSPC;
	memset(m, 0, sizeof(*m));
	m->auth_type = NVME_AUTH_TYPE_COMMON;
	m->auth_id = NVME_AUTH_ID_FAILURE2;
	put_le16(m->t_id, ha->t_id);
	m->rescode = NVME_AUTH_FAIL_REASON_FAILED;
	m->rescode_exp = ha->fail_exp;
	ha_set_state(ha, HA_FAILED);
	return (int)sizeof(*m);
}

int host_auth_build(struct host_auth *ha, uint8_t *buf, size_t len)
{
	switch (ha->state) {
	case HA_SEND_NEGOTIATE:
		return build_negotiate(ha, buf, len);
	case HA_SEND_REPLY:
		return build_reply(ha, buf, len);
	case HA_SEND_SUCCESS2:
		return build_success2(ha, buf, len);
	case HA_SEND_FAILURE2:
		return build_failure2(ha, buf, len);
	default:
		return -EINVAL;
	}
}

/* ---- Messages the controller sends ---------------------------------------------------- */
static bool offered(const uint8_t *ids, size_t n, uint8_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* The AUTH_Failure1 the controller sent instead of @what: the transaction is over. */
static int take_failure1(struct host_auth *ha, const uint8_t *msg, size_t len, const char *what)
{
	const struct nvme_auth_failure *f = (const void *)msg;
	uint8_t exp;
	int err;

	if (len < sizeof(*f)) {
		ha_fail(ha, HA_FAILED, -EPROTO, 0, "truncated AUTH_Failure1 (%zu bytes)", len);
		return ha->err;
	}
	exp = f->rescode_exp;
	switch (exp) {
	case NVME_AUTH_FAIL_FAILED:
		err = -EACCES;
		break;
	case NVME_AUTH_FAIL_PROTOCOL_UNUSABLE:
	case NVME_AUTH_FAIL_CONCAT_MISMATCH:
	case NVME_AUTH_FAIL_HASH_UNUSABLE:
	case NVME_AUTH_FAIL_DHGROUP_UNUSABLE:
		err = -EPROTONOSUPPORT;
		break;
	default:
		err = -EPROTO;
	}
	ha_fail(ha, HA_FAILED, err, 0,
		"the controller refused authentication: AUTH_Failure1 instead of %s: %s "
		"(reason %02xh, explanation %02xh)",
		what, auth_failure_name(exp), f->rescode, exp);
	return err;
}

/* Common checks of a controller message: returns 0 when @msg is the DH-HMAC-CHAP message
 * @id of our transaction, 1 when it is an AUTH_Failure1 (handled), else -EPROTO (the
 * state moved to HA_SEND_FAILURE2). */
static int check_header(struct host_auth *ha, const uint8_t *msg, size_t len, uint8_t id,
			const char *what)
{
	if (len < 8) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
			"truncated %s (%zu bytes)", what, len);
		return -EPROTO;
	}
	if (msg[0] == NVME_AUTH_TYPE_COMMON && msg[1] == NVME_AUTH_ID_FAILURE1) {
		take_failure1(ha, msg, len, what);
		return 1;
	}
	if (msg[0] != NVME_AUTH_TYPE_DHCHAP || msg[1] != id) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_MESSAGE,
			"expected %s, got message type %02xh id %02xh", what, msg[0], msg[1]);
		return -EPROTO;
	}
	if (get_le16(msg + 4) != ha->t_id) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_MESSAGE,
			"%s for transaction %u, ours is %u", what, get_le16(msg + 4), ha->t_id);
		return -EPROTO;
	}
	return 0;
}

static int take_challenge(struct host_auth *ha, const uint8_t *msg, size_t len)
{
	const struct nvme_dhchap_challenge *m = (const void *)msg;
	size_t hl, dhvlen, want;
	int rc = check_header(ha, msg, len, NVME_AUTH_ID_CHALLENGE, "DH-HMAC-CHAP_Challenge");

	if (rc)
		return rc > 0 ? ha->err : rc;
	if (len < sizeof(*m)) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
			"truncated DH-HMAC-CHAP_Challenge (%zu bytes)", len);
		return -EPROTO;
	}
	if (!offered(offer_hashes, N(offer_hashes), m->hashid)) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTONOSUPPORT, NVME_AUTH_FAIL_HASH_UNUSABLE,
			"the controller chose hash function %02xh, which was not offered",
			m->hashid);
		return ha->err;
	}
	hl = nvme_auth_hash_len(m->hashid);
	if (m->hl != hl) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
			"DH-HMAC-CHAP_Challenge: hash length %u for %s (must be %zu)", m->hl,
			nvme_auth_hash_name(m->hashid), hl);
		return -EPROTO;
	}
	if (!offered(offer_dhgroups, N(offer_dhgroups), m->dhgid)) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTONOSUPPORT, NVME_AUTH_FAIL_DHGROUP_UNUSABLE,
			"the controller chose DH group %02xh, which was not offered", m->dhgid);
		return ha->err;
	}
	dhvlen = get_le16(m->dhvlen);
	if (dhvlen != nvme_dh_value_len(m->dhgid)) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
			"DH-HMAC-CHAP_Challenge: DH value of %zu bytes for group %s (must be %zu)",
			dhvlen, nvme_auth_dhgroup_name(m->dhgid), nvme_dh_value_len(m->dhgid));
		return -EPROTO;
	}
	want = NVME_DHCHAP_CHALLENGE_LEN(hl, dhvlen);
	if (len < want) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
			"truncated DH-HMAC-CHAP_Challenge (%zu bytes, %zu needed)", len, want);
		return -EPROTO;
	}
	ha->hash_id = m->hashid;
	ha->hl = (uint8_t)hl;
	ha->dhgid = m->dhgid;
	ha->s1 = get_le32(m->seqnum);
	memcpy(ha->c1, msg + NVME_DHCHAP_CHALLENGE_CVAL_OFF, hl);
	if (dhvlen) {
		rc = nvme_dh_generate(ha->dhgid, &ha->dh);
		if (rc == 0)
			rc = nvme_dh_shared_secret(ha->dh, msg + NVME_DHCHAP_CHALLENGE_DHV_OFF(hl),
						   dhvlen, &ha->dh_secret);
		if (rc == -EINVAL || rc == -EMSGSIZE) {
			ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
				"DH-HMAC-CHAP_Challenge: the controller's DH value is not a valid "
				"%s public value",
				nvme_auth_dhgroup_name(ha->dhgid));
			return -EPROTO;
		}
		if (rc) {
			ha_fail(ha, HA_SEND_FAILURE2, rc, NVME_AUTH_FAIL_FAILED,
				"Diffie-Hellman (%s) failed: %s", nvme_auth_dhgroup_name(ha->dhgid),
				strerror(-rc));
			return rc;
		}
	}
	ha_set_state(ha, HA_SEND_REPLY);
	return 0;
}

static int take_success1(struct host_auth *ha, const uint8_t *msg, size_t len)
{
	const struct nvme_dhchap_success1 *m = (const void *)msg;
	uint8_t r2[NVME_AUTH_HASH_MAX_LEN];
	int rc = check_header(ha, msg, len, NVME_AUTH_ID_SUCCESS1, "DH-HMAC-CHAP_Success1");

	if (rc)
		return rc > 0 ? ha->err : rc;
	if (len < sizeof(*m)) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
			"truncated DH-HMAC-CHAP_Success1 (%zu bytes)", len);
		return -EPROTO;
	}
	if (!ha->kc) {
		/* Unidirectional: whatever R2 it carries is not ours to check. */
		ha_set_state(ha, HA_DONE);
		return 0;
	}
	if (m->hl != ha->hl || !(m->rvalid & NVME_DHCHAP_SUCCESS1_RVALID) ||
	    len < NVME_DHCHAP_SUCCESS1_LEN(ha->hl)) {
		ha_fail(ha, HA_SEND_FAILURE2, -EPROTO, NVME_AUTH_FAIL_INCORRECT_PAYLOAD,
			"DH-HMAC-CHAP_Success1 without the controller's response (hash length "
			"%u, RVALID %u)",
			m->hl, m->rvalid & 1);
		return -EPROTO;
	}
	{
		struct nvme_dhchap_resp_in in = {
			.hash_id = ha->hash_id,
			.key = ha->kc,
			.challenge = ha->c2,
			.seqnum = ha->s2,
			.t_id = ha->t_id,
			.sc_c = NVME_AUTH_SC_C_NONE,
			.hostnqn = ha->hostnqn,
			.subsysnqn = ha->subnqn,
			.dh_secret = ha->dh_secret,
		};

		rc = nvme_dhchap_ctrl_response(&in, r2);
	}
	if (rc == 0)
		rc = nvme_dhchap_response_check(r2, msg + NVME_DHCHAP_SUCCESS1_RVAL_OFF, ha->hl);
	OPENSSL_cleanse(r2, sizeof(r2));
	if (rc == -EACCES) {
		ha_fail(ha, HA_SEND_FAILURE2, -EACCES, NVME_AUTH_FAIL_FAILED,
			"the controller failed authentication: its response does not match the "
			"controller secret");
		return -EACCES;
	}
	if (rc) {
		ha_fail(ha, HA_SEND_FAILURE2, rc, NVME_AUTH_FAIL_FAILED,
			"cannot compute the controller's response: %s", strerror(-rc));
		return rc;
	}
	ha_set_state(ha, HA_SEND_SUCCESS2);
	return 0;
}

int host_auth_receive(struct host_auth *ha, const uint8_t *msg, size_t len)
{
	switch (ha->state) {
	case HA_WAIT_CHALLENGE:
		return take_challenge(ha, msg, len);
	case HA_WAIT_SUCCESS1:
		return take_success1(ha, msg, len);
	default:
		return -EINVAL;
	}
}

/* ---- Secrets of a controller ---------------------------------------------------------- */
struct host_auth_keys {
	struct nvme_secret *kh; /* Kh' = transform(host secret, host NQN) */
	struct nvme_secret *kc; /* Kc' = transform(controller secret, subsystem NQN) */
	uint16_t next_tid;
};

static int parse_key(const char *text, const char *what, const char *nqn, struct nvme_secret **out)
{
	struct nvme_dhchap_key key = { 0 };
	char err[160];
	int rc;

	rc = nvme_dhchap_key_parse(text, &key, err, sizeof(err));
	if (rc) {
		static const char dup[] = "DH-HMAC-CHAP secret: "; /* @what says it better */
		const char *why = strncmp(err, dup, sizeof(dup) - 1) ? err : err + sizeof(dup) - 1;

		return set_error(rc == -ENOMEM ? rc : -EINVAL, "%s: %s", what, why);
	}
	rc = nvme_dhchap_key_transform(&key, nqn, out);
	nvme_dhchap_key_clear(&key);
	if (rc)
		return set_error(rc, "%s: cannot transform the key: %s", what, strerror(-rc));
	return 0;
}

int host_auth_setup(struct nvmeof_ctrlr *ctrlr)
{
	struct nvmeof_opts *o = &ctrlr->opts;
	struct host_auth_keys *k;
	int rc = 0;

	if (!o->dhchap_secret && !o->dhchap_ctrl_secret)
		return 0;
	if (!o->dhchap_secret) {
		rc = set_error(-EINVAL, "a controller secret (dhchap_ctrl_secret) needs a host "
					"secret (dhchap_secret) too");
		goto out;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		rc = set_error(-ENOMEM, "out of memory");
		goto out;
	}
	ctrlr->auth = k;
	rc = parse_key(o->dhchap_secret, "DH-HMAC-CHAP host secret", ctrlr->hostnqn, &k->kh);
	if (rc == 0 && o->dhchap_ctrl_secret)
		rc = parse_key(o->dhchap_ctrl_secret, "DH-HMAC-CHAP controller secret",
			       ctrlr->uri.name, &k->kc);
	if (rc == 0 && ctrlr->ops->ctrlr_setup)
		rc = set_error(-EINVAL, "DH-HMAC-CHAP needs an NVMe over Fabrics transport, not %s",
			       ctrlr->ops->name);
	RAND_bytes((uint8_t *)&k->next_tid, sizeof(k->next_tid));
out:
	/* The caller's strings are not kept. */
	o->dhchap_secret = NULL;
	o->dhchap_ctrl_secret = NULL;
	return rc;
}

void host_auth_free(struct nvmeof_ctrlr *ctrlr)
{
	struct host_auth_keys *k = ctrlr->auth;

	if (!k)
		return;
	nvme_secret_free(k->kh);
	nvme_secret_free(k->kc);
	free(k);
	ctrlr->auth = NULL;
}

/* ---- The exchange on a queue pair ----------------------------------------------------- */
static int auth_cmd(struct nvmeof_qpair *qp, bool send, uint8_t *buf, uint32_t len)
{
	struct nvme_cmd sqe = { 0 };
	struct nvmf_auth_cmd *cmd = (struct nvmf_auth_cmd *)&sqe;

	static_assert(sizeof(struct nvmf_auth_cmd) == sizeof(struct nvme_cmd), "auth SQE");
	cmd->opc = NVME_ADMIN_FABRICS;
	cmd->fctype = send ? NVMF_FCTYPE_AUTH_SEND : NVMF_FCTYPE_AUTH_RECV;
	cmd->spsp0 = NVMF_AUTH_SPSP0;
	cmd->spsp1 = NVMF_AUTH_SPSP1;
	cmd->secp = NVMF_AUTH_SECP;
	put_le32(cmd->len, len);
	return qpair_exec(qp, &sqe, buf, len,
			  send ? NVME_XFER_HOST_TO_CTRLR : NVME_XFER_CTRLR_TO_HOST, NULL);
}

static void record_result(struct nvmeof_ctrlr *ctrlr, struct nvmeof_qpair *qp,
			  const struct host_auth *ha)
{
	if (qp->qid != 0)
		return;
	ctrlr->auth_info.authenticated = ha->state == HA_DONE;
	ctrlr->auth_info.hash = ha->hash_id;
	ctrlr->auth_info.dhgroup = ha->dhgid;
	ctrlr->auth_info.bidirectional = ha->kc != NULL;
}

int host_auth_run(struct nvmeof_qpair *qp, uint32_t timeout_ms)
{
	struct nvmeof_ctrlr *ctrlr = qp->ctrlr;
	struct host_auth_keys *k = ctrlr->auth;
	uint64_t deadline = now_ms() + timeout_ms;
	uint32_t saved_tmo = qp->timeout_ms;
	struct host_auth ha;
	uint8_t *buf;
	bool sent = false;
	int rc = 0;

	if (!k || !k->kh)
		return set_error(-EACCES,
				 "queue %u: the controller requires DH-HMAC-CHAP authentication "
				 "and no secret was given (dhchap_secret)",
				 qp->qid);
	buf = malloc(HOST_AUTH_BUF);
	if (!buf)
		return set_error(-ENOMEM, "out of memory");
	host_auth_init(&ha, k->kh, k->kc, ctrlr->hostnqn, ctrlr->uri.name,
		       __atomic_fetch_add(&k->next_tid, 1, __ATOMIC_RELAXED));
	while (!host_auth_finished(&ha)) {
		uint64_t now = now_ms();
		bool send = host_auth_sending(&ha);
		enum host_auth_state step = ha.state;
		int n = HOST_AUTH_BUF;

		if (now >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		qp->timeout_ms = (uint32_t)(deadline - now);
		if (send) {
			n = host_auth_build(&ha, buf, HOST_AUTH_BUF);
			if (n < 0)
				break;
		} else {
			memset(buf, 0, HOST_AUTH_BUF);
		}
		sent = send;
		rc = auth_cmd(qp, send, buf, (uint32_t)n);
		if (send)
			OPENSSL_cleanse(buf, (size_t)n);
		if (rc)
			break;
		if (!send)
			host_auth_receive(&ha, buf, HOST_AUTH_BUF);
		nlog_debug("queue %u: DH-HMAC-CHAP %s done", qp->qid, host_auth_state_name(step));
	}
	qp->timeout_ms = saved_tmo;
	OPENSSL_cleanse(buf, HOST_AUTH_BUF);
	free(buf);
	record_result(ctrlr, qp, &ha);
	host_auth_fini(&ha);

	if (rc == -ETIMEDOUT)
		return set_error(-ETIMEDOUT, "queue %u: DH-HMAC-CHAP did not finish within %u ms",
				 qp->qid, timeout_ms);
	if (rc < 0)
		return set_error(rc, "queue %u: DH-HMAC-CHAP authentication failed: %s", qp->qid,
				 qp->errmsg[0] ? qp->errmsg : strerror(-rc));
	if (rc > 0) {
		uint16_t st = (uint16_t)rc;

		return set_error(st == NVMEOF_STATUS(NVME_SCT_COMMAND_SPECIFIC,
						     NVMF_SC_AUTH_REQUIRED)
					 ? -EACCES
					 : -ECONNREFUSED,
				 "queue %u: DH-HMAC-CHAP authentication failed: Authentication %s "
				 "refused: %s (sct %u sc 0x%02x)",
				 qp->qid, sent ? "Send" : "Receive", connect_status_name(st),
				 NVMEOF_SCT(st), NVMEOF_SC(st));
	}
	if (ha.state != HA_DONE)
		return set_error(ha.err ? ha.err : -EPROTO,
				 "queue %u: DH-HMAC-CHAP authentication failed: %s", qp->qid,
				 ha.msg);
	nlog_info("queue %u: authenticated with DH-HMAC-CHAP (%s, %s%s)", qp->qid,
		  nvme_auth_hash_name(ha.hash_id), nvme_auth_dhgroup_name(ha.dhgid),
		  ha.kc ? ", bidirectional" : "");
	return 0;
}

int host_auth_connected(struct nvmeof_qpair *qp, uint32_t dw0)
{
	struct nvmeof_ctrlr *ctrlr = qp->ctrlr;
	struct host_auth_keys *k = ctrlr->auth;

	if (dw0 & NVMF_CONNECT_AUTHREQ_ASCR)
		return set_error(-EPROTONOSUPPORT,
				 "queue %u: the controller requires secure channel concatenation "
				 "(AUTHREQ.ASCR), which this host does not support",
				 qp->qid);
	if (!(dw0 & NVMF_CONNECT_AUTHREQ_ATR)) {
		/* Not asked for: authenticate anyway when the host wants the controller
		 * proven (a controller secret); a host secret alone is simply not needed. */
		if (!k || !k->kc)
			return 0;
		nlog_debug("queue %u: the controller does not require authentication; "
			   "authenticating it (bidirectional)",
			   qp->qid);
	}
	return host_auth_run(qp, ctrlr->opts.connect_timeout_ms);
}

int nvmeof_ctrlr_reauthenticate(struct nvmeof_ctrlr *ctrlr)
{
	int rc;

	clear_error();
	if (!ctrlr->auth)
		return set_error(-EINVAL, "no DH-HMAC-CHAP secret was given at connect");
	pthread_mutex_lock(&ctrlr->admin_lock);
	if (!ctrlr->admin || ctrlr->admin->state != QP_READY)
		rc = set_error(-ENOTCONN, "the admin queue is not connected");
	else
		rc = host_auth_run(ctrlr->admin, ctrlr->opts.connect_timeout_ms);
	pthread_mutex_unlock(&ctrlr->admin_lock);
	return rc;
}
