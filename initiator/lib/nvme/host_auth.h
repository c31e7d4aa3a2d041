/* SPDX-License-Identifier: MIT */
/*
 * The host side of NVMe in-band authentication, DH-HMAC-CHAP (NVM Express Base 2.0
 * section 8.13): the message state machine, and the driver that carries its messages in
 * Authentication Send / Receive commands on a queue pair after Fabrics Connect.
 *
 * The state machine (struct host_auth) knows nothing of queue pairs: it builds the
 * messages the host sends and checks the ones the controller returns, so that tests can
 * play the controller message by message. One transaction:
 *
 *   host                                   controller
 *   AUTH_Negotiate (SHA-256/384/512,  -->
 *     NULL, ffdhe2048..8192)
 *                                     <--  DH-HMAC-CHAP_Challenge (hash, group, S1, C1, g^y)
 *   DH-HMAC-CHAP_Reply (R1, C2, S2, g^x) -->
 *                                     <--  DH-HMAC-CHAP_Success1 (R2 when C2 was sent)
 *   DH-HMAC-CHAP_Success2              -->  (bidirectional only)
 *
 * with AUTH_Failure1 possible in place of either controller message, and AUTH_Failure2
 * sent by the host when a controller message is unusable or R2 does not match.
 */
#ifndef NVMEOF_HOST_AUTH_H
#define NVMEOF_HOST_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/dhchap_crypto.h"
#include "common/nvme_auth_spec.h"
#include "common/secret.h"

/* Allocation length of every Authentication Receive (what the Linux host uses too; the
 * largest Challenge, SHA-512 with ffdhe8192, is 1104 bytes). */
#define HOST_AUTH_BUF 4096

enum host_auth_state {
	HA_SEND_NEGOTIATE, /* AUTH_Negotiate is the next message */
	HA_WAIT_CHALLENGE, /* waiting for DH-HMAC-CHAP_Challenge (or AUTH_Failure1) */
	HA_SEND_REPLY,     /* DH-HMAC-CHAP_Reply is the next message */
	HA_WAIT_SUCCESS1,  /* waiting for DH-HMAC-CHAP_Success1 (or AUTH_Failure1) */
	HA_SEND_SUCCESS2,  /* controller authenticated: DH-HMAC-CHAP_Success2 to send */
	HA_SEND_FAILURE2,  /* a controller message was refused: AUTH_Failure2 to send */
	HA_DONE,           /* authenticated (final) */
	HA_FAILED,         /* failed (final): err and msg say why */
};

struct host_auth {
	enum host_auth_state state;
	const struct nvme_secret *kh; /* transformed host key (not owned) */
	const struct nvme_secret *kc; /* transformed controller key, NULL: unidirectional */
	const char *hostnqn, *subnqn;
	uint16_t t_id;
	uint8_t hash_id, dhgid, hl; /* chosen by the controller's Challenge */
	uint32_t s1, s2;
	uint8_t c1[NVME_AUTH_HASH_MAX_LEN], c2[NVME_AUTH_HASH_MAX_LEN];
	struct nvme_dh *dh;            /* our key pair when a DH group was chosen */
	struct nvme_secret *dh_secret; /* g^xy mod p */
	uint8_t fail_exp;              /* explanation put in AUTH_Failure2 */
	int err;                       /* the failure, -errno (see host_auth_run()) */
	char msg[200];                 /* the failure in words, no key material */
};

void host_auth_init(struct host_auth *ha, const struct nvme_secret *kh,
		    const struct nvme_secret *kc, const char *hostnqn, const char *subnqn,
		    uint16_t t_id);
/* Wipes the challenges and frees the DH state. */
void host_auth_fini(struct host_auth *ha);
const char *host_auth_state_name(enum host_auth_state state);

/* Whether the next step is a message to send (else one to receive, or the end). */
bool host_auth_sending(const struct host_auth *ha);
bool host_auth_finished(const struct host_auth *ha);

/* Build the next message into @buf (@len bytes): its length, or -errno (state FAILED). */
int host_auth_build(struct host_auth *ha, uint8_t *buf, size_t len);
/* Take what Authentication Receive returned (@len bytes at most are looked at). 0 when
 * the message was accepted, else -errno with the state at HA_SEND_FAILURE2 (a bad
 * message) or HA_FAILED (AUTH_Failure1). */
int host_auth_receive(struct host_auth *ha, const uint8_t *msg, size_t len);

/* ---- On a queue pair (queue/host_internal.h types) ---------------------------------------------- */
struct nvmeof_ctrlr;
struct nvmeof_qpair;

/* Parse and transform the opts' DH-HMAC-CHAP secrets (after the host NQN and URI are
 * known); the opts then no longer point at the caller's strings. */
int host_auth_setup(struct nvmeof_ctrlr *ctrlr);
void host_auth_free(struct nvmeof_ctrlr *ctrlr);

/*
 * After a successful Fabrics Connect on @qp whose completion had @dw0: authenticate
 * when the controller asks for it (AUTHREQ.ATR) or when a controller secret is set
 * (bidirectional: the host wants the controller proven). Returns 0 or -errno with the
 * error set:
 *   -EACCES       the controller refused our response (AUTH_Failure1 "authentication
 *                 failed"), its own response did not match the controller secret, or it
 *                 requires authentication and no secret was given
 *   -EPROTONOSUPPORT  no common hash function or DH group (AUTH_Failure1 explanations
 *                 02h/04h/05h), or secure channel concatenation asked for (ASCR)
 *   -EPROTO       a malformed or unexpected message (either side)
 *   -ETIMEDOUT    the exchange did not finish within opts.connect_timeout_ms
 *   other         the transport's error, or -ECONNREFUSED for an error status
 */
int host_auth_connected(struct nvmeof_qpair *qp, uint32_t dw0);

/* One whole transaction on @qp (which must accept Fabrics commands), bounded by
 * @timeout_ms. Same returns as above. */
int host_auth_run(struct nvmeof_qpair *qp, uint32_t timeout_ms);

#endif
