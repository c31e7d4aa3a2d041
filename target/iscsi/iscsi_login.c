// SPDX-License-Identifier: MIT
/*
 * iSCSI login (RFC 7143 section 6): stage transitions (security -> operational -> full
 * feature), CHAP authentication (the target's or the discovery credentials, copied under
 * the lock; mutual CHAP when the initiator asks), operational key negotiation
 * (iscsi_param_negotiate), session creation (TSIH, reinstatement), and Text requests
 * (SendTargets) afterwards.
 * Secrets never reach the log.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iscsi_internal.h"
#include "common/log.h"

#define TEXT_OUT_MAX 65536u

struct login_ctx {
	const uint8_t *bhs;
	uint16_t status;		/* ISCSI_LOGIN_* */
	bool transit;			/* we allow the stage transition the initiator asked */
	uint8_t nsg;
	size_t out_len;
	const char *chap_n, *chap_r, *chap_i, *chap_c, *chap_a;
	const char *auth_method;
};

static int text_out_reserve(struct iscsi_conn *c)
{
	if (!c->text_out) {
		c->text_out = malloc(TEXT_OUT_MAX);
		if (!c->text_out)
			return -ENOMEM;
	}
	return 0;
}

static int out_add(struct iscsi_conn *c, struct login_ctx *x, const char *k, const char *v)
{
	return iscsi_text_add(c->text_out, TEXT_OUT_MAX, &x->out_len, k, v);
}

/* Append more request text (C bit continuation). */
static int text_in_append(struct iscsi_conn *c, const uint8_t *data, uint32_t dlen)
{
	char *n;

	if (c->text_in_len + dlen > ISCSI_TEXT_MAX)
		return -E2BIG;
	n = realloc(c->text_in, c->text_in_len + dlen + 1);
	if (!n)
		return -ENOMEM;
	memcpy(n + c->text_in_len, data, dlen);
	c->text_in = n;
	c->text_in_len += dlen;
	return 0;
}

static void text_in_reset(struct iscsi_conn *c)
{
	free(c->text_in);
	c->text_in = NULL;
	c->text_in_len = 0;
}

void iscsi_login_fini(struct iscsi_conn *c)
{
	text_in_reset(c);
	free(c->text_out);
	c->text_out = NULL;
	OPENSSL_cleanse(c->chap_challenge, sizeof(c->chap_challenge));
}

/* Our operational values for this session. */
static void local_params(struct iscsi_params *l)
{
	const struct iscsi_opts *o = &g_iscsi.opts;

	iscsi_params_default(l);
	l->header_digest = o->require_header_digest ? ISCSI_DIGEST_CRC32C
			   : ISCSI_DIGEST_NONE | (o->header_digest ? ISCSI_DIGEST_CRC32C : 0);
	l->data_digest = o->require_data_digest ? ISCSI_DIGEST_CRC32C
			 : ISCSI_DIGEST_NONE | (o->data_digest ? ISCSI_DIGEST_CRC32C : 0);
	l->initial_r2t = o->initial_r2t;
	l->immediate_data = o->immediate_data;
	l->max_burst_length = o->max_burst_length;
	l->first_burst_length = o->first_burst_length;
	l->max_outstanding_r2t = o->max_outstanding_r2t;
	l->default_time2wait = 2;
	l->default_time2retain = 0;
}

uint32_t iscsi_target_mrdsl(void)
{
	uint32_t v = g_iscsi.opts.max_recv_dsl;
	size_t chunk = reactor_buf_size();

	if (!v)
		v = chunk < 262144 ? (uint32_t)chunk : 262144;
	if (v > chunk)
		v = (uint32_t)chunk;
	return v;
}

/* ---- responses ---------------------------------------------------------------------------- */

static void login_rsp_sent(struct iscsi_conn *c, struct iscsi_tx *tx)
{
	if (c->state == CONN_LOGGED_OUT)
		iscsi_conn_close(c, "login failed");
}

static void send_login_rsp(struct iscsi_conn *c, struct login_ctx *x)
{
	const uint8_t *req = x->bhs;
	struct iscsi_tx *tx = iscsi_ctl_get(c);
	uint8_t flags = (uint8_t)(c->csg << ISCSI_LOGIN_CSG_SHIFT);

	if (!tx) {
		iscsi_conn_close(c, "no control PDU for a login response");
		return;
	}
	if (x->status == ISCSI_LOGIN_OK && x->transit)
		flags |= ISCSI_LOGIN_TRANSIT | x->nsg;
	iscsi_bhs_init(tx->hdr, ISCSI_OP_LOGIN_RSP, flags);
	tx->hdr[2] = ISCSI_VERSION;
	tx->hdr[3] = ISCSI_VERSION;
	memcpy(tx->hdr + 8, req + 8, 6); /* ISID */
	put_be16(tx->hdr + 14, x->status == ISCSI_LOGIN_OK && x->transit &&
				       x->nsg == ISCSI_STAGE_FULL_FEATURE ? c->tsih : 0);
	memcpy(tx->hdr + 16, req + 16, 4); /* ITT */
	iscsi_put_sn(c, tx->hdr, true);
	tx->hdr[36] = (uint8_t)(x->status >> 8);
	tx->hdr[37] = (uint8_t)x->status;
	if (x->status == ISCSI_LOGIN_OK && x->out_len) {
		/* the response data lives in text_out until the next exchange */
		tx->data = (const uint8_t *)c->text_out;
		tx->dlen = (uint32_t)x->out_len;
	}
	if (x->status != ISCSI_LOGIN_OK)
		c->state = CONN_LOGGED_OUT;
	tx->sent = login_rsp_sent;
	iscsi_tx_send(c, tx);
}

/* ---- security stage ---------------------------------------------------------------------- */

static bool list_contains(const char *list, const char *item)
{
	size_t il = strlen(item);

	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == il && !strncmp(p, item, n))
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

/* The credentials logins of @c answer to: its target's, or the discovery ones. */
static struct iscsi_auth *conn_auth_locked(const struct iscsi_conn *c)
{
	if (c->discovery)
		return &g_iscsi.disc_auth;
	return c->target ? &c->target->auth : NULL;
}

/* A copy taken under the lock (a reload may change them); wipe it after use. */
static bool conn_auth_copy(const struct iscsi_conn *c, struct iscsi_auth *out)
{
	const struct iscsi_auth *a;

	pthread_mutex_lock(&g_iscsi.lock);
	a = conn_auth_locked(c);
	if (a)
		*out = *a;
	else
		memset(out, 0, sizeof(*out));
	pthread_mutex_unlock(&g_iscsi.lock);
	return out->chap;
}

static bool conn_needs_chap(const struct iscsi_conn *c)
{
	const struct iscsi_auth *a;
	bool need;

	pthread_mutex_lock(&g_iscsi.lock);
	a = conn_auth_locked(c);
	need = a && a->chap;
	pthread_mutex_unlock(&g_iscsi.lock);
	return need;
}

static void chap_algs_text(uint32_t mask, char *buf, size_t len)
{
	static const uint8_t order[] = { ISCSI_CHAP_SHA3_256, ISCSI_CHAP_SHA256, ISCSI_CHAP_SHA1,
					 ISCSI_CHAP_MD5 };
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(order) && o < len; i++)
		if (mask & (1u << order[i]))
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "",
					      iscsi_chap_alg_name(order[i]));
	if (!buf[0])
		snprintf(buf, len, "none");
}

static int chap_start(struct iscsi_conn *c, struct login_ctx *x)
{
	char num[8], hex[2 * sizeof(c->chap_challenge) + 3];
	uint32_t allowed = __atomic_load_n(&g_iscsi.opts.chap_algs, __ATOMIC_RELAXED), offered;
	unsigned int dl;

	/* the strongest digest both sides allow, whatever the initiator's order */
	c->chap_alg = iscsi_chap_choose(x->chap_a, allowed, &offered);
	if (!c->chap_alg) {
		char a[64], o[64];

		chap_algs_text(allowed, a, sizeof(a));
		chap_algs_text(offered, o, sizeof(o));
		log_peer("%s: CHAP refused: the initiator offers %s, the target allows %s "
			 "(iscsi.options.chap_algs)",
			 c->peer, o, a);
		out_add(c, x, "CHAP_A", "Reject");
		x->status = ISCSI_LOGIN_AUTH_FAILED;
		return 0;
	}
	dl = iscsi_chap_digest_len(c->chap_alg);
	c->chap_challenge_len = dl;
	if (iscsi_chap_random(&c->chap_id, 1) ||
	    iscsi_chap_random(c->chap_challenge, c->chap_challenge_len)) {
		x->status = ISCSI_LOGIN_TARGET_ERROR;
		return 0;
	}
	snprintf(num, sizeof(num), "%u", c->chap_alg);
	out_add(c, x, "CHAP_A", num);
	snprintf(num, sizeof(num), "%u", c->chap_id);
	out_add(c, x, "CHAP_I", num);
	iscsi_text_encode_hex(c->chap_challenge, c->chap_challenge_len, hex);
	out_add(c, x, "CHAP_C", hex);
	c->login_step = LOGIN_CHAP_R;
	return 0;
}

static int chap_verify(struct iscsi_conn *c, struct login_ctx *x)
{
	struct iscsi_auth a;
	char hex[2 * ISCSI_CHAP_DIGEST_MAX + 3];
	int rc;

	if (!conn_auth_copy(c, &a) || !x->chap_n || !x->chap_r) {
		x->status = ISCSI_LOGIN_AUTH_FAILED;
		goto out;
	}
	if (strcmp(x->chap_n, a.in.user) ||
	    iscsi_chap_check(c->chap_alg, c->chap_id, a.in.secret, c->chap_challenge,
			     c->chap_challenge_len, x->chap_r)) {
		log_peer("%s: CHAP authentication of '%.64s' failed (%s)", c->peer, x->chap_n,
			 iscsi_chap_alg_name(c->chap_alg));
		x->status = ISCSI_LOGIN_AUTH_FAILED;
		goto out;
	}
	if (x->chap_i || x->chap_c) { /* mutual CHAP: the initiator challenges us */
		if (!a.mutual) {
			log_peer("%s: '%.64s' asks the target to authenticate (mutual CHAP), "
				 "but no mutual_user is configured",
				 c->peer, x->chap_n);
			x->status = ISCSI_LOGIN_AUTH_FAILED;
			goto out;
		}
		rc = iscsi_chap_answer(c->chap_alg, x->chap_i, x->chap_c, a.out.secret,
				       c->chap_challenge, c->chap_challenge_len, hex, sizeof(hex));
		if (rc) {
			log_peer("%s: mutual CHAP refused: %s", c->peer,
				 rc == -EACCES ? "the initiator's challenge is our own"
					       : "CHAP_I/CHAP_C missing or malformed");
			x->status = ISCSI_LOGIN_AUTH_FAILED;
			goto out;
		}
		out_add(c, x, "CHAP_N", a.out.user);
		out_add(c, x, "CHAP_R", hex);
		c->chap_mutual_done = true;
	}
	c->auth_gen = a.gen;
	c->chap_used = true;
	c->auth_done = true;
	c->login_step = LOGIN_OPERATIONAL;
out:
	OPENSSL_cleanse(&a, sizeof(a));
	OPENSSL_cleanse(hex, sizeof(hex));
	return 0;
}

static int security_stage(struct iscsi_conn *c, struct login_ctx *x)
{
	bool need_chap = conn_needs_chap(c);

	if (c->auth_done)
		return 0;
	switch (c->login_step) {
	case LOGIN_SECURITY:
		if (!x->auth_method) {
			if (need_chap) /* authentication is mandatory here */
				x->status = ISCSI_LOGIN_AUTH_FAILED;
			else
				c->auth_done = true;
			return 0;
		}
		if (need_chap) {
			if (!list_contains(x->auth_method, "CHAP")) {
				log_peer("%s: login refused: CHAP is required, the initiator "
					 "offers AuthMethod=%.64s",
					 c->peer, x->auth_method);
				out_add(c, x, "AuthMethod", "Reject");
				x->status = ISCSI_LOGIN_AUTH_FAILED;
				return 0;
			}
			out_add(c, x, "AuthMethod", "CHAP");
			c->login_step = LOGIN_CHAP_A;
			if (x->chap_a)
				return chap_start(c, x);
			return 0;
		}
		if (!list_contains(x->auth_method, "None")) {
			out_add(c, x, "AuthMethod", "Reject");
			x->status = ISCSI_LOGIN_AUTH_FAILED;
			return 0;
		}
		out_add(c, x, "AuthMethod", "None");
		c->auth_done = true;
		return 0;
	case LOGIN_CHAP_A:
		if (!x->chap_a) {
			x->status = ISCSI_LOGIN_AUTH_FAILED;
			return 0;
		}
		return chap_start(c, x);
	case LOGIN_CHAP_R:
		return chap_verify(c, x);
	default:
		return 0;
	}
}

/* ---- session creation --------------------------------------------------------------------- */

/* On the old session's reactor: close it if it is still there (it may have gone by
 * itself; connections are freed on their own reactor, so the check cannot race). */
static void close_msg(void *arg)
{
	struct iscsi_conn *c;

	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(c, &g_iscsi.conns, link)
		if (c == arg)
			break;
	pthread_mutex_unlock(&g_iscsi.lock);
	if (c && c->r == reactor_self())
		iscsi_conn_close(c, "session reinstated");
}

/* TSIH, reinstatement of an older session of the same I_T nexus. */
static void session_register(struct iscsi_conn *c)
{
	struct iscsi_conn *o;

	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(o, &g_iscsi.conns, link) {
		if (o == c || !o->tsih || o->discovery != c->discovery ||
		    o->target != c->target || memcmp(o->isid, c->isid, 6) ||
		    strcmp(o->initiator, c->initiator))
			continue;
		o->tsih = 0; /* no longer findable */
		reactor_send_msg(o->r, close_msg, o);
	}
	do {
		c->tsih = g_iscsi.next_tsih++;
		if (!c->tsih)
			continue;
		TAILQ_FOREACH(o, &g_iscsi.conns, link)
			if (o != c && o->tsih == c->tsih)
				break;
		if (!o)
			break;
	} while (1);
	pthread_mutex_unlock(&g_iscsi.lock);
}

static int first_request(struct iscsi_conn *c, struct login_ctx *x, struct iscsi_kv *kv, int n)
{
	const uint8_t *req = x->bhs;
	const char *iname = NULL, *tname = NULL, *stype = "Normal";

	if (req[3] > ISCSI_VERSION) { /* Version-min above ours */
		x->status = ISCSI_LOGIN_UNSUPPORTED_VERSION;
		return 0;
	}
	memcpy(c->isid, req + 8, 6);
	c->cid = get_be16(req + 20);
	c->exp_cmdsn = get_be32(req + 24);
	c->login_itt = get_be32(req + 16);
	if (get_be16(req + 14)) { /* adding a connection to a session: MaxConnections=1 */
		x->status = ISCSI_LOGIN_NO_SESSION;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, "InitiatorName"))
			iname = kv[i].val;
		else if (!strcmp(kv[i].key, "TargetName"))
			tname = kv[i].val;
		else if (!strcmp(kv[i].key, "SessionType"))
			stype = kv[i].val;
	}
	if (!iname || !*iname || strlen(iname) > ISCSI_NAME_MAX) {
		x->status = ISCSI_LOGIN_MISSING_PARAMETER;
		return 0;
	}
	snprintf(c->initiator, sizeof(c->initiator), "%s", iname);
	if (!strcmp(stype, "Discovery")) {
		c->discovery = true;
		pthread_mutex_lock(&g_iscsi.lock);
		c->auth_gen = g_iscsi.disc_auth.gen;
		pthread_mutex_unlock(&g_iscsi.lock);
		return 0;
	}
	if (strcmp(stype, "Normal")) {
		x->status = ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED;
		return 0;
	}
	if (!tname) {
		x->status = ISCSI_LOGIN_MISSING_PARAMETER;
		return 0;
	}
	pthread_mutex_lock(&g_iscsi.lock);
	c->target = iscsi_target_find_locked(tname);
	if (c->target && !iscsi_target_initiator_allowed_locked(c->target, iname)) {
		pthread_mutex_unlock(&g_iscsi.lock);
		c->target = NULL;
		log_peer("%s: initiator %.64s not allowed on %.64s", c->peer, iname, tname);
		x->status = ISCSI_LOGIN_AUTHORIZATION_FAILED;
		return 0;
	}
	if (c->target) {
		c->target->refs++;
		c->auth_gen = c->target->auth.gen;
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	if (!c->target) {
		log_peer("%s: login to unknown target %.64s", c->peer, tname);
		x->status = ISCSI_LOGIN_NOT_FOUND;
		return 0;
	}
	return out_add(c, x, "TargetPortalGroupTag", "1");
}

/* Keys of one login request (all stages). */
static int login_keys(struct iscsi_conn *c, struct login_ctx *x, struct iscsi_kv *kv, int n)
{
	struct iscsi_params local;
	char resp[64];

	local_params(&local);
	for (int i = 0; i < n && x->status == ISCSI_LOGIN_OK; i++) {
		const char *k = kv[i].key, *v = kv[i].val;
		int rc;

		if (!strncmp(k, "CHAP_", 5)) {
			if (!strcmp(k, "CHAP_A"))
				x->chap_a = v;
			else if (!strcmp(k, "CHAP_N"))
				x->chap_n = v;
			else if (!strcmp(k, "CHAP_R"))
				x->chap_r = v;
			else if (!strcmp(k, "CHAP_I"))
				x->chap_i = v;
			else if (!strcmp(k, "CHAP_C"))
				x->chap_c = v;
			else if (out_add(c, x, k, "NotUnderstood"))
				return -ENOSPC;
			continue;
		}
		if (!strcmp(k, "AuthMethod")) {
			x->auth_method = v;
			continue;
		}
		rc = iscsi_param_negotiate(&c->params, &local, c->discovery, k, v, resp,
					   sizeof(resp));
		if (rc == -EPROTO) {
			x->status = ISCSI_LOGIN_INITIATOR_ERROR;
			return 0;
		}
		if (rc == ISCSI_NEG_ANSWER) {
			if (out_add(c, x, k, resp))
				return -ENOSPC;
		} else if (rc == ISCSI_NEG_NO_ANSWER) {
			/* MaxRecvDataSegmentLength: declare ours in return */
			if (!strcmp(k, "MaxRecvDataSegmentLength")) {
				snprintf(resp, sizeof(resp), "%u", iscsi_target_mrdsl());
				if (out_add(c, x, k, resp))
					return -ENOSPC;
			}
		} else if (rc == ISCSI_NEG_NOT_OPERATIONAL) {
			/* declarations handled by first_request(); target-only keys refused */
			if (!strcmp(k, "TargetAddress") || !strcmp(k, "TargetPortalGroupTag") ||
			    !strcmp(k, "TargetAlias") || !strcmp(k, "SendTargets")) {
				if (out_add(c, x, k, "Reject"))
					return -ENOSPC;
			}
		}
	}
	return 0;
}

static void enter_full_feature(struct iscsi_conn *c)
{
	iscsi_params_finish(&c->params);
	c->state = CONN_FULL;
	iscsi_conn_established(c);
	iscsi_watch_start(c);
	c->hdigest = c->params.header_digest;
	c->ddigest = c->params.data_digest;
	/* Read data may leave from namespace memory, unless a digest is computed over it
	 * (a concurrent write could change it between the digest and the send). */
	c->qp.map_read_data = !c->ddigest;
	log_info("%s: %s session of %.64s%s%.64s, TSIH %u (digests %s/%s, MRDSL %u%s%s%s)", c->peer,
		 c->discovery ? "discovery" : "normal", c->initiator, c->target ? " to " : "",
		 c->target ? c->target->name : "", c->tsih,
		 c->params.header_digest ? "CRC32C" : "none",
		 c->params.data_digest ? "CRC32C" : "none", c->params.max_recv_dsl,
		 c->chap_used ? ", CHAP " : "",
		 c->chap_used ? iscsi_chap_alg_name(c->chap_alg) : "",
		 c->chap_mutual_done ? " mutual" : "");
}

int iscsi_login_rx(struct iscsi_conn *c, const uint8_t *bhs, uint8_t *data, uint32_t dlen)
{
	struct login_ctx x = { .bhs = bhs, .status = ISCSI_LOGIN_OK };
	struct iscsi_kv kv[ISCSI_TEXT_MAX_PAIRS];
	uint8_t flags = bhs[1];
	uint8_t csg = (flags & ISCSI_LOGIN_CSG_MASK) >> ISCSI_LOGIN_CSG_SHIFT;
	uint8_t nsg = flags & ISCSI_LOGIN_NSG_MASK;
	bool transit = flags & ISCSI_LOGIN_TRANSIT;
	int n, rc;

	if (c->state != CONN_LOGIN)
		return -EPROTO;
	if (text_out_reserve(c))
		return -ENOMEM;
	if (!(bhs[0] & ISCSI_FLAG_IMMEDIATE) || (transit && (flags & ISCSI_LOGIN_CONTINUE)) ||
	    csg == 2 || (transit && (nsg == 2 || nsg <= csg))) {
		x.status = ISCSI_LOGIN_INITIATOR_ERROR;
		goto respond;
	}
	if (!c->login_first && (memcmp(c->isid, bhs + 8, 6) || get_be32(bhs + 16) != c->login_itt)) {
		x.status = ISCSI_LOGIN_INITIATOR_ERROR;
		goto respond;
	}
	if (text_in_append(c, data, dlen)) {
		x.status = ISCSI_LOGIN_OUT_OF_RESOURCES;
		goto respond;
	}
	if (flags & ISCSI_LOGIN_CONTINUE) {
		/* more text follows: acknowledge with an empty response */
		c->csg = csg;
		goto respond;
	}
	n = iscsi_text_parse(c->text_in, c->text_in_len, kv, ISCSI_TEXT_MAX_PAIRS);
	if (n < 0) {
		x.status = ISCSI_LOGIN_INITIATOR_ERROR;
		goto respond;
	}
	if (c->login_first) {
		c->csg = csg;
		rc = first_request(c, &x, kv, n);
		c->login_first = false;
		if (rc)
			return rc;
		if (x.status != ISCSI_LOGIN_OK)
			goto respond;
	}
	if (csg != c->csg && !(csg == ISCSI_STAGE_OPERATIONAL && c->csg == ISCSI_STAGE_SECURITY &&
				 c->auth_done)) {
		x.status = ISCSI_LOGIN_INITIATOR_ERROR;
		goto respond;
	}
	c->csg = csg;
	rc = login_keys(c, &x, kv, n);
	if (rc)
		return rc;
	if (x.status == ISCSI_LOGIN_OK && csg == ISCSI_STAGE_SECURITY)
		security_stage(c, &x);
	if (x.status == ISCSI_LOGIN_OK && csg == ISCSI_STAGE_OPERATIONAL && !c->auth_done) {
		/* skipped the security stage although authentication is required */
		if (conn_needs_chap(c))
			x.status = ISCSI_LOGIN_AUTH_FAILED;
		else
			c->auth_done = true;
	}
	if (x.status == ISCSI_LOGIN_OK && transit && c->auth_done) {
		x.transit = true;
		x.nsg = nsg;
	}

respond:
	text_in_reset(c);
	if (x.status == ISCSI_LOGIN_OK && x.transit && x.nsg == ISCSI_STAGE_FULL_FEATURE &&
	    ((g_iscsi.opts.require_header_digest && !c->params.header_digest) ||
	     (g_iscsi.opts.require_data_digest && !c->params.data_digest))) {
		log_peer("%s: login refused: CRC32C digests are required", c->peer);
		x.status = ISCSI_LOGIN_INITIATOR_ERROR;
	}
	if (x.status == ISCSI_LOGIN_OK && x.transit && x.nsg == ISCSI_STAGE_FULL_FEATURE) {
		unsigned int all = __atomic_load_n(&g_iscsi.nconns, __ATOMIC_RELAXED);
		unsigned int connecting = __atomic_load_n(&g_iscsi.nconnecting, __ATOMIC_RELAXED);

		/* declare our receive limit if the initiator did not ask */
		if (!(c->params.seen & (1u << ISCSI_KEY_MAX_RECV_DSL))) {
			char v[16];

			snprintf(v, sizeof(v), "%u", iscsi_target_mrdsl());
			out_add(c, &x, "MaxRecvDataSegmentLength", v);
		}
		/* the established-session limit, beside the connecting one */
		if (g_iscsi.tgt && all - connecting >= g_iscsi.tgt->opts.max_connections) {
			log_peer("%s: login refused: %u sessions already", c->peer,
				 g_iscsi.tgt->opts.max_connections);
			x.status = ISCSI_LOGIN_OUT_OF_RESOURCES;
		}
	}
	if (x.status == ISCSI_LOGIN_OK && x.transit && x.nsg == ISCSI_STAGE_FULL_FEATURE) {
		char err[128];

		/* a normal session counts against its initiator (max_sessions_per_initiator) */
		rc = c->discovery ? 0 : iscsi_initiator_join(c);
		if (rc) {
			x.status = rc == -EUSERS ? ISCSI_LOGIN_OUT_OF_RESOURCES
						 : ISCSI_LOGIN_TARGET_ERROR;
		} else {
			session_register(c);
		}
		if (!rc && !c->discovery && iscsi_session_start(c, err, sizeof(err))) {
			log_warn("%s: cannot start the session: %s", c->peer, err);
			x.status = ISCSI_LOGIN_TARGET_ERROR;
			c->tsih = 0;
		}
	}
	/* The response names the stage it answers; the transition takes effect after it. */
	send_login_rsp(c, &x);
	if (x.status == ISCSI_LOGIN_OK && x.transit)
		c->csg = x.nsg;
	if (x.status == ISCSI_LOGIN_OK && x.transit && x.nsg == ISCSI_STAGE_FULL_FEATURE)
		enter_full_feature(c);
	return 0;
}

/* ---- Text requests (full feature phase) ------------------------------------------------------ */

/* TargetAddress of this portal: its advertised address, else the one the initiator
 * reached; the port is the one the initiator dialled. */
static void portal_address(const struct iscsi_conn *c, char *buf, size_t len)
{
	const char *addr = c->advertise[0] ? c->advertise : c->local_addr;

	if (strchr(addr, ':'))
		snprintf(buf, len, "[%s]:%s,%u", addr, c->local_port, ISCSI_TPGT);
	else
		snprintf(buf, len, "%s:%s,%u", addr, c->local_port, ISCSI_TPGT);
}

static int send_targets(struct iscsi_conn *c, const char *which, size_t *len)
{
	struct iscsi_target *t;
	char addr[300];
	int rc = 0;

	portal_address(c, addr, sizeof(addr));
	pthread_mutex_lock(&g_iscsi.lock);
	TAILQ_FOREACH(t, &g_iscsi.targets, link) {
		if (t->removed || !iscsi_target_initiator_allowed_locked(t, c->initiator))
			continue;
		if (strcmp(which, "All") && strcmp(which, t->name) &&
		    !(!*which && c->target == t))
			continue;
		rc = iscsi_text_add(c->text_out, TEXT_OUT_MAX, len, "TargetName", t->name);
		if (!rc)
			rc = iscsi_text_add(c->text_out, TEXT_OUT_MAX, len, "TargetAddress", addr);
		if (rc)
			break;
	}
	pthread_mutex_unlock(&g_iscsi.lock);
	return rc;
}

/* Send the next piece of c->text_out (up to the initiator's MaxRecvDataSegmentLength). */
static void send_text_rsp(struct iscsi_conn *c, const uint8_t *req)
{
	struct iscsi_tx *tx = iscsi_ctl_get(c);
	uint32_t left = c->text_out_len - c->text_out_off;
	uint32_t n = left < c->params.max_recv_dsl ? left : c->params.max_recv_dsl;
	bool last = n == left;

	if (!tx) {
		iscsi_conn_close(c, "no control PDU for a text response");
		return;
	}
	iscsi_bhs_init(tx->hdr, ISCSI_OP_TEXT_RSP, last ? ISCSI_FLAG_FINAL : ISCSI_TEXT_CONTINUE);
	memcpy(tx->hdr + 8, req + 8, 8);	/* LUN */
	memcpy(tx->hdr + 16, req + 16, 4);	/* ITT */
	if (last) {
		put_be32(tx->hdr + 20, ISCSI_TAG_RESERVED);
	} else {
		c->text_ttt = ++c->next_ttt;
		put_be32(tx->hdr + 20, c->text_ttt);
	}
	iscsi_put_sn(c, tx->hdr, true);
	tx->data = (const uint8_t *)c->text_out + c->text_out_off;
	tx->dlen = n;
	c->text_out_off += n;
	iscsi_tx_send(c, tx);
}

int iscsi_text_rx(struct iscsi_conn *c, const uint8_t *bhs, uint8_t *data, uint32_t dlen)
{
	struct iscsi_kv kv[ISCSI_TEXT_MAX_PAIRS];
	uint32_t ttt = get_be32(bhs + 20);
	bool immediate = iscsi_bhs_immediate(bhs);
	size_t len = 0;
	int n, rc;

	if (c->state != CONN_FULL)
		return -EPROTO;
	rc = iscsi_cmdsn_check(c, get_be32(bhs + 24), immediate);
	if (rc <= 0)
		return rc;
	if (!immediate) {
		iscsi_cmdsn_advance(c);
		iscsi_window_open(c, 1);
	}
	if (text_out_reserve(c))
		return -ENOMEM;
	if (ttt != ISCSI_TAG_RESERVED) {
		/* continuation of a long response */
		if (ttt != c->text_ttt || c->text_out_off >= c->text_out_len) {
			iscsi_send_reject(c, ISCSI_REJECT_INVALID_PDU_FIELD, bhs);
			return 0;
		}
		send_text_rsp(c, bhs);
		return 0;
	}
	if (text_in_append(c, data, dlen))
		return -E2BIG;
	if (bhs[1] & ISCSI_TEXT_CONTINUE) { /* more request text follows */
		c->text_out_len = c->text_out_off = 0;
		send_text_rsp(c, bhs);
		return 0;
	}
	n = iscsi_text_parse(c->text_in, c->text_in_len, kv, ISCSI_TEXT_MAX_PAIRS);
	if (n < 0) {
		text_in_reset(c);
		iscsi_send_reject(c, ISCSI_REJECT_PROTOCOL_ERROR, bhs);
		return 0;
	}
	rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		const char *k = kv[i].key, *v = kv[i].val;

		if (!strcmp(k, "SendTargets")) {
			if (!c->discovery && !strcmp(v, "All"))
				rc = iscsi_text_add(c->text_out, TEXT_OUT_MAX, &len, k, "Reject");
			else
				rc = send_targets(c, v, &len);
		} else if (!strcmp(k, "MaxRecvDataSegmentLength")) {
			uint32_t m;

			if (!iscsi_text_parse_u32(v, &m) && m >= ISCSI_MIN_DATA_SEG_LEN &&
			    m <= ISCSI_MAX_DATA_SEG_LEN)
				c->params.max_recv_dsl = m;
			else
				rc = iscsi_text_add(c->text_out, TEXT_OUT_MAX, &len, k, "Reject");
		} else if (!strncmp(k, "X-", 2) || !strncmp(k, "X#", 2)) {
			rc = iscsi_text_add(c->text_out, TEXT_OUT_MAX, &len, k, "NotUnderstood");
		} else {
			/* leading-only and login keys cannot change in full feature phase */
			struct iscsi_params tmp = c->params, local;
			char resp[64];

			local_params(&local);
			tmp.seen = 0;
			if (iscsi_param_negotiate(&tmp, &local, c->discovery, k, v, resp,
						  sizeof(resp)) == ISCSI_NEG_ANSWER &&
			    !strcmp(resp, "NotUnderstood"))
				rc = iscsi_text_add(c->text_out, TEXT_OUT_MAX, &len, k, resp);
			else
				rc = iscsi_text_add(c->text_out, TEXT_OUT_MAX, &len, k, "Reject");
		}
	}
	text_in_reset(c); /* the keys pointed into it */
	c->text_out_len = (uint32_t)len;
	c->text_out_off = 0;
	send_text_rsp(c, bhs);
	return 0;
}
