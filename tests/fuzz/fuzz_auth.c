/* SPDX-License-Identifier: MIT */
/*
 * The AUTH messages a host sends to the controller (target/auth/): the whole input through
 * the message parser, whose fields must lie inside it, then the input cut into a sequence
 * of Authentication Send and Receive operations on one queue's DH-HMAC-CHAP machine.
 *
 * Input: byte 0 picks the settings (hash, DH group, controller secret), then records of
 * [op][len lo][len hi][len bytes]: op bit 0 set = Authentication Receive of len bytes
 * (AL), clear = Authentication Send of the len bytes that follow.
 */
#include <stdlib.h>
#include <string.h>

#include "auth/dhchap_ctrl.h"
#include "common/log.h"
#include "fuzz.h"

static const char hostnqn[] = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-"
			      "000000000001";
static const char subnqn[] = "nqn.2026-11.io.nvmeof:fuzz";
/* 32 bytes and their CRC: not a secret, the fuzzer cannot compute a response anyway */
static const char key[] = "DHHC-1:00:c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTIzNDU2NzgVsIvf:";
static struct dhchap_host_conf *confs[8];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const hashes[] = { NULL, "hmac(sha256)", "hmac(sha384)",
					      "hmac(sha512)" };

	(void)argc;
	(void)argv;
	log_set_level(LOG_LVL_ERR);
	for (unsigned int i = 0; i < 8; i++)
		if (dhchap_host_conf_create(key, (i & 4) ? key : NULL, hashes[i & 3],
					    (i & 1) ? "ffdhe2048" : "null", &confs[i], NULL, 0))
			abort();
	return 0;
}

static void check_parse(const uint8_t *data, size_t size)
{
	struct dhchap_host_msg m;
	const uint8_t *end = data + size;
	uint8_t exp;
	int id = dhchap_msg_parse(data, size, &m, &exp);

	if (id < 0) {
		if (!exp)
			abort(); /* a refusal carries its reason code explanation */
		return;
	}
	if (m.hash_ids && (m.hash_ids < data || m.hash_ids + m.nhash > end))
		abort();
	if (m.dh_ids && (m.dh_ids < data || m.dh_ids + m.ndh > end))
		abort();
	if (m.rval && (m.rval + m.hl > end || m.cval + m.hl > end || m.dhv + m.dhvlen > end))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[DHCHAP_MSG_MAX + 64];
	struct dhchap_ctrl m;
	size_t off = 1;

	if (size > FUZZ_MAX_INPUT)
		size = FUZZ_MAX_INPUT;
	check_parse(data, size);
	if (!size)
		return 0;
	dhchap_ctrl_init(&m, (data[0] & 8) ? NULL : confs[data[0] & 7], hostnqn, subnqn);
	while (off + 3 <= size) {
		uint8_t op = data[off];
		size_t len = data[off + 1] | (size_t)data[off + 2] << 8;
		enum dhchap_state was = m.state;

		off += 3;
		if (op & 1) {
			int n = dhchap_ctrl_recv(&m, out, len < sizeof(out) ? len : sizeof(out));

			if (n > (int)sizeof(out) || (n >= 0 && (size_t)n > len) ||
			    (n < 0 && m.state != was))
				abort();
		} else {
			if (len > size - off)
				len = size - off;
			dhchap_ctrl_send(&m, data + off, len);
			off += len;
		}
		if ((unsigned int)m.state >= DHCHAP_NSTATES ||
		    (was == DHCHAP_FAILED && m.state != was))
			abort();
		if (m.authenticated && m.state != DHCHAP_DONE && m.state != DHCHAP_CHALLENGE &&
		    m.state != DHCHAP_REPLY && m.state != DHCHAP_SUCCESS1 &&
		    m.state != DHCHAP_SUCCESS2)
			abort(); /* nobody is authenticated by a failed exchange */
	}
	dhchap_ctrl_fini(&m);
	return 0;
}
