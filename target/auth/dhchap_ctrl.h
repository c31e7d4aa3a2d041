/* SPDX-License-Identifier: MIT */
/*
 * The controller side of NVMe in-band authentication, DH-HMAC-CHAP (NVM Express Base 2.0
 * section 8.13): what one queue answers to the AUTH messages its host sends in
 * Authentication Send commands, and the message it returns in Authentication Receive.
 *
 *   host                               controller (state after the message)
 *   AUTH_Negotiate        -- Send -->  CHALLENGE   (or FAILURE1: hash / DH group unusable)
 *   DH-HMAC-CHAP_Challenge <- Recv --  REPLY
 *   DH-HMAC-CHAP_Reply    -- Send -->  SUCCESS1    (or FAILURE1: response wrong)
 *   DH-HMAC-CHAP_Success1 <- Recv --  DONE, or SUCCESS2 when the host asked for R2
 *   DH-HMAC-CHAP_Success2 -- Send -->  DONE        (AUTH_Failure2 instead: FAILED)
 *   AUTH_Failure1         <- Recv --  FAILED      (from FAILURE1)
 *
 * An AUTH_Negotiate restarts the exchange from any state but FAILURE1 and FAILED: that is
 * how the host re-authenticates a live queue. Nothing here knows queues, timers or
 * sockets: the target core (target/core/fabrics_auth.c) carries the messages, keeps the
 * deadline and tears the queue down when the machine ends in FAILED.
 *
 * The per-host settings (struct dhchap_host_conf) come from the configuration: the host's
 * secret, the controller's secret for bidirectional authentication, the hash function and
 * the DH group the controller insists on. Secrets stay in struct nvme_secret and never
 * reach a message, log or error text.
 */
#ifndef NVMEOF_TARGET_DHCHAP_CTRL_H
#define NVMEOF_TARGET_DHCHAP_CTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/nvme_auth_spec.h"
#include "common/secret.h"

/* The largest AUTH message either side sends: a Reply with SHA-512 and ffdhe8192. */
#define DHCHAP_MSG_MAX NVME_DHCHAP_REPLY_LEN(NVME_AUTH_HASH_MAX_LEN, NVME_AUTH_DH_MAX_LEN)

/* ---- Per-host settings (immutable once made, shared by reference) ------------------- */

struct dhchap_host_conf;

/*
 * Settings from their text forms as Linux nvmet takes them: @key and @ctrl_key
 * "DHHC-1:NN:...:" (@ctrl_key NULL or "" for none), @hash "hmac(sha256)", "hmac(sha384)" or
 * "hmac(sha512)" (NULL or "": the first the host offers), @dhgroup "null", "ffdhe2048" ...
 * "ffdhe8192" (NULL or "": the first the host offers). Returns 0, or -EINVAL/-EILSEQ/
 * -EMSGSIZE/-EBADMSG/-ENOMEM with a one-line message naming the value that is wrong (never
 * the secret) in @err.
 */
int dhchap_host_conf_create(const char *key, const char *ctrl_key, const char *hash,
			    const char *dhgroup, struct dhchap_host_conf **out, char *err,
			    size_t errlen);
void dhchap_host_conf_get(struct dhchap_host_conf *conf);
void dhchap_host_conf_put(struct dhchap_host_conf *conf); /* NULL allowed; wipes on last */
/* Same secrets (constant time), hash and DH group. */
bool dhchap_host_conf_equal(const struct dhchap_host_conf *a, const struct dhchap_host_conf *b);
/* A controller secret is configured (the host may ask the controller to authenticate). */
bool dhchap_host_conf_has_ctrl_key(const struct dhchap_host_conf *conf);

/* HashID for "hmac(sha256)" ...; 0 when unknown. */
uint8_t dhchap_hash_from_name(const char *name);
/* DHgroupID for "null", "ffdhe2048" ...; -1 when unknown. */
int dhchap_dhgroup_from_name(const char *name);
/* The reason code explanation in words, for logs ("authentication failed", ...). */
const char *dhchap_failure_name(uint8_t explanation);

/* ---- The per-queue machine ---------------------------------------------------------- */

enum dhchap_state {
	DHCHAP_NEGOTIATE, /* waiting for AUTH_Negotiate */
	DHCHAP_CHALLENGE, /* negotiated: the next Receive returns the Challenge */
	DHCHAP_REPLY,     /* Challenge sent: waiting for the Reply */
	DHCHAP_SUCCESS1,  /* host authenticated: the next Receive returns Success1 */
	DHCHAP_SUCCESS2,  /* Success1 sent with R2: waiting for Success2 or Failure2 */
	DHCHAP_FAILURE1,  /* failed: the next Receive returns AUTH_Failure1 */
	DHCHAP_DONE,      /* authenticated (a new AUTH_Negotiate re-authenticates) */
	DHCHAP_FAILED,    /* final: the queue is to be torn down */
	DHCHAP_NSTATES,
};

struct nvme_dh;

struct dhchap_ctrl {
	enum dhchap_state state;
	struct dhchap_host_conf *conf; /* reference; NULL: the host has no secret here */
	const char *hostnqn;           /* borrowed: outlive the machine */
	const char *subnqn;
	uint16_t t_id;
	uint8_t hash_id;    /* negotiated */
	uint8_t dhgid;      /* negotiated */
	uint8_t hl;         /* hash length */
	uint8_t fail_exp;   /* FAILURE1: the explanation to send; FAILED: why */
	bool bidi;          /* the Reply carried C2: send R2 */
	bool host_failed;   /* FAILED by the host's AUTH_Failure2 */
	bool authenticated; /* DONE once: stays set through a re-authentication, until one fails */
	uint32_t s1, s2;
	uint8_t c1[NVME_AUTH_HASH_MAX_LEN];
	uint8_t c2[NVME_AUTH_HASH_MAX_LEN];
	struct nvme_dh *dh;            /* our key pair for this transaction */
	struct nvme_secret *dh_secret; /* g^xy mod p, after the Reply */
	unsigned int transitions;      /* counted by the one transition function */
};

/* A machine in NEGOTIATE for @hostnqn on @subnqn; takes a reference on @conf (NULL: none). */
void dhchap_ctrl_init(struct dhchap_ctrl *m, struct dhchap_host_conf *conf, const char *hostnqn,
		      const char *subnqn);
/* Replace the settings (re-authentication with the keys configured now); reference taken. */
void dhchap_ctrl_set_conf(struct dhchap_ctrl *m, struct dhchap_host_conf *conf);
/* Wipe and release everything. */
void dhchap_ctrl_fini(struct dhchap_ctrl *m);

/*
 * The payload of an Authentication Send (@len = TL bytes). Always consumed: a bad or
 * unexpected message moves the machine to FAILURE1 (or FAILED on AUTH_Failure2), as the
 * protocol wants, rather than failing the command.
 */
void dhchap_ctrl_send(struct dhchap_ctrl *m, const uint8_t *msg, size_t len);

/*
 * End the exchange with AUTH_Failure1 (@exp) before the message due is looked at: the
 * target refuses the work it would take (its authentication threads are busy). The
 * message is then consumed as in FAILURE1.
 */
void dhchap_ctrl_refuse(struct dhchap_ctrl *m, uint8_t exp);

/*
 * An Authentication Receive of @al bytes: writes the message due into @buf and returns
 * its length, or -EMSGSIZE when @al is shorter than that message. When no message is due
 * (or our own cryptography failed) the message is an AUTH_Failure1 and the machine ends.
 */
int dhchap_ctrl_recv(struct dhchap_ctrl *m, uint8_t *buf, size_t al);

const char *dhchap_state_name(enum dhchap_state st);

/*
 * The message parser (dhchap_msg.c), also the fuzzing entry point: checks @msg as a
 * host-to-controller message and returns its AUTH-Id (NVME_AUTH_ID_NEGOTIATE, _REPLY,
 * _SUCCESS2, _FAILURE2) with its fields in @out, or -1 with the reason code explanation
 * in *@exp (NVME_AUTH_FAIL_INCORRECT_PAYLOAD, _INCORRECT_MESSAGE, _PROTOCOL_UNUSABLE).
 */
struct dhchap_host_msg {
	uint16_t t_id;
	/* AUTH_Negotiate: the DH-HMAC-CHAP descriptor */
	uint8_t sc_c;
	uint8_t nhash, ndh;
	const uint8_t *hash_ids, *dh_ids;
	/* Reply */
	uint8_t hl;
	bool cvalid;
	uint32_t seqnum;
	const uint8_t *rval, *cval, *dhv;
	uint16_t dhvlen;
	/* Failure2 */
	uint8_t rescode, rescode_exp;
};
int dhchap_msg_parse(const uint8_t *msg, size_t len, struct dhchap_host_msg *out, uint8_t *exp);

#endif
