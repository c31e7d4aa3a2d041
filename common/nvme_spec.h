/* SPDX-License-Identifier: MIT */
/*
 * NVMe base and NVMe over Fabrics wire structures and constants (NVM Express Base
 * Specification 2.0, NVMe over Fabrics 1.1). Structures and constants only: no code.
 * Every structure carries static asserts on its size and on the offsets of its fields.
 */
#ifndef NVMEOF_NVME_SPEC_H
#define NVMEOF_NVME_SPEC_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define NVME_NQN_MAX 223	      /* characters, excluding the NUL */
#define NVME_NQN_FIELD 256	      /* bytes reserved on the wire */
#define NVME_DISCOVERY_NQN "nqn.2014-08.org.nvmexpress.discovery"

/* ---- SGL descriptor (16 bytes) --------------------------------------------------- */
enum nvme_sgl_type {
	NVME_SGL_TYPE_DATA_BLOCK = 0x0,
	NVME_SGL_TYPE_BIT_BUCKET = 0x1,
	NVME_SGL_TYPE_SEGMENT = 0x2,
	NVME_SGL_TYPE_LAST_SEGMENT = 0x3,
	NVME_SGL_TYPE_KEYED_DATA_BLOCK = 0x4,
	NVME_SGL_TYPE_TRANSPORT_DATA_BLOCK = 0x5,
};

enum nvme_sgl_subtype {
	NVME_SGL_SUBTYPE_ADDRESS = 0x0,
	NVME_SGL_SUBTYPE_OFFSET = 0x1,
	NVME_SGL_SUBTYPE_TRANSPORT = 0xa,
	NVME_SGL_SUBTYPE_INVALIDATE_KEY = 0xf,
};

struct nvme_sgl_desc {
	uint64_t addr;	     /* little-endian; offset for in-capsule data */
	uint8_t length[4];   /* LE32 for non-keyed; keyed: LE24 length + LE32 key at 7 */
	uint8_t rsvd8[3];
	uint8_t type;	     /* type << 4 | subtype */
};
static_assert(sizeof(struct nvme_sgl_desc) == 16, "SGL descriptor");
static_assert(offsetof(struct nvme_sgl_desc, type) == 15, "SGL type");

#define NVME_SGL_TYPE(t, st) ((uint8_t)((t) << 4 | (st)))

/* ---- Submission queue entry (64 bytes) -------------------------------------------- */
struct nvme_cmd {
	uint8_t opc;
	uint8_t flags;	 /* FUSE bits 1:0, PSDT bits 7:6 */
	uint16_t cid;	 /* LE */
	uint32_t nsid;	 /* LE */
	uint32_t cdw2;
	uint32_t cdw3;
	uint64_t mptr;
	union {
		struct {
			uint64_t prp1;
			uint64_t prp2;
		} prp;
		struct nvme_sgl_desc sgl1;
	} dptr;
	uint32_t cdw10;
	uint32_t cdw11;
	uint32_t cdw12;
	uint32_t cdw13;
	uint32_t cdw14;
	uint32_t cdw15;
};
static_assert(sizeof(struct nvme_cmd) == 64, "SQE");
static_assert(offsetof(struct nvme_cmd, cid) == 2, "SQE cid");
static_assert(offsetof(struct nvme_cmd, nsid) == 4, "SQE nsid");
static_assert(offsetof(struct nvme_cmd, mptr) == 16, "SQE mptr");
static_assert(offsetof(struct nvme_cmd, dptr) == 24, "SQE dptr");
static_assert(offsetof(struct nvme_cmd, cdw10) == 40, "SQE cdw10");
static_assert(offsetof(struct nvme_cmd, cdw15) == 60, "SQE cdw15");

#define NVME_CMD_FUSE_MASK 0x03
#define NVME_CMD_FUSE_FIRST 0x01
#define NVME_CMD_FUSE_SECOND 0x02
#define NVME_CMD_PSDT_SHIFT 6
#define NVME_CMD_PSDT_SGL_MPTR_CONTIG 0x1

/* ---- Completion queue entry (16 bytes) -------------------------------------------- */
struct nvme_cpl {
	uint32_t dw0;
	uint32_t dw1;
	uint16_t sqhd;
	uint16_t sqid;
	uint16_t cid;
	uint16_t status; /* P bit 0, SC 8:1, SCT 11:9, CRD 13:12, M 14, DNR 15 */
};
static_assert(sizeof(struct nvme_cpl) == 16, "CQE");
static_assert(offsetof(struct nvme_cpl, sqhd) == 8, "CQE sqhd");
static_assert(offsetof(struct nvme_cpl, cid) == 12, "CQE cid");
static_assert(offsetof(struct nvme_cpl, status) == 14, "CQE status");

/* Status field helpers: value without the phase bit, as stored in nvme_cpl.status (LE). */
#define NVME_STATUS(sct, sc) ((uint16_t)(((sct) & 0x7) << 9 | ((sc) & 0xff) << 1))
#define NVME_STATUS_DNR 0x8000
#define NVME_STATUS_MORE 0x4000
#define NVME_STATUS_SCT(st) (((st) >> 9) & 0x7)
#define NVME_STATUS_SC(st) (((st) >> 1) & 0xff)

enum nvme_sct {
	NVME_SCT_GENERIC = 0x0,
	NVME_SCT_COMMAND_SPECIFIC = 0x1,
	NVME_SCT_MEDIA = 0x2,
	NVME_SCT_PATH = 0x3,
	NVME_SCT_VENDOR = 0x7,
};

enum nvme_generic_sc {
	NVME_SC_SUCCESS = 0x00,
	NVME_SC_INVALID_OPCODE = 0x01,
	NVME_SC_INVALID_FIELD = 0x02,
	NVME_SC_CID_CONFLICT = 0x03,
	NVME_SC_DATA_TRANSFER_ERROR = 0x04,
	NVME_SC_ABORTED_POWER_LOSS = 0x05,
	NVME_SC_INTERNAL = 0x06,
	NVME_SC_ABORT_REQUESTED = 0x07,
	NVME_SC_ABORTED_SQ_DELETION = 0x08,
	NVME_SC_ABORTED_FAILED_FUSED = 0x09,
	NVME_SC_ABORTED_MISSING_FUSED = 0x0a,
	NVME_SC_INVALID_NS_OR_FORMAT = 0x0b,
	NVME_SC_COMMAND_SEQUENCE_ERROR = 0x0c,
	NVME_SC_INVALID_SGL_SEG_DESC = 0x0d,
	NVME_SC_INVALID_NUM_SGL_DESC = 0x0e,
	NVME_SC_DATA_SGL_LENGTH_INVALID = 0x0f,
	NVME_SC_METADATA_SGL_LENGTH_INVALID = 0x10,
	NVME_SC_SGL_DESC_TYPE_INVALID = 0x11,
	NVME_SC_INVALID_CMB_USE = 0x12,
	NVME_SC_INVALID_PRP_OFFSET = 0x13,
	NVME_SC_ATOMIC_WRITE_UNIT_EXCEEDED = 0x14,
	NVME_SC_OPERATION_DENIED = 0x15,
	NVME_SC_INVALID_SGL_OFFSET = 0x16,
	NVME_SC_HOSTID_INCONSISTENT_FORMAT = 0x18,
	NVME_SC_KEEP_ALIVE_EXPIRED = 0x19,
	NVME_SC_KEEP_ALIVE_INVALID = 0x1a,
	NVME_SC_ABORTED_PREEMPT = 0x1b,
	NVME_SC_SANITIZE_FAILED = 0x1c,
	NVME_SC_SANITIZE_IN_PROGRESS = 0x1d,
	NVME_SC_SGL_DATA_BLOCK_GRANULARITY_INVALID = 0x1e,
	NVME_SC_NS_WRITE_PROTECTED = 0x20,
	NVME_SC_COMMAND_INTERRUPTED = 0x21,
	NVME_SC_TRANSIENT_TRANSPORT_ERROR = 0x22,
	/* NVM command set */
	NVME_SC_LBA_OUT_OF_RANGE = 0x80,
	NVME_SC_CAPACITY_EXCEEDED = 0x81,
	NVME_SC_NS_NOT_READY = 0x82,
	NVME_SC_RESERVATION_CONFLICT = 0x83,
	NVME_SC_FORMAT_IN_PROGRESS = 0x84,
};

enum nvme_command_specific_sc {
	NVME_SC_COMPLETION_QUEUE_INVALID = 0x00,
	NVME_SC_INVALID_QUEUE_IDENTIFIER = 0x01,
	NVME_SC_INVALID_QUEUE_SIZE = 0x02,
	NVME_SC_ABORT_COMMAND_LIMIT_EXCEEDED = 0x03,
	NVME_SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED = 0x05,
	NVME_SC_INVALID_FIRMWARE_SLOT = 0x06,
	NVME_SC_INVALID_FIRMWARE_IMAGE = 0x07,
	NVME_SC_INVALID_LOG_PAGE = 0x09,
	NVME_SC_INVALID_FORMAT = 0x0a,
	NVME_SC_FEATURE_ID_NOT_SAVEABLE = 0x0d,
	NVME_SC_FEATURE_NOT_CHANGEABLE = 0x0e,
	NVME_SC_FEATURE_NOT_NAMESPACE_SPECIFIC = 0x0f,
	/* Fabrics Connect (SCT 1) */
	NVME_SC_CONNECT_INCOMPATIBLE_FORMAT = 0x80,
	NVME_SC_CONNECT_CONTROLLER_BUSY = 0x81,
	NVME_SC_CONNECT_INVALID_PARAMETERS = 0x82,
	NVME_SC_CONNECT_RESTART_DISCOVERY = 0x83,
	NVME_SC_CONNECT_INVALID_HOST = 0x84,
	NVME_SC_INVALID_QUEUE_TYPE = 0x85,
	/* NVM command set, command specific */
	NVME_SC_CONFLICTING_ATTRIBUTES = 0x80,
	NVME_SC_INVALID_PROTECTION_INFO = 0x81,
	NVME_SC_ATTEMPTED_WRITE_TO_RO_RANGE = 0x82,
};

enum nvme_media_sc {
	NVME_SC_WRITE_FAULT = 0x80,
	NVME_SC_UNRECOVERED_READ_ERROR = 0x81,
	NVME_SC_GUARD_CHECK_ERROR = 0x82,
	NVME_SC_APPTAG_CHECK_ERROR = 0x83,
	NVME_SC_REFTAG_CHECK_ERROR = 0x84,
	NVME_SC_COMPARE_FAILURE = 0x85,
	NVME_SC_ACCESS_DENIED = 0x86,
	NVME_SC_DEALLOCATED_OR_UNWRITTEN = 0x87,
};

/* Connect "Invalid Parameters": DW0 carries IPO (bits 15:0, byte offset of the bad field)
 * and IATTR (bit 16: set when the field is in the Connect data, clear for the SQE). */
#define NVME_CONNECT_IATTR_DATA (1u << 16)
#define NVME_CONNECT_IPO(off, data) ((uint32_t)(off) | ((data) ? NVME_CONNECT_IATTR_DATA : 0))

/* ---- Opcodes ---------------------------------------------------------------------- */
enum nvme_admin_opc {
	NVME_ADMIN_DELETE_IO_SQ = 0x00,
	NVME_ADMIN_CREATE_IO_SQ = 0x01,
	NVME_ADMIN_GET_LOG_PAGE = 0x02,
	NVME_ADMIN_DELETE_IO_CQ = 0x04,
	NVME_ADMIN_CREATE_IO_CQ = 0x05,
	NVME_ADMIN_IDENTIFY = 0x06,
	NVME_ADMIN_ABORT = 0x08,
	NVME_ADMIN_SET_FEATURES = 0x09,
	NVME_ADMIN_GET_FEATURES = 0x0a,
	NVME_ADMIN_ASYNC_EVENT_REQUEST = 0x0c,
	NVME_ADMIN_NS_MANAGEMENT = 0x0d,
	NVME_ADMIN_FIRMWARE_COMMIT = 0x10,
	NVME_ADMIN_FIRMWARE_DOWNLOAD = 0x11,
	NVME_ADMIN_DEVICE_SELF_TEST = 0x14,
	NVME_ADMIN_NS_ATTACHMENT = 0x15,
	NVME_ADMIN_KEEP_ALIVE = 0x18,
	NVME_ADMIN_DIRECTIVE_SEND = 0x19,
	NVME_ADMIN_DIRECTIVE_RECEIVE = 0x1a,
	NVME_ADMIN_FABRICS = 0x7f,
	NVME_ADMIN_FORMAT_NVM = 0x80,
	NVME_ADMIN_SECURITY_SEND = 0x81,
	NVME_ADMIN_SECURITY_RECEIVE = 0x82,
	NVME_ADMIN_GET_LBA_STATUS = 0x86,
};

enum nvme_nvm_opc {
	NVME_OPC_FLUSH = 0x00,
	NVME_OPC_WRITE = 0x01,
	NVME_OPC_READ = 0x02,
	NVME_OPC_WRITE_UNCORRECTABLE = 0x04,
	NVME_OPC_COMPARE = 0x05,
	NVME_OPC_WRITE_ZEROES = 0x08,
	NVME_OPC_DATASET_MANAGEMENT = 0x09,
	NVME_OPC_VERIFY = 0x0c,
	NVME_OPC_RESERVATION_REGISTER = 0x0d,
	NVME_OPC_RESERVATION_REPORT = 0x0e,
	NVME_OPC_RESERVATION_ACQUIRE = 0x11,
	NVME_OPC_RESERVATION_RELEASE = 0x15,
	NVME_OPC_FABRICS = 0x7f,
};

/* Data transfer direction is encoded in opcode bits 1:0 (and fctype bits 1:0). */
enum nvme_data_xfer {
	NVME_XFER_NONE = 0x0,
	NVME_XFER_HOST_TO_CTRLR = 0x1,
	NVME_XFER_CTRLR_TO_HOST = 0x2,
	NVME_XFER_BIDIRECTIONAL = 0x3,
};

static inline enum nvme_data_xfer nvme_opc_xfer(uint8_t opc)
{
	return (enum nvme_data_xfer)(opc & 0x3);
}

/* Read/Write/Compare/Write Zeroes/Verify: CDW12 bits */
#define NVME_RW_NLB_MASK 0xffff	  /* 0's based number of logical blocks */
#define NVME_RW_DEAC (1u << 25)	  /* Write Zeroes: deallocate */
#define NVME_RW_PRINFO_SHIFT 26
#define NVME_RW_FUA (1u << 30)
#define NVME_RW_LR (1u << 31)

/* Dataset Management: CDW10 NR (0's based), CDW11 attributes */
#define NVME_DSM_ATTR_IDR (1u << 0)
#define NVME_DSM_ATTR_IDW (1u << 1)
#define NVME_DSM_ATTR_AD (1u << 2)
#define NVME_DSM_MAX_RANGES 256

struct nvme_dsm_range {
	uint32_t cattr;
	uint32_t nlb; /* not 0's based */
	uint64_t slba;
};
static_assert(sizeof(struct nvme_dsm_range) == 16, "DSM range");

/* ---- Fabrics commands --------------------------------------------------------------- */
enum nvmf_fctype {
	NVMF_FCTYPE_PROPERTY_SET = 0x00,
	NVMF_FCTYPE_CONNECT = 0x01,
	NVMF_FCTYPE_PROPERTY_GET = 0x04,
	NVMF_FCTYPE_AUTH_SEND = 0x05,
	NVMF_FCTYPE_AUTH_RECV = 0x06,
	NVMF_FCTYPE_DISCONNECT = 0x08,
};

/* Common layout of a Fabrics command capsule (opcode 7Fh). */
struct nvmf_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[19];
	struct nvme_sgl_desc sgl1;
	uint8_t fspec[24];
};
static_assert(sizeof(struct nvmf_cmd) == 64, "fabrics command");
static_assert(offsetof(struct nvmf_cmd, fctype) == 4, "fctype");
static_assert(offsetof(struct nvmf_cmd, sgl1) == 24, "fabrics sgl1");
static_assert(offsetof(struct nvmf_cmd, fspec) == 40, "fabrics specific");

struct nvmf_connect_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[19];
	struct nvme_sgl_desc sgl1;
	uint16_t recfmt;
	uint16_t qid;
	uint16_t sqsize; /* 0's based */
	uint8_t cattr;	 /* bit 2: disable SQ flow control */
	uint8_t rsvd47;
	uint32_t kato;	 /* ms */
	uint8_t rsvd52[12];
};
static_assert(sizeof(struct nvmf_connect_cmd) == 64, "connect command");
static_assert(offsetof(struct nvmf_connect_cmd, recfmt) == 40, "connect recfmt");
static_assert(offsetof(struct nvmf_connect_cmd, qid) == 42, "connect qid");
static_assert(offsetof(struct nvmf_connect_cmd, sqsize) == 44, "connect sqsize");
static_assert(offsetof(struct nvmf_connect_cmd, cattr) == 46, "connect cattr");
static_assert(offsetof(struct nvmf_connect_cmd, kato) == 48, "connect kato");

#define NVMF_CONNECT_CATTR_DISABLE_SQFLOW (1u << 2)

struct nvmf_connect_data {
	uint8_t hostid[16];
	uint16_t cntlid;
	uint8_t rsvd18[238];
	char subnqn[NVME_NQN_FIELD];
	char hostnqn[NVME_NQN_FIELD];
	uint8_t rsvd768[256];
};
static_assert(sizeof(struct nvmf_connect_data) == 1024, "connect data");
static_assert(offsetof(struct nvmf_connect_data, cntlid) == 16, "connect data cntlid");
static_assert(offsetof(struct nvmf_connect_data, subnqn) == 256, "connect data subnqn");
static_assert(offsetof(struct nvmf_connect_data, hostnqn) == 512, "connect data hostnqn");

#define NVMF_CNTLID_DYNAMIC 0xffff
#define NVMF_CNTLID_MIN 1
#define NVMF_CNTLID_MAX 0xffef

struct nvmf_property_cmd {
	uint8_t opc;
	uint8_t rsvd1;
	uint16_t cid;
	uint8_t fctype;
	uint8_t rsvd5[35];
	uint8_t attrib; /* bits 2:0: 0 = 4 bytes, 1 = 8 bytes */
	uint8_t rsvd41[3];
	uint32_t offset;
	uint64_t value; /* Property Set only */
	uint8_t rsvd56[8];
};
static_assert(sizeof(struct nvmf_property_cmd) == 64, "property command");
static_assert(offsetof(struct nvmf_property_cmd, attrib) == 40, "property attrib");
static_assert(offsetof(struct nvmf_property_cmd, offset) == 44, "property offset");
static_assert(offsetof(struct nvmf_property_cmd, value) == 48, "property value");

/* ---- Controller properties (registers) -------------------------------------------- */
enum nvme_prop {
	NVME_REG_CAP = 0x00,   /* 8 bytes */
	NVME_REG_VS = 0x08,
	NVME_REG_INTMS = 0x0c,
	NVME_REG_INTMC = 0x10,
	NVME_REG_CC = 0x14,
	NVME_REG_CSTS = 0x1c,
	NVME_REG_NSSR = 0x20,
	NVME_REG_AQA = 0x24,
	NVME_REG_ASQ = 0x28,   /* 8 bytes */
	NVME_REG_ACQ = 0x30,   /* 8 bytes */
	NVME_REG_CRTO = 0x68,
};

#define NVME_CAP_MQES(cap) ((cap) & 0xffff)
#define NVME_CAP_CQR (1ull << 16)
#define NVME_CAP_TO_SHIFT 24   /* 500 ms units */
#define NVME_CAP_CSS_NVM (1ull << 37)
#define NVME_CAP_MPSMIN_SHIFT 48
#define NVME_CAP_MPSMAX_SHIFT 52

#define NVME_CC_EN (1u << 0)
#define NVME_CC_CSS_SHIFT 4
#define NVME_CC_CSS_MASK (0x7u << NVME_CC_CSS_SHIFT)
#define NVME_CC_MPS_SHIFT 7
#define NVME_CC_MPS_MASK (0xfu << NVME_CC_MPS_SHIFT)
#define NVME_CC_AMS_SHIFT 11
#define NVME_CC_AMS_MASK (0x7u << NVME_CC_AMS_SHIFT)
#define NVME_CC_SHN_SHIFT 14
#define NVME_CC_SHN_MASK (0x3u << NVME_CC_SHN_SHIFT)
#define NVME_CC_SHN_NONE 0
#define NVME_CC_SHN_NORMAL 1
#define NVME_CC_SHN_ABRUPT 2
#define NVME_CC_IOSQES_SHIFT 16
#define NVME_CC_IOSQES_MASK (0xfu << NVME_CC_IOSQES_SHIFT)
#define NVME_CC_IOCQES_SHIFT 20
#define NVME_CC_IOCQES_MASK (0xfu << NVME_CC_IOCQES_SHIFT)

#define NVME_CSTS_RDY (1u << 0)
#define NVME_CSTS_CFS (1u << 1)
#define NVME_CSTS_SHST_SHIFT 2
#define NVME_CSTS_SHST_MASK (0x3u << NVME_CSTS_SHST_SHIFT)
#define NVME_CSTS_SHST_NORMAL 0
#define NVME_CSTS_SHST_OCCURRING 1
#define NVME_CSTS_SHST_COMPLETE 2

#define NVME_VS(mjr, mnr, ter) ((uint32_t)(mjr) << 16 | (uint32_t)(mnr) << 8 | (ter))

/* ---- Identify ----------------------------------------------------------------------- */
enum nvme_identify_cns {
	NVME_ID_CNS_NS = 0x00,
	NVME_ID_CNS_CTRL = 0x01,
	NVME_ID_CNS_NS_ACTIVE_LIST = 0x02,
	NVME_ID_CNS_NS_DESC_LIST = 0x03,
	NVME_ID_CNS_NVMSET_LIST = 0x04,
	NVME_ID_CNS_CS_NS = 0x05,
	NVME_ID_CNS_CS_CTRL = 0x06,
	NVME_ID_CNS_CS_INDEP_NS = 0x08, /* I/O Command Set Independent Identify Namespace */
	NVME_ID_CNS_IO_CMD_SET = 0x1c,  /* Identify I/O Command Set data structure */
};

/* Identify CDW11 bits 31:24: Command Set Identifier. */
#define NVME_CSI_NVM 0x00

/*
 * CNS 05h, CSI 00h: the NVM Command Set Identify Namespace data structure (NVM Command Set
 * specification). Logical Block Storage Tag Mask, Protection Information Capabilities,
 * and one Extended LBA Format per LBA format of the namespace: bits 6:0 Storage Tag Size,
 * bits 8:7 Protection Information Format (0: 16b Guard).
 */
struct nvme_id_ns_nvm {
	uint64_t lbstm;
	uint8_t pic;
	uint8_t rsvd9[3];
	uint32_t elbaf[64];
	uint8_t rsvd268[3828];
};
static_assert(sizeof(struct nvme_id_ns_nvm) == 4096, "id_ns_nvm size");
static_assert(offsetof(struct nvme_id_ns_nvm, pic) == 8, "id_ns_nvm pic");
static_assert(offsetof(struct nvme_id_ns_nvm, elbaf) == 12, "id_ns_nvm elbaf");

/*
 * CNS 06h, CSI 00h: the NVM Command Set Identify Controller data structure. VSL, WZSL and
 * WUSL are powers of two in units of the minimum memory page size (CAP.MPSMIN); DMRL is a
 * number of ranges, DMRSL and DMSL numbers of logical blocks. 0 means "no limit" for each.
 */
struct nvme_id_ctrl_nvm {
	uint8_t vsl;
	uint8_t wzsl;
	uint8_t wusl;
	uint8_t dmrl;
	uint32_t dmrsl;
	uint64_t dmsl;
	uint8_t rsvd16[4080];
};
static_assert(sizeof(struct nvme_id_ctrl_nvm) == 4096, "id_ctrl_nvm size");
static_assert(offsetof(struct nvme_id_ctrl_nvm, dmrl) == 3, "id_ctrl_nvm dmrl");
static_assert(offsetof(struct nvme_id_ctrl_nvm, dmrsl) == 4, "id_ctrl_nvm dmrsl");
static_assert(offsetof(struct nvme_id_ctrl_nvm, dmsl) == 8, "id_ctrl_nvm dmsl");

#define NVME_IDENTIFY_DATA_SIZE 4096

struct nvme_id_power_state {
	uint8_t bytes[32];
};

struct nvme_id_ctrl {
	uint16_t vid;
	uint16_t ssvid;
	char sn[20];
	char mn[40];
	char fr[8];
	uint8_t rab;
	uint8_t ieee[3];
	uint8_t cmic;
	uint8_t mdts;
	uint16_t cntlid;
	uint32_t ver;
	uint32_t rtd3r;
	uint32_t rtd3e;
	uint32_t oaes;
	uint32_t ctratt;
	uint16_t rrls;
	uint8_t rsvd102[9];
	uint8_t cntrltype;
	uint8_t fguid[16];
	uint16_t crdt1;
	uint16_t crdt2;
	uint16_t crdt3;
	uint8_t rsvd134[122];
	uint16_t oacs;
	uint8_t acl;
	uint8_t aerl;
	uint8_t frmw;
	uint8_t lpa;
	uint8_t elpe;
	uint8_t npss;
	uint8_t avscc;
	uint8_t apsta;
	uint16_t wctemp;
	uint16_t cctemp;
	uint16_t mtfa;
	uint32_t hmpre;
	uint32_t hmmin;
	uint8_t tnvmcap[16];
	uint8_t unvmcap[16];
	uint32_t rpmbs;
	uint16_t edstt;
	uint8_t dsto;
	uint8_t fwug;
	uint16_t kas;
	uint16_t hctma;
	uint16_t mntmt;
	uint16_t mxtmt;
	uint32_t sanicap;
	uint32_t hmminds;
	uint16_t hmmaxd;
	uint16_t nsetidmax;
	uint16_t endgidmax;
	uint8_t anatt;
	uint8_t anacap;
	uint32_t anagrpmax;
	uint32_t nanagrpid;
	uint32_t pels;
	uint16_t domainid;
	uint8_t rsvd358[10];
	uint8_t megcap[16];
	uint8_t rsvd384[128];
	uint8_t sqes;
	uint8_t cqes;
	uint16_t maxcmd;
	uint32_t nn;
	uint16_t oncs;
	uint16_t fuses;
	uint8_t fna;
	uint8_t vwc;
	uint16_t awun;
	uint16_t awupf;
	uint8_t icsvscc;
	uint8_t nwpc;
	uint16_t acwu;
	uint16_t ocfs;
	uint32_t sgls;
	uint32_t mnan;
	uint8_t maxdna[16];
	uint32_t maxcna;
	uint8_t rsvd564[204];
	char subnqn[NVME_NQN_FIELD];
	uint8_t rsvd1024[768];
	/* Fabrics */
	uint32_t ioccsz;
	uint32_t iorcsz;
	uint16_t icdoff;
	uint8_t fcatt;
	uint8_t msdbd;
	uint16_t ofcs;
	uint8_t rsvd1806[242];
	struct nvme_id_power_state psd[32];
	uint8_t vs[1024];
};
static_assert(sizeof(struct nvme_id_ctrl) == 4096, "identify controller");
static_assert(offsetof(struct nvme_id_ctrl, sn) == 4, "id_ctrl sn");
static_assert(offsetof(struct nvme_id_ctrl, mn) == 24, "id_ctrl mn");
static_assert(offsetof(struct nvme_id_ctrl, fr) == 64, "id_ctrl fr");
static_assert(offsetof(struct nvme_id_ctrl, cmic) == 76, "id_ctrl cmic");
static_assert(offsetof(struct nvme_id_ctrl, mdts) == 77, "id_ctrl mdts");
static_assert(offsetof(struct nvme_id_ctrl, cntlid) == 78, "id_ctrl cntlid");
static_assert(offsetof(struct nvme_id_ctrl, ver) == 80, "id_ctrl ver");
static_assert(offsetof(struct nvme_id_ctrl, oaes) == 92, "id_ctrl oaes");
static_assert(offsetof(struct nvme_id_ctrl, ctratt) == 96, "id_ctrl ctratt");
static_assert(offsetof(struct nvme_id_ctrl, cntrltype) == 111, "id_ctrl cntrltype");
static_assert(offsetof(struct nvme_id_ctrl, crdt1) == 128, "id_ctrl crdt1");
static_assert(offsetof(struct nvme_id_ctrl, oacs) == 256, "id_ctrl oacs");
static_assert(offsetof(struct nvme_id_ctrl, lpa) == 261, "id_ctrl lpa");
static_assert(offsetof(struct nvme_id_ctrl, apsta) == 265, "id_ctrl apsta");
static_assert(offsetof(struct nvme_id_ctrl, tnvmcap) == 280, "id_ctrl tnvmcap");
static_assert(offsetof(struct nvme_id_ctrl, kas) == 320, "id_ctrl kas");
static_assert(offsetof(struct nvme_id_ctrl, anatt) == 342, "id_ctrl anatt");
static_assert(offsetof(struct nvme_id_ctrl, pels) == 352, "id_ctrl pels");
static_assert(offsetof(struct nvme_id_ctrl, sqes) == 512, "id_ctrl sqes");
static_assert(offsetof(struct nvme_id_ctrl, maxcmd) == 514, "id_ctrl maxcmd");
static_assert(offsetof(struct nvme_id_ctrl, nn) == 516, "id_ctrl nn");
static_assert(offsetof(struct nvme_id_ctrl, oncs) == 520, "id_ctrl oncs");
static_assert(offsetof(struct nvme_id_ctrl, fuses) == 522, "id_ctrl fuses");
static_assert(offsetof(struct nvme_id_ctrl, vwc) == 525, "id_ctrl vwc");
static_assert(offsetof(struct nvme_id_ctrl, acwu) == 532, "id_ctrl acwu");
static_assert(offsetof(struct nvme_id_ctrl, sgls) == 536, "id_ctrl sgls");
static_assert(offsetof(struct nvme_id_ctrl, mnan) == 540, "id_ctrl mnan");
static_assert(offsetof(struct nvme_id_ctrl, subnqn) == 768, "id_ctrl subnqn");
static_assert(offsetof(struct nvme_id_ctrl, ioccsz) == 1792, "id_ctrl ioccsz");
static_assert(offsetof(struct nvme_id_ctrl, iorcsz) == 1796, "id_ctrl iorcsz");
static_assert(offsetof(struct nvme_id_ctrl, icdoff) == 1800, "id_ctrl icdoff");
static_assert(offsetof(struct nvme_id_ctrl, msdbd) == 1803, "id_ctrl msdbd");
static_assert(offsetof(struct nvme_id_ctrl, psd) == 2048, "id_ctrl psd");
static_assert(offsetof(struct nvme_id_ctrl, vs) == 3072, "id_ctrl vs");

#define NVME_CTRL_CMIC_MULTI_CTRL (1u << 1)
#define NVME_CTRL_OACS_GET_LBA_STATUS      (1u << 9)
#define NVME_CTRL_OAES_NS_ATTR (1u << 8)
#define NVME_CTRL_OAES_FW_ACTIVATION (1u << 9)
#define NVME_CTRL_CTRATT_HOSTID_128 (1u << 0)
#define NVME_CTRL_CNTRLTYPE_IO 1
#define NVME_CTRL_CNTRLTYPE_DISCOVERY 2
#define NVME_CTRL_LPA_SMART_PER_NS (1u << 0)
#define NVME_CTRL_LPA_CMD_EFFECTS (1u << 1)
#define NVME_CTRL_LPA_EXT_DATA (1u << 2)
#define NVME_CTRL_ONCS_COMPARE (1u << 0)
#define NVME_CTRL_ONCS_WRITE_UNCORRECTABLE (1u << 1)
#define NVME_CTRL_ONCS_DSM (1u << 2)
#define NVME_CTRL_ONCS_WRITE_ZEROES (1u << 3)
#define NVME_CTRL_ONCS_SAVE_SELECT (1u << 4)
#define NVME_CTRL_ONCS_RESERVATIONS (1u << 5)
#define NVME_CTRL_ONCS_TIMESTAMP (1u << 6)
#define NVME_CTRL_ONCS_VERIFY (1u << 7)
#define NVME_CTRL_FUSES_COMPARE_WRITE (1u << 0)
#define NVME_CTRL_VWC_PRESENT (1u << 0)
#define NVME_CTRL_VWC_FLUSH_ALL_NSID (3u << 1) /* broadcast NSID flush supported */
#define NVME_CTRL_SGLS_SUPPORTED (1u << 0)
#define NVME_CTRL_SGLS_KEYED (1u << 2)
#define NVME_CTRL_SGLS_OFFSET (1u << 20)
#define NVME_CTRL_FRMW_SLOT1_RO (1u << 0)

struct nvme_lbaf {
	uint16_t ms;
	uint8_t lbads; /* log2 of the LBA data size */
	uint8_t rp;
};
static_assert(sizeof(struct nvme_lbaf) == 4, "LBA format");

struct nvme_id_ns {
	uint64_t nsze;
	uint64_t ncap;
	uint64_t nuse;
	uint8_t nsfeat;
	uint8_t nlbaf; /* 0's based */
	uint8_t flbas;
	uint8_t mc;
	uint8_t dpc;
	uint8_t dps;
	uint8_t nmic;
	uint8_t rescap;
	uint8_t fpi;
	uint8_t dlfeat;
	uint16_t nawun;
	uint16_t nawupf;
	uint16_t nacwu;
	uint16_t nabsn;
	uint16_t nabo;
	uint16_t nabspf;
	uint16_t noiob;
	uint8_t nvmcap[16];
	uint16_t npwg;
	uint16_t npwa;
	uint16_t npdg;
	uint16_t npda;
	uint16_t nows;
	uint8_t rsvd74[18];
	uint32_t anagrpid;
	uint8_t rsvd96[3];
	uint8_t nsattr;
	uint16_t nvmsetid;
	uint16_t endgid;
	uint8_t nguid[16];
	uint8_t eui64[8];
	struct nvme_lbaf lbaf[64];
	uint8_t vs[3712];
};
static_assert(sizeof(struct nvme_id_ns) == 4096, "identify namespace");
static_assert(offsetof(struct nvme_id_ns, nsfeat) == 24, "id_ns nsfeat");
static_assert(offsetof(struct nvme_id_ns, flbas) == 26, "id_ns flbas");
static_assert(offsetof(struct nvme_id_ns, nmic) == 30, "id_ns nmic");
static_assert(offsetof(struct nvme_id_ns, rescap) == 31, "id_ns rescap");
static_assert(offsetof(struct nvme_id_ns, dlfeat) == 33, "id_ns dlfeat");
static_assert(offsetof(struct nvme_id_ns, nvmcap) == 48, "id_ns nvmcap");
static_assert(offsetof(struct nvme_id_ns, npwg) == 64, "id_ns npwg");
static_assert(offsetof(struct nvme_id_ns, anagrpid) == 92, "id_ns anagrpid");
static_assert(offsetof(struct nvme_id_ns, nsattr) == 99, "id_ns nsattr");
static_assert(offsetof(struct nvme_id_ns, nguid) == 104, "id_ns nguid");
static_assert(offsetof(struct nvme_id_ns, eui64) == 120, "id_ns eui64");
static_assert(offsetof(struct nvme_id_ns, lbaf) == 128, "id_ns lbaf");

#define NVME_NS_NSFEAT_THIN (1u << 0)
#define NVME_NS_NSFEAT_NSABP       (1u << 1) /* NAWUN, NAWUPF, NACWU valid */
#define NVME_NS_NSFEAT_DEALLOC_ERR (1u << 2)
#define NVME_NS_NSFEAT_OPTPERF (1u << 4)
#define NVME_NS_NMIC_SHARED (1u << 0)
#define NVME_NS_DLFEAT_READ_ZEROES 0x1	    /* deallocated blocks read as zeroes */
#define NVME_NS_DLFEAT_WZ_DEAC (1u << 3)    /* Write Zeroes DEAC supported */

/* Namespace identification descriptor (CNS 03h); list is 4096 bytes. */
struct nvme_ns_id_desc {
	uint8_t nidt;
	uint8_t nidl;
	uint8_t rsvd2[2];
	/* followed by nidl bytes of identifier */
};
static_assert(sizeof(struct nvme_ns_id_desc) == 4, "ns id descriptor header");

enum nvme_nidt {
	NVME_NIDT_EUI64 = 0x1,
	NVME_NIDT_NGUID = 0x2,
	NVME_NIDT_UUID = 0x3,
	NVME_NIDT_CSI = 0x4,
};
#define NVME_NIDT_EUI64_LEN 8
#define NVME_NIDT_NGUID_LEN 16
#define NVME_NIDT_UUID_LEN 16
#define NVME_NIDT_CSI_LEN 1

/* ---- Get Log Page ------------------------------------------------------------------- */
enum nvme_log_page {
	NVME_LOG_ERROR = 0x01,
	NVME_LOG_SMART = 0x02,
	NVME_LOG_FW_SLOT = 0x03,
	NVME_LOG_CHANGED_NS = 0x04,
	NVME_LOG_CMD_EFFECTS = 0x05,
	NVME_LOG_ANA = 0x0c,
	NVME_LOG_LBA_STATUS = 0x0e, /* LBA Status Information */
	NVME_LOG_DISCOVERY = 0x70,
	NVME_LOG_RESERVATION = 0x80,
};

/* CDW10: LID 7:0, LSP 14:8, RAE 15, NUMDL 31:16; CDW11: NUMDU 15:0; CDW12/13: LPO */
#define NVME_LOG_RAE (1u << 15)

struct nvme_error_log_entry {
	uint64_t error_count;
	uint16_t sqid;
	uint16_t cid;
	uint16_t status;
	uint16_t error_location;
	uint64_t lba;
	uint32_t nsid;
	uint8_t vs;
	uint8_t trtype;
	uint8_t rsvd30[2];
	uint64_t cs;
	uint16_t trtype_specific;
	uint8_t rsvd42[22];
};
static_assert(sizeof(struct nvme_error_log_entry) == 64, "error log entry");
static_assert(offsetof(struct nvme_error_log_entry, status) == 12, "error status");
static_assert(offsetof(struct nvme_error_log_entry, lba) == 16, "error lba");
static_assert(offsetof(struct nvme_error_log_entry, nsid) == 24, "error nsid");

struct nvme_smart_log {
	uint8_t critical_warning;
	uint8_t temperature[2];
	uint8_t avail_spare;
	uint8_t spare_thresh;
	uint8_t percent_used;
	uint8_t endu_grp_crit_warn;
	uint8_t rsvd7[25];
	uint8_t data_units_read[16];
	uint8_t data_units_written[16];
	uint8_t host_reads[16];
	uint8_t host_writes[16];
	uint8_t ctrl_busy_time[16];
	uint8_t power_cycles[16];
	uint8_t power_on_hours[16];
	uint8_t unsafe_shutdowns[16];
	uint8_t media_errors[16];
	uint8_t num_err_log_entries[16];
	uint32_t warning_temp_time;
	uint32_t critical_comp_time;
	uint16_t temp_sensor[8];
	uint8_t rsvd216[296];
};
static_assert(sizeof(struct nvme_smart_log) == 512, "SMART log");
static_assert(offsetof(struct nvme_smart_log, data_units_read) == 32, "smart dur");
static_assert(offsetof(struct nvme_smart_log, host_reads) == 64, "smart host reads");
static_assert(offsetof(struct nvme_smart_log, power_on_hours) == 128, "smart poh");
static_assert(offsetof(struct nvme_smart_log, num_err_log_entries) == 176, "smart errors");
static_assert(offsetof(struct nvme_smart_log, warning_temp_time) == 192, "smart wtt");

struct nvme_fw_slot_log {
	uint8_t afi;
	uint8_t rsvd1[7];
	char frs[7][8];
	uint8_t rsvd64[448];
};
static_assert(sizeof(struct nvme_fw_slot_log) == 512, "firmware slot log");
static_assert(offsetof(struct nvme_fw_slot_log, frs) == 8, "fw frs");

#define NVME_CHANGED_NS_LIST_MAX 1024 /* u32 entries in the 4096-byte log */
#define NVME_CHANGED_NS_OVERFLOW 0xffffffffu

/*
 * Get LBA Status (admin 86h): CDW10/11 SLBA, CDW12 MNDW (maximum number of dwords to
 * return, 0's based), CDW13 bits 15:0 RL (range length in logical blocks, 0: to the end
 * of the namespace) and bits 31:24 ATYPE. The data is an LBA Status Descriptor List: an
 * 8-byte header, then 16-byte descriptors of Potentially Unrecoverable LBA ranges.
 */
#define NVME_LBA_STATUS_ATYPE_SCAN \
	0x10                               /* scan the range, return its untracked and
					    * tracked Potentially Unrecoverable LBAs */
#define NVME_LBA_STATUS_ATYPE_TRACKED 0x11 /* return the tracked ones, no scan */
#define NVME_LBA_STATUS_CMPC_NONE     0x0
#define NVME_LBA_STATUS_CMPC_MORE     0x1 /* more descriptors than returned */
#define NVME_LBA_STATUS_CMPC_COMPLETE 0x2 /* the whole range done, every descriptor sent */

struct nvme_lba_status_hdr {
	uint32_t nlsd; /* number of descriptors that follow */
	uint8_t cmpc;  /* completion condition */
	uint8_t rsvd5[3];
};
static_assert(sizeof(struct nvme_lba_status_hdr) == 8, "LBA status descriptor list header");
static_assert(offsetof(struct nvme_lba_status_hdr, cmpc) == 4, "lba status cmpc");

struct nvme_lba_status_desc {
	uint64_t dslba; /* descriptor starting LBA */
	uint32_t nlb;   /* number of logical blocks */
	uint8_t rsvd12;
	uint8_t status;
	uint8_t rsvd14[2];
};
static_assert(sizeof(struct nvme_lba_status_desc) == 16, "LBA status descriptor");
static_assert(offsetof(struct nvme_lba_status_desc, nlb) == 8, "lba status nlb");
static_assert(offsetof(struct nvme_lba_status_desc, status) == 13, "lba status status");

/* Log page 0Eh header; namespace elements follow (none when nothing is tracked). */
struct nvme_lba_status_log {
	uint32_t lslplen; /* bytes in the page */
	uint32_t nlslne;  /* namespace elements */
	uint32_t estulb;  /* estimate of untracked LBAs */
	uint8_t rsvd12[2];
	uint16_t lsgc; /* generation counter */
};
static_assert(sizeof(struct nvme_lba_status_log) == 16, "LBA status information log");
static_assert(offsetof(struct nvme_lba_status_log, lsgc) == 14, "lba status log lsgc");

struct nvme_cmd_effects_log {
	uint32_t acs[256];
	uint32_t iocs[256];
	uint8_t rsvd2048[2048];
};
static_assert(sizeof(struct nvme_cmd_effects_log) == 4096, "commands supported and effects");
static_assert(offsetof(struct nvme_cmd_effects_log, iocs) == 1024, "effects iocs");

#define NVME_CMD_EFFECTS_CSUPP (1u << 0)
#define NVME_CMD_EFFECTS_LBCC (1u << 1)
#define NVME_CMD_EFFECTS_NCC (1u << 2)
#define NVME_CMD_EFFECTS_NIC (1u << 3)
#define NVME_CMD_EFFECTS_CCC (1u << 4)

/* ---- Discovery log page (70h) ------------------------------------------------------- */
enum nvmf_trtype {
	NVMF_TRTYPE_RDMA = 1,
	NVMF_TRTYPE_FC = 2,
	NVMF_TRTYPE_TCP = 3,
	NVMF_TRTYPE_LOOP = 254,
};

enum nvmf_adrfam {
	NVMF_ADRFAM_IPV4 = 1,
	NVMF_ADRFAM_IPV6 = 2,
	NVMF_ADRFAM_IB = 3,
	NVMF_ADRFAM_FC = 4,
	NVMF_ADRFAM_LOOP = 254,
};

enum nvmf_subtype {
	NVMF_SUBTYPE_DISCOVERY_REFERRAL = 1,
	NVMF_SUBTYPE_NVME = 2,
	NVMF_SUBTYPE_DISCOVERY_CURRENT = 3,
};

#define NVMF_TREQ_SECURE_NOT_SPECIFIED 0x0
#define NVMF_TREQ_SECURE_REQUIRED 0x1
#define NVMF_TREQ_SECURE_NOT_REQUIRED 0x2
#define NVMF_TREQ_DISABLE_SQFLOW (1u << 2)

/* TSAS, TCP: SECTYPE */
#define NVMF_TCP_SECTYPE_NONE 0
#define NVMF_TCP_SECTYPE_TLS12 1
#define NVMF_TCP_SECTYPE_TLS13 2
/* TSAS, RDMA */
#define NVMF_RDMA_QPTYPE_CONNECTED 1
#define NVMF_RDMA_PRTYPE_NOT_SPECIFIED 1
#define NVMF_RDMA_CMS_RDMA_CM 1

struct nvmf_disc_log_entry {
	uint8_t trtype;
	uint8_t adrfam;
	uint8_t subtype;
	uint8_t treq;
	uint16_t portid;
	uint16_t cntlid;
	uint16_t asqsz;
	uint16_t eflags;
	uint8_t rsvd12[20];
	char trsvcid[32];
	uint8_t rsvd64[192];
	char subnqn[NVME_NQN_FIELD];
	char traddr[256];
	uint8_t tsas[256];
};
static_assert(sizeof(struct nvmf_disc_log_entry) == 1024, "discovery log entry");
static_assert(offsetof(struct nvmf_disc_log_entry, portid) == 4, "disc portid");
static_assert(offsetof(struct nvmf_disc_log_entry, asqsz) == 8, "disc asqsz");
static_assert(offsetof(struct nvmf_disc_log_entry, trsvcid) == 32, "disc trsvcid");
static_assert(offsetof(struct nvmf_disc_log_entry, subnqn) == 256, "disc subnqn");
static_assert(offsetof(struct nvmf_disc_log_entry, traddr) == 512, "disc traddr");
static_assert(offsetof(struct nvmf_disc_log_entry, tsas) == 768, "disc tsas");

struct nvmf_disc_log_hdr {
	uint64_t genctr;
	uint64_t numrec;
	uint16_t recfmt;
	uint8_t rsvd18[1006];
};
static_assert(sizeof(struct nvmf_disc_log_hdr) == 1024, "discovery log header");

/* ---- Features ----------------------------------------------------------------------- */
enum nvme_feat {
	NVME_FEAT_ARBITRATION = 0x01,
	NVME_FEAT_POWER_MGMT = 0x02,
	NVME_FEAT_TEMP_THRESH = 0x04,
	NVME_FEAT_ERR_RECOVERY = 0x05,
	NVME_FEAT_VOLATILE_WC = 0x06,
	NVME_FEAT_NUM_QUEUES = 0x07,
	NVME_FEAT_IRQ_COALESCE = 0x08,
	NVME_FEAT_IRQ_CONFIG = 0x09,
	NVME_FEAT_WRITE_ATOMIC = 0x0a,
	NVME_FEAT_ASYNC_EVENT = 0x0b,
	NVME_FEAT_AUTO_PST = 0x0c,
	NVME_FEAT_TIMESTAMP = 0x0e,
	NVME_FEAT_KATO = 0x0f,
	NVME_FEAT_LBA_STATUS_ATTR = 0x15, /* LBA Status Information Attributes */
	NVME_FEAT_HOST_ID = 0x81,
	NVME_FEAT_RESV_MASK = 0x82,
	NVME_FEAT_RESV_PERSIST = 0x83,
};

/* Get Features CDW10 SEL (bits 10:8); Set Features CDW10 SV (bit 31) */
#define NVME_FEAT_SEL_SHIFT 8
#define NVME_FEAT_SEL_CURRENT 0
#define NVME_FEAT_SEL_DEFAULT 1
#define NVME_FEAT_SEL_SAVED 2
#define NVME_FEAT_SEL_SUPPORTED 3
#define NVME_FEAT_SAVE (1u << 31)

/* ---- Asynchronous events -------------------------------------------------------------- */
enum nvme_async_event_type {
	NVME_AER_TYPE_ERROR = 0,
	NVME_AER_TYPE_SMART = 1,
	NVME_AER_TYPE_NOTICE = 2,
	NVME_AER_TYPE_IO_CMD_SET = 6,
};
#define NVME_AER_NOTICE_NS_CHANGED 0x00
#define NVME_AER_NOTICE_FW_ACTIVATION 0x01
#define NVME_AER_NOTICE_ANA_CHANGE 0x03
#define NVME_AER_NOTICE_LBA_STATUS_ALERT 0x05
#define NVME_AER_NOTICE_DISC_CHANGED 0xf0
/* I/O Command Specific event: Reservation Log Page Available */
#define NVME_AER_IO_RESV_LOG 0x00
/* Async event configuration feature: notice enable bits */
#define NVME_AEN_CFG_NS_ATTR (1u << 8)
#define NVME_AEN_CFG_FW_ACT (1u << 9)
#define NVME_AEN_CFG_DISC_CHANGE (1u << 31)

static inline uint32_t nvme_aer_dw0(uint8_t type, uint8_t info, uint8_t lid)
{
	return (uint32_t)type | (uint32_t)info << 8 | (uint32_t)lid << 16;
}

/* ---- Reservations -------------------------------------------------------------------- */
enum nvme_resv_type {
	NVME_RESV_WRITE_EXCLUSIVE = 1,
	NVME_RESV_EXCLUSIVE_ACCESS = 2,
	NVME_RESV_WRITE_EXCLUSIVE_REG_ONLY = 3,
	NVME_RESV_EXCLUSIVE_ACCESS_REG_ONLY = 4,
	NVME_RESV_WRITE_EXCLUSIVE_ALL_REGS = 5,
	NVME_RESV_EXCLUSIVE_ACCESS_ALL_REGS = 6,
};

/* ---- Asymmetric Namespace Access (NVMe Base 2.0, 8.1.3 and 5.16.1.13) ---------------- */
enum nvme_ana_state {
	NVME_ANA_OPTIMIZED = 0x01,
	NVME_ANA_NON_OPTIMIZED = 0x02,
	NVME_ANA_INACCESSIBLE = 0x03,
	NVME_ANA_PERSISTENT_LOSS = 0x04,
	NVME_ANA_CHANGE = 0x0f,
};
/* Path Related Status (SCT 3h) */
#define NVME_SC_ANA_PERSISTENT_LOSS 0x01
#define NVME_SC_ANA_INACCESSIBLE    0x02
#define NVME_SC_ANA_TRANSITION      0x03
/* Identify Controller */
#define NVME_CTRL_CMIC_MULTI_PORT        (1u << 0)
#define NVME_CTRL_CMIC_ANA               (1u << 3)
#define NVME_CTRL_OAES_ANA_CHANGE        (1u << 11)
#define NVME_CTRL_ANACAP_OPTIMIZED       (1u << 0)
#define NVME_CTRL_ANACAP_NON_OPTIMIZED   (1u << 1)
#define NVME_CTRL_ANACAP_INACCESSIBLE    (1u << 2)
#define NVME_CTRL_ANACAP_PERSISTENT_LOSS (1u << 3)
#define NVME_CTRL_ANACAP_CHANGE          (1u << 4)
#define NVME_CTRL_ANACAP_GRPID_STATIC    (1u << 6) /* ANAGRPID does not change while attached */
/* Asynchronous Event Configuration: ANA Change Notices */
#define NVME_AEN_CFG_ANA_CHANGE (1u << 11)
/* Get Log Page 0Ch: LSP bit 0 = Return Groups Only (CDW10 bit 8) */
#define NVME_LOG_ANA_LSP_RGO (1u << 8)

/* The page: a header, then NGRPS descriptors, each followed by its NNSIDS NSIDs. */
struct nvme_ana_log_hdr {
	uint64_t chgcnt;
	uint16_t ngrps;
	uint8_t rsvd10[6];
};
static_assert(sizeof(struct nvme_ana_log_hdr) == 16, "ana log header");
static_assert(offsetof(struct nvme_ana_log_hdr, ngrps) == 8, "ana log ngrps");

struct nvme_ana_group_desc {
	uint32_t grpid;
	uint32_t nnsids;
	uint64_t chgcnt;
	uint8_t state; /* bits 3:0 */
	uint8_t rsvd17[15];
	/* uint32_t nsids[nnsids] follow */
};
static_assert(sizeof(struct nvme_ana_group_desc) == 32, "ana group descriptor");
static_assert(offsetof(struct nvme_ana_group_desc, nnsids) == 4, "ana desc nnsids");
static_assert(offsetof(struct nvme_ana_group_desc, chgcnt) == 8, "ana desc chgcnt");
static_assert(offsetof(struct nvme_ana_group_desc, state) == 16, "ana desc state");

#endif
