/* SPDX-License-Identifier: MIT */
/*
 * iSCSI wire structures and constants (RFC 7143). Every PDU starts with the 48-byte Basic
 * Header Segment; each opcode's layout is a struct of that size with static asserts on its
 * offsets. All multi-byte fields are big-endian: access them through get_be32()/put_be32()
 * (endian.h), never directly. Structures and constants only.
 */
#ifndef NVMEOF_ISCSI_SPEC_H
#define NVMEOF_ISCSI_SPEC_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define ISCSI_BHS_LEN 48
#define ISCSI_DIGEST_LEN 4
#define ISCSI_PAD(len) (((len) + 3u) & ~3u)
#define ISCSI_DEFAULT_PORT 3260
#define ISCSI_NAME_MAX 223	      /* bytes, excluding the NUL */
#define ISCSI_TAG_RESERVED 0xffffffffu /* ITT/TTT "no tag" */
#define ISCSI_VERSION 0x00

/* ---- Opcodes (byte 0 bits 5:0; bit 6 = immediate delivery) ------------------------------ */
#define ISCSI_OPCODE_MASK 0x3f
#define ISCSI_FLAG_IMMEDIATE 0x40

enum iscsi_opcode {
	/* initiator */
	ISCSI_OP_NOP_OUT = 0x00,
	ISCSI_OP_SCSI_CMD = 0x01,
	ISCSI_OP_TMF_REQ = 0x02,
	ISCSI_OP_LOGIN_REQ = 0x03,
	ISCSI_OP_TEXT_REQ = 0x04,
	ISCSI_OP_DATA_OUT = 0x05,
	ISCSI_OP_LOGOUT_REQ = 0x06,
	ISCSI_OP_SNACK = 0x10,
	/* target */
	ISCSI_OP_NOP_IN = 0x20,
	ISCSI_OP_SCSI_RSP = 0x21,
	ISCSI_OP_TMF_RSP = 0x22,
	ISCSI_OP_LOGIN_RSP = 0x23,
	ISCSI_OP_TEXT_RSP = 0x24,
	ISCSI_OP_DATA_IN = 0x25,
	ISCSI_OP_LOGOUT_RSP = 0x26,
	ISCSI_OP_R2T = 0x31,
	ISCSI_OP_ASYNC_MSG = 0x32,
	ISCSI_OP_REJECT = 0x3f,
};

/* Byte 1: final bit, common to most PDUs */
#define ISCSI_FLAG_FINAL 0x80

/* ---- Generic BHS -------------------------------------------------------------------------- */
struct iscsi_bhs {
	uint8_t opcode;
	uint8_t flags;
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;	     /* in 4-byte words */
	uint8_t data_segment_len[3]; /* BE24 */
	uint8_t lun[8];
	uint32_t itt;
	uint8_t opcode_specific[28];
};
static_assert(sizeof(struct iscsi_bhs) == ISCSI_BHS_LEN, "BHS");
static_assert(offsetof(struct iscsi_bhs, total_ahs_len) == 4, "BHS TotalAHSLength");
static_assert(offsetof(struct iscsi_bhs, data_segment_len) == 5, "BHS DataSegmentLength");
static_assert(offsetof(struct iscsi_bhs, lun) == 8, "BHS LUN");
static_assert(offsetof(struct iscsi_bhs, itt) == 16, "BHS ITT");
static_assert(offsetof(struct iscsi_bhs, opcode_specific) == 20, "BHS opcode specific");

/* AHS types */
#define ISCSI_AHS_EXTENDED_CDB 0x01
#define ISCSI_AHS_BIDI_READ_LEN 0x02

/* ---- SCSI Command (0x01) ------------------------------------------------------------------ */
#define ISCSI_SCSI_CMD_READ 0x40
#define ISCSI_SCSI_CMD_WRITE 0x20
#define ISCSI_SCSI_CMD_ATTR_MASK 0x07

struct iscsi_scsi_cmd {
	uint8_t opcode;
	uint8_t flags; /* F R W ATTR */
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t edtl; /* Expected Data Transfer Length */
	uint32_t cmdsn;
	uint32_t exp_statsn;
	uint8_t cdb[16];
};
static_assert(sizeof(struct iscsi_scsi_cmd) == ISCSI_BHS_LEN, "SCSI Command");
static_assert(offsetof(struct iscsi_scsi_cmd, edtl) == 20, "SCSI Command EDTL");
static_assert(offsetof(struct iscsi_scsi_cmd, cmdsn) == 24, "SCSI Command CmdSN");
static_assert(offsetof(struct iscsi_scsi_cmd, exp_statsn) == 28, "SCSI Command ExpStatSN");
static_assert(offsetof(struct iscsi_scsi_cmd, cdb) == 32, "SCSI Command CDB");

/* ---- SCSI Response (0x21) ----------------------------------------------------------------- */
#define ISCSI_RSP_BIDI_OVERFLOW 0x10
#define ISCSI_RSP_BIDI_UNDERFLOW 0x08
#define ISCSI_RSP_OVERFLOW 0x04
#define ISCSI_RSP_UNDERFLOW 0x02
#define ISCSI_RESPONSE_COMPLETED 0x00
#define ISCSI_RESPONSE_TARGET_FAILURE 0x01

struct iscsi_scsi_rsp {
	uint8_t opcode;
	uint8_t flags; /* 1 0 0 o u O U 0 */
	uint8_t response;
	uint8_t status;
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t rsvd8[8];
	uint32_t itt;
	uint32_t snack_tag;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint32_t exp_datasn;
	uint32_t bidi_residual;
	uint32_t residual;
};
static_assert(sizeof(struct iscsi_scsi_rsp) == ISCSI_BHS_LEN, "SCSI Response");
static_assert(offsetof(struct iscsi_scsi_rsp, status) == 3, "SCSI Response status");
static_assert(offsetof(struct iscsi_scsi_rsp, snack_tag) == 20, "SCSI Response SNACK tag");
static_assert(offsetof(struct iscsi_scsi_rsp, statsn) == 24, "SCSI Response StatSN");
static_assert(offsetof(struct iscsi_scsi_rsp, exp_cmdsn) == 28, "SCSI Response ExpCmdSN");
static_assert(offsetof(struct iscsi_scsi_rsp, max_cmdsn) == 32, "SCSI Response MaxCmdSN");
static_assert(offsetof(struct iscsi_scsi_rsp, exp_datasn) == 36, "SCSI Response ExpDataSN");
static_assert(offsetof(struct iscsi_scsi_rsp, residual) == 44, "SCSI Response residual");

/* ---- Task Management Function Request/Response (0x02/0x22) ------------------------------- */
#define ISCSI_TMF_FUNC_MASK 0x7f
enum iscsi_tmf_func {
	ISCSI_TMF_ABORT_TASK = 1,
	ISCSI_TMF_ABORT_TASK_SET = 2,
	ISCSI_TMF_CLEAR_ACA = 3,
	ISCSI_TMF_CLEAR_TASK_SET = 4,
	ISCSI_TMF_LOGICAL_UNIT_RESET = 5,
	ISCSI_TMF_TARGET_WARM_RESET = 6,
	ISCSI_TMF_TARGET_COLD_RESET = 7,
	ISCSI_TMF_TASK_REASSIGN = 8,
};
enum iscsi_tmf_response {
	ISCSI_TMF_RSP_COMPLETE = 0,
	ISCSI_TMF_RSP_NO_TASK = 1,
	ISCSI_TMF_RSP_NO_LUN = 2,
	ISCSI_TMF_RSP_TASK_ALLEGIANT = 3,
	ISCSI_TMF_RSP_NO_REASSIGN = 4,
	ISCSI_TMF_RSP_NOT_SUPPORTED = 5,
	ISCSI_TMF_RSP_AUTH_FAILED = 6,
	ISCSI_TMF_RSP_REJECTED = 255,
};

struct iscsi_tmf_req {
	uint8_t opcode;
	uint8_t function; /* 1 + function */
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ref_task_tag;
	uint32_t cmdsn;
	uint32_t exp_statsn;
	uint32_t ref_cmdsn;
	uint32_t exp_datasn;
	uint8_t rsvd40[8];
};
static_assert(sizeof(struct iscsi_tmf_req) == ISCSI_BHS_LEN, "TMF Request");
static_assert(offsetof(struct iscsi_tmf_req, ref_task_tag) == 20, "TMF RTT");
static_assert(offsetof(struct iscsi_tmf_req, cmdsn) == 24, "TMF CmdSN");
static_assert(offsetof(struct iscsi_tmf_req, ref_cmdsn) == 32, "TMF RefCmdSN");
static_assert(offsetof(struct iscsi_tmf_req, exp_datasn) == 36, "TMF ExpDataSN");

struct iscsi_tmf_rsp {
	uint8_t opcode;
	uint8_t flags;
	uint8_t response;
	uint8_t rsvd3;
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t rsvd8[8];
	uint32_t itt;
	uint8_t rsvd20[4];
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint8_t rsvd36[12];
};
static_assert(sizeof(struct iscsi_tmf_rsp) == ISCSI_BHS_LEN, "TMF Response");
static_assert(offsetof(struct iscsi_tmf_rsp, response) == 2, "TMF Response response");
static_assert(offsetof(struct iscsi_tmf_rsp, statsn) == 24, "TMF Response StatSN");
static_assert(offsetof(struct iscsi_tmf_rsp, max_cmdsn) == 32, "TMF Response MaxCmdSN");

/* ---- SCSI Data-Out / Data-In (0x05/0x25) -------------------------------------------------- */
#define ISCSI_DATA_ACK 0x40
#define ISCSI_DATA_OVERFLOW 0x04
#define ISCSI_DATA_UNDERFLOW 0x02
#define ISCSI_DATA_STATUS 0x01

struct iscsi_data_out {
	uint8_t opcode;
	uint8_t flags; /* F */
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint8_t rsvd24[4];
	uint32_t exp_statsn;
	uint8_t rsvd32[4];
	uint32_t datasn;
	uint32_t buffer_offset;
	uint8_t rsvd44[4];
};
static_assert(sizeof(struct iscsi_data_out) == ISCSI_BHS_LEN, "Data-Out");
static_assert(offsetof(struct iscsi_data_out, ttt) == 20, "Data-Out TTT");
static_assert(offsetof(struct iscsi_data_out, exp_statsn) == 28, "Data-Out ExpStatSN");
static_assert(offsetof(struct iscsi_data_out, datasn) == 36, "Data-Out DataSN");
static_assert(offsetof(struct iscsi_data_out, buffer_offset) == 40, "Data-Out offset");

struct iscsi_data_in {
	uint8_t opcode;
	uint8_t flags; /* F A 0 0 0 O U S */
	uint8_t rsvd2;
	uint8_t status;
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint32_t datasn;
	uint32_t buffer_offset;
	uint32_t residual;
};
static_assert(sizeof(struct iscsi_data_in) == ISCSI_BHS_LEN, "Data-In");
static_assert(offsetof(struct iscsi_data_in, status) == 3, "Data-In status");
static_assert(offsetof(struct iscsi_data_in, ttt) == 20, "Data-In TTT");
static_assert(offsetof(struct iscsi_data_in, statsn) == 24, "Data-In StatSN");
static_assert(offsetof(struct iscsi_data_in, datasn) == 36, "Data-In DataSN");
static_assert(offsetof(struct iscsi_data_in, buffer_offset) == 40, "Data-In offset");
static_assert(offsetof(struct iscsi_data_in, residual) == 44, "Data-In residual");

/* ---- Ready To Transfer (0x31) --------------------------------------------------------------- */
struct iscsi_r2t {
	uint8_t opcode;
	uint8_t flags;
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint32_t r2tsn;
	uint32_t buffer_offset;
	uint32_t desired_len;
};
static_assert(sizeof(struct iscsi_r2t) == ISCSI_BHS_LEN, "R2T");
static_assert(offsetof(struct iscsi_r2t, ttt) == 20, "R2T TTT");
static_assert(offsetof(struct iscsi_r2t, r2tsn) == 36, "R2T R2TSN");
static_assert(offsetof(struct iscsi_r2t, buffer_offset) == 40, "R2T offset");
static_assert(offsetof(struct iscsi_r2t, desired_len) == 44, "R2T desired length");

/* ---- Login Request/Response (0x03/0x23) ------------------------------------------------- */
#define ISCSI_LOGIN_TRANSIT 0x80
#define ISCSI_LOGIN_CONTINUE 0x40
#define ISCSI_LOGIN_CSG_SHIFT 2
#define ISCSI_LOGIN_CSG_MASK 0x0c
#define ISCSI_LOGIN_NSG_MASK 0x03
enum iscsi_login_stage {
	ISCSI_STAGE_SECURITY = 0,
	ISCSI_STAGE_OPERATIONAL = 1,
	ISCSI_STAGE_FULL_FEATURE = 3,
};

struct iscsi_login_req {
	uint8_t opcode;
	uint8_t flags; /* T C 0 0 CSG NSG */
	uint8_t version_max;
	uint8_t version_min;
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt;
	uint16_t cid;
	uint8_t rsvd22[2];
	uint32_t cmdsn;
	uint32_t exp_statsn;
	uint8_t rsvd32[16];
};
static_assert(sizeof(struct iscsi_login_req) == ISCSI_BHS_LEN, "Login Request");
static_assert(offsetof(struct iscsi_login_req, isid) == 8, "Login ISID");
static_assert(offsetof(struct iscsi_login_req, tsih) == 14, "Login TSIH");
static_assert(offsetof(struct iscsi_login_req, cid) == 20, "Login CID");
static_assert(offsetof(struct iscsi_login_req, cmdsn) == 24, "Login CmdSN");
static_assert(offsetof(struct iscsi_login_req, exp_statsn) == 28, "Login ExpStatSN");

struct iscsi_login_rsp {
	uint8_t opcode;
	uint8_t flags;
	uint8_t version_max;
	uint8_t version_active;
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt;
	uint8_t rsvd20[4];
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint8_t status_class;
	uint8_t status_detail;
	uint8_t rsvd38[10];
};
static_assert(sizeof(struct iscsi_login_rsp) == ISCSI_BHS_LEN, "Login Response");
static_assert(offsetof(struct iscsi_login_rsp, statsn) == 24, "Login Response StatSN");
static_assert(offsetof(struct iscsi_login_rsp, max_cmdsn) == 32, "Login Response MaxCmdSN");
static_assert(offsetof(struct iscsi_login_rsp, status_class) == 36, "Login status class");

/* Login status: class << 8 | detail */
#define ISCSI_LOGIN_STATUS(cls, det) ((uint16_t)((cls) << 8 | (det)))
enum iscsi_login_status {
	ISCSI_LOGIN_OK = ISCSI_LOGIN_STATUS(0, 0),
	ISCSI_LOGIN_TARGET_MOVED_TEMP = ISCSI_LOGIN_STATUS(1, 1),
	ISCSI_LOGIN_INITIATOR_ERROR = ISCSI_LOGIN_STATUS(2, 0),
	ISCSI_LOGIN_AUTH_FAILED = ISCSI_LOGIN_STATUS(2, 1),
	ISCSI_LOGIN_AUTHORIZATION_FAILED = ISCSI_LOGIN_STATUS(2, 2),
	ISCSI_LOGIN_NOT_FOUND = ISCSI_LOGIN_STATUS(2, 3),
	ISCSI_LOGIN_TARGET_REMOVED = ISCSI_LOGIN_STATUS(2, 4),
	ISCSI_LOGIN_UNSUPPORTED_VERSION = ISCSI_LOGIN_STATUS(2, 5),
	ISCSI_LOGIN_TOO_MANY_CONNECTIONS = ISCSI_LOGIN_STATUS(2, 6),
	ISCSI_LOGIN_MISSING_PARAMETER = ISCSI_LOGIN_STATUS(2, 7),
	ISCSI_LOGIN_CANT_INCLUDE = ISCSI_LOGIN_STATUS(2, 8),
	ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED = ISCSI_LOGIN_STATUS(2, 9),
	ISCSI_LOGIN_NO_SESSION = ISCSI_LOGIN_STATUS(2, 10),
	ISCSI_LOGIN_INVALID_REQUEST = ISCSI_LOGIN_STATUS(2, 11),
	ISCSI_LOGIN_TARGET_ERROR = ISCSI_LOGIN_STATUS(3, 0),
	ISCSI_LOGIN_SERVICE_UNAVAILABLE = ISCSI_LOGIN_STATUS(3, 1),
	ISCSI_LOGIN_OUT_OF_RESOURCES = ISCSI_LOGIN_STATUS(3, 2),
};

/* ---- Text Request/Response (0x04/0x24) ------------------------------------------------------ */
#define ISCSI_TEXT_CONTINUE 0x40

struct iscsi_text_req {
	uint8_t opcode;
	uint8_t flags; /* F C */
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t cmdsn;
	uint32_t exp_statsn;
	uint8_t rsvd32[16];
};
static_assert(sizeof(struct iscsi_text_req) == ISCSI_BHS_LEN, "Text Request");
static_assert(offsetof(struct iscsi_text_req, ttt) == 20, "Text TTT");
static_assert(offsetof(struct iscsi_text_req, cmdsn) == 24, "Text CmdSN");

struct iscsi_text_rsp {
	uint8_t opcode;
	uint8_t flags;
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint8_t rsvd36[12];
};
static_assert(sizeof(struct iscsi_text_rsp) == ISCSI_BHS_LEN, "Text Response");
static_assert(offsetof(struct iscsi_text_rsp, statsn) == 24, "Text Response StatSN");

/* ---- Logout Request/Response (0x06/0x26) --------------------------------------------------- */
#define ISCSI_LOGOUT_REASON_MASK 0x7f
enum iscsi_logout_reason {
	ISCSI_LOGOUT_CLOSE_SESSION = 0,
	ISCSI_LOGOUT_CLOSE_CONNECTION = 1,
	ISCSI_LOGOUT_REMOVE_FOR_RECOVERY = 2,
};
enum iscsi_logout_response {
	ISCSI_LOGOUT_RSP_OK = 0,
	ISCSI_LOGOUT_RSP_CID_NOT_FOUND = 1,
	ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED = 2,
	ISCSI_LOGOUT_RSP_CLEANUP_FAILED = 3,
};

struct iscsi_logout_req {
	uint8_t opcode;
	uint8_t flags; /* 1 + reason */
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t rsvd8[8];
	uint32_t itt;
	uint16_t cid;
	uint8_t rsvd22[2];
	uint32_t cmdsn;
	uint32_t exp_statsn;
	uint8_t rsvd32[16];
};
static_assert(sizeof(struct iscsi_logout_req) == ISCSI_BHS_LEN, "Logout Request");
static_assert(offsetof(struct iscsi_logout_req, cid) == 20, "Logout CID");
static_assert(offsetof(struct iscsi_logout_req, cmdsn) == 24, "Logout CmdSN");

struct iscsi_logout_rsp {
	uint8_t opcode;
	uint8_t flags;
	uint8_t response;
	uint8_t rsvd3;
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t rsvd8[8];
	uint32_t itt;
	uint8_t rsvd20[4];
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint8_t rsvd36[4];
	uint16_t time2wait;
	uint16_t time2retain;
	uint8_t rsvd44[4];
};
static_assert(sizeof(struct iscsi_logout_rsp) == ISCSI_BHS_LEN, "Logout Response");
static_assert(offsetof(struct iscsi_logout_rsp, time2wait) == 40, "Logout Time2Wait");
static_assert(offsetof(struct iscsi_logout_rsp, time2retain) == 42, "Logout Time2Retain");

/* ---- NOP-Out/NOP-In (0x00/0x20) -------------------------------------------------------------- */
struct iscsi_nop_out {
	uint8_t opcode;
	uint8_t flags;
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t cmdsn;
	uint32_t exp_statsn;
	uint8_t rsvd32[16];
};
static_assert(sizeof(struct iscsi_nop_out) == ISCSI_BHS_LEN, "NOP-Out");
static_assert(offsetof(struct iscsi_nop_out, ttt) == 20, "NOP-Out TTT");
static_assert(offsetof(struct iscsi_nop_out, cmdsn) == 24, "NOP-Out CmdSN");

struct iscsi_nop_in {
	uint8_t opcode;
	uint8_t flags;
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint8_t rsvd36[12];
};
static_assert(sizeof(struct iscsi_nop_in) == ISCSI_BHS_LEN, "NOP-In");
static_assert(offsetof(struct iscsi_nop_in, statsn) == 24, "NOP-In StatSN");

/* ---- Reject (0x3f) ------------------------------------------------------------------------ */
enum iscsi_reject_reason {
	ISCSI_REJECT_DATA_DIGEST = 0x02,
	ISCSI_REJECT_SNACK = 0x03,
	ISCSI_REJECT_PROTOCOL_ERROR = 0x04,
	ISCSI_REJECT_CMD_NOT_SUPPORTED = 0x05,
	ISCSI_REJECT_IMMEDIATE_TOO_MANY = 0x06,
	ISCSI_REJECT_TASK_IN_PROGRESS = 0x07,
	ISCSI_REJECT_INVALID_DATA_ACK = 0x08,
	ISCSI_REJECT_INVALID_PDU_FIELD = 0x09,
	ISCSI_REJECT_OUT_OF_RESOURCES = 0x0a,
	ISCSI_REJECT_WAITING_FOR_LOGOUT = 0x0c,
};

struct iscsi_reject {
	uint8_t opcode;
	uint8_t flags;
	uint8_t reason;
	uint8_t rsvd3;
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t rsvd8[8];
	uint32_t itt; /* 0xffffffff */
	uint8_t rsvd20[4];
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint32_t datasn; /* DataSN/R2TSN or reserved */
	uint8_t rsvd40[8];
};
static_assert(sizeof(struct iscsi_reject) == ISCSI_BHS_LEN, "Reject");
static_assert(offsetof(struct iscsi_reject, reason) == 2, "Reject reason");
static_assert(offsetof(struct iscsi_reject, statsn) == 24, "Reject StatSN");
static_assert(offsetof(struct iscsi_reject, datasn) == 36, "Reject DataSN");

/* ---- Asynchronous Message (0x32) ------------------------------------------------------------ */
enum iscsi_async_event {
	ISCSI_ASYNC_SCSI_EVENT = 0,
	ISCSI_ASYNC_LOGOUT_REQUEST = 1,
	ISCSI_ASYNC_DROP_CONNECTION = 2,
	ISCSI_ASYNC_DROP_ALL_CONNECTIONS = 3,
	ISCSI_ASYNC_NEGOTIATE = 4,
};

struct iscsi_async_msg {
	uint8_t opcode;
	uint8_t flags;
	uint8_t rsvd2[2];
	uint8_t total_ahs_len;
	uint8_t data_segment_len[3];
	uint8_t lun[8];
	uint32_t itt; /* 0xffffffff */
	uint8_t rsvd20[4];
	uint32_t statsn;
	uint32_t exp_cmdsn;
	uint32_t max_cmdsn;
	uint8_t async_event;
	uint8_t async_vcode;
	uint16_t param1;
	uint16_t param2;
	uint16_t param3;
	uint8_t rsvd44[4];
};
static_assert(sizeof(struct iscsi_async_msg) == ISCSI_BHS_LEN, "Async Message");
static_assert(offsetof(struct iscsi_async_msg, async_event) == 36, "Async event");
static_assert(offsetof(struct iscsi_async_msg, param1) == 38, "Async param1");
static_assert(offsetof(struct iscsi_async_msg, param3) == 42, "Async param3");

/* ---- Limits (RFC 7143 section 13) --------------------------------------------------------- */
#define ISCSI_MIN_DATA_SEG_LEN 512u
#define ISCSI_MAX_DATA_SEG_LEN 16777215u /* 2^24 - 1 */
#define ISCSI_TEXT_MAX 65536u		 /* bytes of login/text data we accept per exchange */

#endif
