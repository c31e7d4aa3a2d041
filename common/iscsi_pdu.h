/* SPDX-License-Identifier: MIT */
/*
 * iSCSI PDU helpers shared by target and initiator: BHS field access, segment lengths and
 * padding, CRC32C digests, serial number arithmetic, the login/text "key=value" codec and
 * the operational parameter negotiation rules of RFC 7143 section 13.
 */
#ifndef NVMEOF_ISCSI_PDU_H
#define NVMEOF_ISCSI_PDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "endian.h"
#include "iscsi_spec.h"

/* ---- BHS helpers ------------------------------------------------------------------------ */
static inline uint8_t iscsi_bhs_opcode(const void *bhs)
{
	return ((const uint8_t *)bhs)[0] & ISCSI_OPCODE_MASK;
}

static inline bool iscsi_bhs_immediate(const void *bhs)
{
	return ((const uint8_t *)bhs)[0] & ISCSI_FLAG_IMMEDIATE;
}

static inline uint32_t iscsi_bhs_dlen(const void *bhs)
{
	return get_be24((const uint8_t *)bhs + 5);
}

static inline void iscsi_bhs_set_dlen(void *bhs, uint32_t len)
{
	put_be24((uint8_t *)bhs + 5, len);
}

/* Bytes of Additional Header Segments following the BHS. */
static inline uint32_t iscsi_bhs_ahs_len(const void *bhs)
{
	return (uint32_t)((const uint8_t *)bhs)[4] * 4;
}

static inline uint32_t iscsi_bhs_itt(const void *bhs)
{
	return get_be32((const uint8_t *)bhs + 16);
}

/* Start a target/initiator PDU: zero the BHS, set opcode and flags. */
void iscsi_bhs_init(void *bhs, uint8_t opcode, uint8_t flags);

/* Header bytes on the wire: BHS + AHS (+ header digest). */
static inline uint32_t iscsi_hdr_wire_len(const void *bhs, bool hdigest)
{
	return ISCSI_BHS_LEN + iscsi_bhs_ahs_len(bhs) + (hdigest ? ISCSI_DIGEST_LEN : 0);
}

/* Data segment bytes on the wire: data + padding (+ data digest when data is present). */
static inline uint32_t iscsi_data_wire_len(uint32_t dlen, bool ddigest)
{
	return ISCSI_PAD(dlen) + (ddigest && dlen ? ISCSI_DIGEST_LEN : 0);
}

/* ---- LUN encoding (SAM-5 single level, peripheral and flat addressing) ------------------- */
void iscsi_lun_encode(uint8_t out[8], uint64_t lun);
/* Returns the LUN, or UINT64_MAX for an addressing method we do not use. */
uint64_t iscsi_lun_decode(const uint8_t in[8]);

/* ---- Digests --------------------------------------------------------------------------- */
/* Header digest over BHS + AHS. */
uint32_t iscsi_header_digest(const void *hdr, size_t len);
/* Data digest over @dlen bytes described by @iov followed by the zero padding. */
uint32_t iscsi_data_digest(const struct iovec *iov, int iovcnt, uint32_t dlen);
/* The digest as it travels: CRC32C stored little-endian (RFC 7143 section 13.1). */
static inline void iscsi_put_digest(void *p, uint32_t crc)
{
	put_le32(p, crc);
}
static inline uint32_t iscsi_get_digest(const void *p)
{
	return get_le32(p);
}

/* ---- Serial number arithmetic (RFC 1982, 32-bit) ---------------------------------------- */
static inline bool iscsi_sn_lt(uint32_t a, uint32_t b)
{
	return a != b && (int32_t)(a - b) < 0;
}
static inline bool iscsi_sn_gt(uint32_t a, uint32_t b)
{
	return a != b && (int32_t)(a - b) > 0;
}
static inline bool iscsi_sn_le(uint32_t a, uint32_t b)
{
	return !iscsi_sn_gt(a, b);
}

/* ---- Text codec ------------------------------------------------------------------------- */
#define ISCSI_KEY_NAME_MAX 63
#define ISCSI_TEXT_MAX_PAIRS 64

struct iscsi_kv {
	const char *key;
	const char *val;
};

/*
 * Split @len bytes of "key=value\0..." text in place into at most @max pairs. Each pair
 * must be NUL terminated, have a key of 1..63 characters from the allowed set and a '='.
 * Returns the number of pairs or -EINVAL (malformed) / -E2BIG (too many pairs).
 */
int iscsi_text_parse(char *buf, size_t len, struct iscsi_kv *kv, int max);

/* Append "key=value\0" to @buf (@len used of @cap). Returns 0 or -ENOSPC. */
int iscsi_text_add(char *buf, size_t cap, size_t *len, const char *key, const char *val);
int iscsi_text_add_u32(char *buf, size_t cap, size_t *len, const char *key, uint32_t val);

/* Parse a decimal or 0x hex number as allowed for numeric keys; -EINVAL on junk. */
int iscsi_text_parse_u32(const char *s, uint32_t *out);

/* Binary values (CHAP): "0x" hex or "0b" base64. Returns bytes or -EINVAL/-ENOSPC. */
int iscsi_text_decode_binary(const char *s, uint8_t *out, size_t cap);
/* Encode as "0x" + lower-case hex into @out (needs 2 * len + 3 bytes). */
void iscsi_text_encode_hex(const uint8_t *in, size_t len, char *out);

/* ---- Operational parameters --------------------------------------------------------------- */
enum iscsi_key_id {
	ISCSI_KEY_HEADER_DIGEST,
	ISCSI_KEY_DATA_DIGEST,
	ISCSI_KEY_MAX_CONNECTIONS,
	ISCSI_KEY_INITIAL_R2T,
	ISCSI_KEY_IMMEDIATE_DATA,
	ISCSI_KEY_MAX_RECV_DSL,
	ISCSI_KEY_MAX_BURST_LENGTH,
	ISCSI_KEY_FIRST_BURST_LENGTH,
	ISCSI_KEY_DEFAULT_TIME2WAIT,
	ISCSI_KEY_DEFAULT_TIME2RETAIN,
	ISCSI_KEY_MAX_OUTSTANDING_R2T,
	ISCSI_KEY_DATA_PDU_IN_ORDER,
	ISCSI_KEY_DATA_SEQUENCE_IN_ORDER,
	ISCSI_KEY_ERROR_RECOVERY_LEVEL,
	ISCSI_KEY_PROTOCOL_LEVEL,
	ISCSI_KEY_TASK_REPORTING,
	ISCSI_KEY_IF_MARKER,
	ISCSI_KEY_OF_MARKER,
	ISCSI_KEY_IF_MARK_INT,
	ISCSI_KEY_OF_MARK_INT,
	ISCSI_KEY_COUNT,
};

/* Negotiated (or, as "local", supported) values. Booleans are 0/1. */
struct iscsi_params {
	uint32_t header_digest;	     /* ISCSI_DIGEST_* bit set (local: allowed; session: 0/1) */
	uint32_t data_digest;
	uint32_t max_connections;
	uint32_t initial_r2t;
	uint32_t immediate_data;
	uint32_t max_recv_dsl;	     /* what the peer declared it can receive */
	uint32_t max_burst_length;
	uint32_t first_burst_length;
	uint32_t default_time2wait;
	uint32_t default_time2retain;
	uint32_t max_outstanding_r2t;
	uint32_t data_pdu_in_order;
	uint32_t data_sequence_in_order;
	uint32_t error_recovery_level;
	uint32_t protocol_level;
	uint32_t task_reporting;     /* 0 = RFC3720 */
	uint32_t if_marker, of_marker, if_mark_int, of_mark_int; /* obsolete, kept 0 */
	uint32_t seen;		     /* bit per enum iscsi_key_id answered so far */
};

/* Digest choices: in "local" params, a bit set of what we accept. */
#define ISCSI_DIGEST_NONE 0x1
#define ISCSI_DIGEST_CRC32C 0x2

/* RFC 7143 defaults (session values before negotiation). */
void iscsi_params_default(struct iscsi_params *p);

enum iscsi_neg_result {
	ISCSI_NEG_ANSWER,	 /* @resp holds the value to send back */
	ISCSI_NEG_NO_ANSWER,	 /* declarative key recorded, nothing to send */
	ISCSI_NEG_NOT_OPERATIONAL, /* not an operational key: the login layer handles it */
};

/*
 * Negotiate one key offered by the peer (we are the responder). @sess holds the values so
 * far (RFC defaults initially), @local what we support or prefer. Unknown keys and X-
 * extension keys yield "NotUnderstood", keys irrelevant in a discovery session (or
 * FirstBurstLength with InitialR2T=Yes and ImmediateData=No) "Irrelevant", values out of
 * range or malformed "Reject" (section 6.2). Writes the response value into @resp.
 * Returns the outcome, or -EPROTO when the key was already negotiated (a protocol error).
 */
int iscsi_param_negotiate(struct iscsi_params *sess, const struct iscsi_params *local,
			  bool discovery, const char *key, const char *val, char *resp,
			  size_t resp_len);

/* Key name of an operational key, for offering it ourselves. */
const char *iscsi_key_name(enum iscsi_key_id id);

/* After negotiation: FirstBurstLength <= MaxBurstLength (section 13.14). */
void iscsi_params_finish(struct iscsi_params *sess);

#endif
