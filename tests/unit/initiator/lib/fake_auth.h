/* SPDX-License-Identifier: MIT */
/*
 * The controller's side of DH-HMAC-CHAP for the host's unit tests, built on
 * common/dhchap_crypto: it takes the messages the host sends (Authentication Send data),
 * checks every field byte by byte, and produces the controller's messages (Authentication
 * Receive data) with the hash and DH group it is told to choose. Faults make it answer
 * AUTH_Failure1, send a wrong R2, a malformed Challenge, or nothing.
 *
 * Any field the host got wrong is recorded in fa->err (the first one); a wrong R1 (the
 * host holds another secret) is not an error of the host: it is answered with
 * AUTH_Failure1 "authentication failed" and noted in fa->r1_bad.
 */
#ifndef NVMEOF_TESTS_FAKE_AUTH_H
#define NVMEOF_TESTS_FAKE_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dhchap_crypto.h"

enum fa_fault {
	FA_NONE,
	FA_FAILURE1_HASH,   /* AUTH_Failure1 "hash function not usable" instead of a Challenge */
	FA_BAD_R2,          /* Success1 with a corrupted R2 */
	FA_NO_R2,           /* Success1 with RVALID clear although C2 was sent */
	FA_CHALLENGE_HL,    /* Challenge with HL 200 */
	FA_CHALLENGE_TRUNC, /* Challenge with DHVLEN larger than what follows */
	FA_STALL,           /* no answer to the Authentication Receive for the Challenge */
};

struct fake_auth_cfg {
	const char *hostnqn, *subnqn;
	const char *host_key; /* DHHC-1 text the controller holds for the host */
	const char *ctrl_key; /* its own, used when the host asks (C2); NULL: none */
	uint8_t hash_id;      /* chosen in the Challenge */
	uint8_t dhgid;
	enum fa_fault fault;
};

enum fa_step {
	FA_WAIT_NEGOTIATE,
	FA_SEND_CHALLENGE,
	FA_WAIT_REPLY,
	FA_SEND_SUCCESS1,
	FA_SEND_FAILURE1,
	FA_WAIT_SUCCESS2, /* bidirectional: Success2 or Failure2 */
	FA_DONE,
	FA_FAILED,
};

struct fake_auth {
	const struct fake_auth_cfg *cfg;
	enum fa_step step;
	uint16_t t_id;
	uint32_t s1, s2;
	uint8_t hl;
	uint8_t c1[64], c2[64];
	bool bidirectional;
	struct nvme_dh *dh;
	struct nvme_secret *dh_secret;
	struct nvme_secret *kh, *kc; /* transformed */
	uint8_t fail1_exp;
	bool authenticated; /* a transaction ended in success */
	bool r1_bad;        /* the host's response did not match */
	bool got_failure2;
	uint8_t failure2_exp;
	int transactions;
	char err[256]; /* first field the host got wrong, "" when none */
};

/* 0, or -1 when a key does not parse. */
int fa_init(struct fake_auth *fa, const struct fake_auth_cfg *cfg);
void fa_fini(struct fake_auth *fa);
/* The host's Authentication Send: @tl from the command, @msg its data. */
void fa_send(struct fake_auth *fa, const uint8_t *msg, size_t tl);
/* The controller's answer to an Authentication Receive of allocation length @al into @out
 * (zero-filled): the number of meaningful bytes, 0 for nothing to say, -1 for "stall". */
int fa_recv(struct fake_auth *fa, uint8_t *out, size_t al);

/* DHHC-1 text of @len bytes of @fill, NN = @hash (0: as is), into @buf. */
void fa_key_text(uint8_t fill, size_t len, uint8_t hash, const char *nqn, char *buf, size_t n);

#endif
