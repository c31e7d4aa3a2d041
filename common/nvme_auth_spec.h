/* SPDX-License-Identifier: MIT */
/*
 * NVMe in-band authentication wire formats (NVM Express Base Specification 2.0, section
 * 8.13 "NVMe over Fabrics in-band authentication"; renumbered 8.3.4/8.3.5 in 2.1):
 * the Authentication Send / Authentication Receive commands, the AUTH_Negotiate and
 * DH-HMAC-CHAP message payloads they carry, and the AUTHREQ bits of the Connect response.
 *
 * Structures and constants only. Multi-byte fields are byte arrays read and written with
 * the common/endian.h helpers (all are little-endian); variable parts follow the fixed
 * headers and are located with the *_OFF / *_LEN macros below. Every structure carries
 * static asserts on its size and on the offsets of its fields.
 */
#ifndef NVMEOF_NVME_AUTH_SPEC_H
#define NVMEOF_NVME_AUTH_SPEC_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

/* ---- Connect response: DW0 of the completion ---------------------------------------- */
/* Bits 15:0 carry CNTLID, bits 31:16 AUTHREQ. */
#define NVMF_CONNECT_AUTHREQ_ATR  (1u << 17) /* authentication transaction required */
#define NVMF_CONNECT_AUTHREQ_ASCR (1u << 18) /* secure channel concatenation required */

/* Command-specific status of a Fabrics command: the host did not authenticate first. */
#define NVMF_SC_AUTH_REQUIRED 0x91

/* ---- Authentication Send (FCTYPE 05h) / Receive (FCTYPE 06h) commands --------------- */
/* Security Protocol for NVMe in-band authentication, and its SP Specific fields. */
#define NVMF_AUTH_SECP  0xe9
#define NVMF_AUTH_SPSP0 0x01
#define NVMF_AUTH_SPSP1 0x01

struct nvmf_auth_cmd {
	uint8_t opc; /* 7Fh */
	uint8_t rsvd1;
	uint8_t cid[2];
	uint8_t fctype; /* NVMF_FCTYPE_AUTH_SEND / NVMF_FCTYPE_AUTH_RECV */
	uint8_t rsvd5[19];
	uint8_t sgl1[16];
	uint8_t rsvd40;
	uint8_t spsp0;
	uint8_t spsp1;
	uint8_t secp;
	uint8_t len[4]; /* Send: Transfer Length (TL); Receive: Allocation Length (AL) */
	uint8_t rsvd48[16];
};
static_assert(sizeof(struct nvmf_auth_cmd) == 64, "auth command");
static_assert(offsetof(struct nvmf_auth_cmd, fctype) == 4, "auth fctype");
static_assert(offsetof(struct nvmf_auth_cmd, sgl1) == 24, "auth sgl1");
static_assert(offsetof(struct nvmf_auth_cmd, spsp0) == 41, "auth spsp0");
static_assert(offsetof(struct nvmf_auth_cmd, spsp1) == 42, "auth spsp1");
static_assert(offsetof(struct nvmf_auth_cmd, secp) == 43, "auth secp");
static_assert(offsetof(struct nvmf_auth_cmd, len) == 44, "auth tl/al");

/* ---- Message identification --------------------------------------------------------- */
/* AUTH-Type: byte 0 of every message. */
enum nvme_auth_type {
	NVME_AUTH_TYPE_COMMON = 0x00, /* AUTH_Negotiate, AUTH_Failure1, AUTH_Failure2 */
	NVME_AUTH_TYPE_DHCHAP = 0x01, /* DH-HMAC-CHAP_* messages */
};

/* AUTH-Id: byte 1 of every message. */
enum nvme_auth_id {
	NVME_AUTH_ID_NEGOTIATE = 0x00, /* host -> controller, AUTH-Type 00h */
	NVME_AUTH_ID_CHALLENGE = 0x01, /* controller -> host */
	NVME_AUTH_ID_REPLY = 0x02,     /* host -> controller */
	NVME_AUTH_ID_SUCCESS1 = 0x03,  /* controller -> host */
	NVME_AUTH_ID_SUCCESS2 = 0x04,  /* host -> controller */
	NVME_AUTH_ID_FAILURE2 = 0xf0,  /* host -> controller, AUTH-Type 00h */
	NVME_AUTH_ID_FAILURE1 = 0xf1,  /* controller -> host, AUTH-Type 00h */
};

/* Authentication protocol identifier in a protocol descriptor. */
#define NVME_AUTH_PROTO_DHCHAP 0x01

/* Hash function identifiers (HashID). */
enum nvme_auth_hash_id {
	NVME_AUTH_HASH_SHA256 = 0x01,
	NVME_AUTH_HASH_SHA384 = 0x02,
	NVME_AUTH_HASH_SHA512 = 0x03,
};
#define NVME_AUTH_HASH_MAX_LEN 64 /* SHA-512 */

/* Diffie-Hellman group identifiers (DHgroupID), the RFC 7919 groups. */
enum nvme_auth_dhgroup_id {
	NVME_AUTH_DHGROUP_NULL = 0x00,
	NVME_AUTH_DHGROUP_FFDHE2048 = 0x01,
	NVME_AUTH_DHGROUP_FFDHE3072 = 0x02,
	NVME_AUTH_DHGROUP_FFDHE4096 = 0x03,
	NVME_AUTH_DHGROUP_FFDHE6144 = 0x04,
	NVME_AUTH_DHGROUP_FFDHE8192 = 0x05,
};
#define NVME_AUTH_DH_MAX_LEN 1024 /* bytes in an ffdhe8192 value */

/* Secure channel concatenation (SC_C) of AUTH_Negotiate; also hashed into the responses. */
enum nvme_auth_sc_c {
	NVME_AUTH_SC_C_NONE = 0x00,          /* no secure channel concatenation */
	NVME_AUTH_SC_C_NEWTLSPSK = 0x01,     /* generate a TLS PSK, then start TLS */
	NVME_AUTH_SC_C_REPLACETLSPSK = 0x02, /* replace the PSK of the current TLS channel */
};

/* AUTH_Failure1/2 reason code and reason code explanations. */
#define NVME_AUTH_FAIL_REASON_FAILED 0x01
enum nvme_auth_fail_explanation {
	NVME_AUTH_FAIL_FAILED = 0x01,            /* authentication failed */
	NVME_AUTH_FAIL_PROTOCOL_UNUSABLE = 0x02, /* authentication protocol not usable */
	NVME_AUTH_FAIL_CONCAT_MISMATCH = 0x03,   /* secure channel concatenation mismatch */
	NVME_AUTH_FAIL_HASH_UNUSABLE = 0x04,     /* hash function not usable */
	NVME_AUTH_FAIL_DHGROUP_UNUSABLE = 0x05,  /* DH group not usable */
	NVME_AUTH_FAIL_INCORRECT_PAYLOAD = 0x06, /* incorrect payload */
	NVME_AUTH_FAIL_INCORRECT_MESSAGE = 0x07, /* incorrect protocol message */
};

/* ---- AUTH_Negotiate ----------------------------------------------------------------- */
/*
 * One protocol descriptor: for DH-HMAC-CHAP, idlist[0..29] holds HALEN hash ids and
 * idlist[30..59] holds DHLEN DH group ids.
 */
#define NVME_AUTH_DESC_HASH_MAX 30
#define NVME_AUTH_DESC_DH_MAX   30
#define NVME_AUTH_DESC_DH_OFF   30 /* index of the first DH group id in idlist */

struct nvme_auth_protocol_desc {
	uint8_t authid; /* NVME_AUTH_PROTO_DHCHAP */
	uint8_t rsvd1;
	uint8_t halen; /* hash ids in idlist[0..] */
	uint8_t dhlen; /* DH group ids in idlist[30..] */
	uint8_t idlist[60];
};
static_assert(sizeof(struct nvme_auth_protocol_desc) == 64, "protocol descriptor");
static_assert(offsetof(struct nvme_auth_protocol_desc, halen) == 2, "descriptor halen");
static_assert(offsetof(struct nvme_auth_protocol_desc, dhlen) == 3, "descriptor dhlen");
static_assert(offsetof(struct nvme_auth_protocol_desc, idlist) == 4, "descriptor idlist");

/* Followed by NAPD protocol descriptors. */
struct nvme_auth_negotiate {
	uint8_t auth_type; /* NVME_AUTH_TYPE_COMMON */
	uint8_t auth_id;   /* NVME_AUTH_ID_NEGOTIATE */
	uint8_t rsvd2[2];
	uint8_t t_id[2]; /* transaction identifier */
	uint8_t sc_c;    /* enum nvme_auth_sc_c */
	uint8_t napd;    /* number of protocol descriptors, >= 1 */
};
static_assert(sizeof(struct nvme_auth_negotiate) == 8, "AUTH_Negotiate");
static_assert(offsetof(struct nvme_auth_negotiate, t_id) == 4, "negotiate t_id");
static_assert(offsetof(struct nvme_auth_negotiate, sc_c) == 6, "negotiate sc_c");
static_assert(offsetof(struct nvme_auth_negotiate, napd) == 7, "negotiate napd");

#define NVME_AUTH_NEGOTIATE_LEN(napd)         \
	(sizeof(struct nvme_auth_negotiate) + \
	 (size_t)(napd) * sizeof(struct nvme_auth_protocol_desc))

/* ---- DH-HMAC-CHAP_Challenge (controller -> host) ------------------------------------ */
/* Followed by C1 (HL bytes), then the controller's DH value g^y mod p (DHVLEN bytes). */
struct nvme_dhchap_challenge {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_ID_CHALLENGE */
	uint8_t rsvd2[2];
	uint8_t t_id[2];
	uint8_t hl; /* hash length, bytes of C1 */
	uint8_t rsvd7;
	uint8_t hashid;    /* enum nvme_auth_hash_id */
	uint8_t dhgid;     /* enum nvme_auth_dhgroup_id */
	uint8_t dhvlen[2]; /* 0 for the NULL group */
	uint8_t seqnum[4]; /* S1 */
};
static_assert(sizeof(struct nvme_dhchap_challenge) == 16, "DH-HMAC-CHAP_Challenge");
static_assert(offsetof(struct nvme_dhchap_challenge, t_id) == 4, "challenge t_id");
static_assert(offsetof(struct nvme_dhchap_challenge, hl) == 6, "challenge hl");
static_assert(offsetof(struct nvme_dhchap_challenge, hashid) == 8, "challenge hashid");
static_assert(offsetof(struct nvme_dhchap_challenge, dhgid) == 9, "challenge dhgid");
static_assert(offsetof(struct nvme_dhchap_challenge, dhvlen) == 10, "challenge dhvlen");
static_assert(offsetof(struct nvme_dhchap_challenge, seqnum) == 12, "challenge seqnum");

#define NVME_DHCHAP_CHALLENGE_CVAL_OFF        sizeof(struct nvme_dhchap_challenge)
#define NVME_DHCHAP_CHALLENGE_DHV_OFF(hl)     (NVME_DHCHAP_CHALLENGE_CVAL_OFF + (size_t)(hl))
#define NVME_DHCHAP_CHALLENGE_LEN(hl, dhvlen) (NVME_DHCHAP_CHALLENGE_DHV_OFF(hl) + (size_t)(dhvlen))

/* ---- DH-HMAC-CHAP_Reply (host -> controller) ---------------------------------------- */
/*
 * Followed by the response R1 (HL bytes), the challenge C2 (HL bytes, meaningful only when
 * CVALID is set), then the host's DH value g^x mod p (DHVLEN bytes).
 */
#define NVME_DHCHAP_REPLY_CVALID (1u << 0)

struct nvme_dhchap_reply {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_ID_REPLY */
	uint8_t rsvd2[2];
	uint8_t t_id[2];
	uint8_t hl;
	uint8_t rsvd7;
	uint8_t cvalid; /* NVME_DHCHAP_REPLY_CVALID: C2 present, authenticate the controller */
	uint8_t rsvd9;
	uint8_t dhvlen[2];
	uint8_t seqnum[4]; /* S2; 0 when CVALID is clear */
};
static_assert(sizeof(struct nvme_dhchap_reply) == 16, "DH-HMAC-CHAP_Reply");
static_assert(offsetof(struct nvme_dhchap_reply, t_id) == 4, "reply t_id");
static_assert(offsetof(struct nvme_dhchap_reply, hl) == 6, "reply hl");
static_assert(offsetof(struct nvme_dhchap_reply, cvalid) == 8, "reply cvalid");
static_assert(offsetof(struct nvme_dhchap_reply, dhvlen) == 10, "reply dhvlen");
static_assert(offsetof(struct nvme_dhchap_reply, seqnum) == 12, "reply seqnum");

#define NVME_DHCHAP_REPLY_RVAL_OFF        sizeof(struct nvme_dhchap_reply)
#define NVME_DHCHAP_REPLY_CVAL_OFF(hl)    (NVME_DHCHAP_REPLY_RVAL_OFF + (size_t)(hl))
#define NVME_DHCHAP_REPLY_DHV_OFF(hl)     (NVME_DHCHAP_REPLY_RVAL_OFF + 2 * (size_t)(hl))
#define NVME_DHCHAP_REPLY_LEN(hl, dhvlen) (NVME_DHCHAP_REPLY_DHV_OFF(hl) + (size_t)(dhvlen))

/* ---- DH-HMAC-CHAP_Success1 (controller -> host) ------------------------------------- */
/* Followed by the controller's response R2 (HL bytes) when RVALID is set. */
#define NVME_DHCHAP_SUCCESS1_RVALID (1u << 0)

struct nvme_dhchap_success1 {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_ID_SUCCESS1 */
	uint8_t rsvd2[2];
	uint8_t t_id[2];
	uint8_t hl;
	uint8_t rsvd7;
	uint8_t rvalid; /* NVME_DHCHAP_SUCCESS1_RVALID */
	uint8_t rsvd9[7];
};
static_assert(sizeof(struct nvme_dhchap_success1) == 16, "DH-HMAC-CHAP_Success1");
static_assert(offsetof(struct nvme_dhchap_success1, t_id) == 4, "success1 t_id");
static_assert(offsetof(struct nvme_dhchap_success1, hl) == 6, "success1 hl");
static_assert(offsetof(struct nvme_dhchap_success1, rvalid) == 8, "success1 rvalid");

#define NVME_DHCHAP_SUCCESS1_RVAL_OFF sizeof(struct nvme_dhchap_success1)
#define NVME_DHCHAP_SUCCESS1_LEN(hl)  (NVME_DHCHAP_SUCCESS1_RVAL_OFF + (size_t)(hl))

/* ---- DH-HMAC-CHAP_Success2 (host -> controller) ------------------------------------- */
struct nvme_dhchap_success2 {
	uint8_t auth_type; /* NVME_AUTH_TYPE_DHCHAP */
	uint8_t auth_id;   /* NVME_AUTH_ID_SUCCESS2 */
	uint8_t rsvd2[2];
	uint8_t t_id[2];
	uint8_t rsvd6[10];
};
static_assert(sizeof(struct nvme_dhchap_success2) == 16, "DH-HMAC-CHAP_Success2");
static_assert(offsetof(struct nvme_dhchap_success2, t_id) == 4, "success2 t_id");

/* ---- AUTH_Failure1 (controller -> host) / AUTH_Failure2 (host -> controller) -------- */
struct nvme_auth_failure {
	uint8_t auth_type; /* NVME_AUTH_TYPE_COMMON */
	uint8_t auth_id;   /* NVME_AUTH_ID_FAILURE1 / NVME_AUTH_ID_FAILURE2 */
	uint8_t rsvd2[2];
	uint8_t t_id[2];
	uint8_t rescode;     /* NVME_AUTH_FAIL_REASON_FAILED */
	uint8_t rescode_exp; /* enum nvme_auth_fail_explanation */
};
static_assert(sizeof(struct nvme_auth_failure) == 8, "AUTH_Failure1/2");
static_assert(offsetof(struct nvme_auth_failure, t_id) == 4, "failure t_id");
static_assert(offsetof(struct nvme_auth_failure, rescode) == 6, "failure rescode");
static_assert(offsetof(struct nvme_auth_failure, rescode_exp) == 7, "failure explanation");

#endif
