/* SPDX-License-Identifier: MIT */
/*
 * The AUTH messages on the wire, controller side: checking what a host sends
 * (AUTH_Negotiate, DH-HMAC-CHAP_Reply, _Success2, AUTH_Failure2) before the machine looks
 * at any field, and writing what the controller sends (Challenge, Success1, AUTH_Failure1).
 *
 * Every length comes off the wire: a message must be exactly as long as its own fields
 * say (the host sends Transfer Length = the message), so neither a truncated message nor
 * trailing bytes get past here.
 */
#include "config.h"

#include <string.h>

#include "auth_internal.h"
#include "common/endian.h"

static int bad(uint8_t *exp, uint8_t why)
{
	*exp = why;
	return -1;
}

static int parse_negotiate(const uint8_t *msg, size_t len, struct dhchap_host_msg *out,
			   uint8_t *exp)
{
	const struct nvme_auth_negotiate *n = (const void *)msg;
	const struct nvme_auth_protocol_desc *d = NULL;

	if (len < sizeof(*n) || !n->napd || len != NVME_AUTH_NEGOTIATE_LEN(n->napd))
		return bad(exp, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	out->t_id = get_le16(n->t_id);
	out->sc_c = n->sc_c;
	for (unsigned int i = 0; i < n->napd && !d; i++) {
		const struct nvme_auth_protocol_desc *p =
			(const void *)(msg + sizeof(*n) + i * sizeof(*p));

		if (p->authid == NVME_AUTH_PROTO_DHCHAP)
			d = p;
	}
	if (!d)
		return bad(exp, NVME_AUTH_FAIL_PROTOCOL_UNUSABLE);
	if (d->halen > NVME_AUTH_DESC_HASH_MAX || d->dhlen > NVME_AUTH_DESC_DH_MAX)
		return bad(exp, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	out->nhash = d->halen;
	out->ndh = d->dhlen;
	out->hash_ids = d->idlist;
	out->dh_ids = d->idlist + NVME_AUTH_DESC_DH_OFF;
	return NVME_AUTH_ID_NEGOTIATE;
}

static int parse_reply(const uint8_t *msg, size_t len, struct dhchap_host_msg *out, uint8_t *exp)
{
	const struct nvme_dhchap_reply *r = (const void *)msg;

	if (len < sizeof(*r))
		return bad(exp, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	out->t_id = get_le16(r->t_id);
	out->hl = r->hl;
	out->dhvlen = get_le16(r->dhvlen);
	out->cvalid = r->cvalid & NVME_DHCHAP_REPLY_CVALID;
	out->seqnum = get_le32(r->seqnum);
	if (!r->hl || r->hl > NVME_AUTH_HASH_MAX_LEN || out->dhvlen > NVME_AUTH_DH_MAX_LEN ||
	    len != NVME_DHCHAP_REPLY_LEN(r->hl, out->dhvlen))
		return bad(exp, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	out->rval = msg + NVME_DHCHAP_REPLY_RVAL_OFF;
	out->cval = msg + NVME_DHCHAP_REPLY_CVAL_OFF(r->hl);
	out->dhv = msg + NVME_DHCHAP_REPLY_DHV_OFF(r->hl);
	return NVME_AUTH_ID_REPLY;
}

int dhchap_msg_parse(const uint8_t *msg, size_t len, struct dhchap_host_msg *out, uint8_t *exp)
{
	memset(out, 0, sizeof(*out));
	*exp = 0;
	if (len < 2)
		return bad(exp, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
	if (msg[0] == NVME_AUTH_TYPE_COMMON) {
		const struct nvme_auth_failure *f = (const void *)msg;

		switch (msg[1]) {
		case NVME_AUTH_ID_NEGOTIATE:
			return parse_negotiate(msg, len, out, exp);
		case NVME_AUTH_ID_FAILURE2:
			if (len != sizeof(*f))
				return bad(exp, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
			out->t_id = get_le16(f->t_id);
			out->rescode = f->rescode;
			out->rescode_exp = f->rescode_exp;
			return NVME_AUTH_ID_FAILURE2;
		default:
			return bad(exp, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
		}
	}
	if (msg[0] != NVME_AUTH_TYPE_DHCHAP)
		return bad(exp, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	switch (msg[1]) {
	case NVME_AUTH_ID_REPLY:
		return parse_reply(msg, len, out, exp);
	case NVME_AUTH_ID_SUCCESS2:
		if (len != sizeof(struct nvme_dhchap_success2))
			return bad(exp, NVME_AUTH_FAIL_INCORRECT_PAYLOAD);
		out->t_id =
			get_le16(((const struct nvme_dhchap_success2 *)(const void *)msg)->t_id);
		return NVME_AUTH_ID_SUCCESS2;
	default: /* a controller's message, or no message at all */
		return bad(exp, NVME_AUTH_FAIL_INCORRECT_MESSAGE);
	}
}

size_t dhchap_msg_challenge(uint8_t *buf, uint16_t t_id, uint8_t hash_id, uint8_t hl, uint8_t dhgid,
			    uint32_t s1, const uint8_t *c1, const uint8_t *dhv, uint16_t dhvlen)
{
	struct nvme_dhchap_challenge *c = (void *)buf;

	memset(c, 0, sizeof(*c));
	c->auth_type = NVME_AUTH_TYPE_DHCHAP;
	c->auth_id = NVME_AUTH_ID_CHALLENGE;
	put_le16(c->t_id, t_id);
	c->hl = hl;
	c->hashid = hash_id;
	c->dhgid = dhgid;
	put_le16(c->dhvlen, dhvlen);
	put_le32(c->seqnum, s1);
	memcpy(buf + NVME_DHCHAP_CHALLENGE_CVAL_OFF, c1, hl);
	if (dhvlen)
		memcpy(buf + NVME_DHCHAP_CHALLENGE_DHV_OFF(hl), dhv, dhvlen);
	return NVME_DHCHAP_CHALLENGE_LEN(hl, dhvlen);
}

size_t dhchap_msg_success1(uint8_t *buf, uint16_t t_id, uint8_t hl, const uint8_t *r2)
{
	struct nvme_dhchap_success1 *s = (void *)buf;

	memset(s, 0, sizeof(*s));
	s->auth_type = NVME_AUTH_TYPE_DHCHAP;
	s->auth_id = NVME_AUTH_ID_SUCCESS1;
	put_le16(s->t_id, t_id);
	s->hl = hl;
	if (!r2)
		return sizeof(*s);
	s->rvalid = NVME_DHCHAP_SUCCESS1_RVALID;
	memcpy(buf + NVME_DHCHAP_SUCCESS1_RVAL_OFF, r2, hl);
	return NVME_DHCHAP_SUCCESS1_LEN(hl);
}

size_t dhchap_msg_failure1(uint8_t *buf, uint16_t t_id, uint8_t exp)
{
	struct nvme_auth_failure *f = (void *)buf;

	memset(f, 0, sizeof(*f));
	f->auth_type = NVME_AUTH_TYPE_COMMON;
	f->auth_id = NVME_AUTH_ID_FAILURE1;
	put_le16(f->t_id, t_id);
	f->rescode = NVME_AUTH_FAIL_REASON_FAILED;
	f->rescode_exp = exp;
	return sizeof(*f);
}
