/* SPDX-License-Identifier: MIT */
/*
 * The iSCSI codec (common/iscsi_pdu.c) as the login phase uses it: a Login/Text Request
 * PDU (48-byte BHS, AHS, data segment of key=value text) whose keys are parsed, negotiated
 * one by one against our supported values (operational keys), decoded as numbers and
 * CHAP binary values (security keys), and answered. Negotiated values must stay inside
 * RFC 7143's ranges and the answer inside its buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/iscsi_pdu.h"
#include "common/iscsi_spec.h"
#include "fuzz.h"

#define TEXT_MAX (64 * 1024)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void check_params(const struct iscsi_params *s)
{
	if (s->max_recv_dsl < 512 || s->max_recv_dsl > 16777215)
		abort();
	if (s->max_burst_length < 512 || s->max_burst_length > 16777215)
		abort();
	if (s->first_burst_length < 512 || s->first_burst_length > s->max_burst_length)
		abort();
	if (s->max_connections < 1 || s->max_connections > 65535)
		abort();
	if (s->max_outstanding_r2t < 1 || s->max_outstanding_r2t > 65535)
		abort();
	if (s->default_time2wait > 3600 || s->default_time2retain > 3600)
		abort();
	if (s->header_digest > 1 || s->data_digest > 1 || s->initial_r2t > 1 ||
	    s->immediate_data > 1 || s->data_pdu_in_order > 1 || s->data_sequence_in_order > 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iscsi_params sess, local;
	struct iscsi_kv kv[ISCSI_TEXT_MAX_PAIRS];
	uint8_t bhs[ISCSI_BHS_LEN];
	char *text, *resp;
	size_t resp_len = 0, dlen, off;
	bool discovery;
	int n;

	if (size < ISCSI_BHS_LEN)
		return 0;
	memcpy(bhs, data, ISCSI_BHS_LEN);
	/* the header fields a receiver trusts before reading the rest */
	(void)iscsi_bhs_opcode(bhs);
	(void)iscsi_bhs_immediate(bhs);
	(void)iscsi_bhs_itt(bhs);
	(void)iscsi_lun_decode(bhs + 8);
	(void)iscsi_header_digest(bhs, ISCSI_BHS_LEN);
	if (iscsi_hdr_wire_len(bhs, bhs[1] & 1) < ISCSI_BHS_LEN)
		abort();
	off = ISCSI_BHS_LEN + iscsi_bhs_ahs_len(bhs);
	dlen = iscsi_bhs_dlen(bhs);
	if (off > size)
		return 0;
	if (dlen > size - off)
		dlen = size - off; /* a short read: take what arrived */
	if (dlen > TEXT_MAX)
		dlen = TEXT_MAX;
	discovery = bhs[2] & 1;

	text = malloc(dlen + 1);
	resp = malloc(TEXT_MAX);
	if (!text || !resp)
		goto out;
	memcpy(text, data + off, dlen);
	text[dlen] = '\0';
	iscsi_params_default(&sess);
	iscsi_params_default(&local);
	local.header_digest = ISCSI_DIGEST_NONE | ((bhs[3] & 1) ? ISCSI_DIGEST_CRC32C : 0);
	local.data_digest = ISCSI_DIGEST_NONE | ((bhs[3] & 2) ? ISCSI_DIGEST_CRC32C : 0);
	local.max_recv_dsl = 262144;

	n = iscsi_text_parse(text, dlen, kv, ISCSI_TEXT_MAX_PAIRS);
	for (int i = 0; i < n; i++) {
		char val[256];
		uint8_t bin[1024];
		uint32_t u;
		int rc;

		if (!kv[i].key || !kv[i].val || strlen(kv[i].key) > ISCSI_KEY_NAME_MAX)
			abort();
		rc = iscsi_param_negotiate(&sess, &local, discovery, kv[i].key, kv[i].val, val,
					   sizeof(val));
		if (rc == -EPROTO)
			break; /* the login layer rejects the PDU */
		if (rc == ISCSI_NEG_ANSWER) {
			if (memchr(val, '\0', sizeof(val)) == NULL)
				abort();
			if (iscsi_text_add(resp, TEXT_MAX, &resp_len, kv[i].key, val) != 0)
				break;
		} else if (rc == ISCSI_NEG_NOT_OPERATIONAL) {
			int b = iscsi_text_decode_binary(kv[i].val, bin, sizeof(bin));

			if (b > (int)sizeof(bin))
				abort();
			if (iscsi_text_parse_u32(kv[i].val, &u) == 0)
				(void)iscsi_text_add_u32(resp, TEXT_MAX, &resp_len, kv[i].key, u);
		} else if (rc != ISCSI_NEG_NO_ANSWER) {
			abort();
		}
		if (resp_len > TEXT_MAX)
			abort();
	}
	iscsi_params_finish(&sess);
	check_params(&sess);
	/* the answer must parse again */
	if (resp_len) {
		n = iscsi_text_parse(resp, resp_len, kv, ISCSI_TEXT_MAX_PAIRS);
		if (n == -EINVAL)
			abort();
	}
out:
	free(text);
	free(resp);
	return 0;
}
