/* SPDX-License-Identifier: MIT */
/*
 * The host's DH-HMAC-CHAP message checks (initiator/lib/nvme/host_auth.c): a transaction with
 * fixed secrets sends its AUTH_Negotiate, then takes the input as what the controller's
 * Authentication Receive returned, up to two messages (a Challenge, then a Success1).
 * Whatever arrives, the state machine must end in a defined state: a message refused
 * leaves it at AUTH_Failure2 (which must then build), a message accepted moves it on;
 * nothing is read beyond the length given.
 *
 * Input: [flags: bit 0 bidirectional][le16 length of the first message][first message]
 * [second message: the rest].
 */
#include <stdlib.h>
#include <string.h>

#include "common/dhchap_crypto.h"
#include "common/endian.h"
#include "fuzz.h"
#include "lib/nvme/host_auth.h"

static struct nvme_secret *kh, *kc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t k[48];

	(void)argc;
	(void)argv;
	memset(k, 0x42, 32);
	kh = nvme_secret_from(k, 32);
	memset(k, 0x24, 48);
	kc = nvme_secret_from(k, 48);
	return 0;
}

/* Feed one controller message from its own allocation so that reads past @len trip ASan. */
static void feed(struct host_auth *ha, const uint8_t *data, size_t len)
{
	uint8_t *m = malloc(len ? len : 1);
	uint8_t out[HOST_AUTH_BUF];
	int rc;

	if (!m)
		abort();
	memcpy(m, data, len);
	rc = host_auth_receive(ha, m, len);
	free(m);
	if (rc && ha->state != HA_SEND_FAILURE2 && ha->state != HA_FAILED)
		abort();
	if (!rc && ha->state != HA_SEND_REPLY && ha->state != HA_DONE &&
	    ha->state != HA_SEND_SUCCESS2)
		abort();
	if (host_auth_sending(ha) && host_auth_build(ha, out, sizeof(out)) <= 0 &&
	    ha->state != HA_FAILED)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct host_auth ha;
	uint8_t out[HOST_AUTH_BUF];
	size_t first;

	if (!kh)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 3)
		return 0;
	first = get_le16(data + 1);
	data += 3;
	size -= 3;
	if (first > size)
		first = size;
	host_auth_init(&ha, kh, (data[-3] & 1) ? kc : NULL, "nqn.2014-08.io.nvmeof:fuzz-host",
		       "nqn.2026-11.io.nvmeof:fuzz", 1);
	if (host_auth_build(&ha, out, sizeof(out)) <= 0 || ha.state != HA_WAIT_CHALLENGE)
		abort();
	feed(&ha, data, first);
	if (ha.state == HA_WAIT_SUCCESS1)
		feed(&ha, data + first, size - first);
	host_auth_fini(&ha);
	return 0;
}
