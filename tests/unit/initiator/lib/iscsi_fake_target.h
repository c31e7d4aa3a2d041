/* SPDX-License-Identifier: MIT */
/*
 * A small iSCSI target for the initiator's unit tests: login (None or CHAP, operational
 * negotiation through the common codec), then a RAM disk behind READ/WRITE(16), COMPARE
 * AND WRITE, WRITE SAME(16), UNMAP, SYNCHRONIZE CACHE, VERIFY, INQUIRY/VPD, READ
 * CAPACITY(16), MODE SENSE(10), REPORT SUPPORTED OPERATION CODES; NOP, Logout. Faults
 * can be injected into the login or into the full feature phase of I/O sessions.
 * Listens on 127.0.0.1 (one thread per connection) or serves one given socket.
 */
#ifndef ISCSI_FAKE_TARGET_H
#define ISCSI_FAKE_TARGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define FT_IQN "iqn.2026-11.io.nvmeof:fake"

enum ft_login_fault {
	FT_L_NONE,
	FT_L_CLOSE,	      /* close after the first request */
	FT_L_SILENT,	      /* never answer */
	FT_L_BAD_OPCODE,      /* answer with a NOP-In */
	FT_L_TRUNCATED,	      /* announce 100 bytes of text, send 10, close */
	FT_L_HUGE_DLEN,	      /* announce a 16 MiB data segment */
	FT_L_BAD_TEXT,	      /* text without '=' */
	FT_L_UNTERMINATED,    /* text without its NUL */
	FT_L_ITT,	      /* another ITT */
	FT_L_ISID,	      /* another ISID */
	FT_L_STATUS,	      /* refuse with status cfg->status */
	FT_L_VERSION,	      /* version-active 5 */
	FT_L_BOTH_TC,	      /* T and C both set */
	FT_L_SKIP_STAGE,      /* security stage straight to full feature */
	FT_L_NO_TSIH,	      /* final response without a TSIH */
	FT_L_FORCE_DIGEST,    /* HeaderDigest=CRC32C although None was offered */
	FT_L_BAD_NUMBER,      /* MaxBurstLength=lots */
	FT_L_BURST_TOO_BIG,   /* MaxBurstLength above the offer */
	FT_L_MRDSL_ZERO,      /* MaxRecvDataSegmentLength=0 */
	FT_L_NO_ORDER,	      /* DataPDUInOrder=No */
	FT_L_CONTINUE,	      /* split the operational answer with the C bit (valid) */
	FT_L_OFFER_KEYS,      /* offer keys the initiator did not (valid: it must answer) */
	FT_L_NEVER_TRANSIT,   /* never set T in the operational stage */
	FT_L_CHAP_ALG,	      /* CHAP_A=99 */
	FT_L_CHAP_NO_CHALLENGE, /* CHAP_A without CHAP_I/CHAP_C */
	FT_L_REJECT,	      /* a Reject PDU */
	FT_L_CSG_NEXT,	      /* CSG = the next stage when transiting (tolerated) */
	FT_L_CSG_WRONG,	      /* CSG = full feature phase in the security stage */
};

enum ft_ffp_fault {
	FT_F_NONE,
	FT_F_DATAIN_OFFSET,   /* Data-In at a wrong buffer offset */
	FT_F_DATAIN_OVERRUN,  /* more Data-In than EDTL */
	FT_F_R2T_RANGE,	      /* R2T beyond EDTL */
	FT_F_REJECT,	      /* Reject the command */
	FT_F_ASYNC_LOGOUT,    /* Asynchronous Message: logout requested */
	FT_F_UNKNOWN_ITT,     /* SCSI Response for an ITT never issued */
	FT_F_BAD_HDGST,	      /* corrupt header digest */
	FT_F_BAD_DDGST,	      /* corrupt Data-In data digest (command fails, queue lives) */
	FT_F_BIG_SEGMENT,     /* Data-In above the initiator's MaxRecvDataSegmentLength */
	FT_F_CLOSE,	      /* close the connection instead of answering */
	FT_F_SENSE_LENGTH,    /* SCSI Response whose SenseLength exceeds the segment */
	FT_F_BAD_OPCODE,      /* a PDU with an opcode the initiator never expects */
};

struct ft_config {
	/* Login */
	bool chap;
	const char *chap_user, *chap_secret;
	int chap_alg;		  /* CHAP_A to pick (offered), 0: the first offered */
	bool allow_digests;	  /* accept CRC32C when offered */
	bool initial_r2t;	  /* insist on InitialR2T=Yes */
	bool no_immediate_data;	  /* insist on ImmediateData=No */
	uint32_t max_recv_dsl;	  /* declared by the target (default 8192) */
	uint32_t max_burst;	  /* target's limit (default 262144) */
	uint32_t first_burst;	  /* target's limit (default 65536) */
	enum ft_login_fault login_fault;
	uint16_t status;	  /* FT_L_STATUS */
	/* Full feature phase */
	uint64_t nblocks;	  /* default 16384 */
	uint32_t block_size;	  /* default 512 */
	uint32_t cmd_window;	  /* MaxCmdSN - ExpCmdSN + 1 (default 64) */
	uint32_t data_in_seg;	  /* largest Data-In segment (default: initiator's MRDSL) */
	uint32_t r2t_len;	  /* largest R2T (default: MaxBurstLength) */
	bool phase_collapse;	  /* status in the last Data-In */
	bool ua_first;		  /* first media command of a session: UNIT ATTENTION */
	bool no_rsoc;		  /* REPORT SUPPORTED OPERATION CODES unsupported */
	bool descriptor_sense;
	bool nop_ping;		  /* NOP-In ping (with a TTT) before every answer */
	uint32_t caw_max;	  /* MAXIMUM COMPARE AND WRITE LENGTH (default 16) */
	bool no_caw;		  /* Block Limits reports COMPARE AND WRITE length 0 */
	enum ft_ffp_fault ffp_fault;
	uint32_t fault_after;	  /* media commands of an I/O session before the fault */
};

struct ft_stats {
	unsigned int logins, logouts;
	unsigned int commands, window_violations, cmdsn_errors;
	unsigned int nop_pings_answered, nop_outs;
	unsigned int r2ts, data_outs, immediate_bytes, unsolicited_bytes;
	unsigned int syncs, unmaps, write_sames, ws_unmap, caws, miscompares;
	unsigned int byte_verifies;     /* VERIFY(16) with BYTCHK 01b */
	unsigned int protocol_errors;	/* something the initiator sent was wrong */
	char last_error[160];
	/* What the initiator sent at login */
	char initiator_name[256];
	char chap_a_offer[32];
	char op_keys[2048];		/* operational keys offered, "k=v;" */
	char answers[512];		/* answers to keys the target offered */
};

struct fake_target;

/* Listen on 127.0.0.1 (any free port); every accepted connection is served in a thread. */
struct fake_target *ft_start(const struct ft_config *cfg);
uint16_t ft_port(const struct fake_target *ft);
/* Stop listening, wait for every connection to end; stats stay readable until ft_free. */
void ft_stop(struct fake_target *ft);
const struct ft_stats *ft_stats(const struct fake_target *ft);
uint8_t *ft_disk(struct fake_target *ft);
void ft_free(struct fake_target *ft);

/* Serve one already connected socket in a thread (socketpair tests); ft_join waits. */
struct fake_target *ft_serve_fd(const struct ft_config *cfg, int fd);
void ft_join(struct fake_target *ft);

/* CHAP digest computed independently of the initiator (OpenSSL EVP). */
int ft_chap_digest(int alg, uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
		   uint8_t *out);

#endif
