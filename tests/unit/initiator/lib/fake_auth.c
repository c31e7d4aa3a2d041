/* SPDX-License-Identifier: MIT */
#include "fake_auth.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/rand.h>

#include "common/dhchap_key.h"
#include "common/endian.h"
#include "common/nvme_auth_spec.h"

static void bad(struct fake_auth *fa, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct fake_auth *fa, const char *fmt, ...)
{
	va_list ap;

	if (fa->err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(fa->err, sizeof(fa->err), fmt, ap);
	va_end(ap);
}

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int load_key(const char *text, const char *nqn, struct nvme_secret **out)
{
	struct nvme_dhchap_key k = { 0 };
	int rc;

	*out = NULL;
	if (!text)
		return 0;
	rc = nvme_dhchap_key_parse(text, &k, NULL, 0);
	if (rc == 0)
		rc = nvme_dhchap_key_transform(&k, nqn, out);
	nvme_dhchap_key_clear(&k);
	return rc ? -1 : 0;
}

int fa_init(struct fake_auth *fa, const struct fake_auth_cfg *cfg)
{
	memset(fa, 0, sizeof(*fa));
	fa->cfg = cfg;
	fa->step = FA_WAIT_NEGOTIATE;
	if (load_key(cfg->host_key, cfg->hostnqn, &fa->kh) ||
	    load_key(cfg->ctrl_key, cfg->subnqn, &fa->kc))
		return -1;
	return 0;
}

static void reset_dh(struct fake_auth *fa)
{
	nvme_dh_free(fa->dh);
	nvme_secret_free(fa->dh_secret);
	fa->dh = NULL;
	fa->dh_secret = NULL;
}

void fa_fini(struct fake_auth *fa)
{
	reset_dh(fa);
	nvme_secret_free(fa->kh);
	nvme_secret_free(fa->kc);
	fa->kh = fa->kc = NULL;
}

void fa_key_text(uint8_t fill, size_t len, uint8_t hash, const char *nqn, char *buf, size_t n)
{
	uint8_t raw[64];
	struct nvme_dhchap_key k;

	memset(raw, fill, sizeof(raw));
	for (size_t i = 0; i < len; i++)
		raw[i] = (uint8_t)(fill + i);
	buf[0] = '\0';
	if (nvme_dhchap_key_generate(raw, len, hash, nqn, &k) == 0) {
		nvme_dhchap_key_format(&k, buf, n);
		nvme_dhchap_key_clear(&k);
	}
}

/* ---- What the host sends ------------------------------------------------------------ */
static void take_negotiate(struct fake_auth *fa, const uint8_t *m, size_t tl)
{
	static const uint8_t hashes[] = { 1, 2, 3 }, groups[] = { 0, 1, 2, 3, 4, 5 };
	const uint8_t *d = m + 8;

	if (tl != 8 + 64) {
		bad(fa, "negotiate: length %zu, want 72", tl);
		return;
	}
	if (m[0] != NVME_AUTH_TYPE_COMMON || m[1] != NVME_AUTH_ID_NEGOTIATE)
		bad(fa, "negotiate: type %02x id %02x", m[0], m[1]);
	if (m[2] || m[3])
		bad(fa, "negotiate: reserved bytes 2-3 not zero");
	if (m[6] != NVME_AUTH_SC_C_NONE)
		bad(fa, "negotiate: SC_C %u", m[6]);
	if (m[7] != 1)
		bad(fa, "negotiate: NAPD %u", m[7]);
	if (d[0] != NVME_AUTH_PROTO_DHCHAP || d[1] != 0 || d[2] != 3 || d[3] != 6)
		bad(fa, "negotiate: descriptor authid %u rsvd %u halen %u dhlen %u", d[0], d[1],
		    d[2], d[3]);
	if (memcmp(d + 4, hashes, 3) || !zero(d + 4 + 3, 27))
		bad(fa, "negotiate: hash id list");
	if (memcmp(d + 4 + 30, groups, 6) || !zero(d + 4 + 36, 24))
		bad(fa, "negotiate: DH group id list");
	reset_dh(fa);
	fa->t_id = get_le16(m + 4);
	fa->transactions++;
	fa->r1_bad = false;
	fa->got_failure2 = false;
	fa->step = FA_SEND_CHALLENGE;
	if (fa->cfg->fault == FA_FAILURE1_HASH) {
		fa->fail1_exp = NVME_AUTH_FAIL_HASH_UNUSABLE;
		fa->step = FA_SEND_FAILURE1;
	}
}

static void take_reply(struct fake_auth *fa, const uint8_t *m, size_t tl)
{
	size_t hl = fa->hl, dhvlen = nvme_dh_value_len(fa->cfg->dhgid);
	uint8_t r1[64];
	struct nvme_dhchap_resp_in in = {
		.hash_id = fa->cfg->hash_id,
		.key = fa->kh,
		.challenge = fa->c1,
		.seqnum = fa->s1,
		.t_id = fa->t_id,
		.hostnqn = fa->cfg->hostnqn,
		.subsysnqn = fa->cfg->subnqn,
	};

	if (tl != NVME_DHCHAP_REPLY_LEN(hl, dhvlen)) {
		bad(fa, "reply: length %zu, want %zu", tl, NVME_DHCHAP_REPLY_LEN(hl, dhvlen));
		fa->step = FA_FAILED;
		return;
	}
	if (m[0] != NVME_AUTH_TYPE_DHCHAP || m[1] != NVME_AUTH_ID_REPLY)
		bad(fa, "reply: type %02x id %02x", m[0], m[1]);
	if (m[2] || m[3] || m[7] || m[9])
		bad(fa, "reply: reserved bytes not zero");
	if (get_le16(m + 4) != fa->t_id)
		bad(fa, "reply: T_ID %u, want %u", get_le16(m + 4), fa->t_id);
	if (m[6] != hl)
		bad(fa, "reply: HL %u, want %zu", m[6], hl);
	if (get_le16(m + 10) != dhvlen)
		bad(fa, "reply: DHVLEN %u, want %zu", get_le16(m + 10), dhvlen);
	fa->bidirectional = m[8] & 1;
	if (m[8] & ~1u)
		bad(fa, "reply: CVALID byte %02x", m[8]);
	fa->s2 = get_le32(m + 12);
	if (fa->bidirectional) {
		if (!fa->s2)
			bad(fa, "reply: S2 is 0 with CVALID set");
		if (zero(m + 16 + hl, hl))
			bad(fa, "reply: C2 is all zero with CVALID set");
		memcpy(fa->c2, m + 16 + hl, hl);
	} else if (fa->s2 || !zero(m + 16 + hl, hl)) {
		bad(fa, "reply: S2 or C2 set without CVALID");
	}
	if (dhvlen) {
		if (nvme_dh_shared_secret(fa->dh, m + 16 + 2 * hl, dhvlen, &fa->dh_secret)) {
			bad(fa, "reply: the host's DH value is not valid");
			fa->step = FA_FAILED;
			return;
		}
	}
	in.dh_secret = fa->dh_secret;
	if (nvme_dhchap_host_response(&in, r1)) {
		bad(fa, "reply: cannot compute R1");
		return;
	}
	if (memcmp(r1, m + 16, hl)) {
		fa->r1_bad = true;
		fa->fail1_exp = NVME_AUTH_FAIL_FAILED;
		fa->step = FA_SEND_FAILURE1;
		return;
	}
	fa->step = FA_SEND_SUCCESS1;
}

static void take_failure2(struct fake_auth *fa, const uint8_t *m, size_t tl)
{
	if (tl != 8)
		bad(fa, "failure2: length %zu, want 8", tl);
	if (m[2] || m[3])
		bad(fa, "failure2: reserved bytes not zero");
	if (get_le16(m + 4) != fa->t_id)
		bad(fa, "failure2: T_ID %u, want %u", get_le16(m + 4), fa->t_id);
	if (m[6] != NVME_AUTH_FAIL_REASON_FAILED)
		bad(fa, "failure2: reason code %u", m[6]);
	fa->got_failure2 = true;
	fa->failure2_exp = m[7];
	fa->step = FA_FAILED;
}

void fa_send(struct fake_auth *fa, const uint8_t *m, size_t tl)
{
	if (tl < 8) {
		bad(fa, "send: %zu bytes", tl);
		return;
	}
	if (m[0] == NVME_AUTH_TYPE_COMMON && m[1] == NVME_AUTH_ID_NEGOTIATE) {
		take_negotiate(fa, m, tl);
		return;
	}
	if (m[0] == NVME_AUTH_TYPE_COMMON && m[1] == NVME_AUTH_ID_FAILURE2) {
		take_failure2(fa, m, tl);
		return;
	}
	if (fa->step == FA_WAIT_REPLY) {
		take_reply(fa, m, tl);
		return;
	}
	if (fa->step == FA_WAIT_SUCCESS2) {
		if (tl != 16 || m[0] != NVME_AUTH_TYPE_DHCHAP || m[1] != NVME_AUTH_ID_SUCCESS2 ||
		    get_le16(m + 4) != fa->t_id || m[2] || m[3] || !zero(m + 6, 10))
			bad(fa, "success2: not byte-exact (length %zu, type %02x id %02x)", tl,
			    m[0], m[1]);
		fa->authenticated = true;
		fa->step = FA_DONE;
		return;
	}
	bad(fa, "send: message type %02x id %02x in step %d", m[0], m[1], fa->step);
}

/* ---- What the controller answers ---------------------------------------------------- */
static int make_challenge(struct fake_auth *fa, uint8_t *out, size_t al)
{
	size_t hl = nvme_auth_hash_len(fa->cfg->hash_id);
	size_t dhvlen = nvme_dh_value_len(fa->cfg->dhgid);
	size_t n = NVME_DHCHAP_CHALLENGE_LEN(hl, dhvlen);

	if (al < n) {
		bad(fa, "challenge: allocation length %zu < %zu", al, n);
		return 0;
	}
	fa->hl = (uint8_t)hl;
	RAND_bytes(fa->c1, (int)hl);
	do
		RAND_bytes((uint8_t *)&fa->s1, sizeof(fa->s1));
	while (!fa->s1);
	out[0] = NVME_AUTH_TYPE_DHCHAP;
	out[1] = NVME_AUTH_ID_CHALLENGE;
	put_le16(out + 4, fa->t_id);
	out[6] = (uint8_t)hl;
	out[8] = fa->cfg->hash_id;
	out[9] = fa->cfg->dhgid;
	put_le16(out + 10, (uint16_t)dhvlen);
	put_le32(out + 12, fa->s1);
	memcpy(out + 16, fa->c1, hl);
	if (dhvlen) {
		if (nvme_dh_generate(fa->cfg->dhgid, &fa->dh) ||
		    nvme_dh_public(fa->dh, out + 16 + hl, dhvlen)) {
			bad(fa, "challenge: DH key generation failed");
			return 0;
		}
	}
	if (fa->cfg->fault == FA_CHALLENGE_HL)
		out[6] = 200;
	if (fa->cfg->fault == FA_CHALLENGE_TRUNC) {
		put_le16(out + 10, (uint16_t)(dhvlen + 8));
		out[9] = out[9] ? out[9] : NVME_AUTH_DHGROUP_FFDHE2048;
		return (int)(16 + hl);
	}
	fa->step = FA_WAIT_REPLY;
	return (int)n;
}

static int make_success1(struct fake_auth *fa, uint8_t *out, size_t al)
{
	size_t hl = fa->hl;
	struct nvme_dhchap_resp_in in = {
		.hash_id = fa->cfg->hash_id,
		.key = fa->kc,
		.challenge = fa->c2,
		.seqnum = fa->s2,
		.t_id = fa->t_id,
		.hostnqn = fa->cfg->hostnqn,
		.subsysnqn = fa->cfg->subnqn,
		.dh_secret = fa->dh_secret,
	};

	if (al < 16 + hl) {
		bad(fa, "success1: allocation length %zu", al);
		return 0;
	}
	out[0] = NVME_AUTH_TYPE_DHCHAP;
	out[1] = NVME_AUTH_ID_SUCCESS1;
	put_le16(out + 4, fa->t_id);
	out[6] = (uint8_t)hl;
	if (fa->bidirectional && fa->cfg->fault != FA_NO_R2) {
		out[8] = NVME_DHCHAP_SUCCESS1_RVALID;
		if (!fa->kc || nvme_dhchap_ctrl_response(&in, out + 16)) {
			/* No controller key: a zero R2, which the host must refuse. */
			memset(out + 16, 0, hl);
		}
		if (fa->cfg->fault == FA_BAD_R2)
			out[16] ^= 0x80;
		fa->step = FA_WAIT_SUCCESS2;
	} else {
		fa->step = fa->bidirectional ? FA_WAIT_SUCCESS2 : FA_DONE;
		fa->authenticated = !fa->bidirectional;
	}
	return (int)(16 + hl);
}

int fa_recv(struct fake_auth *fa, uint8_t *out, size_t al)
{
	memset(out, 0, al);
	switch (fa->step) {
	case FA_SEND_CHALLENGE:
		if (fa->cfg->fault == FA_STALL)
			return -1;
		return make_challenge(fa, out, al);
	case FA_SEND_SUCCESS1:
		return make_success1(fa, out, al);
	case FA_SEND_FAILURE1:
		if (al < 8)
			return 0;
		out[0] = NVME_AUTH_TYPE_COMMON;
		out[1] = NVME_AUTH_ID_FAILURE1;
		put_le16(out + 4, fa->t_id);
		out[6] = NVME_AUTH_FAIL_REASON_FAILED;
		out[7] = fa->fail1_exp;
		fa->step = FA_FAILED;
		return 8;
	default:
		bad(fa, "receive in step %d", fa->step);
		return 0;
	}
}
