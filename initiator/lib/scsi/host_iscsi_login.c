/* SPDX-License-Identifier: MIT */
/*
 * iSCSI login, initiator side (RFC 7143 sections 6, 11.12, 11.13, 12, 13): security
 * negotiation (AuthMethod None, or CHAP with MD5 / SHA-256 through OpenSSL EVP), then
 * operational negotiation of what the data path needs: digests, ImmediateData=Yes,
 * InitialR2T=No, large bursts and segments. Blocking, on a connected socket, bounded by
 * a deadline; every answer from the target is checked before it is used.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/evp.h>

#include "host_iscsi.h"

#define LOGIN_EXCHANGES_MAX 16 /* request/response pairs per stage */

enum chap_state {
	CHAP_OFFERED,	/* AuthMethod offered */
	CHAP_ALG_SENT,	/* CHAP_A sent, waiting for CHAP_I/CHAP_C */
	CHAP_RESP_SENT, /* CHAP_N/CHAP_R sent with T=1 */
	CHAP_NONE,	/* the target chose AuthMethod=None */
};

struct host_login_ctx {
	int fd;
	const struct iscsi_login_cfg *cfg;
	struct iscsi_session *s;
	uint64_t deadline;
	uint32_t itt;
	uint8_t csg;
	_Alignas(8) uint8_t rsp[ISCSI_BHS_LEN]; /* last response header */
	char *rtext;			/* accumulated response text */
	size_t rlen;
	char stext[ISCSI_LOGIN_TEXT_MAX];
	size_t slen;
	uint32_t offered;		/* bit per enum iscsi_key_id we offered */
	uint32_t answered;
	struct iscsi_params neg, local;	/* for keys the target offers us */
};

static int io_error(int rc, const char *what)
{
	if (rc == -ETIMEDOUT)
		return set_error(rc, "iSCSI login: no answer from the target while %s", what);
	if (rc == -ECONNRESET)
		return set_error(rc, "iSCSI login: the target closed the connection while %s",
				 what);
	return set_error(rc, "iSCSI login: %s failed: %s", what, strerror(-rc));
}

/* ---- Login PDUs ----------------------------------------------------------------------------- */
static int send_login(struct host_login_ctx *c, bool transit, uint8_t nsg, const char *text,
		      size_t len)
{
	_Alignas(8) uint8_t pdu[ISCSI_BHS_LEN + ISCSI_LOGIN_TEXT_MAX + 4];
	struct iscsi_login_req *r = (struct iscsi_login_req *)pdu;
	uint8_t flags = (uint8_t)(c->csg << ISCSI_LOGIN_CSG_SHIFT);
	size_t total = ISCSI_BHS_LEN + ISCSI_PAD(len);
	int rc;

	if (len > ISCSI_LOGIN_TEXT_MAX)
		return set_error(-E2BIG, "iSCSI login: %zu bytes of login text", len);
	if (transit)
		flags |= ISCSI_LOGIN_TRANSIT | (nsg & ISCSI_LOGIN_NSG_MASK);
	iscsi_bhs_init(pdu, ISCSI_OP_LOGIN_REQ | ISCSI_FLAG_IMMEDIATE, flags);
	r->version_max = ISCSI_VERSION;
	r->version_min = ISCSI_VERSION;
	iscsi_bhs_set_dlen(pdu, (uint32_t)len);
	memcpy(r->isid, c->cfg->isid, sizeof(r->isid));
	put_be16(&r->tsih, 0);
	put_be32(&r->itt, c->itt);
	put_be16(&r->cid, c->cfg->cid);
	put_be32(&r->cmdsn, c->cfg->cmdsn);
	put_be32(&r->exp_statsn, c->s->exp_statsn);
	memcpy(pdu + ISCSI_BHS_LEN, text, len);
	memset(pdu + ISCSI_BHS_LEN + len, 0, ISCSI_PAD(len) - len);
	rc = sock_xfer_all(c->fd, pdu, total, true, c->deadline);
	return rc ? io_error(rc, "sending a Login Request") : 0;
}

static const char *login_status_text(uint16_t st)
{
	switch (st) {
	case ISCSI_LOGIN_TARGET_MOVED_TEMP:
		return "target moved (redirection is not followed)";
	case ISCSI_LOGIN_INITIATOR_ERROR:
		return "initiator error";
	case ISCSI_LOGIN_AUTH_FAILED:
		return "authentication failed";
	case ISCSI_LOGIN_AUTHORIZATION_FAILED:
		return "this initiator is not authorized";
	case ISCSI_LOGIN_NOT_FOUND:
		return "target not found";
	case ISCSI_LOGIN_TARGET_REMOVED:
		return "target removed";
	case ISCSI_LOGIN_UNSUPPORTED_VERSION:
		return "unsupported version";
	case ISCSI_LOGIN_TOO_MANY_CONNECTIONS:
		return "too many connections";
	case ISCSI_LOGIN_MISSING_PARAMETER:
		return "missing parameter";
	case ISCSI_LOGIN_CANT_INCLUDE:
		return "cannot include in session";
	case ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED:
		return "session type not supported";
	case ISCSI_LOGIN_NO_SESSION:
		return "session does not exist";
	case ISCSI_LOGIN_INVALID_REQUEST:
		return "invalid request during login";
	case ISCSI_LOGIN_TARGET_ERROR:
		return "target error";
	case ISCSI_LOGIN_SERVICE_UNAVAILABLE:
		return "service unavailable";
	case ISCSI_LOGIN_OUT_OF_RESOURCES:
		return "target out of resources";
	}
	return "unknown status";
}

static int login_status_errno(uint16_t st)
{
	switch (st) {
	case ISCSI_LOGIN_AUTH_FAILED:
	case ISCSI_LOGIN_AUTHORIZATION_FAILED:
		return -EACCES;
	case ISCSI_LOGIN_NOT_FOUND:
	case ISCSI_LOGIN_TARGET_REMOVED:
		return -ENOENT;
	case ISCSI_LOGIN_UNSUPPORTED_VERSION:
		return -EPROTONOSUPPORT;
	case ISCSI_LOGIN_TOO_MANY_CONNECTIONS:
		return -EBUSY;
	case ISCSI_LOGIN_SERVICE_UNAVAILABLE:
	case ISCSI_LOGIN_OUT_OF_RESOURCES:
		return -EAGAIN;
	}
	return (st >> 8) == 3 ? -EIO : -ECONNREFUSED;
}

/* One Login Response, its text appended to c->rtext. */
static int recv_login(struct host_login_ctx *c)
{
	const struct iscsi_login_rsp *r = (const void *)c->rsp;
	uint8_t pad[4], csg;
	uint32_t dlen;
	uint16_t st;
	int rc;

	rc = sock_xfer_all(c->fd, c->rsp, ISCSI_BHS_LEN, false, c->deadline);
	if (rc)
		return io_error(rc, "waiting for a Login Response");
	if (iscsi_bhs_opcode(c->rsp) != ISCSI_OP_LOGIN_RSP) {
		if (iscsi_bhs_opcode(c->rsp) == ISCSI_OP_REJECT)
			return set_error(-EPROTO, "iSCSI login: the target rejected the Login "
						  "Request (reason 0x%02x)",
					 ((const struct iscsi_reject *)c->rsp)->reason);
		return set_error(-EPROTO, "iSCSI login: unexpected PDU opcode 0x%02x",
				 iscsi_bhs_opcode(c->rsp));
	}
	dlen = iscsi_bhs_dlen(c->rsp);
	if (iscsi_bhs_ahs_len(c->rsp))
		return set_error(-EPROTO, "iSCSI login: Login Response with an AHS");
	if (dlen > ISCSI_TEXT_MAX - c->rlen)
		return set_error(-EPROTO, "iSCSI login: %u more bytes of login text than the "
					  "%u accepted", dlen, ISCSI_TEXT_MAX);
	rc = sock_xfer_all(c->fd, c->rtext + c->rlen, dlen, false, c->deadline);
	if (rc == 0 && ISCSI_PAD(dlen) != dlen)
		rc = sock_xfer_all(c->fd, pad, ISCSI_PAD(dlen) - dlen, false, c->deadline);
	if (rc)
		return io_error(rc, "reading a Login Response");
	c->rlen += dlen;

	/* A refusal first: targets do not always echo the other fields in one. */
	st = ISCSI_LOGIN_STATUS(r->status_class, r->status_detail);
	if (st != ISCSI_LOGIN_OK)
		return set_error(login_status_errno(st),
				 "iSCSI login to %s refused: %s (status 0x%04x)",
				 c->cfg->target_name, login_status_text(st), st);
	if (get_be32(&r->itt) != c->itt)
		return set_error(-EPROTO, "iSCSI login: Login Response for ITT 0x%08x, not 0x%08x",
				 get_be32(&r->itt), c->itt);
	if (memcmp(r->isid, c->cfg->isid, sizeof(r->isid)))
		return set_error(-EPROTO, "iSCSI login: Login Response for another ISID");
	if (r->version_active != ISCSI_VERSION)
		return set_error(-EPROTONOSUPPORT, "iSCSI login: target speaks version %u",
				 r->version_active);
	csg = (r->flags & ISCSI_LOGIN_CSG_MASK) >> ISCSI_LOGIN_CSG_SHIFT;
	if (csg != c->csg) {
		/* The response's CSG is the request's stage (RFC 7143 11.13.3). A target that
		 * puts the stage it moves to there, with T set, is tolerated; others are not. */
		if (!(r->flags & ISCSI_LOGIN_TRANSIT) || csg != (r->flags & ISCSI_LOGIN_NSG_MASK))
			return set_error(-EPROTO, "iSCSI login: Login Response for stage %u, "
						  "not %u", csg, c->csg);
		nlog_warn("iSCSI login: %s answers stage %u with CSG %u (the next stage)",
			  c->cfg->target_name, c->csg, csg);
	}
	if ((r->flags & ISCSI_LOGIN_TRANSIT) && (r->flags & ISCSI_LOGIN_CONTINUE))
		return set_error(-EPROTO, "iSCSI login: Login Response with both T and C set");
	c->s->exp_statsn = get_be32(&r->statsn) + 1;
	c->s->exp_cmdsn = get_be32(&r->exp_cmdsn);
	c->s->max_cmdsn = get_be32(&r->max_cmdsn);
	c->s->tsih = get_be16(&r->tsih);
	return 0;
}

/* Send a request and collect the whole response (continuations included). */
static int exchange(struct host_login_ctx *c, bool transit, uint8_t nsg)
{
	const struct iscsi_login_rsp *r = (const void *)c->rsp;
	int rc = send_login(c, transit, nsg, c->stext, c->slen);

	c->slen = 0;
	c->rlen = 0;
	while (rc == 0) {
		rc = recv_login(c);
		if (rc || !(r->flags & ISCSI_LOGIN_CONTINUE))
			break;
		/* More text to come: ask for it with an empty request. */
		rc = send_login(c, false, 0, "", 0);
	}
	return rc;
}

/* The response's "T" bit and next stage; checks the target did not go further than asked. */
static int rsp_transit(struct host_login_ctx *c, uint8_t asked, bool *transit)
{
	const struct iscsi_login_rsp *r = (const void *)c->rsp;
	uint8_t nsg = r->flags & ISCSI_LOGIN_NSG_MASK;

	*transit = r->flags & ISCSI_LOGIN_TRANSIT;
	if (*transit && nsg != asked)
		return set_error(-EPROTO, "iSCSI login: target moved to stage %u, %u was asked",
				 nsg, asked);
	return 0;
}

static int add_key(struct host_login_ctx *c, const char *key, const char *val)
{
	if (iscsi_text_add(c->stext, sizeof(c->stext), &c->slen, key, val))
		return set_error(-E2BIG, "iSCSI login: login text too long");
	return 0;
}

static int parse_text(struct host_login_ctx *c, struct iscsi_kv *kv, int max)
{
	int n = iscsi_text_parse(c->rtext, c->rlen, kv, max);

	if (n < 0)
		return set_error(-EPROTO, "iSCSI login: malformed login text from the target");
	return n;
}

/* ---- CHAP ----------------------------------------------------------------------------------- */
int host_iscsi_chap_response(int alg, uint8_t id, const uint8_t *secret, size_t secret_len,
			     const uint8_t *chal, size_t chal_len, uint8_t *out, size_t *out_len)
{
	const EVP_MD *md;
	EVP_MD_CTX *ctx;
	unsigned int n = 0;
	int ok;

	switch (alg) {
	case ISCSI_CHAP_MD5:
		md = EVP_md5();
		break;
	case ISCSI_CHAP_SHA256:
		md = EVP_sha256();
		break;
	default:
		return -EINVAL;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, md, NULL) && EVP_DigestUpdate(ctx, &id, 1) &&
	     EVP_DigestUpdate(ctx, secret, secret_len) && EVP_DigestUpdate(ctx, chal, chal_len) &&
	     EVP_DigestFinal_ex(ctx, out, &n);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -ENOTSUP; /* e.g. MD5 disabled by the crypto policy */
	*out_len = n;
	return 0;
}

static int chap_answer(struct host_login_ctx *c, struct iscsi_kv *kv, int n)
{
	uint8_t chal[ISCSI_CHAP_CHALLENGE_MAX], digest[ISCSI_CHAP_DIGEST_MAX];
	char hex[2 * ISCSI_CHAP_DIGEST_MAX + 3];
	const char *a = NULL, *i = NULL, *ch = NULL;
	uint32_t alg, id;
	size_t dlen;
	int clen, rc;

	for (int k = 0; k < n; k++) {
		if (!strcmp(kv[k].key, "CHAP_A"))
			a = kv[k].val;
		else if (!strcmp(kv[k].key, "CHAP_I"))
			i = kv[k].val;
		else if (!strcmp(kv[k].key, "CHAP_C"))
			ch = kv[k].val;
	}
	if (!a || !i || !ch)
		return set_error(-EPROTO, "iSCSI login: CHAP challenge incomplete (CHAP_A, CHAP_I "
					  "and CHAP_C expected)");
	if (iscsi_text_parse_u32(a, &alg) || (alg != ISCSI_CHAP_MD5 && alg != ISCSI_CHAP_SHA256))
		return set_error(-EPROTO, "iSCSI login: target chose CHAP_A=%.16s, not offered",
				 a);
	if (iscsi_text_parse_u32(i, &id) || id > 255)
		return set_error(-EPROTO, "iSCSI login: bad CHAP_I");
	clen = iscsi_text_decode_binary(ch, chal, sizeof(chal));
	if (clen <= 0)
		return set_error(-EPROTO, "iSCSI login: bad CHAP_C");
	rc = host_iscsi_chap_response((int)alg, (uint8_t)id, (const uint8_t *)c->cfg->secret,
				      strlen(c->cfg->secret), chal, (size_t)clen, digest, &dlen);
	if (rc)
		return set_error(rc == -ENOTSUP ? -EPROTONOSUPPORT : rc,
				 "iSCSI login: cannot compute the CHAP %s response",
				 alg == ISCSI_CHAP_MD5 ? "MD5" : "SHA-256");
	iscsi_text_encode_hex(digest, dlen, hex);
	c->s->chap_alg = (int)alg;
	rc = add_key(c, "CHAP_N", c->cfg->user);
	return rc ? rc : add_key(c, "CHAP_R", hex);
}

/* ---- Security stage ------------------------------------------------------------------------- */
static int note_target_key(struct host_login_ctx *c, const struct iscsi_kv *kv)
{
	uint32_t v;

	if (!strcmp(kv->key, "TargetPortalGroupTag")) {
		if (iscsi_text_parse_u32(kv->val, &v) || v > 0xffff)
			return set_error(-EPROTO, "iSCSI login: bad TargetPortalGroupTag");
		c->s->tpgt = (uint16_t)v;
		return 1;
	}
	if (!strcmp(kv->key, "TargetAlias") || !strcmp(kv->key, "TargetAddress"))
		return 1;
	return 0;
}

static int security_stage(struct host_login_ctx *c)
{
	const struct iscsi_login_cfg *cfg = c->cfg;
	bool chap = cfg->user && cfg->user[0];
	enum chap_state cs = CHAP_OFFERED;
	struct iscsi_kv kv[ISCSI_TEXT_MAX_PAIRS];
	bool transit = !chap;
	int rc, n;

	c->csg = ISCSI_STAGE_SECURITY;
	rc = add_key(c, "InitiatorName", cfg->initiator_name);
	if (!rc)
		rc = add_key(c, "SessionType", cfg->discovery ? "Discovery" : "Normal");
	if (!rc && !cfg->discovery)
		rc = add_key(c, "TargetName", cfg->target_name);
	if (!rc)
		rc = add_key(c, "AuthMethod", chap ? "CHAP,None" : "None");
	if (rc)
		return rc;

	for (int round = 0; round < LOGIN_EXCHANGES_MAX; round++) {
		const char *auth = NULL;
		bool t;

		rc = exchange(c, transit, ISCSI_STAGE_OPERATIONAL);
		if (rc)
			return rc;
		rc = rsp_transit(c, ISCSI_STAGE_OPERATIONAL, &t);
		if (rc)
			return rc;
		n = parse_text(c, kv, ISCSI_TEXT_MAX_PAIRS);
		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (!strcmp(kv[k].key, "AuthMethod"))
				auth = kv[k].val;
			else if ((rc = note_target_key(c, &kv[k])) < 0)
				return rc;
		}
		if (auth) {
			if (!strcmp(auth, "None")) {
				cs = CHAP_NONE;
			} else if (!chap || strcmp(auth, "CHAP")) {
				return set_error(-EACCES, "iSCSI login: target %s requires "
							  "authentication (AuthMethod=%.32s)%s",
						 cfg->target_name, auth,
						 chap ? "" : "; give user%secret@ in the URI");
			}
		}
		if (t) {
			if (chap && cs != CHAP_RESP_SENT && cs != CHAP_NONE)
				return set_error(-EPROTO, "iSCSI login: target skipped CHAP");
			return 0;
		}
		if (!chap || cs == CHAP_NONE) {
			transit = true; /* nothing more to say: ask to move on */
			continue;
		}
		switch (cs) {
		case CHAP_OFFERED:
			if (!auth)
				return set_error(-EPROTO, "iSCSI login: no AuthMethod answer");
			rc = add_key(c, "CHAP_A", c->cfg->chap_md5_only ? "5" : "7,5");
			cs = CHAP_ALG_SENT;
			break;
		case CHAP_ALG_SENT:
			rc = chap_answer(c, kv, n);
			transit = true;
			cs = CHAP_RESP_SENT;
			break;
		case CHAP_RESP_SENT:
			return set_error(-EACCES, "iSCSI login: target did not accept the CHAP "
						  "response");
		case CHAP_NONE:
			break;
		}
		if (rc)
			return rc;
	}
	return set_error(-EPROTO, "iSCSI login: security negotiation did not finish");
}

/* ---- Operational stage ---------------------------------------------------------------------- */
static int offer_u32(struct host_login_ctx *c, enum iscsi_key_id id, uint32_t v)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", v);
	c->offered |= 1u << id;
	return add_key(c, iscsi_key_name(id), num);
}

static int offer_str(struct host_login_ctx *c, enum iscsi_key_id id, const char *v)
{
	c->offered |= 1u << id;
	return add_key(c, iscsi_key_name(id), v);
}

static int bad_answer(const char *key, const char *val)
{
	return set_error(-EPROTO, "iSCSI login: target answered %s=%.32s", key, val);
}

/* The target's answer to a key we offered. */
static int take_answer(struct host_login_ctx *c, enum iscsi_key_id id, const char *key,
		       const char *val)
{
	const struct iscsi_login_cfg *cfg = c->cfg;
	struct iscsi_session *s = c->s;
	uint32_t v = 0;
	bool num = false, yes = false;

	if (c->answered & (1u << id))
		return set_error(-EPROTO, "iSCSI login: %s answered twice", key);
	c->answered |= 1u << id;
	if (!strcmp(val, "Reject") || !strcmp(val, "NotUnderstood") ||
	    !strcmp(val, "Irrelevant")) {
		if (id == ISCSI_KEY_HEADER_DIGEST && cfg->hdgst)
			return set_error(-EPROTONOSUPPORT, "iSCSI target declined header digests");
		if (id == ISCSI_KEY_DATA_DIGEST && cfg->ddgst)
			return set_error(-EPROTONOSUPPORT, "iSCSI target declined data digests");
		return 0; /* the RFC default stays */
	}
	if (id == ISCSI_KEY_HEADER_DIGEST || id == ISCSI_KEY_DATA_DIGEST) {
		bool want = id == ISCSI_KEY_HEADER_DIGEST ? cfg->hdgst : cfg->ddgst;
		bool crc = !strcmp(val, "CRC32C");

		if (!crc && strcmp(val, "None"))
			return bad_answer(key, val);
		if (crc != want)
			return want ? set_error(-EPROTONOSUPPORT,
						"iSCSI target declined %s digests",
						id == ISCSI_KEY_HEADER_DIGEST ? "header" : "data")
				    : bad_answer(key, val);
		if (id == ISCSI_KEY_HEADER_DIGEST)
			s->hdgst = crc;
		else
			s->ddgst = crc;
		return 0;
	}
	if (!strcmp(val, "Yes") || !strcmp(val, "No")) {
		yes = val[0] == 'Y';
	} else {
		if (iscsi_text_parse_u32(val, &v))
			return bad_answer(key, val);
		num = true;
	}
	switch (id) {
	case ISCSI_KEY_INITIAL_R2T:
		if (num)
			return bad_answer(key, val);
		s->initial_r2t = yes;
		return 0;
	case ISCSI_KEY_IMMEDIATE_DATA:
		if (num)
			return bad_answer(key, val);
		s->immediate_data = yes;
		return 0;
	case ISCSI_KEY_DATA_PDU_IN_ORDER:
	case ISCSI_KEY_DATA_SEQUENCE_IN_ORDER:
		if (num || !yes)
			return bad_answer(key, val); /* OR of our Yes can only be Yes */
		return 0;
	case ISCSI_KEY_MAX_BURST_LENGTH:
		if (!num || v < ISCSI_MIN_DATA_SEG_LEN || v > s->max_burst)
			return bad_answer(key, val);
		s->max_burst = v;
		return 0;
	case ISCSI_KEY_FIRST_BURST_LENGTH:
		if (!num || v < ISCSI_MIN_DATA_SEG_LEN || v > s->first_burst)
			return bad_answer(key, val);
		s->first_burst = v;
		return 0;
	case ISCSI_KEY_MAX_OUTSTANDING_R2T:
		if (!num || v != 1)
			return bad_answer(key, val);
		return 0;
	case ISCSI_KEY_ERROR_RECOVERY_LEVEL:
		if (!num || v != 0)
			return bad_answer(key, val);
		return 0;
	case ISCSI_KEY_MAX_CONNECTIONS:
		if (!num || v != 1)
			return bad_answer(key, val);
		return 0;
	case ISCSI_KEY_DEFAULT_TIME2WAIT:
	case ISCSI_KEY_DEFAULT_TIME2RETAIN:
		if (!num || v > 3600)
			return bad_answer(key, val);
		return 0;
	default:
		return bad_answer(key, val);
	}
}

static int key_id(const char *key)
{
	for (int id = 0; id < ISCSI_KEY_COUNT; id++)
		if (!strcmp(key, iscsi_key_name((enum iscsi_key_id)id)))
			return id;
	return -1;
}

static int operational_stage(struct host_login_ctx *c)
{
	const struct iscsi_login_cfg *cfg = c->cfg;
	struct iscsi_session *s = c->s;
	struct iscsi_kv kv[ISCSI_TEXT_MAX_PAIRS];
	int rc = 0, n;

	c->csg = ISCSI_STAGE_OPERATIONAL;
	rc = offer_str(c, ISCSI_KEY_HEADER_DIGEST, cfg->hdgst ? "CRC32C" : "None");
	rc = rc ? rc : offer_str(c, ISCSI_KEY_DATA_DIGEST, cfg->ddgst ? "CRC32C" : "None");
	rc = rc ? rc : offer_str(c, ISCSI_KEY_INITIAL_R2T, "No");
	rc = rc ? rc : offer_str(c, ISCSI_KEY_IMMEDIATE_DATA, "Yes");
	/* Declarative: what we can receive, not negotiated. */
	if (!rc && iscsi_text_add_u32(c->stext, sizeof(c->stext), &c->slen,
				      "MaxRecvDataSegmentLength", s->max_recv_dsl))
		rc = set_error(-E2BIG, "iSCSI login: login text too long");
	rc = rc ? rc : offer_u32(c, ISCSI_KEY_MAX_BURST_LENGTH, s->max_burst);
	rc = rc ? rc : offer_u32(c, ISCSI_KEY_FIRST_BURST_LENGTH, s->first_burst);
	rc = rc ? rc : offer_u32(c, ISCSI_KEY_DEFAULT_TIME2WAIT, 2);
	rc = rc ? rc : offer_u32(c, ISCSI_KEY_DEFAULT_TIME2RETAIN, 0);
	rc = rc ? rc : offer_u32(c, ISCSI_KEY_MAX_OUTSTANDING_R2T, 1);
	rc = rc ? rc : offer_str(c, ISCSI_KEY_DATA_PDU_IN_ORDER, "Yes");
	rc = rc ? rc : offer_str(c, ISCSI_KEY_DATA_SEQUENCE_IN_ORDER, "Yes");
	rc = rc ? rc : offer_u32(c, ISCSI_KEY_ERROR_RECOVERY_LEVEL, 0);
	rc = rc ? rc : offer_u32(c, ISCSI_KEY_MAX_CONNECTIONS, 1);
	if (rc)
		return rc;

	for (int round = 0; round < LOGIN_EXCHANGES_MAX; round++) {
		bool t;

		rc = exchange(c, true, ISCSI_STAGE_FULL_FEATURE);
		if (rc)
			return rc;
		rc = rsp_transit(c, ISCSI_STAGE_FULL_FEATURE, &t);
		if (rc)
			return rc;
		n = parse_text(c, kv, ISCSI_TEXT_MAX_PAIRS);
		if (n < 0)
			return n;
		for (int k = 0; k < n && rc == 0; k++) {
			int id = key_id(kv[k].key);
			char resp[64];
			uint32_t v;

			if (!strcmp(kv[k].key, "MaxRecvDataSegmentLength")) {
				if (iscsi_text_parse_u32(kv[k].val, &v) ||
				    v < ISCSI_MIN_DATA_SEG_LEN || v > ISCSI_MAX_DATA_SEG_LEN)
					return bad_answer(kv[k].key, kv[k].val);
				s->max_xmit_dsl = v;
			} else if (id >= 0 && (c->offered & (1u << id))) {
				rc = take_answer(c, (enum iscsi_key_id)id, kv[k].key, kv[k].val);
			} else if ((rc = note_target_key(c, &kv[k])) != 0) {
				rc = rc < 0 ? rc : 0;
			} else {
				/* A key the target offers us: answer it as a responder. */
				rc = iscsi_param_negotiate(&c->neg, &c->local, false, kv[k].key,
							   kv[k].val, resp, sizeof(resp));
				if (rc < 0)
					return set_error(-EPROTO, "iSCSI login: %s offered twice",
							 kv[k].key);
				rc = rc == ISCSI_NEG_ANSWER ? add_key(c, kv[k].key, resp) : 0;
			}
		}
		if (rc)
			return rc;
		if (t)
			return 0;
	}
	return set_error(-EPROTO, "iSCSI login: operational negotiation did not finish");
}

int iscsi_login(int fd, const struct iscsi_login_cfg *cfg, int timeout_ms,
		struct iscsi_session *out)
{
	struct host_login_ctx c = { .fd = fd, .cfg = cfg, .s = out, .itt = 0 };
	struct iscsi_params def;
	int rc;

	c.deadline = now_ms() + (uint64_t)timeout_ms;
	c.rtext = malloc(ISCSI_TEXT_MAX + 1);
	if (!c.rtext)
		return set_error(-ENOMEM, "out of memory");
	iscsi_params_default(&def);
	memset(out, 0, sizeof(*out));
	out->initial_r2t = def.initial_r2t;
	out->immediate_data = def.immediate_data;
	out->max_xmit_dsl = def.max_recv_dsl;
	out->max_recv_dsl = cfg->max_recv_dsl ? cfg->max_recv_dsl : ISCSI_INIT_MAX_RECV_DSL;
	out->max_burst = cfg->max_burst ? cfg->max_burst : ISCSI_INIT_MAX_BURST;
	out->first_burst = cfg->first_burst ? cfg->first_burst : ISCSI_INIT_FIRST_BURST;
	out->max_outstanding_r2t = 1;
	out->cmdsn = cfg->cmdsn;
	/* Keys the target offers on its own are answered with what we can do. */
	iscsi_params_default(&c.neg);
	c.local = c.neg;
	c.local.header_digest = cfg->hdgst ? ISCSI_DIGEST_CRC32C : ISCSI_DIGEST_NONE;
	c.local.data_digest = cfg->ddgst ? ISCSI_DIGEST_CRC32C : ISCSI_DIGEST_NONE;
	c.local.initial_r2t = 0;
	c.local.max_burst_length = out->max_burst;
	c.local.first_burst_length = out->first_burst;
	c.local.max_outstanding_r2t = 1;

	rc = security_stage(&c);
	if (rc == 0)
		rc = operational_stage(&c);
	free(c.rtext);
	if (rc)
		return rc;
	if (!(c.answered & (1u << ISCSI_KEY_MAX_BURST_LENGTH)))
		out->max_burst = def.max_burst_length;
	if (!(c.answered & (1u << ISCSI_KEY_FIRST_BURST_LENGTH)))
		out->first_burst = def.first_burst_length;
	if (out->first_burst > out->max_burst)
		out->first_burst = out->max_burst;
	if (out->tsih == 0)
		return set_error(-EPROTO, "iSCSI login: final Login Response without a TSIH");
	if (iscsi_sn_lt(out->max_cmdsn, out->exp_cmdsn - 1))
		return set_error(-EPROTO, "iSCSI login: MaxCmdSN %u below ExpCmdSN %u",
				 out->max_cmdsn, out->exp_cmdsn);
	out->cmdsn = out->exp_cmdsn;
	nlog_debug("iSCSI session to %s: TSIH %u, digests %s/%s, ImmediateData %s, InitialR2T "
		   "%s, MaxXmitDSL %u, MaxBurst %u, FirstBurst %u%s", cfg->target_name, out->tsih,
		   out->hdgst ? "CRC32C" : "None", out->ddgst ? "CRC32C" : "None",
		   out->immediate_data ? "Yes" : "No", out->initial_r2t ? "Yes" : "No",
		   out->max_xmit_dsl, out->max_burst, out->first_burst,
		   !out->chap_alg ? "" : out->chap_alg == ISCSI_CHAP_MD5 ? ", CHAP MD5"
									 : ", CHAP SHA-256");
	return 0;
}
