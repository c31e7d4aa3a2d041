// SPDX-License-Identifier: MIT
/* iSCSI PDU helpers, text codec and operational key negotiation (RFC 7143 sections 6, 13). */
#include "iscsi_pdu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "crc32c.h"
#include "hex.h"

void iscsi_bhs_init(void *bhs, uint8_t opcode, uint8_t flags)
{
	uint8_t *b = bhs;

	memset(b, 0, ISCSI_BHS_LEN);
	b[0] = opcode;
	b[1] = flags;
}

void iscsi_lun_encode(uint8_t out[8], uint64_t lun)
{
	memset(out, 0, 8);
	if (lun < 256) {
		out[1] = (uint8_t)lun;
	} else {
		out[0] = (uint8_t)(0x40 | ((lun >> 8) & 0x3f));
		out[1] = (uint8_t)lun;
	}
}

uint64_t iscsi_lun_decode(const uint8_t in[8])
{
	switch (in[0] >> 6) {
	case 0: /* peripheral device addressing: bus 0 only */
		if (in[0] & 0x3f)
			return UINT64_MAX;
		return in[1];
	case 1: /* flat space addressing */
		return (uint64_t)(in[0] & 0x3f) << 8 | in[1];
	default:
		return UINT64_MAX;
	}
}

uint32_t iscsi_header_digest(const void *hdr, size_t len)
{
	return crc32c(hdr, len);
}

uint32_t iscsi_data_digest(const struct iovec *iov, int iovcnt, uint32_t dlen)
{
	static const uint8_t zero[4];
	uint32_t crc = CRC32C_SEED;
	uint32_t left = dlen;

	for (int i = 0; i < iovcnt && left; i++) {
		size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		crc = crc32c_update(crc, iov[i].iov_base, n);
		left -= (uint32_t)n;
	}
	if (ISCSI_PAD(dlen) != dlen)
		crc = crc32c_update(crc, zero, ISCSI_PAD(dlen) - dlen);
	return crc32c_final(crc);
}

/* ---- Text codec ------------------------------------------------------------------------- */

/* RFC 7143 section 6.1: key names use letters, digits, '.', '-', '+', '@', '_'. */
static bool key_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-' || c == '+' || c == '@' || c == '_';
}

int iscsi_text_parse(char *buf, size_t len, struct iscsi_kv *kv, int max)
{
	size_t pos = 0;
	int n = 0;

	while (pos < len) {
		char *pair = buf + pos;
		char *end = memchr(pair, '\0', len - pos);
		char *eq;

		if (!end)
			return -EINVAL; /* unterminated pair */
		if (end == pair) {
			pos++; /* tolerate padding NULs between pairs */
			continue;
		}
		eq = memchr(pair, '=', (size_t)(end - pair));
		if (!eq || eq == pair || eq - pair > ISCSI_KEY_NAME_MAX)
			return -EINVAL;
		for (char *c = pair; c < eq; c++)
			if (!key_char_ok(*c))
				return -EINVAL;
		if (n == max)
			return -E2BIG;
		*eq = '\0';
		kv[n].key = pair;
		kv[n].val = eq + 1;
		n++;
		pos = (size_t)(end - buf) + 1;
	}
	return n;
}

int iscsi_text_add(char *buf, size_t cap, size_t *len, const char *key, const char *val)
{
	size_t kl = strlen(key), vl = strlen(val);

	if (*len + kl + vl + 2 > cap)
		return -ENOSPC;
	memcpy(buf + *len, key, kl);
	buf[*len + kl] = '=';
	memcpy(buf + *len + kl + 1, val, vl);
	buf[*len + kl + 1 + vl] = '\0';
	*len += kl + vl + 2;
	return 0;
}

int iscsi_text_add_u32(char *buf, size_t cap, size_t *len, const char *key, uint32_t val)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", val);
	return iscsi_text_add(buf, cap, len, key, num);
}

int iscsi_text_parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		v = strtoull(s + 2, &end, 16);
	else
		v = strtoull(s, &end, 10);
	if (errno || *end || end == s || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int iscsi_text_decode_binary(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	if (s[0] != '0' || !s[1])
		return -EINVAL;
	if (s[1] == 'x' || s[1] == 'X') {
		const char *h = s + 2;
		size_t hl = strlen(h);

		if (hl == 0)
			return -EINVAL;
		if (hl % 2) { /* odd digit count: leading nibble */
			int v = hex_digit(*h++);

			if (v < 0)
				return -EINVAL;
			if (n == cap)
				return -ENOSPC;
			out[n++] = (uint8_t)v;
		}
		for (; *h; h += 2) {
			int hi = hex_digit(h[0]), lo = hex_digit(h[1]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			if (n == cap)
				return -ENOSPC;
			out[n++] = (uint8_t)(hi << 4 | lo);
		}
		return (int)n;
	}
	if (s[1] == 'b' || s[1] == 'B') {
		/* RFC 7143 5.1: "0b" and base64 as RFC 4648 has it (padded, canonical) */
		int rc = base64_decode(s + 2, strlen(s + 2), out, cap);

		if (rc == 0 || rc == -EILSEQ)
			return -EINVAL;
		return rc;
	}
	return -EINVAL;
}

void iscsi_text_encode_hex(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	*out++ = '0';
	*out++ = 'x';
	for (size_t i = 0; i < len; i++) {
		*out++ = digits[in[i] >> 4];
		*out++ = digits[in[i] & 0xf];
	}
	*out = '\0';
}

/* ---- Operational key negotiation --------------------------------------------------------- */

enum key_kind {
	KEY_DIGEST,	/* list of None/CRC32C: first offered value we accept */
	KEY_BOOL_AND,	/* result = offered AND ours */
	KEY_BOOL_OR,	/* result = offered OR ours */
	KEY_NUM_MIN,	/* result = min(offered, ours) */
	KEY_NUM_MAX,	/* result = max(offered, ours) */
	KEY_DECL_NUM,	/* declarative: record the peer's value */
	KEY_TASK_REPORTING,
	KEY_OBSOLETE_BOOL,  /* RFC 3720 markers: answer "No" */
	KEY_OBSOLETE_REJECT, /* RFC 3720 marker intervals: answer "Reject" */
};

struct key_def {
	const char *name;
	enum key_kind kind;
	uint32_t min, max;	/* numeric range */
	size_t off;		/* field in struct iscsi_params */
	bool leading_only;	/* LO: irrelevant in a discovery session */
};

#define P(f) offsetof(struct iscsi_params, f)
static const struct key_def key_defs[ISCSI_KEY_COUNT] = {
	[ISCSI_KEY_HEADER_DIGEST] = { "HeaderDigest", KEY_DIGEST, 0, 0, P(header_digest), false },
	[ISCSI_KEY_DATA_DIGEST] = { "DataDigest", KEY_DIGEST, 0, 0, P(data_digest), false },
	[ISCSI_KEY_MAX_CONNECTIONS] = { "MaxConnections", KEY_NUM_MIN, 1, 65535,
					P(max_connections), true },
	[ISCSI_KEY_INITIAL_R2T] = { "InitialR2T", KEY_BOOL_OR, 0, 1, P(initial_r2t), true },
	[ISCSI_KEY_IMMEDIATE_DATA] = { "ImmediateData", KEY_BOOL_AND, 0, 1, P(immediate_data),
				       true },
	[ISCSI_KEY_MAX_RECV_DSL] = { "MaxRecvDataSegmentLength", KEY_DECL_NUM,
				     ISCSI_MIN_DATA_SEG_LEN, ISCSI_MAX_DATA_SEG_LEN,
				     P(max_recv_dsl), false },
	[ISCSI_KEY_MAX_BURST_LENGTH] = { "MaxBurstLength", KEY_NUM_MIN, ISCSI_MIN_DATA_SEG_LEN,
					 ISCSI_MAX_DATA_SEG_LEN, P(max_burst_length), true },
	[ISCSI_KEY_FIRST_BURST_LENGTH] = { "FirstBurstLength", KEY_NUM_MIN,
					   ISCSI_MIN_DATA_SEG_LEN, ISCSI_MAX_DATA_SEG_LEN,
					   P(first_burst_length), true },
	[ISCSI_KEY_DEFAULT_TIME2WAIT] = { "DefaultTime2Wait", KEY_NUM_MAX, 0, 3600,
					  P(default_time2wait), true },
	[ISCSI_KEY_DEFAULT_TIME2RETAIN] = { "DefaultTime2Retain", KEY_NUM_MIN, 0, 3600,
					    P(default_time2retain), true },
	[ISCSI_KEY_MAX_OUTSTANDING_R2T] = { "MaxOutstandingR2T", KEY_NUM_MIN, 1, 65535,
					    P(max_outstanding_r2t), true },
	[ISCSI_KEY_DATA_PDU_IN_ORDER] = { "DataPDUInOrder", KEY_BOOL_OR, 0, 1,
					  P(data_pdu_in_order), true },
	[ISCSI_KEY_DATA_SEQUENCE_IN_ORDER] = { "DataSequenceInOrder", KEY_BOOL_OR, 0, 1,
					       P(data_sequence_in_order), true },
	[ISCSI_KEY_ERROR_RECOVERY_LEVEL] = { "ErrorRecoveryLevel", KEY_NUM_MIN, 0, 2,
					     P(error_recovery_level), true },
	[ISCSI_KEY_PROTOCOL_LEVEL] = { "iSCSIProtocolLevel", KEY_NUM_MIN, 0, 31,
				       P(protocol_level), true },
	[ISCSI_KEY_TASK_REPORTING] = { "TaskReporting", KEY_TASK_REPORTING, 0, 0,
				       P(task_reporting), true },
	[ISCSI_KEY_IF_MARKER] = { "IFMarker", KEY_OBSOLETE_BOOL, 0, 1, P(if_marker), false },
	[ISCSI_KEY_OF_MARKER] = { "OFMarker", KEY_OBSOLETE_BOOL, 0, 1, P(of_marker), false },
	[ISCSI_KEY_IF_MARK_INT] = { "IFMarkInt", KEY_OBSOLETE_REJECT, 0, 0, P(if_mark_int),
				    false },
	[ISCSI_KEY_OF_MARK_INT] = { "OFMarkInt", KEY_OBSOLETE_REJECT, 0, 0, P(of_mark_int),
				    false },
};
#undef P

static uint32_t *field(struct iscsi_params *p, const struct key_def *d)
{
	return (uint32_t *)((char *)p + d->off);
}

static uint32_t cfield(const struct iscsi_params *p, const struct key_def *d)
{
	return *(const uint32_t *)((const char *)p + d->off);
}

const char *iscsi_key_name(enum iscsi_key_id id)
{
	return id < ISCSI_KEY_COUNT ? key_defs[id].name : NULL;
}

void iscsi_params_default(struct iscsi_params *p)
{
	memset(p, 0, sizeof(*p));
	p->header_digest = 0;
	p->data_digest = 0;
	p->max_connections = 1;
	p->initial_r2t = 1;
	p->immediate_data = 1;
	p->max_recv_dsl = 8192;
	p->max_burst_length = 262144;
	p->first_burst_length = 65536;
	p->default_time2wait = 2;
	p->default_time2retain = 20;
	p->max_outstanding_r2t = 1;
	p->data_pdu_in_order = 1;
	p->data_sequence_in_order = 1;
	p->error_recovery_level = 0;
	p->protocol_level = 1;
	p->task_reporting = 0;
}

static int parse_bool(const char *v, uint32_t *out)
{
	if (!strcmp(v, "Yes"))
		*out = 1;
	else if (!strcmp(v, "No"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

/* First value of the offered comma-separated list that @accept allows. */
static int pick_digest(const char *list, uint32_t accept, uint32_t *out)
{
	const char *p = list;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == 4 && !strncmp(p, "None", 4) && (accept & ISCSI_DIGEST_NONE)) {
			*out = 0;
			return 0;
		}
		if (n == 6 && !strncmp(p, "CRC32C", 6) && (accept & ISCSI_DIGEST_CRC32C)) {
			*out = 1;
			return 0;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return -ENOENT;
}

static bool list_has(const char *list, const char *item)
{
	size_t il = strlen(item);
	const char *p = list;

	while (*p) {
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

int iscsi_param_negotiate(struct iscsi_params *sess, const struct iscsi_params *local,
			  bool discovery, const char *key, const char *val, char *resp,
			  size_t resp_len)
{
	const struct key_def *d = NULL;
	uint32_t v, ours, res;
	int id;

	for (id = 0; id < ISCSI_KEY_COUNT; id++) {
		if (!strcmp(key, key_defs[id].name)) {
			d = &key_defs[id];
			break;
		}
	}
	if (!d) {
		static const char *const login_keys[] = {
			"AuthMethod", "InitiatorName", "InitiatorAlias", "TargetName",
			"TargetAlias", "SessionType", "TargetAddress", "TargetPortalGroupTag",
			"SendTargets", "CHAP_A", "CHAP_I", "CHAP_C", "CHAP_N", "CHAP_R",
		};

		for (size_t i = 0; i < sizeof(login_keys) / sizeof(login_keys[0]); i++)
			if (!strcmp(key, login_keys[i]))
				return ISCSI_NEG_NOT_OPERATIONAL;
		snprintf(resp, resp_len, "NotUnderstood");
		return ISCSI_NEG_ANSWER;
	}
	if (sess->seen & (1u << id))
		return -EPROTO;
	sess->seen |= 1u << id;

	/* RFC 7143 marks the session-wide data transfer keys irrelevant to discovery
	 * sessions, but not ErrorRecoveryLevel: initiators (open-iscsi) need a value. */
	if (discovery && d->leading_only && id != ISCSI_KEY_ERROR_RECOVERY_LEVEL) {
		snprintf(resp, resp_len, "Irrelevant");
		return ISCSI_NEG_ANSWER;
	}

	switch (d->kind) {
	case KEY_DIGEST:
		if (pick_digest(val, cfield(local, d), &res)) {
			snprintf(resp, resp_len, "Reject");
			return ISCSI_NEG_ANSWER;
		}
		*field(sess, d) = res;
		snprintf(resp, resp_len, "%s", res ? "CRC32C" : "None");
		return ISCSI_NEG_ANSWER;
	case KEY_BOOL_AND:
	case KEY_BOOL_OR:
		if (parse_bool(val, &v)) {
			snprintf(resp, resp_len, "Reject");
			return ISCSI_NEG_ANSWER;
		}
		ours = cfield(local, d);
		res = d->kind == KEY_BOOL_AND ? (v && ours) : (v || ours);
		*field(sess, d) = res;
		snprintf(resp, resp_len, "%s", res ? "Yes" : "No");
		return ISCSI_NEG_ANSWER;
	case KEY_NUM_MIN:
	case KEY_NUM_MAX:
	case KEY_DECL_NUM:
		if (iscsi_text_parse_u32(val, &v) || v < d->min || v > d->max) {
			snprintf(resp, resp_len, "Reject");
			return ISCSI_NEG_ANSWER;
		}
		if (d->kind == KEY_DECL_NUM) {
			*field(sess, d) = v;
			return ISCSI_NEG_NO_ANSWER;
		}
		if (id == ISCSI_KEY_FIRST_BURST_LENGTH && sess->initial_r2t &&
		    !sess->immediate_data && (sess->seen & (1u << ISCSI_KEY_INITIAL_R2T)) &&
		    (sess->seen & (1u << ISCSI_KEY_IMMEDIATE_DATA))) {
			snprintf(resp, resp_len, "Irrelevant");
			return ISCSI_NEG_ANSWER;
		}
		ours = cfield(local, d);
		if (d->kind == KEY_NUM_MIN)
			res = v < ours ? v : ours;
		else
			res = v > ours ? v : ours;
		*field(sess, d) = res;
		snprintf(resp, resp_len, "%u", res);
		return ISCSI_NEG_ANSWER;
	case KEY_TASK_REPORTING:
		if (!list_has(val, "RFC3720")) {
			snprintf(resp, resp_len, "Reject");
			return ISCSI_NEG_ANSWER;
		}
		*field(sess, d) = 0;
		snprintf(resp, resp_len, "RFC3720");
		return ISCSI_NEG_ANSWER;
	case KEY_OBSOLETE_BOOL:
		snprintf(resp, resp_len, "No");
		return ISCSI_NEG_ANSWER;
	case KEY_OBSOLETE_REJECT:
		snprintf(resp, resp_len, "Reject");
		return ISCSI_NEG_ANSWER;
	}
	return -EINVAL;
}

void iscsi_params_finish(struct iscsi_params *sess)
{
	if (sess->first_burst_length > sess->max_burst_length)
		sess->first_burst_length = sess->max_burst_length;
}
